/* What a process does while it makes no progress, in words: the
 * verdict's activity (src/verdict/, data) told as the summary and the
 * phases tell it (verdict_text.c); see activity_text.h. */
#include "config.h"
#include "activity_text.h"
#include "parse.h"
#include "safetext.h"
#include "siblings_text.h"
#include "syscalls.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* "tensor 91%, DRAM 17%, 690 W (+575 W over its floor)": what a GPU did,
 * from GPM pipes, else util.memory and power (model/gpuwork.h). */
void gp_gpu_work_words(struct strbuf *sb, const struct gp_gpu_work_pt *g)
{
	if (g->from_gpm) {
		if (g->tensor >= 0.5)
			strbuf_addf(sb, "tensor %.0f%%, ", g->tensor);
		else if (g->work == GP_GW_WORK && g->pipes >= 0.5)
			strbuf_addf(sb, "math pipes %.0f%%, ", g->pipes);
		else
			strbuf_addstr(sb, "no math, ");
		strbuf_addf(sb, g->dram >= 0.5 ? "DRAM %.0f%%" : "no DRAM traffic", g->dram);
	} else {
		strbuf_addf(sb, "util.memory %.0f%%", g->mem_util);
	}
	if (g->power_w > 0) {
		strbuf_addf(sb, ", %.0f W", g->power_w);
		if (g->have_over)
			strbuf_addf(sb, " (%+.0f W over its floor)", g->over_w);
	}
}

/* "pid 4243 (SM 60%)" or "3 other processes (the busiest: pid 4243, SM
 * 60%)" */
static void shared_words(struct strbuf *sb, const struct gp_gpu_work_pt *g)
{
	if (g->others == 1)
		strbuf_addf(sb, "pid %d (SM %.0f%%)", g->other_pid, g->other_sm_pct);
	else
		strbuf_addf(sb, "%u other processes (the busiest: pid %d, SM %.0f%%)", g->others,
			    g->other_pid, g->other_sm_pct);
}

/* "32 of 132 SMs: a collective's shape" */
static void grid_words(struct strbuf *sb, const struct gp_gpu_work_pt *g)
{
	if (g->others) {
		/* GPM's SM_UTIL counts every process's blocks. */
		strbuf_addf(sb, "its kernel resident %.0f%% of the time on a GPU shared with ",
			    g->occ_pct);
		shared_words(sb, g);
		return;
	}
	if (!g->from_gpm || !g->sms) {
		strbuf_addstr(sb, "its kernel resident");
		return;
	}
	unsigned busy = (unsigned)(g->sm_util / 100.0 * g->sms + 0.5);
	if (busy >= g->sms * 9 / 10)
		strbuf_addf(sb, "every SM (%u): a full-grid kernel", g->sms);
	else if (busy <= 1)
		strbuf_addf(sb, "1 of %u SMs: one block polling", g->sms);
	else
		strbuf_addf(sb, "%u of %u SMs: a collective's shape (one block a channel)", busy, g->sms);
}

/* ---- activity: what the process does while it makes no progress ---- */

/* "thread 4290 (hal-memory) busy in the kernel, 99% CPU (98% system), in
 * ioctl(...); system dirtied 532 MiB/s ~ written back 529 MiB/s, no file
 * reclaim" */
static const char *wait_words(enum gp_wait w)
{
	switch (w) {
	case GP_WAIT_INPUT: return "on input (socket, pipe or tty)";
	case GP_WAIT_OUTPUT: return "on a peer to read";
	case GP_WAIT_TIMER: return "on a timer";
	case GP_WAIT_SIGNAL: return "on a signal";
	case GP_WAIT_WAKEUP: return "on a wakeup (eventfd, signalfd or pipes)";
	case GP_WAIT_CONDVAR: return "on a condition with a timeout";
	case GP_WAIT_LOCK: return "on a lock (no timeout)";
	case GP_WAIT_CHILD: return "on a child process";
	case GP_WAIT_DRIVER: return "in a driver call";
	case GP_WAIT_DISK: return "in uninterruptible sleep (D)";
	case GP_WAIT_STOPPED: return "stopped";
	case GP_WAIT_OTHER: return "in another syscall";
	default: return "?";
	}
}

/* "threads waiting: 3 on a lock (no timeout), 1 on a timer" */
static void describe_waits(struct strbuf *sb, const struct gp_activity *a)
{
	/* the groups in the order a reader weighs them: inside first */
	static const enum gp_wait order[] = { GP_WAIT_DISK, GP_WAIT_DRIVER, GP_WAIT_LOCK,
		GP_WAIT_WAKEUP, GP_WAIT_CONDVAR, GP_WAIT_OTHER, GP_WAIT_CHILD, GP_WAIT_INPUT,
		GP_WAIT_OUTPUT, GP_WAIT_TIMER, GP_WAIT_SIGNAL, GP_WAIT_STOPPED };
	bool firstw = true;
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		unsigned c = a->w[order[i]];
		if (!c)
			continue;
		strbuf_addf(sb, "%s%u %s", firstw ? "threads waiting: " : ", ", c, wait_words(order[i]));
		firstw = false;
	}
}

