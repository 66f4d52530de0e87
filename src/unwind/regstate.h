/* The registers and memory libdwfl's unwinder starts from, for one
 * thread at a time, from either of two sources:
 *
 *   - a thread gpuprobe holds ptrace-stopped (ptstop.h): every general
 *     register, read with PTRACE_GETREGSET;
 *   - a thread asleep in a system call, NOT stopped: the user stack
 *     pointer and program counter the kernel shows in /proc/TID/syscall
 *     (fs/proc/base.c proc_pid_syscall: "nr args... sp pc", read from the
 *     task's saved user registers by task_current_syscall()), and nothing
 *     else.  The frames whose CFA rule needs only the stack pointer unwind
 *     (a C library's syscall wrappers, code built without frame pointers);
 *     the walk ends at the first frame whose rule needs a register the
 *     kernel does not show (rbp of a frame-pointer function, aarch64's lr
 *     in a leaf).
 *
 *   - a thread asleep, NOT stopped, whose saved user registers a BPF task
 *     iterator read (taskregs.h): every general register (x86-64), as a
 *     stop would give them;
 *
 * Memory comes from process_vm_readv of the thread, through a small page
 * cache cleared for each thread.  Why not dwfl_linux_proc_attach:
 * libdwfl's own /proc state reads registers with PTRACE_GETREGS only
 * (elfutils libdwfl/linux-pid-attach.c pid_set_initial_registers), so a
 * thread that must not be stopped could not be unwound at all.
 *
 * Only x86-64 and aarch64 are known here; elsewhere gp_regstate_attach()
 * returns NULL and the caller keeps libdwfl's own ptrace state. */
#ifndef GP_REGSTATE_H
#define GP_REGSTATE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

struct gp_regstate;

/* Attaches the thread callbacks to dwfl, whose modules are reported.
 * NULL when this architecture is not known or libdwfl refused. */
struct gp_regstate *gp_regstate_attach(Dwfl *dwfl, int pid);
/* Freed after dwfl_end() of the Dwfl it was attached to. */
void gp_regstate_free(struct gp_regstate *rs);

/* The next unwind of tid starts from the registers of its ptrace stop. */
void gp_regstate_use_stop(struct gp_regstate *rs, int tid);
/* The next unwind of tid starts from these registers (taskregs.h's
 * order: DWARF's x86-64 numbering, 0-16). */
void gp_regstate_use_regs(struct gp_regstate *rs, int tid, const uint64_t regs[17]);
/* The next unwind of tid starts from sp and pc of its system call, and
 * the frame pointer fp when one was found (0: unknown; unwinder.c). */
void gp_regstate_use_syscall(struct gp_regstate *rs, int tid, uint64_t sp, uint64_t pc, uint64_t fp);

/* Candidates for the frame pointer of a thread asleep in a system call,
 * found on its stack above sp, nearest first (at most cap): word pairs
 * [fp] = the caller's frame pointer, [fp + 8] = a return address just
 * after a call instruction in a module of dwfl, whose own pair checks out
 * the same way.  For code built with frame pointers (Ubuntu 24.04 builds
 * its whole archive so), whose CFI says CFA = rbp + 16: from sp and pc
 * alone the walk ends at the first frame (seen on the device: every
 * thread 1 frame deep).  Stale pairs left by earlier calls pass these
 * checks too (ASan's interceptors: a walk into GetCurrentThread): the
 * caller tries them and keeps a walk that ends where stacks end. */
size_t gp_regstate_fp_candidates(Dwfl *dwfl, int tid, uint64_t sp, uint64_t *out, size_t cap);


#endif
