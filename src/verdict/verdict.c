#include "config.h"
#include "verdict.h"
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
	"read()", "write()", "threads",
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

static void find_steps(const struct gp_point *p, size_t n, struct step *st)
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
		double lo = INFINITY, hi = 0;
		for (size_t i = n; i-- > 0;) {
			double v = metric_value(&p[i], m);
			if (v < lo)
				lo = v;
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
		if (p[i].threads_created) {
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
	const char *kind;          /* hang-blocked, hang-busy-kernel, hang-busy-user */
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
	int tid;
	unsigned hits;
	double cpu, sys;
	char comm[16];
};

static void tally(struct tid_tally *t, size_t *nt, size_t cap, int tid, double cpu,
		  double sys, const char *comm)
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
		gp_strlcpy(t[k].comm, comm, sizeof t[k].comm);
		(*nt)++;
	}
	t[k].hits++;
	t[k].cpu += cpu;
	t[k].sys += sys;
}

static void measure_activity(const struct gp_point *p, size_t n, double from,
			     long page_size, struct activity *a)
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
		a->kind = "hang-blocked";
	else if (a->sys_pct >= 0.5 * a->cpu_pct)
		a->kind = "hang-busy-kernel";
	else
		a->kind = "hang-busy-user";

	/* The threads that were busiest most often in the phase. */
	struct tid_tally t[64];
	size_t nt = 0;
	for (size_t i = ia + 1; i <= ib; i++) {
		if (p[i].top_cpu_pct >= BLOCKED_CPU_PCT)
			tally(t, &nt, 64, p[i].top_tid, p[i].top_cpu_pct, p[i].top_sys_pct, p[i].top_comm);
		if (p[i].top2_cpu_pct >= BLOCKED_CPU_PCT)
			tally(t, &nt, 64, p[i].top2_tid, p[i].top2_cpu_pct, p[i].top2_sys_pct, p[i].top2_comm);
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
		gp_strlcpy(a->comm, t[b1].comm, sizeof a->comm);
		a->tcpu = t[b1].cpu / samples;
		a->tsys = t[b1].sys / samples;
	}
	/* A second thread is named when it was as busy as the first (seed
	 * 000: two spinners), not when it merely showed up now and then. */
	if (b2 != SIZE_MAX && t[b2].hits * 2 >= t[b1].hits) {
		a->tid2 = t[b2].tid;
		gp_strlcpy(a->comm2, t[b2].comm, sizeof a->comm2);
		a->tcpu2 = t[b2].cpu / samples;
	}
	/* The busiest thread's syscall, most often seen (a thread on a CPU
	 * reads "running": those samples say nothing). */
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
	/* Their hot frames: the latest the stacks module saw. */
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
	const struct gp_point *l = &p[ib];
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

/* "thread 4290 (hal-memory) busy in the kernel, 99% CPU (98% system), in
 * ioctl(...); system dirtied 532 MiB/s ~ written back 529 MiB/s, no file
 * reclaim" */
