/* Markdown (GitHub-flavoured) rendering of saved results: what pastes
 * into a bug report.  The shapes are the seeds' own: seed 004's arm
 * tables (arm, call, range, prefault, lock, result; arm, own GTT peak,
 * RssFile, result), seed 000's A/B table (runtime, idle CPU, spinner
 * threads) and its "Environment" list. */
#include "config.h"
#include "render.h"
#include "verdict_text.h"
#include "stacks_text.h"
#include "arms.h"
#include "host_text.h"
#include "klog.h"
#include "ras_text.h"
#include "siblings_text.h"
#include "libs_text.h"
#include "target_text.h"
#include "parse.h"
#include "strbuf.h"
#include "units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* ---- sparklines ------------------------------------------------------------- */

static const char *const blocks[8] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };

size_t gp_sparkline(char *buf, size_t cap, const struct gp_doc *d, size_t m, size_t width,
		    double *vmin, double *vmax)
{
	size_t n = d->l.series.n;
	buf[0] = '\0';
	if (!n || !width)
		return 0;
	if (width > n)
		width = n;
	double *b = calloc(width, sizeof *b);
	unsigned *cnt = calloc(width, sizeof *cnt);
	if (!b || !cnt) {
		free(b);
		free(cnt);
		return 0;
	}
	double t0 = d->l.series.pt[0].t, t1 = d->l.series.pt[n - 1].t;
	double span = t1 > t0 ? t1 - t0 : 1;
	const struct gp_metric *mt = gp_metric_get(m);
	for (size_t k = 0; k < n; k++) {
		double v;
		if (!gp_metric_value(d, m, k, &v))
			continue;
		/* A saved file's samples need not be in time order: a t
		 * before the first one is bucket 0, not a negative double
		 * cast to size_t (undefined; found by tests/fuzz). */
		double x = (d->l.series.pt[k].t - t0) / span * (double)(width - 1) + 0.5;
		size_t j = !(x >= 0) ? 0 : x >= (double)width ? width - 1 : (size_t)x;
		/* levels: the bucket's last value; rates: the mean */
		if (mt->kind == GP_MK_LEVEL)
			b[j] = v;
		else
			b[j] += v;
		cnt[j]++;
	}
	double lo = INFINITY, hi = -INFINITY;
	for (size_t j = 0; j < width; j++) {
		if (!cnt[j])
			continue;
		if (mt->kind == GP_MK_RATE)
			b[j] /= cnt[j];
		lo = fmin(lo, b[j]);
		hi = fmax(hi, b[j]);
	}
	/* Rates from zero, so "0.5 GiB/s all along" is a full bar, not flat. */
	if (mt->kind == GP_MK_RATE && lo > 0)
		lo = 0;
	struct strbuf sb = STRBUF_INIT;
	double last = lo;
	for (size_t j = 0; j < width; j++)
		if (cnt[j]) {
			last = b[j]; /* leading empty buckets take the first value */
			break;
		}
	for (size_t j = 0; j < width && sb.len + 4 < cap; j++) {
		double v = cnt[j] ? b[j] : last;
		last = v;
		/* Clamped before the cast: with values near +-1e308, hi - lo
		 * and v - lo are inf and x NaN (tests/fuzz, regress/report/
		 * sparkline-inf-span). */
		double x = hi > lo ? (v - lo) / (hi - lo) * 7.0 + 0.5 : 0;
		int lv = !(x >= 0) ? 0 : x >= 7 ? 7 : (int)x;
		strbuf_addstr(&sb, blocks[lv]);
	}
	size_t len = strbuf_copy_to(&sb, buf, cap);
	strbuf_release(&sb);
	if (vmin)
		*vmin = isfinite(lo) ? lo : 0;
	if (vmax)
		*vmax = isfinite(hi) ? hi : 0;
	free(b);
	free(cnt);
	return len;
}

/* ---- pieces ------------------------------------------------------------------ */

static const char *target_comm(const struct gp_doc *d)
{
	return gp_doc_comm(d);
}

static void md_verdict_line(FILE *out, const struct gp_doc *d)
{
	const struct gp_verdict *v = &d->v;
	fprintf(out, "**Verdict: `%s`**", gp_class_name(v->cls));
	if (v->before != GP_CLASS_COUNT)
		fprintf(out, " (before that: `%s`)", gp_class_name(v->before));
	fprintf(out, " since %+.1f s, confidence %s — ", v->since_s, gp_conf_name(v->confidence));
	struct strbuf sb = STRBUF_INIT;
	gp_verdict_summary(&sb, v);
	/* Escaped, not just flattened: the summary quotes the file (a
	 * kernel line's "*ERROR*", a "pid='<unknown>'" that GitHub would
	 * take for a tag). */
	gp_md_text(out, sb.buf);
	fputs("\n\n", out);
	/* Beside the verdict: the driver errors of the kernel log (issue 19). */
	strbuf_reset(&sb);
	if (gp_klog_verdict_words(&sb, d)) {
		fputs("**Kernel log:** ", out);
		gp_md_text(out, sb.buf);
		fputs(" — see **Kernel log** below.\n\n", out);
	}
	strbuf_release(&sb);
}

