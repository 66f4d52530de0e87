#ifndef GP_TIMEUTIL_H
#define GP_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in seconds: every timestamp in a result is relative to
 * the monotonic start, immune to wall-clock steps. */
double gp_mono_now(void);
/* A negative, NaN or infinite s gives 0; more than a year, a year: never
 * an invalid timespec (EINVAL from a timed wait) nor an undefined
 * double-to-time_t conversion. */
struct timespec gp_ts_from_s(double s);

/* Deadlines are integer nanoseconds on CLOCK_MONOTONIC. */
int64_t gp_mono_ns(void);
/* a + b, saturating at INT64_MAX (a deadline "never" stays never). */
int64_t gp_ns_add(int64_t a, int64_t b);
/* ns (clamped at 0) as a timespec: absolute for the timed waits that take
 * one (pthread_cond_timedwait on a CLOCK_MONOTONIC condvar), or relative. */
struct timespec gp_ts_from_ns(int64_t ns);
/* Milliseconds for poll(2), rounded up, at most INT_MAX; 0 when ns <= 0. */
int gp_ms_from_ns(int64_t ns);
/* ISO 8601 UTC of the wall clock now, e.g. 2026-12-02T08:51:30.123Z. */
void gp_iso8601_now(char *buf, size_t cap);

#endif
