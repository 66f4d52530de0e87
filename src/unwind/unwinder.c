/* One thread's frames, stopped or not; see stacks_int.h.
 *
 * How a thread is stopped is ptstop.h's contract; whether it may be,
 * stopcut.h's; here the unwind is the only work done while a thread is
 * stopped (symbols, source lines and demangling after the detach, in
 * stacks.c). */
#include "config.h"
#include "stacks_int.h"
#include "ptstop.h"
#include "stopcut.h"
#include "taskregs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- stopping one thread --------------------------------------------- */

struct unwind_arg {
	struct rawthread *th;
	const char *err;
};

static int frame_cb(Dwfl_Frame *f, void *arg)
{
	struct unwind_arg *ua = arg;
	struct rawthread *th = ua->th;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(f, &pc, &act)) {
		ua->err = dwfl_errmsg(-1);
		return DWARF_CB_ABORT;
	}
	if (th->nframes >= GP_STACKS_MAX_FRAMES)
		return DWARF_CB_ABORT;
	/* A frame that repeats its caller exactly is a loop in the unwind. */
	if (th->nframes > 0 && th->pc[th->nframes - 1] == pc && th->nframes > 8)
		return DWARF_CB_ABORT;
	th->pc[th->nframes] = pc;
	th->activation[th->nframes] = act;
	th->nframes++;
	return DWARF_CB_OK;
}

/* What a stop that did not happen is called in the `stacks` line. */
static void stop_failed(struct gp_stacks *s, struct rawthread *th, const struct gp_stop_res *res)
{
	switch (res->rc) {
	case GP_STOP_GONE:
		th->unwind = "gone";
		snprintf(th->err, sizeof th->err, "exited while being stopped");
		break;
	case GP_STOP_DENIED:
		th->unwind = "denied";
		s->ptrace_denied = true;
		s->ptrace_errno = res->err;
		s->tot.denied++;
		snprintf(th->err, sizeof th->err, "PTRACE_SEIZE: %s", strerror(res->err));
		break;
	case GP_STOP_TRACED:
		th->unwind = "traced";
		snprintf(th->err, sizeof th->err, "traced by PID %d (%s)", res->tracer,
			 res->tracer_comm[0] ? res->tracer_comm : "?");
		break;
	case GP_STOP_TIMEOUT:
		/* A thread that cannot take the trap yet (inside a long
		 * kernel call, or in D state since we looked): reported, and
		 * let go as soon as it stops (ptstop.h). */
		th->unwind = "timeout";
		snprintf(th->err, sizeof th->err, "did not stop within %d ms",
			 GP_STACKS_STOP_TIMEOUT_MS);
		s->tot.timeouts++;
		break;
	case GP_STOP_BLOCKED:
		/* The SEIZE waited for an exec of the process (ptstop.h, 7). */
		th->unwind = "timeout";
		snprintf(th->err, sizeof th->err,
			 "PTRACE_SEIZE waited 100 ms: the process is in an exec");
		s->tot.timeouts++;
		break;
	case GP_STOP_BUSY:
		/* This thread alone: GP_PTSTOP_PENDING_MAX others are on
		 * their way to a stop. */
		th->unwind = "off";
		snprintf(th->err, sizeof th->err,
			 "%d threads (%d...) have not stopped yet (inside kernel calls)",
			 GP_PTSTOP_PENDING_MAX, res->busy_tid);
		break;
	default:
		th->unwind = "failed";
		snprintf(th->err, sizeof th->err, "ptrace: %s", strerror(res->err));
	}
}

