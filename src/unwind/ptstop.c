/* The ptrace stop, its timeout and the pending set: see ptstop.h for the
 * contract.
 *
 * Facts relied on (Linux, kernel/ptrace.c, kernel/exit.c, and ptrace(2)):
 *   - PTRACE_INTERRUPT sets JOBCTL_TRAP_INTERRUPT and wakes the thread; a
 *     thread busy inside a kernel call takes the trap only on its way back
 *     to user space, so a stop can come long after the request.
 *   - PTRACE_DETACH needs the tracee stopped (ptrace_check_attach): a
 *     pending thread cannot be let go before its trap; ESRCH until then.
 *   - A tracer's wait reports the tracee's ptrace stops with or without
 *     WSTOPPED/WUNTRACED (wait_task_stopped: "ptrace" case), so a waitpid
 *     on gpuprobe's own child takes a ptrace stop of its leader as readily
 *     as its exit: the cause of issue 18's killed commands.  Every wait
 *     here looks first (WNOWAIT) and takes only what it owns.
 *   - execve by a non-leader thread kills the other threads and gives the
 *     execing thread the leader's pid (de_thread); a tracee keeps its
 *     tracer across the exec.
 *   - A traced thread's exit is reported to the tracer, who must take it;
 *     until then it is a zombie, and the process looks alive. */
#include "config.h"
#include "ptstop.h"
#include "grow.h"
#include "parse.h"
#include "timeutil.h"
#include "waitfd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct pend {
	int tgid, tid;
	bool own_child;
};

static struct pend *pend;         /* interrupted, not stopped yet */
static size_t npend, cappend;
static int *lost;                 /* traced threads dying: exits to take */
static size_t nlost, caplost;
static struct pend cur;           /* the thread stopped now (tid 0: none) */
static struct gp_ptstop_totals tot;
static double last_drain_us;

static double now_us(void)
{
	return gp_mono_now() * 1e6;
}

static bool is_own_leader(const struct pend *p)
{
	return p->own_child && p->tid == p->tgid;
}

/* The signal a stop carries, to give back at the detach: only a
 * signal-delivery-stop (status>>16 == 0) holds one, SIGTRAP included; our
 * own interrupt trap and a group-stop of a SEIZEd tracee are
 * PTRACE_EVENT_STOP (status>>16, kernel/signal.c do_jobctl_trap) and hold
 * none.  A SIGTRAP signal-delivery-stop is always the target's own: a
 * SEIZEd tracee gets no legacy post-exec SIGTRAP (ptrace(2), "execve under
 * ptrace"; include/linux/ptrace.h ptrace_event sends it only without PT_SEIZED),
 * and we set no options that would trap.  Dropping it lost 90-100 of
 * ~4.7 M raise(SIGTRAP)s over 100 stops (tests/e2e/trace-sigtrap.sh). */
static int stop_signal(int status)
{
	return (status >> 16) == 0 ? WSTOPSIG(status) : 0;
}

/* The next wait event of one traced thread, taken only when it is ours:
 * 1 stopped (*status set, the stop taken), 0 nothing yet, -1 gone (its
 * exit taken, except the leader of our own child: that is the caller's).
 * errno ECHILD on -1: no such tracee any more (it was reaped, or it
 * exec'd and now answers to the leader's pid). */
static int poll_one(const struct pend *p, int *status)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)p->tid, &si, WSTOPPED | WEXITED | WNOHANG | WNOWAIT | __WALL) < 0)
		return errno == EINTR ? 0 : -1;
	if (si.si_pid != p->tid)
		return 0;
	if (si.si_code == CLD_TRAPPED || si.si_code == CLD_STOPPED) {
		if (waitpid(p->tid, status, __WALL | WNOHANG) == p->tid && WIFSTOPPED(*status))
			return 1;
		return 0;
	}
	if (!is_own_leader(p))
		waitpid(p->tid, status, __WALL | WNOHANG);
	errno = 0;
	return -1;
}

