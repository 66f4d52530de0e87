/* The user-space frames of a stuck runtime call, read from outside.
 *
 * gpuprobe cannot ptrace a thread of its own process (the kernel refuses
 * PTRACE_SEIZE within a thread group), so when a watched call does not
 * return, a helper process is started -- `gpuprobe __unwind PID TID`, the
 * same binary exec'd (a multithreaded process may only exec after fork:
 * posix_spawn) -- which takes one snapshot of that thread with the stacks
 * module (SEIZE + INTERRUPT, one thread, never D state, detach at once)
 * and writes the `stacks` line on a pipe.  The caller waits a bounded
 * time; a helper that does not answer is killed, and the kernel lets go
 * of the thread it held (exit_ptrace): the worker is never left stopped. */
#ifndef GP_LOCK_UNWIND_H
#define GP_LOCK_UNWIND_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* How long the whole unwind may take, helper start-up included. */
#define GP_UNWIND_BUDGET_NS (5 * GP_NS_S)

/* Unwinds thread tid of this process from a helper, within budget_ns.
 * Adds to stuck (an arm's `stuck` object): "unwind" ("ok" or the stacks
 * module's reason, or "helper-failed"), "unwind_error" (why, when not
 * ok), "frames" (stacks.h's frame objects, or null) and "unwind_ms".
 * Never fails: what it could not do is said in the object. */
void gp_unwind_stuck(json_t *stuck, int tid, int64_t budget_ns);

/* "read ← fake_kfd_register_memory ← hsa_amd_memory_lock_to_pool": the
 * innermost frames of stuck.frames (up to max), symbol or module+0xoff.
 * Empty when there are none. */
void gp_unwind_chain(const json_t *stuck, unsigned max, char *buf, size_t cap);

#endif
