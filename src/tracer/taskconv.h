/* A thread as /proc would print it, from the raw values the BPF task
 * iterator read (src/tracer/bpf/taskiter.bpf.c): the kernel's own
 * arithmetic, redone here, so that the BPF path's records and verdict
 * are the /proc path's (issue 30).  Pure functions. */
#ifndef GP_TASKCONV_H
#define GP_TASKCONV_H

#include <linux/types.h>
#include <stdint.h>

#include "bpf/taskiter_abi.h"
#include "tasks.h"

/* What cputime_adjust() last reported for a thread (its prev_cputime),
 * ns. */
struct gp_cputime {
	uint64_t utime, stime;
};

/* kernel/sched/cputime.c cputime_adjust(): rtime (sum_exec_runtime) split
 * in the ratio of the tick-sampled utime:stime, never below what prev
 * says was reported before; prev is updated as the kernel updates it. */
void gp_cputime_adjust(uint64_t rtime, uint64_t utime, uint64_t stime, struct gp_cputime *prev,
		       uint64_t *ut, uint64_t *st);

/* include/linux/sched.h task_state_index() over __state and exit_state,
 * as the letter fs/proc/array.c prints: R S D T t X Z P I. */
char gp_task_state_char(unsigned state, unsigned exit_state);

/* ns -> clock ticks as nsec_to_clock_t() (kernel/time/time.c) divides:
 * truncated, at clk_tck ticks a second. */
uint64_t gp_ns_to_ticks(uint64_t ns, long clk_tck);

/* th filled from r (th cleared first): what stat, status, schedstat,
 * wchan and syscall of /proc/PID/task/TID would have said.  prev: this
 * thread's cputime_adjust state as gpuprobe last computed it (zero for
 * a thread not seen before); the kernel's own (r->prev_*, the last
 * /proc reader's) is used when more recent. */
void gp_taskconv_thread(const struct gp_taskiter_rec *r, long clk_tck, struct gp_cputime *prev,
			struct gp_thread *th);

#endif