/* The tree's processes and threads, counts that add up: first + started
 * - exited = last (issue 20: "threads 1 -> 3 (0 created)" of a tree). */
static void md_procs(FILE *out, const struct gp_doc *d)
{
	const struct gp_series *s = &d->l.series;
	if (s->n < 1)
		return;
	const struct gp_point *f = &s->pt[0], *l = &s->pt[s->n - 1];
	unsigned long tc = 0, te = 0, pc = 0, pe = 0;
	uint32_t maxp = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (i) {
			tc += s->pt[i].threads_created;
			te += s->pt[i].threads_exited;
		}
		pc += s->pt[i].procs_created;
		pe += s->pt[i].procs_exited;
		maxp = s->pt[i].procs > maxp ? s->pt[i].procs : maxp;
	}
	bool tree = maxp > 1 || pc || d->forks_started;
	fprintf(out, "Threads %u → %u (%lu created, %lu exited%s)", f->threads, l->threads, tc, te,
		tree ? ", in every process of the tree" : "");
	if (tree) {
		fprintf(out, "; processes %u → %u (max %u; ", f->procs, l->procs, maxp);
		if (d->have_forks)
			fprintf(out, "%s%lu started, %lu exited, %lu of them seen by a sample)",
				d->forks_lost ? "at least " : "", d->forks_started, d->forks_exited, pc);
		else
			fprintf(out, "%lu started, %lu exited that a sample saw; shorter-lived ones not counted)",
				pc, pe);
	}
	fputs(".\n\n", out);
}

static void md_context(FILE *out, const struct gp_doc *d)
{
	const json_t *h = d->l.header;
	char dur[32] = "?";
	if (d->l.series.n)
		gp_fmt_duration(dur, sizeof dur, d->l.series.pt[d->l.series.n - 1].t - d->l.series.pt[0].t);
	fprintf(out, "`gpuprobe %s` of **%s** (pid %" JSON_INTEGER_FORMAT "): %zu samples over %s",
		str(h, "command") ? str(h, "command") : "?", target_comm(d),
		json_integer_value(json_object_get(d->l.target, "pid")), d->l.series.samples, dur);
	if (str(h, "started"))
		fprintf(out, ", started %s", str(h, "started"));
	const json_t *ex = d->l.exit;
	if (ex) {
		fprintf(out, "; ended: %s", str(ex, "reason") ? str(ex, "reason") : "?");
		json_t *st = json_object_get(ex, "status"), *sg = json_object_get(ex, "signal");
		if (json_is_integer(st))
			fprintf(out, " (status %" JSON_INTEGER_FORMAT ")", json_integer_value(st));
		if (json_is_integer(sg))
			fprintf(out, " (signal %" JSON_INTEGER_FORMAT ")", json_integer_value(sg));
	} else {
		fputs("; **cut short**: no exit line (the run was killed)", out);
	}
	fputs(".\n\n", out);
	md_procs(out, d);
	/* The command as shell words (pasteable), after its exec; what it
	 * was started as, when that differs (`sh -c 'exec xz ...'`). */
	struct strbuf sb = STRBUF_INIT;
	const json_t *now = gp_doc_target_now(d);
	if (gp_target_words(&sb, now, 64)) {
		fputs("Command line: ", out);
		gp_md_code(out, sb.buf, false);
		fputs("\n\n", out);
	}
	struct strbuf was = STRBUF_INIT;
	if (now != d->l.target && gp_target_words(&was, d->l.target, 64) && strcmp(was.buf, sb.buf)) {
		fputs("Started as ", out);
		gp_md_code(out, was.buf, false);
		fputs(", which exec'd the command above.\n\n", out);
	}
	/* A process in a container: its own pid, the container's id. */
	struct strbuf where = STRBUF_INIT;
	if (gp_target_where(&where, d->l.target))
		fprintf(out, "Lives in: %s.\n\n", where.buf);
	strbuf_release(&where);
	strbuf_release(&was);
	strbuf_release(&sb);
}

static void md_environment(FILE *out, const struct gp_doc *d)
{
	const json_t *host = json_object_get(d->l.header, "host");
	if (!json_is_object(host))
		return;
	fputs("<details><summary>Environment</summary>\n\n", out);
	gp_host_render_markdown(out, host);
	fputs("\n</details>\n\n", out);
}

static void md_phases(FILE *out, const struct gp_doc *d)
{
	const struct gp_verdict *v = &d->v;
	if (v->nphases < 2)
		return;
	fputs("| phase | kind | what |\n|---|---|---|\n", out);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < v->nphases; i++) {
		const struct gp_phase *p = &v->phase[i];
		fprintf(out, "| +%.1f – %.1f s | %s | ", p->from, p->to, p->progress ? "progress" : "flat");
		strbuf_reset(&sb);
		gp_phase_what(&sb, v, i);
		gp_md_cell(out, sb.buf);
		/* The instants the kernel log has driver errors in this phase. */
		strbuf_reset(&sb);
		if (gp_klog_span_words(&sb, d, p->from, p->to, i + 1 == v->nphases)) {
			fputs("; **kernel log**: ", out);
			gp_md_text(out, sb.buf);
		}
		fputs(" |\n", out);
	}
	strbuf_release(&sb);
	fputc('\n', out);
}

