#include "config.h"
#include "opts.h"
#include "parse.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the option's name, from the tables ------------------------------ */

static const struct argp_option *find_opt(const struct argp *a, int key)
{
	for (const struct argp_option *o = a->options; o && (o->name || o->key || o->doc); o++)
		if (o->key == key && o->name)
			return o;
	for (const struct argp_child *c = a->children; c && c->argp; c++) {
		const struct argp_option *o = find_opt(c->argp, key);
		if (o)
			return o;
	}
	return NULL;
}

static void opt_name(const struct argp_state *st, int key, char *buf, size_t cap)
{
	const struct argp_option *o = key == ARGP_KEY_ARG ? NULL : find_opt(st->root_argp, key);
	if (o)
		snprintf(buf, cap, "--%s", o->name);
	else if (key > 0 && key < 0x100)
		snprintf(buf, cap, "-%c", key);
	else
		snprintf(buf, cap, "PID");
}

/* A help filter's answer other than text is freed by argp: a copy. */
static char *help_text(const char *doc, const char *text)
{
	char *s = doc ? strdup(doc) : NULL;
	return s ? s : (char *)text;
}

const char *gp_arg_shown(const char *arg, char *buf, size_t cap)
{
	size_t n = 0, i = 0;
	for (; arg[i] && n + 4 < cap; i++)
		buf[n++] = (unsigned char)arg[i] < 0x20 || arg[i] == 0x7f ? '?' : arg[i];
	if (arg[i] && n >= 3)
		memcpy(buf + n - 3, "...", 3);
	buf[n] = '\0';
	return buf;
}

/* argp_error exits (argp_err_exit_status, 64): the functions below never
 * return from a bad value. */
#define REFUSE(st, key, arg, why, ...) do { \
	char n_[64], a_[72]; \
	opt_name(st, key, n_, sizeof n_); \
	argp_error(st, "%s '%s': %s: " why, n_, gp_arg_shown(arg, a_, sizeof a_), __VA_ARGS__); \
} while (0)

/* ---- typed values ------------------------------------------------------ */

void gp_fmt_ns_seconds(char *buf, size_t cap, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	int len = snprintf(buf, cap, "%" PRId64 ".%09" PRId64, ns / GP_NS_S, ns % GP_NS_S);
	if (len <= 0 || (size_t)len >= cap)
		return;
	while (buf[len - 1] == '0')
		buf[--len] = '\0';
	if (buf[len - 1] == '.')
		buf[--len] = '\0';
}

static void duration_range(char *buf, size_t cap, int64_t min_ns, int64_t max_ns)
{
	char a[32], b[32];
	gp_fmt_ns_seconds(a, sizeof a, min_ns);
	gp_fmt_ns_seconds(b, sizeof b, max_ns);
	if (min_ns <= 1)
		snprintf(buf, cap, "seconds, %s 0 and at most %s", min_ns ? "over" : "from", b);
	else
		snprintf(buf, cap, "seconds from %s to %s", a, b);
}

int64_t gp_arg_duration(struct argp_state *st, int key, const char *arg,
			int64_t min_ns, int64_t max_ns)
{
	char range[96];
	duration_range(range, sizeof range, min_ns, max_ns);
	int64_t ns;
	if (!gp_parse_duration(arg, &ns))
		REFUSE(st, key, arg, "give %s (a decimal number; ms, s, m, h or d may follow)",
		       "not a duration", range);
	if (ns < min_ns || ns > max_ns)
		REFUSE(st, key, arg, "give %s", "out of range", range);
	return ns;
}

double gp_arg_seconds(struct argp_state *st, int key, const char *arg,
		      int64_t min_ns, int64_t max_ns)
{
	return (double)gp_arg_duration(st, key, arg, min_ns, max_ns) / 1e9;
}

uint64_t gp_arg_size(struct argp_state *st, int key, const char *arg,
		     uint64_t min, uint64_t max)
{
	uint64_t v;
	if (!gp_parse_size(arg, &v))
		REFUSE(st, key, arg, "give bytes, e.g. %s (K, M, G, T, P, E: binary, KiB = K)",
		       "not a size", "16G or 4096");
	if (v < min)
		REFUSE(st, key, arg, "give at least %" PRIu64 " (bytes)", "out of range", min);
	if (v > max)
		REFUSE(st, key, arg, "give at most %" PRIu64 " (bytes)", "out of range", max);
	return v;
}

