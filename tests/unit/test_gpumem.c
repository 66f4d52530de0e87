/* Unit tests of src/gpu/gpumem.c: the fdinfo parser on the kernel's
 * documented outputs and on hostile text, the reader on a replay root
 * (tests/fixtures/gpumem/root1), and NVML absent and faked.
 *
 * The fake NVML lives in this file; it is found through dlopen(NULL), so
 * the binary must be linked with -rdynamic (else that test skips). */
#include "config.h"
#include "unit.h"
#include "gpumem.h"
#include "house.h"
#include "nvml.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu_reader.h"

#ifndef GP_FIXTURE_DIR
#define GP_FIXTURE_DIR "tests/fixtures/gpumem"
#endif

#define KiB 1024ll
#define MiB (1024ll * 1024)

static const char *fixture(const char *name)
{
	static char path[4096];
	const char *srcdir = getenv("srcdir");	/* set by Automake's harness */

	if (srcdir)
		snprintf(path, sizeof path, "%s/tests/fixtures/gpumem/%s",
			 srcdir, name);
	else
		snprintf(path, sizeof path, "%s/%s", GP_FIXTURE_DIR, name);
	return path;
}

static char *slurp_fixture(const char *name)
{
	FILE *f = fopen(fixture(name), "r");
	assert_non_null(f);
	char *buf = calloc(1, 65536);
	assert_non_null(buf);
	size_t n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static json_t *parse_fixture(const char *name)
{
	char *text = slurp_fixture(name);
	json_t *c = gp_fdinfo_parse(text);
	free(text);
	return c;
}

/* Integer at a path of object keys; -1 when absent or not an integer. */
static long long jint(const json_t *o, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, o);
	while ((k = va_arg(ap, const char *)))
		o = json_object_get(o, k);
	va_end(ap);
	return json_is_integer(o) ? (long long)json_integer_value(o) : -1;
}

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static struct gp_gpu_totals totals_of(const json_t *c)
{
	struct gp_gpu_totals t;
	memset(&t, 0, sizeof t);
	gp_fdinfo_add_totals(c, &t);
	return t;
}

/* The totals of fdinfo c are want's: VRAM, GTT, DRM total and resident,
 * engine time. */
static void totals_are(const json_t *c, struct gp_gpu_totals want)
{
	struct gp_gpu_totals t = totals_of(c);
	assert_int_equal(t.vram_bytes, want.vram_bytes);
	assert_int_equal(t.gtt_bytes, want.gtt_bytes);
	assert_int_equal(t.drm_total_bytes, want.drm_total_bytes);
	assert_int_equal(t.drm_resident_bytes, want.drm_resident_bytes);
	assert_int_equal(t.engine_ns, want.engine_ns);
}

/* ---- the kernel's documented outputs ---- */

static void test_i915(void **state UNUSED)
{
	json_t *c = parse_fixture("i915.fdinfo");
	assert_non_null(c);
	assert_string_equal(jstr(c, "driver"), "i915");
	assert_string_equal(jstr(c, "pdev"), "0000:00:02.0");
	assert_int_equal(jint(c, "client_id", NULL), 39);
	assert_int_equal(jint(c, "memory", "system0", "total", NULL), 6044 * KiB);
	assert_int_equal(jint(c, "memory", "system0", "purgeable", NULL), 1688 * KiB);
	assert_int_equal(jint(c, "memory", "stolen-system0", "resident", NULL), 0);
	assert_int_equal(jint(c, "engine_ns", "render", NULL), 346249);
	assert_int_equal(jint(c, "engine_ns", "video-enhance", NULL), 0);
	assert_int_equal(jint(c, "engine_capacity", "video", NULL), 2);
	/* capacity is not an engine named "capacity-video" */
	assert_int_equal(jint(c, "engine_ns", "capacity-video", NULL), -1);
	/* fdinfo's own keys are not kept */
	assert_null(json_object_get(c, "other"));
	struct gp_gpu_totals t = totals_of(c);
	assert_int_equal(t.drm_total_bytes, 6044 * KiB);
	assert_int_equal(t.drm_resident_bytes, 6044 * KiB);
	assert_int_equal(t.vram_bytes, 0);
	assert_int_equal(t.engine_ns, 346249);
	json_decref(c);
}

