/* Unit tests of src/gpu/gpuact.c and nvml.c: recorded amdgpu/KFD trees
 * (tests/fixtures/gpuact) replayed as two samples, and the NVML test
 * double (tests/gpu/libnvidia-ml.so.1) driven through its script. */
#include "config.h"
#include "gpuact.h"
#include "gpumem.h"
#include "house.h"
#include "nvml.h"
#include "gpujson.h"
#include "gpuwork.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

#include "gpu_reader.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif
#ifndef FAKE_NVML
#define FAKE_NVML "tests/gpu/libnvidia-ml.so.1"
#endif

static const char *fx(const char *name)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s/gpuact/%s", FIXTURES, name);
	return path;
}

static json_t *gpumem_of(struct gp_root *root, int pid)
{
	struct gp_gpu_reader *m = reader_new(root, pid, GP_GPU_NO_NVML, NULL);
	struct gp_gpu_totals tot;
	json_t *g = NULL;

	assert_non_null(m);
	assert_int_equal(gp_gpu_read(m, &g, &tot), 0);
	reader_free(m);
	return g;
}

static double jreal(const json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(json_object_get(o, a), b);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* The activity reader of pid on the recorded tree `name`. */
static struct gp_gpuact *reader_on(struct gp_root *root, const char *name, int pid)
{
	assert_int_equal(gp_root_open(root, fx(name)), 0);
	struct gp_gpuact_opts o = { .root = root, .pid = pid };
	struct gp_gpuact *r = gp_gpuact_new(&o);
	assert_non_null(r);
	return r;
}

/* Two samples of an amdgpu + KFD process, one second apart. */
static void test_amd_two_samples(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;

	struct gp_gpuact *r = reader_on(&root, "amd-t0", 5151);
	json_t *g = gpumem_of(&root, 5151);
	assert_int_equal(gp_gpuact_read(r, 10.0, g, &a), 0);
	json_decref(g);
	assert_true(a.absent_changed);
	assert_false(a.have_drm_engine);	/* one read: no rate yet */
	assert_non_null(strstr(a.why_drm, "first read"));
	assert_true(a.engine_kfd_blind);
	assert_int_equal(a.engine_ns, 6000000000ull);
	assert_true(a.have_kfd);
	assert_int_equal(a.kfd_evicted_ms, 1200);
	assert_int_equal(a.kfd_evicted_ms_delta, 0);
	assert_true(a.have_cu_occupancy);
	assert_int_equal(a.cu_occupancy, 0);
	assert_false(a.have_sdma);
	assert_int_equal(a.kfd_faults, 10);
	assert_true(a.have_gpu_busy);
	assert_false(a.gpu_busy_all_cards);
	assert_true(a.gpu_busy_pct == 40);
	assert_false(a.have_nvml);
	assert_non_null(strstr(a.why_nvml, "recorded tree"));

	gp_root_close(&root);
	assert_int_equal(gp_root_open(&root, fx("amd-t1")), 0);
	g = gpumem_of(&root, 5151);
	assert_int_equal(gp_gpuact_read(r, 11.0, g, &a), 0);
	assert_true(a.absent_changed);		/* the DRM reason went away */
	assert_true(a.have_drm_engine);
	assert_string_equal(a.engine, "compute");
	assert_true(fabs(a.engine_busy_pct - 90.0) < 1e-6);
	assert_true(a.have_drm_evicted);
	assert_int_equal(a.drm_evicted_vram_bytes, 4096 * 1024);
	assert_int_equal(a.kfd_evicted_ms_delta, 250);
	assert_int_equal(a.cu_occupancy, 96);
	assert_true(a.have_sdma);
	assert_true(fabs(a.sdma_busy_pct - 30.0) < 1e-6);
	assert_int_equal(a.kfd_page_in, 5);
	assert_true(a.gpu_busy_pct == 100);
	assert_true(gp_gpuact_known(&a));
	assert_true(gp_gpuact_busy(&a, 5));

	json_t *j = gp_gpuact_json(&a, a.absent_changed);
	assert_true(jreal(j, "drm", "engine_busy_pct") == 90.0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "drm"), "engine")), "compute");
	assert_true(json_is_true(json_object_get(json_object_get(j, "drm"), "kfd_blind")));
	assert_true(jreal(j, "drm", "evicted_vram_bytes") == 4194304);
	assert_true(jreal(j, "kfd", "evicted_ms_delta") == 250);
	assert_true(jreal(j, "kfd", "cu_occupancy") == 96);
	assert_true(jreal(j, "kfd", "sdma_busy_pct") == 30.0);
	assert_true(jreal(j, "device", "gpu_busy_pct") == 100);
	assert_null(json_object_get(j, "nvml"));	/* unknown: left out */
	bool known;
	assert_true(gp_gpuact_json_busy(j, 5, &known));	/* the saved form agrees */
	assert_true(known);
	assert_non_null(json_object_get(json_object_get(j, "absent"), "nvml"));
	assert_null(json_object_get(json_object_get(j, "absent"), "drm"));
	json_decref(j);

	/* The pure form, from two saved samples. */
	json_t *g0 = NULL;
	struct gp_root r0;
	assert_int_equal(gp_root_open(&r0, fx("amd-t0")), 0);
	g0 = gpumem_of(&r0, 5151);
	double busy;
	char eng[32];
	assert_true(gp_drm_engine_busy(g0, g, 2.0, &busy, eng, sizeof eng));
	assert_true(fabs(busy - 45.0) < 1e-6);
	assert_string_equal(eng, "compute");
	assert_false(gp_drm_engine_busy(NULL, g, 1.0, &busy, eng, sizeof eng));
	json_decref(g0);
	gp_root_close(&r0);

	/* Same counters again: 0 % busy, known; nothing new absent. */
	assert_int_equal(gp_gpuact_read(r, 12.0, g, &a), 0);
	assert_false(a.absent_changed);
	assert_true(a.have_drm_engine);
	assert_true(a.engine_busy_pct == 0);
	assert_int_equal(a.kfd_evicted_ms_delta, 0);
	json_decref(g);

	char text[512];
	gp_gpuact_text(&a, text, sizeof text);
	assert_non_null(strstr(text, "KFD compute queues not counted"));
	gp_gpuact_free(r);
	gp_root_close(&root);
}

