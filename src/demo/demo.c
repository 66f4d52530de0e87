/* gpuprobe demo: the whole pipeline on built-in workloads, on any
 * machine, no GPU needed.  Each workload runs as `gpuprobe __workload
 * NAME` under a real `gpuprobe trace` (the same code a user runs), and
 * the saved result is judged and printed as `gpuprobe report` would. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "opts.h"
#include "parse.h"
#include "timeutil.h"
#include "load.h"
#include "verdict.h"
#include "verdict_text.h"
#include "workloads.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { OPT_HANG_AFTER = 0x100, OPT_KEEP, OPT_ONLY };

struct demo_opts {
	int64_t seconds_ns;    /* 0: each workload's own */
	int64_t hang_after_ns;
	int64_t interval_ns;
	const char *keep;
	const char *only;
	struct gp_format_args fmt;
};

static const struct argp_option demo_options[] = {
	{ "seconds", 's', "SECONDS", 0, "Trace each workload this long (default: 5-11 s each)", 0 },
	{ "hang-after", OPT_HANG_AFTER, "SECONDS", 0, "The --hang-after of each trace (default 3)", 0 },
	{ "interval", 'i', "SECONDS", 0, "Sampling interval (default 0.25)", 0 },
	{ "only", OPT_ONLY, "NAME[,NAME]", 0, "Run only these workloads", 0 },
	{ "keep", OPT_KEEP, "DIR", 0, "Keep the result files in DIR (created if missing)", 0 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* The options demo only stores (gp_set_option). */
static const struct gp_opt_field demo_fields[] = {
	GP_OPT_NS('s', struct demo_opts, seconds_ns, GP_NS_S, 3600 * GP_NS_S),
	GP_OPT_NS('i', struct demo_opts, interval_ns, 50 * GP_NS_MS, 10 * GP_NS_S),
	GP_OPT_NS(OPT_HANG_AFTER, struct demo_opts, hang_after_ns, 1, 3600 * GP_NS_S),
	GP_OPT_STRING(OPT_KEEP, struct demo_opts, keep),
	GP_OPT_END,
};

static error_t demo_parse(int key, char *arg, struct argp_state *state)
{
	struct demo_opts *o = state->input;
	switch (key) {
	case OPT_ONLY: {
		char *copy = strdup(arg), *save = NULL;
		int n = 0;
		for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save), n++)
			if (!gp_workload_find(c))
				/* argp_error exits: c (in copy) is still alive here. */
				argp_error(state, "--only: no workload '%s'", c);
		free(copy);
		if (n == 0)
			argp_error(state, "--only needs at least one workload NAME");
		o->only = arg;
		break;
	}
	default:
		return gp_set_option(state, demo_fields, key, arg, o);
	}
	return 0;
}

static const struct argp demo_argp = {
	demo_options, demo_parse, NULL,
	"Run gpuprobe's whole pipeline on built-in workloads — a busy-polling "
	"spinner, a deadlock, a restart loop in the kernel, a slow loader, a load "
	"that deadlocks, a bursty writer, a command that exits 3 — and print the "
	"verdict of each.  No GPU needed.\v"
	"Exit status: 0 the demo ran (see the table for each verdict); 1 a trace "
	"could not be run; 64 usage error.",
	NULL, NULL, NULL,
};

static int64_t default_seconds(const char *name)
{
	if (!strcmp(name, "slow-loader"))
		return 11 * GP_NS_S; /* 5 s of crawl after the file is written and paged in */
	if (!strcmp(name, "kernel-loop"))
		return 8 * GP_NS_S;
	if (!strcmp(name, "load-then-deadlock"))
		return 7 * GP_NS_S;
	if (!strcmp(name, "exit3"))
		return 10 * GP_NS_S; /* it ends by itself after 2 s */
	return 5 * GP_NS_S;
}