static void name_thread(struct strbuf *sb, const struct gp_activity *a, int tid,
			const char *comm, int pid, const char *pcomm)
{
	if (a->procs > 1 && pid && pid == tid)
		strbuf_addf(sb, "pid %d (%s)", pid, pcomm);
	else if (a->procs > 1 && pid)
		strbuf_addf(sb, "thread %d (%s) of pid %d (%s)", tid, comm, pid, pcomm);
	else
		strbuf_addf(sb, "thread %d (%s)", tid, comm);
}

/* Siblings compared (verdict/siblings.c): a job's rank or a pool's
 * worker apart from the others, with its frame. */
static void describe_siblings(struct strbuf *sb, const struct gp_activity *a)
{
	if (a->sib.kind == GP_SIBK_NONE || a->sib_decided)
		return; /* decided: said first (describe_decider) */
	strbuf_addstr(sb, "; ");
	gp_siblings_words(sb, &a->sib, NULL, 0);
}

/* "thread 4290 (hal-memory) busy in the kernel, 99% CPU (98% system), in
 * ioctl(...); system dirtied 532 MiB/s ~ written back 529 MiB/s, no file
 * reclaim" */

/* How a Java thread waits from user code, with the frame that says it
 * (model/jvmthreads.c: HotSpot's Unsafe_Park, ObjectMonitor::enter,
 * JVM_MonitorWait, JVM_Sleep). */
static const char *java_role_words(enum gp_jvm_role r, bool timed)
{
	switch (r) {
	case GP_JVM_PARK:
		return timed ? "parked with a timeout (Unsafe_Park: LockSupport.parkNanos)"
			     : "parked in Unsafe_Park (LockSupport.park: a ReentrantLock, "
			       "a queue, a future)";
	case GP_JVM_ENTER:
		return "blocked entering a monitor (ObjectMonitor::enter: synchronized)";
	case GP_JVM_WAIT:
		return timed ? "in Object.wait with a timeout (JVM_MonitorWait)"
			     : "in Object.wait (JVM_MonitorWait: a join or a wait())";
	case GP_JVM_SLEEP:
		return "in Thread.sleep (JVM_Sleep)";
	default:
		return "?";
	}
}

/* The Java threads asleep from user code, by how they wait, named (the
 * JVM names each thread's comm after its Java name), and the JVM's own
 * threads said once, never named: they are the runtime at rest. */
static void describe_java(struct strbuf *sb, const struct gp_activity *a)
{
	const struct gp_stuck_java *j = &a->jv;
	unsigned timed = 0;
	for (int r = 0; r < GP_JVM_ROLES; r++)
		timed += j->timed_n[r];
	strbuf_addf(sb, "; stacks at +%.1f s: %u Java thread%s wait%s from user code%s", a->stuck_t,
		    j->user, j->user == 1 ? "" : "s", j->user == 1 ? "s" : "",
		    timed || j->role_n[GP_JVM_SLEEP] ? "" : " with no timeout");
	if (a->java_stuck)
		strbuf_addstr(sb, ", and no thread is left to wake them (none runs, none waits "
			      "outside or on a timeout)");
	strbuf_addstr(sb, ":");
	/* the culprits first: parks and monitor enters, then Object.wait, sleep */
	static const enum gp_jvm_role order[] = { GP_JVM_PARK, GP_JVM_ENTER, GP_JVM_WAIT, GP_JVM_SLEEP };
	bool first = true;
	for (size_t o = 0; o < sizeof order / sizeof order[0]; o++)
		for (int t = 0; t < 2; t++) {
			unsigned shown = 0;
			for (unsigned i = 0; i < j->nnamed; i++) {
				const struct gp_stuck_java_thread *x = &j->named[i];
				if (x->role != order[o] || x->timed != (t == 1))
					continue;
				strbuf_addstr(sb, !shown ? (first ? " " : "; ") : ", ");
				if (x->main)
					strbuf_addf(sb, "the main thread (%d)", x->tid);
				else
					strbuf_addf(sb, "%s (%d)", x->comm, x->tid);
				shown++;
			}
			unsigned all = t ? j->timed_n[order[o]] : j->role_n[order[o]] - j->timed_n[order[o]];
			if (all > shown && shown)
				strbuf_addf(sb, " and %u more", all - shown);
			else if (all > shown)
				strbuf_addf(sb, "%s%u thread%s", first ? " " : "; ", all, all == 1 ? "" : "s");
			if (all)
				strbuf_addf(sb, " %s", java_role_words(order[o], t == 1));
			first &= !all;
		}
	if (j->runtime)
		strbuf_addf(sb, "; the JVM's own %u thread%s (compiler, collector, service) %s at rest "
			    "and decide%s nothing", j->runtime, j->runtime == 1 ? "" : "s",
			    j->runtime == 1 ? "is" : "are", j->runtime == 1 ? "s" : "");
}

/* The stacks taken at the hang: the frame most threads wait in, or, when
 * none is shared, the frames of the first few (an ABBA pair's two
 * acquire lines). */