static void test_xe(void **state UNUSED)
{
	json_t *c = parse_fixture("xe.fdinfo");
	assert_non_null(c);
	assert_string_equal(jstr(c, "driver"), "xe");
	assert_int_equal(jint(c, "memory", "vram0", "shared", NULL), 16 * MiB);
	assert_int_equal(jint(c, "cycles", "rcs", NULL), 28257900);
	/* drm-total-cycles-rcs is not a memory region "cycles-rcs" */
	assert_int_equal(jint(c, "total_cycles", "rcs", NULL), 7655183225ll);
	assert_null(json_object_get(json_object_get(c, "memory"), "cycles-rcs"));
	assert_int_equal(jint(c, "engine_capacity", "ccs", NULL), 4);
	struct gp_gpu_totals t = totals_of(c);
	assert_int_equal(t.vram_bytes, 23992 * KiB);	/* vram0 is VRAM */
	assert_int_equal(t.gtt_bytes, 192 * KiB);
	assert_int_equal(t.drm_total_bytes, (23992 + 192) * KiB);
	assert_int_equal(t.engine_ns, 0);
	json_decref(c);
}

static void test_panfrost(void **state UNUSED)
{
	json_t *c = parse_fixture("panfrost.fdinfo");
	assert_non_null(c);
	assert_null(json_object_get(c, "pdev"));
	assert_int_equal(jint(c, "maxfreq_hz", "fragment", NULL), 799999987);
	assert_int_equal(jint(c, "maxfreq_hz", "vertex-tiler", NULL), 800000000);
	assert_int_equal(jint(c, "other", "drm-curfreq-fragment", NULL), 799999987);
	assert_int_equal(jint(c, "memory", "memory", "total", NULL), 290 * MiB);
	assert_int_equal(jint(c, "memory", "memory", "active", NULL), 226 * MiB);
	assert_int_equal(jint(c, "memory", "memory", "purgeable", NULL), 128 * KiB);
	struct gp_gpu_totals t = totals_of(c);
	assert_int_equal(t.drm_total_bytes, 290 * MiB);
	assert_int_equal(t.drm_resident_bytes, 36496 * KiB);
	assert_int_equal(t.engine_ns, 1846584880ll + 71932239ll);
	json_decref(c);
}

/* amdgpu >= 6.11: new keys and the legacy aliases side by side must not
 * count the same memory twice. */
static void test_amdgpu_new_and_legacy(void **state UNUSED)
{
	json_t *c = parse_fixture("amdgpu.fdinfo");
	assert_non_null(c);
	assert_int_equal(jint(c, "client_id", NULL), 7);
	assert_int_equal(jint(c, "memory", "vram", "total", NULL), 1536 * MiB);
	assert_int_equal(jint(c, "legacy", "drm-memory-gtt", NULL), 2048 * KiB);
	assert_int_equal(jint(c, "other", "amd-memory-visible-vram", NULL), 262144 * KiB);
	assert_int_equal(jint(c, "other", "pasid", NULL), 32770);
	totals_are(c, (struct gp_gpu_totals){ .vram_bytes = 1536 * MiB, .gtt_bytes = 2 * MiB,
		.drm_total_bytes = 1538 * MiB, .drm_resident_bytes = 1026 * MiB,
		.engine_ns = 251000000 });
	json_decref(c);
}

