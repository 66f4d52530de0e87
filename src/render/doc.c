#include "config.h"
#include "doc.h"
#include "parse.h"
#include "safetext.h"
#include "strbuf.h"
#include "syscalls.h"
#include "samplein.h"
#include "grow.h"
#include "rstream.h"
#include "units.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- formatting shared by the renderers ---------------------------------- */

void gp_fmt_value(char *buf, size_t cap, const char *unit, double v)
{
	if (!strcmp(unit, "bytes")) {
		gp_fmt_size(buf, cap, v);
	} else if (!strcmp(unit, "bytes/s")) {
		gp_fmt_rate(buf, cap, v);
	} else if (!strcmp(unit, "s")) {
		snprintf(buf, cap, "%.2f s", v);
	} else if (!strcmp(unit, "ns")) {
		snprintf(buf, cap, "%.3f s", v / 1e9);
	} else if (!strcmp(unit, "%") || !strcmp(unit, "percent")) {
		snprintf(buf, cap, "%.0f%%", v);
	} else {
		snprintf(buf, cap, "%.0f", v);
	}
}

/* A Markdown table cell: '|' escaped; safe text (common/safetext.h): a
 * comm's line break or ESC as \n or \x1b, never raw. */
void gp_md_cell(FILE *out, const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	gp_safe_add(&sb, s);
	for (const char *p = sb.buf; *p; p++) {
		if (*p == '|')
			fputs("\\|", out);
		else
			fputc(*p, out);
	}
	strbuf_release(&sb);
}

/* A code span of s: fenced by one backtick more than its longest run of
 * them, padded where it starts or ends with one (CommonMark 6.1); in a
 * table cell '|' escaped (GFM tables: the one escape a code span there
 * takes), elsewhere not (outside a table "\\|" would show as two
 * characters, and a pasted command would change).  Safe text, as a
 * cell. */
void gp_md_code(FILE *out, const char *raw, bool in_table)
{
	struct strbuf sb = STRBUF_INIT;
	gp_safe_add(&sb, raw);
	const char *s = sb.buf;
	size_t run = 0, longest = 0;
	for (const char *p = s; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	size_t len = strlen(s);
	bool pad = len && (s[0] == '`' || s[len - 1] == '`' || s[0] == ' ');
	for (size_t i = 0; i <= longest; i++)
		fputc('`', out);
	if (pad)
		fputc(' ', out);
	if (in_table)
		gp_md_cell(out, s);
	else
		fputs(s, out);
	if (pad)
		fputc(' ', out);
	for (size_t i = 0; i <= longest; i++)
		fputc('`', out);
	strbuf_release(&sb);
}

/* ---- the metrics ------------------------------------------------------------- */

enum {
	MX_RSS_FILE, MX_RSS_ANON, MX_VM_PIN, MX_GPU, MX_RCHAR, MX_WCHAR, MX_CPU, MX_SYS,
	MX_DIRTIED, MX_WRITTEN, MX_THREADS, MX_COUNT
};

static const struct gp_metric metrics[MX_COUNT] = {
	[MX_RSS_FILE] = { "RssFile", "bytes", GP_MK_LEVEL, 0 },
	[MX_RSS_ANON] = { "RssAnon", "bytes", GP_MK_LEVEL, 0 },
	[MX_VM_PIN] = { "VmPin", "bytes", GP_MK_LEVEL, 0 },
	[MX_GPU] = { "GPU memory", "bytes", GP_MK_LEVEL, 0 },
	[MX_RCHAR] = { "read()", "bytes/s", GP_MK_RATE, 0 },
	[MX_WCHAR] = { "write()", "bytes/s", GP_MK_RATE, 0 },
	[MX_CPU] = { "process CPU", "%", GP_MK_RATE, 1 },
	[MX_SYS] = { "process system CPU", "%", GP_MK_RATE, 1 },
	[MX_DIRTIED] = { "system dirtied", "bytes/s", GP_MK_RATE, 2 },
	[MX_WRITTEN] = { "system written back", "bytes/s", GP_MK_RATE, 2 },
	[MX_THREADS] = { "threads", "count", GP_MK_LEVEL, 3 },
};

size_t gp_metric_count(void)
{
	return MX_COUNT;
}

const struct gp_metric *gp_metric_get(size_t i)
{
	return i < MX_COUNT ? &metrics[i] : NULL;
}

static double level(const struct gp_point *p, size_t i)
{
	switch (i) {
	case MX_RSS_FILE: return (double)p->rss_file;
	case MX_RSS_ANON: return (double)p->rss_anon;
	case MX_VM_PIN: return (double)p->vm_pin;
	case MX_GPU: return (double)p->gpu_bytes;
	case MX_RCHAR: return (double)p->io_rchar;
	case MX_WCHAR: return (double)p->io_wchar;
	case MX_CPU: return p->utime + p->stime;
	case MX_SYS: return p->stime;
	case MX_DIRTIED: return (double)p->sys_dirtied;
	case MX_WRITTEN: return (double)p->sys_written;
	case MX_THREADS: return (double)p->threads;
	}
	return 0;
}

static bool seen(const struct gp_point *p, size_t i)
{
	switch (i) {
	case MX_GPU: return p->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML);
	case MX_RCHAR: case MX_WCHAR: return p->have & GP_PT_IO;
	case MX_DIRTIED: case MX_WRITTEN: return p->have & GP_PT_SYS_WB;
	}
	return true;
}