static void md_evidence(FILE *out, const struct gp_verdict *v)
{
	if (!v->nev)
		return;
	fprintf(out, "**Evidence** (judged phase +%.1f – %.1f s; progress = output, activity = effort)\n\n",
		v->judged_from, v->judged_to);
	struct strbuf sb = STRBUF_INIT;
	fputs("| metric | scope | first | last | slope | role | reads |\n"
	      "|---|---|---:|---:|---:|---|---|\n", out);
	for (size_t i = 0; i < v->nev; i++) {
		const struct gp_evidence *e = &v->ev[i];
		char f[32], l[32], s[40], unit[16];
		gp_fmt_value(f, sizeof f, e->unit, e->first);
		gp_fmt_value(l, sizeof l, e->unit, e->last);
		if (!strcmp(e->unit, "bytes"))
			gp_fmt_value(s, sizeof s, "bytes/s", e->slope_per_s);
		else {
			snprintf(unit, sizeof unit, "%s", e->unit);
			if (!strcmp(e->unit, "s"))
				snprintf(s, sizeof s, "%.2f s/s", e->slope_per_s);
			else if (!strcmp(e->unit, "ns"))
				snprintf(s, sizeof s, "%.3f s/s", e->slope_per_s / 1e9);
			else if (!strcmp(e->unit, "percent"))
				snprintf(s, sizeof s, "%+.1f %%/s", e->slope_per_s);
			else
				snprintf(s, sizeof s, "%.1f/s", e->slope_per_s);
		}
		fprintf(out, "| %s | %s | %s | %s | %s | %s | ", e->metric, e->scope, f, l, s,
			e->role == GP_ROLE_PROGRESS ? "progress" : "activity");
		strbuf_reset(&sb);
		gp_evidence_reads(&sb, e);
		gp_md_cell(out, sb.buf);
		fputs(" |\n", out);
	}
	strbuf_release(&sb);
	fputc('\n', out);
	const char *line[GP_VERDICT_UNSEEN_MAX];
	size_t nu = gp_verdict_unseen(v, line);
	for (size_t i = 0; i < nu; i++) {
		fputs(i ? "; " : "Not seen: ", out);
		gp_md_cell(out, line[i]);
	}
	if (nu)
		fputs(".\n\n", out);
}

static char main_state(const struct gp_thread_agg *t)
{
	static const char st[5] = { 'R', 'S', 'D', 'T', '?' };
	unsigned best = 0;
	int bi = -1;
	for (int i = 0; i < 5; i++)
		if (t->nstate[i] > best) {
			best = t->nstate[i];
			bi = i;
		}
	return bi < 0 ? t->state : st[bi];
}

#define TOP_THREADS 8
#define SLEEP_GROUPS 48

/* "4290 (llama-cli)": the thread's process; a format 1 file names none
 * per thread (its samples are the target's). */
static void md_process_cell(FILE *out, const struct gp_doc *d, const struct gp_thread_agg *t)
{
	int pid = t->pid ? t->pid : (int)json_integer_value(json_object_get(d->l.target, "pid"));
	const char *pc = t->pcomm[0] ? t->pcomm : gp_doc_comm(d);
	fprintf(out, "| %d (", pid);
	gp_md_cell(out, pc);
	fputs(") | ", out);
}

/* The sleepers of one process with one name, grouped by wchan and call. */
struct sleep_grp {
	const struct gp_thread_agg *first;
	const char *wchan, *sc;
	char state;
	unsigned n;
	bool mixed;     /* same call, different arguments */
};

static bool same_sleep(const struct sleep_grp *g, const struct gp_thread_agg *t, char state)
{
	size_t call = strcspn(t->syscall, "(");
	/* grouped by process, name, wchan and the call's name: a thousand
	 * futex waiters on a thousand addresses are one row, but never
	 * threads of two processes or of two names (issue 20) */
	return g->first->pid == t->pid && !strcmp(g->first->comm, t->comm) && g->state == state
	       && !strcmp(g->wchan, t->wchan) && strcspn(g->sc, "(") == call && !strncmp(g->sc, t->syscall, call);
}

/* Where t's process first comes among the threads (the samples' order). */
static size_t proc_order(const struct gp_doc *d, const struct gp_thread_agg *t)
{
	for (size_t i = 0; i < d->nth; i++)
		if (d->th[i].pid == t->pid)
			return i;
	return d->nth;
}

