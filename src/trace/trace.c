/* gpuprobe trace: sample a process until it exits, --seconds pass, or a
 * signal; stream JSON Lines; print a live line and a summary. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "grow.h"
#include "child.h"
#include "hostinfo.h"
#include "identity.h"
#include "runlibs.h"
#include "ras.h"
#include "rasparse.h"
#include "opts.h"
#include "parse.h"
#include "procfs.h"
#include "result.h"
#include "series.h"
#include "trace_text.h"
#include "target_text.h"
#include "verdict.h"
#include "verdict_text.h"
#include "trace/flatwatch.h"
#include "sampler.h"
#include "ptstop.h"
#include "tree.h"
#include "forks.h"
#include "sockflow.h"
#include "proctab.h"
#include "stuck.h"
#include "kmsg.h"
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
#include <sys/wait.h>
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

enum stacks_mode { STACKS_HOT, STACKS_ALL, STACKS_NONE };
static const char *const stacks_modes[] = { "hot", "all", "none", NULL };

struct trace_opts {
	int pid;
	const char *name;
	char **cmd;            /* after "--" */
	double interval, seconds, kill_after;
	double flat_before;    /* --flat-before: no progress for this long before the trace */
	const char *proc_root;
	bool nvml, reopen, children;
	int ras_port;          /* NCCL's RAS service on 127.0.0.1; 0: not asked */
	bool ras_given;        /* --ras-port given: asked even with no NCCL seen mapped */
	char fail_on[8][24];
	int nfail_on;
	enum stacks_mode stacks;
	struct gp_out_args out;
	struct gp_stack_args st;     /* --hot-threshold (CPU%), --no-kernel-stacks */
	struct gp_judge_args judge;  /* --hang-after, --slow-rate */
	struct gp_operand_args operand;
};

static const struct argp_option trace_options[] = {
	{ NULL, 0, NULL, 0, "Target:", 1 },
	{ "name", 'n', "NAME", 0, "Trace the process whose comm or argv[0] is NAME (several: "
	  "the one the others descend from)", 1 },
	{ "no-children", OPT_NO_CHILDREN, NULL, 0,
	  "Follow the target alone, not its descendants (they are followed by default)", 1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "interval", 'i', "SECONDS", 0, "Time between samples (default 1; at least 0.05)", 2 },
	{ "seconds", 's', "SECONDS", 0, "Stop after SECONDS (default: until the target exits)", 2 },
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
	GP_OPT_SECONDS('i', struct trace_opts, interval, 50 * GP_NS_MS, 3600 * GP_NS_S),
	GP_OPT_SECONDS('s', struct trace_opts, seconds, 1, 365 * 86400 * GP_NS_S),
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
	case 'n':
		if (!*arg)
			argp_error(state, "--name needs a non-empty NAME");
		o->name = arg;
		break;
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
	int targets = !!o->pid + !!o->name + !!o->cmd;
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

/* ---- the loop -------------------------------------------------------- */

struct run {
	struct trace_opts *o;
	struct gp_root root;
	int pid;
	bool is_child;
	struct gp_child child;        /* the command (is_child) */
	struct gp_result *out;
	bool out_stdout;
	unsigned long lines;
	struct gp_series series;
	bool live;
	unsigned long late;
	/* The sampling thread's own schedstat at t = 0 (self_sched): its
	 * CPU time, and its time runnable but waiting for a CPU -- a
	 * saturated machine starves a tracer at nice 0 (10 000 busy threads
	 * on 16 CPUs: one sample in 83 s, bench/results/
	 * 2026-12-05-device-h100.md). */
	bool have_sched0;
	uint64_t run0_ns, wait0_ns;
	long page_size;
	int rc;
	struct gp_tree *tree;
	struct session { int pid; struct gp_stacks *stk; bool seen; } *sess; /* one a process */
	size_t nsess, capsess;
	bool stacks_on;               /* false: --stacks none, or a replayed root */
	struct gp_flat_watch watch;   /* when output last moved */
	bool hang_snapped;            /* this flat stretch has its snapshot */
	struct gp_kmsg *kmsg;         /* the kernel log, followed (NULL: not readable) */
	char kmsg_why[200];
	struct gp_kmsg_note notes[GP_KMSG_NOTES];
	size_t nnotes;
	struct announced { int pid; char comm[16]; } *announced; /* descendants with a `target`
				       line, and the name it gave */
	size_t nannounced, capannounced;
	bool announced_once;     /* the first sample's descendants are announced (with still_s) */
	struct libs_seen { int pid; char *paths; } *libs; /* runtimes last written, a process */
	size_t nlibs, caplibs;
	double libs_checked;          /* when the runtimes were last looked at */
	double ras_checked;           /* when NCCL's RAS was last asked; < 0: never */
	bool ras_stop;                /* it accepted and did not answer: only the end read */
	struct gp_ras_note ras;       /* the `ras` lines written, for the verdict */
	struct gp_stuck stuck;        /* the last hang/end snapshot */
	struct gp_proctab procs;      /* the tree's processes, as the lines name them */
	struct place *places;         /* last stacked place, --stacks all (new_place) */
	size_t nplaces, capplaces;
	unsigned long tick;           /* samples taken */
	bool hinted;
	char comm[64];                /* the target's name, as last announced */
	struct strbuf cmdline;        /* its command line as shell words, as last announced */
	struct strbuf started_as;     /* the first one, when an exec changed it */
	struct strbuf where;          /* its namespaces and container (gp_target_where) */
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
			gp_err_errno(errno, r->o->out.path, "cannot write the result");
		r->rc = GP_EXIT_ERROR;
	} else {
		r->lines++;
	}
}

