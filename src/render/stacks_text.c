/* Text and Markdown rendering of a `stacks` line; see stacks_text.h. */
#include "config.h"
#include "stacks_text.h"
#include "safetext.h"
#include "strbuf.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *str(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* glibc's internal aliases read better without their decoration:
 * "___pthread_cond_timedwait64" -> "pthread_cond_timedwait64". */
static const char *tidy(const char *sym)
{
	if (!strncmp(sym, "__GI_", 5))
		sym += 5;
	if (!strncmp(sym, "___", 3))
		while (*sym == '_')
			sym++;
	return sym;
}

/* "symbol", or "soname+0xOFF" when the module is stripped, or the pc. */
static void frame_label(const json_t *f, char *buf, size_t cap)
{
	const char *sym = str(f, "symbol"), *so = str(f, "soname"), *off = str(f, "offset");
	if (json_is_true(json_object_get(f, "jit")))
		snprintf(buf, cap, "[jit] %s", str(f, "pc") ? str(f, "pc") : "?");
	else if (sym)
		snprintf(buf, cap, "%s", tidy(sym));
	else if (so && off)
		snprintf(buf, cap, "%s+%s", so, off);
	else
		snprintf(buf, cap, "%s", str(f, "pc") ? str(f, "pc") : "??");
}

static bool is_libc(const json_t *f)
{
	const char *so = str(f, "soname");
	return so && (!strncmp(so, "libc.so", 7) || !strncmp(so, "ld-linux", 8) ||
		      !strncmp(so, "libpthread.so", 13));
}

/* ---- Python frames (stacks.h, pyframes.h) ------------------------------ */

/* One Python frame as Python's traceback prints it:
 * File "load.py", line 12, in load_shard */
static void py_frame_text(const json_t *p, char *buf, size_t cap)
{
	const char *fn = str(p, "function"), *file = str(p, "file");
	const json_t *l = json_object_get(p, "line");
	char line[24];
	if (json_is_integer(l))
		snprintf(line, sizeof line, "%" JSON_INTEGER_FORMAT, json_integer_value(l));
	else
		snprintf(line, sizeof line, "?");
	snprintf(buf, cap, "File \"%s\", line %s, in %s", file ? file : "?", line, fn ? fn : "?");
}

void gp_stacks_python_lines(FILE *f, const json_t *frame, const char *indent)
{
	const json_t *py = json_object_get(frame, "python");
	if (json_is_object(py)) /* a thread: the frames no native frame took */
		py = json_object_get(py, "unplaced");
	for (size_t i = 0; i < json_array_size(py); i++) {
		char b[1024];
		py_frame_text(json_array_get(py, i), b, sizeof b);
		fprintf(f, "%s%s\n", indent, b);
	}
}

/* The youngest Python frame of a thread, or NULL. */
static const json_t *py_youngest(const json_t *t)
{
	const json_t *fr = json_object_get(t, "frames");
	for (size_t i = 0; i < json_array_size(fr); i++) {
		const json_t *p = json_object_get(json_array_get(fr, i), "python");
		if (json_array_size(p))
			return json_array_get(p, 0);
	}
	const json_t *u = json_object_get(json_object_get(t, "python"), "unplaced");
	return json_array_size(u) ? json_array_get(u, 0) : NULL;
}

/* "holds the GIL", "waits for the GIL", or NULL. */
static const char *gil_words(const json_t *t)
{
	const char *g = str(json_object_get(t, "python"), "gil");
	if (!g)
		return NULL;
	if (!strcmp(g, "held"))
		return "holds the GIL";
	if (!strcmp(g, "waiting"))
		return "waits for the GIL";
	return NULL;
}

/* Where the thread is: its wait channel, else its syscall, else its state. */
static void where(const json_t *t, char *buf, size_t cap)
{
	const char *w = str(t, "wchan"), *sc = str(t, "syscall"), *st = str(t, "state");
	if (w && *w) {
		snprintf(buf, cap, "%s", w);
	} else if (sc && strcmp(sc, "running") && strcmp(sc, "user")) {
		size_t n = strcspn(sc, "(");
		snprintf(buf, cap, "%.*s", (int)n, sc);
	} else if (st && (!strcmp(st, "R") || (sc && !strcmp(sc, "running")))) {
		snprintf(buf, cap, "running");
	} else {
		snprintf(buf, cap, "state %s", st ? st : "?");
	}
}

