/* The kernel log's words (klog.h).  The lines come from a file: a field
 * of the wrong type reads as absent, a string is escaped for where it
 * goes (a Markdown code span, a table cell, a terminal), and a text is
 * cut at KLOG_TEXT_MAX bytes, saying so (the tracer keeps 511; a longer
 * one is a stranger's). */
#include "config.h"
#include "klog.h"
#include "safetext.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#define KLOG_TEXT_MAX 1024
/* A driver's or a kind's name: the tracer writes at most 15 bytes. */
#define KLOG_NAME_MAX 32
/* Rows above which the Markdown table folds into a <details> block. */
#define KLOG_FOLD 20
/* Errors named in one line. */
#define KLOG_NAMED 3

/* NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors), the numbers
 * a GPU job meets most, in a few words each. */
static const struct {
	int xid;
	const char *what;
} xids[] = {
	{ 8, "GPU stopped processing" },
	{ 13, "graphics engine exception" },
	{ 31, "MMU fault" },
	{ 32, "corrupted push buffer stream" },
	{ 38, "driver firmware error" },
	{ 43, "GPU stopped processing" },
	{ 45, "preemptive cleanup after earlier errors" },
	{ 48, "double-bit ECC error" },
	{ 61, "micro-controller breakpoint" },
	{ 62, "micro-controller halt" },
	{ 63, "ECC page retirement or row remap" },
	{ 64, "ECC page retirement or row remap failed" },
	{ 68, "video processor exception" },
	{ 69, "graphics engine class error" },
	{ 74, "NVLink error" },
	{ 79, "GPU has fallen off the bus" },
	{ 92, "high single-bit ECC error rate" },
	{ 94, "contained ECC error" },
	{ 95, "uncontained ECC error" },
	{ 109, "context switch timeout" },
	{ 119, "GSP RPC timeout" },
	{ 120, "GSP error" },
};

static const char *xid_what(json_int_t x)
{
	for (size_t i = 0; i < sizeof xids / sizeof xids[0]; i++)
		if (xids[i].xid == x)
			return xids[i].what;
	return NULL;
}

/* ---- fields, as their types allow -------------------------------------------------- */

static const char *field(const json_t *line, const char *key)
{
	const char *s = json_string_value(json_object_get(line, key));
	return s && *s ? s : NULL;
}

static bool posint(const json_t *line, const char *key, json_int_t *v)
{
	const json_t *j = json_object_get(line, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = json_integer_value(j);
	return true;
}

static bool is_lost(const json_t *line)
{
	const char *k = field(line, "kind");
	return k && !strcmp(k, "lost");
}

/* "+12.300 s" (prec 3) or "+12.3 s"; "?" without a t. */
static void add_time(struct strbuf *sb, const json_t *line, int prec)
{
	double t;
	/* A stranger's 1e308 would be 300 digits: past a year, exponents. */
	if (gp_klog_t(line, &t) && fabs(t) < 1e8)
		strbuf_addf(sb, "%+.*f s", prec, t);
	else if (gp_klog_t(line, &t))
		strbuf_addf(sb, "%+.3e s", t);
	else
		strbuf_addstr(sb, "?");
}

/* At most max bytes of s, cut on a UTF-8 boundary; true when cut. */
static bool add_cut(struct strbuf *sb, const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max) {
		strbuf_addstr(sb, s);
		return false;
	}
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	strbuf_add(sb, s, max);
	return true;
}

/* Control characters of what was added since from, as '?'. */
static void plain(struct strbuf *sb, size_t from)
{
	for (size_t i = from; i < sb->len; i++)
		if ((unsigned char)sb->buf[i] < 0x20 || sb->buf[i] == 0x7f)
			sb->buf[i] = '?';
}

/* The line's text for a reader: control characters as '?', cut at
 * KLOG_TEXT_MAX bytes with what was cut said. */
static void add_text(struct strbuf *sb, const char *text)
{
	size_t from = sb->len;
	bool cut = add_cut(sb, text, KLOG_TEXT_MAX);
	plain(sb, from);
	if (cut)
		strbuf_addf(sb, "... (%zu bytes)", strlen(text));
}

/* The line's driver or kind (key), "?" when absent, cut at KLOG_NAME_MAX
 * bytes ("..." said), control characters as '?'. */
static void add_name(struct strbuf *sb, const json_t *line, const char *key)
{
	const char *s = field(line, key);
	size_t from = sb->len;
	if (add_cut(sb, s ? s : "?", KLOG_NAME_MAX))
		strbuf_addstr(sb, "...");
	plain(sb, from);
}

static void add_lost(struct strbuf *sb, const json_t *line)
{
	json_int_t n;
	if (posint(line, "lost", &n) && n > 0)
		strbuf_addf(sb, "%" JSON_INTEGER_FORMAT " record%s lost (ring overrun)", n, n == 1 ? "" : "s");
	else
		strbuf_addstr(sb, "records lost (ring overrun)");
}