static void write_line_raws(struct run *r, json_t *line, const struct gp_raw *raws, size_t n)
{
	if (!r->out) {
		json_decref(line);
		return;
	}
	if (gp_result_write_raws(r->out, line, raws, n) < 0) {
		if (r->rc == 0)
			gp_err_errno(errno, r->o->out.path, "cannot write the result");
		r->rc = GP_EXIT_ERROR;
	} else {
		r->lines++;
	}
}

static void write_line(struct run *r, json_t *line)
{
	write_line_raw(r, line, NULL, NULL, 0);
}

/* The command's exit, taken only when it is one (child.h); a late
 * ptrace stop seen instead is let go by its owner (ptstop.h). */
static bool reap(struct run *r)
{
	return r->is_child && gp_child_reap(&r->child, gp_ptstop_drain);
}

static bool wait_child(struct run *r, double secs)
{
	return gp_child_wait(&r->child, secs, gp_ptstop_drain);
}

/* SIG to the command and its descendants too: a shell killed alone
 * leaves its children running, and gpuprobe lets nothing it started
 * outlive it.  Only processes seen in its tree this trace. */
static void kill_tree(const struct run *r, int sig)
{
	kill(r->pid, sig);
	int pid;
	for (size_t m = 0; r->tree && gp_tree_member(r->tree, m, &pid, NULL, NULL); m++)
		if (pid != r->pid)
			kill(pid, sig);
}

