/* The hang snapshot the verdict carries (src/model/stuck.c): threads with
 * one stack are one entry with a count, so a 10 000-thread process keeps
 * every distinct stack -- not its first 32 threads in /proc order, which
 * named "the frame most threads wait in" after the 32 oldest (issue 18). */
#include "config.h"
#include "unit.h"
#include "stuck.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static json_t *thread(int tid, const char *state, const char *sym)
{
	return json_pack("{s:i, s:s, s:s, s:[{s:s, s:s, s:s}]}", "tid", tid, "comm", "srv",
			 "state", state, "frames", "symbol", sym, "soname", "srv",
			 "module", "/usr/bin/srv");
}

static void test_distinct_stacks_kept(void **st)
{
	(void)st;
	json_t *threads = json_array();
	json_array_append_new(threads, thread(100, "S", "main_loop"));   /* the leader */
	/* 40 idle pool threads first (the oldest in /proc order), then the
	 * ones that say something: 3 in a lock, 1 in a read. */
	for (int i = 0; i < 40; i++)
		json_array_append_new(threads, thread(101 + i, "S", "pool_wait"));
	for (int i = 0; i < 3; i++)
		json_array_append_new(threads, thread(200 + i, "S", "acquire_lock"));
	json_array_append_new(threads, thread(300, "S", "read_block"));
	json_t *line = json_pack("{s:s, s:f, s:s, s:i, s:o}", "type", "stacks", "t", 5.0,
				 "why", "hang", "pid", 100, "threads", threads);
	struct gp_stuck s;
	gp_stuck_init(&s);
	gp_stuck_add(&s, line);
	assert_int_equal(s.total, 45);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.dropped, 0);
	unsigned pool = 0, lock = 0, rd = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (!strcmp(s.th[i].wait_frame, "pool_wait"))
			pool = s.th[i].count;
		if (!strcmp(s.th[i].wait_frame, "acquire_lock"))
			lock = s.th[i].count;
		if (!strcmp(s.th[i].wait_frame, "read_block"))
			rd = s.th[i].count;
	}
	assert_int_equal(pool, 40);
	assert_int_equal(lock, 3);
	assert_int_equal(rd, 1);
	char f[64];
	assert_int_equal(gp_stuck_common_frame(&s, f, sizeof f), 40);
	assert_string_equal(f, "pool_wait");
	json_decref(line);
}

static void test_leader_its_own(void **st)
{
	(void)st;
	json_t *threads = json_array();
	json_array_append_new(threads, thread(7, "S", "pthread_join"));
	json_array_append_new(threads, thread(8, "S", "pthread_join"));
	json_t *line = json_pack("{s:s, s:f, s:s, s:i, s:o}", "type", "stacks", "t", 1.0,
				 "why", "end", "pid", 7, "threads", threads);
	struct gp_stuck s;
	gp_stuck_init(&s);
	gp_stuck_add(&s, line);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.th[0].tid, 7);
	json_decref(line);
}

static void test_many_distinct(void **st)
{
	(void)st;
	json_t *threads = json_array();
	char sym[32];
	for (int i = 0; i < GP_STUCK_MAX + 10; i++) {
		snprintf(sym, sizeof sym, "f%d", i);
		json_array_append_new(threads, thread(1000 + i, "S", sym));
	}
	json_t *line = json_pack("{s:s, s:f, s:s, s:i, s:o}", "type", "stacks", "t", 1.0,
				 "why", "end", "pid", 1, "threads", threads);
	struct gp_stuck s;
	gp_stuck_init(&s);
	gp_stuck_add(&s, line);
	assert_int_equal(s.n, GP_STUCK_MAX);
	assert_int_equal(s.dropped, 10);
	assert_int_equal(s.total, GP_STUCK_MAX + 10);
	json_decref(line);
}

/* 50 threads of 50 names (a JVM's) in one stack, and the leader: 50
 * entries for 32 slots, and the count of the common frame is still 50,
 * as the report's stacks section groups them (issue 20: "31 of 51"). */
static void test_common_frame_counts_all(void **st)
{
	(void)st;
	json_t *threads = json_array();
	json_array_append_new(threads, thread(1, "S", "JavaMain"));
	for (int i = 0; i < 50; i++) {
		json_t *t = thread(2 + i, "S", "PlatformMonitor::wait");
		char comm[16];
		snprintf(comm, sizeof comm, "worker-%d", i);
		json_object_set_new(t, "comm", json_string(comm));
		json_array_append_new(threads, t);
	}
	json_t *line = json_pack("{s:s, s:f, s:s, s:i, s:o}", "type", "stacks", "t", 1.0,
				 "why", "hang", "pid", 1, "threads", threads);
	struct gp_stuck s;
	gp_stuck_init(&s);
	gp_stuck_add(&s, line);
	assert_int_equal(s.total, 51);
	assert_int_equal(s.n, GP_STUCK_MAX);
	char f[64];
	assert_int_equal(gp_stuck_common_frame(&s, f, sizeof f), 50);
	assert_string_equal(f, "PlatformMonitor::wait");
	json_decref(line);
}

/* A library's Python frame waits (torch's all_reduce): the user's line
 * under it is kept (user_frame); the user's own frame needs none. */
static void test_user_frame(void **st)
{
	(void)st;
	json_t *lib = json_pack("[{s:s, s:s, s:[{s:s, s:s, s:i}, {s:s, s:s, s:i}]}]",
		"symbol", "_PyEval_EvalFrameDefault", "module", "/usr/bin/python3.11", "python",
		"function", "all_reduce", "file",
		"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "line", 1541,
		"function", "reduce_grads", "file", "/job/train.py", "line", 21);
	json_t *own = json_pack("[{s:s, s:s, s:[{s:s, s:s, s:i}]}]",
		"symbol", "_PyEval_EvalFrameDefault", "module", "/usr/bin/python3.11", "python",
		"function", "load_next_batch", "file", "/job/train.py", "line", 25);
	json_t *line = json_pack("{s:s, s:f, s:s, s:i, s:[{s:i, s:s, s:s, s:o}]}", "type", "stacks",
				 "t", 1.0, "why", "hang", "pid", 5, "threads", "tid", 5, "comm", "python3",
				 "state", "S", "frames", lib);
	json_t *line2 = json_pack("{s:s, s:f, s:s, s:i, s:[{s:i, s:s, s:s, s:o}]}", "type", "stacks",
				  "t", 1.0, "why", "hang", "pid", 6, "threads", "tid", 6, "comm", "python3",
				  "state", "S", "frames", own);
	struct gp_stuck s;
	gp_stuck_init(&s);
	gp_stuck_add(&s, line);
	gp_stuck_add(&s, line2);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.th[0].wait_frame, "all_reduce (distributed_c10d.py:1541)");
	assert_string_equal(s.th[0].user_frame, "reduce_grads (train.py:21)");
	assert_string_equal(s.th[1].wait_frame, "load_next_batch (train.py:25)");
	assert_string_equal(s.th[1].user_frame, "");
	json_decref(line);
	json_decref(line2);
}

UNIT_MAIN(cmocka_unit_test(test_distinct_stacks_kept), cmocka_unit_test(test_leader_its_own),
	  cmocka_unit_test(test_many_distinct), cmocka_unit_test(test_common_frame_counts_all),
	  cmocka_unit_test(test_user_frame))
