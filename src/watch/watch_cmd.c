/* gpuprobe watch [PID...] [--name NAME] [--gpu]: see watch.h. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "follow.h"
#include "grow.h"
#include "hostinfo.h"
#include "house.h"
#include "identity.h"
#include "load.h"
#include "metrics.h"
#include "nvml.h"
#include "opts.h"
#include "procfs.h"
#include "procstat.h"
#include "result.h"
#include "safefile.h"
#include "sampler.h"
#include "sampling.h"
#include "series.h"
#include "spool.h"
#include "tasks.h"
#include "strbuf.h"
#include "stuck.h"
#include "proctab.h"
#include "ticker.h"
#include "timeutil.h"
#include "tree.h"
#include "verdict.h"
#include "watch.h"
#include "wproc.h"

#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
	OPT_GPU = 0x100,
	OPT_BUNDLE_DIR,
	OPT_BUNDLE_EVERY,
	OPT_BUNDLE_MAX,
	OPT_BUNDLE_SECONDS,
	OPT_METRICS,
};


static const struct argp_option watch_options[] = {
	{ NULL, 0, NULL, 0, "What to follow (together, and picked up as they start):", 1 },
	{ "gpu", OPT_GPU, NULL, 0, "Every process that holds a GPU: in an NVML process list, "
	  "or with /dev/nvidia*, /dev/kfd or /dev/dri/* open", 1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ NULL, 0, NULL, 0, "On a hang:", 3 },
	{ "bundle-dir", OPT_BUNDLE_DIR, "DIR", 0, "Write a bundle into DIR when a process's "
	  "verdict turns to a hang class (once per hang)", 3 },
	{ "bundle-every", OPT_BUNDLE_EVERY, "SECONDS", 0,
	  "At most one bundle every SECONDS (default 60)", 3 },
	{ "bundle-max", OPT_BUNDLE_MAX, "SIZE", 0, "No bundle while DIR's bundles hold SIZE "
	  "bytes or more (K/M/G suffixes; default 1G)", 3 },
	{ "bundle-seconds", OPT_BUNDLE_SECONDS, "SECONDS", 0,
	  "Length of the bundle's own trace (default 1; the watch's record comes too)", 3 },
	{ NULL, 0, NULL, 0, "Output:", 4 },
	{ "metrics", OPT_METRICS, "FILE", 0, "Write a Prometheus text file (for node_exporter's "
	  "textfile collector: FILE ends in .prom) every tick, atomically", 4 },
	{ "quiet", 'q', NULL, 0, "Log only hangs and errors", 4 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

static const struct gp_opt_field watch_fields[] = {
	GP_OPT_SECONDS(OPT_BUNDLE_EVERY, struct watch_opts, bundle_every, 0, 86400 * GP_NS_S),
	GP_OPT_SECONDS(OPT_BUNDLE_SECONDS, struct watch_opts, bundle_seconds, GP_NS_S, 600 * GP_NS_S),
	GP_OPT_ON(OPT_GPU, struct watch_opts, gpu),
	GP_OPT_ON('q', struct watch_opts, quiet),
	GP_OPT_STRING(OPT_BUNDLE_DIR, struct watch_opts, bundle_dir),
	GP_OPT_STRING(OPT_METRICS, struct watch_opts, metrics),
	GP_OPT_END,
};

/* A PID operand: the processes to follow, as many as given. */
static void add_pid(struct argp_state *state, struct watch_opts *o, const char *arg)
{
	int pid = gp_arg_pid(state, ARGP_KEY_ARG, arg);
	if (!gp_grow(&o->pids, &o->cappids, o->npids + 1, sizeof *o->pids, 8))
		argp_failure(state, GP_EXIT_ERROR, ENOMEM, "PID");
	o->pids[o->npids++] = pid;
}

/* The whole line: something to follow, and no empty FILE or DIR. */
static void watch_check(struct argp_state *state, const struct watch_opts *o)
{
	if (!o->npids && !o->sample.name && !o->gpu)
		argp_error(state, "nothing to follow: give PIDs, --name NAME or --gpu");
	if (o->metrics && !*o->metrics)
		argp_error(state, "--metrics needs a FILE");
	if (o->bundle_dir && !*o->bundle_dir)
		argp_error(state, "--bundle-dir needs a DIR");
}

