/* A one-line progress bar on a terminal (standard error): done/total,
 * percent and rate, redrawn at most 10 times a second. */
#ifndef GP_PROGRESS_H
#define GP_PROGRESS_H
#include <stdbool.h>
#include <stdint.h>
struct gp_progress {
	const char *label;
	uint64_t total;
	double t0, last_draw;
	bool on;
};
/* on: draw at all (the caller decides: isatty(2) and not --quiet). */
void gp_progress_start(struct gp_progress *p, const char *label, uint64_t total, bool on);
void gp_progress_update(struct gp_progress *p, uint64_t done);
/* Erases the line. */
void gp_progress_end(struct gp_progress *p);
#endif
