/* Choosing and opening a GPU runtime; why hsa_init failed. */
#include "config.h"
#include "dl.h"
#include "gpu.h"

#include <dlfcn.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gp_gpu_load(struct gp_gpu *g, const char *dflt, const char *hint,
		const struct gp_dl_sym *syms, size_t n, const char *what)
{
	const char *lib = g->lib[0] ? g->lib : dflt;
	if (!g->dl) {
		g->dl = gp_dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!g->dl) {
			snprintf(g->err, sizeof g->err, "cannot load %s: %s", lib, gp_dlerror());
			snprintf(g->hint, sizeof g->hint, "%s", hint);
			return -1;
		}
		snprintf(g->lib, sizeof g->lib, "%s", lib);
	}
	g->loaded = true;
	const char *missing = NULL;
	gp_dl_bind(g->dl, syms, n, &missing);
	if (missing) {
		snprintf(g->err, sizeof g->err, "%s: no %s: not a usable %s", g->lib, missing, what);
		return -1;
	}
	return 0;
}

bool gp_gpu_parse_runtime(const char *s, enum gp_rt *rt)
{
	if (!strcmp(s, "auto"))
		*rt = GP_RT_AUTO;
	else if (!strcmp(s, "hsa") || !strcmp(s, "rocm") || !strcmp(s, "rocr"))
		*rt = GP_RT_HSA;
	else if (!strcmp(s, "cuda"))
		*rt = GP_RT_CUDA;
	else
		return false;
	return true;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int gp_gpu_open(struct gp_gpu *g, enum gp_rt rt, const char *lib)
{
	memset(g, 0, sizeof *g);
	if (lib) {
		/* --lib implies the runtime whose entry points it exports. */
		g->dl = gp_dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!g->dl) {
			snprintf(g->err, sizeof g->err, "%s: cannot load: %s", lib, gp_dlerror());
			return -1;
		}
		snprintf(g->lib, sizeof g->lib, "%s", lib);
		if (rt == GP_RT_AUTO) {
			if (dlsym(g->dl, "hsa_init"))
				rt = GP_RT_HSA;
			else if (dlsym(g->dl, "cuInit"))
				rt = GP_RT_CUDA;
			else {
				snprintf(g->err, sizeof g->err,
					 "%s: exports neither hsa_init nor cuInit: not a GPU runtime", lib);
				dlclose(g->dl);
				g->dl = NULL;
				return -1;
			}
		}
		g->be = rt == GP_RT_CUDA ? &gp_cuda_backend : &gp_hsa_backend;
		return g->be->open(g);
	}
	if (rt != GP_RT_AUTO) {
		g->be = rt == GP_RT_CUDA ? &gp_cuda_backend : &gp_hsa_backend;
		return g->be->open(g);
	}
	/* auto: the device nodes say which runtime is likely; but always try
	 * the runtime (a test double or an unusual setup may work where the
	 * nodes say no), and fall back to the other one. */
	bool nv = exists("/dev/nvidia0") || exists("/dev/nvidiactl");
	bool amd = exists("/dev/kfd") || exists("/dev/dxg");
	const struct gp_gpu_backend *order[2] = { &gp_hsa_backend, &gp_cuda_backend };
	if (nv && !amd) {
		order[0] = &gp_cuda_backend;
		order[1] = &gp_hsa_backend;
	}
	/* The first runtime that loads decides: its failure (hsa_init's
	 * 0x1008 with the machine's diagnosis) says more than "the other
	 * library is not installed". */
	struct gp_gpu first;
	for (int i = 0; i < 2; i++) {
		memset(g, 0, sizeof *g);
		g->be = order[i];
		if (g->be->open(g) == 0)
			return 0;
		if (g->loaded)
			return -1;
		if (i == 0)
			first = *g;
	}
	if (amd || nv) {
		*g = first; /* the device nodes named that runtime: say why it failed */
		return -1;
	}
	snprintf(g->err, sizeof g->err,
		 "no GPU runtime: neither libhsa-runtime64.so.1 nor libcuda.so.1 loads, "
		 "and there is no /dev/kfd, /dev/dxg or /dev/nvidia0");
	snprintf(g->hint, sizeof g->hint,
		 "install libhsa-runtime64-1 (AMD) or the NVIDIA driver, or give --lib PATH");
	return -1;
}