static error_t watch_parse(int key, char *arg, struct argp_state *state)
{
	struct watch_opts *o = state->input;
	if (key == OPT_BUNDLE_MAX)
		o->bundle_max = gp_arg_size(state, key, arg, 1, UINT64_MAX);
	else if (key == ARGP_KEY_ARG)
		add_pid(state, o, arg);
	else if (key == ARGP_KEY_END)
		watch_check(state, o);
	else
		return gp_set_option(state, watch_fields, key, arg, o);
	return 0;
}

static const struct argp watch_argp = {
	watch_options, watch_parse, "[PID...]",
	"Follow processes for as long as they live (given PIDs, every process named "
	"--name, every GPU holder with --gpu; new ones as they start), each with its "
	"descendants and a live verdict on the tree: trace's sampling and verdict (a "
	"parent waiting on a deadlocked worker is hang-blocked, the worker named), "
	"stacks only of hot threads and, once the tree has made no progress for "
	"--hang-after, of all its threads.  "
	"A PID given is the process that held it at the start: a later process with "
	"its number is not followed.\v"
	"When a process's verdict turns to hang-blocked, hang-gpu-spin, "
	"hang-busy-kernel or hang-busy-user, watch logs one line and, with "
	"--bundle-dir, writes a bundle (see gpuprobe bundle) holding its own record "
	"of the process (the samples before the hang, the stacks at it, the verdict: "
	"watch.jsonl) beside a short trace, stacks, kernel log and GPU evidence: "
	"once per hang, rate-limited by --bundle-every, none while the directory "
	"holds --bundle-max.  A process that exits leaves no bundle.\n\n"
	"--metrics FILE is rewritten every tick (FILE.tmp, then rename): per process "
	"its class, seconds since progress, CPU, CPU burnt while making no progress, "
	"and what its GPU does (work, spin, busy, idle, unknown).  See "
	"gpuprobe-watch(1) for the series, the systemd unit and the DaemonSet.\n\n"
	"SIGTERM, SIGINT and SIGHUP end it cleanly: a bundle being written is "
	"stopped and removed, the metrics file is removed, no target is left "
	"stopped.\n\n"
	"Exit status: 0 ended by a signal, --seconds, or every given PID exited; 1 "
	"a runtime error (cannot make the spool, DIR not writable, or the directory of "
	"--bundle-dir or --metrics another user's or writable by others and not sticky); "
	"64 usage error.",
	NULL, NULL, NULL,
};

/* ---- one followed process -------------------------------------------- */


static bool was_gone(const struct watch *W, int pid, unsigned long long start)
{
	unsigned n = W->ngone < 256 ? W->ngone : 256;
	for (unsigned i = 0; i < n; i++)
		if (W->gone[i].pid == pid && W->gone[i].start == start)
			return true;
	return false;
}


static bool proc_stat(const struct gp_root *root, int pid, struct gp_stat *st)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	return gp_read_file(root, path, buf, sizeof buf) > 0 && gp_parse_stat(buf, st);
}


static void wproc_free(struct wproc *w)
{
	gp_sampling_free(&w->smp);
	gp_proctab_free(&w->procs);
	gp_series_free(&w->series);
	if (w->spooled)
		gp_spool_close(&w->spool);
	free(w);
}

/* The labels that say where a process lives, from its target line:
 * its pid inside its namespace, its container and pod (nsinfo.c). */
static void where_of(struct gp_metric_proc *m, const json_t *target)
{
	const json_t *ns = json_object_get(target, "nspid");
	if (json_array_size(ns) > 1)
		snprintf(m->nspid, sizeof m->nspid, "%lld",
			 (long long)json_integer_value(json_array_get(ns, json_array_size(ns) - 1)));
	const json_t *c = json_object_get(target, "container");
	const char *id = json_string_value(json_object_get(c, "id"));
	const char *pod = json_string_value(json_object_get(c, "pod"));
	const char *pns = json_string_value(json_object_get(c, "namespace"));
	snprintf(m->container_id, sizeof m->container_id, "%s", id ? id : "");
	snprintf(m->pod, sizeof m->pod, "%s", pod ? pod : "");
	snprintf(m->pod_ns, sizeof m->pod_ns, "%s", pns ? pns : "");
}

