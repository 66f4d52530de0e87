/* gpuprobe: main, the global options and the command table. */
#include "config.h"
#include "child.h"
#include "commands.h"
#include "error.h"
#include "strbuf.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct command {
	const char *name;
	int (*run)(int argc, char **argv, const struct gp_global *g);
	const char *doc;
};

static const struct command commands[] = {
	{ "trace", cmd_trace, "sample a process at 1 Hz into JSON Lines; hang or progress" },
	{ "report", cmd_report, "render saved results as a bug report: Markdown, text, JSON, plots" },
	{ "info", cmd_info, "the environment facts a maintainer asks for first" },
	{ "stacks", cmd_stacks, "one symbolized snapshot of every thread, one stopped at a time" },
	{ "lock", cmd_lock, "pin a file or anonymous memory with the GPU runtime; times, status, side effects" },
	{ "pools", cmd_pools, "the GPU runtime's agents and memory pools, with the names --pool takes" },
	{ "idle", cmd_idle, "open a GPU context, sit idle, attribute the CPU it burns; compare builds" },
	{ "demo", cmd_demo, "the whole pipeline on built-in workloads, no GPU needed" },
	{ "bundle", cmd_bundle, "one .tar.gz for a bug report: info, trace, stacks, kernel log, GPU, MANIFEST" },
	{ "watch", cmd_watch, "a node's sidecar: live verdicts, a bundle on a hang, Prometheus metrics" },
	/* hidden (no doc): the demo's workloads run as `gpuprobe __workload NAME` */
	{ "__workload", cmd_workload, NULL },
	/* hidden: the runtime side of gpuprobe idle */
	{ "__idle-child", cmd_idle_child, NULL },
	/* hidden: unwinds a stuck lock/pools call from outside (lockprobe/unwind.h) */
	{ "__unwind", cmd_unwind, NULL },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const char *argp_program_version = PACKAGE_NAME " " PACKAGE_VERSION;
const char *argp_program_bug_address = NULL;

static const struct argp_option global_options[] = {
	{ "quiet", 'q', NULL, 0, "Print only errors and the final summary", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

struct global_args {
	struct gp_global g;
	int cmd_index; /* index in argv of the command name */
};

static error_t global_parse(int key, char *arg, struct argp_state *state)
{
	struct global_args *a = state->input;
	switch (key) {
	case 'q':
		a->g.quiet = true;
		break;
	case ARGP_KEY_ARG:
		/* The first non-option is the command: stop here and leave the
		 * rest to the command's own parser. */
		a->cmd_index = state->next - 1;
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (a->cmd_index < 0)
			argp_error(state, "a COMMAND is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *global_help_filter(int key, const char *text, void *input)
{
	if (key != ARGP_KEY_HELP_POST_DOC)
		return (char *)text;
	/* The command list, built from the table so it cannot go stale. */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].doc)
			strbuf_addf(&sb, "  %-10s %s\n", commands[i].name, commands[i].doc);
	strbuf_addf(&sb, "\n%s", text ? text : "");
	return strbuf_detach(&sb, NULL); /* argp frees it */
}

static const struct argp global_argp = {
	global_options, global_parse, "COMMAND [ARGS...]",
	"Turn \"the GPU runtime is doing something wrong\" into evidence.\v"
	"Run 'gpuprobe COMMAND --help' for a command's options.\n\n"
	"Exit status: 0 ok; 1 runtime error (target, file, runtime); "
	"3 the verdict matched --fail-on; 64 usage error.",
	NULL, global_help_filter, NULL,
};

/* git's run_builtin(): a command that "succeeded" but whose output could
 * not be written has failed. */
static int finish_stdout(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		gp_err_errno(errno, "stdout", "write failed");
		return rc ? rc : GP_EXIT_ERROR;
	}
	return rc;
}

int main(int argc, char **argv)
{
	argp_err_exit_status = GP_EXIT_USAGE;
	struct global_args a = { .g = { .argv0 = argv[0], .argc = argc, .argv = argv },
				 .cmd_index = -1 };
	/* getopt names the program after argv[0] ("/usr/bin/gpuprobe:
	 * unrecognized option"): parse a copy named "gpuprobe", so every
	 * message speaks with one voice. */
	char **gargv = calloc((size_t)argc + 1, sizeof *gargv);
	if (!gargv) {
		gp_err(NULL, "out of memory");
		return GP_EXIT_ERROR;
	}
	memcpy(gargv, argv, (size_t)argc * sizeof *gargv);
	gargv[0] = (char *)"gpuprobe";
	if (argp_parse(&global_argp, argc, gargv, ARGP_IN_ORDER, NULL, &a))
		return GP_EXIT_USAGE;
	free(gargv);
	gp_quiet = a.g.quiet;
	const char *name = argv[a.cmd_index];
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(commands[i].name, name) == 0) {
			gp_process_setup();
			/* argp names the program after argv[0]: "gpuprobe trace". */
			char prog[64];
			snprintf(prog, sizeof prog, "gpuprobe %s", name);
			/* The command's argv is a copy: a.g.argv stays the real
			 * command line, for result headers. */
			char **cargv = calloc((size_t)(argc - a.cmd_index + 1), sizeof *cargv);
			if (!cargv) {
				gp_err(NULL, "out of memory");
				return GP_EXIT_ERROR;
			}
			memcpy(cargv, argv + a.cmd_index, (size_t)(argc - a.cmd_index) * sizeof *cargv);
			cargv[0] = prog;
			int rc = commands[i].run(argc - a.cmd_index, cargv, &a.g);
			free(cargv);
			return finish_stdout(rc);
		}
	}
	gp_err(NULL, "'%s' is not a command", name);
	gp_hint("run 'gpuprobe --help' for the list of commands");
	return GP_EXIT_USAGE;
}
