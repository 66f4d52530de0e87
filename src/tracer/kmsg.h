/* The kernel log, followed from a trace's start: GPU-driver lines
 * (amdgpu, amdkfd, NVRM with Xid, nouveau, i915, xe) and the kernel's
 * hang/lockup/OOM warnings, each with its time relative to the trace.
 *
 * /dev/kmsg (Documentation/ABI/testing/dev-kmsg): one record per read(2),
 * "PRI,SEQ,TS_US,FLAGS[,...];MESSAGE\n" then " KEY=VALUE\n" dictionary
 * lines; TS_US is the printk clock (local_clock(): monotonic, not counting
 * suspend, the clock of CLOCK_MONOTONIC on the machines gpuprobe runs
 * on).  A new reader starts at the oldest record still in the buffer;
 * EPIPE says records were overwritten before we read them.
 *
 * Replay: under a recorded root (--proc-root), ROOT/dev/kmsg is a regular
 * file of the same records, one a line (tests/fixtures/capture-proc.sh
 * writes it with dd iflag=nonblock). */
#ifndef GP_KMSG_H
#define GP_KMSG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procfs.h"

enum gp_kmsg_kind {
	GP_KMSG_OTHER = 0,	/* a GPU driver's line of no kind below */
	GP_KMSG_RING_TIMEOUT,	/* amdgpu "ring gfx_0.0.0 timeout", drm_sched job timed out, i915 GPU HANG */
	GP_KMSG_GPU_RESET,	/* "GPU reset begin!", "GPU recovery", i915 "Resetting chip" */
	GP_KMSG_XID,		/* NVRM: Xid (PCI:...): N, pid=... */
	GP_KMSG_HUNG_TASK,	/* hung_task: "task NAME:PID blocked for more than N seconds" */
	GP_KMSG_SOFT_LOCKUP,	/* watchdog: "soft lockup - CPU#N stuck for Ns!" (and hard LOCKUP) */
	GP_KMSG_OOM,		/* "invoked oom-killer", "oom-kill:", "Out of memory: Killed process" */
};

struct gp_kmsg_rec {
	double t;		/* seconds from the trace start (negative: before) */
	uint64_t ts_us;		/* the record's own timestamp */
	uint64_t seq;
	int level;		/* syslog level, 0 emerg .. 7 debug */
	char driver[16];	/* "amdgpu", "amdkfd", "nvidia", "nouveau", "i915", "xe", "drm", "kernel" */
	enum gp_kmsg_kind kind;
	int pid;		/* the process the line names (Xid pid=, hung task, OOM victim), 0 */
	int xid;		/* NVIDIA Xid number, -1 */
	char text[512];		/* the message, printable ASCII */
};

/* Pure.  Parses one record ("PRI,SEQ,TS,FLAGS;MESSAGE", dictionary lines
 * after a '\n' ignored) and classifies it; start_us is the trace start on
 * the record clock.  Returns 1 when the record is one to keep, 0 when it
 * is not (another subsystem's line), -1 when it is not a record. */
int gp_kmsg_parse(const char *rec, size_t len, uint64_t start_us,
		  struct gp_kmsg_rec *out);

const char *gp_kmsg_kind_name(enum gp_kmsg_kind k);

/* {"type":"kmsg","t":s,"driver":s,"kind":s,"text":s,"level":N
 *  [,"pid":N][,"xid":N]} */
json_t *gp_kmsg_json(const struct gp_kmsg_rec *r);

/* Now, on the record clock (CLOCK_MONOTONIC, µs): the start_us of a live
 * trace. */
uint64_t gp_kmsg_now_us(void);

struct gp_kmsg;

/* Opens ROOT/dev/kmsg, non-blocking.  Records older than start_us minus
 * before_s are skipped (the context kept before the start).  NULL when
 * it cannot be read, with why: what is missing and what would give it
 * ("/dev/kmsg: Operation not permitted: kernel.dmesg_restrict = 1; run
 * as root or with CAP_SYSLOG"). */
struct gp_kmsg *gp_kmsg_open(const struct gp_root *root, uint64_t start_us,
			     double before_s, char *why, size_t cap);

/* Reads what has arrived, never blocks: up to cap kept records into
 * out.  Returns how many (0: nothing new), or -1 with why filled when
 * the log can no longer be read. */
int gp_kmsg_read(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		 char *why, size_t whycap);

/* Records the kernel overwrote before we read them (EPIPE), so far. */
unsigned gp_kmsg_lost(const struct gp_kmsg *k);

void gp_kmsg_close(struct gp_kmsg *k);

#endif