/* The GPUs a sample says the process holds: NVML's rows (uuid), DRM
 * fdinfo's clients (pdev). */
static void gpus_of(struct gp_metric_proc *m, const json_t *line)
{
	const json_t *gpu = json_object_get(line, "gpu"), *e;
	size_t i;
	json_array_foreach(json_object_get(gpu, "nvml"), i, e)
		gp_metrics_gpu_add(m, json_string_value(json_object_get(e, "uuid")),
				   json_string_value(json_object_get(e, "pci_bus_id")));
	json_array_foreach(json_object_get(gpu, "drm"), i, e)
		gp_metrics_gpu_add(m, NULL, json_string_value(json_object_get(e, "pdev")));
}

static void record(void *ctx, double t, json_t *line);

/* How long pid has hung as the watch before this one exported it, 0 none:
 * only where that hang is this process's -- it started (starttime: stat's
 * clock ticks after boot, read by wproc_new) before the hang did; a pid
 * reused since started after. */
static double prior_hang_s(const struct watch *W, int pid, uint64_t starttime)
{
	struct timespec rt, bt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	double now = (double)rt.tv_sec + rt.tv_nsec / 1e9;
	long hz = sysconf(_SC_CLK_TCK);
	/* the boot's Unix time, as identity.c dates a start */
	double started = now - ((double)bt.tv_sec + bt.tv_nsec / 1e9)
			 + (hz > 0 ? (double)starttime / (double)hz : 0);
	for (size_t i = 0; hz > 0 && i < W->nprior; i++) {
		double since = W->prior[i].since_unix;
		if (W->prior[i].pid == pid && started < since && since < now)
			return now - since;
	}
	return 0;
}

static struct wproc *wproc_new(struct watch *W, int pid, double t, int argc, char **argv)
{
	struct gp_stat st;
	if (!proc_stat(&W->root, pid, &st) || was_gone(W, pid, st.starttime))
		return NULL;
	struct wproc *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->pid = pid;
	w->start = st.starttime;
	snprintf(w->comm, sizeof w->comm, "%.15s", st.comm);
	w->last_hot = -1e9;
	gp_proctab_init(&w->procs);
	struct gp_sampling_opts so = { .root = &W->root, .pid = pid, .children = true,
				       .kstacks = W->o->st.kstacks, .no_python = W->o->st.no_python,
				       .stacks = true, .hang_after = W->o->judge.hang_after,
				       .house = W->house, .emit = record, .ctx = w };
	if (gp_sampling_init(&w->smp, &so) < 0) {
		free(w);
		return NULL;
	}
	/* The record: the lines trace -o would write, for the bundle. */
	json_t *head = gp_result_header("watch", argc, argv, json_incref(W->host));
	json_t *target = json_pack("{s:s, s:i, s:s}", "type", "target", "pid", pid, "how", "watch");
	json_t *ident = gp_target_identity(&W->root, pid);
	if (ident)
		json_object_update(target, ident);
	json_decref(ident);
	json_object_set_new(target, "t", json_real(t));
	gp_target_still(&W->root, pid, target);
	const json_t *js = json_object_get(target, "still_s");
	w->still_s = json_is_number(js) ? json_number_value(js) : -1;
	double prior = prior_hang_s(W, pid, st.starttime);
	if (prior > w->still_s) {
		w->still_s = prior;
		w->still_prior = true;
	}
	w->first_t = t;
	where_of(&w->where, target);
	gp_proctab_target(&W->procs, target); /* its job and rank, for the metrics */
	gp_proctab_target(&w->procs, target);
	double span = W->o->judge.hang_after * 2 > 60 ? W->o->judge.hang_after * 2 : 60;
	w->spooled = gp_spool_open(&w->spool, W->spool, pid, w->start, span, t, head, target) == 0;
	return w;
}

