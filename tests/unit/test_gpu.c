/* The GPU interface's pure helpers: status names, pool names, flags,
 * pool selection, and the hsa_init diagnosis on captured machine trees. */
#include "config.h"
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

/* The names table(lo..hi-1) gives: each starts with prefix, and no two
 * codes share a whole name.  Returns how many codes are named. */
static size_t names_unique(const char *(*table)(int64_t), int lo, int hi, const char *prefix)
{
	const char *seen[2048];
	size_t n = 0;
	for (int c = lo; c < hi; c++) {
		const char *name = table(c);
		if (!name)
			continue;
		assert_int_equal(strncmp(name, prefix, strlen(prefix)), 0);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(seen[i], name))
				fail_msg("code %d repeats the name %s", c, name);
		assert_true(n < sizeof seen / sizeof seen[0]);
		seen[n++] = name;
	}
	return n;
}

static void test_hsa_status_table(void **state)
{
	(void)state;
	assert_string_equal(gp_hsa_status_table(0x28), "HSA_STATUS_ERROR_INVALID_MEMORY_POOL");
	assert_string_equal(gp_hsa_status_table(40), "HSA_STATUS_ERROR_INVALID_MEMORY_POOL");
	assert_string_equal(gp_hsa_status_table(0x1000), "HSA_STATUS_ERROR");
	assert_string_equal(gp_hsa_status_table(0x1008), "HSA_STATUS_ERROR_OUT_OF_RESOURCES");
	assert_string_equal(gp_hsa_status_table(0x1001), "HSA_STATUS_ERROR_INVALID_ARGUMENT");
	assert_string_equal(gp_hsa_status_table(0), "HSA_STATUS_SUCCESS");
	assert_string_equal(gp_hsa_status_table(0x2F), "HSA_STATUS_ERROR_NOT_SUPPORTED");
	assert_string_equal(gp_hsa_status_table(0x1017), "HSA_STATUS_ERROR_INVALID_ISA_NAME");
	assert_string_equal(gp_hsa_status_table(0x1026), "HSA_STATUS_ERROR_FATAL");
	assert_null(gp_hsa_status_table(0x30));
	assert_null(gp_hsa_status_table(0x1027));
	assert_null(gp_hsa_status_table(-1));
	/* Every name starts with HSA_STATUS_ and is unique: two codes never
	 * share a whole name (comparing a prefix proved nothing). */
	size_t nh = names_unique(gp_hsa_status_table, 0, 0x1100, "HSA_STATUS_");
	assert_int_equal(nh, 43);   /* hsa.h: 0x0-0x1, 0x28-0x2F, 0x1000-0x1019, 0x1020-0x1026 */
	assert_int_equal(names_unique(gp_cuda_status_table, 0, 1100, "CUDA_"), 16);
	assert_string_equal(gp_cuda_status_table(1), "CUDA_ERROR_INVALID_VALUE");
	assert_string_equal(gp_cuda_status_table(801), "CUDA_ERROR_NOT_SUPPORTED");
	assert_null(gp_cuda_status_table(12345));
}

static struct gp_gpu_pool pool(int agent, uint32_t flags)
{
	struct gp_gpu_pool p = { 0 };
	p.agent = agent;
	p.flags = flags;
	p.have_flags = p.have_segment = true;
	p.segment = GP_SEG_GLOBAL;
	return p;
}

/* gp_pool_names over the agents and pools: the labels and names wanted,
 * in their order. */
static void names_are(struct gp_gpu_agent *a, int na, struct gp_gpu_pool *p, int np,
		      const char *const *labels, const char *const *names)
{
	gp_pool_names(a, na, p, np);
	for (int i = 0; i < na; i++)
		assert_string_equal(a[i].label, labels[i]);
	for (int i = 0; i < np; i++)
		assert_string_equal(p[i].name, names[i]);
}

static void test_pool_names_seed004(void **state)
{
	(void)state;
	/* The shape seed 004's machine had: one CPU, one GPU. */
	struct gp_gpu_agent a[2] = { { .type = GP_AGENT_CPU }, { .type = GP_AGENT_GPU } };
	struct gp_gpu_pool p[7] = { pool(0, 2), pool(0, 3), pool(0, 4), pool(0, 8),
				    pool(1, 4), pool(1, 2), pool(1, 0) };
	p[6].segment = GP_SEG_GROUP;
	p[6].have_flags = false;
	names_are(a, 2, p, 7, (const char *[]){ "cpu", "gpu0" },
		  (const char *[]){ "cpu-fine", "cpu-kernarg", "cpu-coarse", "cpu-extfine",
				    "gpu0-coarse", "gpu0-fine", "gpu0-group" });
}

static void test_pool_names_many(void **state)
{
	(void)state;
	/* Two CPUs (NUMA), two GPUs, a second fine pool, flags unknown. */
	struct gp_gpu_agent a[4] = { { .type = GP_AGENT_CPU }, { .type = GP_AGENT_CPU },
				     { .type = GP_AGENT_GPU }, { .type = GP_AGENT_GPU } };
	struct gp_gpu_pool p[6] = { pool(0, 2), pool(1, 2), pool(2, 4), pool(3, 4),
				    pool(3, 4), pool(3, 0) };
	p[5].have_flags = false;
	names_are(a, 4, p, 6, (const char *[]){ "cpu0", "cpu1", "gpu0", "gpu1" },
		  (const char *[]){ "cpu0-fine", "cpu1-fine", "gpu0-coarse", "gpu1-coarse",
				    "gpu1-coarse2", "gpu1-pool" });
}

