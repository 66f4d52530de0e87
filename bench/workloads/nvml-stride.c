/* What a real libnvidia-ml writes through each of its process-list names
 * (issue 18 item 8): for GPU 0, every one of
 * nvmlDeviceGet{Compute,Graphics}RunningProcesses{_v3,_v2,} called with a
 * buffer filled with GP_NVML_FILL, then the return code, the count, the
 * bytes written, the stride gp_nvml_stride() (src/gpu/nvmlproc.c) finds
 * and the pids read at it.  For bench/h200-nvml-stride.sh; built there
 * with gcc against nvmlproc.c and strbuf.c (no NVML header, no link).
 *   nvml-stride [LIB] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvmlproc.h"

typedef int (*procs_fn)(void *, unsigned *, void *);

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "libnvidia-ml.so.1";
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	static const char *const syms[] = {
		"nvmlDeviceGetComputeRunningProcesses_v3",
		"nvmlDeviceGetComputeRunningProcesses_v2",
		"nvmlDeviceGetComputeRunningProcesses",
		"nvmlDeviceGetGraphicsRunningProcesses_v3",
		"nvmlDeviceGetGraphicsRunningProcesses_v2",
		"nvmlDeviceGetGraphicsRunningProcesses",
	};
	enum { CAP = 256 };

	if (!lib) {
		fprintf(stderr, "nvml-stride: %s\n", dlerror());
		return 2;
	}
	int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
	int (*handle)(unsigned, void **) =
		(int (*)(unsigned, void **))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
	int (*version)(char *, unsigned) =
		(int (*)(char *, unsigned))dlsym(lib, "nvmlSystemGetDriverVersion");
	void *dev;
	char ver[96] = "?";

	if (!init || !handle || init() || handle(0, &dev)) {
		fprintf(stderr, "nvml-stride: no NVML GPU 0\n");
		return 2;
	}
	if (version)
		version(ver, sizeof ver);
	printf("driver %s\n", ver);
	size_t len = gp_nvml_procbuf_size(CAP);
	unsigned char *buf = malloc(len);
	if (!buf)
		return 2;
	for (size_t k = 0; k < sizeof syms / sizeof syms[0]; k++) {
		procs_fn fn = (procs_fn)dlsym(lib, syms[k]);
		unsigned n = CAP;
		char why[256];

		if (!fn) {
			printf("%s: not exported\n", syms[k]);
			continue;
		}
		memset(buf, GP_NVML_FILL, len);
		int r = fn(dev, &n, buf);
		size_t w = len;
		while (w > 0 && buf[w - 1] == GP_NVML_FILL)
			w--;
		unsigned s = r == 0 ? gp_nvml_stride(buf, len, n, why, sizeof why) : 0;
		printf("%s: ret %d count %u written %zu bytes (%.2f a count) stride %u%s%s\n",
		       syms[k], r, n, w, n ? (double)w / n : 0.0, s,
		       r == 0 && n && !s ? ": " : "", r == 0 && n && !s ? why : "");
		if (!s)
			continue;
		printf("  pids:");
		for (unsigned i = 0; i < n; i++) {
			struct gp_nvml_proc e;
			gp_nvml_proc_at(buf, s, i, &e);
			printf(" %u", e.pid);
		}
		struct gp_nvml_proc e;
		gp_nvml_proc_at(buf, s, 0, &e);
		printf("\n  entry 0: pid %u used %llu gi %d ci %d cc %llu\n", e.pid, e.used,
		       (int)e.gi, (int)e.ci, e.cc_used);
	}
	free(buf);
	return 0;
}
