/* gpuprobe trace: sample a process until it exits, --seconds pass, or a
 * signal; stream JSON Lines; print a live line and a summary. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "hostinfo.h"
#include "identity.h"
#include "parse.h"
#include "procfs.h"
#include "result.h"
#include "series.h"
#include "trace_text.h"
#include "verdict.h"
#include "sampler.h"
#include "stacks.h"
#include "strbuf.h"
#include "tasks.h"
#include "load.h"
#include "sysinfo.h"
#include "timeutil.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	OPT_PROC_ROOT = 0x100,
	OPT_NO_KSTACKS,
	OPT_NO_NVML,
	OPT_REOPEN,
	OPT_KILL_AFTER,
	OPT_HANG_AFTER,
	OPT_SLOW_RATE,
	OPT_FAIL_ON,
	OPT_STACKS,
	OPT_HOT_THRESHOLD,
};

enum stacks_mode { STACKS_HOT, STACKS_ALL, STACKS_NONE };

struct trace_opts {
	int pid;
	const char *name;
	char **cmd;            /* after "--" */
	double interval, seconds, kill_after;
	const char *output;
	const char *proc_root;
	bool kstacks, nvml, reopen, quiet;
	double hang_after;
	uint64_t slow_rate;    /* bytes/s, 0 = relative to the trace's peak only */
	char fail_on[8][24];
	int nfail_on;
	enum stacks_mode stacks;
	double hot_threshold;  /* CPU% */
};

