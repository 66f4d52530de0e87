/* The verdict: hang or progress, and which kind — a pure function of the
 * recorded samples (the compact series), tested from recorded traces.
 *
 * Progress is output: RssFile/RssAnon/VmPin/GPU memory reaching new
 * highs, bytes the process read or wrote through syscalls (rchar,
 * wchar), GPU engine time, threads created.  Activity is effort: CPU
 * time, context switches, storage-level io (a page re-dirtied and written
 * back again is effort, not output: seed 004), faults, system writeback.
 * A hang is no progress for --hang-after seconds; activity then says
 * which kind.  A flat GPU counter alone never makes a hang: every
 * visible progress family must be flat. */
#ifndef GP_VERDICT_H
#define GP_VERDICT_H

#include "series.h"
#include "stuck.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

struct gp_verdict_opts {
	double hang_after;       /* seconds without progress that make a hang (default 30) */
	double slow_rate;        /* bytes/s under which progress is slow; 0: only relative */
	long page_size;          /* for vmstat page counts */
	const char *end_reason;  /* the exit line's reason, or NULL (trace still running) */
	bool have_status;        /* a command's exit status is known */
	int status, signal;
	bool kstacks_seen;       /* kernel stacks were readable */
	/* The snapshot taken when the last phase went flat for hang_after
	 * (why "hang"), else the one at the end ("end"); NULL: none taken. */
	const struct gp_stuck *stuck;
	/* Kernel-log lines kept by the trace (`kmsg` lines): GPU drivers and
	 * the kernel's hang/lockup/OOM warnings; the ones in the judged phase
	 * are named in the summary.  kmsg_why: why the log was not read. */
	const struct gp_kmsg_note *kmsg;
	size_t nkmsg;
	const char *kmsg_why;
	const char *machine;     /* the traced machine (header host.machine), for
				    syscall names; NULL: this one (live) */
};


/* DESIGN's trace verdict classes. */
enum gp_class {
	GP_CLASS_PROGRESS, GP_CLASS_SLOW_PROGRESS, GP_CLASS_IDLE, GP_CLASS_WAITING_GPU,
	GP_CLASS_HANG_BLOCKED, GP_CLASS_HANG_BUSY_KERNEL, GP_CLASS_HANG_BUSY_USER,
	GP_CLASS_STOPPED, GP_CLASS_EXITED, GP_CLASS_UNDECIDED, GP_CLASS_COUNT
};
const char *gp_class_name(enum gp_class c);

#define GP_VERDICT_HANG_AFTER_DEFAULT 30.0

enum gp_role { GP_ROLE_PROGRESS, GP_ROLE_ACTIVITY };

struct gp_evidence {
	char metric[32];
	const char *scope;       /* "process", "thread", "system" */
	const char *unit;        /* "bytes", "s", "count", "ns" */
	double first, last, slope_per_s;
	enum gp_role role;
	char reads[112];
};

struct gp_phase {
	double from, to;
	bool progress;
	double rate;             /* bytes/s of output, progress phases */
	char what[160];
};

#define GP_VERDICT_MAX_EVIDENCE 24
#define GP_VERDICT_MAX_PHASES 12

struct gp_verdict {
	char klass[24];          /* DESIGN's trace verdict classes */
	char before[24];         /* for "exited": the verdict on what came before */
	double since_s;
	char confidence[8];      /* high, medium, low */
	char confidence_why[200];
	char summary[600];
	double judged_from, judged_to;
	double hang_after;       /* the --hang-after it was judged with */
	double needs_s;          /* undecided: seconds of flatness still needed */
	char leans[24];          /* undecided: the class it leans to */
	double eta_s;            /* progress with a known total, else < 0 */
	struct gp_phase phase[GP_VERDICT_MAX_PHASES];
	size_t nphases;
	struct gp_evidence ev[GP_VERDICT_MAX_EVIDENCE];
	size_t nev;
	char unseen[4][112];
	size_t nunseen;
	enum gp_class cls;
	struct gp_stuck stuck;   /* the stuck threads' stacks (hang, idle), t < 0: none */
};

void gp_verdict_compute(const struct gp_point *pt, size_t n,
			const struct gp_verdict_opts *o, struct gp_verdict *v);

/* The `verdict` result line (DESIGN.md). */
json_t *gp_verdict_json(const struct gp_verdict *v);
/* The verdict block printed at the end of a trace. */
void gp_verdict_print(FILE *out, const struct gp_verdict *v);

/* While a trace runs: when did output last move?  A cheap, incremental
 * form of the verdict's steps (memory new highs, io and engine counters,
 * threads or processes created), so that the tracer can take the stacks
 * as soon as a phase has been flat for --hang-after.  Returns true when
 * p made output; w->since is the time of the last output. */
struct gp_flat_watch {
	bool init;
	double since;
	double hi[4], base[3];
};
bool gp_flat_watch(struct gp_flat_watch *w, const struct gp_point *p);

/* True when name is one of the trace verdict classes. */
bool gp_verdict_class_valid(const char *name);

#endif