void gp_stacks_chain(const json_t *t, char *buf, size_t cap)
{
	char w[96], lab[256];
	where(t, w, sizeof w);
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, w);
	const json_t *fr = json_object_get(t, "frames");
	size_t n = json_array_size(fr);
	if (!n) {
		const char *u = str(t, "unwind");
		if (u && strcmp(u, "ok"))
			strbuf_addf(&sb, " (no user stack: %s)", u);
		strbuf_copy_to(&sb, buf, cap);
		strbuf_release(&sb);
		return;
	}
	/* A Python thread: the native frame it waits or runs in, then the
	 * youngest Python frame -- the user's own code. */
	const json_t *yp = py_youngest(t);
	/* The last libc frame before the first frame of the program (the
	 * public entry it called: pthread_cond_wait), then up to two frames
	 * of the program itself. */
	size_t first_user = n;
	for (size_t i = 0; i < n; i++)
		if (!is_libc(json_array_get(fr, i))) {
			first_user = i;
			break;
		}
	size_t shown = 0;
	if (first_user > 0 && first_user < n) {
		frame_label(json_array_get(fr, first_user - 1), lab, sizeof lab);
		strbuf_addf(&sb, " ← %s", lab);
	}
	size_t start = first_user < n ? first_user : 0;
	for (size_t i = start; i < n && shown < (yp ? 1u : 2u); i++, shown++) {
		const json_t *f = json_array_get(fr, i);
		if (i > start && is_libc(f))
			break; /* start_thread, clone3: noise */
		frame_label(f, lab, sizeof lab);
		strbuf_addf(&sb, " ← %s", lab);
	}
	if (yp) {
		const char *fn = str(yp, "function"), *file = str(yp, "file");
		const char *base = file ? strrchr(file, '/') : NULL;
		const json_t *l = json_object_get(yp, "line");
		strbuf_addf(&sb, " ← %s (%s", fn ? fn : "?", base ? base + 1 : file ? file : "?");
		if (json_is_integer(l))
			strbuf_addf(&sb, ":%" JSON_INTEGER_FORMAT, json_integer_value(l));
		strbuf_addch(&sb, ')');
	}
	strbuf_copy_to(&sb, buf, cap);
	strbuf_release(&sb);
}

/* The identity of a stack: every frame's label (not the pc: two threads
 * in the same function at different lines group together), plus where. */
static char *stack_key(const json_t *t)
{
	char w[96], lab[256];
	where(t, w, sizeof w);
	struct strbuf k = STRBUF_INIT;
	const char *gw = gil_words(t);
	strbuf_addf(&k, "%s|%s|%s", w, str(t, "unwind") ? str(t, "unwind") : "", gw ? gw : "");
	const json_t *fr = json_object_get(t, "frames");
	for (size_t i = 0; i < json_array_size(fr); i++) {
		const json_t *fi = json_array_get(fr, i);
		frame_label(fi, lab, sizeof lab);
		strbuf_addf(&k, "|%s", lab);
		/* Python frames by function and file: as native ones, two
		 * threads at different lines of one function group. */
		const json_t *py = json_object_get(fi, "python");
		for (size_t q = 0; q < json_array_size(py); q++) {
			const json_t *pq = json_array_get(py, q);
			strbuf_addf(&k, "|py:%s@%s", str(pq, "function") ? str(pq, "function") : "?",
				    str(pq, "file") ? str(pq, "file") : "?");
		}
	}
	return strbuf_detach(&k, NULL);
}

struct group {
	char *key;
	const json_t *first;   /* a representative thread */
	size_t count;
	double max_cpu;        /* -1: unknown */
	int *tids;
	double *cpus;
};

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->max_cpu != y->max_cpu)
		return x->max_cpu < y->max_cpu ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->tids[0] > y->tids[0]) - (x->tids[0] < y->tids[0]); /* no overflow */
}

static void tid_list(FILE *f, const struct group *g)
{
	for (size_t i = 0; i < g->count && i < 8; i++)
		fprintf(f, "%s%d", i ? " " : "", g->tids[i]);
	if (g->count > 8)
		fprintf(f, " ... (+%zu)", g->count - 8);
}

