/* Loaded by stackload with dlopen after gpuprobe's session started: its
 * thread must be named in the next snapshot. */
#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) void gplate_wait(void)
{
	pthread_mutex_lock(&mu);
	for (;;)
		pthread_cond_wait(&cv, &mu);
}

static void *gplate_thread(void *arg)
{
	(void)arg;
	gplate_wait();
	return 0;
}

int gplate_start(void)
{
	pthread_t t;
	if (pthread_create(&t, 0, gplate_thread, 0))
		return -1;
	return pthread_detach(t);
}
