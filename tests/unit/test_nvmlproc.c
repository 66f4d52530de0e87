/* Unit tests of src/gpu/nvmlproc.c: the layout of NVML process-list
 * entries found from the bytes a driver wrote (issue 18 item 8).  Each
 * buffer is allocated at its exact size, so that under ASan (the
 * --enable-sanitizers build) a read past it fails the test. */
#include "config.h"
#include "nvmlproc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#define MiB (1024ull * 1024)

/* A buffer for cap entries as a caller allocates it, filled as before a
 * call. */
static unsigned char *fresh(unsigned cap, size_t *len)
{
	*len = gp_nvml_procbuf_size(cap);
	unsigned char *b = malloc(*len);
	assert_non_null(b);
	memset(b, GP_NVML_FILL, *len);
	return b;
}

/* Entry k as a driver writes it at this stride: pid, padding, size,
 * instance ids, the confidential-computing size; zeros beyond 32. */
static void put(unsigned char *b, unsigned stride, unsigned k, unsigned pid,
		unsigned long long used, unsigned gi, unsigned ci,
		unsigned long long cc, unsigned pad)
{
	unsigned char e[64];

	memset(e, 0, sizeof e);
	memcpy(e, &pid, 4);
	memcpy(e + 4, &pad, 4);
	memcpy(e + 8, &used, 8);
	memcpy(e + 16, &gi, 4);
	memcpy(e + 20, &ci, 4);
	memcpy(e + 24, &cc, 8);
	memcpy(b + (size_t)k * stride, e, stride);
}

/* Every stride, counts from one to past the 13 that overran a 24-byte
 * reader: the stride is found and every pid read back. */
static void test_known_strides(void **state UNUSED)
{
	static const unsigned strides[] = { 16, 24, 32 };
	static const unsigned counts[] = { 1, 2, 3, 12, 13, 40 };
	char why[160];

	for (size_t a = 0; a < 3; a++)
		for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
			unsigned s = strides[a], n = counts[c];
			size_t len;
			unsigned char *b = fresh(48, &len);

			for (unsigned k = 0; k < n; k++)
				/* sizes of 1..40 MiB: as pids, plausible ones */
				put(b, s, k, 4000 + k, (k + 1) * MiB, ~0u, ~0u, 0, 0);
			unsigned got = gp_nvml_stride(b, len, n, why, sizeof why);
			if (got != s)
				fail_msg("%u entries of %u bytes read as %u (%s)", n, s, got, why);
			for (unsigned k = 0; k < n; k++) {
				struct gp_nvml_proc e;
				gp_nvml_proc_at(b, got, k, &e);
				assert_int_equal(e.pid, 4000 + k);
				assert_true(e.used == (k + 1) * MiB);
				assert_int_equal(e.gi, ~0u);
			}
			free(b);
		}
}

/* Fields at their edges: "not available" sizes, MIG ids, a v3 entry
 * with protected memory, padding left as garbage by the driver. */
static void test_fields(void **state UNUSED)
{
	char why[160];
	size_t len;
	unsigned char *b = fresh(16, &len);
	struct gp_nvml_proc e;

	put(b, 32, 0, 1, ~0ull, 3, 0, 80 * MiB, 0xdeadbeef);
	put(b, 32, 1, 4194304, 0, ~0u, ~0u, ~0ull, 0xa5a5a5a5);
	assert_int_equal(gp_nvml_stride(b, len, 2, why, sizeof why), 32);
	gp_nvml_proc_at(b, 32, 0, &e);
	assert_true(e.pid == 1 && e.used == ~0ull && e.gi == 3 && e.ci == 0 &&
		    e.cc_used == 80 * MiB);
	gp_nvml_proc_at(b, 32, 1, &e);
	assert_true(e.pid == 4194304 && e.cc_used == ~0ull);
	free(b);

	/* v1: no instance ids, no protected memory */
	b = fresh(16, &len);
	put(b, 16, 0, 77, 5 * MiB, 0, 0, 0, 0);
	assert_int_equal(gp_nvml_stride(b, len, 1, why, sizeof why), 16);
	gp_nvml_proc_at(b, 16, 0, &e);
	assert_true(e.pid == 77 && e.gi == ~0u && e.ci == ~0u && e.cc_used == 0);
	free(b);
}

