/* GPU work, not GPU occupancy (issue 19, shared/DESIGN.md "Hang versus
 * progress"): whether a GPU that holds this process's kernel does any
 * work.  NVML's util.gpu, per-process SM % and amdgpu's gpu_busy_percent
 * say only that a kernel was resident: they read 100 for a kernel that
 * spins on a flag nobody sets.  Work is math or memory traffic.
 *
 * A pure function of one sample's readings, so that a live trace and
 * `report` of its file judge alike (model/: no probe, no verdict).
 *
 * What the readings look like on an H200 (driver 580, 132 SMs; 1 Hz
 * medians, shared/DEVICE.md and issue 19's table):
 *
 *   kernel                      util.gpu util.mem  power-floor  SM_UTIL tensor FP32 DRAM
 *   1 thread polling a flag        100      0        +0.3 W       0.8     0     0    0
 *   32 CTAs polling                100      0        +14 W       24.2     0     0    0
 *   every SM polling               100      0        +18 W       100      0     0    0
 *   32 CTAs, FMA loop              100      0        +38 W       24.2    0.1  23.9   0
 *   32 warps chasing pointers      100      3        +36 W       24.2     0     0   2.2
 *   GEMV, decode-like               96     88       +400 W        57     2.7    0  69.5
 *   GEMM 8192^3 fp16               100     25       +575 W        96      93    0  17.8
 *
 * So: with GPM (Hopper and newer), any float or tensor pipe or DRAM
 * bandwidth at 0.5 % or more is work (integer from 2 %), none is a spin --
 * high confidence.  Without GPM, a
 * util.memory of 10 % or more is work, and power: 25 W or more over the
 * GPU's own floor is work, less a spin -- medium confidence, and only
 * with a floor (the power read while the GPU ran no kernel: the idle
 * floor moved 116 -> 123 W between two runs, so it is measured, never a
 * constant).  Neither: unknown, said so. */
#ifndef GP_GPUWORK_H
#define GP_GPUWORK_H

#include <stdbool.h>
#include <stdint.h>

enum gp_gpu_work {
	GP_GW_UNKNOWN,  /* no source could tell */
	GP_GW_IDLE,     /* no kernel of this process resident */
	GP_GW_SPIN,     /* its kernel resident, doing no work */
	GP_GW_WORK,     /* its kernel resident, doing math or memory traffic */
	GP_GW_BUSY,     /* its kernel resident, work unknown (occupancy alone) */
};
const char *gp_gpu_work_name(enum gp_gpu_work w);
/* The inverse; GP_GW_UNKNOWN for anything else. */
enum gp_gpu_work gp_gpu_work_from(const char *name);

/* One sample's readings of the busiest GPU of a process.  Each have_*
 * false: not read. */
struct gp_gpu_work_in {
	bool have_occ;
	double occ_pct;        /* this process's kernel resident: per-process
	                          SM % (NVML), engine busy (DRM), waves (KFD) */
	bool have_gpm;
	double sm_util, tensor, fp16, fp32, fp64, integer, dram_bw; /* GPM, % */
	bool have_mem_util;
	double mem_util;       /* NVML util.memory, % */
	bool have_power, have_floor;
	double power_w, floor_w;
	/* Other processes' kernels on the same GPU (NVML's per-process
	 * samples of the same period; issue 22). */
	bool have_others;
	unsigned others;       /* how many, 0: this process alone */
	double others_sm_pct;  /* the sum of their SM % */
	int other_pid;         /* the busiest of them */
	double other_sm_pct;
};

#define GP_GPU_OCCUPIED_PCT 50.0  /* per-process SM % over which a kernel is resident */
/* A shared GPU (issue 22; the H100 run of 2026-12-05, bench/results/
 * 2026-12-05-device-h100.md): a kernel that polls for ever beside a
 * GEMM loop is time-sliced with it, and its per-process SM % falls under
 * 50: it read `idle`, and the GEMM's GPM tensor % then read as its work
 * (class `progress`).  So where other processes run kernels on the GPU:
 *   - the GPU is occupied when the processes' SM % together reach 50,
 *     and this process is resident there when it holds half of its
 *     fair share of that time (1 / (others + 1)) or more;
 *   - device-wide readings (GPM, power, util.memory) belong to no one
 *     process: they may say "no work" for all of them (a GPU with no
 *     math and no DRAM traffic works for no one), never "work" for this
 *     one -- resident with work seen: `busy`, the GPU shared. */
#define GP_GPU_SHARE_FRACTION 0.5
/* One exception: a GPM pipe or DRAM % is busy cycles over all cycles, and
 * a process resident x % of the time adds at most x % to it.  A pipe at
 * more than the others' SM % together (plus this margin) is this
 * process's work too: a GEMM time-sliced 60/35 with a spinner reads
 * tensor ~55 %, work for the GEMM (55 > 35), not for the spinner. */
#define GP_GPU_SHARE_WORK_MARGIN 5.0
#define GP_GPU_PIPE_WORK_PCT 0.5  /* GPM: any math pipe or DRAM at this is work */
/* GPM's integer pipe counts a polling loop's compares too: every SM of
 * an H200 polling a flag read INTEGER 0.7 % (and 32 CTAs of an FMA loop
 * 1.4 % beside FP32 5.7 %): integer work alone counts from 2 %. */
#define GP_GPU_INT_WORK_PCT 2.0
#define GP_GPU_MEM_UTIL_WORK 10.0 /* classic: util.memory at this is work */
#define GP_GPU_POWER_WORK_W 25.0  /* classic: power this far over the floor is work */

struct gp_gpu_work_out {
	enum gp_gpu_work work;
	bool from_gpm;         /* judged from GPM pipes (high confidence) */
	double pipes;          /* the busiest math pipe, % */
	double over_w;         /* power over the floor (have_floor) */
	bool shared;           /* other processes' kernels on the GPU */
};

void gp_gpu_work_judge(const struct gp_gpu_work_in *in, struct gp_gpu_work_out *out);

/* What a sample keeps of it, per process (point.h) and for the tree
 * (series.h: the process whose GPU worked, else spun, else held a kernel). */
struct gp_gpu_work_pt {
	uint8_t work;          /* enum gp_gpu_work */
	bool from_gpm, have_over;
	float pipes, tensor, dram, mem_util, power_w, over_w, sm_util;
	uint16_t sms;          /* SMs of that GPU, 0 unknown */
	/* Other processes' kernels on the GPU (gp_gpu_work_in.others):
	 * how many, the busiest's pid and SM %, and this one's SM %. */
	uint8_t others;
	int32_t other_pid;
	float other_sm_pct, occ_pct;
};

/* Judges in and fills pt (sms: the GPU's SM count, 0 unknown). */
void gp_gpu_work_point(const struct gp_gpu_work_in *in, unsigned sms, struct gp_gpu_work_pt *pt);

/* Which of two readings the tree keeps: true when b says more than a
 * (work over spin over occupancy alone over idle over unknown). */
bool gp_gpu_work_more(const struct gp_gpu_work_pt *a, const struct gp_gpu_work_pt *b);

#endif
