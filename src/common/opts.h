/* The command line, shared by the commands: one parser per kind of value
 * and the option groups several commands take, as argp children
 * (elfutils' src/stack.c shape), so a command's parse function handles
 * only its own options.
 *
 * Typed values: each gp_arg_* takes the whole ARG (parse.h says what each
 * kind accepts) or calls argp_error, which exits 64 with one line that
 * names the option, what was wrong and what it takes:
 *     gpuprobe pools: --timeout 'inf': not a duration: give seconds, over 0 and at most 86400 (...)
 * The option's name is looked up by its key in the command's argp tables
 * (children too), so a message cannot name another option.  key
 * ARGP_KEY_ARG names the positional argument ("PID"). */
#ifndef GP_OPTS_H
#define GP_OPTS_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_NS_MS ((int64_t)1000000)
#define GP_NS_S ((int64_t)1000000000)

int64_t gp_arg_duration(struct argp_state *st, int key, const char *arg,
			int64_t min_ns, int64_t max_ns);
/* A duration where the command keeps seconds as a double (exact to 1 ns). */
double gp_arg_seconds(struct argp_state *st, int key, const char *arg,
		      int64_t min_ns, int64_t max_ns);
uint64_t gp_arg_size(struct argp_state *st, int key, const char *arg,
		     uint64_t min, uint64_t max);
double gp_arg_percent(struct argp_state *st, int key, const char *arg,
		      double min, double max);
uint64_t gp_arg_count(struct argp_state *st, int key, const char *arg,
		      uint64_t min, uint64_t max);
int gp_arg_pid(struct argp_state *st, int key, const char *arg);
/* The index of ARG in NAMES (NULL ended):
 *     gpuprobe trace: --stacks 'x': give hot, all or none */
int gp_arg_choice(struct argp_state *st, int key, const char *arg, const char *const *names);

/* arg as a message shows it: control characters as '?', cut to fit cap
 * with "...": one line of bounded length whatever was given. */
const char *gp_arg_shown(const char *arg, char *buf, size_t cap);

/* Seconds as the parsers read them back, exactly ("0.25", "3"): for a
 * command line gpuprobe passes on (demo runs trace). */
void gp_fmt_ns_seconds(char *buf, size_t cap, int64_t ns);

/* ---- options that only store their value -----------------------------
 * A command's parser hands the options it does nothing more with to
 * gp_set_option (its default case), with a table of them, GP_OPT_END
 * ended: a flag sets its bool field to true or false; a duration is read
 * by gp_arg_duration with the command's range, into an int64_t of ns
 * (GP_OPT_NS) or a double of seconds (GP_OPT_SECONDS); a string is kept
 * as given (a const char *, GP_OPT_STRING).  Returns 0, or
 * ARGP_ERR_UNKNOWN for a key not in the table (the parser's answer). */
enum gp_opt_kind { GP_OPT_TRUE = 1, GP_OPT_FALSE, GP_OPT_NS, GP_OPT_SECONDS, GP_OPT_STRING };
struct gp_opt_field {
	int key;                     /* 0: the end */
	enum gp_opt_kind kind;
	size_t offset;               /* of the field in the command's options */
	int64_t min_ns, max_ns;      /* a duration's range */
};
/* offsetof(type, field), refused at compile time unless field is a ctype. */
#define GP_OPT_AT_(type, field, ctype) (offsetof(type, field) + 0 * sizeof(char[1 - 2 * \
	!__builtin_types_compatible_p(__typeof__(((type *)0)->field), ctype)]))
#define GP_OPT_ON(key, type, field) { (key), GP_OPT_TRUE, GP_OPT_AT_(type, field, bool), 0, 0 }
#define GP_OPT_OFF(key, type, field) { (key), GP_OPT_FALSE, GP_OPT_AT_(type, field, bool), 0, 0 }
#define GP_OPT_NS(key, type, field, min_ns, max_ns) \
	{ (key), GP_OPT_NS, GP_OPT_AT_(type, field, int64_t), (min_ns), (max_ns) }
#define GP_OPT_SECONDS(key, type, field, min_ns, max_ns) \
	{ (key), GP_OPT_SECONDS, GP_OPT_AT_(type, field, double), (min_ns), (max_ns) }
#define GP_OPT_STRING(key, type, field) \
	{ (key), GP_OPT_STRING, GP_OPT_AT_(type, field, const char *), 0, 0 }
#define GP_OPT_END { 0, 0, 0, 0, 0 }
error_t gp_set_option(struct argp_state *st, const struct gp_opt_field *table, int key,
		      const char *arg, void *opts);

