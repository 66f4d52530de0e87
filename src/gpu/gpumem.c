#include "config.h"
#include "satmath.h"
#include "gpumem.h"
#include "drm.h"
#include "kfd.h"
#include "house.h"
#include "nvml.h"
#include "parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gp_gpu_reader {
	struct gp_gpu_house *house;
	bool own_house;
	const struct gp_root *root;
	int pid;
	unsigned flags;
	struct gp_drm_reader *drm;
};

struct gp_gpu_reader *gp_gpu_reader_new_in(struct gp_gpu_house *house, int pid,
					   unsigned flags)
{
	struct gp_gpu_reader *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->house = house;
	r->root = gp_gpu_house_root(house);
	r->pid = pid;
	r->flags = flags;
	r->drm = gp_drm_reader_new(r->root, pid);
	if (!r->drm) {
		free(r);
		return NULL;
	}
	return r;
}

struct gp_gpu_reader *gp_gpu_reader_new(const struct gp_root *root, int pid,
					unsigned flags)
{
	struct gp_gpu_house_opts ho = { .root = root,
		.flags = flags & GP_GPU_NO_NVML ? GP_HOUSE_NO_NVML : 0 };
	struct gp_gpu_house *h = gp_gpu_house_new(&ho);
	struct gp_gpu_reader *r = h ? gp_gpu_reader_new_in(h, pid, flags) : NULL;

	if (!r) {
		gp_gpu_house_free(h);
		return NULL;
	}
	r->own_house = true;
	return r;
}

void gp_gpu_reader_free(struct gp_gpu_reader *r)
{
	if (!r)
		return;
	gp_drm_reader_free(r->drm);
	if (r->own_house)
		gp_gpu_house_free(r->house);
	free(r);
}

/* ------------------------------------------------------------------ */

/* "nvml": the rows; or, when NVML is loaded but a process list could not
 * be read, "nvml_unknown": why (the process may hold memory there). */
static void read_nvml(struct gp_gpu_reader *r, json_t *out,
		      struct gp_gpu_totals *tot)
{
	/* The trace's one handle (a machine without NVML costs one failed
	 * dlopen a trace; a replay root has no NVML to ask), whose process
	 * lists are read once a tick for every process (nvml.h). */
	struct gp_nvml *nv = r->flags & GP_GPU_NO_NVML ? NULL
			     : gp_gpu_house_nvml(r->house, NULL);
	if (!nv)
		return;
	json_t *arr = json_array();
	if (!gp_nvml_proc_memory(nv, r->pid, arr, &tot->nvml_bytes)) {
		json_decref(arr);
		if (*gp_nvml_why(nv))
			json_object_set_new(out, "nvml_unknown",
					    json_string(gp_nvml_why(nv)));
		return;
	}
	tot->nvml_seen = true;
	json_object_set_new(out, "nvml", arr);
}

int gp_gpu_read(struct gp_gpu_reader *r, json_t **gpu,
		struct gp_gpu_totals *tot)
{
	json_t *out = json_object();
	json_t *drm = json_array();

	memset(tot, 0, sizeof *tot);
	*gpu = NULL;
	if (!out || !drm || json_object_set_new(out, "drm", drm)) {
		json_decref(out);
		errno = ENOMEM;
		return -1;
	}
	gp_drm_read(r->drm, drm, tot);
	json_t *kfd = gp_kfd_mem_read(r->root, r->pid, tot);
	if (kfd)
		json_object_set_new(out, "kfd", kfd);
	read_nvml(r, out, tot);
	*gpu = out;
	return 0;
}
