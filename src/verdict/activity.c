/* Activity: what the process does while it makes no output -- CPU, the
 * busiest threads and their frames, the GPU in the phase. */
#include "config.h"
#include "verdict.h"
#include "verdict_int.h"
#include "parse.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tid_tally {
	int tid, pid;
	unsigned hits;
	double cpu, sys;
	char comm[16], pcomm[16];
};

static void tally(struct tid_tally *t, size_t *nt, size_t cap, int tid, double cpu,
		  double sys, const char *comm, int pid, const char *pcomm)
{
	if (!tid)
		return;
	size_t k = 0;
	while (k < *nt && t[k].tid != tid)
		k++;
	if (k == *nt) {
		if (*nt == cap)
			return;
		memset(&t[k], 0, sizeof t[k]);
		t[k].tid = tid;
		t[k].pid = pid;
		gp_strlcpy(t[k].comm, comm, sizeof t[k].comm);
		gp_strlcpy(t[k].pcomm, pcomm, sizeof t[k].pcomm);
		(*nt)++;
	}
	t[k].hits++;
	t[k].cpu += cpu;
	t[k].sys += sys;
}


static bool has_waits(const struct gp_point *p)
{
	for (int w = 1; w < GP_WAIT_COUNT; w++)
		if (p->wait_n[w])
			return true;
	return false;
}

/* Was the GPU running this process's work through the phase?  No host
 * output while the GPU executes what the process gave it is a wait for
 * the GPU (a long kernel), not a host hang, whatever the host thread
 * does meanwhile: spin in user space (spin sync) or sleep (blocking
 * sync).  Only when a source can tell (NVML per process, a DRM engine
 * that sees the work, KFD occupancy): an unknown GPU is never idle and
 * never busy. */
static void gpu_in_phase(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	for (size_t i = ia + 1; i <= ib; i++) {
		a->samples++;
		a->gw_n[p[i].gw.work < 5 ? p[i].gw.work : 0]++;
		if (p[i].gw.work == GP_GW_SPIN || p[i].gw.work == GP_GW_WORK ||
		    (p[i].gw.work == GP_GW_BUSY && p[i].gw.others)) {
			a->gw = p[i].gw;
			a->gw_pid = p[i].gw_pid;
			gp_strlcpy(a->gw_comm, p[i].gw_comm, sizeof a->gw_comm);
		}
		if (!p[i].gpu_act_known)
			continue;
		a->gpu_known++;
		a->gpu_last_busy = p[i].gpu_act_busy;
		if (p[i].gpu_act_busy) {
			a->gpu_busy++;
			a->gpu_pct = p[i].gpu_act_pct;
			a->gpu_pid = p[i].gpu_act_pid;
			gp_strlcpy(a->gpu_comm, p[i].gpu_act_comm, sizeof a->gpu_comm);
		}
	}
}

/* The GPU's part in a flat phase.  Occupancy is not work (model/gpuwork.h):
 * a kernel of this process resident through the phase but doing no work
 * -- no math, no DRAM traffic, power in the floor's band -- is a spin-wait
 * on the GPU (a collective whose peer never came, a livelock): the hang
 * is there, whatever the host thread does meanwhile (it waits in the
 * driver's sync).  High confidence only where GPM saw the pipes idle.
 * A kernel that works is a wait for the GPU (waiting-gpu; a kernel loop
 * that works makes progress steps and never gets here).  Occupancy with
 * the work unknown: still a wait for the GPU, at low confidence. */
/* A frame of a GPU runtime's own code: where a host thread waits for
 * the GPU (a stripped libcuda reads "libcuda.so.580.159.04+0xf9df00"). */
static bool runtime_frame(const char *f)
{
	static const char *const words[] = { "libcuda.so", "libcudart", "libhsa-runtime", "libamdhip",
		"Synchronize", "synchronize", NULL };
	for (size_t i = 0; words[i]; i++)
		if (strstr(f, words[i]))
			return true;
	return false;
}

/* The stacks taken at the hang put the busy thread inside a GPU runtime
 * (its innermost frame alone may be clock_gettime's vDSO, called by
 * libcuda's spin-wait: the H200's cuStreamSynchronize). */
