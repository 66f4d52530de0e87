/* gpuprobe stacks: one symbolized snapshot of a process's threads, user
 * frames through libdwfl (one thread stopped at a time), kernel frames
 * from /proc; grouped, hot threads first. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "hostinfo.h"
#include "identity.h"
#include "opts.h"
#include "parse.h"
#include "procfs.h"
#include "procstat.h"
#include "result.h"
#include "stacks_text.h"
#include "stacks_hint.h"
#include "strbuf.h"
#include "target_text.h"
#include "sysinfo.h"
#include "timeutil.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_DEBUGINFOD = 0x100,
	OPT_HOT_WINDOW,
	OPT_TID,
	OPT_REPEAT,
	OPT_LINES_ALL,
};
#define OPT_HOT 'H'

struct stacks_opts {
	int pid;
	int *tids;
	size_t ntids;
	bool hot, debuginfod, lines_all;
	double window;
	unsigned long repeat;
	struct gp_stack_args st;     /* --hot-threshold, --no-kernel-stacks */
	struct gp_out_args out;
	struct gp_format_args fmt;
	struct gp_operand_args operand;
};

static const struct argp_option stacks_options[] = {
	{ NULL, 0, NULL, 0, "Threads:", 1 },
	{ "tid", OPT_TID, "TID", 0, "Only this thread (repeat for more)", 1 },
	{ "hot", OPT_HOT, NULL, 0, "Stop and unwind only the hot threads; list the others "
	  "with their /proc data", 1 },
	{ "hot-window", OPT_HOT_WINDOW, "SECONDS", 0, "Measure CPU% over at least this long, "
	  "while the libraries load (default 0.01; 0: no measurement)", 1 },
	{ NULL, 0, NULL, 0, "Symbols:", 2 },
	{ "debuginfod", OPT_DEBUGINFOD, NULL, 0, "Let libdwfl fetch missing debug info from "
	  "DEBUGINFOD_URLS (off by default: no network)", 2 },
	{ "all-lines", OPT_LINES_ALL, NULL, 0, "Source lines for the C runtime's frames too (libc, "
	  "ld.so, libstdc++, and CPython's own C frames; slower: ~150 ms to open libc's debug "
	  "info, ~200 ms for python3.11's)", 2 },
	{ "repeat", OPT_REPEAT, "N", OPTION_HIDDEN, "Take N more snapshots in the same session "
	  "and print their cost on stderr (benchmark)", 3 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* The options stacks only stores (gp_set_option). */
static const struct gp_opt_field stacks_fields[] = {
	GP_OPT_ON(OPT_HOT, struct stacks_opts, hot),
	GP_OPT_SECONDS(OPT_HOT_WINDOW, struct stacks_opts, window, 0, 10 * GP_NS_S),
	GP_OPT_ON(OPT_DEBUGINFOD, struct stacks_opts, debuginfod),
	GP_OPT_ON(OPT_LINES_ALL, struct stacks_opts, lines_all),
	GP_OPT_END,
};

static error_t stacks_parse(int key, char *arg, struct argp_state *state)
{
	struct stacks_opts *o = state->input;
	switch (key) {
	case OPT_TID: {
		int tid = gp_arg_pid(state, key, arg);
		int *v = realloc(o->tids, (o->ntids + 1) * sizeof *v);
		if (!v)
			argp_failure(state, GP_EXIT_ERROR, ENOMEM, "--tid");
		o->tids = v;
		o->tids[o->ntids++] = tid;
		break;
	}
	case OPT_REPEAT:
		o->repeat = (unsigned long)gp_arg_count(state, key, arg, 0, 100000);
		break;
	default:
		return gp_set_option(state, stacks_fields, key, arg, o);
	}
	return 0;
}

static void stacks_check(struct argp_state *state, void *cmd)
{
	const struct stacks_opts *o = cmd;
	if (o->hot && o->window <= 0)
		argp_error(state, "--hot needs a CPU measurement: --hot-window must be over 0");
}

static const struct argp stacks_argp = {
	stacks_options, stacks_parse, "PID",
	"One symbolized snapshot of every thread of PID: user frames through libdw "
	"(module, offset, build-id, demangled symbol, source line), kernel frames, "
	"wait channel and syscall from /proc.  Identical stacks are grouped, hot "
	"threads first.\v"
	"Threads are stopped one at a time (PTRACE_SEIZE + PTRACE_INTERRUPT, "
	"detached at once, about 0.1 ms each); a thread in D state is never "
	"stopped; gpuprobe killed at any moment leaves no thread stopped.  A "
	"frame in a stripped library shows its module, offset and build-id "
	"(eu-addr2line -e LIB OFFSET names it from an unstripped copy), never a "
	"guessed symbol.  Without permission to ptrace (another user's process, "
	"Yama ptrace_scope) the /proc data is still shown, with a hint.\n\n"
	"Exit status: 0 a snapshot was taken (whatever could be seen); 1 runtime "
	"error (no such process or thread, cannot write FILE); 64 usage error.",
	NULL, NULL, NULL,
};

/* CPU time of each thread, in ns, from /proc/PID/task/TID/schedstat. */
static void read_run_ns(const struct gp_root *root, int pid, const int *tids, size_t n,
			uint64_t *run, bool *have)
{
	for (size_t i = 0; i < n; i++) {
		char path[96], buf[128];
		uint64_t w, c;
		snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", pid, tids[i]);
		have[i] = gp_read_file(root, path, buf, sizeof buf) >= 0 &&
			  gp_parse_schedstat(buf, &run[i], &w, &c);
	}
}

static void set_cpu(json_t *line, const int *tids, const double *cpu, const bool *have, size_t n)
{
	json_t *threads = json_object_get(line, "threads");
	size_t i;
	json_t *t;
	json_array_foreach(threads, i, t) {
		int tid = (int)json_integer_value(json_object_get(t, "tid"));
		for (size_t j = 0; j < n; j++)
			if (tids[j] == tid && have[j]) {
				json_object_set_new(t, "cpu_pct", json_real(cpu[j]));
				break;
			}
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* --repeat N: the cost of snapshots inside one kept session, as trace
 * would take them (benchmark). */
static void repeat_bench(struct gp_stacks *s, const int *tids, size_t n, unsigned long rounds)
{
	double *ms = calloc(rounds, sizeof *ms);
	if (!ms)
		return;
	double sum = 0;
	unsigned long done = 0;
	for (unsigned long i = 0; i < rounds; i++) {
		json_t *line;
		double t0 = gp_mono_now();
		if (gp_stacks_snapshot(s, 0, tids, n, &line) < 0)
			break;
		ms[i] = (gp_mono_now() - t0) * 1e3;
		sum += ms[i];
		done++;
		json_decref(line);
	}
	struct gp_stacks_totals tot;
	gp_stacks_totals(s, &tot);
	if (done) {
		qsort(ms, done, sizeof *ms, cmp_dbl);
		fprintf(stderr, "repeat: %lu snapshots: mean %.2f ms, median %.2f ms, min %.2f ms, "
			"max %.2f ms; stops %lu, mean %.1f us, max %.1f us, at most %u stopped at once\n",
			done, sum / (double)done, ms[done / 2], ms[0], ms[done - 1], tot.stopped,
			tot.stopped ? tot.stop_us_sum / (double)tot.stopped : 0.0, tot.stop_us_max,
			tot.max_stopped_at_once);
	}
	free(ms);
}

/* The target must be a live process other than gpuprobe, and each --tid
 * one of its threads.  -1, said, when not. */
static int check_target(const struct gp_root *root, const struct stacks_opts *o)
{
	char path[96], buf[1024];
	if (o->pid == getpid()) {
		gp_err(NULL, "pid %d is gpuprobe itself", o->pid);
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/stat", o->pid);
	struct gp_stat pst;
	if (gp_read_file(root, path, buf, sizeof buf) < 0 || !gp_parse_stat(buf, &pst) ||
	    pst.pid != o->pid) {
		gp_err(NULL, "pid %d: no such process", o->pid);
		return -1;
	}
	/* /proc/TID/stat also answers for a thread id: a TID given as the
	 * PID is a mistake worth naming. */
	snprintf(path, sizeof path, "/proc/%d/status", o->pid);
	if (gp_read_file(root, path, buf, sizeof buf) >= 0) {
		const char *tg = strstr(buf, "\nTgid:");
		int tgid = tg ? atoi(tg + 6) : o->pid;
		if (tgid != o->pid) {
			gp_err(NULL, "%d is a thread of pid %d, not a process", o->pid, tgid);
			gp_hint("run 'gpuprobe stacks %d --tid %d'", tgid, o->pid);
			return -1;
		}
	}
	for (size_t i = 0; i < o->ntids; i++) {
		snprintf(path, sizeof path, "/proc/%d/task/%d/stat", o->pid, o->tids[i]);
		if (gp_read_file(root, path, buf, sizeof buf) < 0) {
			gp_err(NULL, "tid %d is not a thread of pid %d", o->tids[i], o->pid);
			return -1;
		}
	}
	return 0;
}

/* cpu[i], have[i]: the CPU% of tids[i] over `window` seconds (none when
 * 0), measured while gp_stacks_prepare() loads the libraries, so hot
 * threads cost the snapshot little or no extra time.  -1, said, when the
 * process is gone or memory is short. */
static int measure_cpu(const struct gp_root *root, struct gp_stacks *s, int pid, double window,
		       const int *tids, size_t n, double *cpu, bool *have)
{
	uint64_t *run0 = calloc(n, sizeof *run0), *run1 = calloc(n, sizeof *run1);
	bool *have0 = calloc(n, sizeof *have0);
	int rc = -1;
	if (n && (!run0 || !run1 || !have0)) {
		gp_err(NULL, "out of memory");
		goto out;
	}
	double w0 = gp_mono_now();
	if (window > 0)
		read_run_ns(root, pid, tids, n, run0, have0);
	if (gp_stacks_prepare(s) < 0) {
		gp_err(NULL, "pid %d: no such process", pid);
		goto out;
	}
	if (window > 0) {
		double left = window - (gp_mono_now() - w0);
		if (left > 0) {
			struct timespec ts = gp_ts_from_s(left);
			nanosleep(&ts, NULL);
		}
		read_run_ns(root, pid, tids, n, run1, have);
		double el = (gp_mono_now() - w0) * 1e9;
		for (size_t i = 0; i < n; i++) {
			have[i] = have0[i] && have[i];
			cpu[i] = have[i] && run1[i] >= run0[i] ? 100.0 * (double)(run1[i] - run0[i]) / el : 0;
			/* One thread runs on one CPU at a time: over 100% is the
			 * window's own error (its ends are read a few us apart
			 * from the thread's accounting), not more work. */
			if (cpu[i] > 100.0)
				cpu[i] = 100.0;
		}
	}
	rc = 0;
out:
	free(run0);
	free(run1);
	free(have0);
	return rc;
}

/* Hot first, then by tid (stable for the reader). */
static void sort_hot_first(int *tids, double *cpu, bool *have, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cpu[j] > cpu[j - 1]; j--) {
			double c = cpu[j]; cpu[j] = cpu[j - 1]; cpu[j - 1] = c;
			int t = tids[j]; tids[j] = tids[j - 1]; tids[j - 1] = t;
			bool h = have[j]; have[j] = have[j - 1]; have[j - 1] = h;
		}
}

/* The snapshot of tids[0..n): the first nstack stopped and unwound, the
 * others (not hot, under --hot) from their /proc data only, with no ptrace
 * at all; each thread with its CPU% when one was measured.  NULL, said,
 * when the process is gone. */
static json_t *snapshot(struct gp_stacks *s, const struct stacks_opts *o, unsigned flags,
			const int *tids, size_t n, size_t nstack, const double *cpu, const bool *have)
{
	json_t *line = NULL;
	if (gp_stacks_snapshot(s, 0, tids, nstack, &line) < 0) {
		gp_err(NULL, "pid %d: no such process", o->pid);
		return NULL;
	}
	if (o->window > 0)
		set_cpu(line, tids, cpu, have, n);
	if (nstack < n) {
		struct gp_stacks *p = gp_stacks_open(o->pid, flags | GP_STACKS_NO_PTRACE);
		json_t *rest = NULL;
		if (p && gp_stacks_snapshot(p, 0, tids + nstack, n - nstack, &rest) == 0) {
			set_cpu(rest, tids, cpu, have, n);
			json_array_extend(json_object_get(line, "threads"), json_object_get(rest, "threads"));
		}
		json_decref(rest);
		gp_stacks_close(p);
	}
	if (o->window > 0)
		json_object_set_new(line, "cpu_window_s", json_real(o->window));
	return line;
}

/* The target line (pid and identity); its comm into comm ("" when unknown). */
static json_t *target_line(const struct gp_root *root, int pid, char *comm, size_t cap)
{
	json_t *target = json_pack("{s:s, s:i}", "type", "target", "pid", pid);
	json_t *ident = gp_target_identity(root, pid);
	if (ident)
		json_object_update(target, ident);
	json_decref(ident);
	json_t *jc = json_object_get(target, "comm");
	snprintf(comm, cap, "%s", json_is_string(jc) ? json_string_value(jc) : "");
	return target;
}

/* The result file: header, target and stacks lines.  -1, said, when it
 * could not be written. */
static int write_result(struct gp_result *out, const char *path, const struct gp_global *g,
			const struct gp_root *root, json_t *target, json_t *line)
{
	struct gp_host_info_opts hio = { .process = true };
	if (gp_result_write(out, gp_result_header("stacks", g->argc, g->argv,
						  gp_host_info_ex(root, &hio))) < 0 ||
	    gp_result_write(out, json_incref(target)) < 0 ||
	    gp_result_write(out, json_incref(line)) < 0) {
		gp_err_errno(errno, path, "cannot write the result");
		return -1;
	}
	return 0;
}

/* The snapshot on stdout, as --format says. */
static void print_snapshot(const json_t *line, const struct stacks_opts *o, const char *comm,
			   const json_t *target)
{
	if (o->fmt.fmt == GP_FMT_JSON) {
		char *txt = json_dumps(line, JSON_COMPACT);
		if (txt)
			printf("%s\n", txt);
		free(txt);
		return;
	}
	struct gp_stacks_render_opts ro = {
		.format = o->fmt.fmt == GP_FMT_MARKDOWN ? GP_STACKS_MARKDOWN : GP_STACKS_TEXT,
		.hot_pct = o->st.hot_pct, .window_s = o->window, .comm = comm[0] ? comm : NULL,
	};
	/* A process in a container: its own pid, its container (issue 28). */
	struct strbuf where = STRBUF_INIT;
	if (gp_target_where(&where, target))
		ro.where = where.buf;
	gp_render_stacks(stdout, line, &ro);
	strbuf_release(&where);
}

int cmd_stacks(int argc, char **argv, const struct gp_global *g)
{
	/* 10 ms is enough: schedstat gives run time in ns, and the window
	 * also spans libdwfl's loading of the modules (about 10 ms for 40
	 * threads on the H200 machine).  0.1 s made a one-shot five times
	 * slower than eu-stack there (112 ms against 22 ms). */
	static const struct gp_help help[] = {
		{ 'o', "Save header, target and stacks lines as JSON Lines to FILE ('-': stdout)" },
		{ 'q', "No hints" }, { 0, NULL },
	};
	struct stacks_opts o = { .window = 0.01, .st = { .hot_pct = 50, .kstacks = true },
				 .out = { .help = help, .quiet = g->quiet },
				 .fmt = { GP_FMT_TEXT | GP_FMT_JSON | GP_FMT_MARKDOWN, GP_FMT_TEXT },
				 .operand = { .pid = &o.pid, .one_only = "one PID only",
					      .none = "no target: give a PID", .check = stacks_check,
					      .cmd = &o } };
	const struct gp_group groups[] = {
		{ &gp_stack_argp, &o.st, NULL, 1 }, { &gp_out_argp, &o.out, "Output:", 3 },
		{ &gp_format_argp, &o.fmt, NULL, 4 }, { &gp_operand_argp, &o.operand, NULL, 0 },
		GP_GROUPS_END,
	};
	if (gp_parse_command(&stacks_argp, groups, argc, argv, &o)) {
		free(o.tids);
		return GP_EXIT_USAGE;
	}
	if (o.out.quiet)
		gp_quiet = true;
	int rc = GP_EXIT_ERROR;
	struct gp_root root;
	int *tids = NULL;
	size_t n = 0;
	bool *have = NULL;
	double *cpu = NULL;
	struct gp_stacks *s = NULL;
	struct gp_result *out = NULL;
	json_t *line = NULL;
	if (gp_root_open(&root, "/") < 0) {
		gp_err_errno(errno, "/", "cannot open");
		free(o.tids);
		return GP_EXIT_ERROR;
	}
	if (check_target(&root, &o) < 0)
		goto out;
	if (o.ntids) {
		tids = o.tids;
		n = o.ntids;
		o.tids = NULL;
	} else if (gp_list_tids(o.pid, &tids, &n) < 0) {
		gp_err(NULL, "pid %d: no such process", o.pid);
		goto out;
	}

	unsigned flags = (o.debuginfod ? GP_STACKS_DEBUGINFOD : 0) |
			 (o.st.kstacks ? 0 : GP_STACKS_NO_KERNEL) |
			 (o.lines_all ? GP_STACKS_LINES_ALL : 0) |
			 (o.st.no_python ? GP_STACKS_NO_PYTHON : 0);
	s = gp_stacks_open(o.pid, flags);
	if (!s) {
		if (errno == ESRCH || errno == ENOENT)
			gp_err(NULL, "pid %d: no such process", o.pid);
		else
			gp_err_errno(errno, NULL, "pid %d", o.pid);
		goto out;
	}
	if (o.out.path) {
		out = !strcmp(o.out.path, "-") ? gp_result_stdout("-") : gp_result_create(o.out.path);
		if (!out) {
			gp_result_create_failed(o.out.path, errno);
			goto out;
		}
	}

	have = calloc(n, sizeof *have);
	cpu = calloc(n, sizeof *cpu);
	if (n && (!have || !cpu)) {
		gp_err(NULL, "out of memory");
		goto out;
	}
	if (measure_cpu(&root, s, o.pid, o.window, tids, n, cpu, have) < 0)
		goto out;
	sort_hot_first(tids, cpu, have, n);
	size_t nstack = n;
	if (o.hot) {
		nstack = 0;
		while (nstack < n && have[nstack] && cpu[nstack] >= o.st.hot_pct)
			nstack++;
	}
	line = snapshot(s, &o, flags, tids, n, nstack, cpu, have);
	if (!line)
		goto out;

	char comm[64];
	json_t *target = target_line(&root, o.pid, comm, sizeof comm);
	int wrc = out ? write_result(out, o.out.path, g, &root, target, line) : 0;
	if (wrc == 0 && !(o.out.path && !strcmp(o.out.path, "-")))
		print_snapshot(line, &o, comm, target);
	json_decref(target);
	if (wrc < 0)
		goto out;
	const char *hint = gp_stacks_hint(s);
	if (hint)
		gp_hint("%s", hint);
	if (o.repeat)
		repeat_bench(s, tids, nstack, o.repeat);
	rc = GP_EXIT_OK;
out:
	if (out && gp_result_close(out) < 0 && rc == GP_EXIT_OK) {
		gp_err_errno(errno, o.out.path, "cannot write the result");
		rc = GP_EXIT_ERROR;
	}
	json_decref(line);
	gp_stacks_close(s);
	free(have);
	free(cpu);
	free(tids);
	free(o.tids);
	gp_root_close(&root);
	return rc;
}
