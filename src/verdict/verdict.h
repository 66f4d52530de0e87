/* The verdict: hang or progress, and which kind — a pure function of the
 * recorded samples (the compact series), tested from recorded traces.
 *
 * Progress is output: RssFile/RssAnon/VmPin/GPU memory reaching new
 * highs, bytes the process read or wrote through syscalls (rchar,
 * wchar), GPU engine time, threads created.  Activity is effort: CPU
 * time, context switches, storage-level io (a page re-dirtied and written
 * back again is effort, not output: seed 004), faults, system writeback.
 * A hang is no progress for --hang-after seconds; activity then says
 * which kind.  A flat GPU counter alone never makes a hang: every
 * visible progress family must be flat. */
#ifndef GP_VERDICT_H
#define GP_VERDICT_H

#include "load.h"
#include "rasparse.h"
#include "series.h"
#include "siblings.h"
#include "stuck.h"
#include "waits.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* How a flat time before the trace (or watch) is known. */
enum gp_before_by {
	GP_BEFORE_CALLER,      /* the caller said it (trace --flat-before: watch's bundles) */
	GP_BEFORE_THREADS,     /* no thread of it had run for that long (tracer/still.h) */
	GP_BEFORE_LAST_WATCH,  /* the watch before this one exported the hang (its --metrics file) */
};

struct gp_verdict_opts {
	double hang_after;       /* seconds without progress that make a hang (default 30) */
	double slow_rate;        /* bytes/s under which progress is slow; 0: only relative */
	long page_size;          /* for vmstat page counts */
	const char *end_reason;  /* the exit line's reason, or NULL (trace still running) */
	bool have_status;        /* a command's exit status is known */
	int status, signal;
	bool kstacks_seen;       /* kernel stacks were readable */
	/* The snapshot taken when the last phase went flat for hang_after
	 * (why "hang"), else the one at the end ("end"); NULL: none taken. */
	const struct gp_stuck *stuck;
	/* The tree's processes as its `target` lines and samples name them
	 * (siblings compared: a job's ranks, a pool's workers); NULL: the
	 * snapshot's names alone. */
	const struct gp_proctab *procs;
	/* Kernel-log lines kept by the trace (`kmsg` lines): GPU drivers and
	 * the kernel's hang/lockup/OOM warnings; the ones in the judged phase
	 * are named in the summary.  kmsg_why: why the log was not read. */
	const struct gp_kmsg_note *kmsg;
	size_t nkmsg;
	const char *kmsg_why;
	/* NCCL's RAS service as the trace's `ras` lines read it; NULL: not asked. */
	const struct gp_ras_seen *ras;
	/* No progress for this long before the trace, as its caller saw it
	 * (trace --flat-before, header flat_before_s: watch's bundles). */
	double flat_before;
	uint8_t flat_before_by;   /* enum gp_before_by: how flat_before is known */
	bool watching;            /* judged by watch, not a trace: "before the watch began" */
	const char *machine;     /* the traced machine (header host.machine), for
				    syscall names; NULL: this one (live) */
};


/* DESIGN's trace verdict classes. */
enum gp_class {
	GP_CLASS_PROGRESS, GP_CLASS_SLOW_PROGRESS, GP_CLASS_IDLE, GP_CLASS_WAITING_GPU,
	GP_CLASS_HANG_BLOCKED, GP_CLASS_HANG_BUSY_KERNEL, GP_CLASS_HANG_BUSY_USER,
	GP_CLASS_STOPPED, GP_CLASS_EXITED, GP_CLASS_UNDECIDED, GP_CLASS_HANG_GPU_SPIN,
	GP_CLASS_COUNT
};
const char *gp_class_name(enum gp_class c);

#define GP_VERDICT_HANG_AFTER_DEFAULT 30.0

/* The verdict is data: classes, levels and reasons as enums, numbers as
 * numbers.  Its words are src/render/verdict_text.c's. */

enum gp_conf { GP_CONF_LOW, GP_CONF_MEDIUM, GP_CONF_HIGH, GP_CONF_ANY /* a cap: none */ };
const char *gp_conf_name(enum gp_conf c);

/* The kinds of output, in the order the steps test them. */
/* Every process of the tree that ended in p's interval failed (exited
 * non-zero or was killed): a retry loop's attempts, whose start-up is not
 * output (verdict/steps.c). */