static void stop_child(struct run *r, int sig, bool forward)
{
	if (!r->is_child || reap(r))
		return;
	if (forward)
		kill_tree(r, sig);
	if (!wait_child(r, r->o->kill_after)) {
		gp_warn("pid %d did not exit %.1f s after signal %d: sending SIGKILL",
			r->pid, r->o->kill_after, sig);
		kill_tree(r, SIGKILL);
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

/* --stacks all: where each thread was last stacked, in an open-addressed
 * table keyed by tid and starttime (a reused tid is a new thread, not
 * the dead one's heir); an entry not seen for a whole tick is swept when
 * the table grows.  It was an array scanned linearly for every thread of
 * every tick, that kept every tid it ever saw. */
struct place {
	int tid;              /* 0: empty */
	uint64_t start;       /* the thread's starttime */
	uint64_t key;         /* place_key() */
	unsigned long tick;   /* the last tick it was seen */
};

static size_t place_slot(const struct place *tab, size_t cap, int tid, uint64_t start)
{
	size_t h = ((uint64_t)(unsigned)tid * 0x9e3779b97f4a7c15ull ^ start) & (cap - 1);
	while (tab[h].tid && !(tab[h].tid == tid && tab[h].start == start))
		h = (h + 1) & (cap - 1);
	return h;
}

/* Rebuilds the table at twice the size, or the same when half of it was
 * dead threads; false when out of memory. */
static bool places_rehash(struct run *r)
{
	size_t live = 0;
	for (size_t i = 0; i < r->capplaces; i++)
		live += r->places[i].tid && r->places[i].tick + 1 >= r->tick;
	size_t cap = r->capplaces ? r->capplaces : 256;
	while (live * 2 >= cap)
		cap *= 2;
	struct place *tab = calloc(cap, sizeof *tab);
	if (!tab)
		return false;
	for (size_t i = 0; i < r->capplaces; i++) {
		const struct place *p = &r->places[i];
		if (p->tid && p->tick + 1 >= r->tick)
			tab[place_slot(tab, cap, p->tid, p->start)] = *p;
	}
	free(r->places);
	r->places = tab;
	r->capplaces = cap;
	r->nplaces = live;
	return true;
}

/* --stacks all: true when the thread waits somewhere it was not stacked
 * in (and remembers the place). */
static bool new_place(struct run *r, const struct gp_thread *th)
{
	if ((r->nplaces + 1) * 2 > r->capplaces && !places_rehash(r))
		return false;
	uint64_t key = place_key(th);
	struct place *p = &r->places[place_slot(r->places, r->capplaces, th->tid, th->st.starttime)];
	if (p->tid) {
		p->tick = r->tick;
		if (p->key == key)
			return false;
		p->key = key;
		return true;
	}
	*p = (struct place){ th->tid, th->st.starttime, key, r->tick };
	r->nplaces++;
	return true;
}

/* The stacks session of process pid, opened at its first use. */
static struct gp_stacks *session(struct run *r, int pid)
{
	for (size_t i = 0; i < r->nsess; i++)
		if (r->sess[i].pid == pid) {
			r->sess[i].seen = true;
			return r->sess[i].stk;
		}
	if (r->nsess == r->capsess) {
		size_t nc = r->capsess ? 2 * r->capsess : 8;
		struct session *ns = realloc(r->sess, nc * sizeof *ns);
		if (!ns)
			return NULL;
		r->sess = ns;
		r->capsess = nc;
	}
	struct gp_stacks *stk = gp_stacks_open(pid, (r->o->st.kstacks ? 0 : GP_STACKS_NO_KERNEL) |
					       (r->o->st.no_python ? GP_STACKS_NO_PYTHON : 0));
	if (!stk)
		return NULL;
	r->sess[r->nsess++] = (struct session){ pid, stk, true };
	return stk;
}

static void session_mark(struct run *r, int pid)
{
	for (size_t i = 0; i < r->nsess; i++)
		if (r->sess[i].pid == pid)
			r->sess[i].seen = true;
}

static const char *hot_or_all(const struct run *r, size_t k, const struct gp_thread *th, size_t n)
{
	(void)k;
	for (size_t i = 0; i < n; i++)
		if (th[i].cpu_pct >= r->o->st.hot_pct)
			return r->o->stacks == STACKS_ALL ? "hot+place" : "hot";
	return "place";
}

/* Sessions of processes that left the tree are closed. */
static void sessions_sweep(struct run *r)
{
	for (size_t i = 0; i < r->nsess;) {
		if (r->sess[i].seen) {
			r->sess[i].seen = false;
			i++;
			continue;
		}
		gp_stacks_close(r->sess[i].stk);
		r->sess[i] = r->sess[--r->nsess];
	}
}

/* One `stacks` line of process pid: tids (NULL: every thread), why. */
static void snapshot(struct run *r, int pid, struct gp_sampler *smp, double t, const int *tids,
		     size_t k, const char *why, struct gp_point *pt, bool keep)
{
	struct gp_stacks *stk = session(r, pid);
	json_t *line = NULL;
	uint64_t before = 0, after = 0;
	bool rss = smp && gp_sampler_rss_file_now(smp, &before);
	int rc = stk ? gp_stacks_snapshot(stk, t, tids, k, &line) : -1;
	if (rss && gp_sampler_rss_file_now(smp, &after) && after > before)
		gp_sampler_add_ours(smp, after - before);
	if (rc != 0 || !line)
		return;
	json_object_set_new(line, "why", json_string(why));
	if (pt && pt->top_tid && pt->top_pid == pid)
		gp_stacks_top_frame(line, pt->top_tid, pt->top_frame, sizeof pt->top_frame);
	if (pt && pt->top2_tid && pt->top2_pid == pid)
		gp_stacks_top_frame(line, pt->top2_tid, pt->top2_frame, sizeof pt->top2_frame);
	if (keep)
		gp_stuck_add(&r->stuck, line);
	write_line(r, line);
	const char *hint = gp_stacks_hint(stk);
	if (hint && !r->hinted) {
		gp_hint("%s", hint);
		r->hinted = true;
	}
}

/* The stacks of this tick: hot threads every tick; with --stacks all,
 * every other thread once per place it waits in.  Writes a `stacks` line
 * a process and notes the busiest threads' hot frames in the point. */
static void take_stacks(struct run *r, double t, struct gp_point *pt)
{
	r->tick++;
	if (!r->stacks_on)
		return;
	int pid;
	struct gp_sampler *smp;
	for (size_t m = 0; gp_tree_member(r->tree, m, &pid, NULL, &smp); m++) {
		size_t n;
		const struct gp_thread *th = gp_sampler_threads(smp, &n);
		int *tids = malloc((n ? n : 1) * sizeof *tids);
		if (!tids)
			return;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			bool hot = th[i].cpu_pct >= r->o->st.hot_pct;
			bool stack = hot;
			if (r->o->stacks == STACKS_ALL && !hot && th[i].st.state != 'R')
				stack = new_place(r, &th[i]);
			if (stack)
				tids[k++] = th[i].tid;
		}
		if (k)
			snapshot(r, pid, smp, t, tids, k, hot_or_all(r, k, th, n), pt, false);
		else
			session_mark(r, pid);
		free(tids);
	}
	sessions_sweep(r);
}

/* A descendant's runtimes after an exec: its libs entry replaced. */
static void exec_libs(struct run *r, int pid, json_t *target)
{
	char *paths = gp_runlib_paths(&r->root, pid);
	if (!paths)
		return;
	json_object_set_new(target, "runtime_libs", gp_runlib_json(&r->root, pid, paths));
	for (size_t i = 0; i < r->nlibs; i++)
		if (r->libs[i].pid == pid) {
			free(r->libs[i].paths);
			r->libs[i].paths = paths;
			return;
		}
	free(paths);
}

/* Before the snapshot the verdict compares the processes by: a `target`
 * line, how "exec", for each one whose program or job changed since its
 * last (an exec that kept the name escapes announce's watch: a pyenv
 * shim is a bash script named python3 that execs python3). */
static void refresh_targets(struct run *r, double t)
{
	int pid;
	for (size_t m = 0; gp_tree_member(r->tree, m, &pid, NULL, NULL); m++) {
		json_t *ident = gp_target_identity(&r->root, pid);
		if (!ident || !gp_proctab_changed(&r->procs, ident)) {
			json_decref(ident);
			continue;
		}
		json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid, "t", t,
					   "how", "exec");
		json_object_update_missing(target, ident);
		json_decref(ident);
		exec_libs(r, pid, target);
		gp_proctab_target(&r->procs, target);
		write_line(r, target);
	}
}

