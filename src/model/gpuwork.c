#include "config.h"
#include "gpuwork.h"

#include <string.h>

static const char *const names[] = { "unknown", "idle", "spin", "work", "busy" };

const char *gp_gpu_work_name(enum gp_gpu_work w)
{
	return (unsigned)w < sizeof names / sizeof names[0] ? names[w] : "unknown";
}

enum gp_gpu_work gp_gpu_work_from(const char *name)
{
	for (unsigned i = 0; name && i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i]))
			return (enum gp_gpu_work)i;
	return GP_GW_UNKNOWN;
}

static double max2(double a, double b)
{
	return a > b ? a : b;
}

/* This process's kernel resident (gpuwork.h, GP_GPU_SHARE_FRACTION):
 * alone, at 50 % of the time; beside others, when the GPU is occupied
 * and it holds half its fair share of the time or more. */
static bool resident(const struct gp_gpu_work_in *in, bool shared)
{
	if (in->occ_pct >= GP_GPU_OCCUPIED_PCT)
		return true;
	if (!shared || in->occ_pct + in->others_sm_pct < GP_GPU_OCCUPIED_PCT)
		return false;
	double fair = (in->occ_pct + in->others_sm_pct) / (in->others + 1);
	return in->occ_pct > 0 && in->occ_pct >= GP_GPU_SHARE_FRACTION * fair;
}

/* Device-wide readings: work, no work, or cannot tell. */
static enum gp_gpu_work device_work(const struct gp_gpu_work_in *in, double fpipes,
				    struct gp_gpu_work_out *out)
{
	if (in->have_gpm) {
		out->from_gpm = true;
		return fpipes >= GP_GPU_PIPE_WORK_PCT || in->integer >= GP_GPU_INT_WORK_PCT ||
		       in->dram_bw >= GP_GPU_PIPE_WORK_PCT ? GP_GW_WORK : GP_GW_SPIN;
	}
	if (in->have_mem_util && in->mem_util >= GP_GPU_MEM_UTIL_WORK)
		return GP_GW_WORK;
	if (in->have_power && in->have_floor)
		return out->over_w >= GP_GPU_POWER_WORK_W ? GP_GW_WORK : GP_GW_SPIN;
	return GP_GW_BUSY;
}

void gp_gpu_work_judge(const struct gp_gpu_work_in *in, struct gp_gpu_work_out *out)
{
	memset(out, 0, sizeof *out);
	if (in->have_power && in->have_floor)
		out->over_w = in->power_w - in->floor_w;
	double fpipes = 0;
	if (in->have_gpm) {
		fpipes = max2(max2(in->tensor, in->fp16), max2(in->fp32, in->fp64));
		out->pipes = max2(fpipes, in->integer);
	}
	if (!in->have_occ) {
		out->work = GP_GW_UNKNOWN;
		return;
	}
	out->shared = in->have_others && in->others > 0;
	if (!resident(in, out->shared)) {
		out->work = GP_GW_IDLE;
		return;
	}
	out->work = device_work(in, fpipes, out);
	/* Work seen on a shared GPU may be the others': occupancy alone,
	 * unless there is more of it than their time on the GPU could
	 * hold (gpuwork.h, GP_GPU_SHARE_WORK_MARGIN). */
	if (out->shared && out->work == GP_GW_WORK &&
	    !(out->from_gpm && max2(fpipes, in->dram_bw) >= in->others_sm_pct + GP_GPU_SHARE_WORK_MARGIN)) {
		out->work = GP_GW_BUSY;
		out->from_gpm = false;
	}
}

void gp_gpu_work_point(const struct gp_gpu_work_in *in, unsigned sms, struct gp_gpu_work_pt *pt)
{
	struct gp_gpu_work_out o;
	gp_gpu_work_judge(in, &o);
	memset(pt, 0, sizeof *pt);
	pt->work = (uint8_t)o.work;
	pt->from_gpm = o.from_gpm;
	pt->pipes = (float)o.pipes;
	pt->tensor = in->have_gpm ? (float)in->tensor : 0;
	pt->dram = in->have_gpm ? (float)in->dram_bw : 0;
	pt->sm_util = in->have_gpm ? (float)in->sm_util : 0;
	pt->mem_util = in->have_mem_util ? (float)in->mem_util : 0;
	pt->power_w = in->have_power ? (float)in->power_w : 0;
	pt->have_over = in->have_power && in->have_floor;
	pt->over_w = (float)o.over_w;
	pt->sms = (uint16_t)(sms > 65535 ? 65535 : sms);
	pt->occ_pct = in->have_occ ? (float)in->occ_pct : 0;
	if (o.shared) {
		pt->others = (uint8_t)(in->others > 255 ? 255 : in->others);
		pt->other_pid = in->other_pid;
		pt->other_sm_pct = (float)in->other_sm_pct;
	}
}

static int rank(uint8_t w)
{
	switch (w) {
	case GP_GW_WORK: return 4;
	case GP_GW_SPIN: return 3;
	case GP_GW_BUSY: return 2;
	case GP_GW_IDLE: return 1;
	default: return 0;
	}
}

bool gp_gpu_work_more(const struct gp_gpu_work_pt *a, const struct gp_gpu_work_pt *b)
{
	return rank(b->work) > rank(a->work);
}
