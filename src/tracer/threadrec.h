/* A sample's thread records (doc/result-format.md, "Threads"): a thread
 * written whole the first time it is seen, then as a delta against its
 * last record when it ran (format 4), or as a reference to it when it
 * did not (format 3).  The last record each thread was written with is
 * kept by its tasks.c slot (gp_thread.rec_mem). */
#ifndef GP_THREADREC_H
#define GP_THREADREC_H

#include "jsonw.h"
#include "tasks.h"
#include "waitgraph.h"
#include "waits.h"

#include <stdbool.h>

/* What the thread's last record said: the base of its next delta. */
struct gp_thread_rec {
	bool valid;
	struct gp_thread th;     /* kstack NULL: written when read, not carried */
	uint8_t wait;            /* enum gp_wait */
	struct gp_wait_edge on;
};

/* CPU% and its system part over the thread's own interval, to 0.01. */
void gp_thread_cpu(const struct gp_thread *th, double clk, double dt, double *cpu, double *sys);

/* The record of a thread that was read this sample: whole when it is
 * new, when dt is 0 (the first sample), when it has no base or when
 * whole is set; else a delta.  Its base becomes this record. */
void gp_threadrec_write(struct gp_jsonw *w, const struct gp_thread *th, double clk, double dt,
			enum gp_wait wait, const struct gp_wait_edge *on, bool whole);

/* References to threads that did not run: consecutive tids written as
 * one {"same":[FIRST,LAST]}.  gp_same_flush before any other record. */
struct gp_same_run {
	int first, last;
	bool open;
};
void gp_same_add(struct gp_jsonw *w, struct gp_same_run *r, const struct gp_thread *th);
void gp_same_flush(struct gp_jsonw *w, struct gp_same_run *r);

#endif
