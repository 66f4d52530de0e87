/* What the verdict's files share among themselves (not for callers:
 * verdict.h is the interface).  The verdict is split by concern:
 *   steps.c      which intervals made output (the floors)
 *   phases.c     steps grouped into progress stretches; slowdowns
 *   activity.c   what the process did while it made none
 *   waitjudge.c  what its sleeping threads wait for
 *   siblings.c   its processes of one program compared (ranks, workers)
 *   evidence.c   the rows shown for the judged phase
 *   verdict.c    the judge: which story, which class, how sure */
#ifndef GP_VERDICT_INT_H
#define GP_VERDICT_INT_H

#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>

/* Noise floors: what counts as one step of output.  Small enough that a
 * trickle adds up (the baseline only moves when a step is counted, so
 * 100 KiB/s of growth is still seen every few seconds), large enough
 * that allocator jitter and a status-file read now and then are not
 * mistaken for a load making headway. */
#define FLOOR_MEM ((double)(256u << 10))
#define FLOOR_IO ((double)(64u << 10))
#define FLOOR_ENGINE_NS 1e6
/* Under this share of one core over the judged phase, nothing is busy. */
#define BLOCKED_CPU_PCT 5.0
/* Recent output rate under 1/SLOW_FACTOR of the trace's own peak: slow. */
#define SLOW_FACTOR 10.0

struct step {
	bool any;
	double bytes;              /* output bytes counted in this interval */
	double by_metric[GP_M_COUNT];
	unsigned metrics;          /* bit per metric */
};

/* A stretch of steps with no gap of hang_after or more. */
struct group {
	size_t first, last;        /* step indices */
	double start, end, bytes, max_gap;
	double by_metric[GP_M_COUNT];
};

/* steps.c */
bool gpu_seen(const struct gp_point *p);
bool memory_metric(int m);
void find_steps(const struct gp_point *p, size_t n, double hold_s, struct step *st);
size_t index_at(const struct gp_point *p, size_t n, double t);
double median_interval(const struct gp_point *p, size_t n);

/* phases.c */
size_t find_groups(const struct gp_point *p, size_t n, const struct step *st,
		   double hang_after, struct group *g, size_t cap);
int dominant_metric(const struct group *g, const struct step *st);
struct gp_phase *add_phase(struct gp_verdict *v, double from, double to,
			   enum gp_phase_kind kind, double rate);
void progress_metrics(struct gp_phase *ph, const struct group *g, const struct step *st);
double slowdown_point(const struct gp_point *p, const struct step *st, size_t from,
		      size_t to, double min_after, size_t *split, double *before,
		      double *after);
int phase_process(const struct gp_point *p, size_t from, size_t to, char *comm, size_t cap);

/* activity.c */
void measure_activity(const struct gp_point *p, size_t n, double from,
		      long page_size, const struct gp_stuck *stuck, struct gp_activity *a);

/* siblings.c: the tree's processes of one program compared, into a->sib */
void measure_siblings(const struct gp_stuck *stuck, const struct gp_proctab *procs,
		      struct gp_activity *a);

/* waitjudge.c */
void classify_waits(const struct gp_point *l, const struct gp_stuck *stuck,
		    struct gp_activity *a);
void stuck_waits(const struct gp_stuck *stuck, struct gp_activity *a);
/* A database statement asleep on a lock inside its engine (waitjudge.c):
 * decides hang-blocked, true; false when the stacks hold none. */
bool judge_db_lock(const struct gp_stuck *stuck, struct gp_activity *a);
/* CPython's GIL in the stacks: its holder (in any state) and how many
 * threads of its process wait in take_gil, into a->gil_*; nothing when
 * none waits (waitjudge.c). */
void note_gil(const struct gp_stuck *stuck, struct gp_activity *a);

/* evidence.c */
void build_evidence(const struct gp_point *p, size_t n, double from,
		    long page_size, struct gp_verdict *v);

#endif
