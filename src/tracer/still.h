/* How long every thread of a process has been off the CPUs, read at once
 * (issue 28: a bundle of a process deadlocked an hour ago must not say
 * "undecided, 20 s short of --hang-after 30" after its 10 s trace).
 *
 * The scheduler keeps, per thread, se.exec_start: the CPU's task clock
 * (rq_clock_task) when the thread's run time was last accounted, which
 * for a thread off the CPU is when it stopped running
 * (kernel/sched/fair.c: update_curr() sets curr->exec_start = now, and
 * it runs on every dequeue).  /proc/PID/task/TID/sched prints it in ms
 * (kernel/sched/debug.c: proc_sched_show_task, CONFIG_SCHED_DEBUG, which
 * Debian, Ubuntu and Fedora kernels have).  Each CPU's task clock runs
 * apart from the others (it leaves out that CPU's interrupt and steal
 * time: 4.8 s behind CLOCK_MONOTONIC on one CPU of a 10 h old VM here),
 * so a thread's exec_start is compared with the same CPU's clock now:
 * gpuprobe's own thread, moved onto the CPU the thread last ran on
 * (/proc/PID/task/TID/stat field 39), reads its own freshly set
 * exec_start.  Only gpuprobe's affinity changes, and it is put back. */
#ifndef GP_STILL_H
#define GP_STILL_H

#include "procfs.h"

#include <stdbool.h>

/* Seconds since any thread of pid last ran: 0 when one is on a CPU or
 * runnable; -1 when it cannot be told (no sched file, a replayed root, a
 * CPU gpuprobe may not run on, no such process) or is not read: more
 * than 4 096 threads (its cost), GPUPROBE_STILL=off. */
double gp_proc_still_s(const struct gp_root *root, int pid);

/* Parses a sched file's se.exec_start, in ms; false when absent. */
bool gp_sched_exec_start(const char *buf, double *ms);

#endif
