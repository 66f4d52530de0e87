/* model/point.c: the one builder of the compact point, and what the
 * verdict makes of the waits it tallies.
 *  - a reaped child's io, which the kernel adds to its parent's
 *    /proc/PID/io, is counted once (the child's), never as the parent's
 *    output (issue 11: an idle postmaster read "write() +264 MiB/s");
 *  - a child born and reaped between two samples is the tree's output;
 *  - the tree's CPU time only grows when a process exits;
 *  - every thread waiting outside is idle, locks with nobody waiting
 *    outside are hang-blocked, both together are idle at low confidence;
 *  - a busy thread with no output is "computing or spinning", never high. */
#include "config.h"
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "point.h"
#include "verdict.h"
#include "verdict_text.h"

/* The verdict's summary in words (render/verdict_text.c). */
static const char *summary_of(const struct gp_verdict *v)
{
	static struct strbuf sb = STRBUF_INIT;
	strbuf_reset(&sb);
	gp_verdict_summary(&sb, v);
	return sb.buf;
}

static struct gp_pview proc(int pid, int ppid, uint64_t wchar, double utime)
{
	struct gp_pview p = { 0 };
	p.pid = pid;
	p.ppid = ppid;
	p.comm = pid == 1000 ? "parent" : "child";
	p.followed = true;
	p.state = 'S';
	p.have_io = true;
	p.io_wchar = wchar;
	p.utime = utime;
	return p;
}

static struct gp_tview sleeper(int tid, enum gp_wait w)
{
	struct gp_tview t = { 0 };
	t.tid = tid;
	t.comm = "t";
	t.state = w == GP_WAIT_NONE ? 'R' : 'S';
	t.have_syscall = true;
	t.sc_nr = -2;
	t.wait = w;
	return t;
}

static void test_reaped_child_io_is_not_the_parent_s(void **state)
{
	(void)state;
	struct gp_point_builder *b = gp_point_builder_new();
	struct gp_point pt;
	struct gp_tview th = sleeper(1000, GP_WAIT_CHILD);
	/* t=0: parent 1 MiB written (before the trace), child 5 MiB */
	gp_point_begin(b, &pt, 0, true);
	struct gp_pview c = proc(1001, 1000, 5u << 20, 1.0);
	struct gp_pview p = proc(1000, 1, 1u << 20, 0.5);
	gp_point_add(b, &pt, &c, &th, 1);
	gp_point_add(b, &pt, &p, &th, 1);
	gp_point_end(b, &pt);
	uint64_t w0 = pt.io_wchar;
	assert_int_equal(w0, 6u << 20);
	/* t=1: the child wrote 1 MiB more */
	gp_point_begin(b, &pt, 1, false);
	c.io_wchar = 6u << 20;
	gp_point_add(b, &pt, &c, &th, 1);
	gp_point_add(b, &pt, &p, &th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.io_wchar, 7u << 20);
	assert_int_equal(pt.out_pid, 1001);
	/* t=2: the child is reaped: the parent's counter holds its 6 MiB */
	gp_point_begin(b, &pt, 2, false);
	p.io_wchar = (1u << 20) + (6u << 20);
	gp_point_add(b, &pt, &p, &th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.io_wchar, 7u << 20);   /* no jump: the same bytes */
	assert_int_equal(pt.procs_exited, 1);
	assert_true(pt.utime + pt.stime >= 1.5);   /* the child's CPU stays */
	/* t=3: a child born and reaped in between wrote 2 MiB: output */
	gp_point_begin(b, &pt, 3, false);
	p.io_wchar += 2u << 20;
	gp_point_add(b, &pt, &p, &th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.io_wchar, 9u << 20);
	gp_point_builder_free(b);
}

/* A tree's thread counts add up (issue 20: "threads 1 -> 3 (0 created)"):
 * a new process's threads are created threads of the tree, a gone
 * process's threads exited ones. */
static void test_tree_threads_add_up(void **state)
{
	(void)state;
	struct gp_point_builder *b = gp_point_builder_new();
	struct gp_point pt;
	struct gp_tview th[3] = { sleeper(1000, GP_WAIT_CHILD), sleeper(1001, GP_WAIT_LOCK),
				  sleeper(1002, GP_WAIT_LOCK) };
	struct gp_pview p = proc(1000, 1, 0, 0), c = proc(1001, 1000, 0, 0);
	gp_point_begin(b, &pt, 0, true);
	gp_point_add(b, &pt, &p, th, 1);
	gp_point_end(b, &pt);
	uint32_t first = pt.threads;
	/* t=1: a child of 3 threads appeared (its sampler counts none created) */
	gp_point_begin(b, &pt, 1, false);
	gp_point_add(b, &pt, &c, th, 3);
	gp_point_add(b, &pt, &p, th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.procs_created, 1);
	assert_int_equal(pt.threads_created, 3);
	assert_int_equal(first + pt.threads_created - pt.threads_exited, pt.threads);
	/* t=2: it is gone, its 3 threads with it */
	gp_point_begin(b, &pt, 2, false);
	gp_point_add(b, &pt, &p, th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.procs_exited, 1);
	assert_int_equal(pt.threads_exited, 3);
	assert_int_equal(pt.threads, 1);
	gp_point_builder_free(b);
}

