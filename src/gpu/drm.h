/* DRM fdinfo of one process (/proc/PID/fdinfo/FD of each DRM fd), the
 * kernel's "DRM client usage stats" (Documentation/gpu/drm-usage-stats.rst):
 * amdgpu, i915, xe, panfrost/panthor, msm, v3d, ...  A process's own, so
 * one reader a process; the fds it keeps open between samples make the
 * next read one pread a DRM fd.  Read under a gp_root, so recorded trees
 * replay (tests/fixtures/gpumem). */
#ifndef GP_DRM_H
#define GP_DRM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "procfs.h"
#include "gpujson.h"

/* Pure parser of one /proc/PID/fdinfo/FD text.  Returns a json object of
 * the client, or NULL when the text holds no drm-driver key (not a DRM
 * fd):
 *   {"driver":s, "pdev":s, "client_id":N, "name":s,
 *    "memory":{"<region>":{"total":B,"resident":B,"shared":B,
 *                          "purgeable":B,"active":B}},
 *    "engine_ns":{"<e>":N}, "engine_capacity":{"<e>":N},
 *    "cycles":{"<e>":N}, "total_cycles":{"<e>":N}, "maxfreq_hz":{"<e>":N},
 *    "legacy":{"drm-memory-<region>":B}, "other":{"<key>":N}}
 * Only the keys present in the text appear; bytes are integers. */
json_t *gp_fdinfo_parse(const char *text);


struct gp_drm_reader;

/* root must outlive the reader.  NULL on allocation failure only. */
struct gp_drm_reader *gp_drm_reader_new(const struct gp_root *root, int pid);
void gp_drm_reader_free(struct gp_drm_reader *r);

/* Appends pid's DRM clients to arr (one per drm_file: dup()ed fds count
 * once, each client with "fds":[3,7]) and adds them to tot (drm_seen,
 * drm_clients and the memory totals).  A process gone or unreadable
 * simply adds none. */
void gp_drm_read(struct gp_drm_reader *r, json_t *arr, struct gp_gpu_totals *tot);

/* ---- engine time (drm-engine-<e>), as busy % between two reads ---- */

/* One engine counter of one DRM client at the previous read. */
struct gp_drm_eng {
	char key[320];		/* driver/pdev/client-id/engine */
	uint64_t ns;
};
/* A process's counters at its previous read; zero-initialise. */
struct gp_drm_engines {
	struct gp_drm_eng *eng;
	size_t n;
};
void gp_drm_engines_free(struct gp_drm_engines *st);

/* From drm (a "drm" array of gp_drm_read, this read's), dt seconds after
 * the previous read (have_prev) whose counters st keeps: a's DRM fields
 * (gpuact.h: have_drm_engine, engine_busy_pct, engine, engine_ns,
 * engine_kfd_blind, the amdgpu evictions; why_drm), which the caller
 * zeroed.  live: the root is the running system (for the reasons). */
struct gp_gpu_activity;
void gp_drm_activity(const json_t *drm, int pid, bool live, bool have_prev, double dt,
		     struct gp_drm_engines *st, struct gp_gpu_activity *a);

/* Pure: DRM engine busy between two sample.gpu objects (their "drm"
 * arrays) dt seconds apart.  Returns false when no client has an engine
 * counter in both.  For tests and replays of saved samples. */
bool gp_drm_engine_busy(const json_t *prev, const json_t *cur, double dt,
			double *busy_pct, char *engine, size_t cap);

#endif
