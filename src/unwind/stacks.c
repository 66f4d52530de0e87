/* Symbolized stacks of a live process, one thread stopped at a time.
 * See stacks.h for the contract.
 *
 * Why dwfl_linux_proc_attach(dwfl, pid, true) and not false: with
 * assume_ptrace_stopped false, libdwfl's pid_set_initial_registers() calls
 * __libdwfl_ptrace_attach(), which is PTRACE_ATTACH + waitpid for SIGSTOP
 * (elfutils libdwfl/linux-pid-attach.c) -- the very sequence that leaves a
 * thread in state T when the tracer dies between the two.  With true,
 * libdwfl never attaches nor detaches (pid_thread_detach() skips
 * __libdwfl_ptrace_detach), reads registers with PTRACE_GETREGS
 * (ebl_set_initial_registers_tid) from whatever thread we have stopped, and
 * memory with process_vm_readv on that tid (read_cached_memory, a 4 KiB
 * cache it clears at each thread detach).  So we SEIZE + INTERRUPT exactly
 * one thread, call dwfl_getthread_frames() for it, and DETACH: libdwfl's
 * own thread iteration (dwfl_getthreads) is never used, and no other thread
 * of the target is touched.
 *
 * The unwind is the only work done while a thread is stopped.  CFI is
 * loaded for every module when it is first reported (warm_module), before
 * any thread stops; symbols, source lines, build-ids and demangling are
 * looked up after the detach and cached per (module, address). */
#include "config.h"
#include "stacks.h"
#include "xmaps.h"
#include "grow.h"
#include "parse.h"
#include "procfs.h"
#include "procstat.h"
#include "ptstop.h"
#include "regstate.h"
#include "taskregs.h"
#include "stopcut.h"
#include "tfile.h"
#include "pyframes.h"
#include "goroutines.h"
#include "result.h"
#include "syscalls.h"
#include "timeutil.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- demangling through libstdc++, found at run time ---------------- */

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

char *gp_demangle(const char *name)
{
	static cxa_demangle_fn fn;
	static bool tried;
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	if (!tried) {
		tried = true;
		/* Already in the process (a sanitizer runtime, a C++ host)? */
		fn = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn) {
			void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (h)
				fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
		}
	}
	if (!fn)
		return NULL;
	int status = -1;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- per-module facts, kept in the Dwfl_Module's userdata ----------- */

struct modinfo {
	char *path;
	char *soname;
	char build_id[129];   /* hex, "" when the module has none */
	const char *debug;    /* "dwarf", "symtab", "dynsym", "none"; NULL: not yet known */
	char *hint;           /* the debug-info note, when one would help */
	bool noted;           /* its note was queued */
	bool c_runtime;       /* libc, ld.so, libstdc++...: no source lines by default */
	struct gp_tfile *tf;  /* where its files are read from: the session's (tfile.h) */
};

/* The C runtime's own frames are named by their symbols; reading their
 * source lines means opening libc6-dbg's DWARF, whose compressed .debug_*
 * sections libdw inflates whole at dwarf_begin: 150 ms of a 230 ms
 * one-shot snapshot (perf, 33 threads, Debian 12, libc6-dbg installed),
 * against 120 ms for eu-stack without lines.  GP_STACKS_LINES_ALL reads
 * them too. */