static const struct argp_option trace_options[] = {
	{ NULL, 0, NULL, 0, "Target:", 1 },
	{ "name", 'n', "NAME", 0, "Trace the process whose comm or argv[0] is NAME", 1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "interval", 'i', "SECONDS", 0, "Time between samples (default 1; at least 0.05)", 2 },
	{ "seconds", 's', "SECONDS", 0, "Stop after SECONDS (default: until the target exits)", 2 },
	{ "no-kernel-stacks", OPT_NO_KSTACKS, NULL, 0, "Never read /proc/TID/stack", 2 },
	{ "stacks", OPT_STACKS, "MODE", 0,
	  "User stacks: hot (threads over --hot-threshold, every tick; the default), "
	  "all (hot ones, and every other thread once per place it waits in), "
	  "none (never ptrace)", 2 },
	{ "hot-threshold", OPT_HOT_THRESHOLD, "PCT", 0,
	  "CPU% over which a thread is hot (default 50)", 2 },
	{ "no-nvml", OPT_NO_NVML, NULL, 0, "Do not load libnvidia-ml.so.1", 2 },
	{ "proc-root", OPT_PROC_ROOT, "DIR", 0, "Read /proc and /sys under DIR (replay a captured tree)", 2 },
	{ "reopen-files", OPT_REOPEN, NULL, OPTION_HIDDEN, "Re-open every file each sample (benchmark baseline)", 2 },
	{ NULL, 0, NULL, 0, "Verdict:", 3 },
	{ "hang-after", OPT_HANG_AFTER, "SECONDS", 0,
	  "No progress for this long is a hang (default 30)", 3 },
	{ "slow-rate", OPT_SLOW_RATE, "SIZE", 0,
	  "Progress under SIZE per second (K/M/G suffixes) is slow-progress "
	  "(default: only under a tenth of the trace's own peak)", 3 },
	{ "fail-on", OPT_FAIL_ON, "CLASS[,CLASS]", 0,
	  "Exit 3 when the verdict is one of these classes", 3 },
	{ NULL, 0, NULL, 0, "Output:", 4 },
	{ "output", 'o', "FILE", 0, "Stream the result as JSON Lines to FILE ('-': stdout)", 4 },
	{ "quiet", 'q', NULL, 0, "No live line: print only the summary", 4 },
	{ NULL, 0, NULL, 0, "A command started by gpuprobe:", 5 },
	{ "kill-after", OPT_KILL_AFTER, "SECONDS", 0,
	  "After forwarding SIGINT/SIGTERM, wait this long before SIGKILL (default 5)", 5 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static error_t trace_parse(int key, char *arg, struct argp_state *state)
{
	struct trace_opts *o = state->input;
	switch (key) {
	case 'n':
		if (!*arg)
			argp_error(state, "--name needs a non-empty NAME");
		o->name = arg;
		break;
	case 'i':
		if (!gp_parse_seconds(arg, &o->interval) || o->interval < 0.05 || o->interval > 3600)
			argp_error(state, "--interval '%s': give seconds between 0.05 and 3600", arg);
		break;
	case 's':
		if (!gp_parse_seconds(arg, &o->seconds) || o->seconds <= 0)
			argp_error(state, "--seconds '%s': give a positive number of seconds", arg);
		break;
	case OPT_KILL_AFTER:
		if (!gp_parse_seconds(arg, &o->kill_after) || o->kill_after > 3600)
			argp_error(state, "--kill-after '%s': give seconds between 0 and 3600", arg);
		break;
	case OPT_STACKS:
		if (!strcmp(arg, "hot"))
			o->stacks = STACKS_HOT;
		else if (!strcmp(arg, "all"))
			o->stacks = STACKS_ALL;
		else if (!strcmp(arg, "none"))
			o->stacks = STACKS_NONE;
		else
			argp_error(state, "--stacks '%s': give hot, all or none", arg);
		break;
	case OPT_HOT_THRESHOLD:
		if (!gp_parse_seconds(arg, &o->hot_threshold) || o->hot_threshold > 100 * 1024)
			argp_error(state, "--hot-threshold '%s': give a CPU percentage", arg);
		break;
	case OPT_HANG_AFTER:
		if (!gp_parse_seconds(arg, &o->hang_after) || o->hang_after <= 0)
			argp_error(state, "--hang-after '%s': give a positive number of seconds", arg);
		break;
	case OPT_SLOW_RATE:
		if (!gp_parse_size(arg, &o->slow_rate))
			argp_error(state, "--slow-rate '%s': give bytes per second, e.g. 1M", arg);
		break;
	case OPT_FAIL_ON: {
		char *copy = strdup(arg), *save = NULL;
		for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
			if (!gp_verdict_class_valid(c))
				/* argp_error exits: c (in copy) is still alive here. */
				argp_error(state, "--fail-on: '%s' is not a verdict class (progress, "
					   "slow-progress, hang-blocked, hang-busy-kernel, hang-busy-user, "
					   "stopped, exited, undecided)", c);
			if (o->nfail_on < 8)
				gp_strlcpy(o->fail_on[o->nfail_on++], c, sizeof o->fail_on[0]);
		}
		free(copy);
		break;
	}
	case 'o':
		if (!*arg)
			argp_error(state, "--output needs a file name");
		o->output = arg;
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_PROC_ROOT:
		o->proc_root = arg;
		break;
	case OPT_NO_KSTACKS:
		o->kstacks = false;
		break;
	case OPT_NO_NVML:
		o->nvml = false;
		break;
	case OPT_REOPEN:
		o->reopen = true;
		break;
	case ARGP_KEY_ARG:
		if (o->pid || o->cmd)
			argp_error(state, "one target only: PID, --name NAME or -- COMMAND");
		if (!gp_parse_pid(arg, &o->pid))
			argp_error(state, "'%s' is not a PID (give 1..2147483647)", arg);
		break;
	case ARGP_KEY_END: {
		int targets = !!o->pid + !!o->name + !!o->cmd;
		if (targets == 0)
			argp_error(state, "no target: give a PID, --name NAME or -- COMMAND [ARGS...]");
		if (targets > 1)
			argp_error(state, "one target only: PID, --name NAME or -- COMMAND");
		if (o->cmd && !o->cmd[0])
			argp_error(state, "nothing after '--': give the COMMAND to start");
		if (o->cmd && o->proc_root)
			argp_error(state, "--proc-root replays a captured tree: it cannot start a command");
		break;
	}
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
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
	"At the end (and on Ctrl-C) a verdict: progress, slow-progress, hang-blocked, "
	"hang-busy-kernel, hang-busy-user, stopped, exited or undecided, with the "
	"phases and the evidence table, also saved as the `verdict' line.\n\n"
	"Exit status: 0 the trace ran (whatever the target did); 1 runtime error "
	"(no such process, cannot write FILE); 3 the verdict is one of --fail-on; "
	"64 usage error.",
	NULL, NULL, NULL,
};

/* ---- the command gpuprobe starts ------------------------------------ */

struct child {
	int pid;
	int go_fd;       /* write a byte: the child may exec */
	int err_fd;      /* EOF: exec succeeded; 4 bytes: its errno */
};

static int spawn_paused(char **cmd, const sigset_t *orig_mask, struct child *c)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	int parent = getpid();
	int pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* The command must never outlive gpuprobe, even SIGKILLed. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		sigprocmask(SIG_SETMASK, orig_mask, NULL);
		close(go[1]);
		close(err[0]);
		char b;
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* gpuprobe gave up before starting us */
		execvp(cmd[0], cmd);
		int e = errno;
		if (write(err[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

/* Lets the child exec; returns 0, or the child's exec errno. */
static int release_child(struct child *c)
{
	char b = 1;
	int e = 0;
	if (write(c->go_fd, &b, 1) != 1)
		e = errno;
	close(c->go_fd);
	ssize_t n;
	int child_errno = 0;
	do
		n = read(c->err_fd, &child_errno, sizeof child_errno);
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	if (n == (ssize_t)sizeof child_errno)
		return child_errno ? child_errno : ENOEXEC;
	return e;
}

/* ---- the loop -------------------------------------------------------- */

struct run {
	struct trace_opts *o;
	struct gp_root root;
	int pid;
	bool is_child;
	bool child_reaped;
	int wstatus;
	struct gp_result *out;
	bool out_stdout;
	unsigned long lines;
	struct gp_series series;
	bool live;
	unsigned long late;
	long page_size;
	int rc;
	struct gp_stacks *stk;        /* NULL: --stacks none, or a replayed root */
	struct place { int tid; uint64_t key; } *places; /* last stacked place, --stacks all */
	size_t nplaces, capplaces;
	bool hinted;
};

/* Writes one line; a sample gets its streamed threads array appended. */
static void write_line_raw(struct run *r, json_t *line, const char *key,
			   const char *raw, size_t rawlen)
{
	if (!r->out) {
		json_decref(line);
		return;
	}
	int rc = key ? gp_result_write_raw(r->out, line, key, raw, rawlen)
		     : gp_result_write(r->out, line);
	if (rc < 0) {
		if (r->rc == 0)
			gp_err_errno(errno, r->o->output, "cannot write the result");
		r->rc = GP_EXIT_ERROR;
	} else {
		r->lines++;
	}
}

static void write_line(struct run *r, json_t *line)
{
	write_line_raw(r, line, NULL, NULL, 0);
}

static bool reap(struct run *r, int flags)
{
	if (!r->is_child || r->child_reaped)
		return r->child_reaped;
	int st;
	int w;
	do
		w = waitpid(r->pid, &st, flags);
	while (w < 0 && errno == EINTR);
	if (w == r->pid) {
		r->child_reaped = true;
		r->wstatus = st;
	}
	return r->child_reaped;
}

/* Waits up to `secs` for the child to exit; SIGCHLD is blocked. */
static bool wait_child(struct run *r, double secs)
{
	double end = gp_mono_now() + secs;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (!reap(r, WNOHANG)) {
		/* Threads of the child that died while we held them are ours
		 * to take first: until then its leader cannot be reaped. */
		if (r->stk)
			gp_stacks_reap(r->stk);
		double left = end - gp_mono_now();
		if (left <= 0)
			return false;
		struct timespec ts = gp_ts_from_s(left > 0.1 ? 0.1 : left);
		sigtimedwait(&chld, NULL, &ts);
	}
	return true;
}

static void stop_child(struct run *r, int sig, bool forward)
{
	if (!r->is_child || reap(r, WNOHANG))
		return;
	if (forward)
		kill(r->pid, sig);
	if (!wait_child(r, r->o->kill_after)) {
		gp_warn("pid %d did not exit %.1f s after signal %d: sending SIGKILL",
			r->pid, r->o->kill_after, sig);
		kill(r->pid, SIGKILL);
		wait_child(r, 5);
	}
}

/* Where a thread waits, as one number: its wchan and syscall. */
static uint64_t place_key(const struct gp_thread *th)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = th->wchan; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	h ^= (uint64_t)(th->sc.kind) << 56;
	h = (h ^ (uint64_t)th->sc.nr) * 1099511628211ull;
	return (h ^ th->sc.args[1]) * 1099511628211ull;
}

/* --stacks all: true when the thread waits somewhere it was not stacked
 * in (and remembers the place). */
static bool new_place(struct run *r, const struct gp_thread *th)
{
	uint64_t key = place_key(th);
	for (size_t i = 0; i < r->nplaces; i++) {
		if (r->places[i].tid == th->tid) {
			if (r->places[i].key == key)
				return false;
			r->places[i].key = key;
			return true;
		}
	}
	if (r->nplaces == r->capplaces) {
		size_t nc = r->capplaces ? r->capplaces * 2 : 256;
		struct place *np = realloc(r->places, nc * sizeof *np);
		if (!np)
			return false;
		r->places = np;
		r->capplaces = nc;
	}
	r->places[r->nplaces++] = (struct place){ th->tid, key };
	return true;
}

/* The stacks of this tick: hot threads every tick; with --stacks all,
 * every other thread once per place it waits in.  Writes the `stacks`
 * line and notes the busiest threads' hot frames in the point. */
static void take_stacks(struct run *r, struct gp_sampler *smp, double t, struct gp_point *pt)
{
	if (!r->stk)
		return;
	size_t n;
	const struct gp_thread *th = gp_sampler_threads(smp, &n);
	int *tids = malloc((n ? n : 1) * sizeof *tids);
	if (!tids)
		return;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool hot = th[i].cpu_pct >= r->o->hot_threshold;
		bool stack = hot;
		if (r->o->stacks == STACKS_ALL && !hot && th[i].st.state != 'R')
			stack = new_place(r, &th[i]);
		if (stack)
			tids[k++] = th[i].tid;
	}
	json_t *line = NULL;
	if (k && gp_stacks_snapshot(r->stk, t, tids, k, &line) == 0 && line) {
		if (pt->top_tid)
			gp_stacks_top_frame(line, pt->top_tid, pt->top_frame, sizeof pt->top_frame);
		if (pt->top2_tid)
			gp_stacks_top_frame(line, pt->top2_tid, pt->top2_frame, sizeof pt->top2_frame);
		write_line(r, line);
		const char *hint = gp_stacks_hint(r->stk);
		if (hint && !r->hinted) {
			gp_hint("%s", hint);
			r->hinted = true;
		}
	}
	free(tids);
}

static const char *loop(struct run *r, struct gp_sampler *smp, double t0,
			const sigset_t *waitset)
{
	struct gp_point prev, cur;
	bool have_prev = false;
	double interval = r->o->interval;
	for (unsigned long k = 0;; ) {
		/* Ticks k*interval up to and including --seconds: 3 s at 0.1 s
		 * is 31 samples, t = 0 ... 3.0. */
		if (r->o->seconds > 0 && (double)k * interval > r->o->seconds + 1e-9)
			return "time limit";
		double t = gp_mono_now() - t0;
		json_t *line;
		const char *why;
		/* Threads a SIGKILL took from us mid-stop keep a dead target
		 * looking alive until we take their exit (stacks.h). */
		if (r->stk)
			gp_stacks_reap(r->stk);
		enum gp_sample_rc rc = gp_sampler_take(smp, t, &line, &cur, &why);
		if (rc == GP_SAMPLE_GONE) {
			reap(r, WNOHANG);
			return why;
		}
		size_t rawlen;
		const char *raw = gp_sampler_threads_json(smp, &rawlen);
		write_line_raw(r, line, "threads", raw, rawlen);
		take_stacks(r, smp, t, &cur);
		gp_series_push(&r->series, &cur);
		if (r->live)
			gp_render_live_line(stdout, have_prev ? &prev : NULL, &cur, r->page_size);
		prev = cur;
		have_prev = true;
		if (r->rc)
			return "output error";

		/* Absolute deadlines: drift never accumulates.  A sample that
		 * overran skips the ticks it missed. */
		double now = gp_mono_now() - t0;
		unsigned long next = k + 1;
		while (next * interval <= now)
			next++;
		r->late += next - k - 1;
		k = next;
		double deadline = (double)k * interval;
		if (r->o->seconds > 0 && deadline > r->o->seconds + 1e-9)
			return "time limit";
		for (;;) {
			double left = deadline - (gp_mono_now() - t0);
			if (left <= 0)
				break;
			struct timespec ts = gp_ts_from_s(left);
			siginfo_t si;
			int sig = sigtimedwait(waitset, &si, &ts);
			if (sig < 0)
				continue; /* EAGAIN: the deadline; EINTR: retry */
			if (sig == SIGCHLD) {
				if (reap(r, WNOHANG))
					return "exited";
				continue;
			}
			/* SIGINT/SIGTERM/SIGHUP.  From the terminal (SI_KERNEL) the
			 * command got it too, being in our process group; sent to
			 * gpuprobe alone (kill), it is forwarded. */
			stop_child(r, sig, si.si_code != SI_KERNEL);
			return "interrupted";
		}
	}
}

static int resolve_name(struct trace_opts *o)
{
	int *pids;
	int n = gp_find_by_name(o->name, &pids);
	if (n < 0) {
		gp_err_errno(errno, o->name, "cannot list processes");
		return -1;
	}
	if (n == 0) {
		gp_err(o->name, "no process of that name");
		free(pids);
		return -1;
	}
	if (n > 1) {
		struct strbuf list = STRBUF_INIT;
		for (int i = 0; i < n && i < 16; i++)
			strbuf_addf(&list, "%s%d", i ? ", " : "", pids[i]);
		gp_err(o->name, "%d processes of that name (%s%s): give a PID", n, list.buf,
		       n > 16 ? ", ..." : "");
		strbuf_release(&list);
		free(pids);
		return -1;
	}
	o->pid = pids[0];
	free(pids);
	return 0;
}

int cmd_trace(int argc, char **argv, const struct gp_global *g)
{
	struct trace_opts o = { .interval = 1.0, .kill_after = 5.0, .kstacks = true,
				.hang_after = GP_VERDICT_HANG_AFTER_DEFAULT,
				.hot_threshold = 50,
				.nvml = true, .quiet = g->quiet };
	/* Everything after the first "--" is the command, taken verbatim
	 * before argp (whose getopt would permute it) sees the rest. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			o.cmd = &argv[i + 1];
			argc = i;
			break;
		}
	}

	if (argp_parse(&trace_argp, argc, argv, 0, NULL, &o))
		return GP_EXIT_USAGE;
	if (o.quiet)
		gp_quiet = true;

	struct run r = { .o = &o, .page_size = sysconf(_SC_PAGESIZE) };
	if (gp_root_open(&r.root, o.proc_root) < 0) {
		gp_err_errno(errno, o.proc_root, "cannot open the --proc-root directory");
		return GP_EXIT_ERROR;
	}
	if (o.name && resolve_name(&o) < 0) {
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}
	if (o.pid && o.pid == getpid() && r.root.live) {
		gp_err(NULL, "pid %d is gpuprobe itself", o.pid);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}

	/* Signals are taken synchronously with sigtimedwait: no handler
	 * races, and the sleep between samples wakes at once. */
	sigset_t waitset, orig;
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGINT);
	sigaddset(&waitset, SIGTERM);
	sigaddset(&waitset, SIGHUP);
	sigaddset(&waitset, SIGCHLD);
	sigprocmask(SIG_BLOCK, &waitset, &orig);

	struct child child = { 0 };
	if (o.cmd) {
		if (spawn_paused(o.cmd, &orig, &child) < 0) {
			gp_err_errno(errno, o.cmd[0], "cannot start the command");
			sigprocmask(SIG_SETMASK, &orig, NULL);
			return GP_EXIT_ERROR;
		}
		o.pid = child.pid;
		r.is_child = true;
	}
	r.pid = o.pid;

	struct gp_sampler_opts so = { .root = &r.root, .pid = o.pid, .kstacks = o.kstacks,
				      .no_nvml = !o.nvml, .reopen = o.reopen };
	struct gp_sampler *smp = gp_sampler_new(&so);
	if (!smp) {
		if (errno == ENOENT || errno == ESRCH)
			gp_err(NULL, "pid %d: no such process", o.pid);
		else
			gp_err_errno(errno, NULL, "pid %d: cannot read its /proc entry", o.pid);
		if (r.is_child) {
			kill(child.pid, SIGKILL);
			close(child.go_fd);
			close(child.err_fd);
			reap(&r, 0);
		}
		sigprocmask(SIG_SETMASK, &orig, NULL);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}

	if (o.output) {
		if (!strcmp(o.output, "-")) {
			r.out = gp_result_stdout("-");
			r.out_stdout = true;
		} else {
			r.out = gp_result_create(o.output);
		}
		if (!r.out) {
			gp_result_create_failed(o.output, errno);
			if (r.is_child) {
				kill(child.pid, SIGKILL);
				close(child.go_fd);
				close(child.err_fd);
				reap(&r, 0);
			}
			gp_sampler_free(smp);
			sigprocmask(SIG_SETMASK, &orig, NULL);
			gp_root_close(&r.root);
			return GP_EXIT_ERROR;
		}
	}
	r.live = !o.quiet && !r.out_stdout && isatty(STDOUT_FILENO);
	/* The info facts, but no GPU runtime dlopen'ed into the tracer. */
	struct gp_host_info_opts hio = { .process = r.root.live };
	write_line(&r, gp_result_header("trace", g->argc, g->argv, gp_host_info_ex(&r.root, &hio)));

	double t0 = gp_mono_now();
	if (r.is_child) {
		int e = release_child(&child);
		if (e) {
			gp_err_errno(e, o.cmd[0], "cannot run the command");
			reap(&r, 0);
			gp_sampler_free(smp);
			gp_result_close(r.out);
			sigprocmask(SIG_SETMASK, &orig, NULL);
			gp_root_close(&r.root);
			return GP_EXIT_ERROR;
		}
		t0 = gp_mono_now();
	}
	/* User stacks only of the live system (a replayed tree has no
	 * process to ptrace). */
	if (o.stacks != STACKS_NONE && r.root.live)
		r.stk = gp_stacks_open(o.pid, o.kstacks ? 0 : GP_STACKS_NO_KERNEL);
	json_t *target = json_pack("{s:s, s:i}", "type", "target", "pid", o.pid);
	json_t *ident = gp_target_identity(&r.root, o.pid);
	if (ident)
		json_object_update(target, ident);
	json_decref(ident);
	json_object_set_new(target, "how", json_string(r.is_child ? "command" : o.name ? "name" : "pid"));
	char comm[64] = "?";
	json_t *jc = json_object_get(target, "comm");
	if (json_is_string(jc))
		snprintf(comm, sizeof comm, "%s", json_string_value(jc));
	write_line(&r, target);

	const char *reason = loop(&r, smp, t0, &waitset);
	double t_end = gp_mono_now() - t0;
	if (r.is_child && !r.child_reaped) {
		if (!strcmp(reason, "time limit") || !strcmp(reason, "output error"))
			stop_child(&r, SIGTERM, true);
		else
			wait_child(&r, 2);
	}

	struct gp_trace_end end = { .pid = o.pid, .comm = comm, .reason = reason,
				    .output = r.out_stdout ? NULL : o.output,
				    .late = r.late, .page_size = r.page_size };
	json_t *ex = json_pack("{s:s, s:f, s:s}", "type", "exit", "t", t_end, "reason", reason);
	if (r.is_child && r.child_reaped) {
		end.have_status = true;
		if (WIFEXITED(r.wstatus)) {
			end.status = WEXITSTATUS(r.wstatus);
			json_object_set_new(ex, "status", json_integer(end.status));
			json_object_set_new(ex, "signal", json_null());
		} else if (WIFSIGNALED(r.wstatus)) {
			end.signal = WTERMSIG(r.wstatus);
			json_object_set_new(ex, "status", json_null());
			json_object_set_new(ex, "signal", json_integer(end.signal));
		}
	} else {
		json_object_set_new(ex, "status", json_null());
		json_object_set_new(ex, "signal", json_null());
	}
	struct gp_sampler_totals tot;
	gp_sampler_totals(smp, &tot);
	json_object_set_new(ex, "samples", json_integer((json_int_t)tot.samples));
	json_object_set_new(ex, "threads_vanished", json_integer((json_int_t)tot.vanished));
	json_object_set_new(ex, "tids_reused", json_integer((json_int_t)tot.reused));
	json_object_set_new(ex, "late_ticks", json_integer((json_int_t)r.late));
	write_line(&r, ex);
	end.lines = r.lines;
	end.lost_threads = tot.vanished;
	end.kstack_denied = tot.kstack_denied;
	end.syscall_denied = tot.syscall_denied;
	end.io_denied = tot.io_denied;

	/* The verdict: a pure function of the compact series. */
	struct gp_verdict_opts vo = { .hang_after = o.hang_after, .slow_rate = (double)o.slow_rate,
				      .page_size = r.page_size, .end_reason = reason,
				      .have_status = end.have_status, .status = end.status,
				      .signal = end.signal,
				      .kstacks_seen = o.kstacks && !tot.kstack_denied && tot.kstacks_read };
	struct gp_verdict *verdict = malloc(sizeof *verdict);
	if (verdict) {
		gp_verdict_compute(r.series.pt, r.series.n, &vo, verdict);
		write_line(&r, gp_verdict_json(verdict));
		end.lines = r.lines;
		for (int i = 0; i < o.nfail_on; i++)
			if (!strcmp(o.fail_on[i], verdict->klass) && r.rc == 0)
				r.rc = GP_EXIT_VERDICT;
	}

	if (r.out && gp_result_close(r.out) < 0 && (r.rc == 0 || r.rc == GP_EXIT_VERDICT)) {
		gp_err_errno(errno, o.output, "cannot write the result");
		r.rc = GP_EXIT_ERROR;
	}
	FILE *human = r.out_stdout ? stderr : stdout;
	gp_render_trace_summary(human, &r.series, &end);
	if (verdict)
		gp_verdict_print(human, verdict);
	free(verdict);
	gp_series_free(&r.series);
	if (r.stk)
		gp_stacks_close(r.stk);
	free(r.places);
	gp_sampler_free(smp);
	gp_root_close(&r.root);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return r.rc;
}