/* The points kept: enough for the verdict's phases around a hang, never
 * more than the window (memory flat over days). */
static void trim(struct watch *W, struct wproc *w)
{
	if (w->series.n <= W->window)
		return;
	size_t drop = w->series.n - W->window * 3 / 4;
	memmove(w->series.pt, w->series.pt + drop, (w->series.n - drop) * sizeof *w->series.pt);
	w->series.n -= drop;
}

/* A line of w's tree (stolen) into its record. */
static void record(void *ctx, double t, json_t *line)
{
	struct wproc *w = ctx;
	if (w->spooled)
		gp_spool_write(&w->spool, t, line, NULL, 0);
	else
		json_decref(line);
}

/* Hot threads of a process that makes no progress: a runtime thread
 * polling while its GPU context idles (seed 000) or a busy hang.  Not of
 * one that progresses: unwinding a large process's hot threads costs
 * 0.1-1 s, which a sidecar spends only where a verdict needs it. */
static void hot_stacks(struct watch *W, struct wproc *w, double t, struct gp_point *pt)
{
	if (t - w->last_hot < GP_WATCH_HOT_EVERY
	    || gp_sampling_flat_for(&w->smp, t) < W->o->judge.hang_after / 2 || !w->smp.fw.init)
		return;
	struct gp_sampler *smp;
	int pid;
	for (size_t m = 0; gp_tree_member(w->smp.tree, m, &pid, NULL, &smp); m++) {
		int tids[64];
		size_t k = gp_sampling_hot(smp, W->o->st.hot_pct, tids, 64);
		if (!k)
			continue;
		w->last_hot = t;
		gp_sampling_snapshot(&w->smp, pid, smp, t, tids, k, "hot", pt, false);
	}
}

/* A `target` line, how "descendant", into the record for each process
 * of the tree the table does not hold yet: the verdict names a worker
 * by it (its program, its job).  again: for every one, the record turning
 * to its other file (which starts with the followed process's alone). */
static void members(struct watch *W, struct wproc *w, double t, const json_t *line, bool again)
{
	int pid;
	struct gp_sampler *s;
	for (size_t m = 0; gp_tree_member(w->smp.tree, m, &pid, NULL, &s); m++) {
		if (pid != w->pid && (again || !gp_proctab_find(&w->procs, pid))) {
			json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid,
						   "t", t, "how", "descendant");
			json_t *ident = gp_target_identity(&W->root, pid);
			if (ident)
				json_object_update_missing(target, ident);
			json_decref(ident);
			gp_proctab_target(&w->procs, target);
			record(w, t, target);
		}
		gp_proctab_seen(&w->procs, pid, t);
		struct gp_ran_mark mark;
		gp_proctab_ran(&w->procs, pid, t, s && gp_sampler_main_mark(s, &mark) ? &mark : NULL);
		if (s) { /* as trace: a GPU wait's peer (verdict) */
			bool ctx;
			uint8_t gw;
			gp_sampler_gpu(s, &ctx, &gw);
			gp_proctab_gpu(&w->procs, pid, ctx, gw);
		}
	}
	gp_proctab_sample_end(&w->procs, t, json_object_get(line, "died"));
}

/* ---- the tick -------------------------------------------------------- */

/* One sample of w, its stacks, its verdict.  false: it is gone (*gone
 * says why). */
