/* The processes of a traced tree as its lines name them (issue 29:
 * siblings compared): each one's identity from its newest `target` line
 * (the program it runs, its parent, a distributed job's variables), when
 * samples last listed it, and how it ended (a sample's `died`).  The live
 * trace and the loader fill it the same way, from the same lines; the
 * verdict reads it to tell a job's ranks and a pool's workers, and which
 * of them left. */
#ifndef GP_PROCTAB_H
#define GP_PROCTAB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many processes are kept (the first ones); a tree beyond
 * it is compared on those. */
#define GP_PROCTAB_MAX 4096

/* What the main thread had used by a sample: its time on a CPU
 * (schedstat, ns; 0 where not read) and its CPU times (stat's utime +
 * stime, in the reader's own unit).  It ran in an interval where either
 * moved.  The live trace and the loader give the same cumulative
 * counters (a saved file's "same" and delta records resolved), so
 * `report` of a file draws the timeline the live trace drew. */
struct gp_ran_mark {
	uint64_t run_ns;
	double cpu;
};

struct gp_proc_ident {
	int pid, ppid;
	char comm[16];
	/* What it runs: its executable, and for an interpreter (python,
	 * node, a shell...) its script or module ("/usr/bin/python3.11
	 * job.py"); processes of one program share it.  label: the short
	 * name a sentence uses ("job.py", "nginx"). */
	char program[160];
	char label[48];
	/* A distributed job's variables from its environment (target
	 * job_env): rank and world size, -1 when absent; job: which job
	 * (TORCHELASTIC_RUN_ID, SLURM_JOB_ID.SLURM_STEP_ID or
	 * MASTER_ADDR:MASTER_PORT), "" none.  job_env: it has a rank or a
	 * world size there. */
	int rank, local_rank, world_size;
	char job[64];
	bool job_env;
	double seen_t;           /* the last sample that listed it (or its target line) */
	double first_t;          /* its first target line's t */
	/* Seconds since any of its threads last ran, as its first target
	 * line said (still_s: read as a PID trace starts); -1 unknown. */
	double still_s;
	/* When its main thread last ran (issue 29: which rank stopped
	 * first; ranks waiting in a collective have helper threads that wake
	 * every few seconds, and where a process is is where its main thread
	 * is): the sample after which it last ran, or, before any, its first
	 * line's t less still_s; active_known false: neither. */
	double active_t;
	bool active_known;
	bool listed;             /* a sample listed it (its first is the baseline) */
	struct gp_ran_mark ran;  /* its main thread's, at the last sample that had it */
	/* Its GPU at the last reading (issue 29: turn 3's CUDA IPC case, a
	 * process that holds a context and runs no kernel while another's
	 * kernel spins): a context held (NVML, DRM or KFD saw it), and
	 * what its kernels did (enum gp_gpu_work; UNKNOWN none read). */
	bool gpu_ctx;
	uint8_t gw;
	bool gone;               /* a later sample did not list it */
	double gone_t;           /* the first such sample */
	bool ended;              /* a `died` record said how */
	int status, signal;      /* status (exited) or signal (killed), from it */
};

struct gp_proctab {
	struct gp_proc_ident *p; /* by pid, ascending */
	size_t n, cap;
};

void gp_proctab_init(struct gp_proctab *t);
void gp_proctab_free(struct gp_proctab *t);

/* A `target` line: the process's identity (a newer line, after an exec,
 * replaces it). */
void gp_proctab_target(struct gp_proctab *t, const json_t *target);
/* The line names pid's program or job otherwise than its last one (an
 * exec that kept the name: a pyenv shim, bash running a script named
 * python3, execs python3), or names a pid not kept. */
bool gp_proctab_changed(const struct gp_proctab *t, const json_t *target);
/* A sample at t: pid was listed in it. */
void gp_proctab_seen(struct gp_proctab *t, int pid, double t_s);
/* The end of the sample at t: its `died` records (NULL none), and every
 * process it did not list is gone. */
void gp_proctab_sample_end(struct gp_proctab *t, double t_s, const json_t *died);
/* pid's main thread at the sample at `at` (NULL: its record is not
 * there).  Its first is the baseline; later, a mark that moved says it
 * ran in the interval ending at `at`. */
void gp_proctab_ran(struct gp_proctab *t, int pid, double at, const struct gp_ran_mark *m);
/* pid's GPU as a sample read it: a context held, what its kernels did
 * (enum gp_gpu_work).  The live trace from its sampler, the loader from
 * the sample's gpu object (gp_proctab_sample). */
void gp_proctab_gpu(struct gp_proctab *t, int pid, bool ctx, uint8_t gw);
/* A whole `sample` line of a saved result: its pid, its procs' pids, their
 * main threads' records as si resolved them (model/samplein.h), its
 * died records. */
struct gp_samplein;
void gp_proctab_sample(struct gp_proctab *t, const json_t *sample, const struct gp_samplein *si);

const struct gp_proc_ident *gp_proctab_find(const struct gp_proctab *t, int pid);

#endif