bool gp_metric_value(const struct gp_doc *d, size_t i, size_t k, double *out)
{
	const struct gp_series *s = &d->l.series;
	if (i >= MX_COUNT || k >= s->n || !seen(&s->pt[k], i))
		return false;
	if (metrics[i].kind == GP_MK_LEVEL) {
		*out = level(&s->pt[k], i);
		return true;
	}
	if (k == 0 || !seen(&s->pt[k - 1], i))
		return false;
	double dt = s->pt[k].t - s->pt[k - 1].t;
	double a = level(&s->pt[k - 1], i), b = level(&s->pt[k], i);
	if (dt <= 0 || b < a)
		return false;
	double r = (b - a) / dt;
	if (i == MX_CPU || i == MX_SYS)
		r *= 100.0;
	else if (i == MX_DIRTIED || i == MX_WRITTEN)
		r *= (double)d->l.page_size;
	*out = r;
	return true;
}

bool gp_metric_present(const struct gp_doc *d, size_t i)
{
	for (size_t k = 0; k < d->l.series.n; k++) {
		double v;
		if (gp_metric_value(d, i, k, &v)) {
			/* levels are shown when seen; rates and VmPin only when they move */
			if (v != 0 || (metrics[i].kind == GP_MK_LEVEL && i != MX_VM_PIN))
				return true;
		}
	}
	return false;
}

/* ---- the second pass: one handler per line type -------------------------------- */

struct scan {
	struct gp_doc *d;
	const struct gp_samplein *si; /* the line's threads, read and resolved */
	size_t sample_idx;
	double judged_from;
	/* The last GP_KLOG_ENDS kmsg lines past the first ones, a ring: a
	 * line pushed out of it is in the middle, kept only when notable. */
	struct gp_klog_row tail[GP_KLOG_ENDS];
	size_t ntail, tail_at;
	size_t middle;               /* rows kept from the middle */
};

/* The slot of tid in the hash (open addressing, linear probing): its
 * aggregate's, or the empty one where it would go. */
static size_t th_slot_of(const struct gp_doc *d, int tid)
{
	size_t mask = d->nslot - 1, h = ((size_t)(unsigned)tid * 2654435761u) & mask;
	while (d->th_slot[h] && d->th[d->th_slot[h] - 1].tid != tid)
		h = (h + 1) & mask;
	return h;
}

/* The hash at twice the aggregates at least: false when it cannot be. */
static bool th_rehash(struct gp_doc *d, size_t want)
{
	if (d->nslot >= 2 * want)
		return true;
	size_t n = d->nslot ? d->nslot : 256;
	while (n < 2 * want)
		n *= 2;
	size_t *slot = calloc(n, sizeof *slot);
	if (!slot)
		return false;
	free(d->th_slot);
	d->th_slot = slot;
	d->nslot = n;
	for (size_t i = 0; i < d->nth; i++)
		d->th_slot[th_slot_of(d, d->th[i].tid)] = i + 1;
	return true;
}

/* The aggregate of tid, made when new.  By a hash: a scan of every
 * aggregate per new thread was quadratic (300 000 threads: 149 s). */