/* A HIP process: only KFD; its card found by scanning /sys/class/drm. */
static void test_kfd_only(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;

	struct gp_gpuact *r = reader_on(&root, "kfd-only", 6161);
	assert_int_equal(gp_gpuact_read(r, 0, NULL, &a), 0);
	assert_false(a.have_drm_engine);
	assert_non_null(strstr(a.why_drm, "no DRM client"));
	assert_true(a.have_kfd);
	assert_int_equal(a.cu_occupancy, 40);
	assert_false(a.have_kfd_faults);
	assert_true(a.have_gpu_busy);
	assert_true(a.gpu_busy_all_cards);
	assert_true(a.gpu_busy_pct == 77);
	assert_true(gp_gpuact_known(&a));
	assert_true(gp_gpuact_busy(&a, 5));
	gp_gpuact_free(r);
	gp_root_close(&root);
}

static void test_none(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;
	char text[512];

	struct gp_gpuact *r = reader_on(&root, "none", 7171);
	assert_int_equal(gp_gpuact_read(r, 0, NULL, &a), 0);
	assert_false(a.have_nvml || a.have_drm_engine || a.have_kfd || a.have_gpu_busy);
	assert_non_null(strstr(a.why_kfd, "amdkfd not loaded"));
	assert_non_null(strstr(a.why_gpu_busy, "/sys/class/drm"));
	assert_false(gp_gpuact_known(&a));
	assert_false(gp_gpuact_busy(&a, 0));
	gp_gpuact_text(&a, text, sizeof text);
	assert_non_null(strstr(text, "unknown"));
	json_t *j = gp_gpuact_json(&a, true);
	assert_int_equal(json_object_size(json_object_get(j, "absent")), 4);
	assert_int_equal(json_object_size(j), 1);
	json_decref(j);
	gp_gpuact_free(r);
	gp_root_close(&root);
}

/* ---- NVML through the test double ------------------------------------ */

static char script[256], nvlog[256];