static bool is_c_runtime(const char *soname)
{
	static const char *const pfx[] = { "libc.so", "ld-linux", "libm.so", "libpthread.so",
		"libstdc++.so", "libgcc_s.so", "libdl.so", "librt.so", "ld64.so",
		/* CPython's own C frames: see no_lines() */
		"libpython3", "python3", NULL };
	for (size_t i = 0; pfx[i]; i++)
		if (!strncmp(soname, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

static void modinfo_free(struct modinfo *mi)
{
	if (!mi)
		return;
	free(mi->path);
	free(mi->soname);
	free(mi->hint);
	free(mi);
}

/* ---- a cache of symbolized addresses -------------------------------- */

struct symkey {
	Dwfl_Module *mod;
	uint64_t addr;
};

struct syment {
	struct syment *next;
	struct symkey k;
	char *symbol, *file;
	int line;
};

#define SYM_BUCKETS 4096

/* ---- one stopped-and-unwound thread, before symbolization ----------- */

struct rawthread {
	int tid;
	char comm[64];
	char state;
	char wchan[64];
	bool have_wchan;
	struct gp_syscall sc;
	char *kstack;         /* /proc text, NULL when unreadable */
	const char *unwind;   /* "ok", "d-state", ... */
	char err[224];
	double stop_us;       /* < 0: never stopped */
	size_t nframes;
	uint64_t pc[GP_STACKS_MAX_FRAMES];
	bool activation[GP_STACKS_MAX_FRAMES];
	struct gp_pythread *py; /* Python frames read at the stop (pyframes.h), or NULL */
	double py_us;           /* of the stop, spent reading them */
	bool regs_bpf;          /* unwound, not stopped, from its saved registers (taskregs.h) */
};

struct gp_stacks {
	int pid;
	unsigned flags;
	struct gp_root root;
	bool is_our_child;

	/* identity of what the session describes */
	uint64_t starttime;
	dev_t exe_dev;
	ino_t exe_ino;

	Dwfl *dwfl;
	bool attached;        /* a thread state is attached to dwfl */
	struct gp_regstate *rs; /* ours (regstate.h); NULL: libdwfl's ptrace-only one */
	char *debuginfo_path;
	Dwfl_Callbacks cbs;
	struct gp_tfile *tf;  /* the target's files, through its own root (tfile.h) */
	bool report_failed;
	int report_errno;

	bool ptrace_denied;
	int ptrace_errno;
	bool kstack_denied;
	char hint[512];

	struct syment *sym[SYM_BUCKETS];
	bool modules_removed;

	char **notes;
	size_t nnotes, notes_next, notes_cap;

	struct gp_stacks_totals tot;

	struct gp_py *py;     /* CPython frames; NULL with GP_STACKS_NO_PYTHON */
	struct gp_go *go;     /* Go's goroutines (goroutines.h); NULL with GP_STACKS_NO_PTRACE */
	struct gp_xmaps xm;   /* executable mappings at this snapshot: JIT pcs */
};

/* ---- small /proc helpers -------------------------------------------- */

static int read_identity(struct gp_stacks *s, uint64_t *starttime, dev_t *dev, ino_t *ino)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", s->pid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) < 0)
		return -1;
	struct gp_stat st;
	if (!gp_parse_stat(buf, &st)) {
		errno = ESRCH;
		return -1;
	}
	if (st.state == 'Z' || st.state == 'X') {
		/* A zombie leader whose threads still run is alive: the task
		 * directory says so. */
		snprintf(path, sizeof path, "/proc/%d/task", s->pid);
		DIR *d = opendir(path);
		int live = 0;
		if (d) {
			struct dirent *e;
			while ((e = readdir(d)))
				if (e->d_name[0] != '.' && atoi(e->d_name) != s->pid)
					live++;
			closedir(d);
		}
		if (!live) {
			errno = ESRCH;
			return -1;
		}
	}
	*starttime = st.starttime;
	struct stat sb;
	snprintf(path, sizeof path, "/proc/%d/exe", s->pid);
	if (stat(path, &sb) == 0) {
		*dev = sb.st_dev;
		*ino = sb.st_ino;
	} else {
		*dev = 0;
		*ino = 0;
	}
	return 0;
}

static void sym_clear(struct gp_stacks *s)
{
	for (size_t i = 0; i < SYM_BUCKETS; i++) {
		struct syment *e = s->sym[i], *n;
		for (; e; e = n) {
			n = e->next;
			free(e->symbol);
			free(e->file);
			free(e);
		}
		s->sym[i] = NULL;
	}
}

static int free_modinfo_cb(Dwfl_Module *mod, void **ud, const char *name,
			   Dwarf_Addr start, void *arg)
{
	modinfo_free(*ud);
	*ud = NULL;
	return DWARF_CB_OK;
}

static void session_end(struct gp_stacks *s)
{
	if (!s->dwfl)
		return;
	dwfl_getmodules(s->dwfl, free_modinfo_cb, NULL, 0);
	dwfl_end(s->dwfl);
	s->dwfl = NULL;
	gp_regstate_free(s->rs);
	s->rs = NULL;
	s->attached = false;
	sym_clear(s);
	gp_tfile_reset(s->tf); /* an exec may have changed its root */
	free(s->debuginfo_path);
	s->debuginfo_path = gp_tfile_debuginfo_path(s->tf);
	if (s->py) { /* its module and addresses were the old process's */
		gp_py_close(s->py);
		s->py = gp_py_open(s->pid);
	}
	if (s->go) {
		gp_go_close(s->go);
		s->go = gp_go_open(s->pid);
	}
}

/* dwfl_report_end's callback for modules that left the process.  Its
 * second argument is declared void * but is the address of the module's
 * userdata slot, as in every other module callback: dwfl_report_end calls
 * removed(MODCB_ARGS(m), arg), and MODCB_ARGS passes &m->userdata
 * (elfutils libdwfl/dwfl_module.c, libdwfl/libdwflP.h).  Freeing the slot's
 * address instead of what it holds aborted trace on a python3 that
 * munmapped a file (issue 11: free(): invalid pointer). */
static int removed_cb(Dwfl_Module *mod, void *slot, const char *name,
		      Dwarf_Addr base, void *arg)
{
	struct gp_stacks *s = arg;
	void **ud = slot;
	if (ud) {
		modinfo_free(*ud);
		*ud = NULL;
	}
	s->modules_removed = true;
	return DWARF_CB_OK;
}

static char *elf_soname(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			return NULL;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_SONAME) {
				const char *n = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				return n ? strdup(n) : NULL;
			}
		}
	}
	return NULL;
}

static bool elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* A module seen for the first time: its ELF, build-id, soname and CFI are
 * loaded now, while no thread is stopped, so the unwind does not pay for
 * them with a stopped thread.  Its modinfo is in its userdata slot before
 * the ELF is looked for: find_elf_cb reads the session's tfile there. */
static int warm_module_cb(Dwfl_Module *mod, void **ud, const char *name,
			  Dwarf_Addr start, void *arg)
{
	struct gp_stacks *s = arg;
	if (*ud)
		return DWARF_CB_OK;
	struct modinfo *mi = calloc(1, sizeof *mi);
	if (!mi)
		return DWARF_CB_OK;
	mi->path = strdup(name ? name : "?");
	mi->tf = s->tf;
	*ud = mi;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (elf)
		mi->soname = elf_soname(elf);
	if (!mi->soname) {
		const char *b = strrchr(mi->path, '/');
		mi->soname = strdup(b ? b + 1 : mi->path);
	}
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	for (int i = 0; i < len && i < 64; i++)
		snprintf(mi->build_id + 2 * i, 3, "%02x", bits[i]);
	(void)dwfl_module_eh_cfi(mod, &bias);
	mi->c_runtime = mi->soname && is_c_runtime(mi->soname);
	return DWARF_CB_OK;
}

static struct modinfo *mod_info(struct gp_stacks *s, Dwfl_Module *mod)
{
	void **ud = NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud && !*ud)
		warm_module_cb(mod, ud, dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			       0, s);
	return ud ? *ud : NULL;
}

/* Builds (first snapshot, exec, PID reuse) or refreshes the module list.
 * dwfl_report_begin keeps every module that is reported again with the
 * same name and range, with everything loaded for it; only new mappings
 * cost anything (~0.15 ms a refresh for a 40-module process). */
static int session_refresh(struct gp_stacks *s)
{
	uint64_t st;
	dev_t dev;
	ino_t ino;
	if (read_identity(s, &st, &dev, &ino) < 0)
		return -1;
	if (s->dwfl && (st != s->starttime || dev != s->exe_dev || ino != s->exe_ino)) {
		session_end(s);
		s->tot.rebuilds++;
	}
	s->starttime = st;
	s->exe_dev = dev;
	s->exe_ino = ino;
	if (!s->dwfl) {
		s->dwfl = dwfl_begin(&s->cbs);
		if (!s->dwfl) {
			errno = ENOMEM;
			return -1;
		}
		dwfl_report_begin(s->dwfl);
	} else {
		dwfl_report_begin(s->dwfl);
	}
	s->modules_removed = false;
	int r = dwfl_linux_proc_report(s->dwfl, s->pid);
	dwfl_report_end(s->dwfl, removed_cb, s);
	if (s->modules_removed)
		sym_clear(s); /* a freed Dwfl_Module's address may be reused */
	if (r != 0) {
		/* r > 0: an errno; no user stacks this time.  Only EACCES or
		 * EPERM (/proc/PID/maps of another user's process) is a
		 * refusal (report_refused); the others say the map is not
		 * there to read (report_failed_thread). */
		s->report_failed = true;
		s->report_errno = r > 0 ? r : EIO;
		return 0;
	}
	s->report_failed = false;
	/* JIT code comes and goes between snapshots: read each time, as
	 * dwfl_linux_proc_report just did (unreadable: nothing is JIT). */
	if (gp_xmaps_read(&s->root, s->pid, &s->xm) < 0)
		s->xm.n = 0;
	dwfl_getmodules(s->dwfl, warm_module_cb, s, 0);
	gp_py_refresh(s->py, s->dwfl);
	gp_go_refresh(s->go, s->dwfl);
	if (!s->attached && !(s->flags & GP_STACKS_NO_PTRACE)) {
		/* Our own registers and memory (regstate.h): a thread that must
		 * not be stopped is unwound too.  Elsewhere libdwfl's, with
		 * true: never attach -- see the comment at the top. */
		s->rs = gp_regstate_attach(s->dwfl, s->pid);
		if (s->rs || dwfl_linux_proc_attach(s->dwfl, s->pid, true) == 0)
			s->attached = true;
	}
	return 0;
}

