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

/* A flat phase with no effort: what the threads wait for decides.
 * Outside (input, a peer, a timer, a signal): idle.  Inside (locks with
 * nobody runnable or waiting outside to release them, D state, a driver
 * call): blocked.  An eventfd or a timed condition cannot be told from
 * outside: the stacks taken at the hang lean it, at low confidence. */
void classify_waits(const struct gp_point *l, const struct gp_stuck *stuck,
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
	if (l->blocked_d || a->w[GP_WAIT_DRIVER] || a->w[GP_WAIT_DISK]) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->conf_cap = l->blocked_d ? GP_CONF_ANY : GP_CONF_MEDIUM;
	} else if (a->inside && !a->outside) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		/* Locks with nobody waiting outside: who would release them?
		 * Another process through shared memory, at most. */
		a->conf_cap = a->unclear ? GP_CONF_MEDIUM : GP_CONF_ANY;
	} else if (a->outside && a->inside && l->main_lock_pid) {
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
