/* Per-process GPU memory and engine time, from every source the kernel
 * and the driver offer without attaching to the process:
 *
 *  - DRM fdinfo (drm.c), the kernel's "DRM client usage stats"
 *    (Documentation/gpu/drm-usage-stats.rst): amdgpu, i915, xe,
 *    panfrost/panthor, msm, v3d, ...
 *  - KFD (kfd.c, /sys/class/kfd/kfd/proc/PID/vram_GPUID): what ROCm
 *    allocated through /dev/kfd, which DRM fdinfo does not see.
 *  - NVML (nvml.c through the trace's house, live root only): the NVIDIA
 *    proprietary driver has no DRM fdinfo for CUDA memory; the process
 *    lists are read once a tick for every process of the trace.
 *
 * A source that is missing is simply absent from the sample: a flat or
 * missing GPU counter alone never proves anything (DESIGN.md). */
#ifndef GP_GPUMEM_H
#define GP_GPUMEM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "procfs.h"
#include "gpujson.h"
#include "drm.h"


/* Flags of gp_gpu_reader_new(). */
enum {
	GP_GPU_NO_NVML = 1,	/* never dlopen libnvidia-ml */
};

struct gp_gpu_reader;

/* house (gpu/house.h: the trace's, shared with every reader of it)
 * must outlive the reader; its NVML handle is used, unless flags has
 * GP_GPU_NO_NVML.  NULL on allocation failure only: a pid that does not
 * exist (yet) just reads as no sources. */
struct gp_gpu_house;
struct gp_gpu_reader *gp_gpu_reader_new_in(struct gp_gpu_house *house, int pid,
					   unsigned flags);
/* A reader with a house of its own (root must outlive it; NVML from
 * $GPUPROBE_NVML_LIB, else libnvidia-ml.so.1): for a one-off read of
 * one process.  Readers of a trace share its house (_new_in). */
struct gp_gpu_reader *gp_gpu_reader_new(const struct gp_root *root, int pid,
					unsigned flags);

/* One sample: *gpu gets a new json object
 * {"drm":[clients...], "kfd":{...}|absent, "nvml":[...]|absent}; each DRM
 * client also carries "fds":[3,7].  "nvml_unknown":"why" instead of
 * "nvml" when NVML is loaded but a process list came back unreadable
 * (entries of no known layout: nvmlproc.h).  totals filled.  Returns 0; never fails
 * because one source is missing (a missing source is just absent);
 * -1 with errno only when memory runs out. */
int gp_gpu_read(struct gp_gpu_reader *r, json_t **gpu,
		struct gp_gpu_totals *tot);

void gp_gpu_reader_free(struct gp_gpu_reader *r);

#endif
