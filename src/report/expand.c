#include "config.h"
#include "expand.h"
#include "rstream.h"
#include "samplein.h"
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

/* The threads a sample lists, every process of it. */
static size_t threads_of(const json_t *j)
{
	size_t n = json_array_size(json_object_get(j, "threads")), i;
	const json_t *c;
	json_array_foreach(json_object_get(j, "procs"), i, c)
		n += json_array_size(json_object_get(c, "threads"));
	return n;
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
	struct gp_rlines rl; /* bounded lines (model/rstream.h) */
	if (gp_rlines_open(&rl, fd) < 0) {
		snprintf(err, errcap, "%s", strerror(errno));
		return -1;
	}
	struct gp_threadref *refs = gp_threadref_new();
	ssize_t len;
	unsigned long n = 0;
	int rc = 0;
	while (refs && (len = gp_rlines_next(&rl)) > 0) {
		const char *line = rl.line;
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
		if (threads_of(j) > GP_SAMPLE_MAX_THREADS) { /* as report's other formats */
			snprintf(err, errcap, "line %lu is a sample of more than %zu threads: not a "
				 "sample gpuprobe writes (a corrupt or crafted file)", n, GP_SAMPLE_MAX_THREADS);
			json_decref(j);
			rc = -1;
			break;
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
	} else if (rc == 0 && rl.err) {
		gp_rlines_why(&rl, err, errcap);
		rc = -1;
	} else if (rc == 0 && n == 0) {
		snprintf(err, errcap, "empty file: not a gpuprobe result");
		rc = -1;
	}
	gp_threadref_free(refs);
	gp_rlines_close(&rl);
	return rc;
}
