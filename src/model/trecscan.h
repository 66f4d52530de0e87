/* A sample line's thread arrays scanned into records (model/trec.h), and
 * the line split so that jansson parses only the rest: see trecscan.c. */
#ifndef GP_TRECSCAN_H
#define GP_TRECSCAN_H

#include "trec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* How many records the arrays sharing it may still hold (samplein: a
 * sample's, every process of it); over once one was refused. */
struct gp_trecs_budget {
	size_t left;
	bool over;
};

/* Records as read (raw), owned: their kernel strings too.  budget NULL:
 * unbounded; cleared records go back to it. */
struct gp_trecs {
	struct gp_trec *r;
	size_t n, cap;
	struct gp_trecs_budget *budget;
};
void gp_trecs_clear(struct gp_trecs *a);
void gp_trecs_free(struct gp_trecs *a);

/* A JSON array of thread objects as gpuprobe writes it, into out; false
 * (out empty) on anything else: then parse it with jansson and use
 * gp_trecs_from_json. */
bool gp_trecs_scan(const char *text, size_t len, struct gp_trecs *out);
/* The same from jansson's array (elements that are not objects skipped).
 * False when out of memory. */
bool gp_trecs_from_json(const json_t *arr, struct gp_trecs *out);

/* Where a sample line's thread arrays are: the sample's own (which -1)
 * and each `procs` element's (which = its index).  Each is scanned into
 * get(ctx, which)'s records as the split meets it (scanned), or, where
 * the scanner does not take it (or get gives NULL), only listed, for
 * jansson. */
struct gp_span {
	int which;
	const char *at;
	size_t len;
	bool scanned;
};
struct gp_sample_split {
	struct gp_trecs *(*get)(void *ctx, int which);
	void *ctx;
	struct gp_span span[256];
	size_t n;
};
/* False when the line is not one JSON object whose shape the splitter
 * knows (then parse it whole with jansson); sp->get and ctx set. */
bool gp_sample_split(const char *line, size_t len, struct gp_sample_split *sp);

#endif
