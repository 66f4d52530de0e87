#include "config.h"
#include "timeutil.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>

double gp_mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct timespec gp_ts_from_s(double s)
{
	struct timespec ts;
	if (!(s > 0)) /* NaN too */
		s = 0;
	if (s > 365 * 86400.0)
		s = 365 * 86400.0;
	double whole = floor(s);
	ts.tv_sec = (time_t)whole;
	ts.tv_nsec = (long)((s - whole) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

int64_t gp_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t gp_ns_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

struct timespec gp_ts_from_ns(int64_t ns)
{
	if (ns < 0)
		ns = 0;
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000) };
	return ts;
}

int gp_ms_from_ns(int64_t ns)
{
	if (ns <= 0)
		return 0;
	int64_t ms = ns / 1000000 + (ns % 1000000 != 0);
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

void gp_iso8601_now(char *buf, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, cap - n, ".%03ldZ", ts.tv_nsec / 1000000);
}
