/* The waits: what the sleeping threads of a flat phase wait for, and
 * what that makes of the phase (idle, blocked, unclear). */
#include "config.h"
#include "verdict.h"
#include "verdict_int.h"
#include "parse.h"

#include <string.h>

/* The distinct wait frames of the first sleeping threads of the stacks. */
void stuck_waits(const struct gp_stuck *stuck, struct gp_activity *a)
{
	a->nwaits3 = 0;
	for (size_t i = 0; i < stuck->n && a->nwaits3 < 3; i++) {
		const char *w = stuck->th[i].wait_frame;
		if (!*w || stuck->th[i].state == 'R')
			continue;
		bool seen = false;
		for (unsigned k = 0; k < a->nwaits3; k++)
			seen |= !strcmp(a->waits3[k], w);
		if (!seen)
			gp_strlcpy(a->waits3[a->nwaits3++], w, sizeof a->waits3[0]);
	}
}

/* Frames that name a lock wait: what decides when the outside look
 * cannot (a database waiting on its lock manager through epoll: its
 * frames say LockAcquire, ProcSleep...). */
static bool lockish_frame(const char *f)
{
	static const char *const words[] = { "Lock", "Acquire", "acquire", "mutex", "Mutex",
		"sem_wait", "sem_clockwait", "sem_timedwait", "Semaphore", "pthread_join",
		"clockjoin", "timedjoin", "rwlock", "spinlock", NULL };
	for (size_t i = 0; words[i]; i++)
		if (strstr(f, words[i]))
			return true;
	/* "lock" as a word of its own: pthread_mutex_lock, acquire_lock,
	 * not clock_nanosleep nor WaitEventSetWaitBlock. */
	for (const char *p = strstr(f, "lock"); p; p = strstr(p + 4, "lock"))
		if (p == f || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z')))
			return true;
	return false;
}

/* ---- the wait-for graph: where each chain ends (model/waitgraph.h) ---- */

static const char *stuck_frame_of(const struct gp_stuck *stuck, int tid)
{
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->n; i++)
		if (stuck->th[i].tid == tid)
			return stuck->th[i].wait_frame;
	return "";
}

/* A frame that acquires a lock (HotSpot's ObjectMonitor::enter, glibc's
 * pthread_mutex_lock, CPython's acquire_lock), not one that waits on a
 * condition (a pool's idle worker, HotSpot's PlatformMonitor::wait). */
static bool acquire_frame(const char *f)
{
	static const char *const words[] = { "::enter", "acquire", "Acquire", "mutex_lock",
		"MutexLock", "lock_slow", "__lll_lock_wait", "rwlock_rdlock", "rwlock_wrlock", NULL };
	for (size_t i = 0; words[i]; i++)
		if (strstr(f, words[i]))
			return true;
	return false;
}

static bool wait_frame_word(const char *f)
{
	static const char *const words[] = { "wait", "Wait", "park", "cond_", "join", "Join",
		"sleep", "Sleep", NULL };
	for (size_t i = 0; words[i]; i++)
		if (strstr(f, words[i]))
			return true;
	return false;
}

/* The sleeping threads of the stacks that acquire a lock: an acquire
 * frame with no condition wait outside it (a condition's wait re-takes
 * its mutex inside: CPython's Condition.wait calls acquire_lock, a pool's
 * idle worker; the waits inside an acquire -- futex_wait, park -- are
 * how it sleeps), and no Python line that waits or joins. */