/* Every thread of every traced process, once: the stacks the verdict
 * carries ("hang": a phase just went flat for --hang-after; "end"). */
static void snapshot_all(struct run *r, double t, const char *why)
{
	if (!r->stacks_on)
		return;
	refresh_targets(r, t);
	int pid;
	struct gp_sampler *smp;
	for (size_t m = 0; gp_tree_member(r->tree, m, &pid, NULL, &smp); m++)
		snapshot(r, pid, smp, t, NULL, 0, why, NULL, true);
}

/* The runtime libraries PID maps, into its target line, remembered so
 * that a library loaded later (dlopen of libnccl) gets its own line. */
static void target_libs(struct run *r, int pid, json_t *target)
{
	char *paths = gp_runlib_paths(&r->root, pid);
	if (!paths)
		return;
	json_object_set_new(target, "runtime_libs", gp_runlib_json(&r->root, pid, paths));
	if (!gp_grow(&r->libs, &r->caplibs, r->nlibs + 1, sizeof *r->libs, 16)) {
		free(paths);
		return;
	}
	r->libs[r->nlibs++] = (struct libs_seen){ pid, paths };
}

/* A `runtime_libs` line for each process whose mapped runtimes differ
 * from what its last line said.  Every 5 s and at the end, not every
 * tick: a process of a large job maps thousands of files, and its maps
 * are read whole (the build-ids only when the set changed). */
static void check_libs(struct run *r, double t, bool now)
{
	if (!now && t - r->libs_checked < 5)
		return;
	r->libs_checked = t;
	int pid;
	for (size_t m = 0; gp_tree_member(r->tree, m, &pid, NULL, NULL); m++) {
		size_t i = 0;
		while (i < r->nlibs && r->libs[i].pid != pid)
			i++;
		if (i == r->nlibs)
			continue; /* no target line yet: announce() writes it */
		char *paths = gp_runlib_paths(&r->root, pid);
		if (!paths || !strcmp(paths, r->libs[i].paths)) {
			free(paths);
			continue;
		}
		free(r->libs[i].paths);
		r->libs[i].paths = paths;
		json_t *line = json_pack("{s:s, s:f, s:i, s:o}", "type", "runtime_libs", "t", t,
					 "pid", pid, "libs", gp_runlib_json(&r->root, pid, paths));
		write_line(r, line);
	}
}

/* NCCL's RAS service (gpu/ras.h): 2 s into the trace (NCCL starts it
 * when the job initializes), every 5 s, and when forced (a hang's
 * snapshot, the end); once a process maps NCCL or RCCL, or always with
 * --ras-port (a port that is no RAS answers garbage: said, never fatal).  A `ras` line when it read counts, or when the
 * state changed: "not listening" is said once.  A service that accepted
 * and then did not answer, or answered garbage, is asked only once more,
 * at the end: each such read costs up to GP_RAS_BUDGET_S. */
/* A process of the tree maps NCCL or RCCL (the runtimes check_libs saw):
 * only then is RAS worth a connection, unless --ras-port asked. */
static bool tree_maps_nccl(const struct run *r)
{
	for (size_t i = 0; i < r->nlibs; i++)
		if (strstr(r->libs[i].paths, "libnccl") || strstr(r->libs[i].paths, "librccl"))
			return true;
	return false;
}

static void check_ras(struct run *r, double t, bool force)
{
	if (!r->o->ras_port || !r->root.live || (!r->o->ras_given && !tree_maps_nccl(r)))
		return;
	if (!force && (r->ras_stop || t < 2 || (r->ras_checked >= 0 && t - r->ras_checked < 5)))
		return;
	if (force && r->ras_checked == t)
		return; /* this tick's read was just taken */
	r->ras_checked = t;
	json_t *line = gp_ras_read(r->o->ras_port, t, GP_RAS_BUDGET_S);
	const char *state = json_string_value(json_object_get(line, "state"));
	const char *why = json_string_value(json_object_get(line, "why"));
	if (strcmp(state, "ok") && strcmp(state, "absent"))
		r->ras_stop = true;
	if (strcmp(state, "ok") && r->ras.s.reads && !strcmp(state, r->ras.s.state)
	    && !strncmp(why ? why : "", r->ras.s.why, sizeof r->ras.s.why - 1)) {
		json_decref(line);
		return;
	}
	gp_ras_note_add(&r->ras, line);
	write_line(r, line);
}

/* A `target` line for each descendant as it appears (DESIGN: one per
 * process), after the sample that first holds it; one more, how "exec",
 * when its name changed since (a shell's child announced before its exec
 * was the shell: issue 29 tells a job's ranks by what they run and their
 * environment, which the exec sets). */