static bool busy_in_runtime(const struct gp_stuck *stuck, const struct gp_activity *a)
{
	if (runtime_frame(a->frame))
		return true;
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->n; i++) {
		const struct gp_stuck_thread *x = &stuck->th[i];
		if (x->tid != a->tid && !(x->state == 'R' && !a->tid))
			continue;
		for (unsigned k = 0; k < x->nframes; k++)
			if (runtime_frame(x->frames[k]))
				return true;
	}
	return false;
}

static void gpu_judge(const struct gp_point *p, size_t ia, size_t ib, const struct gp_stuck *stuck,
		      struct gp_activity *a)
{
	/* GPU readings come once a second at most (sampler.c): judge the
	 * samples that carry one, and the latest of them. */
	unsigned known = a->samples - a->gw_n[GP_GW_UNKNOWN];
	unsigned resident = a->gw_n[GP_GW_SPIN] + a->gw_n[GP_GW_WORK] + a->gw_n[GP_GW_BUSY];
	size_t k = ib;
	while (k > ia + 1 && p[k].gw.work == GP_GW_UNKNOWN)
		k--;
	enum gp_gpu_work last = (enum gp_gpu_work)p[k].gw.work;
	if (a->gw_n[GP_GW_SPIN] && a->gw_n[GP_GW_SPIN] * 2 >= known && last == GP_GW_SPIN) {
		a->host_kind = a->kind;
		a->kind = GP_CLASS_HANG_GPU_SPIN;
		a->gw = p[k].gw;
		a->gw_pid = p[k].gw_pid;
		gp_strlcpy(a->gw_comm, p[k].gw_comm, sizeof a->gw_comm);
		a->conf_cap = a->gw.from_gpm && a->gw_n[GP_GW_SPIN] * 10 >= known * 9
			      ? GP_CONF_ANY : GP_CONF_MEDIUM;
		return;
	}
	if (resident && resident * 2 >= known && last != GP_GW_IDLE && last != GP_GW_UNKNOWN) {
		a->host_kind = a->kind;
		a->kind = GP_CLASS_WAITING_GPU;
		a->conf_cap = a->gw_n[GP_GW_WORK] * 2 >= resident ? GP_CONF_ANY : GP_CONF_LOW;
		return;
	}
	/* A context and no kernel while the host waits in the driver's sync
	 * (asleep, or spinning inside the runtime): a completion that never
	 * came -- a hang, whatever the host thread burns meanwhile. */
	if (known && a->gw_n[GP_GW_IDLE] * 2 >= known && last == GP_GW_IDLE &&
	    (a->kind == GP_CLASS_HANG_BLOCKED ||
	     (a->kind == GP_CLASS_HANG_BUSY_USER && busy_in_runtime(stuck, a)))) {
		a->host_kind = a->kind;
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->gpu_no_work = true;
		if (a->host_kind == GP_CLASS_HANG_BUSY_USER)
			a->conf_cap = GP_CONF_MEDIUM; /* "in the sync" read from a frame */
		return;
	}
	/* Occupancy alone, from a source with no work reading at all (DRM
	 * engine time, KFD waves): busy in at least half the phase's
	 * samples, the last one among them. */
	if (!known && a->gpu_known && a->gpu_busy * 2 >= a->gpu_known && a->gpu_last_busy) {
		a->host_kind = a->kind;
		a->kind = GP_CLASS_WAITING_GPU;
		a->conf_cap = a->gpu_busy * 10 >= a->gpu_known * 9 ? GP_CONF_MEDIUM : GP_CONF_LOW;
	}
}

