/* Renderers of loaded results (struct gp_doc): Markdown for bug reports,
 * text for terminals, plots (cairo).  They never read /proc. */
#ifndef GP_RENDER_H
#define GP_RENDER_H

#include "doc.h"

#include <stddef.h>
#include <stdio.h>

/* GitHub-flavoured Markdown of one or more results. */
void gp_render_markdown(FILE *out, const struct gp_doc *docs, size_t n);
/* Text: the trace summary and verdict, arms and threads. */
void gp_render_text(FILE *out, const struct gp_doc *d);
/* The merged JSON entry of one result. */
json_t *gp_render_json(const struct gp_doc *d);

/* width cells of ▁..█ for metric m into buf (UTF-8; cap >= 3*width+1).
 * Levels go from their minimum to their maximum, rates from 0. */
size_t gp_sparkline(char *buf, size_t cap, const struct gp_doc *d, size_t m, size_t width,
		    double *vmin, double *vmax);

void gp_md_threads(FILE *out, const struct gp_doc *d);

/* A timeline plot of one trace, SVG or PNG by the file's extension.
 * 0, or -1 with a reason in err (no cairo in this build: -1 too). */
int gp_plot(const char *path, const struct gp_doc *d, char *err, size_t errcap);

/* What `gpuprobe report` writes for docs[0..n) in format (markdown, text
 * or json; json: one merged document), and the plot of the first of them
 * that is a trace (-1 with a reason in err where none is, or it failed). */
void gp_render_report(FILE *out, const char *format, const struct gp_doc *docs, size_t n);
int gp_plot_first_trace(const char *path, const struct gp_doc *docs, size_t n, char *err,
			size_t errcap);

#endif