static void test_watched_child_io_is_subtracted(void **state)
{
	(void)state;
	/* --no-children: the child is watched for its io only. */
	struct gp_point_builder *b = gp_point_builder_new();
	struct gp_point pt;
	struct gp_tview th = sleeper(1000, GP_WAIT_CHILD);
	struct gp_pview p = proc(1000, 1, 0, 0);
	struct gp_pview c = proc(1001, 1000, 64u << 20, 0);
	c.followed = false;
	gp_point_begin(b, &pt, 0, true);
	gp_point_add(b, &pt, &c, NULL, 0);
	gp_point_add(b, &pt, &p, &th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.io_wchar, 0);
	assert_int_equal(pt.procs, 1);
	gp_point_begin(b, &pt, 1, false);
	p.io_wchar = 64u << 20;
	gp_point_add(b, &pt, &p, &th, 1);
	gp_point_end(b, &pt);
	assert_int_equal(pt.io_wchar, 0);
	gp_point_builder_free(b);
}

/* A flat trace of n samples whose threads wait as w[] says. */
static void flat(struct gp_point *p, size_t n, const enum gp_wait *w, size_t nw, double cpu_s)
{
	struct gp_point_builder *b = gp_point_builder_new();
	struct gp_tview th[8];
	for (size_t k = 0; k < nw; k++)
		th[k] = sleeper(2000 + (int)k, w[k]);
	for (size_t i = 0; i < n; i++) {
		struct gp_pview pv = proc(1000, 1, 1u << 20, cpu_s * (double)i);
		gp_point_begin(b, &p[i], (double)i, i == 0);
		gp_point_add(b, &p[i], &pv, th, nw);
		gp_point_end(b, &p[i]);
	}
	gp_point_builder_free(b);
}

/* The verdict on flat(n, w, nw, cpu_s), n at most 40; the caller frees it. */
static struct gp_verdict *verdict_of(size_t n, const enum gp_wait *w, size_t nw, double cpu_s)
{
	struct gp_point p[40];
	assert_true(n <= 40);
	flat(p, n, w, nw, cpu_s);
	struct gp_verdict *v = malloc(sizeof *v);
	assert_non_null(v);
	struct gp_verdict_opts o = { .hang_after = 5, .page_size = 4096 };
	gp_verdict_compute(p, n, &o, v);
	return v;
}

/* A child whose counters read lower than before (a zombie: its exited
 * threads' io left /proc/PID/io with them) never makes the tree's io go
 * down: issue 32 read "io read 16384 PiB", a wrapped difference. */
static void test_tree_io_never_goes_down(void **state)
{
	(void)state;
	struct gp_point_builder *b = gp_point_builder_new();
	struct gp_point p[3];
	uint64_t child_w[3] = { 5000, 9000, 100 };
	for (int i = 0; i < 3; i++) {
		struct gp_pview c = proc(1001, 1000, child_w[i], 0), par = proc(1000, 1, 1000, 0);
		gp_point_begin(b, &p[i], (double)i, i == 0);
		gp_point_add(b, &p[i], &c, NULL, 0);
		gp_point_add(b, &p[i], &par, NULL, 0);
		gp_point_end(b, &p[i]);
	}
	assert_true(p[1].io_wchar >= p[0].io_wchar);
	assert_true(p[2].io_wchar >= p[1].io_wchar);
	assert_int_equal(p[2].io_wchar, 10000);
	gp_point_builder_free(b);
}

/* Two threads on mutexes; in the samples where cycle_at[i] holds, each
 * names the other as owner (a cycle), else thread 2001 names a third
 * thread, 2002, which sleeps on a signal.  Issue 27: a waiter's stale
 * owner joined a fresh edge into a cycle that was never there. */
static struct gp_verdict *mutex_verdict(size_t n, const bool *cycle_at)
{
	struct gp_point p[40];
	struct gp_point_builder *b = gp_point_builder_new();
	for (size_t i = 0; i < n; i++) {
		struct gp_tview th[3] = { sleeper(2000, GP_WAIT_LOCK), sleeper(2001, GP_WAIT_LOCK),
					  sleeper(2002, GP_WAIT_SIGNAL) };
		th[0].on = (struct gp_wait_edge){ .how = GP_EDGE_MUTEX, .id = 2001 };
		th[1].on = (struct gp_wait_edge){ .how = GP_EDGE_MUTEX, .id = cycle_at[i] ? 2000 : 2002 };
		struct gp_pview pv = proc(1000, 1, 1u << 20, 0);
		gp_point_begin(b, &p[i], (double)i, i == 0);
		gp_point_add(b, &p[i], &pv, th, 3);
		gp_point_end(b, &p[i]);
	}
	gp_point_builder_free(b);
	struct gp_verdict *v = malloc(sizeof *v);
	assert_non_null(v);
	struct gp_verdict_opts o = { .hang_after = 5, .page_size = 4096 };
	gp_verdict_compute(p, n, &o, v);
	return v;
}

