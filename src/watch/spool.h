/* watch's own record of each process it follows: the JSON Lines a trace
 * would write (header, target, samples, stacks), kept for the last
 * stretch only, so that a bundle made at a hang carries the samples
 * before it, and the disk a long watch uses stays flat.
 *
 * Two files a process, A and B, in a private directory: lines go to the
 * current one; when it has held `span` seconds, the other is truncated
 * and becomes the current one.  Both start with the header and target
 * lines.  So the record always covers at least `span` seconds and at
 * most 2 * span. */
#ifndef GP_SPOOL_H
#define GP_SPOOL_H

#include "result.h"

#include <jansson.h>
#include <stdbool.h>

struct gp_spool {
	char path[2][4096];
	struct gp_result *cur;
	int which;               /* index of cur in path */
	bool other_used;         /* path[!which] holds the stretch before */
	double started;          /* when cur was begun */
	double span;
	json_t *head, *target;   /* written at the top of each file (owned) */
	bool failed;             /* a write failed: the record is off */
};

/* dir/PID-STARTTIME.{a,b}.jsonl; head and target are stolen.  -1 with
 * errno when the first file cannot be made. */
int gp_spool_open(struct gp_spool *s, const char *dir, int pid, unsigned long long start,
		  double span, double t, json_t *head, json_t *target);
/* Whether the next write at t turns to the other file: its first sample
 * must then stand alone (gp_tree_keyframe). */
bool gp_spool_due(const struct gp_spool *s, double t);
/* Writes a line (stolen) with its raw members; rotates first when due. */
void gp_spool_write(struct gp_spool *s, double t, json_t *line, const struct gp_raw *raws,
		    size_t nraws);
/* One file at dst: the stretch before (whole), then the current one's
 * lines after its header and target, then tail (stolen, NULL-ended
 * array of lines: the verdict).  0, or -1 with errno. */
int gp_spool_export(struct gp_spool *s, const char *dst, json_t **tail);
/* Closes and removes both files. */
void gp_spool_close(struct gp_spool *s);

#endif