double gp_arg_percent(struct argp_state *st, int key, const char *arg, double min, double max)
{
	double v;
	if (!gp_parse_percent(arg, &v))
		REFUSE(st, key, arg, "give a CPU%% from %g to %g", "not a percentage", min, max);
	if (v < min || v > max)
		REFUSE(st, key, arg, "give a CPU%% from %g to %g", "out of range", min, max);
	return v;
}

uint64_t gp_arg_count(struct argp_state *st, int key, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;
	if (!gp_parse_count(arg, &v))
		REFUSE(st, key, arg, "give %" PRIu64 " to %" PRIu64, "not a count", min, max);
	if (v < min || v > max)
		REFUSE(st, key, arg, "give %" PRIu64 " to %" PRIu64, "out of range", min, max);
	return v;
}

int gp_arg_pid(struct argp_state *st, int key, const char *arg)
{
	int pid;
	if (gp_parse_pid(arg, &pid))
		return pid;
	char a[72];
	if (key == ARGP_KEY_ARG)
		argp_error(st, "'%s' is not a PID (give 1..%d)", gp_arg_shown(arg, a, sizeof a), INT_MAX);
	REFUSE(st, key, arg, "give 1..%d", "not a process or thread id", INT_MAX);
	return 0;
}

/* ---- options that only store their value ------------------------------ */