/* Whether the failed report was a refusal: libdwfl passes on the errno
 * of its open or read of /proc/PID/auxv and maps (linux-proc-maps.c),
 * EACCES from mm_access when we may not read another's memory map. */
static bool report_refused(const struct gp_stacks *s)
{
	return s->report_failed && (s->report_errno == EACCES || s->report_errno == EPERM);
}

/* ---- stopping one thread --------------------------------------------- */

static double now_us(void)
{
	return gp_mono_now() * 1e6;
}

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

struct unwind_arg {
	struct rawthread *th;
	const char *err;
};

static int frame_cb(Dwfl_Frame *f, void *arg)
{
	struct unwind_arg *ua = arg;
	struct rawthread *th = ua->th;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(f, &pc, &act)) {
		ua->err = dwfl_errmsg(-1);
		return DWARF_CB_ABORT;
	}
	if (th->nframes >= GP_STACKS_MAX_FRAMES)
		return DWARF_CB_ABORT;
	/* A frame that repeats its caller exactly is a loop in the unwind. */
	if (th->nframes > 0 && th->pc[th->nframes - 1] == pc && th->nframes > 8)
		return DWARF_CB_ABORT;
	th->pc[th->nframes] = pc;
	th->activation[th->nframes] = act;
	th->nframes++;
	return DWARF_CB_OK;
}

/* What a stop that did not happen is called in the `stacks` line. */
static void stop_failed(struct gp_stacks *s, struct rawthread *th, const struct gp_stop_res *res)
{
	switch (res->rc) {
	case GP_STOP_GONE:
		th->unwind = "gone";
		snprintf(th->err, sizeof th->err, "exited while being stopped");
		break;
	case GP_STOP_DENIED:
		th->unwind = "denied";
		s->ptrace_denied = true;
		s->ptrace_errno = res->err;
		s->tot.denied++;
		snprintf(th->err, sizeof th->err, "PTRACE_SEIZE: %s", strerror(res->err));
		break;
	case GP_STOP_TRACED:
		th->unwind = "traced";
		snprintf(th->err, sizeof th->err, "traced by PID %d (%s)", res->tracer,
			 res->tracer_comm[0] ? res->tracer_comm : "?");
		break;
	case GP_STOP_TIMEOUT:
		/* A thread that cannot take the trap yet (inside a long
		 * kernel call, or in D state since we looked): reported, and
		 * let go as soon as it stops (ptstop.h). */
		th->unwind = "timeout";
		snprintf(th->err, sizeof th->err, "did not stop within %d ms",
			 GP_STACKS_STOP_TIMEOUT_MS);
		s->tot.timeouts++;
		break;
	case GP_STOP_BLOCKED:
		/* The SEIZE waited for an exec of the process (ptstop.h, 7). */
		th->unwind = "timeout";
		snprintf(th->err, sizeof th->err,
			 "PTRACE_SEIZE waited 100 ms: the process is in an exec");
		s->tot.timeouts++;
		break;
	case GP_STOP_BUSY:
		/* This thread alone: GP_PTSTOP_PENDING_MAX others are on
		 * their way to a stop. */
		th->unwind = "off";
		snprintf(th->err, sizeof th->err,
			 "%d threads (%d...) have not stopped yet (inside kernel calls)",
			 GP_PTSTOP_PENDING_MAX, res->busy_tid);
		break;
	default:
		th->unwind = "failed";
		snprintf(th->err, sizeof th->err, "ptrace: %s", strerror(res->err));
	}
}

/* SEIZE + INTERRUPT + bounded wait + unwind + DETACH, for one thread
 * (ptstop.h: one thread at a time, never left stopped). */
static bool unwind_without_stop(struct gp_stacks *s, struct rawthread *th, const char *why, bool saved);

