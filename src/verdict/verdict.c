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

struct step {
	bool any;
	double bytes;              /* output bytes counted in this interval */
	double by_metric[GP_M_COUNT];
	unsigned metrics;          /* bit per metric */
};

static bool gpu_seen(const struct gp_point *p)
{
	return p->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML);
}

static double metric_value(const struct gp_point *p, int m)
{
	switch (m) {
	case GP_M_RSS_FILE: return (double)p->rss_file;
	case GP_M_RSS_ANON: return (double)p->rss_anon;
	case GP_M_VM_PIN: return (double)(p->vm_pin > p->vm_lck ? p->vm_pin : p->vm_lck);
	case GP_M_GPU: return (double)p->gpu_bytes;
	case GP_M_ENGINE: return (double)p->gpu_engine_ns;
	case GP_M_RCHAR: return (double)p->io_rchar;
	case GP_M_WCHAR: return (double)p->io_wchar;
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
	return m == GP_M_RSS_FILE || m == GP_M_RSS_ANON || m == GP_M_VM_PIN || m == GP_M_GPU;
}

/* What one step of output is, per metric: the judge (find_steps) and the
 * live watch (gp_flat_watch) count with the same floors. */
static double step_floor(int m)
{
	return m == GP_M_ENGINE ? FLOOR_ENGINE_NS : memory_metric(m) ? FLOOR_MEM : FLOOR_IO;
}

/* A counter's step: it grew by a floor or more since base (base moves
 * there), or it went back (a re-opened DRM client: base restarts there). */
static bool counter_step(double *base, double v, double floor)
{
	if (v < *base) {
		*base = v;
		return false;
	}
	if (v < *base + floor)
		return false;
	*base = v;
	return true;
}

static void find_steps(const struct gp_point *p, size_t n, double hold_s, struct step *st)
{
	double base[GP_M_COUNT];
	for (int m = 0; m < GP_M_COUNT; m++)
		base[m] = metric_value(&p[0], m);
	memset(st, 0, n * sizeof *st);
	/* Per memory metric: held[i], the lowest value from i to the end, and
	 * high[i], the highest value before i. */
	double *held = malloc(2 * n * GP_M_COUNT * sizeof *held);
	double *high = held ? held + n * GP_M_COUNT : NULL;
	for (int m = 0; held && m < GP_M_COUNT; m++) {
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
			held[i * GP_M_COUNT + m] = lo;
		}
		for (size_t i = 0; i < n; i++) {
			high[i * GP_M_COUNT + m] = hi;
			if (metric_value(&p[i], m) > hi)
				hi = metric_value(&p[i], m);
		}
	}
	for (size_t i = 1; i < n; i++) {
		for (int m = 0; m < GP_M_THREADS; m++) {
			if ((m == GP_M_GPU || m == GP_M_ENGINE) && !gpu_seen(&p[i]))
				continue;
			if ((m == GP_M_RCHAR || m == GP_M_WCHAR) && !(p[i].have & GP_PT_IO))
				continue;
			double v = metric_value(&p[i], m), floor = step_floor(m);
			double b = base[m];
			if (!memory_metric(m)) {
				if (counter_step(&base[m], v, floor)) {
					if (m != GP_M_ENGINE) {
						st[i].bytes += v - b;
						st[i].by_metric[m] += v - b;
					}
					st[i].metrics |= 1u << m;
					st[i].any = true;
				}
				continue;
			}
			if (i + 1 == n || !held)
				continue;
			/* the held level, standing above every earlier value */
			v = held[i * GP_M_COUNT + m];
			if (v < high[i * GP_M_COUNT + m] + floor || v < b + floor)
				continue;
			st[i].bytes += v - b;
			st[i].by_metric[m] += v - b;
			st[i].metrics |= 1u << m;
			st[i].any = true;
			base[m] = v;
		}
		if (p[i].threads_created || p[i].procs_created) {
			st[i].metrics |= 1u << GP_M_THREADS;
			st[i].any = true;
		}
		/* GPU work is progress (DESIGN): a loop of kernels doing math
		 * is output even when the host writes nothing. */
		if (p[i].gw.work == GP_GW_WORK) {
			st[i].metrics |= 1u << GP_M_GPU_WORK;
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

/* ---- activity: what the process does while it makes no progress ---- */

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
			   struct gp_activity *a);
static void stuck_waits(const struct gp_stuck *stuck, struct gp_activity *a);

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
		if (p[i].gw.work == GP_GW_SPIN || p[i].gw.work == GP_GW_WORK) {
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

/* Processes of one name whose main threads wait in one frame, but one:
 * the ranks of a job where one never reached the collective ("pids
 * 101-103 wait in all_reduce (dist.py:20); pid 104 is in time.sleep
 * (dist.py:31)").  From the hang stacks, the leader thread of each
 * process (its wait frame: a Python line first).  Two processes that
 * differ are both named: which one is late cannot be told. */
static void find_ranks(const struct gp_stuck *stuck, struct gp_activity *a)
{
	const struct gp_stuck_thread *ld[GP_STUCK_MAX];
	size_t n = 0;
	for (size_t i = 0; stuck && stuck->t >= 0 && i < stuck->n; i++)
		if (stuck->th[i].tid == stuck->th[i].pid && stuck->th[i].wait_frame[0])
			ld[n++] = &stuck->th[i];
	/* The name with the most processes, two at least. */
	const char *comm = NULL;
	unsigned best = 1;
	for (size_t i = 0; i < n; i++) {
		unsigned c = 0;
		for (size_t j = 0; j < n; j++)
			c += !strcmp(ld[i]->comm, ld[j]->comm);
		if (c > best) {
			best = c;
			comm = ld[i]->comm;
		}
	}
	if (!comm)
		return;
	/* The frame most of them share. */
	const char *frame = NULL;
	unsigned same = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ld[i]->comm, comm))
			continue;
		unsigned c = 0;
		for (size_t j = 0; j < n; j++)
			c += !strcmp(ld[j]->comm, comm) && !strcmp(ld[i]->wait_frame, ld[j]->wait_frame);
		if (c > same) {
			same = c;
			frame = ld[i]->wait_frame;
		}
	}
	/* One differs: of three or more, the odd one out; of two, both. */
	if (same == best || best - same != 1 || (best > 2 && same < 2))
		return;
	a->rank_n = best;
	a->rank_same = same;
	gp_strlcpy(a->rank_comm, comm, sizeof a->rank_comm);
	gp_strlcpy(a->rank_frame, frame, sizeof a->rank_frame);
	unsigned k = 0;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ld[i]->comm, comm))
			continue;
		if (!strcmp(ld[i]->wait_frame, frame)) {
			if (k < 8)
				a->rank_pids[k++] = ld[i]->pid;
			if (k == 1) /* in torch's all_reduce: from which line of theirs */
				gp_strlcpy(a->rank_user, ld[i]->user_frame, sizeof a->rank_user);
		} else {
			a->odd_pid = ld[i]->pid;
			gp_strlcpy(a->odd_frame, ld[i]->wait_frame, sizeof a->odd_frame);
			gp_strlcpy(a->odd_user, ld[i]->user_frame, sizeof a->odd_user);
		}
	}
}

