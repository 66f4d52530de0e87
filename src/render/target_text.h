/* What a report says of the traced process: its name and command line
 * after an exec (`sh -c 'exec xz ...'` is xz: issue 20), the command line
 * as shell words that paste back (common/shquote.h), and what it started
 * as when that differs. */
#ifndef GP_TARGET_TEXT_H
#define GP_TARGET_TEXT_H

#include "doc.h"
#include "strbuf.h"

#include <jansson.h>
#include <stddef.h>

/* The target's name: the last sample's comm, else the newest exec'd
 * target line's, else the first target line's, else "?". */
const char *gp_doc_comm(const struct gp_doc *d);
/* The newest target line of the trace's pid (the exec'd command), else
 * the first; NULL when the file has none. */
const json_t *gp_doc_target_now(const struct gp_doc *d);

/* A target line's cmdline as shell words, at most max_args of them (then
 * " ..."), each argument's real bytes where cmdline_bytes has them.
 * False (nothing appended) when the line has no cmdline. */
bool gp_target_words(struct strbuf *sb, const json_t *target, size_t max_args);

/* Where a target line says the process lives, when not in the host's own
 * namespaces: "pid 1 in its own pid namespace; container 3f2a1b2c3d4e
 * (docker), Kubernetes pod UID; namespaces of its own: mnt, pid" (only
 * what has the shape gpuprobe writes: the file may be a stranger's).
 * False (nothing appended) when it says nothing of that. */
bool gp_target_where(struct strbuf *sb, const json_t *target);

#endif