error_t gp_set_option(struct argp_state *st, const struct gp_opt_field *table, int key,
		      const char *arg, void *opts)
{
	const struct gp_opt_field *t = table;
	while (t->key && t->key != key)
		t++;
	char *field = (char *)opts + t->offset;
	switch (t->key ? t->kind : 0) {
	case GP_OPT_TRUE:
	case GP_OPT_FALSE:
		*(bool *)field = t->kind == GP_OPT_TRUE;
		return 0;
	case GP_OPT_NS:
		*(int64_t *)field = gp_arg_duration(st, key, arg, t->min_ns, t->max_ns);
		return 0;
	case GP_OPT_SECONDS:
		*(double *)field = gp_arg_seconds(st, key, arg, t->min_ns, t->max_ns);
		return 0;
	case GP_OPT_STRING:
		*(const char **)field = arg;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int gp_arg_choice(struct argp_state *st, int key, const char *arg, const char *const *names)
{
	size_t n = 0;
	for (; names[n]; n++)
		if (!strcmp(arg, names[n]))
			return (int)n;
	char name[64], give[256];
	size_t len = 0;
	give[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof give; i++) {
		int w = snprintf(give + len, sizeof give - len, "%s%s",
				 i == 0 ? "" : i + 1 < n ? ", " : " or ", names[i]);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	opt_name(st, key, name, sizeof name);
	argp_error(st, "%s '%s': give %s", name, arg, give);
	return -1;
}

/* ---- the groups ---------------------------------------------------------- */

#define MAX_GROUPS 8

struct command_ctx {
	void *input;
	const struct gp_group *groups;
};

static error_t command_parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	const struct command_ctx *c = state->input;
	if (key != ARGP_KEY_INIT)
		return ARGP_ERR_UNKNOWN;
	state->child_inputs[0] = c->input;
	for (size_t i = 0; i < MAX_GROUPS && c->groups[i].argp; i++)
		state->child_inputs[i + 1] = c->groups[i].input;
	return 0;
}

error_t gp_parse_command(const struct argp *cmd, const struct gp_group *groups,
			 int argc, char **argv, void *input)
{
	/* The command's argp is the first child of one that carries its
	 * usage and docs (a child's docs would print twice). */
	struct argp body = *cmd;
	body.args_doc = NULL;
	body.doc = NULL;
	struct argp_child children[MAX_GROUPS + 2] = { { &body, 0, NULL, 0 } };
	size_t n = 1;
	for (size_t i = 0; i < MAX_GROUPS && groups[i].argp; i++, n++)
		children[n] = (struct argp_child){ groups[i].argp, 0, groups[i].header, groups[i].group };
	children[n] = (struct argp_child){ NULL, 0, NULL, 0 };
	const struct argp top = { NULL, command_parse, cmd->args_doc, cmd->doc, children, NULL, NULL };
	struct command_ctx c = { input, groups };
	return argp_parse(&top, argc, argv, 0, NULL, &c);
}

char *gp_group_help(int key, const char *text, void *input)
{
	const struct gp_help *const *h = input; /* every group's first member */
	for (const struct gp_help *d = h ? *h : NULL; d && d->doc; d++)
		if (d->key == key)
			return help_text(d->doc, text);
	return (char *)text;
}

/* ---- -o FILE, -q ------------------------------------------------------- */

static const struct argp_option out_options[] = {
	{ "output", 'o', "FILE", 0, "Save the result as JSON Lines to FILE", 0 },
	{ "quiet", 'q', NULL, 0, "Print less: no progress or live lines", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t out_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_out_args *o = state->input;
	if (key == 'o' && !*arg)
		argp_error(state, "--output needs a file name");
	if (key == 'o')
		o->path = arg;
	else if (key == 'q')
		o->quiet = true;
	else
		return ARGP_ERR_UNKNOWN;
	return 0;
}

const struct argp gp_out_argp = { out_options, out_parse, NULL, NULL, NULL, gp_group_help, NULL };

/* ---- --format ------------------------------------------------------------ */

static const struct { const char *name; enum gp_format f; } formats[] = {
	{ "text", GP_FMT_TEXT }, { "json", GP_FMT_JSON }, { "markdown", GP_FMT_MARKDOWN },
	{ "jsonl", GP_FMT_JSONL },
	{ "md", GP_FMT_MARKDOWN }, /* an alias: last */
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const struct argp_option format_options[] = {
	{ "format", GP_KEY_FORMAT, "FORMAT", 0, "Standard output as text, json or markdown", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* "text (default), json or markdown": the formats this command renders. */
static void format_list(const struct gp_format_args *f, char *buf, size_t cap)
{
	size_t len = 0;
	unsigned left = f->allowed;
	for (size_t i = 0; i + 1 < NFORMATS; i++) { /* "md" is an alias */
		if (!(f->allowed & formats[i].f))
			continue;
		left &= ~formats[i].f;
		int n = snprintf(buf + len, cap - len, "%s%s%s", len ? (left ? ", " : " or ") : "",
				 formats[i].name, formats[i].f == f->fmt ? " (default)" : "");
		if (n < 0 || (size_t)n >= cap - len)
			return;
		len += (size_t)n;
	}
}

static error_t format_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_format_args *f = state->input;
	if (key != GP_KEY_FORMAT)
		return ARGP_ERR_UNKNOWN;
	for (size_t i = 0; i < NFORMATS; i++) {
		if (!strcmp(arg, formats[i].name) && (f->allowed & formats[i].f)) {
			f->fmt = formats[i].f;
			return 0;
		}
	}
	char list[96], a[72];
	format_list(f, list, sizeof list);
	argp_error(state, "--format '%s': give %s", gp_arg_shown(arg, a, sizeof a), list);
	return 0;
}

static char *format_help(int key, const char *text, void *input)
{
	const struct gp_format_args *f = input;
	if (key != GP_KEY_FORMAT || !f)
		return (char *)text;
	char list[96];
	format_list(f, list, sizeof list);
	char *s = NULL;
	if (asprintf(&s, "Standard output as %s", list) < 0)
		return (char *)text;
	return s;
}

const struct argp gp_format_argp = { format_options, format_parse, NULL, NULL, NULL,
				     format_help, NULL };

/* ---- --hot-threshold, --no-kernel-stacks ------------------------------- */

static const struct argp_option stack_options[] = {
	{ "hot-threshold", GP_KEY_HOT_THRESHOLD, "PCT", 0, "CPU% at which a thread is hot (default 50)", 0 },
	{ "no-kernel-stacks", GP_KEY_NO_KSTACKS, NULL, 0, "Never read /proc/TID/stack", 0 },
	{ "no-python", GP_KEY_NO_PYTHON, NULL, 0, "No Python frames (function, file, line) in the "
	  "stacks of a CPython 3.11-3.13 process", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t stack_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_stack_args *s = state->input;
	if (key == GP_KEY_HOT_THRESHOLD) /* one thread's share of one CPU: over 100, never hot */
		s->hot_pct = gp_arg_percent(state, key, arg, 0, 100);
	else if (key == GP_KEY_NO_KSTACKS)
		s->kstacks = false;
	else if (key == GP_KEY_NO_PYTHON)
		s->no_python = true;
	else
		return ARGP_ERR_UNKNOWN;
	return 0;
}

const struct argp gp_stack_argp = { stack_options, stack_parse, NULL, NULL, NULL, gp_group_help, NULL };

/* ---- --hang-after, --slow-rate ------------------------------------------ */

static const struct argp_option judge_options[] = {
	{ "hang-after", GP_KEY_HANG_AFTER, "SECONDS", 0, "No progress for this long is a hang", 0 },
	{ "slow-rate", GP_KEY_SLOW_RATE, "SIZE", 0,
	  "Progress under SIZE per second (K/M/G suffixes) is slow-progress", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t judge_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_judge_args *j = state->input;
	if (key == GP_KEY_HANG_AFTER)
		j->hang_after = gp_arg_seconds(state, key, arg, 1, 365 * 86400 * GP_NS_S);
	else if (key == GP_KEY_SLOW_RATE)
		j->slow_rate = gp_arg_size(state, key, arg, 0, UINT64_MAX);
	else
		return ARGP_ERR_UNKNOWN;
	return 0;
}

const struct argp gp_judge_argp = { judge_options, judge_parse, NULL, NULL, NULL, gp_group_help, NULL };

/* ---- --name, --interval, --seconds -------------------------------------- */

static const struct argp_option sample_options[] = {
	{ "name", 'n', "NAME", 0, "The process whose comm or argv[0] is NAME", 1 },
	{ "interval", 'i', "SECONDS", 0, "Time between samples (default 1)", 2 },
	{ "seconds", 's', "SECONDS", 0, "Stop after SECONDS", 2 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t sample_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_sample_args *s = state->input;
	if (key == 'n' && !*arg)
		argp_error(state, "--name needs a non-empty NAME");
	if (key == 'n')
		s->name = arg;
	else if (key == 'i')
		s->interval = gp_arg_seconds(state, key, arg, s->min_interval_ns, 3600 * GP_NS_S);
	else if (key == 's')
		s->seconds = gp_arg_seconds(state, key, arg, 1, 365 * 86400 * GP_NS_S);
	else
		return ARGP_ERR_UNKNOWN;
	return 0;
}

const struct argp gp_sample_argp = { sample_options, sample_parse, NULL, NULL, NULL, gp_group_help, NULL };

/* ---- operands ------------------------------------------------------------ */

/* ARGP_KEY_ARGS comes only where ARGP_KEY_ARG was refused: FILE... takes
 * them all at once. */
static error_t operand_parse(int key, char *arg, struct argp_state *state)
{
	struct gp_operand_args *a = state->input;
	if (key == ARGP_KEY_ARG && !a->files) {
		if (a->taken || (a->pid ? *a->pid != 0 : *a->file != NULL))
			argp_error(state, "%s", a->one_only);
		if (a->pid)
			*a->pid = gp_arg_pid(state, key, arg);
		else
			*a->file = arg;
	} else if (key == ARGP_KEY_ARGS && a->files) {
		*a->files = state->argv + state->next;
		*a->nfiles = state->argc - state->next;
	} else if (key == ARGP_KEY_NO_ARGS && a->none) {
		argp_error(state, "%s", a->none);
	} else if (key == ARGP_KEY_END && a->check) {
		a->check(state, a->cmd);
	} else {
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp gp_operand_argp = { NULL, operand_parse, NULL, NULL, NULL, NULL, NULL };

/* ---- no arguments --------------------------------------------------------- */

static error_t noargs_parse(int key, char *arg, struct argp_state *state)
{
	if (key != ARGP_KEY_ARG)
		return ARGP_ERR_UNKNOWN;
	char a[72];
	argp_error(state, "no arguments expected ('%s'): this command takes options only",
		   gp_arg_shown(arg, a, sizeof a));
	return 0;
}

const struct argp gp_noargs_argp = { NULL, noargs_parse, NULL, NULL, NULL, NULL, NULL };
