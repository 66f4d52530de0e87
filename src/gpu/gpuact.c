/* GPU activity per process and sample: see gpuact.h. */
#include "config.h"
#include "satmath.h"
#include "gpuact.h"
#include "gpumem.h"
#include "kfd.h"
#include "drm.h"
#include "result.h"
#include "nvml.h"
#include "parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One amdgpu card's power floor (read_card). */
struct amd_floor {
	char key[320];		/* its device directory */
	double w;
	bool set;
};

struct gp_gpuact {
	struct gp_gpuact_opts o;
	struct gp_gpu_reader *mem;	/* DRM fdinfo when no gpumem is given */
	struct gp_gpu_house *house;	/* the trace's (o.house), or its own */
	bool own_house;
	struct gp_nvml *nvml;		/* the house's */
	struct gp_nvml_seen seen;
	struct gp_drm_engines eng;	/* DRM engine counters at the last read */
	struct gp_kfd_state kfd;
	bool have_prev;
	double t_prev;
	char why_prev[5][GP_GPUACT_WHY];
	/* Per GPU (NVML index < 64): the lowest power read while this process
	 * held a context there and ran no kernel, and the GPU none at all --
	 * its floor.  Not the lowest power ever: a GPU with no context drops
	 * to a deeper P-state (81 W on the H200, against 125 W with a context
	 * and no kernel), which made a one-thread spin read +44 W of "work". */
	double floor_w[64];
	unsigned long long floor_set;
	/* amdgpu: the same floor per card (read_card), socket power. */
	struct amd_floor amd_floor[16];
	size_t namd_floor;
};

struct gp_gpuact *gp_gpuact_new(const struct gp_gpuact_opts *o)
{
	struct gp_gpuact *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->o = *o;
	r->house = o->house;
	if (!r->house) {
		struct gp_gpu_house_opts ho = { .root = o->root, .nvml_lib = o->nvml_lib,
			.flags = o->flags & GP_GPUACT_NO_NVML ? GP_HOUSE_NO_NVML : 0 };
		r->house = gp_gpu_house_new(&ho);
		r->own_house = true;
		if (!r->house) {
			free(r);
			return NULL;
		}
	}
	r->o.root = gp_gpu_house_root(r->house);
	return r;
}

void gp_gpuact_free(struct gp_gpuact *r)
{
	if (!r)
		return;
	gp_gpu_reader_free(r->mem);
	if (r->own_house)
		gp_gpu_house_free(r->house);
	gp_drm_engines_free(&r->eng);
	free(r);
}