static void describe_stuck(struct strbuf *sb, const struct gp_activity *a)
{
	if (a->java && a->jv.user) {
		describe_java(sb, a);
	} else if (a->nacq && a->kind == GP_CLASS_HANG_BLOCKED) {
		/* the threads that acquire a lock, not those at rest on a
		 * condition (a JVM's housekeeping, a BLAS pool) */
		strbuf_addf(sb, "; stacks at +%.1f s: %s lock: ", a->stuck_t,
			    a->nacq == 1 ? "one thread acquires a" : "threads acquire a");
		for (unsigned i = 0; i < a->nacq; i++) {
			strbuf_addstr(sb, i ? ", " : "");
			name_thread(sb, a, a->acq_tid[i], a->acq_comm[i], a->acq_pid[i], a->acq_comm[i]);
			strbuf_addf(sb, " in %s", a->acq_frame[i]);
		}
	} else if (a->common_count >= 2 && a->common_frame[0]) {
		strbuf_addf(sb, "; stacks at +%.1f s: %u of %u threads in %s", a->stuck_t,
		    a->common_count, a->stuck_n, a->common_frame);
	} else if (a->nwaits3) {
		strbuf_addf(sb, "; stacks at +%.1f s: threads in ", a->stuck_t);
		for (unsigned i = 0; i < a->nwaits3; i++)
			strbuf_addf(sb, "%s%s", i ? ", " : "", a->waits3[i]);
	}
	describe_siblings(sb, a);
}

/* "3 Python threads of pid N wait for the GIL, held by thread N (python3)
 * asleep in read(fd 3) in load_weights (x.py:44)" (verdict/waitjudge.c's
 * note_gil). */
static void gil_words(struct strbuf *sb, const struct gp_activity *a)
{
	strbuf_addf(sb, "%u Python thread%s of pid %d wait%s for the GIL, held by thread %d (%s) %s",
		    a->gil_waiters, a->gil_waiters == 1 ? "" : "s", a->gil_pid,
		    a->gil_waiters == 1 ? "s" : "", a->gil_tid, a->gil_comm,
		    a->gil_state == 'R' ? "running" : "asleep");
	if (a->gil_syscall[0])
		strbuf_addf(sb, " in %s", a->gil_syscall);
	if (a->gil_frame[0])
		strbuf_addf(sb, " in %s", a->gil_frame);
	if (a->gil_user[0])
		strbuf_addf(sb, " called from %s", a->gil_user);
}

/* Python threads waiting for a GIL that did not decide the class (its
 * holder runs: a spinning sync, a GPU wait): said beside, since every
 * other Python thread of the process stands still behind it. */
static void describe_gil(struct strbuf *sb, const struct gp_activity *a)
{
	if (!a->gil_tid || a->behind_gil)
		return;
	strbuf_addstr(sb, "; ");
	gil_words(sb, a);
}

/* "; pid 812 (python3) holds a context on a GPU and runs no kernel: its
 * main thread waits in load_weights (ipc_flag.py:14) -- if the kernel
 * waits for a flag or a peer's write, nothing of it comes from there" */
static void gpu_peer_words(struct strbuf *sb, const struct gp_activity *a)
{
	if (!a->peer_pid)
		return;
	strbuf_addf(sb, "; pid %d (%s) holds a context on a GPU and runs no kernel: its main thread "
		    "waits in %s", a->peer_pid, a->peer_comm, a->peer_frame);
	if (a->peer_user[0])
		strbuf_addf(sb, " called from %s", a->peer_user);
	strbuf_addstr(sb, " -- if the kernel waits for a flag or a write of another process, "
		      "none comes from it");
}

static void describe_gpu_wait(struct strbuf *sb, const struct gp_activity *a)
{
	strbuf_addf(sb, "the GPU runs this process's work: ");
	if (a->procs > 1 && a->gpu_pid)
		strbuf_addf(sb, "pid %d (%s) ", a->gpu_pid, a->gpu_comm);
	if (a->gw.work == GP_GW_WORK) {
		strbuf_addstr(sb, "GPU working: ");
		gp_gpu_work_words(sb, &a->gw);
		strbuf_addf(sb, ", in %u of %u readings; the host waits", a->gw_n[GP_GW_WORK],
			    a->samples - a->gw_n[GP_GW_UNKNOWN]);
	} else if (a->gw.work == GP_GW_BUSY && a->gw.others) {
		strbuf_addf(sb, "its kernel resident %.0f%% of the time on a GPU shared with ",
			    a->gw.occ_pct);
		shared_words(sb, &a->gw);
		strbuf_addf(sb, ", in %u of %u readings: the GPU's work readings are device-wide, "
			    "whose work they show cannot be told (a spin beside another process's "
			    "GEMM reads the same); the host waits",
			    a->gw_n[GP_GW_BUSY], a->samples - a->gw_n[GP_GW_UNKNOWN]);
	} else {
		strbuf_addf(sb, "%.0f%% busy at the last sample, busy in %u of %u samples that measured "
		    "it (occupancy: whether its kernels work is not known); the host waits",
		    a->gpu_pct, a->gpu_busy, a->gpu_known);
	}
	if (a->host_kind == GP_CLASS_HANG_BUSY_USER && a->tid) {
		strbuf_addf(sb, ", ");
		name_thread(sb, a, a->tid, a->comm, a->pid, a->pcomm);
		strbuf_addf(sb, " spinning at %.0f%% CPU", a->tcpu);
		if (a->frame[0])
			strbuf_addf(sb, " in %s", a->frame);
		strbuf_addf(sb, " (a spin wait)");
	} else if (a->host_kind == GP_CLASS_HANG_BUSY_KERNEL && a->tid) {
		strbuf_addf(sb, ", ");
		name_thread(sb, a, a->tid, a->comm, a->pid, a->pcomm);
		strbuf_addf(sb, " busy in the kernel at %.0f%% CPU", a->tcpu);
	} else {
		strbuf_addf(sb, " asleep (%.1f%% CPU)", a->cpu_pct);
		if (a->waits_known) {
			strbuf_addf(sb, "; ");
			describe_waits(sb, a);
		}
	}
	describe_stuck(sb, a);
	describe_gil(sb, a);
	strbuf_addf(sb, ": a long GPU job, not a host hang");
	if (a->gw.work != GP_GW_WORK)
		gpu_peer_words(sb, a);
}

