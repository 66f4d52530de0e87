/* gpuprobe idle: open a GPU context with the least work possible in a
 * child, sit idle, and attribute any CPU it burns (seed 000: two ROCr
 * AsyncEventsLoop threads at ~91% each under WSL2).  Several --lib run
 * each runtime build in its own child and compare them side by side.
 *
 * The observer (this process) samples the child with the trace sampler
 * and unwinds its spinners with the stacks module; the child only opens
 * the runtime (idle_child.c). */
#include "config.h"
#include "dl.h"
#include "commands.h"
#include "error.h"
#include "parse.h"
#include "procfs.h"
#include "result.h"
#include "trace_text.h"
#include "sysinfo.h"
#include "tasks.h"
#include "timeutil.h"
#include "sampler.h"
#include "strbuf.h"
#include "stacks_hint.h"
#include "hostinfo.h"
#include "gpu_args.h"
#include "gpuact.h"
#include "grow.h"
#include "child.h"
#include "opts.h"

#include <argp.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { OPT_THRESHOLD = 0x100, OPT_TOUCH, OPT_NO_INTERRUPTS, OPT_CUDA_SCHED, OPT_BUSY_KERNEL,
       OPT_INIT_TIMEOUT };

struct idle_opts {
	int64_t seconds_ns, interval_ns, init_timeout_ns;
	double threshold;
	bool touch, no_interrupts, busy_kernel, json;
	const char *cuda_sched;
	struct gp_runtime_args run;
	struct gp_out_args out;
	struct gp_format_args fmt;
};

