/* KFD: /sys/class/kfd/kfd/proc/<pid>/ (amdkfd's kfd_process.c), what
 * ROCm allocated and ran through /dev/kfd, which DRM fdinfo does not see.
 * A process's own directory: read for each process, under a gp_root so
 * recorded trees replay (tests/fixtures/gpuact, tests/fixtures/gpumem). */
#ifndef GP_KFD_H
#define GP_KFD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procfs.h"
#include "gpujson.h"

#define GP_KFD_WHY 192

/* sample.gpu.kfd of pid: {"vram":{"<gpuid>":B}, "sdma_us":{"<gpuid>":N},
 * "pasid":N}, its VRAM added to tot (kfd_seen, kfd_vram_bytes); NULL when
 * pid is no KFD process. */
json_t *gp_kfd_mem_read(const struct gp_root *root, int pid, struct gp_gpu_totals *tot);

/* A process's counters at its previous read; zero-initialise. */
struct gp_kfd_gpu {
	char id[16];
	uint64_t sdma_us;
	bool have_sdma;
};
struct gp_kfd_state {
	struct gp_kfd_gpu gpu[16];
	size_t n;
	bool have_prev;
	uint64_t evicted_ms_prev;
};

/* One read of its activity, dt seconds after the previous. */
struct gp_kfd_act {
	bool have;			/* the directory was read */
	uint64_t evicted_ms;		/* stats_<gpu>/evicted_ms, sum, cumulative */
	uint64_t evicted_ms_delta;	/* since the previous read */
	bool have_cu_occupancy;
	uint64_t cu_occupancy;		/* stats_<gpu>/cu_occupancy, sum */
	bool have_sdma;
	double sdma_busy_pct;		/* Δsdma_<gpu> µs / Δt, sum over GPUs */
	bool have_faults;
	uint64_t faults, page_in, page_out;	/* counters_<gpu>/ */
	char why[GP_KFD_WHY];		/* !have: why */
};

void gp_kfd_act_read(const struct gp_root *root, int pid, double dt,
		     struct gp_kfd_state *st, struct gp_kfd_act *out);

#endif