/* amdgpu 6.2-6.10: "drm-memory-gtt: \t4096 KiB", space then tab. */
static void test_amdgpu_legacy_tab(void **state UNUSED)
{
	json_t *c = parse_fixture("amdgpu-legacy.fdinfo");
	assert_non_null(c);
	assert_int_equal(jint(c, "legacy", "drm-memory-gtt", NULL), 4096 * KiB);
	assert_int_equal(jint(c, "legacy", "drm-memory-cpu", NULL), 0);
	assert_null(json_object_get(c, "memory"));
	totals_are(c, (struct gp_gpu_totals){ .vram_bytes = 512 * MiB, .gtt_bytes = 4 * MiB,
		.drm_total_bytes = 516 * MiB, .drm_resident_bytes = 516 * MiB, .engine_ns = 12000 });
	json_decref(c);

	c = gp_fdinfo_parse("drm-driver:\tamdgpu\ndrm-memory-gtt:\t \t 1234 KiB\n");
	assert_int_equal(jint(c, "legacy", "drm-memory-gtt", NULL), 1234 * KiB);
	json_decref(c);
}

static void test_units(void **state UNUSED)
{
	json_t *c = gp_fdinfo_parse(
		"drm-driver: x\n"
		"drm-total-a: 17\n"
		"drm-total-b: 5 KiB\n"
		"drm-total-c: 3 MiB\n"
		"drm-total-d: 2 GiB\n"
		"drm-total-e: 7 kB\n"
		"drm-total-f: 9 B\n"
		"drm-total-g: 9 KHz\n"		/* not a size */
		"drm-engine-h: 12 KiB\n"	/* not a time */
		"drm-maxfreq-i: 3 KHz\n"
		"drm-maxfreq-j: 2 GHz\n"
		"drm-engine-k: 44\n");		/* bare: the default unit */
	assert_non_null(c);
	assert_int_equal(jint(c, "memory", "a", "total", NULL), 17);
	assert_int_equal(jint(c, "memory", "b", "total", NULL), 5 * KiB);
	assert_int_equal(jint(c, "memory", "c", "total", NULL), 3 * MiB);
	assert_int_equal(jint(c, "memory", "d", "total", NULL), 2048 * MiB);
	assert_int_equal(jint(c, "memory", "e", "total", NULL), 7 * KiB);
	assert_int_equal(jint(c, "memory", "f", "total", NULL), 9);
	assert_int_equal(jint(c, "memory", "g", "total", NULL), -1);
	assert_int_equal(jint(c, "engine_ns", "h", NULL), -1);
	assert_int_equal(jint(c, "maxfreq_hz", "i", NULL), 3000);
	assert_int_equal(jint(c, "maxfreq_hz", "j", NULL), 2000000000);
	assert_int_equal(jint(c, "engine_ns", "k", NULL), 44);
	json_decref(c);
}

static void test_client_name(void **state UNUSED)
{
	json_t *c = gp_fdinfo_parse("drm-driver: amdgpu\n"
				    "drm-client-name: vllm-worker\n");
	assert_string_equal(jstr(c, "name"), "vllm-worker");
	json_decref(c);
}

static void test_not_drm(void **state UNUSED)
{
	json_t *c = parse_fixture("eventfd.fdinfo");
	assert_null(c);
	assert_null(gp_fdinfo_parse(""));
	assert_null(gp_fdinfo_parse(NULL));
	assert_null(gp_fdinfo_parse("pos:\t0\nflags:\t02\n"));
	/* dma-buf fdinfo: a GPU buffer, but no client */
	assert_null(gp_fdinfo_parse("pos:\t0\nsize:\t4096\nexp_name:\tamdgpu\n"));
}

/* ---- hostile text ---- */

