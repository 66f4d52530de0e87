/* Pinning arms (the `arm` lines of a lock result) rendered as the table
 * seed 004's engineers pasted into their report -- arm, call, range,
 * prefault, lock, result -- by `gpuprobe lock` and `gpuprobe report` alike:
 * one cell builder, two layouts (Markdown, aligned text). */
#ifndef GP_ARMS_H
#define GP_ARMS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

struct gp_arm_cells {
	char arm[96], call[160], range[192], prefault[64], lock[48], result[320];
};
/* md: code spans and bold for Markdown; plain words otherwise. */
void gp_arm_cells(const json_t *arm, bool md, struct gp_arm_cells *c);

/* "11 arms: 7 returned 0, 3 failed (...), 1 never returned; slowest ..." */
void gp_arms_summary(char *buf, size_t cap, const json_t *arms);

/* arms: a JSON array of arm objects.  Markdown: the seed's table, then
 * the probe's own notes.  Text: the same table aligned, then a second
 * one of what each pin did to the system (unlock, VmPin, dirtied/written,
 * the file's mtime, re-fault threads), then the notes. */
void gp_arms_markdown(FILE *out, const json_t *arms);
void gp_arms_text(FILE *out, const json_t *arms);

#endif
