/* The threads of the snapshot taken when a phase went flat for
 * --hang-after (and at the end of the trace): `stacks` lines with why
 * "hang" or "end" (doc/result-format.md), one line a process.  The
 * verdict carries them, and names the frame most of them wait in. */
#ifndef GP_STUCK_H
#define GP_STUCK_H

#include "jvmthreads.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GP_STUCK_MAX 32
#define GP_STUCK_FRAMES 12
#define GP_STUCK_WAIT_FRAMES 64

struct gp_stuck_thread {
	unsigned count;          /* threads with this very stack (tid: the first) */
	int pid, tid;
	char comm[16];
	char state;
	char wait_frame[64];     /* the frame that names the wait (gp_stuck_add) */
	char user_frame[64];     /* a library's Python frame waits: the user's
				    code that called it; "" otherwise */
	char frames[GP_STUCK_FRAMES][64];
	unsigned nframes;
	char kernel[48];         /* innermost kernel frame, "" unknown */
	char syscall[48];        /* the call it sleeps in ("read(fd 3)"), "" unknown */
	/* CPython's GIL (stacks.h "python":{"gil"}): 'h' this thread holds
	 * it, 'w' it waits in take_gil, 0 neither or not Python. */
	char gil;
	struct gp_jvm_thread jvm; /* its part in a JVM (model/jvmthreads.h) */
};

/* A JVM's sleeping threads, counted over every thread of the snapshot
 * (not only the distinct stacks kept above: a server's 200 handlers of
 * 200 names overflow that table), and the first Java threads asleep from
 * user code, named. */
#define GP_STUCK_JAVA_NAMED 8
struct gp_stuck_java_thread {
	int pid, tid;
	char comm[16];
	unsigned char role;      /* enum gp_jvm_role */
	bool timed;
	bool main;               /* the Java main thread: it keeps the process's name */
};
struct gp_stuck_java {
	unsigned runtime;        /* the JVM's own threads asleep */
	unsigned user;           /* Java threads asleep from user code */
	unsigned role_n[GP_JVM_ROLES], timed_n[GP_JVM_ROLES];
	/* Over the threads above: their waits as the tracer counted them
	 * and as the JVM means them (jvmthreads.h), per enum gp_wait. */
	unsigned counted[GP_WAIT_COUNT], meant[GP_WAIT_COUNT];
	/* Threads of a JVM process the snapshot could not place: awake when
	 * it was taken, or their stacks not read.  A sample a moment older
	 * counted their waits all the same. */
	unsigned unplaced;
	struct gp_stuck_java_thread named[GP_STUCK_JAVA_NAMED];
	unsigned nnamed;
};

/* Each process of the snapshot, its main thread kept whatever the table
 * of distinct stacks above holds (issue 29: a job of eight ranks of
 * eight threads each overflows it, and the ranks are compared by their
 * main threads). */
#define GP_STUCK_PROCS 64
struct gp_stuck_proc {
	int pid;
	char comm[16];
	bool lead;               /* its main thread was in the line: */
	char state;              /*   that thread's state, */
	char wait_frame[64];     /*   its wait frame (gp_stuck_thread's) */
	char user_frame[64];
	bool lead_dist;          /*   a frame of it is a distributed job's collective code */
	bool dist;               /* a frame of any of its threads is (gloo's, NCCL's
				    threads: gp_stuck_dist_frame) */
};

/* A Go process's goroutines as its `stacks` line read them (unwind/
 * goroutines.h): the program's own, in groups of the same start
 * function, frame and wait reason, the largest first. */
/* Where a goroutine waits, as the verdict weighs it: on a lock, on
 * another goroutine (a channel, a condition, a group), for the outside
 * (input, a timer, a select), or not waiting (running, runnable, in a
 * system call). */
enum gp_go_where { GP_GO_OUTSIDE, GP_GO_LOCK, GP_GO_CHAN, GP_GO_RUN };
enum gp_go_where gp_go_where_of(const char *wait);

