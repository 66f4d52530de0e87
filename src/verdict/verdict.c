#include "config.h"
#include "verdict.h"
#include "waits.h"
#include "parse.h"
#include "syscalls.h"
#include "units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Noise floors: what counts as one step of output.  Small enough that a
 * trickle adds up (the baseline only moves when a step is counted, so
 * 100 KiB/s of growth is still seen every few seconds), large enough
 * that allocator jitter and a status-file read now and then are not
 * mistaken for a load making headway. */
#define FLOOR_MEM ((double)(256u << 10))
#define FLOOR_IO ((double)(64u << 10))
#define FLOOR_ENGINE_NS 1e6
/* Under this share of one core over the judged phase, nothing is busy. */
#define BLOCKED_CPU_PCT 5.0
/* Recent output rate under 1/SLOW_FACTOR of the trace's own peak: slow. */
#define SLOW_FACTOR 10.0

enum {
	M_RSS_FILE, M_RSS_ANON, M_VM_PIN, M_GPU, M_ENGINE, M_RCHAR, M_WCHAR, M_THREADS, M_COUNT
};
static const char *const metric_label[M_COUNT] = {
	"RssFile", "RssAnon", "VmPin", "GPU memory", "GPU engine time",
	"read()", "write()", "threads or processes",
};

struct step {
	bool any;
	double bytes;              /* output bytes counted in this interval */
	double by_metric[M_COUNT];
	unsigned metrics;          /* bit per metric */
};

static bool gpu_seen(const struct gp_point *p)
{
	return p->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML);
}

static double metric_value(const struct gp_point *p, int m)
{
	switch (m) {
	case M_RSS_FILE: return (double)p->rss_file;
	case M_RSS_ANON: return (double)p->rss_anon;
	case M_VM_PIN: return (double)(p->vm_pin > p->vm_lck ? p->vm_pin : p->vm_lck);
	case M_GPU: return (double)p->gpu_bytes;
	case M_ENGINE: return (double)p->gpu_engine_ns;
	case M_RCHAR: return (double)p->io_rchar;
	case M_WCHAR: return (double)p->io_wchar;
	default: return 0;
	}
}

/* Which intervals made progress.  Counters (read/write bytes, GPU engine
 * time) count growth.  Memory counts the level it holds: at sample i, the
 * lowest value from i to the end of the trace.  A load raises that level
 * and keeps it; a restart loop (populate, discard, populate: the demo's
 * kernel-loop, seed 004's import) swings up and down, and catching it
 * near the top of a swing is no output, since it falls back later.  A
 * plain "new high" would count such catches: record values of a random
 * swing keep coming (about ln n of them in n samples), and so does a
 * higher minimum over the shorter suffixes near the end.  So a memory
 * rise counts when the level held from then on stands above every earlier
 * value: a new plateau.  A rise seen only in the final sample is not
 * output yet (nothing holds it).
 * Each metric's baseline moves only when a step is counted. */
static bool memory_metric(int m)
{
	return m == M_RSS_FILE || m == M_RSS_ANON || m == M_VM_PIN || m == M_GPU;
}

static void find_steps(const struct gp_point *p, size_t n, double hold_s, struct step *st)
{
	double base[M_COUNT];
	for (int m = 0; m < M_COUNT; m++)
		base[m] = metric_value(&p[0], m);
	memset(st, 0, n * sizeof *st);
	/* Per memory metric: held[i], the lowest value from i to the end, and
	 * high[i], the highest value before i. */
	double *held = malloc(2 * n * M_COUNT * sizeof *held);
	double *high = held ? held + n * M_COUNT : NULL;
	for (int m = 0; held && m < M_COUNT; m++) {
		/* The level held for hold_s (--hang-after) after i, not to the
		 * end of the trace: memory a program frees later (a loader
		 * that unmaps its file, a process's teardown) was still loaded
		 * output; a restart loop swings within that window. */
		double hi = 0;
		for (size_t i = 0; i < n; i++) {
			double lo = INFINITY;
			for (size_t j = i; j < n && (j == i || p[j].t <= p[i].t + hold_s); j++) {
				double v = metric_value(&p[j], m);
				if (v < lo)
					lo = v;
			}
			held[i * M_COUNT + m] = lo;
		}
		for (size_t i = 0; i < n; i++) {
			high[i * M_COUNT + m] = hi;
			if (metric_value(&p[i], m) > hi)
				hi = metric_value(&p[i], m);
		}
	}
	for (size_t i = 1; i < n; i++) {
		for (int m = 0; m < M_THREADS; m++) {
			if ((m == M_GPU || m == M_ENGINE) && !gpu_seen(&p[i]))
				continue;
			if ((m == M_RCHAR || m == M_WCHAR) && !(p[i].have & GP_PT_IO))
				continue;
			double v = metric_value(&p[i], m);
			bool counter = m == M_ENGINE || m == M_RCHAR || m == M_WCHAR;
			if (counter && v < base[m]) {
				base[m] = v; /* reset (a re-opened DRM client): start again */
				continue;
			}
			double floor = m == M_ENGINE ? FLOOR_ENGINE_NS
				       : counter ? FLOOR_IO : FLOOR_MEM;
			if (memory_metric(m)) {
				if (i + 1 == n || !held)
					continue;
				/* the held level, standing above every earlier value */
				v = held[i * M_COUNT + m];
				if (v < high[i * M_COUNT + m] + floor)
					continue;
			}
			if (v >= base[m] + floor) {
				if (m != M_ENGINE) {
					st[i].bytes += v - base[m];
					st[i].by_metric[m] += v - base[m];
				}
				st[i].metrics |= 1u << m;
				st[i].any = true;
				base[m] = v;
			}
		}
		if (p[i].threads_created || p[i].procs_created) {
			st[i].metrics |= 1u << M_THREADS;
			st[i].any = true;
		}
	}
	free(held);
}

static size_t index_at(const struct gp_point *p, size_t n, double t)
{
	size_t i = 0;
	while (i + 1 < n && p[i].t < t - 1e-9)
		i++;
	return i;
}

static double median_interval(const struct gp_point *p, size_t n)
{
	if (n < 2)
		return 1.0;
	double *d = malloc((n - 1) * sizeof *d);
	if (!d)
		return (p[n - 1].t - p[0].t) / (double)(n - 1);
	for (size_t i = 1; i < n; i++)
		d[i - 1] = p[i].t - p[i - 1].t;
	/* insertion sort: fine for the sizes at hand, and no qsort callback */
	for (size_t i = 1; i < n - 1; i++)
		for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
			double x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	double m = d[(n - 1) / 2];
	free(d);
	return m;
}

