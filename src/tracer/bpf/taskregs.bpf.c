/* The saved user registers of one thread, read without stopping it
 * (issue 30: stacks without any stop).  A BPF task iterator, attached to
 * one thread (bpf_iter_link_info.task.tid, kernel >= 6.1), writes the
 * registers the kernel saved when the thread last entered it:
 * bpf_task_pt_regs() is task_pt_regs(), the same registers
 * PTRACE_GETREGSET would return once the thread stopped
 * (arch/x86/kernel/ptrace.c getreg reads task_pt_regs(child)).  They are
 * whole and still only while the thread is off every CPU: the record
 * says whether it was (on_cpu, __state), and the reader
 * (src/unwind/taskregs.c) takes them only then. */
#include "kernel.h"
#include <stdbool.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "taskregs_abi.h"

char LICENSE[] SEC("license") = "GPL";

SEC("iter/task")
int gp_taskregs(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	if (!t)
		return 0;
	struct gp_taskregs_rec r = {};
	r.tid = BPF_CORE_READ(t, pid);
	r.state = BPF_CORE_READ(t, __state);
	r.on_cpu = BPF_CORE_READ(t, on_cpu);
	r.user = BPF_CORE_READ(t, mm) != 0;
	struct pt_regs *p = (struct pt_regs *)bpf_task_pt_regs(t);
	r.orig_ax = -1;
	if (p && r.user) {
		r.orig_ax = (__s64)BPF_CORE_READ(p, orig_ax);
		r.regs[0] = BPF_CORE_READ(p, ax);
		r.regs[1] = BPF_CORE_READ(p, dx);
		r.regs[2] = BPF_CORE_READ(p, cx);
		r.regs[3] = BPF_CORE_READ(p, bx);
		r.regs[4] = BPF_CORE_READ(p, si);
		r.regs[5] = BPF_CORE_READ(p, di);
		r.regs[6] = BPF_CORE_READ(p, bp);
		r.regs[7] = BPF_CORE_READ(p, sp);
		r.regs[8] = BPF_CORE_READ(p, r8);
		r.regs[9] = BPF_CORE_READ(p, r9);
		r.regs[10] = BPF_CORE_READ(p, r10);
		r.regs[11] = BPF_CORE_READ(p, r11);
		r.regs[12] = BPF_CORE_READ(p, r12);
		r.regs[13] = BPF_CORE_READ(p, r13);
		r.regs[14] = BPF_CORE_READ(p, r14);
		r.regs[15] = BPF_CORE_READ(p, r15);
		r.regs[16] = BPF_CORE_READ(p, ip);
	}
	bpf_seq_write(seq, &r, sizeof r);
	return 0;
}
