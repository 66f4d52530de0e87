/* Siblings compared, in words: see siblings_text.h. */
#include "config.h"
#include "siblings_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctx {
	const struct gp_sibcmp *c;
	const char *const *hosts;
	size_t nhosts;
};

static const char *host_of(const struct ctx *x, unsigned source)
{
	return x->hosts && source < x->nhosts && x->hosts[source] ? x->hosts[source] : NULL;
}

/* "rank 1 (pid 812)", "pid 812", "rank 1 (pid 812 on b (b.jsonl))",
 * "pid 812 on b (b.jsonl)" */
static void who(struct strbuf *sb, const struct ctx *x, int rank, int pid, unsigned source)
{
	const char *h = host_of(x, source);
	if (rank >= 0)
		strbuf_addf(sb, "rank %d (pid %d%s%s)", rank, pid, h ? " on " : "", h ? h : "");
	else
		strbuf_addf(sb, "pid %d%s%s", pid, h ? " on " : "", h ? h : "");
}

/* "ranks 0, 2, 3", "pids 101, 103", "rank 0 (pid 101), pid 103"; across
 * results, each process's host. */
static void crowd(struct strbuf *sb, const struct ctx *x)
{
	const struct gp_sibcmp *c = x->c;
	unsigned shown = c->nsame < GP_SIB_SAME_NAMED ? c->nsame : GP_SIB_SAME_NAMED;
	bool ranks = true;
	for (unsigned i = 0; i < shown; i++)
		ranks &= c->same[i].rank >= 0;
	if (ranks) {
		strbuf_addstr(sb, shown > 1 ? "ranks " : "rank ");
		for (unsigned i = 0; i < shown; i++)
			strbuf_addf(sb, "%s%d", i ? ", " : "", c->same[i].rank);
	} else if (!x->hosts) {
		bool any = false;
		for (unsigned i = 0; i < shown; i++)
			any |= c->same[i].rank >= 0;
		if (!any)
			strbuf_addstr(sb, shown > 1 ? "pids " : "pid ");
		for (unsigned i = 0; i < shown; i++) {
			strbuf_addstr(sb, i ? ", " : "");
			if (any)
				who(sb, x, c->same[i].rank, c->same[i].pid, 0);
			else
				strbuf_addf(sb, "%d", c->same[i].pid);
		}
	} else {
		for (unsigned i = 0; i < shown; i++) {
			strbuf_addstr(sb, i ? ", " : "");
			who(sb, x, c->same[i].rank, c->same[i].pid, c->same[i].source);
		}
	}
	if (c->nsame > shown)
		strbuf_addf(sb, " and %u more", c->nsame - shown);
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case 1: return "SIGHUP";
	case 2: return "SIGINT";
	case 4: return "SIGILL";
	case 6: return "SIGABRT";
	case 7: return "SIGBUS";
	case 8: return "SIGFPE";
	case 9: return "SIGKILL";
	case 11: return "SIGSEGV";
	case 13: return "SIGPIPE";
	case 15: return "SIGTERM";
	default: return NULL;
	}
}

/* Where one is: "is in F called from U", "computes in F (99% CPU)",
 * "exited with status 1 at +4 s"; plural for a crowd. */
static void place(struct strbuf *sb, enum gp_sib_how how, const char *frame, const char *user,
		  bool plural, const struct gp_sibling *one)
{
	switch (how) {
	case GP_SIB_EXITED:
		(void)plural;
		if (!one) {
			strbuf_addstr(sb, "exited");
			return;
		}
		if (one->ended && one->signal) {
			const char *n = sig_name(one->signal);
			if (n)
				strbuf_addf(sb, "was killed by %s (%d)", n, one->signal);
			else
				strbuf_addf(sb, "was killed by signal %d", one->signal);
		} else if (one->ended) {
			strbuf_addf(sb, "exited with status %d", one->status);
		} else {
			strbuf_addstr(sb, "exited");
		}
		strbuf_addf(sb, " at +%.0f s", one->exit_t);
		return;
	case GP_SIB_UNREAD:
		strbuf_addstr(sb, "is where its stack was not read");
		return;
	case GP_SIB_RUNS:
		strbuf_addstr(sb, plural ? "compute" : "computes");
		if (one && one->cpu > 0)
			strbuf_addf(sb, " at %.0f%% CPU", one->cpu);
		if (frame[0])
			strbuf_addf(sb, " in %s", frame);
		return;
	case GP_SIB_WAITS:
	default:
		strbuf_addf(sb, "%s %s", plural ? "wait in" : one ? "is in" : "waits in", frame[0] ? frame : "?");
		if (user[0])
			strbuf_addf(sb, " called from %s", user);
		return;
	}
}