static const struct argp_option idle_options[] = {
	{ NULL, 0, NULL, 0, "Runtime:", 1 },
	{ "no-interrupts", OPT_NO_INTERRUPTS, NULL, 0,
	  "HSA: set HSA_ENABLE_INTERRUPT=0 in the child (the polling path WSL takes)", 1 },
	{ "touch", OPT_TOUCH, NULL, 0, "CUDA: also allocate and clear 1 MiB on the device", 1 },
	{ "cuda-sched", OPT_CUDA_SCHED, "MODE", 0,
	  "CUDA: primary context scheduling: auto (default), spin, yield, blocking", 1 },
	{ "busy-kernel", OPT_BUSY_KERNEL, NULL, 0,
	  "CUDA: keep a kernel running and wait on it (a positive control for --cuda-sched spin)", 1 },
	{ NULL, 0, NULL, 0, "Measurement:", 2 },
	{ "seconds", 's', "SECONDS", 0, "Sit idle this long (default 10)", 2 },
	{ "interval", 'i', "SECONDS", 0, "Sampling interval (default 1)", 2 },
	{ "threshold", OPT_THRESHOLD, "PCT", 0, "CPU% over which a thread is a spinner (default 10)", 2 },
	{ "init-timeout", OPT_INIT_TIMEOUT, "SECONDS", 0,
	  "Give up on a runtime that does not open within this long (default 60)", 2 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static const char *const cuda_scheds[] = { "auto", "spin", "yield", "blocking", NULL };

/* The options idle only stores (gp_set_option). */
static const struct gp_opt_field idle_fields[] = {
	GP_OPT_ON(OPT_TOUCH, struct idle_opts, touch),
	GP_OPT_ON(OPT_NO_INTERRUPTS, struct idle_opts, no_interrupts),
	GP_OPT_ON(OPT_BUSY_KERNEL, struct idle_opts, busy_kernel),
	GP_OPT_NS('s', struct idle_opts, seconds_ns, GP_NS_S, 86400 * GP_NS_S),
	GP_OPT_NS('i', struct idle_opts, interval_ns, 50 * GP_NS_MS, 60 * GP_NS_S),
	GP_OPT_NS(OPT_INIT_TIMEOUT, struct idle_opts, init_timeout_ns, GP_NS_S, 86400 * GP_NS_S),
	GP_OPT_END,
};

static error_t idle_parse(int key, char *arg, struct argp_state *state)
{
	struct idle_opts *o = state->input;
	switch (key) {
	case OPT_CUDA_SCHED:
		o->cuda_sched = cuda_scheds[gp_arg_choice(state, key, arg, cuda_scheds)];
		break;
	case OPT_THRESHOLD:
		/* One thread's share of one CPU. */
		o->threshold = gp_arg_percent(state, key, arg, 0, 100);
		break;
	case ARGP_KEY_END:
		if (o->interval_ns * 2 > o->seconds_ns)
			argp_error(state, "--seconds must hold two --interval at least");
		if (o->busy_kernel && o->run.rt == GP_RT_HSA)
			argp_error(state, "--busy-kernel is for CUDA");
		o->json = o->fmt.fmt == GP_FMT_JSON;
		break;
	default:
		return gp_set_option(state, idle_fields, key, arg, o);
	}
	return 0;
}

static const struct argp idle_argp = {
	idle_options, idle_parse, NULL,
	"Open a GPU context with the least work possible in a child process, sit idle "
	"for --seconds, and attribute the CPU it burns: per thread CPU% (user and "
	"system), voluntary switches per second, state, wchan, and for every thread "
	"over --threshold (a spinner) its symbolized stack.  The verdict is spin or "
	"quiet.  Several --lib compare runtime builds side by side.\v"
	"Seed 000: ROCr's AsyncEventsLoop threads spin at ~91% each when signals have "
	"no interrupt-backed events (WSL2's /dev/dxg, or HSA_ENABLE_INTERRUPT=0: "
	"--no-interrupts reproduces it on native Linux).\n\n"
	"Exit status: 0 measured (spin or quiet); 1 the runtime could not be opened, "
	"or the child could not be measured (with the reason); 64 usage error.",
	NULL, NULL, NULL,
};

/* ---- one run: a child with one runtime build ------------------------ */

/* One thread's counters, keyed by (tid, starttime): a tid the kernel
 * hands out again is another thread, with counters of its own (keyed by
 * tid alone, the second thread's counters minus the first's went
 * negative, unsigned: a phantom spinner of 6e11 % CPU, then ptraced). */
struct thread_acc {
	int tid;
	uint64_t starttime;    /* /proc/PID/task/TID/stat field 22 */
	char comm[16];
	char phase[16];        /* "before-context", "context", "handler", "later" */
	uint64_t run_ns0, run_ns1, ut0, ut1, st0, st1, vcsw0, vcsw1;
	double t0, t1;
	char state;
	char wchan[48];
	bool seen_first;
	bool have_sched;
	char frame[96];        /* the spinner's innermost frame */
	json_t *frames;        /* its whole stack */
};

struct run_result {
	const char *lib_arg;
	char rt[8];
	char lib[512], version[160], build[200], build_id[80];
	char error[1400];
	double seconds, cpu_pct;     /* whole process, over the idle window */
	struct thread_acc *th;
	size_t nth, capth;
	double last_t;               /* the last sample's time: a thread seen then is alive */
	unsigned nspin;
	bool no_interrupts, dxg;
	json_t *env;
	/* The GPU beside the host CPU (issue 13): a spin while the GPU idles
	 * is seed 000's shape; a busy GPU explains a busy waiting thread. */
	struct gp_gpu_activity gpu;	/* over the idle window */
	bool have_gpu;
};

static struct thread_acc *acc_find(struct run_result *rr, int tid, uint64_t starttime, bool add)
{
	for (size_t i = 0; i < rr->nth; i++)
		if (rr->th[i].tid == tid && rr->th[i].starttime == starttime)
			return &rr->th[i];
	if (!add)
		return NULL;
	if (!gp_grow(&rr->th, &rr->capth, rr->nth + 1, sizeof *rr->th, 32))
		return NULL;
	struct thread_acc *a = &rr->th[rr->nth++];
	memset(a, 0, sizeof *a);
	a->tid = tid;
	a->starttime = starttime;
	snprintf(a->phase, sizeof a->phase, "later");
	return a;
}

/* The thread that holds tid at the last sample (a spinner alive at the
 * end), or NULL. */
static struct thread_acc *acc_alive(struct run_result *rr, int tid)
{
	for (size_t i = 0; i < rr->nth; i++)
		if (rr->th[i].tid == tid && rr->th[i].seen_first && rr->th[i].t1 >= rr->last_t)
			return &rr->th[i];
	return NULL;
}

/* A thread's starttime, from /proc/PID/task/TID/stat; false when it is
 * gone. */
static bool thread_starttime(int pid, int tid, uint64_t *st)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = gp_pread_all(fd, buf, sizeof buf);
	close(fd);
	struct gp_stat s;
	if (n <= 0 || !gp_parse_stat(buf, &s))
		return false;
	*st = s.starttime;
	return true;
}

/* Names the threads that exist now as having appeared in `phase`. */
static void note_phase(struct run_result *rr, int pid, const char *phase)
{
	int *tids;
	size_t n;
	if (gp_list_tids(pid, &tids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t st;
		if (!thread_starttime(pid, tids[i], &st) || acc_find(rr, tids[i], st, false))
			continue;
		struct thread_acc *a = acc_find(rr, tids[i], st, true);
		if (a)
			gp_strlcpy(a->phase, phase, sizeof a->phase);
	}
	free(tids);
}

/* Reads one line from the child, with a deadline (integer ns on
 * CLOCK_MONOTONIC): a runtime that hangs in its init is a reported
 * result, never a hung gpuprobe.  -2 the deadline passed; -1 EOF or an
 * error (errno). */
static int read_line(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t len = 0;
	for (;;) {
		int64_t left = deadline - gp_mono_ns();
		if (left <= 0)
			return -2;
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, gp_ms_from_ns(left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			continue; /* the deadline, checked above */
		char c;
		ssize_t n = read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		if (c == '\n') {
			buf[len] = '\0';
			return (int)len;
		}
		if (len + 1 < cap)
			buf[len++] = c;
	}
}

static int spawn_child(const struct idle_opts *o, const char *lib, const char *rt,
		       int *to_parent, int *to_child)
{
	int up[2], down[2];
	int pid = gp_fork_tied(up, down);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dup2(up[1], 3) < 0 || dup2(down[0], 4) < 0)
			_exit(127);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		char *argv[16];
		int k = 0;
		argv[k++] = "gpuprobe";
		argv[k++] = "__idle-child";
		argv[k++] = "--runtime";
		argv[k++] = (char *)rt;
		if (lib) {
			argv[k++] = "--lib";
			argv[k++] = (char *)lib;
		}
		argv[k++] = "--cuda-sched";
		argv[k++] = (char *)o->cuda_sched;
		if (o->touch)
			argv[k++] = "--touch";
		if (o->no_interrupts)
			argv[k++] = "--no-interrupts";
		if (o->busy_kernel)
			argv[k++] = "--busy-kernel";
		argv[k] = NULL;
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(up[1]);
	close(down[0]);
	*to_parent = up[0];
	*to_child = down[1];
	return pid;
}

/* --runtime auto: by --lib's exports (as gp_gpu_open decides), else by
 * the device nodes. */
static const char *pick_runtime(const struct idle_opts *o, const char *lib)
{
	if (o->run.rt != GP_RT_AUTO)
		return gp_rt_name(o->run.rt);
	if (lib) {
		void *h = gp_dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
		if (h) {
			const char *rt = dlsym(h, "cuInit") && !dlsym(h, "hsa_init") ? "cuda" : "hsa";
			dlclose(h);
			return rt;
		}
	}
	if (access("/dev/nvidia0", F_OK) == 0 && access("/dev/kfd", F_OK) != 0
	    && access("/dev/dxg", F_OK) != 0)
		return "cuda";
	return "hsa";
}

static void write_line(struct gp_result *out, json_t *line)
{
	if (!out)
		json_decref(line);
	else
		gp_result_write(out, line);
}


/* Waits for the killed runtime child, at most 5 s: never a blocking
 * waitpid, so a child that cannot be reaped (stuck in the driver in D
 * state, or a thread of it still traced somewhere) costs 5 s, not a hang.
 * Other children of the child's threads traced by us are taken on the
 * way (__WALL).  True when reaped; false with why (its state and wchan)
 * in why. */
static bool reap_child(pid_t pid, char *why, size_t cap)
{
	int64_t end = gp_ns_add(gp_mono_ns(), 5 * GP_NS_S);
	for (;;) {
		pid_t w = waitpid(-1, NULL, __WALL | WNOHANG);
		if (w == pid || (w < 0 && errno == ECHILD))
			return true;
		if (w > 0 || (w < 0 && errno == EINTR))
			continue;
		if (gp_mono_ns() > end)
			break;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	char path[64], stat[512] = "", wchan[64] = "";
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (gp_pread_all(fd, stat, sizeof stat) < 0)
			stat[0] = '\0';
		close(fd);
	}
	snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (gp_pread_all(fd, wchan, sizeof wchan) < 0)
			wchan[0] = '\0';
		close(fd);
	}
	const char *st = strrchr(stat, ')');
	snprintf(why, cap, "the runtime child %d did not die within 5 s of SIGKILL (state %c%s%s): "
		 "left behind", (int)pid, st && st[1] == ' ' && st[2] ? st[2] : '?',
		 wchan[0] && strcmp(wchan, "0") ? ", in " : "", strcmp(wchan, "0") ? wchan : "");
	gp_warn("%s", why);
	return false;
}

/* Reads the child's lines until it says `ready` (the runtime is open):
 * 0, or -1 with rr->error set (an error it said, its death, or
 * --init-timeout passing). */
static int await_ready(const struct idle_opts *o, struct run_result *rr, int pid, int from, int to)
{
	char line[1600];
	int64_t deadline = gp_ns_add(gp_mono_ns(), o->init_timeout_ns);
	for (;;) {
		int n = read_line(from, line, sizeof line, deadline);
		if (n == -2) {
			snprintf(rr->error, sizeof rr->error,
				 "the runtime did not open within %g s (--init-timeout): stuck in its init",
				 (double)o->init_timeout_ns / 1e9);
			return -1;
		}
		if (n < 0) {
			snprintf(rr->error, sizeof rr->error, "the child died while opening the runtime");
			return -1;
		}
		if (!strncmp(line, "phase ", 6)) {
			note_phase(rr, pid, line + 6);
			char b = 1;
			if (write(to, &b, 1) < 0) {
				snprintf(rr->error, sizeof rr->error, "the child died while opening the runtime");
				return -1;
			}
		} else if (!strncmp(line, "info lib ", 9)) {
			gp_strlcpy(rr->lib, line + 9, sizeof rr->lib);
		} else if (!strncmp(line, "info version ", 13)) {
			gp_strlcpy(rr->version, line + 13, sizeof rr->version);
		} else if (!strncmp(line, "info build ", 11)) {
			gp_strlcpy(rr->build, line + 11, sizeof rr->build);
		} else if (!strncmp(line, "info ", 5)) {
			if (!gp_quiet && !o->json)
				fprintf(stderr, "gpuprobe: idle: %s\n", line + 5);
		} else if (!strncmp(line, "error ", 6)) {
			gp_strlcpy(rr->error, line + 6, sizeof rr->error);
			return -1;
		} else if (!strcmp(line, "ready")) {
			return 0;
		}
	}
}

/* One sample's threads into their first/last counters. */
static void accumulate(struct run_result *rr, const struct gp_thread *th, size_t n, double t)
{
	rr->last_t = t;
	for (size_t i = 0; i < n; i++) {
		struct thread_acc *a = acc_find(rr, th[i].tid, th[i].st.starttime, true);
		if (!a)
			continue;
		gp_strlcpy(a->comm, th[i].st.comm, sizeof a->comm);
		a->have_sched = th[i].have_sched;
		if (!a->seen_first) {
			a->seen_first = true;
			a->t0 = t;
			a->run_ns0 = th[i].run_ns;
			a->ut0 = th[i].st.utime;
			a->st0 = th[i].st.stime;
			a->vcsw0 = th[i].vcsw;
		}
		a->t1 = t;
		a->run_ns1 = th[i].run_ns;
		a->ut1 = th[i].st.utime;
		a->st1 = th[i].st.stime;
		a->vcsw1 = th[i].vcsw;
		a->state = th[i].st.state;
		gp_strlcpy(a->wchan, th[i].wchan, sizeof a->wchan);
	}
}

/* The idle window: samples at absolute deadlines (integer ns from t0: no
 * drift, no float compare), each written to out.  0, or -1 with
 * rr->error set when the child vanished. */
/* The GPU's activity beside the host CPU (issue 13): read at the first
 * sample and at the last, so its rates cover the same window. */
static int idle_window(const struct idle_opts *o, struct run_result *rr, struct gp_sampler *smp,
		       struct gp_result *out, int64_t t0, struct gp_gpuact *gact)
{
	struct gp_point first, last;
	bool have_first = false;
	for (int64_t k = 0; k * o->interval_ns <= o->seconds_ns; k++) {
		int64_t when = t0 + k * o->interval_ns, left;
		while ((left = when - gp_mono_ns()) > 0) {
			struct timespec ts = gp_ts_from_ns(left);
			nanosleep(&ts, NULL);
		}
		json_t *sl;
		const char *why;
		struct gp_point pt;
		if (gp_sampler_take(smp, (double)(gp_mono_ns() - t0) / 1e9, &sl, &pt, &why) != GP_SAMPLE_OK) {
			snprintf(rr->error, sizeof rr->error, "the child %s while idle", why ? why : "vanished");
			return -1;
		}
		size_t rawlen, n;
		const char *raw = gp_sampler_threads_json(smp, &rawlen);
		if (out)
			gp_result_write_raw(out, sl, "threads", raw, rawlen);
		else
			json_decref(sl);
		const struct gp_thread *th = gp_sampler_threads(smp, &n);
		accumulate(rr, th, n, pt.t);
		if (!have_first) {
			first = pt;
			if (gact)
				gp_gpuact_read(gact, pt.t, NULL, &rr->gpu);
		}
		have_first = true;
		last = pt;
	}
	if (gact && have_first)
		rr->have_gpu = gp_gpuact_read(gact, last.t, NULL, &rr->gpu) == 0;
	if (have_first) {
		rr->seconds = last.t - first.t;
		double cpu = (last.utime + last.stime) - (first.utime + first.stime);
		rr->cpu_pct = rr->seconds > 0 ? 100.0 * cpu / rr->seconds : 0;
	}
	return 0;
}

static double acc_cpu(const struct thread_acc *a, double clk, double *user, double *sys,
		      double *vcs);

/* The spinners (over --threshold), unwound from outside; each one's
 * innermost frame named. */
static void unwind_spinners(const struct idle_opts *o, struct run_result *rr, struct gp_stacks *stk,
			    struct gp_result *out, int64_t t0)
{
	double clk = (double)sysconf(_SC_CLK_TCK);
	int spin_tids[64];
	size_t nspin = 0;
	unsigned spinners = 0;
	for (size_t i = 0; i < rr->nth; i++) {
		double u, sy, v;
		if (acc_cpu(&rr->th[i], clk, &u, &sy, &v) < o->threshold)
			continue;
		spinners++;
		/* Only one alive at the last sample: a spinner that has exited
		 * is counted, but its tid may be another thread's by now. */
		if (rr->th[i].t1 >= rr->last_t && nspin < 64)
			spin_tids[nspin++] = rr->th[i].tid;
	}
	rr->nspin = spinners;
	json_t *sl = NULL;
	if (!nspin || !stk || gp_stacks_snapshot(stk, (double)(gp_mono_ns() - t0) / 1e9, spin_tids,
						   nspin, &sl) != 0 || !sl)
		return;
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(sl, "threads"), i, t) {
		struct thread_acc *a = acc_alive(rr, (int)json_integer_value(json_object_get(t, "tid")));
		json_t *frames = json_object_get(t, "frames");
		if (!a || !json_is_array(frames))
			continue;
		a->frames = json_incref(frames);
		json_t *f0 = json_array_get(frames, 0);
		const char *sym = json_string_value(json_object_get(f0, "symbol"));
		const char *mod = json_string_value(json_object_get(f0, "module"));
		const char *off = json_string_value(json_object_get(f0, "offset"));
		if (sym) {
			gp_strlcpy(a->frame, sym, sizeof a->frame);
		} else if (mod) {
			const char *b = strrchr(mod, '/');
			snprintf(a->frame, sizeof a->frame, "%s+%s", b ? b + 1 : mod, off ? off : "?");
		}
	}
	const char *hint = gp_stacks_hint(stk);
	if (hint)
		gp_hint("%s", hint);
	write_line(out, sl);
}