static void stop_and_unwind(struct gp_stacks *s, struct rawthread *th)
{
	int tid = th->tid;
	/* A thread still pending from an earlier stop is no reason to wait:
	 * it is not stopped, and is let go when it is (ptstop.h, 1 and 3).
	 * (Waiting for it here, up to 100 ms a snapshot, and refusing every
	 * other stop meanwhile turned the whole tree's stacks "off".) */
	/* Where it is now, not where the snapshot's first read saw it: a
	 * writer seen in its nap between two writes can be in the next by
	 * now, and a stop would cut that one (harm-transfer.sh, 1 run in 4).
	 * This leaves microseconds between the look and the stop. */
	char path[96], buf[256], why[96];
	struct gp_syscall now = { .kind = GP_SC_UNKNOWN };
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", s->pid, tid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) >= 0 && gp_parse_syscall(buf, &now)
	    && gp_stop_would_change(&s->root, s->pid, &now, why, sizeof why)) {
		th->sc = now;
		unwind_without_stop(s, th, why, false);
		return;
	}
	/* "running": /proc shows no call, but the thread may be inside one
	 * a stop would cut (a send copying its bytes: the unix transfer of
	 * harm-transfer.sh, exit 3 in 1 run of 3).  Its saved registers name
	 * the call it entered last. */
	struct gp_syscall last = { .kind = GP_SC_IN };
	if (now.kind == GP_SC_RUNNING
	    && gp_taskregs_last_call(gp_taskregs_get(), tid, &last.nr, last.args)
	    && gp_stop_would_change(&s->root, s->pid, &last, why, sizeof why)) {
		th->unwind = "nostop";
		snprintf(th->err, sizeof th->err, "not taken: running, perhaps inside %s", why);
		th->py = gp_py_read_thread(s->py, tid);
		return;
	}
	double t0 = now_us();
	struct gp_stop_res res;
	if (gp_ptstop_stop(s->pid, tid, s->is_our_child, GP_STACKS_STOP_TIMEOUT_MS, &res) != GP_STOP_OK) {
		stop_failed(s, th, &res);
		return;
	}
	if (s->tot.max_stopped_at_once < 1)
		s->tot.max_stopped_at_once = 1;

	struct unwind_arg ua = { .th = th };
	if (s->rs)
		gp_regstate_use_stop(s->rs, tid);
	if (s->attached) {
		int ur = dwfl_getthread_frames(s->dwfl, tid, frame_cb, &ua);
		if (ur != 0 && th->nframes == 0 && !ua.err)
			ua.err = dwfl_errmsg(-1);
	} else {
		ua.err = "libdwfl could not attach to the process state";
	}
	if (s->py) {
		double p0 = now_us();
		th->py = gp_py_read_thread(s->py, tid);
		th->py_us = now_us() - p0;
	}
	/* A signal-delivery-stop that came before our trap is given back. */
	gp_ptstop_release(tid, res.inject);
	double t1 = now_us();
	th->stop_us = t1 - t0;
	s->tot.stopped++;
	s->tot.stop_us_sum += th->stop_us;
	if (th->stop_us > s->tot.stop_us_max)
		s->tot.stop_us_max = th->stop_us;
	if (th->nframes > 0) {
		th->unwind = "ok";
	} else {
		th->unwind = "failed";
		snprintf(th->err, sizeof th->err, "%s", ua.err ? ua.err : "no frames");
	}
}

/* ---- a thread that must not be stopped -------------------------------- */

/* What says a thread has not run since: its times on a CPU
 * (/proc/TID/schedstat's third field, pcount: run_delay's switch-ins,
 * kernel/sched/stats.h) and its /proc/TID/syscall line (same call, same
 * sp and pc).  False when unreadable. */
static bool still_mark(struct gp_stacks *s, int tid, char *buf, size_t cap)
{
	char path[96], a[128], b[256];
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", s->pid, tid);
	if (gp_read_file(&s->root, path, a, sizeof a) < 0)
		a[0] = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", s->pid, tid);
	if (gp_read_file(&s->root, path, b, sizeof b) < 0)
		return false;
	/* schedstat's run time moves only while the thread runs. */
	snprintf(buf, cap, "%s|%s", a, b);
	return true;
}

/* The walk from sp/pc ended at once: code built with frame pointers
 * wants rbp, which /proc/TID/syscall does not show.  Each candidate found
 * on the stack (regstate.h) is tried; a walk that ends where a stack ends
 * (libdwfl stops without an error: the CFI's outermost frame, _start or
 * clone) and whose first edges are calls (called_from) is preferred, the
 * deepest of them; else the deepest walk, if deeper than the first.
 * Returns the error of the walk kept. */
/* Whether frame k + 1's return address follows a call of frame k's
 * function: a direct call (e8 rel32) names its target, which must be the
 * start of the function frame k runs in, or a function of the same name,
 * or no function at all (a PLT stub).  A walk through a stale frame
 * pointer fails it (under ASan, read's interceptor "returned" into
 * GetCurrentThread).  Indirect calls cannot be told: true. */
static bool called_from(struct gp_stacks *s, const struct rawthread *th, size_t k)
{
	uint64_t pc = th->pc[k] - (k && !th->activation[k]), ra = th->pc[k + 1];
	Dwfl_Module *m = dwfl_addrmodule(s->dwfl, pc);
	unsigned char b[5];
	struct iovec local = { b, 5 }, remote = { (void *)(uintptr_t)(ra - 5), 5 };
	if (!m || process_vm_readv(th->tid, &local, 1, &remote, 1, 0) != 5 || b[0] != 0xe8)
		return true;
	int32_t rel;
	memcpy(&rel, b + 1, 4);
	uint64_t target = ra + (uint64_t)(int64_t)rel;
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m, pc, &off, &sym, NULL, NULL, NULL);
	if (!name || target == pc - off)
		return true;
	Dwfl_Module *tm = dwfl_addrmodule(s->dwfl, target);
	GElf_Off toff;
	GElf_Sym tsym;
	const char *tname = tm ? dwfl_module_addrinfo(tm, target, &toff, &tsym, NULL, NULL, NULL) : NULL;
	return !tname || !strcmp(tname, name);
}

static const char *with_frame_pointer(struct gp_stacks *s, struct rawthread *th, const char *err)
{
	uint64_t fp[16];
	size_t n = gp_regstate_fp_candidates(s->dwfl, th->tid, th->sc.sp, fp, 16);

	size_t best_n = th->nframes;
	bool best_complete = false;
	uint64_t best_pc[GP_STACKS_MAX_FRAMES];
	bool best_act[GP_STACKS_MAX_FRAMES];
	memcpy(best_pc, th->pc, sizeof best_pc);
	memcpy(best_act, th->activation, sizeof best_act);
	for (size_t k = 0; k < n; k++) {
		struct unwind_arg ub = { .th = th };
		th->nframes = 0;
		gp_regstate_use_syscall(s->rs, th->tid, th->sc.sp, th->sc.pc, fp[k]);
		int r = dwfl_getthread_frames(s->dwfl, th->tid, frame_cb, &ub);
		bool ok = true;
		for (size_t f = 1; ok && f + 1 < th->nframes && f < 3; f++)
			ok = called_from(s, th, f);
		bool complete = r == 0 && !ub.err;

		/* The deepest walk, a complete one before any other: a stale
		 * pair leads into old frames and back into a real one higher
		 * up, skipping the real frames between; a caller's pair skips
		 * its callee.  Only the true one misses none. */
		if (ok && (complete > best_complete
			   || (complete == best_complete && th->nframes > best_n))) {
			best_complete = complete;
			best_n = th->nframes;
			memcpy(best_pc, th->pc, sizeof best_pc);
			memcpy(best_act, th->activation, sizeof best_act);
			err = complete ? NULL : ub.err ? ub.err : dwfl_errmsg(-1);
		}
	}
	th->nframes = best_n;
	memcpy(th->pc, best_pc, sizeof best_pc);
	memcpy(th->activation, best_act, sizeof best_act);
	return err;
}

