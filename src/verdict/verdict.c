/* The judge: which story the samples tell (stopped, a hang, flat but not
 * long enough, progress, slowed), the class, and how sure -- from the
 * steps, phases, activity and evidence of the files beside it
 * (verdict_int.h lists them). */
#include "config.h"
#include "verdict.h"
#include "verdict_int.h"
#include "parse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[GP_CLASS_COUNT] = {
	"progress", "slow-progress", "idle", "waiting-gpu", "hang-blocked", "hang-busy-kernel",
	"hang-busy-user", "stopped", "exited", "undecided", "hang-gpu-spin",
};

const char *gp_class_name(enum gp_class c)
{
	return (unsigned)c < GP_CLASS_COUNT ? class_names[c] : "undecided";
}

static const char *const conf_names[] = { "low", "medium", "high", "any" };

const char *gp_conf_name(enum gp_conf c)
{
	return (unsigned)c <= GP_CONF_ANY ? conf_names[c] : "low";
}

/* What judging one trace needs, shared by the steps below. */
struct judging {
	const struct gp_point *p, *l;
	size_t n;
	const struct gp_verdict_opts *o;
	double H, t0, t_end, last_progress, flat, interval;
	double before;           /* flat before the trace (still_before) */
	struct step *st;
	struct group g[GP_VERDICT_MAX_PHASES];
	size_t ng;
	struct gp_activity act;
	bool io_seen, gpu;
};

/* Stopped: SIGSTOP or a debugger holds it; nothing else matters. */
static bool judge_stopped(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_point *p = j->p, *l = j->l;
	if (l->state != 'T' && l->state != 't')
		return false;
	size_t i = j->n - 1;
	while (i > 0 && (p[i - 1].state == 'T' || p[i - 1].state == 't'))
		i--;
	v->cls = GP_CLASS_STOPPED;
	v->story = GP_STORY_STOPPED;
	v->act.wg = l->wg; /* who stopped it (TracerPid) */
	v->state = l->state;
	v->stopped_n = j->n - i;
	v->since_s = p[i].t;
	v->judged_from = p[i].t;
	v->judged_to = j->t_end;
	v->confidence = GP_CONF_HIGH;
	add_phase(v, p[i].t, j->t_end, GP_PHASE_STOPPED, 0);
	build_evidence(p, j->n, p[i].t, j->o->page_size, v);
	return true;
}

/* Phases, oldest first: flat stretches of at least H, and progress. */
static void build_phases(struct judging *j, struct gp_verdict *v)
{
	double cursor = j->t0;
	for (size_t k = 0; k < j->ng; k++) {
		const struct group *g = &j->g[k];
		if (g->start - cursor >= j->H)
			add_phase(v, cursor, g->start, GP_PHASE_NO_OUTPUT, 0);
		double dur = g->end - g->start;
		struct gp_phase *ph = add_phase(v, g->start, g->end, GP_PHASE_PROGRESS,
						dur > 0 ? g->bytes / dur : 0);
		progress_metrics(ph, g, j->st);
		ph->pid = phase_process(j->p, g->first, g->last, ph->comm, sizeof ph->comm);
		for (size_t q = g->first; q <= g->last; q++)
			if (j->p[q].gw.work == GP_GW_WORK) {
				ph->have_gw = true;
				ph->gw = j->p[q].gw;
			}
		cursor = g->end;
	}
	j->last_progress = j->ng ? j->g[j->ng - 1].end : j->t0;
	j->flat = j->t_end - j->last_progress;
}