/* One child, one runtime build: open, idle, measure, unwind the
 * spinners, kill.  0, or -1 with rr->error set. */
static int measure(const struct idle_opts *o, const char *lib, struct run_result *rr,
		   struct gp_result *out, const struct gp_root *root)
{
	const char *rt = pick_runtime(o, lib);
	gp_strlcpy(rr->rt, rt, sizeof rr->rt);
	rr->lib_arg = lib;
	rr->no_interrupts = o->no_interrupts;
	rr->dxg = access("/dev/dxg", F_OK) == 0;
	int from, to;
	int pid = spawn_child(o, lib, rt, &from, &to);
	if (pid < 0) {
		snprintf(rr->error, sizeof rr->error, "cannot start the child: %s", strerror(errno));
		return -1;
	}
	char why[200];
	if (await_ready(o, rr, pid, from, to) < 0) {
		kill(pid, SIGKILL);
		if (!reap_child(pid, why, sizeof why)) {
			size_t len = strlen(rr->error);
			snprintf(rr->error + len, sizeof rr->error - len, "; %s", why);
		}
		close(from);
		close(to);
		return -1;
	}
	if (rr->lib[0] && !gp_elf_build_id(rr->lib, rr->build_id, sizeof rr->build_id))
		rr->build_id[0] = '\0';

