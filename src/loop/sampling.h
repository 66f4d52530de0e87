/* One followed process tree, as trace and watch both sample it: the tree
 * (tracer/tree.h: the target and its descendants, their threads), the
 * stacks sessions of its processes (one a process, opened at first use,
 * closed when it leaves the tree), and the flat watch (flatwatch.h) that
 * says when a phase has been flat for --hang-after: then every thread of
 * every process is stacked once for that flat stretch, and those stacks
 * are the verdict's (stuck).  The late ptrace stops a stack leaves are
 * drained around every sample here (ptstop.h), so a fix to stop handling
 * lands once for both commands.  What stays each command's own: which
 * threads to stack each tick (trace: hot, or --stacks all's new places;
 * watch: hot ones of a flat process, at most every 10 s), and where the
 * lines go (emit). */
#ifndef GP_SAMPLING_H
#define GP_SAMPLING_H

#include "flatwatch.h"
#include "procfs.h"
#include "sampler.h"
#include "stuck.h"
#include "tree.h"

#include <jansson.h>
#include <stdbool.h>

struct gp_gpu_house;
struct gp_stacks;

struct gp_sampling_opts {
	const struct gp_root *root;
	int pid;
	bool children;             /* the descendants too (trace's and watch's default) */
	bool kstacks, no_python, no_nvml, reopen;
	bool stacks;               /* user stacks at all (false: --stacks none, a replayed root) */
	bool hints;                /* a stacks session's hint said once (gp_hint) */
	double hang_after;
	struct gp_gpu_house *house; /* shared GPU readers; NULL: the tree's own */
	/* Where a stacks line goes (stolen); NULL: dropped. */
	void (*emit)(void *ctx, double t, json_t *line);
	void *ctx;
};

struct gp_sampling_session;

struct gp_sampling {
	struct gp_sampling_opts o;
	struct gp_tree *tree;
	struct gp_sampling_session *sess;
	size_t nsess, capsess;
	struct gp_flat_watch fw;   /* when output last moved */
	bool hang_snapped;         /* this flat stretch has its snapshot */
	struct gp_stuck stuck;     /* the last hang/end snapshot (t < 0: none) */
	bool hinted;
};

/* 0, or -1 with errno (ESRCH/ENOENT: no such process). */
int gp_sampling_init(struct gp_sampling *s, const struct gp_sampling_opts *o);
void gp_sampling_free(struct gp_sampling *s);

/* One sample of the tree at t (gp_tree_take), the late stops drained
 * before and after it. */
enum gp_sample_rc gp_sampling_take(struct gp_sampling *s, double t, struct gp_point *pt,
				   json_t **line, struct gp_raw *raws, size_t *nraws,
				   const char **why);

/* After a sample: true when pt made output (a flat stretch ends). */
bool gp_sampling_output(struct gp_sampling *s, const struct gp_point *pt);
/* True once per flat stretch, at the first t it has been flat for
 * --hang-after: the hang snapshot is due (taken as said). */
bool gp_sampling_hang_due(struct gp_sampling *s, double t);
/* Seconds since output last moved (0 before the first sample). */
double gp_sampling_flat_for(const struct gp_sampling *s, double t);

/* The threads of member smp at or over hot_pct CPU, at most cap, into
 * tids; how many. */
size_t gp_sampling_hot(struct gp_sampler *smp, double hot_pct, int *tids, size_t cap);
/* One `stacks` line of process pid (tids NULL: every thread) with why;
 * the busiest threads' frames noted in pt (NULL: not); kept as the
 * stuck snapshot when keep.  smp: pid's sampler, whose RSS the unwinding
 * itself grew is taken out of its output (NULL: not counted). */
void gp_sampling_snapshot(struct gp_sampling *s, int pid, struct gp_sampler *smp, double t,
			  const int *tids, size_t k, const char *why, struct gp_point *pt, bool keep);
/* Every thread of every member, once, kept as the stuck snapshot. */
void gp_sampling_snapshot_all(struct gp_sampling *s, double t, const char *why);
/* The sessions of processes no longer in the tree, closed. */
void gp_sampling_sweep(struct gp_sampling *s);

#endif
