/* Reading a result line for `report`: a sample's thread arrays go to
 * records (model/trec.h), scanned from the text and resolved (formats 3
 * and 4), and only the rest of the line to jansson; its `vm` resolved
 * (format 4).  Every other line is jansson's whole. */
#ifndef GP_SAMPLEIN_H
#define GP_SAMPLEIN_H

#include "trec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct gp_samplein;
struct gp_samplein *gp_samplein_new(void);
void gp_samplein_free(struct gp_samplein *si);

/* The most threads one sample may list, every process of it together.
 * A sample lists each thread of the traced tree once; the largest trees
 * measured held 10 000 (bench/results/2026-12-05-scale*.md), and a tree
 * of half a million would be its kernel's whole budget on most machines
 * (threads-max: RAM / 128 KiB).  A record costs ~2.7 KiB to read and
 * judge ({"tid":N}, 10 bytes of text, reads into two gp_trec of 456 bytes,
 * a view and report's aggregate): 524 288 of them ~1.4 GiB; without the
 * bound, 3.9 M distinct tids in a 1.3 MB .zst cost 10 GB (issue 27). */
#define GP_SAMPLE_MAX_THREADS ((size_t)1 << 19)

/* The line parsed, NULL (err filled) when it is not JSON, or when it is
 * a sample of more than GP_SAMPLE_MAX_THREADS threads (then
 * gp_samplein_over is true until the next call).  For a
 * sample, its `threads` arrays are left empty in what is returned: the
 * threads are gp_samplein_threads', until the next call. */
json_t *gp_samplein_parse(struct gp_samplein *si, const char *line, size_t len, json_error_t *err);

/* The last line was refused: a sample of too many threads. */
bool gp_samplein_over(const struct gp_samplein *si);

/* The last sample's threads, resolved: which -1 for the sample's own,
 * i for procs[i]'s.  Their count. */
size_t gp_samplein_threads(const struct gp_samplein *si, int which, const struct gp_trec **out);

#endif
