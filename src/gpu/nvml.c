/* NVML through dlopen: see nvml.h.  Moved from gpumem.c (per-process
 * memory) and grown with per-process and device activity (issue 13),
 * which nvmlact.c reads. */
#include "config.h"
#include "satmath.h"
#include "dl.h"
#include "nvml_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