/* ---- the shared groups ------------------------------------------------
 * A command's argp holds its own options, parser and docs (no children);
 * gp_parse_command parses its command line with the shared groups it
 * takes, each handed its input (the command's struct of that group), so
 * the command's parser sees only its own options.  The groups' headers
 * and numbers place them in --help.  Returns argp_parse's answer (a usage
 * error has exited 64 already). */
struct gp_group {
	const struct argp *argp;
	void *input;
	const char *header;          /* NULL: after the options before it */
	int group;
};
#define GP_GROUPS_END { NULL, NULL, NULL, 0 }
error_t gp_parse_command(const struct argp *cmd, const struct gp_group *groups,
			 int argc, char **argv, void *input);

/* The keys of the shared options (long-only, above 0x100). */
enum { GP_KEY_FORMAT = 0x1F0, GP_KEY_HOT_THRESHOLD, GP_KEY_NO_KSTACKS, GP_KEY_HANG_AFTER,
       GP_KEY_SLOW_RATE, GP_KEY_RUNTIME, GP_KEY_LIB, GP_KEY_NO_PYTHON };

/* A command's own wording of a shared option in --help, {0, NULL} ended:
 * the first member of every group's struct.  NULL: the group's wording. */
struct gp_help {
	int key;
	const char *doc;
};
/* The help filter of the groups (gpu_args.c's too). */
char *gp_group_help(int key, const char *text, void *input);

/* -o FILE, -q. */
struct gp_out_args {
	const struct gp_help *help;
	const char *path;            /* -o; NULL: none */
	bool quiet;                  /* -q: what it quiets is the command's (its help) */
};
extern const struct argp gp_out_argp;

/* --format FORMAT, from the set a command renders. */
/* GP_FMT_JSONL: report's the result itself, every thread in full. */
enum gp_format { GP_FMT_TEXT = 1, GP_FMT_JSON = 2, GP_FMT_MARKDOWN = 4, GP_FMT_JSONL = 8 };
struct gp_format_args {
	unsigned allowed;            /* GP_FMT_* mask */
	enum gp_format fmt;          /* the default, then the choice */
};
extern const struct argp gp_format_argp;

/* --hot-threshold PCT, --no-kernel-stacks: which threads are hot, and
 * whether /proc/TID/stack is read (trace, stacks). */
struct gp_stack_args {
	const struct gp_help *help;
	double hot_pct;
	bool kstacks;
	bool no_python;              /* --no-python: no CPython frames (unwind/pyframes.c) */
};
extern const struct argp gp_stack_argp;

/* --hang-after SECONDS, --slow-rate SIZE: the verdict's thresholds
 * (trace judges; report judges again). */
struct gp_judge_args {
	const struct gp_help *help;
	double hang_after;           /* 0: the default (report: the trace's own) */
	uint64_t slow_rate;          /* bytes/s; 0: relative to the trace's peak */
};
extern const struct argp gp_judge_argp;

/* -n NAME, -i SECONDS, -s SECONDS: what a sampling command (trace, watch)
 * follows by name, and its clock.  Its options carry their own groups,
 * 1 (the command's target) and 2 (sampling): the command's headers of
 * those groups head them too (place the group with header NULL, group 0). */
struct gp_sample_args {
	const struct gp_help *help;
	const char *name;            /* -n; NULL: none */
	double interval;             /* seconds between samples */
	double seconds;              /* 0: no limit */
	int64_t min_interval_ns;     /* the command's floor for -i */
};
extern const struct argp gp_sample_argp;

/* The operands (positional arguments) of a command, as a group: one PID,
 * one FILE, or FILE...; then the command's check of the whole line (which
 * operands and options go together), run once all is parsed.  So a
 * command's own parser holds its options only. */
struct gp_operand_args {
	int *pid;                    /* one PID here, */
	const char **file;           /* or one FILE here, */
	char ***files;               /* or FILE... here, how many in nfiles */
	int *nfiles;
	const char *one_only;        /* the refusal of a second PID or FILE */
	const char *none;            /* the refusal of none; NULL: the check decides */
	bool taken;                  /* the target is given already (trace's -- COMMAND) */
	void (*check)(struct argp_state *st, void *cmd); /* NULL: none; refuses by argp_error */
	void *cmd;                   /* what check is given: the command's options */
};
extern const struct argp gp_operand_argp;

/* The child of a command that takes no arguments, only options. */
extern const struct argp gp_noargs_argp;

#endif