static void frame_line(FILE *f, size_t i, const json_t *fr, bool md)
{
	const char *sym = str(fr, "symbol"), *so = str(fr, "soname"), *off = str(fr, "offset");
	const char *bid = str(fr, "build_id"), *file = str(fr, "file");
	json_int_t line = json_integer_value(json_object_get(fr, "line"));
	if (json_is_true(json_object_get(fr, "jit"))) {
		/* code a JIT wrote: no file, no symbol (xmaps.h) */
		fprintf(f, "%s#%-2zu [jit] %s\n", md ? "" : "    ", i, str(fr, "pc") ? str(fr, "pc") : "?");
		return;
	}
	fprintf(f, "%s#%-2zu %s", md ? "" : "    ", i, sym ? sym : "??");
	if (so)
		fprintf(f, "  %s+%s", so, off ? off : "?");
	else
		fprintf(f, "  %s", str(fr, "pc") ? str(fr, "pc") : "?");
	if (!sym && bid)
		fprintf(f, " [build-id %s]", bid);
	if (file)
		fprintf(f, "  %s:%lld", file, (long long)line);
	fputc('\n', f);
}

static void kernel_lines(FILE *f, const json_t *t, bool md, unsigned max)
{
	const json_t *k = json_object_get(t, "kernel");
	for (size_t i = 0; i < json_array_size(k) && i < max; i++)
		fprintf(f, "%s[k] %s\n", md ? "" : "    ", json_string_value(json_array_get(k, i)));
}

/* Threads with the same stack (stack_key) into groups; *hot counts those
 * over the threshold.  Returns the number of groups. */
static size_t group_threads(const json_t *threads, size_t n, const struct gp_stacks_render_opts *o,
			    struct group *g, size_t *hotp)
{
	size_t ng = 0, hot = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *t = json_array_get(threads, i);
		const json_t *c = json_object_get(t, "cpu_pct");
		double cpu = json_is_number(c) ? json_number_value(c) : -1;
		if (cpu >= o->hot_pct && o->window_s > 0)
			hot++;
		char *key = stack_key(t);
		size_t j;
		for (j = 0; j < ng; j++)
			if (key && g[j].key && !strcmp(g[j].key, key))
				break;
		if (j == ng) {
			g[ng].key = key;
			g[ng].first = t;
			g[ng].max_cpu = -1;
			g[ng].tids = calloc(n, sizeof *g[ng].tids);
			g[ng].cpus = calloc(n, sizeof *g[ng].cpus);
			ng++;
		} else {
			free(key);
		}
		if (g[j].tids) {
			g[j].tids[g[j].count] = (int)json_integer_value(json_object_get(t, "tid"));
			g[j].cpus[g[j].count] = cpu;
		}
		g[j].count++;
		if (cpu > g[j].max_cpu)
			g[j].max_cpu = cpu;
	}
	*hotp = hot;
	return ng;
}

/* One group's representative thread: its syscall, frames (the first
 * maxf native ones, and every one that runs Python code), kernel stack. */
static void group_detail(FILE *f, const json_t *t, bool md, unsigned maxf)
{
	const char *sc = str(t, "syscall");
	if (sc && strcmp(sc, "running") && strcmp(sc, "user"))
		fprintf(f, "%ssyscall %s\n", md ? "" : "    ", sc);
	const char *err = str(t, "unwind_error");
	if (err)
		fprintf(f, "%s(user stack: %s: %s)\n", md ? "" : "    ", str(t, "unwind"), err);
	const json_t *fr = json_object_get(t, "frames");
	/* The first maxf native frames, and past them every frame that
	 * runs Python code, with its Python frames under it. */
	size_t skipped = 0;
	for (size_t i = 0; i < json_array_size(fr); i++) {
		const json_t *fi = json_array_get(fr, i);
		if (i >= maxf && !json_array_size(json_object_get(fi, "python"))) {
			skipped++;
			continue;
		}
		if (skipped)
			fprintf(f, "%s... %zu frames\n", md ? "" : "    ", skipped);
		skipped = 0;
		frame_line(f, i, fi, md);
		gp_stacks_python_lines(f, fi, md ? "      " : "          ");
	}
	if (skipped)
		fprintf(f, "%s... %zu more frames\n", md ? "" : "    ", skipped);
	const json_t *unplaced = json_object_get(json_object_get(t, "python"), "unplaced");
	if (json_array_size(unplaced)) {
		fprintf(f, "%s%s\n", md ? "" : "    ", json_array_size(fr) ?
			"Python frames below the native stack's end:" :
			"Python frames (no native stack):");
		gp_stacks_python_lines(f, t, md ? "      " : "          ");
	}
	kernel_lines(f, t, md, 8);
}