/* hang-gpu-spin: "the GPU spins on pid 4242 (python3)'s kernel: 32 of
 * 132 SMs: a collective's shape, no math, no DRAM traffic, 137 W (+14 W
 * over its floor); the host waits: thread 4242 (python3) asleep in ..." */
static void describe_gpu_spin(struct strbuf *sb, const struct gp_activity *a)
{
	strbuf_addstr(sb, "the GPU spins on ");
	if (a->gw_pid)
		strbuf_addf(sb, "pid %d (%s)'s ", a->gw_pid, a->gw_comm);
	strbuf_addstr(sb, "kernel, doing no work: ");
	grid_words(sb, &a->gw);
	strbuf_addstr(sb, ", ");
	gp_gpu_work_words(sb, &a->gw);
	strbuf_addf(sb, ", in %u of %u readings; the host waits", a->gw_n[GP_GW_SPIN],
		    a->samples - a->gw_n[GP_GW_UNKNOWN]);
	if (a->host_kind == GP_CLASS_HANG_BUSY_USER && a->tid) {
		strbuf_addstr(sb, ": ");
		name_thread(sb, a, a->tid, a->comm, a->pid, a->pcomm);
		strbuf_addf(sb, " spinning at %.0f%% CPU", a->tcpu);
		if (a->frame[0])
			strbuf_addf(sb, " in %s", a->frame);
	} else {
		strbuf_addf(sb, " (%.1f%% CPU)", a->cpu_pct);
		if (a->waits_known) {
			strbuf_addf(sb, "; ");
			describe_waits(sb, a);
		}
	}
	describe_stuck(sb, a);
	describe_gil(sb, a);
	strbuf_addstr(sb, ": a spin-wait on the GPU (a collective whose peer never came, a livelock), "
		      "not a long GPU job");
	gpu_peer_words(sb, a);
}

/* hang-blocked with a GPU that has a context and no kernel: "the GPU has
 * no work ...: a completion that never came; thread 478 (python3) spins
 * at 100% CPU in the runtime's sync".  True when that is all there is to
 * say (a host asleep is told as usual after it). */
static bool describe_gpu_nowork(struct strbuf *sb, const struct gp_activity *a)
{
	strbuf_addstr(sb, "the GPU has no work (a context, no kernel resident): a completion "
		      "that never came; ");
	if (a->host_kind != GP_CLASS_HANG_BUSY_USER || !a->tid)
		return false;
	name_thread(sb, a, a->tid, a->comm, a->pid, a->pcomm);
	strbuf_addf(sb, " spins at %.0f%% CPU in the runtime's sync", a->tcpu);
	if (a->frame[0])
		strbuf_addf(sb, " (%s)", a->frame);
	describe_stuck(sb, a);
	return true;
}

/* "stopped by gdb (pid 812)" / "stopped by a signal (SIGSTOP)": who
 * stopped it, from TracerPid. */
void gp_stopper_words(struct strbuf *sb, const struct gp_wg_pt *g)
{
	if (g->stopper_pid)
		strbuf_addf(sb, "stopped by %s (pid %d)", g->stopper_comm[0] ? g->stopper_comm : "a tracer",
			    g->stopper_pid);
	else
		strbuf_addstr(sb, "stopped by a signal (SIGSTOP), no tracer");
}

/* How one member of a cycle waits on the next (its edge's id follows). */
static const char *cycle_words(uint8_t how)
{
	switch (how) {
	case GP_EDGE_JOIN: return "joins thread";
	case GP_EDGE_MUTEX: return "waits for the mutex owned by thread";
	case GP_EDGE_PIPE: return "waits on a pipe whose other end is pid";
	case GP_EDGE_SOCKET: return "waits on a unix socket whose peer is pid";
	case GP_EDGE_FLOCK: return "waits for the flock held by pid";
	case GP_EDGE_POSIX: return "waits for the POSIX lock held by pid";
	default: return "waits on";
	}
}

/* "SIGKILL (9)": the signals a process dies of, by name. */
static const char *signal_words(int sig)
{
	static char buf[24];
	static const char *const names[] = { [1] = "HUP", [2] = "INT", [3] = "QUIT", [4] = "ILL",
		[5] = "TRAP", [6] = "ABRT", [7] = "BUS", [8] = "FPE", [9] = "KILL", [10] = "USR1",
		[11] = "SEGV", [12] = "USR2", [13] = "PIPE", [14] = "ALRM", [15] = "TERM" };
	if (sig > 0 && sig < (int)(sizeof names / sizeof *names) && names[sig])
		snprintf(buf, sizeof buf, "SIG%s (%d)", names[sig], sig);
	else
		snprintf(buf, sizeof buf, "signal %d", sig);
	return buf;
}

