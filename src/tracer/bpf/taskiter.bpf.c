/* The sampler's threads in one read() (issue 30): a task iterator over
 * one process (BPF_TASK_ITER_TGID, kernel >= 6.1) that writes a record
 * only for the threads whose times, switches, faults or state moved
 * since this reader's last pass, and lists every thread it saw.  A
 * pass over 10 000 sleeping threads writes nothing but that list; the
 * /proc path pays a pread of schedstat for each (tasks.c).
 *
 * What /proc prints, and where this reads it (linux 6.1-6.18):
 * - stat (fs/proc/array.c do_task_stat): state from task_state_index()
 *   over __state and exit_state; min_flt, maj_flt; utime/stime through
 *   task_cputime_adjusted() -- sum_exec_runtime split in the ratio of
 *   the tick-sampled utime:stime, clamped against prev_cputime
 *   (kernel/sched/cputime.c cputime_adjust), done in user space from
 *   the raw values written here (taskiter.c); start_boottime; task_cpu()
 *   (thread_info.cpu); real_parent's tgid.
 * - status (task_context_switch_counts): nvcsw, nivcsw.
 * - schedstat (fs/proc/base.c proc_pid_schedstat): se.sum_exec_runtime,
 *   sched_info.run_delay, sched_info.pcount.
 * - syscall (lib/syscall.c collect_syscall): "running" when __state is
 *   TASK_RUNNING, else orig_ax and the argument registers of
 *   task_pt_regs(), sp and ip.
 * - wchan (kernel/sched/core.c get_wchan): 0 unless asleep and off the
 *   run queue (on_rq 0, __state not RUNNING or WAKING); then the first
 *   return address of its stack outside the scheduler.  bpf_get_task_stack
 *   walks the same stack with the same filter (stack_trace_save_tsk skips
 *   in_sched_functions() for a task not current), and "%ps" names it as
 *   lookup_symbol_name() does, with " [module]" after a module's.
 *
 * Records go through the iterator's seq_file.  When one does not fit
 * (bpf_seq_write: -EOVERFLOW), kernel/bpf/bpf_iter.c bpf_seq_read drops
 * it and shows the same task again at the next read(): so its last
 * values are stored, and it is listed, only once its record was
 * written. */
#include "kernel.h"
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "taskiter_abi.h"

char LICENSE[] SEC("license") = "GPL";

#define BPF_F_NO_PREALLOC 1
#define BPF_F_MMAPABLE 1024
/* include/linux/sched.h */
#define TASK_RUNNING 0x0000
#define TASK_WAKING 0x0200
#define TS_COMPAT 0x0002	/* arch/x86/include/asm/thread_info.h */

/* The kernel's types this program reads, with the members it uses.
 * Named ___ti so as not to clash with kernel.h's (sockflow's, taskregs')
 * reduced task_struct: libbpf drops a ___suffix when it matches a type
 * against the kernel's BTF, so each member is found by its own name. */
struct thread_info___ti {
	__u32 status;
	__u32 cpu;
} GP_CORE;

struct sched_entity___ti {
	__u64 sum_exec_runtime;
} GP_CORE;

struct sched_info___ti {
	unsigned long pcount;
	unsigned long long run_delay;
} GP_CORE;

struct prev_cputime___ti {
	__u64 utime, stime;
} GP_CORE;

struct task_io_accounting___ti {
	__u64 rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
} GP_CORE;

struct signal_struct___ti {
	int nr_threads;
	__u64 cutime, cstime;
	__u64 utime, stime, sum_sched_runtime;
	unsigned long min_flt, maj_flt;
	struct prev_cputime___ti prev_cputime;
	struct task_io_accounting___ti ioac;
} GP_CORE;

struct refcount___ti {
	struct {
		int counter;
	} refs;
} GP_CORE;