#define GP_STUCK_GO_PROCS 4
#define GP_STUCK_GO_GROUPS 6
struct gp_stuck_go {
	int pid;
	char version[16];        /* "go1.19.8", "" unknown */
	char error[64];          /* why they are out of sight; "" when read */
	unsigned n, system;      /* the program's goroutines, the runtime's own */
	unsigned more;           /* the program's in groups beyond those kept */
	struct gp_stuck_gogroup {
		char start[64], at[64], wait[32];
		unsigned n;
		enum gp_go_where where;
	} g[GP_STUCK_GO_GROUPS];
	size_t ng;
};

struct gp_stuck {
	double t;                /* the snapshot's time, < 0 none */
	char why[8];             /* "hang", "end" */
	size_t n, total;         /* distinct stacks kept, and threads seen */
	size_t dropped;          /* threads of distinct stacks beyond GP_STUCK_MAX */
	struct gp_stuck_thread th[GP_STUCK_MAX];
	/* Every sleeping thread's wait frame, counted whether or not its
	 * stack got an entry above: a JVM's 50 threads of 50 names in one
	 * stack are 50 entries, and counting the kept 32 said "31 of 51"
	 * where the report's stacks section shows 50 (issue 20). */
	struct { char frame[64]; unsigned n; } wf[GP_STUCK_WAIT_FRAMES];
	size_t nwf;
	struct gp_stuck_proc proc[GP_STUCK_PROCS]; /* the first processes of the snapshot */
	size_t nproc;
	struct gp_stuck_java java;
	struct gp_stuck_go go[GP_STUCK_GO_PROCS]; /* its first Go processes */
	size_t ngo;
};

void gp_stuck_init(struct gp_stuck *s);
/* Appends the threads of one `stacks` line, one entry per distinct stack
 * (with its count of threads); a line of another snapshot (another t)
 * starts again. */
void gp_stuck_add(struct gp_stuck *s, const json_t *stacks_line);

/* A frame as one label: its symbol, else "module+0xoffset"; false when
 * neither is known.  Python frames (when present) read "load_shard
 * (load.py:12)". */
bool gp_frame_label(const json_t *frame, char *buf, size_t cap);

/* The frame most of the sleeping threads wait in, and how many; 0 when
 * none is shared by two threads or more (then each is its own). */
unsigned gp_stuck_common_frame(const struct gp_stuck *s, char *buf, size_t cap);

/* Where process pid's main thread waits, as a short stable signature
 * (issue 29: ranks compared fleet-wide by Prometheus, not by gpuprobe):
 * 8 hex digits of a 32-bit FNV-1a hash of its wait frame and the user's
 * frame that called it -- the frames that matter: what a rank waits in
 * (all_reduce (distributed_c10d.py:N)) and from where (reduce_grads
 * (job.py:M)), no address, no tid.  *frame: the same as words,
 * "all_reduce (distributed_c10d.py:N) <- reduce_grads (job.py:M)".
 * False when the snapshot holds no main thread of pid asleep. */
bool gp_stuck_signature(const struct gp_stuck *s, int pid, char *sig, size_t sigcap, char *frame,
			size_t framecap);

/* A frame label (gp_frame_label's, or a Python frame's "fn (file:line)")
 * of a distributed job's communication: torch.distributed's Python
 * (distributed_c10d.py) and C++ (c10d::), gloo, NCCL/RCCL, MPI. */
bool gp_stuck_dist_frame(const char *label);

/* A kernel-log line (`kmsg`) as the verdict needs it. */
struct gp_kmsg_note {
	double t;
	char driver[16], kind[16];
	int xid;
	unsigned lost;		/* kind "lost": records overwritten unread */
	char text[96];
};
#define GP_KMSG_NOTES 64
/* Keeps a `kmsg` line's facts in a ring of GP_KMSG_NOTES (the newest). */
void gp_kmsg_note_add(struct gp_kmsg_note *ring, size_t *n, const json_t *line);

#endif