/* SEIZE + INTERRUPT + bounded wait + unwind + DETACH (stacks_int.h). */
void gp_stk_stop_and_unwind(struct gp_stacks *s, struct rawthread *th)
{
	int tid = th->tid;
	/* A thread still pending from an earlier stop is no reason to wait:
	 * it is not stopped, and is let go when it is (ptstop.h, 1 and 3).
	 * (Waiting for it here, up to 100 ms a snapshot, and refusing every
	 * other stop meanwhile turned the whole tree's stacks "off".) */
	/* Where it is now, not where the snapshot's first read saw it: a
	 * writer seen in its nap between two writes can be in the next by
	 * now, and a stop would cut that one (harm-transfer.sh, 1 run in 4).
	 * This leaves microseconds between the look and the stop. */
	char path[96], buf[256], why[96];
	struct gp_syscall now = { .kind = GP_SC_UNKNOWN };
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", s->pid, tid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) >= 0 && gp_parse_syscall(buf, &now)
	    && gp_stop_would_change(&s->root, s->pid, &now, why, sizeof why)) {
		th->sc = now;
		gp_stk_unwind_without_stop(s, th, why, false);
		return;
	}
	/* "running": /proc shows no call, but the thread may be inside one
	 * a stop would cut (a send copying its bytes: the unix transfer of
	 * harm-transfer.sh, exit 3 in 1 run of 3).  Its saved registers name
	 * the call it entered last. */
	struct gp_syscall last = { .kind = GP_SC_IN };
	if (now.kind == GP_SC_RUNNING
	    && gp_taskregs_last_call(gp_taskregs_get(), tid, &last.nr, last.args)
	    && gp_stop_would_change(&s->root, s->pid, &last, why, sizeof why)) {
		th->unwind = "nostop";
		snprintf(th->err, sizeof th->err, "not taken: running, perhaps inside %s", why);
		th->py = gp_py_read_thread(s->py, tid);
		return;
	}
	double t0 = gp_stk_now_us();
	struct gp_stop_res res;
	if (gp_ptstop_stop(s->pid, tid, s->is_our_child, GP_STACKS_STOP_TIMEOUT_MS, &res) != GP_STOP_OK) {
		stop_failed(s, th, &res);
		return;
	}
	if (s->tot.max_stopped_at_once < 1)
		s->tot.max_stopped_at_once = 1;

	struct unwind_arg ua = { .th = th };
	if (s->rs)
		gp_regstate_use_stop(s->rs, tid);
	if (s->attached) {
		int ur = dwfl_getthread_frames(s->dwfl, tid, frame_cb, &ua);
		if (ur != 0 && th->nframes == 0 && !ua.err)
			ua.err = dwfl_errmsg(-1);
	} else {
		ua.err = "libdwfl could not attach to the process state";
	}
	if (s->py) {
		double p0 = gp_stk_now_us();
		th->py = gp_py_read_thread(s->py, tid);
		th->py_us = gp_stk_now_us() - p0;
	}
	/* A signal-delivery-stop that came before our trap is given back. */
	gp_ptstop_release(tid, res.inject);
	double t1 = gp_stk_now_us();
	th->stop_us = t1 - t0;
	s->tot.stopped++;
	s->tot.stop_us_sum += th->stop_us;
	if (th->stop_us > s->tot.stop_us_max)
		s->tot.stop_us_max = th->stop_us;
	if (th->nframes > 0) {
		th->unwind = "ok";
	} else {
		th->unwind = "failed";
		snprintf(th->err, sizeof th->err, "%s", ua.err ? ua.err : "no frames");
	}
}

/* ---- a thread that must not be stopped -------------------------------- */

/* What says a thread has not run since: its times on a CPU
 * (/proc/TID/schedstat's third field, pcount: run_delay's switch-ins,
 * kernel/sched/stats.h) and its /proc/TID/syscall line (same call, same
 * sp and pc).  False when unreadable. */
static bool still_mark(struct gp_stacks *s, int tid, char *buf, size_t cap)
{
	char path[96], a[128], b[256];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", s->pid, tid);
	if (gp_read_file(&s->root, path, a, sizeof a) < 0)
		a[0] = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", s->pid, tid);
	if (gp_read_file(&s->root, path, b, sizeof b) < 0)
		return false;
	/* schedstat's run time moves only while the thread runs. */
	snprintf(buf, cap, "%s|%s", a, b);
	return true;
}

/* The walk from sp/pc ended at once: code built with frame pointers
 * wants rbp, which /proc/TID/syscall does not show.  Each candidate found
 * on the stack (regstate.h) is tried; a walk that ends where a stack ends
 * (libdwfl stops without an error: the CFI's outermost frame, _start or
 * clone) and whose first edges are calls (called_from) is preferred, the
 * deepest of them; else the deepest walk, if deeper than the first.
 * Returns the error of the walk kept. */