static bool tick_one(struct watch *W, struct wproc *w, double t, const char **gone)
{
	struct gp_point pt;
	json_t *line = NULL;
	struct gp_raw raws[2];
	size_t nraws = 0;
	const char *why;
	/* A spool file that starts here reads alone: no reference or delta
	 * to a sample of the file it overwrites (tracer/threadrec.h). */
	bool turn = w->spooled && gp_spool_due(&w->spool, t);
	if (turn)
		gp_tree_keyframe(w->smp.tree);
	enum gp_sample_rc rc = gp_sampling_take(&w->smp, t, &pt, &line, raws, &nraws, &why);
	if (rc != GP_SAMPLE_OK) {
		*gone = rc == GP_SAMPLE_GONE && why ? why : "cannot be read";
		return false;
	}
	members(W, w, t, line, turn);
	gpus_of(&w->where, line);
	if (w->spooled)
		gp_spool_write(&w->spool, t, line, raws, nraws);
	else
		json_decref(line);
	hot_stacks(W, w, t, &pt);
	if (gp_sampling_output(&w->smp, &pt)) {
		w->episode = w->want_bundle = false;
		gp_stuck_init(&w->smp.stuck);
	} else if (gp_sampling_hang_due(&w->smp, t)) {
		gp_sampling_snapshot_all(&w->smp, t, "hang");
	}
	gp_sampling_sweep(&w->smp);
	gp_series_push(&w->series, &pt);
	trim(W, w);
	w->since = gp_sampling_flat_for(&w->smp, t);
	w->cpu = pt.cpu_pct / 100.0;
	w->gw = pt.gw.work;
	/* No progress since it was first sampled, found still then: the
	 * flat stretch began before (what still_s says, and the samples
	 * trimmed since). */
	double before = 0;
	if (w->still_s > 0 && w->smp.fw.since <= w->first_t + 1e-6 && w->series.n) {
		before = w->still_s + (w->series.pt[0].t - w->first_t);
		w->since += w->still_s;
	}

	struct gp_verdict_opts vo = { .hang_after = W->o->judge.hang_after,
				      .slow_rate = (double)W->o->judge.slow_rate,
				      .page_size = W->page_size,
				      .kstacks_seen = W->o->st.kstacks && geteuid() == 0,
				      .stuck = w->smp.stuck.t >= 0 ? &w->smp.stuck : NULL,
				      .procs = &w->procs,
				      .flat_before = before, .watching = true,
				      .flat_before_by = w->still_prior ? GP_BEFORE_LAST_WATCH : GP_BEFORE_THREADS };
	gp_verdict_compute(w->series.pt, w->series.n, &vo, W->v);
	w->cls = W->v->cls;
	w->judged = true;
	if (is_hang(w->cls))
		watch_on_hang(W, w, t);
	return true;
}

/* The CPU a process of a tree burns now, in cores. */
static double member_cpu(struct gp_sampler *smp)
{
	size_t n;
	const struct gp_thread *th = gp_sampler_threads(smp, &n);
	double pct = 0;
	for (size_t i = 0; i < n; i++)
		pct += th[i].cpu_pct;
	return pct / 100.0;
}

/* The metrics of one process of w's tree (pid, comm), with the tree's
 * class; false for a descendant that has no wait signature. */
static bool metric_of(const struct watch *W, const struct wproc *w, int pid, const char *comm,
		      double cpu, double now, struct gp_metric_proc *m)
{
	/* A descendant lives where its parent does (its container, pod);
	 * its own namespace pid and GPUs are not read. */
	*m = w->where;
	if (pid != w->pid) {
		m->nspid[0] = '\0';
		m->ngpus = 0;
	}
	m->pid = pid;
	m->rank = -1;
	m->signature[0] = m->frame[0] = m->dist_job[0] = '\0';
	/* flat for --hang-after, its stacks taken: idle or hung alike
	 * (a rank alone, waiting in a collective for the odd one, is
	 * a process waiting for input) */
	if (w->smp.hang_snapped && gp_stuck_signature(&w->smp.stuck, pid, m->signature,
						    sizeof m->signature, m->frame, sizeof m->frame)) {
		const struct gp_proc_ident *id = gp_proctab_find(&W->procs, pid);
		if (id && id->job_env) {
			snprintf(m->dist_job, sizeof m->dist_job, "%s", id->job);
			m->rank = id->rank;
		}
	} else if (pid != w->pid) {
		return false;
	}
	snprintf(m->comm, sizeof m->comm, "%s", comm);
	m->cls = gp_class_name(w->cls);
	m->hang = is_hang(w->cls);
	m->since_progress = w->since;
	m->hang_since_unix = m->hang ? now - w->since : 0;
	m->cpu_cores = cpu;
	m->idle_cpu_cores = m->hang || w->cls == GP_CLASS_IDLE ? cpu : 0;
	m->gpu = gp_gpu_work_name((enum gp_gpu_work)w->gw);
	return true;
}

