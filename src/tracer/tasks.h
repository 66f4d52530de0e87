/* The per-thread table of one process, sampled again and again.
 *
 * Why not libproc2's pids API: measured on Debian 12's procps 4.0.2 it
 * re-opens every file of every thread each sample (28-34 us a thread
 * against 11-15 us with kept fds and pread), and when one thread exits
 * between readdir and read it drops the rest of that sample.  Here each
 * thread's files stay open between samples and are pread; a thread that
 * vanishes mid-read is dropped from its sample and counted, and a reused
 * tid is told apart by its starttime. */
#ifndef GP_TASKS_H
#define GP_TASKS_H

#include "procfs.h"
#include "procstat.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_wait_edge;
struct gp_thread_rec;

struct gp_thread {
	int tid;
	struct gp_stat st;       /* comm, state, times, faults, processor, starttime */
	uint64_t vcsw, nvcsw;    /* from status */
	bool have_ctxt;
	char wchan[64];          /* "" when not waiting */
	bool have_wchan;
	struct gp_syscall sc;    /* kind GP_SC_UNKNOWN when unreadable */
	const char *kstack;      /* kernel stack text read this sample, or NULL */
	bool is_new;             /* first sample that saw this thread */
	bool unchanged;          /* asleep in the same place since the last
				  * sample: wchan/syscall carried over, not re-read */
	uint64_t last_wait_ns;   /* unchanged: wait_ns of the reading carried over */
	/* /proc/TID/schedstat (CONFIG_SCHED_INFO): time on a CPU and
	 * waiting for one, in ns, and how many times it was scheduled in. */
	uint64_t run_ns, wait_ns, pcount;
	bool have_sched;
	/* Since this thread's previous sample (0 when is_new). */
	uint64_t d_utime, d_stime, d_vcsw, d_nvcsw, d_run_ns;
	/* When schedstat was read (monotonic ns), and the time between the
	 * readings the deltas span (0 when unknown). */
	int64_t read_ns;
	uint64_t d_read_ns;
	/* The wait kind it was classified with at its previous sample
	 * (model/waits.h), kept by the table; valid until the next sample. */
	uint8_t *wait_mem;
	/* Its edge at its previous full read (model/waitgraph.h), kept by
	 * the table the same way. */
	struct gp_wait_edge *edge_mem;
	/* What its last record said (tracer/threadrec.h), kept by the table:
	 * the base its next delta record is written against. */
	struct gp_thread_rec *rec_mem;
	/* Filled by the sampler: CPU% over the interval (0 when is_new). */
	float cpu_pct;
};

struct gp_tasks_stats {
	unsigned threads;        /* in this sample */
	unsigned vanished;       /* exited between readdir and read (this sample) */
	unsigned reused;         /* tid reused by a new thread (this sample) */
	unsigned created;        /* first seen (this sample) */
	unsigned exited;         /* gone since the previous sample */
	/* The first of them that had run since it was first seen (a worker
	 * that started and ended between two samples was never read): its
	 * tid and name, 0 none (issue 32: a dead batcher's absence). */
	int ended_tid;
	char ended_comm[16];
	bool kstack_denied, syscall_denied, wchan_denied;
};

enum {
	GP_TASKS_KSTACK = 1u << 0, /* read /proc/TID/stack (root) when it says something new */
	GP_TASKS_REOPEN = 1u << 1, /* re-open files every sample (benchmark baseline) */
};

struct gp_tasks;

/* NULL with errno (ENOENT/ESRCH: no such process). */
struct gp_tasks *gp_tasks_new(const struct gp_root *root, int pid, unsigned flags);
void gp_tasks_free(struct gp_tasks *t);

/* Reads every thread.  *out points into the table and stays valid until
 * the next call.  Returns 0, or -1 with errno ESRCH when the process (its
 * task directory) is gone. */
/* Reads every thread once, before the first sample, so that the first
 * sample costs what a later one does (tasks.c); it still reports every
 * thread as new.  0, or -1 with errno. */
int gp_tasks_prime(struct gp_tasks *t);

int gp_tasks_sample(struct gp_tasks *t, struct gp_thread **out, size_t *n,
		    struct gp_tasks_stats *stats);

/* Fds kept open by every table of the process (tasks.c: the budget). */
size_t gp_tasks_kept_fds(void);

/* The process as its /proc/PID/stat and io say it -- CPU times (clock
 * ticks, adjusted as stat's), faults, io -- summed over its threads by
 * this sample's BPF pass (taskiter.bpf.c account): /proc/PID/stat walks
 * every thread for them (thread_group_cputime), 10 % of a 10 s trace of
 * 10 001 threads on the BPF path (perf, 2026-12-06).  False on the /proc
 * path, or where this sample's pass failed: read /proc/PID/stat then. */
struct gp_tasks_proc {
	uint64_t utime, stime, minflt, majflt;
	bool have_io;
	struct gp_io io;
};
bool gp_tasks_proc_sums(struct gp_tasks *t, struct gp_tasks_proc *out);

/* How this table reads its threads: "bpf" (a task iterator, taskiter.h)
 * or "proc"; *why says why not BPF ("" on the BPF path). */
const char *gp_tasks_path(const struct gp_tasks *t, const char **why);

#endif
