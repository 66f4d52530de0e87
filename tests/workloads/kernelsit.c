/* The shape of seed 004's pin: a thread that computes briefly, then sits
 * ~0.3 s inside one kernel call (mmap of SIZE MiB with MAP_POPULATE: the
 * kernel faults every page in before returning, as cuMemHostRegister and
 * hsa_amd_memory_lock do for 0.4-1.2 s), in a loop for SECONDS.  A
 * ptrace interrupt cannot stop it until that call returns.  Prints
 * "kernelsit: done N calls" and exits with STATUS, so that a test sees
 * the command finished by itself.
 *
 * Without SIZE_MIB the size is found at start: doubled from 64 MiB until
 * one call takes 0.25 s (at most 4 GiB), since page-fault speed differs
 * tenfold between machines (a VM's first touch of host memory).
 *
 * With --exec-after-seize PROG ARGS..., the loop runs in a second thread
 * and the main thread execs PROG once that thread has been held by a
 * tracer (TracerPid set) for 20 ms: a ptrace stop still pending when its
 * thread dies in another thread's exec (issue 18: every later stack of
 * the process read "off").
 *
 *   kernelsit SECONDS [STATUS [SIZE_MIB [--exec-after-seize PROG ARGS...]]] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One call that sits in the kernel while every page is faulted in. */
static int populate(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		perror("kernelsit: mmap");
		return -1;
	}
	munmap(p, len);
	return 0;
}

static size_t len;
static double secs;
static int status;
static volatile int loop_tid;

static int loop(void)
{
	double end = now() + secs;
	unsigned long calls = 0;
	volatile unsigned long x = 0;
	while (now() < end) {
		double spin_end = now() + 0.05;
		while (now() < spin_end)
			x++;
		if (populate(len) < 0)
			return 2;
		calls++;
	}
	printf("kernelsit: done %lu calls\n", calls);
	fflush(stdout);
	return status;
}

static void *loop_thread(void *arg)
{
	(void)arg;
	loop_tid = (int)syscall(SYS_gettid);
	exit(loop());
}

static int tracer_of(int tid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *t = strstr(buf, "TracerPid:");
	return t ? atoi(t + 10) : 0;
}

/* Execs argv once the loop thread has been held by a tracer for 20 ms. */
static int exec_after_seize(char **argv)
{
	pthread_t th;
	pthread_create(&th, NULL, loop_thread, NULL);
	while (!loop_tid)
		usleep(1000);
	double held = -1;
	for (;;) {
		if (tracer_of(loop_tid)) {
			if (held < 0)
				held = now();
			if (now() - held >= 0.02)
				break;
		} else {
			held = -1;
		}
		usleep(1000);
	}
	fprintf(stderr, "kernelsit: thread %d held by a tracer for 20 ms: exec %s\n", loop_tid, argv[0]);
	execv(argv[0], argv);
	perror("kernelsit: execv");
	return 2;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 3 ? strtoul(argv[3], NULL, 10) : 0;
	if (!mib) {
		for (mib = 64; mib < 4096; mib *= 2) {
			double t0 = now();
			if (populate((size_t)mib << 20) < 0)
				return 2;
			if (now() - t0 >= 0.25)
				break;
		}
	}
	len = mib << 20;
	fprintf(stderr, "kernelsit: %zu MiB a call\n", mib);
	secs = argc > 1 ? atof(argv[1]) : 10;
	status = argc > 2 ? atoi(argv[2]) : 0;
	if (argc > 5 && !strcmp(argv[4], "--exec-after-seize"))
		return exec_after_seize(argv + 5);
	return loop();
}