/* ---- words ---------------------------------------------------------------------- */

static void label(struct strbuf *sb, const json_t *line, bool short_form);

void gp_klog_label(struct strbuf *sb, const json_t *line, bool short_form)
{
	size_t from = sb->len;
	label(sb, line, short_form);
	plain(sb, from);
}

static void label(struct strbuf *sb, const json_t *line, bool short_form)
{
	const char *kind = field(line, "kind"), *drv = field(line, "driver");
	json_int_t x;
	if (!kind)
		kind = "other";
	if (!strcmp(kind, "xid")) {
		if (!posint(line, "xid", &x)) {
			strbuf_addstr(sb, "NVIDIA Xid");
			return;
		}
		strbuf_addf(sb, "Xid %" JSON_INTEGER_FORMAT, x);
		if (!short_form && xid_what(x))
			strbuf_addf(sb, " (%s)", xid_what(x));
		return;
	}
	static const struct {
		const char *kind, *words;
		bool driver;
	} kinds[] = {
		{ "ring-timeout", "ring timeout", true }, { "gpu-reset", "GPU reset", true },
		{ "hung-task", "hung task", false }, { "soft-lockup", "soft lockup", false },
		{ "oom", "OOM kill", false }, { "lost", "records lost", false },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(kind, kinds[i].kind)) {
			if (kinds[i].driver && drv) {
				add_name(sb, line, "driver");
				strbuf_addch(sb, ' ');
			}
			strbuf_addstr(sb, kinds[i].words);
			return;
		}
	/* A driver's error of no kind the reader knew (amdgpu's page fault),
	 * or a kind of a later writer: the driver, the kind, the text's start. */
	if (drv)
		add_name(sb, line, "driver");
	else
		strbuf_addstr(sb, "kernel");
	strbuf_addch(sb, ' ');
	if (strcmp(kind, "other"))
		add_name(sb, line, "kind");
	else
		strbuf_addstr(sb, "error");
	const char *text = field(line, "text");
	/* Past the device's prefix ("amdgpu 0000:03:00.0: amdgpu: "): the
	 * words that say what happened. */
	for (int i = 0; text && drv && i < 2 && !strncmp(text, drv, strlen(drv)) &&
			(text[strlen(drv)] == ' ' || text[strlen(drv)] == ':') && strstr(text, ": "); i++)
		text = strstr(text, ": ") + 2;
	if (text && *text && !short_form) {
		strbuf_addstr(sb, " \"");
		if (add_cut(sb, text, 48))
			strbuf_addstr(sb, "...");
		strbuf_addch(sb, '"');
	}
}

/* "Xid 31 (MMU fault) at +12.3 s, pid 4242" */
static void error_words(struct strbuf *sb, const json_t *line)
{
	json_int_t pid;
	gp_klog_label(sb, line, false);
	strbuf_addstr(sb, " at ");
	add_time(sb, line, 1);
	if (posint(line, "pid", &pid) && pid > 0)
		strbuf_addf(sb, ", pid %" JSON_INTEGER_FORMAT, pid);
}

static bool in_judged(const struct gp_doc *d, const json_t *line)
{
	double t;
	return gp_klog_t(line, &t) && t >= d->v.judged_from - 1 && t <= d->v.judged_to + 1;
}

bool gp_klog_verdict_words(struct strbuf *sb, const struct gp_doc *d)
{
	const struct gp_klog *k = &d->klog;
	if (!k->errors && !k->lost_lines)
		return false;
	/* Which to name: those of the judged phase first, then the others;
	 * said in the log's order. */
	bool pick[GP_KLOG_ENDS * 2 + GP_KLOG_MIDDLE] = { false };
	size_t named = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < k->nrow && i < sizeof pick && named < KLOG_NAMED; i++)
			if (!pick[i] && gp_klog_is_error(k->row[i].line) &&
			    (pass || !d->is_trace || in_judged(d, k->row[i].line))) {
				pick[i] = true;
				named++;
			}
	size_t said = 0;
	for (size_t i = 0; i < k->nrow && i < sizeof pick; i++)
		if (pick[i]) {
			if (said++)
				strbuf_addstr(sb, "; ");
			error_words(sb, k->row[i].line);
		}
	if (!k->errors)
		strbuf_addstr(sb, "no driver error");
	else if (k->errors > named)
		strbuf_addf(sb, "; and %lu more", k->errors - named);
	if (k->errors && d->is_trace) {
		const char *of = k->errors_judged == k->errors ? (k->errors == 1 ? "" : "all ")
				 : k->errors_judged ? NULL : k->errors == 1 ? "not " : "none ";
		if (of)
			strbuf_addf(sb, "; %sin the judged phase", of);
		else
			strbuf_addf(sb, "; %lu of %lu in the judged phase", k->errors_judged, k->errors);
		strbuf_addf(sb, " (+%.1f-%.1f s)", d->v.judged_from, d->v.judged_to);
	}
	if (k->lost)
		strbuf_addf(sb, "; %llu records lost (ring overrun)", k->lost);
	else if (k->lost_lines)
		strbuf_addstr(sb, "; records lost (ring overrun)");
	return true;
}

