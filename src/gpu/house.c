/* The house: see house.h. */
#include "config.h"
#include "house.h"
#include "amdsys.h"
#include "nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gp_gpu_house {
	struct gp_gpu_house_opts o;
	char *nvml_lib;
	bool nvml_tried;
	struct gp_nvml *nvml;
	char nvml_why[256];
	bool have_t;
	double t;
	struct gp_amd_cards *cards;
};

struct gp_gpu_house *gp_gpu_house_new(const struct gp_gpu_house_opts *o)
{
	struct gp_gpu_house *h = calloc(1, sizeof *h);

	if (!h)
		return NULL;
	h->o = *o;
	if (o->nvml_lib && !(h->nvml_lib = strdup(o->nvml_lib))) {
		free(h);
		return NULL;
	}
	h->o.nvml_lib = h->nvml_lib;
	h->cards = gp_amd_cards_new(o->root);
	if (!h->cards) {
		gp_gpu_house_free(h);
		return NULL;
	}
	return h;
}

void gp_gpu_house_free(struct gp_gpu_house *h)
{
	if (!h)
		return;
	gp_nvml_close(h->nvml);
	gp_amd_cards_free(h->cards);
	free(h->nvml_lib);
	free(h);
}

const struct gp_root *gp_gpu_house_root(const struct gp_gpu_house *h)
{
	return h->o.root;
}

void gp_gpu_house_tick(struct gp_gpu_house *h, double t)
{
	if (h->have_t && t == h->t)
		return;
	h->have_t = true;
	h->t = t;
	gp_nvml_tick(h->nvml, t);
	gp_amd_cards_tick(h->cards);
}

struct gp_nvml *gp_gpu_house_nvml(struct gp_gpu_house *h, const char **why)
{
	if (!h->nvml_tried) {
		h->nvml_tried = true;
		if (h->o.flags & GP_HOUSE_NO_NVML) {
			snprintf(h->nvml_why, sizeof h->nvml_why, "not loaded (--no-nvml)");
		} else if (!h->o.root->live) {
			snprintf(h->nvml_why, sizeof h->nvml_why,
				 "recorded tree: NVML answers only live");
		} else {
			const char *lib = h->o.nvml_lib;
			if (!lib)
				lib = getenv("GPUPROBE_NVML_LIB");
			h->nvml = gp_nvml_open(lib, h->nvml_why, sizeof h->nvml_why);
			if (h->nvml && h->have_t)
				gp_nvml_tick(h->nvml, h->t);
		}
	}
	if (why)
		*why = h->nvml ? "" : h->nvml_why;
	return h->nvml;
}

struct gp_amd_cards *gp_gpu_house_cards(struct gp_gpu_house *h)
{
	return h->cards;
}

bool gp_gpu_device_path(const char *path)
{
	return !strncmp(path, "/dev/nvidia", 11) || !strcmp(path, "/dev/kfd")
	       || !strncmp(path, "/dev/dri/", 9);
}
