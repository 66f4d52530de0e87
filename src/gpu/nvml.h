/* NVML (libnvidia-ml.so.1) through dlopen: per-process GPU memory and
 * activity, device utilisation and clock-event (throttle) reasons.
 *
 * The NVIDIA proprietary driver has no DRM fdinfo (DEVICE.md: no
 * /dev/dri on the H200 machine), so NVML is the only per-process view of
 * CUDA work.  No NVML header is installed where gpuprobe builds: types,
 * values and layouts are declared in nvml.c, each from the NVML API
 * reference (docs.nvidia.com/deploy/nvml-api).
 *
 * One gp_nvml serves every reader of a trace (gpu/house.h: one handle a
 * trace, not two a process): the device-wide answers are kept per GPU
 * and handed to each traced process; what depends on the caller (its
 * last-seen timestamp of the utilisation samples, its last reading) is
 * the caller's (struct gp_nvml_seen).
 *
 * The call budget: at most 2 ms of NVML per GPU per second (issue 19's
 * acceptance), none of the calls that block.  Measured inside the calls
 * of a 20 s trace of a GEMM process on an H100, driver 580.159
 * (bench/workloads/nvml-timer.c, bench/results/2026-12-05-device-h100-2.md),
 * with process utilisation every other tick and GPM every tick: 44.3 ms
 * in 20 s, 2.2 ms a second -- over.  Per call, on average:
 * nvmlDeviceGetProcessUtilization 2.34 ms, nvmlGpmSampleGet 0.20 ms,
 * nvmlGpmMetricsGet (8 metrics) 0.21 ms, the compute process list 0.18
 * ms, utilisation 0.15 ms, power 0.09 ms, the rest 0.01-0.03 ms; total
 * energy 3 ms and PCIe throughput 20.7 ms (it blocks), so neither is
 * ever called.  NVML calls serialise on the driver's lock (MangoHud PRs
 * #1307, #2104), so every traced process asking for itself multiplied
 * all of it.  Per GPU now, at 1 Hz:
 *
 *   each tick (gp_nvml_tick)                    ms
 *     compute + graphics process lists          0.22  (every process looked up in them)
 *     utilisation, power, SM clock, reasons     0.29
 *   per GP_NVML_GPM_PERIOD_S (every other tick)
 *     one GPM sample and its metrics            0.41 / 2 = 0.21
 *   per GP_NVML_PUTIL_PERIOD_S (every third tick)
 *     process utilisation                       2.34 / 3 = 0.78
 *   -----------------------------------------------------
 *                                               about 1.5 ms a second
 *
 * and nothing for a GPU no traced process holds memory on (no context:
 * no kernel of its own, 0 %, known).  Process utilisation is asked only
 * every third second because its samples are cumulative: each call
 * returns every sample since the last, so nothing is lost, only the
 * latency grows (a kernel's end is seen up to two seconds later); the
 * reading of the call stands for the ticks between (gp_nvml_activity).
 * GPM's metrics span the two samples they are taken between, two
 * seconds apart: a spin or a GEMM lasts far longer than that.
 * Before the first tick (a tool with one reader) every call asks. */
#ifndef GP_NVML_H
#define GP_NVML_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct gp_nvml;

#define GP_NVML_MAX_GPUS 64

/* lib: NULL for "libnvidia-ml.so.1"; "" for the running program itself
 * (dlopen(NULL): a test links a fake NVML into its binary, -rdynamic);
 * else a path (tests/gpu/libnvidia-ml.so.1, the test double).  NULL on
 * failure, with one line in why ("libnvidia-ml.so.1: cannot open shared
 * object file...", "nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9)"). */
struct gp_nvml *gp_nvml_open(const char *lib, char *why, size_t cap);
void gp_nvml_close(struct gp_nvml *nv);
unsigned gp_nvml_count(const struct gp_nvml *nv);

/* Per-process memory, every GPU: appends one row per (GPU, list) that
 * names pid to arr ({"index","name","type":"compute"|"graphics",
 * "used_bytes":B|null[,"gpu_instance_id","compute_instance_id"]}) and
 * adds its bytes to *bytes, each (GPU instance, compute instance) once.
 * Returns true when NVML answered: pid was found, or every list was read
 * (then pid's absence means no context).  False when a list came back in
 * no layout known (nvmlproc.h) or too long, and pid was in none of the
 * others: gp_nvml_why() then says which list and what was seen. */
bool gp_nvml_proc_memory(struct gp_nvml *nv, int pid, json_t *arr,
			 uint64_t *bytes);
/* Every pid in the process lists of every GPU, each once, at most cap;
 * returns how many (watch --gpu). */
unsigned gp_nvml_pids(struct gp_nvml *nv, int *pids, unsigned cap);
/* Why the last gp_nvml_proc_memory could not read a list; "" if it could. */
const char *gp_nvml_why(const struct gp_nvml *nv);

