/* While a trace runs: when did output last move?  A cheap, incremental
 * form of the verdict's steps (memory new highs, io and engine counters,
 * threads or processes created, GPU work), so that the trace loop can
 * take the stacks as soon as a phase has been flat for --hang-after. */
#ifndef GP_FLATWATCH_H
#define GP_FLATWATCH_H

#include "series.h"

#include <stdbool.h>

struct gp_flat_watch {
	bool init;
	double since;    /* the time of the last output */
	double hi[4], base[5]; /* flatwatch.c: memory levels; counters (io, engine, sockets) */
	struct gp_point prev;    /* the previous sample (small writes) */
};

/* True when p made output. */
bool gp_flat_watch(struct gp_flat_watch *w, const struct gp_point *p);

#endif
