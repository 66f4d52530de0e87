/* See taskconv.h.  Kernel sources cited are linux 6.1-6.18; the BPF side
 * needs 6.1 (BPF_TASK_ITER_TGID), and the state bits below are those of
 * every kernel since (TASK_FROZEN came in 6.1). */
#include "config.h"
#include "taskconv.h"
#include "procstat.h"

#include <string.h>

/* cputime_adjust() of kernel/sched/cputime.c, step for step.  Its one
 * division is mul_u64_u64_div_u64(), exact on x86_64 (a 128-bit mulq and
 * divq, arch/x86/include/asm/div64.h): so is unsigned __int128 here.
 * Exact matters: /proc's utime/stime are these values truncated to clock
 * ticks, and a tick lost to rounding would read as a CPU% change. */
void gp_cputime_adjust(uint64_t rtime, uint64_t utime, uint64_t stime, struct gp_cputime *prev,
		       uint64_t *ut, uint64_t *st)
{
	/* rtime not past what was already reported: nothing to add */
	if (prev->stime + prev->utime >= rtime)
		goto out;
	/* "If either stime or utime are 0, assume all runtime is userspace" */
	if (stime == 0) {
		utime = rtime;
	} else if (utime == 0) {
		stime = rtime;
	} else {
		stime = (uint64_t)((unsigned __int128)stime * rtime / (stime + utime));
		if (stime > rtime)
			stime = rtime;
	}
	/* neither part goes backwards */
	if (stime < prev->stime)
		stime = prev->stime;
	utime = rtime - stime;
	if (utime < prev->utime) {
		utime = prev->utime;
		stime = rtime - utime;
	}
	prev->stime = stime;
	prev->utime = utime;
out:
	*ut = prev->utime;
	*st = prev->stime;
}

/* include/linux/sched.h: TASK_REPORT (0x7f) is RUNNING 0, INTERRUPTIBLE 1,
 * UNINTERRUPTIBLE 2, __TASK_STOPPED 4, __TASK_TRACED 8, EXIT_DEAD 0x10,
 * EXIT_ZOMBIE 0x20, TASK_PARKED 0x40; TASK_IDLE is UNINTERRUPTIBLE |
 * NOLOAD (0x402) and reports as TASK_REPORT_IDLE (0x80); RTLOCK_WAIT
 * (0x1000) and FROZEN (0x8000) report as UNINTERRUPTIBLE.  The index is
 * fls() of that, into fs/proc/array.c task_state_array: "RSDTtXZPI". */
char gp_task_state_char(unsigned state, unsigned exit_state)
{
	unsigned s = (state | exit_state) & 0x7fu;
	if ((state & 0x402u) == 0x402u)
		s = 0x80u;
	if (state & (0x1000u | 0x8000u))
		s = 0x2u;
	static const char letters[] = "RSDTtXZPI";
	int idx = 0;
	while (s) {
		idx++;
		s >>= 1;
	}
	return letters[idx];
}

/* kernel/time/time.c nsec_to_clock_t: div_u64(x, NSEC_PER_SEC / USER_HZ)
 * where USER_HZ divides 1e9 (x86: USER_HZ 100, sysconf(_SC_CLK_TCK)). */
uint64_t gp_ns_to_ticks(uint64_t ns, long clk_tck)
{
	uint64_t per = clk_tck > 0 ? 1000000000ull / (uint64_t)clk_tck : 10000000ull;
	return ns / per;
}

/* The kernel's prev_cputime is updated by whoever reads the thread's stat
 * (top, pidstat, a getrusage(RUSAGE_THREAD)), ours only by us: /proc would
 * clamp against the later of the two.  Each is stime + utime == the rtime
 * it was computed at (cputime_adjust's invariant), and rtime only grows,
 * so the larger sum is the later. */
static void cputime_of(const struct gp_taskiter_rec *r, long clk_tck, struct gp_cputime *prev,
		       struct gp_stat *st)
{
	struct gp_cputime kernel = { r->prev_utime, r->prev_stime };
	if (kernel.utime + kernel.stime > prev->utime + prev->stime)
		*prev = kernel;
	uint64_t ut, stm;
	gp_cputime_adjust(r->sum_exec, r->utime, r->stime, prev, &ut, &stm);
	st->utime = gp_ns_to_ticks(ut, clk_tck);
	st->stime = gp_ns_to_ticks(stm, clk_tck);
}

/* /proc/PID/task/TID/syscall (fs/proc/base.c proc_pid_syscall over
 * lib/syscall.c): "running" for a TASK_RUNNING thread; without a kernel
 * stack "-1 0 0"; else nr, printed as an int ("%d" of info.data.nr),
 * then six arguments unless nr is -1, then sp and pc.  gp_parse_syscall
 * refuses any other negative nr, and so does this. */
static void syscall_of(const struct gp_taskiter_rec *r, struct gp_syscall *sc)
{
	memset(sc, 0, sizeof *sc);
	if (r->state == 0) {
		sc->kind = GP_SC_RUNNING;
		return;
	}
	int nr = (r->flags & GP_TI_REGS) ? (int)r->orig_ax : -1;
	if (nr < -1)
		return;
	sc->nr = nr;
	sc->kind = nr == -1 ? GP_SC_USER : GP_SC_IN;
	if (!(r->flags & GP_TI_REGS))
		return;
	sc->sp = r->sp;
	sc->pc = r->ip;
	if (nr >= 0)
		memcpy(sc->args, r->args, sizeof sc->args);
}

void gp_taskconv_thread(const struct gp_taskiter_rec *r, long clk_tck, struct gp_cputime *prev,
			struct gp_thread *th)
{
	memset(th, 0, sizeof *th);
	th->tid = (int)r->tid;
	struct gp_stat *st = &th->st;
	st->pid = (int)r->tid;
	size_t n = strnlen(r->comm, sizeof r->comm);
	memcpy(st->comm, r->comm, n);
	st->comm[n] = '\0';
	st->state = gp_task_state_char(r->state, r->exit_state);
	st->ppid = (int)r->ppid;
	st->minflt = r->min_flt;
	st->majflt = r->maj_flt;
	cputime_of(r, clk_tck, prev, st);
	st->cutime = (int64_t)gp_ns_to_ticks(r->cutime, clk_tck);
	st->cstime = (int64_t)gp_ns_to_ticks(r->cstime, clk_tck);
	st->num_threads = r->nr_threads;
	st->starttime = gp_ns_to_ticks(r->start_boottime, clk_tck);
	/* rss_pages (stat's 24th) is the process's, read from its own stat
	 * by the sampler: no thread's record carries it. */
	st->processor = r->cpu;
	th->vcsw = r->nvcsw;
	th->nvcsw = r->nivcsw;
	th->have_ctxt = true;
	/* wchan prints "0" when there is none; "%ps" adds " [module]" to a
	 * module's symbol, which gp_parse_wchan cuts at the space. */
	char w[sizeof r->wchan + 1] = "0";
	if (r->flags & GP_TI_WCHAN) {
		memcpy(w, r->wchan, sizeof r->wchan);
		w[sizeof r->wchan] = '\0';
	}
	gp_parse_wchan(w, th->wchan, sizeof th->wchan);
	th->have_wchan = true;
	syscall_of(r, &th->sc);
	th->run_ns = r->sum_exec;
	th->wait_ns = r->run_delay;
	th->pcount = r->pcount;
	th->have_sched = true;
}
