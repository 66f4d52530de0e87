/* Saturating arithmetic for counters read from outside (DRM fdinfo,
 * KFD sysfs, NVML): a sum of many readings pins at the top instead of
 * wrapping to a small number that would read as a drop. */
#ifndef GP_SATMATH_H
#define GP_SATMATH_H

#include <stdint.h>

static inline uint64_t gp_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* a - b, or 0 where b is larger (two counters read at slightly
 * different moments). */
static inline uint64_t gp_sat_sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

#endif
