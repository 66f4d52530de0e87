/* The GPU runtimes a process maps, by file and build-id: NCCL, RCCL, the
 * CUDA driver and runtime, HSA and HIP.  Issue 19: processes of one job
 * that map two builds of one version of a library (vllm-project/vllm
 * #46097: one version, two builds, one hangs) are told apart only by the
 * build-id.  Read from ROOT/proc/PID/maps, the files opened read-only
 * under the root (a replayed tree holds its own). */
#ifndef GP_RUNLIBS_H
#define GP_RUNLIBS_H

#include "procfs.h"

#include <jansson.h>
#include <stdbool.h>

/* At most this many libraries a process: a bound on what a target's
 * maps can make us open. */
#define GP_RUNLIBS_MAX 16

/* True for a file name that is one of the runtimes above (pure). */
bool gp_runlib_name(const char *base);

/* The distinct paths of those runtimes PID maps, in map order, one a
 * line ("" when none), malloc'd; NULL when its maps cannot be read.  The
 * cheap half: the caller compares it to the last one and asks for the
 * JSON only when it changed. */
char *gp_runlib_paths(const struct gp_root *root, int pid);

/* [{"soname", "path", "build_id"}] of those paths; build_id null where
 * the file cannot be read or has none, soname the file's name where it
 * names none. */
json_t *gp_runlib_json(const struct gp_root *root, int pid, const char *paths);

#endif