static bool selected(const struct demo_opts *o, const char *name)
{
	if (!o->only)
		return true;
	size_t n = strlen(name);
	for (const char *p = o->only; (p = strstr(p, name)); p += n)
		if ((p == o->only || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

/* Reaps pid within timeout_ns: 1 reaped (*st), 0 not yet, -1 error. */
static int wait_for(pid_t pid, int *st, int64_t timeout_ns)
{
	int64_t end = gp_ns_add(gp_mono_ns(), timeout_ns);
	for (;;) {
		pid_t w = waitpid(pid, st, WNOHANG);
		if (w == pid)
			return 1;
		if (w < 0 && errno != EINTR)
			return -1;
		if (gp_mono_ns() >= end)
			return 0;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* gpuprobe trace -q -o FILE ... -- gpuprobe __workload NAME */
static int run_trace(const char *self, const char *name, const char *file,
		     const struct demo_opts *o, int64_t seconds_ns)
{
	char secs[32], ival[32], hang[32];
	gp_fmt_ns_seconds(secs, sizeof secs, seconds_ns);
	gp_fmt_ns_seconds(ival, sizeof ival, o->interval_ns);
	gp_fmt_ns_seconds(hang, sizeof hang, o->hang_after_ns);
	char *argv[] = { "gpuprobe", "trace", "-q", "--seconds", secs, "--interval", ival,
			 "--hang-after", hang, "--kill-after", "1", "-o", (char *)file, "--",
			 (char *)self, "__workload", (char *)name, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	pid_t pid;
	int e = posix_spawn(&pid, self, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e) {
		gp_err_errno(e, self, "cannot run gpuprobe trace");
		return -1;
	}
	/* The trace ends itself after --seconds (and --kill-after 1): a minute
	 * more is a hung trace, killed and said, not a hung demo. */
	int st;
	int r = wait_for(pid, &st, gp_ns_add(seconds_ns, 60 * GP_NS_S));
	if (r == 0) {
		kill(pid, SIGKILL);
		r = wait_for(pid, &st, 5 * GP_NS_S);
		gp_err(name, "gpuprobe trace did not end a minute after its --seconds: killed%s",
		       r == 1 ? "" : " (and not reaped within 5 s)");
		return -1;
	}
	if (r < 0) {
		gp_err_errno(errno, name, "cannot wait for gpuprobe trace");
		return -1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		gp_err(name, "gpuprobe trace failed (status 0x%x)", st);
		return -1;
	}
	return 0;
}

static int judge_file(const char *file, const struct demo_opts *o, struct gp_verdict *v)
{
	struct gp_loaded l;
	char err[256];
	if (gp_load_result(file, &l, err, sizeof err) < 0) {
		gp_err(file, "%s", err);
		return -1;
	}
	struct gp_verdict_opts vo = { .hang_after = (double)o->hang_after_ns / 1e9 };
	gp_loaded_verdict_opts(&l, &vo);
	gp_verdict_compute(l.series.pt, l.series.n, &vo, v);
	gp_loaded_free(&l);
	return 0;
}

int cmd_demo(int argc, char **argv, const struct gp_global *g)
{
	struct demo_opts o = { .hang_after_ns = 3 * GP_NS_S, .interval_ns = 250 * GP_NS_MS,
			       .fmt = { GP_FMT_TEXT | GP_FMT_JSON, GP_FMT_TEXT } };
	const struct gp_group groups[] = {
		{ &gp_format_argp, &o.fmt, NULL, 0 }, { &gp_noargs_argp, NULL, NULL, 0 }, GP_GROUPS_END,
	};
	if (gp_parse_command(&demo_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		gp_err_errno(errno, "/proc/self/exe", "cannot find the gpuprobe binary");
		return GP_EXIT_ERROR;
	}
	self[n] = '\0';
	char dir[4096];
	if (o.keep) {
		struct stat kst;
		if (mkdir(o.keep, 0755) < 0 && errno != EEXIST) {
			gp_err_errno(errno, o.keep, "cannot create the directory");
			return GP_EXIT_ERROR;
		}
		/* EEXIST may be a file: say so once, here, rather than once
		 * per workload from each child trace. */
		int kerr = stat(o.keep, &kst) < 0 ? errno : !S_ISDIR(kst.st_mode) ? ENOTDIR : 0;
		if (kerr) {
			gp_err_errno(kerr, o.keep, "--keep needs a directory");
			return GP_EXIT_ERROR;
		}
		gp_strlcpy(dir, o.keep, sizeof dir);
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/gpuprobe-demo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			gp_err_errno(errno, dir, "cannot create a scratch directory");
			return GP_EXIT_ERROR;
		}
	}
	bool tty = isatty(STDERR_FILENO) && !g->quiet;
	json_t *results = json_array();
	struct gp_verdict *v = malloc(sizeof *v);
	struct row {
		const char *name, *expect;
		char got[24];
		double since;
		bool ok;
	} rows[16];
	unsigned nrows = 0, total = 0, done = 0;
	int rc = GP_EXIT_OK;
	for (unsigned i = 0; i < gp_nworkloads; i++)
		total += selected(&o, gp_workloads[i].name);
	for (unsigned i = 0; v && i < gp_nworkloads && nrows < 16; i++) {
		const struct gp_workload *w = &gp_workloads[i];
		if (!selected(&o, w->name))
			continue;
		int64_t secs = o.seconds_ns > 0 ? o.seconds_ns : default_seconds(w->name);
		if (tty)
			fprintf(stderr, "gpuprobe demo: [%u/%u] %s: tracing up to %.0f s...\n",
				++done, total, w->name, (double)secs / 1e9);
		char file[4200];
		snprintf(file, sizeof file, "%s/%s.jsonl", dir, w->name);
		if (run_trace(self, w->name, file, &o, secs) < 0 || judge_file(file, &o, v) < 0) {
			rc = GP_EXIT_ERROR;
			continue;
		}
		struct row *r = &rows[nrows++];
		r->name = w->name;
		r->expect = w->expect;
		gp_strlcpy(r->got, gp_class_name(v->cls), sizeof r->got);
		r->since = v->since_s;
		r->ok = !strcmp(gp_class_name(v->cls), w->expect);
		if (o.fmt.fmt == GP_FMT_JSON) {
			json_t *e = json_pack("{s:s, s:s, s:s, s:b, s:o}", "workload", w->name,
					      "shape", w->shape, "expected", w->expect, "match", r->ok,
					      "verdict", gp_verdict_json(v));
			if (o.keep)
				json_object_set_new(e, "result", json_string(file));
			json_array_append_new(results, e);
		} else {
			printf("== %s: %s\n", w->name, w->shape);
			gp_verdict_print(stdout, v);
			printf("\n");
		}
		if (!o.keep)
			unlink(file);
	}
	free(v);
	if (!o.keep)
		rmdir(dir);
	if (o.fmt.fmt == GP_FMT_JSON) {
		json_t *doc = json_pack("{s:s, s:f, s:o}", "gpuprobe", PACKAGE_VERSION,
					"hang_after_s", (double)o.hang_after_ns / 1e9, "workloads", results);
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		putchar('\n');
		json_decref(doc);
	} else {
		json_decref(results);
		printf("%-20s %-17s %-17s %8s  %s\n", "workload", "expected", "verdict", "since", "");
		for (unsigned i = 0; i < nrows; i++)
			printf("%-20s %-17s %-17s %+7.1fs  %s\n", rows[i].name, rows[i].expect,
			       rows[i].got, rows[i].since, rows[i].ok ? "ok" : "MISMATCH");
		if (o.keep)
			printf("\nresults kept in %s (gpuprobe report %s/*.jsonl)\n", dir, dir);
	}
	return rc;
}

/* Hidden: the child side of the demo. */
int cmd_workload(int argc, char **argv, const struct gp_global *g)
{
	if (argc != 2 || !gp_workload_find(argv[1])) {
		gp_err("__workload", "give one of the demo's workload names");
		return GP_EXIT_USAGE;
	}
	/* Named after the workload (comm holds 15 bytes), not "gpuprobe". */
	prctl(PR_SET_NAME, argv[1]);
	return gp_workload_find(argv[1])->run();
}
