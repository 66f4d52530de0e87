/* Siblings compared, in words (src/verdict/siblings.h judges; this
 * tells): "4 ranks of job.py: rank 1 (pid 812) is in load_batch
 * (job.py:14) while ranks 0, 2, 3 wait in all_reduce
 * (distributed_c10d.py:1541) called from step (job.py:30): the odd one
 * out".  "Ranks" and "the odd one out" only for a job's ranks; a pool's
 * processes are its workers; other processes of one program, just that
 * (issue 32, "Words"). */
#ifndef GP_SIBLINGS_TEXT_H
#define GP_SIBLINGS_TEXT_H

#include "doc.h"
#include "siblings.h"
#include "strbuf.h"

#include <stddef.h>

/* The comparison as a clause (nothing when c->kind is NONE).  hosts:
 * across results, each source's name ("host a (a.jsonl)"), said beside
 * each process named; NULL: one result. */
void gp_siblings_words(struct strbuf *sb, const struct gp_sibcmp *c, const char *const *hosts,
		       size_t nhosts);

/* Across results (`report` of several files traced apart: a job's
 * nodes): the processes of all of them compared as one tree, each named
 * with its file's host.  True, with the clause in sb, when what it says
 * spans two files or more (one file's own verdict says the rest). */
bool gp_report_siblings(struct strbuf *sb, const struct gp_doc *docs, size_t n);

#endif
