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
		if (!*w || stuck->th[i].state == 'R' || stuck->th[i].jvm.role == GP_JVM_RUNTIME)
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
		if (x->state == 'R' || x->jvm.role == GP_JVM_RUNTIME || (py && wait_frame_word(x->wait_frame)
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
	/* A mutex whose owner is no thread of its process: nothing there
	 * will unlock it (read twice, the word unchanged: waitedge.c). */
	if (g->orphan_waiters) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->orphan_lock = true;
		gp_strlcpy(a->orphan_frame, stuck_frame_of(stuck, g->orphan_waiter), sizeof a->orphan_frame);
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

/* CPython's GIL is a lock too (issue 32): threads in take_gil wait for
 * the thread that holds it.  A holder asleep -- in a read, a driver's
 * sync, a futex -- through a flat phase holds every Python thread of its
 * process: a C extension's blocking call that did not release it (what
 * Py_BEGIN_ALLOW_THREADS is for; a recurring PyTorch hang).  The
 * interpreter's own waits never keep it: time.sleep, I/O and lock
 * acquires release it first (Python/ceval_gil.c, drop_gil callers). */
void note_gil(const struct gp_stuck *stuck, struct gp_activity *a)
{
	const struct gp_stuck_thread *h = NULL;
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->n && !h; i++)
		if (stuck->th[i].gil == 'h')
			h = &stuck->th[i];
	if (!h)
		return;
	unsigned n = 0;
	for (size_t i = 0; i < stuck->n; i++)
		if (stuck->th[i].gil == 'w' && stuck->th[i].pid == h->pid)
			n += stuck->th[i].count;
	if (!n)
		return;
	a->gil_tid = h->tid;
	a->gil_pid = h->pid;
	a->gil_state = h->state;
	a->gil_waiters = n;
	gp_strlcpy(a->gil_comm, h->comm, sizeof a->gil_comm);
	gp_strlcpy(a->gil_syscall, h->state == 'R' ? "" : h->syscall, sizeof a->gil_syscall);
	gp_strlcpy(a->gil_frame, h->wait_frame, sizeof a->gil_frame);
	gp_strlcpy(a->gil_user, h->user_frame, sizeof a->gil_user);
}

static bool judge_gil(struct gp_activity *a)
{
	if (!a->gil_tid || (a->gil_state != 'S' && a->gil_state != 'D'))
		return false;
	a->kind = GP_CLASS_HANG_BLOCKED;
	a->behind_gil = true;
	a->conf_cap = GP_CONF_ANY;
	return true;
}

/* A database statement asleep on a condition inside a storage engine's
 * row access or a metadata lock: MariaDB's and MySQL's handler API
 * (sql/handler.h: every row read or write of a statement goes through
 * handler::ha_*), InnoDB's lock_wait (storage/innobase/lock/lock0lock.cc:
 * the row lock wait, a condition with innodb_lock_wait_timeout), the
 * MDL's timed wait (sql/mdl.cc MDL_wait::timed_wait).  A statement
 * waits there for another transaction's lock: its client waits for the
 * answer, so it is blocked however long its timeout (issue 32: InnoDB's
 * row lock, a timed condition, read "idle").  A row read that does I/O
 * sleeps in the disk, not on a condition. */
static bool db_lock_wait(const struct gp_stuck_thread *x)
{
	static const char *const engine[] = { "handler::ha_", "lock_wait", "MDL_wait::timed_wait",
		"srv_suspend_mysql_thread", NULL };
	if (x->state != 'S' || x->nframes < 2 || (!strstr(x->frames[0], "futex")
	    && !strstr(x->frames[0], "cond_") && !strstr(x->frames[1], "cond_")))
		return false;
	for (unsigned k = 1; k < x->nframes; k++)
		for (size_t i = 0; engine[i]; i++)
			if (!strncmp(x->frames[k], engine[i], strlen(engine[i])))
				return true;
	return false;
}

bool judge_db_lock(const struct gp_stuck *stuck, struct gp_activity *a)
{
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->n; i++) {
		const struct gp_stuck_thread *x = &stuck->th[i];
		if (!db_lock_wait(x))
			continue;
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->db_lock_tid = x->tid;
		a->db_lock_n = x->count;
		gp_strlcpy(a->db_lock_comm, x->comm, sizeof a->db_lock_comm);
		for (unsigned k = 1; k < x->nframes && !a->db_lock_frame[0]; k++)
			if (strncmp(x->frames[k], "__", 2) && !strstr(x->frames[k], "cond_")
			    && !strstr(x->frames[k], "+0x") && !strstr(x->frames[k], "+?")) {
				gp_strlcpy(a->db_lock_frame, x->frames[k], sizeof a->db_lock_frame);
				a->db_lock_frame[strcspn(a->db_lock_frame, "(")] = '\0'; /* no arguments */
			}
		/* frames read, a holder not: medium */
		a->conf_cap = GP_CONF_MEDIUM;
		return true;
	}
	return false;
}

