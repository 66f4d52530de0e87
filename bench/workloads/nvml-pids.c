/* Issue 18 item 8, before and after: how many of N processes gpuprobe's
 * NVML reader (gp_nvml_proc_memory) finds with their own size, against
 * the test double serving 300000..300000+N-1 with (i + 1) MiB each at
 * the stride its script says.  Built by hand against a build tree's
 * src/libgpuprobe.a (bench/results/2026-12-04-nvml-stride.md):
 *   cc -Isrc/gpu -I. -o nvml-pids bench/workloads/nvml-pids.c src/libgpuprobe.a -ljansson -ldl
 *   GPUPROBE_FAKE_NVML="gpus 1;stride 32;proc 300000 bytes=1048576;..." \
 *       ./nvml-pids tests/gpu/libnvidia-ml.so.1 40
 * "--cost": instead, the time of one buffer fill and one gp_nvml_stride
 * of 40 entries of 24 bytes, over a million rounds (needs nvmlproc.h,
 * the new code only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "nvml.h"
#ifdef NVML_PIDS_COST
#include "nvmlproc.h"
#endif

int main(int argc, char **argv)
{
	char why[256];

	if (argc < 3)
		return 64;
#ifdef NVML_PIDS_COST
	if (!strcmp(argv[1], "--cost")) {
		unsigned n = (unsigned)atoi(argv[2]);
		size_t len = gp_nvml_procbuf_size(n + 8);
		unsigned char *b = calloc(1, len);
		unsigned long long sum = 0;
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int it = 0; it < 1000000; it++) {
			memset(b, GP_NVML_FILL, len);
			for (unsigned k = 0; k < n; k++) {
				unsigned pid = 1000 + k, none = ~0u;
				unsigned long long used = (unsigned long long)(k + 1) << 20;
				memcpy(b + k * 24, &pid, 4);
				memset(b + k * 24 + 4, 0, 4);
				memcpy(b + k * 24 + 8, &used, 8);
				memcpy(b + k * 24 + 16, &none, 4);
				memcpy(b + k * 24 + 20, &none, 4);
			}
			sum += gp_nvml_stride(b, len, n, why, sizeof why);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("stride %llu; %.0f ns a round (fill %zu bytes, write %u entries, detect)\n",
		       sum / 1000000, ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
				       (double)(t1.tv_nsec - t0.tv_nsec)) / 1e6, len, n);
		free(b);
		return 0;
	}
#endif
	int n = atoi(argv[2]), right = 0, wrong = 0, absent = 0, unanswered = 0;
	struct gp_nvml *nv = gp_nvml_open(argv[1], why, sizeof why);
	if (!nv) {
		printf("open: %s\n", why);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		json_t *arr = json_array();
		uint64_t b = 0;
		if (!gp_nvml_proc_memory(nv, 300000 + i, arr, &b))
			unanswered++;
		else if (json_array_size(arr) == 0)
			absent++;
		else if (b == (uint64_t)(i + 1) << 20)
			right++;
		else
			wrong++;
		json_decref(arr);
	}
	printf("right %d, wrong size %d, absent %d, unanswered %d\n", right, wrong, absent,
	       unanswered);
	gp_nvml_close(nv);
	return 0;
}
