/* The sampler: one process, sampled again and again.  Each sample
 * becomes a `sample` result line (DESIGN.md) and a compact point that
 * stays in memory for the summary and the verdict. */
#ifndef GP_SAMPLER_H
#define GP_SAMPLER_H

#include "procfs.h"
#include "series.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct gp_sampler_opts {
	const struct gp_root *root;
	int pid;
	bool kstacks;      /* read kernel stacks when readable */
	bool no_nvml;
	bool reopen;       /* benchmark baseline: no kept fds */
	bool no_system;    /* vmstat/meminfo are read by the caller (a tree's sampler) */
	/* The trace's GPU readers (gpu/house.h), shared by every process of
	 * a tree; NULL: the sampler makes its own (from root and no_nvml). */
	struct gp_gpu_house *house;
	/* The host's sockets (sockets.h), shared the same way; NULL: the
	 * sampler makes its own. */
	struct gp_sockets *socks;
};

enum gp_sample_rc {
	GP_SAMPLE_OK = 0,
	GP_SAMPLE_GONE = 1,   /* exited, zombie, or the PID now names another process */
	GP_SAMPLE_ERROR = -1,
};

struct gp_sampler;

struct gp_sampler *gp_sampler_new(const struct gp_sampler_opts *o);
void gp_sampler_free(struct gp_sampler *s);

/* One sample at t (seconds since the trace began).  On OK, *line is a new
 * `sample` object and *pt is filled.  On GONE, nothing is filled and
 * *why says what happened ("exited", "zombie", "pid reused"). */
enum gp_sample_rc gp_sampler_take(struct gp_sampler *s, double t, json_t **line,
				  struct gp_point *pt, const char **why);

/* One process's part of a sample, for a tree of processes (tracer/tree.c):
 * its `proc` and `gpu` objects (the caller owns them), and its views for
 * the point builder (model/point.h), valid until the next take.  The
 * threads array is gp_sampler_threads_json's. */
#include "point.h"
struct gp_proc_part {
	json_t *proc, *gpu;
	struct gp_pview pv;
	const struct gp_tview *tv;
	size_t ntv;
};
enum gp_sample_rc gp_sampler_take_part(struct gp_sampler *s, double t, struct gp_proc_part *part,
				       const char **why);

/* The `vm` member of a sample (system-wide), with its point fields: a
 * delta against the last (format 4), whole when whole is set. */
struct gp_sys_reader;
json_t *gp_sampler_vm(struct gp_sys_reader *sys, struct gp_point *pt, bool whole);

/* The next sample writes every thread whole, with no reference or delta
 * to the samples before: a file that starts there stands alone (watch's
 * spool, when it turns to its other file). */
void gp_sampler_keyframe(struct gp_sampler *s);
/* Before the first sample: its threads read once, ahead of the clock
 * (gp_tasks_prime).  Nothing once a sample was taken. */
void gp_sampler_prime(struct gp_sampler *s);

/* The "threads" member of the last sample taken, as JSON text (an
 * array, streamed without jansson: see report/jsonw.h); valid until
 * the next gp_sampler_take.  The caller appends it to the line with
 * gp_result_write_raw. */
const char *gp_sampler_threads_json(const struct gp_sampler *s, size_t *len);

/* The threads of the last sample taken (cpu_pct filled in), valid until
 * the next gp_sampler_take: what the stack policy of trace chooses from. */
struct gp_thread;
const struct gp_thread *gp_sampler_threads(const struct gp_sampler *s, size_t *n);
/* The main thread's (tid = pid) counters in the last sample, as its
 * record says them (model/proctab.h: the loader reads the same from a
 * saved file); false when it is not in the sample. */
struct gp_ran_mark;
bool gp_sampler_main_mark(const struct gp_sampler *s, struct gp_ran_mark *m);
/* The last sample's GPU as its gpu object says it (model/gpujson.h:
 * gp_gpu_json_ctx; enum gp_gpu_work, UNKNOWN when not read this sample). */
void gp_sampler_gpu(const struct gp_sampler *s, bool *ctx, uint8_t *gw);

/* Our own reads of a process's memory (stacks: process_vm_readv, the
 * unwinder's) fault its not-yet-resident file pages into its page tables
 * (mm/gup.c: a remote read faults like the owner would), and RssFile
 * grows: a CPython 3.13 whose frozen code we read grew 64 KiB after each
 * stack snapshot, read as progress.  The caller reads RssFile just before
 * and after its reads (gp_sampler_rss_file_now) and hands the growth to
 * gp_sampler_add_ours: samples carry the sum as rss_file_ours, and their
 * points count RssFile less it (doc/result-format.md). */
bool gp_sampler_rss_file_now(struct gp_sampler *s, uint64_t *bytes);
void gp_sampler_add_ours(struct gp_sampler *s, uint64_t bytes);

/* Cumulative counts over the trace. */
struct gp_sampler_totals {
	uint64_t samples, thread_samples, vanished, reused, created, exited;
	bool kstack_denied, syscall_denied, io_denied;
	uint64_t kstacks_read;
};
void gp_sampler_totals(const struct gp_sampler *s, struct gp_sampler_totals *tot);

#endif