static void write_script(const char *text)
{
	FILE *f = fopen(script, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int nvml_setup(void **state UNUSED)
{
	if (access(FAKE_NVML, R_OK) != 0)
		return 0;
	snprintf(script, sizeof script, "/tmp/gpuact-nvml-%d.txt", (int)getpid());
	snprintf(nvlog, sizeof nvlog, "/tmp/gpuact-nvml-%d.log", (int)getpid());
	setenv("GPUPROBE_FAKE_NVML", script, 1);
	setenv("GPUPROBE_FAKE_NVML_LOG", nvlog, 1);
	unlink(nvlog);
	return 0;
}

static int nvml_teardown(void **state UNUSED)
{
	unlink(script);
	unlink(nvlog);
	return 0;
}

static void test_nvml_activity(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;
	char buf[256];
	int me = (int)getpid();

	if (access(FAKE_NVML, R_OK) != 0)
		skip();
	snprintf(buf, sizeof buf,
		 "gpus 2\nproc %d gpu=1 sm=100 mem=20 bytes=1048576\n"
		 "dev gpu=1 util=100 memutil=40 throttle=0x5\ndev gpu=0 util=3\n", me);
	write_script(buf);
	assert_int_equal(gp_root_open(&root, "/"), 0);

	/* The memory reader names the GPU the process holds. */
	struct gp_gpu_reader *m = reader_new(&root, me, 0, FAKE_NVML);
	struct gp_gpu_totals tot;
	json_t *g = NULL;
	assert_int_equal(gp_gpu_read(m, &g, &tot), 0);
	assert_true(tot.nvml_seen);
	assert_int_equal(tot.nvml_bytes, 1048576);

	struct gp_gpuact_opts o = { .root = &root, .pid = me, .nvml_lib = FAKE_NVML };
	struct gp_gpuact *r = gp_gpuact_new(&o);
	assert_int_equal(gp_gpuact_read(r, 0, g, &a), 0);
	json_decref(g);
	assert_true(a.have_nvml);
	assert_int_equal(a.nvml_samples, 1);
	assert_true(a.sm_pct == 100 && a.mem_pct == 20);
	assert_int_equal(a.nvml_gpu, 1);
	assert_true(a.have_dev_util);
	assert_false(a.dev_util_all_gpus);
	assert_true(a.dev_util_pct == 100);	/* its GPU, not GPU 0's 3 % */
	assert_true(a.have_throttle);
	assert_true(gp_gpuact_busy(&a, 50));
	json_t *j = gp_gpuact_json(&a, false);
	assert_true(jreal(j, "nvml", "sm_pct") == 100);
	assert_true(jreal(j, "nvml", "gpu") == 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "nvml"), "throttle")),
			    "idle,sw-power-cap");
	assert_null(json_object_get(j, "absent"));
	json_decref(j);

	/* The kernel ends: NVML returns no sample of the pid, which is 0 %
	 * over the period, not unknown. */
	snprintf(buf, sizeof buf,
		 "gpus 2\nproc %d gpu=1 bytes=1048576\ndev gpu=1 util=0\n", me);
	write_script(buf);
	usleep(2000);
	/* One tick later the reading of the last call stands: process
	 * utilisation is asked once in GP_NVML_PUTIL_PERIOD_S (nvml.h, the
	 * budget), and its samples cover the time since the call before. */
	assert_int_equal(gp_gpuact_read(r, 1, NULL, &a), 0);
	assert_true(a.have_nvml);
	assert_int_equal(a.nvml_samples, 1);
	assert_true(a.sm_pct == 100);
	assert_true(a.dev_util_pct == 0);	/* the device readings are this tick's */
	assert_int_equal(gp_gpuact_read(r, 3, NULL, &a), 0);	/* 2.5 s on: asked */
	assert_true(a.have_nvml);
	assert_int_equal(a.nvml_samples, 0);
	assert_true(a.sm_pct == 0);
	assert_int_equal(a.nvml_gpu, -1);
	assert_true(gp_gpuact_known(&a));
	assert_false(gp_gpuact_busy(&a, 1));
	gp_gpuact_text(&a, buf, sizeof buf);
	assert_non_null(strstr(buf, "idle on the GPU"));

	/* The last-seen timestamp passed on: GPU 1's second call asks from
	 * the first call's sample, not from 0. */
	FILE *f = fopen(nvlog, "r");
	unsigned gpu;
	unsigned long long since, s1[2] = { 0, 0 };
	int calls1 = 0;
	char line[128];
	assert_non_null(f);
	while (fgets(line, sizeof line, f))	/* "procs ..." lines between */
		if (sscanf(line, "procutil %u %llu", &gpu, &since) == 2 &&
		    gpu == 1 && calls1 < 2)
			s1[calls1++] = since;
	fclose(f);
	assert_int_equal(calls1, 2);
	assert_true(s1[0] > 0 && s1[1] > s1[0]);

	/* A driver that refuses the call: unknown, and said why. */
	snprintf(buf, sizeof buf, "gpus 1\nproc %d bytes=1\nfail procutil 3\n", me);
	write_script(buf);
	assert_int_equal(gp_gpuact_read(r, 6, NULL, &a), 0);
	assert_false(a.have_nvml);
	assert_non_null(strstr(a.why_nvml, "NVML_ERROR_NOT_SUPPORTED"));
	assert_true(a.absent_changed);
	gp_gpuact_free(r);
	reader_free(m);

	/* Through $GPUPROBE_NVML_LIB; and a library that is not there. */
	write_script("gpus 1\n");
	setenv("GPUPROBE_NVML_LIB", FAKE_NVML, 1);
	o.nvml_lib = NULL;
	r = gp_gpuact_new(&o);
	assert_int_equal(gp_gpuact_read(r, 0, NULL, &a), 0);
	assert_true(a.have_nvml);
	assert_true(a.nvml_no_context);		/* it holds no GPU: not asked */
	assert_int_equal(a.nvml_samples, 0);
	assert_true(a.dev_util_all_gpus);
	gp_gpuact_free(r);
	unsetenv("GPUPROBE_NVML_LIB");
	o.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
	r = gp_gpuact_new(&o);
	assert_int_equal(gp_gpuact_read(r, 0, NULL, &a), 0);
	assert_false(a.have_nvml);
	assert_non_null(strstr(a.why_nvml, "/nonexistent"));
	gp_gpuact_free(r);
	o.nvml_lib = FAKE_NVML;
	o.flags = GP_GPUACT_NO_NVML;
	r = gp_gpuact_new(&o);
	assert_int_equal(gp_gpuact_read(r, 0, NULL, &a), 0);
	assert_non_null(strstr(a.why_nvml, "--no-nvml"));
	gp_gpuact_free(r);
	/* nvmlInit failing */
	write_script("fail init 9\n");
	char why[200];
	assert_null(gp_nvml_open(FAKE_NVML, why, sizeof why));
	assert_non_null(strstr(why, "NVML_ERROR_DRIVER_NOT_LOADED"));
	gp_root_close(&root);
}