/* Appends to a fixed buffer; silently stops at its end. */
static void cat(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

/* ---- activity: what the process does while it makes no progress ---- */

struct activity {
	double dur, cpu_pct, sys_pct;
	const char *kind;          /* hang-blocked, hang-busy-kernel, hang-busy-user, idle, undecided */
	const char *conf_cap;      /* the highest confidence the waits allow, NULL: any */
	/* What the sleeping threads wait for (model/waits.h), in the last sample. */
	unsigned w[GP_WAIT_COUNT];
	unsigned outside, unclear, inside, child;
	bool waits_known;          /* the result recorded them (format 2) */
	bool lockish;              /* the stuck threads' frames name a lock */
	int main_lock_pid;         /* a main thread waits on a lock */
	bool main_outside;         /* the target's main thread waits outside */
	char main_frame[64];       /* that main thread's wait frame, from the stacks */
	char waits3[3][64];        /* the first distinct wait frames of the stacks */
	unsigned nwaits3;
	char common_frame[64];
	unsigned common_count, stuck_n;
	double stuck_t;
	int pid, pid2;             /* the busy threads' processes (a tree) */
	char pcomm[16], pcomm2[16];
	uint32_t procs;
	int child_wait_pid, inside_pid, outside_pid;
	char child_wait_comm[16], inside_comm[16], outside_comm[16];
	bool same_arg0;
	/* The GPU in the phase (waiting-gpu) */
	unsigned gpu_known, gpu_busy, samples;
	bool gpu_last_busy;        /* the latest sample that measured it: busy */
	float gpu_pct;
	int gpu_pid;
	char gpu_comm[16];
	const char *host_kind;     /* what the host did meanwhile (the class it would be) */
	int tid, tid2;
	char comm[16], comm2[16];
	char frame[64], frame2[64];   /* their hot frames, when stacks were taken */
	double tcpu, tsys, tcpu2;
	bool have_sc;
	int64_t sc_nr;
	uint64_t sc_args[6];
	char wchan[32];
	uint32_t wchan_count, threads;
	int64_t wait_sc_nr;
	uint64_t wait_sc_args[6];
	uint32_t wait_sc_count;
	double dirtied, written, reclaim; /* bytes/s, system */
	bool have_wb, have_reclaim;
	const char *machine;       /* whose syscall numbers (gp_verdict_opts) */
};

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

static void classify_waits(const struct gp_point *l, const struct gp_stuck *stuck,
			   struct activity *a);
static void stuck_waits(const struct gp_stuck *stuck, struct activity *a);

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
static void gpu_in_phase(const struct gp_point *p, size_t ia, size_t ib, struct activity *a)
{
	for (size_t i = ia + 1; i <= ib; i++) {
		a->samples++;
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

/* The threads that were busiest most often in the phase (ia, ib]. */
static void busiest_threads(const struct gp_point *p, size_t ia, size_t ib, struct activity *a)
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
static void busiest_syscall(const struct gp_point *p, size_t ia, size_t ib, struct activity *a)
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
static void hot_frames(const struct gp_point *p, size_t ia, size_t ib, struct activity *a)
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

static void measure_activity(const struct gp_point *p, size_t n, double from,
			     long page_size, const struct gp_stuck *stuck, struct activity *a)
{
	memset(a, 0, sizeof *a);
	a->wait_sc_nr = -2;
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
		a->kind = "hang-blocked"; /* until the waits say otherwise */
	else if (a->sys_pct >= 0.5 * a->cpu_pct)
		a->kind = "hang-busy-kernel";
	else
		a->kind = "hang-busy-user";

	busiest_threads(p, ia, ib, a);
	busiest_syscall(p, ia, ib, a);
	hot_frames(p, ia, ib, a);
	const struct gp_point *l = &p[ib];
	a->procs = l->procs;
	gpu_in_phase(p, ia, ib, a);
	a->same_arg0 = l->common_sc_same_arg0;
	if (a->cpu_pct < BLOCKED_CPU_PCT) {
		/* The waits of the latest sample that recorded any: a process's
		 * last sample, taken as it exits, may hold none. */
		size_t k = ib;
		while (k > ia + 1 && !has_waits(&p[k]))
			k--;
		classify_waits(&p[k], stuck, a);
	}
	else if (stuck && stuck->t >= 0) {
		a->stuck_t = stuck->t;
		a->stuck_n = (unsigned)stuck->total;
		a->common_count = gp_stuck_common_frame(stuck, a->common_frame, sizeof a->common_frame);
		stuck_waits(stuck, a);
	}
	/* Busy in at least half the phase's samples, the last one among
	 * them: the GPU still runs the work the host waits for. */
	if (a->gpu_known && a->gpu_busy * 2 >= a->gpu_known && a->gpu_last_busy) {
		a->host_kind = a->kind;
		a->kind = "waiting-gpu";
		a->conf_cap = a->gpu_busy * 10 >= a->gpu_known * 9 ? NULL : "medium";
	}
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

/* The distinct wait frames of the first sleeping threads of the stacks. */
static void stuck_waits(const struct gp_stuck *stuck, struct activity *a)
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
static void classify_waits(const struct gp_point *l, const struct gp_stuck *stuck,
			   struct activity *a)
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
		a->kind = "hang-blocked";
		return;
	}
	if (l->blocked_d || a->w[GP_WAIT_DRIVER] || a->w[GP_WAIT_DISK]) {
		a->kind = "hang-blocked";
		a->conf_cap = l->blocked_d ? NULL : "medium";
	} else if (a->inside && !a->outside) {
		a->kind = "hang-blocked";
		/* Locks with nobody waiting outside: who would release them?
		 * Another process through shared memory, at most. */
		a->conf_cap = a->unclear ? "medium" : NULL;
	} else if (a->outside && a->inside && l->main_lock_pid) {
		/* Locks beside waits for the outside, and a main thread among
		 * the lock waiters: the program's own flow is stuck (a join, an
		 * acquire); the outside waits are helpers' (a runtime's event
		 * thread). */
		a->kind = "hang-blocked";
		a->main_lock_pid = l->main_lock_pid;
		for (size_t i = 0; stuck && i < stuck->n; i++)
			if (stuck->th[i].tid == l->main_lock_pid)
				gp_strlcpy(a->main_frame, stuck->th[i].wait_frame, sizeof a->main_frame);
		a->conf_cap = a->lockish ? "medium" : "low";
	} else if (a->outside) {
		a->kind = "idle";
		enum gp_wait_group mg = gp_wait_group((enum gp_wait)l->root_main_wait);
		/* With the main thread waiting outside, the threads on locks
		 * or conditions are what worker pools look like at rest. */
		a->conf_cap = a->inside ? (mg == GP_WG_OUTSIDE ? "medium" : "low")
			      : a->unclear ? "medium" : NULL;
		a->main_outside = mg == GP_WG_OUTSIDE && a->inside;
	} else if (a->unclear) {
		a->kind = a->lockish ? "hang-blocked" : "idle";
		a->conf_cap = "low";
	} else if (a->child) {
		a->kind = "undecided"; /* its child decides, and is not followed */
		a->conf_cap = "low";
	}
}

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
static void describe_waits(char *buf, size_t cap, const struct activity *a)
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
		cat(buf, cap, "%s%u %s", firstw ? "threads waiting: " : ", ", c, wait_words(order[i]));
		firstw = false;
	}
}

static void name_thread(char *buf, size_t cap, const struct activity *a, int tid,
			const char *comm, int pid, const char *pcomm)
{
	if (a->procs > 1 && pid && pid == tid)
		cat(buf, cap, "pid %d (%s)", pid, pcomm);
	else if (a->procs > 1 && pid)
		cat(buf, cap, "thread %d (%s) of pid %d (%s)", tid, comm, pid, pcomm);
	else
		cat(buf, cap, "thread %d (%s)", tid, comm);
}

/* "thread 4290 (hal-memory) busy in the kernel, 99% CPU (98% system), in
 * ioctl(...); system dirtied 532 MiB/s ~ written back 529 MiB/s, no file
 * reclaim" */
/* The stacks taken at the hang: the frame most threads wait in, or, when
 * none is shared, the frames of the first few (an ABBA pair's two
 * acquire lines). */
static void describe_stuck(char *buf, size_t cap, const struct activity *a)
{
	if (a->common_count >= 2 && a->common_frame[0]) {
		cat(buf, cap, "; stacks at +%.1f s: %u of %u threads in %s", a->stuck_t,
		    a->common_count, a->stuck_n, a->common_frame);
	} else if (a->nwaits3) {
		cat(buf, cap, "; stacks at +%.1f s: threads in ", a->stuck_t);
		for (unsigned i = 0; i < a->nwaits3; i++)
			cat(buf, cap, "%s%s", i ? ", " : "", a->waits3[i]);
	}
}