static struct gp_thread_agg *thread(struct scan *sc, int tid)
{
	struct gp_doc *d = sc->d;
	if (!th_rehash(d, d->nth + 1))
		return NULL;
	size_t h = th_slot_of(d, tid);
	if (d->th_slot[h])
		return &d->th[d->th_slot[h] - 1];
	if (!gp_grow(&d->th, &d->capth, d->nth + 1, sizeof *d->th, 64))
		return NULL;
	struct gp_thread_agg *t = &d->th[d->nth++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->cpu_from = SIZE_MAX;
	d->th_slot[h] = d->nth;
	return t;
}

/* Its cpu array, made at point k: absent before its first cpu_pct, 0
 * from there to k (it read under 0.5 %), absent after until written. */
static void cpu_array(const struct gp_doc *d, struct gp_thread_agg *a, size_t k)
{
	size_t n = d->l.series.n;
	a->cpu = malloc(n * sizeof *a->cpu);
	for (size_t i = 0; a->cpu && i < n; i++)
		a->cpu[i] = i >= a->cpu_from && i < k ? 0.0f : NAN;
}

/* A count from a stranger's file: a non-negative integer, else 0. */
static unsigned long count_of(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (unsigned long)json_integer_value(v) : 0;
}

static bool sample_threads(struct scan *sc, size_t k, double t, bool judged, int which,
			   const json_t *jpid, const char *pcomm);

/* A `forks` object (a sample's, the exit line's): every start in the tree. */
static void forks_from(struct gp_doc *d, const json_t *fk)
{
	if (!json_is_object(fk))
		return;
	d->have_forks = true;
	d->forks_started = count_of(fk, "started");
	d->forks_exited = count_of(fk, "exited");
	d->forks_lost = count_of(fk, "lost");
}

/* The series point a sample went into: the sample's own, or, where the
 * series merged older samples (model/series.h), the first point at or
 * after t (a merged point keeps the time of the last sample in it). */
static size_t series_index(const struct gp_series *s, double t, size_t nth)
{
	if (!s->merged)
		return nth;
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->pt[mid].t < t - 1e-9)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void on_sample(struct scan *sc, json_t *line)
{
	struct gp_doc *d = sc->d;
	double t = json_number_value(json_object_get(line, "t"));
	/* The target's name now (format 2 samples carry it): after an exec,
	 * not the one its target line was written with. */
	const char *comm_now = json_string_value(json_object_get(line, "comm"));
	if (comm_now) /* any bytes: safe text (common/safetext.h) */
		gp_safe_str(comm_now, d->comm_now, sizeof d->comm_now);
	/* Every process the tree started (tracer/forks.h), cumulative. */
	const json_t *fk = json_object_get(line, "forks");
	forks_from(d, fk);
	size_t k = series_index(&d->l.series, t, sc->sample_idx++);
	bool judged = t >= sc->judged_from - 1e-9;
	/* The threads of every process of the tree, each with its process
	 * (issue 20: the table showed the target's alone). */
	if (!sample_threads(sc, k, t, judged, -1, json_object_get(line, "pid"), comm_now))
		return;
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(line, "procs"), i, c)
		if (!json_is_false(json_object_get(c, "followed"))
		    && !sample_threads(sc, k, t, judged, (int)i, json_object_get(c, "pid"),
				       json_string_value(json_object_get(c, "comm"))))
			return;
}

/* The strings of a thread's record into its aggregate. */
static void take_strings(struct gp_doc *d, struct gp_thread_agg *a, const struct gp_trec *th)
{
	if (th->have & TR_BIT(TR_WCHAN) && th->wchan[0] && strcmp(th->wchan, "0"))
		gp_strlcpy(a->wchan, th->wchan, sizeof a->wchan);
	if (th->have & TR_BIT(TR_SYSCALL)) {
		if (th->sc.kind == GP_TREC_SC_TEXT) {
			gp_strlcpy(a->syscall, th->sc.text, sizeof a->syscall);
			a->sc_args_set = false;
		} else if (th->sc.have_nr && th->sc.nr < 0) {
			gp_strlcpy(a->syscall, "user space", sizeof a->syscall);
			a->sc_args_set = false;
		}
		else if (th->sc.have_nr && (!a->sc_args_set || a->sc_nr != th->sc.nr
					    || memcmp(a->sc_args, th->sc.args, sizeof a->sc_args))) {
			/* 4 % of report's time when described every sample */
			gp_syscall_describe_on(a->syscall, sizeof a->syscall, d->l.machine, th->sc.nr,
					       th->sc.args);
			a->sc_nr = th->sc.nr;
			memcpy(a->sc_args, th->sc.args, sizeof a->sc_args);
			a->sc_args_set = true;
		}
	}
	if (th->have & TR_BIT(TR_KERNEL) && th->kernel && *th->kernel)
		gp_strlcpy(a->kstack, th->kernel, sizeof a->kstack);
}

