/* A sleeping thread's user registers, read without stopping it (issue
 * 30): a BPF task iterator hands out the registers the kernel saved when
 * the thread entered it (src/tracer/bpf/taskregs.bpf.c) -- every
 * register, where /proc/TID/syscall shows only sp and pc.  From them
 * libdwfl unwinds a sleeping thread exactly as a ptrace-stopped one
 * (regstate.h), with no stop at all.
 *
 * One per gpuprobe process, opened at the first ask; needs what
 * sockflow.h needs (root or CAP_BPF with CAP_PERFMON, BTF, x86_64, the
 * host's pid namespace) and kernel >= 6.1 (an iterator of one thread).
 * GPUPROBE_BPF=off turns it off, GPUPROBE_BPF_REGS=off this alone. */
#ifndef GP_TASKREGS_H
#define GP_TASKREGS_H

#include <stdbool.h>
#include <stdint.h>

struct gp_taskregs;

struct gp_taskregs *gp_taskregs_get(void);
const char *gp_taskregs_why(void);

/* tid's saved user registers in DWARF's x86-64 order (rax rdx rcx rbx
 * rsi rdi rbp rsp r8-r15 rip); false when it is on a CPU or runnable
 * (they would be stale), gone, a kernel thread, or there is no reader. */
bool gp_taskregs_read(struct gp_taskregs *r, int tid, uint64_t w[17]);

/* The system call tid last entered, from its saved registers, even while
 * it runs (orig_ax holds through the call: arch/x86/entry/common.c): nr
 * and args 0-5; false when unknown (no reader, gone, a kernel thread,
 * not in a call).  For a thread /proc shows only as "running": inside a
 * long send or write, a stop would cut it (stopcut.h).  A thread back in
 * user space still shows its last call: a caller that refuses a stop on
 * that word errs on the side of no stop. */
bool gp_taskregs_last_call(struct gp_taskregs *r, int tid, int64_t *nr, uint64_t args[6]);

/* Reads asked and reads that gave registers, for the stacks' cost. */
void gp_taskregs_cost(const struct gp_taskregs *r, unsigned long *asked, unsigned long *given);

#endif