/* Issue 18 item 8: the double writes its process lists at 16, 24 and 32
 * bytes an entry (the layouts real drivers wrote through one name), 40
 * processes on GPU 0 with this one 34th and busy.  Each pid comes back
 * with its own size; this process reads busy, never "no context".  A
 * layout no driver wrote (40 bytes) leaves its memory unknown, said so,
 * and its activity is still asked of every GPU. */
static void test_nvml_strides(void **state UNUSED)
{
	static const unsigned strides[] = { 32, 16, 24 };
	struct gp_root root;
	struct gp_gpu_activity a;
	char text[4096], why[200];
	int me = (int)getpid();

	if (access(FAKE_NVML, R_OK) != 0)
		skip();
	assert_int_equal(gp_root_open(&root, "/"), 0);
	for (size_t k = 0; k < 3; k++) {
		size_t len = (size_t)snprintf(text, sizeof text, "gpus 1\nstride %u\n",
					      strides[k]);
		for (int i = 0; i < 40; i++) {
			int w = i == 33 ? snprintf(text + len, sizeof text - len,
						   "proc %d sm=100 mem=20 bytes=%d\n", me, (i + 1) << 20)
					: snprintf(text + len, sizeof text - len,
						   "proc %d bytes=%d\n", 200000 + i, (i + 1) << 20);
			assert_true(w > 0 && (size_t)w < sizeof text - len);
			len += (size_t)w;
		}
		write_script(text);
		unlink(nvlog);

		struct gp_nvml *nv = gp_nvml_open(FAKE_NVML, why, sizeof why);
		assert_non_null(nv);
		for (int i = 0; i < 40; i++) {
			json_t *arr = json_array();
			uint64_t bytes = 0;
			assert_true(gp_nvml_proc_memory(nv, i == 33 ? me : 200000 + i, arr, &bytes));
			if (json_array_size(arr) != 1 || bytes != (uint64_t)(i + 1) << 20)
				fail_msg("stride %u: entry %d: %zu rows, %llu bytes", strides[k],
					 i, json_array_size(arr), (unsigned long long)bytes);
			json_decref(arr);
		}
		gp_nvml_close(nv);
		/* _v2 asked, _v3 never (nvml.c prefers the stable layout) */
		FILE *f = fopen(nvlog, "r");
		char line[128];
		int v2 = 0, v3 = 0;
		assert_non_null(f);
		while (fgets(line, sizeof line, f)) {
			v2 += strncmp(line, "procs compute_v2 ", 17) == 0;
			v3 += strncmp(line, "procs compute_v3 ", 17) == 0;
		}
		fclose(f);
		assert_true(v2 > 0);
		assert_int_equal(v3, 0);

		/* The activity reader: busy on GPU 0, not "no context". */
		struct gp_gpu_reader *m = reader_new(&root, me, 0, FAKE_NVML);
		struct gp_gpu_totals tot;
		json_t *g = NULL;
		assert_int_equal(gp_gpu_read(m, &g, &tot), 0);
		assert_true(tot.nvml_seen);
		assert_int_equal(tot.nvml_bytes, 34 << 20);
		struct gp_gpuact_opts o = { .root = &root, .pid = me, .nvml_lib = FAKE_NVML };
		struct gp_gpuact *r = gp_gpuact_new(&o);
		assert_int_equal(gp_gpuact_read(r, 0, g, &a), 0);
		json_decref(g);
		assert_true(a.have_nvml);
		assert_false(a.nvml_no_context);
		assert_int_equal(a.nvml_samples, 1);
		assert_true(a.sm_pct == 100);
		gp_gpuact_free(r);
		reader_free(m);
	}

	/* 40 bytes an entry, a layout not yet seen: unknown, not absent
	 * (and, under ASan, nothing written past the buffer). */
	size_t len = (size_t)snprintf(text, sizeof text, "gpus 1\nstride 40\n");
	for (int i = 0; i < 40; i++) {
		int w = snprintf(text + len, sizeof text - len, i == 1 ?
				 "proc %d sm=100 bytes=1048576\n" : "proc %d bytes=1\n",
				 i == 1 ? me : 200000 + i);
		assert_true(w > 0 && (size_t)w < sizeof text - len);
		len += (size_t)w;
	}
	write_script(text);
	struct gp_gpu_reader *m = reader_new(&root, me, 0, FAKE_NVML);
	struct gp_gpu_totals tot;
	json_t *g = NULL;
	assert_int_equal(gp_gpu_read(m, &g, &tot), 0);
	assert_false(tot.nvml_seen);
	assert_null(json_object_get(g, "nvml"));
	const char *un = json_string_value(json_object_get(g, "nvml_unknown"));
	assert_non_null(un);
	assert_non_null(strstr(un, "GPU 0 compute list (nvmlDeviceGetComputeRunningProcesses_v2)"));
	assert_non_null(strstr(un, "40 entries in 1600 bytes written: no layout"));
	struct gp_gpuact_opts o = { .root = &root, .pid = me, .nvml_lib = FAKE_NVML };
	struct gp_gpuact *r = gp_gpuact_new(&o);
	assert_int_equal(gp_gpuact_read(r, 0, g, &a), 0);
	json_decref(g);
	assert_true(a.have_nvml);
	assert_false(a.nvml_no_context);	/* was: 0 %, "known" */
	assert_true(a.sm_pct == 100);
	gp_gpuact_free(r);
	reader_free(m);
	gp_root_close(&root);
}

