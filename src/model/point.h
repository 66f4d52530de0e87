/* The compact point, built one way only: from per-process and per-thread
 * views that the live sampler fills from /proc and the loader fills from
 * a saved `sample` line (doc/result-format.md).  Both then call the same
 * builder, so a trace and `report` of its file judge the same points.
 *
 * The builder keeps a little state across samples (one entry a process):
 * a process's own io is its /proc/PID/io less what it inherited from the
 * children it reaped, and the tree's io is the sum of its processes' own
 * io, the exited ones included. */
#ifndef GP_POINT_H
#define GP_POINT_H

#include "series.h"
#include "waits.h"
#include "waitgraph.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One thread of one sample. */
struct gp_tview {
	int tid;
	const char *comm;
	char state;
	const char *wchan;          /* NULL or "" when not waiting / not readable */
	bool have_wchan, have_syscall, have_kstack;
	bool have_cpu;              /* cpu_pct is over a real interval */
	double cpu_pct, sys_pct;
	int64_t sc_nr;              /* >= 0 in syscall nr; -1 user; -2 running or unknown */
	uint64_t sc_arg0, sc_arg1;
	uint64_t vcsw, nvcsw;
	bool is_new;
	enum gp_wait wait;          /* what it waits for (tracer/waits.c) */
	struct gp_wait_edge on;     /* on whom (tracer/waitedge.c), how GP_EDGE_NONE: unknown */
};

/* One process of one sample. */
struct gp_pview {
	int pid, ppid;
	const char *comm;
	bool followed;              /* false: a child watched only for its io (--no-children) */
	char state;
	double utime, stime;        /* seconds, exited threads included */
	double children_cpu;        /* seconds of reaped children (stat's cutime + cstime) */
	bool children_followed;     /* its children are followed (trace's default) */
	uint64_t minflt, majflt;
	uint64_t rss_file, rss_anon, rss_shmem, vm_pin, vm_lck;
	bool have_io;
	uint64_t io_rchar, io_wchar, io_read_bytes, io_write_bytes, io_syscr, io_syscw;
	bool have_sock;             /* proc.sock: its sockets (tracer/sockets.h) */
	uint64_t sock_tx, sock_rx;  /* cumulative; between two traced processes only tx */
	uint64_t sock_io_tx, sock_io_rx; /* of its sockets' bytes, those in io_wchar/io_rchar too */
	uint64_t sock_io_writes, sock_io_reads; /* and their calls, in io_syscw/io_syscr too */
	uint32_t sock_backlog;
	uint64_t sock_unread;
	uint32_t sock_pending;      /* requests read and not answered (tracer/sockets.h) */
	double sock_pending_s;      /* the oldest's wait */
	uint64_t conn_failed;       /* its failed connects, cumulative (refused and other errors) */
	int conn_errno;             /* the last failure's */
	const char *conn_to;        /* its address ("127.0.0.1:8000"), or NULL */
	uint64_t lock_refused;      /* its non-blocking lock attempts refused, cumulative */
	int lock_holder;            /* the last refused lock's holder (/proc/locks), 0 unknown */
	const char *lock_holder_comm, *lock_file;
	uint64_t map_bytes;
	uint64_t gpu_bytes, gpu_gtt, gpu_vram, gpu_engine_ns;
	uint16_t gpu_have;          /* GP_PT_GPU_* */
	/* GPU activity (gpu/gpuact.h): whether this process's work runs on
	 * a GPU now, when a source can tell (NVML per process, a DRM engine
	 * not blind to it, KFD occupancy). */
	bool gpu_act_known, gpu_act_busy;
	double gpu_act_pct;         /* its busiest measure, % */
	/* Work, not occupancy (model/gpuwork.h), judged by gp_gpu_work_point
	 * from this sample's readings (work unknown: zeroed, GP_GW_UNKNOWN). */
	struct gp_gpu_work_pt gw;
	uint32_t threads_created, threads_exited, threads_vanished;
	int ended_tid;              /* a thread of it that ended since the last sample, 0 none */
	const char *ended_comm;
};

struct gp_point_builder;

struct gp_point_builder *gp_point_builder_new(void);
void gp_point_builder_free(struct gp_point_builder *b);

/* One sample: begin, add each process (children before their parents,
 * so a parent's io is read after a reap that the child's disappearance
 * will be matched with), end.  first: the trace's first sample. */
void gp_point_begin(struct gp_point_builder *b, struct gp_point *pt, double t, bool first);
void gp_point_add(struct gp_point_builder *b, struct gp_point *pt, const struct gp_pview *p,
		  const struct gp_tview *th, size_t n);
void gp_point_end(struct gp_point_builder *b, struct gp_point *pt);

/* The sample's "died" array (tracer/tree.c) into pt's died fields. */
#include <jansson.h>
void gp_point_deaths(struct gp_point *pt, const json_t *died);

#endif