/* What is not a list of a known layout is said so, not guessed. */
static void test_unknown(void **state UNUSED)
{
	char why[160];
	size_t len;
	unsigned char *b;

	/* nothing to read */
	b = fresh(16, &len);
	assert_int_equal(gp_nvml_stride(b, len, 0, why, sizeof why), 0);
	assert_string_equal(why, "");

	/* a 40-byte layout no driver has written yet */
	for (unsigned k = 0; k < 3; k++)
		put(b, 40, k, 500 + k, MiB, ~0u, ~0u, 0, 0);
	assert_int_equal(gp_nvml_stride(b, len, 3, why, sizeof why), 0);
	assert_non_null(strstr(why, "3 entries in 120 bytes written: no layout"));
	free(b);

	/* five entries claimed, two written: the rest is still the fill */
	b = fresh(16, &len);
	put(b, 24, 0, 10, MiB, ~0u, ~0u, 0, 0);
	put(b, 24, 1, 11, MiB, ~0u, ~0u, 0, 0);
	assert_int_equal(gp_nvml_stride(b, len, 5, why, sizeof why), 0);
	assert_non_null(strstr(why, "at 24 bytes an entry, entry 2 is no process"));
	free(b);

	/* a pid of 0, a pid past PID_MAX_LIMIT, a size of a pid's kind read
	 * as bytes, a MIG id that is a pid */
	static const struct { unsigned pid; unsigned long long used; unsigned gi; } bad[] = {
		{ 0, MiB, ~0u }, { 4194305, MiB, ~0u },
		{ 9, (1ull << 50) + 1, ~0u }, { 9, MiB, 123456 },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		b = fresh(16, &len);
		put(b, 24, 0, 10, MiB, ~0u, ~0u, 0, 0);
		put(b, 24, 1, bad[i].pid, bad[i].used, bad[i].gi, ~0u, 0, 0);
		if (gp_nvml_stride(b, len, 2, why, sizeof why) != 0)
			fail_msg("bad entry %zu taken", i);
		free(b);
	}

	/* a driver that cleared the whole buffer: bytes past n entries of
	 * every layout changed */
	b = fresh(16, &len);
	memset(b, 0, len);
	put(b, 24, 0, 10, MiB, ~0u, ~0u, 0, 0);
	assert_int_equal(gp_nvml_stride(b, len, 1, why, sizeof why), 0);
	assert_non_null(strstr(why, "no layout"));
	free(b);

	/* a count past the buffer: nothing read beyond it (ASan) */
	b = fresh(1, &len);
	assert_int_equal(gp_nvml_stride(b, len, 1000, why, sizeof why), 0);
	free(b);
	/* a why buffer of one byte, and of none */
	b = fresh(1, &len);
	assert_int_equal(gp_nvml_stride(b, len, 7, why, 1), 0);
	assert_string_equal(why, "");
	assert_int_equal(gp_nvml_stride(b, len, 7, NULL, 0), 0);
	free(b);
}

/* Property: any list of plausible entries, at any of the three strides,
 * with any padding, reads back at its own stride with its own pids; and
 * any bytes at all are read without a read past the buffer. */
static void test_random(void **state UNUSED)
{
	static const unsigned strides[] = { 16, 24, 32 };
	char why[160];
	unsigned seed = 18008;

	for (int it = 0; it < 20000; it++) {
		unsigned s = strides[rand_r(&seed) % 3];
		unsigned n = 1 + (unsigned)rand_r(&seed) % 64;
		size_t len;
		unsigned char *b = fresh(n + (unsigned)rand_r(&seed) % 4, &len);
		unsigned pids[64];

		for (unsigned k = 0; k < n; k++) {
			unsigned r = (unsigned)rand_r(&seed);
			pids[k] = 1 + r % 4194304;
			put(b, s, k, pids[k],
			    r % 7 ? (unsigned long long)rand_r(&seed) << (r % 19) : ~0ull,
			    r % 3 ? ~0u : r % 15, r % 3 ? ~0u : r % 8,
			    r % 5 ? 0 : (unsigned long long)rand_r(&seed), (unsigned)rand_r(&seed));
		}
		unsigned got = gp_nvml_stride(b, len, n, why, sizeof why);
		if (got != s)
			fail_msg("iteration %d: %u entries of %u bytes read as %u (%s)",
				 it, n, s, got, why);
		for (unsigned k = 0; k < n; k++) {
			struct gp_nvml_proc e;
			gp_nvml_proc_at(b, got, k, &e);
			assert_int_equal(e.pid, pids[k]);
		}
		free(b);

		/* junk: whatever it answers, only inside the buffer */
		len = 1 + (unsigned)rand_r(&seed) % 300;
		b = malloc(len);
		assert_non_null(b);
		for (size_t i = 0; i < len; i++)
			b[i] = (unsigned char)(rand_r(&seed) % 4 ? GP_NVML_FILL : rand_r(&seed));
		n = (unsigned)rand_r(&seed) % 20;
		got = gp_nvml_stride(b, len, n, why, sizeof why);
		assert_true(got == 0 || (size_t)n * got <= len);
		free(b);
	}
}

UNIT_MAIN(
	cmocka_unit_test(test_known_strides),
	cmocka_unit_test(test_fields),
	cmocka_unit_test(test_unknown),
	cmocka_unit_test(test_random))