/* The verdict's reading of saved activity: hostile and partial objects. */
static void test_json_busy(void **state UNUSED)
{
	static const struct { const char *j; bool busy, known; } cases[] = {
		{ "{}", false, false },
		{ "null", false, false },
		{ "{\"nvml\":{\"sm_pct\":100}}", true, true },
		{ "{\"nvml\":{\"sm_pct\":0,\"mem_pct\":0}}", false, true },
		{ "{\"nvml\":{\"sm_pct\":\"100\"}}", false, false },
		{ "{\"drm\":{\"engine_busy_pct\":0,\"kfd_blind\":true}}", false, false },
		{ "{\"drm\":{\"engine_busy_pct\":0,\"kfd_blind\":false}}", false, true },
		{ "{\"drm\":{\"engine_busy_pct\":50}}", true, true },
		{ "{\"kfd\":{\"cu_occupancy\":0}}", false, true },
		{ "{\"kfd\":{\"cu_occupancy\":8}}", true, true },
		{ "{\"kfd\":{\"sdma_busy_pct\":40}}", true, false },
		{ "[1,2]", false, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		json_t *j = json_loads(cases[i].j, JSON_DECODE_ANY, NULL);
		bool known = true;
		assert_int_equal(gp_gpuact_json_busy(j, 5, &known), cases[i].busy);
		assert_int_equal(known, cases[i].known);
		json_decref(j);
	}
}

static void test_throttle_text(void **state UNUSED)
{
	char b[8];
	TEXT_IS(gp_nvml_throttle_text, 0, "");
	TEXT_IS(gp_nvml_throttle_text, 0x48, "hw-slowdown,hw-thermal");
	TEXT_IS(gp_nvml_throttle_text, 0x1001, "idle,0x1000");
	gp_nvml_throttle_text(0x1ff, b, sizeof b);	/* bounded */
	assert_true(strlen(b) < 8);
}

/* ---- amdgpu gpu_metrics (issue 19) ------------------------------------ */

/* A gpu_metrics blob of revision fmt.content: structure_size size (the
 * kernel's sizeof: v1_0 80, v1_3 120 on x86-64), len bytes, the three
 * u16 at the offsets of kgd_pp_interface.h (gpuact.c's table), the
 * rest 0. */
static size_t metrics_blob(unsigned char *b, unsigned fmt, unsigned content, unsigned size,
			   size_t len, unsigned gfx, unsigned umc, unsigned power)
{
	size_t off = fmt == 1 && content == 0 ? 28 : 16;
	memset(b, 0, len);
	b[0] = (unsigned char)(size & 0xff);
	b[1] = (unsigned char)(size >> 8);
	b[2] = (unsigned char)fmt;
	b[3] = (unsigned char)content;
	unsigned v[4] = { gfx, umc, 0, power };
	for (int i = 0; i < 4; i++) {
		b[off + 2 * i] = (unsigned char)(v[i] & 0xff);
		b[off + 2 * i + 1] = (unsigned char)(v[i] >> 8);
	}
	return len;
}

static void test_metrics_parse(void **state UNUSED)
{
	unsigned char b[160];
	struct gp_amd_metrics m;
	char w[GP_GPUACT_WHY];

	size_t n = metrics_blob(b, 1, 3, 120, 120, 100, 0, 45);
	assert_true(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_true(m.have_gfx && m.have_umc && m.have_power);
	assert_int_equal(m.gfx_pct, 100);
	assert_int_equal(m.umc_pct, 0);
	assert_int_equal(m.power_w, 45);
	/* v1_0: the fields after the padded u64 timestamp */
	n = metrics_blob(b, 1, 0, 80, 80, 7, 40, 300);
	assert_true(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_int_equal(m.gfx_pct, 7);
	assert_int_equal(m.umc_pct, 40);
	assert_int_equal(m.power_w, 300);
	/* 0xFFFF: not available */
	n = metrics_blob(b, 1, 1, 96, 96, 0xffff, 12, 0xffff);
	assert_true(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_false(m.have_gfx);
	assert_true(m.have_umc);
	assert_false(m.have_power);
	n = metrics_blob(b, 1, 2, 104, 104, 0xffff, 0xffff, 0xffff);
	assert_false(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_non_null(strstr(w, "0xFFFF"));
	/* structure_size past the bytes read, or short of the fields */
	n = metrics_blob(b, 1, 3, 120, 60, 100, 0, 45);
	assert_false(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_non_null(strstr(w, "structure_size 120"));
	n = metrics_blob(b, 1, 3, 20, 120, 100, 0, 45);
	assert_false(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	n = metrics_blob(b, 1, 0, 32, 80, 100, 0, 45);
	assert_false(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	/* unknown layouts */
	n = metrics_blob(b, 1, 5, 120, 120, 100, 0, 45);
	assert_false(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_non_null(strstr(w, "v1.5"));
	n = metrics_blob(b, 2, 1, 120, 120, 100, 0, 45);
	assert_false(gp_amd_metrics_parse(b, n, &m, w, sizeof w));
	assert_non_null(strstr(w, "v2.1"));
	assert_false(gp_amd_metrics_parse(b, 3, &m, w, sizeof w));
}

/* A recorded sysfs tree of one HIP process (pid 8181, KFD gpu 1234) and
 * card0, written here: the tree the reader replays. */
static char amd_root[64];

static void put(const char *rel, const void *data, size_t n)
{
	char path[512], *p;
	snprintf(path, sizeof path, "%s/%s", amd_root, rel);
	for (p = path + strlen(amd_root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static void put_text(const char *rel, const char *text)
{
	put(rel, text, strlen(text));
}

/* One moment of the tree: KFD waves, gpu_busy_percent, gpu_metrics v1.3
 * (or the revision fmt.content). */
static void amd_state(unsigned cu, unsigned busy, unsigned fmt, unsigned content,
		      unsigned gfx, unsigned umc, unsigned power)
{
	char t[32];
	unsigned char b[120];
	snprintf(t, sizeof t, "%u\n", cu);
	put_text("sys/class/kfd/kfd/proc/8181/stats_1234/cu_occupancy", t);
	put_text("sys/class/kfd/kfd/proc/8181/stats_1234/evicted_ms", "0\n");
	snprintf(t, sizeof t, "%u\n", busy);
	put_text("sys/class/drm/card0/device/gpu_busy_percent", t);
	put("sys/class/drm/card0/device/gpu_metrics", b,
	    metrics_blob(b, fmt, content, 120, 120, gfx, umc, power));
}

static int amd_setup(void **state UNUSED)
{
	snprintf(amd_root, sizeof amd_root, "/tmp/gp-amdmetrics-XXXXXX");
	return mkdtemp(amd_root) ? 0 : -1;
}

static int amd_teardown(void **state UNUSED)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", amd_root);
	return system(cmd) == 0 ? 0 : -1;
}

/* Reads the tree at t; the judgement of the sample's JSON, as live and
 * `report` take it (gp_gpuact_json_work). */
static json_t *amd_read(struct gp_gpuact *r, double t, struct gp_gpu_activity *a,
			struct gp_gpu_work_pt *pt)
{
	json_t *mem = json_object();
	assert_int_equal(gp_gpuact_read(r, t, mem, a), 0);
	json_decref(mem);
	json_t *j = gp_gpuact_json(a, a->absent_changed);
	gp_gpuact_json_work(j, pt);
	return j;
}

static struct gp_gpuact *amd_reader(struct gp_root *root)
{
	assert_int_equal(gp_root_open(root, amd_root), 0);
	struct gp_gpuact_opts o = { .root = root, .pid = 8181, .flags = GP_GPUACT_NO_NVML };
	struct gp_gpuact *r = gp_gpuact_new(&o);
	assert_non_null(r);
	return r;
}

/* A kernel spinning on a flag: gfx activity 100, memory controller 0,
 * socket power 5 W over the floor read while no wave of it was
 * resident.  Time-based activity says busy; the judgement says spin. */
static void test_amd_metrics_spin(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;
	struct gp_gpu_work_pt pt;

	struct gp_gpuact *r = amd_reader(&root);
	amd_state(0, 0, 1, 3, 0, 0, 40);	/* held, idle: the floor */
	json_t *j = amd_read(r, 1, &a, &pt);
	assert_true(a.have_socket_power && a.have_amd_floor);
	assert_true(a.amd_floor_w == 40);
	assert_int_equal(pt.work, GP_GW_IDLE);
	json_decref(j);
	amd_state(0, 3, 1, 3, 3, 0, 38);	/* the card busy elsewhere: no floor */
	json_decref(amd_read(r, 2, &a, &pt));
	assert_true(a.amd_floor_w == 40);
	amd_state(96, 100, 1, 3, 100, 0, 45);
	j = amd_read(r, 3, &a, &pt);
	json_t *d = json_object_get(j, "device");
	assert_true(json_real_value(json_object_get(d, "gfx_activity_pct")) == 100);
	assert_true(json_real_value(json_object_get(d, "umc_activity_pct")) == 0);
	assert_true(json_real_value(json_object_get(d, "socket_power_w")) == 45);
	assert_true(json_real_value(json_object_get(d, "floor_w")) == 40);
	assert_int_equal(pt.work, GP_GW_SPIN);
	assert_false(pt.from_gpm);	/* medium confidence */
	assert_true(pt.have_over);
	assert_true(fabs(pt.over_w - 5) < 1e-6);
	char text[512];
	gp_gpuact_text(&a, text, sizeof text);
	assert_non_null(strstr(text, "memory controller 0%, 45 W (floor 40 W)"));
	json_decref(j);
	gp_gpuact_free(r);
	gp_root_close(&root);
}

/* A kernel moving memory: the memory controller at 40 % is work, power
 * close to the floor or not. */
static void test_amd_metrics_work(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;
	struct gp_gpu_work_pt pt;

	struct gp_gpuact *r = amd_reader(&root);
	amd_state(0, 0, 1, 3, 0, 0, 40);
	json_decref(amd_read(r, 1, &a, &pt));
	amd_state(96, 100, 1, 3, 100, 40, 45);
	json_t *j = amd_read(r, 2, &a, &pt);
	assert_int_equal(pt.work, GP_GW_WORK);
	assert_true(pt.mem_util == 40);
	assert_true(pt.power_w == 45);
	json_decref(j);
	gp_gpuact_free(r);
	gp_root_close(&root);
}

/* gpu_metrics v1.5: not read, said once in "absent"; the judgement has
 * occupancy alone. */
static void test_amd_metrics_unknown(void **state UNUSED)
{
	struct gp_root root;
	struct gp_gpu_activity a;
	struct gp_gpu_work_pt pt;

	struct gp_gpuact *r = amd_reader(&root);
	amd_state(96, 100, 1, 5, 100, 0, 45);
	json_t *j = amd_read(r, 1, &a, &pt);
	assert_true(a.have_gpu_busy);
	assert_false(a.have_umc_activity || a.have_socket_power || a.have_gfx_activity);
	const char *w = json_string_value(json_object_get(json_object_get(j, "absent"), "gpu_metrics"));
	assert_non_null(w);
	assert_non_null(strstr(w, "v1.5"));
	assert_null(json_object_get(json_object_get(j, "device"), "umc_activity_pct"));
	assert_int_equal(pt.work, GP_GW_BUSY);
	json_decref(j);
	j = amd_read(r, 2, &a, &pt);	/* the same absence: not said again */
	assert_false(a.absent_changed);
	assert_null(json_object_get(j, "absent"));
	json_decref(j);
	gp_gpuact_free(r);
	gp_root_close(&root);
}

UNIT_MAIN(
	cmocka_unit_test(test_amd_two_samples),
	cmocka_unit_test(test_kfd_only),
	cmocka_unit_test(test_none),
	cmocka_unit_test_setup_teardown(test_nvml_activity, nvml_setup, nvml_teardown),
	cmocka_unit_test_setup_teardown(test_nvml_strides, nvml_setup, nvml_teardown),
	cmocka_unit_test(test_json_busy),
	cmocka_unit_test(test_throttle_text),
	cmocka_unit_test(test_metrics_parse),
	cmocka_unit_test_setup_teardown(test_amd_metrics_spin, amd_setup, amd_teardown),
	cmocka_unit_test_setup_teardown(test_amd_metrics_work, amd_setup, amd_teardown),
	cmocka_unit_test_setup_teardown(test_amd_metrics_unknown, amd_setup, amd_teardown))
