/* Symbolized stacks of a live process, one thread stopped at a time.
 * See stacks.h for the contract, stacks_int.h for how its files share
 * the work.  Here: which thread is stopped, which is read without a stop,
 * and, once every thread runs again, the line's records -- symbols,
 * source lines, build-ids and demangling looked up after the detach and
 * cached per (module, address) -- which model/stackline.h writes. */
#include "config.h"
#include "stacks_int.h"
#include "parse.h"
#include "ptstop.h"
#include "stopcut.h"
#include "syscalls.h"
#include "taskregs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void nap(long ns)
{
	struct timespec ts = { 0, ns };
	nanosleep(&ts, NULL);
}

int gp_stacks_reap(struct gp_stacks *s)
{
	(void)s;
	return gp_ptstop_drain();
}

/* ---- /proc data of one thread --------------------------------------- */

static int by_tid(const void *a, const void *b)
{
	int x = ((const struct gp_stk_lastsc *)a)->tid, y = ((const struct gp_stk_lastsc *)b)->tid;
	return (x > y) - (x < y);
}

/* th's call, continued from the last snapshot's where it restarted. */
static void continued(const struct gp_stacks *s, struct rawthread *th)
{
	struct gp_stk_lastsc key = { .tid = th->tid };
	const struct gp_stk_lastsc *was = s->nlastsc
		? bsearch(&key, s->lastsc, s->nlastsc, sizeof key, by_tid) : NULL;
	if (was)
		gp_syscall_continued(&was->sc, &th->sc);
}

/* This snapshot's calls, kept for the next (continued). */
static void keep_calls(struct gp_stacks *s, const struct rawthread *th, size_t n)
{
	struct gp_stk_lastsc *k = malloc((n ? n : 1) * sizeof *k);
	size_t m = 0;
	for (size_t i = 0; k && i < n; i++)
		if (th[i].sc.kind == GP_SC_IN)
			k[m++] = (struct gp_stk_lastsc){ th[i].tid, th[i].sc };
	if (k)
		qsort(k, m, sizeof *k, by_tid);
	free(s->lastsc);
	s->lastsc = k;
	s->nlastsc = k ? m : 0;
}

static bool read_proc_thread(struct gp_stacks *s, struct rawthread *th)
{
	char path[96], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", s->pid, th->tid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) < 0)
		return false;
	struct gp_stat st;
	if (!gp_parse_stat(buf, &st))
		return false;
	gp_strlcpy(th->comm, st.comm, sizeof th->comm);
	th->state = st.state;
	snprintf(path, sizeof path, "/proc/%d/task/%d/wchan", s->pid, th->tid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) >= 0) {
		gp_parse_wchan(buf, th->wchan, sizeof th->wchan);
		th->have_wchan = true;
	}
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", s->pid, th->tid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) < 0 || !gp_parse_syscall(buf, &th->sc))
		th->sc.kind = GP_SC_UNKNOWN;
	else
		continued(s, th);
	if (!(s->flags & GP_STACKS_NO_KERNEL) && !s->kstack_denied) {
		snprintf(path, sizeof path, "/proc/%d/task/%d/stack", s->pid, th->tid);
		size_t len;
		th->kstack = gp_slurp(&s->root, path, &len);
		if (!th->kstack && (errno == EACCES || errno == EPERM))
			s->kstack_denied = true;
	}
	return true;
}

/* ---- the line's records, after every thread is running again -------- */

/* No source lines by default for the C runtime, and for the CPython
 * interpreter whose Python frames are read: its frames are named from the
 * symbol table, the Python frames carry the lines a user reads, and its
 * DWARF (python3.11-dbg: 11 MB, compressed) cost 200 ms of a 205 ms
 * snapshot of 5 threads, against 45 ms for eu-stack (Debian 12, 2 CPUs). */
static bool no_lines(const struct gp_stacks *s, Dwfl_Module *mod, const struct modinfo *mi)
{
	if (s->flags & GP_STACKS_LINES_ALL)
		return false;
	return mi->c_runtime || gp_py_is_module(s->py, mod);
}