static void describe_gpu_wait(char *buf, size_t cap, const struct activity *a)
{
	cat(buf, cap, "the GPU runs this process's work: ");
	if (a->procs > 1 && a->gpu_pid)
		cat(buf, cap, "pid %d (%s) ", a->gpu_pid, a->gpu_comm);
	cat(buf, cap, "%.0f%% busy at the last sample, busy in %u of %u samples that measured it; "
	    "the host waits", a->gpu_pct, a->gpu_busy, a->gpu_known);
	if (a->host_kind && strcmp(a->host_kind, "hang-busy-user") == 0 && a->tid) {
		cat(buf, cap, ", ");
		name_thread(buf, cap, a, a->tid, a->comm, a->pid, a->pcomm);
		cat(buf, cap, " spinning at %.0f%% CPU", a->tcpu);
		if (a->frame[0])
			cat(buf, cap, " in %s", a->frame);
		cat(buf, cap, " (a spin wait)");
	} else if (a->host_kind && strcmp(a->host_kind, "hang-busy-kernel") == 0 && a->tid) {
		cat(buf, cap, ", ");
		name_thread(buf, cap, a, a->tid, a->comm, a->pid, a->pcomm);
		cat(buf, cap, " busy in the kernel at %.0f%% CPU", a->tcpu);
	} else {
		cat(buf, cap, " asleep (%.1f%% CPU)", a->cpu_pct);
		if (a->waits_known) {
			cat(buf, cap, "; ");
			describe_waits(buf, cap, a);
		}
	}
	describe_stuck(buf, cap, a);
	cat(buf, cap, ": a long GPU job, not a host hang");
}

static void describe_activity(char *buf, size_t cap, const struct activity *a)
{
	char tmp[160];
	if (!strcmp(a->kind, "waiting-gpu")) {
		describe_gpu_wait(buf, cap, a);
		return;
	}
	bool busy = !strcmp(a->kind, "hang-busy-kernel") || !strcmp(a->kind, "hang-busy-user");
	if (!busy) {
		cat(buf, cap, "threads asleep, %.1f%% CPU", a->cpu_pct);
		if (a->waits_known) {
			cat(buf, cap, "; ");
			describe_waits(buf, cap, a);
		} else if (a->wchan_count) {
			cat(buf, cap, "; %u of %u threads in %s", a->wchan_count, a->threads, a->wchan);
		}
		const char *scn = a->wait_sc_nr >= 0 ? gp_syscall_name_on(a->machine, a->wait_sc_nr) : NULL;
		/* restart_syscall: a sleep resumed after a stop; its own
		 * arguments are gone, so it names nothing. */
		if (a->wait_sc_nr >= 0 && a->wait_sc_count && !(scn && !strcmp(scn, "restart_syscall"))) {
			gp_syscall_describe_on(tmp, sizeof tmp, a->machine, a->wait_sc_nr, a->wait_sc_args);
			if (a->wait_sc_count > 1 && !a->same_arg0) {
				/* Grouped by call and operation: the addresses or fds
				 * differ, so none of them is named. */
				char *paren = strchr(tmp, '(');
				if (paren)
					*paren = '\0';
				cat(buf, cap, "; %u in %s, each on its own %s", a->wait_sc_count, tmp,
				    strcmp(tmp, "futex") ? "descriptor" : "futex word");
			} else {
				cat(buf, cap, "; %u in %s", a->wait_sc_count, tmp);
			}
		}
		if (a->procs > 1 && a->inside && a->inside_pid)
			cat(buf, cap, "; the inside waits are in pid %d (%s)", a->inside_pid, a->inside_comm);
		if (a->child_wait_pid && !strcmp(a->kind, "undecided"))
			cat(buf, cap, "; pid %d (%s) waits for a child that is not followed "
			    "(--no-children)", a->child_wait_pid, a->child_wait_comm);
		else if (a->child_wait_pid && a->procs > 1)
			cat(buf, cap, "; pid %d (%s) waits for its children", a->child_wait_pid,
			    a->child_wait_comm);
		if (a->procs > 1 && a->outside && a->outside_pid && !strcmp(a->kind, "idle"))
			cat(buf, cap, "; the waits for the outside are in pid %d (%s)", a->outside_pid,
			    a->outside_comm);
		describe_stuck(buf, cap, a);
		if (a->main_lock_pid) {
			cat(buf, cap, "; the main thread of pid %d waits on a lock with no timeout",
			    a->main_lock_pid);
			if (a->main_frame[0])
				cat(buf, cap, " in %s", a->main_frame);
			cat(buf, cap, ": the program's own flow is blocked");
		}
		else if (!strcmp(a->kind, "idle") && a->main_outside)
			cat(buf, cap, "; the main thread waits outside; the threads on locks or "
			    "conditions look like a worker pool at rest");
		else if (!strcmp(a->kind, "idle") && a->inside)
			cat(buf, cap, "; the threads on locks are idle if a thread that waits outside "
			    "will release them, deadlocked if not: see the stacks");
		else if (a->conf_cap && !strcmp(a->conf_cap, "low") && a->unclear && !a->outside
			 && !a->inside)
			cat(buf, cap, "; from outside, a wakeup that comes from inside the process "
			    "and one from outside look alike%s",
			    a->lockish ? ": the stacks name a lock" : ": the stacks name no lock");
		return;
	}
	bool kernel = !strcmp(a->kind, "hang-busy-kernel");
	if (a->tid) {
		name_thread(buf, cap, a, a->tid, a->comm, a->pid, a->pcomm);
		cat(buf, cap, " busy in %s, %.0f%% CPU (%.0f%% system)",
		    kernel ? "the kernel" : "user space", a->tcpu, a->tsys);
		if (a->frame[0])
			cat(buf, cap, " at %s", a->frame);
		if (a->tid2) {
			cat(buf, cap, ", and ");
			name_thread(buf, cap, a, a->tid2, a->comm2, a->pid2, a->pcomm2);
			cat(buf, cap, ", %.0f%%", a->tcpu2);
			if (a->frame2[0])
				cat(buf, cap, " at %s", a->frame2);
		}
	} else {
		cat(buf, cap, "busy in %s, %.0f%% CPU (%.0f%% system)",
		    kernel ? "the kernel" : "user space", a->cpu_pct, a->sys_pct);
	}
	if (a->have_sc) {
		gp_syscall_describe_on(tmp, sizeof tmp, a->machine, a->sc_nr, a->sc_args);
		cat(buf, cap, ", in %s", tmp);
	}
	if (!kernel)
		/* From outside, a loop that computes and one that polls look
		 * alike: CPU in user space and no output either way. */
		cat(buf, cap, ": computing or spinning (no output seen)");
	if (kernel && a->have_wb && (a->dirtied > (1 << 20) || a->written > (1 << 20))) {
		char d[32], w[32];
		gp_fmt_rate(d, sizeof d, a->dirtied);
		gp_fmt_rate(w, sizeof w, a->written);
		cat(buf, cap, "; system dirtied %s, written back %s", d, w);
		if (a->have_reclaim) {
			if (a->reclaim < 0.05 * a->written) {
				cat(buf, cap, ", no file reclaim");
				if (fabs(a->dirtied - a->written) < 0.25 * a->written)
					cat(buf, cap, ": pages re-dirtied as fast as written back (writeback, not memory pressure)");
			} else {
				gp_fmt_rate(d, sizeof d, a->reclaim);
				cat(buf, cap, ", file reclaim %s", d);
			}
		}
	}
}

/* ---- evidence ---------------------------------------------------- */

static void add_ev(struct gp_verdict *v, const char *metric, const char *scope,
		   const char *unit, double first, double last, double dur,
		   enum gp_role role, const char *reads)
{
	if (v->nev >= GP_VERDICT_MAX_EVIDENCE)
		return;
	struct gp_evidence *e = &v->ev[v->nev++];
	gp_strlcpy(e->metric, metric, sizeof e->metric);
	e->scope = scope;
	e->unit = unit;
	e->first = first;
	e->last = last;
	e->slope_per_s = dur > 0 ? (last - first) / dur : 0;
	e->role = role;
	gp_strlcpy(e->reads, reads, sizeof e->reads);
}