struct gp_point;
bool gp_failed_starts(const struct gp_point *p);
/* p's new threads (in processes seen before) are output: not when they
 * came with input on sockets and nothing went out (steps.c). */
bool gp_spawns_count(const struct gp_point *prev, const struct gp_point *p);

enum gp_output {
	GP_M_RSS_FILE, GP_M_RSS_ANON, GP_M_VM_PIN, GP_M_GPU, GP_M_ENGINE, GP_M_RCHAR, GP_M_WCHAR,
	GP_M_SOCK_RX, GP_M_SOCK_TX, /* bytes through TCP sockets to and from outside the tree */
	GP_M_THREADS, GP_M_GPU_WORK /* math or memory traffic on the GPU (model/gpuwork.h) */,
	GP_M_COUNT
};

/* What the process did while it made no output: the judged flat phase. */
struct gp_activity {
	double dur, cpu_pct, sys_pct;
	enum gp_class kind;        /* hang-*, idle, undecided, waiting-gpu */
	enum gp_conf conf_cap;     /* the highest confidence the waits allow */
	/* What the sleeping threads wait for (model/waits.h), in the last sample. */
	unsigned w[GP_WAIT_COUNT];
	unsigned outside, unclear, inside, child;
	bool waits_known;          /* the result recorded them (format 2) */
	bool lockish;              /* the stuck threads' frames name a lock */
	int main_lock_pid;         /* a main thread waits on a lock */
	bool main_outside;         /* the target's main thread waits outside */
	char main_frame[64];       /* that main thread's wait frame, from the stacks */
	char waits3[3][64];        /* the first distinct wait frames of the stacks */
	unsigned nwaits3;
	char common_frame[64];
	unsigned common_count, stuck_n;
	double stuck_t;
	int pid, pid2;             /* the busy threads' processes (a tree) */
	char pcomm[16], pcomm2[16];
	uint32_t procs;
	int child_wait_pid, inside_pid, outside_pid;
	char child_wait_comm[16], inside_comm[16], outside_comm[16];
	bool same_arg0;
	/* The GPU in the phase (waiting-gpu) */
	unsigned gpu_known, gpu_busy, samples;
	bool gpu_last_busy;        /* the latest sample that measured it: busy */
	float gpu_pct;
	int gpu_pid;
	char gpu_comm[16];
	enum gp_class host_kind;   /* what the host did meanwhile; GP_CLASS_COUNT: not waiting-gpu */
	/* GPU work, not occupancy, in the phase (model/gpuwork.h): samples
	 * of each judgement, and the latest telling reading. */
	unsigned gw_n[5];          /* per enum gp_gpu_work */
	struct gp_gpu_work_pt gw;  /* the latest spin (hang-gpu-spin) or work reading */
	int gw_pid;
	char gw_comm[16];
	bool gpu_no_work;          /* hang-blocked: a context, no kernel, the host in the driver's sync */
	/* waiting-gpu, hang-gpu-spin: another process of the tree that holds
	 * a context on a GPU and runs no kernel, its main thread asleep
	 * (issue 29, turn 3's CUDA IPC case: the kernel spins on a flag that
	 * process never sets); 0 none. */
	int peer_pid;
	char peer_comm[16], peer_frame[64], peer_user[64];
	/* Siblings compared (siblings.h): a job's rank, a pool's worker
	 * apart from the others; sib_decided: ranks waiting for one that
	 * exited turned rest into a hang. */
	struct gp_sibcmp sib;
	bool sib_decided;
	int tid, tid2;
	char comm[16], comm2[16];
	char frame[64], frame2[64];   /* their hot frames, when stacks were taken */
	double tcpu, tsys, tcpu2;
	bool have_sc;
	int64_t sc_nr;
	uint64_t sc_args[6];
	char wchan[32];
	uint32_t wchan_count, threads;
	int64_t wait_sc_nr;
	uint64_t wait_sc_args[6];
	uint32_t wait_sc_count;
	double dirtied, written, reclaim; /* bytes/s, system */
	bool have_wb, have_reclaim;
	/* Who waits on whom (model/waitgraph.h), in the sample judged, and
	 * what the verdict made of it (waitjudge.c). */
	struct gp_wg_pt wg;
	bool deadlock;             /* wg's cycle decided: blocked, the members named */
	bool stalled;              /* wg's stopped process decided: stopped, the waiters behind it */
	bool behind_holder;        /* wg's lock holder decided: blocked behind it */
	bool orphan_lock;          /* wg's mutex with no owner in its process decided */
	char orphan_frame[64];     /* its waiter's wait frame, from the stacks */
	/* CPython's GIL held by a thread that sleeps (a C extension's
	 * blocking call that kept it), gil_waiters threads of its process
	 * in take_gil behind it: that decided. */
	/* A database statement asleep on a lock inside its engine (a row
	 * lock, a metadata lock: waitjudge.c), db_lock_n threads like it. */
	bool yield_spin;           /* and the busy thread spins in sched_yield meanwhile */
	int db_lock_tid;
	unsigned db_lock_n;
	char db_lock_comm[16], db_lock_frame[64];
	bool behind_gil;
	int gil_tid, gil_pid;      /* also noted, deciding nothing, when the holder runs */
	char gil_state;
	unsigned gil_waiters;
	char gil_comm[16], gil_syscall[48], gil_frame[64], gil_user[64];
	/* Inputs waiting unanswered in the tree's sockets (tracer/sockets.h):
	 * connections not accepted, bytes not read, in every sample from
	 * inputs_since to the phase's end; unanswered: that decided a hang. */
	bool unanswered;
	/* A process of the tree killed in or just before the phase (a
	 * signal no one asked for: not PIPE, TERM, INT, HUP); dead_decided:
	 * its death turned rest into a hang. */
	int dead_pid, dead_signal;
	bool dead_before;          /* before the trace began */
	char dead_comm[16];
	double dead_t;
	bool dead_decided;
	/* Children of one command exiting non-zero again and again in the
	 * phase: an attempt retried (retry_n times since retry_since). */
	bool retrying;
	unsigned retry_n;
	int retry_status;
	char retry_comm[16];      /* "" when no sample named it */
	int retry_ppid;
	/* Connects of the tree failing again and again in the phase (where
	 * the kernel counts them, tracer/sockflow.h): an attempt retried in
	 * the program's own flow -- conn_n failures since conn_since, the
	 * last with conn_errno, to conn_to, by conn_pid. */
	bool conn_retrying;
	uint64_t conn_n;
	int conn_errno, conn_pid;
	char conn_to[48], conn_comm[16];
	double conn_since;
	/* Non-blocking lock attempts refused again and again in the phase
	 * (a busy handler polling a lock: SQLite's): lock_n refusals since
	 * lock_since by lock_pid, on lock_file, held by lock_holder (0:
	 * /proc/locks named none). */
	bool lock_retrying;
	uint64_t lock_n;
	int lock_pid, lock_holder;
	char lock_comm[16], lock_holder_comm[16], lock_file[64];
	double lock_since;
	/* A thread that ended in or just before the phase (its absence is
	 * often the story: a batcher whose handlers wait for it), 0 none. */
	int ended_tid, ended_pid;
	char ended_comm[16];
	double ended_t;
	double retry_since;
	uint32_t in_backlog;
	uint64_t in_unread;
	uint32_t in_pending;       /* requests read and never answered, at the phase's end */
	double in_pending_s;       /* the oldest's wait */
	/* The process whose sockets hold them, and where its main thread
	 * (a server's loop, as a rule) is instead of taking them. */
	int in_pid;
	char in_comm[16], in_main_frame[64];
	bool waiters_orphaned;     /* and no live thread is left to answer them */
	double inputs_since;
	char cyc_frame[GP_WG_MEMBERS][64]; /* each cycle member's wait frame, from the stacks */
	char holder_frame[64];
	/* A JVM's threads (model/jvmthreads.h), read from the stacks: java
	 * when the counts w[] above are the program's own -- the JVM's own
	 * threads taken out, each user wait as the JVM means it (applied
	 * only where the sample's counts hold the snapshot's).  java_stuck:
	 * hang-blocked, and every Java thread of the program that sleeps
	 * waits inside with no timeout while none waits outside: nothing is
	 * left to wake them. */
	bool java, java_stuck;
	struct gp_stuck_java jv;
	/* Threads whose stacks acquire a lock (not those waiting on a
	 * condition): the culprits named instead of the crowd. */
	unsigned nacq;
	int acq_tid[3], acq_pid[3];
	char acq_comm[3][16], acq_frame[3][64];
	/* A Go process of the snapshot (model/stuck.h): its OS threads are
	 * the runtime's (the netpoller, sysmon, idle Ms on futexes) and
	 * never decide the class; its goroutines do, where they were read
	 * (go.error "": read; else why they are out of sight).  go.pid 0:
	 * no Go process.  The program's goroutines by where they wait. */
	struct gp_stuck_go go;
	unsigned go_lock, go_chan, go_outside, go_run;
	bool go_inside[GP_STUCK_GO_GROUPS]; /* go's group k waits on a lock or another goroutine */
	bool go_decided;           /* the goroutines decided the class */
};