static void add_lost(int tid)
{
	for (size_t i = 0; i < nlost; i++)
		if (lost[i] == tid)
			return;
	if (gp_grow(&lost, &caplost, nlost + 1, sizeof *lost, 8))
		lost[nlost++] = tid; /* else: released when gpuprobe exits */
}

/* Lets go of a stopped thread; one that is no longer stopped (only a
 * SIGKILL wakes a ptrace-stopped thread) is kept until its exit is taken. */
static void detach(const struct pend *p, int sig)
{
	if (ptrace(PTRACE_DETACH, p->tid, NULL, (void *)(long)sig) == 0 || errno != ESRCH)
		return;
	if (!is_own_leader(p))
		add_lost(p->tid);
}

static bool pending_has(int tid)
{
	for (size_t i = 0; i < npend; i++)
		if (pend[i].tid == tid)
			return true;
	return false;
}

static void pending_remove(int tid)
{
	for (size_t i = 0; i < npend; i++)
		if (pend[i].tid == tid) {
			pend[i] = pend[--npend];
			return;
		}
}

static void add_pending(struct pend p)
{
	if (pending_has(p.tid))
		return;
	if (gp_grow(&pend, &cappend, npend + 1, sizeof *pend, 8))
		pend[npend++] = p;
	/* else: out of memory; the kernel lets it go when gpuprobe exits */
}

int gp_tracer_of(int tgid, int tid, char *comm, size_t cap)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", tgid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *t = strstr(buf, "\nTracerPid:");
	if (!t)
		return -1;
	int tracer = atoi(t + 11);
	if (comm && cap) {
		comm[0] = 0;
		if (tracer > 0) {
			snprintf(path, sizeof path, "/proc/%d/comm", tracer);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, buf, sizeof buf - 1);
				close(fd);
				if (n > 0) {
					buf[n] = 0;
					buf[strcspn(buf, "\n")] = 0;
					gp_strlcpy(comm, buf, cap);
				}
			}
		}
	}
	return tracer;
}

/* A pending thread that vanished may have exec'd: it now answers to the
 * leader's pid, still traced by us with our interrupt perhaps spent.
 * Follow it there, and interrupt it again so that it stops and is let
 * go (PTRACE_INTERRUPT on a tracee already stopped is harmless). */
static void follow_exec(const struct pend *p)
{
	if (p->tid == p->tgid || pending_has(p->tgid))
		return;
	if (gp_tracer_of(p->tgid, p->tgid, NULL, 0) != (int)getpid())
		return;
	add_pending((struct pend){ p->tgid, p->tgid, p->own_child });
	ptrace(PTRACE_INTERRUPT, p->tgid, NULL, NULL);
	tot.exec_followed++;
}

static void reap_lost(void)
{
	size_t k = 0;
	for (size_t i = 0; i < nlost; i++) {
		int tid = lost[i], st;
		pid_t w = waitpid(tid, &st, __WALL | WNOHANG);
		if (w == 0 || (w < 0 && errno == EINTR)) {
			lost[k++] = tid; /* still exiting */
		} else if (w == tid && WIFSTOPPED(st)) {
			/* Alive after all: it stopped; let it go with its signal. */
			if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)stop_signal(st)) != 0 &&
			    errno == ESRCH)
				lost[k++] = tid;
		}
	}
	nlost = k;
}

int gp_ptstop_drain(void)
{
	if (!npend && !nlost)
		return 0;
	double t = now_us();
	struct pend follow[8];
	size_t nfollow = 0, k = 0;
	for (size_t i = 0; i < npend; i++) {
		int st = 0, r = poll_one(&pend[i], &st);
		if (r == 0) {
			pend[k++] = pend[i];
			continue;
		}
		if (r == 1) {
			detach(&pend[i], stop_signal(st));
			tot.drained_late++;
			if (last_drain_us > 0 && t - last_drain_us > tot.late_us_max)
				tot.late_us_max = t - last_drain_us;
		} else {
			tot.pending_died++;
			if (errno == ECHILD && nfollow < 8)
				follow[nfollow++] = pend[i];
		}
	}
	npend = k;
	for (size_t i = 0; i < nfollow; i++)
		follow_exec(&follow[i]);
	reap_lost();
	last_drain_us = t;
	return (int)(npend + nlost);
}

