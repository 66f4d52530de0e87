/* The sampler's threads through a BPF task iterator (issue 30): one
 * read() per process per sample hands every thread that moved since the
 * last (src/tracer/bpf/taskiter.bpf.c) and lists the rest, which the
 * table (tasks.c) carries over untouched.  A pass over 10 000 sleeping
 * threads costs the kernel about 0.3 us a thread and writes no record.
 *
 * One program per gpuprobe process, loaded at the first ask; one reader
 * per traced process.  Needs root or CAP_BPF with CAP_PERFMON, the
 * kernel's BTF, x86_64, Linux >= 6.1 (an iterator of one process) and the
 * host's pid namespace.  GPUPROBE_BPF=off turns every BPF part off,
 * GPUPROBE_BPF_SAMPLER=off this one alone: the /proc path then samples
 * (tasks.c), with the same records and verdict. */
#ifndef GP_TASKITER_H
#define GP_TASKITER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/taskiter_abi.h"

/* Whether the iterator loaded (loads it at the first call); when not,
 * gp_taskiter_why() says why ("built without BPF ...", "loading BPF
 * needs root ...", "GPUPROBE_BPF_SAMPLER=off", ...). */
bool gp_taskiter_usable(void);
const char *gp_taskiter_why(void);

struct gp_taskiter;

/* A reader of pid's threads; NULL where the iterator is not usable or
 * cannot be attached to pid (errno set). */
struct gp_taskiter *gp_taskiter_new(int pid);
void gp_taskiter_free(struct gp_taskiter *it);

/* One pass: every thread of the process in the kernel's list order (the
 * order /proc/PID/task lists them), and the records of those that moved
 * since this reader's last pass, in that same order.  Valid until the
 * next pass of this reader.  0, or -1 with errno: ESRCH no thread left
 * (the process is gone); EAGAIN the pass was cut (a thread at a read()
 * boundary exited): the next pass writes every thread again, and this
 * sample must be read from /proc; E2BIG more threads than one pass lists
 * (GP_TASKITER_MAXV): read this process from /proc. */
struct gp_taskiter_pass {
	const uint32_t *tids;
	size_t ntids;
	const struct gp_taskiter_rec *recs;
	size_t nrecs;
	int64_t read_ns;   /* monotonic, when the pass ended */
	struct gp_taskiter_pass_info info; /* its counts, and the process's sums */
};
int gp_taskiter_pass(struct gp_taskiter *it, struct gp_taskiter_pass *p);

/* Passes, records and time spent, for the cost (bench/). */
void gp_taskiter_cost(unsigned long *passes, unsigned long *records, double *ms);

#endif