enum gp_role { GP_ROLE_PROGRESS, GP_ROLE_ACTIVITY };

/* How an evidence row reads; x, y, n1, n2, tid and comm carry its numbers. */
enum gp_reads {
	GP_READS_FLAT,
	GP_READS_NEW_HIGHS,        /* x: bytes/s */
	GP_READS_REFILL,           /* rising below an earlier peak */
	GP_READS_FALLING,
	GP_READS_RATE,             /* x: bytes/s */
	GP_READS_FAULTS,           /* x: faults/s */
	GP_READS_GPU_BUSY,         /* x: percent of the time */
	GP_READS_GPU_ACTIVITY,     /* busy in n1 of n2 samples, peak x percent */
	GP_READS_GPU_WORK,         /* work in n1 of n2 readings, x spin; gw the latest telling one */
	GP_READS_CREATED,          /* n1 created */
	GP_READS_CORES,            /* x cores, y percent of it system */
	GP_READS_KERNEL_CORES,     /* x cores */
	GP_READS_PER_S,            /* x per second (live threads) */
	GP_READS_BUSIEST,          /* tid (comm) x percent, y percent system */
};

struct gp_evidence {
	char metric[32];
	const char *scope;       /* "process", "thread", "system" */
	const char *unit;        /* "bytes", "s", "count", "ns" */
	double first, last, slope_per_s;
	enum gp_role role;
	enum gp_reads reads;
	double x, y;
	unsigned n1, n2;
	int tid;
	char comm[16];
	struct gp_gpu_work_pt gw;  /* GP_READS_GPU_WORK */
};