/* Every followed process, then each of its descendants that waits where
 * the hang snapshot saw it (its own signature and CPU, the tree's class):
 * a parent hung on a deadlocked worker names the worker too. */
static void write_metrics(struct watch *W)
{
	if (!W->o->metrics)
		return;
	struct gp_metric_proc *mp = NULL;
	size_t k = 0, cap = 0;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	for (size_t i = 0; i < W->n; i++) {
		const struct wproc *w = W->p[i];
		if (!w->judged || !gp_grow(&mp, &cap, k + 1, sizeof *mp, 16))
			continue;
		metric_of(W, w, w->pid, w->comm, w->cpu, now, &mp[k++]);
		int pid;
		const char *comm;
		struct gp_sampler *smp;
		for (size_t m = 0; gp_tree_member(w->smp.tree, m, &pid, &comm, &smp); m++)
			if (pid != w->pid && gp_grow(&mp, &cap, k + 1, sizeof *mp, 16)
			    && metric_of(W, w, pid, comm ? comm : "", member_cpu(smp), now, &mp[k]))
				k++;
	}
	struct gp_metrics_watch mw = { .bundles = W->bundles, .procs = W->n, .now_unix = now };
	struct strbuf sb = STRBUF_INIT;
	gp_metrics_text(&sb, &mw, mp, k);
	if (gp_metrics_write(W->o->metrics, &sb) < 0) {
		if (!W->metrics_warned && errno == EEXIST)
			gp_err(W->o->metrics, "cannot write the metrics: %s.tmp is there and is not a "
			       "file of this user's (tried again every tick)", W->o->metrics);
		else if (!W->metrics_warned)
			gp_err_errno(errno, W->o->metrics, "cannot write the metrics (tried again "
				     "every tick)");
		W->metrics_warned = true;
	} else {
		W->metrics_warned = false;
	}
	strbuf_release(&sb);
	free(mp);
}

/* The processes to follow now: new ones added, gone ones dropped. */
/* pid is a descendant in the tree of a followed process: judged there,
 * not followed twice (--name python3 matches a pool's parent and its
 * workers; a hang would be bundled once a process). */
static bool in_a_tree(const struct watch *W, int pid)
{
	int m_pid;
	for (size_t i = 0; i < W->n; i++)
		for (size_t m = 0; gp_tree_member(W->p[i]->smp.tree, m, &m_pid, NULL, NULL); m++)
			if (m_pid == pid)
				return true;
	return false;
}

static void refresh(struct watch *W, double t, const struct gp_global *g)
{
	int *cand = NULL;
	int nc = gp_follow_scan(&W->follow, t, &cand);
	for (size_t i = 0; i < W->n; i++)
		W->p[i]->seen = false;
	for (int c = 0; c < nc; c++) {
		if (cand[c] == getpid())
			continue;
		size_t i = 0;
		while (i < W->n && W->p[i]->pid != cand[c])
			i++;
		if (i < W->n) {
			W->p[i]->seen = true;
			continue;
		}
		if (in_a_tree(W, cand[c]))
			continue;
		if (!gp_grow(&W->p, &W->cap, W->n + 1, sizeof *W->p, 16))
			break;
		struct wproc *w = wproc_new(W, cand[c], t, g->argc, g->argv);
		if (!w)
			continue;
		w->seen = true;
		W->p[W->n++] = w;
		if (!W->o->quiet)
			watch_log("following pid %d (%s)", w->pid, w->comm);
	}
	free(cand);
}