static void measure_activity(const struct gp_point *p, size_t n, double from,
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
	gpu_judge(p, ia, ib, stuck, a);
	find_ranks(stuck, a);
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
static void stuck_waits(const struct gp_stuck *stuck, struct gp_activity *a)
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

/* ---- evidence ---------------------------------------------------- */

static struct gp_evidence *add_ev(struct gp_verdict *v, const char *metric, const char *scope,
				  const char *unit, double first, double last, double dur,
				  enum gp_role role)
{
	static struct gp_evidence spare;
	if (v->nev >= GP_VERDICT_MAX_EVIDENCE) {
		memset(&spare, 0, sizeof spare);
		return &spare; /* full: written and dropped */
	}
	struct gp_evidence *e = &v->ev[v->nev++];
	memset(e, 0, sizeof *e);
	gp_strlcpy(e->metric, metric, sizeof e->metric);
	e->scope = scope;
	e->unit = unit;
	e->first = first;
	e->last = last;
	e->slope_per_s = dur > 0 ? (last - first) / dur : 0;
	e->role = role;
	return e;
}

/* A memory level over the phase: flat, new highs (a rate), refilling
 * below an earlier peak (not new output), or falling. */
static void mem_reads(struct gp_evidence *e, double first, double last, double peak_before,
		      double dur)
{
	double d = last - first;
	if (fabs(d) < FLOOR_MEM) {
		e->reads = GP_READS_FLAT;
	} else if (d > 0 && last > peak_before + FLOOR_MEM) {
		e->reads = GP_READS_NEW_HIGHS;
		e->x = d / dur;
	} else {
		e->reads = d > 0 ? GP_READS_REFILL : GP_READS_FALLING;
	}
}

/* A counter over the phase: flat under floor, else its rate. */
static void counter_reads(struct gp_evidence *e, double d, double dur, double floor,
			  enum gp_reads kind)
{
	e->reads = d < floor ? GP_READS_FLAT : kind;
	e->x = d / dur;
}

static void memory_evidence(const struct gp_point *p, size_t ia, size_t ib, double dur,
			    struct gp_verdict *v)
{
	static const struct {
		int m;
		const char *name;
	} mem[] = {
		{ GP_M_RSS_FILE, "rss_file" }, { GP_M_RSS_ANON, "rss_anon" },
		{ GP_M_VM_PIN, "vm_pin" }, { GP_M_GPU, "gpu_memory" },
	};
	const struct gp_point *a = &p[ia], *b = &p[ib];
	for (size_t k = 0; k < sizeof mem / sizeof mem[0]; k++) {
		if (mem[k].m == GP_M_GPU && !gpu_seen(b))
			continue;
		double peak = 0;
		for (size_t i = 0; i < ia; i++)
			if (metric_value(&p[i], mem[k].m) > peak)
				peak = metric_value(&p[i], mem[k].m);
		double f = metric_value(a, mem[k].m), l = metric_value(b, mem[k].m);
		if (mem[k].m == GP_M_VM_PIN && f == 0 && l == 0)
			continue;
		mem_reads(add_ev(v, mem[k].name, "process", "bytes", f, l, dur, GP_ROLE_PROGRESS),
			  f, l, peak > f ? peak : f, dur);
	}
}

/* GPU engine time, io and threads created: the other output families. */
static void output_evidence(const struct gp_point *p, size_t ia, size_t ib, double dur,
			    struct gp_verdict *v)
{
	const struct gp_point *a = &p[ia], *b = &p[ib];
	struct gp_evidence *e;
	if (b->have & GP_PT_GPU_DRM) {
		double f = (double)a->gpu_engine_ns, l = (double)b->gpu_engine_ns;
		e = add_ev(v, "gpu_engine_time", "process", "ns", f, l, dur, GP_ROLE_PROGRESS);
		e->reads = l - f >= FLOOR_ENGINE_NS ? GP_READS_GPU_BUSY : GP_READS_FLAT;
		e->x = 100.0 * (l - f) / 1e9 / dur;
	}
	if (b->have & GP_PT_IO) {
		e = add_ev(v, "io_rchar", "process", "bytes", (double)a->io_rchar, (double)b->io_rchar,
			   dur, GP_ROLE_PROGRESS);
		counter_reads(e, (double)b->io_rchar - (double)a->io_rchar, dur, FLOOR_IO, GP_READS_RATE);
		e = add_ev(v, "io_wchar", "process", "bytes", (double)a->io_wchar, (double)b->io_wchar,
			   dur, GP_ROLE_PROGRESS);
		counter_reads(e, (double)b->io_wchar - (double)a->io_wchar, dur, FLOOR_IO, GP_READS_RATE);
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
		e = add_ev(v, "gpu_activity", "process", "percent", a->gpu_act_pct, b->gpu_act_pct, 0,
			   GP_ROLE_ACTIVITY);
		e->reads = GP_READS_GPU_ACTIVITY;
		e->n1 = busy;
		e->n2 = known;
		e->x = maxp;
	}
	/* GPU work, not occupancy (model/gpuwork.h): how many readings saw
	 * work and how many a spin, and the latest that saw either. */
	unsigned wk = 0, sp = 0, gk = 0;
	struct gp_gpu_work_pt last_gw = { 0 };
	for (size_t i = ia + 1; i <= ib; i++) {
		enum gp_gpu_work w = (enum gp_gpu_work)p[i].gw.work;
		if (w == GP_GW_UNKNOWN)
			continue;
		gk++;
		wk += w == GP_GW_WORK;
		sp += w == GP_GW_SPIN;
		if (w == GP_GW_WORK || w == GP_GW_SPIN || !last_gw.work)
			last_gw = p[i].gw;
	}
	if (gk) {
		e = add_ev(v, "gpu_work", "process", "percent", a->gw.pipes, b->gw.pipes, 0,
			   GP_ROLE_PROGRESS);
		e->reads = GP_READS_GPU_WORK;
		e->n1 = wk;
		e->n2 = gk;
		e->x = sp;
		e->gw = last_gw;
	}
	unsigned created = 0;
	for (size_t i = ia + 1; i <= ib; i++)
		created += p[i].threads_created;
	e = add_ev(v, "threads", "process", "count", a->threads, b->threads, dur, GP_ROLE_PROGRESS);
	e->reads = GP_READS_CREATED;
	e->n1 = created;
}

/* Effort: CPU, context switches, storage io, faults, system writeback. */
static void activity_evidence(const struct gp_point *a, const struct gp_point *b, double dur,
			      long page_size, struct gp_verdict *v)
{
	struct gp_evidence *e;
	double cpu = (b->utime + b->stime) - (a->utime + a->stime);
	double sys = b->stime - a->stime;
	e = add_ev(v, "cpu_time", "process", "s", a->utime + a->stime, b->utime + b->stime, dur,
		   GP_ROLE_ACTIVITY);
	e->reads = GP_READS_CORES;
	e->x = cpu / dur;
	e->y = cpu > 0 ? 100.0 * sys / cpu : 0.0;
	e = add_ev(v, "system_time", "process", "s", a->stime, b->stime, dur, GP_ROLE_ACTIVITY);
	e->reads = GP_READS_KERNEL_CORES;
	e->x = sys / dur;
	double cs_a = (double)(a->vcsw + a->nvcsw), cs_b = (double)(b->vcsw + b->nvcsw);
	e = add_ev(v, "context_switches", "process", "count", cs_a, cs_b, dur, GP_ROLE_ACTIVITY);
	e->reads = GP_READS_PER_S;
	e->x = cs_b > cs_a ? (cs_b - cs_a) / dur : 0.0;
	if (b->top_tid) {
		e = add_ev(v, "busiest_thread_cpu", "thread", "percent", a->top_cpu_pct,
			   b->top_cpu_pct, 0, GP_ROLE_ACTIVITY);
		e->reads = GP_READS_BUSIEST;
		e->tid = b->top_tid;
		gp_strlcpy(e->comm, b->top_comm, sizeof e->comm);
		e->x = b->top_cpu_pct;
		e->y = b->top_sys_pct;
	}
	if (b->have & GP_PT_IO) {
		e = add_ev(v, "io_read_bytes", "process", "bytes", (double)a->io_read_bytes,
			   (double)b->io_read_bytes, dur, GP_ROLE_ACTIVITY);
		counter_reads(e, (double)b->io_read_bytes - (double)a->io_read_bytes, dur, 1,
			      GP_READS_RATE);
		e = add_ev(v, "io_write_bytes", "process", "bytes", (double)a->io_write_bytes,
			   (double)b->io_write_bytes, dur, GP_ROLE_ACTIVITY);
		counter_reads(e, (double)b->io_write_bytes - (double)a->io_write_bytes, dur, 1,
			      GP_READS_RATE);
	}
	e = add_ev(v, "major_faults", "process", "count", (double)a->majflt, (double)b->majflt, dur,
		   GP_ROLE_ACTIVITY);
	counter_reads(e, (double)b->majflt - (double)a->majflt, dur, 1, GP_READS_FAULTS);
	e = add_ev(v, "minor_faults", "process", "count", (double)a->minflt, (double)b->minflt, dur,
		   GP_ROLE_ACTIVITY);
	counter_reads(e, (double)b->minflt - (double)a->minflt, dur, 1, GP_READS_FAULTS);
	double ps = page_size > 0 ? (double)page_size : 4096.0;
	if ((a->have & GP_PT_SYS_WB) && (b->have & GP_PT_SYS_WB)) {
		double fd = (double)a->sys_dirtied * ps, ld = (double)b->sys_dirtied * ps;
		e = add_ev(v, "dirtied", "system", "bytes", fd, ld, dur, GP_ROLE_ACTIVITY);
		counter_reads(e, ld - fd, dur, 1, GP_READS_RATE);
		double fw = (double)a->sys_written * ps, lw = (double)b->sys_written * ps;
		e = add_ev(v, "written_back", "system", "bytes", fw, lw, dur, GP_ROLE_ACTIVITY);
		counter_reads(e, lw - fw, dur, 1, GP_READS_RATE);
	}
	if ((a->have & GP_PT_SYS_RECLAIM) && (b->have & GP_PT_SYS_RECLAIM)) {
		double f = (double)a->sys_pgsteal_file * ps, l = (double)b->sys_pgsteal_file * ps;
		e = add_ev(v, "file_reclaim", "system", "bytes", f, l, dur, GP_ROLE_ACTIVITY);
		counter_reads(e, l - f, dur, 1, GP_READS_RATE);
	}
}

static void build_evidence(const struct gp_point *p, size_t n, double from,
			   long page_size, struct gp_verdict *v)
{
	size_t ia = index_at(p, n, from), ib = n - 1;
	if (ia == ib && ia > 0)
		ia--;
	double dur = p[ib].t - p[ia].t;
	if (dur <= 0)
		dur = 1e-9;
	memory_evidence(p, ia, ib, dur, v);
	output_evidence(p, ia, ib, dur, v);
	activity_evidence(&p[ia], &p[ib], dur, page_size, v);
}

/* ---- phases -------------------------------------------------------- */

struct group {
	size_t first, last;        /* step indices */
	double start, end, bytes, max_gap;
	double by_metric[GP_M_COUNT];
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
		for (int m = 0; m < GP_M_COUNT; m++)
			c->by_metric[m] += st[i].by_metric[m];
	}
	return ng;
}

