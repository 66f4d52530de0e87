#ifndef GP_TIMEUTIL_H
#define GP_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in seconds: every timestamp in a result is relative to
 * the monotonic start, immune to wall-clock steps. */
double gp_mono_now(void);
struct timespec gp_ts_from_s(double s);
/* ISO 8601 UTC of the wall clock now, e.g. 2026-12-02T08:51:30.123Z. */
void gp_iso8601_now(char *buf, size_t cap);

#endif