/* "4 ranks of job.py", "3 of 8 ranks of job.py", "workers of pid 700
 * (python3)", "3 processes of rank.py" */
static void heading(struct strbuf *sb, const struct ctx *x, bool two)
{
	const struct gp_sibcmp *c = x->c;
	unsigned n = c->n + c->nunread; /* here, the unread ones too */
	switch (c->kind) {
	case GP_SIBK_RANKS:
		if (two)
			strbuf_addf(sb, "the 2 ranks of %s differ", c->label);
		else if (c->world_size > (int)n)
			strbuf_addf(sb, "%u of %d ranks of %s", n, c->world_size, c->label);
		else
			strbuf_addf(sb, "%u ranks of %s", n, c->label);
		return;
	case GP_SIBK_WORKERS:
		strbuf_addf(sb, "%s%u workers of pid %d (%s)%s", two ? "the " : "", n, c->parent_pid,
			    c->parent_label, two ? " differ" : "");
		return;
	default:
		strbuf_addf(sb, "%s%u processes of %s%s", two ? "the " : "", n, c->label, two ? " differ" : "");
		return;
	}
}

/* "; rank 1 (pid 812): its stack was not read" */
static void unread(struct strbuf *sb, const struct ctx *x)
{
	const struct gp_sibcmp *c = x->c;
	unsigned named = c->nunread < GP_SIB_ODD_NAMED ? c->nunread : GP_SIB_ODD_NAMED;
	for (unsigned i = 0; i < named; i++) {
		strbuf_addstr(sb, i ? ", " : "; ");
		who(sb, x, c->unread[i].rank, c->unread[i].pid, c->unread[i].source);
	}
	if (c->nunread > named)
		strbuf_addf(sb, " and %u more", c->nunread - named);
	if (named)
		strbuf_addstr(sb, c->nunread > 1 ? ": their stacks were not read" : ": its stack was not read");
}

/* "; timeline: rank 1 (pid 812) stopped first, at -38.0 s, 37.9 s before
 * the others (-0.1 to +0.2 s)": times from the trace's start (across
 * files, the first file's), before 0 when before it began. */
static void timeline(struct strbuf *sb, const struct ctx *x)
{
	const struct gp_sibcmp *c = x->c;
	if (!c->timeline)
		return;
	strbuf_addstr(sb, "; timeline: ");
	if (c->first_runs) {
		strbuf_addstr(sb, "the others stopped ");
		if (c->rest_to - c->rest_from < 0.05)
			strbuf_addf(sb, "at %+.1f s", c->rest_from);
		else
			strbuf_addf(sb, "between %+.1f and %+.1f s", c->rest_from, c->rest_to);
		strbuf_addstr(sb, " while ");
		who(sb, x, c->first.rank, c->first.pid, c->first.source);
		strbuf_addstr(sb, " went on computing");
		return;
	}
	who(sb, x, c->first.rank, c->first.pid, c->first.source);
	strbuf_addf(sb, " stopped first, at %+.1f s, %.1f s before the other%s (", c->first_t,
		    c->rest_from - c->first_t, c->n > 2 ? "s" : "");
	if (c->rest_to - c->rest_from < 0.05)
		strbuf_addf(sb, "%+.1f s)", c->rest_from);
	else
		strbuf_addf(sb, "%+.1f to %+.1f s)", c->rest_from, c->rest_to);
}