	int rc = -1;
	/* One set of GPU readers for the sampler and the activity read
	 * beside it (gpu/house.h). */
	struct gp_gpu_house_opts ho = { .root = root };
	struct gp_gpu_house *house = gp_gpu_house_new(&ho);
	struct gp_sampler_opts so = { .root = root, .pid = pid, .kstacks = true, .house = house };
	struct gp_sampler *smp = house ? gp_sampler_new(&so) : NULL;
	struct gp_stacks *stk = NULL;
	if (!smp) {
		/* No samples is no measurement: an error with its reason, never
		 * a `quiet` verdict over 0 s. */
		snprintf(rr->error, sizeof rr->error, "cannot sample the runtime child (pid %d): %s",
			 pid, strerror(errno));
	} else {
		if ((stk = gp_stacks_open(pid, 0)))
			gp_stacks_prepare(stk);
		int64_t t0 = gp_mono_ns();
		struct gp_gpuact_opts go = { .house = house, .pid = pid };
		struct gp_gpuact *gact = gp_gpuact_new(&go);
		rc = idle_window(o, rr, smp, out, t0, gact);
		gp_gpuact_free(gact);
		if (rc == 0)
			unwind_spinners(o, rr, stk, out, t0);
	}
	/* Kill first, then close the stacks session: a thread we still
	 * held (one that never stopped) dies traced by us, and its leader
	 * cannot be reaped until we take it, which the close does. */
	kill(pid, SIGKILL);
	if (stk)
		gp_stacks_close(stk);
	gp_sampler_free(smp);
	gp_gpu_house_free(house);
	reap_child(pid, why, sizeof why); /* the measurement stands; a warning says why */
	close(from);
	close(to);
	return rc;
}