/* Frames of a thread asleep in a call a stop would change (stopcut.h),
 * taken without any stop: libdwfl unwinds from the sp/pc the kernel shows
 * over memory read with process_vm_readv, and the frames are kept only if
 * the thread did not run meanwhile (its schedstat and syscall line are
 * the same after as before: a stack read while it ran could be torn). */
/* The walk of a thread that is not stopped: from every register the
 * kernel saved when it went to sleep (regs, taskregs.h: a walk as a
 * stop's), else from sp and pc of its system call, with a frame pointer
 * searched for on its stack when the walk from those ends at once. */
static const char *walk_unstopped(struct gp_stacks *s, struct rawthread *th, const uint64_t *regs)
{
	struct unwind_arg ua = { .th = th };
	th->regs_bpf = regs != NULL;
	if (regs)
		gp_regstate_use_regs(s->rs, th->tid, regs);
	else
		gp_regstate_use_syscall(s->rs, th->tid, th->sc.sp, th->sc.pc, 0);
	if (dwfl_getthread_frames(s->dwfl, th->tid, frame_cb, &ua) != 0 && !ua.err)
		ua.err = dwfl_errmsg(-1);
	if (!regs && th->nframes < 3)
		ua.err = with_frame_pointer(s, th, ua.err);
	return ua.err;
}

/* Frames of a thread that is not stopped: asleep in a call a stop would
 * change (stopcut.h), or asleep at all where its saved registers can be
 * read (saved: taskregs.h; false, and the thread untouched, when they
 * cannot: the caller stops it as before).  libdwfl unwinds over memory
 * read with process_vm_readv, and the frames are kept only if the
 * thread did not run meanwhile (its schedstat and syscall line are the
 * same after as before -- taken before the registers are read: a stack
 * read while it ran could be torn). */
static bool unwind_without_stop(struct gp_stacks *s, struct rawthread *th, const char *why, bool saved)
{
	char before[384], after[384];
	if (!s->rs || !s->attached || !th->sc.sp || !th->sc.pc
	    || !still_mark(s, th->tid, before, sizeof before)) {
		if (saved)
			return false;
		th->unwind = "nostop";
		snprintf(th->err, sizeof th->err, "not taken: %s", why);
		th->py = gp_py_read_thread(s->py, th->tid);
		return true;
	}
	uint64_t regs[17];
	bool have = gp_taskregs_read(gp_taskregs_get(), th->tid, regs);
	if (saved && !have)
		return false;
	th->unwind = "nostop";
	double t0 = now_us();
	const char *err = walk_unstopped(s, th, have ? regs : NULL);
	th->py = gp_py_read_thread(s->py, th->tid);
	th->py_us = now_us() - t0;
	s->tot.nostop++;
	if (!still_mark(s, th->tid, after, sizeof after) || strcmp(before, after)) {
		th->nframes = 0;
		free(th->py);
		th->py = NULL;
		snprintf(th->err, sizeof th->err, "not taken: it ran while read without a stop (%s)",
			 why);
		return true;
	}
	const char *from = have ? "its saved registers" : "its saved sp/pc";
	if (have && th->nframes) {
		th->unwind = "ok"; /* every register, as a stop gives them */
		s->tot.regs_bpf++;
		/* said when it is more than a sleep: a stop would have cut a
		 * call, or the thread sleeps in D where none is tried */
		if (strcmp(why, "asleep"))
			snprintf(th->err, sizeof th->err, "not stopped, %s: frames from %s", why, from);
	} else if (!th->nframes)
		snprintf(th->err, sizeof th->err, "not taken: %s (%s)", why, err ? err : "no frames");
	else if (err && th->nframes < GP_STACKS_MAX_FRAMES)
		snprintf(th->err, sizeof th->err, "not stopped, %s: %zu frames from %s, then %s", why,
			 th->nframes, from, err);
	else
		snprintf(th->err, sizeof th->err, "not stopped, %s: frames from %s", why, from);
	return true;
}

/* Why a sleeping thread is read from its saved registers: a stop would
 * cut its call (stopcut.h), it sleeps in D, or only that it sleeps. */
static const char *asleep_why(struct gp_stacks *s, const struct rawthread *th, char *why, size_t n)
{
	if (gp_stop_would_change(&s->root, s->pid, &th->sc, why, n))
		return why;
	return th->state == 'D' ? "asleep in the kernel (D)" : "asleep";
}

/* ---- /proc data of one thread --------------------------------------- */

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
	if (!(s->flags & GP_STACKS_NO_KERNEL) && !s->kstack_denied) {
		snprintf(path, sizeof path, "/proc/%d/task/%d/stack", s->pid, th->tid);
		size_t len;
		th->kstack = gp_slurp(&s->root, path, &len);
		if (!th->kstack && (errno == EACCES || errno == EPERM))
			s->kstack_denied = true;
	}
	return true;
}

/* ---- symbolization, after every thread is running again ------------- */

static unsigned sym_hash(Dwfl_Module *m, uint64_t a)
{
	uint64_t h = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull ^ a * 0xff51afd7ed558ccdull;
	return (unsigned)(h >> 40) % SYM_BUCKETS;
}

static struct syment *symbolize(struct gp_stacks *s, Dwfl_Module *mod, uint64_t addr,
				bool lines)
{
	unsigned h = sym_hash(mod, addr);
	for (struct syment *e = s->sym[h]; e; e = e->next)
		if (e->k.mod == mod && e->k.addr == addr)
			return e;
	struct syment *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->k.mod = mod;
	e->k.addr = addr;
	GElf_Off off = 0;
	GElf_Sym sym;
	memset(&sym, 0, sizeof sym);
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	/* The nearest preceding symbol of a stripped module (its .dynsym) is
	 * a guess, and a wrong one for every internal function: take a
	 * symbol only when the address lies inside its size. */
	if (name && sym.st_size > 0 && off < sym.st_size) {
		char *d = gp_demangle(name);
		e->symbol = d ? d : strdup(name);
		/* "pthread_cond_wait@@GLIBC_2.3.2": the version is noise here. */
		char *at = e->symbol && !d ? strchr(e->symbol, '@') : NULL;
		if (at && at != e->symbol)
			*at = 0;
	}
	Dwfl_Line *l = lines ? dwfl_module_getsrc(mod, addr) : NULL;
	if (l) {
		int line = 0;
		const char *file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		if (file && line > 0) {
			e->file = strdup(file);
			e->line = line;
		}
	}
	e->next = s->sym[h];
	s->sym[h] = e;
	return e;
}

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

