/* What the cmocka unit tests share: cmocka's headers in the order it
 * needs them, the table checks of parsers and renderers, and main. */
#ifndef GP_UNIT_H
#define GP_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define UNUSED __attribute__((unused))

/* REJECTS(parse, out, "text", ...): parse(text, out) refuses each text,
 * and a failure names the one it took. */
#define REJECTS(parse, out, ...)						\
	do {									\
		static const char *const bad_[] = { __VA_ARGS__ };		\
		for (size_t i_ = 0; i_ < sizeof bad_ / sizeof bad_[0]; i_++)	\
			if (parse(bad_[i_], out))				\
				fail_msg(#parse " took '%s'", bad_[i_]);	\
	} while (0)

/* PARSES(parse, "text", out, want): parse(text, &out) takes the text and
 * gives want. */
#define PARSES(parse, text, out, want)						\
	do {									\
		assert_true(parse(text, &(out)));				\
		assert_true((out) == (want));					\
	} while (0)

/* TEXT_IS(render, value, "want"): render(value, buf, cap) writes want. */
#define TEXT_IS(render, value, want)						\
	do {									\
		char text_[256];						\
		render(value, text_, sizeof text_);				\
		assert_string_equal(text_, want);				\
	} while (0)

/* UNIT_MAIN(cmocka_unit_test(a), ...): main runs these tests, one group. */
#define UNIT_MAIN(...)								\
	int main(void)								\
	{									\
		const struct CMUnitTest tests_[] = { __VA_ARGS__ };		\
		return cmocka_run_group_tests(tests_, NULL, NULL);		\
	}

#endif
