/* Symbolized user and kernel stacks of a live process, taken without
 * harming it.
 *
 * A session (struct gp_stacks) keeps one libdwfl session per target across
 * snapshots: modules are re-reported each snapshot (so a library dlopen'ed
 * late resolves), ELF files, CFI and symbol tables stay loaded, and the
 * whole session is rebuilt when the target exec'd or its PID was reused
 * (starttime or /proc/PID/exe changed).
 *
 * How a thread is stopped: src/unwind/ptstop.h holds the contract (one
 * thread at a time in all of gpuprobe, PTRACE_SEIZE + PTRACE_INTERRUPT,
 * never ATTACH, a bounded wait, a stop that comes late let go as soon as
 * it comes).  Here: the unwind is the only work done while a thread is
 * stopped (symbols, source lines and demangling after the detach); never
 * a thread in D state, a zombie, or one another tracer holds ("traced",
 * with "traced by PID N (comm)"): its wchan, syscall and kernel stack are
 * reported instead.  A thread that does not stop within
 * GP_STACKS_STOP_TIMEOUT_MS is reported ("unwind":"timeout").
 *
 * Not thread-safe: one session is used by one thread.  The calling process
 * must not itself waitpid(-1, __WALL) concurrently (it could take the ptrace
 * stops).  A target that is the caller's own child is never reaped here: its
 * exit status is left for the caller's own waitpid.
 */
#ifndef GP_STACKS_H
#define GP_STACKS_H

#include "stackline.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	/* Let libdwfl ask debuginfod (DEBUGINFOD_URLS) for missing debug
	 * info.  Without it gp_stacks_open() unsets DEBUGINFOD_URLS for the
	 * whole process: no network, no surprise latency. */
	GP_STACKS_DEBUGINFOD = 1u << 0,
	/* Never ptrace: /proc data only (trace --stacks none). */
	GP_STACKS_NO_PTRACE = 1u << 1,
	/* Never read /proc/TID/stack. */
	GP_STACKS_NO_KERNEL = 1u << 2,
	/* Source lines for the C runtime's frames too (libc, ld.so,
	 * libstdc++, libgcc_s, libm): off by default, their debug info
	 * costs ~150 ms to open (stacks.c says why). */
	GP_STACKS_LINES_ALL = 1u << 3,
	/* No Python frames (pyframes.h) for a CPython process. */
	GP_STACKS_NO_PYTHON = 1u << 4,
};

#define GP_STACKS_STOP_TIMEOUT_MS 100
#define GP_STACKS_MAX_FRAMES 128

struct gp_stacks;

/* Opens a session on process pid (a thread-group id).  Cheap: libdwfl is
 * set up by the first snapshot.  NULL with errno (ESRCH: no such
 * process). */
struct gp_stacks *gp_stacks_open(int pid, unsigned flags);

/* Optional: loads the module list, ELF files and CFI now (the first call
 * costs 5-30 ms), e.g. while a CPU measurement window runs, so that the
 * first snapshot does not.  Every snapshot refreshes the list anyway.
 * 0, or -1 with errno ESRCH when the process is gone. */
int gp_stacks_prepare(struct gp_stacks *s);

/* One snapshot of the threads tids[0..n-1] (tids NULL: every thread of
 * the process, in /proc/PID/task order).  Builds DESIGN's `stacks` line
 * (its records written by model/stackline.h):
 *
 *   {"type":"stacks", "t":t, "pid":..,
 *    "threads":[{"tid", "comm", "state", "wchan" (""=not waiting),
 *                "syscall" (described, e.g. "futex(0x7f.., FUTEX_WAIT_PRIVATE)",
 *                           "running", "user" or null), "syscall_nr",
 *                "unwind": "ok" | "nostop" | "d-state" | "zombie" | "traced"
 *                          | "denied" | "timeout" | "gone" | "failed" | "off",
 *                ("nostop": never stopped, since a stop would change
 *                 what its call returns (stopcut.h); its frames, when
 *                 any, come from the sp/pc the kernel saved),
 *                "unwind_error" (when not ok, a reason),
 *                "stop_us" (how long this thread was stopped),
 *                "frames":[{"pc","module","soname","offset","build_id",
 *                           "symbol","file","line",
 *                           "python":[{"function","file","line"}] (only on an
 *                             evaluation-loop frame of CPython; pyframes.h)}]
 *                          (null unless unwound),
 *                "python":{"gil","frames","unplaced"} (a CPython thread; pyframes.h),
 *                "kernel":["futex_wait_queue+0x5d/0x90", ...] (null: unreadable)}],
 *    "modules":[{"path","soname","build_id","debug":"dwarf"|"symtab"|"dynsym"|"none"|"not-read",
 *                "hint"}]   (the modules that appear in frames),
 *    "python":{"version","module","threads"|"error"} (a CPython process),
 *    "cost":{"stopped","stop_us_max","stop_us_mean","wall_ms",
 *            "python_us_max" (the longest part of a stop spent reading Python frames)}}
 *
 * Frame fields: pc is the raw program counter ("0x..."); offset is the
 * address inside the module's ELF file ("0x...", what `eu-addr2line -e
 * FILE OFFSET` takes), for caller frames already taken at pc-1 so it lands
 * inside the call instruction; symbol is demangled; a symbol is given only
 * when the address lies inside the symbol's size (never the nearest
 * preceding symbol of a stripped module): null otherwise, as are file and
 * line without debug info.
 *
 * Returns 0 with *line set (caller owns it), or -1 with errno ESRCH when
 * the process is gone.  Threads that vanish mid-snapshot are "gone". */
int gp_stacks_snapshot(struct gp_stacks *s, double t, const int *tids, size_t n,
		       json_t **line);

/* What the session could not take so far (ptrace denied, kernel stacks
 * unreadable, a kernel thread), as facts: false when nothing.  Its words
 * are the renderer's (unwind_text.h); the commands print them once per
 * session (src/stacks_hint.h). */
bool gp_stacks_missing(struct gp_stacks *s, struct gp_stacks_missing *m);

/* Totals over the session, for benchmarks and the verdict's "what I could
 * not see". */
struct gp_stacks_totals {
	unsigned long snapshots, stopped, timeouts, denied, rebuilds;
	unsigned long nostop; /* threads unwound without a stop (stopcut.h) */
	unsigned long regs_bpf; /* of those, whole from saved registers (taskregs.h) */
	double stop_us_sum, stop_us_max;
	unsigned max_stopped_at_once; /* always <= 1: checked, not assumed */
};
void gp_stacks_totals(const struct gp_stacks *s, struct gp_stacks_totals *tot);

/* gp_ptstop_drain(): lets go of late stops, and takes the exits of
 * threads a SIGKILL woke while we had them stopped (they stay traced by
 * us, and the dead process looks alive -- zombie leader, Threads > 1 --
 * until we take their exit).  Callers that decide "exited" from /proc
 * call it first.  Returns how many are still pending or exiting. */
int gp_stacks_reap(struct gp_stacks *s);

void gp_stacks_close(struct gp_stacks *s);

#endif
