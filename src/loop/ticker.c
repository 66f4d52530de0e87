/* The clock and the signals of trace and watch: see ticker.h. */
#include "config.h"
#include "ticker.h"
#include "ptstop.h"
#include "timeutil.h"

#include <signal.h>
#include <stddef.h>

void gp_ticker_block(sigset_t *waitset, sigset_t *orig)
{
	sigemptyset(waitset);
	sigaddset(waitset, SIGINT);
	sigaddset(waitset, SIGTERM);
	sigaddset(waitset, SIGHUP);
	sigaddset(waitset, SIGCHLD);
	sigprocmask(SIG_BLOCK, waitset, orig);
}

/* Sleeps until deadline (seconds after t0); NULL when it came, else why
 * the loop ends. */
static const char *sleep_until(const struct gp_ticker *tk, const struct gp_ticker_ops *ops,
			       void *ctx, double deadline)
{
	for (;;) {
		double left = deadline - (gp_mono_now() - tk->t0);
		if (left <= 0)
			return NULL;
		struct timespec ts = gp_ts_from_s(left);
		siginfo_t si;
		int sig = sigtimedwait(tk->waitset, &si, &ts);
		if (sig < 0)
			continue; /* EAGAIN: the deadline; EINTR: retry */
		if (sig == SIGCHLD) {
			/* A stack's late stop (ptstop.h: let go at once), then
			 * the owner's own children. */
			gp_ptstop_drain();
			const char *why = ops->child ? ops->child(ctx) : NULL;
			if (why)
				return why;
			continue;
		}
		return ops->signal(ctx, sig, &si);
	}
}

const char *gp_ticker_run(struct gp_ticker *tk, const struct gp_ticker_ops *ops, void *ctx)
{
	double interval = tk->interval;
	for (unsigned long k = 0;;) {
		/* Ticks k*interval up to and including --seconds: 3 s at 0.1 s
		 * is 31 samples, t = 0 ... 3.0. */
		if (tk->seconds > 0 && (double)k * interval > tk->seconds + 1e-9)
			return "time limit";
		double t = tk->scheduled_t ? (double)k * interval : gp_mono_now() - tk->t0;
		const char *why = ops->tick(ctx, t);
		if (why)
			return why;

		/* Absolute deadlines: drift never accumulates.  A tick that
		 * overran skips the ticks it missed.  (Taking a tick missed by
		 * less than half an interval at once instead put two samples
		 * in one slot under load: tests/e2e/trace-interval-drift.sh,
		 * 2026-12-05.) */
		double now = gp_mono_now() - tk->t0;
		unsigned long next = k + 1;
		while ((double)next * interval <= now)
			next++;
		/* Late ticks are the ones skipped within --seconds: a last
		 * sample that overran the end skipped no tick (2 s at 0.1 s
		 * under two burners read 18 samples + 4 late of 21 ticks). */
		unsigned long skipped_to = next;
		if (tk->seconds > 0) {
			unsigned long ticks = (unsigned long)(tk->seconds / interval + 1e-9) + 1;
			if (skipped_to > ticks)
				skipped_to = ticks;
		}
		tk->late += skipped_to > k + 1 ? skipped_to - k - 1 : 0;
		k = next;
		double deadline = (double)k * interval;
		if (tk->seconds > 0 && deadline > tk->seconds + 1e-9)
			return "time limit";
		if ((why = sleep_until(tk, ops, ctx, deadline)))
			return why;
	}
}
