/* Evidence: the rows the verdict shows for the judged phase -- output
 * (memory, io, GPU, threads) and effort (CPU, switches, faults, writeback). */
#include "config.h"
#include "verdict.h"
#include "verdict_int.h"
#include "parse.h"

#include <math.h>
#include <string.h>

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
			if (gp_output_value(&p[i], mem[k].m) > peak)
				peak = gp_output_value(&p[i], mem[k].m);
		double f = gp_output_value(a, mem[k].m), l = gp_output_value(b, mem[k].m);
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
	/* Byte counters: /proc/PID/io's, and the sockets' (tracer/sockets.h). */
	static const struct { const char *name; int m; uint16_t have; } bytes[] = {
		{ "io_rchar", GP_M_RCHAR, GP_PT_IO }, { "io_wchar", GP_M_WCHAR, GP_PT_IO },
		{ "sock_rx", GP_M_SOCK_RX, GP_PT_SOCK }, { "sock_tx", GP_M_SOCK_TX, GP_PT_SOCK },
	};
	for (size_t k = 0; k < sizeof bytes / sizeof *bytes; k++) {
		if (!(b->have & bytes[k].have))
			continue;
		double f = gp_output_value(a, bytes[k].m), l = gp_output_value(b, bytes[k].m);
		e = add_ev(v, bytes[k].name, "process", "bytes", f, l, dur, GP_ROLE_PROGRESS);
		counter_reads(e, l - f, dur, gp_output_floor(bytes[k].m), GP_READS_RATE);
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

void build_evidence(const struct gp_point *p, size_t n, double from,
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
