/* A `stacks` line as the unwinder hands it over, and its one writer.
 *
 * The unwinder (src/unwind/stacks.h has the line's schema) reads threads,
 * frames, modules, Python frames and Go's goroutines; what it read is put in the records
 * below, in the words the line uses, and written as JSON here: the line
 * has one writer, and what a probe knows is kept apart from how the
 * result spells it (issue 31).  Nothing here reads /proc or a target.
 *
 * Strings in the records are borrowed: they stay the caller's. */
#ifndef GP_STACKLINE_H
#define GP_STACKLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_PY_MAX_FRAMES 256

/* What was read of one CPython thread while it was stopped
 * (src/unwind/pyframes.h reads it). */
struct gp_pythread {
	uint64_t tstate;
	int gil;               /* 1 held, 0 not held, -1 unknown */
	uint64_t gil_lo, gil_hi; /* its interpreter's GIL state, [lo, hi) */
	size_t n;
	bool truncated;        /* the chain was longer, or a read failed */
	struct gp_pyframe_raw {
		uint64_t code, instr;
		bool group_end;    /* the last frame one evaluation-loop call runs */
		/* filled after the detach by gp_py_resolve: */
		const char *function, *file; /* owned by the session's cache,
					      * until its next gp_py_resolve */
		int line;          /* -1: none */
	} f[GP_PY_MAX_FRAMES];
};

/* The first frame after the group that starts at start: the frames one
 * evaluation-loop call runs, youngest first.  start itself when none is
 * left. */
size_t gp_pythread_group_end(const struct gp_pythread *pt, size_t start);

/* The frames of group start of pt as a JSON array (a frame's or a
 * thread's "python"), NULL when no frame is left. */
json_t *gp_pygroup_json(const struct gp_pythread *pt, size_t start);

/* The line's "python": the interpreter of a CPython process. */
struct gp_pyinfo {
	const char *version;   /* "3.11.2", NULL unknown */
	const char *module;    /* its path */
	const char *error;     /* why its frames are not read, NULL when they are */
	size_t threads;        /* thread states read */
};
json_t *gp_pyinfo_json(const struct gp_pyinfo *pi);

/* One goroutine of a Go process as read (src/unwind/goroutines.h): the
 * pieces its group is made of. */
#define GP_GO_NAME 96
#define GP_GO_WAIT 40
struct gp_goraw {
	char start[GP_GO_NAME];   /* its start function */
	char at[GP_GO_NAME];      /* gp_go_pick_at's frame, "" none */
	char wait[GP_GO_WAIT];    /* wait reason, or "running", "runnable", "syscall" */
};

/* Goroutines of the same start, at and wait: n of them. */
struct gp_gogroup {
	struct gp_goraw g;
	size_t n;
};
/* The groups as the line's "groups" array. */
json_t *gp_gogroups_json(const struct gp_gogroup *g, size_t n);

/* The line's "goroutines": a Go process's. */
struct gp_goinfo {
	const char *version;      /* "go1.19.8", NULL unknown */
	const char *module;       /* its path, NULL none */
	const char *error;        /* why (not all) read, NULL */
	bool counted;             /* n, system and the groups were counted */
	size_t n, system;         /* the program's goroutines, the runtime's own */
	const struct gp_gogroup *groups; /* the largest, largest first */
	size_t ngroups;
	size_t more;              /* goroutines in groups beyond those */
};

/* A module that appears in frames: the line's "modules", and its hint
 * (where to get what it lacks) written from these facts. */
struct gp_stk_module {
	const char *path, *soname;
	const char *build_id;  /* hex, "" when it has none */
	const char *debug;     /* "dwarf", "symtab", "dynsym", "none", "not-read" */
	bool in_container;     /* read through the target's own root (tfile.h) */
};

struct gp_stk_frame {
	uint64_t pc;           /* raw */
	bool jit;              /* code a JIT wrote (xmaps.h) */
	const struct gp_stk_module *mod; /* NULL: in no module known */
	uint64_t offset;       /* in the module's ELF file */
	const char *symbol, *file; /* NULL: unknown */
	int line;
	bool python;           /* an evaluation-loop frame: its Python group below */
	size_t py_start;       /* that group's first frame in the thread's py */
};

struct gp_stk_thread {
	int tid;
	const char *comm;
	char state;
	const char *wchan;     /* NULL: unreadable */
	const char *syscall;   /* described ("futex(0x7f.., ...)", "running", "user"), NULL unknown */
	bool in_call;          /* syscall is a call: its number below */
	int64_t syscall_nr;
	const char *unwind;    /* "ok", "nostop", ... (stacks.h); NULL "off" */
	const char *err;       /* "" none */
	double stop_us;        /* < 0: never stopped */
	bool regs_bpf;         /* its frames from registers BPF read (taskregs.h) */
	const struct gp_stk_frame *frames; /* NULL: not unwound */
	size_t nframes;
	const char *kstack;    /* /proc/TID/stack's text, NULL unreadable */
	const struct gp_pythread *py; /* NULL: no Python thread state */
	size_t py_placed;      /* py's frames before this one went to a frame */
	bool gil_take;         /* inside the GIL's taking */
};

/* The line's "cost". */
struct gp_stk_cost {
	unsigned stopped, nostop;
	double stop_us_max, stop_us_sum, python_us_max;
	double refresh_ms, unwind_ms, symbolize_ms, wall_ms;
	double goroutines_us;  /* < 0: no goroutines read */
};

/* The line, built a thread at a time (each thread's records may be
 * reused for the next once it is added). */
struct gp_stackline {
	json_t *line, *threads;
	json_t *mods;          /* the modules of the frames so far, by path */
};
void gp_stackline_begin(struct gp_stackline *b, double t, int pid);
/* Adds a thread, and each module of its frames not yet in the line. */
void gp_stackline_thread(struct gp_stackline *b, const struct gp_stk_thread *th);
/* The whole line (the caller's): py the interpreter or NULL, go the
 * goroutines or NULL, and the cost. */
json_t *gp_stackline_end(struct gp_stackline *b, const struct gp_pyinfo *py,
			 const struct gp_goinfo *go, const struct gp_stk_cost *c);

/* What a session could not take, and why: the facts of the hint that
 * src/render/unwind_text.h words. */
struct gp_stacks_missing {
	int pid;
	bool kthread;          /* a kernel thread: no user space at all */
	bool user, kern;       /* user stacks / kernel stacks missing */
	unsigned owner, me;    /* the target's uid, gpuprobe's euid */
	int yama;              /* kernel.yama.ptrace_scope, -1 unknown */
	int err;               /* the refusal's errno */
};

#endif