static int dominant_metric(const struct group *g, const struct step *st)
{
	/* GPU work going on at the phase's end is its output now, whatever
	 * bytes a load before it moved. */
	unsigned steps = 0, work = 0;
	for (size_t i = g->first; i <= g->last; i++)
		if (st[i].any) {
			steps++;
			work += (st[i].metrics >> GP_M_GPU_WORK) & 1u;
		}
	if ((st[g->last].metrics & (1u << GP_M_GPU_WORK)) || (work && work * 2 >= steps))
		return GP_M_GPU_WORK;
	/* Bytes read and written are what a program puts out (xz, a loader
	 * reading a file); a heap growing beside them is its working set. */
	double io = g->by_metric[GP_M_RCHAR] + g->by_metric[GP_M_WCHAR];
	if (io > 0 && io >= 0.1 * g->bytes)
		return g->by_metric[GP_M_RCHAR] >= g->by_metric[GP_M_WCHAR] ? GP_M_RCHAR : GP_M_WCHAR;
	int best = -1;
	for (int m = 0; m < GP_M_COUNT; m++)
		if (g->by_metric[m] > 0 && (best < 0 || g->by_metric[m] > g->by_metric[best]))
			best = m;
	if (best >= 0)
		return best;
	for (size_t i = g->first; i <= g->last; i++)
		if (st[i].metrics & (1u << GP_M_GPU_WORK))
			return GP_M_GPU_WORK;
	for (size_t i = g->first; i <= g->last; i++)
		for (int m = 0; m < GP_M_COUNT; m++)
			if (st[i].metrics & (1u << m))
				return m;
	return GP_M_THREADS;
}

