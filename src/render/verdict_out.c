/* The verdict's two outputs: the `verdict` result line (doc/result-format.md,
 * "verdict") and the block a trace prints at its end.  The words come
 * from verdict_text.c. */
#include "config.h"
#include "verdict_text.h"
#include "units.h"

#include <string.h>


/* A JSON string of what a strbuf was given; the strbuf is released. */
static json_t *string_of(struct strbuf *sb)
{
	json_t *j = json_string(sb->buf);
	strbuf_release(sb);
	return j;
}

static json_t *phase_json(const struct gp_verdict *v, size_t i)
{
	const struct gp_phase *p = &v->phase[i];
	struct strbuf what = STRBUF_INIT;
	gp_phase_what(&what, v, i);
	json_t *o = json_pack("{s:f, s:f, s:s, s:o}", "from", p->from, "to", p->to,
			      "kind", p->progress ? "progress" : "flat", "what", string_of(&what));
	if (o && p->progress)
		json_object_set_new(o, "rate_bytes_per_s", json_real(p->rate));
	return o;
}

static json_t *evidence_row_json(const struct gp_evidence *e)
{
	struct strbuf reads = STRBUF_INIT;
	gp_evidence_reads(&reads, e);
	return json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:s, s:o}",
			 "metric", e->metric, "scope", e->scope, "unit", e->unit,
			 "first", e->first, "last", e->last, "slope_per_s", e->slope_per_s,
			 "role", e->role == GP_ROLE_PROGRESS ? "progress" : "activity",
			 "reads", string_of(&reads));
}

static json_t *stuck_json(const struct gp_stuck *s)
{
	json_t *sk = json_array();
	for (size_t i = 0; i < s->n; i++) {
		const struct gp_stuck_thread *x = &s->th[i];
		char st[2] = { x->state, 0 };
		json_t *fr = json_array();
		for (unsigned k = 0; k < x->nframes; k++)
			json_array_append_new(fr, json_string(x->frames[k]));
		json_t *o = json_pack("{s:i, s:i, s:s, s:s, s:s, s:o}", "pid", x->pid,
				      "tid", x->tid, "comm", x->comm, "state", st,
				      "wait_frame", x->wait_frame, "frames", fr);
		if (o && x->kernel[0])
			json_object_set_new(o, "kernel", json_string(x->kernel));
		if (o && x->count > 1)
			json_object_set_new(o, "count", json_integer(x->count));
		if (o)
			json_array_append_new(sk, o);
	}
	return json_pack("{s:f, s:s, s:i, s:o}", "t", s->t, "why", s->why, "threads",
			 (int)s->total, "sample", sk);
}

json_t *gp_verdict_json(const struct gp_verdict *v)
{
	struct strbuf sum = STRBUF_INIT, why = STRBUF_INIT;
	gp_verdict_summary(&sum, v);
	gp_verdict_reason(&why, v);
	json_t *j = json_pack("{s:s, s:s, s:f, s:s, s:s, s:s}", "type", "verdict",
			      "class", gp_class_name(v->cls), "since_s", v->since_s,
			      "confidence", gp_conf_name(v->confidence),
			      "confidence_reason", why.buf, "summary", sum.buf);
	strbuf_release(&sum);
	strbuf_release(&why);
	if (!j)
		return NULL;
	if (v->before != GP_CLASS_COUNT)
		json_object_set_new(j, "before", json_string(gp_class_name(v->before)));
	if (v->cls == GP_CLASS_UNDECIDED || v->before == GP_CLASS_UNDECIDED) {
		if (v->leans != GP_CLASS_COUNT)
			json_object_set_new(j, "leans", json_string(gp_class_name(v->leans)));
		json_object_set_new(j, "needs_s", json_real(v->needs_s));
	}
	if (v->still_before_s > 0) {
		json_object_set_new(j, "still_before_s", json_real(v->still_before_s));
		json_object_set_new(j, "still_before_by", json_string(v->before_by == GP_BEFORE_CALLER ? "caller"
			: v->before_by == GP_BEFORE_LAST_WATCH ? "last_watch" : "threads"));
	}
	if (v->eta_s >= 0)
		json_object_set_new(j, "eta_s", json_real(v->eta_s));
	json_object_set_new(j, "judged", json_pack("{s:f, s:f}", "from", v->judged_from, "to", v->judged_to));
	json_object_set_new(j, "hang_after_s", json_real(v->hang_after));
	json_t *ph = json_array(), *ev = json_array();
	for (size_t i = 0; i < v->nphases; i++)
		json_array_append_new(ph, phase_json(v, i));
	for (size_t i = 0; i < v->nev; i++)
		json_array_append_new(ev, evidence_row_json(&v->ev[i]));
	json_object_set_new(j, "phases", ph);
	json_object_set_new(j, "evidence", ev);
	json_t *un = json_array();
	const char *line[GP_VERDICT_UNSEEN_MAX];
	size_t nu = gp_verdict_unseen(v, line);
	for (size_t i = 0; i < nu; i++)
		json_array_append_new(un, json_string(line[i]));
	json_object_set_new(j, "unseen", un);
	if (v->stuck.t >= 0 && v->stuck.n)
		json_object_set_new(j, "stuck", stuck_json(&v->stuck));
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

static void print_evidence(FILE *out, const struct gp_verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	fprintf(out, "evidence, +%.1f-%.1f s:\n", v->judged_from, v->judged_to);
	fprintf(out, "  %-19s %-8s %-9s %12s %12s  %s\n", "metric", "scope", "role", "first",
		"last", "reads");
	for (size_t i = 0; i < v->nev; i++) {
		const struct gp_evidence *e = &v->ev[i];
		char f[32], l[32];
		fmt_value(f, sizeof f, e->unit, e->first);
		fmt_value(l, sizeof l, e->unit, e->last);
		strbuf_reset(&sb);
		gp_evidence_reads(&sb, e);
		fprintf(out, "  %-19s %-8s %-9s %12s %12s  %s\n", e->metric, e->scope,
			e->role == GP_ROLE_PROGRESS ? "progress" : "activity", f, l, sb.buf);
	}
	strbuf_release(&sb);
}

void gp_verdict_print(FILE *out, const struct gp_verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	fprintf(out, "\nverdict: %s", gp_class_name(v->cls));
	if (v->before != GP_CLASS_COUNT)
		fprintf(out, " (before: %s)", gp_class_name(v->before));
	gp_verdict_reason(&sb, v);
	fprintf(out, " since %+.1f s, confidence %s (%s)\n", v->since_s, gp_conf_name(v->confidence),
		sb.buf);
	strbuf_reset(&sb);
	gp_verdict_summary(&sb, v);
	fprintf(out, "  %s\n", sb.buf);
	if (v->nphases) {
		fprintf(out, "phases:\n");
		for (size_t i = 0; i < v->nphases; i++) {
			const struct gp_phase *p = &v->phase[i];
			char range[48];
			snprintf(range, sizeof range, "+%.1f-%.1f s", p->from, p->to);
			strbuf_reset(&sb);
			gp_phase_what(&sb, v, i);
			fprintf(out, "  %-18s %-8s %s\n", range, p->progress ? "progress" : "flat",
				sb.buf);
		}
	}
	strbuf_release(&sb);
	if (v->nev)
		print_evidence(out, v);
	const char *line[GP_VERDICT_UNSEEN_MAX];
	size_t nu = gp_verdict_unseen(v, line);
	for (size_t i = 0; i < nu; i++)
		fprintf(out, "  not seen: %s\n", line[i]);
}