static void test_hostile(void **state UNUSED)
{
	assert_null(gp_fdinfo_parse("drm-driver"));
	assert_null(gp_fdinfo_parse("drm-driver:"));
	assert_null(gp_fdinfo_parse("drm-driver:   \n"));
	assert_null(gp_fdinfo_parse("drm-driver amdgpu\n"));	/* no colon */
	assert_null(gp_fdinfo_parse("drm-driver: two words\n"));
	assert_null(gp_fdinfo_parse("\n\n\n:\n::\n: x\n"));

	json_t *c = gp_fdinfo_parse(
		"drm-driver: i915\n"
		"drm-client-id: abc\n"
		"drm-pdev:\n"
		"drm-total-vram: lots\n"
		"drm-total-gtt: -5\n"
		"drm-total-: 5\n"
		"drm-engine-gfx: 12 parsecs\n"
		"drm-engine-copy: 12 ns trailing junk\n"
		"drm-resident-vram: 99999999999999999999999 KiB\n"
		"drm-shared-vram: 18014398509481984 KiB\n"	/* 2^64 B */
		"drm-active-vram: 9223372036854775808\n"	/* INT64_MAX+1 */
		"drm-purgeable-vram: 9223372036854775807\n"	/* INT64_MAX */
		"drm-engine-capacity-x: 3 ns\n"
		"drm-total-system: 1 KiB\n"
		"drm-total-system: 2 KiB\n"			/* last wins */
		"drm-total-sys\rtem: 4\r\n"
		"amd-foo: bar\n"
		"drm-total-last: 1 MiB");			/* no newline */
	assert_non_null(c);
	assert_null(json_object_get(c, "client_id"));
	assert_null(json_object_get(c, "pdev"));
	assert_int_equal(jint(c, "memory", "vram", "total", NULL), -1);
	assert_int_equal(jint(c, "memory", "vram", "resident", NULL), -1);
	assert_int_equal(jint(c, "memory", "vram", "shared", NULL), -1);
	assert_int_equal(jint(c, "memory", "vram", "active", NULL), -1);
	assert_int_equal(jint(c, "memory", "vram", "purgeable", NULL), INT64_MAX);
	assert_null(json_object_get(json_object_get(c, "memory"), "gtt"));
	assert_null(json_object_get(json_object_get(c, "memory"), ""));
	assert_null(json_object_get(c, "engine_ns"));
	assert_null(json_object_get(c, "engine_capacity"));
	assert_null(json_object_get(c, "other"));
	assert_int_equal(jint(c, "memory", "system", "total", NULL), 2 * KiB);
	assert_int_equal(jint(c, "memory", "last", "total", NULL), 1 * MiB);
	struct gp_gpu_totals t = totals_of(c);
	/* vram: no total, no resident -> 0; system 2 KiB; last 1 MiB */
	assert_int_equal(t.drm_total_bytes, 2 * KiB + MiB);
	json_decref(c);

	/* A key longer than any buffer, and binary junk */
	char big[8192];
	memset(big, 'k', sizeof big);
	memcpy(big, "drm-total-", 10);
	memcpy(big + 4000, ": 5\ndrm-driver: x\n", 19);
	c = gp_fdinfo_parse(big);
	assert_non_null(c);
	assert_null(json_object_get(c, "memory"));
	json_decref(c);
	static const char junk[] = "drm-driver:\x01\xff\x80\ndrm-total-\xff: 1\n";
	assert_null(gp_fdinfo_parse(junk));	/* a driver name of junk */
	c = gp_fdinfo_parse("drm-driver: x\ndrm-client-name: \x01\xff\n");
	assert_non_null(c);
	assert_null(json_object_get(c, "name"));
	json_decref(c);
}

static void test_totals_saturate(void **state UNUSED)
{
	json_t *c = gp_fdinfo_parse("drm-driver: x\n"
				    "drm-total-vram: 9223372036854775807\n"
				    "drm-engine-e: 9223372036854775807 ns\n");
	struct gp_gpu_totals t;
	memset(&t, 0, sizeof t);
	for (int i = 0; i < 3; i++)
		gp_fdinfo_add_totals(c, &t);
	assert_true(t.drm_total_bytes == UINT64_MAX);
	assert_true(t.vram_bytes == UINT64_MAX);
	assert_true(t.engine_ns == UINT64_MAX);
	json_decref(c);
}

/* ---- the reader on a replay root ---- */

