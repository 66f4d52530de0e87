/* A process whose main thread has exited (pthread_exit) while another
 * thread lives on: /proc/PID/stat says Z, yet the process is alive. */
#include <pthread.h>
#include <unistd.h>

static void *worker(void *arg)
{
	for (;;)
		sleep(1);
	return arg;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_exit(NULL);
}