/* ---- the verdict and its rendering ---------------------------------- */

static double acc_cpu(const struct thread_acc *a, double clk, double *user, double *sys,
		      double *vcs)
{
	double dt = a->t1 - a->t0;
	if (dt <= 0) {
		*user = *sys = *vcs = 0;
		return 0;
	}
	double ticks = (double)((a->ut1 + a->st1) - (a->ut0 + a->st0));
	double cpu = a->have_sched ? 100.0 * (double)(a->run_ns1 - a->run_ns0) / 1e9 / dt
				   : 100.0 * ticks / clk / dt;
	*user = ticks > 0 ? cpu * (double)(a->ut1 - a->ut0) / ticks : 0;
	*sys = ticks > 0 ? cpu * (double)(a->st1 - a->st0) / ticks : 0;
	*vcs = (double)(a->vcsw1 - a->vcsw0) / dt;
	return cpu;
}

/* Seed 000's diagnosis, when the shape matches. */
static const char *fix_direction(const struct run_result *rr)
{
	bool events_loop = false;
	for (size_t i = 0; i < rr->nth; i++)
		if (strstr(rr->th[i].frame, "AsyncEventsLoop"))
			events_loop = true;
	if (!rr->nspin || !events_loop)
		return NULL;
	if (rr->no_interrupts || rr->dxg)
		return "ROCr's AsyncEventsLoop is in its memory-polling fallback: its signals have "
		       "no interrupt-backed events (HSA_ENABLE_INTERRUPT=0, or WSL's /dev/dxg), and "
		       "that branch never sleeps. Upstream fix: ROCm/rocm-systems#7898 naps there "
		       "with an escalating backoff (seed 000: 183% -> ~1% idle CPU).";
	return "ROCr's AsyncEventsLoop spins: look at its polling fallback (ROCm/rocm-systems#7898).";
}