/* A hang: nothing visible moved for hang_after seconds. */
static void judge_hang(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_activity *act = &j->act;
	v->cls = act->kind;
	v->story = GP_STORY_HANG;
	v->act = *act;
	v->flat = j->flat;
	v->after_progress = j->ng > 0;
	v->io_seen = j->io_seen;
	v->gpu_seen = j->gpu;
	v->since_s = v->judged_from = j->last_progress;
	v->still_before_s = j->before;
	v->since_s -= j->before;
	v->judged_to = j->t_end;
	add_phase(v, j->last_progress, j->t_end, GP_PHASE_ACTIVITY, 0);
	bool long_flat = j->flat >= 2 * j->H;
	enum gp_conf level = long_flat && j->io_seen ? GP_CONF_HIGH
			     : long_flat || j->io_seen ? GP_CONF_MEDIUM : GP_CONF_LOW;
	/* A cycle of owners read from the mutexes themselves, flat for
	 * hang_after: no other reading of it (waitjudge.c). */
	if (act->deadlock)
		level = GP_CONF_HIGH;
	/* High only where the evidence cannot be read another way: a busy
	 * thread with no output may be computing; waits the outside look
	 * cannot tell cap it too (classify_waits). */
	enum gp_conf cap = act->kind == GP_CLASS_HANG_BUSY_USER ? GP_CONF_MEDIUM : act->conf_cap;
	if (cap != GP_CONF_ANY && level != GP_CONF_LOW
	    && (cap == GP_CONF_LOW || level == GP_CONF_HIGH)) {
		level = cap;
		v->cap_why = act->kind == GP_CLASS_HANG_BUSY_USER ? GP_CAP_BUSY_USER
			     : act->kind == GP_CLASS_HANG_GPU_SPIN ? GP_CAP_GPU_WORK
			     : act->kind == GP_CLASS_WAITING_GPU && act->gw_n[GP_GW_WORK] == 0
			       && act->gw_n[GP_GW_BUSY] ? GP_CAP_GPU_WORK
			     : act->kind == GP_CLASS_WAITING_GPU ? GP_CAP_GPU
			     : act->java && act->jv.user && act->kind == GP_CLASS_HANG_BLOCKED ? GP_CAP_JAVA
			     : GP_CAP_WAITS;
	}
	v->confidence = level;
	if (j->o->stuck && j->o->stuck->t >= 0)
		v->stuck = *j->o->stuck;
	build_evidence(j->p, j->n, j->last_progress, j->o->page_size, v);
}

/* Flat, but not for hang_after yet: since the last progress (ng > 0) or
 * since the start. */
static void judge_short(const struct judging *j, struct gp_verdict *v)
{
	double from = j->ng ? j->last_progress : j->t0;
	v->cls = GP_CLASS_UNDECIDED;
	v->story = GP_STORY_SHORT;
	v->act = j->act;
	v->flat = j->flat;
	v->after_progress = j->ng > 0;
	v->since_s = v->judged_from = from;
	v->still_before_s = j->before;
	v->since_s -= j->before;
	v->judged_to = j->t_end;
	v->needs_s = j->H - j->flat;
	v->leans = j->act.kind;
	add_phase(v, from, j->t_end, GP_PHASE_ACTIVITY, 0);
	v->confidence = GP_CONF_LOW;
	build_evidence(j->p, j->n, from, j->o->page_size, v);
}

/* ETA when what is being paged in has a known size. */
static void add_eta(const struct judging *j, int metric, double recent, struct gp_verdict *v)
{
	const struct gp_point *l = j->l;
	v->eta_s = -1;
	if (metric != GP_M_RSS_FILE || l->map_bytes <= l->rss_file || recent <= 0)
		return;
	/* RssFile holds the libraries too: never below 0 to go */
	v->eta_s = ((double)l->map_bytes - (double)l->rss_file) / recent;
	v->eta_total = (double)l->map_bytes;
	v->eta_resident = (double)l->rss_file;
}

/* A slowdown is one kind of output getting slower: the metric that
 * carries the output after the split must itself have run SLOW_FACTOR
 * faster before it.  A start-up that maps its libraries (RssFile) and
 * reads its modules is no baseline for the log lines or the download
 * that follow (issue 20: a 200 KB/s download was "16x slower" than
 * curl's start-up). */