static void announce(struct run *r, double t)
{
	int pid;
	const char *comm;
	for (size_t m = 0; gp_tree_member(r->tree, m, &pid, &comm, NULL); m++) {
		if (pid == r->pid)
			continue;
		size_t i = 0;
		while (i < r->nannounced && r->announced[i].pid != pid)
			i++;
		bool exec = i < r->nannounced && comm && comm[0] && strcmp(comm, r->announced[i].comm);
		if (i < r->nannounced && !exec)
			continue;
		if (!exec) {
			if (!gp_grow(&r->announced, &r->capannounced, r->nannounced + 1, sizeof *r->announced, 16))
				return;
			r->announced[r->nannounced++].pid = pid;
		}
		gp_strlcpy(r->announced[i].comm, comm ? comm : "", sizeof r->announced[i].comm);
		json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid,
					   "t", t, "how", exec ? "exec" : "descendant");
		json_t *ident = gp_target_identity(&r->root, pid);
		if (ident)
			json_object_update_missing(target, ident);
		json_decref(ident);
		if (!exec && !r->is_child && !r->announced_once)
			gp_target_still(&r->root, pid, target);
		if (exec)
			exec_libs(r, pid, target);
		else
			target_libs(r, pid, target);
		gp_proctab_target(&r->procs, target);
		write_line(r, target);
	}
	r->announced_once = true;
}

/* An empty argv read from /proc, or procps's "-" for one: the process
 * was mid-exec (the new image's arguments are placed after the point of
 * no return, fs/binfmt_elf.c: begin_new_exec, then create_elf_tables),
 * or a kernel thread. */
static bool argv_unread(const json_t *argv)
{
	size_t n = json_array_size(argv);
	const char *a0 = json_string_value(json_array_get(argv, 0));
	return n == 0 || (n == 1 && a0 && (!strcmp(a0, "-") || !*a0));
}

/* The target renamed since its last `target` line: mostly an exec (`sh
 * -c 'exec xz ...'` becomes xz after the line was written): one more
 * `target` line for the same pid, `how` "exec", or "renamed" when its
 * arguments are the same (doc/result-format.md),
 * so that the report names what ran.  A name read mid-exec with no
 * arguments yet is looked at again at the next sample. */
static void follow_exec(struct run *r, double t)
{
	int pid;
	const char *comm;
	if (!gp_tree_member(r->tree, 0, &pid, &comm, NULL) || pid != r->pid || !comm[0]
	    || !strcmp(comm, r->comm))
		return;
	json_t *ident = gp_target_identity(&r->root, pid);
	if (!ident || argv_unread(json_object_get(ident, "cmdline"))) {
		json_decref(ident);
		return;
	}
	/* The same arguments under a new name: prctl(PR_SET_NAME), not an
	 * exec (the demo's workloads rename themselves). */
	struct strbuf words = STRBUF_INIT;
	gp_target_words(&words, ident, 64);
	bool renamed = !strcmp(words.buf, r->cmdline.buf);
	json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid,
				   "t", t, "how", renamed ? "renamed" : "exec");
	json_object_update_missing(target, ident);
	json_decref(ident);
	gp_proctab_target(&r->procs, target);
	snprintf(r->comm, sizeof r->comm, "%s", comm);
	if (!renamed && !r->started_as.len) {
		struct strbuf first = r->cmdline;
		r->cmdline = r->started_as;
		r->started_as = first;
	}
	strbuf_release(&r->cmdline);
	r->cmdline = words;
	write_line(r, target);
}

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
			write_line(r, line);
		}
		if (n < 16)
			break;
	}
	if (r->kmsg && n < 0) {
		gp_kmsg_close(r->kmsg);
		r->kmsg = NULL;
	}
}

/* This thread's time on a CPU and waiting in a run queue, ns
 * (/proc/thread-self/schedstat, CONFIG_SCHED_INFO). */
static bool self_sched(uint64_t *run_ns, uint64_t *wait_ns)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	uint64_t pcount;
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return gp_parse_schedstat(buf, run_ns, wait_ns, &pcount);
}

/* The processes this sample listed, and those it no longer did, into
 * r->procs: as the loader reads them from the sample line (its pid, its
 * procs, its died). */
static void note_members(struct run *r, double t, const json_t *line)
{
	int pid;
	struct gp_sampler *s;
	for (size_t m = 0; gp_tree_member(r->tree, m, &pid, NULL, &s); m++) {
		gp_proctab_seen(&r->procs, pid, t);
		gp_proctab_ran(&r->procs, pid, t, s ? gp_sampler_main_ran(s) : -1);
		bool ctx;
		uint8_t gw;
		if (s) {
			gp_sampler_gpu(s, &ctx, &gw);
			gp_proctab_gpu(&r->procs, pid, ctx, gw);
		}
	}
	gp_proctab_sample_end(&r->procs, t, json_object_get(line, "died"));
}

