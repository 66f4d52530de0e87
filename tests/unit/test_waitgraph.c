/* The wait-for graph (model/waitgraph.c, issue 20): where each chain of
 * waits ends, from nodes as a sample records them. */
#include "config.h"
#include "unit.h"
#include "waitgraph.h"
#include "waits.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static struct gp_wg_node node(int pid, int tid, const char *comm, char state, enum gp_wait w,
			      enum gp_edge_how how, int id)
{
	struct gp_wg_node n = { .pid = pid, .ppid = 1, .tid = tid, .comm = comm, .pcomm = comm,
		.state = state, .wait = (uint8_t)w };
	n.on.how = (uint8_t)how;
	n.on.id = id;
	return n;
}

/* A glibc ABBA: two owners each wait for the other; main joins one. */
static void test_cycle(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(10, 10, "main", 'S', GP_WAIT_LOCK, GP_EDGE_JOIN, 11),
		node(10, 11, "locker-a", 'S', GP_WAIT_LOCK, GP_EDGE_MUTEX, 12),
		node(10, 12, "locker-b", 'S', GP_WAIT_LOCK, GP_EDGE_MUTEX, 11),
	};
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 3, 10, &g);
	assert_int_equal(g.ncycle, 2);
	assert_true((g.cyc_tid[0] == 11 && g.cyc_on[0] == 12) || (g.cyc_tid[0] == 12 && g.cyc_on[0] == 11));
	assert_int_equal(g.main_end, GP_END_CYCLE);
	assert_int_equal(g.main_joins, 11);
	assert_int_equal(g.main_blocked_pid, 10);
}

/* yes -> pv -> cat (stopped by a signal): both wait behind cat. */
static void test_stopped_pipeline(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(21, 21, "yes", 'S', GP_WAIT_OUTPUT, GP_EDGE_PIPE, 22),
		node(22, 22, "pv", 'S', GP_WAIT_OUTPUT, GP_EDGE_PIPE, 23),
		node(23, 23, "cat", 'T', GP_WAIT_STOPPED, GP_EDGE_STOPPED, 0),
		node(20, 20, "sh", 'S', GP_WAIT_CHILD, GP_EDGE_NONE, 0),
	};
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 4, 20, &g);
	assert_int_equal(g.stopped_pid, 23);
	assert_string_equal(g.stopped_comm, "cat");
	assert_int_equal(g.stopper_pid, 0);
	assert_int_equal(g.behind, 2);
	assert_int_equal(g.ncycle, 0);
}

/* A pipe whose other end is outside the tree ends outside; one whose
 * peer runs ends in a running thread: nothing stalls. */
static void test_pipe_outside(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(30, 30, "reader", 'S', GP_WAIT_INPUT, GP_EDGE_PIPE, 999),
		node(31, 31, "writer", 'S', GP_WAIT_OUTPUT, GP_EDGE_PIPE, 32),
		node(32, 32, "busy", 'R', GP_WAIT_NONE, GP_EDGE_NONE, 0),
	};
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 3, 30, &g);
	assert_int_equal(g.main_end, GP_END_OUTSIDE);
	assert_int_equal(g.behind, 0);
	assert_int_equal(g.stopped_pid, 0);
}

/* Python's join (no owner field) released by the only other thread,
 * which waits in accept(): the main thread's chain ends outside. */