/* The threads that were busiest most often in the phase (ia, ib]. */
static void busiest_threads(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	struct tid_tally t[64];
	size_t nt = 0;
	for (size_t i = ia + 1; i <= ib; i++) {
		if (p[i].top_cpu_pct >= BLOCKED_CPU_PCT)
			tally(t, &nt, 64, p[i].top_tid, p[i].top_cpu_pct, p[i].top_sys_pct, p[i].top_comm,
			      p[i].top_pid, p[i].top_pcomm);
		if (p[i].top2_cpu_pct >= BLOCKED_CPU_PCT)
			tally(t, &nt, 64, p[i].top2_tid, p[i].top2_cpu_pct, p[i].top2_sys_pct, p[i].top2_comm,
			      p[i].top2_pid, p[i].top2_pcomm);
	}
	size_t b1 = SIZE_MAX, b2 = SIZE_MAX;
	for (size_t k = 0; k < nt; k++) {
		if (b1 == SIZE_MAX || t[k].hits > t[b1].hits) {
			b2 = b1;
			b1 = k;
		} else if (b2 == SIZE_MAX || t[k].hits > t[b2].hits) {
			b2 = k;
		}
	}
	unsigned samples = (unsigned)(ib - ia);
	if (b1 != SIZE_MAX) {
		a->tid = t[b1].tid;
		a->pid = t[b1].pid;
		gp_strlcpy(a->comm, t[b1].comm, sizeof a->comm);
		gp_strlcpy(a->pcomm, t[b1].pcomm, sizeof a->pcomm);
		a->tcpu = t[b1].cpu / samples;
		a->tsys = t[b1].sys / samples;
	}
	/* A second thread is named when it was as busy as the first (seed
	 * 000: two spinners), not when it merely showed up now and then. */
	if (b2 != SIZE_MAX && t[b2].hits * 2 >= t[b1].hits) {
		a->tid2 = t[b2].tid;
		a->pid2 = t[b2].pid;
		gp_strlcpy(a->comm2, t[b2].comm, sizeof a->comm2);
		gp_strlcpy(a->pcomm2, t[b2].pcomm, sizeof a->pcomm2);
		a->tcpu2 = t[b2].cpu / samples;
	}
}

/* The busiest thread's syscall, most often seen (a thread on a CPU
 * reads "running": those samples say nothing). */
static void busiest_syscall(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	unsigned best = 0;
	for (size_t i = ia + 1; i <= ib; i++) {
		if (p[i].top_tid != a->tid || p[i].top_sc_nr < 0)
			continue;
		unsigned c = 0;
		for (size_t j = ia + 1; j <= ib; j++)
			if (p[j].top_tid == a->tid && p[j].top_sc_nr == p[i].top_sc_nr
			    && p[j].top_sc_arg1 == p[i].top_sc_arg1)
				c++;
		if (c > best) {
			best = c;
			a->have_sc = true;
			a->sc_nr = p[i].top_sc_nr;
			memset(a->sc_args, 0, sizeof a->sc_args);
			a->sc_args[0] = p[i].top_sc_arg0;
			a->sc_args[1] = p[i].top_sc_arg1;
		}
	}
}

/* The busiest threads' hot frames: the latest the stacks module saw. */
static void hot_frames(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	for (size_t i = ia + 1; i <= ib; i++) {
		if (p[i].top_tid == a->tid && p[i].top_frame[0])
			gp_strlcpy(a->frame, p[i].top_frame, sizeof a->frame);
		if (p[i].top2_tid == a->tid && p[i].top2_frame[0])
			gp_strlcpy(a->frame, p[i].top2_frame, sizeof a->frame);
		if (a->tid2 && p[i].top_tid == a->tid2 && p[i].top_frame[0])
			gp_strlcpy(a->frame2, p[i].top_frame, sizeof a->frame2);
		if (a->tid2 && p[i].top2_tid == a->tid2 && p[i].top2_frame[0])
			gp_strlcpy(a->frame2, p[i].top2_frame, sizeof a->frame2);
	}
}

/* Inputs that wait unanswered (issue 32, DESIGN "Progress is work
 * answered"): connections in the tree's accept queues or bytes unread in
 * its sockets in every sample of at least half the flat phase, to its end.
 * A server at rest has none; one whose event loop sleeps outside its
 * selector (a blocking call on the loop) lets them pile up, whatever its
 * threads' states say: a thread asleep on a timer is no rest then.  A
 * backlog that grew is certain; a standing one medium (a reader may come). */