static bool same_output_slowed(const struct judging *j, size_t split, size_t last, double ratio,
			       int *m_after, double *r_after)
{
	const struct group *c = &j->g[j->ng - 1];
	double before[GP_M_COUNT] = { 0 }, after[GP_M_COUNT] = { 0 };
	for (size_t i = c->first; i <= last; i++)
		for (int m = 0; m < GP_M_COUNT; m++)
			(i <= split ? before : after)[m] += j->st[i].by_metric[m];
	int m = 0;
	for (int k = 1; k < GP_M_COUNT; k++)
		if (after[k] > after[m])
			m = k;
	/* Answers sent are the work a server does, whatever its heap does
	 * meanwhile (issue 32: node answering 2 requests a second, 2 KiB/s,
	 * its heap +270 KiB/s after a start-up of 5 MiB/s, read "151x
	 * slower"): where answers went out after the split, they are the
	 * output that did or did not slow. */
	if (after[GP_M_SOCK_TX] > 0)
		m = GP_M_SOCK_TX;
	*m_after = -1;
	if (after[m] <= 0)
		return true; /* no bytes after: the split's own ratio says it */
	double d1 = j->p[split].t - j->p[c->first - 1].t, d2 = j->p[last].t - j->p[split].t;
	if (d1 <= 0 || d2 <= 0)
		return ratio >= SLOW_FACTOR;
	/* A few KiB written at start-up (a cache, a banner) is no fast phase
	 * either: the fast side must have carried a step's worth a second. */
	double r1 = before[m] / d1, r2 = after[m] / d2;
	*m_after = m;
	*r_after = r2;
	return r1 >= SLOW_FACTOR * r2 && r1 >= gp_output_floor(m);
}

/* Progress.  Slow when it fell to under a tenth of its own earlier rate
 * (cut there: since_s is the slowdown), or runs under --slow-rate. */
static void judge_progress(const struct judging *j, struct gp_verdict *v)
{
	const struct gp_point *p = j->p;
	const struct group *c = &j->g[j->ng - 1];
	double dur = c->end - c->start;
	double rate = dur > 0 ? c->bytes / dur : 0;
	double min_side = 3 * j->interval > 5.0 ? 3 * j->interval : 5.0;
	size_t split = 0;
	double before = 0, after = 0;
	/* Judged on the phase itself: a tail asleep after the load ended is
	 * not a slowdown of it. */
	double ratio = slowdown_point(p, j->st, c->first - 1, c->last, min_side, &split, &before,
				      &after);
	int m_after = -1;
	double r_after = 0;
	bool slowed = ratio >= SLOW_FACTOR
		      && same_output_slowed(j, split, c->last, ratio, &m_after, &r_after);
	/* Not slower, but another output than the start-up's: the phase
	 * is cut there, and the output now is said with its own rate (a
	 * log line a second after a start-up that mapped its libraries). */
	bool startup = ratio >= SLOW_FACTOR && !slowed && m_after >= 0
		       && m_after != dominant_metric(c, j->st);
	/* Output that is GPU work has no bytes: a load of 437 MiB/s followed
	 * by a GEMM loop is no slowdown to 0 B/s (the H200, issue 19). */
	for (size_t i = split + 1; slowed && i <= c->last; i++)
		if (j->st[i].metrics & (1u << GP_M_GPU_WORK))
			slowed = false;
	double recent = slowed ? after : rate;
	bool slow = slowed || (j->o->slow_rate > 0 && rate < j->o->slow_rate && c->bytes > 0);
	v->cls = slow ? GP_CLASS_SLOW_PROGRESS : GP_CLASS_PROGRESS;
	v->story = slowed ? GP_STORY_SLOWED : slow ? GP_STORY_SLOW_RATE : GP_STORY_PROGRESS;
	v->since_s = slowed || startup ? p[split].t : c->start;
	v->judged_from = v->since_s;
	v->judged_to = j->t_end;
	v->rate_now = recent;
	if (slowed) {
		/* Cut the last progress phase where it slowed down. */
		struct gp_phase *last = &v->phase[v->nphases - 1];
		enum gp_output dm = (enum gp_output)dominant_metric(c, j->st);
		last->to = p[split].t;
		last->rate = before;
		last->nm = 1;
		last->m[0] = dm;
		last->mrate[0] = before;
		last->moving = false;
		last->pid = 0;
		struct gp_phase *ph = add_phase(v, p[split].t, c->end, GP_PHASE_PROGRESS, after);
		ph->nm = 1;
		ph->m[0] = dm;
		ph->mrate[0] = after;
		v->rate_before = before;
		v->ratio = isfinite(ratio) ? ratio : 0.0;
	}
	if (startup) {
		struct gp_phase *last = &v->phase[v->nphases - 1];
		last->to = p[split].t;
		struct gp_phase *ph = add_phase(v, p[split].t, c->end, GP_PHASE_PROGRESS, r_after);
		ph->nm = 1;
		ph->m[0] = (enum gp_output)m_after;
		ph->mrate[0] = r_after;
		recent = r_after;
		v->rate_now = r_after;
	}
	/* the ETA of what is paged in now: not of a start-up's mapping
	 * at the rate of the answers that followed it */
	add_eta(j, startup ? m_after : dominant_metric(c, j->st), recent, v);
	unsigned events = 0;
	for (size_t i = c->first; i <= c->last; i++)
		events += j->st[i].any;
	bool fresh = j->flat <= 2 * j->interval + 1e-9 || j->flat <= c->max_gap + 1e-9;
	v->confidence = slow ? GP_CONF_MEDIUM : events >= 3 && fresh ? GP_CONF_HIGH : GP_CONF_MEDIUM;
	v->events = events;
	v->flat = j->flat;
	build_evidence(p, j->n, v->since_s, j->o->page_size, v);
}

