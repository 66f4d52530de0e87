/* verdict.c: the two promises, checked on many random traces:
 *  - a process whose only movement is effort (CPU, switches, faults,
 *    storage io, memory that falls or swings) is never said to make
 *    progress;
 *  - a process whose output rose within the last --hang-after/2 seconds
 *    (and, for memory, held it for a sample) is never said to hang.
 * And the phase cut of a load followed by a deadlock. */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "proctab.h"
#include "still.h"
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

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static double frand(void) { return (double)(rnd() >> 11) / (double)(1ull << 53); }

#define N 90
#define H 30.0

static void base_trace(struct gp_point *p, double dt)
{
	memset(p, 0, N * sizeof *p);
	for (int i = 0; i < N; i++) {
		p[i].t = i * dt;
		p[i].state = 'S';
		p[i].threads = 8;
		p[i].rss_file = 100u << 20;
		p[i].rss_anon = 50u << 20;
		p[i].have = GP_PT_IO | GP_PT_SYS_WB | GP_PT_SYS_RECLAIM | GP_PT_WCHAN | GP_PT_SYSCALL;
		p[i].top_sc_nr = p[i].common_sc_nr = -2;
	}
}

/* Effort only: CPU (user or system), switches, faults, storage io,
 * system writeback, memory that only falls or refills below its peak. */
static void random_effort(struct gp_point *p)
{
	double u = 0, s = 0;
	uint64_t peak_anon = p[0].rss_anon;
	for (int i = 1; i < N; i++) {
		double dt = p[i].t - p[i - 1].t;
		u += frand() * dt * 2;
		s += frand() * dt * 2;
		p[i].utime = u;
		p[i].stime = s;
		p[i].vcsw = p[i - 1].vcsw + rnd() % 1000;
		p[i].minflt = p[i - 1].minflt + rnd() % 100000;
		p[i].majflt = p[i - 1].majflt + rnd() % 1000;
		p[i].io_read_bytes = p[i - 1].io_read_bytes + rnd() % (64u << 20);
		p[i].io_write_bytes = p[i - 1].io_write_bytes + rnd() % (64u << 20);
		p[i].sys_dirtied = p[i - 1].sys_dirtied + rnd() % 100000;
		p[i].sys_written = p[i - 1].sys_written + rnd() % 100000;
		/* memory wanders below its first value */
		p[i].rss_anon = peak_anon - (rnd() % (40u << 20));
		p[i].rss_file = p[0].rss_file - (rnd() % (90u << 20));
		p[i].top_tid = 100 + (int)(rnd() % 3);
		p[i].top_cpu_pct = (float)(frand() * 100);
	}
}

static void test_effort_is_never_progress(void **st)
{
	struct gp_point p[N];
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096 };
	for (int round = 0; round < 300; round++) {
		base_trace(p, 0.25 + frand() * 1.5);
		random_effort(p);
		gp_verdict_compute(p, N, &o, &v);
		if (!strcmp(gp_class_name(v.cls), "progress") || !strcmp(gp_class_name(v.cls), "slow-progress"))
			fail_msg("round %d: effort only, yet %s: %s", round, gp_class_name(v.cls), summary_of(&v));
	}
}

static void test_rising_output_is_never_a_hang(void **st)
{
	struct gp_point p[N];
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096 };
	for (int round = 0; round < 300; round++) {
		double dt = 0.5 + frand();
		base_trace(p, dt);
		random_effort(p);
		/* One output metric steps up somewhere in the last H/2 seconds,
		 * by at least 1 MiB, after any history at all. */
		int metric = (int)(rnd() % 5);
		double t_end = p[N - 1].t;
		int from = N - 1;
		while (from > 1 && p[from - 1].t > t_end - H / 2)
			from--;
		/* memory needs a later sample to hold the rise (verdict.c) */
		int at = from + (int)(rnd() % (unsigned)(N - 1 - from));
		uint64_t step = (1u << 20) + rnd() % (256u << 20);
		for (int i = at; i < N; i++) {
			switch (metric) {
			case 0: p[i].rss_file = (200u << 20) + step; break;
			case 1: p[i].rss_anon = (200u << 20) + step; break;
			case 2: p[i].io_rchar += step; break;
			case 3: p[i].io_wchar += step; break;
			case 4: p[i].vm_pin = step; break;
			}
		}
		gp_verdict_compute(p, N, &o, &v);
		if (!strncmp(gp_class_name(v.cls), "hang-", 5))
			fail_msg("round %d: metric %d rose at +%.1f s of %.1f, yet %s: %s", round,
				 metric, p[at].t, t_end, gp_class_name(v.cls), summary_of(&v));
	}
}

