#include "config.h"
#include "units.h"

#include <math.h>
#include <stdio.h>

static void fmt(char *buf, size_t cap, double v, const char *suffix)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double a = fabs(v);
	int k = 0;
	while (k < 5 && a >= 1024) {
		a /= 1024;
		v /= 1024;
		k++;
	}
	/* Bytes are whole; 99.96 KiB would print "100.0": round first. */
	if (k == 0 || a >= 99.95)
		snprintf(buf, cap, "%.0f %s%s", v, unit[k], suffix);
	else
		snprintf(buf, cap, "%.1f %s%s", v, unit[k], suffix);
}

void gp_fmt_size(char *buf, size_t cap, double bytes)
{
	fmt(buf, cap, bytes, "");
}

void gp_fmt_rate(char *buf, size_t cap, double bytes_per_s)
{
	fmt(buf, cap, bytes_per_s, "/s");
}

void gp_fmt_duration(char *buf, size_t cap, double s)
{
	if (s >= 3600)
		snprintf(buf, cap, "%.1f h", s / 3600);
	else if (s >= 120)
		snprintf(buf, cap, "%.0f min", s / 60);
	else if (s >= 9.95)
		snprintf(buf, cap, "%.0f s", s);
	else
		snprintf(buf, cap, "%.1f s", s);
}