/* Once per module the debug-info hints, and what the snapshot cost. */
static void trailer(FILE *f, const json_t *line, bool md)
{
	/* Once per module: where separate debug info would help. */
	const json_t *mods = json_object_get(line, "modules");
	bool head = false;
	for (size_t i = 0; i < json_array_size(mods); i++) {
		const char *h = str(json_array_get(mods, i), "hint");
		if (!h)
			continue;
		if (!head)
			fprintf(f, md ? "Debug info would help:\n\n" : "Debug info would help:\n");
		head = true;
		fprintf(f, md ? "- %s\n" : "  %s\n", h);
	}
	if (head)
		fputc('\n', f);
	const json_t *cost = json_object_get(line, "cost");
	if (cost && !md && json_integer_value(json_object_get(cost, "stopped")) > 0)
		fprintf(f, "(%lld thread%s stopped one at a time, %.0f us mean, %.0f us max; %.1f ms)\n",
			(long long)json_integer_value(json_object_get(cost, "stopped")),
			json_integer_value(json_object_get(cost, "stopped")) == 1 ? "" : "s",
			json_number_value(json_object_get(cost, "stop_us_mean")),
			json_number_value(json_object_get(cost, "stop_us_max")),
			json_number_value(json_object_get(cost, "wall_ms")));
}

/* s one line and safe, with no '|' or '`' to break a Markdown table
 * cell. */
static const char *cell(const char *s, char *buf, size_t cap)
{
	gp_safe_str(s ? s : "?", buf, cap);
	for (char *p = buf; *p; p++)
		if (*p == '|' || *p == '`')
			*p = '\'';
	return buf;
}

void gp_stacks_goroutine_lines(FILE *f, const json_t *line, bool md)
{
	const json_t *go = json_object_get(line, "goroutines");
	if (!json_is_object(go))
		return;
	char vb[32], eb[128];
	const char *v = str(go, "go") ? cell(str(go, "go"), vb, sizeof vb) : NULL;
	const char *err = str(go, "error") ? cell(str(go, "error"), eb, sizeof eb) : NULL;
	fprintf(f, md ? "Goroutines%s%s%s: " : "goroutines%s%s%s: ", v ? " (" : "", v ? v : "",
		v ? ")" : "");
	if (err) {
		fprintf(f, "out of sight (%s)%s", err, md ? ".\n\n" : "\n\n");
		return;
	}
	fprintf(f, "%lld of the program's, %lld of the runtime's own%s",
		(long long)json_integer_value(json_object_get(go, "n")),
		(long long)json_integer_value(json_object_get(go, "system")), md ? "\n\n" : "\n");
	if (md)
		fprintf(f, "| goroutines | wait | started in | at |\n|---:|---|---|---|\n");
	size_t i;
	const json_t *g;
	json_array_foreach(json_object_get(go, "groups"), i, g) {
		/* one line each, whatever a file holds (a '\n' in a name) */
		char start[160], wait[96], atb[160];
		cell(str(g, "start"), start, sizeof start);
		cell(str(g, "wait"), wait, sizeof wait);
		const char *at = str(g, "at") ? cell(str(g, "at"), atb, sizeof atb) : NULL;
		if (at && !strcmp(at, start))
			at = NULL; /* it waits in its start function itself */
		long long n = (long long)json_integer_value(json_object_get(g, "n"));
		if (md)
			fprintf(f, "| %lld | %s | `%s` | %s%s%s |\n", n, wait, start, at ? "`" : "",
				at ? at : "", at ? "`" : "");
		else
			fprintf(f, "  %4lld  [%s] %s%s%s\n", n, wait, start, at ? " at " : "", at ? at : "");
	}
	json_int_t more = json_integer_value(json_object_get(go, "more"));
	if (more)
		fprintf(f, md ? "\nand %lld more in smaller groups\n" : "  and %lld more in smaller groups\n",
			(long long)more);
	fputc('\n', f);
}

