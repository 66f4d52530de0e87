/* Steps of output: which sampling intervals made progress, by the floors
 * that say what one step of each kind of output is (the judge and the
 * live flat watch count with the same floors). */
#include "config.h"
#include "verdict.h"
#include "verdict_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool gpu_seen(const struct gp_point *p)
{
	return p->have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML);
}

double gp_output_value(const struct gp_point *p, int m)
{
	switch (m) {
	case GP_M_RSS_FILE: return (double)p->rss_file;
	case GP_M_RSS_ANON: return (double)p->rss_anon;
	case GP_M_VM_PIN: return (double)(p->vm_pin > p->vm_lck ? p->vm_pin : p->vm_lck);
	case GP_M_GPU: return (double)p->gpu_bytes;
	case GP_M_ENGINE: return (double)p->gpu_engine_ns;
	case GP_M_RCHAR: return (double)p->io_rchar;
	case GP_M_WCHAR: return (double)p->io_wchar;
	case GP_M_SOCK_RX: return (double)p->sock_rx;
	case GP_M_SOCK_TX: return (double)p->sock_tx;
	default: return 0;
	}
}

#define STARTUP_READ ((double)(256u << 10))

/* Threads started as requests come in and nothing goes out (a server's
 * handler a connection, each waiting on a batcher that died): the server
 * answering input, not output (issue 32 read it "progress, high"). */
bool gp_spawns_count(const struct gp_point *prev, const struct gp_point *p)
{
	if (!p->threads_spawned)
		return false;
	bool input = (p->have & GP_PT_SOCK) && (prev->have & GP_PT_SOCK) && p->sock_rx > prev->sock_rx;
	return !(input && p->sock_tx <= prev->sock_tx);
}

bool gp_failed_starts(const struct gp_point *p)
{
	return p->died_nonzero && p->died_nonzero + p->died_killed >= p->died;
}

/* Small steady output is output (issue 20: a compute loop logging a
 * 20-byte line a second, a heartbeat): an interval in which the process
 * wrote, under the io floor, is a step of its own -- unless every write
 * of it was one byte (a self-pipe's wakeup) or eight (eventfd(2) and
 * timerfd counters are written 8 bytes at a time): wakeups from inside,
 * not output. */
bool gp_small_write(const struct gp_point *prev, const struct gp_point *p)
{
	if (!(prev->have & GP_PT_IO) || !(p->have & GP_PT_IO) || p->io_wchar <= prev->io_wchar
	    || p->io_syscw <= prev->io_syscw)
		return false;
	uint64_t bytes = p->io_wchar - prev->io_wchar, calls = p->io_syscw - prev->io_syscw;
	return bytes != calls && bytes != 8 * calls;
}

/* Which intervals made progress.  Counters (read/write bytes, GPU engine
 * time) count growth.  Memory counts the level it holds: at sample i, the
 * lowest value from i to the end of the trace.  A load raises that level
 * and keeps it; a restart loop (populate, discard, populate: the demo's
 * kernel-loop, seed 004's import) swings up and down, and catching it
 * near the top of a swing is no output, since it falls back later.  A
 * plain "new high" would count such catches: record values of a random
 * swing keep coming (about ln n of them in n samples), and so does a
 * higher minimum over the shorter suffixes near the end.  So a memory
 * rise counts when the level held from then on stands above every earlier
 * value: a new plateau.  A rise seen only in the final sample is not
 * output yet (nothing holds it).
 * Each metric's baseline moves only when a step is counted. */
bool memory_metric(int m)
{
	return m == GP_M_RSS_FILE || m == GP_M_RSS_ANON || m == GP_M_VM_PIN || m == GP_M_GPU;
}

/* What one step of output is, per metric: the judge (find_steps) and the
 * live watch (gp_flat_watch) count with the same floors. */
double gp_output_floor(int m)
{
	/* A byte sent to a peer outside the tree is an answer (issue 32: a
	 * server answering two 1 000-byte replies a second is at work, not
	 * "busy with no output"); bytes only received are input, output only
	 * in bulk (a download). */
	if (m == GP_M_SOCK_TX)
		return 1;
	return m == GP_M_ENGINE ? FLOOR_ENGINE_NS : memory_metric(m) ? FLOOR_MEM : FLOOR_IO;
}

/* A counter's step: it grew by a floor or more since base (base moves
 * there), or it went back (a re-opened DRM client: base restarts there). */
bool gp_counter_step(double *base, double v, double floor)
{
	if (v < *base) {
		*base = v;
		return false;
	}
	if (v < *base + floor)
		return false;
	*base = v;
	return true;
}

/* Connections piling up in the tree's accept queues in an interval: no
 * one takes them.  A heap that grows by less than PILE_MEM meanwhile is
 * the queue's and its clients' bookkeeping (node's load generator grew
 * 110 KiB/s, its requests to a server whose loop slept never accepted:
 * read "slow-progress"), not work answered (issue 32); a load that
 * grows memory by more, while clients wait for it to end, still counts. */
#define PILE_MEM ((double)(1u << 20))
static bool piling_up(const struct gp_point *prev, const struct gp_point *p)
{
	return (prev->have & GP_PT_SOCK) && (p->have & GP_PT_SOCK) && p->sock_backlog > prev->sock_backlog;
}

