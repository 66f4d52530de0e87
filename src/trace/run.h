/* gpuprobe trace, inside: one run of the command, shared by its files,
 * each a concern of its own (none uses trace.c; trace.c drives them):
 *   trace.c    the options, the set-up, the tick (loop/ticker.h drives it)
 *   tline.c    the result lines written (-o FILE)
 *   command.c  a command started with --: its signals and its exit
 *   places.c   which threads are stacked each tick (hot; --stacks all)
 *   targets.c  the `target`, `runtime_libs` and `ras` lines of the tree
 *   finish.c   the last look, the exit line, the verdict and the summary */
#ifndef GP_TRACE_RUN_H
#define GP_TRACE_RUN_H

#include "child.h"
#include "kmsg.h"
#include "opts.h"
#include "proctab.h"
#include "ras.h"
#include "rasparse.h"
#include "result.h"
#include "sampling.h"
#include "series.h"
#include "strbuf.h"
#include "ticker.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

enum stacks_mode { STACKS_HOT, STACKS_ALL, STACKS_NONE };

struct trace_opts {
	int pid;
	char **cmd;            /* after "--" */
	double kill_after;
	double flat_before;    /* --flat-before: no progress for this long before the trace */
	const char *proc_root;
	bool nvml, reopen, children;
	int ras_port;          /* NCCL's RAS service on 127.0.0.1; 0: not asked */
	bool ras_given;        /* --ras-port given: asked even with no NCCL seen mapped */
	char fail_on[8][24];
	int nfail_on;
	enum stacks_mode stacks;
	struct gp_sample_args sample; /* --name, --interval, --seconds */
	struct gp_out_args out;
	struct gp_stack_args st;     /* --hot-threshold (CPU%), --no-kernel-stacks */
	struct gp_judge_args judge;  /* --hang-after, --slow-rate */
	struct gp_operand_args operand;
};

struct place;

struct run {
	struct trace_opts *o;
	struct gp_root root;
	int pid;
	bool is_child;
	struct gp_child child;        /* the command (is_child) */
	struct gp_result *out;
	bool out_stdout;
	unsigned long lines;
	struct gp_series series;
	bool live;
	struct gp_ticker tk;          /* the clock (its late ticks) */
	struct gp_point prev;         /* the last sample's point (the live line) */
	bool have_prev;
	/* The sampling thread's own schedstat at t = 0 (self_sched): its
	 * CPU time, and its time runnable but waiting for a CPU -- a
	 * saturated machine starves a tracer at nice 0 (10 000 busy threads
	 * on 16 CPUs: one sample in 83 s, bench/results/
	 * 2026-12-05-device-h100.md). */
	bool have_sched0;
	uint64_t run0_ns, wait0_ns;
	long page_size;
	int rc;
	/* The tree, its stacks sessions, its flat stretch and the stacks
	 * taken at its hang (loop/sampling.h): watch's too. */
	struct gp_sampling smp;
	struct gp_kmsg *kmsg;         /* the kernel log, followed (NULL: not readable) */
	char kmsg_why[200];
	struct gp_kmsg_note notes[GP_KMSG_NOTES];
	size_t nnotes;
	struct announced { int pid; char comm[16]; } *announced; /* descendants with a `target`
				       line, and the name it gave */
	size_t nannounced, capannounced;
	bool announced_once;     /* the first sample's descendants are announced (with still_s) */
	struct libs_seen { int pid; char *paths; } *libs; /* runtimes last written, a process */
	size_t nlibs, caplibs;
	double libs_checked;          /* when the runtimes were last looked at */
	double ras_checked;           /* when NCCL's RAS was last asked; < 0: never */
	bool ras_stop;                /* it accepted and did not answer: only the end read */
	struct gp_ras_note ras;       /* the `ras` lines written, for the verdict */
	struct gp_proctab procs;      /* the tree's processes, as the lines name them */
	struct place *places;         /* last stacked place, --stacks all (new_place) */
	size_t nplaces, capplaces;
	unsigned long tick;           /* samples taken */
	char comm[64];                /* the target's name, as last announced */
	struct strbuf cmdline;        /* its command line as shell words, as last announced */
	struct strbuf started_as;     /* the first one, when an exec changed it */
	struct strbuf where;          /* its namespaces and container (gp_target_where) */
};

/* tline.c: one result line (stolen), with a sample's streamed members. */
void trace_write_line(struct run *r, json_t *line);
void trace_write_line_raws(struct run *r, json_t *line, const struct gp_raw *raws, size_t n);

/* command.c: the command's exit taken, when it came (only a command's). */
bool trace_reap(struct run *r);
bool trace_wait_child(struct run *r, double secs);
/* sig to the command's tree (forward), then SIGKILL after --kill-after. */
void trace_stop_child(struct run *r, int sig, bool forward);
/* A command that will not be traced after all: killed before its exec. */
void trace_abandon(struct run *r);
void trace_reap_killed(struct run *r);

/* places.c: this tick's stacks (hot threads; --stacks all: new places). */
void trace_take_stacks(struct run *r, double t, struct gp_point *pt);

/* targets.c */
void trace_write_target(struct run *r);
void trace_announce(struct run *r, double t);
void trace_follow_exec(struct run *r, double t);
void trace_check_libs(struct run *r, double t, bool now);
void trace_check_ras(struct run *r, double t, bool force);
/* Every thread of every process, once, after their target lines. */
void trace_snapshot_all(struct run *r, double t, const char *why);

/* finish.c */
bool trace_self_sched(uint64_t *run_ns, uint64_t *wait_ns);
void trace_last_look(struct run *r, const char *reason, double t_end);
void trace_finish(struct run *r, const char *reason, double t_end, const char *comm);

#endif
