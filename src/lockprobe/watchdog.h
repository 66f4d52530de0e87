/* Runs one runtime call on a thread of its own, and gives up waiting for
 * it after a timeout: a call that never returns becomes a reported hang
 * (where the thread waits, from /proc), never a hung gpuprobe. */
#ifndef GP_WATCHDOG_H
#define GP_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

typedef int64_t (*gp_wd_fn)(void *arg);

struct gp_wd_stuck {
	int tid;
	char state;             /* from /proc/self/task/TID/stat */
	char wchan[64];
	char syscall[160];      /* "read(fd 5)", "running", "" unknown */
	char *kstack;           /* /proc/self/task/TID/stack text (root), or NULL; caller frees */
};

/* Returns true when fn returned within timeout_ns (integer nanoseconds on
 * CLOCK_MONOTONIC; INT64_MAX: wait for ever): *ret its value, *secs the
 * call's own duration.  False: it is still running, *stuck says where
 * (and the thread is left behind: the caller must exit soon, with _exit,
 * since the runtime's destructors may wait for it). */
bool gp_watchdog_run(gp_wd_fn fn, void *arg, int64_t timeout_ns, int64_t *ret,
		     double *secs, struct gp_wd_stuck *stuck);

/* Opens the GPU runtime (gp_gpu_open) under the watchdog: a runtime that
 * does not open within timeout_ns is reported (where its thread waits)
 * and gpuprobe exits 1 at once.  0, or -1 with the runtime's reason
 * printed.  lock.c; pools.c uses it too. */
struct gp_gpu;
enum gp_rt;
int gp_lockprobe_open_runtime(struct gp_gpu *g, enum gp_rt rt, const char *lib, int64_t timeout_ns);

#endif
