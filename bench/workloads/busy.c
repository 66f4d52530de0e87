/* bench/workloads/busy: a busy many-threaded target for bench/scale.sh.
 *
 *   busy N COMPUTING PERIOD_MS
 *
 * Starts N threads: COMPUTING of them spin on the CPU for ever, the rest
 * wake every PERIOD_MS milliseconds (clock_nanosleep, absolute deadlines)
 * and sleep again at once; then prints its pid on stdout (one line,
 * flushed) and lives until killed.  Every thread has a 64 KiB stack, and
 * RLIMIT_NPROC is raised to its hard limit when it would be short. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long period_ns;
static volatile unsigned long sink;

static void *spinner(void *arg)
{
	(void)arg;
	for (unsigned long i = 0;; i++)
		sink += i;
	return NULL;
}

static void *waker(void *arg)
{
	(void)arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		next.tv_nsec += period_ns;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

static long arg(const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "usage: busy N COMPUTING PERIOD_MS\n");
		exit(64);
	}
	return v;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: busy N COMPUTING PERIOD_MS\n");
		return 64;
	}
	long n = arg(argv[1], 0, 100000), c = arg(argv[2], 0, n);
	period_ns = arg(argv[3], 1, 100000) * 1000000L;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	    && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NPROC, &rl);
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long i = 0; i < n; i++) {
		pthread_t th;
		int e = pthread_create(&th, &attr, i < c ? spinner : waker, NULL);
		if (e) {
			fprintf(stderr, "busy: thread %ld of %ld: %s\n", i + 1, n, strerror(e));
			return 1;
		}
	}
	printf("%ld\n", (long)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
