/* What a process does while it makes no progress, in words: the
 * verdict's activity (struct gp_activity: its waits, its threads, its GPU,
 * its wait graph) as one clause of the summary and of a phase
 * (verdict_text.h tells the rest of a verdict). */
#ifndef GP_ACTIVITY_TEXT_H
#define GP_ACTIVITY_TEXT_H

#include "strbuf.h"
#include "verdict.h"

/* The activity a of a flat phase: "threads asleep: 3 on a lock, ...".
 * machine: the machine the GPU words are of, or NULL. */
void gp_activity_words(struct strbuf *sb, const struct gp_activity *a, const char *machine);

/* "tensor 91%, DRAM 17%, 690 W (+575 W over its floor)": what a GPU did,
 * from GPM pipes, else util.memory and power (model/gpuwork.h). */
void gp_gpu_work_words(struct strbuf *sb, const struct gp_gpu_work_pt *g);

/* "stopped by gdb (pid 812)" / "stopped by a signal (SIGSTOP)": who
 * stopped a process, from TracerPid. */
void gp_stopper_words(struct strbuf *sb, const struct gp_wg_pt *g);

#endif