/* The module as the line names it, its debug info looked at once. */
static const struct gp_stk_module *module_rec(struct gp_stacks *s, Dwfl_Module *mod,
					       struct modinfo *mi)
{
	if (!mi->debug_known) {
		mi->debug_known = true;
		mi->rec.path = mi->path;
		mi->rec.soname = mi->soname;
		mi->rec.build_id = mi->build_id;
		mi->rec.debug = no_lines(s, mod, mi) ? "not-read" : gp_module_debug(mod);
		/* A container's file is its release's: so is its debug package. */
		mi->rec.in_container = !gp_tfile_own_root(s->tf);
	}
	return &mi->rec;
}

/* "_PyEval_EvalFrameDefault" and its split-off parts
 * ("_PyEval_EvalFrameDefault.cold", from the symbol table). */
static bool is_eval_symbol(const char *sym)
{
	return sym && !strncmp(sym, "_PyEval_EvalFrameDefault", 24);
}

/* One frame; *pynext: the next Python frame to place (pyframes.h): the
 * frames of each call of the evaluation loop go to that call's frame. */
static void frame_rec(struct gp_stacks *s, const struct rawthread *th, size_t i,
		      struct gp_stk_frame *f, size_t *pynext)
{
	uint64_t pc = th->pc[i];
	/* A return address points after the call: look up the call itself
	 * (eu-stack and gdb do the same). */
	uint64_t addr = th->activation[i] ? pc : pc - 1;
	*f = (struct gp_stk_frame){ .pc = pc };
	/* In an anonymous executable mapping: JIT code, whatever module's
	 * span it falls in (xmaps.h). */
	f->jit = gp_xmaps_is_jit(&s->xm, addr);
	Dwfl_Module *mod = f->jit ? NULL : dwfl_addrmodule(s->dwfl, addr);
	struct modinfo *mi = mod ? gp_stk_mod_info(s, mod) : NULL;
	if (mod && mi) {
		Dwarf_Addr bias = 0;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		f->offset = elf ? addr - bias : addr;
		f->mod = module_rec(s, mod, mi);
		const struct gp_sym *e = gp_sym_lookup(&s->sym, mod, addr, !no_lines(s, mod, mi));
		if (e) {
			f->symbol = e->symbol;
			f->file = e->file;
			f->line = e->line;
		}
	}
	if (th->py && *pynext < th->py->n && (gp_py_is_eval(s->py, addr) || is_eval_symbol(f->symbol))) {
		f->python = true;
		f->py_start = *pynext;
		*pynext = gp_pythread_group_end(th->py, *pynext);
	}
}

/* th as the line writes it; its frames into fr (GP_STACKS_MAX_FRAMES),
 * its call described into desc. */
static void thread_rec(struct gp_stacks *s, struct rawthread *th, struct gp_stk_thread *r,
		       struct gp_stk_frame *fr, char *desc, size_t dcap)
{
	*r = (struct gp_stk_thread){ .tid = th->tid, .comm = th->comm, .state = th->state,
		.wchan = th->have_wchan ? th->wchan : NULL, .unwind = th->unwind, .err = th->err,
		.stop_us = th->stop_us, .regs_bpf = th->regs_bpf, .kstack = th->kstack, .py = th->py };
	switch (th->sc.kind) {
	case GP_SC_IN:
		gp_syscall_describe(desc, dcap, th->sc.nr, th->sc.args);
		r->syscall = desc;
		r->in_call = true;
		r->syscall_nr = th->sc.nr;
		break;
	case GP_SC_RUNNING:
		r->syscall = "running";
		break;
	case GP_SC_USER:
		r->syscall = "user";
		break;
	default:
		break;
	}
	size_t pynext = 0;
	bool gil_take = false;
	gp_py_resolve(s->py, th->py);
	if (th->nframes > 0 && s->dwfl) {
		for (size_t i = 0; i < th->nframes; i++) {
			frame_rec(s, th, i, &fr[i], &pynext);
			/* a wait inside the GIL's taking */
			if (th->py && i < 8 && gp_py_is_gil_take(s->py, th->activation[i] ? th->pc[i] : th->pc[i] - 1))
				gil_take = true;
		}
		r->frames = fr;
		r->nframes = th->nframes;
	}
	if (th->py && th->sc.kind == GP_SC_IN &&
	    gp_py_waits_gil(th->py, th->sc.nr, (uint64_t)th->sc.args[0]))
		gil_take = true;
	r->py_placed = pynext;
	r->gil_take = gil_take;
}