struct task_struct___ti {
	struct thread_info___ti thread_info;
	unsigned int __state;
	int on_rq;
	int exit_state;
	int pid, tgid;
	char comm[16];
	__u64 utime, stime;
	struct prev_cputime___ti prev_cputime;
	__u64 start_boottime;
	unsigned long min_flt, maj_flt;
	unsigned long nvcsw, nivcsw;
	struct sched_entity___ti se;
	struct sched_info___ti sched_info;
	struct signal_struct___ti *signal;
	struct task_struct___ti *real_parent;
	struct refcount___ti stack_refcount;
	struct task_io_accounting___ti ioac;
} GP_CORE;

/* Set by the reader before each pass (taskiter.c, one pass at a time). */
__u32 want_tgid;
__u32 reader;
struct gp_taskiter_pass_info pass;
/* The last wchan named, and its name: the threads of a pool sleep in one
 * kernel function, and "%ps" looks each one up in kallsyms (5 % of the
 * CPU of a 1 s trace of 10 001 threads, perf 2026-12-06).  Passes run
 * one at a time (taskiter.c's lock); the reader clears wchan_ip before
 * each, so a name outlives no pass (a module unloaded meanwhile). */
__u64 wchan_ip;
char wchan_name[64];

/* (reader, tid) -> what that reader was last told of that thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, GP_TASKITER_MAXLAST);
	__type(key, struct gp_taskiter_key);
	__type(value, struct gp_taskiter_last);
} last SEC(".maps");

/* The tids seen this pass, in the kernel's thread-list order (the order
 * /proc/PID/task lists them): read by user space through mmap.  64-bit
 * values: an array map's elements are 8-byte aligned (round_up(value_size,
 * 8), kernel/bpf/arraymap.c), and that is the stride user space sees. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, GP_TASKITER_MAXV);
	__type(key, __u32);
	__type(value, __u64);
} visited SEC(".maps");

/* The record being written: too big for the BPF stack (512 bytes). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gp_taskiter_rec);
} scratch SEC(".maps");

static __always_inline void now_of(struct task_struct___ti *t, struct gp_taskiter_last *n)
{
	n->task = (__u64)(unsigned long)t;
	n->sum_exec = t->se.sum_exec_runtime;
	n->utime = t->utime;
	n->stime = t->stime;
	n->run_delay = t->sched_info.run_delay;
	n->pcount = t->sched_info.pcount;
	n->nvcsw = t->nvcsw;
	n->nivcsw = t->nivcsw;
	n->min_flt = t->min_flt;
	n->maj_flt = t->maj_flt;
	n->state = t->__state;
	n->exit_state = t->exit_state;
}

/* Moved since the last record: a counter, the state, or the task.  A
 * thread runnable then or now is written again (as tasks.c's /proc path
 * reads a thread in full whose last state was R): woken but not yet
 * run, nothing of it has counted yet. */
static __always_inline bool moved(const struct gp_taskiter_last *o, const struct gp_taskiter_last *n)
{
	return o->task != n->task || o->sum_exec != n->sum_exec || o->pcount != n->pcount
	       || o->run_delay != n->run_delay || o->nvcsw != n->nvcsw || o->nivcsw != n->nivcsw
	       || o->utime != n->utime || o->stime != n->stime || o->min_flt != n->min_flt
	       || o->maj_flt != n->maj_flt || o->state != n->state || o->exit_state != n->exit_state
	       || (n->state == TASK_RUNNING && !n->exit_state);
}

/* The registers its last entry into the kernel saved (lib/syscall.c
 * collect_syscall): only while it still has a kernel stack (a zombie
 * leader's is freed: try_get_task_stack fails and /proc says "-1 0 0"). */
