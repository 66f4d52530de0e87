/* Deadlines and timed waits (issue 12): integer ns on CLOCK_MONOTONIC,
 * conversions that never give an invalid timespec, and a watchdog that
 * gives up on time without burning the CPU it waits on. */
#include "config.h"
#include "unit.h"
#include "opts.h"
#include "parse.h"
#include "timeutil.h"
#include "lockprobe/watchdog.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <cmocka.h>

static void test_conversions(void **st)
{
	(void)st;
	struct timespec ts = gp_ts_from_s(INFINITY);
	assert_true(ts.tv_sec == 365 * 86400 && ts.tv_nsec == 0);
	ts = gp_ts_from_s(NAN);
	assert_true(ts.tv_sec == 0 && ts.tv_nsec == 0);
	ts = gp_ts_from_s(-5);
	assert_true(ts.tv_sec == 0 && ts.tv_nsec == 0);
	ts = gp_ts_from_s(1e300);
	assert_true(ts.tv_sec == 365 * 86400);
	ts = gp_ts_from_ns(1500000001);
	assert_true(ts.tv_sec == 1 && ts.tv_nsec == 500000001);
	ts = gp_ts_from_ns(-1);
	assert_true(ts.tv_sec == 0 && ts.tv_nsec == 0);
	assert_true(gp_ns_add(INT64_MAX - 1, 5) == INT64_MAX);
	assert_true(gp_ns_add(INT64_MIN + 1, -5) == INT64_MIN);
	assert_true(gp_ns_add(1, 2) == 3);
	assert_int_equal(gp_ms_from_ns(0), 0);
	assert_int_equal(gp_ms_from_ns(-7), 0);
	assert_int_equal(gp_ms_from_ns(1), 1);        /* rounded up: never a 0 ms busy poll */
	assert_int_equal(gp_ms_from_ns(2000000), 2);
	assert_int_equal(gp_ms_from_ns(INT64_MAX), INT32_MAX);
}

/* What demo hands trace is read back exactly. */
static void test_fmt_round_trip(void **st)
{
	(void)st;
	static const int64_t v[] = { 0, 1, 50000000, 250000000, 1000000000, 1500000001,
				     3600 * GP_NS_S, INT64_MAX };
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		char b[40];
		int64_t back;
		gp_fmt_ns_seconds(b, sizeof b, v[i]);
		assert_true(gp_parse_duration(b, &back));
		assert_true(back == v[i]);
	}
}

static int64_t quick(void *arg)
{
	return (int64_t)(intptr_t)arg;
}

static int64_t slow(void *arg)
{
	(void)arg;
	struct timespec ts = { 2, 0 };
	nanosleep(&ts, NULL);
	return 7;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec)
	       + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void test_watchdog(void **st)
{
	(void)st;
	int64_t ret = 0;
	double secs = -1;
	struct gp_wd_stuck stuck;
	/* "Never": the deadline saturates, the call's return ends the wait. */
	assert_true(gp_watchdog_run(quick, (void *)(intptr_t)42, INT64_MAX, &ret, &secs, &stuck));
	assert_true(ret == 42 && secs >= 0);
	/* A call that outlives its timeout: given up on time, without spinning. */
	double c0 = cpu_s();
	int64_t t0 = gp_mono_ns();
	assert_false(gp_watchdog_run(slow, NULL, 200 * GP_NS_MS, &ret, &secs, &stuck));
	int64_t dt = gp_mono_ns() - t0;
	double cpu = cpu_s() - c0;
	print_message("timed out after %.3f s, %.3f s of CPU; stuck in %s\n", (double)dt / 1e9, cpu,
		      stuck.syscall);
	assert_true(dt >= 200 * GP_NS_MS && dt < 1500 * GP_NS_MS);
	assert_true(cpu < 0.1);
	assert_true(stuck.tid > 0);
	free(stuck.kstack);
}

UNIT_MAIN(
	cmocka_unit_test(test_conversions),
	cmocka_unit_test(test_fmt_round_trip),
	cmocka_unit_test(test_watchdog))