/* The demo's kernel-loop: RssFile swings between 3 and 36 MiB at random
 * while system time burns.  Catching it high is no progress. */
static void test_swinging_memory_is_no_progress(void **st)
{
	struct gp_point p[N];
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = 3, .page_size = 4096 };
	int wrong = 0;
	for (int round = 0; round < 300; round++) {
		base_trace(p, 0.25);
		for (int i = 0; i < N; i++) {
			p[i].rss_file = (3u << 20) + rnd() % (33u << 20);
			p[i].stime = 0.9 * p[i].t;
			p[i].utime = 0.05 * p[i].t;
		}
		gp_verdict_compute(p, N, &o, &v);
		if (strcmp(gp_class_name(v.cls), "hang-busy-kernel") != 0) {
			if (wrong < 3)
				print_message("swing round %d: %s: %s\n", round, gp_class_name(v.cls), summary_of(&v));
			wrong++;
		}
	}
	/* Only a swing that ends at a new record in its last samples can
	 * read as output: rare, never the rule. */
	assert_true(wrong <= 3);
}

static void test_load_then_deadlock(void **st)
{
	struct gp_point p[N];
	base_trace(p, 1.0);
	for (int i = 1; i < N; i++) {
		p[i].rss_file = p[i - 1].rss_file + (i <= 46 ? (356u << 20) : 0);
		p[i].common_wchan_count = 8;
		strcpy(p[i].common_wchan, "futex_do_wait");
	}
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096 };
	gp_verdict_compute(p, N, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-blocked");
	assert_true(v.since_s >= 45.9 && v.since_s <= 46.1);
	assert_int_equal(v.nphases, 2);
	assert_true(v.phase[0].progress);
	assert_true(v.phase[0].rate > 350.0 * (1 << 20) && v.phase[0].rate < 360.0 * (1 << 20));
	assert_false(v.phase[1].progress);
	assert_non_null(strstr(summary_of(&v), "8 of 8 threads in futex_do_wait"));
	/* The table: rss_file flat in the judged phase, as progress. */
	int found = 0;
	for (size_t i = 0; i < v.nev; i++)
		if (!strcmp(v.ev[i].metric, "rss_file")) {
			found = 1;
			assert_int_equal(v.ev[i].role, GP_ROLE_PROGRESS);
			assert_int_equal(v.ev[i].reads, GP_READS_FLAT);
		}
	assert_true(found);
	json_t *j = gp_verdict_json(&v);
	assert_string_equal(json_string_value(json_object_get(j, "class")), "hang-blocked");
	assert_int_equal(json_array_size(json_object_get(j, "phases")), 2);
	json_decref(j);
}

static void test_exited_keeps_what_came_before(void **st)
{
	struct gp_point p[N];
	base_trace(p, 1.0);
	for (int i = 1; i < N; i++)
		p[i].io_wchar = p[i - 1].io_wchar + (1u << 20);
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096, .end_reason = "exited",
				     .have_status = true, .status = 3 };
	gp_verdict_compute(p, N, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "exited");
	assert_int_equal(v.before, GP_CLASS_PROGRESS);
	assert_non_null(strstr(summary_of(&v), "exited with status 3"));
}

static void test_too_few_samples(void **st)
{
	struct gp_point p[N];
	base_trace(p, 1.0);
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096 };
	gp_verdict_compute(p, 2, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "undecided");
	gp_verdict_compute(p, 0, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "undecided");
	assert_true(gp_verdict_class_valid("hang-busy-kernel"));
	assert_false(gp_verdict_class_valid("hung"));
}

/* A 10 s trace of threads asleep on futexes: with the tree still for
 * 40 s before it (still_s), it is a hang from 40 s before the trace; not
 * knowing one process's, it is undecided; the caller's --flat-before
 * counts the same way; progress in the trace cancels both (issue 28). */