static void why(char *dst, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why(char *dst, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, GP_GPUACT_WHY, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* amdgpu gpu_busy_percent                                             */
/* ------------------------------------------------------------------ */

/* The floor of the card whose device directory is key: its slot, added
 * when new (NULL when full). */
static struct amd_floor *amd_floor_slot(struct gp_gpuact *r, const char *key, bool add)
{
	for (size_t i = 0; i < r->namd_floor; i++)
		if (!strcmp(r->amd_floor[i].key, key))
			return &r->amd_floor[i];
	if (!add || r->namd_floor == sizeof r->amd_floor / sizeof r->amd_floor[0])
		return NULL;
	struct amd_floor *f = &r->amd_floor[r->namd_floor++];
	memset(f, 0, sizeof *f);
	snprintf(f->key, sizeof f->key, "%s", key);
	return f;
}

/* One card: dir is its device directory ("/sys/bus/pci/devices/<pdev>"
 * or "/sys/class/drm/cardN/device"), read by the house once a tick
 * (amdsys.h).  The card with the highest gpu_busy_percent so far (the
 * first on a tie) gives the device fields. */
static void read_card(struct gp_gpuact *r, const char *dir, bool all_cards,
		      struct gp_gpu_activity *a)
{
	const struct gp_amd_card *c = gp_amd_card_read(gp_gpu_house_cards(r->house), dir);

	if (!c)
		return;
	unsigned v = c->busy_pct;
	bool first = !a->have_gpu_busy, best = first || (double)v > a->gpu_busy_pct;
	if (best)
		a->gpu_busy_pct = (double)v;
	a->have_gpu_busy = true;
	if (all_cards)
		a->gpu_busy_all_cards = true;

	bool ok = c->metrics_ok;
	const struct gp_amd_metrics *m = &c->m;
	/* The floor: this process a KFD process with no wave resident, the
	 * card idle by its own count.  Not the lowest power ever (a card no
	 * process holds may sit in a deeper state, as NVML's floor found). */
	struct amd_floor *f = NULL;
	if (ok && m->have_power && v == 0 && a->have_kfd && a->have_cu_occupancy &&
	    a->cu_occupancy == 0) {
		f = amd_floor_slot(r, dir, true);
		if (f && (!f->set || m->power_w < f->w)) {
			f->set = true;
			f->w = m->power_w;
		}
	}
	if (!best)
		return;
	a->have_gfx_activity = ok && m->have_gfx;
	a->gfx_activity_pct = m->gfx_pct;
	a->have_umc_activity = ok && m->have_umc;
	a->umc_activity_pct = m->umc_pct;
	a->have_socket_power = ok && m->have_power;
	a->socket_power_w = m->power_w;
	f = amd_floor_slot(r, dir, false);
	a->have_amd_floor = a->have_socket_power && f && f->set;
	a->amd_floor_w = a->have_amd_floor ? f->w : 0;
	snprintf(a->why_gpu_metrics, sizeof a->why_gpu_metrics, "%s", ok ? "" : c->why);
}

/* amdgpu_pm.c: "gpu_busy_percent: ... how busy the GPU is as a
 * percentage", the SMU's average GFX activity: whole device, every
 * process.  The process's devices are the drm-pdev of its DRM clients;
 * without one, every card (and the result says so).  gpu_metrics of the
 * same card beside it. */
static void read_gpu_busy(struct gp_gpuact *r, const json_t *gpumem,
			  struct gp_gpu_activity *a)
{
	json_t *drm = json_object_get(gpumem, "drm");
	char path[320];
	size_t i;
	json_t *c;

	json_array_foreach(drm, i, c) {
		const char *pdev = json_string_value(json_object_get(c, "pdev"));

		/* A PCI address ("0000:03:00.0"), nothing that walks the
		 * tree (a replayed fdinfo is any text). */
		if (!pdev || !*pdev || strspn(pdev, "0123456789abcdefABCDEF:.") != strlen(pdev))
			continue;
		snprintf(path, sizeof path, "/sys/bus/pci/devices/%s", pdev);
		read_card(r, path, false, a);
	}
	if (a->have_gpu_busy)
		return;
	int dfd = gp_open(r->o.root, "/sys/class/drm", O_DIRECTORY);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		why(a->why_gpu_busy, "no /sys/class/drm (no DRM driver)");
		return;
	}
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "card", 4) || strchr(de->d_name, '-') ||
		    de->d_name[4] < '0' || de->d_name[4] > '9')
			continue;
		snprintf(path, sizeof path, "/sys/class/drm/%s/device", de->d_name);
		read_card(r, path, true, a);
	}
	closedir(dir);
	if (!a->have_gpu_busy)
		why(a->why_gpu_busy, "no gpu_busy_percent in /sys/class/drm/card*/device (no amdgpu device)");
}

/* ------------------------------------------------------------------ */
/* NVML                                                                */
/* ------------------------------------------------------------------ */

static bool nvml_ready(struct gp_gpuact *r, struct gp_gpu_activity *a)
{
	const char *w;

	r->nvml = gp_gpu_house_nvml(r->house, &w);
	if (!r->nvml)
		snprintf(a->why_nvml, sizeof a->why_nvml, "%s", w);
	return r->nvml != NULL;
}

/* The NVML indexes of the GPUs this process holds memory on: from the
 * gpumem sample's "nvml" rows, else asked now.  *answered: NVML's
 * memory lists answered (a pid absent from them has no CUDA context on
 * any GPU, so runs no kernel). */
static unsigned long long nvml_own_gpus(struct gp_gpuact *r, const json_t *gpumem,
					bool *answered)
{
	json_t *rows = json_object_get(gpumem, "nvml");
	json_t *mine = NULL;
	unsigned long long mask = 0;
	size_t i;
	json_t *row;
	uint64_t idx, bytes = 0;

	*answered = json_is_array(rows);
	/* The sample already found a list unreadable: not asked twice. */
	if (!*answered && !json_object_get(gpumem, "nvml_unknown")) {
		mine = json_array();
		*answered = gp_nvml_proc_memory(r->nvml, r->o.pid, mine, &bytes);
		rows = mine;
	}
	json_array_foreach(rows, i, row)
		if (gp_json_get_u64(row, "index", &idx) && idx < 64)
			mask |= 1ull << idx;
	json_decref(mine);
	return mask;
}