/* Where the chains of waits end, when that decided (verdict/waitjudge.c):
 * the culprit named, not the crowd. */
static bool describe_graph(struct strbuf *sb, const struct gp_activity *a)
{
	const struct gp_wg_pt *g = &a->wg;
	if (a->deadlock) {
		strbuf_addf(sb, "deadlock: ");
		for (unsigned i = 0; i < g->ncycle; i++) {
			strbuf_addf(sb, "%sthread %d (%s)", i ? "; " : "", g->cyc_tid[i], g->cyc_comm[i]);
			if (a->cyc_frame[i][0])
				strbuf_addf(sb, " in %s", a->cyc_frame[i]);
			strbuf_addf(sb, " %s %d", cycle_words(g->cyc_how[i]), g->cyc_on[i]);
		}
		strbuf_addf(sb, ": each waits on the next, none can go on");
		return true;
	}
	if (a->stalled) {
		strbuf_addf(sb, "pid %d (%s) is ", g->stopped_pid, g->stopped_comm);
		gp_stopper_words(sb, g);
		strbuf_addf(sb, "; %u thread%s of the traced tree wait%s behind it (through pipes, "
			    "sockets, locks or joins)", g->behind, g->behind == 1 ? "" : "s", g->behind == 1 ? "s" : "");
		return true;
	}
	if (a->orphan_lock && !g->orphan_owner) {
		strbuf_addf(sb, "the only thread of pid %d (%s) waits on a lock private to its process "
			    "that names no holder", g->orphan_pid, g->orphan_comm);
		if (a->orphan_frame[0])
			strbuf_addf(sb, ", in %s", a->orphan_frame);
		strbuf_addstr(sb, ": no thread of it is left to release it (a lock inherited held "
			      "across fork, whose holder does not exist in that process; or one it "
			      "holds itself)");
		describe_siblings(sb, a);
		return true;
	}
	if (a->orphan_lock) {
		strbuf_addf(sb, "thread %d of pid %d (%s) waits on a mutex held by tid %d, ",
			    g->orphan_waiter, g->orphan_pid, g->orphan_comm, g->orphan_owner);
		if (g->orphan_of)
			strbuf_addf(sb, "a thread of its parent, pid %d (%s): a lock inherited held "
				    "across fork, whose holder does not exist in pid %d", g->orphan_of,
				    g->orphan_of_comm, g->orphan_pid);
		else
			strbuf_addf(sb, "which is no thread of pid %d: its holder does not exist in that "
				    "process (it exited holding it, or the lock was inherited held "
				    "across fork)", g->orphan_pid);
		strbuf_addstr(sb, "; no thread there will unlock it");
		if (g->orphan_waiters > 1)
			strbuf_addf(sb, " (%u threads wait so)", g->orphan_waiters);
		return true;
	}
	if (a->behind_holder) {
		const char *what = g->holder_how == GP_EDGE_FLOCK ? "flock"
				   : g->holder_how == GP_EDGE_POSIX ? "POSIX lock" : "mutex";
		strbuf_addf(sb, "%u thread%s wait%s for the %s held by ", g->holder_waiters,
			    g->holder_waiters == 1 ? "" : "s", g->holder_waiters == 1 ? "s" : "", what);
		if (g->holder_tid)
			strbuf_addf(sb, "thread %d (%s)", g->holder_tid, g->holder_comm);
		else
			strbuf_addf(sb, "pid %d (%s)", g->holder_pid, g->holder_comm[0] ? g->holder_comm : "?");
		if (a->holder_frame[0])
			strbuf_addf(sb, " in %s", a->holder_frame);
		if (g->holder_outside)
			strbuf_addstr(sb, ", outside the traced tree");
		strbuf_addf(sb, " (first waiter: thread %d)", g->waiter_tid);
		return true;
	}
	if (a->db_lock_tid) {
		strbuf_addf(sb, "a database statement waits for a lock: thread %d (%s)", a->db_lock_tid,
			    a->db_lock_comm);
		if (a->db_lock_n > 1)
			strbuf_addf(sb, " and %u more like it", a->db_lock_n - 1);
		if (a->db_lock_frame[0])
			strbuf_addf(sb, " asleep on a condition in %s", a->db_lock_frame);
		else
			strbuf_addstr(sb, " asleep on a condition inside the storage engine");
		strbuf_addstr(sb, ", a row or metadata lock another transaction holds: its client waits "
			      "for the answer, whatever the lock's timeout");
		if (a->yield_spin && a->tid)
			strbuf_addf(sb, "; meanwhile thread %d (%s) spins in sched_yield, %.0f%% CPU "
				    "(a spin-wait, not work)", a->tid, a->comm, a->tcpu);
		return true;
	}
	if (a->behind_gil) {
		gil_words(sb, a);
		strbuf_addstr(sb, ": a blocking call that kept the GIL (a C extension that did not "
			      "release it) holds every Python thread");
		return true;
	}
	return false;
}

