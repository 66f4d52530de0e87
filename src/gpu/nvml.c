/* NVML through dlopen: see nvml.h.  Moved from gpumem.c (per-process
 * memory) and grown with per-process and device activity (issue 13). */
#include "config.h"
#include "satmath.h"
#include "dl.h"
#include "nvml.h"
#include "nvmlproc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* NVML, through dlopen                                                */
/* ------------------------------------------------------------------ */

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

/* The entry points, newest name first (nvml.h keeps the old names for
 * old drivers), except the process lists: _v2 first, whose 24-byte
 * nvmlProcessInfo_v2_t has been stable since R470, while _v3 wrote 24,
 * 32 or 16 bytes by driver (nvmlproc.h); then _v3, then the bare name
 * (v1, 16 bytes).  Whichever binds, the layout is read from what it
 * wrote.  Clock "event" reasons are the CUDA 12.2 name of the
 * "throttle" reasons, same bits. */
static const char *const init_n[] = { "nvmlInit_v2", "nvmlInit", NULL };
static const char *const shut_n[] = { "nvmlShutdown", NULL };
static const char *const count_n[] = {
	"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL };
static const char *const handle_n[] = {
	"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL };
static const char *const name_n[] = { "nvmlDeviceGetName", NULL };
/* nvmlDeviceGetUUID: "GPU-" and the UUID; NVML_DEVICE_UUID_V2_BUFFER_SIZE
 * is 96.  What DCGM exporter labels its series by (UUID). */
static const char *const uuid_n[] = { "nvmlDeviceGetUUID", NULL };
static const char *const compute_n[] = {
	"nvmlDeviceGetComputeRunningProcesses_v2",
	"nvmlDeviceGetComputeRunningProcesses_v3",
	"nvmlDeviceGetComputeRunningProcesses", NULL };
static const char *const graphics_n[] = {
	"nvmlDeviceGetGraphicsRunningProcesses_v2",
	"nvmlDeviceGetGraphicsRunningProcesses_v3",
	"nvmlDeviceGetGraphicsRunningProcesses", NULL };
static const char *const putil_n[] = { "nvmlDeviceGetProcessUtilization", NULL };
static const char *const util_n[] = { "nvmlDeviceGetUtilizationRates", NULL };
static const char *const reasons_n[] = {
	"nvmlDeviceGetCurrentClocksEventReasons",
	"nvmlDeviceGetCurrentClocksThrottleReasons", NULL };
static const char *const power_n[] = { "nvmlDeviceGetPowerUsage", NULL };
static const char *const clock_n[] = { "nvmlDeviceGetClockInfo", NULL };
static const char *const cores_n[] = { "nvmlDeviceGetNumGpuCores", NULL };
static const char *const arch_n[] = { "nvmlDeviceGetArchitecture", NULL };
static const char *const gpm_support_n[] = { "nvmlGpmQueryDeviceSupport", NULL };
static const char *const gpm_alloc_n[] = { "nvmlGpmSampleAlloc", NULL };
static const char *const gpm_free_n[] = { "nvmlGpmSampleFree", NULL };
static const char *const gpm_sample_n[] = { "nvmlGpmSampleGet", NULL };
static const char *const gpm_get_n[] = { "nvmlGpmMetricsGet", NULL };

typedef nvml_ret (*nvml_void_fn)(void);
typedef nvml_ret (*nvml_count_fn)(unsigned int *);
typedef nvml_ret (*nvml_handle_fn)(unsigned int, nvml_dev *);
typedef nvml_ret (*nvml_name_fn)(nvml_dev, char *, unsigned int);

struct nvml_fns {
	nvml_void_fn init;
	nvml_count_fn count;
	nvml_handle_fn handle;
	nvml_name_fn name;
	nvml_name_fn uuid;
};

static void nvml_list_gpus(struct gp_nvml *nv, const struct nvml_fns *f)
{
	unsigned int n = 0;

	if (!f->count || !f->handle || f->count(&n) != NVML_SUCCESS || n == 0)
		return;
	if (n > GP_NVML_MAX_GPUS)
		n = GP_NVML_MAX_GPUS;
	nv->gpu = calloc(n, sizeof *nv->gpu);
	if (!nv->gpu)
		return;
	for (unsigned i = 0; i < n; i++) {
		struct nvml_gpu *g = &nv->gpu[nv->ngpu];

		/* A GPU outside our cgroup answers NO_PERMISSION: skip it,
		 * keep its index for the others. */
		if (f->handle(i, &g->h) != NVML_SUCCESS)
			continue;
		g->index = i;
		if (!f->name || f->name(g->h, g->name, sizeof g->name) != NVML_SUCCESS)
			g->name[0] = '\0';
		g->name[sizeof g->name - 1] = '\0';
		if (!f->uuid || f->uuid(g->h, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
			g->uuid[0] = '\0';
		g->uuid[sizeof g->uuid - 1] = '\0';
		nv->ngpu++;
	}
}

void gp_nvml_close(struct gp_nvml *nv)
{
	if (!nv)
		return;
	for (unsigned i = 0; nv->gpm_free && i < nv->ngpu; i++) {
		if (nv->gpu[i].w.gpm_prev)
			nv->gpm_free(nv->gpu[i].w.gpm_prev);
		if (nv->gpu[i].w.gpm_cur)
			nv->gpm_free(nv->gpu[i].w.gpm_cur);
	}
	for (unsigned i = 0; i < nv->ngpu; i++) {
		free(nv->gpu[i].lists.e);
		free(nv->gpu[i].ring.s);
	}
	if (nv->shutdown)
		nv->shutdown();
	if (nv->lib)
		dlclose(nv->lib);
	free(nv->gpu);
	free(nv->buf);
	free(nv->ubuf);
	free(nv);
}

static const char *const err_names[] = {
	[0] = "NVML_SUCCESS",
	[1] = "NVML_ERROR_UNINITIALIZED",
	[2] = "NVML_ERROR_INVALID_ARGUMENT",
	[3] = "NVML_ERROR_NOT_SUPPORTED",
	[4] = "NVML_ERROR_NO_PERMISSION",
	[5] = "NVML_ERROR_ALREADY_INITIALIZED",
	[6] = "NVML_ERROR_NOT_FOUND",
	[7] = "NVML_ERROR_INSUFFICIENT_SIZE",
	[8] = "NVML_ERROR_INSUFFICIENT_POWER",
	[9] = "NVML_ERROR_DRIVER_NOT_LOADED",
	[10] = "NVML_ERROR_TIMEOUT",
	[11] = "NVML_ERROR_IRQ_ISSUE",
	[12] = "NVML_ERROR_LIBRARY_NOT_FOUND",
	[13] = "NVML_ERROR_FUNCTION_NOT_FOUND",
	[14] = "NVML_ERROR_CORRUPTED_INFOROM",
	[15] = "NVML_ERROR_GPU_IS_LOST",
	[16] = "NVML_ERROR_RESET_REQUIRED",
	[17] = "NVML_ERROR_OPERATING_SYSTEM",
	[18] = "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
	[19] = "NVML_ERROR_IN_USE",
};

const char *gp_nvml_error_name(int code, char *buf, size_t cap)
{
	if (code >= 0 && (size_t)code < sizeof err_names / sizeof err_names[0] &&
	    err_names[code])
		snprintf(buf, cap, "%s", err_names[code]);
	else
		snprintf(buf, cap, "NVML_ERROR_%d", code);
	return buf;
}

struct gp_nvml *gp_nvml_open(const char *libname, char *why, size_t cap)
{
	struct gp_nvml *nv = calloc(1, sizeof *nv);

	if (!nv) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	struct nvml_fns f;
	void *compute = NULL, *graphics = NULL;
	const struct gp_dl_sym syms[] = {
		{ init_n, (void **)&f.init, true },
		{ count_n, (void **)&f.count, false },
		{ handle_n, (void **)&f.handle, false },
		{ name_n, (void **)&f.name, false },
		{ uuid_n, (void **)&f.uuid, false },
		{ compute_n, &compute, false },
		{ graphics_n, &graphics, false },
		{ putil_n, (void **)&nv->proc_util, false },
		{ util_n, (void **)&nv->util, false },
		{ reasons_n, (void **)&nv->reasons, false },
		{ power_n, (void **)&nv->power, false },
		{ clock_n, (void **)&nv->clock, false },
		{ cores_n, (void **)&nv->cores, false },
		{ arch_n, (void **)&nv->arch, false },
		{ gpm_support_n, (void **)&nv->gpm_support, false },
		{ gpm_alloc_n, (void **)&nv->gpm_alloc, false },
		{ gpm_free_n, (void **)&nv->gpm_free, false },
		{ gpm_sample_n, (void **)&nv->gpm_sample, false },
		{ gpm_get_n, (void **)&nv->gpm_get, false },
	};
	const char *name = libname ? libname : "libnvidia-ml.so.1";
	const char *missing;
	char en[48];

	nv->lib = *name ? gp_dlopen(name, RTLD_NOW | RTLD_LOCAL)
			: dlopen(NULL, RTLD_NOW | RTLD_LOCAL);
	if (!nv->lib) {
		snprintf(why, cap, "%s", *name ? gp_dlerror() : dlerror());
		gp_nvml_close(nv);
		return NULL;
	}
	if (gp_dl_bind(nv->lib, syms, sizeof syms / sizeof syms[0], &missing)) {
		snprintf(why, cap, "%s: no %s: not NVML", *name ? name : "(self)",
			 missing);
		gp_nvml_close(nv);
		return NULL;
	}
	nvml_ret ret = f.init();
	if (ret != NVML_SUCCESS) {
		snprintf(why, cap, "nvmlInit: %s (%d)",
			 gp_nvml_error_name(ret, en, sizeof en), ret);
		gp_nvml_close(nv);
		return NULL;
	}
	/* Only now: nvmlShutdown balances a successful nvmlInit. */
	nv->shutdown = (nvml_void_fn)dlsym(nv->lib, shut_n[0]);
	/* syms[5] and [6]: the compute and graphics lists (their order above) */
	int wc = gp_dl_which(nv->lib, &syms[5]);
	int wg = gp_dl_which(nv->lib, &syms[6]);
	nv->q[0] = (struct nvml_query){ (nvml_procs_fn)compute,
		wc >= 0 ? compute_n[wc] : "", "compute" };
	nv->q[1] = (struct nvml_query){ (nvml_procs_fn)graphics,
		wg >= 0 ? graphics_n[wg] : "", "graphics" };
	if (!compute && !graphics && !nv->proc_util) {
		snprintf(why, cap, "%s: no per-process call", *name ? name : "(self)");
		gp_nvml_close(nv);
		return NULL;
	}
	nvml_list_gpus(nv, &f);
	if (nv->ngpu == 0) {
		snprintf(why, cap, "NVML lists no GPU this process may use");
		gp_nvml_close(nv);
		return NULL;
	}
	return nv;
}

void gp_nvml_tick(struct gp_nvml *nv, double t)
{
	if (nv && (!nv->tick || t != nv->t)) {
		nv->tick++;
		nv->t = t;
	}
}

unsigned gp_nvml_count(const struct gp_nvml *nv)
{
	return nv ? nv->ngpu : 0;
}

const char *gp_nvml_why(const struct gp_nvml *nv)
{
	return nv ? nv->why : "";
}

/* Room for want entries of twice the largest layout, and slack
 * (gp_nvml_procbuf_size): the count we pass is cap, so a driver that
 * writes 32 bytes an entry where 24 were expected, or a layout not yet
 * seen, stays inside the buffer (R535 overran a 24-byte one from 13
 * processes on, 13 * 32 > 16 * 24).  64 KiB for 1000 processes. */
static bool nvml_grow(struct gp_nvml *nv, unsigned want)
{
	if (want <= nv->cap)
		return true;
	if (want > 65536)
		return false;
	void *nb = realloc(nv->buf, gp_nvml_procbuf_size(want));
	if (!nb)
		return false;
	nv->buf = nb;
	nv->cap = want;
	return true;
}

/* Calls q on one GPU; the count is a moving target (processes start
 * between two calls), so INSUFFICIENT_SIZE is retried a few times with
 * the size NVML asked for plus slack.  The buffer is filled with
 * GP_NVML_FILL first, so that what the driver wrote can be measured.
 * Returns entries filled and *stride, 0 when NVML said no (an error
 * code: the list is taken as empty, as before), or -1 when the list was
 * there but could not be read (nv->why says why). */
static int nvml_call(struct gp_nvml *nv, const struct nvml_query *q,
		     const struct nvml_gpu *g, unsigned *stride)
{
	unsigned int n = 0;
	char w[256];

	*stride = 0;
	for (int tries = 0; tries < 4; tries++) {
		if (!nvml_grow(nv, nv->cap ? nv->cap : 16))
			break;
		size_t len = gp_nvml_procbuf_size(nv->cap);
		memset(nv->buf, GP_NVML_FILL, len);
		n = nv->cap;
		nvml_ret ret = q->fn(g->h, &n, nv->buf);
		if (ret == NVML_SUCCESS && n > nv->cap) {
			snprintf(nv->why, sizeof nv->why, "GPU %u %s list (%s): "
				 "%u entries claimed for a buffer of %u",
				 g->index, q->kind, q->sym, n, nv->cap);
			return -1;
		}
		if (ret == NVML_SUCCESS) {
			*stride = gp_nvml_stride(nv->buf, len, n, w, sizeof w);
			if (n == 0 || *stride)
				return (int)n;
			snprintf(nv->why, sizeof nv->why, "GPU %u %s list (%s): %s",
				 g->index, q->kind, q->sym, w);
			return -1;
		}
		if (ret != NVML_ERROR_INSUFFICIENT_SIZE)
			return 0;
		if (!nvml_grow(nv, n + 8 > nv->cap ? n + 8 : nv->cap * 2))
			break;
	}
	snprintf(nv->why, sizeof nv->why, "GPU %u %s list (%s): no buffer "
		 "large enough (%u entries asked)", g->index, q->kind, q->sym, n);
	return -1;
}

static json_t *nvml_row(const struct nvml_gpu *g, const char *kind,
			const struct gp_nvml_proc *e)
{
	json_t *row = json_object();

	json_object_set_new(row, "index", json_integer(g->index));
	json_object_set_new(row, "name", json_string(g->name));
	if (g->uuid[0])
		json_object_set_new(row, "uuid", json_string(g->uuid));
	json_object_set_new(row, "type", json_string(kind));
	/* NVML_VALUE_NOT_AVAILABLE: e.g. Windows WDDM, or no permission */
	json_object_set_new(row, "used_bytes",
		e->used == NVML_VALUE_NOT_AVAILABLE ||
		e->used > (unsigned long long)INT64_MAX ? json_null() :
		json_integer((json_int_t)e->used));
	if (e->gi != NVML_NO_INSTANCE)
		json_object_set_new(row, "gpu_instance_id", json_integer(e->gi));
	if (e->ci != NVML_NO_INSTANCE)
		json_object_set_new(row, "compute_instance_id", json_integer(e->ci));
	return row;
}

/* A process in both lists of one GPU (CUDA and graphics) holds one
 * allocation: count each (GPU instance, compute instance) once. */
struct seen_inst {
	unsigned gi, ci;
};

static bool inst_seen(struct seen_inst *s, unsigned n, unsigned gi,
		      unsigned ci)
{
	for (unsigned i = 0; i < n; i++)
		if (s[i].gi == gi && s[i].ci == ci)
			return true;
	return false;
}

static bool lists_push(struct nvml_lists *l, unsigned char kind,
		       const struct gp_nvml_proc *p)
{
	if (l->n == l->cap) {
		unsigned nc = l->cap ? l->cap * 2 : 16;
		void *nb = realloc(l->e, (size_t)nc * sizeof *l->e);
		if (!nb)
			return false;
		l->e = nb;
		l->cap = nc;
	}
	l->e[l->n++] = (struct nvml_listent){ kind, *p };
	return true;
}

/* The two lists of one GPU, asked once a tick (before the first tick:
 * at every call).  A list NVML refused reads as empty, as before; one
 * it wrote in no layout known is marked bad, with why. */
static const struct nvml_lists *lists_of(struct gp_nvml *nv, struct nvml_gpu *g)
{
	struct nvml_lists *l = &g->lists;

	if (nv->tick && l->tick == nv->tick)
		return l;
	l->tick = nv->tick;
	l->n = 0;
	for (int k = 0; k < 2; k++) {
		const struct nvml_query *q = &nv->q[k];
		unsigned stride;
		int n = q->fn ? nvml_call(nv, q, g, &stride) : 0;

		l->bad[k] = n < 0;
		snprintf(l->why[k], sizeof l->why[k], "%s", n < 0 ? nv->why : "");
		for (int i = 0; i < n; i++) {
			struct gp_nvml_proc e;

			gp_nvml_proc_at(nv->buf, stride, (unsigned)i, &e);
			if (!lists_push(l, (unsigned char)k, &e)) {
				l->bad[k] = true;
				snprintf(l->why[k], sizeof l->why[k], "out of memory");
				break;
			}
		}
	}
	return l;
}

/* The rows of pid on one GPU.  Returns false when a list could not be
 * read: then pid's absence from the others proves nothing. */
static bool nvml_read_gpu(struct gp_nvml *nv, struct nvml_gpu *g, int pid,
			  json_t *arr, uint64_t *bytes)
{
	struct seen_inst seen[16];
	unsigned nseen = 0;
	const struct nvml_lists *l = lists_of(nv, g);

	for (unsigned i = 0; i < l->n; i++) {
		const struct gp_nvml_proc *e = &l->e[i].p;

		if ((int)e->pid != pid)
			continue;
		json_array_append_new(arr, nvml_row(g, nv->q[l->e[i].kind].kind, e));
		if (e->used == NVML_VALUE_NOT_AVAILABLE ||
		    inst_seen(seen, nseen, e->gi, e->ci))
			continue;
		if (nseen < 16)
			seen[nseen++] = (struct seen_inst){ e->gi, e->ci };
		*bytes = gp_sat_add(*bytes, e->used);
	}
	for (int k = 0; k < 2; k++)
		if (l->bad[k])
			snprintf(nv->why, sizeof nv->why, "%s", l->why[k]);
	return !l->bad[0] && !l->bad[1];
}

bool gp_nvml_proc_memory(struct gp_nvml *nv, int pid, json_t *arr,
			 uint64_t *bytes)
{
	size_t had = json_array_size(arr);
	bool all = true;

	if (!nv || (!nv->q[0].fn && !nv->q[1].fn))
		return false;
	nv->why[0] = '\0';
	for (unsigned i = 0; i < nv->ngpu; i++)
		if (!nvml_read_gpu(nv, &nv->gpu[i], pid, arr, bytes))
			all = false;
	/* A list that could not be read may hold pid: only a row found
	 * elsewhere, or every list read, is an answer (else "in no list"
	 * would read as "no CUDA context: 0 % GPU, known"). */
	return all || json_array_size(arr) > had;
}

/* Every pid in any process list of any GPU (watch --gpu), each once,
 * at most cap.  A list that cannot be read is skipped: the caller looks
 * at the processes' open GPU files too. */
unsigned gp_nvml_pids(struct gp_nvml *nv, int *pids, unsigned cap)
{
	unsigned n = 0;
	for (unsigned g = 0; nv && g < nv->ngpu; g++)
		for (int k = 0; k < 2; k++) {
			const struct nvml_query *q = &nv->q[k];
			unsigned stride;
			int m = q->fn ? nvml_call(nv, q, &nv->gpu[g], &stride) : 0;
			for (int i = 0; i < m; i++) {
				struct gp_nvml_proc e;
				gp_nvml_proc_at(nv->buf, stride, (unsigned)i, &e);
				unsigned j = 0;
				while (j < n && pids[j] != (int)e.pid)
					j++;
				if (j == n && n < cap && e.pid > 0)
					pids[n++] = (int)e.pid;
			}
		}
	return n;
}

/* ------------------------------------------------------------------ */
/* Activity                                                            */
/* ------------------------------------------------------------------ */

static unsigned long long now_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (unsigned long long)tv.tv_sec * 1000000ull + (unsigned)tv.tv_usec;
}

static bool ubuf_grow(struct gp_nvml *nv, unsigned want)
{
	if (want <= nv->ucap)
		return true;
	if (want > 65536)
		return false;
	void *nb = realloc(nv->ubuf, (size_t)want * sizeof *nv->ubuf);
	if (!nb)
		return false;
	nv->ubuf = nb;
	nv->ucap = want;
	return true;
}

/* nvmlDeviceGetProcessUtilization(dev, samples, &count, lastSeen): with a
 * buffer too small, INSUFFICIENT_SIZE and the count needed; NOT_FOUND
 * when no process was active since lastSeen (nvtop's nvidia extractor
 * reads it the same way).  Returns the samples filled (0 for NOT_FOUND),
 * or -1 with *err. */
static int proc_util_call(struct gp_nvml *nv, nvml_dev h,
			  unsigned long long since, int *err)
{
	*err = NVML_ERROR_INSUFFICIENT_SIZE;
	/* The H200's driver (580.159) answers INSUFFICIENT_SIZE with a count
	 * of 72 to a buffer of 64 even when one sample would be returned:
	 * start above that, so the first read costs one call, not two. */
	if (!ubuf_grow(nv, 128))
		return -1;
	for (int tries = 0; tries < 4; tries++) {
		unsigned int n = nv->ucap;
		nvml_ret r = nv->proc_util(h, nv->ubuf, &n, since);

		if (r == NVML_SUCCESS)
			return n <= nv->ucap ? (int)n : -1;
		if (r == NVML_ERROR_NOT_FOUND)
			return 0;
		if (r != NVML_ERROR_INSUFFICIENT_SIZE) {
			*err = r;
			return -1;
		}
		if (!ubuf_grow(nv, n + 8 > nv->ucap ? n + 8 : nv->ucap * 2))
			return -1;
	}
	return -1;
}

/* Keeps the samples of the last GP_NVML_RING_US (NVML's own buffer
 * holds several seconds; a process that reads later than the others
 * still finds what was fetched for them), at most 4096. */
#define GP_NVML_RING_US 10000000ull

static bool ring_append(struct nvml_ring *r, const struct nvml_util_sample *s, unsigned n)
{
	unsigned keep = 0;

	/* Drop what is older than the window, then append. */
	for (unsigned i = 0; i < r->n; i++)
		if (r->s[i].timeStamp + GP_NVML_RING_US >= r->newest)
			r->s[keep++] = r->s[i];
	r->n = keep;
	if (n == 0)
		return true;	/* and no memcpy to a ring never allocated (UBSan) */
	if (r->n + n > 4096)
		r->n = 0;	/* a flood: the old ones go first */
	if (r->n + n > r->cap) {
		unsigned nc = r->n + n < 128 ? 128 : r->n + n;
		void *nb = realloc(r->s, (size_t)nc * sizeof *r->s);
		if (!nb)
			return false;
		r->s = nb;
		r->cap = nc;
	}
	memcpy(r->s + r->n, s, (size_t)n * sizeof *s);
	r->n += n;
	return true;
}

/* Whether the ring of g is due a call: every call before the first
 * tick; from then on once in GP_NVML_PUTIL_PERIOD_S of the ticks' time
 * (nvml.h: the budget). */
static bool ring_due(const struct gp_nvml *nv, const struct nvml_ring *r)
{
	if (!nv->tick || !r->seq)
		return true;
	return nv->t - r->at_t >= GP_NVML_PUTIL_PERIOD_S || nv->t < r->at_t;
}

/* One nvmlDeviceGetProcessUtilization of GPU g into its ring, asked
 * from the newest sample any earlier call returned (the first: one
 * second back, not the whole sample buffer: a kernel that ended before
 * the trace would read as activity now). */
static void ring_fetch(struct gp_nvml *nv, struct nvml_gpu *g)
{
	struct nvml_ring *r = &g->ring;
	unsigned long long now = now_us();
	unsigned long long since = r->newest ? r->newest : now - 1000000ull;
	int err = 0;
	int n = proc_util_call(nv, g->h, since, &err);

	r->seq++;
	r->at_us = now;
	r->at_t = nv->t;
	r->ok = n >= 0;
	r->err = err;
	if (n < 0)
		return;
	if (!r->newest)
		r->newest = since;
	for (int i = 0; i < n; i++)
		if (nv->ubuf[i].timeStamp > r->newest)
			r->newest = nv->ubuf[i].timeStamp;
	if (!ring_append(r, nv->ubuf, (unsigned)n)) {
		r->ok = false;
		r->err = 2;	/* no memory for the ring: said as NVML_ERROR_INVALID_ARGUMENT */
	}
}

/* A percentage of one NVML sample: a value over 100 is not one (seen
 * as 0xffffffff on vGPU): the sample counts, its value does not. */
static unsigned sample_pct(unsigned v)
{
	return v <= 100 ? v : 0;
}

/* The other processes with kernels on the GPU in the samples after
 * since (issue 22): each pid's mean SM % over its own samples, as for
 * pid.  At most 16 are told apart; past them the rest are not counted
 * (a GPU time-sliced 16 ways is shared whatever the 17th does). */
#define GP_NVML_OTHERS 16
#define GP_NVML_OTHER_ACTIVE_PCT 1.0	/* a mean under it: a context, no kernel */

static void other_procs(const struct nvml_ring *r, int pid, unsigned long long since,
			struct gp_nvml_proc_util *a)
{
	struct other { int pid; unsigned n; double sm; } o[GP_NVML_OTHERS];
	unsigned no = 0;

	for (unsigned k = 0; k < r->n; k++) {
		const struct nvml_util_sample *s = &r->s[k];
		if ((int)s->pid == pid || s->timeStamp <= since)
			continue;
		unsigned j = 0;
		while (j < no && o[j].pid != (int)s->pid)
			j++;
		if (j == no) {
			if (no == GP_NVML_OTHERS)
				continue;
			o[no++] = (struct other){ (int)s->pid, 0, 0 };
		}
		o[j].n++;
		o[j].sm += sample_pct(s->smUtil);
	}
	for (unsigned j = 0; j < no; j++) {
		double m = o[j].sm / o[j].n;
		if (m < GP_NVML_OTHER_ACTIVE_PCT)
			continue;
		a->others++;
		a->others_sm_pct += m;
		if (m > a->other_sm_pct) {
			a->other_sm_pct = m;
			a->other_pid = o[j].pid;
		}
	}
}

/* pid's utilisation on GPU i since the caller's last read of it, from
 * the GPU's ring.  Between two calls of the ring the caller's last
 * reading stands: the samples of the last call cover the time since
 * the one before, this tick's included. */
static void dev_proc_activity(struct gp_nvml *nv, unsigned i, int pid,
			      struct gp_nvml_seen *seen, struct gp_nvml_dev_act *a)
{
	struct nvml_gpu *g = &nv->gpu[i];
	struct nvml_ring *r = &g->ring;
	double sm = 0, mem = 0;

	if (!nv->proc_util) {
		a->proc_err = 13;	/* NVML_ERROR_FUNCTION_NOT_FOUND */
		return;
	}
	if (ring_due(nv, r))
		ring_fetch(nv, g);
	if (!r->ok) {
		a->proc_err = r->err;
		return;
	}
	a->have_proc = true;
	if (seen->seq[i] == r->seq && seen->ts[i]) {
		a->u = seen->last[i];
		return;
	}
	/* A process new to the ring looks one second back from its call. */
	unsigned long long since = seen->ts[i] ? seen->ts[i] : r->at_us - 1000000ull;
	for (unsigned k = 0; k < r->n; k++) {
		const struct nvml_util_sample *s = &r->s[k];

		if ((int)s->pid != pid || s->timeStamp <= since)
			continue;
		a->u.samples++;
		unsigned su = sample_pct(s->smUtil);
		sm += su;
		mem += sample_pct(s->memUtil);
		if (su > a->u.sm_max_pct)
			a->u.sm_max_pct = su;
	}
	if (a->u.samples) {
		a->u.sm_pct = sm / a->u.samples;
		a->u.mem_pct = mem / a->u.samples;
	}
	other_procs(r, pid, since, &a->u);
	seen->ts[i] = r->newest > since ? r->newest : since;
	seen->seq[i] = r->seq;
	seen->last[i] = a->u;
}

static unsigned long long mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

/* GPM: a sample now; the metrics between the previous one and it when
 * they are 100 ms apart or more (nvmlGpmMetricsGet needs that), else the
 * last metrics stand and the previous sample stays the base. */
static void read_gpm(struct gp_nvml *nv, struct nvml_gpu *g, unsigned long long t)
{
	struct nvml_work *w = &g->w;
	if (!nv->gpm_support || !nv->gpm_alloc || !nv->gpm_free || !nv->gpm_sample || !nv->gpm_get) {
		w->r.gpm_why = "no GPM in this NVML";
		return;
	}
	if (w->gpm_state == 0) {
		struct nvml_gpm_support sp = { 1, 0 };
		w->gpm_state = nv->gpm_support(g->h, &sp) == NVML_SUCCESS && sp.supported ? 1 : -1;
	}
	if (w->gpm_state < 0) {
		w->r.gpm_why = "GPM not supported (Hopper and newer)";
		return;
	}
	if ((!w->gpm_cur && nv->gpm_alloc(&w->gpm_cur) != NVML_SUCCESS) ||
	    (!w->gpm_prev && nv->gpm_alloc(&w->gpm_prev) != NVML_SUCCESS)) {
		w->r.gpm_why = "nvmlGpmSampleAlloc failed";
		return;
	}
	/* Too close (the metrics need 100 ms), or not due (nvml.h: once in
	 * GP_NVML_GPM_PERIOD_S of the ticks' t): the last metrics stand. */
	if (w->gpm_prev_us && t - w->gpm_prev_us < 100000)
		return;
	if (nv->tick && w->r.have_gpm && nv->t - w->gpm_at_t < GP_NVML_GPM_PERIOD_S && nv->t >= w->gpm_at_t)
		return;
	if (nv->gpm_sample(g->h, w->gpm_cur) != NVML_SUCCESS) {
		w->r.have_gpm = false;
		w->r.gpm_why = "nvmlGpmSampleGet failed";
		return;
	}
	if (!w->gpm_prev_us) {
		w->r.gpm_why = "first GPM sample";
	} else {
		static const unsigned ids[] = { 2, 3, 5, 13, 12, 11, 4, 10 };
		struct nvml_gpm_get *mg = calloc(1, sizeof *mg);
		if (!mg)
			return;
		mg->version = 1;
		mg->n = sizeof ids / sizeof ids[0];
		mg->s1 = w->gpm_prev;
		mg->s2 = w->gpm_cur;
		for (unsigned i = 0; i < mg->n; i++)
			mg->m[i].id = ids[i];
		double *out[] = { &w->r.gpm_sm_util, &w->r.gpm_sm_occ, &w->r.gpm_tensor, &w->r.gpm_fp16,
				  &w->r.gpm_fp32, &w->r.gpm_fp64, &w->r.gpm_int, &w->r.gpm_dram };
		if (nv->gpm_get(mg) == NVML_SUCCESS) {
			w->r.have_gpm = true;
			for (unsigned i = 0; i < mg->n; i++) {
				double v = mg->m[i].value;
				/* A metric that failed, or is no percentage: 0. */
				*out[i] = mg->m[i].ret == NVML_SUCCESS && v >= 0 && v <= 100 ? v : 0;
			}
		} else {
			w->r.have_gpm = false;
			w->r.gpm_why = "nvmlGpmMetricsGet failed";
		}
		free(mg);
	}
	void *x = w->gpm_prev;
	w->gpm_prev = w->gpm_cur;
	w->gpm_cur = x;
	w->gpm_prev_us = t;
	w->gpm_at_t = nv->t;
}

/* The device-wide readings of one GPU, read at most once in 50 ms. */
static void read_dev(struct gp_nvml *nv, struct nvml_gpu *g)
{
	struct nvml_work *w = &g->w;
	unsigned long long t = mono_us();
	/* Once a tick; before the first, at most once in 50 ms. */
	if (nv->tick ? w->tick == nv->tick : w->at_us && t - w->at_us < 50000)
		return;
	w->tick = nv->tick;
	w->at_us = t;
	struct gp_nvml_dev_act *r = &w->r;
	struct nvml_utilization u;
	r->have_util = nv->util && nv->util(g->h, &u) == NVML_SUCCESS && u.gpu <= 100 && u.memory <= 100;
	if (r->have_util) {
		r->util_pct = u.gpu;
		r->mem_util_pct = u.memory;
	}
	r->have_throttle = nv->reasons && nv->reasons(g->h, &r->throttle) == NVML_SUCCESS;
	unsigned int mw = 0, mhz = 0;
	/* Power over 5 kW is no reading (a vGPU's ~0). */
	r->have_power = nv->power && nv->power(g->h, &mw) == NVML_SUCCESS && mw < 5000000;
	r->power_w = r->have_power ? mw / 1000.0 : 0;
	r->have_sm_clock = nv->clock && nv->clock(g->h, 1 /* NVML_CLOCK_SM */, &mhz) == NVML_SUCCESS;
	r->sm_clock_mhz = mhz;
	if (!r->sms && nv->cores && nv->arch) {
		/* SMs from CUDA cores: nvmlDeviceGetAttributes_v2, which has
		 * multiprocessorCount, answers for MIG devices only (NVML API
		 * reference; NOT_SUPPORTED on the H200).  128 cores an SM from
		 * Ampere's GA10x on; only Hopper and newer (architecture 9+:
		 * NVML_DEVICE_ARCH_HOPPER) are counted here, which is where GPM,
		 * the share of SMs a grid holds, exists. */
		unsigned int cores = 0, arch = 0;
		if (nv->arch(g->h, &arch) == NVML_SUCCESS && arch >= 9 && arch < 64 &&
		    nv->cores(g->h, &cores) == NVML_SUCCESS && cores >= 128 && cores < 1u << 20)
			r->sms = cores / 128;
	}
	read_gpm(nv, g, t);
}

/* Copies the shared device readings into a caller's row. */
static void dev_fields(const struct gp_nvml_dev_act *r, struct gp_nvml_dev_act *a)
{
	a->have_util = r->have_util;
	a->util_pct = r->util_pct;
	a->mem_util_pct = r->mem_util_pct;
	a->have_throttle = r->have_throttle;
	a->throttle = r->throttle;
	a->have_power = r->have_power;
	a->power_w = r->power_w;
	a->have_floor = r->have_floor;
	a->floor_w = r->floor_w;
	a->have_sm_clock = r->have_sm_clock;
	a->sm_clock_mhz = r->sm_clock_mhz;
	a->sms = r->sms;
	a->have_gpm = r->have_gpm;
	a->gpm_sm_util = r->gpm_sm_util;
	a->gpm_sm_occ = r->gpm_sm_occ;
	a->gpm_tensor = r->gpm_tensor;
	a->gpm_fp16 = r->gpm_fp16;
	a->gpm_fp32 = r->gpm_fp32;
	a->gpm_fp64 = r->gpm_fp64;
	a->gpm_int = r->gpm_int;
	a->gpm_dram = r->gpm_dram;
	a->gpm_why = r->gpm_why;
}

unsigned gp_nvml_activity(struct gp_nvml *nv, int pid,
			  struct gp_nvml_seen *seen, unsigned long long mask,
			  struct gp_nvml_dev_act *out, unsigned cap)
{
	unsigned n = 0;

	for (unsigned i = 0; nv && i < nv->ngpu && n < cap; i++) {
		struct nvml_gpu *g = &nv->gpu[i];
		struct gp_nvml_dev_act *a;

		if (mask && (g->index >= 64 || !(mask & (1ull << g->index))))
			continue;
		a = &out[n++];

		memset(a, 0, sizeof *a);
		a->index = g->index;
		if (pid >= 0)
			dev_proc_activity(nv, i, pid, seen, a);
		read_dev(nv, g);
		dev_fields(&g->w.r, a);
	}
	return n;
}

/* nvmlClocksEventReasons (nvml.h, CUDA 12.2+; the same bits as the
 * older nvmlClocksThrottleReason*). */
static const struct { unsigned long long bit; const char *name; } reasons[] = {
	{ 0x1, "idle" },
	{ 0x2, "applications-clocks" },
	{ 0x4, "sw-power-cap" },
	{ 0x8, "hw-slowdown" },
	{ 0x10, "sync-boost" },
	{ 0x20, "sw-thermal" },
	{ 0x40, "hw-thermal" },
	{ 0x80, "hw-power-brake" },
	{ 0x100, "display-clocks" },
};

void gp_nvml_throttle_text(unsigned long long mask, char *buf, size_t cap)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
		if (!(mask & reasons[i].bit))
			continue;
		int w = snprintf(buf + len, cap - len, "%s%s", len ? "," : "",
				 reasons[i].name);
		if (w < 0 || (size_t)w >= cap - len)
			return;
		len += (size_t)w;
		mask &= ~reasons[i].bit;
	}
	if (mask)
		snprintf(buf + len, cap - len, "%s0x%llx", len ? "," : "", mask);
}
