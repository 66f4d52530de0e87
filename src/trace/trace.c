/* gpuprobe trace: sample a process until it exits, --seconds pass, or a
 * signal; stream JSON Lines; print a live line and a summary.  The loop
 * and the tree's sampling are watch's too (loop/ticker.h,
 * loop/sampling.h); this file holds the options, the set-up and the
 * tick; the rest of the run is in the files run.h names. */
#include "config.h"
#include "run.h"
#include "commands.h"
#include "error.h"
#include "hostinfo.h"
#include "identity.h"
#include "parse.h"
#include "procfs.h"
#include "procstat.h"
#include "trace_text.h"
#include "tree.h"
#include "verdict.h"
#include "timeutil.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_PROC_ROOT = 0x100,
	OPT_NO_NVML,
	OPT_REOPEN,
	OPT_KILL_AFTER,
	OPT_FAIL_ON,
	OPT_FLAT_BEFORE,
	OPT_STACKS,
	OPT_NO_CHILDREN,
	OPT_RAS_PORT,
};

static const char *const stacks_modes[] = { "hot", "all", "none", NULL };

static const struct argp_option trace_options[] = {
	{ NULL, 0, NULL, 0, "Target:", 1 },
	{ "no-children", OPT_NO_CHILDREN, NULL, 0,
	  "Follow the target alone, not its descendants (they are followed by default)", 1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "stacks", OPT_STACKS, "MODE", 0,
	  "User stacks: hot (threads over --hot-threshold, every tick; the default), "
	  "all (hot ones, and every other thread once per place it waits in), "
	  "none (never ptrace)", 2 },
	{ "no-nvml", OPT_NO_NVML, NULL, 0, "Do not load libnvidia-ml.so.1", 2 },
	{ "ras-port", OPT_RAS_PORT, "PORT", 0,
	  "Ask NCCL's RAS service on 127.0.0.1:PORT for the ranks' collective counts, "
	  "2 s in, every 5 s, at a hang and at the end (default: the target's "
	  "NCCL_RAS_ADDR port, else 28028, NCCL's; asked once a "
	  "process maps libnccl or librccl; given: always; 0: never)", 2 },
	{ "proc-root", OPT_PROC_ROOT, "DIR", 0, "Read /proc and /sys under DIR (replay a captured tree)", 2 },
	{ "reopen-files", OPT_REOPEN, NULL, OPTION_HIDDEN, "Re-open every file each sample (benchmark baseline)", 2 },
	{ NULL, 0, NULL, 0, "Verdict:", 3 },
	{ "fail-on", OPT_FAIL_ON, "CLASS[,CLASS]", 0,
	  "Exit 3 when the verdict is one of these classes", 3 },
	{ "flat-before", OPT_FLAT_BEFORE, "SECONDS", 0,
	  "The target had made no progress for SECONDS before this trace, as the caller "
	  "saw it (gpuprobe watch's bundles pass it): a trace that sees none either "
	  "judges its flat stretch from then", 3 },
	{ NULL, 0, NULL, 0, "A command started by gpuprobe:", 6 },
	{ "kill-after", OPT_KILL_AFTER, "SECONDS", 0,
	  "After forwarding SIGINT/SIGTERM, wait this long before SIGKILL (default 5)", 6 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* The options trace only stores (gp_set_option). */
static const struct gp_opt_field trace_fields[] = {
	GP_OPT_SECONDS(OPT_KILL_AFTER, struct trace_opts, kill_after, 0, 3600 * GP_NS_S),
	GP_OPT_SECONDS(OPT_FLAT_BEFORE, struct trace_opts, flat_before, 0, 365 * 86400 * GP_NS_S),
	GP_OPT_OFF(OPT_NO_NVML, struct trace_opts, nvml),
	GP_OPT_OFF(OPT_NO_CHILDREN, struct trace_opts, children),
	GP_OPT_ON(OPT_REOPEN, struct trace_opts, reopen),
	GP_OPT_STRING(OPT_PROC_ROOT, struct trace_opts, proc_root),
	GP_OPT_END,
};

static error_t trace_parse(int key, char *arg, struct argp_state *state)
{
	struct trace_opts *o = state->input;
	switch (key) {
	case OPT_RAS_PORT: {
		uint64_t port;
		if (!gp_parse_count(arg, &port) || port > 65535)
			argp_error(state, "--ras-port: '%s' is not a port (0-65535; 0: off)", arg);
		o->ras_port = (int)port;
		o->ras_given = true;
		break;
	}
	case OPT_STACKS:
		o->stacks = (enum stacks_mode)gp_arg_choice(state, key, arg, stacks_modes);
		break;
	case OPT_FAIL_ON: {
		char *copy = strdup(arg), *save = NULL;
		for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			if (!gp_verdict_class_valid(c))
				/* argp_error exits: c (in copy) is still alive here. */
				argp_error(state, "--fail-on: '%s' is not a verdict class (progress, "
					   "slow-progress, idle, waiting-gpu, hang-blocked, hang-gpu-spin, "
					   "hang-busy-kernel, hang-busy-user, stopped, exited, undecided)", c);
			if (o->nfail_on < 8)
				gp_strlcpy(o->fail_on[o->nfail_on++], c, sizeof o->fail_on[0]);
		}
		free(copy);
		break;
	}
	default:
		return gp_set_option(state, trace_fields, key, arg, o);
	}
	return 0;
}

#define ONE_TARGET "one target only: PID, --name NAME or -- COMMAND"

/* One target: PID, --name or -- COMMAND. */
static void trace_check(struct argp_state *state, void *cmd)
{
	const struct trace_opts *o = cmd;
	int targets = !!o->pid + !!o->sample.name + !!o->cmd;
	if (targets == 0)
		argp_error(state, "no target: give a PID, --name NAME or -- COMMAND [ARGS...]");
	if (targets > 1)
		argp_error(state, ONE_TARGET);
	if (o->cmd && !o->cmd[0])
		argp_error(state, "nothing after '--': give the COMMAND to start");
	if (o->cmd && o->proc_root)
		argp_error(state, "--proc-root replays a captured tree: it cannot start a command");
}

static const struct argp trace_argp = {
	trace_options, trace_parse, "PID\n--name NAME\n-- COMMAND [ARGS...]",
	"Sample a process every --interval seconds until it exits, --seconds pass, "
	"or SIGINT/SIGTERM: per thread state, CPU, wchan, syscall, context switches "
	"and kernel stack; per process memory, io and GPU memory (DRM fdinfo, KFD, "
	"NVML); system vmstat, meminfo and pressure.\v"
	"With -o FILE every sample is a JSON line, flushed as it is written.  On a "
	"terminal one line per sample is printed; -q or a non-terminal standard "
	"output prints only the summary.  A command started with -- keeps its "
	"stdin/stdout/stderr; gpuprobe forwards SIGINT/SIGTERM to it and never "
	"lets it outlive gpuprobe.  A PID target is never signalled.\n\n"
	"The target's descendants are followed too (--no-children: the target "
	"alone), the ones that start and end during the trace included: progress "
	"anywhere in the tree is progress, and the verdict names the process.  When "
	"a phase has been flat for --hang-after, and again at the end, every thread "
	"of every traced process is stacked once (one thread stopped at a time, "
	"never one in D state), unless --stacks none.\n\n"
	"At the end (and on Ctrl-C) a verdict: progress, slow-progress, idle, "
	"waiting-gpu, hang-blocked, hang-gpu-spin, hang-busy-kernel, hang-busy-user, stopped, exited "
	"or undecided, with the phases and the evidence table, also saved as the "
	"`verdict' line.\n\n"
	"Exit status: 0 the trace ran (whatever the target did); 1 runtime error "
	"(no such process, cannot write FILE); 3 the verdict is one of --fail-on; "
	"64 usage error.",
	NULL, NULL, NULL,
};

/* The kernel log since the last sample: GPU drivers' lines and the
 * kernel's hang/lockup/OOM warnings, as `kmsg` lines (kmsg.h). */
static void drain_kmsg(struct run *r)
{
	struct gp_kmsg_rec rec[16];
	int n;
	while (r->kmsg && (n = gp_kmsg_read(r->kmsg, rec, 16, r->kmsg_why, sizeof r->kmsg_why)) > 0) {
		for (int i = 0; i < n; i++) {
			json_t *line = gp_kmsg_json(&rec[i]);
			if (!line)
				continue;
			gp_kmsg_note_add(r->notes, &r->nnotes, line);
			trace_write_line(r, line);
		}
		if (n < 16)
			break;
	}
	if (r->kmsg && n < 0) {
		gp_kmsg_close(r->kmsg);
		r->kmsg = NULL;
	}
}

/* The processes this sample listed, and those it no longer did, into
 * r->procs: as the loader reads them from the sample line (its pid, its
 * procs, its died). */
static void note_members(struct run *r, double t, const json_t *line)
{
	int pid;
	struct gp_sampler *s;
	for (size_t m = 0; gp_tree_member(r->smp.tree, m, &pid, NULL, &s); m++) {
		gp_proctab_seen(&r->procs, pid, t);
		struct gp_ran_mark mark;
		gp_proctab_ran(&r->procs, pid, t, s && gp_sampler_main_mark(s, &mark) ? &mark : NULL);
		bool ctx;
		uint8_t gw;
		if (s) {
			gp_sampler_gpu(s, &ctx, &gw);
			gp_proctab_gpu(&r->procs, pid, ctx, gw);
		}
	}
	gp_proctab_sample_end(&r->procs, t, json_object_get(line, "died"));
}


/* Where the tree's stacks lines go: the result. */
static void emit(void *ctx, double t, json_t *line)
{
	(void)t;
	trace_write_line(ctx, line);
}

/* One tick of the trace (loop/ticker.h): the tree's sample, the lines
 * around it, this tick's stacks and, as soon as a phase has been flat
 * for --hang-after, the stacks of every thread, once for that stretch. */
static const char *trace_tick(void *ctx, double t)
{
	struct run *r = ctx;
	struct gp_point cur;
	json_t *line;
	struct gp_raw raws[2];
	size_t nraws;
	const char *why;
	enum gp_sample_rc rc = gp_sampling_take(&r->smp, t, &cur, &line, raws, &nraws, &why);
	if (rc == GP_SAMPLE_GONE) {
		trace_reap(r);
		return why;
	}
	if (rc != GP_SAMPLE_OK)
		return "exited";
	note_members(r, t, line);
	trace_write_line_raws(r, line, raws, nraws);
	trace_announce(r, t);
	trace_follow_exec(r, t);
	trace_check_libs(r, t, false);
	trace_check_ras(r, t, false);
	drain_kmsg(r);
	trace_take_stacks(r, t, &cur);
	if (!gp_sampling_output(&r->smp, &cur) && gp_sampling_hang_due(&r->smp, t)) {
		trace_snapshot_all(r, t, "hang");
		trace_check_ras(r, t, true);
	}
	gp_series_push(&r->series, &cur);
	if (r->live)
		gp_render_live_line(stdout, r->have_prev ? &r->prev : NULL, &cur, r->page_size);
	r->prev = cur;
	r->have_prev = true;
	return r->rc ? "output error" : NULL;
}

/* A SIGCHLD: the command's exit (the late stops are drained already). */
static const char *trace_sigchld(void *ctx)
{
	return trace_reap(ctx) ? "exited" : NULL;
}

/* SIGINT/SIGTERM/SIGHUP.  From the terminal (SI_KERNEL) the command got
 * it too, being in our process group; sent to gpuprobe alone (kill), it
 * is forwarded. */
static const char *trace_signal(void *ctx, int sig, const siginfo_t *si)
{
	trace_stop_child(ctx, sig, si->si_code != SI_KERNEL);
	return "interrupted";
}


/* The parent of pid from /proc/PID/stat, 0 when unknown. */
static int gp_parent_of(int pid)
{
	char path[64], buf[1024];
	struct gp_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	struct gp_root live = { .dirfd = AT_FDCWD, .live = true };
	if (gp_read_file(&live, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st))
		return 0;
	return st.ppid;
}

static int resolve_name(struct trace_opts *o)
{
	int *pids;
	int n = gp_find_by_name(o->sample.name, &pids);
	if (n < 0) {
		gp_err_errno(errno, o->sample.name, "cannot list processes");
		return -1;
	}
	if (n == 0) {
		gp_err(o->sample.name, "no process of that name");
		free(pids);
		return -1;
	}
	if (n > 1) {
		/* Several: a server and its workers (postgres, a launcher and
		 * its runners) are one tree; trace the one the others descend
		 * from, when there is exactly one. */
		int root = 0, roots = 0;
		for (int i = 0; i < n; i++) {
			bool under = false;
			for (int a = gp_parent_of(pids[i]), hops = 0; a > 1 && hops < 64;
			     a = gp_parent_of(a), hops++)
				for (int j = 0; j < n && !under; j++)
					under = pids[j] == a;
			if (!under) {
				root = pids[i];
				roots++;
			}
		}
		if (roots == 1) {
			gp_hint("--name %s: %d processes; tracing pid %d, which the others descend from",
				o->sample.name, n, root);
			o->pid = root;
			free(pids);
			return 0;
		}
		struct strbuf list = STRBUF_INIT;
		for (int i = 0; i < n && i < 16; i++)
			strbuf_addf(&list, "%s%d", i ? ", " : "", pids[i]);
		gp_err(o->sample.name, "%d processes of that name (%s%s): give a PID", n, list.buf,
		       n > 16 ? ", ..." : "");
		strbuf_release(&list);
		free(pids);
		return -1;
	}
	o->pid = pids[0];
	free(pids);
	return 0;
}

/* The /proc to read, and a PID target that is not gpuprobe itself. */
static int open_root(struct run *r)
{
	struct trace_opts *o = r->o;
	if (gp_root_open(&r->root, o->proc_root) < 0) {
		gp_err_errno(errno, o->proc_root, "cannot open the --proc-root directory");
		return -1;
	}
	if ((o->sample.name && resolve_name(o) < 0)
	    || (o->pid && o->pid == getpid() && r->root.live
		&& (gp_err(NULL, "pid %d is gpuprobe itself", o->pid), true))) {
		gp_root_close(&r->root);
		return -1;
	}
	return 0;
}

/* -o FILE ('-': standard output); 0 without -o. */
static int open_output(struct run *r)
{
	const char *path = r->o->out.path;
	if (!path)
		return 0;
	if (!strcmp(path, "-")) {
		r->out = gp_result_stdout("-");
		r->out_stdout = true;
	} else {
		r->out = gp_result_create(path);
	}
	if (!r->out) {
		gp_result_create_failed(path, errno);
		return -1;
	}
	return 0;
}


/* The kernel log from the start, and the five minutes before it for
 * context (DESIGN: driver messages are the first thing asked for). */
static void open_kmsg(struct run *r)
{
	uint64_t kstart = gp_kmsg_now_us();
	/* A replayed root's log has its own clock: the capture says where
	 * its trace began (tests/fixtures/kmsg/README.md). */
	const char *ks = r->root.live ? NULL : getenv("GPUPROBE_KMSG_START_US");
	if (ks)
		kstart = strtoull(ks, NULL, 10);
	r->kmsg = gp_kmsg_open(&r->root, kstart, 300, r->kmsg_why, sizeof r->kmsg_why);
	if (!r->kmsg && r->kmsg_why[0])
		gp_hint("kernel log: %s", r->kmsg_why);
}

static void run_free(struct run *r)
{
	strbuf_release(&r->cmdline);
	strbuf_release(&r->started_as);
	strbuf_release(&r->where);
	gp_series_free(&r->series);
	free(r->announced);
	gp_proctab_free(&r->procs);
	for (size_t i = 0; i < r->nlibs; i++)
		free(r->libs[i].paths);
	free(r->libs);
	gp_kmsg_close(r->kmsg);
	free(r->places);
	gp_sampling_free(&r->smp);
}

/* trace's wording of the shared options. */
static const struct gp_help trace_help[] = {
	{ GP_KEY_HOT_THRESHOLD, "CPU% over which a thread is hot (default 50)" },
	{ GP_KEY_HANG_AFTER, "No progress for this long is a hang (default 30)" },
	{ GP_KEY_SLOW_RATE, "Progress under SIZE per second (K/M/G suffixes) is slow-progress "
	  "(default: only under a tenth of the trace's own peak)" },
	{ 'o', "Stream the result as JSON Lines to FILE ('-': stdout); FILE.zst: "
	       "zstd-compressed, flushed after every sample" },
	{ 'q', "No live line: print only the summary" },
	{ 'n', "Trace the process whose comm or argv[0] is NAME (several: "
	       "the one the others descend from)" },
	{ 'i', "Time between samples (default 1; at least 0.05)" },
	{ 's', "Stop after SECONDS (default: until the target exits)" },
	{ 0, NULL },
};

/* What comes before the first sample, and t = 0 (*t0): a command is
 * released and its start is t = 0; a running process's threads are read
 * once, its libraries and the kernel log opened, before the clock starts
 * (1 000 threads: the first sample took 0.13-0.19 s and lost tick 1 at
 * --interval 0.1; issue 21).  -1 when the command could not run (said). */
static int start_clock(struct run *r, double *t0)
{
	struct trace_opts *o = r->o;
	/* NCCL's RAS port: the target's NCCL_RAS_ADDR unless --ras-port
	 * said; a command gets gpuprobe's own environment. */
	if (!o->ras_given && r->root.live) {
		char where[160];
		o->ras_port = gp_ras_port_of(&r->root, r->is_child ? getpid() : o->pid, where, sizeof where);
	}
	/* Before a command runs: its first sample should come as soon as
	 * it can, before its first children end (a process connector counts
	 * them only from the first sample; tests/e2e/report-tree-counts.sh). */
	open_kmsg(r);
	if (r->is_child) {
		int e = gp_child_release(&r->child);
		if (!e)
			gp_tree_mark_start(r->smp.tree);
		if (e) {
			gp_err_errno(e, o->cmd[0], "cannot run the command");
			gp_kmsg_close(r->kmsg);
			r->kmsg = NULL;
			return -1;
		}
		*t0 = gp_mono_now();
	} else {
		gp_tree_prime(r->smp.tree);
	}
	snprintf(r->comm, sizeof r->comm, "?");
	trace_write_target(r);
	if (!r->is_child)
		*t0 = gp_mono_now();
	return 0;
}

int cmd_trace(int argc, char **argv, const struct gp_global *g)
{
	struct trace_opts o = { .sample = { trace_help, NULL, 1.0, 0, 50 * GP_NS_MS }, .kill_after = 5.0, .nvml = true, .children = true,
				.ras_port = GP_RAS_PORT_DEFAULT,
				.st = { trace_help, 50, true },
				.judge = { trace_help, GP_VERDICT_HANG_AFTER_DEFAULT, 0 },
				.out = { trace_help, NULL, g->quiet },
				.operand = { .pid = &o.pid, .one_only = ONE_TARGET, .check = trace_check,
					     .cmd = &o } };
	/* Everything after the first "--" is the command, taken verbatim
	 * before argp (whose getopt would permute it) sees the rest. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			o.cmd = &argv[i + 1];
			argc = i;
			break;
		}
	}
	o.operand.taken = o.cmd != NULL;

	const struct gp_group groups[] = {
		{ &gp_sample_argp, &o.sample, NULL, 0 },
		{ &gp_stack_argp, &o.st, NULL, 2 }, { &gp_judge_argp, &o.judge, NULL, 3 },
		{ &gp_out_argp, &o.out, "Output:", 4 }, { &gp_operand_argp, &o.operand, NULL, 0 },
		GP_GROUPS_END,
	};
	if (gp_parse_command(&trace_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	if (o.out.quiet)
		gp_quiet = true;

	struct run r = { .o = &o, .page_size = sysconf(_SC_PAGESIZE), .cmdline = STRBUF_INIT,
			 .started_as = STRBUF_INIT, .where = STRBUF_INIT, .ras_checked = -1 };
	if (open_root(&r) < 0)
		return GP_EXIT_ERROR;

	/* Signals are taken synchronously with sigtimedwait: no handler
	 * races, and the sleep between samples wakes at once. */
	sigset_t waitset, orig;
	gp_ticker_block(&waitset, &orig);

	if (o.cmd) {
		if (gp_child_spawn_paused(o.cmd, &orig, &r.child) < 0) {
			gp_err_errno(errno, o.cmd[0], "cannot start the command");
			sigprocmask(SIG_SETMASK, &orig, NULL);
			return GP_EXIT_ERROR;
		}
		o.pid = r.child.pid;
		r.is_child = true;
	}
	r.pid = o.pid;

	/* User stacks only of the live system (a replayed tree has no
	 * process to ptrace). */
	struct gp_sampling_opts so = { .root = &r.root, .pid = o.pid, .children = o.children,
				       .kstacks = o.st.kstacks, .no_python = o.st.no_python,
				       .no_nvml = !o.nvml, .reopen = o.reopen,
				       .stacks = o.stacks != STACKS_NONE && r.root.live, .hints = true,
				       .hang_after = o.judge.hang_after, .emit = emit, .ctx = &r };
	if (gp_sampling_init(&r.smp, &so) < 0) {
		if (errno == ENOENT || errno == ESRCH)
			gp_err(NULL, "pid %d: no such process", o.pid);
		else
			gp_err_errno(errno, NULL, "pid %d: cannot read its /proc entry", o.pid);
		trace_abandon(&r);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}

	if (open_output(&r) < 0) {
		trace_abandon(&r);
		gp_sampling_free(&r.smp);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}
	r.live = !o.out.quiet && !r.out_stdout && isatty(STDOUT_FILENO);
	/* The info facts, but no GPU runtime dlopen'ed into the tracer. */
	struct gp_host_info_opts hio = { .process = r.root.live };
	json_t *header = gp_result_header("trace", g->argc, g->argv, gp_host_info_ex(&r.root, &hio));
	if (o.flat_before > 0)
		json_object_set_new(header, "flat_before_s", json_real(o.flat_before));
	trace_write_line(&r, header);

	double t0 = 0;
	if (start_clock(&r, &t0) < 0) {
		trace_reap_killed(&r);
		gp_sampling_free(&r.smp);
		gp_result_close(r.out);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}

	r.have_sched0 = trace_self_sched(&r.run0_ns, &r.wait0_ns);
	r.tk = (struct gp_ticker){ .interval = o.sample.interval, .seconds = o.sample.seconds,
				   .t0 = t0, .waitset = &waitset };
	static const struct gp_ticker_ops ops = { trace_tick, trace_sigchld, trace_signal };
	const char *reason = gp_ticker_run(&r.tk, &ops, &r);
	double t_end = gp_mono_now() - t0;
	trace_last_look(&r, reason, t_end);
	trace_finish(&r, reason, t_end, r.comm);
	run_free(&r);
	gp_root_close(&r.root);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return r.rc;
}