static const char *loop(struct run *r, double t0, const sigset_t *waitset)
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
		gp_ptstop_drain();
		struct gp_raw raws[2];
		size_t nraws;
		enum gp_sample_rc rc = gp_tree_take(r->tree, t, &cur, &line, raws, &nraws, &why);
		gp_ptstop_drain(); /* a late stop may have come meanwhile */
		if (rc == GP_SAMPLE_GONE) {
			reap(r);
			return why;
		}
		if (rc != GP_SAMPLE_OK)
			return "exited";
		note_members(r, t, line);
		write_line_raws(r, line, raws, nraws);
		announce(r, t);
		follow_exec(r, t);
		check_libs(r, t, false);
		check_ras(r, t, false);
		drain_kmsg(r);
		take_stacks(r, t, &cur);
		/* As soon as a phase has been flat for --hang-after: the
		 * stacks of every thread, once for this flat stretch. */
		if (gp_flat_watch(&r->watch, &cur))
			r->hang_snapped = false;
		else if (!r->hang_snapped && t - r->watch.since >= r->o->judge.hang_after) {
			snapshot_all(r, t, "hang");
			check_ras(r, t, true);
			r->hang_snapped = true;
		}
		gp_series_push(&r->series, &cur);
		if (r->live)
			gp_render_live_line(stdout, have_prev ? &prev : NULL, &cur, r->page_size);
		prev = cur;
		have_prev = true;
		if (r->rc)
			return "output error";

		/* Absolute deadlines: drift never accumulates.  A sample that
		 * overran skips the ticks it missed.  (Taking a tick missed by
		 * less than half an interval at once instead put two samples
		 * in one slot under load: tests/e2e/trace-interval-drift.sh,
		 * 2026-12-05.) */
		double now = gp_mono_now() - t0;
		unsigned long next = k + 1;
		while (next * interval <= now)
			next++;
		/* Late ticks are the ones skipped within --seconds: a last
		 * sample that overran the end skipped no tick (2 s at 0.1 s
		 * under two burners read 18 samples + 4 late of 21 ticks). */
		unsigned long skipped_to = next;
		if (r->o->seconds > 0) {
			unsigned long ticks = (unsigned long)(r->o->seconds / interval + 1e-9) + 1;
			if (skipped_to > ticks)
				skipped_to = ticks;
		}
		r->late += skipped_to > k + 1 ? skipped_to - k - 1 : 0;
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
				/* A stack's late stop (ptstop.h: let go at
				 * once), or the command's exit. */
				gp_ptstop_drain();
				if (reap(r))
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
				o->name, n, root);
			o->pid = root;
			free(pids);
			return 0;
		}
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

/* The /proc to read, and a PID target that is not gpuprobe itself. */
static int open_root(struct run *r)
{
	struct trace_opts *o = r->o;
	if (gp_root_open(&r->root, o->proc_root) < 0) {
		gp_err_errno(errno, o->proc_root, "cannot open the --proc-root directory");
		return -1;
	}
	if ((o->name && resolve_name(o) < 0)
	    || (o->pid && o->pid == getpid() && r->root.live
		&& (gp_err(NULL, "pid %d is gpuprobe itself", o->pid), true))) {
		gp_root_close(&r->root);
		return -1;
	}
	return 0;
}