static __always_inline void regs_of(struct task_struct___ti *t, struct gp_taskiter_rec *r)
{
	if (BPF_CORE_READ(t, stack_refcount.refs.counter) == 0)
		return;
	struct pt_regs *p = (struct pt_regs *)bpf_task_pt_regs((struct task_struct *)t);
	if (!p)
		return;
	r->flags |= GP_TI_REGS;
	r->orig_ax = (__s64)BPF_CORE_READ(p, orig_ax);
	r->sp = BPF_CORE_READ(p, sp);
	r->ip = BPF_CORE_READ(p, ip);
	/* syscall_get_arguments (arch/x86/include/asm/syscall.h): a 32-bit
	 * call's are bx cx dx si di bp, a 64-bit one's di si dx r10 r8 r9. */
	if (BPF_CORE_READ(t, thread_info.status) & TS_COMPAT) {
		r->flags |= GP_TI_COMPAT;
		r->args[0] = BPF_CORE_READ(p, bx);
		r->args[1] = BPF_CORE_READ(p, cx);
		r->args[2] = BPF_CORE_READ(p, dx);
		r->args[3] = BPF_CORE_READ(p, si);
		r->args[4] = BPF_CORE_READ(p, di);
		r->args[5] = BPF_CORE_READ(p, bp);
	} else {
		r->args[0] = BPF_CORE_READ(p, di);
		r->args[1] = BPF_CORE_READ(p, si);
		r->args[2] = BPF_CORE_READ(p, dx);
		r->args[3] = BPF_CORE_READ(p, r10);
		r->args[4] = BPF_CORE_READ(p, r8);
		r->args[5] = BPF_CORE_READ(p, r9);
	}
}

/* get_wchan's rule, without its pi_lock: asleep and off the run queue,
 * then the stack's first frame outside the scheduler.  A thread that
 * woke while its stack was walked (its switch counts moved) has none. */
static __always_inline void wchan_of(struct task_struct___ti *t, struct gp_taskiter_rec *r)
{
	unsigned int st = t->__state;
	if (st == TASK_RUNNING || st == TASK_WAKING || t->on_rq || t->exit_state)
		return;
	__u64 sw = t->nvcsw + t->nivcsw;
	__u64 ip[1] = { 0 };
	if (bpf_get_task_stack((struct task_struct *)t, ip, sizeof ip, 0) < (long)sizeof ip[0] || !ip[0])
		return;
	if (t->on_rq || t->__state != st || t->nvcsw + t->nivcsw != sw)
		return;
	if (ip[0] == wchan_ip) {
		__builtin_memcpy(r->wchan, wchan_name, sizeof r->wchan);
		r->flags |= GP_TI_WCHAN;
		return;
	}
	if (bpf_snprintf(r->wchan, sizeof r->wchan, "%ps", ip, sizeof ip) > 0) {
		r->flags |= GP_TI_WCHAN;
		__builtin_memcpy(wchan_name, r->wchan, sizeof wchan_name);
		wchan_ip = ip[0];
	}
}

/* The members only a written record needs are read with BPF_CORE_READ
 * (probe reads): each direct access to a BTF pointer costs the verifier
 * a search of the kernel's BTF by name at load (check_ptr_to_btf_access),
 * 10 ms of gpuprobe's start with all of them direct (perf, 2026-12-06);
 * the members every thread's pass compares (now_of) stay direct loads. */
static __always_inline void fill(struct task_struct___ti *t, const struct gp_taskiter_last *n,
				 struct gp_taskiter_rec *r)
{
	__builtin_memset(r, 0, sizeof *r);
	r->tid = BPF_CORE_READ(t, pid);
	r->state = n->state;
	r->exit_state = n->exit_state;
	r->cpu = BPF_CORE_READ(t, thread_info.cpu);
	r->ppid = BPF_CORE_READ(t, real_parent, tgid);
	r->nr_threads = BPF_CORE_READ(t, signal, nr_threads);
	BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
	r->utime = n->utime;
	r->stime = n->stime;
	r->prev_utime = BPF_CORE_READ(t, prev_cputime.utime);
	r->prev_stime = BPF_CORE_READ(t, prev_cputime.stime);
	r->sum_exec = n->sum_exec;
	r->run_delay = n->run_delay;
	r->pcount = n->pcount;
	r->nvcsw = n->nvcsw;
	r->nivcsw = n->nivcsw;
	r->min_flt = n->min_flt;
	r->maj_flt = n->maj_flt;
	r->start_boottime = BPF_CORE_READ(t, start_boottime);
	r->cutime = BPF_CORE_READ(t, signal, cutime);
	r->cstime = BPF_CORE_READ(t, signal, cstime);
	r->orig_ax = -1;
	regs_of(t, r);
	wchan_of(t, r);
}

