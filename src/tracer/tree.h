/* A process tree, sampled as one: the target and its descendants, the
 * ones that start and end during the trace included.  Inference servers
 * are trees (a server spawns runners or workers, and those hold the GPU),
 * and so are shells and stress-ng: progress anywhere in the tree is
 * progress, and a parent waiting in wait4 points at its child.
 *
 * Each sample is one `sample` line (doc/result-format.md, format 2): the
 * target's own members as before (proc, threads, gpu), its descendants in
 * `procs`, children before their parents, and one compact point for the
 * whole tree (model/point.h).  With children off, only the target is
 * followed; its children are still watched for their io alone, so that
 * what a reaped child did is not read as the parent's output. */
#ifndef GP_TREE_H
#define GP_TREE_H

#include "procfs.h"
#include "sampler.h"
#include "result.h"
#include "series.h"

#include <jansson.h>
#include <stdbool.h>

struct gp_gpu_house;

struct gp_tree_opts {
	const struct gp_root *root;
	int pid;
	bool children;     /* follow descendants (trace's default) */
	bool kstacks, no_nvml, reopen;
	unsigned max_procs; /* followed at most (the rest counted, not sampled) */
	/* GPU readers shared with other trees (watch: one NVML handle for
	 * every watched process); NULL: the tree makes its own. */
	struct gp_gpu_house *house;
};

struct gp_tree;

/* NULL with errno (ESRCH/ENOENT: no such process). */
struct gp_tree *gp_tree_new(const struct gp_tree_opts *o);
void gp_tree_free(struct gp_tree *t);

/* One sample of the tree at t.  On OK the line is written through write
 * (its streamed members appended) and *pt is filled; on GONE (the target
 * exited, or its PID names another process) *why says which. */
struct gp_result;
enum gp_sample_rc gp_tree_take(struct gp_tree *t, double tsec, struct gp_point *pt,
			       json_t **line, struct gp_raw *raws, size_t *nraws,
			       const char **why);

/* The followed processes of the last sample: i from 0 while it returns
 * true.  comm and s may be NULL (not wanted). */
bool gp_tree_member(const struct gp_tree *t, size_t i, int *pid, const char **comm,
		    struct gp_sampler **s);

/* Processes seen in the tree over the trace, and those not followed
 * because of max_procs. */
/* A command was just let go: its starts are counted from now, not from
 * the first sample (what runs between -- the target's identity, its
 * container, its libraries -- took long enough under the sanitizers for
 * a make's first recipe to start and end unseen: report-tree-counts). */
void gp_tree_mark_start(struct gp_tree *t);
/* Before the first sample: every followed process's threads read once,
 * ahead of the trace's clock (gp_sampler_prime). */
void gp_tree_prime(struct gp_tree *t);
/* The next sample stands alone: every thread and the vm written whole
 * (gp_sampler_keyframe), for a file that starts there. */
void gp_tree_keyframe(struct gp_tree *t);
void gp_tree_counts(const struct gp_tree *t, unsigned long *seen, unsigned long *capped);

/* Processes the tree started and that exited over the trace, every one
 * (tracer/forks.h); false with why when the process connector could not
 * be listened to (then only the processes a sample saw are known).
 * As of the last sample, so that they add up with its process count:
 * first + started - exited = last. */
struct gp_forks_counts;
bool gp_tree_forks(const struct gp_tree *t, struct gp_forks_counts *c, const char **why);

/* Totals of the target's own sampler (threads vanished, permissions...). */
void gp_tree_totals(const struct gp_tree *t, struct gp_sampler_totals *tot);

#endif