/* How long the tree had already been still when the trace began: the
 * least still_s of the processes there at its first sample (a PID
 * trace's target lines, proctab.h); 0 when one of them is not known.
 * Only a trace that saw no progress at all extends its flat time by it:
 * nothing ran before it either, so the flat stretch began then (issue
 * 28: a bundle's 10 s trace of a process deadlocked an hour ago). */
static double still_before(const struct gp_proctab *procs, double t0)
{
	double least = -1;
	for (size_t i = 0; procs && i < procs->n; i++) {
		const struct gp_proc_ident *q = &procs->p[i];
		if (q->first_t > t0 + 1e-3)
			continue;
		/* Read well before the samples begin (a watch record whose
		 * spool turned): what came between is not known. */
		if (q->first_t < t0 - 1.0)
			return 0;
		if (q->still_s < 0)
			return 0;
		if (least < 0 || q->still_s < least)
			least = q->still_s;
	}
	return least > 0 ? least : 0;
}

static void judge(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
		  struct gp_verdict *v)
{
	struct judging *j = calloc(1, sizeof *j);
	if (!j || !(j->st = calloc(n, sizeof *j->st))) {
		free(j);
		v->cls = GP_CLASS_UNDECIDED;
		v->story = GP_STORY_NO_MEMORY;
		return;
	}
	j->p = p;
	j->n = n;
	j->o = o;
	j->l = &p[n - 1];
	j->H = o->hang_after > 0 ? o->hang_after : GP_VERDICT_HANG_AFTER_DEFAULT;
	j->t0 = p[0].t;
	j->t_end = j->l->t;
	if (!judge_stopped(j, v)) {
		find_steps(p, n, j->H, j->st);
		j->ng = find_groups(p, n, j->st, j->H, j->g, GP_VERDICT_MAX_PHASES);
		build_phases(j, v);
		j->interval = median_interval(p, n);
		j->io_seen = j->l->have & GP_PT_IO;
		j->gpu = gpu_seen(j->l);
		measure_activity(p, n, j->last_progress, o->page_size, o->stuck, &j->act);
		measure_siblings(o->stuck, o->procs, &j->act);
		if (!j->ng) {
			j->before = still_before(o->procs, j->t0);
			v->before_by = GP_BEFORE_THREADS;
			if (o->flat_before > j->before) {
				j->before = o->flat_before;
				v->before_by = o->flat_before_by;
			}
			j->flat += j->before;
		}
		if (j->flat >= j->H && j->flat > 0) {
			judge_hang(j, v);
		} else if (j->ng) {
			const struct group *c = &j->g[j->ng - 1];
			double allowed = 2 * c->max_gap;
			if (allowed < 3 * j->interval)
				allowed = 3 * j->interval;
			if (allowed < 5.0)
				allowed = 5.0;
			if (j->flat > allowed)
				judge_short(j, v);   /* progress stopped a while ago */
			else
				judge_progress(j, v);
		} else {
			judge_short(j, v);           /* no progress ever */
		}
	}
	free(j->st);
	free(j);
}

/* The kernel's words in the judged phase: driver errors and hang/lockup/
 * OOM warnings, the first GP_VERDICT_MAX_KMSG kept and the rest counted
 * (a driver's other lines are context, not named). */
static void kmsg_in_phase(const struct gp_verdict_opts *o, struct gp_verdict *v)
{
	for (size_t i = 0; i < o->nkmsg; i++) {
		const struct gp_kmsg_note *k = &o->kmsg[i];
		if (!strcmp(k->kind, "other") || k->t < v->judged_from - 1 || k->t > v->judged_to + 1)
			continue;
		if (v->nkmsg == GP_VERDICT_MAX_KMSG)
			v->kmsg_more++;
		else
			v->kmsg[v->nkmsg++] = *k;
	}
}