static void inputs_waiting(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	/* Requests read and never answered, more and more of them (a
	 * handler per connection, each on a batcher that died): a server
	 * holding a steady few (long polls) is at rest, one whose pile grows
	 * for half the phase with the oldest that old is not. */
	const struct gp_point *l = &p[ib];
	if ((l->have & GP_PT_SOCK) && l->sock_pending > p[ia].sock_pending
	    && l->sock_pending_s >= 0.5 * a->dur
	    && (a->kind == GP_CLASS_IDLE || a->kind == GP_CLASS_UNDECIDED)) {
		a->in_pending = l->sock_pending;
		a->in_pending_s = l->sock_pending_s;
		a->inputs_since = l->t - l->sock_pending_s;
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->unanswered = true;
		a->conf_cap = GP_CONF_MEDIUM;
	}
	size_t k = ib + 1;
	while (k > ia && (p[k - 1].have & GP_PT_SOCK) && (p[k - 1].sock_backlog || p[k - 1].sock_unread))
		k--;
	if (k >= ib)
		return;
	a->in_backlog = p[ib].sock_backlog;
	a->in_unread = p[ib].sock_unread;
	if (!a->in_pending)
		a->inputs_since = p[k].t;
	if (p[ib].t - p[k].t < 0.5 * a->dur)
		return;
	if (a->kind != GP_CLASS_IDLE && a->kind != GP_CLASS_UNDECIDED && !a->unanswered)
		return;
	a->kind = GP_CLASS_HANG_BLOCKED;
	a->unanswered = true;
	a->conf_cap = p[ib].sock_backlog > p[k].sock_backlog || p[ib].sock_unread > p[k].sock_unread
		      ? GP_CONF_ANY : GP_CONF_MEDIUM;
}

/* Where the server holding the inputs is instead of taking them: its
 * main thread's wait frame in the stacks (issue 32: "the loop thread
 * asleep in reload_model, not in its selector"). */
static void inputs_server(const struct gp_point *l, const struct gp_stuck *stuck,
			  struct gp_activity *a)
{
	a->in_pid = l->sock_wait_pid;
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->nproc && a->in_pid; i++) {
		const struct gp_stuck_proc *sp = &stuck->proc[i];
		if (sp->pid != a->in_pid || !sp->lead || sp->state == 'R')
			continue;
		gp_strlcpy(a->in_comm, sp->comm, sizeof a->in_comm);
		gp_strlcpy(a->in_main_frame, sp->user_frame[0] ? sp->user_frame : sp->wait_frame,
			   sizeof a->in_main_frame);
	}
}

/* The first sample of the phase in which a cumulative counter of the
 * point (at byte offset off) grew, when it grew in 3 samples or more of
 * it; 0 otherwise.  A retry seen once or twice is no loop. */
static size_t grew_thrice(const struct gp_point *p, size_t ia, size_t ib, size_t off)
{
	unsigned samples = 0;
	size_t first = 0;
	for (size_t i = ia > 0 ? ia : 1; i <= ib; i++) {
		uint64_t now, before;
		memcpy(&now, (const char *)&p[i] + off, sizeof now);
		memcpy(&before, (const char *)&p[i - 1] + off, sizeof before);
		if (now > before && !samples++)
			first = i;
	}
	return samples >= 3 ? first : 0;
}

/* Connects failing in at least 3 samples of the phase, none taking in
 * between (a client whose server is gone, a retry loop dialing a port
 * nothing listens on): retried, not at rest. */
static void connects_in_phase(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	size_t first = grew_thrice(p, ia, ib, offsetof(struct gp_point, conn_failed));
	if (!first)
		return;
	const struct gp_point *l = &p[ib];
	a->conn_retrying = true;
	a->conn_n = l->conn_failed - p[first - 1].conn_failed;
	a->conn_since = p[first - 1].t;
	a->conn_errno = l->conn_errno;
	a->conn_pid = l->conn_fail_pid;
	gp_strlcpy(a->conn_to, l->conn_to, sizeof a->conn_to);
	gp_strlcpy(a->conn_comm, l->conn_comm, sizeof a->conn_comm);
}

/* Non-blocking locks refused in at least 3 samples of the phase: a
 * thread polling a lock another process holds (SQLite's busy handler:
 * sleep, fcntl F_SETLK refused, sleep) is not at rest but retrying, and
 * the lock's holder is what it waits for. */
static void locks_in_phase(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	size_t first = grew_thrice(p, ia, ib, offsetof(struct gp_point, lock_refused));
	if (!first)
		return;
	const struct gp_point *l = &p[ib];
	a->lock_retrying = true;
	a->lock_n = l->lock_refused - p[first - 1].lock_refused;
	a->lock_since = p[first - 1].t;
	a->lock_pid = l->lock_pid;
	a->lock_holder = l->lock_holder;
	gp_strlcpy(a->lock_comm, l->lock_comm, sizeof a->lock_comm);
	gp_strlcpy(a->lock_holder_comm, l->lock_holder_comm, sizeof a->lock_holder_comm);
	gp_strlcpy(a->lock_file, l->lock_file, sizeof a->lock_file);
}

