/* Text rendering of a loaded result, and its merged-JSON entry. */
#include "config.h"
#include "render.h"
#include "verdict_text.h"
#include "trace_text.h"
#include "arms.h"
#include "klog.h"
#include "libs_text.h"
#include "ras_text.h"
#include "target_text.h"

#include <stdlib.h>

#include <string.h>

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

void gp_render_text(FILE *out, const struct gp_doc *d)
{
	if (d->is_trace) {
		struct strbuf cmd = STRBUF_INIT, was = STRBUF_INIT, where = STRBUF_INIT;
		const json_t *now = gp_doc_target_now(d);
		gp_target_where(&where, d->l.target);
		gp_target_words(&cmd, now, 64);
		if (now != d->l.target && gp_target_words(&was, d->l.target, 64) && !strcmp(was.buf, cmd.buf))
			strbuf_reset(&was); /* renamed, not exec'd */
		json_t *st = json_object_get(d->l.exit, "status"), *sg = json_object_get(d->l.exit, "signal");
		struct gp_trace_end end = {
			.pid = (int)json_integer_value(json_object_get(d->l.target, "pid")),
			.comm = gp_doc_comm(d),
			.cmdline = cmd.len ? cmd.buf : NULL, .started_as = was.len ? was.buf : NULL,
			.where = where.len ? where.buf : NULL,
			.reason = d->l.exit ? str_or(d->l.exit, "reason", "?")
					    : "cut short: no exit line (the run was killed)",
			.have_status = json_is_integer(st) || json_is_integer(sg),
			.status = (int)json_integer_value(st), .signal = (int)json_integer_value(sg),
			.output = d->path, .lines = d->l.lines, .page_size = d->l.page_size,
			.have_forks = d->have_forks, .forks_started = d->forks_started,
			.forks_exited = d->forks_exited, .forks_lost = d->forks_lost,
			.forks_why = str_or(d->l.exit, "forks_unseen", NULL),
		};
		gp_render_trace_summary(out, &d->l.series, &end);
		strbuf_release(&cmd);
		strbuf_release(&was);
		strbuf_release(&where);
	}
	if (d->l.truncated)
		fprintf(out, "  note       the last line was cut: the run was killed while writing it\n");
	size_t n = json_array_size(d->arms);
	if (n) {
		char s[256];
		gp_arms_summary(s, sizeof s, d->arms);
		fprintf(out, "%s: pinning probe, %s\n", d->path, s);
		gp_arms_text(out, d->arms); /* what `gpuprobe lock` prints */
	}
	if (d->is_idle) {
		size_t i;
		const json_t *r;
		fprintf(out, "%s: idle, %zu runtime%s\n", d->path, json_array_size(d->idle),
			json_array_size(d->idle) == 1 ? "" : "s");
		json_array_foreach(d->idle, i, r) {
			const json_t *rt = json_object_get(r, "runtime");
			const char *lib = json_string_value(json_object_get(rt, "lib"));
			if (!lib)
				lib = str_or(r, "lib", "?");
			fprintf(out, "  %-48s %-6s %6.1f%% CPU", lib, str_or(r, "class", "error"),
				json_number_value(json_object_get(r, "idle_cpu_pct")));
			size_t q;
			const json_t *t;
			json_array_foreach(json_object_get(r, "spinning_threads"), q, t)
				fprintf(out, "%s%d %.1f%%", q ? ", " : "  spinners: ",
					(int)json_integer_value(json_object_get(t, "tid")),
					json_number_value(json_object_get(t, "cpu_pct")));
			fputc('\n', out);
		}
	}
	gp_libs_text(out, d);
	gp_ras_text(out, d);
	if (d->is_trace)
		gp_verdict_print(out, &d->v);
	struct strbuf sb = STRBUF_INIT;
	if (gp_klog_verdict_words(&sb, d)) {
		/* Beside the verdict (issue 19); control characters of the
		 * file's strings are '?' already. */
		fprintf(out, "  kernel log: %s; each line below\n", sb.buf);
	}
	strbuf_release(&sb);
	if (d->klog.total) {
		fputc('\n', out);
		gp_klog_text(out, d);
	}
}

json_t *gp_render_json(const struct gp_doc *d)
{
	json_t *e = json_pack("{s:s, s:b, s:I}", "file", d->path, "truncated", d->l.truncated,
			      "samples", (json_int_t)d->l.series.n);
	if (d->l.header)
		json_object_set(e, "header", d->l.header);
	if (d->l.target)
		json_object_set(e, "target", d->l.target);
	if (d->target_now) /* what the target exec'd (trace.c follow_exec) */
		json_object_set(e, "target_now", d->target_now);
	if (d->l.exit)
		json_object_set(e, "exit", d->l.exit);
	if (d->is_trace) {
		json_object_set_new(e, "verdict", gp_verdict_json(&d->v));
		const struct gp_thread_agg *top[8];
		size_t n = gp_doc_top_threads(d, top, 8);
		json_t *th = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(th, json_pack("{s:i, s:i, s:s, s:s, s:f, s:f, s:s, s:s}",
				"pid", top[i]->pid, "tid", top[i]->tid, "pcomm", top[i]->pcomm, "comm", top[i]->comm,
				"cpu_pct", top[i]->judged ? top[i]->cpu_sum / top[i]->judged : 0.0,
				"sys_pct", top[i]->judged ? top[i]->sys_sum / top[i]->judged : 0.0,
				"wchan", top[i]->wchan, "syscall", top[i]->syscall));
		json_object_set_new(e, "threads", th);
	}
	if (json_array_size(d->arms))
		json_object_set(e, "arms", d->arms);
	if (json_array_size(d->stacks))
		json_object_set(e, "stacks", d->stacks);
	if (json_array_size(d->idle))
		json_object_set(e, "idle", d->idle);
	if (json_array_size(d->gpu))
		json_object_set(e, "gpu", d->gpu);
	if (d->klog.total)
		json_object_set_new(e, "kernel_log", gp_klog_json(d));
	if (json_object_size(d->unknown))
		json_object_set(e, "unrendered_types", d->unknown);
	return e;
}
