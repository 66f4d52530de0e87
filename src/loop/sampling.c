/* One followed process tree, sampled and stacked: see sampling.h. */
#include "config.h"
#include "sampling.h"
#include "error.h"
#include "grow.h"
#include "load.h"
#include "ptstop.h"
#include "stacks_hint.h"
#include "tasks.h"

#include <stdlib.h>

struct gp_sampling_session {
	int pid;
	struct gp_stacks *stk;
};

int gp_sampling_init(struct gp_sampling *s, const struct gp_sampling_opts *o)
{
	*s = (struct gp_sampling){ .o = *o };
	gp_stuck_init(&s->stuck);
	struct gp_tree_opts to = { .root = o->root, .pid = o->pid, .children = o->children,
				   .kstacks = o->kstacks, .no_nvml = o->no_nvml, .reopen = o->reopen,
				   .house = o->house };
	s->tree = gp_tree_new(&to);
	return s->tree ? 0 : -1;
}

void gp_sampling_free(struct gp_sampling *s)
{
	for (size_t i = 0; i < s->nsess; i++)
		gp_stacks_close(s->sess[i].stk);
	free(s->sess);
	s->sess = NULL;
	s->nsess = s->capsess = 0;
	gp_tree_free(s->tree);
	s->tree = NULL;
}

enum gp_sample_rc gp_sampling_take(struct gp_sampling *s, double t, struct gp_point *pt,
				   json_t **line, struct gp_raw *raws, size_t *nraws,
				   const char **why)
{
	/* Threads a SIGKILL took from us mid-stop keep a dead target
	 * looking alive until we take their exit (ptstop.h). */
	gp_ptstop_drain();
	enum gp_sample_rc rc = gp_tree_take(s->tree, t, pt, line, raws, nraws, why);
	gp_ptstop_drain(); /* a late stop may have come meanwhile */
	return rc;
}

bool gp_sampling_output(struct gp_sampling *s, const struct gp_point *pt)
{
	if (!gp_flat_watch(&s->fw, pt))
		return false;
	s->hang_snapped = false;
	return true;
}

bool gp_sampling_hang_due(struct gp_sampling *s, double t)
{
	if (s->hang_snapped || !s->fw.init || t - s->fw.since < s->o.hang_after)
		return false;
	s->hang_snapped = true;
	return true;
}

double gp_sampling_flat_for(const struct gp_sampling *s, double t)
{
	return s->fw.init ? t - s->fw.since : 0;
}

size_t gp_sampling_hot(struct gp_sampler *smp, double hot_pct, int *tids, size_t cap)
{
	size_t n, k = 0;
	const struct gp_thread *th = gp_sampler_threads(smp, &n);
	for (size_t i = 0; i < n && k < cap; i++)
		if (th[i].cpu_pct >= hot_pct)
			tids[k++] = th[i].tid;
	return k;
}

/* The stacks session of process pid, opened at its first use. */
static struct gp_stacks *session(struct gp_sampling *s, int pid)
{
	for (size_t i = 0; i < s->nsess; i++)
		if (s->sess[i].pid == pid)
			return s->sess[i].stk;
	if (!gp_grow(&s->sess, &s->capsess, s->nsess + 1, sizeof *s->sess, 8))
		return NULL;
	struct gp_stacks *stk = gp_stacks_open(pid, (s->o.kstacks ? 0 : GP_STACKS_NO_KERNEL) |
					       (s->o.no_python ? GP_STACKS_NO_PYTHON : 0));
	if (!stk)
		return NULL;
	s->sess[s->nsess++] = (struct gp_sampling_session){ pid, stk };
	return stk;
}

void gp_sampling_snapshot(struct gp_sampling *s, int pid, struct gp_sampler *smp, double t,
			  const int *tids, size_t k, const char *why, struct gp_point *pt, bool keep)
{
	if (!s->o.stacks)
		return;
	struct gp_stacks *stk = session(s, pid);
	json_t *line = NULL;
	uint64_t before = 0, after = 0;
	/* The unwinder's reads of the target's files grow its page cache
	 * share: not the target's output. */
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
		gp_stuck_add(&s->stuck, line);
	if (s->o.emit)
		s->o.emit(s->o.ctx, t, line);
	else
		json_decref(line);
	const char *hint = s->o.hints ? gp_stacks_hint(stk) : NULL;
	if (hint && !s->hinted) {
		gp_hint("%s", hint);
		s->hinted = true;
	}
}

void gp_sampling_snapshot_all(struct gp_sampling *s, double t, const char *why)
{
	int pid;
	struct gp_sampler *smp;
	for (size_t m = 0; gp_tree_member(s->tree, m, &pid, NULL, &smp); m++)
		gp_sampling_snapshot(s, pid, smp, t, NULL, 0, why, NULL, true);
}

void gp_sampling_sweep(struct gp_sampling *s)
{
	for (size_t i = 0; i < s->nsess;) {
		int pid;
		bool member = false;
		for (size_t m = 0; !member && gp_tree_member(s->tree, m, &pid, NULL, NULL); m++)
			member = pid == s->sess[i].pid;
		if (member) {
			i++;
			continue;
		}
		gp_stacks_close(s->sess[i].stk);
		s->sess[i] = s->sess[--s->nsess];
	}
}
