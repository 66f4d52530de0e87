/* parse.c: numbers, key-value walks, memory units, command-line values. */
#include "config.h"
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "parse.h"
#include "grow.h"

static void test_u64(void **st)
{
	uint64_t v;
	const char *end;
	assert_true(gp_parse_u64("  42 rest", &v, &end));
	assert_int_equal(v, 42);
	assert_string_equal(end, " rest");
	assert_true(gp_parse_u64("18446744073709551615", &v, NULL));
	assert_true(v == UINT64_MAX);
	assert_false(gp_parse_u64("18446744073709551616", &v, NULL)); /* overflow */
	assert_false(gp_parse_u64("", &v, NULL));
	assert_false(gp_parse_u64("-1", &v, NULL));
	assert_false(gp_parse_u64("x1", &v, NULL));
}

static void test_i64_x64(void **st)
{
	int64_t i;
	uint64_t x;
	assert_true(gp_parse_i64("-1 0x7ff", &i, NULL));
	assert_int_equal(i, -1);
	assert_true(gp_parse_i64("-9223372036854775808", &i, NULL));
	assert_true(i == INT64_MIN);
	assert_false(gp_parse_i64("9223372036854775808", &i, NULL));
	assert_true(gp_parse_x64("0x7fffdeadbeef", &x, NULL));
	assert_true(x == 0x7fffdeadbeefull);
	assert_true(gp_parse_x64("0xffffffffffffffff", &x, NULL));
	assert_true(x == UINT64_MAX);
	assert_false(gp_parse_x64("0x1ffffffffffffffff", &x, NULL));
	assert_false(gp_parse_x64("0x", &x, NULL));
	assert_true(gp_parse_x64("12", &x, NULL));
	assert_int_equal(x, 12);
}

struct seen {
	char keys[8][32];
	char vals[8][32];
	int n;
};

static int collect(const char *k, size_t kl, const char *v, void *ctx)
{
	struct seen *s = ctx;
	if (s->n >= 8)
		return 1;
	memcpy(s->keys[s->n], k, kl < 31 ? kl : 31);
	size_t vl = strcspn(v, "\n");
	memcpy(s->vals[s->n], v, vl < 31 ? vl : 31);
	s->n++;
	return 0;
}

static void test_kv_each(void **st)
{
	struct seen s;
	memset(&s, 0, sizeof s);
	/* colon+tab, bare space (vmstat), amdgpu's stray tab, no value,
	 * no trailing newline */
	const char *text = "Name:\tllama\nnr_dirtied 123\ndrm-memory-gtt: \t1234 KiB\n"
			   "empty:\n\nlonely\nlast: 7";
	assert_int_equal(gp_kv_each(text, collect, &s), 0);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.keys[0], "Name");
	assert_string_equal(s.vals[0], "llama");
	assert_string_equal(s.keys[1], "nr_dirtied");
	assert_string_equal(s.vals[1], "123");
	assert_string_equal(s.keys[2], "drm-memory-gtt");
	assert_string_equal(s.vals[2], "1234 KiB");
	assert_string_equal(s.keys[3], "last");
	assert_string_equal(s.vals[3], "7");
	assert_int_equal(gp_kv_each("", collect, &s), 0);
}

static void test_mem_value(void **st)
{
	uint64_t b;
	assert_true(gp_parse_mem_value("16555 kB", &b));
	assert_true(b == 16555ull * 1024);
	assert_true(gp_parse_mem_value("3 MiB", &b));
	assert_true(b == 3ull << 20);
	assert_true(gp_parse_mem_value("5\tKiB", &b));
	assert_true(b == 5ull * 1024);
	assert_true(gp_parse_mem_value("17", &b));
	assert_int_equal(b, 17);
	assert_false(gp_parse_mem_value("18446744073709551615 MiB", &b));
	assert_false(gp_parse_mem_value("kB", &b));
}

static void test_size(void **st)
{
	uint64_t b;
	assert_true(gp_parse_size("16G", &b));
	assert_true(b == 16ull << 30);
	assert_true(gp_parse_size("16GiB", &b));
	assert_true(b == 16ull << 30);
	assert_true(gp_parse_size("4096", &b));
	assert_int_equal(b, 4096);
	assert_true(gp_parse_size("1k", &b));
	assert_int_equal(b, 1024);
	assert_true(gp_parse_size("2Ki", &b));
	assert_int_equal(b, 2048);
	assert_true(gp_parse_size("15E", &b));
	REJECTS(gp_parse_size, &b, "", "-1", "1X", "1GG", " 1", "1iB", "1.5G", "inf",
		"99999999999T", "16E" /* overflow */);
}

static void test_seconds(void **st)
{
	double d;
	assert_true(gp_parse_seconds("0.05", &d));
	assert_true(d > 0.0499 && d < 0.0501);
	assert_true(gp_parse_seconds("120", &d));
	assert_true(gp_parse_seconds("1s", &d)); /* a unit may follow */
	assert_true(d == 1.0);
	REJECTS(gp_parse_seconds, &d, "-1", "nan", "inf", "1e3", "0x10", "", "1e400");
}