/* One group of goroutines: "12 in START wait on WAIT (at FRAME)". */
static void goroutine_group(struct strbuf *sb, const struct gp_stuck_gogroup *g)
{
	bool one = g->n == 1;
	strbuf_addf(sb, "%u in %s ", g->n, g->start);
	if (!strcmp(g->wait, "running") || !strcmp(g->wait, "runnable"))
		strbuf_addf(sb, "%s", g->wait);
	else if (!strcmp(g->wait, "syscall"))
		strbuf_addf(sb, "in a system call");
	else if (!strcmp(g->wait, "IO wait"))
		strbuf_addf(sb, "wait%s for input (IO wait)", one ? "s" : "");
	else if (!strcmp(g->wait, "sleep"))
		strbuf_addf(sb, "sleep%s", one ? "s" : "");
	else
		strbuf_addf(sb, "wait%s on %s", one ? "s" : "", g->wait);
	if (g->at[0] && strcmp(g->at, g->start))
		strbuf_addf(sb, " at %s", g->at);
}

/* A Go program: its goroutines, those on a lock or on another goroutine
 * first, or why they are out of sight; and that the runtime's own
 * threads are not what is judged (issue 32). */
static void describe_goroutines(struct strbuf *sb, const struct gp_activity *a)
{
	const struct gp_stuck_go *g = &a->go;
	if (!g->pid)
		return;
	if (g->error[0]) {
		strbuf_addf(sb, "; pid %d is a Go program: the Go runtime's threads are at rest; "
			    "the program's goroutines are out of sight (%s)", g->pid, g->error);
		return;
	}
	strbuf_addf(sb, "; goroutines of pid %d", g->pid);
	if (g->version[0])
		strbuf_addf(sb, " (%s)", g->version);
	strbuf_addf(sb, ", %u of the program's: ", g->n);
	unsigned said = 0, left = g->more;
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < g->ng; k++) {
			if (a->go_inside[k] != (pass == 0))
				continue;
			if (said == 4) {
				left += g->g[k].n;
				continue;
			}
			strbuf_addstr(sb, said++ ? ", " : "");
			goroutine_group(sb, &g->g[k]);
		}
	if (left)
		strbuf_addf(sb, ", %u more", left);
	if (a->go_lock)
		strbuf_addf(sb, ": %u wait%s on a lock whose holder waits itself", a->go_lock,
			    a->go_lock == 1 ? "s" : "");
	else if (a->go_chan && !a->go_outside)
		strbuf_addf(sb, ": every goroutine waits on another one");
	strbuf_addf(sb, "; the Go runtime's own threads (netpoller, sysmon, idle Ms on futexes) "
		    "wait as they do at rest and do not decide");
}

/* What the waits of a flat phase with no effort mean: the program's flow
 * blocked on a lock, a pool at rest, a join that ends outside. */
static void describe_rest(struct strbuf *sb, const struct gp_activity *a)
{
	if (a->go.pid && a->go.error[0])
		return; /* the threads are the Go runtime's: nothing to read in them (describe_goroutines) */
	if (a->main_lock_pid) {
		strbuf_addf(sb, "; the main thread of pid %d waits on a lock with no timeout",
		    a->main_lock_pid);
		if (a->main_frame[0])
			strbuf_addf(sb, " in %s", a->main_frame);
		strbuf_addf(sb, ": the program's own flow is blocked");
	}
	else if (a->kind == GP_CLASS_IDLE && a->wg.released)
		strbuf_addf(sb, "; %u thread%s wait%s on a lock that only threads waiting outside "
		    "can release (a join of a serving thread, a pool at rest)", a->wg.released,
		    a->wg.released == 1 ? "" : "s", a->wg.released == 1 ? "s" : "");
	else if (a->kind == GP_CLASS_IDLE && a->wg.main_end == GP_END_OUTSIDE && a->w[GP_WAIT_LOCK]
		 && a->wg.main_joins)
		/* "joins" only where a join was read (issue 32: a main thread
		 * in epoll was said to join a thread) */
		strbuf_addf(sb, "; the main thread joins thread %d, whose chain of waits ends outside "
		    "(input or a timer)", a->wg.main_joins);
	else if (a->kind == GP_CLASS_IDLE && a->wg.main_end == GP_END_OUTSIDE && a->w[GP_WAIT_LOCK]
		 && !a->main_outside)
		strbuf_addf(sb, "; the main thread's chain of waits ends outside (a lock whose "
		    "holder waits for input or a timer)");
	else if (a->kind == GP_CLASS_IDLE && a->main_outside)
		strbuf_addf(sb, "; the main thread waits outside; the threads on locks or "
		    "conditions look like a worker pool at rest");
	else if (a->kind == GP_CLASS_IDLE && a->inside)
		strbuf_addf(sb, "; the threads on locks are idle if a thread that waits outside "
		    "will release them, deadlocked if not: see the stacks");
	else if (a->conf_cap == GP_CONF_LOW && a->unclear && !a->outside
		 && !a->inside)
		strbuf_addf(sb, "; from outside, a wakeup that comes from inside the process "
		    "and one from outside look alike%s",
		    a->lockish ? ": the stacks name a lock" : ": the stacks name no lock");
}

/* How a connect failed, in words: refused is the commonest (nothing
 * listens), the rest by their errno(3) names. */
