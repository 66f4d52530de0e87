#include "config.h"
#include "proctab.h"
#include "gpujson.h"
#include "gpuwork.h"
#include "grow.h"
#include "parse.h"
#include "samplein.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_proctab_init(struct gp_proctab *t)
{
	memset(t, 0, sizeof *t);
}

void gp_proctab_free(struct gp_proctab *t)
{
	free(t->p);
	memset(t, 0, sizeof *t);
}

/* The index of pid, or where it would go. */
static size_t slot(const struct gp_proctab *t, int pid)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->p[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct gp_proc_ident *gp_proctab_find(const struct gp_proctab *t, int pid)
{
	size_t k = slot(t, pid);
	return k < t->n && t->p[k].pid == pid ? &t->p[k] : NULL;
}

static struct gp_proc_ident *find_mut(struct gp_proctab *t, int pid)
{
	size_t k = slot(t, pid);
	return k < t->n && t->p[k].pid == pid ? &t->p[k] : NULL;
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* An interpreter runs a script: its processes are told apart by it (a
 * job's ranks and its launcher are all python3). */
static bool interpreter(const char *name)
{
	static const char *const pfx[] = { "python", "pypy", "node", "ruby", "perl", "php", "Rscript",
		"julia", "lua", NULL };
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox", NULL };
	for (size_t i = 0; pfx[i]; i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return true;
	for (size_t i = 0; shells[i]; i++)
		if (!strcmp(name, shells[i]))
			return true;
	return false;
}

/* An interpreter's script: its first argument that is no option ("-u",
 * "-X dev" skipped); "-m MODULE" and "-c"/"-e" (code given inline: the
 * multiprocessing spawn children's `-c 'from multiprocessing.spawn
 * import spawn_main...'`) as they are.  NULL: none. */
static const char *script_of(const json_t *argv, char *buf, size_t cap)
{
	size_t n = json_array_size(argv);
	for (size_t i = 1; i < n; i++) {
		const char *a = json_string_value(json_array_get(argv, i));
		if (!a || !*a)
			return NULL;
		if (!strcmp(a, "-m") && i + 1 < n) {
			const char *m = json_string_value(json_array_get(argv, i + 1));
			snprintf(buf, cap, "-m %s", m ? m : "?");
			return buf;
		}
		if (!strcmp(a, "-c") || !strcmp(a, "-e"))
			return a;
		if (!strcmp(a, "-W") || !strcmp(a, "-X") || !strcmp(a, "-r") || !strcmp(a, "--require")) {
			i++;
			continue;
		}
		if (a[0] == '-')
			continue;
		return a;
	}
	return NULL;
}

/* Code given inline (-c, -e) tells programs apart by its head: the
 * statement before the first ';', '(' or newline ("from
 * multiprocessing.spawn import spawn_main" against "from
 * multiprocessing.resource_tracker import main": a pool's workers and its
 * resource tracker are not siblings, seen on an H100, 2026-12-06), the
 * arguments after it (each worker's pipe_handle) left out. */
static void code_head(struct gp_proc_ident *p, const json_t *argv, const char *flag)
{
	size_t n = json_array_size(argv);
	for (size_t i = 1; i + 1 < n; i++) {
		const char *a = json_string_value(json_array_get(argv, i));
		if (!a || strcmp(a, flag))
			continue;
		const char *code = json_string_value(json_array_get(argv, i + 1));
		if (!code)
			return;
		int len = (int)strcspn(code, ";(\n");
		if (len > 48)
			len = 48;
		size_t at = strlen(p->program);
		snprintf(p->program + at, sizeof p->program - at, " %.*s", len, code);
		return;
	}
}

static void set_program(struct gp_proc_ident *p, const json_t *target)
{
	const char *exe = json_string_value(json_object_get(target, "exe"));
	const json_t *argv = json_object_get(target, "cmdline");
	const char *a0 = json_string_value(json_array_get(argv, 0));
	const char *file = exe && *exe ? exe : a0 && *a0 ? a0 : p->comm;
	char mod[96];
	const char *script = interpreter(base(file)) || (a0 && interpreter(base(a0)))
			     ? script_of(argv, mod, sizeof mod) : NULL;
	snprintf(p->program, sizeof p->program, "%s%s%s", file, script ? " " : "", script ? script : "");
	if (script && (!strcmp(script, "-c") || !strcmp(script, "-e")))
		code_head(p, argv, script);
	if (!script)
		gp_strlcpy(p->label, base(file), sizeof p->label);
	else if (!strncmp(script, "-m ", 3))
		gp_strlcpy(p->label, script + 3, sizeof p->label);
	else if (script[0] == '-') {
		char lab[sizeof p->label + 128];
		snprintf(lab, sizeof lab, "%s %s", base(file), script);
		gp_strlcpy(p->label, lab, sizeof p->label);
	}
	else
		gp_strlcpy(p->label, base(script), sizeof p->label);
}

/* A job variable as a number: 0..2^24 in decimal, else -1. */
static int job_num(const json_t *env, const char *name)
{
	const char *s = json_string_value(json_object_get(env, name));
	uint64_t v;
	const char *end;
	if (!s || !*s || !gp_parse_u64(s, &v, &end) || *end || v > (1u << 24))
		return -1;
	return (int)v;
}

static int first_num(const json_t *env, const char *const *names)
{
	for (size_t i = 0; names[i]; i++) {
		int v = job_num(env, names[i]);
		if (v >= 0)
			return v;
	}
	return -1;
}

static void set_job(struct gp_proc_ident *p, const json_t *env)
{
	static const char *const ranks[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL };
	static const char *const sizes[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL };
	p->rank = first_num(env, ranks);
	p->world_size = first_num(env, sizes);
	p->local_rank = job_num(env, "LOCAL_RANK");
	/* Slurm sets SLURM_PROCID for every task, one task too: a rank
	 * only when the step has more than one. */
	if (p->rank < 0 && job_num(env, "SLURM_NTASKS") > 1) {
		p->rank = job_num(env, "SLURM_PROCID");
		p->world_size = job_num(env, "SLURM_NTASKS");
	}
	p->job_env = p->rank >= 0 || p->world_size > 0;
	const char *run = json_string_value(json_object_get(env, "TORCHELASTIC_RUN_ID"));
	const char *sj = json_string_value(json_object_get(env, "SLURM_JOB_ID"));
	const char *ss = json_string_value(json_object_get(env, "SLURM_STEP_ID"));
	const char *ma = json_string_value(json_object_get(env, "MASTER_ADDR"));
	const char *mp = json_string_value(json_object_get(env, "MASTER_PORT"));
	if (run && *run)
		snprintf(p->job, sizeof p->job, "torchelastic %s", run);
	else if (sj && *sj)
		snprintf(p->job, sizeof p->job, "slurm %s.%s", sj, ss ? ss : "?");
	else if (ma && mp)
		snprintf(p->job, sizeof p->job, "%s:%s", ma, mp);
}

void gp_proctab_target(struct gp_proctab *t, const json_t *target)
{
	const json_t *jp = json_object_get(target, "pid");
	if (!json_is_integer(jp) || json_integer_value(jp) <= 0 || json_integer_value(jp) > INT32_MAX)
		return;
	int pid = (int)json_integer_value(jp);
	struct gp_proc_ident *p = find_mut(t, pid);
	const json_t *jt = json_object_get(target, "t");
	double at = json_is_number(jt) ? json_number_value(jt) : 0.0;
	if (!p) {
		if (t->n >= GP_PROCTAB_MAX || !gp_grow(&t->p, &t->cap, t->n + 1, sizeof *t->p, 16))
			return;
		size_t k = slot(t, pid);
		memmove(&t->p[k + 1], &t->p[k], (t->n - k) * sizeof *t->p);
		t->n++;
		p = &t->p[k];
		memset(p, 0, sizeof *p);
		p->pid = pid;
		p->seen_t = p->first_t = at;
		p->still_s = -1;
		const json_t *js = json_object_get(target, "still_s");
		if (json_is_number(js) && json_number_value(js) >= 0 && json_number_value(js) < 1e9) {
			p->still_s = json_number_value(js);
			p->active_t = at - p->still_s;
			p->active_known = true;
		}
	} else if (p->gone) {
		return; /* a line about a pid that left: not this process */
	}
	const json_t *pp = json_object_get(target, "ppid");
	if (json_is_integer(pp) && json_integer_value(pp) >= 0 && json_integer_value(pp) <= INT32_MAX)
		p->ppid = (int)json_integer_value(pp);
	const char *comm = json_string_value(json_object_get(target, "comm"));
	gp_strlcpy(p->comm, comm ? comm : "?", sizeof p->comm);
	set_program(p, target);
	set_job(p, json_object_get(target, "job_env"));
}

bool gp_proctab_changed(const struct gp_proctab *t, const json_t *target)
{
	const json_t *jp = json_object_get(target, "pid");
	const struct gp_proc_ident *p = json_is_integer(jp) ? gp_proctab_find(t, (int)json_integer_value(jp)) : NULL;
	if (!p)
		return true;
	struct gp_proc_ident x = *p;
	set_program(&x, target);
	set_job(&x, json_object_get(target, "job_env"));
	return strcmp(x.program, p->program) || x.rank != p->rank || x.world_size != p->world_size
	       || strcmp(x.job, p->job);
}

void gp_proctab_seen(struct gp_proctab *t, int pid, double t_s)
{
	struct gp_proc_ident *p = find_mut(t, pid);
	if (p && !p->gone)
		p->seen_t = t_s;
}

void gp_proctab_sample_end(struct gp_proctab *t, double t_s, const json_t *died)
{
	size_t i;
	const json_t *d;
	json_array_foreach(died, i, d) {
		const json_t *jp = json_object_get(d, "pid");
		struct gp_proc_ident *p = json_is_integer(jp) ? find_mut(t, (int)json_integer_value(jp)) : NULL;
		if (!p || p->ended)
			continue;
		const json_t *st = json_object_get(d, "status"), *sg = json_object_get(d, "signal");
		p->ended = json_is_integer(st) || json_is_integer(sg);
		p->status = json_is_integer(st) ? (int)json_integer_value(st) : 0;
		p->signal = json_is_integer(sg) ? (int)json_integer_value(sg) : 0;
	}
	for (size_t k = 0; k < t->n; k++)
		if (!t->p[k].gone && t->p[k].seen_t < t_s) {
			t->p[k].gone = true;
			t->p[k].gone_t = t_s;
		}
}

void gp_proctab_ran(struct gp_proctab *t, int pid, double at, const struct gp_ran_mark *m)
{
	struct gp_proc_ident *p = find_mut(t, pid);
	if (!p || p->gone || !m)
		return;
	/* Its first listing is the baseline: a PID trace's first sample
	 * calls every thread new. */
	if (p->listed && (m->run_ns != p->ran.run_ns || m->cpu != p->ran.cpu)) {
		p->active_t = at;
		p->active_known = true;
	}
	p->ran = *m;
	p->listed = true;
}

void gp_proctab_gpu(struct gp_proctab *t, int pid, bool ctx, uint8_t gw)
{
	struct gp_proc_ident *p = find_mut(t, pid);
	if (!p || p->gone)
		return;
	p->gpu_ctx = ctx;
	if (gw != GP_GW_UNKNOWN)
		p->gw = gw;
}

/* A process's sample.gpu: a context where NVML lists it, DRM fdinfo has
 * a client of it or KFD a process; its kernels' work from the activity
 * read with it (once a second: none between). */
static void gpu_of(struct gp_proctab *t, int pid, const json_t *gpu)
{
	if (!json_is_object(gpu))
		return;
	bool ctx = gp_gpu_json_ctx(gpu);
	struct gp_gpu_work_pt pt;
	memset(&pt, 0, sizeof pt);
	const json_t *act = json_object_get(gpu, "activity");
	if (json_is_object(act))
		gp_gpuact_json_work(act, &pt);
	gp_proctab_gpu(t, pid, ctx, pt.work);
}

/* pid's main thread's mark from the records si resolved for `which`
 * (-1 the sample's own process, else its procs' index); NULL where it
 * has none. */
static const struct gp_ran_mark *main_mark(const struct gp_samplein *si, int which, int pid,
					   struct gp_ran_mark *m)
{
	const struct gp_trec *r;
	size_t n = si ? gp_samplein_threads(si, which, &r) : 0;
	for (size_t i = 0; i < n; i++) {
		if (r[i].tid != pid)
			continue;
		m->run_ns = r[i].have & TR_BIT(TR_RUN_NS) ? r[i].run_ns : 0;
		m->cpu = r[i].utime + r[i].stime;
		return m;
	}
	return NULL;
}

/* A process listed at `at` (its records si's `which`) and its GPU: seen,
 * where its main thread was, its GPU. */
static void listed(struct gp_proctab *t, const json_t *jp, const struct gp_samplein *si, int which,
		   const json_t *gpu, double at)
{
	if (!json_is_integer(jp))
		return;
	int pid = (int)json_integer_value(jp);
	struct gp_ran_mark m;
	gp_proctab_seen(t, pid, at);
	gp_proctab_ran(t, pid, at, main_mark(si, which, pid, &m));
	gpu_of(t, pid, gpu);
}

void gp_proctab_sample(struct gp_proctab *t, const json_t *s, const struct gp_samplein *si)
{
	const json_t *jt = json_object_get(s, "t");
	if (!json_is_number(jt))
		return;
	double at = json_number_value(jt);
	const json_t *jp = json_object_get(s, "pid");
	if (json_is_object(json_object_get(s, "proc")))
		listed(t, jp, si, -1, json_object_get(s, "gpu"), at);
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(s, "procs"), i, c)
		listed(t, json_object_get(c, "pid"), si, i > 255 ? -2 : (int)i, json_object_get(c, "gpu"), at);
	gp_proctab_sample_end(t, at, json_object_get(s, "died"));
}