/* One process's threads of sample k (which: -1 the sample's own, i its
 * procs[i]) into the per-thread aggregates; false when memory ran out. */
static bool sample_threads(struct scan *sc, size_t k, double t, bool judged, int which,
			   const json_t *jpid, const char *pcomm)
{
	struct gp_doc *d = sc->d;
	int pid = json_is_integer(jpid) && json_integer_value(jpid) > 0 && json_integer_value(jpid) <= INT_MAX
		  ? (int)json_integer_value(jpid) : 0;
	const struct gp_trec *all;
	size_t n = gp_samplein_threads(sc->si, which, &all);
	for (size_t i = 0; i < n; i++) {
		const struct gp_trec *th = &all[i];
		if (!(th->have & TR_BIT(TR_TID)))
			continue;
		struct gp_thread_agg *a = thread(sc, th->tid);
		if (!a)
			return false;
		a->pid = pid;
		if (pcomm)
			gp_strlcpy(a->pcomm, pcomm, sizeof a->pcomm);
		/* Not run since the sample just before, which this aggregate
		 * saw: its strings are the ones taken then. */
		bool same = th->have & TR_BIT(TR_UNCHANGED) && a->seen_at + 1 == sc->sample_idx
			    && a->seen_at;
		a->seen_at = sc->sample_idx;
		if (!same) {
			if (th->have & TR_BIT(TR_COMM))
				gp_strlcpy(a->comm, th->comm, sizeof a->comm);
			a->state = th->have & TR_BIT(TR_STATE) ? th->state : '?';
		}
		a->last_t = t;
		bool cpu = th->have & TR_BIT(TR_CPU);
		if (cpu && k < d->l.series.n) {
			if (a->cpu_from == SIZE_MAX)
				a->cpu_from = k;
			if (!a->cpu && th->cpu_pct >= 0.5)
				cpu_array(d, a, k);
			if (a->cpu)
				a->cpu[k] = (float)th->cpu_pct;
		}
		if (judged) {
			/* the first sample has no cpu_pct (no interval yet) */
			if (cpu) {
				a->judged++;
				a->cpu_sum += th->cpu_pct;
			}
			if (th->have & TR_BIT(TR_SYS))
				a->sys_sum += th->sys_pct;
			int si = a->state == 'R' ? 0 : a->state == 'S' ? 1 : a->state == 'D' ? 2
				 : (a->state == 'T' || a->state == 't') ? 3 : 4;
			a->nstate[si]++;
		}
		if (!same)
			take_strings(d, a, th);
	}
	return true;
}

/* ---- the kernel log -------------------------------------------------------------- */

bool gp_klog_t(const json_t *line, double *t)
{
	const json_t *v = json_object_get(line, "t");
	if (!json_is_number(v))
		return false;
	*t = json_number_value(v);
	return true;
}

bool gp_klog_is_error(const json_t *line)
{
	const char *kind = json_string_value(json_object_get(line, "kind"));
	if (kind && *kind && strcmp(kind, "other") && strcmp(kind, "lost"))
		return true;
	if (kind && !strcmp(kind, "lost"))
		return false;
	/* syslog levels: 0 emerg .. 3 err .. 7 debug */
	const char *drv = json_string_value(json_object_get(line, "driver"));
	const json_t *lv = json_object_get(line, "level");
	return drv && *drv && strcmp(drv, "kernel") && json_is_integer(lv) &&
	       json_integer_value(lv) >= 0 && json_integer_value(lv) <= 3;
}

static bool klog_lost(const json_t *line)
{
	const char *kind = json_string_value(json_object_get(line, "kind"));
	return kind && !strcmp(kind, "lost");
}

