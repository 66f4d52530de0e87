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

/* pid's KFD activity, dt seconds after its previous read (st), into
 * a's KFD fields (gpuact.h: have_kfd, kfd_evicted_ms, cu_occupancy,
 * sdma_busy_pct, the SVM counters; why_kfd when the directory is not
 * there), which the caller zeroed. */
struct gp_gpu_activity;
void gp_kfd_act_read(const struct gp_root *root, int pid, double dt,
		     struct gp_kfd_state *st, struct gp_gpu_activity *a);

#endif
