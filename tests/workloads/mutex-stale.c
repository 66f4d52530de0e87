/* A mutex that changes hands while a waiter sleeps: the truth beside "a
 * cycle is certain only in fresh reads" (issue 27, review item 2).
 *
 *   mutex-stale [HOLD_S]
 *
 * "holder" takes M1 and sleeps HOLD_S seconds (default 2).  Meanwhile
 * "queued-c" asks for M1 first, then "queued-b" takes M2 and asks for M1
 * second.  At HOLD_S the holder lets M1 go -- the kernel wakes the first
 * waiter, queued-c (futex queues are FIFO at equal priority), which keeps
 * M1 and sleeps for ever -- and asks for M2, which queued-b holds.
 * queued-b never ran again: its futex word now names queued-c as M1's
 * owner, but a reading of it from before the hand-over names the holder,
 * and with holder -> queued-b (M2) that stale edge closes a false cycle.
 * The truth: no deadlock; holder waits on queued-b, queued-b on
 * queued-c, and queued-c sleeps holding M1 (a chain ending at a sleeping
 * holder).  The main thread joins the holder. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static double hold_s = 2;

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

static void *holder(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "holder");
	pthread_mutex_lock(&m1);
	nap(hold_s);
	pthread_mutex_unlock(&m1);
	pthread_mutex_lock(&m2);
	return NULL;
}

static void *queued_c(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "queued-c");
	nap(0.2);
	pthread_mutex_lock(&m1);
	for (;;)
		pause();
	return NULL;
}

static void *queued_b(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "queued-b");
	pthread_mutex_lock(&m2);
	nap(0.5);
	pthread_mutex_lock(&m1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		hold_s = atof(argv[1]);
	pthread_t h, c, b;
	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&c, NULL, queued_c, NULL);
	pthread_create(&b, NULL, queued_b, NULL);
	printf("mutex-stale: holder lets M1 go at +%.1f s\n", hold_s);
	fflush(stdout);
	pthread_join(h, NULL);
	return 0;
}