static void test_cycle_once_is_no_deadlock(void **state)
{
	(void)state;
	bool at[20] = { 0 };
	at[19] = true; /* the last sample only: one reading across a hand-over */
	struct gp_verdict *v = mutex_verdict(20, at);
	assert_null(strstr(summary_of(v), "each waits on the next"));
	free(v);
	for (size_t i = 0; i < 20; i++)
		at[i] = i % 2; /* every other sample: never twice in a row */
	v = mutex_verdict(20, at);
	assert_null(strstr(summary_of(v), "each waits on the next"));
	free(v);
}

static void test_cycle_twice_is_a_deadlock(void **state)
{
	(void)state;
	bool at[20];
	for (size_t i = 0; i < 20; i++)
		at[i] = i >= 18; /* the last two samples */
	struct gp_verdict *v = mutex_verdict(20, at);
	assert_string_equal(gp_class_name(v->cls), "hang-blocked");
	assert_string_equal(gp_conf_name(v->confidence), "high");
	assert_non_null(strstr(summary_of(v), "deadlock: "));
	assert_non_null(strstr(summary_of(v), "each waits on the next"));
	assert_non_null(strstr(summary_of(v), "thread 2000"));
	assert_non_null(strstr(summary_of(v), "thread 2001"));
	free(v);
}

static void test_outside_waits_are_idle(void **state)
{
	(void)state;
	enum gp_wait w[] = { GP_WAIT_INPUT, GP_WAIT_TIMER, GP_WAIT_SIGNAL };
	struct gp_verdict *v = verdict_of(20, w, 3, 0);
	assert_string_equal(gp_class_name(v->cls), "idle");
	assert_string_equal(gp_conf_name(v->confidence), "high");
	free(v);
}

static void test_locks_alone_are_blocked(void **state)
{
	(void)state;
	enum gp_wait w[] = { GP_WAIT_LOCK, GP_WAIT_LOCK, GP_WAIT_CHILD };
	struct gp_verdict *v = verdict_of(20, w, 3, 0);
	assert_string_equal(gp_class_name(v->cls), "hang-blocked");
	/* both waits on one futex word? here none was named: no address */
	assert_null(strstr(summary_of(v), "0x"));
	free(v);
}

static void test_locks_beside_outside_waits_are_unsure(void **state)
{
	(void)state;
	enum gp_wait w[] = { GP_WAIT_LOCK, GP_WAIT_INPUT };
	struct gp_verdict *v = verdict_of(20, w, 2, 0);
	assert_string_equal(gp_class_name(v->cls), "idle");
	assert_string_equal(gp_conf_name(v->confidence), "low");
	assert_non_null(strstr(summary_of(v), "see the stacks"));
	free(v);
}

static void test_wakeups_alone_are_low(void **state)
{
	(void)state;
	enum gp_wait w[] = { GP_WAIT_WAKEUP };
	struct gp_verdict *v = verdict_of(20, w, 1, 0);
	assert_string_equal(gp_conf_name(v->confidence), "low");
	free(v);
}

static void test_busy_user_is_computing_or_spinning(void **state)
{
	(void)state;
	enum gp_wait w[] = { GP_WAIT_NONE };
	struct gp_verdict *v = verdict_of(40, w, 1, 1.0);   /* one core, user time */
	assert_string_equal(gp_class_name(v->cls), "hang-busy-user");
	assert_string_not_equal(gp_conf_name(v->confidence), "high");
	assert_non_null(strstr(summary_of(v), "computing or spinning"));
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reaped_child_io_is_not_the_parent_s),
	cmocka_unit_test(test_tree_threads_add_up),
		cmocka_unit_test(test_watched_child_io_is_subtracted),
		cmocka_unit_test(test_tree_io_never_goes_down),
		cmocka_unit_test(test_cycle_once_is_no_deadlock),
		cmocka_unit_test(test_cycle_twice_is_a_deadlock),
		cmocka_unit_test(test_outside_waits_are_idle),
		cmocka_unit_test(test_locks_alone_are_blocked),
		cmocka_unit_test(test_locks_beside_outside_waits_are_unsure),
		cmocka_unit_test(test_wakeups_alone_are_low),
		cmocka_unit_test(test_busy_user_is_computing_or_spinning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
