#include "config.h"
#include "series.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

static uint32_t add32(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* b, the later point, standing for the interval of a and b together: its
 * counters and levels are b's (read at its time); what counts events over
 * an interval is summed; a rate over it is their time-weighted mean; what
 * names the busiest of an interval is the busier interval's. */
static void merge_into(struct gp_point *b, const struct gp_point *a, double ta0)
{
	double da = a->t - ta0, db = b->t - a->t, d = da + db;
	if (d > 0 && da >= 0 && db >= 0)
		b->cpu_pct = (float)((a->cpu_pct * da + b->cpu_pct * db) / d);
	b->threads_created = add32(a->threads_created, b->threads_created);
	b->threads_spawned = add32(a->threads_spawned, b->threads_spawned);
	if (!b->ended_tid) {
		b->ended_tid = a->ended_tid;
		b->ended_pid = a->ended_pid;
		memcpy(b->ended_comm, a->ended_comm, sizeof b->ended_comm);
	}
	b->threads_exited = add32(a->threads_exited, b->threads_exited);
	b->threads_vanished = add32(a->threads_vanished, b->threads_vanished);
	b->procs_created = add32(a->procs_created, b->procs_created);
	b->procs_exited = add32(a->procs_exited, b->procs_exited);
	b->died = (uint16_t)(a->died + b->died < UINT16_MAX ? a->died + b->died : UINT16_MAX);
	b->died_killed = (uint16_t)(a->died_killed + b->died_killed < UINT16_MAX
				    ? a->died_killed + b->died_killed : UINT16_MAX);
	b->died_nonzero = (uint16_t)(a->died_nonzero + b->died_nonzero < UINT16_MAX
				     ? a->died_nonzero + b->died_nonzero : UINT16_MAX);
	if (!b->death_pid || (a->death_signal && !b->death_signal)) {
		b->death_pid = a->death_pid;
		b->death_ppid = a->death_ppid;
		b->death_signal = a->death_signal;
		b->death_status = a->death_status;
		memcpy(b->death_comm, a->death_comm, sizeof b->death_comm);
	}
	if (a->top_cpu_pct > b->top_cpu_pct) {
		b->top_tid = a->top_tid;
		b->top_cpu_pct = a->top_cpu_pct;
		b->top_sys_pct = a->top_sys_pct;
		b->top_sc_nr = a->top_sc_nr;
		b->top_sc_arg0 = a->top_sc_arg0;
		b->top_sc_arg1 = a->top_sc_arg1;
		memcpy(b->top_comm, a->top_comm, sizeof b->top_comm);
		memcpy(b->top_frame, a->top_frame, sizeof b->top_frame);
		memcpy(b->top_wchan, a->top_wchan, sizeof b->top_wchan);
		b->top_pid = a->top_pid;
		memcpy(b->top_pcomm, a->top_pcomm, sizeof b->top_pcomm);
		b->top2_tid = a->top2_tid;
		b->top2_cpu_pct = a->top2_cpu_pct;
		b->top2_sys_pct = a->top2_sys_pct;
		memcpy(b->top2_comm, a->top2_comm, sizeof b->top2_comm);
		memcpy(b->top2_frame, a->top2_frame, sizeof b->top2_frame);
		b->top2_pid = a->top2_pid;
		memcpy(b->top2_pcomm, a->top2_pcomm, sizeof b->top2_pcomm);
	}
	if (a->out_bytes > b->out_bytes) {
		b->out_pid = a->out_pid;
		b->out_bytes = a->out_bytes;
		memcpy(b->out_comm, a->out_comm, sizeof b->out_comm);
	}
}

/* The older part, points 1 .. n - recent - 1, merged into cells of one
 * width on a grid from the first point's time (a cell is (t0 + (c-1) w,
 * t0 + c w], its point the last sample in it), the first point (the
 * trace's start) and the newest `recent` kept as they are.  The width
 * doubles until the older part fits in GP_SERIES_MAX / 4 cells: a cell of
 * the old width lies in exactly one of the new, so the older part's
 * resolution stays even across it (not coarser the older a point is) and
 * halves when the trace doubles. */
static size_t cell_of(const struct gp_series *s, double t)
{
	double c = (t - s->pt[0].t) / s->width;
	return c <= 0 ? 0 : (size_t)c + (c > (double)(size_t)c);
}

static void compact(struct gp_series *s, size_t max)
{
	size_t recent = max / 2, old_end = s->n - recent, cells = max / 4;
	if (s->n <= recent + 2 || cells < 1)
		return;
	double span = s->pt[old_end - 1].t - s->pt[0].t;
	if (!(span > 0))
		return;
	if (!(s->width > 0))
		s->width = span / (double)cells;
	while (span / s->width > (double)cells)
		s->width *= 2;
	size_t w = 1, i = 1;
	while (i < old_end) {
		double from = s->pt[w - 1].t;   /* the interval the group covers starts here */
		struct gp_point acc = s->pt[i++];
		size_t c = cell_of(s, acc.t);
		while (i < old_end && cell_of(s, s->pt[i].t) == c) {
			struct gp_point next = s->pt[i++];
			merge_into(&next, &acc, from);
			acc = next;
		}
		s->pt[w++] = acc;   /* w < i: written behind the reads */
	}
	memmove(&s->pt[w], &s->pt[old_end], recent * sizeof *s->pt);
	s->n = w + recent;
	s->merged = true;
}

int gp_series_push(struct gp_series *s, const struct gp_point *p)
{
	size_t max = s->max ? s->max : GP_SERIES_MAX;
	if (s->n >= max)
		compact(s, max);
	if (!gp_grow(&s->pt, &s->cap, s->n + 1, sizeof *s->pt, 256))
		return -1;
	s->pt[s->n++] = *p;
	s->samples++;
	return 0;
}

void gp_series_free(struct gp_series *s)
{
	free(s->pt);
	memset(s, 0, sizeof *s);
}