static void note_debug(struct gp_stacks *s, Dwfl_Module *mod, struct modinfo *mi)
{
	if (mi->debug)
		return;
	if (no_lines(s, mod, mi)) {
		mi->debug = "not-read";
		return;
	}
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (dwfl_module_getdwarf(mod, &bias))
		mi->debug = "dwarf";
	else if (elf && elf_has_symtab(elf))
		mi->debug = "symtab";
	else if (elf)
		mi->debug = "dynsym";
	else
		mi->debug = "none";
	if (!strcmp(mi->debug, "dwarf"))
		return;
	char hint[768];
	/* A container's file is its release's, not the host's: its debug
	 * package is the container's (tfile.h: its tree is read first). */
	bool own = gp_tfile_own_root(s->tf);
	const char *where = own ? "" : " in the container";
	if (mi->build_id[0] && strlen(mi->build_id) > 2)
		snprintf(hint, sizeof hint,
			 "%s (build-id %s): %s; install its debug package%s, or put the "
			 "debug file at /usr/lib/debug/.build-id/%.2s/%s.debug%s",
			 mi->soname, mi->build_id,
			 !strcmp(mi->debug, "dynsym") ? "stripped, no debug info: only exported "
			 "functions are named" : "no debug info: no source lines", where,
			 mi->build_id, mi->build_id + 2, own ? "" : " in its root or the host's");
	else
		snprintf(hint, sizeof hint, "%s: %s; install its debug package%s", mi->soname,
			 !strcmp(mi->debug, "dynsym") ? "stripped, no debug info"
			 : "no debug info: no source lines", where);
	mi->hint = strdup(hint);
	if (mi->hint && !mi->noted) {
		mi->noted = true;
		if (!gp_grow(&s->notes, &s->notes_cap, s->nnotes + 1, sizeof *s->notes, 8))
			return;
		s->notes[s->nnotes++] = strdup(mi->hint);
	}
}

static json_t *kernel_json(const char *text)
{
	json_t *a = json_array();
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		/* "[<0>] futex_wait_queue+0x60/0x90" */
		const char *q = memchr(p, ']', len);
		const char *b = q ? q + 1 : p;
		while (b < p + len && *b == ' ')
			b++;
		if (b < p + len) {
			char tmp[256];
			size_t l = (size_t)(p + len - b);
			if (l >= sizeof tmp)
				l = sizeof tmp - 1;
			memcpy(tmp, b, l);
			tmp[l] = 0;
			json_array_append_new(a, json_string(tmp));
		}
		p = nl ? nl + 1 : NULL;
	}
	return a;
}

static const char *state_word(char c, char *buf)
{
	buf[0] = c;
	buf[1] = 0;
	return buf;
}

/* "_PyEval_EvalFrameDefault" and its split-off parts
 * ("_PyEval_EvalFrameDefault.cold", from the symbol table). */
static bool is_eval_symbol(const json_t *sym)
{
	return json_is_string(sym) &&
	       !strncmp(json_string_value(sym), "_PyEval_EvalFrameDefault", 24);
}

/* The thread's "python" object (pyframes.h): the GIL, and the frames no
 * evaluation-loop frame took (the native unwind stopped early). */