static bool klog_push(struct gp_klog *k, json_t *line, unsigned long n)
{
	struct gp_klog_row *r = realloc(k->row, (k->nrow + 1) * sizeof *r);
	if (!r)
		return false;
	k->row = r;
	json_incref(line);
	k->row[k->nrow++] = (struct gp_klog_row){ line, n };
	return true;
}

/* Keeps line within the bound (struct gp_klog) and counts it. */
static void on_kmsg(struct scan *sc, json_t *line)
{
	struct gp_klog *k = &sc->d->klog;
	unsigned long n = k->total++;
	bool err = gp_klog_is_error(line), lost = klog_lost(line);
	double t;
	if (err) {
		k->errors++;
		if (gp_klog_t(line, &t) && t >= sc->judged_from - 1 && t <= sc->d->v.judged_to + 1)
			k->errors_judged++;
	}
	if (lost) {
		const json_t *l = json_object_get(line, "lost");
		/* A stranger's count: a negative or non-integer one adds nothing. */
		unsigned long long add = json_is_integer(l) && json_integer_value(l) > 0
					 ? (unsigned long long)json_integer_value(l) : 0;
		k->lost_lines++;
		k->lost = k->lost > ULLONG_MAX - add ? ULLONG_MAX : k->lost + add;
	}
	if (n < GP_KLOG_ENDS) {
		klog_push(k, line, n);
		return;
	}
	json_incref(line);
	if (sc->ntail < GP_KLOG_ENDS) {
		sc->tail[(sc->tail_at + sc->ntail++) % GP_KLOG_ENDS] = (struct gp_klog_row){ line, n };
		return;
	}
	/* The tail is full: its oldest line is now in the middle. */
	struct gp_klog_row *old = &sc->tail[sc->tail_at];
	if (sc->middle < GP_KLOG_MIDDLE && (gp_klog_is_error(old->line) || klog_lost(old->line)) &&
	    klog_push(k, old->line, old->n))
		sc->middle++;
	json_decref(old->line);
	*old = (struct gp_klog_row){ line, n };
	sc->tail_at = (sc->tail_at + 1) % GP_KLOG_ENDS;
}

/* The end of the scan: the tail after the rows, in order. */
static void klog_finish(struct scan *sc)
{
	for (size_t i = 0; i < sc->ntail; i++) {
		struct gp_klog_row *r = &sc->tail[(sc->tail_at + i) % GP_KLOG_ENDS];
		klog_push(&sc->d->klog, r->line, r->n);
		json_decref(r->line);
	}
	sc->ntail = 0;
}

static void keep_in(json_t *arr, json_t *line)
{
	json_array_append(arr, line);
}

static void on_stacks(struct scan *sc, json_t *line) { keep_in(sc->d->stacks, line); }
static void on_arm(struct scan *sc, json_t *line) { keep_in(sc->d->arms, line); }
static void on_idle(struct scan *sc, json_t *line) { keep_in(sc->d->idle, line); }
static void on_gpu(struct scan *sc, json_t *line) { keep_in(sc->d->gpu, line); }
/* An `error` line (a runtime that did not load, in idle's A/B): a row too. */
static void on_arm_error(struct scan *sc, json_t *line) { keep_in(sc->d->idle, line); }
static void on_known(struct scan *sc, json_t *line) { (void)sc; (void)line; }
/* The GPU runtimes each process maps: its target line's, replaced by its
 * later `runtime_libs` lines.  Kept by pid, the newest; a pid or a list
 * of the wrong type is no row (the file is input like any other). */
static void libs_of(struct scan *sc, json_t *line, const char *key)
{
	json_t *pid = json_object_get(line, "pid"), *libs = json_object_get(line, key);
	if (!json_is_integer(pid) || json_integer_value(pid) <= 0 || json_integer_value(pid) > INT_MAX
	    || !json_is_array(libs))
		return;
	char k[24];
	snprintf(k, sizeof k, "%" JSON_INTEGER_FORMAT, json_integer_value(pid));
	json_t *row = json_object_get(sc->d->libs, k);
	if (!row && json_object_size(sc->d->libs) >= 4096)
		return; /* a bound on what a stranger's file can make us keep */
	if (!row) {
		row = json_object();
		json_object_set(row, "pid", pid);
		json_object_set_new(sc->d->libs, k, row);
	}
	json_t *comm = json_object_get(line, "comm");
	if (json_is_string(comm))
		json_object_set(row, "comm", comm);
	json_object_set(row, "libs", libs);
}
/* NCCL's RAS reads: the first ones and the latest, a bound on what a
 * stranger's file (or a trace of days) makes us keep. */