static void find_acquirers(const struct gp_stuck *stuck, struct gp_activity *a)
{
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->n && a->nacq < 3; i++) {
		const struct gp_stuck_thread *x = &stuck->th[i];
		bool py = strstr(x->wait_frame, ".py:") != NULL;  /* "fn (file.py:12)" */
		if (x->state == 'R' || (py && wait_frame_word(x->wait_frame)
					&& !acquire_frame(x->wait_frame)))
			continue;
		int acq = -1;
		bool waits_outside = false;
		for (unsigned k = 0; k < x->nframes; k++) {
			if (acquire_frame(x->frames[k])) {
				if (acq < 0)
					acq = (int)k;
			} else if (acq >= 0 && wait_frame_word(x->frames[k])) {
				waits_outside = true;
			}
		}
		if (acq < 0 || waits_outside)
			continue;
		unsigned m = a->nacq++;
		a->acq_tid[m] = x->tid;
		a->acq_pid[m] = x->pid;
		gp_strlcpy(a->acq_comm[m], x->comm, sizeof a->acq_comm[m]);
		/* a Python line where there is one, else the acquire */
		gp_strlcpy(a->acq_frame[m], py ? x->wait_frame : x->frames[acq], sizeof a->acq_frame[m]);
	}
}

/* The main thread joins a thread whose stacks wait on a condition, not
 * acquire a lock (the java launcher joins the Java main thread, which
 * waits in Object.wait or Thread.join): the program's flow is that
 * thread's, and it rests. */
static bool joins_a_resting_thread(const struct gp_point *l, const struct gp_stuck *stuck)
{
	if (!l->wg.main_joins || !stuck || stuck->t < 0)
		return false;
	for (size_t i = 0; i < stuck->n; i++) {
		const struct gp_stuck_thread *x = &stuck->th[i];
		if (x->tid != l->wg.main_joins)
			continue;
		for (unsigned k = 0; k < x->nframes; k++) {
			if (acquire_frame(x->frames[k]))
				return false;
			if (wait_frame_word(x->frames[k]))
				return true;
		}
		return false;
	}
	return false;
}

/* Where the chains end decides before the counts do: a cycle is a
 * deadlock, a stopped process with waiters behind it stalls them, a lock
 * holder that sleeps holds its waiters.  True when the graph decided. */
static bool judge_graph(const struct gp_point *l, const struct gp_stuck *stuck,
			struct gp_activity *a)
{
	const struct gp_wg_pt *g = &l->wg;
	a->wg = *g;
	for (unsigned i = 0; i < g->ncycle && i < GP_WG_MEMBERS; i++)
		gp_strlcpy(a->cyc_frame[i], stuck_frame_of(stuck, g->cyc_tid[i]), sizeof a->cyc_frame[i]);
	if (g->holder_tid)
		gp_strlcpy(a->holder_frame, stuck_frame_of(stuck, g->holder_tid), sizeof a->holder_frame);
	/* Owners read fresh from the mutex words, the same cycle in two
	 * samples a tick apart: certain.  Seen once, it may join readings
	 * taken across a hand-over: the counts below judge. */
	if (g->ncycle >= 2 && g->cycle_twice) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->deadlock = true;
		a->conf_cap = GP_CONF_ANY;
		return true;
	}
	if (g->stopped_pid && g->behind) {
		a->kind = GP_CLASS_STOPPED;
		a->stalled = true;
		a->conf_cap = GP_CONF_ANY;
		return true;
	}
	/* A lock's holder, when the program's flow waits behind it (its
	 * main thread) or nothing waits outside. */
	if (g->holder_pid && (g->main_end == GP_END_HOLDER || !a->outside)) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->behind_holder = true;
		a->conf_cap = GP_CONF_ANY;
		return true;
	}
	/* Unknown edges whose every releaser waits outside are waits for
	 * the outside (a pool's workers on its queue's lock, a join of a
	 * thread in accept()). */
	unsigned r = g->released < a->inside ? g->released : a->inside;
	a->inside -= r;
	a->outside += r;
	return false;
}

static bool is_go_pid(const struct gp_stuck *stuck, int pid)
{
	for (size_t i = 0; stuck && pid && i < stuck->ngo; i++)
		if (stuck->go[i].pid == pid)
			return true;
	return false;
}

/* The goroutines of the snapshot's Go processes, counted by where they
 * wait; a->go is the process to name: the one with goroutines on a lock,
 * else the most goroutines, else one whose goroutines are out of sight.
 * How many processes had theirs read. */