static void tick(struct watch *W, double t, const struct gp_global *g)
{
	refresh(W, t, g);
	for (size_t i = 0; i < W->n;) {
		struct wproc *w = W->p[i];
		const char *gone = NULL;
		if (!tick_one(W, w, t, &gone)) {
			if (!W->o->quiet)
				watch_log("pid %d (%s): no longer followed: %s", w->pid, w->comm, gone);
			unsigned slot = W->ngone++ % 256;
			W->gone[slot].pid = w->pid;
			W->gone[slot].start = w->start;
			wproc_free(w);
			W->p[i] = W->p[--W->n];
			continue;
		}
		i++;
	}
	watch_reap_bundle(W);
	write_metrics(W);
}

/* One tick of the watch (loop/ticker.h drives it). */
static const char *watch_tick(void *ctx, double t)
{
	struct watch *W = ctx;
	tick(W, t, W->g);
	const struct watch_opts *o = W->o;
	if (o->npids && !o->sample.name && !o->gpu && W->n == 0) {
		if (!o->quiet)
			watch_log("every PID given has exited");
		return "exited";
	}
	return NULL;
}

/* A SIGCHLD (a stack's late stop is drained already): the bundle's
 * child, when done. */
static const char *watch_sigchld(void *ctx)
{
	watch_reap_bundle(ctx);
	return NULL;
}

static const char *watch_signal(void *ctx, int sig, const siginfo_t *si)
{
	(void)si;
	if (!((struct watch *)ctx)->o->quiet)
		watch_log("signal %d: ending", sig);
	return "interrupted";
}

/* ---- set-up and the loop --------------------------------------------- */

static void remove_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno == EISDIR && depth < 3) {
			char sub[4400];
			snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
			remove_tree(sub, depth + 1);
		}
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* --bundle-dir and --metrics' directory: nobody else may write there
 * (common/safefile.h), or what a root sidecar writes could land in a
 * file of theirs.  Refused at the start, with why. */
static bool safe_dirs(const struct watch_opts *o)
{
	char why[256];
	if (o->bundle_dir && gp_safe_dir(o->bundle_dir, why, sizeof why) < 0) {
		gp_err(o->bundle_dir, "refusing to write bundles there: %s", why);
		return false;
	}
	if (o->metrics && gp_safe_dir_of(o->metrics, why, sizeof why) < 0) {
		gp_err(o->metrics, "refusing to write the metrics there: %s", why);
		return false;
	}
	return true;
}

static int setup(struct watch *W)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(W->spool, sizeof W->spool, "%s/gpuprobe-watch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(W->spool)) {
		gp_err_errno(errno, W->spool, "cannot make the watch's spool directory");
		return -1;
	}
	if (W->o->bundle_dir) {
		if (mkdir(W->o->bundle_dir, 0750) < 0 && errno != EEXIST) {
			gp_err_errno(errno, W->o->bundle_dir, "cannot make the bundle directory");
			return -1;
		}
		if (access(W->o->bundle_dir, W_OK | X_OK) < 0) {
			gp_err_errno(errno, W->o->bundle_dir, "cannot write bundles there");
			return -1;
		}
	}
	if (!safe_dirs(W->o))
		return -1;
	if (gp_root_open(&W->root, NULL) < 0) {
		gp_err_errno(errno, "/", "cannot open");
		return -1;
	}
	struct gp_host_info_opts hio = { .process = true };
	W->host = gp_host_info_ex(&W->root, &hio);
	W->v = malloc(sizeof *W->v);
	if (!W->v) {
		gp_err(NULL, "out of memory");
		return -1;
	}
	struct gp_gpu_house_opts ho = { .root = &W->root };
	W->house = gp_gpu_house_new(&ho);
	if (!W->house) {
		gp_err(NULL, "out of memory");
		return -1;
	}
	if (W->o->gpu) {
		const char *why = "";
		W->follow.nv = gp_gpu_house_nvml(W->house, &why);
		if (!W->follow.nv && !W->o->quiet)
			gp_hint("--gpu: NVML: %s: following processes with GPU devices open", why);
	}
	return 0;
}

