/* bench/workloads/nvml-timer.c: a timing shim of libnvidia-ml.so.1 for
 * issue 19's NVML budget (at most 2 ms of NVML per GPU per second).
 * The slope method of bench/h200-nvml-cost.sh (gpuprobe's CPU time with
 * NVML less without, over trace lengths) read 1.06-2.11 ms/s for one
 * GPU across runs on an H100 (2026-12-05): its noise is the size of
 * what it measures.  This measures the calls themselves: gpuprobe loads
 * it through GPUPROBE_NVML_LIB, each function gpuprobe looks up is
 * forwarded to the real library, and the wall and CPU time inside each
 * is summed; at exit one line per function is appended to
 * $GPUPROBE_NVML_TIMES: "FUNCTION CALLS WALL_MS CPU_MS".
 *
 * Forwarding: every NVML call gpuprobe makes takes at most six integer
 * or pointer arguments and returns nvmlReturn_t (an int), so one
 * six-long signature forwards them all (x86-64 and aarch64 calling
 * conventions pass them in the same registers).  A benchmark tool, not
 * part of gpuprobe.
 *
 *   cc -O2 -shared -fPIC -o nvml-timer.so bench/workloads/nvml-timer.c -ldl
 *   GPUPROBE_NVML_LIB=$PWD/nvml-timer.so GPUPROBE_NVML_TIMES=t.txt gpuprobe trace ... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef long (*fn6)(long, long, long, long, long, long);

static void *real_lib(void)
{
	static void *lib;
	if (!lib) {
		lib = dlopen(getenv("NVML_TIMER_REAL") ? getenv("NVML_TIMER_REAL") : "libnvidia-ml.so.1",
			     RTLD_NOW | RTLD_LOCAL);
		if (!lib)
			fprintf(stderr, "nvml-timer: %s\n", dlerror());
	}
	return lib;
}

static double now_ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct stat_row {
	const char *name;
	fn6 real;
	unsigned long calls;
	double wall_ms, cpu_ms;
};

#define NAMES(X) X(nvmlInit) X(nvmlInit_v2) X(nvmlShutdown) X(nvmlDeviceGetCount) \
	X(nvmlDeviceGetCount_v2) X(nvmlDeviceGetHandleByIndex) X(nvmlDeviceGetHandleByIndex_v2) \
	X(nvmlDeviceGetName) X(nvmlDeviceGetArchitecture) X(nvmlDeviceGetNumGpuCores) \
	X(nvmlDeviceGetClockInfo) X(nvmlDeviceGetComputeRunningProcesses) \
	X(nvmlDeviceGetComputeRunningProcesses_v2) X(nvmlDeviceGetComputeRunningProcesses_v3) \
	X(nvmlDeviceGetGraphicsRunningProcesses) X(nvmlDeviceGetGraphicsRunningProcesses_v2) \
	X(nvmlDeviceGetGraphicsRunningProcesses_v3) X(nvmlDeviceGetCurrentClocksEventReasons) \
	X(nvmlDeviceGetCurrentClocksThrottleReasons) X(nvmlDeviceGetPowerUsage) \
	X(nvmlDeviceGetProcessUtilization) X(nvmlDeviceGetUtilizationRates) X(nvmlGpmMetricsGet) \
	X(nvmlGpmQueryDeviceSupport) X(nvmlGpmSampleAlloc) X(nvmlGpmSampleFree) X(nvmlGpmSampleGet)

#define ROW(n) { #n, NULL, 0, 0, 0 },
static struct stat_row rows[] = { NAMES(ROW) };
#define IDX(n) IDX_##n,
enum { NAMES(IDX) NROWS };

static long forward(int i, long a, long b, long c, long d, long e, long f)
{
	struct stat_row *r = &rows[i];
	if (!r->real) {
		void *lib = real_lib();
		r->real = lib ? (fn6)dlsym(lib, r->name) : NULL;
		if (!r->real)
			return 13; /* NVML_ERROR_FUNCTION_NOT_FOUND */
	}
	double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
	long rc = r->real(a, b, c, d, e, f);
	r->cpu_ms += now_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
	r->wall_ms += now_ms(CLOCK_MONOTONIC) - w0;
	r->calls++;
	return rc;
}

#define DEF(n) __attribute__((visibility("default"))) long n(long a, long b, long c, long d, long e, long f) \
	{ return forward(IDX_##n, a, b, c, d, e, f); }
NAMES(DEF)

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("GPUPROBE_NVML_TIMES");
	FILE *out = path ? fopen(path, "a") : NULL;
	if (!out)
		return;
	for (int i = 0; i < NROWS; i++)
		if (rows[i].calls)
			fprintf(out, "%s %lu %.3f %.3f\n", rows[i].name, rows[i].calls, rows[i].wall_ms,
				rows[i].cpu_ms);
	fclose(out);
}
