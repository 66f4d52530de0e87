/* Registers and memory for libdwfl's unwinder: see regstate.h.
 *
 * DWARF register numbers (the psABIs): x86-64 0 rax, 1 rdx, 2 rcx, 3 rbx,
 * 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return address (rip);
 * aarch64 0-30 x0-x30, 31 sp, the pc apart.  libdwfl's own backends set
 * the same ranges (elfutils backends/x86_64_initreg.c, aarch64_initreg.c). */
#include "config.h"
#include "regstate.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define GP_REGSTATE_KNOWN 1
#endif

#define PAGE_SZ 4096u
#define CACHE_PAGES 16u /* 64 KiB of stack: deeper frames are read word by word */

struct page {
	uint64_t base;          /* 0: empty */
	unsigned gen;
	unsigned char bytes[PAGE_SZ];
};

enum source { SRC_NONE, SRC_STOP, SRC_SYSCALL, SRC_REGS };

struct gp_regstate {
	/* The ELF libdwfl takes the architecture from, ours for as long as
	 * the Dwfl lives: given NULL, dwfl_attach_state takes a module's,
	 * and a module that leaves the process (an exec) frees it under the
	 * backend -- a crash in dwfl_thread_state_registers, seen under
	 * tests/faults/harm-exec-eperm.sh (1 run in 6). */
	Elf *elf;
	int elf_fd;
	int pid;
	int tid;
	enum source src;
	uint64_t sp, pc, fp;      /* fp: 0 unknown */
	uint64_t regs[17];        /* SRC_REGS: every register, DWARF's x86-64 order */
	unsigned gen;           /* pages of another generation are stale */
	struct page cache[CACHE_PAGES];
};

#ifdef GP_REGSTATE_KNOWN

static bool read_remote(int tid, uint64_t addr, void *buf, size_t len);

/* A return address: inside a module, right after a call instruction
 * (x86-64: e8 rel32; ff /2 with a register, [reg+disp8], [reg+disp32] or
 * rip-relative operand; aarch64: bl or blr, 4 bytes before). */
static bool after_call(Dwfl *dwfl, int tid, uint64_t ra)
{
	if (ra < 8 || !dwfl_addrmodule(dwfl, ra))
		return false;
	unsigned char b[8];
	if (!read_remote(tid, ra - 8, b, sizeof b))
		return false;
#ifdef __x86_64__
	if (b[3] == 0xe8)
		return true;                                     /* call rel32 */
	if (b[6] == 0xff && (b[7] & 0xf8) == 0xd0)
		return true;                                     /* call *%reg */
	if (b[5] == 0xff && (b[6] & 0xf8) == 0x50)
		return true;                                     /* call *disp8(%reg) */
	if (b[2] == 0xff && ((b[3] & 0xf8) == 0x90 || b[3] == 0x15))
		return true;                                     /* call *disp32(%reg), *disp(%rip) */
	if (b[6] == 0xff && (b[7] & 0xf8) == 0x10)
		return true;                                     /* call *(%reg) */
	return (b[5] == 0xff && b[6] == 0x14) || (b[4] == 0xff && b[5] == 0x54); /* with a SIB byte */
#else
	uint32_t insn;
	memcpy(&insn, b + 4, 4);
	return (insn & 0xfc000000u) == 0x94000000u || (insn & 0xfffffc1fu) == 0xd63f0000u;
#endif
}

size_t gp_regstate_fp_candidates(Dwfl *dwfl, int tid, uint64_t sp, uint64_t *out, size_t cap)
{
	uint64_t w[512]; /* 4 KiB above sp */
	size_t n = 0;
	if (!sp || !read_remote(tid, sp, w, sizeof w))
		return 0;
	for (size_t i = 0; i + 1 < sizeof w / sizeof *w && n < cap; i++) {
		uint64_t fp = sp + 8 * i, up = w[i], ra = w[i + 1];
		if (up <= fp || up - fp > (1u << 20) || !after_call(dwfl, tid, ra))
			continue;
		uint64_t next[2];
		if (read_remote(tid, up, next, sizeof next) && after_call(dwfl, tid, next[1]))
			out[n++] = fp;
	}
	return n;
}

static bool read_remote(int tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct gp_regstate *rs = arg;
	uint64_t base = addr & ~(uint64_t)(PAGE_SZ - 1), off = addr - base;
	if (off + sizeof *result <= PAGE_SZ && base) {
		struct page *p = &rs->cache[(base / PAGE_SZ) % CACHE_PAGES];
		if (p->base != base || p->gen != rs->gen) {
			p->base = 0;
			if (read_remote(rs->tid, base, p->bytes, PAGE_SZ)) {
				p->base = base;
				p->gen = rs->gen;
			}
		}
		if (p->base == base && p->gen == rs->gen) {
			memcpy(result, p->bytes + off, sizeof *result);
			return true;
		}
	}
	/* A word across a page end, or a page not wholly readable (a guard
	 * page beside it): the word alone. */
	return read_remote(rs->tid, addr, result, sizeof *result);
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	/* Threads are asked for by tid only (dwfl_getthread_frames). */
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct gp_regstate *rs = arg;
	if (tid != rs->tid || rs->src == SRC_NONE)
		return false;
	*thread_argp = rs;
	return true;
}

