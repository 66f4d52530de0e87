/* spin N [S]: N threads busy-looping in user space (the main thread is
 * the first of them) until killed, or for S seconds, then exit 0.
 * A workload for the end-to-end tests of gpuprobe trace. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static void *spin(void *arg)
{
	volatile unsigned long n = 0;
	(void)arg;
	while (!stop)
		n++;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: spin N [SECONDS]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	int secs = argc > 2 ? atoi(argv[2]) : 0;
	if (n < 1 || n > 1024 || secs < 0) {
		fprintf(stderr, "spin: N in 1..1024, SECONDS >= 0\n");
		return 2;
	}
	if (secs) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned)secs);
	}
	for (int i = 1; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, NULL)) {
			perror("spin: pthread_create");
			return 1;
		}
		pthread_detach(t);
	}
	spin(NULL);
	return 0;
}