/* The GPU's activity over the window, and what it says of a spin. */
static void gpu_text(const struct run_result *rr, char *buf, size_t cap)
{
	char a[400];

	gp_gpuact_text(&rr->gpu, a, sizeof a);
	if (!rr->nspin || !gp_gpuact_known(&rr->gpu))
		snprintf(buf, cap, "%s", a);
	else if (gp_gpuact_busy(&rr->gpu, 5))
		snprintf(buf, cap, "%s: the GPU runs this process's work, a spinning thread "
			 "may be waiting on it", a);
	else
		snprintf(buf, cap, "%s: the spin is the host's own, the GPU is idle "
			 "(seed 000's shape)", a);
}

static json_t *verdict_json(const struct run_result *rr, const struct idle_opts *o)
{
	double clk = (double)sysconf(_SC_CLK_TCK);
	json_t *spinning = json_array();
	for (size_t i = 0; i < rr->nth; i++) {
		const struct thread_acc *a = &rr->th[i];
		double u, s, v, cpu = acc_cpu(a, clk, &u, &s, &v);
		if (cpu < o->threshold)
			continue;
		char st[2] = { a->state, 0 };
		json_t *t = json_pack("{s:i, s:s, s:f, s:f, s:f, s:f, s:s, s:s, s:s}", "tid", a->tid,
				      "comm", a->comm, "cpu_pct", cpu, "user_pct", u, "sys_pct", s,
				      "voluntary_per_s", v, "state", st, "wchan", a->wchan,
				      "appeared", a->phase);
		json_object_set_new(t, "frames", a->frames ? json_incref(a->frames) : json_null());
		json_array_append_new(spinning, t);
	}
	const char *fix = fix_direction(rr);
	json_t *j = json_pack("{s:s, s:s, s:f, s:f, s:f, s:o}", "type", "verdict",
			      "class", rr->nspin ? "spin" : "quiet", "idle_cpu_pct", rr->cpu_pct,
			      "seconds", rr->seconds, "threshold_pct", o->threshold,
			      "spinning_threads", spinning);
	json_object_set_new(j, "runtime", json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}",
		"runtime", rr->rt, "lib", rr->lib, "version", rr->version, "build", rr->build,
		"build_id", rr->build_id, "no_interrupts", rr->no_interrupts));
	json_object_set_new(j, "env", json_incref(rr->env));
	json_object_set_new(j, "threads_total", json_integer((json_int_t)rr->nth));
	if (rr->have_gpu) {
		char text[512];
		gpu_text(rr, text, sizeof text);
		json_object_set_new(j, "gpu", gp_gpuact_json(&rr->gpu, true));
		json_object_set_new(j, "gpu_text", json_string(text));
	}
	if (fix)
		json_object_set_new(j, "fix", json_string(fix));
	return j;
}

