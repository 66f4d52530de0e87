/* Unit tests of src/loop/ticker.c, the clock trace and watch both run
 * on: ticks up to and including --seconds, a tick's reason to end, the
 * skipped ticks counted late, a signal's end, and SIGCHLD handed to the
 * owner (after the late stops were drained) without ending the loop. */
#include "config.h"
#include "unit.h"
#include "ticker.h"
#include "timeutil.h"

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

struct seen {
	double t[64];
	int n;
	int end_at;        /* the tick that ends the loop, -1 none */
	double sleep_s;    /* each tick takes this long */
	int raise_at;      /* the tick that raises SIGTERM, -1 none */
	int fork_at;       /* the tick that starts a child that exits, -1 none */
	pid_t child;
	int children;      /* SIGCHLDs handed over */
	int sig;
};

static const char *on_tick(void *ctx, double t)
{
	struct seen *s = ctx;
	if (s->n < 64)
		s->t[s->n] = t;
	int k = s->n++;
	if (s->sleep_s > 0) {
		struct timespec ts = gp_ts_from_s(s->sleep_s);
		nanosleep(&ts, NULL);
	}
	if (k == s->raise_at)
		raise(SIGTERM);
	if (k == s->fork_at && (s->child = fork()) == 0)
		_exit(0);
	return k == s->end_at ? "ended by the tick" : NULL;
}

static const char *on_child(void *ctx)
{
	struct seen *s = ctx;
	if (s->child > 0 && waitpid(s->child, NULL, WNOHANG) == s->child) {
		s->children++;
		s->child = 0;
	}
	return NULL;
}

static const char *on_signal(void *ctx, int sig, const siginfo_t *si)
{
	(void)si;
	((struct seen *)ctx)->sig = sig;
	return "signalled";
}

static const struct gp_ticker_ops ops = { on_tick, on_child, on_signal };

static const char *run(struct seen *s, double interval, double seconds, bool sched,
		       unsigned long *late)
{
	sigset_t waitset, orig;
	gp_ticker_block(&waitset, &orig);
	struct gp_ticker tk = { .interval = interval, .seconds = seconds, .scheduled_t = sched,
				.t0 = gp_mono_now(), .waitset = &waitset };
	const char *why = gp_ticker_run(&tk, &ops, s);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (late)
		*late = tk.late;
	return why;
}

/* 0.05 s at 0.01 s: six ticks, t = 0 ... 0.05 on the schedule; a tick
 * a loaded machine made us miss is counted late, never taken twice. */
static void test_until_seconds(void **state UNUSED)
{
	struct seen s = { .end_at = -1, .raise_at = -1, .fork_at = -1 };
	unsigned long late;
	assert_string_equal(run(&s, 0.01, 0.05, true, &late), "time limit");
	assert_int_equal(s.n + (int)late, 6);
	assert_true(s.t[0] == 0);
	for (int k = 1; k < s.n; k++) {
		double q = s.t[k] / 0.01;
		assert_true(s.t[k] > s.t[k - 1] && q - (double)(long)(q + 0.5) < 1e-6
			    && (double)(long)(q + 0.5) - q < 1e-6);
	}
	assert_true(s.t[s.n - 1] < 0.05 + 1e-9);
}

static void test_tick_ends(void **state UNUSED)
{
	struct seen s = { .end_at = 2, .raise_at = -1, .fork_at = -1 };
	assert_string_equal(run(&s, 0.01, 0, false, NULL), "ended by the tick");
	assert_int_equal(s.n, 3);
}

/* Ticks of 0.035 s at 0.01 s: each skips the ticks it overran, counted
 * late; the clock's t (trace's) moves on with the clock. */
static void test_late(void **state UNUSED)
{
	struct seen s = { .end_at = -1, .raise_at = -1, .fork_at = -1, .sleep_s = 0.035 };
	unsigned long late;
	assert_string_equal(run(&s, 0.01, 0.1, false, &late), "time limit");
	assert_true(s.n >= 1 && s.n <= 4);
	assert_int_equal(s.n + (int)late, 11);
	assert_true(s.n < 2 || s.t[1] >= 0.035);
}

static void test_signal(void **state UNUSED)
{
	struct seen s = { .end_at = -1, .raise_at = 1, .fork_at = -1 };
	assert_string_equal(run(&s, 0.01, 0, true, NULL), "signalled");
	assert_int_equal(s.sig, SIGTERM);
	assert_true(s.n >= 2); /* the tick after it, only where it overran */
}

/* A child's exit is the owner's (the loop goes on to --seconds). */
static void test_sigchld(void **state UNUSED)
{
	struct seen s = { .end_at = -1, .raise_at = -1, .fork_at = 0 };
	unsigned long late;
	assert_string_equal(run(&s, 0.02, 0.3, true, &late), "time limit");
	assert_int_equal(s.children, 1);
	assert_int_equal(s.n + (int)late, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_until_seconds),
		cmocka_unit_test(test_tick_ends),
		cmocka_unit_test(test_late),
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_sigchld),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
