/* A CUDA process whose GPU memory grows, then stays: N allocations of
 * 1 GiB, one every STEP seconds, then asleep for HOLD seconds.  The CUDA
 * driver is dlopen'ed (no CUDA headers or link): the H200 machine's
 * libcuda.so.1.  For bench/h200-trace.sh: NVML must show the process's
 * GPU memory climbing, then flat.
 *   cuda-alloc N STEP HOLD */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	double step = argc > 2 ? atof(argv[2]) : 0.5;
	double hold = argc > 3 ? atof(argv[3]) : 20;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "cuda-alloc: %s\n", dlerror());
		return 2;
	}
	CUresult (*cuInit)(unsigned) = (CUresult (*)(unsigned))dlsym(lib, "cuInit");
	CUresult (*cuDeviceGet)(CUdevice *, int) = (CUresult (*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
	CUresult (*retain)(CUcontext *, CUdevice) =
		(CUresult (*)(CUcontext *, CUdevice))dlsym(lib, "cuDevicePrimaryCtxRetain");
	CUresult (*setcur)(CUcontext) = (CUresult (*)(CUcontext))dlsym(lib, "cuCtxSetCurrent");
	CUresult (*alloc)(CUdeviceptr *, size_t) =
		(CUresult (*)(CUdeviceptr *, size_t))dlsym(lib, "cuMemAlloc_v2");
	CUresult (*memset8)(CUdeviceptr, unsigned char, size_t) =
		(CUresult (*)(CUdeviceptr, unsigned char, size_t))dlsym(lib, "cuMemsetD8_v2");
	CUdevice dev;
	CUcontext ctx;
	if (!cuInit || !alloc || cuInit(0) || cuDeviceGet(&dev, 0) || retain(&ctx, dev) || setcur(ctx)) {
		fprintf(stderr, "cuda-alloc: no CUDA device\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		CUdeviceptr p;
		if (alloc(&p, 1ull << 30)) {
			fprintf(stderr, "cuda-alloc: cuMemAlloc failed at %d GiB\n", i);
			return 1;
		}
		if (memset8)
			memset8(p, (unsigned char)i, 1ull << 30);
		nap(step);
	}
	fprintf(stderr, "cuda-alloc: %d GiB allocated; holding %.0f s\n", n, hold);
	nap(hold);
	return 0;
}