static void describe_activity(char *buf, size_t cap, const struct activity *a)
{
	char tmp[160];
	if (!strcmp(a->kind, "hang-blocked")) {
		cat(buf, cap, "threads asleep, %.1f%% CPU", a->cpu_pct);
		if (a->wchan_count)
			cat(buf, cap, "; %u of %u threads in %s", a->wchan_count, a->threads, a->wchan);
		if (a->wait_sc_nr >= 0) {
			gp_syscall_describe_on(tmp, sizeof tmp, a->machine, a->wait_sc_nr, a->wait_sc_args);
			cat(buf, cap, "%s %u in %s", a->wchan_count ? "," : ";", a->wait_sc_count, tmp);
		}
		return;
	}
	bool kernel = !strcmp(a->kind, "hang-busy-kernel");
	if (a->tid) {
		cat(buf, cap, "thread %d (%s) busy in %s, %.0f%% CPU (%.0f%% system)", a->tid,
		    a->comm, kernel ? "the kernel" : "user space", a->tcpu, a->tsys);
		if (a->frame[0])
			cat(buf, cap, " at %s", a->frame);
		if (a->tid2) {
			cat(buf, cap, ", and thread %d (%s), %.0f%%", a->tid2, a->comm2, a->tcpu2);
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

static void set_class(struct gp_verdict *v, const char *k)
{
	gp_strlcpy(v->klass, k, sizeof v->klass);
}

static void note_unseen(struct gp_verdict *v, const char *what)
{
	if (v->nunseen < sizeof v->unseen / sizeof v->unseen[0])
		gp_strlcpy(v->unseen[v->nunseen++], what, sizeof v->unseen[0]);
}

static void judge(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
		  struct gp_verdict *v)
{
	double H = o->hang_after > 0 ? o->hang_after : GP_VERDICT_HANG_AFTER_DEFAULT;
	const struct gp_point *l = &p[n - 1];
	double t0 = p[0].t, t_end = l->t;
	char buf[600];

	/* Stopped: SIGSTOP or a debugger holds it; nothing else matters. */
	if (l->state == 'T' || l->state == 't') {
		size_t i = n - 1;
		while (i > 0 && (p[i - 1].state == 'T' || p[i - 1].state == 't'))
			i--;
		set_class(v, "stopped");
		v->since_s = p[i].t;
		v->judged_from = p[i].t;
		v->judged_to = t_end;
		snprintf(v->confidence, sizeof v->confidence, "high");
		snprintf(v->confidence_why, sizeof v->confidence_why,
			 "the process state is %c (stopped) in the last %zu samples", l->state, n - i);
		snprintf(v->summary, sizeof v->summary,
			 "stopped (state %c) since +%.1f s: held by SIGSTOP or a debugger, not hung",
			 l->state, p[i].t);
		add_phase(v, p[i].t, t_end, false, 0, "stopped");
		build_evidence(p, n, p[i].t, o->page_size, v);
		return;
	}

	struct step *st = calloc(n, sizeof *st);
	struct group g[GP_VERDICT_MAX_PHASES];
	if (!st) {
		set_class(v, "undecided");
		snprintf(v->summary, sizeof v->summary, "out of memory");
		return;
	}
	find_steps(p, n, st);
	size_t ng = find_groups(p, n, st, H, g, GP_VERDICT_MAX_PHASES);

	/* Phases, oldest first: flat stretches of at least H, and progress. */
	double cursor = t0;
	for (size_t k = 0; k < ng; k++) {
		if (g[k].start - cursor >= H)
			add_phase(v, cursor, g[k].start, false, 0, "flat");
		progress_what(buf, sizeof buf, &g[k], st);
		double dur = g[k].end - g[k].start;
		add_phase(v, g[k].start, g[k].end, true, dur > 0 ? g[k].bytes / dur : 0, buf);
		cursor = g[k].end;
	}
	double last_progress = ng ? g[ng - 1].end : t0;
	double flat = t_end - last_progress;
	double interval = median_interval(p, n);
	bool io_seen = l->have & GP_PT_IO, gpu = gpu_seen(l);

	struct activity act;
	measure_activity(p, n, last_progress, o->page_size, &act);
	act.machine = o->machine;

	if (flat >= H && flat > 0) {
		/* A hang: nothing visible moved for hang_after seconds. */
		set_class(v, act.kind);
		v->since_s = last_progress;
		v->judged_from = last_progress;
		v->judged_to = t_end;
		buf[0] = '\0';
		describe_activity(buf, sizeof buf, &act);
		add_phase(v, last_progress, t_end, false, 0, buf);
		char d[32];
		gp_fmt_duration(d, sizeof d, flat);
		snprintf(v->summary, sizeof v->summary, "no progress for %s (since +%.1f s): %s",
			 d, last_progress, buf);
		if (ng) {
			char pr[200];
			const struct gp_phase *ph = &v->phase[v->nphases >= 2 ? v->nphases - 2 : 0];
			snprintf(pr, sizeof pr, "; before that +%.1f-%.1f s: %s", ph->from, ph->to, ph->what);
			cat(v->summary, sizeof v->summary, "%s", pr);
		}
		bool long_flat = flat >= 2 * H;
		const char *level = long_flat && io_seen ? "high" : long_flat || io_seen ? "medium" : "low";
		snprintf(v->confidence, sizeof v->confidence, "%s", level);
		snprintf(v->confidence_why, sizeof v->confidence_why,
			 "flat %.0f s = %.1fx --hang-after; memory%s%s flat%s", flat, flat / H,
			 io_seen ? ", io" : "", gpu ? ", GPU" : "",
			 io_seen ? "" : "; io not visible");
		build_evidence(p, n, last_progress, o->page_size, v);
		free(st);
		return;
	}

	if (ng) {
		const struct group *c = &g[ng - 1];
		double allowed = 2 * c->max_gap;
		if (allowed < 3 * interval)
			allowed = 3 * interval;
		if (allowed < 5.0)
			allowed = 5.0;
		if (flat > allowed) {
			/* Progress stopped a while ago, but not for H yet. */
			set_class(v, "undecided");
			v->since_s = last_progress;
			v->judged_from = last_progress;
			v->judged_to = t_end;
			v->needs_s = H - flat;
			gp_strlcpy(v->leans, act.kind, sizeof v->leans);
			buf[0] = '\0';
			describe_activity(buf, sizeof buf, &act);
			add_phase(v, last_progress, t_end, false, 0, buf);
			snprintf(v->summary, sizeof v->summary,
				 "flat for %.0f s since +%.1f s, %.0f s short of --hang-after %.0f: "
				 "leans %s (%s)", flat, last_progress, v->needs_s, H, act.kind, buf);
			snprintf(v->confidence, sizeof v->confidence, "low");
			snprintf(v->confidence_why, sizeof v->confidence_why,
				 "flat for less than --hang-after; trace %.0f s longer to decide", v->needs_s);
			build_evidence(p, n, last_progress, o->page_size, v);
			free(st);
			return;
		}
		/* Progress.  Slow when it fell to under a tenth of its own
		 * earlier rate (cut there: since_s is the slowdown), or runs
		 * under --slow-rate. */
		double dur = c->end - c->start;
		double rate = dur > 0 ? c->bytes / dur : 0;
		double min_side = 3 * interval > 5.0 ? 3 * interval : 5.0;
		size_t split = 0;
		double before = 0, after = 0;
		size_t from = c->first - 1;
		double ratio = slowdown_point(p, st, from, n - 1, min_side, &split, &before, &after);
		bool slowed = ratio >= SLOW_FACTOR;
		double recent = slowed ? after : rate;
		bool slow = slowed || (o->slow_rate > 0 && rate < o->slow_rate && c->bytes > 0);
		set_class(v, slow ? "slow-progress" : "progress");
		v->since_s = slowed ? p[split].t : c->start;
		v->judged_from = v->since_s;
		v->judged_to = t_end;
		char rs[32], ps[32];
		gp_fmt_rate(rs, sizeof rs, recent);
		if (slowed) {
			/* Cut the last progress phase where it slowed down. */
			struct gp_phase *last = &v->phase[v->nphases - 1];
			int dm = dominant_metric(c, st);
			last->to = p[split].t;
			last->rate = before;
			gp_fmt_rate(ps, sizeof ps, before);
			snprintf(last->what, sizeof last->what, "%s +%s", metric_label[dm], ps);
			snprintf(buf, sizeof buf, "%s +%s", metric_label[dm], rs);
			add_phase(v, p[split].t, c->end, true, after, buf);
			snprintf(v->summary, sizeof v->summary,
				 "slow progress since +%.1f s: %s, down from %s before (%.0fx slower)",
				 p[split].t, rs, ps, isfinite(ratio) ? ratio : 0.0);
		} else if (slow) {
			progress_what(buf, sizeof buf, c, st);
			snprintf(v->summary, sizeof v->summary,
				 "slow progress since +%.1f s: %s, under --slow-rate", c->start, buf);
		} else {
			progress_what(buf, sizeof buf, c, st);
			snprintf(v->summary, sizeof v->summary, "making progress since +%.1f s: %s",
				 c->start, buf);
		}
		/* ETA when what is being paged in has a known size. */
		v->eta_s = -1;
		int dm = dominant_metric(c, st);
		if (dm == M_RSS_FILE && l->map_bytes > l->rss_file && recent > 0) {
			double left = (double)l->map_bytes - (double)l->rss_file;
			/* RssFile holds the libraries too: never below 0 to go */
			v->eta_s = left / recent;
			char tot[32], res[32], eta[32];
			gp_fmt_size(tot, sizeof tot, (double)l->map_bytes);
			gp_fmt_size(res, sizeof res, (double)l->rss_file);
			gp_fmt_duration(eta, sizeof eta, v->eta_s);
			cat(v->summary, sizeof v->summary, "; %s of a %s file mapping resident, ETA %s at %s",
			    res, tot, eta, rs);
		}
		unsigned events = 0;
		for (size_t i = c->first; i <= c->last; i++)
			events += st[i].any;
		bool fresh = flat <= 2 * interval + 1e-9 || flat <= c->max_gap + 1e-9;
		snprintf(v->confidence, sizeof v->confidence, "%s",
			 slow ? "medium" : events >= 3 && fresh ? "high" : "medium");
		snprintf(v->confidence_why, sizeof v->confidence_why,
			 "%u intervals with output in this phase; last output %.1f s before the end",
			 events, flat);
		build_evidence(p, n, v->since_s, o->page_size, v);
		free(st);
		return;
	}

	/* No progress ever, and not for long enough to call it a hang. */
	set_class(v, "undecided");
	v->since_s = t0;
	v->judged_from = t0;
	v->judged_to = t_end;
	v->needs_s = H - flat;
	gp_strlcpy(v->leans, act.kind, sizeof v->leans);
	buf[0] = '\0';
	describe_activity(buf, sizeof buf, &act);
	add_phase(v, t0, t_end, false, 0, buf);
	snprintf(v->summary, sizeof v->summary,
		 "no progress in %.0f s of trace, %.0f s short of --hang-after %.0f: leans %s (%s)",
		 flat, v->needs_s, H, act.kind, buf);
	snprintf(v->confidence, sizeof v->confidence, "low");
	snprintf(v->confidence_why, sizeof v->confidence_why,
		 "trace %.0f s longer (or lower --hang-after) to decide", v->needs_s);
	build_evidence(p, n, t0, o->page_size, v);
	free(st);
}

void gp_verdict_compute(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
			struct gp_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->eta_s = -1;
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

bool gp_verdict_class_valid(const char *name)
{
	static const char *const classes[] = {
		"progress", "slow-progress", "hang-blocked", "hang-busy-kernel",
		"hang-busy-user", "stopped", "exited", "undecided",
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
