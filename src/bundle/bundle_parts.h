/* The bundle's parts that are not a gpuprobe command of their own: the
 * kernel log's window, the GPU evidence, the runtime libraries' build-ids.
 * Each runs in a part child (part.h): it prints its file to standard
 * output and what it could not read, one gpuprobe: line each, to
 * standard error (the MANIFEST quotes them).  Returns 0, 1 on an error,
 * 2 when the part was skipped (nothing to read). */
#ifndef GP_BUNDLE_PARTS_H
#define GP_BUNDLE_PARTS_H

#include <stdbool.h>
#include <stddef.h>

struct gp_bundle_part_arg {
	int pid;
	double window_s;     /* kmsg: seconds of log before now */
};

int gp_bundle_kmsg(void *arg);
int gp_bundle_gpu(void *arg);
int gp_bundle_libs(void *arg);
int gp_bundle_ras_part(void *arg);
int gp_bundle_jvm_part(void *arg);

/* env.txt: the target's environment variables whose names the
 * allow-list keeps (gp_bundle_env_rule says it in words), never the
 * others (bundle_env.c). */
int gp_bundle_env(void *arg);
extern const char *const gp_bundle_env_rule;
bool gp_bundle_env_kept(const char *var, size_t name_len);

/* pid and its descendants (children of every thread, recursively, from
 * /proc/PID/task/TID/children), at most cap; returns how many. */
int gp_bundle_family(int pid, int *out, int cap);

#endif
