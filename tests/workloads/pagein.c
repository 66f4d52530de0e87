/* pagein FILE [--mib-per-s R]: map FILE shared read-only and touch every
 * page at about R MiB/s (default: as fast as possible), then sleep until
 * killed.  Prints nothing.  RssFile grows as the pages come in. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double rate = 0; /* MiB/s; 0 = unpaced */
	if (argc == 4 && !strcmp(argv[2], "--mib-per-s"))
		rate = atof(argv[3]);
	else if (argc != 2) {
		fprintf(stderr, "usage: pagein FILE [--mib-per-s R]\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		perror(argv[1]);
		return 1;
	}
	size_t len = (size_t)st.st_size;
	const volatile unsigned char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("pagein: mmap");
		return 1;
	}
	long page = sysconf(_SC_PAGESIZE);
	unsigned sum = 0;
	double t0 = now();
	for (size_t off = 0; off < len; off += (size_t)page) {
		sum += p[off];
		/* Pace every 256 KiB against an absolute schedule. */
		if (rate > 0 && off % (256 * 1024) == 0) {
			double due = t0 + (double)off / (rate * 1048576.0);
			double left = due - now();
			if (left > 0) {
				struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
	}
	(void)sum;
	for (;;)
		pause();
}