/* NVML's process utilisation costs 1.5 ms of CPU a call and GPU on the
 * H200: ask only the GPUs the process holds memory on.  A process in no
 * memory list has no context, so no kernel runs for it: 0 %, known, at
 * no cost.  Device utilisation of those GPUs (all, when it holds none:
 * the busiest GPU, flagged dev_all_gpus). */
static void read_nvml(struct gp_gpuact *r, const json_t *gpumem,
		      struct gp_gpu_activity *a)
{
	struct gp_nvml_dev_act d[GP_NVML_MAX_GPUS];
	char en[48];
	int err = 0;
	bool answered;

	a->nvml_gpu = -1;
	if (!nvml_ready(r, a))
		return;
	unsigned long long own = nvml_own_gpus(r, gpumem, &answered);
	unsigned n;

	if (answered && !own) {
		a->have_nvml = true;	/* no context anywhere: 0 % */
		a->nvml_no_context = true;
		a->dev_util_all_gpus = true;
		n = gp_nvml_activity(r->nvml, -1, &r->seen, 0, d, GP_NVML_MAX_GPUS);
	} else {
		n = gp_nvml_activity(r->nvml, r->o.pid, &r->seen, own, d,
				     GP_NVML_MAX_GPUS);
	}
	int best = -1;
	for (unsigned i = 0; i < n && !(answered && !own); i++) {
		if (best < 0)
			best = (int)i;
		if (!d[i].have_proc) {
			err = d[i].proc_err;
			continue;
		}
		a->have_nvml = true;
		a->nvml_samples += d[i].u.samples;
		if (d[i].u.samples && (a->nvml_gpu < 0 || d[i].u.sm_pct > a->sm_pct)) {
			a->sm_pct = d[i].u.sm_pct;
			a->mem_pct = d[i].u.mem_pct;
			a->nvml_gpu = (int)d[i].index;
			best = (int)i;
		}
		if (d[i].u.sm_max_pct > a->sm_max_pct)
			a->sm_max_pct = d[i].u.sm_max_pct;
	}
	if (!a->have_nvml)
		why(a->why_nvml, "nvmlDeviceGetProcessUtilization: %s",
		    gp_nvml_error_name(err, en, sizeof en));
	if (best >= 0) {
		a->have_work = true;
		a->work = d[best];
		struct gp_nvml_dev_act *w = &a->work;
		unsigned gi = w->index;
		if (gi < 64 && own && (own & (1ull << gi)) && w->have_power && d[best].have_proc &&
		    d[best].u.samples == 0 && w->have_util && w->util_pct == 0 &&
		    (!(r->floor_set & (1ull << gi)) || w->power_w < r->floor_w[gi])) {
			r->floor_set |= 1ull << gi;
			r->floor_w[gi] = w->power_w;
		}
		w->have_floor = gi < 64 && (r->floor_set & (1ull << gi));
		w->floor_w = w->have_floor ? r->floor_w[gi] : 0;
	}
	for (unsigned i = 0; i < n; i++) {
		if (d[i].have_util) {
			if (!a->have_dev_util || d[i].util_pct > a->dev_util_pct) {
				a->dev_util_pct = d[i].util_pct;
				a->dev_mem_util_pct = d[i].mem_util_pct;
			}
			a->have_dev_util = true;
		}
		if (d[i].have_throttle) {
			a->have_throttle = true;
			a->throttle |= d[i].throttle;
		}
	}
}

/* ------------------------------------------------------------------ */

int gp_gpuact_read(struct gp_gpuact *r, double t, const json_t *gpumem,
		   struct gp_gpu_activity *a)
{
	json_t *own = NULL;

	memset(a, 0, sizeof *a);
	a->t = t;
	a->dt = r->have_prev ? t - r->t_prev : 0;
	gp_gpu_house_tick(r->house, t);
	if (!gpumem) {
		struct gp_gpu_totals tot;
		if (!r->mem)
			r->mem = gp_gpu_reader_new_in(r->house, r->o.pid, GP_GPU_NO_NVML);
		if (!r->mem || gp_gpu_read(r->mem, &own, &tot) < 0) {
			errno = ENOMEM;
			return -1;
		}
		gpumem = own;
	}
	gp_drm_activity(json_object_get(gpumem, "drm"), r->o.pid, r->o.root->live,
			r->have_prev, a->dt, &r->eng, a);
	gp_kfd_act_read(r->o.root, r->o.pid, a->dt, &r->kfd, a);
	read_gpu_busy(r, gpumem, a);
	read_nvml(r, gpumem, a);
	json_decref(own);