static json_t *client_with_id(const json_t *drm, long long id)
{
	size_t i;
	json_t *c;

	json_array_foreach(drm, i, c)
		if (jint(c, "client_id", NULL) == id)
			return c;
	return NULL;
}

static void check_root1(json_t *gpu, const struct gp_gpu_totals *t)
{
	assert_true(t->drm_seen);
	assert_true(t->kfd_seen);
	assert_false(t->nvml_seen);	/* replay root: never NVML */
	assert_int_equal(t->drm_clients, 2);
	/* fd 3 and fd 4 are one client (7): its memory counts once */
	assert_int_equal(t->drm_total_bytes, (1538 + 516) * MiB);
	assert_int_equal(t->drm_resident_bytes, (1026 + 516) * MiB);
	assert_int_equal(t->gtt_bytes, 6 * MiB);
	assert_int_equal(t->vram_bytes, 2048 * MiB);
	assert_int_equal(t->engine_ns, 251000000 + 12000);
	assert_int_equal(t->kfd_vram_bytes, 1073741824);
	assert_int_equal(t->nvml_bytes, 0);

	json_t *drm = json_object_get(gpu, "drm");
	assert_int_equal(json_array_size(drm), 2);
	json_t *c7 = client_with_id(drm, 7), *c9 = client_with_id(drm, 9);
	assert_non_null(c7);
	assert_non_null(c9);
	json_t *fds = json_object_get(c7, "fds");
	assert_int_equal(json_array_size(fds), 2);
	assert_int_equal(json_integer_value(json_array_get(fds, 0)), 3);
	assert_int_equal(json_integer_value(json_array_get(fds, 1)), 4);
	fds = json_object_get(c9, "fds");
	assert_int_equal(json_array_size(fds), 1);
	assert_int_equal(json_integer_value(json_array_get(fds, 0)), 5);

	json_t *kfd = json_object_get(gpu, "kfd");
	assert_int_equal(jint(kfd, "vram", "12345", NULL), 1073741824);
	assert_int_equal(jint(kfd, "sdma_us", "12345", NULL), 1234);
	assert_int_equal(jint(kfd, "pasid", NULL), 32770);
	assert_null(json_object_get(gpu, "nvml"));
}

static void test_reader_replay(void **state UNUSED)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, fixture("root1")), 0);
	assert_false(root.live);
	/* A reader with a house of its own (a one-off read: bundle). */
	struct gp_gpu_reader *r = gp_gpu_reader_new(&root, 4242, 0);
	assert_non_null(r);

	/* Twice: the second sample goes through the kept fd table. */
	for (int i = 0; i < 2; i++) {
		json_t *gpu = NULL;
		struct gp_gpu_totals t;
		assert_int_equal(gp_gpu_read(r, &gpu, &t), 0);
		assert_non_null(gpu);
		check_root1(gpu, &t);
		json_decref(gpu);
	}
	gp_gpu_reader_free(r);
	gp_root_close(&root);
}

/* A pid with nothing: every source absent, still a sample. */
static void test_reader_missing_pid(void **state UNUSED)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, fixture("root1")), 0);
	struct gp_gpu_reader *r = reader_new(&root, 999999, 0, NULL);
	json_t *gpu = NULL;
	struct gp_gpu_totals t;
	assert_int_equal(gp_gpu_read(r, &gpu, &t), 0);
	assert_false(t.drm_seen || t.kfd_seen || t.nvml_seen);
	assert_int_equal(t.drm_clients, 0);
	assert_int_equal(json_array_size(json_object_get(gpu, "drm")), 0);
	assert_null(json_object_get(gpu, "kfd"));
	assert_null(json_object_get(gpu, "nvml"));
	json_decref(gpu);
	reader_free(r);
	gp_root_close(&root);
}

/* ---- NVML ---- */

/* Live root, this very process: no DRM fds, and (on a machine without
 * the NVIDIA driver) no libnvidia-ml.so.1. */