static json_t *py_thread_json(const struct rawthread *th, size_t placed, bool gil_take)
{
	const char *gil = th->py->gil == 1 ? "held" : gil_take ? "waiting" :
			  th->py->gil == 0 ? "not-held" : NULL;
	json_t *o = json_pack("{s:o, s:I}", "gil", gil ? json_string(gil) : json_null(),
			      "frames", (json_int_t)th->py->n);
	if (th->py->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (placed < th->py->n) {
		json_t *rest = json_array();
		size_t next = placed;
		json_t *g;
		while ((g = gp_py_group_json(th->py, next, &next)))
			json_array_extend(rest, g), json_decref(g);
		json_object_set_new(o, "unplaced", rest);
	}
	return o;
}

static json_t *thread_json(struct gp_stacks *s, struct rawthread *th, json_t *mods_seen)
{
	char sb[2], desc[256];
	json_t *o = json_object();
	json_object_set_new(o, "tid", json_integer(th->tid));
	json_object_set_new(o, "comm", gp_json_string(th->comm));
	json_object_set_new(o, "state", json_string(state_word(th->state, sb)));
	json_object_set_new(o, "wchan", th->have_wchan ? gp_json_string(th->wchan) : json_null());
	switch (th->sc.kind) {
	case GP_SC_IN:
		gp_syscall_describe(desc, sizeof desc, th->sc.nr, th->sc.args);
		json_object_set_new(o, "syscall", gp_json_string(desc));
		json_object_set_new(o, "syscall_nr", json_integer(th->sc.nr));
		break;
	case GP_SC_RUNNING:
		json_object_set_new(o, "syscall", json_string("running"));
		break;
	case GP_SC_USER:
		json_object_set_new(o, "syscall", json_string("user"));
		break;
	default:
		json_object_set_new(o, "syscall", json_null());
	}
	json_object_set_new(o, "unwind", json_string(th->unwind ? th->unwind : "off"));
	if (th->err[0])
		json_object_set_new(o, "unwind_error", gp_json_string(th->err));
	if (th->stop_us >= 0)
		json_object_set_new(o, "stop_us", json_real(th->stop_us));
	if (th->regs_bpf)
		json_object_set_new(o, "regs_from", json_string("bpf"));
	size_t pynext = 0;    /* the next Python frame to place */
	bool gil_take = false;
	gp_py_resolve(s->py, th->py);
	if (th->nframes > 0 && s->dwfl) {
		json_t *fr = json_array();
		for (size_t i = 0; i < th->nframes; i++) {
			uint64_t pc = th->pc[i];
			/* A return address points after the call: look up the
			 * call itself (eu-stack and gdb do the same). */
			uint64_t addr = th->activation[i] ? pc : pc - 1;
			json_t *f = json_object();
			json_object_set_new(f, "pc", gp_json_hex(pc));
			/* In an anonymous executable mapping: JIT code, whatever
			 * module's span it falls in (xmaps.h). */
			bool jit = gp_xmaps_is_jit(&s->xm, addr);
			Dwfl_Module *mod = jit ? NULL : dwfl_addrmodule(s->dwfl, addr);
			struct modinfo *mi = mod ? mod_info(s, mod) : NULL;
			if (jit)
				json_object_set_new(f, "jit", json_true());
			if (mod && mi) {
				Dwarf_Addr bias = 0;
				Elf *elf = dwfl_module_getelf(mod, &bias);
				uint64_t off = elf ? addr - bias : addr;
				note_debug(s, mod, mi);
				struct syment *e = symbolize(s, mod, addr,
					!no_lines(s, mod, mi));
				json_object_set_new(f, "module", gp_json_string(mi->path));
				json_object_set_new(f, "soname", gp_json_string(mi->soname));
				json_object_set_new(f, "offset", gp_json_hex(off));
				json_object_set_new(f, "build_id", mi->build_id[0] ? json_string(mi->build_id) : json_null());
				json_object_set_new(f, "symbol", e && e->symbol ? gp_json_string(e->symbol) : json_null());
				json_object_set_new(f, "file", e && e->file ? gp_json_string(e->file) : json_null());
				json_object_set_new(f, "line", e && e->file ? json_integer(e->line) : json_null());
				if (!json_object_get(mods_seen, mi->path)) {
					json_t *m = json_pack("{s:o, s:o, s:o, s:s}",
						"path", gp_json_string(mi->path),
						"soname", gp_json_string(mi->soname),
						"build_id", mi->build_id[0] ? json_string(mi->build_id) : json_null(),
						"debug", mi->debug ? mi->debug : "none");
					if (mi->hint)
						json_object_set_new(m, "hint", gp_json_string(mi->hint));
					json_object_set_new(mods_seen, mi->path, m);
				}
			} else {
				json_object_set_new(f, "module", json_null());
				json_object_set_new(f, "soname", json_null());
				json_object_set_new(f, "offset", json_null());
				json_object_set_new(f, "build_id", json_null());
				json_object_set_new(f, "symbol", json_null());
				json_object_set_new(f, "file", json_null());
				json_object_set_new(f, "line", json_null());
			}
			/* Python frames at each call of the evaluation loop
			 * (pyframes.h), and a wait inside the GIL's taking. */
			if (th->py && pynext < th->py->n &&
			    (gp_py_is_eval(s->py, addr) || is_eval_symbol(json_object_get(f, "symbol")))) {
				json_t *pf = gp_py_group_json(th->py, pynext, &pynext);
				if (pf)
					json_object_set_new(f, "python", pf);
			}
			if (th->py && i < 8 && gp_py_is_gil_take(s->py, addr))
				gil_take = true;
			json_array_append_new(fr, f);
		}
		json_object_set_new(o, "frames", fr);
	} else {
		json_object_set_new(o, "frames", json_null());
	}
	json_object_set_new(o, "kernel", th->kstack ? kernel_json(th->kstack) : json_null());
	if (th->py && th->sc.kind == GP_SC_IN &&
	    gp_py_waits_gil(th->py, th->sc.nr, (uint64_t)th->sc.args[0]))
		gil_take = true;
	if (th->py)
		json_object_set_new(o, "python", py_thread_json(th, pynext, gil_take));
	return o;
}

/* ---- the hint -------------------------------------------------------- */

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

static void build_hint(struct gp_stacks *s)
{
	s->hint[0] = 0;
	/* A report that failed otherwise (an exec under way, a main thread
	 * that exited) is no refusal and asks nothing of the user -- except
	 * that a kernel thread has no map at all (ESRCH: no mm). */
	bool user_missing = s->ptrace_denied || report_refused(s);
	bool kern_missing = s->kstack_denied;
	bool kthread = (user_missing || s->report_failed) && is_kernel_thread(s->pid);
	if (!user_missing && !kern_missing && !kthread)
		return;
	if (kthread) {
		snprintf(s->hint, sizeof s->hint,
			 "pid %d is a kernel thread: it has no user stack%s", s->pid,
			 kern_missing ? "; its kernel stack needs root" : "");
		return;
	}
	unsigned me = (unsigned)geteuid(), owner = proc_uid(s->pid);
	int yama = yama_scope(&s->root);
	char what[96];
	snprintf(what, sizeof what, "%s%s%s", user_missing ? "user stacks" : "",
		 user_missing && kern_missing ? " and " : "", kern_missing ? "kernel stacks" : "");
	if (user_missing && owner != me && me != 0)
		snprintf(s->hint, sizeof s->hint,
			 "no %s: pid %d belongs to uid %u, gpuprobe runs as uid %u; run it as root "
			 "(or as uid %u with CAP_SYS_PTRACE)", what, s->pid, owner, me, owner);
	else if (user_missing && yama >= 1 && me != 0)
		snprintf(s->hint, sizeof s->hint,
			 "no %s: kernel.yama.ptrace_scope=%d forbids ptrace of a non-child; run as root, "
			 "grant CAP_SYS_PTRACE, or 'sysctl kernel.yama.ptrace_scope=0'", what, yama);
	else if (user_missing)
		snprintf(s->hint, sizeof s->hint,
			 "no %s (%s): run as root or grant CAP_SYS_PTRACE%s", what,
			 strerror(s->ptrace_denied ? s->ptrace_errno : s->report_errno),
			 kern_missing ? " (kernel stacks need root)" : "");
	else
		snprintf(s->hint, sizeof s->hint,
			 "no kernel stacks: /proc/PID/task/TID/stack is readable by root only; run as root");
}

const char *gp_stacks_hint(struct gp_stacks *s)
{
	build_hint(s);
	return s->hint[0] ? s->hint : NULL;
}

const char *gp_stacks_next_debug_note(struct gp_stacks *s)
{
	if (s->notes_next >= s->nnotes)
		return NULL;
	return s->notes[s->notes_next++];
}

/* ---- the target's files, through its own root (tfile.h) -------------- */

/* libdwfl passes a module's userdata slot, where warm_module_cb put its
 * modinfo, and with it the session's tfile. */
static int find_elf_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	const struct modinfo *mi = ud ? *ud : NULL;
	return gp_tfile_find_elf(mi ? mi->tf : NULL, mod, ud, name, base, file_name, elfp);
}