void gp_md_threads(FILE *out, const struct gp_doc *d)
{
	if (!d->nth)
		return;
	const struct gp_thread_agg *top[TOP_THREADS];
	size_t n = gp_doc_top_threads(d, top, TOP_THREADS);
	/* Busy threads, then the stuck ones (D state, or the wchan most
	 * sleepers share), then the sleepers of each process in groups;
	 * every row names its process. */
	fprintf(out, "**Threads** (%zu seen; busiest over the judged phase, and where the others wait)\n\n", d->nth);
	fputs("| process | thread | comm | CPU | system | state | wchan | syscall |\n"
	      "|---|---:|---|---:|---:|---|---|---|\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct gp_thread_agg *t = top[i];
		double cpu = t->judged ? t->cpu_sum / t->judged : 0;
		if (cpu < 1.0 && main_state(t) != 'D')
			continue;
		md_process_cell(out, d, t);
		fprintf(out, "%d | ", t->tid);
		gp_md_cell(out, t->comm);
		fprintf(out, " | %.0f%% | %.0f%% | %c | %s | ", cpu, t->judged ? t->sys_sum / t->judged : 0,
			main_state(t), t->wchan[0] ? t->wchan : "–");
		gp_md_cell(out, t->syscall[0] ? t->syscall : "–");
		fputs(" |\n", out);
	}
	struct sleep_grp g[SLEEP_GROUPS];
	size_t ng = 0, left = 0;
	for (size_t i = 0; i < d->nth; i++) {
		const struct gp_thread_agg *t = &d->th[i];
		double cpu = t->judged ? t->cpu_sum / t->judged : 0;
		char st = main_state(t);
		if (cpu >= 1.0 || st == 'D')
			continue;
		size_t k = 0;
		while (k < ng && !same_sleep(&g[k], t, st))
			k++;
		if (k == ng) {
			if (ng == SLEEP_GROUPS) {
				left++; /* said in one line below, not merged into a wrong row */
				continue;
			}
			g[ng++] = (struct sleep_grp){ t, t->wchan, t->syscall, st, 0, false };
		}
		if (g[k].n && strcmp(g[k].sc, t->syscall))
			g[k].mixed = true;
		g[k].n++;
	}
	/* By process, in the order the samples first listed them (the
	 * target's first); stable within a process. */
	for (size_t a = 1; a < ng; a++)
		for (size_t b = a; b > 0 && proc_order(d, g[b].first) < proc_order(d, g[b - 1].first); b--) {
			struct sleep_grp x = g[b];
			g[b] = g[b - 1];
			g[b - 1] = x;
		}
	for (size_t k = 0; k < ng; k++) {
		md_process_cell(out, d, g[k].first);
		if (g[k].n == 1)
			fprintf(out, "%d | ", g[k].first->tid);
		else
			fprintf(out, "%u threads | ", g[k].n);
		gp_md_cell(out, g[k].first->comm);
		fprintf(out, " | 0%% | 0%% | %c | %s | ", g[k].state, g[k].wchan[0] ? g[k].wchan : "–");
		if (g[k].mixed)
			fprintf(out, "%.*s(...)", (int)strcspn(g[k].sc, "("), g[k].sc);
		else
			gp_md_cell(out, g[k].sc[0] ? g[k].sc : "–");
		fputs(" |\n", out);
	}
	fputc('\n', out);
	if (left)
		fprintf(out, "%zu more sleeping threads, beyond %d groups, are not listed.\n\n", left,
			SLEEP_GROUPS);
}

/* ---- stacks, collapsed by identical frames ---------------------------------------- */

static void frame_text(char *buf, size_t cap, const json_t *f)
{
	const char *sym = str(f, "symbol"), *mod = str(f, "module"), *file = str(f, "file");
	const char *base = mod ? strrchr(mod, '/') : NULL;
	base = base ? base + 1 : mod;
	struct strbuf sb = STRBUF_INIT;
	if (json_is_true(json_object_get(f, "jit")))
		strbuf_addf(&sb, "[jit] %s", str(f, "pc") ? str(f, "pc") : "?"); /* unwind/xmaps.h */
	else if (sym)
		strbuf_addstr(&sb, sym);
	else if (json_object_get(f, "offset"))
		strbuf_addf(&sb, "?? %s+%s", base ? base : "?",
			    str(f, "offset") ? str(f, "offset") : "?");
	else
		strbuf_addf(&sb, "?? %s", str(f, "pc") ? str(f, "pc") : "?");
	if (base && sym)
		strbuf_addf(&sb, " (%s)", base);
	if (file)
		strbuf_addf(&sb, " at %s:%" JSON_INTEGER_FORMAT, file,
			    json_integer_value(json_object_get(f, "line")));
	strbuf_copy_to(&sb, buf, cap);
	strbuf_release(&sb);
}

struct stack_group {
	char *text;
	int tids[64], pids[64];
	char comms[64][16];
	size_t n, ntids;
};

/* Each thread's latest stack: `trace --stacks hot|all` stacks a quiet
 * thread once per place it waits in, not in every line.  With snap, only
 * the lines of the snapshot at t (every thread, `hang` or `end`): the
 * one the verdict carries, so that its "50 of 51 threads in ..." and the
 * blocks count the same threads (issue 20), not also threads gone
 * before it.  A new array. */
