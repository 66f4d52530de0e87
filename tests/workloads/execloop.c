/* A multithreaded program whose threads keep exec'ing: GENS generations,
 * each of THREADS threads that compute 2 ms and sleep 1 ms in a loop
 * (and, with SIT_MIB, one more that sits inside mmap(MAP_POPULATE) of
 * SIT_MIB MiB, a kernel call a ptrace interrupt cannot stop), until
 * after MS ms the last thread (never the leader) execs this program for
 * the next generation: execve kills every other thread (fs/exec.c,
 * de_thread) while a tracer may be stopping one of them (issue 27:
 * EPERM taken as "denied"; a SEIZE that blocked against the exec).
 * The last generation prints "execloop: done" and exits 0.
 *
 *   execloop GENS [THREADS [MS [SIT_MIB]]] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char **args;
static int gens, nthreads, ms;
static size_t sit_len;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	(void)arg;
	volatile unsigned long x = 0;
	struct timespec nap = { 0, 1000000 };
	for (;;) {
		double end = now() + 0.002;
		while (now() < end)
			x++;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void *sitter(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = mmap(NULL, sit_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, sit_len);
	}
	return NULL;
}

static void *execer(void *arg)
{
	(void)arg;
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	char g[16], t[16], m[16], s[16];
	snprintf(g, sizeof g, "%d", gens - 1);
	snprintf(t, sizeof t, "%d", nthreads);
	snprintf(m, sizeof m, "%d", ms);
	snprintf(s, sizeof s, "%zu", sit_len >> 20);
	char *av[] = { args[0], g, t, m, s, NULL };
	execv("/proc/self/exe", av);
	perror("execloop: execv");
	exit(2);
}

int main(int argc, char **argv)
{
	args = argv;
	gens = argc > 1 ? atoi(argv[1]) : 100;
	nthreads = argc > 2 ? atoi(argv[2]) : 3;
	ms = argc > 3 ? atoi(argv[3]) : 30;
	sit_len = (size_t)(argc > 4 ? strtoul(argv[4], NULL, 10) : 0) << 20;
	if (gens <= 0) {
		printf("execloop: done\n");
		return 0;
	}
	pthread_t th;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th, NULL, worker, NULL);
	if (sit_len)
		pthread_create(&th, NULL, sitter, NULL);
	pthread_create(&th, NULL, execer, NULL);
	for (;;)
		pause();
}