static void on_ras(struct scan *sc, json_t *line)
{
	if (!json_is_object(line))
		return;
	if (json_array_size(sc->d->ras) >= 64) {
		json_array_remove(sc->d->ras, 16);
		sc->d->ras_more++;
	}
	keep_in(sc->d->ras, line);
}
/* A `target` line of how "exec" (or "renamed") for the trace's own pid:
 * the command it became (trace.c follow_exec); the newest is kept. */
static void on_target(struct scan *sc, json_t *line)
{
	libs_of(sc, line, "runtime_libs");
	const char *how = json_string_value(json_object_get(line, "how"));
	json_t *pid = json_object_get(line, "pid");
	if (how && (!strcmp(how, "exec") || !strcmp(how, "renamed")) && json_is_integer(pid) && sc->d->l.target
	    && json_equal(pid, json_object_get(sc->d->l.target, "pid"))) {
		json_decref(sc->d->target_now);
		sc->d->target_now = json_incref(line);
	}
}
static void on_runtime_libs(struct scan *sc, json_t *line) { libs_of(sc, line, "libs"); }
/* An idle run writes one `verdict` line per runtime, class spin or quiet:
 * the rows of its A/B table.  A trace's verdict is the loader's. */
static void on_verdict(struct scan *sc, json_t *line)
{
	const char *k = json_string_value(json_object_get(line, "class"));
	if (k && (!strcmp(k, "spin") || !strcmp(k, "quiet")))
		keep_in(sc->d->idle, line);
}

/* The dispatch table: a new line type is one row and one handler.
 * header/target/exit/verdict are the loader's (load.c). */
static const struct {
	const char *type;
	void (*fn)(struct scan *, json_t *);
} handlers[] = {
	{ "sample", on_sample },
	{ "stacks", on_stacks },
	{ "arm", on_arm },
	{ "idle", on_idle },
	{ "gpu", on_gpu },
	{ "header", on_known },
	{ "target", on_target },
	{ "runtime_libs", on_runtime_libs },
	{ "exit", on_known },
	{ "verdict", on_verdict },
	{ "error", on_arm_error },
	{ "kmsg", on_kmsg },
	{ "ras", on_ras },
};

/* One line of the second pass, to its type's handler. */
static void scan_line(struct scan *sc, struct gp_samplein *si, const char *buf, size_t len)
{
	json_t *j = gp_samplein_parse(si, buf, len, NULL);
	if (!j)
		return;
	const char *type = json_string_value(json_object_get(j, "type"));
	if (type) {
		size_t h = 0;
		while (h < sizeof handlers / sizeof handlers[0] && strcmp(handlers[h].type, type))
			h++;
		if (h < sizeof handlers / sizeof handlers[0]) {
			handlers[h].fn(sc, j);
		} else {
			json_t *c = json_object_get(sc->d->unknown, type);
			json_object_set_new(sc->d->unknown, type, json_integer(json_integer_value(c) + 1));
		}
	}
	json_decref(j);
}