static void block_signals(sigset_t *waitset, sigset_t *orig)
{
	sigemptyset(waitset);
	sigaddset(waitset, SIGINT);
	sigaddset(waitset, SIGTERM);
	sigaddset(waitset, SIGHUP);
	sigaddset(waitset, SIGCHLD);
	sigprocmask(SIG_BLOCK, waitset, orig);
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

/* After SIGKILL (or an exec that failed: the child _exits), the child is
 * reaped within 5 s or left behind with a warning: a child stuck in the
 * kernel (D state) must not hang gpuprobe in a blocking waitpid. */
static void reap_killed(struct run *r)
{
	if (!wait_child(r, 5))
		gp_warn("pid %d did not exit 5 s after SIGKILL: left behind", r->pid);
}

/* A command that will not be traced after all: killed before its exec. */
static void abandon(struct run *r)
{
	if (!r->is_child)
		return;
	kill(r->child.pid, SIGKILL);
	close(r->child.go_fd);
	close(r->child.err_fd);
	reap_killed(r);
}

/* The `target` line; r->comm gets the target's name. */
static void write_target(struct run *r)
{
	struct trace_opts *o = r->o;
	json_t *target = json_pack("{s:s, s:i}", "type", "target", "pid", o->pid);
	json_t *ident = gp_target_identity(&r->root, o->pid);
	if (ident)
		json_object_update(target, ident);
	json_decref(ident);
	/* A command read back mid-exec has no arguments yet: the ones
	 * gpuprobe gave it are exact. */
	if (r->is_child && argv_unread(json_object_get(target, "cmdline"))) {
		json_t *a = json_array();
		for (char **p = o->cmd; *p; p++)
			json_array_append_new(a, gp_json_string(*p));
		json_object_set_new(target, "cmdline", a);
	}
	json_object_set_new(target, "how", json_string(r->is_child ? "command" : o->name ? "name" : "pid"));
	if (!r->is_child)
		gp_target_still(&r->root, o->pid, target);
	target_libs(r, o->pid, target);
	json_t *jc = json_object_get(target, "comm");
	if (json_is_string(jc))
		snprintf(r->comm, sizeof r->comm, "%s", json_string_value(jc));
	gp_target_words(&r->cmdline, target, 64);
	gp_target_where(&r->where, target);
	gp_proctab_target(&r->procs, target);
	write_line(r, target);
}

/* The exit line, the verdict (a pure function of the compact series and
 * the stacks taken at the hang), the summary printed for people. */
static void finish(struct run *r, const char *reason, double t_end, const char *comm)
{
	struct trace_opts *o = r->o;
	struct gp_trace_end end = { .pid = o->pid, .comm = comm, .reason = reason,
				    .cmdline = r->cmdline.len ? r->cmdline.buf : NULL,
				    .started_as = r->started_as.len ? r->started_as.buf : NULL,
				    .where = r->where.len ? r->where.buf : NULL,
				    .output = r->out_stdout ? NULL : o->out.path,
				    .late = r->late, .page_size = r->page_size };
	json_t *ex = json_pack("{s:s, s:f, s:s}", "type", "exit", "t", t_end, "reason", reason);
	if (r->is_child && r->child.reaped) {
		end.have_status = true;
		if (WIFEXITED(r->child.status)) {
			end.status = WEXITSTATUS(r->child.status);
			json_object_set_new(ex, "status", json_integer(end.status));
			json_object_set_new(ex, "signal", json_null());
		} else if (WIFSIGNALED(r->child.status)) {
			end.signal = WTERMSIG(r->child.status);
			json_object_set_new(ex, "status", json_null());
			json_object_set_new(ex, "signal", json_integer(end.signal));
		}
	} else {
		json_object_set_new(ex, "status", json_null());
		json_object_set_new(ex, "signal", json_null());
	}
	struct gp_sampler_totals tot;
	gp_tree_totals(r->tree, &tot);
	json_object_set_new(ex, "samples", json_integer((json_int_t)tot.samples));
	json_object_set_new(ex, "threads_vanished", json_integer((json_int_t)tot.vanished));
	json_object_set_new(ex, "tids_reused", json_integer((json_int_t)tot.reused));
	json_object_set_new(ex, "late_ticks", json_integer((json_int_t)r->late));
	uint64_t run_ns, wait_ns;
	if (r->have_sched0 && self_sched(&run_ns, &wait_ns) && run_ns >= r->run0_ns && wait_ns >= r->wait0_ns) {
		end.have_sampler = true;
		end.sampler_cpu_s = (double)(run_ns - r->run0_ns) / 1e9;
		end.sampler_wait_s = (double)(wait_ns - r->wait0_ns) / 1e9;
		end.span_s = t_end;
		json_object_set_new(ex, "sampler", json_pack("{s:f, s:f}", "cpu_s", end.sampler_cpu_s,
							     "runq_wait_s", end.sampler_wait_s));
	}
	/* Where socket bytes came from (tracer/sockflow.h). */
	struct gp_sockflow *sf = gp_sockflow_get();
	unsigned long sf_reads, sf_ents, sf_dropped;
	double sf_ms;
	gp_sockflow_cost(sf, &sf_reads, &sf_ents, &sf_dropped, &sf_ms);
	json_object_set_new(ex, "sockets", sf ? json_pack("{s:s, s:I, s:I, s:I, s:f}", "source", "bpf",
		"reads", (json_int_t)sf_reads, "entries", (json_int_t)sf_ents,
		"dropped", (json_int_t)sf_dropped, "ms", sf_ms)
		: json_pack("{s:s, s:s}", "source", "sock_diag", "why", gp_sockflow_why()));
	struct gp_forks_counts fc;
	const char *fwhy;
	end.have_forks = gp_tree_forks(r->tree, &fc, &fwhy);
	if (end.have_forks) {
		end.forks_started = fc.started;
		end.forks_exited = fc.exited;
		end.forks_lost = fc.lost;
		json_object_set_new(ex, "forks", json_pack("{s:I, s:I, s:I}", "started", (json_int_t)fc.started,
				    "exited", (json_int_t)fc.exited, "lost", (json_int_t)fc.lost));
	} else {
		end.forks_why = fwhy;
		json_object_set_new(ex, "forks_unseen", json_string(fwhy));
	}
	write_line(r, ex);
	end.lines = r->lines;
	end.lost_threads = tot.vanished;
	end.kstack_denied = tot.kstack_denied;
	end.syscall_denied = tot.syscall_denied;
	end.io_denied = tot.io_denied;

	/* The verdict: a pure function of the compact series. */
	struct gp_verdict_opts vo = { .hang_after = o->judge.hang_after, .slow_rate = (double)o->judge.slow_rate,
				      .flat_before = o->flat_before,
				      .page_size = r->page_size, .end_reason = reason,
				      .have_status = end.have_status, .status = end.status,
				      .signal = end.signal,
				      .kstacks_seen = o->st.kstacks && !tot.kstack_denied && tot.kstacks_read,
				      .stuck = r->stuck.t >= 0 ? &r->stuck : NULL,
				      .procs = &r->procs,
				      .kmsg = r->notes, .nkmsg = r->nnotes,
				      .kmsg_why = r->kmsg ? NULL : r->kmsg_why,
				      .ras = r->ras.s.reads ? &r->ras.s : NULL };
	struct gp_verdict *verdict = malloc(sizeof *verdict);
	if (verdict) {
		gp_verdict_compute(r->series.pt, r->series.n, &vo, verdict);
		write_line(r, gp_verdict_json(verdict));
		end.lines = r->lines;
		for (int i = 0; i < o->nfail_on; i++)
			if (!strcmp(o->fail_on[i], gp_class_name(verdict->cls)) && r->rc == 0)
				r->rc = GP_EXIT_VERDICT;
	}

	if (r->out && gp_result_close(r->out) < 0 && (r->rc == 0 || r->rc == GP_EXIT_VERDICT)) {
		gp_err_errno(errno, o->out.path, "cannot write the result");
		r->rc = GP_EXIT_ERROR;
	}
	r->out = NULL;
	FILE *human = r->out_stdout ? stderr : stdout;
	gp_render_trace_summary(human, &r->series, &end);
	if (verdict)
		gp_verdict_print(human, verdict);
	free(verdict);
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
	for (size_t i = 0; i < r->nsess; i++)
		gp_stacks_close(r->sess[i].stk);
	free(r->sess);
	free(r->announced);
	gp_proctab_free(&r->procs);
	for (size_t i = 0; i < r->nlibs; i++)
		free(r->libs[i].paths);
	free(r->libs);
	gp_kmsg_close(r->kmsg);
	free(r->places);
	gp_tree_free(r->tree);
}

/* Once more at the end, while the tree is still there: the stacks the
 * verdict carries when no hang snapshot was taken, or a newer one of the
 * same flat stretch; the runtimes and RAS.  Not after Ctrl-C when this
 * flat stretch has its hang snapshot: the signal has reached the tree by
 * now (from the terminal, or forwarded by stop_child), and the stacks
 * show its exit -- zombies, a KeyboardInterrupt unwinding -- not the hang
 * (the gloo ranks of tests/e2e/trace-gloo-ranks.sh: both leaders Z, the
 * ranks unnamed).  Then the command is ended or waited for. */
static void last_look(struct run *r, const char *reason, double t_end)
{
	bool dying = !strcmp(reason, "interrupted") && r->hang_snapped;
	if (strcmp(reason, "exited") != 0 && strcmp(reason, "output error") != 0
	    && strcmp(reason, "pid reused") != 0 && !dying) {
		snapshot_all(r, t_end, "end");
		check_libs(r, t_end, true);
		check_ras(r, t_end, true);
	}
	if (r->is_child && !r->child.reaped) {
		if (!strcmp(reason, "time limit") || !strcmp(reason, "output error"))
			stop_child(r, SIGTERM, true);
		else
			wait_child(r, 2);
	}
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
	/* User stacks only of the live system (a replayed tree has no
	 * process to ptrace). */
	r->stacks_on = o->stacks != STACKS_NONE && r->root.live;
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
			gp_tree_mark_start(r->tree);
		if (e) {
			gp_err_errno(e, o->cmd[0], "cannot run the command");
			gp_kmsg_close(r->kmsg);
			r->kmsg = NULL;
			return -1;
		}
		*t0 = gp_mono_now();
	} else {
		gp_tree_prime(r->tree);
	}
	snprintf(r->comm, sizeof r->comm, "?");
	write_target(r);
	if (!r->is_child)
		*t0 = gp_mono_now();
	return 0;
}