size_t gp_klog_span_words(struct strbuf *sb, const struct gp_doc *d, double from, double to,
			  bool last)
{
	size_t n = 0;
	for (size_t i = 0; i < d->klog.nrow; i++) {
		const json_t *line = d->klog.row[i].line;
		double t;
		if (!gp_klog_is_error(line) || !gp_klog_t(line, &t) || t < from || t > to ||
		    (t == to && !last))
			continue;
		if (n < KLOG_NAMED) {
			if (n)
				strbuf_addstr(sb, ", ");
			gp_klog_label(sb, line, true);
			strbuf_addstr(sb, " at ");
			add_time(sb, line, 1);
		}
		n++;
	}
	if (n > KLOG_NAMED)
		strbuf_addf(sb, " and %zu more", n - KLOG_NAMED);
	return n;
}

/* ---- the section --------------------------------------------------------------------- */

void gp_md_text(FILE *out, const char *raw)
{
	struct strbuf sb = STRBUF_INIT;
	gp_safe_add(&sb, raw); /* a byte not UTF-8 as \xNN, too */
	const char *s = sb.buf;
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		/* An '_' between two letters or digits opens and closes no
		 * emphasis (CommonMark 6.2): "futex_do_wait" stays as it is. */
		bool inword = c == '_' && p > s && isalnum((unsigned char)p[-1]) && isalnum((unsigned char)p[1]);
		if (c < 0x20 || c == 0x7f)
			fputc(' ', out);
		else if (!inword && strchr("\\`*_[]<>|~&#!", c))
			fprintf(out, "\\%c", c);
		else
			fputc(c, out);
	}
	strbuf_release(&sb);
}

static size_t kept_errors(const struct gp_klog *k)
{
	size_t n = 0;
	for (size_t i = 0; i < k->nrow; i++)
		n += gp_klog_is_error(k->row[i].line);
	return n;
}

/* "the first 50, the last 50, and between them the 3 driver errors and
 * lost-records notes; 53 left out" */
static void shown_words(struct strbuf *sb, const struct gp_klog *k)
{
	unsigned long out = k->total - k->nrow;
	if (!out) {
		strbuf_addf(sb, "all %lu line%s", k->total, k->total == 1 ? "" : "s");
		return;
	}
	size_t middle = k->nrow > 2 * GP_KLOG_ENDS ? k->nrow - 2 * GP_KLOG_ENDS : 0;
	strbuf_addf(sb, "%zu of %lu lines: the first %d, the last %d", k->nrow, k->total, GP_KLOG_ENDS,
		    GP_KLOG_ENDS);
	if (middle)
		strbuf_addf(sb, " and, between them, %zu driver error%s and lost-records note%s", middle,
			    middle == 1 ? "" : "s", middle == 1 ? "" : "s");
	strbuf_addf(sb, "; %lu left out", out);
	size_t ke = kept_errors(k);
	if (k->errors > ke)
		strbuf_addf(sb, ", %lu driver errors among them (more than %d between the ends)",
			    k->errors - ke, GP_KLOG_MIDDLE);
}

static void md_row(FILE *out, const json_t *line)
{
	struct strbuf sb = STRBUF_INIT;
	json_int_t v;
	fputs("| ", out);
	add_time(&sb, line, 3);
	fputs(sb.buf, out);
	fputs(" | ", out);
	strbuf_reset(&sb);
	add_name(&sb, line, "driver");
	gp_md_text(out, sb.buf);
	fputs(" | ", out);
	strbuf_reset(&sb);
	add_name(&sb, line, "kind");
	gp_md_text(out, sb.buf);
	fputs(" | ", out);
	if (posint(line, "xid", &v)) {
		fprintf(out, "%" JSON_INTEGER_FORMAT, v);
		if (xid_what(v))
			fprintf(out, " (%s)", xid_what(v));
	} else {
		fputs("–", out);
	}
	if (posint(line, "pid", &v) && v > 0)
		fprintf(out, " | %" JSON_INTEGER_FORMAT " | ", v);
	else
		fputs(" | – | ", out);
	strbuf_reset(&sb);
	if (is_lost(line)) {
		add_lost(&sb, line);
		fprintf(out, "*%s*", sb.buf);
	} else if (field(line, "text")) {
		add_text(&sb, field(line, "text"));
		gp_md_code(out, sb.buf, true);
	} else {
		fputs("–", out);
	}
	fputs(" |\n", out);
	strbuf_release(&sb);
}

