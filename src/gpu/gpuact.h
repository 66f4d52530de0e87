/* GPU activity of one process, one read per sample (issue 13): is the GPU
 * executing this process's work while its host threads wait?
 *
 * Three sources, each optional, each absence said with its reason:
 *
 *  - NVML (nvml.c, the house's one handle): per-process SM and memory
 *    utilisation (nvmlDeviceGetProcessUtilization), device utilisation,
 *    clock-event (throttle) reasons, power, GPM.  NVIDIA's proprietary
 *    driver: no DRM fdinfo.
 *  - DRM fdinfo (drm.c): drm-engine-<e> busy time as a busy % between
 *    two reads; amdgpu's amd-evicted-vram.  On amdgpu the engine time
 *    counts only work submitted through DRM contexts, not KFD compute
 *    queues (HIP): see engine_kfd_blind below.
 *  - KFD sysfs (kfd.c, /sys/class/kfd/kfd/proc/PID/): queue evictions
 *    (stats_<gpu>/evicted_ms), CU occupancy, SDMA busy time, SVM fault
 *    counters; and the device's gpu_busy_percent and gpu_metrics
 *    (amdsys.c, read by the house once a tick).
 *
 * What is device-wide comes from the trace's house (house.h), read once a
 * tick for every process; this reader keeps what is the process's own
 * (its last-seen NVML samples, its engine and SDMA counters, its floors).
 *
 * /proc and /sys are read under a gp_root, so recorded trees replay
 * (tests/fixtures/gpuact).  NVML is asked only on the live root. */
#ifndef GP_GPUACT_H
#define GP_GPUACT_H

#include "gpujson.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "procfs.h"
#include "nvml.h"
#include "amdsys.h"
#include "house.h"
#include "drm.h"

enum {
	GP_GPUACT_NO_NVML = 1,	/* never load NVML (trace --no-nvml) */
};

struct gp_gpuact_opts {
	/* The trace's house (gpu/house.h), shared with every other reader
	 * of the trace; must outlive the reader.  NULL: the reader makes its
	 * own from root, nvml_lib and flags (a tool of one reader). */
	struct gp_gpu_house *house;
	const struct gp_root *root;	/* without a house: must outlive the reader */
	int pid;
	/* Without a house: NULL for $GPUPROBE_NVML_LIB when set (tests point
	 * it at tests/gpu/libnvidia-ml.so.1), else "libnvidia-ml.so.1". */
	const char *nvml_lib;
	unsigned flags;
};

#define GP_GPUACT_WHY GP_AMD_WHY

/* One read.  A have_* false means "not known", never "idle"; its why_*
 * says why.  Percentages are 0-100 (engine and SDMA per engine group). */
struct gp_gpu_activity {
	double t;		/* the caller's time of the read, s */
	double dt;		/* since the previous read; 0 at the first */

	/* NVML, this process */
	bool have_nvml;		/* nvmlDeviceGetProcessUtilization answered */
	double sm_pct, mem_pct;	/* busiest of its GPUs, mean over the period
				 * since the last read; 0: no sample = not
				 * active in the period (NVML returns only
				 * active processes) */
	unsigned sm_max_pct;	/* highest single sample */
	unsigned nvml_samples;	/* samples of this pid in the period */
	int nvml_gpu;		/* NVML index of that GPU, -1 */
	bool nvml_no_context;	/* in no NVML memory list: no CUDA context
				 * on any GPU, so no kernel of its own (0 %,
				 * known, and not asked: see read_nvml) */
	/* NVML, the device(s) */
	bool have_dev_util;
	double dev_util_pct, dev_mem_util_pct;	/* busiest GPU of the process */
	bool dev_util_all_gpus;	/* the process holds no GPU: over all GPUs */
	bool have_throttle;
	unsigned long long throttle;	/* clock-event reasons, OR of those GPUs */
	/* Work, not occupancy (issue 19): the device readings (power, its
	 * floor, SM clock and count, GPM) of the GPU this process's kernel
	 * ran on most (nvml_gpu), else the first it holds memory on. */
	bool have_work;
	struct gp_nvml_dev_act work;