int cmd_trace(int argc, char **argv, const struct gp_global *g)
{
	struct trace_opts o = { .interval = 1.0, .kill_after = 5.0, .nvml = true, .children = true,
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
	block_signals(&waitset, &orig);

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

	struct gp_tree_opts to = { .root = &r.root, .pid = o.pid, .children = o.children,
				   .kstacks = o.st.kstacks, .no_nvml = !o.nvml, .reopen = o.reopen };
	r.tree = gp_tree_new(&to);
	gp_stuck_init(&r.stuck);
	if (!r.tree) {
		if (errno == ENOENT || errno == ESRCH)
			gp_err(NULL, "pid %d: no such process", o.pid);
		else
			gp_err_errno(errno, NULL, "pid %d: cannot read its /proc entry", o.pid);
		abandon(&r);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}

	if (open_output(&r) < 0) {
		abandon(&r);
		gp_tree_free(r.tree);
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
	write_line(&r, header);

	double t0 = 0;
	if (start_clock(&r, &t0) < 0) {
		reap_killed(&r);
		gp_tree_free(r.tree);
		gp_result_close(r.out);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		gp_root_close(&r.root);
		return GP_EXIT_ERROR;
	}

	r.have_sched0 = self_sched(&r.run0_ns, &r.wait0_ns);
	const char *reason = loop(&r, t0, &waitset);
	double t_end = gp_mono_now() - t0;
	last_look(&r, reason, t_end);
	finish(&r, reason, t_end, r.comm);
	run_free(&r);
	gp_root_close(&r.root);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return r.rc;
}