static void test_still_before_the_trace(void **st)
{
	struct gp_point p[N];
	base_trace(p, 1.0);
	for (int i = 0; i < 11; i++) {
		p[i].common_wchan_count = 3;
		strcpy(p[i].common_wchan, "futex_do_wait");
	}
	struct gp_proc_ident procs[2] = {
		{ .pid = 10, .first_t = 0, .still_s = 40, .rank = -1, .world_size = -1 },
		{ .pid = 11, .first_t = 0, .still_s = 55, .rank = -1, .world_size = -1 },
	};
	struct gp_proctab tab = { .p = procs, .n = 2 };
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096, .procs = &tab };
	gp_verdict_compute(p, 11, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-blocked");
	assert_true(v.still_before_s > 39.9 && v.still_before_s < 40.1);
	assert_true(v.since_s < -39.9 && v.since_s > -40.1);
	assert_int_equal(v.before_by, GP_BEFORE_THREADS);
	assert_non_null(strstr(summary_of(&v), "40 s before the trace began: no thread of it had run"));
	/* A process that appeared later does not count; one at the start
	 * whose still_s is unknown makes it unknown. */
	procs[1].first_t = 5;
	procs[1].still_s = 0;
	gp_verdict_compute(p, 11, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-blocked");
	procs[1].first_t = 0;
	procs[1].still_s = -1;
	gp_verdict_compute(p, 11, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "undecided");
	assert_true(v.still_before_s == 0);
	/* The caller's word (watch's bundle). */
	o.flat_before = 25;
	gp_verdict_compute(p, 11, &o, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-blocked");
	assert_int_equal(v.before_by, GP_BEFORE_CALLER);
	assert_non_null(strstr(summary_of(&v), "as its caller saw it"));
	/* watch's: a hang the watch before it exported */
	o.flat_before_by = GP_BEFORE_LAST_WATCH;
	o.watching = true;
	gp_verdict_compute(p, 11, &o, &v);
	assert_int_equal(v.before_by, GP_BEFORE_LAST_WATCH);
	assert_non_null(strstr(summary_of(&v), "before the watch began, as the watch before it saw it (its --metrics file)"));
	o.flat_before_by = GP_BEFORE_CALLER;
	o.watching = false;
	/* Output in the trace: judged from the trace alone. */
	for (int i = 3; i < 11; i++)
		p[i].io_wchar = p[i - 1].io_wchar + (1u << 20);
	procs[1].still_s = 55;
	gp_verdict_compute(p, 11, &o, &v);
	assert_true(v.still_before_s == 0);
	assert_true(strcmp(gp_class_name(v.cls), "hang-blocked") != 0);

	double ms = 0;
	assert_true(gp_sched_exec_start("python3 (17952, #threads: 1)\n-----\n"
		"se.exec_start                                :      34988491.384935\n"
		"se.vruntime                                  :           559.288476\n", &ms));
	assert_true(ms > 34988491.38 && ms < 34988491.39);
	assert_false(gp_sched_exec_start("se.vruntime : 1.0\n", &ms));
}

/* NCCL RAS's lagging rank joins the ranks' comparison (issue 29). */
static void test_ras_joins_siblings(void **st)
{
	struct gp_point p[N];
	base_trace(p, 1.0);
	struct gp_verdict v;
	struct gp_verdict_opts o = { .hang_after = H, .page_size = 4096 };
	gp_verdict_compute(p, N, &o, &v);
	v.ras.ok_reads = v.ras.reads = 1;
	v.ras.lag = true;
	v.ras.rank = 3;
	v.ras.pid = 4243;
	snprintf(v.ras.op, sizeof v.ras.op, "AllReduce");
	v.ras.count = 6;
	v.ras.max = 7;
	v.act.sib.kind = GP_SIBK_RANKS;
	v.act.sib.story = GP_SIBS_SAME;
	assert_non_null(strstr(summary_of(&v), "rank 3 (pid 4243), the odd one the stacks cannot tell "
				"(its ranks all wait in one place), is behind in AllReduce: 6, the others up to 7"));
	v.act.sib.story = GP_SIBS_ODD;
	v.act.sib.nodd = 1;
	v.act.sib.odd[0].rank = 3;
	assert_non_null(strstr(summary_of(&v), "rank 3 (pid 4243), the rank apart in the stacks too, is behind"));
	v.act.sib.odd[0].rank = 1;
	assert_non_null(strstr(summary_of(&v), "rank 3 (pid 4243), not the rank apart in the stacks, is behind"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_effort_is_never_progress),
		cmocka_unit_test(test_rising_output_is_never_a_hang),
		cmocka_unit_test(test_swinging_memory_is_no_progress),
		cmocka_unit_test(test_load_then_deadlock),
		cmocka_unit_test(test_exited_keeps_what_came_before),
		cmocka_unit_test(test_too_few_samples),
		cmocka_unit_test(test_still_before_the_trace),
		cmocka_unit_test(test_ras_joins_siblings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