static void mem_reads(char *buf, size_t cap, double first, double last, double peak_before,
		      double dur)
{
	double d = last - first;
	if (fabs(d) < FLOOR_MEM) {
		snprintf(buf, cap, "flat");
	} else if (d > 0 && last > peak_before + FLOOR_MEM) {
		char r[32];
		gp_fmt_rate(r, sizeof r, d / dur);
		snprintf(buf, cap, "new highs, +%s", r);
	} else if (d > 0) {
		snprintf(buf, cap, "refilling below its earlier peak: not new output");
	} else {
		snprintf(buf, cap, "falling");
	}
}

static void counter_reads(char *buf, size_t cap, double d, double dur, double floor,
			  const char *unit_word)
{
	if (d < floor) {
		snprintf(buf, cap, "flat");
		return;
	}
	if (unit_word) {
		snprintf(buf, cap, "+%.1f %s/s", d / dur, unit_word);
		return;
	}
	char r[32];
	gp_fmt_rate(r, sizeof r, d / dur);
	snprintf(buf, cap, "+%s", r);
}

static void build_evidence(const struct gp_point *p, size_t n, double from,
			   long page_size, struct gp_verdict *v)
{
	size_t ia = index_at(p, n, from), ib = n - 1;
	if (ia == ib && ia > 0)
		ia--;
	const struct gp_point *a = &p[ia], *b = &p[ib];
	double dur = b->t - a->t;
	if (dur <= 0)
		dur = 1e-9;
	char r[112];
	static const struct {
		int m;
		const char *name;
	} mem[] = {
		{ M_RSS_FILE, "rss_file" }, { M_RSS_ANON, "rss_anon" },
		{ M_VM_PIN, "vm_pin" }, { M_GPU, "gpu_memory" },
	};
	for (size_t k = 0; k < sizeof mem / sizeof mem[0]; k++) {
		if (mem[k].m == M_GPU && !gpu_seen(b))
			continue;
		double peak = 0;
		for (size_t i = 0; i < ia; i++)
			if (metric_value(&p[i], mem[k].m) > peak)
				peak = metric_value(&p[i], mem[k].m);
		double f = metric_value(a, mem[k].m), l = metric_value(b, mem[k].m);
		if (mem[k].m == M_VM_PIN && f == 0 && l == 0)
			continue;
		mem_reads(r, sizeof r, f, l, peak > f ? peak : f, dur);
		add_ev(v, mem[k].name, "process", "bytes", f, l, dur, GP_ROLE_PROGRESS, r);
	}
	if (b->have & GP_PT_GPU_DRM) {
		double f = (double)a->gpu_engine_ns, l = (double)b->gpu_engine_ns;
		if (l - f >= FLOOR_ENGINE_NS)
			snprintf(r, sizeof r, "GPU busy %.0f%% of the time", 100.0 * (l - f) / 1e9 / dur);
		else
			snprintf(r, sizeof r, "flat");
		add_ev(v, "gpu_engine_time", "process", "ns", f, l, dur, GP_ROLE_PROGRESS, r);
	}
	if (b->have & GP_PT_IO) {
		counter_reads(r, sizeof r, (double)b->io_rchar - (double)a->io_rchar, dur, FLOOR_IO, NULL);
		add_ev(v, "io_rchar", "process", "bytes", (double)a->io_rchar, (double)b->io_rchar, dur,
		       GP_ROLE_PROGRESS, r);
		counter_reads(r, sizeof r, (double)b->io_wchar - (double)a->io_wchar, dur, FLOOR_IO, NULL);
		add_ev(v, "io_wchar", "process", "bytes", (double)a->io_wchar, (double)b->io_wchar, dur,
		       GP_ROLE_PROGRESS, r);
	}
	/* GPU activity (NVML per process, DRM engine, KFD): utilisation
	 * beside the memory, when a source could tell. */
	unsigned known = 0, busy = 0;
	float maxp = 0;
	for (size_t i = ia + 1; i <= ib; i++) {
		if (!p[i].gpu_act_known)
			continue;
		known++;
		busy += p[i].gpu_act_busy;
		if (p[i].gpu_act_pct > maxp)
			maxp = p[i].gpu_act_pct;
	}
	if (known) {
		snprintf(r, sizeof r, "this process's GPU work busy in %u of %u samples, peak %.0f%%",
			 busy, known, maxp);
		add_ev(v, "gpu_activity", "process", "percent", a->gpu_act_pct, b->gpu_act_pct, 0,
		       GP_ROLE_ACTIVITY, r);
	}
	unsigned created = 0;
	for (size_t i = ia + 1; i <= ib; i++)
		created += p[i].threads_created;
	if (created)
		snprintf(r, sizeof r, "%u created", created);
	else
		snprintf(r, sizeof r, "none created");
	add_ev(v, "threads", "process", "count", a->threads, b->threads, dur, GP_ROLE_PROGRESS, r);

	/* activity */
	double cpu = (b->utime + b->stime) - (a->utime + a->stime);
	double sys = b->stime - a->stime;
	snprintf(r, sizeof r, "%.2f cores, %.0f%% of it system", cpu / dur,
		 cpu > 0 ? 100.0 * sys / cpu : 0.0);
	add_ev(v, "cpu_time", "process", "s", a->utime + a->stime, b->utime + b->stime, dur,
	       GP_ROLE_ACTIVITY, r);
	snprintf(r, sizeof r, "%.2f cores in the kernel", sys / dur);
	add_ev(v, "system_time", "process", "s", a->stime, b->stime, dur, GP_ROLE_ACTIVITY, r);
	double cs_a = (double)(a->vcsw + a->nvcsw), cs_b = (double)(b->vcsw + b->nvcsw);
	snprintf(r, sizeof r, "%.0f/s (live threads)", cs_b > cs_a ? (cs_b - cs_a) / dur : 0.0);
	add_ev(v, "context_switches", "process", "count", cs_a, cs_b, dur, GP_ROLE_ACTIVITY, r);
	if (b->top_tid) {
		char tr[112];
		snprintf(tr, sizeof tr, "busiest now: %d (%s) %.0f%%, %.0f%% system", b->top_tid,
			 b->top_comm, b->top_cpu_pct, b->top_sys_pct);
		add_ev(v, "busiest_thread_cpu", "thread", "percent", a->top_cpu_pct, b->top_cpu_pct,
		       0, GP_ROLE_ACTIVITY, tr);
	}
	if (b->have & GP_PT_IO) {
		counter_reads(r, sizeof r, (double)b->io_read_bytes - (double)a->io_read_bytes, dur, 1, NULL);
		add_ev(v, "io_read_bytes", "process", "bytes", (double)a->io_read_bytes,
		       (double)b->io_read_bytes, dur, GP_ROLE_ACTIVITY, r);
		counter_reads(r, sizeof r, (double)b->io_write_bytes - (double)a->io_write_bytes, dur, 1, NULL);
		add_ev(v, "io_write_bytes", "process", "bytes", (double)a->io_write_bytes,
		       (double)b->io_write_bytes, dur, GP_ROLE_ACTIVITY, r);
	}
	counter_reads(r, sizeof r, (double)b->majflt - (double)a->majflt, dur, 1, "faults");
	add_ev(v, "major_faults", "process", "count", (double)a->majflt, (double)b->majflt, dur,
	       GP_ROLE_ACTIVITY, r);
	counter_reads(r, sizeof r, (double)b->minflt - (double)a->minflt, dur, 1, "faults");
	add_ev(v, "minor_faults", "process", "count", (double)a->minflt, (double)b->minflt, dur,
	       GP_ROLE_ACTIVITY, r);
	double ps = page_size > 0 ? (double)page_size : 4096.0;
	if ((a->have & GP_PT_SYS_WB) && (b->have & GP_PT_SYS_WB)) {
		double fd = (double)a->sys_dirtied * ps, ld = (double)b->sys_dirtied * ps;
		counter_reads(r, sizeof r, ld - fd, dur, 1, NULL);
		add_ev(v, "dirtied", "system", "bytes", fd, ld, dur, GP_ROLE_ACTIVITY, r);
		double fw = (double)a->sys_written * ps, lw = (double)b->sys_written * ps;
		counter_reads(r, sizeof r, lw - fw, dur, 1, NULL);
		add_ev(v, "written_back", "system", "bytes", fw, lw, dur, GP_ROLE_ACTIVITY, r);
	}
	if ((a->have & GP_PT_SYS_RECLAIM) && (b->have & GP_PT_SYS_RECLAIM)) {
		double f = (double)a->sys_pgsteal_file * ps, l = (double)b->sys_pgsteal_file * ps;
		counter_reads(r, sizeof r, l - f, dur, 1, NULL);
		add_ev(v, "file_reclaim", "system", "bytes", f, l, dur, GP_ROLE_ACTIVITY, r);
	}
}

