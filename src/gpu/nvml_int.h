/* What the files of nvml.h share: NVML's types and entry points, declared
 * here (no NVML header is installed where gpuprobe builds), and the
 * reader's state.  nvml.c binds NVML and reads the process lists;
 * nvmlact.c reads activity (per-process utilization, the device's work
 * through GPM, clocks and power). */
#ifndef GP_NVML_INT_H
#define GP_NVML_INT_H

#include "nvml.h"
#include "nvmlproc.h"

#include <stdbool.h>
#include <stddef.h>

/* Declared here: no NVML header is installed where gpuprobe builds.
 * Types, values and struct layouts from the NVML API reference
 * (docs.nvidia.com/deploy/nvml-api: nvmlReturn_t, nvmlProcessInfo_t,
 * nvmlDeviceGetComputeRunningProcesses_v3); the process lists' entries
 * in nvmlproc.h, whose layout is read from the bytes, not assumed. */
typedef int nvml_ret;
typedef struct nvml_device *nvml_dev;
#define NVML_SUCCESS			0
#define NVML_ERROR_NOT_FOUND		6
#define NVML_ERROR_INSUFFICIENT_SIZE	7
#define NVML_VALUE_NOT_AVAILABLE	(~0ull)
#define NVML_NO_INSTANCE		(~0u)	/* gi/ci of the v1 layout */

typedef nvml_ret (*nvml_procs_fn)(nvml_dev, unsigned int *, void *);

struct nvml_query {
	nvml_procs_fn fn;
	const char *sym;	/* the name that bound, for the reasons */
	const char *kind;	/* "compute" or "graphics" */
};

/* One GPU's device-wide work readings (nvml.h), kept between ticks. */
struct nvml_work {
	unsigned long long at_us;	/* CLOCK_MONOTONIC of the last reading, 0 never */
	unsigned long long tick;	/* gp_nvml.tick of it */
	struct gp_nvml_dev_act r;	/* the device fields of it */
	bool floor_set;
	double floor_w;
	int gpm_state;			/* 0 unknown, 1 supported, -1 not */
	void *gpm_prev;			/* nvmlGpmSample_t of the last sample */
	unsigned long long gpm_prev_us;
	double gpm_at_t;		/* the tick's t of that sample */
	void *gpm_cur;
};

/* One GPU's process lists (compute, graphics) as the last tick read
 * them: every traced process is looked up in them, none asks again. */
struct nvml_listent {
	unsigned char kind;		/* index into gp_nvml.q */
	struct gp_nvml_proc p;
};
struct nvml_lists {
	unsigned long long tick;	/* gp_nvml.tick when read; 0 never */
	struct nvml_listent *e;
	unsigned n, cap;
	bool bad[2];			/* that list came back unreadable */
	char why[2][384];
};

/* nvmlProcessUtilizationSample_t: 32 bytes (the u64 aligned to 8). */
struct nvml_util_sample {
	unsigned int pid;
	unsigned long long timeStamp;	/* CPU timestamp, µs */
	unsigned int smUtil, memUtil, encUtil, decUtil;
};

/* One GPU's per-process utilisation samples, as every call returned
 * them, kept GP_NVML_RING_US: one ring a GPU serves every traced
 * process (as DCGM keeps one GPM ring per GPU for all its watchers), each
 * process reading the samples newer than its own last-seen. */
struct nvml_ring {
	struct nvml_util_sample *s;
	unsigned n, cap;
	unsigned long long newest;	/* NVML timestamp asked from next */
	unsigned long long seq;		/* calls made, 0 none */
	unsigned long long at_us;	/* wall clock (NVML's) of the last call */
	double at_t;			/* the tick's t of the last call */
	bool ok;
	int err;			/* the last call's NVML code when !ok */
};

struct nvml_gpu {
	unsigned index;
	nvml_dev h;
	char name[96];
	char uuid[96];
	struct nvml_work w;
	struct nvml_lists lists;
	struct nvml_ring ring;
};

/* nvmlUtilization_t */
struct nvml_utilization {
	unsigned int gpu, memory;
};

typedef nvml_ret (*nvml_putil_fn)(nvml_dev, struct nvml_util_sample *,
				  unsigned int *, unsigned long long);
typedef nvml_ret (*nvml_util_fn)(nvml_dev, struct nvml_utilization *);
typedef nvml_ret (*nvml_reasons_fn)(nvml_dev, unsigned long long *);
typedef nvml_ret (*nvml_uint_fn)(nvml_dev, unsigned int *);
typedef nvml_ret (*nvml_clock_fn)(nvml_dev, unsigned int, unsigned int *);

/* GPM (nvml.h of CUDA 12+; NVML API reference, "GPM Functions").
 * nvmlGpmSupport_t {version, isSupportedDevice}, version 1;
 * nvmlGpmMetric_t {metricId u32, nvmlReturn u32, value double, metricInfo
 * {shortName, longName, unit: char *}} = 40 bytes on LP64;
 * nvmlGpmMetricsGet_t {version u32, numMetrics u32, sample1, sample2,
 * metrics[NVML_GPM_METRIC_MAX]}, version 1.  The driver fills numMetrics
 * entries; the array is sized for all of them anyway. */
struct nvml_gpm_support {
	unsigned int version, supported;
};
struct nvml_gpm_metric {
	unsigned int id;
	nvml_ret ret;
	double value;
	const char *short_name, *long_name, *unit;
};
#define NVML_GPM_METRIC_MAX 98
struct nvml_gpm_get {
	unsigned int version, n;
	void *s1, *s2;
	struct nvml_gpm_metric m[NVML_GPM_METRIC_MAX];
};
typedef nvml_ret (*nvml_gpm_support_fn)(nvml_dev, struct nvml_gpm_support *);
typedef nvml_ret (*nvml_gpm_alloc_fn)(void **);
typedef nvml_ret (*nvml_gpm_free_fn)(void *);
typedef nvml_ret (*nvml_gpm_sample_fn)(nvml_dev, void *);
typedef nvml_ret (*nvml_gpm_get_fn)(struct nvml_gpm_get *);

struct gp_nvml {
	void *lib;
	nvml_ret (*shutdown)(void);
	nvml_putil_fn proc_util;	/* nvmlDeviceGetProcessUtilization */
	nvml_util_fn util;		/* nvmlDeviceGetUtilizationRates */
	nvml_reasons_fn reasons;	/* ...ClocksEventReasons (ThrottleReasons) */
	nvml_uint_fn power;		/* nvmlDeviceGetPowerUsage, mW */
	nvml_clock_fn clock;		/* nvmlDeviceGetClockInfo */
	nvml_uint_fn cores;		/* nvmlDeviceGetNumGpuCores */
	nvml_uint_fn arch;		/* nvmlDeviceGetArchitecture */
	nvml_gpm_support_fn gpm_support;
	nvml_gpm_alloc_fn gpm_alloc;
	nvml_gpm_free_fn gpm_free;
	nvml_gpm_sample_fn gpm_sample;
	nvml_gpm_get_fn gpm_get;
	struct nvml_util_sample *ubuf;
	unsigned ucap;
	struct nvml_query q[2];
	struct nvml_gpu *gpu;
	unsigned ngpu;
	void *buf;		/* gp_nvml_procbuf_size(cap) bytes */
	unsigned cap;		/* entries of the largest layout in buf */
	char why[384];		/* why the last process list was not read */
	/* The trace's tick (gp_nvml_tick): 0 before the first, when every
	 * call asks NVML. */
	unsigned long long tick;
	double t;
};

#endif