	char *w[5] = { a->why_nvml, a->why_drm, a->why_kfd, a->why_gpu_busy,
		       a->why_gpu_metrics };
	a->absent_changed = !r->have_prev;
	for (int i = 0; i < 5; i++) {
		if (strcmp(w[i], r->why_prev[i]))
			a->absent_changed = true;
		snprintf(r->why_prev[i], GP_GPUACT_WHY, "%s", w[i]);
	}
	r->have_prev = true;
	r->t_prev = t;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static void set_pct(json_t *o, const char *k, double v)
{
	/* One decimal: a percentage of a 1 Hz sample is not more precise. */
	json_object_set_new(o, k, json_real((double)(long long)(v * 10 + 0.5) / 10));
}

static void set_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)));
}

/* sample.gpu.activity.work (issue 19): the device readings the GPU work
 * judgement takes (model/gpujson.c reads them back, live and replayed). */
static json_t *work_json(const struct gp_nvml_dev_act *w)
{
	json_t *o = json_object();
	json_object_set_new(o, "gpu", json_integer(w->index));
	if (w->have_util) {
		set_pct(o, "util_pct", w->util_pct);
		set_pct(o, "mem_util_pct", w->mem_util_pct);
	}
	if (w->have_power)
		set_pct(o, "power_w", w->power_w);
	if (w->have_floor)
		set_pct(o, "floor_w", w->floor_w);
	if (w->have_sm_clock)
		json_object_set_new(o, "sm_clock_mhz", json_integer(w->sm_clock_mhz));
	if (w->sms)
		json_object_set_new(o, "sms", json_integer(w->sms));
	/* Other processes' kernels on this GPU (issue 22): 0 is a reading,
	 * written where NVML's per-process samples were read. */
	if (w->have_proc) {
		json_object_set_new(o, "others", json_integer(w->u.others));
		if (w->u.others) {
			set_pct(o, "others_sm_pct", w->u.others_sm_pct);
			json_object_set_new(o, "other_pid", json_integer(w->u.other_pid));
			set_pct(o, "other_sm_pct", w->u.other_sm_pct);
		}
	}
	if (w->have_gpm) {
		json_t *g = json_object();
		set_pct(g, "sm_util", w->gpm_sm_util);
		set_pct(g, "sm_occ", w->gpm_sm_occ);
		set_pct(g, "tensor", w->gpm_tensor);
		set_pct(g, "fp16", w->gpm_fp16);
		set_pct(g, "fp32", w->gpm_fp32);
		set_pct(g, "fp64", w->gpm_fp64);
		set_pct(g, "int", w->gpm_int);
		set_pct(g, "dram", w->gpm_dram);
		json_object_set_new(o, "gpm", g);
	} else if (w->gpm_why) {
		json_object_set_new(o, "gpm_absent", json_string(w->gpm_why));
	}
	return o;
}

/* sample.gpu.activity:
 *   "nvml":   {"sm_pct","mem_pct","sm_max_pct","samples","gpu","no_context",
 *              "dev_util_pct","dev_mem_util_pct","dev_all_gpus",
 *              "throttle"}                     when have_nvml/have_dev_util
 *   "drm":    {"engine_busy_pct","engine","engine_ns","kfd_blind",
 *              "evicted_vram_bytes"}           when a DRM client was read
 *   "kfd":    {"evicted_ms","evicted_ms_delta","cu_occupancy",
 *              "sdma_busy_pct","faults","page_in","page_out"}   when have_kfd
 *   "device": {"gpu_busy_pct","all_cards","gfx_activity_pct",
 *              "umc_activity_pct","socket_power_w","floor_w"}
 *                                              when have_gpu_busy (the
 *              last four from gpu_metrics, when read)
 *   "work":   {"gpu","util_pct","mem_util_pct","power_w","floor_w",
 *              "sm_clock_mhz","sms","others","others_sm_pct","other_pid",
 *              "other_sm_pct","gpm":{"sm_util","sm_occ","tensor",
 *              "fp16","fp32","fp64","int","dram"} | "gpm_absent": why}
 *                                              when NVML read a GPU of it
 *   "absent": {"nvml"|"drm"|"kfd"|"gpu_busy"|"gpu_metrics": why}   with_absent
 * A member is left out when not known; never written as 0 for unknown. */