/* ---- phases -------------------------------------------------------- */

struct group {
	size_t first, last;        /* step indices */
	double start, end, bytes, max_gap;
	double by_metric[M_COUNT];
};

static size_t find_groups(const struct gp_point *p, size_t n, const struct step *st,
			  double hang_after, struct group *g, size_t cap)
{
	size_t ng = 0;
	for (size_t i = 1; i < n; i++) {
		if (!st[i].any)
			continue;
		if (ng && p[i].t - g[ng - 1].end < hang_after) {
			struct group *c = &g[ng - 1];
			double gap = p[i].t - c->end;
			if (gap > c->max_gap)
				c->max_gap = gap;
			c->last = i;
			c->end = p[i].t;
		} else {
			if (ng == cap) {
				/* Keep the latest groups: shift the oldest out. */
				memmove(g, g + 1, (cap - 1) * sizeof *g);
				ng--;
			}
			struct group *c = &g[ng++];
			memset(c, 0, sizeof *c);
			c->first = c->last = i;
			c->start = p[i - 1].t;
			c->end = p[i].t;
			c->max_gap = p[i].t - p[i - 1].t;
		}
		struct group *c = &g[ng - 1];
		c->bytes += st[i].bytes;
		for (int m = 0; m < M_COUNT; m++)
			c->by_metric[m] += st[i].by_metric[m];
	}
	return ng;
}

static int dominant_metric(const struct group *g, const struct step *st)
{
	/* Bytes read and written are what a program puts out (xz, a loader
	 * reading a file); a heap growing beside them is its working set. */
	double io = g->by_metric[M_RCHAR] + g->by_metric[M_WCHAR];
	if (io > 0 && io >= 0.1 * g->bytes)
		return g->by_metric[M_RCHAR] >= g->by_metric[M_WCHAR] ? M_RCHAR : M_WCHAR;
	int best = -1;
	for (int m = 0; m < M_COUNT; m++)
		if (g->by_metric[m] > 0 && (best < 0 || g->by_metric[m] > g->by_metric[best]))
			best = m;
	if (best >= 0)
		return best;
	for (size_t i = g->first; i <= g->last; i++)
		for (int m = 0; m < M_COUNT; m++)
			if (st[i].metrics & (1u << m))
				return m;
	return M_THREADS;
}

static void add_phase(struct gp_verdict *v, double from, double to, bool progress,
		      double rate, const char *what)
{
	if (v->nphases == GP_VERDICT_MAX_PHASES) {
		memmove(v->phase, v->phase + 1, (GP_VERDICT_MAX_PHASES - 1) * sizeof v->phase[0]);
		v->nphases--;
	}
	struct gp_phase *ph = &v->phase[v->nphases++];
	ph->from = from;
	ph->to = to;
	ph->progress = progress;
	ph->rate = rate;
	gp_strlcpy(ph->what, what, sizeof ph->what);
}

static void progress_what(char *buf, size_t cap, const struct group *g, const struct step *st)
{
	int m = dominant_metric(g, st);
	double dur = g->end - g->start;
	buf[0] = '\0';
	if (g->bytes > 0 && dur > 0) {
		/* "RssFile +356.0 MiB/s, read() +12.0 MiB/s": each metric
		 * that carried a tenth of the output or more. */
		char r[32];
		gp_fmt_rate(r, sizeof r, g->by_metric[m] / dur);
		cat(buf, cap, "%s +%s", metric_label[m], r);
		for (int k = 0; k < M_COUNT; k++) {
			if (k != m && g->by_metric[k] > 0.1 * g->bytes) {
				gp_fmt_rate(r, sizeof r, g->by_metric[k] / dur);
				cat(buf, cap, ", %s +%s", metric_label[k], r);
			}
		}
	} else {
		cat(buf, cap, "%s moving", metric_label[m]);
	}
}

/* Where the output rate of a progress stretch changed the most: the split
 * point s (a sample index) maximising rate(before s) / rate(after s).
 * The slow side must last `min_after` seconds; the fast side must hold
 * at least three intervals with output, so one early burst of a bursty
 * writer is no "fast phase".  Returns the ratio (0 when no split
 * qualifies).  One pass over running sums. */
static double slowdown_point(const struct gp_point *p, const struct step *st, size_t from,
			     size_t to, double min_after, size_t *split, double *before,
			     double *after)
{
	double total = 0;
	for (size_t i = from + 1; i <= to; i++)
		total += st[i].bytes;
	double best = 0, acc = 0;
	unsigned events = 0;
	for (size_t sidx = from + 1; sidx < to; sidx++) {
		acc += st[sidx].bytes;
		events += st[sidx].bytes > 0;
		double d1 = p[sidx].t - p[from].t, d2 = p[to].t - p[sidx].t;
		if (events < 3 || d2 < min_after)
			continue;
		double r1 = acc / d1, r2 = (total - acc) / d2;
		double ratio = r2 > 0 ? r1 / r2 : (r1 > 0 ? INFINITY : 0);
		if (ratio > best) {
			best = ratio;
			*split = sidx;
			*before = r1;
			*after = r2;
		}
	}
	return best;
}

/* ---- the verdict ----------------------------------------------------- */

static const char *const class_names[GP_CLASS_COUNT] = {
	"progress", "slow-progress", "idle", "waiting-gpu", "hang-blocked", "hang-busy-kernel",
	"hang-busy-user", "stopped", "exited", "undecided",
};

const char *gp_class_name(enum gp_class c)
{
	return (unsigned)c < GP_CLASS_COUNT ? class_names[c] : "undecided";
}

static void set_class(struct gp_verdict *v, const char *k)
{
	for (int c = 0; c < GP_CLASS_COUNT; c++)
		if (!strcmp(k, class_names[c]))
			v->cls = (enum gp_class)c;
	gp_strlcpy(v->klass, k, sizeof v->klass);
}

/* The process that made most of a phase's output, when several did. */
static int phase_process(const struct gp_point *p, size_t from, size_t to, char *comm, size_t cap)
{
	struct { int pid; uint64_t bytes; char comm[16]; } t[16];
	size_t nt = 0;
	uint32_t procs = 0;
	for (size_t i = from; i <= to; i++) {
		if (p[i].procs > procs)
			procs = p[i].procs;
		if (!p[i].out_pid || !p[i].out_bytes)
			continue;
		size_t k = 0;
		while (k < nt && t[k].pid != p[i].out_pid)
			k++;
		if (k == nt) {
			if (nt == 16)
				continue;
			t[nt].pid = p[i].out_pid;
			t[nt].bytes = 0;
			gp_strlcpy(t[nt].comm, p[i].out_comm, sizeof t[nt].comm);
			nt++;
		}
		t[k].bytes += p[i].out_bytes;
		/* the latest name: a process that exec'd is named as it is now */
		gp_strlcpy(t[k].comm, p[i].out_comm, sizeof t[k].comm);
	}
	if (procs < 2 || !nt)
		return 0;
	size_t b = 0;
	for (size_t k = 1; k < nt; k++)
		if (t[k].bytes > t[b].bytes)
			b = k;
	gp_strlcpy(comm, t[b].comm, cap);
	return t[b].pid;
}

