/* Human-readable sizes and rates in binary units, one style for every
 * renderer: "16.4 GiB", "356 MiB", "2.5 MiB/s" (one decimal under 100 of
 * the unit, none above), "512 B". */
#ifndef GP_UNITS_H
#define GP_UNITS_H

#include <stddef.h>

void gp_fmt_size(char *buf, size_t cap, double bytes);
/* bytes_per_s may be negative (a shrinking metric): "-1.5 MiB/s". */
void gp_fmt_rate(char *buf, size_t cap, double bytes_per_s);

/* "4.5 s", "46 s", "11 min", "1.5 h" */
void gp_fmt_duration(char *buf, size_t cap, double seconds);

#endif
