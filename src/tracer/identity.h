/* Process identity and lookup by name, through libproc2 (procps-ng). */
#ifndef GP_IDENTITY_H
#define GP_IDENTITY_H

#include "procfs.h"

#include <jansson.h>
#include <stddef.h>

/* PIDs whose comm (or argv[0]'s basename) is exactly name, oldest first,
 * gpuprobe itself excluded.  Returns the count (0 = none), -1 on error;
 * *pids is malloc'd. */
int gp_find_by_name(const char *name, int **pids);

/* The `target` fields: pid, ppid, comm, cmdline (array), exe, job_env (a
 * distributed job's variables, identity.c: job_vars), user, start_time (ISO
 * 8601), starttime_ticks.  Live roots ask libproc2; a replayed root is
 * read from its files (libproc2 reads the real /proc only). NULL when the
 * process does not exist. */
json_t *gp_target_identity(const struct gp_root *root, int pid);

/* still_s: seconds since any thread of pid last ran, where that can be
 * told (still.h); written for the processes of a PID target as the trace
 * starts, so the verdict knows how long the tree was already still
 * before it (doc/result-format.md). */
void gp_target_still(const struct gp_root *root, int pid, json_t *target);

#endif