json_t *gp_gpuact_json(const struct gp_gpu_activity *a, bool with_absent)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (a->have_nvml || a->have_dev_util) {
		json_t *n = json_object();
		if (a->have_nvml) {
			set_pct(n, "sm_pct", a->sm_pct);
			set_pct(n, "mem_pct", a->mem_pct);
			json_object_set_new(n, "sm_max_pct", json_integer(a->sm_max_pct));
			json_object_set_new(n, "samples", json_integer(a->nvml_samples));
			if (a->nvml_gpu >= 0)
				json_object_set_new(n, "gpu", json_integer(a->nvml_gpu));
			if (a->nvml_no_context)
				json_object_set_new(n, "no_context", json_true());
		}
		if (a->have_dev_util) {
			set_pct(n, "dev_util_pct", a->dev_util_pct);
			set_pct(n, "dev_mem_util_pct", a->dev_mem_util_pct);
			json_object_set_new(n, "dev_all_gpus", json_boolean(a->dev_util_all_gpus));
		}
		if (a->have_throttle) {
			char t[160];
			gp_nvml_throttle_text(a->throttle, t, sizeof t);
			json_object_set_new(n, "throttle", json_string(t));
		}
		json_object_set_new(o, "nvml", n);
	}
	if (a->have_work)
		json_object_set_new(o, "work", work_json(&a->work));
	if (a->have_drm_engine || a->engine_ns || a->have_drm_evicted) {
		json_t *d = json_object();
		if (a->have_drm_engine) {
			set_pct(d, "engine_busy_pct", a->engine_busy_pct);
			json_object_set_new(d, "engine", json_string(a->engine));
		}
		set_u64(d, "engine_ns", a->engine_ns);
		json_object_set_new(d, "kfd_blind", json_boolean(a->engine_kfd_blind));
		if (a->have_drm_evicted)
			set_u64(d, "evicted_vram_bytes", a->drm_evicted_vram_bytes);
		json_object_set_new(o, "drm", d);
	}
	if (a->have_kfd) {
		json_t *k = json_object();
		set_u64(k, "evicted_ms", a->kfd_evicted_ms);
		set_u64(k, "evicted_ms_delta", a->kfd_evicted_ms_delta);
		if (a->have_cu_occupancy)
			set_u64(k, "cu_occupancy", a->cu_occupancy);
		if (a->have_sdma)
			set_pct(k, "sdma_busy_pct", a->sdma_busy_pct);
		if (a->have_kfd_faults) {
			set_u64(k, "faults", a->kfd_faults);
			set_u64(k, "page_in", a->kfd_page_in);
			set_u64(k, "page_out", a->kfd_page_out);
		}
		json_object_set_new(o, "kfd", k);
	}
	if (a->have_gpu_busy) {
		json_t *d = json_object();
		set_pct(d, "gpu_busy_pct", a->gpu_busy_pct);
		json_object_set_new(d, "all_cards", json_boolean(a->gpu_busy_all_cards));
		if (a->have_gfx_activity)
			set_pct(d, "gfx_activity_pct", a->gfx_activity_pct);
		if (a->have_umc_activity)
			set_pct(d, "umc_activity_pct", a->umc_activity_pct);
		if (a->have_socket_power)
			set_pct(d, "socket_power_w", a->socket_power_w);
		if (a->have_amd_floor)
			set_pct(d, "floor_w", a->amd_floor_w);
		json_object_set_new(o, "device", d);
	}
	if (with_absent) {
		json_t *w = json_object();
		const char *k[5] = { "nvml", "drm", "kfd", "gpu_busy", "gpu_metrics" };
		const char *v[5] = { a->why_nvml, a->why_drm, a->why_kfd, a->why_gpu_busy,
				     a->why_gpu_metrics };
		for (int i = 0; i < 5; i++)
			if (v[i][0])
				json_object_set_new(w, k[i], json_string(v[i]));
		json_object_set_new(o, "absent", w);
	}
	return o;
}

