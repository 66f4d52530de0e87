/* gpuprobe report: render saved results as a bug-report section
 * (Markdown by default), as text, or as one merged JSON document, and
 * plot a trace's timeline.  Each file is judged again from its samples,
 * so --hang-after can change after the fact. */
#include "config.h"
#include "commands.h"
#include "doc.h"
#include "error.h"
#include "expand.h"
#include "opts.h"
#include "render.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PLOT = 0x100 };

struct report_opts {
	const char *plot;
	char **files;
	int nfiles;
	struct gp_format_args fmt;
	struct gp_judge_args judge;  /* 0: the trace's own */
	struct gp_operand_args operand;
};

static const struct argp_option report_options[] = {
	{ "plot", OPT_PLOT, "FILE", 0,
	  "Also draw the timeline of the first trace to FILE.svg or FILE.png", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static bool ends_with(const char *s, const char *sfx)
{
	size_t a = strlen(s), b = strlen(sfx);
	return a >= b && !strcasecmp(s + a - b, sfx);
}

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_opts *o = state->input;
	if (key != OPT_PLOT)
		return ARGP_ERR_UNKNOWN;
	if (!ends_with(arg, ".svg") && !ends_with(arg, ".png"))
		argp_error(state, "--plot '%s': the name must end in .svg or .png", arg);
	o->plot = arg;
	return 0;
}

static const struct argp report_argp = {
	report_options, report_parse, "FILE...",
	"Render saved gpuprobe results (JSON Lines) as a bug-report section: the "
	"verdict on top, the environment, the evidence table, the busiest and stuck "
	"threads, stacks collapsed by identical frames, pinning arms and A/B tables, "
	"a sparkline per metric, and the kernel log (GPU drivers' lines and the "
	"kernel's hang, lockup and OOM warnings; its driver errors named beside the "
	"verdict).  Each trace is judged again from its samples.\v"
	"Formats: markdown (GitHub-flavoured, pastes into an issue), text, json (one "
	"merged document), jsonl (the results themselves as JSON Lines, decompressed, "
	"every thread of every sample written in full: for jq).  A FILE may be "
	"compressed with zstd (trace -o FILE.zst) or gzip.  --plot draws RssFile, GPU memory and io, the top threads' "
	"CPU, system dirtied/written, the phases, the verdict and the kernel log's "
	"driver errors (needs a build with cairo).\n\n"
	"A file cut short (a killed run) is rendered from what it holds, and said to "
	"be cut.  A file that is not a gpuprobe result is rejected with one line.\n\n"
	"Exit status: 0 ok; 1 a file could not be read or is not a result, or the "
	"plot could not be drawn; 64 usage error.",
	NULL, NULL, NULL,
};

/* --format jsonl: each file's lines, one file after the other. */
static int report_jsonl(const struct report_opts *o)
{
	int rc = GP_EXIT_OK;
	for (int i = 0; i < o->nfiles; i++) {
		char err[256];
		if (gp_report_expand(stdout, o->files[i], err, sizeof err) < 0) {
			gp_err(o->files[i], "%s", err);
			rc = GP_EXIT_ERROR;
		}
	}
	if (fflush(stdout) != 0) {
		gp_err_errno(errno, NULL, "cannot write standard output");
		rc = GP_EXIT_ERROR;
	}
	return rc;
}

int cmd_report(int argc, char **argv, const struct gp_global *g)
{
	struct report_opts o = {
		.fmt = { GP_FMT_MARKDOWN | GP_FMT_TEXT | GP_FMT_JSON | GP_FMT_JSONL, GP_FMT_MARKDOWN },
		.judge.help = (const struct gp_help[]){
			{ GP_KEY_HANG_AFTER, "Judge again with this --hang-after (default: the trace's own)" },
			{ GP_KEY_SLOW_RATE, "Judge again with this --slow-rate" }, { 0, NULL } },
		.operand = { .files = &o.files, .nfiles = &o.nfiles,
			     .none = "give at least one result FILE" } };
	const struct gp_group groups[] = {
		{ &gp_format_argp, &o.fmt, NULL, 0 }, { &gp_judge_argp, &o.judge, NULL, 0 },
		{ &gp_operand_argp, &o.operand, NULL, 0 }, GP_GROUPS_END,
	};
	if (gp_parse_command(&report_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
#ifndef HAVE_CAIRO
	if (o.plot) {
		gp_err(o.plot, "this gpuprobe was built without cairo: no plots");
		gp_hint("install libcairo2-dev and run ./configure again");
		return GP_EXIT_ERROR;
	}
#endif
	if (o.fmt.fmt == GP_FMT_JSONL)
		return report_jsonl(&o);
	struct gp_doc *docs = calloc((size_t)o.nfiles, sizeof *docs);
	if (!docs) {
		gp_err(NULL, "out of memory");
		return GP_EXIT_ERROR;
	}
	struct gp_verdict_opts vo = { .hang_after = o.judge.hang_after, .slow_rate = (double)o.judge.slow_rate };
	int rc = GP_EXIT_OK;
	size_t n = 0;
	for (int i = 0; i < o.nfiles; i++) {
		char err[256];
		if (gp_doc_load(o.files[i], &vo, &docs[n], err, sizeof err) < 0) {
			gp_err(o.files[i], "%s", err);
			rc = GP_EXIT_ERROR;
			continue;
		}
		n++;
	}
	gp_render_report(stdout, o.fmt.fmt == GP_FMT_JSON ? "json" : o.fmt.fmt == GP_FMT_TEXT ? "text"
			 : "markdown", docs, n);
	if (o.plot) {
		char err[256];
		if (gp_plot_first_trace(o.plot, docs, n, err, sizeof err) < 0) {
			gp_err(o.plot, "%s", err);
			rc = GP_EXIT_ERROR;
		}
	}
	for (size_t i = 0; i < n; i++)
		gp_doc_free(&docs[i]);
	free(docs);
	(void)g;
	return rc;
}
