/* Phases: steps of output grouped into progress stretches, the metric
 * that carried each, and where a stretch slowed down. */
#include "config.h"
#include "verdict.h"
#include "verdict_int.h"
#include "parse.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

size_t find_groups(const struct gp_point *p, size_t n, const struct step *st,
			  double hang_after, struct group *g, size_t cap)
{
	size_t ng = 0;
	for (size_t i = 1; i < n; i++) {
		if (!st[i].any)
			continue;
		if (ng && p[i].t - g[ng - 1].end < hang_after) {
			struct group *c = &g[ng - 1];
			double gap = p[i].t - c->end;
			if (gap > c->max_gap)
				c->max_gap = gap;
			c->last = i;
			c->end = p[i].t;
		} else {
			if (ng == cap) {
				/* Keep the latest groups: shift the oldest out. */
				memmove(g, g + 1, (cap - 1) * sizeof *g);
				ng--;
			}
			struct group *c = &g[ng++];
			memset(c, 0, sizeof *c);
			c->first = c->last = i;
			c->start = p[i - 1].t;
			c->end = p[i].t;
			c->max_gap = p[i].t - p[i - 1].t;
		}
		struct group *c = &g[ng - 1];
		c->bytes += st[i].bytes;
		for (int m = 0; m < GP_M_COUNT; m++)
			c->by_metric[m] += st[i].by_metric[m];
	}
	return ng;
}

int dominant_metric(const struct group *g, const struct step *st)
{
	/* GPU work going on at the phase's end is its output now, whatever
	 * bytes a load before it moved. */
	unsigned steps = 0, work = 0;
	for (size_t i = g->first; i <= g->last; i++)
		if (st[i].any) {
			steps++;
			work += (st[i].metrics >> GP_M_GPU_WORK) & 1u;
		}
	if ((st[g->last].metrics & (1u << GP_M_GPU_WORK)) || (work && work * 2 >= steps))
		return GP_M_GPU_WORK;
	/* Bytes read and written are what a program puts out (xz, a loader
	 * reading a file); a heap growing beside them is its working set. */
	static const int bytes_moved[] = { GP_M_RCHAR, GP_M_WCHAR, GP_M_SOCK_RX, GP_M_SOCK_TX };
	double io = 0;
	int most = GP_M_RCHAR;
	for (size_t k = 0; k < sizeof bytes_moved / sizeof *bytes_moved; k++) {
		io += g->by_metric[bytes_moved[k]];
		if (g->by_metric[bytes_moved[k]] > g->by_metric[most])
			most = bytes_moved[k];
	}
	if (io > 0 && io >= 0.1 * g->bytes)
		return most;
	int best = -1;
	for (int m = 0; m < GP_M_COUNT; m++)
		if (g->by_metric[m] > 0 && (best < 0 || g->by_metric[m] > g->by_metric[best]))
			best = m;
	if (best >= 0)
		return best;
	for (size_t i = g->first; i <= g->last; i++)
		if (st[i].metrics & (1u << GP_M_GPU_WORK))
			return GP_M_GPU_WORK;
	for (size_t i = g->first; i <= g->last; i++)
		for (int m = 0; m < GP_M_COUNT; m++)
			if (st[i].metrics & (1u << m))
				return m;
	return GP_M_THREADS;
}

struct gp_phase *add_phase(struct gp_verdict *v, double from, double to,
				  enum gp_phase_kind kind, double rate)
{
	if (v->nphases == GP_VERDICT_MAX_PHASES) {
		memmove(v->phase, v->phase + 1, (GP_VERDICT_MAX_PHASES - 1) * sizeof v->phase[0]);
		v->nphases--;
	}
	struct gp_phase *ph = &v->phase[v->nphases++];
	memset(ph, 0, sizeof *ph);
	ph->from = from;
	ph->to = to;
	ph->kind = kind;
	ph->progress = kind == GP_PHASE_PROGRESS;
	ph->rate = rate;
	return ph;
}

/* A progress phase's output: the dominant metric's rate first, then each
 * metric that carried a tenth of the output or more ("RssFile +356.0
 * MiB/s, read() +12.0 MiB/s"); no bytes: the metric is "moving". */
void progress_metrics(struct gp_phase *ph, const struct group *g, const struct step *st)
{
	int m = dominant_metric(g, st);
	double dur = g->end - g->start;
	ph->m[0] = (enum gp_output)m;
	ph->nm = 1;
	if (!(g->bytes > 0 && dur > 0)) {
		ph->moving = true;
		return;
	}
	ph->mrate[0] = g->by_metric[m] / dur;
	for (int k = 0; k < GP_M_COUNT; k++) {
		if (k != m && g->by_metric[k] > 0.1 * g->bytes) {
			ph->m[ph->nm] = (enum gp_output)k;
			ph->mrate[ph->nm++] = g->by_metric[k] / dur;
		}
	}
}

/* Where the output rate of a progress stretch changed the most: the split
 * point s (a sample index) maximising rate(before s) / rate(after s).
 * The slow side must last `min_after` seconds; the fast side must hold
 * at least three intervals with output, so one early burst of a bursty
 * writer is no "fast phase".  Returns the ratio (0 when no split
 * qualifies).  One pass over running sums. */
double slowdown_point(const struct gp_point *p, const struct step *st, size_t from,
			     size_t to, double min_after, size_t *split, double *before,
			     double *after)
{
	double total = 0;
	for (size_t i = from + 1; i <= to; i++)
		total += st[i].bytes;
	double best = 0, acc = 0;
	unsigned events = 0;
	for (size_t sidx = from + 1; sidx < to; sidx++) {
		acc += st[sidx].bytes;
		events += st[sidx].bytes > 0;
		double d1 = p[sidx].t - p[from].t, d2 = p[to].t - p[sidx].t;
		if (events < 3 || d2 < min_after)
			continue;
		double r1 = acc / d1, r2 = (total - acc) / d2;
		double ratio = r2 > 0 ? r1 / r2 : (r1 > 0 ? INFINITY : 0);
		if (ratio > best) {
			best = ratio;
			*split = sidx;
			*before = r1;
			*after = r2;
		}
	}
	return best;
}
/* The process that made most of a phase's output, when several did. */
int phase_process(const struct gp_point *p, size_t from, size_t to, char *comm, size_t cap)
{
	struct { int pid; uint64_t bytes; char comm[16]; } t[16];
	size_t nt = 0;
	uint32_t procs = 0;
	for (size_t i = from; i <= to; i++) {
		if (p[i].procs > procs)
			procs = p[i].procs;
		if (!p[i].out_pid || !p[i].out_bytes)
			continue;
		size_t k = 0;
		while (k < nt && t[k].pid != p[i].out_pid)
			k++;
		if (k == nt) {
			if (nt == 16)
				continue;
			t[nt].pid = p[i].out_pid;
			t[nt].bytes = 0;
			gp_strlcpy(t[nt].comm, p[i].out_comm, sizeof t[nt].comm);
			nt++;
		}
		t[k].bytes += p[i].out_bytes;
		/* the latest name: a process that exec'd is named as it is now */
		gp_strlcpy(t[k].comm, p[i].out_comm, sizeof t[k].comm);
	}
	if (procs < 2 || !nt)
		return 0;
	size_t b = 0;
	for (size_t k = 1; k < nt; k++)
		if (t[k].bytes > t[b].bytes)
			b = k;
	gp_strlcpy(comm, t[b].comm, cap);
	return t[b].pid;
}