void gp_verdict_compute(const struct gp_point *p, size_t n, const struct gp_verdict_opts *o,
			struct gp_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->eta_s = -1;
	v->stuck.t = -1;
	v->before = v->leans = GP_CLASS_COUNT;
	v->act.kind = GP_CLASS_UNDECIDED;
	v->act.conf_cap = GP_CONF_ANY;
	v->act.host_kind = GP_CLASS_COUNT;
	v->hang_after = o->hang_after > 0 ? o->hang_after : GP_VERDICT_HANG_AFTER_DEFAULT;
	v->watching = o->watching;
	v->confidence = GP_CONF_LOW;
	v->n_samples = n;
	if (o->machine) {
		gp_strlcpy(v->machine, o->machine, sizeof v->machine);
		v->machine_set = true;
	}
	if (n < 3) {
		v->cls = GP_CLASS_UNDECIDED;
		v->story = GP_STORY_TOO_FEW;
		if (n)
			v->since_s = v->judged_from = p[0].t, v->judged_to = p[n - 1].t;
	} else {
		judge(p, n, o, v);
	}
	const struct gp_point *l = n ? &p[n - 1] : NULL;
	if (l && !(l->have & GP_PT_IO))
		v->unseen |= GP_UNSEEN_IO;
	if (l && !(l->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML)))
		v->unseen |= GP_UNSEEN_GPU;
	if (l && !(l->have & GP_PT_SYSCALL))
		v->unseen |= GP_UNSEEN_SYSCALL;
	if (!o->kstacks_seen)
		v->unseen |= GP_UNSEEN_KSTACKS;
	if (o->kmsg_why && *o->kmsg_why)
		gp_strlcpy(v->kmsg_why, o->kmsg_why, sizeof v->kmsg_why);
	if (o->nkmsg && v->cls != GP_CLASS_PROGRESS)
		kmsg_in_phase(o, v);
	if (o->ras) /* NCCL's RAS reads: the renderer names a lagging rank */
		v->ras = *o->ras;

	if (o->end_reason && !strcmp(o->end_reason, "exited")) {
		v->before = v->cls;
		v->cls = GP_CLASS_EXITED;
		v->have_status = o->have_status;
		v->status = o->status;
		v->signal = o->signal;
		v->exit_t = l ? l->t : 0.0;
	}
}


bool gp_verdict_class_valid(const char *name)
{
	static const char *const classes[] = {
		"progress", "slow-progress", "idle", "waiting-gpu", "hang-blocked",
		"hang-busy-kernel", "hang-busy-user", "stopped", "exited", "undecided",
		"hang-gpu-spin",
	};
	for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
		if (!strcmp(name, classes[i]))
			return true;
	return false;
}

void gp_loaded_verdict_opts(const struct gp_loaded *l, struct gp_verdict_opts *vo)
{
	vo->page_size = l->page_size;
	vo->machine = l->machine;
	vo->kstacks_seen = l->kstacks_seen;
	vo->stuck = l->stuck.t >= 0 ? &l->stuck : NULL;
	vo->procs = &l->procs;
	vo->kmsg = l->kmsg;
	vo->nkmsg = l->nkmsg;
	vo->ras = l->ras.s.reads ? &l->ras.s : NULL;
	if (vo->hang_after <= 0) {
		json_t *h = json_object_get(l->verdict, "hang_after_s");
		vo->hang_after = json_is_number(h) ? json_number_value(h) : GP_VERDICT_HANG_AFTER_DEFAULT;
	}
	json_t *fb = json_object_get(l->header, "flat_before_s");
	if (json_is_number(fb) && json_number_value(fb) > 0 && json_number_value(fb) < 1e9)
		vo->flat_before = json_number_value(fb);
	json_t *st = json_object_get(l->exit, "status"), *sg = json_object_get(l->exit, "signal");
	vo->end_reason = json_string_value(json_object_get(l->exit, "reason"));
	vo->have_status = json_is_integer(st) || json_is_integer(sg);
	vo->status = json_is_integer(st) ? (int)json_integer_value(st) : 0;
	vo->signal = json_is_integer(sg) ? (int)json_integer_value(sg) : 0;
}
