/* What the files of a stacks session share (stacks.h has the contract):
 * the session, one thread as it was read and unwound, and the functions
 * of each file.  The files use each other one way only:
 *   stacks.c    the API: which thread is stopped, which is read without a
 *               stop, and the line's records (model/stackline.h);
 *   modules.c   the libdwfl session: the target's modules, refreshed
 *               each snapshot, rebuilt on exec or PID reuse;
 *   unwinder.c  one thread's frames: stopped (ptstop.h), or not
 *               (stopcut.h, taskregs.h);
 *   symbols.c   symbols, lines, ELF facts (symbols.h), below them all. */
#ifndef GP_STACKS_INT_H
#define GP_STACKS_INT_H

#include "stacks.h"
#include "goroutines.h"
#include "procfs.h"
#include "procstat.h"
#include "pyframes.h"
#include "regstate.h"
#include "stackline.h"
#include "symbols.h"
#include "tfile.h"
#include "timeutil.h"
#include "xmaps.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Per-module facts, kept in the Dwfl_Module's userdata. */
struct modinfo {
	char *path;
	char *soname;
	char build_id[129];   /* hex, "" when the module has none */
	bool c_runtime;       /* libc, ld.so, libstdc++...: no source lines by default */
	struct gp_tfile *tf;  /* where its files are read from: the session's (tfile.h) */
	bool debug_known;     /* rec.debug is filled */
	struct gp_stk_module rec; /* as the line writes it */
};

/* One stopped-and-unwound thread, before symbolization. */
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

	struct gp_symcache sym;
	bool modules_removed;

	struct gp_stacks_totals tot;

	struct gp_py *py;     /* CPython frames; NULL with GP_STACKS_NO_PYTHON */
	struct gp_go *go;     /* Go's goroutines (goroutines.h); NULL with GP_STACKS_NO_PTRACE */
	struct gp_xmaps xm;   /* executable mappings at this snapshot: JIT pcs */
	/* Each thread's system call at the last snapshot, by tid: a thread
	 * our stop interrupted in a timed sleep shows restart_syscall at the
	 * next, and continues the call kept here (procstat.h,
	 * gp_syscall_continued). */
	struct gp_stk_lastsc *lastsc;
	size_t nlastsc;
};

struct gp_stk_lastsc {
	int tid;
	struct gp_syscall sc;
};

static inline double gp_stk_now_us(void)
{
	return gp_mono_now() * 1e6;
}

/* Whether the failed report was a refusal: libdwfl passes on the errno
 * of its open or read of /proc/PID/auxv and maps (linux-proc-maps.c),
 * EACCES from mm_access when we may not read another's memory map. */
static inline bool gp_stk_report_refused(const struct gp_stacks *s)
{
	return s->report_failed && (s->report_errno == EACCES || s->report_errno == EPERM);
}

/* modules.c */
/* The process's starttime and its executable's device and inode: what
 * says it exec'd, or its pid was reused.  -1 with errno ESRCH when gone. */
int gp_stk_identity(struct gp_stacks *s, uint64_t *starttime, dev_t *dev, ino_t *ino);
/* libdwfl's callbacks, through the target's own root (tfile.h). */
void gp_stk_callbacks(struct gp_stacks *s);
/* Builds (first snapshot, exec, PID reuse) or refreshes the module list.
 * -1 with errno when the process is gone. */
int gp_stk_refresh(struct gp_stacks *s);
/* Ends the libdwfl session (the next refresh builds a new one). */
void gp_stk_session_end(struct gp_stacks *s);
/* mod's facts, loaded the first time it is asked for.  NULL: out of memory. */
struct modinfo *gp_stk_mod_info(struct gp_stacks *s, Dwfl_Module *mod);

/* unwinder.c */
/* SEIZE + INTERRUPT + bounded wait + unwind + DETACH, for one thread
 * (ptstop.h: one thread at a time, never left stopped). */
void gp_stk_stop_and_unwind(struct gp_stacks *s, struct rawthread *th);
/* Frames of a thread that is not stopped (why: what a stop would cut, or
 * that it sleeps); saved: only from its saved registers, false (the
 * thread untouched) when they cannot be read. */
bool gp_stk_unwind_without_stop(struct gp_stacks *s, struct rawthread *th, const char *why,
				bool saved);
/* Why a sleeping thread is read from its saved registers. */
const char *gp_stk_asleep_why(struct gp_stacks *s, const struct rawthread *th, char *why,
			      size_t n);
/* A thread in state t stopped by another tracer: named; false when it is
 * ours, a pending stop, drained now. */
bool gp_stk_traced_elsewhere(struct gp_stacks *s, struct rawthread *r);

#endif