/* Deaths in the tree during the flat phase, or in the interval that
 * ended the progress before it (issue 32): a process killed by a signal
 * no one asked for is named, and turns rest into a hang -- the survivors
 * wait for what it would have done (an engine SIGKILLed, its frontend
 * holding requests it can no longer answer).  Children of one command
 * exiting non-zero in three samples or more are a retry loop: a hang
 * that is retrying, never rest. */
static void deaths_in_phase(const struct gp_point *p, size_t ia, size_t ib, struct gp_activity *a)
{
	size_t from = ia > 0 ? ia - 1 : 0;
	/* The last thread to end: handlers that answered and left end
	 * before the hang; the batcher whose death starts it ends last
	 * (batcher-c named a handler that had ended at +1 s, the batcher at
	 * +3 s went unsaid). */
	for (size_t i = from; i <= ib; i++)
		if (p[i].ended_tid) {
			a->ended_tid = p[i].ended_tid;
			a->ended_pid = p[i].ended_pid;
			a->ended_t = p[i].t;
			gp_strlcpy(a->ended_comm, p[i].ended_comm, sizeof a->ended_comm);
		}
	for (size_t i = from; i <= ib; i++)
		if (p[i].died_killed && p[i].death_signal) {
			a->dead_pid = p[i].death_pid;
			a->dead_signal = p[i].death_signal;
			a->dead_t = p[i].t;
			a->dead_before = p[i].death_before;
			gp_strlcpy(a->dead_comm, p[i].death_comm, sizeof a->dead_comm);
		}
	const struct gp_point *last = NULL;
	for (size_t i = ib + 1; i-- > ia && !last;)
		if (p[i].died_nonzero && p[i].death_status)
			last = &p[i];
	if (last) {
		unsigned n = 0, samples = 0;
		double since = last->t;
		for (size_t i = ia; i <= ib; i++)
			/* One command: the same status, from the same parent (a
			 * child's name is not always known: the connector names
			 * none, and one that lived between two samples was never
			 * read) */
			if (p[i].died_nonzero && p[i].death_status == last->death_status
			    && p[i].death_ppid == last->death_ppid) {
				n += p[i].died_nonzero;
				samples++;
				if (p[i].t < since)
					since = p[i].t;
				if (strcmp(p[i].death_comm, "?") && p[i].death_comm[0])
					gp_strlcpy(a->retry_comm, p[i].death_comm, sizeof a->retry_comm);
			}
		if (samples >= 3) {
			a->retrying = true;
			a->retry_n = n;
			a->retry_status = last->death_status;
			a->retry_since = since;
			a->retry_ppid = last->death_ppid;
		}
	}
	connects_in_phase(p, ia, ib, a);
	locks_in_phase(p, ia, ib, a);
	bool gpu = a->kind == GP_CLASS_WAITING_GPU || a->kind == GP_CLASS_HANG_GPU_SPIN;
	bool retried = a->retrying || a->conn_retrying || a->lock_retrying;
	if (gpu || (a->kind != GP_CLASS_IDLE && a->kind != GP_CLASS_UNDECIDED && !retried))
		return;
	if (retried) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->conf_cap = a->retry_n >= 5 || a->conn_n >= 5 || a->lock_n >= 5 ? GP_CONF_ANY
			      : GP_CONF_MEDIUM;
	} else if (a->dead_pid) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->dead_decided = true;
		a->conf_cap = GP_CONF_MEDIUM;
	}
}

