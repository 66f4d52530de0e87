/* The environment facts a maintainer asks for first (ROCm's issue
 * template, seed 000's "Environment" section): OS and kernel, CPU, GPUs
 * and their drivers, WSL, device nodes and this user's access to them,
 * the GPU runtimes' real files, versions and build-ids, the GPU
 * environment variables, writeback and THP settings, Yama, ulimit -l,
 * MemAvailable.
 *
 * Everything under /proc, /sys, /dev and /etc is read through the root,
 * so a captured tree replays.  What describes this process rather than the
 * host (environment, ulimit, the runtimes dlopen finds) is read live, and
 * only for a live root unless asked.
 *
 * Here, beside sysinfo.c, and not in src/info/: trace, stacks, lock and
 * idle write these facts into their result headers, and `info` prints
 * them; a reader that serves five commands sits below them all. */
#ifndef GP_HOSTINFO_H
#define GP_HOSTINFO_H

#include "procfs.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

struct gp_host_info_opts {
	bool runtimes;        /* dlopen the HSA and CUDA runtimes to find them */
	bool process;         /* environment and ulimit -l of this process */
	const char *hsa_lib;  /* --lib: this HSA runtime instead of the default name */
};

/* The header's `host` object: gp_host_facts() (kernel, cpus, page_size,
 * clk_tck, vm.dirty_*, ...) plus everything above.  For a live root the
 * runtimes and the process facts are included; for a replayed one not. */
json_t *gp_host_info(const struct gp_root *root);
json_t *gp_host_info_ex(const struct gp_root *root, const struct gp_host_info_opts *o);

/* Pieces, pure or nearly, for tests. */
/* "1.18.70204" from ".../libhsa-runtime64.so.1.18.70204"; NULL if none. */
const char *gp_soname_version(const char *path);
/* The GNU build-id of an ELF file as hex, into buf; false if none. */
bool gp_elf_build_id(const char *path, char *buf, size_t cap);
/* The same of PATH opened read-only under ROOT (procfs.h: a replayed tree
 * holds its own files), with its DT_SONAME into soname ("" when none);
 * false, id "", when the file cannot be read or has no build-id. */
bool gp_elf_ids_at(const struct gp_root *root, const char *path, char *id, size_t idcap,
		   char *soname, size_t socap);
/* "580.159.04" from /proc/driver/nvidia/version's first line. */
bool gp_nvidia_version(const char *banner, char *buf, size_t cap);
/* The selected word of a sysfs choice file: "always [madvise] never" -> "madvise". */
bool gp_sysfs_choice(const char *text, char *buf, size_t cap);

/* The variables of this process's environment whose names begin with one
 * of PREFIXES (NULL ended), as an object; a value not UTF-8 is escaped
 * (gp_json_string). */
json_t *gp_env_json(const char *const *prefixes);

/* Its renderers (text, Markdown) are src/render/host_text.c's. */

#endif