static struct gp_phase *add_phase(struct gp_verdict *v, double from, double to,
				  enum gp_phase_kind kind, double rate)
{
	if (v->nphases == GP_VERDICT_MAX_PHASES) {
		memmove(v->phase, v->phase + 1, (GP_VERDICT_MAX_PHASES - 1) * sizeof v->phase[0]);
		v->nphases--;
	}
	struct gp_phase *ph = &v->phase[v->nphases++];
	memset(ph, 0, sizeof *ph);
	ph->from = from;
	ph->to = to;
	ph->kind = kind;
	ph->progress = kind == GP_PHASE_PROGRESS;
	ph->rate = rate;
	return ph;
}

/* A progress phase's output: the dominant metric's rate first, then each
 * metric that carried a tenth of the output or more ("RssFile +356.0
 * MiB/s, read() +12.0 MiB/s"); no bytes: the metric is "moving". */
static void progress_metrics(struct gp_phase *ph, const struct group *g, const struct step *st)
{
	int m = dominant_metric(g, st);
	double dur = g->end - g->start;
	ph->m[0] = (enum gp_output)m;
	ph->nm = 1;
	if (!(g->bytes > 0 && dur > 0)) {
		ph->moving = true;
		return;
	}
	ph->mrate[0] = g->by_metric[m] / dur;
	for (int k = 0; k < GP_M_COUNT; k++) {
		if (k != m && g->by_metric[k] > 0.1 * g->bytes) {
			ph->m[ph->nm] = (enum gp_output)k;
			ph->mrate[ph->nm++] = g->by_metric[k] / dur;
		}
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
	"hang-busy-user", "stopped", "exited", "undecided", "hang-gpu-spin",
};

const char *gp_class_name(enum gp_class c)
{
	return (unsigned)c < GP_CLASS_COUNT ? class_names[c] : "undecided";
}

static const char *const conf_names[] = { "low", "medium", "high", "any" };

const char *gp_conf_name(enum gp_conf c)
{
	return (unsigned)c <= GP_CONF_ANY ? conf_names[c] : "low";
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

/* What judging one trace needs, shared by the steps below. */
struct judging {
	const struct gp_point *p, *l;
	size_t n;
	const struct gp_verdict_opts *o;
	double H, t0, t_end, last_progress, flat, interval;
	struct step *st;
	struct group g[GP_VERDICT_MAX_PHASES];
	size_t ng;
	struct gp_activity act;
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
	v->cls = GP_CLASS_STOPPED;
	v->story = GP_STORY_STOPPED;
	v->state = l->state;
	v->stopped_n = j->n - i;
	v->since_s = p[i].t;
	v->judged_from = p[i].t;
	v->judged_to = j->t_end;
	v->confidence = GP_CONF_HIGH;
	add_phase(v, p[i].t, j->t_end, GP_PHASE_STOPPED, 0);
	build_evidence(p, j->n, p[i].t, j->o->page_size, v);
	return true;
}

/* Phases, oldest first: flat stretches of at least H, and progress. */
static void build_phases(struct judging *j, struct gp_verdict *v)
{
	double cursor = j->t0;
	for (size_t k = 0; k < j->ng; k++) {
		const struct group *g = &j->g[k];
		if (g->start - cursor >= j->H)
			add_phase(v, cursor, g->start, GP_PHASE_NO_OUTPUT, 0);
		double dur = g->end - g->start;
		struct gp_phase *ph = add_phase(v, g->start, g->end, GP_PHASE_PROGRESS,
						dur > 0 ? g->bytes / dur : 0);
		progress_metrics(ph, g, j->st);
		ph->pid = phase_process(j->p, g->first, g->last, ph->comm, sizeof ph->comm);
		for (size_t q = g->first; q <= g->last; q++)
			if (j->p[q].gw.work == GP_GW_WORK) {
				ph->have_gw = true;
				ph->gw = j->p[q].gw;
			}
		cursor = g->end;
	}
	j->last_progress = j->ng ? j->g[j->ng - 1].end : j->t0;
	j->flat = j->t_end - j->last_progress;
}

/* A hang: nothing visible moved for hang_after seconds. */
static void judge_hang(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_activity *act = &j->act;
	v->cls = act->kind;
	v->story = GP_STORY_HANG;
	v->act = *act;
	v->flat = j->flat;
	v->after_progress = j->ng > 0;
	v->io_seen = j->io_seen;
	v->gpu_seen = j->gpu;
	v->since_s = v->judged_from = j->last_progress;
	v->judged_to = j->t_end;
	add_phase(v, j->last_progress, j->t_end, GP_PHASE_ACTIVITY, 0);
	bool long_flat = j->flat >= 2 * j->H;
	enum gp_conf level = long_flat && j->io_seen ? GP_CONF_HIGH
			     : long_flat || j->io_seen ? GP_CONF_MEDIUM : GP_CONF_LOW;
	/* High only where the evidence cannot be read another way: a busy
	 * thread with no output may be computing; waits the outside look
	 * cannot tell cap it too (classify_waits). */
	enum gp_conf cap = act->kind == GP_CLASS_HANG_BUSY_USER ? GP_CONF_MEDIUM : act->conf_cap;
	if (cap != GP_CONF_ANY && level != GP_CONF_LOW
	    && (cap == GP_CONF_LOW || level == GP_CONF_HIGH)) {
		level = cap;
		v->cap_why = act->kind == GP_CLASS_HANG_BUSY_USER ? GP_CAP_BUSY_USER
			     : act->kind == GP_CLASS_HANG_GPU_SPIN ? GP_CAP_GPU_WORK
			     : act->kind == GP_CLASS_WAITING_GPU && act->gw_n[GP_GW_WORK] == 0
			       && act->gw_n[GP_GW_BUSY] ? GP_CAP_GPU_WORK
			     : act->kind == GP_CLASS_WAITING_GPU ? GP_CAP_GPU : GP_CAP_WAITS;
	}
	v->confidence = level;
	if (j->o->stuck && j->o->stuck->t >= 0)
		v->stuck = *j->o->stuck;
	build_evidence(j->p, j->n, j->last_progress, j->o->page_size, v);
}

/* Flat, but not for hang_after yet: since the last progress (ng > 0) or
 * since the start. */
static void judge_short(const struct judging *j, struct gp_verdict *v)
{
	double from = j->ng ? j->last_progress : j->t0;
	v->cls = GP_CLASS_UNDECIDED;
	v->story = GP_STORY_SHORT;
	v->act = j->act;
	v->flat = j->flat;
	v->after_progress = j->ng > 0;
	v->since_s = v->judged_from = from;
	v->judged_to = j->t_end;
	v->needs_s = j->H - j->flat;
	v->leans = j->act.kind;
	add_phase(v, from, j->t_end, GP_PHASE_ACTIVITY, 0);
	v->confidence = GP_CONF_LOW;
	build_evidence(j->p, j->n, from, j->o->page_size, v);
}

/* ETA when what is being paged in has a known size. */
static void add_eta(const struct judging *j, const struct group *c, double recent,
		    struct gp_verdict *v)
{
	const struct gp_point *l = j->l;
	v->eta_s = -1;
	if (dominant_metric(c, j->st) != GP_M_RSS_FILE || l->map_bytes <= l->rss_file || recent <= 0)
		return;
	/* RssFile holds the libraries too: never below 0 to go */
	v->eta_s = ((double)l->map_bytes - (double)l->rss_file) / recent;
	v->eta_total = (double)l->map_bytes;
	v->eta_resident = (double)l->rss_file;
}

/* Progress.  Slow when it fell to under a tenth of its own earlier rate
 * (cut there: since_s is the slowdown), or runs under --slow-rate. */
static void judge_progress(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_point *p = j->p;
	const struct group *c = &j->g[j->ng - 1];
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
	/* Output that is GPU work has no bytes: a load of 437 MiB/s followed
	 * by a GEMM loop is no slowdown to 0 B/s (the H200, issue 19). */
	for (size_t i = split + 1; slowed && i <= c->last; i++)
		if (j->st[i].metrics & (1u << GP_M_GPU_WORK))
			slowed = false;
	double recent = slowed ? after : rate;
	bool slow = slowed || (j->o->slow_rate > 0 && rate < j->o->slow_rate && c->bytes > 0);
	v->cls = slow ? GP_CLASS_SLOW_PROGRESS : GP_CLASS_PROGRESS;
	v->story = slowed ? GP_STORY_SLOWED : slow ? GP_STORY_SLOW_RATE : GP_STORY_PROGRESS;
	v->since_s = slowed ? p[split].t : c->start;
	v->judged_from = v->since_s;
	v->judged_to = j->t_end;
	v->rate_now = recent;
	if (slowed) {
		/* Cut the last progress phase where it slowed down. */
		struct gp_phase *last = &v->phase[v->nphases - 1];
		enum gp_output dm = (enum gp_output)dominant_metric(c, j->st);
		last->to = p[split].t;
		last->rate = before;
		last->nm = 1;
		last->m[0] = dm;
		last->mrate[0] = before;
		last->moving = false;
		last->pid = 0;
		struct gp_phase *ph = add_phase(v, p[split].t, c->end, GP_PHASE_PROGRESS, after);
		ph->nm = 1;
		ph->m[0] = dm;
		ph->mrate[0] = after;
		v->rate_before = before;
		v->ratio = isfinite(ratio) ? ratio : 0.0;
	}
	add_eta(j, c, recent, v);
	unsigned events = 0;
	for (size_t i = c->first; i <= c->last; i++)
		events += j->st[i].any;
	bool fresh = j->flat <= 2 * j->interval + 1e-9 || j->flat <= c->max_gap + 1e-9;
	v->confidence = slow ? GP_CONF_MEDIUM : events >= 3 && fresh ? GP_CONF_HIGH : GP_CONF_MEDIUM;
	v->events = events;
	v->flat = j->flat;
	build_evidence(p, j->n, v->since_s, j->o->page_size, v);
}

static void judge(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
		  struct gp_verdict *v)
{
	struct judging *j = calloc(1, sizeof *j);
	if (!j || !(j->st = calloc(n, sizeof *j->st))) {
		free(j);
		v->cls = GP_CLASS_UNDECIDED;
		v->story = GP_STORY_NO_MEMORY;
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

/* The kernel's words in the judged phase: driver errors and hang/lockup/
 * OOM warnings, the first GP_VERDICT_MAX_KMSG kept and the rest counted
 * (a driver's other lines are context, not named). */
static void kmsg_in_phase(const struct gp_verdict_opts *o, struct gp_verdict *v)
{
	for (size_t i = 0; i < o->nkmsg; i++) {
		const struct gp_kmsg_note *k = &o->kmsg[i];
		if (!strcmp(k->kind, "other") || k->t < v->judged_from - 1 || k->t > v->judged_to + 1)
			continue;
		if (v->nkmsg == GP_VERDICT_MAX_KMSG)
			v->kmsg_more++;
		else
			v->kmsg[v->nkmsg++] = *k;
	}
}

void gp_verdict_compute(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
			struct gp_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->eta_s = -1;
	v->stuck.t = -1;
	v->before = v->leans = GP_CLASS_COUNT;
	v->act.kind = GP_CLASS_UNDECIDED;
	v->act.conf_cap = GP_CONF_ANY;
	v->act.host_kind = GP_CLASS_COUNT;
	v->hang_after = o->hang_after > 0 ? o->hang_after : GP_VERDICT_HANG_AFTER_DEFAULT;
	v->confidence = GP_CONF_LOW;
	v->n_samples = n;
	if (o->machine) {
		gp_strlcpy(v->machine, o->machine, sizeof v->machine);
		v->machine_set = true;
	}
	if (n < 3) {
		v->cls = GP_CLASS_UNDECIDED;
		v->story = GP_STORY_TOO_FEW;
		if (n)
			v->since_s = v->judged_from = p[0].t, v->judged_to = p[n - 1].t;
	} else {
		judge(p, n, o, v);
	}
	const struct gp_point *l = n ? &p[n - 1] : NULL;
	if (l && !(l->have & GP_PT_IO))
		v->unseen |= GP_UNSEEN_IO;
	if (l && !(l->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML)))
		v->unseen |= GP_UNSEEN_GPU;
	if (l && !(l->have & GP_PT_SYSCALL))
		v->unseen |= GP_UNSEEN_SYSCALL;
	if (!o->kstacks_seen)
		v->unseen |= GP_UNSEEN_KSTACKS;
	if (o->kmsg_why && *o->kmsg_why)
		gp_strlcpy(v->kmsg_why, o->kmsg_why, sizeof v->kmsg_why);
	if (o->nkmsg && v->cls != GP_CLASS_PROGRESS)
		kmsg_in_phase(o, v);
	if (o->ras) /* NCCL's RAS reads: the renderer names a lagging rank */
		v->ras = *o->ras;

	if (o->end_reason && !strcmp(o->end_reason, "exited")) {
		v->before = v->cls;
		v->cls = GP_CLASS_EXITED;
		v->have_status = o->have_status;
		v->status = o->status;
		v->signal = o->signal;
		v->exit_t = l ? l->t : 0.0;
	}
}

bool gp_flat_watch(struct gp_flat_watch *w, const struct gp_point *p)
{
	static const int mem[] = { GP_M_RSS_FILE, GP_M_RSS_ANON, GP_M_VM_PIN, GP_M_GPU };
	static const int ctr[] = { GP_M_RCHAR, GP_M_WCHAR, GP_M_ENGINE };
	if (!w->init) {
		for (int k = 0; k < 4; k++)
			w->hi[k] = metric_value(p, mem[k]);
		for (int k = 0; k < 3; k++)
			w->base[k] = metric_value(p, ctr[k]);
		w->since = p->t;
		w->init = true;
		return false;
	}
	bool step = p->threads_created || p->procs_created || p->gw.work == GP_GW_WORK;
	for (int k = 0; k < 4; k++) {
		double v = metric_value(p, mem[k]);
		if (v >= w->hi[k] + step_floor(mem[k])) {
			w->hi[k] = v;
			step = true;
		}
	}
	for (int k = 0; k < 3; k++)
		step |= counter_step(&w->base[k], metric_value(p, ctr[k]), step_floor(ctr[k]));
	if (step)
		w->since = p->t;
	return step;
}

bool gp_verdict_class_valid(const char *name)
{
	static const char *const classes[] = {
		"progress", "slow-progress", "idle", "waiting-gpu", "hang-blocked",
		"hang-busy-kernel", "hang-busy-user", "stopped", "exited", "undecided",
		"hang-gpu-spin",
	};
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
		if (!strcmp(name, classes[i]))
			return true;
	return false;
}

void gp_loaded_verdict_opts(const struct gp_loaded *l, struct gp_verdict_opts *vo)
{
	vo->page_size = l->page_size;
	vo->machine = l->machine;
	vo->kstacks_seen = l->kstacks_seen;
	vo->stuck = l->stuck.t >= 0 ? &l->stuck : NULL;
	vo->kmsg = l->kmsg;
	vo->nkmsg = l->nkmsg;
	vo->ras = l->ras.s.reads ? &l->ras.s : NULL;
	if (vo->hang_after <= 0) {
		json_t *h = json_object_get(l->verdict, "hang_after_s");
		vo->hang_after = json_is_number(h) ? json_number_value(h) : GP_VERDICT_HANG_AFTER_DEFAULT;
	}
	json_t *st = json_object_get(l->exit, "status"), *sg = json_object_get(l->exit, "signal");
	vo->end_reason = json_string_value(json_object_get(l->exit, "reason"));
	vo->have_status = json_is_integer(st) || json_is_integer(sg);
	vo->status = json_is_integer(st) ? (int)json_integer_value(st) : 0;
	vo->signal = json_is_integer(sg) ? (int)json_integer_value(sg) : 0;
}
