/* Which threads trace stacks each tick (see run.h): hot ones every tick;
 * with --stacks all, every other thread once per place it waits in. */
#include "config.h"
#include "run.h"
#include "sampler.h"
#include "tasks.h"
#include "tree.h"

#include <stdlib.h>

/* Where a thread waits, as one number: its wchan and syscall. */
static uint64_t place_key(const struct gp_thread *th)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *c = th->wchan; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	h ^= (uint64_t)(th->sc.kind) << 56;
	h = (h ^ (uint64_t)th->sc.nr) * 1099511628211ull;
	return (h ^ th->sc.args[1]) * 1099511628211ull;
}

/* --stacks all: where each thread was last stacked, in an open-addressed
 * table keyed by tid and starttime (a reused tid is a new thread, not
 * the dead one's heir); an entry not seen for a whole tick is swept when
 * the table grows.  It was an array scanned linearly for every thread of
 * every tick, that kept every tid it ever saw. */
struct place {
	int tid;              /* 0: empty */
	uint64_t start;       /* the thread's starttime */
	uint64_t key;         /* place_key() */
	unsigned long tick;   /* the last tick it was seen */
};

static size_t place_slot(const struct place *tab, size_t cap, int tid, uint64_t start)
{
	size_t h = ((uint64_t)(unsigned)tid * 0x9e3779b97f4a7c15ull ^ start) & (cap - 1);
	while (tab[h].tid && !(tab[h].tid == tid && tab[h].start == start))
		h = (h + 1) & (cap - 1);
	return h;
}

/* Rebuilds the table at twice the size, or the same when half of it was
 * dead threads; false when out of memory. */
static bool places_rehash(struct run *r)
{
	size_t live = 0;
	for (size_t i = 0; i < r->capplaces; i++)
		live += r->places[i].tid && r->places[i].tick + 1 >= r->tick;
	size_t cap = r->capplaces ? r->capplaces : 256;
	while (live * 2 >= cap)
		cap *= 2;
	struct place *tab = calloc(cap, sizeof *tab);
	if (!tab)
		return false;
	for (size_t i = 0; i < r->capplaces; i++) {
		const struct place *p = &r->places[i];
		if (p->tid && p->tick + 1 >= r->tick)
			tab[place_slot(tab, cap, p->tid, p->start)] = *p;
	}
	free(r->places);
	r->places = tab;
	r->capplaces = cap;
	r->nplaces = live;
	return true;
}

/* --stacks all: true when the thread waits somewhere it was not stacked
 * in (and remembers the place). */
static bool new_place(struct run *r, const struct gp_thread *th)
{
	if ((r->nplaces + 1) * 2 > r->capplaces && !places_rehash(r))
		return false;
	uint64_t key = place_key(th);
	struct place *p = &r->places[place_slot(r->places, r->capplaces, th->tid, th->st.starttime)];
	if (p->tid) {
		p->tick = r->tick;
		if (p->key == key)
			return false;
		p->key = key;
		return true;
	}
	*p = (struct place){ th->tid, th->st.starttime, key, r->tick };
	r->nplaces++;
	return true;
}

/* Why a tick's stacks of a process were taken: a hot thread among them
 * (with --stacks all, new places too), or new places alone. */
static const char *hot_or_all(const struct run *r, const struct gp_thread *th, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (th[i].cpu_pct >= r->o->st.hot_pct)
			return r->o->stacks == STACKS_ALL ? "hot+place" : "hot";
	return "place";
}

/* The stacks of this tick: hot threads every tick; with --stacks all,
 * every other thread once per place it waits in.  Writes a `stacks` line
 * a process and notes the busiest threads' hot frames in the point. */
void trace_take_stacks(struct run *r, double t, struct gp_point *pt)
{
	r->tick++;
	if (!r->smp.o.stacks)
		return;
	int pid;
	struct gp_sampler *smp;
	for (size_t m = 0; gp_tree_member(r->smp.tree, m, &pid, NULL, &smp); m++) {
		size_t n;
		const struct gp_thread *th = gp_sampler_threads(smp, &n);
		int *tids = malloc((n ? n : 1) * sizeof *tids);
		if (!tids)
			return;
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			bool hot = th[i].cpu_pct >= r->o->st.hot_pct;
			bool stack = hot;
			if (r->o->stacks == STACKS_ALL && !hot && th[i].st.state != 'R')
				stack = new_place(r, &th[i]);
			if (stack)
				tids[k++] = th[i].tid;
		}
		if (k)
			gp_sampling_snapshot(&r->smp, pid, smp, t, tids, k, hot_or_all(r, th, n), pt, false);
		free(tids);
	}
	gp_sampling_sweep(&r->smp);
}