/* One thread into the process's sums (gp_taskiter_pass_info); the first
 * listed brings the signal's totals of the threads gone.  As
 * thread_group_cputime (kernel/sched/cputime.c) and do_io_accounting. */
static __always_inline void account(struct task_struct___ti *t, const struct gp_taskiter_last *n)
{
	bool io = bpf_core_field_exists(t->ioac.rchar) && bpf_core_field_exists(t->ioac.read_bytes);
	if (pass.visited == 0) {
		struct signal_struct___ti *sig = t->signal;
		pass.sums = 1;
		pass.utime = BPF_CORE_READ(sig, utime);
		pass.stime = BPF_CORE_READ(sig, stime);
		pass.sum_exec = BPF_CORE_READ(sig, sum_sched_runtime);
		pass.min_flt = BPF_CORE_READ(sig, min_flt);
		pass.maj_flt = BPF_CORE_READ(sig, maj_flt);
		pass.prev_utime = BPF_CORE_READ(sig, prev_cputime.utime);
		pass.prev_stime = BPF_CORE_READ(sig, prev_cputime.stime);
		if (io) {
			pass.io = 1;
			pass.rchar = BPF_CORE_READ(sig, ioac.rchar);
			pass.wchar = BPF_CORE_READ(sig, ioac.wchar);
			pass.syscr = BPF_CORE_READ(sig, ioac.syscr);
			pass.syscw = BPF_CORE_READ(sig, ioac.syscw);
			pass.read_bytes = BPF_CORE_READ(sig, ioac.read_bytes);
			pass.write_bytes = BPF_CORE_READ(sig, ioac.write_bytes);
			pass.cancelled_write_bytes = BPF_CORE_READ(sig, ioac.cancelled_write_bytes);
		}
	}
	pass.utime += n->utime;
	pass.stime += n->stime;
	pass.sum_exec += n->sum_exec;
	pass.min_flt += n->min_flt;
	pass.maj_flt += n->maj_flt;
	if (io) {
		pass.rchar += t->ioac.rchar;
		pass.wchar += t->ioac.wchar;
		pass.syscr += t->ioac.syscr;
		pass.syscw += t->ioac.syscw;
		pass.read_bytes += t->ioac.read_bytes;
		pass.write_bytes += t->ioac.write_bytes;
		pass.cancelled_write_bytes += t->ioac.cancelled_write_bytes;
	}
}

static __always_inline void list(__u32 tid)
{
	__u32 i = pass.visited;
	__u64 *slot = bpf_map_lookup_elem(&visited, &i);
	if (slot)
		*slot = tid;
	pass.visited = i + 1;
}

SEC("iter/task")
int gp_taskiter(struct bpf_iter__task *ctx)
{
	struct task_struct___ti *t = (struct task_struct___ti *)ctx->task;
	if (!t || t->tgid != want_tgid)
		return 0;
	struct gp_taskiter_key k = { .tid = t->pid, .reader = reader };
	struct gp_taskiter_last n;
	now_of(t, &n);
	struct gp_taskiter_last *o = bpf_map_lookup_elem(&last, &k);
	pass.nr_threads = t->signal->nr_threads;
	if (o && !moved(o, &n)) {
		account(t, &n);
		list(k.tid);
		return 0;
	}
	__u32 zero = 0;
	struct gp_taskiter_rec *r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	fill(t, &n, r);
	if (!o || o->task != n.task)
		r->flags |= GP_TI_NEW;
	if (bpf_seq_write(ctx->meta->seq, r, sizeof *r) < 0)
		return 0; /* shown again at the next read() */
	pass.emitted++;
	if (o)
		*o = n;
	else if (bpf_map_update_elem(&last, &k, &n, BPF_ANY) < 0)
		pass.lost++;
	account(t, &n);
	list(k.tid);
	return 0;
}
