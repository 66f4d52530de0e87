/* gpuprobe bundle: one .tar.gz to attach to a bug report (issue 22).
 *
 * Parts, each made in a child with a deadline (part.h), in this order:
 * info.txt (gpuprobe info), trace.jsonl and its printed summary
 * trace.txt (gpuprobe trace PID --seconds N), stacks.txt (gpuprobe stacks
 * PID: every thread, Python frames), kmsg.txt (the kernel log's GPU-driver
 * and hang/lockup/OOM lines of the window), gpu.json (the GPU file
 * descriptors and one reading of DRM fdinfo, KFD and NVML),
 * runtime-libs.json (build-ids of the GPU runtimes each process maps),
 * ras.txt (NCCL/RCCL RAS status: bundle_ras.c), report.md and plot.svg
 * (gpuprobe report), and MANIFEST: each part, its status, the command
 * that made it, and what was skipped or cut and why.  A part that fails
 * or times out is named in the MANIFEST; the bundle is still written. */
#ifndef GP_BUNDLE_H
#define GP_BUNDLE_H

#include <stdbool.h>
#include <stdio.h>

struct gp_bundle_opts {
	int pid;
	const char *out;        /* the .tar.gz to write */
	double seconds;         /* the trace's length (default 10) */
	double hang_after;      /* the trace's --hang-after; 0: trace's default */
	double interval;        /* the trace's --interval; 0: trace's default */
	/* From watch: why the bundle was made (one line), and the watch's
	 * own record of the process (a result file: the samples before the
	 * hang, the stacks at it, its verdict), NULL from the command. */
	const char *why;
	const char *watch_result;
	bool say;               /* one line on standard error when it starts */
	/* --jvm-threaddump: ask a HotSpot JVM for its own thread dump and
	 * deadlock report through its attach protocol (bundle_jvm.c); it
	 * starts the JVM's attach listener, so never by default. */
	bool jvm_dump;
};

#define GP_BUNDLE_SECONDS_DEFAULT 10.0

/* Writes the bundle.  Returns 0 when it was written (parts may be
 * missing: the MANIFEST says), -1 when it could not be (errno; one
 * gpuprobe: line printed). */
int gp_bundle_write(const struct gp_bundle_opts *o);

/* NCCL/RCCL RAS status of pid into out, for ras.txt (bundle_ras.c).
 * Returns 0 when it was probed, or 2 with why (cap bytes) when not. */
int gp_bundle_ras(int pid, FILE *out, char *why, size_t cap);

/* A HotSpot JVM's thread dump with its deadlock report into out, for
 * jvm-threads.txt (bundle_jvm.c): 0 written, 1 failed, 2 not a JVM; why
 * (cap bytes) says what failed or was not done. */
int gp_bundle_jvm(int pid, FILE *out, char *why, size_t cap);

#endif