static json_t *latest_stacks(const json_t *stacks, bool snap, double t)
{
	json_t *latest = json_array();
	json_t *by_tid = json_object();
	size_t li, i;
	const json_t *ln, *th;
	json_array_foreach(stacks, li, ln) {
		if (snap && json_number_value(json_object_get(ln, "t")) != t)
			continue;
		json_array_foreach(json_object_get(ln, "threads"), i, th) {
			char key[24];
			snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(th, "tid")));
			if (!json_object_get(by_tid, key))
				json_array_append_new(latest, json_string(key));
			/* with its process: a thread of a tree says whose it is */
			json_t *c = json_is_object(th) ? json_copy((json_t *)th) : json_object();
			json_t *pid = json_object_get(ln, "pid");
			if (c && json_is_integer(pid))
				json_object_set(c, "pid", pid);
			json_object_set_new(by_tid, key, c ? c : json_object());
		}
	}
	json_t *arr = json_array();
	json_array_foreach(latest, i, th)
		json_array_append(arr, json_object_get(by_tid, json_string_value(th)));
	json_decref(latest);
	json_decref(by_tid);
	return arr;
}

/* The first line of a stopped thread's block (stat's state T: a stop
 * signal, SIGSTOP or SIGTSTP, or a debugger's group stop; t: stopped by
 * its tracer, proc(5)). */
static void stopped_line(FILE *m, const char *state)
{
	if (state && state[0] == 'T')
		fputs("(stopped: state T, a stop signal or a debugger)\n", m);
	else if (state && state[0] == 't')
		fputs("(stopped by its tracer: state t)\n", m);
}

/* Adds one thread (its stack's text, taken) to the group of that text;
 * false when memory ran out. */
static bool group_add(struct stack_group **gp, size_t *ng, char *text, int tid, int pid,
		      const char *comm)
{
	struct stack_group *g = *gp;
	size_t k = 0;
	while (k < *ng && strcmp(g[k].text, text))
		k++;
	if (k == *ng) {
		g = realloc(g, (*ng + 1) * sizeof *g);
		if (!g) {
			free(text);
			return false;
		}
		*gp = g;
		memset(&g[k], 0, sizeof g[k]);
		g[k].text = text;
		(*ng)++;
	} else {
		free(text);
	}
	if (g[k].ntids < 64) {
		g[k].tids[g[k].ntids] = tid;
		g[k].pids[g[k].ntids] = pid;
		gp_strlcpy(g[k].comms[g[k].ntids], comm ? comm : "", sizeof g[k].comms[0]);
		g[k].ntids++;
	}
	g[k].n++;
	return true;
}

/* A `stacks` line's thread as the block's text (malloc'd), NULL on failure. */
static char *thread_stack_text(const json_t *th)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return NULL;
	size_t q;
	const json_t *f;
	/* A stopped thread says so first, and so never shares a block with
	 * one that runs (issue 20: `cat` SIGSTOPped in `yes | pv | cat`
	 * looked like any reader). */
	stopped_line(m, str(th, "state"));
	json_array_foreach(json_object_get(th, "frames"), q, f) {
		char fb[512];
		frame_text(fb, sizeof fb, f);
		fprintf(m, "#%-2zu %s\n", q, fb);
		gp_stacks_python_lines(m, f, "        "); /* its Python frames */
	}
	gp_stacks_python_lines(m, th, "        ");
	json_array_foreach(json_object_get(th, "kernel"), q, f)
		fprintf(m, "[k] %s\n", json_is_string(f) ? json_string_value(f) : str(f, "symbol") ? str(f, "symbol") : "?");
	fclose(m);
	return text;
}