/* The trace's tick: every reader of one sample passes the same t
 * (seconds, the caller's clock).  The process lists and device readings
 * are asked once a tick, GPM once in GP_NVML_GPM_PERIOD_S and process
 * utilisation once in GP_NVML_PUTIL_PERIOD_S of the ticks' t (the
 * budget above; at 1 Hz every other and every third tick). */
#define GP_NVML_PUTIL_PERIOD_S 2.5
#define GP_NVML_GPM_PERIOD_S 1.5
void gp_nvml_tick(struct gp_nvml *nv, double t);

/* What one GPU's per-process samples of a period say of one process. */
struct gp_nvml_proc_util {
	unsigned samples;	/* samples of pid in the period */
	double sm_pct, mem_pct;	/* mean over those samples; 0 without */
	unsigned sm_max_pct;
	/* The GPU's other processes over the same samples (issue 22): a
	 * GPU time-sliced between two processes gives each a per-process
	 * SM % under the "resident" bar, and its device-wide readings
	 * (GPM, power) belong to no one of them (model/gpuwork.h). */
	unsigned others;	/* other pids with kernels in the period */
	int other_pid;		/* the busiest of them, 0 none */
	double other_sm_pct;	/* its mean SM % */
	double others_sm_pct;	/* the sum of their mean SM % */
};

/* The caller's last-seen timestamps (µs, NVML's CPU timestamp), one per
 * GPU: only the samples newer than it are this caller's; and its last
 * reading, which stands until the GPU's samples are asked again.
 * Zero-initialise; the first read looks one second back. */
struct gp_nvml_seen {
	unsigned long long ts[GP_NVML_MAX_GPUS];
	unsigned long long seq[GP_NVML_MAX_GPUS];	/* the GPU's call it was read from */
	struct gp_nvml_proc_util last[GP_NVML_MAX_GPUS];
};

/* What one GPU said of one process, and of itself. */
struct gp_nvml_dev_act {
	unsigned index;
	/* nvmlDeviceGetProcessUtilization answered, NOT_FOUND included:
	 * NVML returns only processes active in the period, so a pid
	 * without a sample was at 0% over it, not unknown. */
	bool have_proc;
	int proc_err;		/* NVML code when !have_proc */
	struct gp_nvml_proc_util u;	/* pid's, when have_proc */
	bool have_util;		/* nvmlDeviceGetUtilizationRates */
	unsigned util_pct, mem_util_pct;
	bool have_throttle;	/* nvmlDeviceGetCurrentClocksEventReasons */
	unsigned long long throttle;
	/* Work, not occupancy (issue 19; model/gpuwork.h): read once a tick
	 * per GPU and shared by every process's reader (a reading younger
	 * than 50 ms is reused).  Power costs 9 us a call, GPM a sample
	 * 0.2 ms and its metrics 1 ms (H200, shared/DEVICE.md); nothing that
	 * blocks (PCIe throughput: 20.7 ms) is asked. */
	bool have_power;	/* nvmlDeviceGetPowerUsage */
	double power_w;
	bool have_floor;	/* set by the caller (gpuact.c): the GPU's own
				 * idle floor, measured where the process had
				 * no work */
	double floor_w;
	bool have_sm_clock;	/* nvmlDeviceGetClockInfo(NVML_CLOCK_SM) */
	unsigned sm_clock_mhz;
	unsigned sms;		/* multiprocessorCount, 0 unknown */
	/* GPM (Hopper and newer): device-wide metrics between the previous
	 * sample and this one, at least 100 ms apart. */
	bool have_gpm;
	double gpm_sm_util, gpm_sm_occ, gpm_tensor, gpm_fp16, gpm_fp32, gpm_fp64,
	       gpm_int, gpm_dram;
	const char *gpm_why;	/* !have_gpm: why ("not supported", "first
				 * sample", an NVML error name) */
};

/* Reads the GPUs of mask (bits of NVML indexes; 0: every GPU), at most
 * cap, for pid; returns the number filled.  nvmlDeviceGetProcessUtilization
 * is the dear call (the budget above), so a reader asks only the GPUs
 * the process holds memory on.  pid < 0: device readings only. */
unsigned gp_nvml_activity(struct gp_nvml *nv, int pid,
			  struct gp_nvml_seen *seen, unsigned long long mask,
			  struct gp_nvml_dev_act *out, unsigned cap);

/* "NVML_ERROR_NOT_SUPPORTED" for 3; "NVML_ERROR_<n>" when unknown. */
const char *gp_nvml_error_name(int code, char *buf, size_t cap);
/* nvmlClocksEventReasons bits as words: "idle,sw-power-cap".  "" for 0. */
void gp_nvml_throttle_text(unsigned long long mask, char *buf, size_t cap);

#endif
