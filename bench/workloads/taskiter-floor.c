/* bench/workloads/taskiter-floor: the BPF sampler's per-thread floor on
 * this machine (issue 30): what one pass of the task iterator
 * (src/tracer/taskiter.h) costs over every thread of PID, beside a pread
 * of each thread's /proc schedstat with its fd kept open (the /proc
 * path's floor: tasks.c reads that one file of a thread that slept).
 *
 *   taskiter-floor PID [ROUNDS]      (default 20 rounds)
 *
 * Prints CPU microseconds (user+sys, getrusage) per pass and per thread,
 * and the records a pass wrote (0 when every thread slept). */
#define _GNU_SOURCE
#include "config.h"
#include "taskiter.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
	       + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Every thread's schedstat, kept open: *n fds in a new array. */
static int *open_schedstat(int pid, size_t *n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	int *fds = NULL;
	size_t cap = 0;
	*n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			int *m = realloc(fds, cap * sizeof *m);
			if (!m)
				break;
			fds = m;
		}
		char p[320];
		snprintf(p, sizeof p, "/proc/%d/task/%s/schedstat", pid, e->d_name);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			fds[(*n)++] = fd;
	}
	if (d)
		closedir(d);
	return fds;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PID [ROUNDS]\n", argv[0]);
		return 2;
	}
	int pid = atoi(argv[1]), rounds = argc > 2 ? atoi(argv[2]) : 20;
	struct gp_taskiter *it = gp_taskiter_new(pid);
	if (!it) {
		fprintf(stderr, "taskiter-floor: no iterator: %s\n", gp_taskiter_why());
		return 1;
	}
	struct gp_taskiter_pass p;
	double t0 = cpu_now();
	if (gp_taskiter_pass(it, &p) < 0) {
		perror("taskiter-floor: first pass");
		return 1;
	}
	double first = cpu_now() - t0;
	size_t threads = p.ntids, records = 0;
	printf("first pass (every thread written): %zu threads, %zu records, %.1f us CPU, %.3f us/thread\n",
	       threads, p.nrecs, first * 1e6, first * 1e6 / (double)threads);
	t0 = cpu_now();
	for (int r = 0; r < rounds; r++) {
		if (gp_taskiter_pass(it, &p) < 0) {
			perror("taskiter-floor: pass");
			return 1;
		}
		records += p.nrecs;
	}
	double pass = (cpu_now() - t0) / rounds;
	printf("pass (threads that moved): %zu threads, %.1f records, %.1f us CPU, %.3f us/thread\n",
	       p.ntids, (double)records / rounds, pass * 1e6, pass * 1e6 / (double)p.ntids);
	gp_taskiter_free(it);
	size_t n;
	int *fds = open_schedstat(pid, &n);
	char buf[256];
	t0 = cpu_now();
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			if (pread(fds[i], buf, sizeof buf, 0) < 0)
				return 1;
	double pr = (cpu_now() - t0) / rounds;
	printf("pread of schedstat, fd kept: %zu threads, %.1f us CPU a round, %.3f us/thread\n", n,
	       pr * 1e6, n ? pr * 1e6 / (double)n : 0);
	return 0;
}
