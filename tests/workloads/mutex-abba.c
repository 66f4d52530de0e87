/* A glibc mutex deadlock (ABBA): thread "locker-a" takes mutex A then B,
 * "locker-b" takes B then A; a barrier makes sure each holds its first
 * before asking for its second, so both wait for ever, each on the
 * mutex the other owns.  The main thread joins them.  The truth for
 * gpuprobe's wait-for graph: a cycle of two, both owners named
 * (tests/real/cases.tsv, wait-mutex-abba). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

static void *take_a_then_b(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&a);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&b);
	return NULL;
}

static void *take_b_then_a(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&b);
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&a);
	return NULL;
}

int main(void)
{
	pthread_t ta, tb;
	pthread_barrier_init(&both, NULL, 2);
	if (pthread_create(&ta, NULL, take_a_then_b, NULL) || pthread_create(&tb, NULL, take_b_then_a, NULL)) {
		perror("pthread_create");
		return 1;
	}
	pthread_setname_np(ta, "locker-a");
	pthread_setname_np(tb, "locker-b");
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	return 0;
}
