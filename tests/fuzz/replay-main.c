/* Runs a libFuzzer target's LLVMFuzzerTestOneInput on each FILE given
 * (and on every file of each DIR given), once: the regression corpus
 * replayed by `make check` with any compiler, sanitizers or not. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *p)
{
	FILE *f = fopen(p, "rb");
	if (!f) {
		perror(p);
		return 1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			} else
				buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return 1;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0, count = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc |= run_file(argv[i]);
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
			rc |= run_file(p);
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("%d inputs replayed\n", count);
	return rc;
}