void measure_activity(const struct gp_point *p, size_t n, double from,
			     long page_size, const struct gp_stuck *stuck, struct gp_activity *a)
{
	memset(a, 0, sizeof *a);
	a->wait_sc_nr = -2;
	a->conf_cap = GP_CONF_ANY;
	a->host_kind = GP_CLASS_COUNT;
	size_t ia = index_at(p, n, from), ib = n - 1;
	if (ia == ib && ia > 0)
		ia--; /* one interval at least */
	a->dur = p[ib].t - p[ia].t;
	if (a->dur <= 0)
		a->dur = 1e-9;
	double cpu = (p[ib].utime + p[ib].stime) - (p[ia].utime + p[ia].stime);
	a->cpu_pct = 100.0 * cpu / a->dur;
	a->sys_pct = 100.0 * (p[ib].stime - p[ia].stime) / a->dur;
	if (a->cpu_pct < BLOCKED_CPU_PCT)
		a->kind = GP_CLASS_HANG_BLOCKED; /* until the waits say otherwise */
	else if (a->sys_pct >= 0.5 * a->cpu_pct)
		a->kind = GP_CLASS_HANG_BUSY_KERNEL;
	else
		a->kind = GP_CLASS_HANG_BUSY_USER;

	busiest_threads(p, ia, ib, a);
	busiest_syscall(p, ia, ib, a);
	hot_frames(p, ia, ib, a);
	const struct gp_point *l = &p[ib];
	a->procs = l->procs;
	gpu_in_phase(p, ia, ib, a);
	a->same_arg0 = l->common_sc_same_arg0;
	note_gil(stuck, a);
	if (a->cpu_pct < BLOCKED_CPU_PCT) {
		/* The waits of the latest sample that recorded any: a process's
		 * last sample, taken as it exits, may hold none. */
		size_t k = ib;
		while (k > ia + 1 && !has_waits(&p[k]))
			k--;
		classify_waits(&p[k], stuck, a);
		inputs_waiting(p, ia, ib, a);
		if (a->unanswered)
			inputs_server(&p[ib], stuck, a);
	}
	else if (stuck && stuck->t >= 0) {
		a->stuck_t = stuck->t;
		a->stuck_n = (unsigned)stuck->total;
		a->common_count = gp_stuck_common_frame(stuck, a->common_frame, sizeof a->common_frame);
		stuck_waits(stuck, a);
		/* A thread that burns its CPU in sched_yield polls, it does
		 * not compute: a spin-wait.  Beside a database statement
		 * asleep on a lock, the statement's wait is the story (issue
		 * 32: MariaDB's purge task yields in a loop for the metadata
		 * lock an ALTER TABLE waits for; read "busy in user space"). */
		if ((a->kind == GP_CLASS_HANG_BUSY_USER || a->kind == GP_CLASS_HANG_BUSY_KERNEL)
		    && strstr(a->frame, "sched_yield") && judge_db_lock(stuck, a))
			a->yield_spin = true;
	}
	gpu_judge(p, ia, ib, stuck, a);
	deaths_in_phase(p, ia, ib, a);
	/* Requests read and never answered while every thread sleeps, the
	 * untimed lock and condition waiters at least as many as they, none
	 * on a timer or a timed condition to wake and answer, no thread ended
	 * in the trace to name: the thread that would signal them is not
	 * among the living (a batcher that died before the trace), or waits
	 * itself.  The requests that kept coming woke none of them. */
	a->waiters_orphaned = a->unanswered && a->in_pending && !a->ended_tid
			      && a->cpu_pct < BLOCKED_CPU_PCT && a->w[GP_WAIT_LOCK] >= a->in_pending
			      && !a->w[GP_WAIT_TIMER] && !a->w[GP_WAIT_CONDVAR];
	gp_strlcpy(a->wchan, l->common_wchan, sizeof a->wchan);
	a->wchan_count = l->common_wchan_count;
	a->threads = l->threads;
	a->wait_sc_nr = l->common_sc_nr;
	a->wait_sc_count = l->common_sc_count;
	a->wait_sc_args[0] = l->common_sc_arg0;
	a->wait_sc_args[1] = l->common_sc_arg1;
	double ps = page_size > 0 ? (double)page_size : 4096.0;
	if ((p[ia].have & GP_PT_SYS_WB) && (l->have & GP_PT_SYS_WB)) {
		a->have_wb = true;
		a->dirtied = (double)(l->sys_dirtied - p[ia].sys_dirtied) * ps / a->dur;
		a->written = (double)(l->sys_written - p[ia].sys_written) * ps / a->dur;
	}
	if ((p[ia].have & GP_PT_SYS_RECLAIM) && (l->have & GP_PT_SYS_RECLAIM)) {
		a->have_reclaim = true;
		a->reclaim = (double)(l->sys_pgsteal_file - p[ia].sys_pgsteal_file) * ps / a->dur;
	}
}