static void render_stacks(FILE *f, const json_t *line, const struct gp_stacks_render_opts *o)
{
	const json_t *threads = json_object_get(line, "threads");
	size_t n = json_array_size(threads);
	bool md = o->format == GP_STACKS_MARKDOWN;
	unsigned maxf = o->max_frames ? o->max_frames : 16;
	struct group *g = calloc(n ? n : 1, sizeof *g);
	size_t ng = 0, hot = 0;
	if (!g)
		return;
	ng = group_threads(threads, n, o, g, &hot);
	qsort(g, ng, sizeof *g, cmp_group);

	json_int_t pid = json_integer_value(json_object_get(line, "pid"));
	char comm[GP_SAFE_COMM] = ""; /* one line whatever it holds */
	if (o->comm)
		gp_safe_str(o->comm, comm, sizeof comm);
	if (md)
		fprintf(f, "### Stacks of pid %lld%s%s%s\n\n", (long long)pid, o->comm ? " (" : "",
			comm, o->comm ? ")" : "");
	else
		fprintf(f, "pid %lld%s%s%s: ", (long long)pid, o->comm ? " (" : "", comm,
			o->comm ? ")" : "");
	fprintf(f, "%zu thread%s, %zu distinct stack%s", n, n == 1 ? "" : "s", ng, ng == 1 ? "" : "s");
	if (o->window_s > 0)
		fprintf(f, "; %zu hot (>= %.0f%% CPU over %.2f s)", hot, o->hot_pct, o->window_s);
	fprintf(f, md ? ".\n\n" : "\n");
	if (o->where)
		fprintf(f, md ? "Lives in: %s.\n\n" : "lives in %s\n", o->where);
	if (!md)
		fputc('\n', f);

	char chain[1024];
	if (md) {
		fprintf(f, "| threads | CPU %% | stack |\n|---:|---:|---|\n");
		for (size_t j = 0; j < ng; j++) {
			gp_stacks_chain(g[j].first, chain, sizeof chain);
			fprintf(f, "| %zu | ", g[j].count);
			if (g[j].max_cpu >= 0)
				fprintf(f, "%.0f", g[j].max_cpu);
			else
				fprintf(f, "–");
			fprintf(f, " | `");
			for (const char *p = chain; *p; p++)
				fputs(*p == '|' ? "\\|" : *p == '`' ? "'" : (char[]){ *p, 0 }, f);
			fprintf(f, "` |\n");
		}
		fputc('\n', f);
	}
	for (size_t j = 0; j < ng; j++) {
		gp_stacks_chain(g[j].first, chain, sizeof chain);
		bool is_hot = o->window_s > 0 && g[j].max_cpu >= o->hot_pct;
		if (md) {
			const char *gw = gil_words(g[j].first);
			fprintf(f, "<details><summary>%zu thread%s%s%s%s: %s</summary>\n\n",
				g[j].count, g[j].count == 1 ? "" : "s", is_hot ? " (hot)" : "",
				gw ? ", " : "", gw ? gw : "", chain);
			fprintf(f, "tids ");
			tid_list(f, &g[j]);
			fprintf(f, "\n\n```\n");
		} else {
			fprintf(f, "%zu thread%s", g[j].count, g[j].count == 1 ? "" : "s");
			if (is_hot) {
				fprintf(f, " HOT");
				for (size_t i = 0; i < g[j].count && i < 4; i++)
					fprintf(f, " %.0f%%", g[j].cpus[i]);
			}
			const char *gw = gil_words(g[j].first);
			if (gw)
				fprintf(f, " (%s)", gw);
			fprintf(f, " in %s\n    tids ", chain);
			tid_list(f, &g[j]);
			fputc('\n', f);
		}
		group_detail(f, g[j].first, md, maxf);
		fprintf(f, md ? "```\n\n</details>\n\n" : "\n");
		free(g[j].key);
		free(g[j].tids);
		free(g[j].cpus);
	}
	free(g);

	gp_stacks_goroutine_lines(f, line, md);
	trailer(f, line, md);
}

/* The target's strings (its comm, symbols, file names, Python function
 * names) as safe text, as report's (common/safetext.h). */
void gp_render_stacks(FILE *f, const json_t *line, const struct gp_stacks_render_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	render_stacks(m ? m : f, line, o);
	if (m && fclose(m) == 0)
		gp_safe_lines(f, buf, len);
	free(buf);
}