void gp_siblings_words(struct strbuf *sb, const struct gp_sibcmp *c, const char *const *hosts,
		       size_t nhosts)
{
	if (c->kind == GP_SIBK_NONE)
		return;
	struct ctx x = { c, hosts, nhosts };
	unsigned named = c->nodd < GP_SIB_ODD_NAMED ? c->nodd : GP_SIB_ODD_NAMED;
	if (c->story == GP_SIBS_SAME) {
		/* Ranks only: a pool at rest is no news. */
		if (c->nunread) {
			/* one unknown: no "no odd one" */
			heading(sb, &x, false);
			strbuf_addstr(sb, ": ");
			crowd(sb, &x);
			strbuf_addch(sb, ' ');
			place(sb, c->how, c->frame, c->user, c->nsame > 1, NULL);
		} else if (c->world_size > (int)c->n) {
			strbuf_addf(sb, "the %u ranks of %s here (of %d in the job) all ", c->n, c->label,
				    c->world_size);
		} else {
			strbuf_addf(sb, "all %u ranks of %s ", c->n, c->label);
		}
		if (!c->nunread) {
			place(sb, c->how, c->frame, c->user, true, NULL);
			strbuf_addstr(sb, c->world_size > (int)c->n ? ": no odd one among them" : ": no odd one");
		}
		unread(sb, &x);
		return;
	}
	if (c->story == GP_SIBS_TWO) {
		heading(sb, &x, true);
		strbuf_addstr(sb, ": ");
		who(sb, &x, c->same[0].rank, c->same[0].pid, c->same[0].source);
		strbuf_addch(sb, ' ');
		place(sb, c->how, c->frame, c->user, false, NULL);
		strbuf_addstr(sb, "; ");
		who(sb, &x, c->odd[0].rank, c->odd[0].pid, c->odd[0].source);
		strbuf_addch(sb, ' ');
		place(sb, c->odd[0].how, c->odd[0].frame, c->odd[0].user, false,
		      c->odd[0].how == GP_SIB_WAITS ? NULL : &c->odd[0]);
		timeline(sb, &x);
		unread(sb, &x);
		return;
	}
	heading(sb, &x, false);
	strbuf_addstr(sb, ": ");
	for (unsigned i = 0; i < named; i++) {
		const struct gp_sibling *o = &c->odd[i];
		strbuf_addstr(sb, i == 0 ? "" : i + 1 == named && c->nodd == named ? " and " : ", ");
		who(sb, &x, o->rank, o->pid, o->source);
		strbuf_addch(sb, ' ');
		place(sb, o->how, o->frame, o->user, false, o);
	}
	if (c->nodd > named)
		strbuf_addf(sb, " and %u more elsewhere", c->nodd - named);
	strbuf_addstr(sb, " while ");
	crowd(sb, &x);
	strbuf_addch(sb, ' ');
	place(sb, c->how, c->frame, c->user, c->nsame > 1, NULL);
	if (c->kind == GP_SIBK_RANKS && !c->at_rest)
		strbuf_addstr(sb, c->nodd > 1 ? ": the odd ones out" : ": the odd one out");
	timeline(sb, &x);
	unread(sb, &x);
}

/* "vm (a.jsonl)": a file's host and name. */
static void source_name(struct strbuf *sb, const struct gp_doc *d)
{
	const char *h = json_string_value(json_object_get(json_object_get(d->l.header, "host"), "hostname"));
	const char *base = strrchr(d->path, '/');
	strbuf_addf(sb, "%s (%s)", h && *h ? h : "?", base ? base + 1 : d->path);
}

/* The comparison names processes of two results or more. */
static bool spans(const struct gp_sibcmp *c)
{
	unsigned named = c->nodd < GP_SIB_ODD_NAMED ? c->nodd : GP_SIB_ODD_NAMED;
	unsigned shown = c->nsame < GP_SIB_SAME_NAMED ? c->nsame : GP_SIB_SAME_NAMED;
	for (unsigned i = 0; i < shown; i++)
		if (c->same[i].source != c->same[0].source)
			return true;
	for (unsigned i = 0; i < named; i++)
		if (c->odd[i].source != c->same[0].source)
			return true;
	return false;
}

bool gp_report_siblings(struct strbuf *sb, const struct gp_doc *docs, size_t n)
{
	size_t traces = 0;
	for (size_t i = 0; i < n; i++)
		traces += docs[i].is_trace;
	if (traces < 2)
		return false;
	struct gp_sibling *s = malloc(GP_SIBLINGS_MAX * sizeof *s);
	struct strbuf *names = calloc(n, sizeof *names);
	const char **hosts = calloc(n, sizeof *hosts);
	bool said = false;
	if (s && names && hosts) {
		size_t k = 0;
		double t0 = 0;
		for (size_t i = 0; i < n; i++) {
			double st = docs[i].is_trace ? gp_loaded_started(&docs[i].l) : 0;
			if (st > 0 && (t0 <= 0 || st < t0))
				t0 = st;
		}
		for (size_t i = 0; i < n; i++) {
			strbuf_init(&names[i], 0);
			source_name(&names[i], &docs[i]);
			hosts[i] = names[i].buf;
			if (!docs[i].is_trace)
				continue;
			const struct gp_activity *a = &docs[i].v.act;
			size_t got = gp_siblings_of(&docs[i].l.stuck, &docs[i].l.procs, a->pid, (float)a->tcpu,
						    (unsigned)i, s + k, GP_SIBLINGS_MAX - k);
			/* Aligned by wall clock: each file's t from the first
			 * file's start (its header's "started"). */
			double st = gp_loaded_started(&docs[i].l);
			gp_siblings_shift(s + k, got, st > 0 && t0 > 0 ? st - t0 : 0);
			k += got;
		}
		struct gp_sibcmp c;
		if (gp_siblings_compare(s, k, &c) && spans(&c)) {
			gp_siblings_words(sb, &c, hosts, n);
			said = true;
		}
		for (size_t i = 0; i < n; i++)
			strbuf_release(&names[i]);
	}
	free(hosts);
	free(names);
	free(s);
	return said;
}
