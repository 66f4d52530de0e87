/* The GPU runtimes each traced process maps (doc.h: d->libs, from the
 * `target` and `runtime_libs` lines), as a table, and the processes of
 * one result that map two builds of one library (issue 19,
 * vllm-project/vllm#46097: one version, two builds, one hangs). */
#ifndef GP_LIBS_TEXT_H
#define GP_LIBS_TEXT_H

#include "doc.h"

#include <stdio.h>

/* "Runtime libraries": a Markdown table and the two-builds lines;
 * nothing where no process maps one. */
void gp_libs_markdown(FILE *out, const struct gp_doc *d);
/* The same for a terminal. */
void gp_libs_text(FILE *out, const struct gp_doc *d);

#endif