/* ---- what could not be taken ------------------------------------------ */

static int yama_scope(const struct gp_root *root)
{
	char buf[16];
	if (gp_read_file(root, "/proc/sys/kernel/yama/ptrace_scope", buf, sizeof buf) < 0)
		return -1;
	return atoi(buf);
}

static unsigned proc_uid(int pid)
{
	char path[64];
	struct stat sb;
	snprintf(path, sizeof path, "/proc/%d", pid);
	return stat(path, &sb) == 0 ? (unsigned)sb.st_uid : (unsigned)-1;
}

/* PF_KTHREAD in /proc/PID/stat's flags (field 9): a kernel thread has
 * no user space to unwind, whoever asks. */
static bool is_kernel_thread(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned long flags = 0;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return false;
	return (flags & 0x00200000UL) != 0; /* PF_KTHREAD */
}

/* A thread of a process whose memory map could not be read, and not for
 * want of rights: nothing to unwind it with in this snapshot, and nothing
 * the user could change.  Seen as root (tests/workloads/execloop, 29
 * traces of the sanitizer build: 11 ENOEXEC, 12 ESRCH):
 *   ENOEXEC, in an exec: the new mm's saved auxv is filled only by
 *     create_elf_tables (fs/binfmt_elf.c), after setup_new_exec (fs/exec.c)
 *     has let readers of /proc/PID/auxv in again, and libdwfl's grovel_auxv
 *     answers ENOEXEC when it finds neither AT_SYSINFO_EHDR nor AT_PAGESZ;
 *     the thread listed was the new leader, running, 400 KiB mapped.  Read
 *     as "denied" (2 of those 29 traces), it failed
 *     tests/faults/harm-exec-eperm.sh;
 *   ESRCH, while the leader has no memory: the old leader a zombie in the
 *     exec's de_thread, or for good (tests/workloads/zombie-leader: its
 *     live thread read "denied", with the hint to run as root -- as root),
 *     or a kernel thread, which has no user memory at all. */
static void report_failed_thread(const struct gp_stacks *s, struct rawthread *r)
{
	r->unwind = "failed";
	if (is_kernel_thread(s->pid))
		snprintf(r->err, sizeof r->err, "a kernel thread: no user memory");
	else
		snprintf(r->err, sizeof r->err,
			 "no memory map to unwind with (%s): an exec under way, or no main thread",
			 strerror(s->report_errno));
}

bool gp_stacks_missing(struct gp_stacks *s, struct gp_stacks_missing *m)
{
	/* A report that failed otherwise (an exec under way, a main thread
	 * that exited) is no refusal and asks nothing of the user -- except
	 * that a kernel thread has no map at all (ESRCH: no mm). */
	bool user = s->ptrace_denied || gp_stk_report_refused(s);
	bool kern = s->kstack_denied;
	bool kthread = (user || s->report_failed) && is_kernel_thread(s->pid);
	*m = (struct gp_stacks_missing){ .pid = s->pid, .kthread = kthread, .user = user,
					 .kern = kern, .yama = -1 };
	if (!user && !kern && !kthread)
		return false;
	if (!kthread) {
		m->me = (unsigned)geteuid();
		m->owner = proc_uid(s->pid);
		m->yama = yama_scope(&s->root);
		m->err = s->ptrace_denied ? s->ptrace_errno : s->report_errno;
	}
	return true;
}

/* ---- the API ---------------------------------------------------------- */