	/* DRM fdinfo */
	bool have_drm_engine;	/* engine time at this and the previous read */
	double engine_busy_pct;	/* busiest engine: Δns / Δt / capacity */
	char engine[32];	/* its name: "gfx", "compute", "dma", "rcs", ... */
	uint64_t engine_ns;	/* sum over engines and clients, cumulative */
	bool engine_kfd_blind;	/* an amdgpu client: KFD (HIP) queues are
				 * not in drm-engine-*, a flat engine time
				 * says nothing of compute */
	bool have_drm_evicted;
	uint64_t drm_evicted_vram_bytes;	/* amd-evicted-vram, sum */

	/* KFD */
	bool have_kfd;
	uint64_t kfd_evicted_ms;	/* stats_<gpu>/evicted_ms, sum, cumulative */
	uint64_t kfd_evicted_ms_delta;	/* since the previous read */
	bool have_cu_occupancy;
	uint64_t cu_occupancy;		/* stats_<gpu>/cu_occupancy, sum */
	bool have_sdma;
	double sdma_busy_pct;		/* Δsdma_<gpu> µs / Δt, sum over GPUs */
	bool have_kfd_faults;
	uint64_t kfd_faults, kfd_page_in, kfd_page_out;	/* counters_<gpu>/ */

	/* amdgpu device */
	bool have_gpu_busy;
	double gpu_busy_pct;	/* max gpu_busy_percent of its devices */
	bool gpu_busy_all_cards;	/* device unknown: over every card */
	/* amdgpu gpu_metrics (issue 19) of the card with the highest
	 * gpu_busy_percent: average_gfx_activity is time-based like
	 * gpu_busy_percent; average_umc_activity (memory controller, %) and
	 * average_socket_power (W) say whether a resident kernel works. */
	bool have_gfx_activity, have_umc_activity, have_socket_power;
	double gfx_activity_pct, umc_activity_pct, socket_power_w;
	/* The lowest socket power of that card read while this process was
	 * a KFD process with no wave resident and the card's
	 * gpu_busy_percent was 0: its floor (per reader, as NVML's). */
	bool have_amd_floor;
	double amd_floor_w;

	/* Why a source is absent ("" when present). */
	char why_nvml[GP_GPUACT_WHY], why_drm[GP_GPUACT_WHY],
	     why_kfd[GP_GPUACT_WHY], why_gpu_busy[GP_GPUACT_WHY],
	     why_gpu_metrics[GP_GPUACT_WHY];
	/* A why_* differs from the previous read's (always true at the
	 * first): write "absent" this sample, so each absence is said once. */
	bool absent_changed;
};

struct gp_gpuact;

/* NULL on allocation failure only. */
struct gp_gpuact *gp_gpuact_new(const struct gp_gpuact_opts *o);
void gp_gpuact_free(struct gp_gpuact *r);

/* Reads the activity at time t (seconds, the caller's clock: the
 * sampler's t; the house's tick, gp_gpu_house_tick).  gpumem: the object gp_gpu_read returned for the same
 * pid this sample (its "drm" clients and "nvml" rows are used, not read
 * again), or NULL: the reader reads DRM fdinfo itself.  Returns 0; -1
 * with errno only when memory runs out. */
int gp_gpuact_read(struct gp_gpuact *r, double t, const json_t *gpumem,
		   struct gp_gpu_activity *out);

/* The JSON of sample.gpu.activity (doc in the source, gpuact.c).
 * with_absent: add "absent" (write it when a->absent_changed). */
json_t *gp_gpuact_json(const struct gp_gpu_activity *a, bool with_absent);

/* One line for a person: "GPU: this process 100% SM (NVML, GPU 0); device
 * 100%" or "GPU: idle (NVML: no sample of this process in 1.0 s)" or
 * "GPU: unknown (no NVML: ...; no DRM fdinfo; ...)".  For idle's table
 * and the verdict's evidence. */
void gp_gpuact_text(const struct gp_gpu_activity *a, char *buf, size_t cap);

/* The GPU executes this process's work: NVML sm_pct or mem_pct, DRM
 * engine busy, KFD CU occupancy or SDMA busy at or over min_pct.  False
 * also when unknown: check gp_gpuact_known. */
bool gp_gpuact_busy(const struct gp_gpu_activity *a, double min_pct);
/* Its busiest measure (%), 0 when none is known. */
double gp_gpuact_pct(const struct gp_gpu_activity *a);
/* Some source could say whether this process's work runs (NVML per
 * process, a DRM engine not blind to it, KFD occupancy). */
bool gp_gpuact_known(const struct gp_gpu_activity *a);


#endif
