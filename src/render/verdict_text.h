/* The verdict's words (src/verdict/ judges; this tells): its summary,
 * confidence reason, phases and evidence readings, what could not be
 * seen; its `verdict` result line (doc/result-format.md) and the block a
 * trace prints at its end (verdict_out.c). */
#ifndef GP_VERDICT_TEXT_H
#define GP_VERDICT_TEXT_H

#include "strbuf.h"
#include "verdict.h"

#include <jansson.h>
#include <stdio.h>

/* "no progress for 8.0 s (since +0.0 s): threads asleep, ..." */
void gp_verdict_summary(struct strbuf *sb, const struct gp_verdict *v);
/* Why the confidence is what it is: "flat 8 s = 2.7x --hang-after; ..." */
void gp_verdict_reason(struct strbuf *sb, const struct gp_verdict *v);
/* What phase i did: "RssFile +84.0 MiB/s", "no output", what a flat
 * process did. */
void gp_phase_what(struct strbuf *sb, const struct gp_verdict *v, size_t i);
/* How an evidence row reads: "flat", "new highs, +84.0 MiB/s", ... */
void gp_evidence_reads(struct strbuf *sb, const struct gp_evidence *e);
/* What could not be seen, a line each (static or the verdict's own
 * strings); returns how many. */
#define GP_VERDICT_UNSEEN_MAX 6
size_t gp_verdict_unseen(const struct gp_verdict *v, const char *line[GP_VERDICT_UNSEEN_MAX]);

/* The `verdict` result line. */
json_t *gp_verdict_json(const struct gp_verdict *v);
/* The verdict block printed at the end of a trace. */
void gp_verdict_print(FILE *out, const struct gp_verdict *v);

#endif