void gp_gpu_close(struct gp_gpu *g)
{
	if (g->be && g->be->close)
		g->be->close(g);
	/* Never dlclose a runtime: its threads may still run (a pin that
	 * timed out) and its destructors may wait for them. */
	g->be = NULL;
}

int64_t gp_gpu_pin(struct gp_gpu *g, void *p, size_t n, int pool, unsigned flags)
{
	return g->be->pin(g, p, n, pool, flags);
}

int64_t gp_gpu_unpin(struct gp_gpu *g, void *p)
{
	return g->be->unpin(g, p);
}

void gp_gpu_status_name(struct gp_gpu *g, int64_t code, char *buf, size_t cap)
{
	g->be->status_name(g, code, buf, cap);
}

static bool in_group(gid_t gid)
{
	if (getegid() == gid)
		return true;
	gid_t groups[256];
	int n = getgroups(256, groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

void gp_hsa_diagnose(const char *root, char *line, size_t cap, char *hint, size_t hcap)
{
	char p[4096];
	const char *r = root ? root : "";
	struct stat st;
	snprintf(p, sizeof p, "%s/dev/kfd", r);
	bool kfd = stat(p, &st) == 0;
	struct stat kst = st;
	snprintf(p, sizeof p, "%s/dev/dxg", r);
	bool dxg = stat(p, &st) == 0;
	snprintf(p, sizeof p, "%s/sys/module/amdgpu", r);
	bool mod = stat(p, &st) == 0;
	hint[0] = '\0';
	if (!kfd && dxg) {
		/* WSL2: ROCr reaches the GPU through /dev/dxg (librocdxg). */
		snprintf(line, cap, "/dev/kfd is absent and /dev/dxg is present (WSL): "
			 "this runtime build has no WSL (dxg) support, or the Windows driver is too old");
		snprintf(hint, hcap, "use a ROCm build for WSL and check the Windows AMD driver");
	} else if (!kfd && !mod) {
		snprintf(line, cap, "/dev/kfd is absent and the amdgpu kernel module is not loaded "
			 "(no /sys/module/amdgpu): no AMD GPU driver on this machine");
		snprintf(hint, hcap, "on a machine with an AMD GPU: modprobe amdgpu; "
			 "elsewhere use --runtime cuda or a test double via --lib");
	} else if (!kfd) {
		snprintf(line, cap, "the amdgpu module is loaded but /dev/kfd is absent: "
			 "the driver has no compute (KFD) support, or this container does not pass /dev/kfd");
		snprintf(hint, hcap, "pass --device /dev/kfd --device /dev/dri to the container, "
			 "or check dmesg for amdgpu/kfd errors");
	} else if (!root && access("/dev/kfd", R_OK | W_OK) != 0) {
		struct group *gr = getgrgid(kst.st_gid);
		snprintf(line, cap, "/dev/kfd exists but this user cannot open it (owner group %s, "
			 "mode %o)%s", gr ? gr->gr_name : "?", (unsigned)(kst.st_mode & 0777),
			 in_group(kst.st_gid) ? "" : ": not in that group");
		snprintf(hint, hcap, "add the user to the render and video groups "
			 "(usermod -aG render,video USER), then log in again");
	} else if (!mod) {
		snprintf(line, cap, "/dev/kfd exists but /sys/module/amdgpu does not: "
			 "an unusual driver setup");
	} else {
		snprintf(line, cap, "/dev/kfd is present and accessible and amdgpu is loaded: "
			 "the GPU may be unsupported by this runtime build, or out of memory");
		snprintf(hint, hcap, "run with HSA_ENABLE_DEBUG=1 or AMD_LOG_LEVEL=4; "
			 "check dmesg for amdgpu errors");
	}
}
