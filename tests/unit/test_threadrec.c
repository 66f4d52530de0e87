/* Format 4's delta records (src/tracer/threadrec.c, issue 21) read back
 * by src/model/threadref.c: a thread written as deltas sample after
 * sample resolves, each sample, to exactly the whole record the tracer
 * would have written instead.  Randomised over every member that can
 * change, appear or go, with a fixed seed. */
#include "config.h"
#include "unit.h"
#include "jsonw.h"
#include "tasks.h"
#include "threadrec.h"
#include "threadref.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define NT 6

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* One step of a thread's life: what a sample could read of it next. */
static void step(struct gp_thread *th, enum gp_wait *wait, struct gp_wait_edge *on, char *kstack)
{
	static const char *const wchans[] = { "hrtimer_nanosleep", "futex_wait_queue", "do_epoll_wait", "0" };
	static const char *const comms[] = { "worker", "worker-2", "python3" };
	static const char states[] = "RSDT";
	th->is_new = false;
	uint64_t d_run = rnd(4) ? rnd(5000000) : 0;
	th->d_run_ns = d_run;
	th->run_ns += d_run;
	th->wait_ns += rnd(3) ? rnd(100000) : 0;
	th->d_utime = rnd(3) ? 0 : rnd(50);
	th->d_stime = rnd(3) ? 0 : rnd(20);
	th->st.utime += th->d_utime;
	th->st.stime += th->d_stime;
	th->st.minflt += rnd(2) ? 0 : rnd(1000);
	th->st.majflt += rnd(8) ? 0 : 1;
	th->vcsw += rnd(4);
	th->nvcsw += rnd(2);
	if (!rnd(4))
		th->st.processor = (int)rnd(16);
	if (!rnd(6))
		th->st.state = states[rnd(4)];
	if (!rnd(20))
		snprintf(th->st.comm, sizeof th->st.comm, "%s", comms[rnd(3)]);
	if (!rnd(5)) {
		th->have_wchan = rnd(4) != 0;
		snprintf(th->wchan, sizeof th->wchan, "%s", th->have_wchan ? wchans[rnd(4)] : "");
	}
	if (!rnd(10))
		th->have_sched = rnd(5) != 0;
	if (!rnd(10))
		th->have_ctxt = rnd(5) != 0;
	if (!rnd(4)) {
		th->sc.kind = (enum gp_syscall_kind)rnd(4);
		th->sc.nr = rnd(300);
		for (int i = 0; i < 6; i++)
			th->sc.args[i] = rnd(3) ? th->sc.args[i] : rnd(1u << 30);
		th->sc.sp = rnd(2) ? th->sc.sp : 0x7ffd0000u + rnd(4096);
		th->sc.pc = rnd(2) ? th->sc.pc : 0x7f000000u + rnd(4096);
	}
	if (!rnd(5))
		*wait = (enum gp_wait)rnd(GP_WAIT_COUNT);
	if (!rnd(5)) {
		on->how = (uint8_t)rnd(GP_EDGE_COUNT);
		on->id = on->how ? (int32_t)rnd(5) : 0;
		on->shared = on->how == GP_EDGE_FUTEX && rnd(2);
		snprintf(on->comm, sizeof on->comm, "%s", on->id ? comms[rnd(3)] : "");
	}
	th->kstack = rnd(8) ? NULL : kstack;
}

/* The thread array written, in one sample line, parsed. */
static json_t *sample_of(struct gp_jsonw *w)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	fprintf(f, "{\"type\":\"sample\",\"pid\":7,\"threads\":%.*s}", (int)w->len, w->buf);
	fclose(f);
	json_error_t err;
	json_t *j = json_loads(line, 0, &err);
	if (!j)
		fail_msg("not JSON: %s in %s", err.text, line);
	free(line);
	return j;
}