/* Whether frame k + 1's return address follows a call of frame k's
 * function: a direct call (e8 rel32) names its target, which must be the
 * start of the function frame k runs in, or a function of the same name,
 * or no function at all (a PLT stub).  A walk through a stale frame
 * pointer fails it (under ASan, read's interceptor "returned" into
 * GetCurrentThread).  Indirect calls cannot be told: true. */
static bool called_from(struct gp_stacks *s, const struct rawthread *th, size_t k)
{
	uint64_t pc = th->pc[k] - (k && !th->activation[k]), ra = th->pc[k + 1];
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, pc);
	unsigned char b[5];
	struct iovec local = { b, 5 }, remote = { (void *)(uintptr_t)(ra - 5), 5 };
	if (!m || process_vm_readv(th->tid, &local, 1, &remote, 1, 0) != 5 || b[0] != 0xe8)
		return true;
	int32_t rel;
	memcpy(&rel, b + 1, 4);
	uint64_t target = ra + (uint64_t)(int64_t)rel;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m, pc, &off, &sym, NULL, NULL, NULL);
	if (!name || target == pc - off)
		return true;
	Dwfl_Module *tm = dwfl_addrmodule(s->dwfl, target);
	GElf_Off toff;
	GElf_Sym tsym;
	const char *tname = tm ? dwfl_module_addrinfo(tm, target, &toff, &tsym, NULL, NULL, NULL) : NULL;
	return !tname || !strcmp(tname, name);
}

static const char *with_frame_pointer(struct gp_stacks *s, struct rawthread *th, const char *err)
{
	uint64_t fp[16];
	size_t n = gp_regstate_fp_candidates(s->dwfl, th->tid, th->sc.sp, fp, 16);

	size_t best_n = th->nframes;
	bool best_complete = false;
	uint64_t best_pc[GP_STACKS_MAX_FRAMES];
	bool best_act[GP_STACKS_MAX_FRAMES];
	memcpy(best_pc, th->pc, sizeof best_pc);
	memcpy(best_act, th->activation, sizeof best_act);
	for (size_t k = 0; k < n; k++) {
		struct unwind_arg ub = { .th = th };
		th->nframes = 0;
		gp_regstate_use_syscall(s->rs, th->tid, th->sc.sp, th->sc.pc, fp[k]);
		int r = dwfl_getthread_frames(s->dwfl, th->tid, frame_cb, &ub);
		bool ok = true;
		for (size_t f = 1; ok && f + 1 < th->nframes && f < 3; f++)
			ok = called_from(s, th, f);
		bool complete = r == 0 && !ub.err;

		/* The deepest walk, a complete one before any other: a stale
		 * pair leads into old frames and back into a real one higher
		 * up, skipping the real frames between; a caller's pair skips
		 * its callee.  Only the true one misses none. */
		if (ok && (complete > best_complete
			   || (complete == best_complete && th->nframes > best_n))) {
			best_complete = complete;
			best_n = th->nframes;
			memcpy(best_pc, th->pc, sizeof best_pc);
			memcpy(best_act, th->activation, sizeof best_act);
			err = complete ? NULL : ub.err ? ub.err : dwfl_errmsg(-1);
		}
	}
	th->nframes = best_n;
	memcpy(th->pc, best_pc, sizeof best_pc);
	memcpy(th->activation, best_act, sizeof best_act);
	return err;
}

/* Frames of a thread asleep in a call a stop would change (stopcut.h),
 * taken without any stop: libdwfl unwinds from the sp/pc the kernel shows
 * over memory read with process_vm_readv, and the frames are kept only if
 * the thread did not run meanwhile (its schedstat and syscall line are
 * the same after as before: a stack read while it ran could be torn). */
/* The walk of a thread that is not stopped: from every register the
 * kernel saved when it went to sleep (regs, taskregs.h: a walk as a
 * stop's), else from sp and pc of its system call, with a frame pointer
 * searched for on its stack when the walk from those ends at once. */
