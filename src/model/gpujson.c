/* The GPU fields of a saved sample (doc/result-format.md, sample.gpu):
 * the DRM clients' totals and the activity's two answers (is this
 * process's work running, how busy), read the same way live (tracer,
 * gpu/) and from a file (model/load.c).  Pure JSON readers: the model
 * needs no probe to judge a result. */
#include "config.h"
#include "satmath.h"
#include "gpujson.h"
#include "gpuwork.h"

#include <stdio.h>
#include <string.h>

#define KEY_MAX 128

static bool region_is_vram(const char *region)
{
	if (strncmp(region, "vram", 4) != 0)
		return false;
	for (const char *p = region + 4; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static bool get_uint(const json_t *obj, const char *key, uint64_t *v)
{
	json_t *j = json_object_get(obj, key);
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

static void add_region(struct gp_gpu_totals *tot, const char *region,
		       uint64_t total, uint64_t resident)
{
	tot->drm_total_bytes = gp_sat_add(tot->drm_total_bytes, total);
	tot->drm_resident_bytes = gp_sat_add(tot->drm_resident_bytes, resident);
	if (!strcmp(region, "gtt"))
		tot->gtt_bytes = gp_sat_add(tot->gtt_bytes, total);
	else if (region_is_vram(region))
		tot->vram_bytes = gp_sat_add(tot->vram_bytes, total);
}

/* One region of a client counts once: drm-total, else drm-resident, else
 * legacy drm-memory.  Newer amdgpu writes drm-total-vram AND
 * drm-memory-vram for the same memory (amdgpu_fdinfo.c): adding both
 * would count it twice.  drm-memory-<region> is the deprecated name of
 * drm-resident-<region> (drm-usage-stats.rst), so it stands for resident
 * too when the new key is missing (amdgpu before Linux 6.11). */
static void add_memory(const json_t *client, struct gp_gpu_totals *tot)
{
	json_t *mem = json_object_get(client, "memory");
	json_t *legacy = json_object_get(client, "legacy");
	const char *region, *key;
	json_t *ro, *v;
	char lk[KEY_MAX + 16];

	json_object_foreach(mem, region, ro) {
		uint64_t total = 0, resident = 0, old = 0;
		bool have_old;

		snprintf(lk, sizeof lk, "drm-memory-%s", region);
		have_old = get_uint(legacy, lk, &old);
		if (!get_uint(ro, "resident", &resident))
			resident = have_old ? old : 0;
		if (!get_uint(ro, "total", &total))
			total = resident;
		add_region(tot, region, total, resident);
	}
	json_object_foreach(legacy, key, v) {
		const char *r = key + strlen("drm-memory-");
		uint64_t b;

		if (json_object_get(mem, r) || !get_uint(legacy, key, &b))
			continue;
		add_region(tot, r, b, b);
	}
}

void gp_fdinfo_add_totals(const json_t *client, struct gp_gpu_totals *tot)
{
	json_t *eng = json_object_get(client, "engine_ns");
	const char *e;
	json_t *v;

	add_memory(client, tot);
	json_object_foreach(eng, e, v) {
		if (json_is_integer(v) && json_integer_value(v) > 0)
			tot->engine_ns = gp_sat_add(tot->engine_ns,
					(uint64_t)json_integer_value(v));
	}
}

static bool jnum(const json_t *o, const char *k, double *v)
{
	json_t *j = json_object_get(o, k);

	if (!json_is_number(j))
		return false;
	*v = json_number_value(j);
	return *v == *v;	/* not NaN */
}

bool gp_gpuact_json_busy(const json_t *act, double min_pct, bool *known)
{
	const json_t *nv = json_object_get(act, "nvml");
	const json_t *drm = json_object_get(act, "drm");
	const json_t *kfd = json_object_get(act, "kfd");
	double sm = 0, mem = 0, eng = 0, cu = 0, sdma = 0;
	bool have_sm = jnum(nv, "sm_pct", &sm), have_mem = jnum(nv, "mem_pct", &mem);
	bool have_eng = jnum(drm, "engine_busy_pct", &eng);
	bool blind = json_is_true(json_object_get(drm, "kfd_blind"));
	bool have_cu = jnum(kfd, "cu_occupancy", &cu);
	bool have_sdma = jnum(kfd, "sdma_busy_pct", &sdma);

	*known = have_sm || (have_eng && !blind) || have_cu;
	return (have_sm && sm >= min_pct) || (have_mem && mem >= min_pct) ||
	       (have_eng && eng >= min_pct) || (have_cu && cu > 0) ||
	       (have_sdma && sdma >= min_pct);
}

static double num_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);
	return json_is_number(v) ? json_number_value(v) : 0;
}

double gp_gpuact_json_pct(const json_t *act)
{
	double p = 0, v;
	if ((v = num_at(act, "nvml", "sm_pct")) > p)
		p = v;
	if ((v = num_at(act, "nvml", "mem_pct")) > p)
		p = v;
	if (!json_is_true(json_object_get(json_object_get(act, "drm"), "kfd_blind"))
	    && (v = num_at(act, "drm", "engine_busy_pct")) > p)
		p = v;
	if ((v = num_at(act, "kfd", "sdma_busy_pct")) > p)
		p = v;
	return p > 100 ? 100 : p < 0 ? 0 : p;
}

void gp_gpuact_json_work(const json_t *act, struct gp_gpu_work_pt *pt)
{
	struct gp_gpu_work_in in;
	memset(&in, 0, sizeof in);
	const json_t *nv = json_object_get(act, "nvml");
	const json_t *drm = json_object_get(act, "drm");
	const json_t *kfd = json_object_get(act, "kfd");
	const json_t *w = json_object_get(act, "work");
	const json_t *g = json_object_get(w, "gpm");
	double v = 0;
	/* Occupancy: this process's kernel resident.  NVML per process
	 * first (no context anywhere: 0), a DRM engine that sees the work,
	 * KFD waves. */
	if (json_is_true(json_object_get(nv, "no_context")))
		in.have_occ = false; /* no GPU in use: nothing to judge */
	else if (jnum(nv, "sm_pct", &in.occ_pct))
		in.have_occ = true;
	else if (!json_is_true(json_object_get(drm, "kfd_blind")) && jnum(drm, "engine_busy_pct", &in.occ_pct))
		in.have_occ = true;
	else if (jnum(kfd, "cu_occupancy", &v)) {
		in.have_occ = true;
		in.occ_pct = v > 0 ? 100 : 0;
	}
	in.have_gpm = json_is_object(g) && jnum(g, "sm_util", &in.sm_util);
	if (in.have_gpm) {
		jnum(g, "tensor", &in.tensor);
		jnum(g, "fp16", &in.fp16);
		jnum(g, "fp32", &in.fp32);
		jnum(g, "fp64", &in.fp64);
		jnum(g, "int", &in.integer);
		jnum(g, "dram", &in.dram_bw);
	}
	double others = 0;
	if (jnum(w, "others", &others)) {
		in.have_others = true;
		in.others = others > 0 && others < 1e6 ? (unsigned)others : 0;
		jnum(w, "others_sm_pct", &in.others_sm_pct);
		jnum(w, "other_sm_pct", &in.other_sm_pct);
		double op = 0;
		jnum(w, "other_pid", &op);
		in.other_pid = op > 0 && op < 1 << 30 ? (int)op : 0;
	}
	in.have_mem_util = jnum(w, "mem_util_pct", &in.mem_util);
	in.have_power = jnum(w, "power_w", &in.power_w);
	in.have_floor = jnum(w, "floor_w", &in.floor_w);
	/* amdgpu without NVML (issue 19): gpu_metrics' memory controller
	 * activity plays util.memory's part, socket power and its floor
	 * power's.  gpu_busy_percent and average_gfx_activity are
	 * time-based like util.gpu: not work. */
	const json_t *dev = json_object_get(act, "device");
	if (!json_is_object(w) && json_is_object(dev)) {
		in.have_mem_util = jnum(dev, "umc_activity_pct", &in.mem_util);
		in.have_power = jnum(dev, "socket_power_w", &in.power_w);
		in.have_floor = jnum(dev, "floor_w", &in.floor_w);
	}
	double sms = 0;
	jnum(w, "sms", &sms);
	gp_gpu_work_point(&in, sms > 0 && sms < 65536 ? (unsigned)sms : 0, pt);
}

bool gp_gpu_json_ctx(const json_t *gpu)
{
	return json_is_object(gpu)
	       && (json_array_size(json_object_get(gpu, "nvml")) || json_array_size(json_object_get(gpu, "drm"))
		   || json_is_object(json_object_get(gpu, "kfd")));
}
