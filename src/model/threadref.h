/* Format 3 (doc/result-format.md, "Unchanged threads"): a thread that has
 * not run since its last full record is written as {"tid":N,"same":1}
 * (and its wait_ns when that moved).  A reader of samples resolves each
 * such reference back into a whole thread object, here, before anything
 * else looks at the sample, so the rest of the readers (model/load.c,
 * render/doc.c) see the threads of every format alike. */
#ifndef GP_THREADREF_H
#define GP_THREADREF_H

#include <jansson.h>
#include <stddef.h>

struct gp_threadref;

struct gp_threadref *gp_threadref_new(void);
void gp_threadref_free(struct gp_threadref *r);

/* Replaces every reference in sample.threads and sample.procs[].threads
 * by the thread it names (its last whole record in the previous sample,
 * with no CPU this interval).  A reference to nothing (a cut or edited
 * file) stays as it is: a thread with only a tid.  Returns how many
 * references were resolved. */
size_t gp_threadref_resolve(struct gp_threadref *r, json_t *sample);

#endif