static int scan_file(struct gp_doc *d, char *err, size_t errcap)
{
	/* A second pass over what the loader read (the same open file, the
	 * same complete lines): the thread table needs the judged phase,
	 * which only the whole series gives, and keeping every thread of
	 * every sample in memory for it would cost what streaming saves.
	 * Read with the first pass's bounds (model/rstream.h), and no more
	 * bytes than it read. */
	if (d->l.fd < 0)
		errno = EBADF;
	int fd = d->l.fd < 0 ? -1 : fcntl(d->l.fd, F_DUPFD_CLOEXEC, 0);
	struct gp_rlines rl;
	if (fd < 0 || gp_rlines_open(&rl, fd) < 0) { /* owns fd */
		snprintf(err, errcap, "cannot read it again: %s", strerror(errno));
		return -1;
	}
	unsigned long long left = d->l.bytes;
	struct scan sc = { .d = d, .judged_from = d->v.judged_from };
	ssize_t len;
	struct gp_samplein *si = gp_samplein_new();
	sc.si = si;
	if (!si) {
		gp_rlines_close(&rl);
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	while (left > 0 && (len = gp_rlines_next(&rl)) > 0) {
		if (rl.line[len - 1] != '\n' || (unsigned long long)len > left)
			break; /* the cut tail of a killed run, or lines written since */
		left -= (unsigned long long)len;
		scan_line(&sc, si, rl.line, (size_t)len);
	}
	klog_finish(&sc);
	gp_samplein_free(si);
	gp_rlines_close(&rl);
	return 0;
}

int gp_doc_load(const char *path, const struct gp_verdict_opts *vo_in, struct gp_doc *d,
		char *err, size_t errcap)
{
	memset(d, 0, sizeof *d);
	d->path = path;
	if (gp_load_result(path, &d->l, err, errcap) < 0)
		return -1;
	struct gp_verdict_opts vo = *vo_in;
	gp_loaded_verdict_opts(&d->l, &vo);
	const char *cmd = json_string_value(json_object_get(d->l.header, "command"));
	d->is_idle = cmd && !strcmp(cmd, "idle");
	d->is_trace = d->l.series.n > 0 && !d->is_idle;
	gp_verdict_compute(d->l.series.pt, d->l.series.n, &vo, &d->v);
	d->arms = json_array();
	d->stacks = json_array();
	d->idle = json_array();
	d->gpu = json_array();
	d->unknown = json_object();
	d->libs = json_object();
	d->ras = json_array();
	if (scan_file(d, err, errcap) < 0) {
		gp_doc_free(d);
		return -1;
	}
	/* The target's name when no sample carried one (gp_doc_comm): the
	 * target line's, as safe text too. */
	if (!d->comm_now[0]) {
		const char *c = json_string_value(json_object_get(d->target_now, "comm"));
		if (!c)
			c = json_string_value(json_object_get(d->l.target, "comm"));
		if (c)
			gp_safe_str(c, d->comm_now, sizeof d->comm_now);
	}
	/* Both passes done: `report` of a thousand files keeps no fd each. */
	close(d->l.fd);
	d->l.fd = -1;
	return 0;
}

void gp_doc_free(struct gp_doc *d)
{
	gp_loaded_free(&d->l);
	json_decref(d->arms);
	json_decref(d->stacks);
	json_decref(d->idle);
	json_decref(d->gpu);
	json_decref(d->unknown);
	for (size_t i = 0; i < d->klog.nrow; i++)
		json_decref(d->klog.row[i].line);
	free(d->klog.row);
	memset(&d->klog, 0, sizeof d->klog);
	json_decref(d->libs);
	d->libs = NULL;
	json_decref(d->ras);
	d->ras = NULL;
	json_decref(d->target_now);
	d->target_now = NULL;
	for (size_t i = 0; i < d->nth; i++)
		free(d->th[i].cpu);
	free(d->th);
	d->th = NULL;
	free(d->th_slot);
	d->th_slot = NULL;
	d->nslot = 0;
	d->nth = d->capth = 0;
	d->arms = d->stacks = d->idle = d->gpu = d->unknown = NULL;
}

static double judged_cpu(const struct gp_thread_agg *t)
{
	return t->judged ? t->cpu_sum / t->judged : 0;
}

static int by_cpu(const void *a, const void *b)
{
	const struct gp_thread_agg *x = *(const struct gp_thread_agg *const *)a;
	const struct gp_thread_agg *y = *(const struct gp_thread_agg *const *)b;
	double cx = judged_cpu(x), cy = judged_cpu(y);
	/* tids and CPU come from the file: no tid subtraction (overflows
	 * for INT_MIN: tests/fuzz, regress/report/tid-int-min), and a NaN
	 * (sums of +-1e308) sorts last, so the order stays consistent. */
	if (cx > cy || (isnan(cy) && !isnan(cx)))
		return -1;
	if (cx < cy || (isnan(cx) && !isnan(cy)))
		return 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

size_t gp_doc_top_threads(const struct gp_doc *d, const struct gp_thread_agg **out, size_t max)
{
	if (!d->nth)
		return 0;
	const struct gp_thread_agg **all = malloc(d->nth * sizeof *all);
	if (!all)
		return 0;
	for (size_t i = 0; i < d->nth; i++)
		all[i] = &d->th[i];
	qsort(all, d->nth, sizeof *all, by_cpu);
	size_t n = d->nth < max ? d->nth : max;
	memcpy(out, all, n * sizeof *out);
	free(all);
	return n;
}