/* A JVM's waits as the program means them (model/jvmthreads.h): the
 * JVM's own threads -- compiler, GC, VM thread, service threads, the
 * JDK's Finalizer and Cleaner -- are the runtime at rest and are taken out
 * of the counts (issue 32: 11 of 22 threads in PlatformMonitor::wait
 * decided a deadlock's words); a monitor enter parked with HotSpot's
 * recheck timeout is a lock, Thread.sleep a timer.  Only where the
 * sample's counts hold the snapshot's (it may be a few ticks older). */
static void java_waits(const struct gp_stuck *stuck, struct gp_activity *a)
{
	if (!stuck || stuck->t < 0 || !(stuck->java.runtime + stuck->java.user))
		return;
	const struct gp_stuck_java *j = &stuck->java;
	for (int w = 1; w < GP_WAIT_COUNT; w++)
		if (j->counted[w] > a->w[w])
			return;
	for (int w = 1; w < GP_WAIT_COUNT; w++)
		a->w[w] = a->w[w] - j->counted[w] + j->meant[w];
	/* Timed waits the snapshot could not place, up to the JVM's threads
	 * it could not place: its periodic housekeeping (VM Periodic Task,
	 * G1 Service) caught awake at the snapshot, asleep at the sample (a
	 * sanitizer build's slower stacks read "1 on a condition with a
	 * timeout" beside an ABBA, and no "nothing left to wake them"). */
	unsigned spare = j->unplaced;
	const int timed[] = { GP_WAIT_CONDVAR, GP_WAIT_TIMER };
	for (size_t k = 0; k < 2 && spare; k++) {
		unsigned take = a->w[timed[k]] < spare ? a->w[timed[k]] : spare;
		a->w[timed[k]] -= take;
		spare -= take;
	}
	a->java = true;
	a->jv = *j;
}

/* Every Java thread of the program that sleeps waits inside with no
 * timeout, and no thread waits outside or on a timeout: nothing left in
 * the process can wake them (LockSupport.unpark, a monitor's exit and
 * notify all come from a thread that runs). */
static bool java_stuck(const struct gp_activity *a)
{
	unsigned timed = 0;
	for (int r = 0; r < GP_JVM_ROLES; r++)
		timed += a->jv.timed_n[r];
	return a->java && a->kind == GP_CLASS_HANG_BLOCKED && a->jv.user && !timed
	       && !a->jv.role_n[GP_JVM_SLEEP] && !a->outside && !a->unclear && !a->child;
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
		a->waits_known |= w != GP_WAIT_NONE && l->wait_n[w];
	}
	java_waits(stuck, a);
	for (int w = 0; w < GP_WAIT_COUNT; w++) {
		if (w == GP_WAIT_NONE || !a->w[w])
			continue;
		switch (gp_wait_group((enum gp_wait)w)) {
		case GP_WG_OUTSIDE: a->outside += a->w[w]; break;
		case GP_WG_UNCLEAR: a->unclear += a->w[w]; break;
		case GP_WG_INSIDE: a->inside += a->w[w]; break;
		case GP_WG_CHILD: a->child += a->w[w]; break;
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
				if (stuck->th[i].state != 'R' && stuck->th[i].jvm.role != GP_JVM_RUNTIME
				    && lockish_frame(stuck->th[i].frames[k]))
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
	if (judge_graph(l, stuck, a) || judge_gil(a) || judge_db_lock(stuck, a))
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
	a->java_stuck = java_stuck(a);
	/* Parked and monitor waits are read from the stacks, not their
	 * owners: who holds a Java lock is in the heap (the bundle's JVM
	 * thread dump names it). */
	if (a->java && a->jv.user && a->kind == GP_CLASS_HANG_BLOCKED
	    && (a->conf_cap == GP_CONF_ANY || a->conf_cap > GP_CONF_MEDIUM))
		a->conf_cap = GP_CONF_MEDIUM;
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