static void test_duration(void **st)
{
	int64_t ns;
	assert_true(gp_parse_duration("0.05", &ns));
	assert_true(ns == 50000000);
	assert_true(gp_parse_duration(".5", &ns));
	assert_true(ns == 500000000);
	assert_true(gp_parse_duration("250ms", &ns));
	assert_true(ns == 250000000);
	assert_true(gp_parse_duration("1.5s", &ns));
	assert_true(ns == 1500000000);
	assert_true(gp_parse_duration("2m", &ns));
	assert_true(ns == 120000000000LL);
	assert_true(gp_parse_duration("1h", &ns));
	assert_true(gp_parse_duration("1d", &ns));
	assert_true(ns == 86400000000000LL);
	assert_true(gp_parse_duration("0.000000001", &ns));
	assert_true(ns == 1);
	assert_true(gp_parse_duration("9223372036", &ns));
	assert_true(gp_parse_duration("9223372036.854775807", &ns));
	assert_true(ns == INT64_MAX);
	/* Refused: what strtod would take, and overflow. */
	REJECTS(gp_parse_duration, &ns,
		"", " 1", "1 ", "+1", "-1", "-0", "inf", "INF", "nan", "infinity", "1e3", "1e400",
		"0x10", "1.", ".", "1..2", "1.2.3", "10q", "1sec", "1S", "1 s", "s", "ms",
		"0.0000000001", "9223372036.854775808", "9223372037", "99999999999999999999",
		"153722867280913m", "106751991167301d", "1,5", "１");
}

static void test_percent_count(void **st)
{
	double p;
	uint64_t n;
	assert_true(gp_parse_percent("50", &p));
	assert_true(p == 50.0);
	assert_true(gp_parse_percent("12.5%", &p));
	assert_true(p == 12.5);
	REJECTS(gp_parse_percent, &p, "-1", "nan", "inf", "1e2", "50%%", "");
	assert_true(gp_parse_count("0", &n));
	assert_true(gp_parse_count("18446744073709551615", &n));
	assert_true(n == UINT64_MAX);
	REJECTS(gp_parse_count, &n, "18446744073709551616", "-1", " 1", "1k", "");
}

static void test_pid(void **st)
{
	int p;
	assert_true(gp_parse_pid("4242", &p));
	assert_int_equal(p, 4242);
	REJECTS(gp_parse_pid, &p, "0", "-1", "2147483648", "12abc", "", " 1");
}

static void test_grow(void **st)
{
	(void)st;
	long *a = NULL;
	size_t cap = 0;
	assert_true(gp_grow(&a, &cap, 1, sizeof *a, 4));
	assert_int_equal(cap, 4);
	a[3] = 7;
	assert_true(gp_grow(&a, &cap, 4, sizeof *a, 4));   /* room already */
	assert_int_equal(cap, 4);
	assert_true(gp_grow(&a, &cap, 9, sizeof *a, 4));   /* doubles past need */
	assert_int_equal(cap, 16);
	assert_int_equal(a[3], 7);
	long *keep = a;
	assert_false(gp_grow(&a, &cap, SIZE_MAX / 2, sizeof *a, 4)); /* overflow */
	assert_ptr_equal(a, keep);
	assert_int_equal(cap, 16);
	free(a);
}

static void test_strlcpy(void **st)
{
	char b[4];
	gp_strlcpy(b, "abcdef", sizeof b);
	assert_string_equal(b, "abc");
	gp_strlcpy(b, "", sizeof b);
	assert_string_equal(b, "");
	/* never cut inside a UTF-8 character: "a" + the 3 bytes of U+65E5 */
	gp_strlcpy(b, "a\xe6\x97\xa5", sizeof b);
	assert_string_equal(b, "a");
	gp_strlcpy(b, "ab\xc3\xa9", sizeof b);
	assert_string_equal(b, "ab");
	gp_strlcpy(b, "\xc3\xa9x", sizeof b);
	assert_string_equal(b, "\xc3\xa9x");
	char c[16];
	gp_strlcpy(c, "abc\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xb9", sizeof c);
	assert_string_equal(c, "abc\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86");
}

UNIT_MAIN(
	cmocka_unit_test(test_u64),
	cmocka_unit_test(test_i64_x64),
	cmocka_unit_test(test_kv_each),
	cmocka_unit_test(test_mem_value),
	cmocka_unit_test(test_size),
	cmocka_unit_test(test_seconds),
	cmocka_unit_test(test_duration),
	cmocka_unit_test(test_percent_count),
	cmocka_unit_test(test_pid),
	cmocka_unit_test(test_grow),
	cmocka_unit_test(test_strlcpy))
