/* gapspin NTHREADS NSPIN: the stacks benchmark's target.  NSPIN spinners
 * read CLOCK_MONOTONIC in a loop and record every gap over 20 us (a stop
 * by a tracer, or a preemption); the other threads block in
 * pthread_cond_wait.  SIGUSR1: print per spinner "gaps N max_us M
 * mean_us A" and reset.  Prints "ready PID" once started. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct rec { double max_us, sum_us; unsigned long n; volatile int reset; };
static struct rec *recs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *spinner(void *arg)
{
	struct rec *r = arg;
	double prev = now_us();
	for (;;) {
		double t = now_us();
		if (r->reset) {
			r->max_us = r->sum_us = 0;
			r->n = 0;
			r->reset = 0;
		} else if (t - prev > 20) {
			r->n++;
			r->sum_us += t - prev;
			if (t - prev > r->max_us)
				r->max_us = t - prev;
		}
		prev = t;
	}
	return NULL;
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int n = atoi(argv[1]), s = atoi(argv[2]);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	recs = calloc((size_t)s, sizeof *recs);
	for (int i = 0; i < n - 1; i++) {
		pthread_t t;
		pthread_create(&t, NULL, i < s ? spinner : blocked, i < s ? &recs[i] : NULL);
	}
	usleep(100000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		int sig;
		sigwait(&set, &sig);
		for (int i = 0; i < s; i++) {
			printf("spinner %d gaps %lu max_us %.0f mean_us %.1f\n", i, recs[i].n,
			       recs[i].max_us, recs[i].n ? recs[i].sum_us / recs[i].n : 0.0);
			recs[i].reset = 1;
		}
		printf("end\n");
		fflush(stdout);
	}
}