static size_t count_goroutines(const struct gp_stuck *stuck, struct gp_activity *a)
{
	size_t read = 0;
	unsigned best_lock = 0, best_n = 0;
	for (size_t i = 0; i < stuck->ngo; i++) {
		const struct gp_stuck_go *g = &stuck->go[i];
		if (g->error[0]) {
			if (!a->go.pid)
				a->go = *g;
			continue;
		}
		read++;
		unsigned lock = 0;
		for (size_t k = 0; k < g->ng; k++) {
			enum gp_go_where w = g->g[k].where;
			unsigned *c = w == GP_GO_LOCK ? &a->go_lock : w == GP_GO_CHAN ? &a->go_chan
				    : w == GP_GO_RUN ? &a->go_run : &a->go_outside;
			*c += g->g[k].n;
			lock += w == GP_GO_LOCK ? g->g[k].n : 0;
		}
		a->go_outside += g->more; /* not told apart: never a hang's evidence */
		if (!a->go.pid || a->go.error[0] || lock > best_lock
		    || (lock == best_lock && g->n > best_n)) {
			a->go = *g;
			best_lock = lock;
			best_n = g->n;
		}
	}
	for (size_t k = 0; k < a->go.ng; k++) {
		enum gp_go_where w = a->go.g[k].where;
		a->go_inside[k] = w == GP_GO_LOCK || w == GP_GO_CHAN;
	}
	return read;
}

/* The goroutines decide, where they were read: the runtime's threads
 * (the netpoller, sysmon, idle Ms parked on futexes) never do (issue 32:
 * a Go server's class followed whichever OS thread ran the netpoller).
 * Goroutines on a lock while none runs: the lock's holder waits itself
 * (a hang, whatever else waits outside).  Goroutines that wait on each
 * other (channels, conditions) and none on input or a timer: nobody
 * outside can wake them.  Otherwise the program waits for the outside:
 * idle -- with goroutines on channels beside, as worker pools rest, at
 * lower confidence.  A goroutine running or in a system call leaves the
 * class to the threads. */
static bool judge_goroutines(const struct gp_stuck *stuck, struct gp_activity *a)
{
	if (!stuck || stuck->t < 0 || !stuck->ngo)
		return false;
	size_t read = count_goroutines(stuck, a);
	if (!read || a->go_run)
		return false;
	if (a->go_lock || (a->go_chan && !a->go_outside)) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->conf_cap = GP_CONF_MEDIUM;
		a->go_decided = true;
		return true;
	}
	if (read < stuck->nproc)
		return false; /* other programs' threads decide */
	a->kind = GP_CLASS_IDLE;
	a->conf_cap = a->go_chan ? GP_CONF_LOW : GP_CONF_MEDIUM;
	a->go_decided = true;
	return true;
}

/* A flat phase with no effort: what the threads wait for decides.
 * Outside (input, a peer, a timer, a signal): idle.  Inside (locks with
 * nobody runnable or waiting outside to release them, D state, a driver
 * call): blocked.  An eventfd or a timed condition cannot be told from
 * outside: the stacks taken at the hang lean it, at low confidence. */