void gp_klog_markdown(FILE *out, const struct gp_doc *d)
{
	const struct gp_klog *k = &d->klog;
	if (!k->total)
		return;
	fprintf(out, "**Kernel log** (%lu line%s of GPU drivers and of the kernel's hang, lockup and "
		"OOM warnings; time from the trace start, negative: before it", k->total,
		k->total == 1 ? "" : "s");
	if (k->errors)
		fprintf(out, "; %lu driver error%s", k->errors, k->errors == 1 ? "" : "s");
	if (k->lost)
		fprintf(out, "; %llu records lost (ring overrun)", k->lost);
	fputs(")\n\n", out);
	struct strbuf sb = STRBUF_INIT;
	shown_words(&sb, k);
	bool fold = k->nrow > KLOG_FOLD;
	if (fold)
		fprintf(out, "<details><summary>Kernel log: %s</summary>\n\n", sb.buf);
	else if (k->total > k->nrow)
		fprintf(out, "Shown: %s.\n\n", sb.buf);
	strbuf_release(&sb);
	fputs("| time | driver | kind | Xid | pid | text |\n|---:|---|---|---|---:|---|\n", out);
	unsigned long next = 0;
	for (size_t i = 0; i < k->nrow; i++) {
		const struct gp_klog_row *r = &k->row[i];
		if (r->n > next)
			fprintf(out, "| … | | | | | *%lu line%s left out* |\n", r->n - next,
				r->n - next == 1 ? "" : "s");
		md_row(out, r->line);
		next = r->n + 1;
	}
	if (k->total > next)
		fprintf(out, "| … | | | | | *%lu line%s left out* |\n", k->total - next,
			k->total - next == 1 ? "" : "s");
	fputc('\n', out);
	if (fold)
		fputs("</details>\n\n", out);
}

void gp_klog_text(FILE *out, const struct gp_doc *d)
{
	const struct gp_klog *k = &d->klog;
	if (!k->total)
		return;
	struct strbuf sb = STRBUF_INIT;
	shown_words(&sb, k);
	fprintf(out, "kernel log: %lu line%s (time from the trace start)", k->total, k->total == 1 ? "" : "s");
	if (k->errors)
		fprintf(out, ", %lu driver error%s", k->errors, k->errors == 1 ? "" : "s");
	if (k->lost)
		fprintf(out, ", %llu records lost (ring overrun)", k->lost);
	fprintf(out, "; %s\n", sb.buf);
	unsigned long next = 0;
	for (size_t i = 0; i < k->nrow; i++) {
		const struct gp_klog_row *r = &k->row[i];
		const json_t *line = r->line;
		if (r->n > next)
			fprintf(out, "  ... %lu line%s left out ...\n", r->n - next, r->n - next == 1 ? "" : "s");
		next = r->n + 1;
		strbuf_reset(&sb);
		add_time(&sb, line, 3);
		fprintf(out, "  %11s  ", sb.buf);
		strbuf_reset(&sb);
		add_name(&sb, line, "driver");
		fprintf(out, "%-8s ", sb.buf);
		strbuf_reset(&sb);
		add_name(&sb, line, "kind");
		fprintf(out, "%-12s ", sb.buf);
		json_int_t v;
		strbuf_reset(&sb);
		if (posint(line, "xid", &v))
			strbuf_addf(&sb, "Xid %" JSON_INTEGER_FORMAT, v);
		fprintf(out, "%-7s ", sb.buf);
		strbuf_reset(&sb);
		if (posint(line, "pid", &v) && v > 0)
			strbuf_addf(&sb, "pid %" JSON_INTEGER_FORMAT, v);
		fprintf(out, "%-10s", sb.buf);
		strbuf_reset(&sb);
		if (is_lost(line))
			add_lost(&sb, line);
		else
			add_text(&sb, field(line, "text") ? field(line, "text") : "");
		fprintf(out, "  %s\n", sb.buf);
	}
	if (k->total > next)
		fprintf(out, "  ... %lu line%s left out ...\n", k->total - next, k->total - next == 1 ? "" : "s");
	strbuf_release(&sb);
}

json_t *gp_klog_json(const struct gp_doc *d)
{
	const struct gp_klog *k = &d->klog;
	json_t *shown = json_array();
	for (size_t i = 0; i < k->nrow; i++)
		json_array_append(shown, k->row[i].line);
	json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "lines", (json_int_t)k->total,
			      "errors", (json_int_t)k->errors, "errors_judged", (json_int_t)k->errors_judged,
			      "lost_records", (json_int_t)(k->lost > INT64_MAX ? INT64_MAX : k->lost),
			      "left_out", (json_int_t)(k->total - k->nrow), "shown", shown);
	return o;
}