static int find_debuginfo_cb(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink_file, GElf_Word crc,
			     char **debuginfo_file_name)
{
	const struct modinfo *mi = ud ? *ud : NULL;
	return gp_tfile_find_debuginfo(mi ? mi->tf : NULL, mod, ud, modname, base, file_name,
				       debuglink_file, crc, debuginfo_file_name);
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
	s->debuginfo_path = gp_tfile_debuginfo_path(s->tf);
	s->cbs.find_elf = find_elf_cb;
	s->cbs.find_debuginfo = find_debuginfo_cb;
	s->cbs.debuginfo_path = &s->debuginfo_path;
	uint64_t st;
	dev_t dev;
	ino_t ino;
	if (read_identity(s, &st, &dev, &ino) < 0) {
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
	if (session_refresh(s) < 0) {
		if (errno == ENOENT)
			errno = ESRCH;
		return -1;
	}
	return 0;
}

/* A thread in state t: stopped by another tracer (named, from TracerPid)
 * -- or by us, a pending stop not yet let go: drained now, and stacked. */
static bool traced_elsewhere(struct gp_stacks *s, struct rawthread *r)
{
	char comm[16];
	int tracer = gp_tracer_of(s->pid, r->tid, comm, sizeof comm);
	if (tracer == (int)getpid()) {
		gp_ptstop_drain();
		return false;
	}
	r->unwind = "traced";
	if (tracer > 0)
		snprintf(r->err, sizeof r->err, "traced by PID %d (%s)", tracer, comm[0] ? comm : "?");
	return true;
}

/* The line's language runtimes: CPython's state, Go's goroutines (read
 * with every thread running: a parked goroutine holds still,
 * goroutines.c); how long the goroutines took, -1 none. */
static double runtimes_json(struct gp_stacks *s, json_t *o)
{
	json_t *pyinfo = gp_py_info_json(s->py);
	if (pyinfo)
		json_object_set_new(o, "python", pyinfo);
	double t0 = now_us();
	json_t *goinfo = gp_go_read_json(s->go);
	if (!goinfo)
		return -1;
	json_object_set_new(o, "goroutines", goinfo);
	return now_us() - t0;
}

int gp_stacks_snapshot(struct gp_stacks *s, double t, const int *tids, size_t n,
		       json_t **line)
{
	double w0 = now_us();
	*line = NULL;
	if (session_refresh(s) < 0) {
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
	double w_listed = now_us();
	struct rawthread *th = calloc(n ? n : 1, sizeof *th);
	if (!th) {
		free(all);
		errno = ENOMEM;
		return -1;
	}
	unsigned stopped = 0, nostop = 0;
	/* Sleeping threads' saved registers, where BPF reads them: no stop
	 * for any of them (issue 30); NO_PTRACE keeps them off too. */
	bool saved_regs = !(s->flags & GP_STACKS_NO_PTRACE) && gp_taskregs_get() != NULL;
	double stop_max = 0, stop_sum = 0, py_max = 0;
	char why[96];
	for (size_t i = 0; i < n; i++) {
		struct rawthread *r = &th[i];
		r->tid = tids[i];
		r->stop_us = -1;
		if (!read_proc_thread(s, r)) {
			r->unwind = "gone";
			r->state = '?';
			continue;
		}
		if (s->flags & GP_STACKS_NO_PTRACE)
			r->unwind = "off";
		else if ((r->state == 'S' || r->state == 'D') && saved_regs && s->attached
			   && !s->report_failed
			   && unwind_without_stop(s, r, asleep_why(s, r, why, sizeof why), true)) {
			/* Asleep: its registers as the kernel saved them, no
			 * stop at all (taskregs.h); a thread in D too. */
			nostop++;
		} else if (r->state == 'D') {
			r->unwind = "d-state"; /* never ptrace a thread in D */
			/* ...but its Python frames hold still while it sleeps
			 * there, and reading memory stops nothing. */
			r->py = gp_py_read_thread(s->py, r->tid);
		}
		else if (r->state == 'Z' || r->state == 'X')
			r->unwind = "zombie";
		else if (r->state == 't' && traced_elsewhere(s, r))
			; /* another tracer has it stopped */
		else if (s->ptrace_denied || report_refused(s)) {
			r->unwind = "denied";
			snprintf(r->err, sizeof r->err, "%s",
				 strerror(s->ptrace_denied ? s->ptrace_errno : s->report_errno));
		} else if (s->report_failed)
			report_failed_thread(s, r);
		else if (gp_stop_would_change(&s->root, s->pid, &r->sc, why, sizeof why)) {
			unwind_without_stop(s, r, why, false);
			nostop++;
		} else {
			stop_and_unwind(s, r);
			if (r->unwind && !strcmp(r->unwind, "nostop"))
				nostop++; /* it went into such a call since the first look */
			if (r->stop_us >= 0) {
				stopped++;
				stop_sum += r->stop_us;
				if (r->stop_us > stop_max)
					stop_max = r->stop_us;
				if (r->py_us > py_max)
					py_max = r->py_us;
			}
		}
	}
	double w_unwound = now_us();
	/* Everything below runs with every thread of the target running. */
	json_t *o = json_pack("{s:s, s:f, s:i}", "type", "stacks", "t", t, "pid", s->pid);
	json_t *arr = json_array();
	json_t *mods = json_object();
	for (size_t i = 0; i < n; i++) {
		/* A pending stop that came meanwhile is let go at once: the
		 * first symbolization of a process can take 200 ms. */
		gp_ptstop_drain();
		json_array_append_new(arr, thread_json(s, &th[i], mods));
		free(th[i].kstack);
		free(th[i].py);
	}
	json_object_set_new(o, "threads", arr);
	json_t *marr = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(mods, k, v)
		json_array_append(marr, v);
	json_decref(mods);
	json_object_set_new(o, "modules", marr);
	double go_us = runtimes_json(s, o);
	s->tot.snapshots++;
	double w_end = now_us();
	json_object_set_new(o, "cost", json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
		"stopped", (json_int_t)stopped, "nostop", (json_int_t)nostop, "stop_us_max", stop_max,
		"stop_us_mean", stopped ? stop_sum / stopped : 0.0,
		"refresh_ms", (w_listed - w0) / 1000.0,
		"unwind_ms", (w_unwound - w_listed) / 1000.0,
		"symbolize_ms", (w_end - w_unwound) / 1000.0,
		"wall_ms", (w_end - w0) / 1000.0,
		"python_us_max", py_max));
	if (go_us >= 0) /* the goroutines' read: every g, and the parked ones' frames */
		json_object_set_new(json_object_get(o, "cost"), "goroutines_us", json_real(go_us));
	free(th);
	free(all);
	*line = o;
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
	session_end(s);
	gp_py_close(s->py);
	gp_go_close(s->go);
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->notes);
	free(s->debuginfo_path);
	gp_tfile_close(s->tf);
	gp_xmaps_free(&s->xm);
	gp_root_close(&s->root);
	free(s);
}