static void test_delta_round_trip(void **st)
{
	(void)st;
	struct gp_thread th[NT];
	struct gp_thread_rec base[NT], scratch;
	enum gp_wait wait[NT];
	struct gp_wait_edge on[NT];
	char kstack[] = "[<0>] futex_wait_queue+0x60/0xa0\n[<0>] do_syscall_64+0x82/0x170\n";
	memset(th, 0, sizeof th);
	memset(base, 0, sizeof base);
	memset(on, 0, sizeof on);
	for (int i = 0; i < NT; i++) {
		th[i].tid = 100 + i;
		th[i].is_new = true;
		th[i].have_sched = th[i].have_ctxt = th[i].have_wchan = true;
		snprintf(th[i].st.comm, sizeof th[i].st.comm, "worker");
		snprintf(th[i].wchan, sizeof th[i].wchan, "hrtimer_nanosleep");
		th[i].st.state = 'S';
		th[i].st.starttime = 1000;
		th[i].rec_mem = &base[i];
		wait[i] = GP_WAIT_NONE;
	}
	struct gp_threadref *r = gp_threadref_new();
	struct gp_jsonw dw = { 0 }, ww = { 0 };
	unsigned deltas = 0;
	for (int k = 0; k < 400; k++) {
		gp_jw_reset(&dw);
		gp_jw_reset(&ww);
		gp_jw_arr_begin(&dw);
		gp_jw_arr_begin(&ww);
		for (int i = 0; i < NT; i++) {
			if (k)
				step(&th[i], &wait[i], &on[i], kstack);
			gp_threadrec_write(&dw, &th[i], 100, k ? 1.0 : 0, wait[i], &on[i], false);
			struct gp_thread t = th[i];
			t.rec_mem = &scratch;
			gp_threadrec_write(&ww, &t, 100, k ? 1.0 : 0, wait[i], &on[i], true);
		}
		gp_jw_arr_end(&dw);
		gp_jw_arr_end(&ww);
		json_t *got = sample_of(&dw), *want = sample_of(&ww);
		gp_threadref_resolve(r, got);
		json_t *gt = json_object_get(got, "threads"), *wt = json_object_get(want, "threads");
		assert_int_equal(json_array_size(gt), NT);
		for (size_t i = 0; i < NT; i++) {
			if (!json_equal(json_array_get(gt, i), json_array_get(wt, i))) {
				char *a = json_dumps(json_array_get(gt, i), JSON_SORT_KEYS);
				char *b = json_dumps(json_array_get(wt, i), JSON_SORT_KEYS);
				fail_msg("sample %d thread %zu:\n resolved %s\n whole    %s", k, i, a, b);
			}
		}
		json_t *raw = sample_of(&dw);
		deltas += json_object_get(json_array_get(json_object_get(raw, "threads"), 0), "delta") != NULL;
		json_decref(raw);
		json_decref(got);
		json_decref(want);
	}
	/* The deltas were written (not every record whole). */
	assert_true(deltas > 300);
	gp_jw_free(&dw);
	gp_jw_free(&ww);
	gp_threadref_free(r);
}

/* A delta with no record before it (a file cut before the thread's
 * first record) reads as its own members, not as a crash. */
static void test_delta_without_base(void **st)
{
	(void)st;
	json_t *s = json_loads("{\"type\":\"sample\",\"pid\":7,\"threads\":[{\"tid\":5,\"delta\":1,"
			       "\"add\":{\"run_ns\":10},\"gone\":[\"wait\"]}]}", 0, NULL);
	struct gp_threadref *r = gp_threadref_new();
	gp_threadref_resolve(r, s);
	json_t *t = json_array_get(json_object_get(s, "threads"), 0);
	assert_int_equal(json_integer_value(json_object_get(t, "tid")), 5);
	assert_int_equal(json_integer_value(json_object_get(t, "run_ns")), 10);
	assert_null(json_object_get(t, "delta"));
	json_decref(s);
	gp_threadref_free(r);
}

/* Format 4's vm: a delta replaces the members it names, part by part. */
static void test_vm_delta(void **st)
{
	(void)st;
	struct gp_threadref *r = gp_threadref_new();
	json_t *a = json_loads("{\"type\":\"sample\",\"vm\":{\"vmstat\":{\"nr_dirtied\":5,"
			       "\"nr_written\":3},\"meminfo\":{\"MemFree\":9}}}", 0, NULL);
	json_t *b = json_loads("{\"type\":\"sample\",\"vm\":{\"delta\":1,\"vmstat\":"
			       "{\"nr_dirtied\":8},\"meminfo\":{}}}", 0, NULL);
	json_t *c = json_loads("{\"type\":\"sample\",\"vm\":{\"delta\":1,\"vmstat\":"
			       "{\"nr_written\":4},\"psi\":{\"cpu\":{\"some\":1}}}}", 0, NULL);
	gp_threadref_resolve(r, a);
	gp_threadref_resolve(r, b);
	gp_threadref_resolve(r, c);
	json_t *want = json_loads("{\"vmstat\":{\"nr_dirtied\":8,\"nr_written\":4},"
				  "\"meminfo\":{\"MemFree\":9},\"psi\":{\"cpu\":{\"some\":1}}}", 0, NULL);
	assert_true(json_equal(json_object_get(c, "vm"), want));
	/* the earlier sample's object is untouched by the later delta */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(b, "vm"),
			 "vmstat"), "nr_written")), 3);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(want);
	gp_threadref_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delta_round_trip),
		cmocka_unit_test(test_delta_without_base),
		cmocka_unit_test(test_vm_delta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
