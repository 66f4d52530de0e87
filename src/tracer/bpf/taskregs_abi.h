/* What taskregs.bpf.c writes for src/unwind/taskregs.c: one record per
 * thread of the iteration. */
#ifndef GP_TASKREGS_ABI_H
#define GP_TASKREGS_ABI_H

struct gp_taskregs_rec {
	__u32 tid;
	__u32 state;           /* task->__state: 0 running or runnable */
	__s32 on_cpu;          /* on a CPU now: its saved registers are stale */
	__u32 user;            /* 1: a user thread (it has an mm) */
	/* the system call it entered last (-1: none; an interrupt): while
	 * it runs inside that call, this stays, though the registers
	 * below may not be whole */
	__s64 orig_ax;
	/* its saved user registers, in DWARF's x86-64 order (0-16): rax rdx
	 * rcx rbx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 rip */
	__u64 regs[17];
};

#endif