enum gp_phase_kind {
	GP_PHASE_NO_OUTPUT,      /* flat, an earlier stretch */
	GP_PHASE_STOPPED,
	GP_PHASE_PROGRESS,       /* the metrics m[0..nm) at mrate each; moving: no bytes */
	GP_PHASE_ACTIVITY,       /* flat, the judged one: what the process did (v->act) */
};

struct gp_phase {
	double from, to;
	bool progress;
	double rate;             /* bytes/s of output, progress phases */
	enum gp_phase_kind kind;
	/* progress: the metric that carried the most output first, then each
	 * other one that carried a tenth of it or more */
	unsigned nm;
	enum gp_output m[GP_M_COUNT];
	double mrate[GP_M_COUNT];
	bool moving;             /* output that is no bytes (threads created) */
	int pid;                 /* the process that made most of it (a tree), 0 */
	char comm[16];
	/* progress carried by GPU work (GP_M_GPU_WORK among m): the latest
	 * reading of it in the phase, to name the work */
	bool have_gw;
	struct gp_gpu_work_pt gw;
};

/* Which story the summary tells. */
enum gp_story {
	GP_STORY_TOO_FEW,        /* n_samples < 3 */
	GP_STORY_NO_MEMORY,
	GP_STORY_STOPPED,
	GP_STORY_HANG,           /* flat for hang_after or longer */
	GP_STORY_SHORT,          /* flat, not long enough yet */
	GP_STORY_PROGRESS,
	GP_STORY_SLOW_RATE,      /* progress under --slow-rate */
	GP_STORY_SLOWED,         /* progress that fell to a tenth of its rate */
};

/* Why a hang's confidence was capped below what the flatness gives. */
enum gp_cap_why { GP_CAP_NONE, GP_CAP_BUSY_USER, GP_CAP_GPU, GP_CAP_WAITS,
		  GP_CAP_JAVA /* Java threads parked or blocked on monitors: their
		                 locks' owners are in the JVM's heap, not read */,
		  GP_CAP_GPU_WORK /* the GPU's work read from power and util.memory,
		                     or occupancy alone: no GPM pipes */ };