static void note_unseen(struct gp_verdict *v, const char *what)
{
	if (v->nunseen < sizeof v->unseen / sizeof v->unseen[0])
		gp_strlcpy(v->unseen[v->nunseen++], what, sizeof v->unseen[0]);
}

/* What judging one trace needs, shared by the steps below. */
struct judging {
	const struct gp_point *p, *l;
	size_t n;
	const struct gp_verdict_opts *o;
	double H, t0, t_end, last_progress, flat, interval;
	struct step *st;
	struct group g[GP_VERDICT_MAX_PHASES];
	size_t ng;
	struct activity act;
	bool io_seen, gpu;
};

/* Stopped: SIGSTOP or a debugger holds it; nothing else matters. */
static bool judge_stopped(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_point *p = j->p, *l = j->l;
	if (l->state != 'T' && l->state != 't')
		return false;
	size_t i = j->n - 1;
	while (i > 0 && (p[i - 1].state == 'T' || p[i - 1].state == 't'))
		i--;
	set_class(v, "stopped");
	v->since_s = p[i].t;
	v->judged_from = p[i].t;
	v->judged_to = j->t_end;
	snprintf(v->confidence, sizeof v->confidence, "high");
	snprintf(v->confidence_why, sizeof v->confidence_why,
		 "the process state is %c (stopped) in the last %zu samples", l->state, j->n - i);
	snprintf(v->summary, sizeof v->summary,
		 "stopped (state %c) since +%.1f s: held by SIGSTOP or a debugger, not hung",
		 l->state, p[i].t);
	add_phase(v, p[i].t, j->t_end, false, 0, "stopped");
	build_evidence(p, j->n, p[i].t, j->o->page_size, v);
	return true;
}

/* Phases, oldest first: flat stretches of at least H, and progress. */
static void build_phases(struct judging *j, struct gp_verdict *v)
{
	char buf[600];
	double cursor = j->t0;
	for (size_t k = 0; k < j->ng; k++) {
		const struct group *g = &j->g[k];
		if (g->start - cursor >= j->H)
			add_phase(v, cursor, g->start, false, 0, "no output");
		progress_what(buf, sizeof buf, g, j->st);
		char pc[16];
		int ppid = phase_process(j->p, g->first, g->last, pc, sizeof pc);
		if (ppid)
			cat(buf, sizeof buf, " in pid %d (%s)", ppid, pc);
		double dur = g->end - g->start;
		add_phase(v, g->start, g->end, true, dur > 0 ? g->bytes / dur : 0, buf);
		cursor = g->end;
	}
	j->last_progress = j->ng ? j->g[j->ng - 1].end : j->t0;
	j->flat = j->t_end - j->last_progress;
}

/* A hang: nothing visible moved for hang_after seconds. */
static void judge_hang(const struct judging *j, struct gp_verdict *v)
{
	const struct activity *act = &j->act;
	char buf[600] = "";
	set_class(v, act->kind);
	v->since_s = v->judged_from = j->last_progress;
	v->judged_to = j->t_end;
	describe_activity(buf, sizeof buf, act);
	add_phase(v, j->last_progress, j->t_end, false, 0, buf);
	char d[32];
	gp_fmt_duration(d, sizeof d, j->flat);
	snprintf(v->summary, sizeof v->summary, "no progress for %s (since +%.1f s): %s",
		 d, j->last_progress, buf);
	if (j->ng) {
		const struct gp_phase *ph = &v->phase[v->nphases >= 2 ? v->nphases - 2 : 0];
		cat(v->summary, sizeof v->summary, "; before that +%.1f-%.1f s: %s", ph->from,
		    ph->to, ph->what);
	}
	bool long_flat = j->flat >= 2 * j->H;
	const char *level = long_flat && j->io_seen ? "high" : long_flat || j->io_seen ? "medium" : "low";
	/* High only where the evidence cannot be read another way: a busy
	 * thread with no output may be computing; waits the outside look
	 * cannot tell cap it too (classify_waits). */
	const char *capped = !strcmp(act->kind, "hang-busy-user") ? "medium" : act->conf_cap;
	if (capped && strcmp(level, "low") != 0
	    && (!strcmp(capped, "low") || !strcmp(level, "high")))
		level = capped;
	else
		capped = NULL;
	snprintf(v->confidence, sizeof v->confidence, "%s", level);
	snprintf(v->confidence_why, sizeof v->confidence_why,
		 "flat %.0f s = %.1fx --hang-after; memory%s%s flat%s%s", j->flat, j->flat / j->H,
		 j->io_seen ? ", io" : "", j->gpu ? ", GPU" : "",
		 j->io_seen ? "" : "; io not visible",
		 !capped ? "" : !strcmp(act->kind, "hang-busy-user")
		 ? "; computing and spinning look alike from outside"
		 : !strcmp(act->kind, "waiting-gpu") ? "; the GPU was not busy in every sample"
		 : "; what the threads wait for is not certain from outside");
	if (j->o->stuck && j->o->stuck->t >= 0)
		v->stuck = *j->o->stuck;
	build_evidence(j->p, j->n, j->last_progress, j->o->page_size, v);
}

/* Flat, but not for hang_after yet: since the last progress (ng > 0) or
 * since the start. */
static void judge_short(const struct judging *j, struct gp_verdict *v)
{
	char buf[600] = "";
	double from = j->ng ? j->last_progress : j->t0;
	set_class(v, "undecided");
	v->since_s = v->judged_from = from;
	v->judged_to = j->t_end;
	v->needs_s = j->H - j->flat;
	gp_strlcpy(v->leans, j->act.kind, sizeof v->leans);
	describe_activity(buf, sizeof buf, &j->act);
	add_phase(v, from, j->t_end, false, 0, buf);
	if (j->ng)
		snprintf(v->summary, sizeof v->summary,
			 "flat for %.0f s since +%.1f s, %.0f s short of --hang-after %.0f: "
			 "leans %s (%s)", j->flat, from, v->needs_s, j->H, j->act.kind, buf);
	else
		snprintf(v->summary, sizeof v->summary,
			 "no progress in %.0f s of trace, %.0f s short of --hang-after %.0f: leans %s (%s)",
			 j->flat, v->needs_s, j->H, j->act.kind, buf);
	snprintf(v->confidence, sizeof v->confidence, "low");
	if (j->ng)
		snprintf(v->confidence_why, sizeof v->confidence_why,
			 "flat for less than --hang-after; trace %.0f s longer to decide", v->needs_s);
	else
		snprintf(v->confidence_why, sizeof v->confidence_why,
			 "trace %.0f s longer (or lower --hang-after) to decide", v->needs_s);
	build_evidence(j->p, j->n, from, j->o->page_size, v);
}

/* ETA when what is being paged in has a known size. */
static void add_eta(const struct judging *j, const struct group *c, double recent,
		    const char *rs, struct gp_verdict *v)
{
	const struct gp_point *l = j->l;
	v->eta_s = -1;
	if (dominant_metric(c, j->st) != M_RSS_FILE || l->map_bytes <= l->rss_file || recent <= 0)
		return;
	/* RssFile holds the libraries too: never below 0 to go */
	v->eta_s = ((double)l->map_bytes - (double)l->rss_file) / recent;
	char tot[32], res[32], eta[32];
	gp_fmt_size(tot, sizeof tot, (double)l->map_bytes);
	gp_fmt_size(res, sizeof res, (double)l->rss_file);
	gp_fmt_duration(eta, sizeof eta, v->eta_s);
	cat(v->summary, sizeof v->summary, "; %s of a %s file mapping resident, ETA %s at %s",
	    res, tot, eta, rs);
}