static const char *connect_failure_words(int e)
{
	switch (e) {
	case ECONNREFUSED: return "refused";
	case ETIMEDOUT: return "timed out";
	case ENOENT: return "failed: no such socket file (ENOENT)";
	case EHOSTUNREACH: return "failed: host unreachable";
	case ENETUNREACH: return "failed: network unreachable";
	case EAGAIN: return "failed: the listener's backlog is full (EAGAIN)";
	case ECONNRESET: return "reset";
	case EACCES: return "refused by permissions (EACCES)";
	default: return "failed";
	}
}

/* What decided a hang before the threads' waits did (verdict/activity.c):
 * a retry loop, a death in the tree, inputs waiting unanswered; said
 * first, then where the threads are meanwhile. */
static void describe_decider(struct strbuf *sb, const struct gp_activity *a)
{
	if (a->sib_decided) {
		gp_siblings_words(sb, &a->sib, NULL, 0);
		strbuf_addstr(sb, "; ");
	}
	if (a->retrying) {
		if (a->retry_comm[0])
			strbuf_addf(sb, "retrying: %s", a->retry_comm);
		else
			strbuf_addf(sb, "retrying: a child of pid %d", a->retry_ppid);
		strbuf_addf(sb, " exits %d, %u time%s since +%.0f s; ", a->retry_status, a->retry_n,
			    a->retry_n == 1 ? "" : "s", a->retry_since);
	}
	if (a->conn_retrying) {
		strbuf_addf(sb, "%s connect%s%s %s %llu time%s since +%.0f s",
			    a->retrying ? "its" : "retrying:", a->conn_to[0] ? " to " : "", a->conn_to,
			    connect_failure_words(a->conn_errno), (unsigned long long)a->conn_n,
			    a->conn_n == 1 ? "" : "s", a->conn_since);
		if (a->conn_pid)
			strbuf_addf(sb, " (pid %d, %s)", a->conn_pid, a->conn_comm);
		strbuf_addf(sb, "; ");
	}
	if (a->lock_retrying) {
		strbuf_addf(sb, "retrying: a lock%s%s refused %llu time%s since +%.0f s (pid %d, %s)",
			    a->lock_file[0] ? " on " : "", a->lock_file, (unsigned long long)a->lock_n,
			    a->lock_n == 1 ? "" : "s", a->lock_since, a->lock_pid, a->lock_comm);
		if (a->lock_holder)
			strbuf_addf(sb, ", held by pid %d (%s)", a->lock_holder, a->lock_holder_comm);
		strbuf_addf(sb, "; ");
	}
	if (a->dead_pid) {
		strbuf_addf(sb, "pid %d (%s) was killed by %s ", a->dead_pid, a->dead_comm,
			    signal_words(a->dead_signal));
		if (a->dead_before)
			strbuf_addf(sb, "before the trace began (a zombie its parent never reaped)");
		else
			strbuf_addf(sb, "at +%.0f s", a->dead_t);
		strbuf_addf(sb, "%s", a->dead_decided ? ", and the tree has done nothing since: " : "; ");
	}
	if (a->unanswered) {
		/* Inputs waiting decided it (verdict/activity.c): said first,
		 * then where the threads are instead of serving them. */
		strbuf_addf(sb, "inputs wait unanswered since +%.0f s:", a->inputs_since);
		if (a->in_pending)
			strbuf_addf(sb, " %u request%s read and never answered (the oldest for %.0f s)%s",
				    a->in_pending, a->in_pending == 1 ? "" : "s", a->in_pending_s,
				    a->in_backlog || a->in_unread ? "," : "");
		if (a->in_backlog)
			strbuf_addf(sb, " %u connection%s not accepted%s", a->in_backlog,
				    a->in_backlog == 1 ? "" : "s", a->in_unread ? "," : "");
		if (a->in_unread)
			strbuf_addf(sb, " %llu byte%s received and not read", (unsigned long long)a->in_unread,
				    a->in_unread == 1 ? "" : "s");
		if (a->ended_tid)
			strbuf_addf(sb, "; thread %d (%s) of pid %d ended at +%.0f s",
				    a->ended_tid, a->ended_comm, a->ended_pid, a->ended_t);
		if (a->in_main_frame[0])
			strbuf_addf(sb, "; the main thread of pid %d (%s), which holds them, waits in %s",
				    a->in_pid, a->in_comm, a->in_main_frame);
		if (a->waiters_orphaned)
			strbuf_addf(sb, "; no live thread is left to answer them: the %u threads waiting "
				    "on locks or conditions with no timeout were woken by none of the "
				    "requests that kept coming, and none runs or waits on a timer (the "
				    "thread that would signal them is gone, or waits itself)",
				    a->w[GP_WAIT_LOCK]);
		strbuf_addstr(sb, "; meanwhile ");
	}
}