static void test_released(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(40, 40, "python3", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
		node(40, 41, "server", 'S', GP_WAIT_INPUT, GP_EDGE_NONE, 0),
	};
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 2, 40, &g);
	assert_int_equal(g.released, 1);
	assert_int_equal(g.main_blocked_pid, 0);
	/* Two threads on locks with no owner: nobody is left to release
	 * them, so nothing is released (a Python ABBA). */
	struct gp_wg_node m[] = {
		node(50, 50, "python3", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
		node(50, 51, "a", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
		node(50, 52, "b", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
	};
	gp_waitgraph_judge(m, 3, 50, &g);
	assert_int_equal(g.released, 0);
	assert_int_equal(g.main_blocked_pid, 50);
	/* A releaser that may be busy or unclear keeps the edge unknown. */
	struct gp_wg_node k[] = {
		node(60, 60, "java", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
		node(60, 61, "vm", 'S', GP_WAIT_CONDVAR, GP_EDGE_NONE, 0),
		node(60, 62, "srv", 'S', GP_WAIT_INPUT, GP_EDGE_NONE, 0),
	};
	gp_waitgraph_judge(k, 3, 60, &g);
	assert_int_equal(g.released, 0);
}

/* A flock holder outside the tree is named with its waiters. */
static void test_holder(void **st)
{
	(void)st;
	struct gp_wg_node n[] = { node(70, 70, "flock", 'S', GP_WAIT_LOCK, GP_EDGE_FLOCK, 4242) };
	strcpy(n[0].on.comm, "flock");
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 1, 70, &g);
	assert_int_equal(g.holder_pid, 4242);
	assert_true(g.holder_outside);
	assert_string_equal(g.holder_comm, "flock");
	assert_int_equal(g.holder_waiters, 1);
	assert_int_equal(g.main_end, GP_END_HOLDER);
}

/* A parent and its child each reading their end of one socketpair: the
 * socket edges close a cycle of two processes; with the child's peer
 * outside instead, the parent's chain ends outside. */
static void test_socket_cycle(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(51, 51, "python3", 'S', GP_WAIT_INPUT, GP_EDGE_SOCKET, 50),
		node(50, 50, "python3", 'S', GP_WAIT_INPUT, GP_EDGE_SOCKET, 51),
	};
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 2, 50, &g);
	assert_int_equal(g.ncycle, 2);
	assert_int_equal(g.cyc_how[0], GP_EDGE_SOCKET);
	assert_int_equal(g.main_end, GP_END_CYCLE);
	n[0].on = (struct gp_wait_edge){ .how = GP_EDGE_NONE };
	n[0].wait = GP_WAIT_INPUT; /* accept(): outside */
	gp_waitgraph_judge(n, 2, 50, &g);
	assert_int_equal(g.ncycle, 0);
	assert_int_equal(g.main_end, GP_END_OUTSIDE);
	assert_string_equal(gp_edge_name(GP_EDGE_SOCKET), "socket");
}

static void test_names(void **st)
{
	(void)st;
	for (int h = 1; h < GP_EDGE_COUNT; h++)
		assert_int_equal(gp_edge_from_name(gp_edge_name((enum gp_edge_how)h)), h);
	assert_null(gp_edge_name(GP_EDGE_NONE));
	assert_int_equal(gp_edge_from_name("bogus"), GP_EDGE_NONE);
	assert_int_equal(gp_edge_from_name(NULL), GP_EDGE_NONE);
	struct gp_wg_pt g;
	gp_waitgraph_judge(NULL, 0, 1, &g);
	assert_int_equal(g.edges, 0);
}

/* Chains as long as the input makes them (issue 27): 300 000 threads each
 * joining the next, and 300 000 processes each writing to the next's
 * pipe, flock-waiting at the end of it; a cycle closed around the whole
 * chain.  Followed without a recursion (the default 8 MiB stack held
 * ~100 000 frames of the old one), and the pipes without a scan of every
 * node a hop (quadratic). */
#define LONG_CHAIN 300000
static void test_long_chains(void **st)
{
	(void)st;
	struct gp_wg_node *n = calloc(LONG_CHAIN, sizeof *n);
	assert_non_null(n);
	for (int i = 0; i < LONG_CHAIN; i++)
		n[i] = node(1000, 1000 + i, "w", 'S', GP_WAIT_LOCK, GP_EDGE_JOIN, 1000 + i + 1);
	n[LONG_CHAIN - 1] = node(1000, 1000 + LONG_CHAIN - 1, "w", 'S', GP_WAIT_INPUT, GP_EDGE_NONE, 0);
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, LONG_CHAIN, 1000, &g);
	assert_int_equal(g.main_end, GP_END_OUTSIDE);
	assert_int_equal(g.main_joins, 1000 + LONG_CHAIN - 1);
	assert_int_equal(g.ncycle, 0);

	/* The last joins the first: one cycle of them all. */
	n[LONG_CHAIN - 1] = node(1000, 1000 + LONG_CHAIN - 1, "w", 'S', GP_WAIT_LOCK, GP_EDGE_JOIN, 1000);
	gp_waitgraph_judge(n, LONG_CHAIN, 1000, &g);
	assert_int_equal(g.main_end, GP_END_CYCLE);
	assert_int_equal(g.ncycle, GP_WG_MEMBERS);

	/* Processes: each writes to the next's pipe; the last waits on a
	 * flock held by a process outside the tree. */
	for (int i = 0; i < LONG_CHAIN; i++)
		n[i] = node(2000 + i, 2000 + i, "p", 'S', GP_WAIT_OUTPUT, GP_EDGE_PIPE, 2000 + i + 1);
	n[LONG_CHAIN - 1] = node(2000 + LONG_CHAIN - 1, 2000 + LONG_CHAIN - 1, "p", 'S', GP_WAIT_LOCK,
				 GP_EDGE_FLOCK, 99);
	gp_waitgraph_judge(n, LONG_CHAIN, 2000, &g);
	assert_int_equal(g.main_end, GP_END_HOLDER);
	assert_int_equal(g.holder_pid, 99);
	assert_true(g.holder_outside);
	free(n);
}

