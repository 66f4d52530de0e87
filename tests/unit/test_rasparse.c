/* NCCL's RAS answers (src/model/rasparse.c): both shapes NCCL writes
 * (src/ras/client_support.cc: JSON from 2.28.7, text before), a stranger's
 * bytes refused with a reason, bounds kept, and the note the verdict reads
 * (who lags, whether the counts moved between the first and last read). */
#include "config.h"
#include "unit.h"
#include "rasparse.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *s, bool json_format, char *why)
{
	return gp_ras_parse(s, strlen(s), json_format, why, 96);
}

/* A `ras` line at t from an answer. */
static json_t *line_of(double t, const char *answer, bool json_format)
{
	char why[96];
	json_t *got = parse(answer, json_format, why);
	assert_non_null(got);
	json_t *l = json_pack("{s:s, s:f, s:s, s:s}", "type", "ras", "t", t, "addr",
			      "127.0.0.1:28028", "state", "ok");
	json_object_update(l, got);
	json_decref(got);
	return l;
}

static char *two_ranks(int n0, int n1)
{
	static char b[512];
	snprintf(b, sizeof b,
		 "{\"nccl_version\": \"2.29.1\", \"communicators\": [{\"hash\": \"0xab\", \"size\": 2, "
		 "\"ranks\": [{\"rank\": 0, \"pid\": 10, \"collective_counts\": {\"AllReduce\": %d}},"
		 " {\"rank\": 1, \"pid\": 11, \"collective_counts\": {\"AllReduce\": %d}}],"
		 " \"missing_ranks\": []}]}\n", n0, n1);
	return b;
}

static void test_json_lag_and_moves(void **st)
{
	(void)st;
	struct gp_ras_note *n = calloc(1, sizeof *n);
	json_t *a = line_of(2.0, two_ranks(7, 6), true), *b = line_of(9.0, two_ranks(9, 6), true);
	gp_ras_note_add(n, a);
	gp_ras_note_add(n, b);
	assert_true(n->s.lag);
	assert_false(n->s.missing);
	assert_int_equal(n->s.rank, 1);
	assert_int_equal(n->s.pid, 11);
	assert_string_equal(n->s.op, "AllReduce");
	assert_int_equal(n->s.count, 6);
	assert_int_equal(n->s.max, 9);
	assert_true(n->s.moved_any);
	assert_false(n->s.lag_moved);
	assert_string_equal(n->s.version, "2.29.1");
	assert_int_equal(n->s.ok_reads, 2);
	/* equal counts: nobody lags */
	memset(n, 0, sizeof *n);
	json_t *c = line_of(1.0, two_ranks(5, 5), true);
	gp_ras_note_add(n, c);
	assert_false(n->s.lag);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	free(n);
}

static void test_json_missing_rank(void **st)
{
	(void)st;
	struct gp_ras_note *n = calloc(1, sizeof *n);
	json_t *l = line_of(3.0,
		"{\"nccl_version\": \"2.29.1\", \"communicators\": [{\"hash\": \"0x1\", \"size\": 2, "
		"\"ranks\": [{\"rank\": 0, \"pid\": 11, \"collective_counts\": {\"AllReduce\": 5}}], "
		"\"missing_ranks\": [{\"rank\": 1, \"pid\": 12, \"status\": {\"unresponsive\": true, "
		"\"considered_dead\": true}}]}]}", true);
	gp_ras_note_add(n, l);
	assert_true(n->s.lag && n->s.missing && n->s.dead);
	assert_int_equal(n->s.rank, 1);
	assert_int_equal(n->s.pid, 12);
	assert_int_equal(n->s.ranks, 2);
	json_decref(l);
	free(n);
}

/* NCCL 2.26's text: a group of three, one outlier listed. */
static void test_text_outlier(void **st)
{
	(void)st;
	const char *t =
		"NCCL version 2.26.2+cuda12.2 compiled with CUDA 12.2\n"
		"Communicators... (0.00s)\n=============\n\nWarnings\n========\n\n"
		"#0-0 (27a079b828ff1a75) MISMATCH\n"
		"  Communicator ranks have different AllReduce operation counts\n"
		"  3 ranks have launched up to operation 6650\n"
		"  Rank 3 has launched up to operation 6649 -- GPU 3 managed by process 77 on node 10.0.0.1\n\n";
	struct gp_ras_note *n = calloc(1, sizeof *n);
	json_t *l = line_of(1.0, t, false);
	assert_true(json_is_true(json_object_get(l, "partial")));
	gp_ras_note_add(n, l);
	assert_true(n->s.lag);
	assert_int_equal(n->s.rank, 3);
	assert_int_equal(n->s.pid, 77);
	assert_int_equal(n->s.count, 6649);
	assert_int_equal(n->s.max, 6650);
	assert_string_equal(n->s.comm, "0x27a079b828ff1a75");
	assert_string_equal(n->s.version, "2.26.2+cuda12.2");
	json_decref(l);
	free(n);
}

static void test_strangers_refused(void **st)
{
	(void)st;
	char why[96];
	assert_null(parse("SSH-2.0-OpenSSH_9.2\r\n", false, why));
	assert_non_null(strstr(why, "not NCCL's RAS"));
	assert_null(parse("[1, 2]", true, why));
	assert_null(parse("{\"a\": 1}", true, why));
	assert_non_null(strstr(why, "communicators"));
	assert_null(parse("{\"nccl_version\": ", true, why));
	assert_null(gp_ras_parse("", 0, true, why, sizeof why));
	assert_string_equal(why, "an empty answer");
	/* wrong types: no rank kept, no crash */
	json_t *j = parse("{\"communicators\": [7, {\"ranks\": [{\"rank\": \"x\"}, {\"rank\": -1}],"
			  " \"hash\": 5}]}", true, why);
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(j, "comms"), 0),
							 "ranks")), 0);
	json_decref(j);
}

static void test_bounds(void **st)
{
	(void)st;
	json_t *ranks = json_array();
	for (int i = 0; i < GP_RAS_MAX_RANKS + 44; i++)
		json_array_append_new(ranks, json_pack("{s:i, s:i, s:{s:i}}", "rank", i, "pid", 100 + i,
						       "collective_counts", "AllReduce", i));
	json_t *doc = json_pack("{s:[{s:s, s:o}]}", "communicators", "hash", "0x1\x01\x7f", "ranks", ranks);
	char *s = json_dumps(doc, 0), why[96];
	json_t *j = parse(s, true, why);
	json_t *c = json_array_get(json_object_get(j, "comms"), 0);
	assert_int_equal(json_array_size(json_object_get(c, "ranks")), GP_RAS_MAX_RANKS);
	assert_string_equal(json_string_value(json_object_get(c, "hash")), "0x1??");
	free(s);
	json_decref(doc);
	json_decref(j);
}

UNIT_MAIN(cmocka_unit_test(test_json_lag_and_moves), cmocka_unit_test(test_json_missing_rank),
	  cmocka_unit_test(test_text_outlier), cmocka_unit_test(test_strangers_refused),
	  cmocka_unit_test(test_bounds))
