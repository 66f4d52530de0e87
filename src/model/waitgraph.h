/* Who waits on whom: the wait-for graph of one sample (issue 20).
 *
 * Each sleeping thread may carry an edge to what it waits on, read from
 * outside by tracer/waitedge.c and recorded in the thread's `on` member
 * (doc/result-format.md): the thread it joins (glibc's pthread_join
 * futex-waits on the joined thread's tid word), a mutex's owner (glibc
 * keeps the owner's tid in the mutex), the process at the other end of
 * a pipe, the holder of a flock/POSIX lock (/proc/locks), or, for a
 * stopped process, who stopped it (TracerPid: a debugger; 0: a signal).
 * A futex with no owner field (a semaphore, a condition, CPython's
 * locks) is an unknown edge.
 *
 * The graph follows each chain to where it ends -- outside (input, a
 * timer, a process outside the traced tree), a thread that runs, a
 * stopped process, a cycle (a deadlock), or an unknown edge -- and keeps
 * in the compact point (series.h) the facts the verdict names: the
 * cycle's members, the stopped process and the waiters behind it, a
 * lock's holder, where the target's main thread's chain ends. */
#ifndef GP_WAITGRAPH_H
#define GP_WAITGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gp_edge_how {
	GP_EDGE_NONE = 0,
	GP_EDGE_JOIN,     /* id: the joined thread's tid (same process) */
	GP_EDGE_MUTEX,    /* id: the mutex owner's tid (same process) */
	GP_EDGE_FUTEX,    /* an unknown edge: a futex with no owner field */
	GP_EDGE_PIPE,     /* id: a process at the other end of the pipe, 0 none found */
	GP_EDGE_FLOCK,    /* id: the lock's holder (pid), 0 none found */
	GP_EDGE_POSIX,    /* id: the lock's holder (pid), 0 none found */
	GP_EDGE_STOPPED,  /* the thread is stopped; id: the tracer's pid, 0 a signal */
	GP_EDGE_SOCKET,   /* id: a process holding the unix socket's peer, 0 none found */
	/* id: the tid a locked mutex names as its owner, which is no thread
	 * of the waiter's process (a lock inherited held across fork: the
	 * owner is its parent's thread; or an owner that exited holding
	 * it); of: the process that tid is a thread of now, 0 none found */
	GP_EDGE_ORPHAN,
	GP_EDGE_COUNT
};

struct gp_wait_edge {
	uint8_t how;      /* enum gp_edge_how */
	bool shared;      /* GP_EDGE_FUTEX: a process-shared futex (no FUTEX_PRIVATE_FLAG) */
	int32_t id;
	int32_t of;       /* GP_EDGE_ORPHAN: the process its owner tid belongs to, 0 none */
	char comm[16];    /* id's name when id is a process (a peer, a holder, a tracer), else "" */
};

/* "join", "mutex", ... (the result's spelling); NULL for NONE or invalid. */
const char *gp_edge_name(enum gp_edge_how h);
/* GP_EDGE_NONE for an unknown name. */
enum gp_edge_how gp_edge_from_name(const char *name);

/* Where a chain of waits ends. */
enum gp_chain_end {
	GP_END_NONE = 0,   /* not followed (no edge, or the thread runs) */
	GP_END_OUTSIDE,    /* input, a timer, a signal, a process outside the tree */
	GP_END_RUNNING,    /* a thread that runs */
	GP_END_STOPPED,    /* a stopped process */
	GP_END_CYCLE,      /* a deadlock */
	GP_END_UNKNOWN,    /* an unknown edge, or a wait the outside look cannot tell */
	GP_END_HOLDER,     /* a lock held by a process that waits on nothing known */
	GP_END_ORPHAN,     /* a mutex whose owner is no thread of its process */
};

#define GP_WG_MEMBERS 4

/* What a sample keeps of its graph (struct gp_point.wg). */
struct gp_wg_pt {
	uint16_t edges;            /* threads with a known edge (join, mutex, pipe, lock, stopped) */
	int32_t root;              /* the target's pid */
	uint8_t main_end;          /* enum gp_chain_end of the target's main thread */
	uint8_t released;          /* unknown-lock waiters whose every possible releaser waits outside */
	/* The first process (children first) whose main thread waits on a
	 * lock and whose chain does not end outside (a join of a thread in
	 * accept() does), 0 none: the program's own flow is blocked. */
	int32_t main_blocked_pid;
	/* The thread the target's main thread joins, through joins (the
	 * java launcher joins the Java main thread), 0 none. */
	int32_t main_joins;
	/* A cycle: its members (tid, pid, comm) in edge order. */
	uint8_t ncycle;
	int32_t cyc_tid[GP_WG_MEMBERS], cyc_pid[GP_WG_MEMBERS], cyc_on[GP_WG_MEMBERS];
	uint8_t cyc_how[GP_WG_MEMBERS];
	char cyc_comm[GP_WG_MEMBERS][16];
	/* The sample before read the same cycle (model/point.c): only then
	 * is it a deadlock for certain. */
	bool cycle_twice;
	/* A stopped process with waiters behind it. */
	int32_t stopped_pid, stopper_pid;
	char stopped_comm[16], stopper_comm[16];
	uint16_t behind;           /* threads whose chain ends in it */
	/* A lock's holder with waiters (a flock, a POSIX lock, a mutex). */
	int32_t holder_pid, holder_tid;
	uint8_t holder_how;        /* enum gp_edge_how */
	bool holder_outside;       /* not in the traced tree */
	char holder_comm[16];
	uint16_t holder_waiters;
	int32_t waiter_tid;        /* the first of them */
	/* A mutex whose owner is no thread of the waiter's process
	 * (GP_EDGE_ORPHAN), or a process's only thread on a private lock
	 * with no owner field (orphan_owner 0): the first such waiter, the
	 * owner tid it names, the process that tid is a thread of (0 none)
	 * and its name, and how many wait so. */
	int32_t orphan_waiter, orphan_pid, orphan_owner, orphan_of;
	char orphan_comm[16], orphan_of_comm[16];
	uint16_t orphan_waiters;
};

/* One thread as the graph sees it. */
struct gp_wg_node {
	int pid, ppid, tid;
	const char *comm;          /* the thread's */
	const char *pcomm;         /* its process's */
	char state;
	uint8_t wait;              /* enum gp_wait */
	struct gp_wait_edge on;
};

/* The graph of one sample: nodes of every followed process (any order);
 * root: the target's pid.  Fills *out. */
void gp_waitgraph_judge(const struct gp_wg_node *nodes, size_t n, int root,
			struct gp_wg_pt *out);

#endif