#ifdef __x86_64__
static bool set_from_stop(Dwfl_Thread *thread, int tid)
{
	struct user_regs_struct r;
	struct iovec iov = { &r, sizeof r };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) != 0)
		return false;
	Dwarf_Word w[17] = { r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp,
			     r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip };
	if (!dwfl_thread_state_registers(thread, 0, 17, w))
		return false;
	dwfl_thread_state_register_pc(thread, r.rip);
	return true;
}

static bool set_from_syscall(Dwfl_Thread *thread, uint64_t sp, uint64_t pc, uint64_t fp)
{
	Dwarf_Word s = sp, p = pc, f = fp;
	if (!dwfl_thread_state_registers(thread, 7, 1, &s)
	    || !dwfl_thread_state_registers(thread, 16, 1, &p)
	    || (fp && !dwfl_thread_state_registers(thread, 6, 1, &f)))
		return false;
	dwfl_thread_state_register_pc(thread, pc);
	return true;
}
#else /* __aarch64__ */
static bool set_from_stop(Dwfl_Thread *thread, int tid)
{
	struct user_regs_struct r;
	struct iovec iov = { &r, sizeof r };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) != 0)
		return false;
	Dwarf_Word w[32];
	for (int i = 0; i < 31; i++)
		w[i] = r.regs[i];
	w[31] = r.sp;
	if (!dwfl_thread_state_registers(thread, 0, 32, w))
		return false;
	dwfl_thread_state_register_pc(thread, r.pc);
	return true;
}

static bool set_from_syscall(Dwfl_Thread *thread, uint64_t sp, uint64_t pc, uint64_t fp)
{
	Dwarf_Word s = sp, f = fp;
	if (!dwfl_thread_state_registers(thread, 31, 1, &s)
	    || (fp && !dwfl_thread_state_registers(thread, 29, 1, &f)))
		return false;
	dwfl_thread_state_register_pc(thread, pc);
	return true;
}
#endif

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct gp_regstate *rs = arg;
	rs->gen++; /* the thread's stack is read afresh */
	if (rs->src == SRC_STOP)
		return set_from_stop(thread, rs->tid);
	if (rs->src == SRC_SYSCALL && rs->sp && rs->pc)
		return set_from_syscall(thread, rs->sp, rs->pc, rs->fp);
#ifdef __x86_64__
	if (rs->src == SRC_REGS) {
		Dwarf_Word w[17];
		for (int i = 0; i < 17; i++)
			w[i] = rs->regs[i];
		if (!dwfl_thread_state_registers(thread, 0, 17, w))
			return false;
		dwfl_thread_state_register_pc(thread, rs->regs[16]);
		return true;
	}
#endif
	return false;
}

static void thread_detach(Dwfl_Thread *thread, void *arg)
{
	(void)thread;
	struct gp_regstate *rs = arg;
	rs->src = SRC_NONE;
	rs->gen++;
}

static const Dwfl_Thread_Callbacks callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
	.thread_detach = thread_detach,
};

struct gp_regstate *gp_regstate_attach(Dwfl *dwfl, int pid)
{
	struct gp_regstate *rs = calloc(1, sizeof *rs);
	if (!rs)
		return NULL;
	rs->pid = pid;
	/* Our own executable: the registers mapped here are this build's
	 * architecture's, whatever the target's modules are. */
	rs->elf_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (rs->elf_fd >= 0) {
		elf_version(EV_CURRENT);
		rs->elf = elf_begin(rs->elf_fd, ELF_C_READ_MMAP, NULL);
	}
	if (!rs->elf || !dwfl_attach_state(dwfl, rs->elf, pid, &callbacks, rs)) {
		gp_regstate_free(rs);
		return NULL;
	}
	return rs;
}

#else /* not a known architecture */

struct gp_regstate *gp_regstate_attach(Dwfl *dwfl, int pid)
{
	(void)dwfl;
	(void)pid;
	return NULL;
}

size_t gp_regstate_fp_candidates(Dwfl *dwfl, int tid, uint64_t sp, uint64_t *out, size_t cap)
{
	(void)dwfl;
	(void)tid;
	(void)sp;
	(void)out;
	(void)cap;
	return 0;
}

#endif

void gp_regstate_free(struct gp_regstate *rs)
{
	if (!rs)
		return;
#ifdef GP_REGSTATE_KNOWN
	if (rs->elf)
		elf_end(rs->elf);
	if (rs->elf_fd > 0)
		close(rs->elf_fd);
#endif
	free(rs);
}

void gp_regstate_use_stop(struct gp_regstate *rs, int tid)
{
	rs->tid = tid;
	rs->src = SRC_STOP;
}

void gp_regstate_use_regs(struct gp_regstate *rs, int tid, const uint64_t regs[17])
{
	rs->tid = tid;
	rs->src = SRC_REGS;
	memcpy(rs->regs, regs, sizeof rs->regs);
}

void gp_regstate_use_syscall(struct gp_regstate *rs, int tid, uint64_t sp, uint64_t pc, uint64_t fp)
{
	rs->tid = tid;
	rs->src = SRC_SYSCALL;
	rs->sp = sp;
	rs->pc = pc;
	rs->fp = fp;
}