bool gp_gpuact_known(const struct gp_gpu_activity *a)
{
	return a->have_nvml || (a->have_drm_engine && !a->engine_kfd_blind) ||
	       a->have_cu_occupancy;
}

bool gp_gpuact_busy(const struct gp_gpu_activity *a, double min_pct)
{
	if (a->have_nvml && (a->sm_pct >= min_pct || a->mem_pct >= min_pct))
		return true;
	if (a->have_drm_engine && a->engine_busy_pct >= min_pct)
		return true;
	if (a->have_cu_occupancy && a->cu_occupancy > 0)
		return true;
	return a->have_sdma && a->sdma_busy_pct >= min_pct;
}



/* Appends to a bounded buffer; never writes past cap. */
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;

	if (*len >= cap)
		return;
	va_start(ap, fmt);
	int w = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (w > 0)
		*len = (size_t)w >= cap - *len ? cap - 1 : *len + (size_t)w;
}

void gp_gpuact_text(const struct gp_gpu_activity *a, char *buf, size_t cap)
{
	size_t len = 0;
	const char *sep = "";

	if (!cap)
		return;
	buf[0] = '\0';
	if (a->have_nvml) {
		if (a->nvml_no_context)
			add(buf, cap, &len, "this process holds no GPU context (NVML)");
		else if (a->nvml_samples)
			add(buf, cap, &len, "this process %.0f%% SM, %.0f%% memory (NVML, GPU %d)",
			    a->sm_pct, a->mem_pct, a->nvml_gpu);
		else
			add(buf, cap, &len, "this process idle on the GPU (NVML: no sample of it%s)",
			    a->dt > 0 ? " in the period" : "");
		sep = "; ";
	}
	if (a->have_dev_util) {
		add(buf, cap, &len, "%s%s %.0f%% busy", sep,
		    a->dev_util_all_gpus ? "busiest GPU" : "its GPU", a->dev_util_pct);
		sep = "; ";
	}
	if (a->have_drm_engine) {
		add(buf, cap, &len, "%sDRM engine %s %.0f%%%s", sep, a->engine,
		    a->engine_busy_pct,
		    a->engine_kfd_blind ? " (amdgpu: KFD compute queues not counted)" : "");
		sep = "; ";
	}
	if (a->have_cu_occupancy) {
		add(buf, cap, &len, "%s%" PRIu64 " CUs occupied (KFD)", sep, a->cu_occupancy);
		sep = "; ";
	}
	if (a->have_sdma) {
		add(buf, cap, &len, "%sSDMA %.0f%%", sep, a->sdma_busy_pct);
		sep = "; ";
	}
	if (a->have_kfd && a->kfd_evicted_ms_delta) {
		add(buf, cap, &len, "%squeues evicted %" PRIu64 " ms", sep,
		    a->kfd_evicted_ms_delta);
		sep = "; ";
	}
	if (a->have_gpu_busy) {
		add(buf, cap, &len, "%s%s %.0f%% busy (gpu_busy_percent)", sep,
		    a->gpu_busy_all_cards ? "busiest card" : "its card", a->gpu_busy_pct);
		if (a->have_umc_activity)
			add(buf, cap, &len, ", memory controller %.0f%%", a->umc_activity_pct);
		if (a->have_socket_power)
			add(buf, cap, &len, ", %.0f W", a->socket_power_w);
		if (a->have_amd_floor)
			add(buf, cap, &len, " (floor %.0f W)", a->amd_floor_w);
		sep = "; ";
	}
	if (!*sep)
		add(buf, cap, &len, "unknown (NVML: %s; DRM: %s; KFD: %s)",
		    a->why_nvml[0] ? a->why_nvml : "-", a->why_drm[0] ? a->why_drm : "-",
		    a->why_kfd[0] ? a->why_kfd : "-");
}

double gp_gpuact_pct(const struct gp_gpu_activity *a)
{
	double p = 0;
	if (a->have_nvml && a->sm_pct > p)
		p = a->sm_pct;
	if (a->have_nvml && a->mem_pct > p)
		p = a->mem_pct;
	if (a->have_drm_engine && !a->engine_kfd_blind && a->engine_busy_pct > p)
		p = a->engine_busy_pct;
	if (a->have_sdma && a->sdma_busy_pct > p)
		p = a->sdma_busy_pct;
	return p;
}


