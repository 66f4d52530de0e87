/* jsonw.c: the streaming writer's output must read back with jansson,
 * commas and escapes right, any comm bytes surviving. */
#include "config.h"
#include "unit.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "jsonw.h"

static json_t *parse(const struct gp_jsonw *w)
{
	json_error_t err;
	json_t *j = json_loads(w->buf, 0, &err);
	if (!j)
		fail_msg("not JSON: %s (%s)", w->buf, err.text);
	return j;
}

static void test_nesting_and_commas(void **st)
{
	struct gp_jsonw w = { 0 };
	gp_jw_reset(&w);
	gp_jw_arr_begin(&w);
	for (int i = 0; i < 3; i++) {
		gp_jw_obj_begin(&w);
		gp_jw_key(&w, "tid");
		gp_jw_int(&w, 100 + i);
		gp_jw_key(&w, "args");
		gp_jw_arr_begin(&w);
		gp_jw_hex(&w, 0xc0284b16);
		gp_jw_uint(&w, UINT64_MAX); /* beyond jansson's integers: a real */
		gp_jw_arr_end(&w);
		gp_jw_key(&w, "empty");
		gp_jw_obj_begin(&w);
		gp_jw_obj_end(&w);
		gp_jw_key(&w, "pct");
		gp_jw_real(&w, 99.5);
		gp_jw_key(&w, "whole");
		gp_jw_real(&w, 3);
		gp_jw_key(&w, "ok");
		gp_jw_bool(&w, i == 1);
		gp_jw_obj_end(&w);
	}
	gp_jw_arr_end(&w);
	json_t *j = parse(&w);
	assert_int_equal(json_array_size(j), 3);
	json_t *o = json_array_get(j, 2);
	assert_int_equal(json_integer_value(json_object_get(o, "tid")), 102);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "args"), 0)), "0xc0284b16");
	assert_true(json_is_real(json_array_get(json_object_get(o, "args"), 1)));
	assert_true(json_is_real(json_object_get(o, "whole")));
	assert_true(json_real_value(json_object_get(o, "pct")) == 99.5);
	json_decref(j);
	gp_jw_free(&w);
}

static void test_strings(void **st)
{
	struct gp_jsonw w = { 0 };
	gp_jw_reset(&w);
	gp_jw_obj_begin(&w);
	gp_jw_key(&w, "hostile");
	gp_jw_str(&w, "w2 (x) )\"\\\n\t\x01");
	gp_jw_key(&w, "utf8");
	gp_jw_str(&w, "h\xc3\xa9llo \xf0\x9f\x98\x80");
	gp_jw_key(&w, "invalid");
	gp_jw_str(&w, "a\xff" "b\xc3");
	gp_jw_obj_end(&w);
	for (size_t i = 0; i < w.len; i++)
		assert_true((unsigned char)w.buf[i] < 0x80); /* ASCII only */
	json_t *j = parse(&w);
	assert_string_equal(json_string_value(json_object_get(j, "hostile")), "w2 (x) )\"\\\n\t\x01");
	assert_string_equal(json_string_value(json_object_get(j, "utf8")), "h\xc3\xa9llo \xf0\x9f\x98\x80");
	assert_string_equal(json_string_value(json_object_get(j, "invalid")), "a\\xffb\\xc3");
	json_decref(j);
	gp_jw_free(&w);
}

static void test_reset_reuses(void **st)
{
	struct gp_jsonw w = { 0 };
	for (int round = 0; round < 3; round++) {
		gp_jw_reset(&w);
		gp_jw_arr_begin(&w);
		for (int i = 0; i < 5000; i++)
			gp_jw_int(&w, i);
		gp_jw_arr_end(&w);
		json_t *j = parse(&w);
		assert_int_equal(json_array_size(j), 5000);
		json_decref(j);
	}
	gp_jw_free(&w);
}

/* Numbers are written by hand (jsonw.c decimal): the very text printf's
 * "%lld", "%llu" and "%.10g" (with ".0" where it has no point) give. */
static void test_numbers_as_printf(void **st)
{
	const int64_t ints[] = { 0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
	const double reals[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 3.25, 1e9, 9999999999.0, 1e10, -9999999999.0,
				 -1e10, 12345678901.0, 1e300, 2.0e-7, 4294967296.0, -123.0, 1.0 / 3 };
	char want[64];
	struct gp_jsonw w = { 0 };
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		gp_jw_reset(&w);
		gp_jw_int(&w, ints[i]);
		snprintf(want, sizeof want, "%lld", (long long)ints[i]);
		assert_string_equal(w.buf, want);
		if (ints[i] >= 0) {
			gp_jw_reset(&w);
			gp_jw_uint(&w, (uint64_t)ints[i]);
			assert_string_equal(w.buf, want);
		}
	}
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
		gp_jw_reset(&w);
		gp_jw_real(&w, reals[i]);
		snprintf(want, sizeof want, "%.10g", reals[i]);
		if (!strpbrk(want, ".eE"))
			strcat(want, ".0");
		assert_string_equal(w.buf, want);
	}
	gp_jw_free(&w);
}

UNIT_MAIN(
	cmocka_unit_test(test_numbers_as_printf),
	cmocka_unit_test(test_nesting_and_commas),
	cmocka_unit_test(test_strings),
	cmocka_unit_test(test_reset_reuses))