void find_steps(const struct gp_point *p, size_t n, double hold_s, struct step *st)
{
	double base[GP_M_COUNT];
	for (int m = 0; m < GP_M_COUNT; m++)
		base[m] = gp_output_value(&p[0], m);
	memset(st, 0, n * sizeof *st);
	/* Per memory metric: held[i], the lowest value from i to the end, and
	 * high[i], the highest value before i. */
	double *held = malloc(2 * n * GP_M_COUNT * sizeof *held);
	double *high = held ? held + n * GP_M_COUNT : NULL;
	for (int m = 0; held && m < GP_M_COUNT; m++) {
		/* The level held for hold_s (--hang-after) after i, not to the
		 * end of the trace: memory a program frees later (a loader
		 * that unmaps its file, a process's teardown) was still loaded
		 * output; a restart loop swings within that window. */
		double hi = 0;
		for (size_t i = 0; i < n; i++) {
			double lo = INFINITY;
			for (size_t j = i; j < n && (j == i || p[j].t <= p[i].t + hold_s); j++) {
				double v = gp_output_value(&p[j], m);
				if (v < lo)
					lo = v;
			}
			held[i * GP_M_COUNT + m] = lo;
		}
		for (size_t i = 0; i < n; i++) {
			high[i * GP_M_COUNT + m] = hi;
			if (gp_output_value(&p[i], m) > hi)
				hi = gp_output_value(&p[i], m);
		}
	}
	for (size_t i = 1; i < n; i++) {
		/* Children that started and ended and failed, all of them (a
		 * retry loop's attempts: `until curl ...; do sleep 1; done`):
		 * their start-up's reads of libraries and config, and their
		 * being, are not output (issue 32: 79 of them read "progress,
		 * high").  What they wrote still is. */
		bool failed_starts = gp_failed_starts(&p[i]);
		for (int m = 0; m < GP_M_THREADS; m++) {
			if ((m == GP_M_GPU || m == GP_M_ENGINE) && !gpu_seen(&p[i]))
				continue;
			if ((m == GP_M_RCHAR || m == GP_M_WCHAR) && !(p[i].have & GP_PT_IO))
				continue;
			if ((m == GP_M_SOCK_RX || m == GP_M_SOCK_TX) && !(p[i].have & GP_PT_SOCK))
				continue;
			double v = gp_output_value(&p[i], m), floor = gp_output_floor(m);
			double b = base[m];
			if (!memory_metric(m)) {
				/* What children that ended read at their start-up
				 * (libraries, config: a few hundred KiB each) is
				 * theirs, not the tree's output (issue 32). */
				if (m == GP_M_RCHAR && p[i].died && v > base[m]
				    && v - base[m] <= STARTUP_READ * p[i].died) {
					base[m] = v;
					continue;
				}
				bool step = gp_counter_step(&base[m], v, floor);
				if (!step && m == GP_M_WCHAR && v > b && gp_small_write(&p[i - 1], &p[i])) {
					base[m] = v;
					step = true;
				}
				if (step && !(failed_starts && m == GP_M_RCHAR)) {
					if (m != GP_M_ENGINE) {
						st[i].bytes += v - b;
						st[i].by_metric[m] += v - b;
					}
					st[i].metrics |= 1u << m;
					st[i].any = true;
				}
				continue;
			}
			if (i + 1 == n || !held)
				continue;
			/* the held level, standing above every earlier value */
			v = held[i * GP_M_COUNT + m];
			if (v < high[i * GP_M_COUNT + m] + floor || v < b + floor)
				continue;
			if (m == GP_M_RSS_ANON && piling_up(&p[i - 1], &p[i]) && v - b < PILE_MEM) {
				base[m] = v;
				continue;
			}
			st[i].bytes += v - b;
			st[i].by_metric[m] += v - b;
			st[i].metrics |= 1u << m;
			st[i].any = true;
			base[m] = v;
		}
		/* Processes that start and end are not output: only those
		 * that stay (issue 32: children that start and end are not
		 * output; what leaves the tree is). */
		if (gp_spawns_count(&p[i - 1], &p[i]) || (p[i].procs_created > p[i].died && !failed_starts)) {
			st[i].metrics |= 1u << GP_M_THREADS;
			st[i].any = true;
		}
		/* GPU work is progress (DESIGN): a loop of kernels doing math
		 * is output even when the host writes nothing. */
		if (p[i].gw.work == GP_GW_WORK) {
			st[i].metrics |= 1u << GP_M_GPU_WORK;
			st[i].any = true;
		}
	}
	free(held);
}

size_t index_at(const struct gp_point *p, size_t n, double t)
{
	size_t i = 0;
	while (i + 1 < n && p[i].t < t - 1e-9)
		i++;
	return i;
}

double median_interval(const struct gp_point *p, size_t n)
{
	if (n < 2)
		return 1.0;
	double *d = malloc((n - 1) * sizeof *d);
	if (!d)
		return (p[n - 1].t - p[0].t) / (double)(n - 1);
	for (size_t i = 1; i < n; i++)
		d[i - 1] = p[i].t - p[i - 1].t;
	/* insertion sort: fine for the sizes at hand, and no qsort callback */
	for (size_t i = 1; i < n - 1; i++)
		for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
			double x = d[j];
			d[j] = d[j - 1];
			d[j - 1] = x;
		}
	double m = d[(n - 1) / 2];
	free(d);
	return m;
}
