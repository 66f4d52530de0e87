/* A multithreaded program whose threads keep exec'ing: GENS generations,
 * each of THREADS threads that compute 2 ms and sleep 1 ms in a loop
 * (and, with SIT_MIB, one more that sits inside mmap(MAP_POPULATE) of
 * SIT_MIB MiB, a kernel call a ptrace interrupt cannot stop: a stop
 * asked for then stays pending), until after MS ms the last thread
 * (never the leader) execs this program for the next generation: execve
 * kills every other thread (fs/exec.c, de_thread) while a tracer may be
 * stopping one of them (issue 27: EPERM taken as "denied").
 * With "release", the exec comes as soon as a tracer let go of a worker
 * it held (TracerPid back to 0; MS at the latest): a tracer going from
 * thread to thread then asks for the next one while the exec runs, and
 * its PTRACE_SEIZE waits for the exec (cred_guard_mutex), which waits
 * for the exit of every other thread -- of the sitter too, killed while
 * a stop of it was pending: an exit only that tracer can take (issue
 * 27: a SEIZE that blocked).  The exec'ing thread then runs at nice 19
 * on CPU 0 beside a spinning thread, so that the exec holds the mutex
 * for milliseconds before it kills the others; it says "exec after a
 * release" on stderr.  With "held", as "release", and a child
 * process traces one more thread (a sleeper) and takes its exit only
 * HELD_MS (1000) after the exec killed it: the exec waits that long,
 * whoever else traces the process (needs root, or ptrace_scope 0).
 * The last generation prints "execloop: done" and exits 0.
 *
 *   execloop GENS [THREADS [MS [SIT_MIB [release|held]]]] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXW 64
#define HELD_MS 1000

static char **args;
static int gens, nthreads, ms;
static size_t sit_len;
static bool on_release, held;
static volatile int wtid[MAXW];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	wtid[(size_t)arg] = (int)syscall(SYS_gettid);
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

/* The calling thread onto CPU 0 at nice. */
static void on_cpu0(int nice)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof set, &set);
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice);
}

static void *hog(void *arg)
{
	(void)arg;
	on_cpu0(0);
	for (volatile unsigned long x = 0;; x++)
		;
	return NULL;
}

static volatile int sleeper_tid;

static void *sleeper(void *arg)
{
	(void)arg;
	sleeper_tid = (int)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

/* A child that traces thread tid and, once it died, takes its exit only
 * HELD_MS later (kernel/exit.c exit_notify: a traced thread's exit waits
 * for its tracer; fs/exec.c de_thread waits for every exit).  Only
 * async-signal-safe calls: the parent has threads. */
static void hold_exit_of(int tid)
{
	if (fork() != 0)
		return;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0)
		_exit(1);
	siginfo_t si;
	int st;
	for (;;) {
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)tid, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL) < 0)
			_exit(1);
		if (si.si_code != CLD_TRAPPED && si.si_code != CLD_STOPPED)
			break;
		waitpid(tid, &st, __WALL);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
	}
	struct timespec ts = { HELD_MS / 1000, (long)(HELD_MS % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	waitpid(tid, &st, __WALL);
	_exit(0);
}

static int tracer_of(int tid)
{
	char path[64], buf[2048];
	snprintf(path, sizeof path, "/proc/self/task/%d/status", tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *t = strstr(buf, "TracerPid:");
	return t ? atoi(t + 10) : 0;
}

/* Until a worker seen held by a tracer is let go, or the deadline. */
static void wait_release(double end)
{
	bool seen[MAXW] = { false };
	struct timespec nap = { 0, 50000 };
	while (now() < end) {
		for (int i = 0; i < nthreads && i < MAXW; i++) {
			bool h = wtid[i] && tracer_of(wtid[i]) != 0;
			if (seen[i] && !h)
				return (void)fprintf(stderr, "execloop: exec after a release\n");
			seen[i] = h;
		}
		nanosleep(&nap, NULL);
	}
}

static void *execer(void *arg)
{
	(void)arg;
	if (on_release) {
		wait_release(now() + ms / 1000.0);
		/* The exec itself starved (nice 19 beside a spinner on one
		 * CPU): it holds cred_guard_mutex for milliseconds before it
		 * kills the other threads (fs/exec.c: prepare_bprm_creds,
		 * then de_thread), and a tracer's SEIZE meanwhile waits. */
		on_cpu0(19);
	} else {
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	char g[16], t[16], m[16], s[16];
	snprintf(g, sizeof g, "%d", gens - 1);
	snprintf(t, sizeof t, "%d", nthreads);
	snprintf(m, sizeof m, "%d", ms);
	snprintf(s, sizeof s, "%zu", sit_len >> 20);
	char *av[] = { args[0], g, t, m, s, held ? "held" : on_release ? "release" : NULL, NULL };
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
	held = argc > 5 && !strcmp(argv[5], "held");
	on_release = held || (argc > 5 && !strcmp(argv[5], "release"));
	/* What the last generation's execer was given is not inherited. */
	cpu_set_t all;
	CPU_ZERO(&all);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	sched_setaffinity(0, sizeof all, &all);
	setpriority(PRIO_PROCESS, 0, 0);
	if (gens <= 0) {
		printf("execloop: done\n");
		return 0;
	}
	pthread_t th;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&th, NULL, worker, (void *)(size_t)i);
	if (sit_len)
		pthread_create(&th, NULL, sitter, NULL);
	if (held) {
		pthread_create(&th, NULL, sleeper, NULL);
		while (!sleeper_tid)
			usleep(100);
		hold_exit_of(sleeper_tid);
	}
	if (on_release)
		pthread_create(&th, NULL, hog, NULL);
	pthread_create(&th, NULL, execer, NULL);
	for (;;)
		pause();
}
