/* The GPU fields of a saved sample (doc/result-format.md, sample.gpu),
 * read the same way live and from a file: the model's own readers, so
 * that judging a result needs no probe (src/gpu/ writes these fields). */
#ifndef GP_GPUJSON_H
#define GP_GPUJSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct gp_gpu_totals {
	bool drm_seen, kfd_seen, nvml_seen;   /* which sources answered */
	unsigned drm_clients;                 /* after de-duplication */
	uint64_t drm_total_bytes;   /* sum over clients and regions of drm-total-<region> (or, lacking total, resident) */
	uint64_t drm_resident_bytes;/* sum of drm-resident-<region> */
	uint64_t gtt_bytes;         /* sum of the 'gtt' region (drm-total-gtt, or legacy drm-memory-gtt) */
	uint64_t vram_bytes;        /* sum of the 'vram' region (drm-total-vram or drm-memory-vram) */
	uint64_t engine_ns;         /* sum of drm-engine-<e> over engines and clients */
	uint64_t kfd_vram_bytes;    /* sum of /sys/class/kfd/kfd/proc/<pid>/vram_<gpuid> */
	uint64_t nvml_bytes;        /* sum of usedGpuMemory for this pid over devices */
};

/* Adds one parsed client (gp_fdinfo_parse's object) to tot's DRM sums
 * (not to drm_clients).  Pure; exposed for tests and for callers that
 * parse fdinfo captured elsewhere. */
void gp_fdinfo_add_totals(const json_t *client, struct gp_gpu_totals *tot);

/* The share over which a process's GPU work is said to run (trace). */
#define GP_GPU_BUSY_PCT 5.0

/* From a saved sample.gpu.activity object (gp_gpuact_json's shape;
 * anything else reads as unknown), for the verdict judging a loaded
 * result: is this process's work running (returned; *known: some source
 * could tell — NVML per process, a DRM engine not blind to it, KFD
 * occupancy), and its busiest measure in percent (0 when none). */
bool gp_gpuact_json_busy(const json_t *activity, double min_pct, bool *known);
double gp_gpuact_json_pct(const json_t *activity);

/* GPU work, not occupancy (model/gpuwork.h), from a sample.gpu.activity
 * object: its readings ("work": power, floor, util.memory, GPM; the
 * occupancy from "nvml", "drm" or "kfd") judged into pt.  Live (the
 * sampler, on the object it just wrote) and from a file alike. */
struct gp_gpu_work_pt;
void gp_gpuact_json_work(const json_t *activity, struct gp_gpu_work_pt *pt);

/* A sample's gpu object says the process holds a GPU context: NVML
 * lists it, DRM fdinfo has a client of it, or KFD a process (issue 29). */
bool gp_gpu_json_ctx(const json_t *gpu);

#endif