/* Sleeps until SIGCHLD or `us` pass, SIGCHLD blocked meanwhile; returns
 * true when one was taken (it may have been meant for the caller). */
static bool nap_for_sigchld(double us)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	struct timespec ts = { 0, (long)(us > 1000 ? 1000000 : us * 1000) };
	return sigtimedwait(&chld, NULL, &ts) == SIGCHLD;
}

/* SIGCHLD blocked around our waits; one we took is given back at the
 * end, being perhaps the exit of the caller's child (SIGCHLD is not
 * queued: one stands for any number). */
struct chld_guard {
	sigset_t old;
	bool took;
};

static void guard_begin(struct chld_guard *g)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &g->old);
	g->took = false;
}

static void guard_end(struct chld_guard *g)
{
	if (g->took)
		raise(SIGCHLD);
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

int gp_ptstop_settle(int ms)
{
	int left = gp_ptstop_drain();
	if (!npend)
		return left;
	struct chld_guard g;
	guard_begin(&g);
	double end = now_us() + ms * 1000.0;
	while (npend) {
		double d = end - now_us();
		if (d <= 0)
			break;
		if (nap_for_sigchld(d))
			g.took = true;
		left = gp_ptstop_drain();
	}
	guard_end(&g);
	return left;
}

size_t gp_ptstop_pending(void)
{
	return npend;
}

bool gp_ptstop_is_pending(int tid)
{
	return pending_has(tid);
}

void gp_ptstop_totals(struct gp_ptstop_totals *t)
{
	*t = tot;
}

/* Whether thread tid of tgid is gone or on its way out: no
 * /proc/TGID/task/TID, state Z or X, or PF_EXITING (0x4,
 * include/linux/sched.h) in its flags (stat field 9). */
static bool thread_dying(int tgid, int tid)
{
	char path[96], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", tgid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return true; /* ESRCH: it went between the open and the read */
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	char state = p[2];
	unsigned long flags = 0;
	/* After the comm: state ppid pgrp session tty_nr tpgid flags. */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		flags = 0;
	return state == 'Z' || state == 'X' || (flags & 0x4);
}

static enum gp_stop seize_failed(int tgid, int tid, int e, struct gp_stop_res *res)
{
	res->err = e;
	if (e == ESRCH)
		return res->rc = GP_STOP_GONE;
	if (e != EPERM && e != EACCES)
		return res->rc = GP_STOP_FAILED;
	/* One thread held by strace or gdb refuses the SEIZE with EPERM, as a
	 * process we may not trace does: TracerPid tells them apart. */
	int tracer = gp_tracer_of(tgid, tid, res->tracer_comm, sizeof res->tracer_comm);
	if (tracer > 0 && tracer != (int)getpid()) {
		res->tracer = tracer;
		return res->rc = GP_STOP_TRACED;
	}
	/* A thread that exits refuses it too (kernel/ptrace.c ptrace_attach:
	 * -EPERM on task->exit_state), and so does one we trace already,
	 * dying unreaped: neither says anything of our rights. */
	if (thread_dying(tgid, tid))
		return res->rc = GP_STOP_GONE;
	if (tracer == (int)getpid())
		return res->rc = GP_STOP_FAILED;
	return res->rc = GP_STOP_DENIED;
}

/* ---- A SEIZE that cannot block for long ----------------------------
 * ptrace_attach takes the target's cred_guard_mutex (kernel/ptrace.c,
 * mutex_lock_interruptible), which execve holds from prepare_bprm_creds
 * through de_thread (fs/exec.c); de_thread waits until every other thread
 * is released (kernel/exit.c __exit_signal: notify_count), and a thread we
 * trace that died is released only when we take its exit.  So a SEIZE of
 * any thread of a process whose exec killed one of ours -- a pending
 * thread, or one a SIGKILL woke while we held it -- waits for us, and we
 * for it: seen for 10 minutes (gpuprobe in ptrace_attach, a zombie thread
 * traced by it, the exec'ing thread in begin_new_exec), ended only by
 * SIGKILL (trace blocks SIGTERM for sigtimedwait, so timeout(1)'s TERM
 * never interrupted the mutex wait).
 * Even with no exit of ours in the way, a SEIZE that met an exec waited
 * for all of it: 1.0 s behind a thread whose exit another tracer took 1 s
 * late (tests/faults/harm-exec-seize.sh, 4-6 snapshots of 20 execs).
 * A timer signal directed at this thread (SIGEV_THREAD_ID) ticks every
 * SEIZE_TICK_MS while the SEIZE runs.  Its handler takes the exits of
 * the threads we trace that died (waitid/waitpid are async-signal-safe),
 * which lets the exec go on.  The interrupted mutex wait returns
 * -ERESTARTNOINTR, restarted after the handler whatever SA_RESTART says;
 * the restarted call looks tid up again (find_get_task_by_vpid), so a
 * thread the exec killed meanwhile is ESRCH at once: GONE.  Past
 * SEIZE_BOUND_MS the handler siglongjmps out of the call instead (nothing
 * is held then: the kernel gave the mutex wait up before the handler ran,
 * and glibc's ptrace() takes no lock). */
#define SEIZE_TICK_MS 5
#define SEIZE_BOUND_MS 100
#define SEIZE_REAP_MAX 64

static int seize_sig;                     /* 0: no timer (seize unbounded) */
static timer_t seize_timer;
static sigjmp_buf seize_jmp;
static volatile sig_atomic_t seize_ticks, seize_armed, seize_reaped;
static int seize_reap[SEIZE_REAP_MAX];    /* traced threads whose exit may come */
static volatile sig_atomic_t nseize_reap;

static void on_seize_tick(int sig)
{
	(void)sig;
	int saved = errno;
	for (sig_atomic_t i = 0; i < nseize_reap; i++) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (seize_reap[i] <= 0 ||
		    waitid(P_PID, (id_t)seize_reap[i], &si, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 ||
		    si.si_pid != seize_reap[i] ||
		    (si.si_code != CLD_EXITED && si.si_code != CLD_KILLED && si.si_code != CLD_DUMPED))
			continue;
		int st;
		if (waitpid(seize_reap[i], &st, WNOHANG | __WALL) == seize_reap[i]) {
			seize_reap[i] = 0;
			seize_reaped++;
		}
	}
	errno = saved;
	if (seize_armed && ++seize_ticks * SEIZE_TICK_MS >= SEIZE_BOUND_MS) {
		seize_armed = 0;
		siglongjmp(seize_jmp, 1);
	}
}

static void seize_timer_init(void)
{
	static bool tried;
	if (tried)
		return;
	tried = true;
	int sig = SIGRTMIN + 5; /* none of gpuprobe's; glibc keeps 32-33 below SIGRTMIN */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_seize_tick;
	sigfillset(&sa.sa_mask);
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (sigaction(sig, &sa, NULL) == 0 && timer_create(CLOCK_MONOTONIC, &sev, &seize_timer) == 0)
		seize_sig = sig;
}

static void seize_timer_set(long ms)
{
	struct itimerspec it = { { 0, ms * 1000000L }, { 0, ms * 1000000L } };
	timer_settime(seize_timer, 0, &it, NULL);
}

/* The threads we trace that may die: pending and dying ones. */
static void seize_reap_list(void)
{
	sig_atomic_t n = 0;
	for (size_t i = 0; i < npend && n < SEIZE_REAP_MAX; i++)
		seize_reap[n++] = pend[i].own_child && pend[i].tid == pend[i].tgid ? 0 : pend[i].tid;
	for (size_t i = 0; i < nlost && n < SEIZE_REAP_MAX; i++)
		seize_reap[n++] = lost[i];
	nseize_reap = n;
}

/* PTRACE_SEIZE bounded in time: 0 done, -1 failed (errno), -2 it waited
 * SEIZE_BOUND_MS and was given up. */
static int seize_bounded(int tgid, int tid)
{
	seize_timer_init();
	if (!seize_sig)
		return ptrace(PTRACE_SEIZE, tid, NULL, NULL) == 0 ? 0 : -1;
	seize_reap_list();
	sigset_t one, old;
	sigemptyset(&one);
	sigaddset(&one, seize_sig);
	pthread_sigmask(SIG_UNBLOCK, &one, &old);
	volatile int r = -1, e = 0; /* volatile: read after a siglongjmp */
	seize_ticks = 0;
	if (sigsetjmp(seize_jmp, 1) == 0) {
		seize_armed = 1;
		seize_timer_set(SEIZE_TICK_MS);
		r = ptrace(PTRACE_SEIZE, tid, NULL, NULL) == 0 ? 0 : -1;
		e = errno;
		seize_armed = 0;
	} else {
		/* Given up -- unless the SEIZE had just succeeded when the
		 * last tick came: then it is ours, and stopped as usual. */
		r = gp_tracer_of(tgid, tid, NULL, 0) == (int)getpid() ? 0 : -2;
		tot.seize_bounded++;
	}
	seize_timer_set(0);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (seize_reaped) {
		tot.seize_reaped += (unsigned long)seize_reaped;
		seize_reaped = 0;
	}
	errno = e;
	return r;
}

/* PTRACE_SEIZE; true when it took.  An EPERM from a live thread is asked
 * again: a SEIZE that waited for the process's exec holds the task that
 * was under tid when it began, and fails on that task's exit_state, while
 * tid may now name another, live thread.  kernel/ptrace.c ptrace_attach
 * looks the task up, then waits on cred_guard_mutex, and only under it
 * checks the rights (__ptrace_may_access) and then exit_state (-EPERM);
 * fs/exec.c holds that mutex from prepare_bprm_creds to setup_new_exec
 * (install_exec_creds before Linux 5.9), and in between de_thread, for an
 * exec by a thread other than the leader, kills the other threads -- the
 * old leader included -- and gives the exec'ing thread the leader's pid
 * (exchange_tids): a SEIZE of the leader's tid that met the exec fails on
 * the old leader, dead, while /proc/PID/task/PID shows the new one
 * running.  Taken for a denial, 4 of 5 traces of an exec'ing program
 * ended with every stack "denied".
 * The first EPERM is always asked again; a further one only when the
 * SEIZE that failed waited (SEIZE_WAITED_US): a refusal is decided at
 * once -- 0.2 us on average, 2.5 us at most, 2000 SEIZEs as uid 65534 of
 * a root process, a CPU spinner on each of 2 CPUs -- while the 16 that
 * failed with EPERM in 59 traces of tests/workloads/execloop (sanitizer
 * build) had all met an exec and waited 0.44-11 ms.  So a second exec
 * that the retry meets is not taken for a denial either, and a true
 * refusal costs one retry, or SEIZE_EPERM_TRIES when the target keeps
 * exec'ing. */
#define SEIZE_EPERM_TRIES 4
#define SEIZE_WAITED_US 50.0

static bool seize(int tgid, int tid, struct gp_stop_res *res)
{
	for (int tries = 1;; tries++) {
		double t0 = now_us();
		int r = seize_bounded(tgid, tid);
		int e = errno;
		if (r == 0)
			return true;
		if (r == -2) {
			res->err = EAGAIN;
			res->rc = GP_STOP_BLOCKED;
			return false;
		}
		bool waited = now_us() - t0 >= SEIZE_WAITED_US;
		if (seize_failed(tgid, tid, e, res) != GP_STOP_DENIED || tries >= SEIZE_EPERM_TRIES ||
		    (tries > 1 && !waited))
			return false;
	}
}

/* Waits for the trap of the thread just interrupted, in slices of at most
 * 1 ms: a ptrace stop sends SIGCHLD, taken with sigtimedwait (polling with
 * sched_yield cost a 4 ms tick whenever spinners kept every CPU busy:
 * 2 CPUs, 2 spinners, half the stops at 3.9 or 7.9 ms). */
static int wait_stop(const struct pend *p, double deadline, int *status, struct chld_guard *g)
{
	for (;;) {
		int r = poll_one(p, status);
		if (r != 0)
			return r;
		double left = deadline - now_us();
		if (left <= 0)
			return 0;
		if (nap_for_sigchld(left)) {
			g->took = true;
			/* Perhaps a pending thread's trap: let it go now, not
			 * after this one's unwind. */
			gp_ptstop_drain();
		}
	}
}

enum gp_stop gp_ptstop_stop(int tgid, int tid, bool own_child, int timeout_ms,
			    struct gp_stop_res *res)
{
	memset(res, 0, sizeof *res);
	/* From now on, every wait of gpuprobe on a socket lets late stops
	 * go when SIGCHLD says one came (waitfd.h). */
	gp_wait_set_chld_hook(gp_ptstop_drain);
	gp_ptstop_drain();
	struct pend p = { tgid, tid, own_child };
	/* The very thread asked for is pending: its interrupt is still
	 * armed, so wait for that stop and unwind it, rather than refuse
	 * (lock's retry of the pinning thread read `off` every time). */
	bool again = pending_has(tid);
	/* Other pending threads do not stop this one: they are not stopped
	 * (ptstop.h, 1).  Only a full set refuses, this thread alone. */
	if (!again && npend >= GP_PTSTOP_PENDING_MAX) {
		res->busy_tid = pend[0].tid;
		return res->rc = GP_STOP_BUSY;
	}
	double t0 = now_us();
	if (again)
		pending_remove(tid);
	else if (!seize(tgid, tid, res))
		return res->rc;
	struct chld_guard g;
	guard_begin(&g);
	if (!again && ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		res->err = errno;
		/* Gone (ESRCH), most likely: its exit is taken by a later
		 * drain (detach() keeps it when the DETACH fails) -- or it
		 * exec'd since the SEIZE and is ours under the leader's pid. */
		detach(&p, 0);
		if (res->err == ESRCH)
			follow_exec(&p);
		guard_end(&g);
		return res->rc = res->err == ESRCH ? GP_STOP_GONE : GP_STOP_FAILED;
	}
	int status = 0;
	int r = wait_stop(&p, t0 + timeout_ms * 1000.0, &status, &g);
	int e = errno;
	res->wait_us = now_us() - t0;
	if (r == 0) {
		add_pending(p);
		tot.timeouts++;
		res->rc = GP_STOP_TIMEOUT;
	} else if (r < 0) {
		/* ECHILD: not an exit, it exec'd while we waited (de_thread
		 * gave it the leader's pid), our interrupt still armed: it
		 * traps as the leader, and was left stopped there for good
		 * (found by tests/faults/harm-exec-eperm.sh).  Follow it. */
		if (e == ECHILD)
			follow_exec(&p);
		res->rc = GP_STOP_GONE;
	} else {
		res->inject = stop_signal(status);
		cur = p;
		tot.stops++;
		res->rc = GP_STOP_OK;
	}
	guard_end(&g);
	return res->rc;
}

void gp_ptstop_release(int tid, int sig)
{
	struct pend p = cur.tid == tid ? cur : (struct pend){ tid, tid, false };
	cur.tid = 0;
	detach(&p, sig);
	/* A pending thread that took its trap while this one was held. */
	gp_ptstop_drain();
}
