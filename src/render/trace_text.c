#include "config.h"
#include "trace_text.h"
#include "safetext.h"
#include "units.h"

#include <math.h>
#include <string.h>

static double mib_rate(uint64_t a, uint64_t b, double unit, double dt)
{
	if (dt <= 0 || b < a)
		return 0;
	return (double)(b - a) * unit / (1 << 20) / dt;
}

void gp_render_live_line(FILE *out, const struct gp_point *prev,
			 const struct gp_point *cur, long page_size)
{
	char rss[32], gpu[32] = "-";
	gp_fmt_size(rss, sizeof rss, (double)cur->rss_file);
	if (cur->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML))
		gp_fmt_size(gpu, sizeof gpu, (double)cur->gpu_bytes);
	char top[128] = "-", comm[GP_SAFE_COMM];
	if (prev && cur->top_tid)
		snprintf(top, sizeof top, "%d %-15s %5.1f%% (sys %5.1f%%)", cur->top_tid,
			 gp_safe_str(cur->top_comm, comm, sizeof comm), cur->top_cpu_pct, cur->top_sys_pct);
	fprintf(out, "%7.1fs  thr %-4u  top %-42s", cur->t, cur->threads, top);
	fprintf(out, "  total %6.1f%%  RssFile %9s  GPU %9s", prev ? cur->cpu_pct : 0.0, rss, gpu);
	if (prev && (cur->have & GP_PT_SYS_WB)) {
		double dt = cur->t - prev->t;
		fprintf(out, "  dirtied %7.1f written %7.1f MiB/s",
			mib_rate(prev->sys_dirtied, cur->sys_dirtied, (double)page_size, dt),
			mib_rate(prev->sys_written, cur->sys_written, (double)page_size, dt));
	}
	fputc('\n', out);
	fflush(out);
}

struct range {
	uint64_t first, last, peak;
};

static struct range range_of(const struct gp_series *s, size_t off)
{
	struct range r = { 0, 0, 0 };
	for (size_t i = 0; i < s->n; i++) {
		uint64_t v = *(const uint64_t *)((const char *)&s->pt[i] + off);
		if (i == 0)
			r.first = v;
		r.last = v;
		if (v > r.peak)
			r.peak = v;
	}
	return r;
}

static void mem_row(FILE *out, const char *name, const struct gp_series *s, size_t off)
{
	struct range r = range_of(s, off);
	char a[32], b[32], c[32];
	gp_fmt_size(a, sizeof a, (double)r.first);
	gp_fmt_size(b, sizeof b, (double)r.last);
	gp_fmt_size(c, sizeof c, (double)r.peak);
	fprintf(out, "  %-10s %10s -> %10s   (peak %s)\n", name, a, b, c);
}

/* "processes  1 -> 1 (max 6; 294 started, 294 exited during the trace;
 * 45 of them seen by a sample)": every start counts, the ones between two
 * samples too (issue 20: a build's 294 processes read "45 started"). */
static void procs_row(FILE *out, const struct gp_series *s, const struct gp_trace_end *e)
{
	const struct gp_point *f = &s->pt[0], *l = &s->pt[s->n - 1];
	uint32_t maxp = 0, pcreated = 0, pexited = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->pt[i].procs > maxp)
			maxp = s->pt[i].procs;
		pcreated += s->pt[i].procs_created;
		pexited += s->pt[i].procs_exited;
	}
	fprintf(out, "  processes  %u -> %u (max %u; ", f->procs, l->procs, maxp);
	if (e->have_forks) {
		fprintf(out, "%s%lu started, %lu exited during the trace%s; %u of them seen by a sample)\n",
			e->forks_lost ? "at least " : "", e->forks_started, e->forks_exited,
			e->forks_lost ? " (the kernel dropped events)" : "", pcreated);
		return;
	}
	fprintf(out, "%u started, %u exited that a sample saw", pcreated, pexited);
	if (e->forks_why)
		fprintf(out, "; shorter-lived ones not counted: %s", e->forks_why);
	fputs(")\n", out);
}

