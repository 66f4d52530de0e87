/* A program that is its own debugger's client: it raises SIGTRAP in a
 * loop for SECONDS and counts the ones its handler caught.  A tracer that
 * stops its thread meanwhile must give back every SIGTRAP it saw (issue
 * 27: 8 of 1.3 M dropped over 72 stops).  Prints
 *   "traploop: raised N caught M"
 * and exits 0 when every trap raised was caught, 1 otherwise.
 *
 *   traploop [SECONDS] */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t caught;

static void on_trap(int sig)
{
	(void)sig;
	caught++;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	unsigned long raised = 0;
	double end = now() + secs;
	while (now() < end) {
		for (int i = 0; i < 1000; i++) {
			raise(SIGTRAP);
			raised++;
		}
	}
	unsigned long got = (unsigned long)caught;
	printf("traploop: raised %lu caught %lu\n", raised, got);
	return got == raised ? 0 : 1;
}
