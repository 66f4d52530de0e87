/* gpuprobe bundle PID|--name NAME [-o FILE.tar.gz] [--seconds N]: one
 * file to attach to a bug report (bundle.h says what is in it). */
#include "config.h"
#include "bundle.h"
#include "commands.h"
#include "error.h"
#include "identity.h"
#include "opts.h"
#include "strbuf.h"

#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OPT_HANG_AFTER = 0x100, OPT_INTERVAL, OPT_WHY, OPT_WATCH_RECORD, OPT_JVM_DUMP };

struct bundle_cmd_opts {
	int pid;
	const char *name;
	double seconds, hang_after, interval;
	const char *why, *watch_record;
	bool jvm_dump;
	struct gp_out_args out;
	struct gp_operand_args operand;
};

static const struct argp_option bundle_options[] = {
	{ "name", 'n', "NAME", 0, "The process whose comm or argv[0] is NAME (exactly one)", 0 },
	{ "seconds", 's', "SECONDS", 0, "Length of the bundle's trace (default 10)", 0 },
	{ "hang-after", OPT_HANG_AFTER, "SECONDS", 0,
	  "The trace's --hang-after (default: trace's, 30)", 0 },
	{ "jvm-threaddump", OPT_JVM_DUMP, NULL, 0,
	  "Also ask a HotSpot JVM for its own thread dump and deadlock report "
	  "(jvm-threads.txt), as jstack -l does: this starts the JVM's attach listener "
	  "thread, which stays", 0 },
	/* watch's, hidden: how it makes its bundles (watch_cmd.c) */
	{ "interval", OPT_INTERVAL, "SECONDS", OPTION_HIDDEN, "The trace's --interval", 0 },
	{ "why", OPT_WHY, "TEXT", OPTION_HIDDEN, "Why the bundle was made, for the MANIFEST", 0 },
	{ "watch-record", OPT_WATCH_RECORD, "FILE", OPTION_HIDDEN,
	  "gpuprobe watch's record of the process, put in as watch.jsonl", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static const struct gp_opt_field bundle_fields[] = {
	GP_OPT_SECONDS('s', struct bundle_cmd_opts, seconds, GP_NS_S, 3600 * GP_NS_S),
	GP_OPT_SECONDS(OPT_HANG_AFTER, struct bundle_cmd_opts, hang_after, 100 * GP_NS_MS,
		       86400 * GP_NS_S),
	GP_OPT_SECONDS(OPT_INTERVAL, struct bundle_cmd_opts, interval, 50 * GP_NS_MS, 3600 * GP_NS_S),
	GP_OPT_STRING(OPT_WHY, struct bundle_cmd_opts, why),
	GP_OPT_STRING(OPT_WATCH_RECORD, struct bundle_cmd_opts, watch_record),
	GP_OPT_ON(OPT_JVM_DUMP, struct bundle_cmd_opts, jvm_dump),
	GP_OPT_END,
};

static error_t bundle_parse(int key, char *arg, struct argp_state *state)
{
	struct bundle_cmd_opts *o = state->input;
	if (key == 'n') {
		if (!*arg)
			argp_error(state, "--name needs a non-empty NAME");
		o->name = arg;
		return 0;
	}
	return gp_set_option(state, bundle_fields, key, arg, o);
}

static void bundle_check(struct argp_state *state, void *cmd)
{
	const struct bundle_cmd_opts *o = cmd;
	if (!o->pid && !o->name)
		argp_error(state, "no target: give a PID or --name NAME");
	if (o->pid && o->name)
		argp_error(state, "one target only: PID or --name NAME");
	if (o->out.path && !strcmp(o->out.path, "-"))
		argp_error(state, "-o -: a bundle is a file; give FILE.tar.gz");
}

static const struct argp bundle_argp = {
	bundle_options, bundle_parse, "PID\n--name NAME",
	"Write one .tar.gz to attach to a bug report: info.txt (versions and "
	"environment), a --seconds trace (trace.jsonl, its summary trace.txt), "
	"stacks.txt (every thread, Python frames), kmsg.txt (the kernel log's GPU "
	"driver and hang/lockup/OOM lines of the last 10 minutes), gpu.json (the GPU "
	"file descriptors, DRM fdinfo, KFD, NVML), runtime-libs.json (the GPU "
	"runtimes each process maps, with build-ids), ras.txt (NCCL/RCCL RAS), "
	"report.md and plot.svg, jvm-threads.txt with --jvm-threaddump (a HotSpot JVM's "
	"own thread dump and deadlock report), and a MANIFEST: each part, its status and the "
	"exact command that made it, and what was skipped and why.\v"
	"Each part runs in a child with a deadline (info 20 s, trace --seconds + 20 s, "
	"stacks 30 s, report 60 s, the others 10-20 s): a wedged process or driver "
	"costs a part, never the bundle.  A part gpuprobe may not read (another "
	"user's process, no root, no NVML) is named in the MANIFEST with why.  The "
	"target is never signalled and never left stopped, but with --jvm-threaddump: "
	"a JVM whose attach listener is not running is sent SIGQUIT with an attach "
	"file, as jstack does, and the MANIFEST says so.\n\n"
	"-o defaults to gpuprobe-bundle-PID-TIME.tar.gz in the current directory; "
	"the archive is written to FILE.tmp and renamed when complete.\n\n"
	"Exit status: 0 the bundle was written (parts may be missing: see its "
	"MANIFEST); 1 no such process, or FILE cannot be written or may not be (its "
	"directory another user's, or writable by others and not sticky); 64 usage error.",
	NULL, NULL, NULL,
};

static int resolve(struct bundle_cmd_opts *o)
{
	int *pids = NULL;
	int n = gp_find_by_name(o->name, &pids);
	if (n != 1) {
		if (n < 0)
			gp_err_errno(errno, o->name, "cannot list processes");
		else if (n == 0)
			gp_err(o->name, "no process of that name");
		else
			gp_err(o->name, "%d processes of that name (the first: %d): give a PID",
			       n, pids[0]);
		free(pids);
		return -1;
	}
	o->pid = pids[0];
	free(pids);
	return 0;
}

int cmd_bundle(int argc, char **argv, const struct gp_global *g)
{
	static const struct gp_help help[] = {
		{ 'o', "Write the bundle to FILE (.tar.gz)" }, { 'q', "No progress line" }, { 0, NULL },
	};
	struct bundle_cmd_opts o = { .seconds = GP_BUNDLE_SECONDS_DEFAULT,
				     .out = { .help = help, .quiet = g->quiet },
				     .operand = { .pid = &o.pid, .one_only = "one PID only",
						  .check = bundle_check, .cmd = &o } };
	const struct gp_group groups[] = {
		{ &gp_out_argp, &o.out, "Output:", 2 }, { &gp_operand_argp, &o.operand, NULL, 0 },
		GP_GROUPS_END,
	};
	if (gp_parse_command(&bundle_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	if (o.out.quiet)
		gp_quiet = true;
	if (o.name && resolve(&o) < 0)
		return GP_EXIT_ERROR;
	if (o.pid == getpid()) {
		gp_err(NULL, "pid %d is gpuprobe itself", o.pid);
		return GP_EXIT_ERROR;
	}
	if (kill(o.pid, 0) < 0 && errno == ESRCH) {
		gp_err(NULL, "pid %d: no such process", o.pid);
		return GP_EXIT_ERROR;
	}
	char def[128];
	if (!o.out.path) {
		time_t now = time(NULL);
		struct tm tm;
		char stamp[24];
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
		snprintf(def, sizeof def, "gpuprobe-bundle-%d-%s.tar.gz", o.pid, stamp);
		o.out.path = def;
	}
	struct gp_bundle_opts bo = { .pid = o.pid, .out = o.out.path, .seconds = o.seconds,
				     .hang_after = o.hang_after, .interval = o.interval, .why = o.why,
				     .watch_result = o.watch_record, .say = !gp_quiet,
				     .jvm_dump = o.jvm_dump };
	if (gp_bundle_write(&bo) < 0)
		return GP_EXIT_ERROR;
	printf("%s\n", o.out.path);
	return GP_EXIT_OK;
}