struct gp_stacks *gp_stacks_open(int pid, unsigned flags)
{
	if (pid <= 0) {
		errno = ESRCH;
		return NULL;
	}
	struct gp_stacks *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->pid = pid;
	s->flags = flags;
	if (!(flags & (GP_STACKS_NO_PYTHON | GP_STACKS_NO_PTRACE)))
		s->py = gp_py_open(pid);
	if (!(flags & GP_STACKS_NO_PTRACE))
		s->go = gp_go_open(pid);
	if (gp_root_open(&s->root, "/") < 0) {
		gp_py_close(s->py);
		gp_go_close(s->go);
		free(s);
		return NULL;
	}
	if (!(flags & GP_STACKS_DEBUGINFOD))
		unsetenv("DEBUGINFOD_URLS");
	s->tf = gp_tfile_open(pid, flags & GP_STACKS_DEBUGINFOD);
	gp_stk_callbacks(s);
	uint64_t st;
	dev_t dev;
	ino_t ino;
	if (gp_stk_identity(s, &st, &dev, &ino) < 0) {
		int e = errno == ENOENT ? ESRCH : errno;
		gp_root_close(&s->root);
		gp_py_close(s->py);
		gp_go_close(s->go);
		gp_tfile_close(s->tf);
		free(s->debuginfo_path);
		free(s);
		errno = e;
		return NULL;
	}
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	struct gp_stat pst;
	if (gp_read_file(&s->root, path, buf, sizeof buf) >= 0 && gp_parse_stat(buf, &pst))
		s->is_our_child = pst.ppid == getpid();
	return s;
}

int gp_stacks_prepare(struct gp_stacks *s)
{
	if (gp_stk_refresh(s) < 0) {
		if (errno == ENOENT)
			errno = ESRCH;
		return -1;
	}
	return 0;
}

/* One thread of a snapshot: read from /proc, then stopped and unwound,
 * unwound without a stop, or said why not; the cost's counts.  saved:
 * sleeping threads' saved registers can be read (taskregs.h). */
static void take_thread(struct gp_stacks *s, struct rawthread *r, bool saved, struct gp_stk_cost *c)
{
	char why[96];
	r->stop_us = -1;
	if (!read_proc_thread(s, r)) {
		r->unwind = "gone";
		r->state = '?';
		return;
	}
	if (s->flags & GP_STACKS_NO_PTRACE)
		r->unwind = "off";
	else if ((r->state == 'S' || r->state == 'D') && saved && s->attached && !s->report_failed
		 && gp_stk_unwind_without_stop(s, r, gp_stk_asleep_why(s, r, why, sizeof why), true)) {
		/* Asleep: its registers as the kernel saved them, no stop at
		 * all (taskregs.h); a thread in D too. */
		c->nostop++;
	} else if (r->state == 'D') {
		r->unwind = "d-state"; /* never ptrace a thread in D */
		/* ...but its Python frames hold still while it sleeps there,
		 * and reading memory stops nothing. */
		r->py = gp_py_read_thread(s->py, r->tid);
	} else if (r->state == 'Z' || r->state == 'X')
		r->unwind = "zombie";
	else if (r->state == 't' && gp_stk_traced_elsewhere(s, r))
		; /* another tracer has it stopped */
	else if (s->ptrace_denied || gp_stk_report_refused(s)) {
		r->unwind = "denied";
		snprintf(r->err, sizeof r->err, "%s",
			 strerror(s->ptrace_denied ? s->ptrace_errno : s->report_errno));
	} else if (s->report_failed)
		report_failed_thread(s, r);
	else if (gp_stop_would_change(&s->root, s->pid, &r->sc, why, sizeof why)) {
		gp_stk_unwind_without_stop(s, r, why, false);
		c->nostop++;
	} else {
		gp_stk_stop_and_unwind(s, r);
		if (r->unwind && !strcmp(r->unwind, "nostop"))
			c->nostop++; /* it went into such a call since the first look */
		if (r->stop_us >= 0) {
			c->stopped++;
			c->stop_us_sum += r->stop_us;
			if (r->stop_us > c->stop_us_max)
				c->stop_us_max = r->stop_us;
			if (r->py_us > c->python_us_max)
				c->python_us_max = r->py_us;
		}
	}
}

