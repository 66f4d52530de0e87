/* The CUDA backend: libcuda.so.1 (the driver API) through dlopen.
 *
 * Versioned entry points only: cuMemHostRegister_v2, cuDeviceTotalMem_v2,
 * and the primary context (cuDevicePrimaryCtxRetain + cuCtxSetCurrent),
 * never bare cuCtxCreate: CUDA 13's header maps that name to a 4-argument
 * call, so a symbol looked up by the old name gets the wrong ABI. */
#include "config.h"
#include "dl.h"
#include "gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;

/* cuda.h: CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113
 * (CUDA 11.1+): the device accepts CU_MEMHOSTREGISTER_READ_ONLY (0x08). */
#define CU_ATTR_READ_ONLY_HOST_REGISTER 113

struct cuda_fns {
	CUresult (*init)(unsigned);
	CUresult (*driver_version)(int *);
	CUresult (*device_count)(int *);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*device_name)(char *, int, CUdevice);
	CUresult (*device_total_mem)(size_t *, CUdevice);
	CUresult (*device_attr)(int *, int, CUdevice);
	CUresult (*primary_retain)(CUcontext *, CUdevice);
	CUresult (*primary_release)(CUdevice);
	CUresult (*ctx_set_current)(CUcontext);
	CUresult (*error_name)(CUresult, const char **);
	CUresult (*host_register)(void *, size_t, unsigned);
	CUresult (*host_unregister)(void *);
	CUdevice dev;
	CUcontext ctx;
	bool retained;
};

static struct cuda_fns fns_storage;

static void status_name(struct gp_gpu *g, int64_t code, char *buf, size_t cap)
{
	struct cuda_fns *f = g ? g->priv : NULL;
	const char *s = NULL;
	if (f && f->error_name && f->error_name((CUresult)code, &s) == 0 && s) {
		snprintf(buf, cap, "%s", s);
		return;
	}
	s = gp_cuda_status_table(code);
	if (s)
		snprintf(buf, cap, "%s", s);
	else
		snprintf(buf, cap, "CUDA_ERROR_%lld", (long long)code);
}

static int fail(struct gp_gpu *g, const char *call, CUresult r)
{
	char name[64];
	status_name(g, r, name, sizeof name);
	g->init_status = r;
	snprintf(g->err, sizeof g->err, "%s: %s (%d)", call, name, r);
	struct stat st;
	if (r == 100 || stat("/dev/nvidia0", &st) != 0) {
		snprintf(g->err + strlen(g->err), sizeof g->err - strlen(g->err), "%s",
			 stat("/dev/nvidiactl", &st) != 0
			 ? ": /dev/nvidiactl is absent: the NVIDIA kernel driver is not loaded"
			 : stat("/dev/nvidia0", &st) != 0 ? ": /dev/nvidia0 is absent" : "");
		snprintf(g->hint, sizeof g->hint, "check nvidia-smi; in a container pass the GPU "
			 "(--gpus all)");
	}
	return -1;
}

/* The driver API entry points: the required ones first, in the order
 * their absence is reported; a versioned name before the bare one. */