int cmd_watch(int argc, char **argv, const struct gp_global *g)
{
	static const struct gp_help help[] = {
		{ GP_KEY_HOT_THRESHOLD, "CPU% over which a thread is hot: its stacks are taken "
		  "(default 50)" },
		{ GP_KEY_HANG_AFTER, "No progress for this long is a hang (default 30)" },
		{ 'n', "Every process whose comm or argv[0] is NAME" },
		{ 'i', "Time between ticks (default 1; at least 0.1)" },
		{ 's', "Stop after SECONDS (default: until signalled)" },
		{ 0, NULL },
	};
	struct watch_opts o = { .sample = { help, NULL, 1.0, 0, 100 * GP_NS_MS }, .bundle_every = GP_WATCH_BUNDLE_EVERY,
				.bundle_seconds = GP_WATCH_BUNDLE_SECONDS,
				.bundle_max = GP_WATCH_BUNDLE_MAX, .quiet = g->quiet,
				.st = { help, 50, true },
				.judge = { help, GP_VERDICT_HANG_AFTER_DEFAULT, 0 } };
	const struct gp_group groups[] = {
		{ &gp_sample_argp, &o.sample, NULL, 0 },
		{ &gp_stack_argp, &o.st, NULL, 2 }, { &gp_judge_argp, &o.judge, NULL, 3 },
		GP_GROUPS_END,
	};
	if (gp_parse_command(&watch_argp, groups, argc, argv, &o)) {
		free(o.pids);
		return GP_EXIT_USAGE;
	}
	if (o.judge.hang_after <= 0)
		o.judge.hang_after = GP_VERDICT_HANG_AFTER_DEFAULT;

	struct watch W = { .o = &o, .page_size = sysconf(_SC_PAGESIZE), .last_bundle = -1,
			   .follow = { .pids = o.pids, .npids = o.npids, .name = o.sample.name, .gpu = o.gpu,
				       .fd_scan_every = 5, .fd_scanned = -1 } };
	/* Enough points for the verdict's phases: four --hang-after, at
	 * least two minutes, at most an hour. */
	double keep = o.judge.hang_after * 4 > 120 ? o.judge.hang_after * 4 : 120;
	W.window = (size_t)(keep / o.sample.interval) + 1;
	if (W.window > 3600)
		W.window = 3600;
	sigset_t waitset, orig;
	gp_ticker_block(&waitset, &orig);

	int rc = GP_EXIT_OK;
	if (setup(&W) < 0) {
		rc = GP_EXIT_ERROR;
		goto out;
	}
	W.follow.root = &W.root; /* the PIDs given, known by start time (follow.h) */
	W.nprior = gp_metrics_read_hangs(o.metrics, W.prior, sizeof W.prior / sizeof W.prior[0]);
	gp_proctab_init(&W.procs);
	if (!o.quiet)
		watch_log("started: %zu PIDs%s%s%s, --hang-after %g s%s%s%s%s", o.npids,
			 o.sample.name ? ", --name " : "", o.sample.name ? o.sample.name : "", o.gpu ? ", --gpu" : "",
			 o.judge.hang_after, o.bundle_dir ? ", bundles into " : "",
			 o.bundle_dir ? o.bundle_dir : "", o.metrics ? ", metrics to " : "",
			 o.metrics ? o.metrics : "");
	W.g = g;
	struct gp_ticker tk = { .interval = o.sample.interval, .seconds = o.sample.seconds,
				.scheduled_t = true, .t0 = gp_mono_now(), .waitset = &waitset };
	static const struct gp_ticker_ops ops = { watch_tick, watch_sigchld, watch_signal };
	gp_ticker_run(&tk, &ops, &W);
out:
	watch_stop_bundle(&W);
	for (size_t i = 0; i < W.n; i++)
		wproc_free(W.p[i]);
	free(W.p);
	if (o.metrics && W.v)
		unlink(o.metrics);
	if (W.spool[0] && !strstr(W.spool, "XXXXXX"))
		remove_tree(W.spool, 0);
	gp_follow_free(&W.follow);
	gp_proctab_free(&W.procs);
	gp_gpu_house_free(W.house); /* closes NVML (follow.nv is the house's) */
	if (W.v)
		gp_root_close(&W.root);
	free(W.v);
	json_decref(W.host);
	free(o.pids);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return rc;
}
