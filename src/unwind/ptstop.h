/* Stopping one thread of another process, and letting it go: the only
 * code in gpuprobe that calls PTRACE_SEIZE, PTRACE_INTERRUPT or
 * PTRACE_DETACH, or takes a ptrace stop with wait.
 *
 * The contract (tests/faults/, tests/e2e/trace-kernelsit.sh check it):
 *
 *   1. At most ONE thread of the whole machine is held stopped by
 *      gpuprobe at any instant: the one gp_ptstop_stop returned, until
 *      gp_ptstop_release.  A PENDING thread (3.) is not stopped: other
 *      threads, of its process or any other, are stopped and unwound
 *      while it is on its way (refusing them turned every stack of the
 *      tree and of watch "off" behind one thread in a long kernel call).
 *      If a pending thread takes its trap while another is held, it is
 *      let go while gp_ptstop_stop waits, or at gp_ptstop_release: two
 *      are stopped together for at most one unwind (milliseconds).
 *      Only a set of GP_PTSTOP_PENDING_MAX pending threads refuses a new
 *      stop (GP_STOP_BUSY), for that thread alone.
 *   2. Never PTRACE_ATTACH: a SEIZEd thread is let go by the kernel when
 *      gpuprobe dies (exit_ptrace), even by SIGKILL, so no thread is ever
 *      left in state t behind us.  (ATTACH queues a SIGSTOP that outlives
 *      the tracer: the thread stays in group-stop, state T.)
 *   3. A stop that does not come within the timeout is not waited for: the
 *      thread is PENDING.  A thread inside a long kernel call (mmap with
 *      MAP_POPULATE, a 16 GiB cuMemHostRegister: 0.3-1.2 s, seed 004)
 *      takes the trap only when the call returns.  The pending set is
 *      drained -- each pending thread that has stopped is let go at once --
 *      by gp_ptstop_drain(), which every owner of a wait loop calls:
 *      whenever SIGCHLD arrives (a ptrace stop sends it to the tracer), and
 *      before anything that may take a while.  So a pending thread is
 *      stopped for as long as the caller goes without draining, which the
 *      callers keep under a few milliseconds (trace's loop drains on every
 *      SIGCHLD; a snapshot drains between threads).  A step that waits on
 *      a descriptor (a RAS read, the process connector) waits with
 *      gp_wait_fd (src/common/waitfd.h), which drains on every SIGCHLD:
 *      gp_ptstop_stop installs gp_ptstop_drain as its hook.  Steps that
 *      cannot be woken -- an NVML call through dlopen, a /proc read that
 *      waits for the target's mmap_lock -- hold a late stop until they
 *      return.
 *   4. A pending thread that dies (its process exits, another thread
 *      execs) leaves the set; one that execs itself comes back as the
 *      leader's tid (execve's de_thread) and is followed there.
 *   5. Exits: the exit of a thread gpuprobe traces is reported to
 *      gpuprobe and must be taken, or the thread stays a zombie (and a
 *      dead process looks alive).  Those are taken here -- except the
 *      leader of gpuprobe's own child, whose exit status is the caller's
 *      (src/common/child.c takes it, and only an exit: it looks first with
 *      WNOWAIT, and a ptrace stop it sees is handed to gp_ptstop_drain).
 *   6. Never a thread in D state (the callers check), nor one another
 *      tracer holds: GP_STOP_TRACED names that tracer (TracerPid).
 *   7. PTRACE_SEIZE itself never waits more than 100 ms: it can wait
 *      for the target's exec, which can wait for us (ptstop.c says how).
 *      Every 5 ms the exits that exec waits for are taken and the SEIZE
 *      asks again (a thread the exec killed is then GONE); one still
 *      waiting at 100 ms is given up (GP_STOP_BLOCKED).  The ticks are a
 *      real-time signal (SIGRTMIN+5) directed at the calling thread.
 *
 * Not thread-safe: one thread of gpuprobe calls these (ptrace requests
 * must come from the thread that seized). */
#ifndef GP_PTSTOP_H
#define GP_PTSTOP_H

#include <stdbool.h>
#include <stddef.h>

/* Threads interrupted and not yet stopped, at most (each inside a long
 * kernel call); past it a stop is refused: GP_STOP_BUSY. */
#define GP_PTSTOP_PENDING_MAX 16

enum gp_stop {
	GP_STOP_OK,      /* stopped: unwind it, then gp_ptstop_release() */
	GP_STOP_GONE,    /* no such thread, or it exited while stopping */
	GP_STOP_DENIED,  /* PTRACE_SEIZE refused (EPERM/EACCES): err says */
	GP_STOP_TRACED,  /* another tracer holds it: tracer, tracer_comm */
	GP_STOP_TIMEOUT, /* did not stop in time: pending, let go when it does */
	GP_STOP_BUSY,    /* GP_PTSTOP_PENDING_MAX threads pending: nothing done */
	GP_STOP_BLOCKED, /* PTRACE_SEIZE waited past its bound (an exec): given up */
	GP_STOP_FAILED,  /* anything else: err says */
};

struct gp_stop_res {
	enum gp_stop rc;
	int err;             /* errno of the failing call */
	int inject;          /* signal to give back at release (a signal stop) */
	int tracer;          /* GP_STOP_TRACED: its pid */
	char tracer_comm[16];
	int busy_tid;        /* GP_STOP_BUSY: one of the pending threads */
	double wait_us;      /* from SEIZE to the stop (or the timeout) */
};

/* Stops thread tid of process tgid within timeout_ms.  own_child: tgid is
 * gpuprobe's own child (the exit of its leader is never taken here).
 * Returns res->rc. */
enum gp_stop gp_ptstop_stop(int tgid, int tid, bool own_child, int timeout_ms,
			    struct gp_stop_res *res);

/* Lets go of the thread gp_ptstop_stop stopped, giving back sig (0: none).
 * A thread a SIGKILL woke meanwhile is kept until its exit is taken. */
void gp_ptstop_release(int tid, int sig);

/* Non-blocking: lets go of every pending thread that has stopped, takes
 * the exits of traced threads that died.  Returns how many threads are
 * still pending or dying. */
int gp_ptstop_drain(void);

/* Drains for up to ms milliseconds, until nothing is pending.  Returns
 * what gp_ptstop_drain last returned. */
int gp_ptstop_settle(int ms);

/* How many threads are pending (interrupted, not yet stopped); whether
 * tid is.  A pending thread asked for again by gp_ptstop_stop is waited
 * for (its interrupt is still armed) and, when it stops, returned
 * stopped: a retry unwinds it. */
size_t gp_ptstop_pending(void);
bool gp_ptstop_is_pending(int tid);

/* Totals since the start, for benchmarks and tests. */
struct gp_ptstop_totals {
	unsigned long stops, timeouts, drained_late, pending_died, exec_followed;
	/* SEIZEs given up after their bound; exits of dead traced threads
	 * taken while a SEIZE waited (each let an exec go on). */
	unsigned long seize_bounded, seize_reaped;
	/* An upper bound on how long a pending thread sat stopped before it
	 * was let go: the time between the drain that found it stopped and
	 * the drain before, which had found it still running. */
	double late_us_max;
};
void gp_ptstop_totals(struct gp_ptstop_totals *t);

/* TracerPid of thread tid of tgid (0: none, -1: unreadable); its comm
 * into comm when comm is not NULL. */
int gp_tracer_of(int tgid, int tid, char *comm, size_t cap);

#endif