/* A worker forked while its parent's logger held a mutex: its lock names
 * the logger (tid 41) as owner, no thread of pid 42 -- the chain ends in
 * an orphan, named with where the owner lives; the parent's main thread
 * waits for its child, the logger sleeps: no holder, no cycle. */
static void test_orphan(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(40, 40, "fork-held", 'S', GP_WAIT_CHILD, GP_EDGE_NONE, 0),
		node(40, 41, "logger", 'S', GP_WAIT_TIMER, GP_EDGE_NONE, 0),
		node(42, 42, "worker", 'S', GP_WAIT_LOCK, GP_EDGE_ORPHAN, 41),
	};
	n[2].on.of = 40;
	snprintf(n[2].on.comm, sizeof n[2].on.comm, "fork-held");
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 3, 40, &g);
	assert_int_equal(g.orphan_waiters, 1);
	assert_int_equal(g.orphan_waiter, 42);
	assert_int_equal(g.orphan_pid, 42);
	assert_int_equal(g.orphan_owner, 41);
	assert_int_equal(g.orphan_of, 40);
	assert_string_equal(g.orphan_of_comm, "fork-held");
	assert_string_equal(g.orphan_comm, "worker");
	assert_int_equal(g.holder_pid, 0);
	assert_int_equal(g.ncycle, 0);
	assert_int_equal(g.main_blocked_pid, 42);
	assert_string_equal(gp_edge_name(GP_EDGE_ORPHAN), "orphan");
	assert_int_equal(gp_edge_from_name("orphan"), GP_EDGE_ORPHAN);
}

/* A DataLoader worker's copy of a lock its parent's thread held at the
 * fork (CPython's: a semaphore, no owner field): its only thread on a
 * private futex -- no thread of it can release it.  Two threads of one
 * process on the same shape are a pool's, not an orphan; a shared futex
 * (another process may post it) is none either. */
static void test_lone_private_lock(void **st)
{
	(void)st;
	struct gp_wg_node n[] = {
		node(50, 50, "loader", 'S', GP_WAIT_CHILD, GP_EDGE_NONE, 0),
		node(51, 51, "worker", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
		node(52, 52, "pooled", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
		node(52, 53, "pooled", 'S', GP_WAIT_INPUT, GP_EDGE_NONE, 0),
		node(54, 54, "shared", 'S', GP_WAIT_LOCK, GP_EDGE_FUTEX, 0),
	};
	n[4].on.shared = true;
	struct gp_wg_pt g;
	gp_waitgraph_judge(n, 5, 50, &g);
	assert_int_equal(g.orphan_waiters, 1);
	assert_int_equal(g.orphan_waiter, 51);
	assert_int_equal(g.orphan_owner, 0);
	assert_int_equal(g.orphan_of, 0);
}

UNIT_MAIN(
	cmocka_unit_test(test_cycle),
	cmocka_unit_test(test_lone_private_lock),
	cmocka_unit_test(test_orphan),
	cmocka_unit_test(test_long_chains),
	cmocka_unit_test(test_stopped_pipeline),
	cmocka_unit_test(test_pipe_outside),
	cmocka_unit_test(test_released),
	cmocka_unit_test(test_holder),
	cmocka_unit_test(test_socket_cycle),
	cmocka_unit_test(test_names))
