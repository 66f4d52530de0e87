#include "config.h"
#include "flatwatch.h"
#include "verdict.h"

/* The same steps the verdict counts (verdict.h: gp_output_floor), taken
 * one sample at a time: memory against its highest value so far, not the
 * level it holds later (the judge has the whole trace; this has no future). */
bool gp_flat_watch(struct gp_flat_watch *w, const struct gp_point *p)
{
	static const int mem[] = { GP_M_RSS_FILE, GP_M_RSS_ANON, GP_M_VM_PIN, GP_M_GPU };
	static const int ctr[] = { GP_M_RCHAR, GP_M_WCHAR, GP_M_ENGINE, GP_M_SOCK_RX, GP_M_SOCK_TX };
	enum { NCTR = sizeof ctr / sizeof *ctr };
	if (!w->init) {
		for (int k = 0; k < 4; k++)
			w->hi[k] = gp_output_value(p, mem[k]);
		for (int k = 0; k < NCTR; k++)
			w->base[k] = gp_output_value(p, ctr[k]);
		w->since = p->t;
		w->init = true;
		w->prev = *p;
		return false;
	}
	bool step = gp_spawns_count(&w->prev, p) || (p->procs_created > p->died && !gp_failed_starts(p))
		    || p->gw.work == GP_GW_WORK;
	for (int k = 0; k < 4; k++) {
		double v = gp_output_value(p, mem[k]);
		if (v >= w->hi[k] + gp_output_floor(mem[k])) {
			w->hi[k] = v;
			step = true;
		}
	}
	for (int k = 0; k < NCTR; k++) {
		bool s = gp_counter_step(&w->base[k], gp_output_value(p, ctr[k]), gp_output_floor(ctr[k]));
		/* the reads of failed children's start-up: not output (steps.c) */
		step |= s && !(ctr[k] == GP_M_RCHAR && gp_failed_starts(p));
	}
	if (gp_small_write(&w->prev, p)) {
		step = true;
		w->base[1] = gp_output_value(p, GP_M_WCHAR);
	}
	w->prev = *p;
	if (step)
		w->since = p->t;
	return step;
}