/* Progress.  Slow when it fell to under a tenth of its own earlier rate
 * (cut there: since_s is the slowdown), or runs under --slow-rate. */
static void judge_progress(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_point *p = j->p;
	const struct group *c = &j->g[j->ng - 1];
	char buf[600];
	double dur = c->end - c->start;
	double rate = dur > 0 ? c->bytes / dur : 0;
	double min_side = 3 * j->interval > 5.0 ? 3 * j->interval : 5.0;
	size_t split = 0;
	double before = 0, after = 0;
	/* Judged on the phase itself: a tail asleep after the load ended is
	 * not a slowdown of it. */
	double ratio = slowdown_point(p, j->st, c->first - 1, c->last, min_side, &split, &before,
				      &after);
	bool slowed = ratio >= SLOW_FACTOR;
	double recent = slowed ? after : rate;
	bool slow = slowed || (j->o->slow_rate > 0 && rate < j->o->slow_rate && c->bytes > 0);
	set_class(v, slow ? "slow-progress" : "progress");
	v->since_s = slowed ? p[split].t : c->start;
	v->judged_from = v->since_s;
	v->judged_to = j->t_end;
	char rs[32], ps[32];
	gp_fmt_rate(rs, sizeof rs, recent);
	if (slowed) {
		/* Cut the last progress phase where it slowed down. */
		struct gp_phase *last = &v->phase[v->nphases - 1];
		int dm = dominant_metric(c, j->st);
		last->to = p[split].t;
		last->rate = before;
		gp_fmt_rate(ps, sizeof ps, before);
		snprintf(last->what, sizeof last->what, "%s +%s", metric_label[dm], ps);
		snprintf(buf, sizeof buf, "%s +%s", metric_label[dm], rs);
		add_phase(v, p[split].t, c->end, true, after, buf);
		snprintf(v->summary, sizeof v->summary,
			 "slow progress since +%.1f s: %s, down from %s before (%.0fx slower)",
			 p[split].t, rs, ps, isfinite(ratio) ? ratio : 0.0);
	} else {
		snprintf(v->summary, sizeof v->summary, slow ? "slow progress since +%.1f s: %s, under --slow-rate"
			 : "making progress since +%.1f s: %s", c->start, v->phase[v->nphases - 1].what);
	}
	add_eta(j, c, recent, rs, v);
	unsigned events = 0;
	for (size_t i = c->first; i <= c->last; i++)
		events += j->st[i].any;
	bool fresh = j->flat <= 2 * j->interval + 1e-9 || j->flat <= c->max_gap + 1e-9;
	snprintf(v->confidence, sizeof v->confidence, "%s",
		 slow ? "medium" : events >= 3 && fresh ? "high" : "medium");
	snprintf(v->confidence_why, sizeof v->confidence_why,
		 "%u interval%s with output in this phase; last output %.1f s before the end",
		 events, events == 1 ? "" : "s", j->flat);
	build_evidence(p, j->n, v->since_s, j->o->page_size, v);
}

static void judge(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
		  struct gp_verdict *v)
{
	struct judging *j = calloc(1, sizeof *j);
	if (!j || !(j->st = calloc(n, sizeof *j->st))) {
		free(j);
		set_class(v, "undecided");
		snprintf(v->summary, sizeof v->summary, "out of memory");
		return;
	}
	j->p = p;
	j->n = n;
	j->o = o;
	j->l = &p[n - 1];
	j->H = o->hang_after > 0 ? o->hang_after : GP_VERDICT_HANG_AFTER_DEFAULT;
	j->t0 = p[0].t;
	j->t_end = j->l->t;
	if (!judge_stopped(j, v)) {
		find_steps(p, n, j->H, j->st);
		j->ng = find_groups(p, n, j->st, j->H, j->g, GP_VERDICT_MAX_PHASES);
		build_phases(j, v);
		j->interval = median_interval(p, n);
		j->io_seen = j->l->have & GP_PT_IO;
		j->gpu = gpu_seen(j->l);
		measure_activity(p, n, j->last_progress, o->page_size, o->stuck, &j->act);
		j->act.machine = o->machine;
		if (j->flat >= j->H && j->flat > 0) {
			judge_hang(j, v);
		} else if (j->ng) {
			const struct group *c = &j->g[j->ng - 1];
			double allowed = 2 * c->max_gap;
			if (allowed < 3 * j->interval)
				allowed = 3 * j->interval;
			if (allowed < 5.0)
				allowed = 5.0;
			if (j->flat > allowed)
				judge_short(j, v);   /* progress stopped a while ago */
			else
				judge_progress(j, v);
		} else {
			judge_short(j, v);           /* no progress ever */
		}
	}
	free(j->st);
	free(j);
}

/* The kernel's words in the judged phase: "; kernel log in the phase:
 * nvidia xid 79 at +12.0 s, ..." (driver errors and hang/lockup/OOM
 * warnings; a driver's other lines are context, not named). */
static void kmsg_in_phase(const struct gp_verdict_opts *o, struct gp_verdict *v)
{
	unsigned named = 0, more = 0;
	for (size_t i = 0; i < o->nkmsg; i++) {
		const struct gp_kmsg_note *k = &o->kmsg[i];
		if (!strcmp(k->kind, "other") || k->t < v->judged_from - 1 || k->t > v->judged_to + 1)
			continue;
		if (named == 3) {
			more++;
			continue;
		}
		if (k->xid >= 0)
			cat(v->summary, sizeof v->summary, "%s%s Xid %d at %+.1f s",
			    named ? ", " : "; kernel log in the phase: ", k->driver, k->xid, k->t);
		else
			cat(v->summary, sizeof v->summary, "%s%s %s at %+.1f s (%.60s)",
			    named ? ", " : "; kernel log in the phase: ", k->driver, k->kind, k->t, k->text);
		named++;
	}
	if (more)
		cat(v->summary, sizeof v->summary, ", and %u more", more);
}

void gp_verdict_compute(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
			struct gp_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->eta_s = -1;
	v->stuck.t = -1;
	v->hang_after = o->hang_after > 0 ? o->hang_after : GP_VERDICT_HANG_AFTER_DEFAULT;
	snprintf(v->confidence, sizeof v->confidence, "low");
	if (n < 3) {
		set_class(v, "undecided");
		snprintf(v->summary, sizeof v->summary,
			 "%zu sample%s: too few to judge (3 at least)", n, n == 1 ? "" : "s");
		snprintf(v->confidence_why, sizeof v->confidence_why, "too few samples");
		if (n)
			v->since_s = v->judged_from = p[0].t, v->judged_to = p[n - 1].t;
	} else {
		judge(p, n, o, v);
	}
	const struct gp_point *l = n ? &p[n - 1] : NULL;
	if (l && !(l->have & GP_PT_IO))
		note_unseen(v, "io: /proc/PID/io not readable (run as root or as the target's user)");
	if (l && !(l->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML)))
		note_unseen(v, "GPU: no DRM fdinfo, KFD or NVML entry for this process");
	if (l && !(l->have & GP_PT_SYSCALL))
		note_unseen(v, "syscalls: /proc/TID/syscall not readable (run as root)");
	if (!o->kstacks_seen)
		note_unseen(v, "kernel stacks: not read (run as root)");
	if (o->kmsg_why && *o->kmsg_why)
		note_unseen(v, o->kmsg_why);
	if (o->nkmsg && v->klass[0] && strcmp(v->klass, "progress") != 0)
		kmsg_in_phase(o, v);

	if (o->end_reason && !strcmp(o->end_reason, "exited")) {
		gp_strlcpy(v->before, v->klass, sizeof v->before);
		set_class(v, "exited");
		char s[sizeof v->summary];
		if (o->have_status && o->signal)
			snprintf(s, sizeof s, "exited (killed by signal %d)", o->signal);
		else if (o->have_status)
			snprintf(s, sizeof s, "exited with status %d", o->status);
		else
			snprintf(s, sizeof s, "exited");
		cat(s, sizeof s, " at +%.1f s; before that: %s", l ? l->t : 0.0, v->summary);
		gp_strlcpy(v->summary, s, sizeof v->summary);
	}
}



