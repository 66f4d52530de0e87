/* Watches a process from outside and reports the longest stretch any of
 * its threads spent stopped (state 't', a ptrace stop, or 'T'), polling
 * /proc/PID/task/TID/stat every INTERVAL_MS (default 1) until the process
 * is gone or SECONDS pass.  Prints one line:
 *   "stopwatch: max_stopped_ms=12.3 tid=456 polls=789"
 * The truth beside "gpuprobe never leaves a target stopped" (issue 18).
 *
 *   stopwatch PID [SECONDS [INTERVAL_MS]] */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXT 4096

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct seen { int tid; double since; /* < 0: not stopped */ };

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: stopwatch PID [SECONDS [INTERVAL_MS]]\n");
		return 2;
	}
	int pid = atoi(argv[1]);
	double secs = argc > 2 ? atof(argv[2]) : 1e9;
	double iv = argc > 3 ? atof(argv[3]) : 1;
	static struct seen s[MAXT];
	size_t ns = 0;
	double max = 0, end = now_ms() + secs * 1e3;
	int max_tid = 0;
	unsigned long polls = 0;
	char path[128], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	while (now_ms() < end) {
		DIR *d = opendir(path);
		if (!d)
			break;
		struct dirent *e;
		double t = now_ms();
		while ((e = readdir(d))) {
			int tid = atoi(e->d_name);
			if (tid <= 0)
				continue;
			char p2[160];
			snprintf(p2, sizeof p2, "%s/%d/stat", path, tid);
			int fd = open(p2, O_RDONLY);
			if (fd < 0)
				continue;
			ssize_t n = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = 0;
			char *rp = strrchr(buf, ')');
			if (!rp || rp[1] != ' ')
				continue;
			char st = rp[2];
			size_t i = 0;
			while (i < ns && s[i].tid != tid)
				i++;
			if (i == ns) {
				if (ns == MAXT)
					continue;
				s[ns].tid = tid;
				s[ns++].since = -1;
			}
			if (st == 't' || st == 'T') {
				if (s[i].since < 0)
					s[i].since = t;
				if (t - s[i].since > max) {
					max = t - s[i].since;
					max_tid = tid;
				}
			} else {
				s[i].since = -1;
			}
		}
		closedir(d);
		polls++;
		struct timespec ts = { 0, (long)(iv * 1e6) };
		nanosleep(&ts, NULL);
	}
	printf("stopwatch: max_stopped_ms=%.1f tid=%d polls=%lu\n", max, max_tid, polls);
	return 0;
}