#define GP_UNSEEN_IO      0x1u
#define GP_UNSEEN_GPU     0x2u
#define GP_UNSEEN_SYSCALL 0x4u
#define GP_UNSEEN_KSTACKS 0x8u
#define GP_VERDICT_MAX_KMSG 3

#define GP_VERDICT_MAX_EVIDENCE 24
#define GP_VERDICT_MAX_PHASES 12

struct gp_verdict {
	enum gp_class cls;
	enum gp_class before;    /* exited: the verdict on what came before; COUNT: none */
	double since_s;
	enum gp_conf confidence; /* low, medium, high */
	double judged_from, judged_to;
	double hang_after;       /* the --hang-after it was judged with */
	double needs_s;          /* undecided: seconds of flatness still needed */
	/* Of the flat time, the seconds before the trace: no thread of the
	 * tree had run for that long when it started (proctab still_s); 0
	 * none.  since_s is then before 0. */
	double still_before_s;
	uint8_t before_by;       /* enum gp_before_by: how still_before_s is known */
	bool watching;           /* judged by watch (gp_verdict_opts.watching) */
	enum gp_class leans;     /* undecided: the class it leans to; COUNT: none */
	double eta_s;            /* progress with a known total, else < 0 */
	struct gp_phase phase[GP_VERDICT_MAX_PHASES];
	size_t nphases;
	struct gp_evidence ev[GP_VERDICT_MAX_EVIDENCE];
	size_t nev;
	struct gp_stuck stuck;   /* the stuck threads' stacks (hang, idle), t < 0: none */

	/* The facts the summary and the confidence reason are told from. */
	enum gp_story story;
	size_t n_samples;
	char state;              /* stopped: the process state */
	size_t stopped_n;        /* stopped: samples in that state */
	double flat;             /* seconds without output at the end */
	bool after_progress;     /* hang, short: an earlier progress phase */
	struct gp_activity act;  /* hang, short: the judged flat phase */
	enum gp_cap_why cap_why; /* hang */
	bool io_seen, gpu_seen;  /* hang: the families that were flat */
	unsigned events;         /* progress: intervals with output in the phase */
	double ratio;            /* slowed: how many times slower */
	double rate_now, rate_before; /* slowed, progress: bytes/s */
	double eta_total, eta_resident; /* eta_s >= 0: the file mapping and its resident part */
	char machine[32];        /* the traced machine, for syscall names ("": not recorded) */
	bool machine_set;        /* false: this machine (live) */
	/* Kernel-log lines in the judged phase (not for progress). */
	struct gp_kmsg_note kmsg[GP_VERDICT_MAX_KMSG];
	size_t nkmsg;
	unsigned kmsg_more;
	/* exited */
	bool have_status;
	int status, signal;
	double exit_t;
	/* What could not be seen: GP_UNSEEN_* bits and why the kernel log was not read. */
	unsigned unseen;
	char kmsg_why[112];
	struct gp_ras_seen ras;  /* reads == 0: RAS not asked */
};

void gp_verdict_compute(const struct gp_point *pt, size_t n,
			const struct gp_verdict_opts *o, struct gp_verdict *v);

/* Its words, its `verdict` result line and its printed block:
 * src/render/verdict_text.h. */

/* One step of output, for the judge (steps.c) and the live flat watch
 * (loop/flatwatch.c), counted with the same floors: the value of output
 * kind m in a point, the least growth that is one step of it, and a
 * counter's step -- it grew by floor or more since *base (base moves
 * there), or went back (a re-opened DRM client: base restarts there). */
double gp_output_value(const struct gp_point *p, int m);
double gp_output_floor(int m);
bool gp_counter_step(double *base, double v, double floor);
/* Bytes written between prev and p under the floor that are still
 * output: not all one-byte (self-pipe) or eight-byte (eventfd) writes. */
bool gp_small_write(const struct gp_point *prev, const struct gp_point *p);

/* What the verdict needs from a loaded result besides its samples: page
 * size, the traced machine, whether kernel stacks were seen, the stacks
 * at the hang and the kernel-log lines, how the run ended (the exit
 * line's reason, status, signal), and, when vo->hang_after is 0, the
 * --hang-after the saved verdict was judged with (else the default).
 * Fills those fields of *vo and leaves the others (slow_rate...). */
void gp_loaded_verdict_opts(const struct gp_loaded *l, struct gp_verdict_opts *vo);

/* True when name is one of the trace verdict classes. */
bool gp_verdict_class_valid(const char *name);

#endif
