/* Threads burning CPU at known duty cycles (25, 50, 75, 100% by default:
 * busy for duty x 10 ms, asleep for the rest of each 10 ms period).  The
 * ground truth is each thread's own CPU clock: on SIGUSR1 the main thread
 * prints "tid cpu_seconds" for every worker (to stdout, one line each,
 * then "end").  For bench/idle-accuracy.sh.
 *   duty [PCT...] */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct worker {
	pthread_t th;
	int pct;
	volatile int tid;
};

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	w->tid = (int)syscall(SYS_gettid);
	const double period = 0.010;
	double next = now(CLOCK_MONOTONIC);
	for (;;) {
		double busy_until = next + period * w->pct / 100.0;
		while (now(CLOCK_MONOTONIC) < busy_until)
			;
		next += period;
		if (w->pct < 100) {
			double d = next - now(CLOCK_MONOTONIC);
			if (d > 0) {
				struct timespec ts = { 0, (long)(d * 1e9) };
				nanosleep(&ts, NULL);
			} else {
				next = now(CLOCK_MONOTONIC);
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? argc - 1 : 4;
	static const int dflt[] = { 25, 50, 75, 100 };
	struct worker *w = calloc((size_t)n, sizeof *w);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < n; i++) {
		w[i].pct = argc > 1 ? atoi(argv[i + 1]) : dflt[i];
		pthread_create(&w[i].th, NULL, run, &w[i]);
	}
	fprintf(stderr, "%d\n", getpid());
	for (;;) {
		int sig;
		sigwait(&set, &sig);
		if (sig == SIGTERM)
			return 0;
		printf("at %.6f\n", now(CLOCK_MONOTONIC));
		for (int i = 0; i < n; i++) {
			clockid_t c;
			if (pthread_getcpuclockid(w[i].th, &c) == 0)
				printf("%d %d %.6f\n", w[i].tid, w[i].pct, now(c));
		}
		printf("end\n");
		fflush(stdout);
	}
}