static void md_stacks(FILE *out, const struct gp_doc *d)
{
	const json_t *last = json_array_get(d->stacks, json_array_size(d->stacks) - 1);
	struct stack_group *g = NULL;
	size_t ng = 0;
	const char *from;
	const char *why = str(last, "why");
	bool snap = why && (!strcmp(why, "hang") || !strcmp(why, "end"));
	double t = json_number_value(json_object_get(last, "t"));
	json_t *latest = latest_stacks(d->stacks, snap, t);
	if (last) {
		from = snap ? "the snapshot of every thread the verdict judged"
			    : "`stacks` lines, each thread's latest";
		size_t i;
		const json_t *th;
		json_array_foreach(latest, i, th) {
			char *text = thread_stack_text(th);
			json_t *pid = json_object_get(th, "pid");
			if (text && !group_add(&g, &ng, text, (int)json_integer_value(json_object_get(th, "tid")),
					       json_is_integer(pid) ? (int)json_integer_value(pid) : 0, str(th, "comm")))
				break;
		}
	} else {
		/* No `stacks` line: the kernel stacks the samples carried (root). */
		from = "kernel stacks in the samples";
		for (size_t i = 0; i < d->nth; i++) {
			const struct gp_thread_agg *th = &d->th[i];
			if (!th->kstack[0])
				continue;
			char *text = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&text, &len);
			if (!m)
				continue;
			stopped_line(m, (char[2]){ th->state, 0 });
			fputs(th->kstack, m);
			fclose(m);
			if (!group_add(&g, &ng, text, th->tid, th->pid, th->comm))
				break;
		}
	}
	json_decref(latest);
	if (!ng) {
		free(g);
		return;
	}
	size_t total = 0;
	for (size_t k = 0; k < ng; k++)
		total += g[k].n;
	/* Most populous first: the stuck crowd, then the odd ones out. */
	for (size_t a = 1; a < ng; a++)
		for (size_t b = a; b > 0 && g[b].n > g[b - 1].n; b--) {
			struct stack_group x = g[b];
			g[b] = g[b - 1];
			g[b - 1] = x;
		}
	fprintf(out, "<details><summary>Stacks: %zu thread%s, %zu distinct (%s", total,
		total == 1 ? "" : "s", ng, from);
	if (last)
		fprintf(out, snap ? ", at +%.1f s" : ", the last at +%.1f s", t);
	fputs(")</summary>\n\n", out);
	for (size_t k = 0; k < ng; k++) {
		fprintf(out, "%zu thread%s:", g[k].n, g[k].n == 1 ? "" : "s");
		for (size_t q = 0; q < g[k].ntids && q < 12; q++) {
			fprintf(out, " %d", g[k].tids[q]);
			if (g[k].comms[q][0] || (g[k].pids[q] && g[k].pids[q] != g[k].tids[q])) {
				fputs(" (", out);
				gp_md_text(out, g[k].comms[q]);
				if (g[k].pids[q] && g[k].pids[q] != g[k].tids[q])
					fprintf(out, "%sof pid %d", g[k].comms[q][0] ? ", " : "", g[k].pids[q]);
				fputc(')', out);
			}
		}
		if (g[k].n > 12)
			fputs(" ...", out);
		fputs("\n\n```\n", out);
		fputs(g[k].text, out);
		if (g[k].text[0] && g[k].text[strlen(g[k].text) - 1] != '\n')
			fputc('\n', out);
		fputs("```\n\n", out);
		free(g[k].text);
	}
	/* A Go process's goroutines: its threads above are the runtime's */
	size_t li;
	const json_t *ln;
	json_array_foreach(d->stacks, li, ln)
		if (json_number_value(json_object_get(ln, "t")) == t /* the last snapshot */
		    && json_object_get(ln, "goroutines")) {
			fprintf(out, "Pid %lld. ", (long long)json_integer_value(json_object_get(ln, "pid")));
			gp_stacks_goroutine_lines(out, ln, true);
		}
	fputs("</details>\n\n", out);
	free(g);
}

/* The timeline's kernel-log row: a cell per sparkline bucket (the same
 * buckets as gp_sparkline's), █ where a driver error fell. */
static void md_klog_strip(FILE *out, const struct gp_doc *d, size_t width)
{
	size_t n = d->l.series.n, count = 0;
	double t0 = d->l.series.pt[0].t, t1 = d->l.series.pt[n - 1].t, span = t1 > t0 ? t1 - t0 : 1;
	double first = 0, last = 0;
	bool mark[48] = { false };
	if (width > n)
		width = n;
	if (width > sizeof mark || width < 1)
		return;
	for (size_t i = 0; i < d->klog.nrow; i++) {
		double t;
		if (!gp_klog_is_error(d->klog.row[i].line) || !gp_klog_t(d->klog.row[i].line, &t) ||
		    !(t >= t0 && t <= t1))
			continue;
		double x = (t - t0) / span * (double)(width - 1) + 0.5;
		mark[!(x >= 0) ? 0 : x >= (double)width ? width - 1 : (size_t)x] = true;
		if (!count++)
			first = t;
		last = t;
	}
	if (!count)
		return;
	fprintf(out, "| kernel log: driver errors | %+.1f s | %+.1f s | %zu | ", first, last, count);
	for (size_t j = 0; j < width; j++)
		fputs(mark[j] ? "█" : "▁", out);
	fputs(" |\n", out);
}

static void md_metrics(FILE *out, const struct gp_doc *d)
{
	size_t n = d->l.series.n;
	if (n < 2)
		return;
	double t0 = d->l.series.pt[0].t, t1 = d->l.series.pt[n - 1].t;
	fprintf(out, "**Timeline** (+%.0f – %.0f s; each sparkline from its minimum to its maximum, rates from 0)\n\n",
		t0, t1);
	fputs("| metric | first | last | peak | shape |\n|---|---:|---:|---:|---|\n", out);
	for (size_t m = 0; m < gp_metric_count(); m++) {
		if (!gp_metric_present(d, m))
			continue;
		const struct gp_metric *mt = gp_metric_get(m);
		char sp[48 * 4 + 1], f[32] = "–", l[32] = "–", p[32];
		double lo, hi, first = NAN, lastv = NAN;
		gp_sparkline(sp, sizeof sp, d, m, 48, &lo, &hi);
		for (size_t k = 0; k < n; k++) {
			double v;
			if (gp_metric_value(d, m, k, &v)) {
				if (isnan(first))
					first = v;
				lastv = v;
			}
		}
		if (!isnan(first))
			gp_fmt_value(f, sizeof f, mt->unit, first);
		if (!isnan(lastv))
			gp_fmt_value(l, sizeof l, mt->unit, lastv);
		gp_fmt_value(p, sizeof p, mt->unit, hi);
		fprintf(out, "| %s | %s | %s | %s | %s |\n", mt->label, f, l, p, hi > lo ? sp : "flat");
	}
	md_klog_strip(out, d, 48);
	fputc('\n', out);
}