static const char *walk_unstopped(struct gp_stacks *s, struct rawthread *th, const uint64_t *regs)
{
	struct unwind_arg ua = { .th = th };
	th->regs_bpf = regs != NULL;
	if (regs)
		gp_regstate_use_regs(s->rs, th->tid, regs);
	else
		gp_regstate_use_syscall(s->rs, th->tid, th->sc.sp, th->sc.pc, 0);
	if (dwfl_getthread_frames(s->dwfl, th->tid, frame_cb, &ua) != 0 && !ua.err)
		ua.err = dwfl_errmsg(-1);
	if (!regs && th->nframes < 3)
		ua.err = with_frame_pointer(s, th, ua.err);
	return ua.err;
}

/* Frames of a thread that is not stopped: asleep in a call a stop would
 * change (stopcut.h), or asleep at all where its saved registers can be
 * read (saved: taskregs.h; false, and the thread untouched, when they
 * cannot: the caller stops it as before).  libdwfl unwinds over memory
 * read with process_vm_readv, and the frames are kept only if the
 * thread did not run meanwhile (its schedstat and syscall line are the
 * same after as before -- taken before the registers are read: a stack
 * read while it ran could be torn). */
bool gp_stk_unwind_without_stop(struct gp_stacks *s, struct rawthread *th, const char *why,
				bool saved)
{
	char before[384], after[384];
	if (!s->rs || !s->attached || !th->sc.sp || !th->sc.pc
	    || !still_mark(s, th->tid, before, sizeof before)) {
		if (saved)
			return false;
		th->unwind = "nostop";
		snprintf(th->err, sizeof th->err, "not taken: %s", why);
		th->py = gp_py_read_thread(s->py, th->tid);
		return true;
	}
	uint64_t regs[17];
	bool have = gp_taskregs_read(gp_taskregs_get(), th->tid, regs);
	if (saved && !have)
		return false;
	th->unwind = "nostop";
	double t0 = gp_stk_now_us();
	const char *err = walk_unstopped(s, th, have ? regs : NULL);
	th->py = gp_py_read_thread(s->py, th->tid);
	th->py_us = gp_stk_now_us() - t0;
	s->tot.nostop++;
	if (!still_mark(s, th->tid, after, sizeof after) || strcmp(before, after)) {
		th->nframes = 0;
		free(th->py);
		th->py = NULL;
		snprintf(th->err, sizeof th->err, "not taken: it ran while read without a stop (%s)",
			 why);
		return true;
	}
	const char *from = have ? "its saved registers" : "its saved sp/pc";
	if (have && th->nframes) {
		th->unwind = "ok"; /* every register, as a stop gives them */
		s->tot.regs_bpf++;
		/* said when it is more than a sleep: a stop would have cut a
		 * call, or the thread sleeps in D where none is tried */
		if (strcmp(why, "asleep"))
			snprintf(th->err, sizeof th->err, "not stopped, %s: frames from %s", why, from);
	} else if (!th->nframes)
		snprintf(th->err, sizeof th->err, "not taken: %s (%s)", why, err ? err : "no frames");
	else if (err && th->nframes < GP_STACKS_MAX_FRAMES)
		snprintf(th->err, sizeof th->err, "not stopped, %s: %zu frames from %s, then %s", why,
			 th->nframes, from, err);
	else
		snprintf(th->err, sizeof th->err, "not stopped, %s: frames from %s", why, from);
	return true;
}

/* Why a sleeping thread is read from its saved registers: a stop would
 * cut its call (stopcut.h), it sleeps in D, or only that it sleeps. */
const char *gp_stk_asleep_why(struct gp_stacks *s, const struct rawthread *th, char *why,
			      size_t n)
{
	if (gp_stop_would_change(&s->root, s->pid, &th->sc, why, n))
		return why;
	return th->state == 'D' ? "asleep in the kernel (D)" : "asleep";
}

/* ---- another tracer's ---------------------------------------------- */

/* A thread in state t: stopped by another tracer (named, from TracerPid)
 * -- or by us, a pending stop not yet let go: drained now, and stacked. */
bool gp_stk_traced_elsewhere(struct gp_stacks *s, struct rawthread *r)
{
	char comm[16];
	int tracer = gp_tracer_of(s->pid, r->tid, comm, sizeof comm);
	if (tracer == (int)getpid()) {
		gp_ptstop_drain();
		return false;
	}
	r->unwind = "traced";
	if (tracer > 0)
		snprintf(r->err, sizeof r->err, "traced by PID %d (%s)", tracer, comm[0] ? comm : "?");
	return true;
}
