/* Cost per call of the GPU readers of issue 13, and what they read.
 *
 *   gpu-readers ROOT PID N INTERVAL [NVML_LIB]
 *
 * Reads PID's GPU state N times under ROOT ("/" live, or a recorded
 * tree), INTERVAL seconds apart (0: back to back), and prints the CPU
 * (user+sys of this process) and wall time per call of each reader:
 *   gpumem   gp_gpu_read (DRM fdinfo + KFD vram/sdma), NVML off
 *   nvmlmem  gp_nvml_proc_memory (the per-process memory lists)
 *   nvmlact  gp_nvml_activity (process utilisation, device utilisation,
 *            clock-event reasons, every GPU)
 *   gpuact   gp_gpuact_read given gpumem's object (KFD stats, gpu_busy,
 *            NVML activity; DRM engine rates from the object)
 * With INTERVAL > 0 it also prints each read's activity (JSON), which is
 * how the H200 run checks NVML's numbers against a running kernel.
 * With GPU_READERS_KMSG=1 it first prints the kernel-log records the
 * kmsg reader keeps from the whole buffer, and the cost of reading it. */
#include "config.h"
#include "gpuact.h"
#include "gpumem.h"
#include "house.h"
#include "kmsg.h"
#include "nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct acc { double cpu, wall; unsigned n; };

#define TIMED(a, stmt) do { \
	double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC); \
	stmt; \
	(a)->cpu += now(CLOCK_PROCESS_CPUTIME_ID) - c0; \
	(a)->wall += now(CLOCK_MONOTONIC) - w0; (a)->n++; } while (0)

static void row(const char *name, const struct acc *a)
{
	if (a->n)
		printf("| %s | %u | %.1f | %.1f |\n", name, a->n, a->cpu / a->n * 1e6,
		       a->wall / a->n * 1e6);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: gpu-readers ROOT PID N INTERVAL [NVML_LIB]\n");
		return 64;
	}
	struct gp_root root;
	if (gp_root_open(&root, argv[1]) != 0) {
		perror(argv[1]);
		return 1;
	}
	int pid = atoi(argv[2]), n = atoi(argv[3]);
	double interval = atof(argv[4]);
	const char *lib = argc > 5 ? argv[5] : NULL;
	char why[256] = "";
	struct gp_nvml *nv = root.live ? gp_nvml_open(lib, why, sizeof why) : NULL;
	if (!nv && root.live)
		fprintf(stderr, "gpu-readers: no NVML: %s\n", why);
	if (getenv("GPU_READERS_KMSG")) {
		struct gp_kmsg_rec recs[64];
		int k, kept = 0;
		double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
		struct gp_kmsg *km = gp_kmsg_open(&root, gp_kmsg_now_us(), 1e7, why, sizeof why);
		if (!km)
			printf("kmsg: %s\n", why);
		while (km && (k = gp_kmsg_read(km, recs, 64, why, sizeof why)) > 0)
			for (int i = 0; i < k; i++, kept++) {
				if (kept >= 40)
					continue;
				json_t *j = gp_kmsg_json(&recs[i]);
				char *s = json_dumps(j, JSON_COMPACT);
				printf("%s\n", s);
				free(s);
				json_decref(j);
			}
		printf("kmsg: %d records kept (%u lost), %.1f ms CPU, %.1f ms wall for the whole buffer\n",
		       kept, gp_kmsg_lost(km), (now(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e3,
		       (now(CLOCK_MONOTONIC) - w0) * 1e3);
		gp_kmsg_close(km);
	}
	/* The readers share a house, as a trace's do (its own NVML handle:
	 * the calls timed above are on nv). */
	struct gp_gpu_house_opts ho = { .root = &root, .nvml_lib = lib };
	struct gp_gpu_house *house = gp_gpu_house_new(&ho);
	struct gp_gpu_reader *m = gp_gpu_reader_new_in(house, pid, GP_GPU_NO_NVML);
	struct gp_gpuact_opts o = { .house = house, .pid = pid };
	struct gp_gpuact *r = gp_gpuact_new(&o);
	struct gp_nvml_seen seen;
	struct gp_nvml_dev_act d[GP_NVML_MAX_GPUS];
	struct acc a_mem = { 0 }, a_nvmem = { 0 }, a_nvact = { 0 }, a_act = { 0 };
	double t0 = now(CLOCK_MONOTONIC);

	memset(&seen, 0, sizeof seen);
	for (int i = 0; i < n; i++) {
		json_t *g = NULL;
		struct gp_gpu_totals tot;
		struct gp_gpu_activity act;

		TIMED(&a_mem, gp_gpu_read(m, &g, &tot));
		if (nv) {
			json_t *rows = json_array();
			uint64_t bytes = 0;
			TIMED(&a_nvmem, gp_nvml_proc_memory(nv, pid, rows, &bytes));
			json_object_set_new(g, "nvml", rows);
			TIMED(&a_nvact, gp_nvml_activity(nv, pid, &seen, 0, d, GP_NVML_MAX_GPUS));
		}
		TIMED(&a_act, gp_gpuact_read(r, now(CLOCK_MONOTONIC) - t0, g, &act));
		if (interval > 0) {
			json_t *j = gp_gpuact_json(&act, act.absent_changed);
			char *s = json_dumps(j, JSON_COMPACT);
			char text[512];
			gp_gpuact_text(&act, text, sizeof text);
			printf("t=%.2f %s\n  %s\n", act.t, s, text);
			free(s);
			json_decref(j);
			struct timespec ts = { (time_t)interval,
				(long)((interval - (double)(time_t)interval) * 1e9) };
			nanosleep(&ts, NULL);
		}
		json_decref(g);
	}
	printf("| reader | calls | CPU µs/call | wall µs/call |\n|---|---:|---:|---:|\n");
	row("gpumem (DRM fdinfo, KFD vram/sdma)", &a_mem);
	row("NVML per-process memory", &a_nvmem);
	row("NVML activity (process util, device util, clock reasons)", &a_nvact);
	row("gpuact (KFD stats, gpu_busy, NVML activity; DRM from gpumem)", &a_act);
	printf("GPUs: %u\n", gp_nvml_count(nv));
	gp_gpuact_free(r);
	gp_gpu_reader_free(m);
	gp_gpu_house_free(house);
	gp_nvml_close(nv);
	gp_root_close(&root);
	return 0;
}