static void classify_threads(const struct gp_point *l, const struct gp_stuck *stuck,
			     struct gp_activity *a)
{
	for (int w = 0; w < GP_WAIT_COUNT; w++) {
		a->w[w] = l->wait_n[w];
		if (w == GP_WAIT_NONE || !l->wait_n[w])
			continue;
		a->waits_known = true;
		switch (gp_wait_group((enum gp_wait)w)) {
		case GP_WG_OUTSIDE: a->outside += l->wait_n[w]; break;
		case GP_WG_UNCLEAR: a->unclear += l->wait_n[w]; break;
		case GP_WG_INSIDE: a->inside += l->wait_n[w]; break;
		case GP_WG_CHILD: a->child += l->wait_n[w]; break;
		default: break;
		}
	}
	a->child_wait_pid = l->child_wait_pid;
	gp_strlcpy(a->child_wait_comm, l->child_wait_comm, sizeof a->child_wait_comm);
	a->inside_pid = l->inside_pid;
	gp_strlcpy(a->inside_comm, l->inside_comm, sizeof a->inside_comm);
	a->outside_pid = l->outside_pid;
	gp_strlcpy(a->outside_comm, l->outside_comm, sizeof a->outside_comm);
	if (stuck && stuck->t >= 0) {
		a->stuck_t = stuck->t;
		a->stuck_n = (unsigned)stuck->total;
		a->common_count = gp_stuck_common_frame(stuck, a->common_frame, sizeof a->common_frame);
		stuck_waits(stuck, a);
		for (size_t i = 0; i < stuck->n && !a->lockish; i++)
			for (unsigned k = 0; k < stuck->th[i].nframes; k++)
				if (stuck->th[i].state != 'R' && lockish_frame(stuck->th[i].frames[k]))
					a->lockish = true;
	}
	if (!a->waits_known) {
		/* A result written before waits were recorded: as before. */
		a->kind = GP_CLASS_HANG_BLOCKED;
		return;
	}
	find_acquirers(stuck, a);
	bool in_kernel = l->blocked_d || a->w[GP_WAIT_DRIVER] || a->w[GP_WAIT_DISK];
	if (!in_kernel && judge_goroutines(stuck, a)) {
		a->nacq = 0; /* the runtime's threads on futexes are not the culprits */
		return;
	}
	if (judge_graph(l, stuck, a))
		return;
	if (in_kernel) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->conf_cap = l->blocked_d ? GP_CONF_ANY : GP_CONF_MEDIUM;
	} else if (a->inside && !a->outside) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		/* Locks with nobody waiting outside: who would release them?
		 * Another process through shared memory, at most. */
		a->conf_cap = a->unclear ? GP_CONF_MEDIUM : GP_CONF_ANY;
	} else if (a->outside && a->inside && l->main_lock_pid && !is_go_pid(stuck, l->main_lock_pid)
		   && !(l->main_lock_pid == l->wg.root && joins_a_resting_thread(l, stuck))) {
		/* Locks beside waits for the outside, and a main thread among
		 * the lock waiters: the program's own flow is stuck (a join, an
		 * acquire); the outside waits are helpers' (a runtime's event
		 * thread). */
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->main_lock_pid = l->main_lock_pid;
		for (size_t i = 0; stuck && i < stuck->n; i++)
			if (stuck->th[i].tid == l->main_lock_pid)
				gp_strlcpy(a->main_frame, stuck->th[i].wait_frame, sizeof a->main_frame);
		a->conf_cap = a->lockish ? GP_CONF_MEDIUM : GP_CONF_LOW;
	} else if (a->outside) {
		a->kind = GP_CLASS_IDLE;
		enum gp_wait_group mg = gp_wait_group((enum gp_wait)l->root_main_wait);
		/* With the main thread waiting outside, the threads on locks
		 * or conditions are what worker pools look like at rest. */
		a->conf_cap = a->inside ? (mg == GP_WG_OUTSIDE ? GP_CONF_MEDIUM : GP_CONF_LOW)
			      : a->unclear ? GP_CONF_MEDIUM : GP_CONF_ANY;
		a->main_outside = mg == GP_WG_OUTSIDE && a->inside;
	} else if (a->unclear) {
		a->kind = a->lockish ? GP_CLASS_HANG_BLOCKED : GP_CLASS_IDLE;
		a->conf_cap = GP_CONF_LOW;
	} else if (a->child) {
		a->kind = GP_CLASS_UNDECIDED; /* its child decides, and is not followed */
		a->conf_cap = GP_CONF_LOW;
	}
}

void classify_waits(const struct gp_point *l, const struct gp_stuck *stuck,
			   struct gp_activity *a)
{
	classify_threads(l, stuck, a);
	/* A Go program whose goroutines are out of sight (stripped): its
	 * threads are the runtime's, whose waits look the same whether the
	 * program rests or hangs (issue 32): what they lean to is said at
	 * low confidence at most. */
	if (!a->go_decided && a->go.pid && a->go.error[0] && a->conf_cap > GP_CONF_LOW)
		a->conf_cap = GP_CONF_LOW;
}