bool gp_flat_watch(struct gp_flat_watch *w, const struct gp_point *p)
{
	static const int mem[] = { M_RSS_FILE, M_RSS_ANON, M_VM_PIN, M_GPU };
	static const int ctr[] = { M_RCHAR, M_WCHAR, M_ENGINE };
	if (!w->init) {
		for (int k = 0; k < 4; k++)
			w->hi[k] = metric_value(p, mem[k]);
		for (int k = 0; k < 3; k++)
			w->base[k] = metric_value(p, ctr[k]);
		w->since = p->t;
		w->init = true;
		return false;
	}
	bool step = p->threads_created || p->procs_created;
	for (int k = 0; k < 4; k++) {
		double v = metric_value(p, mem[k]);
		if (v >= w->hi[k] + FLOOR_MEM) {
			w->hi[k] = v;
			step = true;
		}
	}
	for (int k = 0; k < 3; k++) {
		double v = metric_value(p, ctr[k]);
		double floor = ctr[k] == M_ENGINE ? FLOOR_ENGINE_NS : FLOOR_IO;
		if (v < w->base[k]) {
			w->base[k] = v;
		} else if (v >= w->base[k] + floor) {
			w->base[k] = v;
			step = true;
		}
	}
	if (step)
		w->since = p->t;
	return step;
}

bool gp_verdict_class_valid(const char *name)
{
	static const char *const classes[] = {
		"progress", "slow-progress", "idle", "waiting-gpu", "hang-blocked",
		"hang-busy-kernel", "hang-busy-user", "stopped", "exited", "undecided",
	};
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
		if (!strcmp(name, classes[i]))
			return true;
	return false;
}

json_t *gp_verdict_json(const struct gp_verdict *v)
{
	json_t *j = json_pack("{s:s, s:s, s:f, s:s, s:s, s:s}", "type", "verdict",
			      "class", v->klass, "since_s", v->since_s, "confidence", v->confidence,
			      "confidence_reason", v->confidence_why, "summary", v->summary);
	if (v->before[0])
		json_object_set_new(j, "before", json_string(v->before));
	if (!strcmp(v->klass, "undecided") || (v->before[0] && !strcmp(v->before, "undecided"))) {
		if (v->leans[0])
			json_object_set_new(j, "leans", json_string(v->leans));
		json_object_set_new(j, "needs_s", json_real(v->needs_s));
	}
	if (v->eta_s >= 0)
		json_object_set_new(j, "eta_s", json_real(v->eta_s));
	json_object_set_new(j, "judged", json_pack("{s:f, s:f}", "from", v->judged_from, "to", v->judged_to));
	json_object_set_new(j, "hang_after_s", json_real(v->hang_after));
	json_t *ph = json_array();
	for (size_t i = 0; i < v->nphases; i++) {
		const struct gp_phase *p = &v->phase[i];
		json_t *o = json_pack("{s:f, s:f, s:s, s:s}", "from", p->from, "to", p->to,
				      "kind", p->progress ? "progress" : "flat", "what", p->what);
		if (p->progress)
			json_object_set_new(o, "rate_bytes_per_s", json_real(p->rate));
		json_array_append_new(ph, o);
	}
	json_object_set_new(j, "phases", ph);
	json_t *ev = json_array();
	for (size_t i = 0; i < v->nev; i++) {
		const struct gp_evidence *e = &v->ev[i];
		json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:s, s:s}",
			"metric", e->metric, "scope", e->scope, "unit", e->unit,
			"first", e->first, "last", e->last, "slope_per_s", e->slope_per_s,
			"role", e->role == GP_ROLE_PROGRESS ? "progress" : "activity",
			"reads", e->reads));
	}
	json_object_set_new(j, "evidence", ev);
	json_t *un = json_array();
	for (size_t i = 0; i < v->nunseen; i++)
		json_array_append_new(un, json_string(v->unseen[i]));
	json_object_set_new(j, "unseen", un);
	if (v->stuck.t >= 0 && v->stuck.n) {
		json_t *sk = json_array();
		for (size_t i = 0; i < v->stuck.n; i++) {
			const struct gp_stuck_thread *x = &v->stuck.th[i];
			char st[2] = { x->state, 0 };
			json_t *fr = json_array();
			for (unsigned k = 0; k < x->nframes; k++)
				json_array_append_new(fr, json_string(x->frames[k]));
			json_t *o = json_pack("{s:i, s:i, s:s, s:s, s:s, s:o}", "pid", x->pid,
					      "tid", x->tid, "comm", x->comm, "state", st,
					      "wait_frame", x->wait_frame, "frames", fr);
			if (o && x->kernel[0])
				json_object_set_new(o, "kernel", json_string(x->kernel));
			if (o)
				json_array_append_new(sk, o);
		}
		json_object_set_new(j, "stuck", json_pack("{s:f, s:s, s:i, s:o}", "t", v->stuck.t,
			"why", v->stuck.why, "threads", (int)v->stuck.total, "sample", sk));
	}
	return j;
}

static void fmt_value(char *buf, size_t cap, const char *unit, double v)
{
	if (!strcmp(unit, "bytes"))
		gp_fmt_size(buf, cap, v);
	else if (!strcmp(unit, "s"))
		snprintf(buf, cap, "%.2f s", v);
	else if (!strcmp(unit, "ns"))
		snprintf(buf, cap, "%.3f s", v / 1e9);
	else if (!strcmp(unit, "percent"))
		snprintf(buf, cap, "%.0f%%", v);
	else
		snprintf(buf, cap, "%.0f", v);
}

void gp_verdict_print(FILE *out, const struct gp_verdict *v)
{
	fprintf(out, "\nverdict: %s", v->klass);
	if (v->before[0])
		fprintf(out, " (before: %s)", v->before);
	fprintf(out, " since +%.1f s, confidence %s (%s)\n", v->since_s, v->confidence,
		v->confidence_why);
	fprintf(out, "  %s\n", v->summary);
	if (v->nphases) {
		fprintf(out, "phases:\n");
		for (size_t i = 0; i < v->nphases; i++) {
			const struct gp_phase *p = &v->phase[i];
			char range[48];
			snprintf(range, sizeof range, "+%.1f-%.1f s", p->from, p->to);
			fprintf(out, "  %-18s %-8s %s\n", range, p->progress ? "progress" : "flat", p->what);
		}
	}
	if (v->nev) {
		fprintf(out, "evidence, +%.1f-%.1f s:\n", v->judged_from, v->judged_to);
		fprintf(out, "  %-19s %-8s %-9s %12s %12s  %s\n", "metric", "scope", "role", "first",
			"last", "reads");
		for (size_t i = 0; i < v->nev; i++) {
			const struct gp_evidence *e = &v->ev[i];
			char f[32], l[32];
			fmt_value(f, sizeof f, e->unit, e->first);
			fmt_value(l, sizeof l, e->unit, e->last);
			fprintf(out, "  %-19s %-8s %-9s %12s %12s  %s\n", e->metric, e->scope,
				e->role == GP_ROLE_PROGRESS ? "progress" : "activity", f, l, e->reads);
		}
	}
	for (size_t i = 0; i < v->nunseen; i++)
		fprintf(out, "  not seen: %s\n", v->unseen[i]);
}
