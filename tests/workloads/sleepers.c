/* sleepers N [--churn R | --named]: N threads blocked in pthread_cond_wait
 * (futex) until killed; --named names them sleeper-0, sleeper-1, ... (a
 * JVM's threads each have a name: one stack, many comms).  With --churn R, the main thread also creates R
 * short-lived threads a second (each lives 0-10 ms), so that threads
 * vanish between a tracer's readdir and its reads, and tids get reused. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu); /* never signalled */
	return NULL;
}

static void *brief(void *arg)
{
	struct timespec ts = { 0, (long)(size_t)arg * 1000000L };
	nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	double churn = 0;
	bool named = argc == 3 && !strcmp(argv[2], "--named");
	if (argc == 4 && !strcmp(argv[2], "--churn"))
		churn = atof(argv[3]);
	else if (argc != 2 && !named) {
		fprintf(stderr, "usage: sleepers N [--churn THREADS_PER_S | --named]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &at, sleeper, NULL)) {
			perror("sleepers: pthread_create");
			return 1;
		}
		if (named) {
			char name[16];
			snprintf(name, sizeof name, "sleeper-%d", i % 1000000);
			pthread_setname_np(t, name);
		}
	}
	if (churn <= 0)
		for (;;)
			pause();
	long gap_ns = (long)(1e9 / churn);
	struct timespec gap = { gap_ns / 1000000000L, gap_ns % 1000000000L };
	for (size_t i = 0;; i++) {
		pthread_t t;
		pthread_create(&t, &at, brief, (void *)(i % 11)); /* EAGAIN: skip */
		nanosleep(&gap, NULL);
	}
}
