/* bench/workloads/threads: a target with N sleeping threads.
 *
 *   threads [N]        (default 1000)
 *
 * Starts N threads that block in pthread_cond_wait (futex) forever, then
 * prints its pid on stdout (one line, flushed) and lives until killed.
 * Each thread gets a small stack (64 KiB) so 1000 of them cost little
 * memory; RLIMIT_NPROC is raised to its hard limit when it would be short. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	started++;
	for (;;) /* never signalled: sleeps in futex_wait */
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = 1000;
	if (argc > 1) {
		char *end;
		errno = 0;
		n = strtol(argv[1], &end, 10);
		if (errno || *end || n < 0 || n > 100000) {
			fprintf(stderr, "usage: %s [N]  (0..100000 threads)\n", argv[0]);
			return 64;
		}
	}

	struct rlimit rl;
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
	    && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NPROC, &rl);
	}

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		pthread_t th;
		int e = pthread_create(&th, &attr, sleeper, NULL);
		if (e) {
			fprintf(stderr, "threads: thread %ld of %ld: %s\n", i + 1, n, strerror(e));
			return 1;
		}
		pthread_detach(th);
	}
	pthread_attr_destroy(&attr);

	/* Wait until every thread is asleep in the condition variable. */
	for (;;) {
		pthread_mutex_lock(&mu);
		int s = started;
		pthread_mutex_unlock(&mu);
		if (s >= n)
			break;
		usleep(1000);
	}

	printf("%ld\n", (long)getpid());
	fflush(stdout);

	sigset_t none;
	sigemptyset(&none);
	for (;;)
		sigsuspend(&none); /* until a signal kills us */
}
