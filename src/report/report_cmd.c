/* gpuprobe report: render saved results.  For now the text summary and
 * the verdict, judged again from the samples (so --hang-after can be
 * changed after the fact), or the verdicts as JSON. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "load.h"
#include "parse.h"
#include "trace_text.h"
#include "verdict.h"

#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_HANG_AFTER = 0x100, OPT_SLOW_RATE, OPT_FORMAT };

struct report_opts {
	const char *format;
	double hang_after;     /* 0: the one the trace used */
	uint64_t slow_rate;
	char **files;
	int nfiles;
};

static const struct argp_option report_options[] = {
	{ "format", OPT_FORMAT, "FORMAT", 0, "text (default) or json", 0 },
	{ "hang-after", OPT_HANG_AFTER, "SECONDS", 0,
	  "Judge again with this --hang-after (default: the trace's own)", 0 },
	{ "slow-rate", OPT_SLOW_RATE, "SIZE", 0, "Judge again with this --slow-rate", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;
	switch (key) {
	case OPT_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "json"))
			argp_error(state, "--format '%s': give text or json", arg);
		o->format = arg;
		break;
	case OPT_HANG_AFTER:
		if (!gp_parse_seconds(arg, &o->hang_after) || o->hang_after <= 0)
			argp_error(state, "--hang-after '%s': give a positive number of seconds", arg);
		break;
	case OPT_SLOW_RATE:
		if (!gp_parse_size(arg, &o->slow_rate))
			argp_error(state, "--slow-rate '%s': give bytes per second, e.g. 1M", arg);
		break;
	case ARGP_KEY_ARGS:
		o->files = state->argv + state->next;
		o->nfiles = state->argc - state->next;
		break;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "give at least one result FILE");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp report_argp = {
	report_options, report_parse, "FILE...",
	"Render saved gpuprobe results (JSON Lines): the summary and the verdict, "
	"judged again from the recorded samples.\v"
	"A file cut short (a killed run) is rendered from what it holds, and said to "
	"be cut.  A file that is not a gpuprobe result is rejected.\n\n"
	"Exit status: 0 ok; 1 a file could not be read or is not a result; 64 usage error.",
	NULL, NULL, NULL,
};

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

static int report_one(const char *path, const struct report_opts *o, json_t *merged)
{
	struct gp_loaded l;
	char err[256];
	if (gp_load_result(path, &l, err, sizeof err) < 0) {
		gp_err(path, "%s", err);
		return GP_EXIT_ERROR;
	}
	struct gp_verdict_opts vo = { .hang_after = o->hang_after, .slow_rate = (double)o->slow_rate,
				      .page_size = l.page_size, .kstacks_seen = l.kstacks_seen };
	if (vo.hang_after <= 0) {
		json_t *h = json_object_get(l.verdict, "hang_after_s");
		vo.hang_after = json_is_number(h) ? json_number_value(h) : GP_VERDICT_HANG_AFTER_DEFAULT;
	}
	json_t *st = json_object_get(l.exit, "status"), *sg = json_object_get(l.exit, "signal");
	vo.end_reason = l.exit ? str_or(l.exit, "reason", NULL) : NULL;
	if (json_is_integer(st) || json_is_integer(sg)) {
		vo.have_status = true;
		vo.status = json_is_integer(st) ? (int)json_integer_value(st) : 0;
		vo.signal = json_is_integer(sg) ? (int)json_integer_value(sg) : 0;
	}
	struct gp_verdict *v = malloc(sizeof *v);
	if (!v) {
		gp_loaded_free(&l);
		return GP_EXIT_ERROR;
	}
	gp_verdict_compute(l.series.pt, l.series.n, &vo, v);
	if (!strcmp(o->format, "json")) {
		json_t *entry = json_pack("{s:s, s:b, s:I}", "file", path, "truncated", l.truncated,
					  "samples", (json_int_t)l.series.n);
		if (l.target)
			json_object_set(entry, "target", l.target);
		json_object_set_new(entry, "verdict", gp_verdict_json(v));
		json_array_append_new(merged, entry);
	} else {
		struct gp_trace_end end = {
			.pid = (int)json_integer_value(json_object_get(l.target, "pid")),
			.comm = str_or(l.target, "comm", "?"),
			.reason = l.exit ? str_or(l.exit, "reason", "?")
					 : "cut short: no exit line (the run was killed)",
			.have_status = vo.have_status, .status = vo.status, .signal = vo.signal,
			.output = path, .lines = l.lines, .page_size = l.page_size,
		};
		gp_render_trace_summary(stdout, &l.series, &end);
		if (l.truncated)
			printf("  note       the last line was cut: the run was killed while writing it\n");
		gp_verdict_print(stdout, v);
	}
	free(v);
	gp_loaded_free(&l);
	return GP_EXIT_OK;
}

int cmd_report(int argc, char **argv, const struct gp_global *g)
{
	struct report_opts o = { .format = "text" };
	if (argp_parse(&report_argp, argc, argv, 0, NULL, &o))
		return GP_EXIT_USAGE;
	json_t *merged = json_array();
	int rc = GP_EXIT_OK;
	for (int i = 0; i < o.nfiles; i++) {
		if (i && !strcmp(o.format, "text"))
			putchar('\n');
		int r = report_one(o.files[i], &o, merged);
		if (r)
			rc = r;
	}
	if (!strcmp(o.format, "json")) {
		json_t *doc = json_pack("{s:s, s:o}", "gpuprobe", PACKAGE_VERSION, "results", merged);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		putchar('\n');
		json_decref(doc);
	} else {
		json_decref(merged);
	}
	return rc;
}