static void test_nvml_absent(void **state UNUSED)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, "/"), 0);
	struct gp_gpu_reader *r = reader_new(&root, getpid(), 0,
		"libnvidia-ml-does-not-exist.so.1");
	for (int i = 0; i < 3; i++) {
		json_t *gpu = NULL;
		struct gp_gpu_totals t;
		assert_int_equal(gp_gpu_read(r, &gpu, &t), 0);
		assert_false(t.nvml_seen);
		assert_false(t.drm_seen);
		assert_null(json_object_get(gpu, "nvml"));
		json_decref(gpu);
	}
	reader_free(r);
	gp_root_close(&root);
}

/* The fake NVML: GPU 0 lists us in the compute list and the graphics
 * list (one allocation), GPU 1 lists 40 processes (more than the
 * reader's first guess, so it must grow) with us at "not available".
 * It exports only the _v3 names, so the reader binds those.
 *
 * fake_stride, the test hook: bytes an entry as the driver writes them,
 * 24 (nvmlProcessInfo_v2_t, what _v3 wrote before R535 and writes on
 * the H200's 580 driver), 32 (R535's nvmlProcessInfo_v3_t), 16 (v1, as
 * 550.127.08 wrote: nvitop PR #226), or another, a layout not yet seen.
 * fake_nprocs: processes on GPU 1. */
struct fake_proc {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
};
static int fake_inits, fake_shutdowns, fake_short_answers;
static unsigned fake_stride = 24, fake_nprocs = 40;

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned int *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h);
int nvmlDeviceGetName(void *h, char *name, unsigned int len);
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *n,
					    void *p);
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned int *n,
					     void *p);

int nvmlInit_v2(void) { fake_inits++; return 0; }
int nvmlShutdown(void) { fake_shutdowns++; return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **h)
{
	*h = (void *)(uintptr_t)(i + 1);
	return 0;
}
int nvmlDeviceGetName(void *h, char *name, unsigned int len)
{
	snprintf(name, len, "Fake H200 #%u", (unsigned)(uintptr_t)h);
	return 0;
}

/* Each entry at fake_stride bytes: the fields where a driver puts them
 * (nvmlProcessInfo_v3_t's usedGpuCcProtectedMemory at 24 is 0), zeros
 * beyond.  memcpy of a run-time length: ASan checks each entry against
 * the caller's buffer. */
static int fake_fill(unsigned int *n, void *p, const struct fake_proc *src,
		     unsigned cnt)
{
	if (*n < cnt) {
		*n = cnt;
		fake_short_answers++;
		return 7;	/* NVML_ERROR_INSUFFICIENT_SIZE */
	}
	for (unsigned i = 0; i < cnt; i++) {
		unsigned char e[64] = { 0 };
		memcpy(e, &src[i].pid, 4);
		memcpy(e + 8, &src[i].usedGpuMemory, 8);
		if (fake_stride >= 24) {
			memcpy(e + 16, &src[i].gpuInstanceId, 4);
			memcpy(e + 20, &src[i].computeInstanceId, 4);
		}
		memcpy((unsigned char *)p + (size_t)i * fake_stride, e, fake_stride);
	}
	*n = cnt;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned int *n, void *p)
{
	struct fake_proc list[64];
	unsigned me = (unsigned)getpid();

	if ((uintptr_t)h == 1) {
		list[0] = (struct fake_proc){ 1, 5 * MiB, ~0u, ~0u };
		list[1] = (struct fake_proc){ me, 1024 * MiB, ~0u, ~0u };
		return fake_fill(n, p, list, 2);
	}
	for (unsigned i = 0; i < fake_nprocs && i < 64; i++)
		list[i] = (struct fake_proc){ 100000 + i, (i + 1) * MiB, 1, 0 };
	if (fake_nprocs > 33)
		list[33] = (struct fake_proc){ me, ~0ull, 1, 0 };
	return fake_fill(n, p, list, fake_nprocs < 64 ? fake_nprocs : 64);
}