static const struct gp_dl_sym cuda_syms[] = {
	{ GP_DL_NAMES("cuInit"), (void **)&fns_storage.init, true },
	{ GP_DL_NAMES("cuDeviceGet"), (void **)&fns_storage.device_get, true },
	{ GP_DL_NAMES("cuDevicePrimaryCtxRetain"), (void **)&fns_storage.primary_retain, true },
	{ GP_DL_NAMES("cuCtxSetCurrent"), (void **)&fns_storage.ctx_set_current, true },
	{ GP_DL_NAMES("cuMemHostRegister_v2"), (void **)&fns_storage.host_register, true },
	{ GP_DL_NAMES("cuMemHostUnregister"), (void **)&fns_storage.host_unregister, true },
	{ GP_DL_NAMES("cuDriverGetVersion"), (void **)&fns_storage.driver_version, false },
	{ GP_DL_NAMES("cuDeviceGetCount"), (void **)&fns_storage.device_count, false },
	{ GP_DL_NAMES("cuDeviceGetName"), (void **)&fns_storage.device_name, false },
	{ GP_DL_NAMES("cuDeviceTotalMem_v2"), (void **)&fns_storage.device_total_mem, false },
	{ GP_DL_NAMES("cuDeviceGetAttribute"), (void **)&fns_storage.device_attr, false },
	{ GP_DL_NAMES("cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
	  (void **)&fns_storage.primary_release, false },
	{ GP_DL_NAMES("cuGetErrorName"), (void **)&fns_storage.error_name, false },
};

static int cuda_open(struct gp_gpu *g)
{
	struct cuda_fns *f = &fns_storage;
	memset(f, 0, sizeof *f);
	g->priv = f;
	if (gp_gpu_load(g, "libcuda.so.1", "install the NVIDIA driver, or give --lib PATH",
			cuda_syms, sizeof cuda_syms / sizeof cuda_syms[0], "CUDA driver") < 0)
		return -1;
	CUresult r = f->init(0);
	if (r)
		return fail(g, "cuInit", r);
	int ver = 0;
	if (f->driver_version && f->driver_version(&ver) == 0)
		snprintf(g->version, sizeof g->version, "CUDA %d.%d", ver / 1000, (ver % 1000) / 10);
	snprintf(g->build, sizeof g->build, "driver API %d", ver);
	int count = 1;
	if (f->device_count && (r = f->device_count(&count)) != 0)
		return fail(g, "cuDeviceGetCount", r);
	for (int i = 0; i < count && g->nagents < GP_GPU_MAX_AGENTS; i++) {
		CUdevice d;
		if ((r = f->device_get(&d, i)) != 0)
			return fail(g, "cuDeviceGet", r);
		struct gp_gpu_agent *a = &g->agents[g->nagents++];
		memset(a, 0, sizeof *a);
		a->handle = (uint64_t)d;
		a->type = GP_AGENT_GPU;
		a->node = (uint32_t)i;
		a->have_node = true;
		a->ro_register = -1;
		snprintf(a->label, sizeof a->label, "gpu%d", i);
		if (f->device_name && f->device_name(a->product, sizeof a->product, d) == 0) {
			a->product[sizeof a->product - 1] = '\0';
			a->have_product = true;
			memcpy(a->name, a->product, sizeof a->name);
		}
		size_t mem;
		if (f->device_total_mem && f->device_total_mem(&mem, d) == 0)
			a->total_mem = mem;
		int v;
		if (f->device_attr && f->device_attr(&v, CU_ATTR_READ_ONLY_HOST_REGISTER, d) == 0)
			a->ro_register = v;
		if (i == 0)
			f->dev = d;
	}
	if (!g->nagents)
		return fail(g, "cuDeviceGetCount", 100);
	if ((r = f->primary_retain(&f->ctx, f->dev)) != 0)
		return fail(g, "cuDevicePrimaryCtxRetain", r);
	f->retained = true;
	if ((r = f->ctx_set_current(f->ctx)) != 0)
		return fail(g, "cuCtxSetCurrent", r);
	return 0;
}

static int64_t cuda_pin(struct gp_gpu *g, void *p, size_t n, int pool, unsigned flags)
{
	struct cuda_fns *f = g->priv;
	/* The context is per thread: the pin may run on a watchdog's worker. */
	CUresult r = f->ctx_set_current(f->ctx);
	if (r)
		return r;
	return f->host_register(p, n, flags);
}

static int64_t cuda_unpin(struct gp_gpu *g, void *p)
{
	struct cuda_fns *f = g->priv;
	CUresult r = f->ctx_set_current(f->ctx);
	if (r)
		return r;
	return f->host_unregister(p);
}

static void cuda_close(struct gp_gpu *g)
{
	struct cuda_fns *f = g->priv;
	if (f && f->retained && f->primary_release)
		f->primary_release(f->dev);
	if (f)
		f->retained = false;
}

const struct gp_gpu_backend gp_cuda_backend = {
	.name = "cuda",
	.pin_call = "cuMemHostRegister_v2",
	.pool_call = NULL,
	.unpin_call = "cuMemHostUnregister",
	.open = cuda_open,
	.pin = cuda_pin,
	.unpin = cuda_unpin,
	.status_name = status_name,
	.close = cuda_close,
	.success = 0,
};
