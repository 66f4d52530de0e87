/* stackload NBLOCKED NSPIN [LATE_LIB]: the stacks tests' target.
 * NBLOCKED threads wait in gpw::server::Queue::start_loop(long) (libgpcxx,
 * C++ with debug info), NSPIN threads spin in libgpspin's stripped hidden
 * code.  Prints "ready PID" once every thread exists.  On SIGUSR1 it
 * dlopens LATE_LIB and starts a thread blocked in its gplate_wait(), then
 * prints "late". */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int gpcxx_start(int n);
int gpspin_start(int n);

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: stackload NBLOCKED NSPIN [LATE_LIB]\n");
		return 2;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL); /* inherited by every thread */
	if (gpcxx_start(atoi(argv[1])) || gpspin_start(atoi(argv[2]))) {
		perror("stackload: pthread_create");
		return 1;
	}
	/* Let every thread reach its wait or its loop. */
	usleep(100000);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;) {
		int sig;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (argc < 4)
			continue;
		void *h = dlopen(argv[3], RTLD_NOW);
		int (*start)(void) = h ? (int (*)(void))dlsym(h, "gplate_start") : NULL;
		if (!start || start()) {
			fprintf(stderr, "stackload: %s: %s\n", argv[3], dlerror());
			return 1;
		}
		printf("late\n");
		fflush(stdout);
	}
}