int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned int *n, void *p)
{
	struct fake_proc me = { (unsigned)getpid(), 1024 * MiB, ~0u, ~0u };

	if ((uintptr_t)h == 1)
		return fake_fill(n, p, &me, 1);
	return fake_fill(n, p, NULL, 0);
}

static void test_nvml_fake(void **state UNUSED)
{
	if (!dlsym(RTLD_DEFAULT, "nvmlInit_v2"))
		skip();		/* not linked with -rdynamic */
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, "/"), 0);
	struct gp_gpu_reader *r = reader_new(&root, getpid(), 0, "");
	for (int i = 0; i < 2; i++) {
		json_t *gpu = NULL;
		struct gp_gpu_totals t;
		assert_int_equal(gp_gpu_read(r, &gpu, &t), 0);
		assert_true(t.nvml_seen);
		assert_int_equal(t.nvml_bytes, 1024 * MiB);
		json_t *nv = json_object_get(gpu, "nvml");
		assert_int_equal(json_array_size(nv), 3);
		json_t *row = json_array_get(nv, 0);
		assert_int_equal(jint(row, "index", NULL), 0);
		assert_string_equal(jstr(row, "name"), "Fake H200 #1");
		assert_string_equal(jstr(row, "type"), "compute");
		assert_int_equal(jint(row, "used_bytes", NULL), 1024 * MiB);
		assert_null(json_object_get(row, "gpu_instance_id"));
		row = json_array_get(nv, 1);
		assert_string_equal(jstr(row, "type"), "graphics");
		row = json_array_get(nv, 2);
		assert_int_equal(jint(row, "index", NULL), 1);
		assert_true(json_is_null(json_object_get(row, "used_bytes")));
		assert_int_equal(jint(row, "gpu_instance_id", NULL), 1);
		assert_int_equal(jint(row, "compute_instance_id", NULL), 0);
		json_decref(gpu);
	}
	/* Grown once, then the buffer fits. */
	assert_int_equal(fake_short_answers, 1);
	assert_int_equal(fake_inits, 1);
	reader_free(r);
	assert_int_equal(fake_shutdowns, 1);

	/* GP_GPU_NO_NVML: never loaded */
	r = reader_new(&root, getpid(), GP_GPU_NO_NVML, "");
	json_t *gpu = NULL;
	struct gp_gpu_totals t;
	assert_int_equal(gp_gpu_read(r, &gpu, &t), 0);
	assert_false(t.nvml_seen);
	assert_int_equal(fake_inits, 1);
	json_decref(gpu);
	reader_free(r);
	gp_root_close(&root);
}

/* The rows NVML gives pid on GPU 1 (the 40-process list), or -1 when it
 * did not answer. */
static long long gpu1_rows(struct gp_nvml *nv, unsigned pid, json_t **row)
{
	json_t *arr = json_array();
	uint64_t bytes = 0;
	long long n = -1;

	*row = NULL;
	if (gp_nvml_proc_memory(nv, (int)pid, arr, &bytes)) {
		size_t i;
		json_t *r;
		n = 0;
		json_array_foreach(arr, i, r)
			if (jint(r, "index", NULL) == 1) {
				n++;
				*row = json_incref(r);
			}
	}
	json_decref(arr);
	return n;
}

/* Issue 18 item 8: whatever stride the driver writes (32, 16, 24 bytes)
 * through _v3, each of the 40 processes comes back with its own pid and
 * size, and nothing is written past the buffer (ASan, in the sanitizer
 * build).  Read at a fixed 24 bytes, 32-byte entries overran the buffer
 * from the 13th on (13 * 32 > 16 * 24: first here, so that ASan stops
 * the old code on it) and 16-byte ones gave wrong pids. */