void gp_render_trace_summary(FILE *out, const struct gp_series *s,
			     const struct gp_trace_end *e)
{
	double span = s->n > 1 ? s->pt[s->n - 1].t - s->pt[0].t : 0;
	char comm[GP_SAFE_COMM];
	fprintf(out, "gpuprobe trace: pid %d (%s): %zu sample%s over %.1f s; ", e->pid,
		e->comm ? gp_safe_str(e->comm, comm, sizeof comm) : "?", s->n, s->n == 1 ? "" : "s", span);
	if (e->have_status && e->signal)
		fprintf(out, "%s (killed by signal %d)\n", e->reason, e->signal);
	else if (e->have_status)
		fprintf(out, "%s (status %d)\n", e->reason, e->status);
	else
		fprintf(out, "%s\n", e->reason);
	if (e->cmdline)
		fprintf(out, "  command    %s\n", e->cmdline);
	if (e->started_as)
		fprintf(out, "  started as %s\n", e->started_as);
	if (e->where)
		fprintf(out, "  lives in   %s\n", e->where);
	if (s->n == 0) {
		fprintf(out, "  no sample was taken\n");
		return;
	}
	const struct gp_point *f = &s->pt[0], *l = &s->pt[s->n - 1];
	uint32_t maxthr = 0;
	unsigned long created = 0, exited = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->pt[i].threads > maxthr)
			maxthr = s->pt[i].threads;
		if (i) {
			created += s->pt[i].threads_created;
			exited += s->pt[i].threads_exited;
		}
	}
	fprintf(out, "  threads    %u -> %u (max %u; %lu created, %lu exited, %lu vanished mid-read)\n",
		f->threads, l->threads, maxthr, created, exited, e->lost_threads);
	mem_row(out, "RssFile", s, offsetof(struct gp_point, rss_file));
	mem_row(out, "RssAnon", s, offsetof(struct gp_point, rss_anon));
	if (range_of(s, offsetof(struct gp_point, vm_pin)).peak)
		mem_row(out, "VmPin", s, offsetof(struct gp_point, vm_pin));
	if (range_of(s, offsetof(struct gp_point, vm_lck)).peak)
		mem_row(out, "VmLck", s, offsetof(struct gp_point, vm_lck));
	if (l->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML))
		mem_row(out, "GPU", s, offsetof(struct gp_point, gpu_bytes));
	else
		fprintf(out, "  GPU        unknown (no DRM fdinfo, KFD or NVML entry for this process)\n");
	if (span > 0) {
		double cpu = ((l->utime + l->stime) - (f->utime + f->stime)) / span * 100.0;
		double sys = (l->stime - f->stime) / span * 100.0;
		fprintf(out, "  CPU        %.1f%% of a core on average (system %.1f%%)\n", cpu, sys);
		/* The thread busiest most often, and its peak. */
		const struct gp_point *best = NULL;
		for (size_t i = 1; i < s->n; i++)
			if (s->pt[i].top_tid && (!best || s->pt[i].top_cpu_pct > best->top_cpu_pct))
				best = &s->pt[i];
		/* Under a tenth of a percent, no thread was busy: say so rather
		 * than name one "busiest" at 0.0%. */
		if (best && best->top_cpu_pct >= 0.1f)
			fprintf(out, "  busiest    thread %d (%s) %.1f%% at +%.1f s, system %.1f%%\n",
				best->top_tid, gp_safe_str(best->top_comm, comm, sizeof comm), best->top_cpu_pct,
				best->t, best->top_sys_pct);
		else
			fprintf(out, "  busiest    none: no thread above 0.1%% CPU in any interval\n");
		if (l->procs > 1 || f->procs > 1 || l->procs_exited || e->forks_started)
			procs_row(out, s, e);
		if (l->have & GP_PT_IO) {
			char r[32], w[32];
			/* Differences of counters read from outside: never wrapped. */
			gp_fmt_size(r, sizeof r, l->io_rchar > f->io_rchar ? (double)(l->io_rchar - f->io_rchar) : 0);
			gp_fmt_size(w, sizeof w, l->io_wchar > f->io_wchar ? (double)(l->io_wchar - f->io_wchar) : 0);
			fprintf(out, "  io         read %s, written %s (rchar/wchar)\n", r, w);
		}
		if (l->have & GP_PT_SYS_WB) {
			double ps = (double)e->page_size;
			fprintf(out, "  system     dirtied %.1f MiB/s, written back %.1f MiB/s",
				mib_rate(f->sys_dirtied, l->sys_dirtied, ps, span),
				mib_rate(f->sys_written, l->sys_written, ps, span));
			if (l->have & GP_PT_SYS_RECLAIM)
				fprintf(out, ", file reclaim %.1f MiB/s",
					mib_rate(f->sys_pgsteal_file, l->sys_pgsteal_file, ps, span));
			fputc('\n', out);
		}
	}
	if (e->late) {
		fprintf(out, "  note       %lu tick%s skipped: a sample took longer than the interval",
			e->late, e->late == 1 ? "" : "s");
		/* Why: gpuprobe starved of a CPU (a quarter of the trace or
		 * more spent runnable, not running), or its own cost. */
		if (e->have_sampler && e->sampler_wait_s >= 0.25 * e->span_s)
			fprintf(out, "; gpuprobe waited %.1f s of %.1f s for a CPU (the machine is saturated): "
				"run it at a higher priority (as root: nice -n -10 gpuprobe ...) for steadier samples",
				e->sampler_wait_s, e->span_s);
		else if (e->have_sampler && e->sampler_cpu_s >= 0.5 * e->span_s)
			fprintf(out, "; sampling took %.1f s of CPU in %.1f s: a longer --interval, or --stacks none",
				e->sampler_cpu_s, e->span_s);
		fputc('\n', out);
	}
	if (e->syscall_denied || e->io_denied)
		fprintf(out, "  not seen   %s%s(run as root, or as the target's user)\n",
			e->syscall_denied ? "syscalls " : "", e->io_denied ? "io " : "");
	if (e->kstack_denied)
		fprintf(out, "  not seen   kernel stacks (run as root)\n");
	if (e->output)
		fprintf(out, "  saved      %s (%lu lines)\n", e->output, e->lines);
}
