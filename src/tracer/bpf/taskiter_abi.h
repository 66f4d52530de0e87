/* What taskiter.bpf.c writes for src/tracer/taskiter.c: one record per
 * thread that moved since this reader's last pass, and the last values
 * it compares against, per (reader, tid).  Needs the __u32/__u64 types
 * of <linux/types.h> (user space) or kernel.h (the BPF side). */
#ifndef GP_TASKITER_ABI_H
#define GP_TASKITER_ABI_H

/* Threads one pass may list in `visited` (taskiter.bpf.c); a process
 * with more is read in part and completed from /proc/PID/task. */
#define GP_TASKITER_MAXV (1u << 16)
/* Threads of all traced processes whose last values are kept. */
#define GP_TASKITER_MAXLAST (1u << 20)

enum {
	GP_TI_NEW = 1u << 0,    /* no last values for this (reader, tid): first pass, or another task */
	GP_TI_WCHAN = 1u << 1,  /* wchan read (asleep, off every run queue) */
	GP_TI_REGS = 1u << 2,   /* orig_ax, args, sp and ip read (it has a kernel stack) */
	GP_TI_COMPAT = 1u << 3, /* a 32-bit task in a 32-bit call: args are bx cx dx si di bp */
};

struct gp_taskiter_key {
	__u32 tid;
	__u32 reader;
};

/* What the reader was last told (the counters only; a thread whose
 * counters and state are all equal to these is not written). */
struct gp_taskiter_last {
	__u64 task;             /* the task_struct's address: a tid that names another task */
	__u64 sum_exec, utime, stime, run_delay, pcount, nvcsw, nivcsw, min_flt, maj_flt;
	__u32 state;            /* __state */
	__u32 exit_state;
};

struct gp_taskiter_rec {
	__u32 tid;
	__u32 flags;            /* GP_TI_* */
	__u32 state;            /* task->__state */
	__u32 exit_state;       /* task->exit_state */
	__s32 cpu;              /* task_cpu(): thread_info.cpu */
	__u32 ppid;             /* real_parent->tgid */
	__s32 nr_threads;       /* signal->nr_threads */
	__u32 pad;
	char comm[16];
	__u64 utime, stime;     /* task->utime/stime, ns (tick-sampled) */
	__u64 prev_utime, prev_stime; /* task->prev_cputime: the last /proc reader's adjusted values */
	__u64 sum_exec;         /* se.sum_exec_runtime */
	__u64 run_delay, pcount;/* sched_info */
	__u64 nvcsw, nivcsw, min_flt, maj_flt;
	__u64 start_boottime;   /* ns after boot */
	__u64 cutime, cstime;   /* signal->cutime/cstime: reaped children's, ns */
	__s64 orig_ax;          /* the system call it is in (-1: none) */
	__u64 args[6], sp, ip;
	char wchan[64];         /* "%ps" of wchan: "name" or "name [module]" */
};

/* The end of a pass (taskiter.bpf.c's globals, read after the last read()). */
struct gp_taskiter_pass_info {
	__u32 visited;          /* threads of the process seen (listed in visited[] up to MAXV) */
	__u32 emitted;          /* records written */
	__s32 nr_threads;       /* signal->nr_threads at the last thread seen */
	__u32 lost;             /* last values not stored (map full): those threads are written again */
	/* The process as /proc/PID/stat and /proc/PID/io sum it (fs/proc/
	 * array.c do_task_stat and base.c do_io_accounting, "whole"): the
	 * signal's totals of the threads that exited, plus each thread
	 * listed this pass (a thread shown again after a full read() is
	 * counted once).  sums: 1 when read; io: 1 when the task has ioac
	 * (CONFIG_TASK_XACCT and CONFIG_TASK_IO_ACCOUNTING). */
	__u32 sums, io;
	__u64 utime, stime, sum_exec, min_flt, maj_flt;  /* ns, ns, ns, faults */
	__u64 prev_utime, prev_stime;                    /* signal->prev_cputime */
	__u64 rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
};

#endif