/* ---- pinning arms (seed 004's table) ----------------------------------------------- */

static double num(const json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* The `gpu` line of a lock/pools run: which runtime, from which file. */
static void md_gpu(FILE *out, const struct gp_doc *d)
{
	size_t i;
	const json_t *g;
	json_array_foreach(d->gpu, i, g) {
		fprintf(out, "Runtime: **%s**", str(g, "runtime") ? str(g, "runtime") : "?");
		if (str(g, "lib")) {
			fputs(" from `", out);
			gp_md_cell(out, str(g, "lib"));
			fputc('`', out);
		}
		if (str(g, "version"))
			fprintf(out, ", %s", str(g, "version"));
		if (str(g, "build")) {
			fputs(" (build ", out);
			gp_md_cell(out, str(g, "build"));
			fputc(')', out);
		}
		size_t k;
		const json_t *ag;
		json_array_foreach(json_object_get(g, "agents"), k, ag) {
			const char *lab = str(ag, "label") ? str(ag, "label") : "?", *ty = str(ag, "type");
			fprintf(out, "%s%s", k ? ", " : "; agents: ", lab);
			if (ty && strncmp(lab, ty, strlen(ty)))
				fprintf(out, " %s", ty);
			const char *name = str(ag, "product") ? str(ag, "product") : str(ag, "name");
			if (name) {
				fputs(" (", out);
				gp_md_cell(out, name);
				fputc(')', out);
			}
		}
		fputs(".\n\n", out);
	}
}

/* ---- idle A/B (seed 000's table: runtime, idle CPU, spinner threads) ---------------
 * `gpuprobe idle` writes one `verdict` line per runtime (class spin or
 * quiet, idle_cpu_pct, spinning_threads[], runtime{lib, build, build_id},
 * fix) and an `error` line for a runtime that did not load. */
static void md_idle(FILE *out, const struct gp_doc *d)
{
	if (!json_array_size(d->idle))
		return;
	fputs("| runtime | idle CPU | spinner threads | verdict |\n|---|---:|---|---|\n", out);
	size_t i;
	const json_t *r;
	const char *fix = NULL;
	json_array_foreach(d->idle, i, r) {
		const json_t *rt = json_object_get(r, "runtime");
		const char *lib = str(rt, "lib") && *str(rt, "lib") ? str(rt, "lib") : str(r, "lib");
		fputs("| `", out);
		gp_md_cell(out, lib ? lib : "?");
		fputc('`', out);
		if (str(rt, "build") && *str(rt, "build")) {
			fputs(" (", out);
			gp_md_cell(out, str(rt, "build"));
			fputc(')', out);
		}
		if (str(rt, "build_id") && *str(rt, "build_id"))
			fprintf(out, ", build-id %.12s", str(rt, "build_id"));
		if (json_is_true(json_object_get(rt, "no_interrupts")))
			fputs(", `HSA_ENABLE_INTERRUPT=0`", out);
		if (!strcmp(str(r, "type") ? str(r, "type") : "", "error")) {
			fputs(" | – | – | did not load: ", out);
			gp_md_cell(out, str(r, "error") ? str(r, "error") : str(r, "message") ? str(r, "message") : "?");
			fputs(" |\n", out);
			continue;
		}
		fprintf(out, " | %.1f%% | ", num(r, "idle_cpu_pct", 0));
		size_t q;
		const json_t *t;
		json_array_foreach(json_object_get(r, "spinning_threads"), q, t)
			fprintf(out, "%s%.1f%%", q ? " / " : "", num(t, "cpu_pct", 0));
		if (!json_array_size(json_object_get(r, "spinning_threads")))
			fputs("none", out);
		fprintf(out, " | `%s` |\n", str(r, "class") ? str(r, "class") : "?");
		if (str(r, "fix"))
			fix = str(r, "fix");
	}
	fputc('\n', out);
	if (fix) {
		fputs("Fix direction: ", out);
		gp_md_cell(out, fix);
		fputs("\n\n", out);
	}
}

/* One line on top for an idle result. */
static void idle_summary(FILE *out, const struct gp_doc *d)
{
	size_t i, spin = 0, n = 0;
	const json_t *r;
	double worst = -1;
	json_array_foreach(d->idle, i, r) {
		if (!str(r, "class"))
			continue;
		n++;
		if (!strcmp(str(r, "class"), "spin"))
			spin++;
		if (num(r, "idle_cpu_pct", 0) > worst)
			worst = num(r, "idle_cpu_pct", 0);
	}
	fprintf(out, "**Idle verdict: `%s`** — %zu of %zu runtime%s spin while idle", spin ? "spin" : "quiet",
		spin, n, n == 1 ? "" : "s");
	if (worst >= 0)
		fprintf(out, "; the busiest idles at %.1f%% CPU", worst);
	fputs(".\n\n", out);
}

/* ---- A/B of several traces (seed 004: arm, own GTT peak, RssFile, result) ------------ */

static uint64_t peak(const struct gp_doc *d, size_t off)
{
	uint64_t p = 0;
	for (size_t k = 0; k < d->l.series.n; k++) {
		uint64_t v = *(const uint64_t *)((const char *)&d->l.series.pt[k] + off);
		if (v > p)
			p = v;
	}
	return p;
}

static void md_compare(FILE *out, const struct gp_doc *docs, size_t n)
{
	size_t traces = 0;
	for (size_t i = 0; i < n; i++)
		traces += docs[i].is_trace;
	if (traces < 2)
		return;
	fputs("| arm | own GPU peak | RssFile peak | result |\n|---|---:|---:|---|\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct gp_doc *d = &docs[i];
		if (!d->is_trace)
			continue;
		const char *base = strrchr(d->path, '/');
		char g[32] = "–", r[32];
		bool gpu = false;
		for (size_t k = 0; k < d->l.series.n; k++)
			gpu |= (d->l.series.pt[k].have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML)) != 0;
		if (gpu)
			gp_fmt_value(g, sizeof g, "bytes", (double)peak(d, offsetof(struct gp_point, gpu_bytes)));
		gp_fmt_value(r, sizeof r, "bytes", (double)peak(d, offsetof(struct gp_point, rss_file)));
		fputs("| `", out);
		gp_md_cell(out, base ? base + 1 : d->path);
		fprintf(out, "` (%s) | %s | %s | `%s` since %+.1f s", target_comm(d), g, r, gp_class_name(d->v.cls),
			d->v.since_s);
		if (!d->l.exit)
			fputs(", cut short", out);
		fputs(" |\n", out);
	}
	fputc('\n', out);
}

