/* How long every thread of a process has been off the CPUs (still.h). */
#define _GNU_SOURCE
#include "config.h"
#include "still.h"
#include "procstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool gp_sched_exec_start(const char *buf, double *ms)
{
	const char *p = strstr(buf, "\nse.exec_start");
	if (!p)
		return false;
	p = strchr(p + 1, ':');
	if (!p)
		return false;
	char *end;
	double v = strtod(p + 1, &end);
	if (end == p + 1 || v < 0)
		return false;
	*ms = v;
	return true;
}

/* The task clock of cpu now, in ms: gpuprobe's own thread moved there
 * reads its exec_start, set when it was put on that CPU. */
static bool clock_of_cpu(int cpu, double *ms)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof one, &one) < 0)
		return false;
	sched_yield();
	if (sched_getcpu() != cpu)
		return false;
	char buf[8192];
	int fd = open("/proc/thread-self/sched", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = gp_pread_all(fd, buf, sizeof buf);
	close(fd);
	return n > 0 && gp_sched_exec_start(buf, ms);
}

/* The newest exec_start of the threads that last ran on each CPU; a
 * thread running or runnable makes the process not still at all. */
struct last_ran {
	double *ms;   /* by CPU, -1: no thread there */
	int ncpu;
	bool running, unknown;
};

static void read_thread(const struct gp_root *root, int pid, const char *tid, struct last_ran *l)
{
	char path[320], buf[8192]; /* tid: a d_name, up to 255 bytes */
	struct gp_stat st;
	snprintf(path, sizeof path, "/proc/%d/task/%s/stat", pid, tid);
	if (gp_read_file(root, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st))
		return; /* gone meanwhile */
	if (st.state == 'Z' || st.state == 'X')
		return;
	if (st.state == 'R') {
		l->running = true;
		return;
	}
	double ms;
	snprintf(path, sizeof path, "/proc/%d/task/%s/sched", pid, tid);
	if (st.processor < 0 || st.processor >= l->ncpu || gp_read_file(root, path, buf, sizeof buf) <= 0
	    || !gp_sched_exec_start(buf, &ms)) {
		l->unknown = true;
		return;
	}
	if (ms > l->ms[st.processor])
		l->ms[st.processor] = ms;
}

/* More threads than this: not read (-1).  Two small reads a thread,
 * once, at the start of a PID trace: 83-112 ms of CPU for 10 001 idle
 * threads here (2026-12-06), a third of what a 10 s trace of them costs
 * on the BPF sampler (bench/results/2026-12-06-bpf-sampler.md). */
#define STILL_MAX_THREADS 4096

double gp_proc_still_s(const struct gp_root *root, int pid)
{
	/* GPUPROBE_STILL=off: not read (a test counting the sampler's own
	 * opens of thread files) */
	const char *off = getenv("GPUPROBE_STILL");
	if (!root->live || (off && !strcmp(off, "off")))
		return -1;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu <= 0 || ncpu > CPU_SETSIZE)
		return -1;
	/* Too many threads: said by stat's num_threads, one read (counting
	 * /proc/PID/task's entries was 4 ms of a 1 s trace of 10 001
	 * threads, perf 2026-12-06, only to decide not to read them). */
	char path[64], buf[1024];
	struct gp_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (gp_read_file(root, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st)
	    || st.num_threads > STILL_MAX_THREADS)
		return -1;
	struct last_ran l = { .ms = malloc(sizeof *l.ms * (size_t)ncpu), .ncpu = (int)ncpu };
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	int dfd = gp_open(root, path, O_DIRECTORY);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!l.ms || !d) {
		if (dfd >= 0 && !d)
			close(dfd);
		free(l.ms);
		return -1;
	}
	for (long c = 0; c < ncpu; c++)
		l.ms[c] = -1;
	struct dirent *e;
	int nthreads = 0;
	while ((e = readdir(d)))
		nthreads += e->d_name[0] >= '0' && e->d_name[0] <= '9';
	if (nthreads > STILL_MAX_THREADS) {
		closedir(d);
		free(l.ms);
		return -1;
	}
	rewinddir(d);
	nthreads = 0;
	while (!l.running && !l.unknown && (e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
			read_thread(root, pid, e->d_name, &l);
			nthreads++;
		}
	closedir(d);
	double still = l.running ? 0 : l.unknown || !nthreads ? -1 : 1e18;
	cpu_set_t mine;
	bool moved = false;
	if (still > 0 && sched_getaffinity(0, sizeof mine, &mine) == 0)
		for (int c = 0; c < l.ncpu && still >= 0; c++) {
			double now;
			if (l.ms[c] < 0)
				continue;
			moved = true;
			if (!clock_of_cpu(c, &now)) {
				still = -1;
				break;
			}
			double s = (now - l.ms[c]) / 1000.0;
			if (s < still)
				still = s < 0 ? 0 : s;
		}
	else if (still > 0)
		still = -1;
	if (moved)
		sched_setaffinity(0, sizeof mine, &mine);
	free(l.ms);
	return still >= 1e17 ? -1 : still;
}
