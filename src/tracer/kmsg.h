/* The kernel log, followed from a trace's start: GPU-driver lines
 * (amdgpu, amdkfd, NVRM with Xid, nouveau, i915, xe) and the kernel's
 * hang/lockup/OOM warnings, each with its time relative to the trace.
 *
 * /dev/kmsg (Documentation/ABI/testing/dev-kmsg): one record per read(2),
 * "PRI,SEQ,TS_US,FLAGS[,...];MESSAGE\n" then " KEY=VALUE\n" dictionary
 * lines.  A new reader starts at the oldest record still in the buffer;
 * EPIPE says records were overwritten before we read them, and the gap in
 * SEQ says how many ("the 64 bit record sequence numbers allow to
 * calculate the amount of lost messages", the same ABI document).
 *
 * The record clock is not CLOCK_MONOTONIC.  The ABI document calls TS_US
 * "the monotonic timestamp", but printk stamps a record with local_clock()
 * (kernel/printk/printk.c, vprintk_store: ts_nsec = local_clock()), the
 * scheduler's clock: never slewed by NTP, where CLOCK_MONOTONIC is.  On a
 * server up for months the two are seconds apart (10 ppm of frequency
 * correction is 26 s in a month), and sysklogd and rsyslog gave up on the
 * stamp for the same reason (sysklogd 9f6fbb3, rsyslog imkmsg
 * parseKernelTimestamp).  So the reader calibrates: it learns the offset
 * of the record clock from CLOCK_MONOTONIC (gp_kmsg_calibrate) and turns
 * every record's time into the trace's.
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
	GP_KMSG_LOST,		/* not a record: records overwritten before we read them */
};

struct gp_kmsg_rec {
	double t;		/* seconds from the trace start (negative: before) */
	uint64_t ts_us;		/* the record's own timestamp (the record clock) */
	uint64_t seq;
	int level;		/* syslog level, 0 emerg .. 7 debug */
	char driver[16];	/* "amdgpu", "amdkfd", "nvidia", "nouveau", "i915", "xe", "drm", "kernel" */
	enum gp_kmsg_kind kind;
	int pid;		/* the process the line names (Xid pid=, hung task, OOM victim), 0 */
	int xid;		/* NVIDIA Xid number, -1 */
	uint64_t lost;		/* GP_KMSG_LOST: how many records */
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
 *  [,"pid":N][,"xid":N][,"lost":N]} */
json_t *gp_kmsg_json(const struct gp_kmsg_rec *r);

/* Now on CLOCK_MONOTONIC, in µs: the start_us of a live trace. */
uint64_t gp_kmsg_now_us(void);

/* The record clock against CLOCK_MONOTONIC: record time = monotonic time
 * + offset_us, to within err_us. */
struct gp_kmsg_clock {
	int64_t offset_us;
	int64_t err_us;		/* -1: not calibrated (offset 0 assumed) */
	const char *how;	/* "perf", "sched_debug", "none" */
	char why[160];		/* not calibrated: why */
};

/* Pure.  The kernel's own statement of both clocks: the head of
 * /proc/sched_debug (kernels before 5.13, world-readable) or
 * /sys/kernel/debug/sched/debug (root), whose "ktime" is ktime_get()
 * (CLOCK_MONOTONIC) and "cpu_clk" local_clock() (the record clock), read
 * together with interrupts off and written "MS.NNNNNN" (milliseconds,
 * nanoseconds).  True with *offset_us = cpu_clk - ktime. */
bool gp_kmsg_clock_parse(const char *text, int64_t *offset_us);

/* Learns the offset, writing nothing to the log.  Live: a perf software
 * event on ourselves, whose records are stamped with local_clock() too,
 * bracketed by two CLOCK_MONOTONIC readings (unprivileged where
 * kernel.perf_event_paranoid <= 2, the kernel's default); else the
 * kernel's statement above.  Replayed root: ROOT's recorded statement
 * (tests/fixtures/capture-proc.sh keeps it).  Neither: offset 0, err_us
 * -1, why said. */
void gp_kmsg_calibrate(const struct gp_root *root, struct gp_kmsg_clock *c);

struct gp_kmsg;

/* Opens ROOT/dev/kmsg, non-blocking, and calibrates its clock (start_us
 * is on CLOCK_MONOTONIC: gp_kmsg_now_us(), or a replayed root's own).
 * Records older than start_us minus before_s are skipped (the context
 * kept before the start).  NULL when
 * it cannot be read, with why: what is missing and what would give it
 * ("/dev/kmsg: Operation not permitted: kernel.dmesg_restrict = 1; run
 * as root or with CAP_SYSLOG"). */
struct gp_kmsg *gp_kmsg_open(const struct gp_root *root, uint64_t start_us,
			     double before_s, char *why, size_t cap);

/* Reads what has arrived, never blocks: up to cap kept records into
 * out, in the log's order.  Records overwritten before we read them (a
 * gap in SEQ, after EPIPE) come as one GP_KMSG_LOST record saying how
 * many, at the time of the record after the gap, when that record is in
 * the window (older losses are older than the window too).  A live log
 * is calibrated again each minute (the clocks keep drifting).  Returns
 * how many (0: nothing new), or -1 with why filled when the log can no
 * longer be read. */
int gp_kmsg_read(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		 char *why, size_t whycap);

/* Records of the window the kernel overwrote before we read them, so far. */
uint64_t gp_kmsg_lost(const struct gp_kmsg *k);

/* The calibration in use. */
const struct gp_kmsg_clock *gp_kmsg_clock(const struct gp_kmsg *k);

void gp_kmsg_close(struct gp_kmsg *k);

#endif