static void test_nvml_strides(void **state UNUSED)
{
	static const unsigned strides[] = { 32, 16, 24 };
	char why[256];
	unsigned me = (unsigned)getpid();

	if (!dlsym(RTLD_DEFAULT, "nvmlInit_v2"))
		skip();		/* not linked with -rdynamic */
	for (size_t k = 0; k < sizeof strides / sizeof strides[0]; k++) {
		fake_stride = strides[k];
		fake_nprocs = 40;
		struct gp_nvml *nv = gp_nvml_open("", why, sizeof why);
		assert_non_null(nv);
		for (unsigned i = 0; i < 40; i++) {
			unsigned pid = i == 33 ? me : 100000 + i;
			json_t *row;
			if (gpu1_rows(nv, pid, &row) != 1)
				fail_msg("stride %u: pid %u (entry %u) not found once",
					 fake_stride, pid, i);
			if (i == 33)
				assert_true(json_is_null(json_object_get(row, "used_bytes")));
			else if (jint(row, "used_bytes", NULL) != (long long)(i + 1) * MiB)
				fail_msg("stride %u: entry %u: %lld bytes", fake_stride,
					 i, jint(row, "used_bytes", NULL));
			/* v1 entries carry no instance ids */
			assert_int_equal(jint(row, "gpu_instance_id", NULL),
					 fake_stride == 16 ? -1 : 1);
			json_decref(row);
		}
		/* GPU 0 too: us in both lists, one allocation */
		json_t *arr = json_array();
		uint64_t bytes = 0;
		assert_true(gp_nvml_proc_memory(nv, (int)me, arr, &bytes));
		assert_int_equal(bytes, 1024 * MiB);
		assert_int_equal(json_array_size(arr), 3);
		json_decref(arr);
		/* a pid in no list: answered, absent */
		json_t *row;
		assert_int_equal(gpu1_rows(nv, 99, &row), 0);
		assert_string_equal(gp_nvml_why(nv), "");
		gp_nvml_close(nv);
	}

	/* A layout no driver has written yet (40 bytes), 40 of them: inside
	 * the buffer (ASan), not guessed; the process is "unknown", never
	 * "in no list", and the reason names the list. */
	fake_stride = 40;
	fake_nprocs = 40;
	struct gp_nvml *nv = gp_nvml_open("", why, sizeof why);
	assert_non_null(nv);
	json_t *row;
	assert_int_equal(gpu1_rows(nv, 100001, &row), -1);
	assert_string_equal(gp_nvml_why(nv), "GPU 1 compute list "
		"(nvmlDeviceGetComputeRunningProcesses_v3): 40 entries in 1600 "
		"bytes written: no layout of 16, 24 or 32 bytes an entry fits");
	gp_nvml_close(nv);

	/* Through the memory reader: "nvml_unknown", no "nvml" rows. */
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, "/"), 0);
	struct gp_gpu_reader *r = reader_new(&root, getpid(), 0, "");
	json_t *gpu = NULL;
	struct gp_gpu_totals t;
	assert_int_equal(gp_gpu_read(r, &gpu, &t), 0);
	assert_false(t.nvml_seen);
	assert_null(json_object_get(gpu, "nvml"));
	assert_non_null(strstr(jstr(gpu, "nvml_unknown"), "entries in"));
	json_decref(gpu);
	reader_free(r);
	gp_root_close(&root);
	fake_stride = 24;
	fake_nprocs = 40;
}

UNIT_MAIN(
	cmocka_unit_test(test_i915),
	cmocka_unit_test(test_xe),
	cmocka_unit_test(test_panfrost),
	cmocka_unit_test(test_amdgpu_new_and_legacy),
	cmocka_unit_test(test_amdgpu_legacy_tab),
	cmocka_unit_test(test_units),
	cmocka_unit_test(test_client_name),
	cmocka_unit_test(test_not_drm),
	cmocka_unit_test(test_hostile),
	cmocka_unit_test(test_totals_saturate),
	cmocka_unit_test(test_reader_replay),
	cmocka_unit_test(test_reader_missing_pid),
	cmocka_unit_test(test_nvml_absent),
	cmocka_unit_test(test_nvml_fake),
	cmocka_unit_test(test_nvml_strides))
