/* Format 3's thread references (src/model/threadref.c, issue 21): a
 * reference reads back as the thread's last whole record, with no CPU;
 * a run of them by tid range; hostile ranges and references to nothing
 * cost nothing and invent nothing. */
#include "config.h"
#include "unit.h"
#include "threadref.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

static json_t *sample(const char *threads)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "{\"type\":\"sample\",\"pid\":7,\"threads\":%s}", threads);
	json_t *j = json_loads(buf, 0, NULL);
	assert_non_null(j);
	return j;
}

static const char *str(json_t *th, const char *k)
{
	return json_string_value(json_object_get(th, k));
}

static void test_single_run_and_wait(void **st)
{
	(void)st;
	struct gp_threadref *r = gp_threadref_new();
	json_t *a = sample("[{\"tid\":7,\"state\":\"S\",\"wait\":\"signal\",\"cpu_pct\":3.5,\"new\":true},"
			   "{\"tid\":8,\"state\":\"S\",\"wait\":\"lock\",\"wait_ns\":10},"
			   "{\"tid\":9,\"state\":\"S\",\"wait\":\"lock\"},"
			   "{\"tid\":10,\"state\":\"D\",\"wait\":\"disk\",\"kernel\":[\"x\"]}]");
	assert_int_equal(gp_threadref_resolve(r, a), 0);
	json_t *b = sample("[{\"tid\":7,\"same\":1},{\"same\":[8,10]}]");
	assert_int_equal(gp_threadref_resolve(r, b), 4);
	json_t *th = json_object_get(b, "threads");
	assert_int_equal(json_array_size(th), 4);
	json_t *t7 = json_array_get(th, 0);
	assert_string_equal(str(t7, "wait"), "signal");
	assert_true(json_real_value(json_object_get(t7, "cpu_pct")) == 0);
	assert_null(json_object_get(t7, "new"));
	assert_true(json_is_true(json_object_get(t7, "unchanged")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(th, 2), "tid")), 9);
	assert_null(json_object_get(json_array_get(th, 3), "kernel"));
	/* A reference to a reference: still the whole record; wait_ns moves. */
	json_t *c = sample("[{\"same\":[7,9]},{\"tid\":10,\"same\":1,\"wait_ns\":99}]");
	assert_int_equal(gp_threadref_resolve(r, c), 4);
	th = json_object_get(c, "threads");
	assert_string_equal(str(json_array_get(th, 1), "wait"), "lock");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(th, 3), "wait_ns")), 99);
	assert_string_equal(str(json_array_get(th, 3), "state"), "D");
	/* The record itself was not touched by the override. */
	assert_null(json_object_get(json_array_get(json_object_get(a, "threads"), 3), "wait_ns"));
	json_decref(a);
	json_decref(b);
	json_decref(c);
	gp_threadref_free(r);
}

static void test_hostile(void **st)
{
	(void)st;
	struct gp_threadref *r = gp_threadref_new();
	json_t *a = sample("[{\"tid\":5,\"state\":\"S\"}]");
	gp_threadref_resolve(r, a);
	/* A huge range walks the table, not 2^31 tids; nothing to nothing. */
	json_t *b = sample("[{\"same\":[1,2147483647]},{\"same\":[-5,3]},{\"same\":\"x\"},"
			   "{\"tid\":99,\"same\":1},{\"same\":[9,1]},7]");
	assert_int_equal(gp_threadref_resolve(r, b), 1);
	json_t *th = json_object_get(b, "threads");
	assert_string_equal(str(json_array_get(th, 0), "state"), "S");
	/* the reference to nothing stays a thread with only a tid */
	bool kept = false;
	size_t i;
	json_t *t;
	json_array_foreach(th, i, t)
		kept |= json_integer_value(json_object_get(t, "tid")) == 99 && !json_object_get(t, "state");
	assert_true(kept);
	/* only the sample just before can be referred to */
	json_t *c = sample("[{\"tid\":5,\"same\":1}]");
	json_t *d = sample("[]");
	gp_threadref_resolve(r, d);
	gp_threadref_resolve(r, c);
	assert_null(json_object_get(json_array_get(json_object_get(c, "threads"), 0), "state"));
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(d);
	gp_threadref_free(r);
}

UNIT_MAIN(cmocka_unit_test(test_single_run_and_wait), cmocka_unit_test(test_hostile))
