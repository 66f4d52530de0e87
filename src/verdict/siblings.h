/* Siblings compared (DESIGN, "Siblings are compared"; issue 29): the
 * processes of one traced tree that run the same program, grouped by
 * where their main threads are -- the frame they wait in (a Python line
 * first, then the library's line the user's code called), or computing,
 * or gone.  When one group holds most of them and the rest are few, the
 * rest are named: the rank that never reached the collective, that
 * called another, that exited, that computes while the others wait.
 *
 * Which processes are a job's ranks is said by their environment (RANK,
 * WORLD_SIZE and the MPI launchers' variables: model/proctab.h) or by
 * their stacks (a thread in torch.distributed, gloo, NCCL or MPI code);
 * processes of one program under a parent of that program are its pool's
 * workers, compared among themselves (the parent is not one of them);
 * other processes of one program are just that.  The verdict is data:
 * the words are src/render/siblings_text.c's.
 *
 * The same comparison runs across results (report of several files,
 * each traced apart: a job's nodes): gp_siblings_of each file, then one
 * gp_siblings_compare of them all. */
#ifndef GP_SIBLINGS_H
#define GP_SIBLINGS_H

#include "proctab.h"
#include "stuck.h"

#include <stdbool.h>
#include <stddef.h>

enum gp_sib_how {
	GP_SIB_WAITS,            /* its main thread waits (or spins in a collective) in frame */
	GP_SIB_RUNS,             /* it computes: its main thread on a CPU, outside any collective */
	GP_SIB_EXITED,           /* it left the tree before the snapshot */
	GP_SIB_UNREAD,           /* its main thread's stack was not read (a stop that
				    timed out): compared with none, named apart */
};

/* One process, as compared. */
struct gp_sibling {
	int pid, ppid;
	int rank, world_size;    /* from its environment, -1 unknown */
	bool job_env;            /* RANK/WORLD_SIZE (or an MPI launcher's) there */
	bool dist;               /* a thread of it in a collective's code */
	bool in_coll;            /* its main thread is */
	enum gp_sib_how how;
	char program[160];       /* proctab's key (its comm when no target line named it) */
	char label[48];
	char job[64];
	char frame[64], user[64];/* where its main thread is (WAITS, RUNS) */
	float cpu;               /* RUNS: its busiest thread's CPU, percent; 0 unknown */
	bool ended;              /* EXITED: how is known */
	int status, signal;
	double exit_t;           /* EXITED: the first sample that did not list it */
	unsigned source;         /* which result (report of several), 0 */
	/* When it stopped: last used CPU (proctab active_t), or exited;
	 * RUNS: not stopped.  stop_known false: not known.  Times are the
	 * result's t plus the shift gp_siblings_of was given. */
	double stop_t;
	bool stop_known;
};

enum gp_sib_kind { GP_SIBK_NONE, GP_SIBK_RANKS, GP_SIBK_WORKERS, GP_SIBK_PROCESSES };
enum gp_sib_story {
	GP_SIBS_ODD,             /* a majority, and a few apart from it (odd[]) */
	GP_SIBS_TWO,             /* two, each elsewhere: which one is late cannot be told */
	GP_SIBS_SAME,            /* all in one place (ranks: no odd one) */
};

/* Processes compared at most (one result, or all of a report's). */
#define GP_SIBLINGS_MAX 256

#define GP_SIB_SAME_NAMED 8
#define GP_SIB_ODD_NAMED 3

struct gp_sib_member { int pid, rank; unsigned source; };

/* What the comparison found; kind NONE: nothing to say. */
struct gp_sibcmp {
	enum gp_sib_kind kind;
	enum gp_sib_story story;
	unsigned n;              /* processes compared */
	int world_size;          /* ranks: their WORLD_SIZE, -1 unknown */
	int parent_pid;          /* workers: their parent's pid */
	char parent_label[48];    /* workers: their parent's program, short */
	char label[48];          /* the program's short name */
	/* The majority (TWO: the first of the two; ODD of two ranks: the one
	 * in the collective) */
	enum gp_sib_how how;
	char frame[64], user[64];
	bool in_coll;
	unsigned nsame;
	struct gp_sib_member same[GP_SIB_SAME_NAMED]; /* by rank, then pid */
	/* Apart from it (TWO: the other one) */
	unsigned nodd;
	struct gp_sibling odd[GP_SIB_ODD_NAMED];
	/* Of the same kind and program, those whose place is unknown
	 * (UNREAD): left out of the groups above, named after them (a
	 * majority's "no odd one" is not said while one is unknown). */
	unsigned nunread;
	struct gp_sib_member unread[GP_SIB_ODD_NAMED];
	/* Ranks that wait in the job's collective code for one that exited:
	 * they wait for what never comes (a hang, whatever their threads
	 * say: a rendezvous polls on a timer). */
	bool waits_for_exited;
	/* Every rank of the job (WORLD_SIZE of them) waits in its collective
	 * code: none of them can send what the others wait for. */
	bool all_wait;
	/* The tree is at rest (idle): the ranks apart are no culprit (a
	 * server's rank 0 waits for requests, the others for it). */
	bool at_rest;
	/* The timeline (ODD, TWO; every member's stop known): who stopped
	 * first and when, and the span in which the others did (issue 29:
	 * the first to leave work is the usual culprit).  first_runs: the
	 * others stopped while it still computes. */
	bool timeline;
	struct gp_sib_member first;
	double first_t, rest_from, rest_to;
	bool first_odd, first_runs;
};

/* The processes of one result: each process of the snapshot (its main
 * thread's place), each of the tree's processes that left before it,
 * named by procs (NULL: the snapshot's names only).  busy_pid/busy_cpu:
 * the busiest thread's process and its CPU in the judged phase (0 none).
 * Returns the count written (at most cap). */
size_t gp_siblings_of(const struct gp_stuck *stuck, const struct gp_proctab *procs, int busy_pid,
		      float busy_cpu, unsigned source, struct gp_sibling *out, size_t cap);
/* Shifts the times of s (stop_t, exit_t) by by: results traced apart,
 * each by its start's wall clock. */
void gp_siblings_shift(struct gp_sibling *s, size_t n, double by);

/* Compares them (see above); false, c->kind NONE, when there is nothing
 * to say. */
bool gp_siblings_compare(const struct gp_sibling *s, size_t n, struct gp_sibcmp *c);

#endif
