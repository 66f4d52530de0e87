/* The watchdog: a worker thread per call, a timed wait on a condition
 * variable (CLOCK_MONOTONIC), and /proc/self/task/TID when time runs out. */
#include "config.h"
#include "watchdog.h"
#include "parse.h"
#include "procfs.h"
#include "procstat.h"
#include "syscalls.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct wd_call {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	gp_wd_fn fn;
	void *arg;
	int tid;
	bool done;
	int64_t ret;
	double secs;
	int refs;        /* the worker and the waiter: the last one out frees */
};

static void *worker(void *p)
{
	struct wd_call *c = p;
	/* Signals belong to the main thread (Ctrl-C must reach it). */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&c->mu);
	c->tid = (int)syscall(SYS_gettid);
	pthread_mutex_unlock(&c->mu);
	double t0 = gp_mono_now();
	int64_t r = c->fn(c->arg);
	double dt = gp_mono_now() - t0;
	pthread_mutex_lock(&c->mu);
	c->ret = r;
	c->secs = dt;
	c->done = true;
	pthread_cond_signal(&c->cv);
	bool last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (last)
		free(c);
	return NULL;
}

static void describe(int tid, struct gp_wd_stuck *s)
{
	char path[64], buf[4096];
	memset(s, 0, sizeof *s);
	s->tid = tid;
	s->state = '?';
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
	struct gp_stat st;
	int fd;
	ssize_t n;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = gp_pread_all(fd, buf, sizeof buf);
		close(fd);
		if (n > 0 && gp_parse_stat(buf, &st))
			s->state = st.state;
	}
	snprintf(path, sizeof path, "/proc/self/task/%d/wchan", tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = gp_pread_all(fd, buf, sizeof buf);
		close(fd);
		if (n >= 0)
			gp_parse_wchan(buf, s->wchan, sizeof s->wchan);
	}
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = gp_pread_all(fd, buf, sizeof buf);
		close(fd);
		struct gp_syscall sc;
		if (n > 0 && gp_parse_syscall(buf, &sc)) {
			if (sc.kind == GP_SC_IN)
				gp_syscall_describe(s->syscall, sizeof s->syscall, sc.nr, sc.args);
			else if (sc.kind == GP_SC_RUNNING)
				snprintf(s->syscall, sizeof s->syscall, "running");
			else if (sc.kind == GP_SC_USER)
				snprintf(s->syscall, sizeof s->syscall, "user space");
		}
	}
	snprintf(path, sizeof path, "/proc/self/task/%d/stack", tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		s->kstack = gp_slurp_fd(fd, NULL);
		close(fd);
		if (s->kstack && !*s->kstack) {
			free(s->kstack);
			s->kstack = NULL;
		}
	}
}

/* Waits, holding c->mu, until the call is done or the monotonic clock
 * passes end.  Every answer of the timed wait is handled: 0 and ETIMEDOUT
 * go round to the two checks; anything else (EINVAL: a deadline the
 * kernel refuses -- what `pools --timeout inf` produced when the deadline
 * was a double cast to time_t) must not become a loop that spins holding
 * the mutex the worker needs to report -- and an early ETIMEDOUT (a
 * condvar on another clock) must not spin either: let go, nap 1 ms,
 * check again. */
static void wait_done(struct wd_call *c, int64_t end)
{
	struct timespec dl = gp_ts_from_ns(end);
	while (!c->done && gp_mono_ns() < end) {
		int e = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
		if (e == 0 || (e == ETIMEDOUT && gp_mono_ns() >= end))
			continue;
		pthread_mutex_unlock(&c->mu);
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
		pthread_mutex_lock(&c->mu);
	}
}

bool gp_watchdog_run(gp_wd_fn fn, void *arg, int64_t timeout_ns, int64_t *ret,
		     double *secs, struct gp_wd_stuck *stuck)
{
	/* Heap, shared with the worker: freed by whichever lets go last (on
	 * a timeout, the worker, if the call ever returns). */
	struct wd_call *c = calloc(1, sizeof *c);
	if (!c)
		return (*ret = fn(arg)), (*secs = 0), true;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&c->mu, NULL);
	c->fn = fn;
	c->arg = arg;
	c->refs = 2;
	/* Joinable: a call that returned is joined, so the worker has
	 * finished exiting -- its thread-local state freed -- before we go
	 * on.  A detached worker could still be exiting when gpuprobe did:
	 * glibc's per-thread dlerror result (24 bytes, _dlerror_run) then
	 * showed as a leak in 10 of 150 `lock --lib EMPTY` runs under ASan on
	 * a loaded machine (CI, bad-input suite).  One that did not return is
	 * detached and left to the kernel. */
	pthread_t th;
	if (pthread_create(&th, NULL, worker, c) != 0) {
		double t0 = gp_mono_now();
		*ret = fn(arg);
		*secs = gp_mono_now() - t0;
		free(c);
		return true;
	}
	int64_t end = gp_ns_add(gp_mono_ns(), timeout_ns);
	pthread_mutex_lock(&c->mu);
	wait_done(c, end);
	bool done = c->done;
	int tid = c->tid;
	if (done) {
		*ret = c->ret;
		*secs = c->secs;
	}
	bool last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (last)
		free(c);
	if (done) {
		pthread_join(th, NULL);
		return true;
	}
	pthread_detach(th);
	describe(tid, stuck);
	return false;
}
