/* One saved result, ready to render: what the loader gives (the compact
 * series, header/target/exit/verdict) and, from a second pass over the
 * file, the lines the series does not keep.  Lines are dispatched on
 * their "type" through one table (doc.c): `sample` feeds the per-thread
 * table; `stacks`, `arm` and `idle` lines are kept for their renderers,
 * `kmsg` lines within a bound (struct gp_klog); a type this version does
 * not know is counted and named, never fatal.
 * The renderers (render_md.c, render_text.c, plot.c) read only this. */
#ifndef GP_DOC_H
#define GP_DOC_H

#include "load.h"
#include "verdict.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* One thread over the judged phase. */
struct gp_thread_agg {
	int tid;
	char comm[16];
	int pid;                     /* its process (the sample's or a `procs` member's) */
	char pcomm[16];              /* that process's comm, last seen */
	double cpu_sum, sys_sum;     /* sums of cpu_pct/sys_pct over judged samples */
	unsigned judged;             /* samples in the judged phase that saw it */
	unsigned nstate[5];          /* R, S, D, T/t, other: judged phase */
	char state;                  /* in the last sample that saw it */
	char wchan[32];              /* last non-empty */
	char syscall[96];            /* last described, "running" or "user space" */
	int64_t sc_nr;               /* the syscall described there, when sc_args_set: */
	uint64_t sc_args[6];         /* described again only when these change */
	bool sc_args_set;
	char kstack[512];            /* last kernel stack seen, frames joined by '\n' */
	double last_t;
	float *cpu;                  /* cpu_pct per series point (NaN: absent), made
				      * only once it reads 0.5 % or more: the plot
				      * draws no thread under that, and 10 000 idle
				      * threads over 8 192 points were 330 MB */
	size_t cpu_from;             /* the first point it had a cpu_pct, SIZE_MAX none */
	size_t seen_at;              /* the last sample (from 1) that listed it */
};

/* The kernel log: the file's `kmsg` lines (doc/result-format.md), in
 * file order (the log's), bounded: the first and the last GP_KLOG_ENDS,
 * and between them the driver errors (gp_klog_is_error) and lost-records
 * notes, at most GP_KLOG_MIDDLE.  Each row keeps its number among the
 * file's kmsg lines, so that a renderer says how many it left out
 * between two rows: nothing is dropped unsaid.  A flood of ten thousand
 * lines costs 200 rows, not ten thousand. */
#define GP_KLOG_ENDS 50
#define GP_KLOG_MIDDLE 100
struct gp_klog_row {
	json_t *line;                /* the line as read (a reference) */
	unsigned long n;             /* its number among the kmsg lines, from 0 */
};
struct gp_klog {
	struct gp_klog_row *row;     /* kept, in file order */
	size_t nrow;
	unsigned long total;         /* kmsg lines in the file */
	unsigned long errors;        /* of them, driver errors and kernel warnings */
	unsigned long errors_judged; /* of those, in the verdict's judged phase (+-1 s) */
	unsigned long lost_lines;    /* `lost` notes ... */
	unsigned long long lost;     /* ... and the records they say were lost (saturating) */
};

struct gp_doc {
	const char *path;
	struct gp_loaded l;
	struct gp_verdict v;         /* judged again from the series */
	json_t *arms, *stacks, *idle;/* arrays of those lines, in file order */
	json_t *gpu;                 /* `gpu` lines: the runtime a lock/pools run used */
	json_t *unknown;             /* {type: count} of lines no handler knows */
	struct gp_klog klog;         /* `kmsg` lines */
	json_t *ras;                 /* `ras` lines: the first 16 and the latest 48 */
	unsigned long ras_more;      /* those left out between them */
	json_t *libs;                /* {"PID": {pid, comm, libs[]}}: the GPU runtimes each
				      * process maps, the newest `target`/`runtime_libs` */
	struct gp_thread_agg *th;
	size_t nth, capth;
	size_t *th_slot, nslot;      /* th by tid: a hash of index + 1, 0 empty (doc.c) */
	json_t *target_now;          /* the trace's latest `target` line of how "exec"
				      * or "renamed" (the command after an exec), or NULL */
	char comm_now[64];           /* the target's comm in the last sample, "" none */
	bool have_forks;             /* a sample's `forks`: every start in the tree */
	unsigned long forks_started, forks_exited, forks_lost; /* the last such */
	bool is_trace;               /* has samples (else: an arm/idle result) */
	bool is_idle;                /* `gpuprobe idle`: judged spin/quiet per runtime */
};

/* Loads path (gp_load_result), judges it with vo (hang_after <= 0: the
 * trace's own), and scans it again for the other lines.  0, or -1 with a
 * one-line reason in err. */
int gp_doc_load(const char *path, const struct gp_verdict_opts *vo, struct gp_doc *d,
		char *err, size_t errcap);
void gp_doc_free(struct gp_doc *d);

/* The metrics every renderer draws (sparklines, plot): level metrics
 * (bytes, count) and rates (bytes/s, percent) from consecutive points. */
enum gp_metric_kind { GP_MK_LEVEL, GP_MK_RATE };
struct gp_metric {
	const char *label;       /* "RssFile" */
	const char *unit;        /* "bytes", "bytes/s", "%", "count" */
	enum gp_metric_kind kind;
	int group;               /* plot panel: 0 progress, 1 CPU, 2 system */
};
size_t gp_metric_count(void);
const struct gp_metric *gp_metric_get(size_t i);
/* The value of metric i at point k (rates from k-1 to k); false where
 * this trace did not see it (no GPU, no io, first point of a rate). */
bool gp_metric_value(const struct gp_doc *d, size_t i, size_t k, double *out);
/* True when the trace saw metric i at all and it is not all zero. */
bool gp_metric_present(const struct gp_doc *d, size_t i);

/* Threads sorted busiest first (judged CPU), at most max; returns count. */
size_t gp_doc_top_threads(const struct gp_doc *d, const struct gp_thread_agg **out, size_t max);

/* True for a `kmsg` line that is a driver error or a kernel warning
 * worth naming beside the verdict: a kind the reader classified (`xid`,
 * `ring-timeout`, `gpu-reset`, `hung-task`, `soft-lockup`, `oom`, and
 * kinds of later writers), or a GPU driver's line of level err or worse
 * (amdgpu's page fault is dev_err, kind `other`).  Not `lost` (the
 * reader's note) nor a driver's informational line. */
bool gp_klog_is_error(const json_t *line);
/* The line's t, false when absent or not a number. */
bool gp_klog_t(const json_t *line, double *t);

/* Shared formatting. */
void gp_fmt_value(char *buf, size_t cap, const char *unit, double v);
/* A Markdown table cell: '|' escaped, line breaks flattened.  Here, not in
 * render.h, because render_md.c and arms.c both draw cells and render_md.c
 * draws the arms: the cell is below both. */
void gp_md_cell(FILE *out, const char *s);
/* An inline code span of s, whatever backticks it holds; in_table: in a
 * table cell ('|' escaped). */
void gp_md_code(FILE *out, const char *s, bool in_table);

#endif
