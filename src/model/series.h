/* The in-memory side of a trace: one compact point per sample, all the
 * verdict and the summary need, while the full samples stream to the
 * result file. */
#ifndef GP_SERIES_H
#define GP_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuwork.h"
#include "waitgraph.h"

/* What the verdict and the live line need from one sample: 824 bytes
 * (sizeof on x86-64, measured 2026-12-05; the comment said 300 while it
 * was 768), so 3600 samples are 2.8 MiB and the bounded series at most
 * GP_SERIES_MAX points, 6.4 MiB. */
struct gp_point {
	double t;
	char state;                 /* process state from stat */
	uint32_t threads, running, blocked_d;
	uint64_t rss_file, rss_anon, rss_shmem, vm_pin, vm_lck; /* bytes */
	double utime, stime;        /* process CPU seconds, exited threads included */
	uint64_t minflt, majflt;
	uint64_t vcsw, nvcsw;       /* sum over live threads */
	uint64_t io_rchar, io_wchar, io_read_bytes, io_write_bytes, io_syscr, io_syscw;
	/* Bytes sent and received through TCP sockets (between two processes
	 * of the tree, counted once as sent; tracer/sockets.h), exited
	 * processes' included: never down. */
	uint64_t sock_tx, sock_rx;
	/* Waiting in the tree's sockets now: connections not yet accepted,
	 * bytes not yet read (tracer/sockets.h). */
	uint32_t sock_backlog;
	uint64_t sock_unread;
	uint32_t sock_pending;      /* requests read and not answered, and the oldest's wait (s) */
	float sock_pending_s;
	int32_t sock_wait_pid;      /* the process whose sockets hold the most of these */
	/* Connects that failed in the tree, exited processes' included (never
	 * down; where the kernel counts them, tracer/sockflow.h), and the
	 * live process with the most: its pid, name, last errno and address. */
	uint64_t conn_failed;
	uint64_t conn_fail_most;
	int32_t conn_fail_pid, conn_errno;
	char conn_to[48], conn_comm[16];
	/* Non-blocking locks refused in the tree (never down), and the live
	 * process with the most: its pid, name, the file, who holds it. */
	uint64_t lock_refused, lock_refused_most;
	int32_t lock_pid, lock_holder;
	char lock_comm[16], lock_holder_comm[16], lock_file[64];
	uint64_t gpu_bytes;         /* DRM total, else KFD VRAM, else NVML */
	uint64_t gpu_gtt, gpu_vram, gpu_engine_ns;
	uint64_t sys_dirtied, sys_written, sys_pgsteal_file; /* pages */
	uint32_t threads_created, threads_exited, threads_vanished;
	uint32_t threads_spawned;   /* of threads_created, those of processes seen before */
	int32_t ended_tid, ended_pid; /* a thread that ended since the previous sample, 0 none */
	char ended_comm[16];
	int32_t top_tid;            /* busiest thread this interval, 0 if none */
	float top_cpu_pct, top_sys_pct, cpu_pct; /* over the interval */
	int64_t top_sc_nr;          /* its syscall nr, -1 user, -2 running/unknown */
	uint64_t top_sc_arg0, top_sc_arg1;
	char top_comm[16];
	int32_t top2_tid;           /* the second busiest, for two spinners */
	float top2_cpu_pct, top2_sys_pct;
	char top2_comm[16];
	/* Innermost user frame of the busiest threads when their stacks were
	 * taken this tick ("rocr::core::Runtime::AsyncEventsLoop(void*)",
	 * or "libhsa-runtime64.so.1+0x9ac37" when stripped), else "". */
	char top_frame[64], top2_frame[64];
	char top_wchan[32];
	char common_wchan[32];      /* most frequent wchan of sleeping threads */
	uint32_t common_wchan_count;
	int64_t common_sc_nr;       /* most frequent syscall of sleeping threads, -2 none */
	uint32_t common_sc_count;
	uint64_t common_sc_arg0, common_sc_arg1;
	uint64_t map_bytes;         /* largest file mapping (what is being loaded), 0 unknown */
	uint16_t have;              /* GP_PT_* */
	/* The process tree (model/point.c): the values above are sums over
	 * the followed processes; these say which process does what. */
	uint32_t procs;             /* followed processes in this sample */
	uint32_t procs_created, procs_exited; /* since the previous sample */
	/* Processes of the tree that ended since the previous sample, with
	 * how (the sample's "died", model/point.c gp_point_deaths): how many,
	 * how many killed by a signal that is no one's request (not PIPE,
	 * TERM, INT, HUP), how many exited non-zero; and the one to name (a
	 * killed one first, else a non-zero exit). */
	uint16_t died, died_killed, died_nonzero;
	int32_t death_pid, death_ppid;
	int16_t death_signal, death_status;
	bool death_before;          /* it died before the trace began (a zombie at the first walk) */
	char death_comm[16];
	int32_t top_pid, top2_pid;  /* the processes of the busiest threads */
	char top_pcomm[16], top2_pcomm[16];
	int32_t out_pid;            /* the process with the most own output this interval */
	char out_comm[16];
	uint64_t out_bytes;
	int32_t child_wait_pid;     /* a process whose threads all wait for a child, 0 none */
	char child_wait_comm[16];
	int32_t inside_pid;         /* the process with the most threads waiting inside */
	char inside_comm[16];
	int32_t outside_pid;        /* ... and outside (input, timer, signal, a peer) */
	int32_t main_lock_pid;      /* a process whose main thread waits on a lock, 0 none */
	uint8_t root_main_wait;     /* what the target's main thread waits for (enum gp_wait) */
	char outside_comm[16];
	uint16_t wait_n[16];        /* sleeping threads per enum gp_wait (model/waits.h) */
	bool common_sc_same_arg0;   /* every thread counted in common_sc waits on one address */
	bool root_gone;             /* the target itself has exited; its tree goes on */
	bool gpu_act_known, gpu_act_busy; /* the tree's GPU work runs (gpu/gpuact.h) */
	float gpu_act_pct;
	int32_t gpu_act_pid;        /* the process whose GPU work runs most */
	char gpu_act_comm[16];
	/* Work, not occupancy (model/gpuwork.h): the process whose GPU did
	 * the most telling thing this sample (work, else a spin, ...). */
	struct gp_gpu_work_pt gw;
	int32_t gw_pid;
	char gw_comm[16];
	/* Who waits on whom (model/waitgraph.h): where the chains end. */
	struct gp_wg_pt wg;
};

