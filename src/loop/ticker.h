/* The clock both trace and watch run on: one tick every --interval on
 * absolute deadlines (drift never accumulates; a tick that overran skips
 * the ones it missed, counted late), --seconds, and the signals, taken
 * synchronously with sigtimedwait (no handler races, and the sleep
 * between ticks ends at once).  Stop handling lives here and in
 * sampling.h, once: a SIGCHLD is first a late ptrace stop of a stack
 * (ptstop.h: let go at once), then whatever child the command owns. */
#ifndef GP_TICKER_H
#define GP_TICKER_H

#include <signal.h>
#include <stdbool.h>

struct gp_ticker_ops {
	/* One tick at t (seconds since t0): NULL to go on, else why the
	 * loop ends. */
	const char *(*tick)(void *ctx, double t);
	/* A SIGCHLD, after the late stops were drained: NULL to go on, else
	 * why the loop ends (trace: its command exited).  NULL: none. */
	const char *(*child)(void *ctx);
	/* SIGINT, SIGTERM or SIGHUP: why the loop ends. */
	const char *(*signal)(void *ctx, int sig, const siginfo_t *si);
};

struct gp_ticker {
	double interval;           /* seconds between ticks */
	double seconds;            /* the last tick at or before it; 0: no limit */
	/* The t a tick is handed: its scheduled time (watch: a flat stretch
	 * is whole ticks long, so --hang-after 5 is judged at the tick that
	 * reaches 5 s, not one later for 4.9997 s read off the clock), or
	 * the clock's (trace: the samples say when they were taken). */
	bool scheduled_t;
	double t0;                 /* gp_mono_now() at t = 0 */
	const sigset_t *waitset;   /* blocked: SIGINT, SIGTERM, SIGHUP, SIGCHLD */
	unsigned long late;        /* out: ticks skipped within --seconds */
};

/* Blocks the signals the ticker waits for (*waitset), *orig the mask
 * before. */
void gp_ticker_block(sigset_t *waitset, sigset_t *orig);

/* Ticks until a callback says why not, or "time limit". */
const char *gp_ticker_run(struct gp_ticker *tk, const struct gp_ticker_ops *ops, void *ctx);

#endif