/* The line's threads and modules, with every thread of the target
 * running again. */
static void threads_rec(struct gp_stacks *s, struct rawthread *th, size_t n,
			struct gp_stackline *b)
{
	struct gp_stk_frame fr[GP_STACKS_MAX_FRAMES];
	for (size_t i = 0; i < n; i++) {
		/* A pending stop that came meanwhile is let go at once: the
		 * first symbolization of a process can take 200 ms. */
		gp_ptstop_drain();
		struct gp_stk_thread r;
		char desc[256];
		thread_rec(s, &th[i], &r, fr, desc, sizeof desc);
		gp_stackline_thread(b, &r);
		free(th[i].kstack);
		free(th[i].py);
	}
}

int gp_stacks_snapshot(struct gp_stacks *s, double t, const int *tids, size_t n,
		       json_t **line)
{
	double w0 = gp_stk_now_us();
	*line = NULL;
	if (gp_stk_refresh(s) < 0) {
		if (errno == ENOENT)
			errno = ESRCH;
		return -1;
	}
	int *all = NULL;
	if (!tids) {
		if (gp_list_tids(s->pid, &all, &n) < 0) {
			errno = ESRCH;
			return -1;
		}
		tids = all;
	}
	gp_py_begin(s->py); /* thread states, before any thread stops */
	double w_listed = gp_stk_now_us();
	struct rawthread *th = calloc(n ? n : 1, sizeof *th);
	if (!th) {
		free(all);
		errno = ENOMEM;
		return -1;
	}
	struct gp_stk_cost c = { .goroutines_us = -1 };
	/* Sleeping threads' saved registers, where BPF reads them: no stop
	 * for any of them (issue 30); NO_PTRACE keeps them off too. */
	bool saved = !(s->flags & GP_STACKS_NO_PTRACE) && gp_taskregs_get() != NULL;
	for (size_t i = 0; i < n; i++) {
		th[i].tid = tids[i];
		take_thread(s, &th[i], saved, &c);
	}
	keep_calls(s, th, n);
	double w_unwound = gp_stk_now_us();
	/* Everything below runs with every thread of the target running. */
	struct gp_stackline b;
	gp_stackline_begin(&b, t, s->pid);
	threads_rec(s, th, n, &b);
	/* The language runtimes: CPython's state, Go's goroutines (read with
	 * every thread running: a parked goroutine holds still,
	 * goroutines.c). */
	struct gp_pyinfo pi;
	bool py = gp_py_info(s->py, &pi);
	double g0 = gp_stk_now_us();
	struct gp_goinfo gi;
	bool go = gp_go_read(s->go, &gi);
	if (go)
		c.goroutines_us = gp_stk_now_us() - g0;
	s->tot.snapshots++;
	double w_end = gp_stk_now_us();
	c.refresh_ms = (w_listed - w0) / 1000.0;
	c.unwind_ms = (w_unwound - w_listed) / 1000.0;
	c.symbolize_ms = (w_end - w_unwound) / 1000.0;
	c.wall_ms = (w_end - w0) / 1000.0;
	free(th);
	free(all);
	*line = gp_stackline_end(&b, py ? &pi : NULL, go ? &gi : NULL, &c);
	return 0;
}

void gp_stacks_totals(const struct gp_stacks *s, struct gp_stacks_totals *tot)
{
	*tot = s->tot;
}

void gp_stacks_close(struct gp_stacks *s)
{
	if (!s)
		return;
	/* A thread that never stopped is let go by the kernel when we exit;
	 * within a longer-lived caller, give it a last chance now. */
	gp_ptstop_settle(100);
	for (int i = 0; i < 20 && gp_ptstop_drain(); i++)
		nap(5000000);
	gp_stk_session_end(s);
	gp_py_close(s->py);
	gp_go_close(s->go);
	free(s->debuginfo_path);
	gp_tfile_close(s->tf);
	gp_xmaps_free(&s->xm);
	gp_root_close(&s->root);
	free(s->lastsc);
	free(s);
}