enum {
	GP_PT_IO = 1u << 0,        /* /proc/PID/io readable */
	GP_PT_GPU_DRM = 1u << 1,
	GP_PT_GPU_KFD = 1u << 2,
	GP_PT_GPU_NVML = 1u << 3,
	GP_PT_SYS_WB = 1u << 4,    /* nr_dirtied and nr_written present */
	GP_PT_SYS_RECLAIM = 1u << 5,
	GP_PT_WCHAN = 1u << 6,
	GP_PT_SYSCALL = 1u << 7,
	GP_PT_KSTACK = 1u << 8,
	GP_PT_SOCK = 1u << 9,      /* a followed process's sockets were read (tracer/sockets.h) */
};

/* Bounded for any length of trace (doc/result-format.md, "The series in
 * memory"): at most GP_SERIES_MAX points.  When full, the newest half
 * stays at full resolution (4096 samples: 68 min at 1 Hz, the phase a
 * hang verdict judges and the flat stretch before it), the first point
 * stays, and the older rest is merged into at most GP_SERIES_MAX / 4
 * points of one width (model/series.c compact, merge_into: counters and levels of the later
 * point, event counts summed, CPU% time-weighted, the busiest thread of
 * the busier interval). */
#define GP_SERIES_MAX 8192u

struct gp_series {
	struct gp_point *pt;
	size_t n, cap;
	size_t max;         /* 0: GP_SERIES_MAX (tests set a small one) */
	size_t samples;     /* every point pushed, merged or not */
	bool merged;        /* some points stand for several samples */
	double width;       /* seconds a merged point spans, at most */
};

/* Appends a copy of *p; -1 on allocation failure (the point is lost,
 * the trace goes on). */
int gp_series_push(struct gp_series *s, const struct gp_point *p);
void gp_series_free(struct gp_series *s);

#endif
