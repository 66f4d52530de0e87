#include "config.h"
#include "expand.h"
#include "rstream.h"
#include "threadref.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* gpuprobe writes "type" first (model/result.c, jansson keeps insertion
 * order): a line that starts so is parsed, the rest copied. */
static bool is_sample(const char *line)
{
	static const char pfx[] = "{\"type\":\"sample\"";
	return !strncmp(line, pfx, sizeof pfx - 1);
}

int gp_report_expand(FILE *out, const char *path, char *err, size_t errcap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errcap, "%s", fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	FILE *f = gp_rstream_open(fd);
	if (!f) {
		snprintf(err, errcap, "%s", strerror(errno));
		return -1;
	}
	struct gp_threadref *refs = gp_threadref_new();
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long n = 0;
	int rc = 0;
	while (refs && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break; /* the cut tail of a killed run */
		if (++n == 1 && strncmp(line, "{\"type\":\"header\"", 16) != 0) {
			snprintf(err, errcap, "not a gpuprobe result (no header line)");
			rc = -1;
			break;
		}
		json_t *j = is_sample(line) ? json_loadb(line, (size_t)len, 0, NULL) : NULL;
		if (!j) {
			fwrite(line, 1, (size_t)len, out);
			continue;
		}
		gp_threadref_resolve(refs, j);
		/* As the writer dumps (model/result.c). */
		if (json_dumpf(j, out, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10)) == 0)
			fputc('\n', out);
		json_decref(j);
	}
	if (!refs) {
		snprintf(err, errcap, "out of memory");
		rc = -1;
	} else if (rc == 0 && n == 0) {
		snprintf(err, errcap, "empty file: not a gpuprobe result");
		rc = -1;
	}
	gp_threadref_free(refs);
	free(line);
	fclose(f);
	return rc;
}
