/* Reading a result line for `report`: a sample's thread arrays go to
 * records (model/trec.h), scanned from the text and resolved (formats 3
 * and 4), and only the rest of the line to jansson; its `vm` resolved
 * (format 4).  Every other line is jansson's whole. */
#ifndef GP_SAMPLEIN_H
#define GP_SAMPLEIN_H

#include "trec.h"

#include <jansson.h>
#include <stddef.h>

struct gp_samplein;
struct gp_samplein *gp_samplein_new(void);
void gp_samplein_free(struct gp_samplein *si);

/* The line parsed, NULL (err filled) when it is not JSON.  For a
 * sample, its `threads` arrays are left empty in what is returned: the
 * threads are gp_samplein_threads', until the next call. */
json_t *gp_samplein_parse(struct gp_samplein *si, const char *line, size_t len, json_error_t *err);

/* The last sample's threads, resolved: which -1 for the sample's own,
 * i for procs[i]'s.  Their count. */
size_t gp_samplein_threads(const struct gp_samplein *si, int which, const struct gp_trec **out);

#endif