/* ---- the document ---------------------------------------------------------------------- */

static void md_one(FILE *out, const struct gp_doc *d, bool several)
{
	if (several) {
		const char *base = strrchr(d->path, '/');
		fprintf(out, "### `");
		gp_md_cell(out, base ? base + 1 : d->path);
		fputs("`\n\n", out);
	}
	if (d->is_trace) {
		md_verdict_line(out, d);
		md_context(out, d);
	} else if (json_array_size(d->arms)) {
		char s[256];
		gp_arms_summary(s, sizeof s, d->arms);
		fprintf(out, "**Pinning probe: %s**\n\n", s);
	} else if (d->is_idle && json_array_size(d->idle)) {
		idle_summary(out, d);
	} else if (!json_array_size(d->idle)) {
		fputs("**No samples, arms or idle results in this file.**\n\n", out);
	}
	if (d->l.truncated)
		fprintf(out, "> **Note:** the file was cut mid-line after %lu lines (a killed run); "
			"this is what it holds.\n\n", d->l.lines);
	md_environment(out, d);
	md_gpu(out, d);
	gp_arms_markdown(out, d->arms);
	md_idle(out, d);
	if (d->is_idle)
		md_stacks(out, d);
	if (d->is_trace) {
		md_phases(out, d);
		md_evidence(out, &d->v);
		gp_md_threads(out, d);
		md_stacks(out, d);
		md_metrics(out, d);
	}
	gp_klog_markdown(out, d);
	gp_libs_markdown(out, d);
	gp_ras_markdown(out, d);
	const char *key;
	json_t *v;
	bool first = true;
	json_object_foreach(d->unknown, key, v) {
		fprintf(out, "%s`%s` ×%" JSON_INTEGER_FORMAT, first ? "Lines this gpuprobe does not render: " : ", ",
			key, json_integer_value(v));
		first = false;
	}
	if (!first)
		fputs(".\n\n", out);
}

void gp_render_markdown(FILE *out, const struct gp_doc *docs, size_t n)
{
	bool several = n > 1;
	if (several) {
		/* The one line on top: each file's verdict. */
		fputs("**gpuprobe report**: ", out);
		for (size_t i = 0; i < n; i++) {
			const char *base = strrchr(docs[i].path, '/');
			fprintf(out, "%s`", i ? "; " : "");
			gp_md_cell(out, base ? base + 1 : docs[i].path);
			if (docs[i].is_trace)
				fprintf(out, "` %s", gp_class_name(docs[i].v.cls));
			else if (docs[i].is_idle)
				fprintf(out, "` idle, %zu runtimes", json_array_size(docs[i].idle));
			else
				fprintf(out, "` %zu arms", json_array_size(docs[i].arms));
		}
		fputs("\n\n", out);
		/* A job traced apart (its nodes): its ranks compared across
		 * the files (issue 29). */
		struct strbuf sb = STRBUF_INIT;
		if (gp_report_siblings(&sb, docs, n)) {
			fputs("**Across the files:** ", out);
			gp_md_text(out, sb.buf);
			fputs("\n\n", out);
		}
		strbuf_release(&sb);
		md_compare(out, docs, n);
	}
	for (size_t i = 0; i < n; i++)
		md_one(out, &docs[i], several);
	fprintf(out, "<sub>gpuprobe %s</sub>\n", PACKAGE_VERSION);
}
