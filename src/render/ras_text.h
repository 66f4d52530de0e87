/* NCCL's RAS reads of a trace (doc.h: d->ras, the `ras` lines): each
 * read's state and, where it got counts, every rank's collectives, as a
 * table (issue 19).  The verdict's words on them are verdict_text.c's. */
#ifndef GP_RAS_TEXT_H
#define GP_RAS_TEXT_H

#include "doc.h"

#include <stdio.h>

/* "NCCL RAS": a Markdown table; nothing where RAS was not asked. */
void gp_ras_markdown(FILE *out, const struct gp_doc *d);
/* The same for a terminal. */
void gp_ras_text(FILE *out, const struct gp_doc *d);

#endif