static void print_run(FILE *f, const struct run_result *rr, const struct idle_opts *o)
{
	double clk = (double)sysconf(_SC_CLK_TCK);
	fprintf(f, "gpuprobe idle: %s, %s", rr->rt, rr->lib[0] ? rr->lib : rr->lib_arg ? rr->lib_arg : "?");
	if (rr->build[0])
		fprintf(f, " (%s)", rr->build);
	if (rr->build_id[0])
		fprintf(f, ", build-id %.16s", rr->build_id);
	if (rr->no_interrupts)
		fprintf(f, ", HSA_ENABLE_INTERRUPT=0");
	fprintf(f, "\n  %.1f s idle: %.1f%% CPU, %zu threads; verdict %s", rr->seconds, rr->cpu_pct,
		rr->nth, rr->nspin ? "spin" : "quiet");
	if (rr->nspin)
		fprintf(f, ": %u spinner%s over %.0f%%", rr->nspin, rr->nspin == 1 ? "" : "s", o->threshold);
	if (rr->have_gpu) {
		char text[512];
		gpu_text(rr, text, sizeof text);
		fprintf(f, "\n  GPU: %s", text);
	}
	fprintf(f, "\n  %-8s %-16s %6s %6s %6s %8s %-2s %-24s %-15s %s\n", "tid", "comm", "cpu%",
		"user%", "sys%", "vcsw/s", "st", "wchan", "appeared", "frame");
	for (size_t i = 0; i < rr->nth; i++) {
		const struct thread_acc *a = &rr->th[i];
		double u, s, v, cpu = acc_cpu(a, clk, &u, &s, &v);
		fprintf(f, "  %-8d %-16s %6.1f %6.1f %6.1f %8.1f %-2c %-24.24s %-15s %s\n", a->tid,
			a->comm, cpu, u, s, v, a->state ? a->state : '?', a->wchan[0] ? a->wchan : "-",
			a->phase, a->frame[0] ? a->frame : "");
	}
	const char *fix = fix_direction(rr);
	if (fix)
		fprintf(f, "  fix direction: %s\n", fix);
}

static void print_ab(FILE *f, struct run_result *rr, int n, const struct idle_opts *o)
{
	double clk = (double)sysconf(_SC_CLK_TCK);
	fprintf(f, "\n| library | build | build-id | idle CPU | spinners |\n|---|---|---|---:|---|\n");
	for (int i = 0; i < n; i++) {
		struct strbuf spin = STRBUF_INIT;
		for (size_t k = 0; k < rr[i].nth; k++) {
			double u, s, v, cpu = acc_cpu(&rr[i].th[k], clk, &u, &s, &v);
			if (cpu >= o->threshold)
				strbuf_addf(&spin, "%s%.1f%%", spin.len ? " / " : "", cpu);
		}
		if (rr[i].error[0])
			fprintf(f, "| %s | (failed: %.60s) | | | |\n", rr[i].lib_arg ? rr[i].lib_arg : "(default)",
				rr[i].error);
		else
			fprintf(f, "| %s | %s | %.12s | %.1f%% | %s |\n",
				rr[i].lib[0] ? rr[i].lib : rr[i].lib_arg, rr[i].build[0] ? rr[i].build : rr[i].version,
				rr[i].build_id[0] ? rr[i].build_id : "-", rr[i].cpu_pct, spin.len ? spin.buf : "none");
		strbuf_release(&spin);
	}
}

static json_t *runtime_env(void)
{
	static const char *const prefixes[] = { "HSA_", "ROCR_", "HIP_", "CUDA_", "GPU_", NULL };
	return gp_env_json(prefixes);
}