static void test_pool_select(void **state)
{
	(void)state;
	struct gp_gpu_agent a[2] = { { .type = GP_AGENT_CPU }, { .type = GP_AGENT_GPU } };
	struct gp_gpu_pool p[4] = { pool(0, 2), pool(0, 4), pool(1, 4), pool(1, 2) };
	gp_pool_names(a, 2, p, 4);
	int out[8];
	assert_int_equal(gp_pool_select(a, p, 4, "all", out, 8), 4);
	assert_int_equal(gp_pool_select(a, p, 4, "cpu", out, 8), 2);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(gp_pool_select(a, p, 4, "gpu", out, 8), 2);
	assert_int_equal(out[0], 2);
	assert_int_equal(gp_pool_select(a, p, 4, "gpu0-fine", out, 8), 1);
	assert_int_equal(out[0], 3);
	assert_int_equal(gp_pool_select(a, p, 4, "cpu-extfine", out, 8), -1);
	assert_int_equal(gp_pool_select(a, p, 4, "", out, 8), -1);
	assert_int_equal(gp_pool_select(a, p, 4, "CPU-FINE", out, 8), -1);
}

static void test_pool_flags_text(void **state)
{
	(void)state;
	TEXT_IS(gp_pool_flags_text, 3, "kernarg|fine");
	TEXT_IS(gp_pool_flags_text, 4, "coarse");
	TEXT_IS(gp_pool_flags_text, 8, "extfine");
	TEXT_IS(gp_pool_flags_text, 0, "0");
	TEXT_IS(gp_pool_flags_text, 0x12, "fine|0x10");
}

static void test_cuda_flags(void **state)
{
	(void)state;
	unsigned f = 99;
	PARSES(gp_cuda_flags_parse, "read-only", f, 8);
	PARSES(gp_cuda_flags_parse, "read-only,portable", f, 9);
	PARSES(gp_cuda_flags_parse, "devicemap|iomemory", f, 6);
	PARSES(gp_cuda_flags_parse, "0x8", f, 8);
	PARSES(gp_cuda_flags_parse, "0", f, 0);
	PARSES(gp_cuda_flags_parse, "none", f, 0);
	PARSES(gp_cuda_flags_parse, "READONLY", f, 8);
	REJECTS(gp_cuda_flags_parse, &f, "writable", "", "8x", "read-only,bogus", "0x1ffffffff");
	TEXT_IS(gp_cuda_flags_text, 9, "portable|read-only");
	TEXT_IS(gp_cuda_flags_text, 0, "0");
	TEXT_IS(gp_cuda_flags_text, 0x18, "read-only|0x10");
}

static void test_runtime_parse(void **state)
{
	(void)state;
	enum gp_rt rt;
	assert_true(gp_gpu_parse_runtime("auto", &rt));
	assert_int_equal(rt, GP_RT_AUTO);
	assert_true(gp_gpu_parse_runtime("hsa", &rt));
	assert_int_equal(rt, GP_RT_HSA);
	assert_true(gp_gpu_parse_runtime("cuda", &rt));
	assert_int_equal(rt, GP_RT_CUDA);
	assert_false(gp_gpu_parse_runtime("opencl", &rt));
	assert_false(gp_gpu_parse_runtime("", &rt));
}

/* The diagnosis on fake machine trees under a temporary root. */
static char root[256];

static void mk(const char *rel, bool dir)
{
	char p[512];
	snprintf(p, sizeof p, "%s%s", root, rel);
	if (dir) {
		assert_int_equal(mkdir(p, 0755), 0);
	} else {
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
}

/* The diagnosis of the tree under root names want. */
static void diagnosis_says(const char *want)
{
	char line[300], hint[300];
	gp_hsa_diagnose(root, line, sizeof line, hint, sizeof hint);
	if (!strstr(line, want))
		fail_msg("diagnosis '%s' lacks '%s'", line, want);
}

static void test_diagnose(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/gp-diag-XXXXXX");
	assert_non_null(mkdtemp(root));
	mk("/dev", true);
	mk("/sys", true);
	mk("/sys/module", true);
	diagnosis_says("/dev/kfd is absent");
	diagnosis_says("amdgpu kernel module is not loaded");
	mk("/dev/dxg", false);
	diagnosis_says("(WSL)");
	char p[512];
	snprintf(p, sizeof p, "%s/dev/dxg", root);
	unlink(p);
	mk("/sys/module/amdgpu", true);
	diagnosis_says("amdgpu module is loaded but /dev/kfd is absent");
	mk("/dev/kfd", false);
	diagnosis_says("/dev/kfd is present");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

UNIT_MAIN(
	cmocka_unit_test(test_hsa_status_table),
	cmocka_unit_test(test_pool_names_seed004),
	cmocka_unit_test(test_pool_names_many),
	cmocka_unit_test(test_pool_select),
	cmocka_unit_test(test_pool_flags_text),
	cmocka_unit_test(test_cuda_flags),
	cmocka_unit_test(test_runtime_parse),
	cmocka_unit_test(test_diagnose))
