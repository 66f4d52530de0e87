/* watch, inside: its options, the processes it follows and its own
 * state, shared by its files (watch_cmd.c: the options, the tick, the
 * set-up; hangs.c: a hang's log line and bundle; wlog.c: the log). */
#ifndef GP_WPROC_H
#define GP_WPROC_H

#include "opts.h"
#include "procfs.h"
#include "proctab.h"
#include "sampling.h"
#include "series.h"
#include "spool.h"
#include "follow.h"
#include "metrics.h"
#include "verdict.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_global;
struct gp_gpu_house;

struct watch_opts {
	int *pids;
	size_t npids, cappids;
	bool gpu;
	double bundle_every, bundle_seconds;
	uint64_t bundle_max;
	const char *bundle_dir, *metrics;
	bool quiet;
	struct gp_sample_args sample; /* --name, --interval, --seconds */
	struct gp_stack_args st;
	struct gp_judge_args judge;
};

/* ---- one followed process -------------------------------------------- */

struct wproc {
	int pid;
	unsigned long long start;     /* starttime: a reused pid is another process */
	char comm[16];
	/* The process and its descendants, sampled and stacked as trace
	 * does (loop/sampling.h): a parent waiting on a deadlocked worker
	 * is judged by the worker's wait (issue 28: watch of a
	 * multiprocessing parent said idle for 45 s). */
	struct gp_sampling smp;
	struct gp_proctab procs;      /* the tree's processes, for the verdict to name */
	struct gp_series series;
	double last_hot;              /* when hot threads were last stacked */
	struct gp_spool spool;
	bool spooled;
	enum gp_class cls;
	bool judged;
	double since;                 /* seconds without progress */
	double cpu;                   /* cores, last interval */
	uint8_t gw;                   /* enum gp_gpu_work */
	bool episode;                 /* this flat stretch's hang was handled */
	bool want_bundle;             /* ... and waits for its bundle */
	bool seen;
	/* Found already still: seconds since any thread of it had run when
	 * first sampled at first_t (tracer/still.h), -1 unknown; a watch
	 * restarted keeps the clock of a hang that went on (issue 28). */
	double still_s, first_t;
	bool still_prior;             /* still_s is the last watch's hang start (metrics.h) */
	struct gp_metric_proc where;  /* nspid, container, pod, GPUs: its metric labels */
};

struct watch {
	struct watch_opts *o;
	struct gp_root root;
	char spool[4096];
	struct wproc **p;
	size_t n, cap;
	struct gp_follow follow;
	struct gp_proctab procs;      /* the followed processes' identities: job, rank */
	/* One set of GPU readers (gpu/house.h) for every watched process:
	 * one NVML handle, the device-wide lists asked once a tick. */
	struct gp_gpu_house *house;
	struct gp_verdict *v;         /* scratch: one verdict at a time */
	json_t *host;                 /* the header's host facts, read once */
	long page_size;
	unsigned long bundles;
	double last_bundle;           /* < 0: none yet */
	int bundle_pid;               /* the bundle being written, 0 none */
	char bundle_path[4096];
	char bundle_line[512];        /* logged when it is done */
	double bundle_t0;
	bool metrics_warned;
	size_t window;                /* points kept a process */
	const struct gp_global *g;    /* the command line (the records' header) */
	/* Processes that left (pid and starttime): a zombie, or a process
	 * that is gone but still listed, is not followed again and again. */
	struct { int pid; unsigned long long start; } gone[256];
	unsigned ngone;
	/* The hangs the --metrics file said when this watch started: a
	 * watch before it, killed or restarted (gp_metrics_read_hangs). */
	struct gp_metric_hang prior[256];
	size_t nprior;
};

static inline bool is_hang(enum gp_class c)
{
	return c == GP_CLASS_HANG_BLOCKED || c == GP_CLASS_HANG_BUSY_KERNEL
	       || c == GP_CLASS_HANG_BUSY_USER || c == GP_CLASS_HANG_GPU_SPIN;
}

/* wlog.c: one line of the log, with its time (UTC), made safe whole. */
void watch_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* hangs.c: a hang was judged (W->v holds the verdict): once per flat
 * stretch, a line and maybe a bundle. */
void watch_on_hang(struct watch *W, struct wproc *w, double t);
/* The bundle's child, taken when it is done; its one log line. */
void watch_reap_bundle(struct watch *W);
/* The bundle being written, stopped and removed (watch ends). */
void watch_stop_bundle(struct watch *W);

#endif