int cmd_idle(int argc, char **argv, const struct gp_global *g)
{
	struct idle_opts o = { .seconds_ns = 10 * GP_NS_S, .interval_ns = GP_NS_S, .threshold = 10,
			       .init_timeout_ns = 60 * GP_NS_S, .cuda_sched = "auto",
			       .run.max_libs = GP_MAX_LIBS,
			       .run.help = (const struct gp_help[]){ { GP_KEY_LIB, "The runtime library "
					"to load; repeat to compare builds (A/B)" }, { 0, NULL } },
			       .out = { .quiet = g->quiet, .help = (const struct gp_help[]){
					{ 'q', "Only the verdicts" }, { 0, NULL } } },
			       .fmt = { GP_FMT_TEXT | GP_FMT_JSON, GP_FMT_TEXT } };
	const struct gp_group groups[] = {
		{ &gp_runtime_argp, &o.run, NULL, 1 }, { &gp_out_argp, &o.out, "Output:", 3 },
		{ &gp_format_argp, &o.fmt, NULL, 4 }, { &gp_noargs_argp, NULL, NULL, 0 }, GP_GROUPS_END,
	};
	if (gp_parse_command(&idle_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	if (o.out.quiet)
		gp_quiet = true;
	double seconds = (double)o.seconds_ns / 1e9;
	struct gp_root root;
	if (gp_root_open(&root, "/") < 0)
		return GP_EXIT_ERROR;
	struct gp_result *out = NULL;
	if (o.out.path && !(out = gp_result_create(o.out.path))) {
		gp_result_create_failed(o.out.path, errno);
		gp_root_close(&root);
		return GP_EXIT_ERROR;
	}
	if (out) {
		/* Each run's runtime is in its verdict line (A/B: several). */
		struct gp_host_info_opts hio = { .process = true };
		gp_result_write(out, gp_result_header("idle", g->argc, g->argv, gp_host_info_ex(&root, &hio)));
	}
	int nruns = o.run.nlibs ? o.run.nlibs : 1;
	struct run_result rr[GP_MAX_LIBS];
	memset(rr, 0, sizeof rr);
	json_t *env = runtime_env();
	if (o.no_interrupts)
		json_object_set_new(env, "HSA_ENABLE_INTERRUPT", json_string("0"));
	int failures = 0;
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	for (int i = 0; i < nruns; i++) {
		rr[i].env = env;
		const char *lib = o.run.nlibs ? o.run.libs[i] : NULL;
		if (!gp_quiet && !o.json && isatty(STDERR_FILENO))
			fprintf(stderr, "gpuprobe idle: %s%s: opening the runtime, then %.0f s idle...\n",
				lib ? lib : "the default runtime", nruns > 1 ? "" : "", seconds);
		if (measure(&o, lib, &rr[i], out, &root) < 0) {
			/* The runtime's message names the library already
			 * ("LIB: cannot load: ..."): name it once. */
			bool named = lib && !strncmp(rr[i].error, lib, strlen(lib));
			gp_err(named ? NULL : lib ? lib : "idle", "%s", rr[i].error);
			failures++;
			if (out)
				gp_result_write(out, json_pack("{s:s, s:s, s:s}", "type", "error", "lib",
							       lib ? lib : "", "error", rr[i].error));
			continue;
		}
		json_t *v = verdict_json(&rr[i], &o);
		if (o.json) {
			char *s = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(6));
			if (s)
				puts(s);
			free(s);
		} else {
			if (i)
				putchar('\n');
			print_run(stdout, &rr[i], &o);
		}
		write_line(out, v);
	}
	getrusage(RUSAGE_SELF, &ru1);
	if (nruns > 1 && !o.json)
		print_ab(stdout, rr, nruns, &o);
	if (!o.json && !gp_quiet) {
		double obs = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec + ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec)
			     + (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec + ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
		printf("\n(the observer used %.2f s of CPU: %.2f%% of a core over %.0f s)\n", obs,
		       100.0 * obs / (seconds * nruns), seconds * nruns);
	}
	for (int i = 0; i < nruns; i++) {
		for (size_t k = 0; k < rr[i].nth; k++)
			json_decref(rr[i].th[k].frames);
		free(rr[i].th);
	}
	json_decref(env);
	int rc = failures == nruns ? GP_EXIT_ERROR : GP_EXIT_OK;
	if (out && gp_result_close(out) < 0) {
		gp_err_errno(errno, o.out.path, "cannot write the result");
		rc = GP_EXIT_ERROR;
	}
	gp_root_close(&root);
	return rc;
}