void gp_activity_words(struct strbuf *sb, const struct gp_activity *a, const char *machine)
{
	char tmp[160];
	if (a->kind == GP_CLASS_WAITING_GPU) {
		describe_gpu_wait(sb, a);
		return;
	}
	if (a->kind == GP_CLASS_HANG_GPU_SPIN) {
		describe_gpu_spin(sb, a);
		return;
	}
	if (a->gpu_no_work && describe_gpu_nowork(sb, a))
		return;
	bool busy = a->kind == GP_CLASS_HANG_BUSY_KERNEL || a->kind == GP_CLASS_HANG_BUSY_USER;
	describe_decider(sb, a);
	if (!busy && describe_graph(sb, a)) {
		strbuf_addf(sb, "; %.1f%% CPU", a->cpu_pct);
		return;
	}
	if (!busy && a->go_decided) {
		/* the goroutines decided: the runtime's threads on futexes and
		 * in epoll are not the culprits (issue 32) */
		strbuf_addf(sb, "threads asleep, %.1f%% CPU", a->cpu_pct);
		describe_goroutines(sb, a);
		describe_siblings(sb, a);
		return;
	}
	if (!busy) {
		strbuf_addf(sb, "threads asleep, %.1f%% CPU", a->cpu_pct);
		if (a->waits_known) {
			strbuf_addf(sb, "; ");
			describe_waits(sb, a);
		} else if (a->wchan_count) {
			strbuf_addf(sb, "; %u of %u threads in %s", a->wchan_count, a->threads, a->wchan);
		}
		const char *scn = a->wait_sc_nr >= 0 ? gp_syscall_name_on(machine, a->wait_sc_nr) : NULL;
		/* restart_syscall: a sleep resumed after a stop; its own
		 * arguments are gone, so it names nothing. */
		/* (a JVM's: its own threads' futexes are most of them) */
		if (a->wait_sc_nr >= 0 && a->wait_sc_count && !(scn && !strcmp(scn, "restart_syscall"))
		    && !a->java) {
			gp_syscall_describe_on(tmp, sizeof tmp, machine, a->wait_sc_nr, a->wait_sc_args);
			if (a->wait_sc_count > 1 && !a->same_arg0) {
				/* Grouped by call and operation: the addresses or fds
				 * differ, so none of them is named. */
				char *paren = strchr(tmp, '(');
				if (paren)
					*paren = '\0';
				strbuf_addf(sb, "; %u in %s, each on its own %s", a->wait_sc_count, tmp,
				    strcmp(tmp, "futex") ? "descriptor" : "futex word");
			} else {
				strbuf_addf(sb, "; %u in %s", a->wait_sc_count, tmp);
			}
		}
		if (a->procs > 1 && a->inside && a->inside_pid)
			strbuf_addf(sb, "; the inside waits are in pid %d (%s)", a->inside_pid, a->inside_comm);
		if (a->child_wait_pid && a->kind == GP_CLASS_UNDECIDED)
			strbuf_addf(sb, "; pid %d (%s) waits for a child that is not followed "
			    "(--no-children)", a->child_wait_pid, a->child_wait_comm);
		else if (a->child_wait_pid && a->procs > 1)
			strbuf_addf(sb, "; pid %d (%s) waits for its children", a->child_wait_pid,
			    a->child_wait_comm);
		if (a->procs > 1 && a->outside && a->outside_pid && a->kind == GP_CLASS_IDLE)
			strbuf_addf(sb, "; the waits for the outside are in pid %d (%s)", a->outside_pid,
			    a->outside_comm);
		describe_stuck(sb, a);
		describe_rest(sb, a);
		describe_goroutines(sb, a);
		return;
	}
	bool kernel = a->kind == GP_CLASS_HANG_BUSY_KERNEL;
	if (a->tid) {
		name_thread(sb, a, a->tid, a->comm, a->pid, a->pcomm);
		strbuf_addf(sb, " busy in %s, %.0f%% CPU (%.0f%% system)",
		    kernel ? "the kernel" : "user space", a->tcpu, a->tsys);
		if (a->frame[0])
			strbuf_addf(sb, " at %s", a->frame);
		if (a->tid2) {
			strbuf_addf(sb, ", and ");
			name_thread(sb, a, a->tid2, a->comm2, a->pid2, a->pcomm2);
			strbuf_addf(sb, ", %.0f%%", a->tcpu2);
			if (a->frame2[0])
				strbuf_addf(sb, " at %s", a->frame2);
		}
	} else {
		strbuf_addf(sb, "busy in %s, %.0f%% CPU (%.0f%% system)",
		    kernel ? "the kernel" : "user space", a->cpu_pct, a->sys_pct);
	}
	if (a->have_sc) {
		gp_syscall_describe_on(tmp, sizeof tmp, machine, a->sc_nr, a->sc_args);
		strbuf_addf(sb, ", in %s", tmp);
	}
	if (!kernel)
		/* From outside, a loop that computes and one that polls look
		 * alike: CPU in user space and no output either way. */
		strbuf_addf(sb, ": computing or spinning (no output seen)");
	describe_gil(sb, a);
	describe_siblings(sb, a);
	if (kernel && a->have_wb && (a->dirtied > (1 << 20) || a->written > (1 << 20))) {
		char d[32], w[32];
		gp_fmt_rate(d, sizeof d, a->dirtied);
		gp_fmt_rate(w, sizeof w, a->written);
		strbuf_addf(sb, "; system dirtied %s, written back %s", d, w);
		if (a->have_reclaim) {
			if (a->reclaim < 0.05 * a->written) {
				strbuf_addf(sb, ", no file reclaim");
				if (fabs(a->dirtied - a->written) < 0.25 * a->written)
					strbuf_addf(sb, ": pages re-dirtied as fast as written back (writeback, not memory pressure)");
			} else {
				gp_fmt_rate(d, sizeof d, a->reclaim);
				strbuf_addf(sb, ", file reclaim %s", d);
			}
		}
	}
}
