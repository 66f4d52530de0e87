/* safetext.c: a stranger's bytes as a terminal, a log line or a text file
 * may show them (issue 27: a comm with ESC, a newline or a byte that is
 * not UTF-8 reached the watch's log, the terminal and node_exporter raw). */
#include "config.h"
#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetext.h"
#include "strbuf.h"

static void safe_is(const char *in, size_t len, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	gp_safe_add_n(&sb, in, len);
	if (strcmp(sb.buf, want))
		fail_msg("made [%s], want [%s]", sb.buf, want);
	/* Safe text is safe again, unchanged. */
	assert_true(gp_is_safe(sb.buf));
	struct strbuf again = STRBUF_INIT;
	gp_safe_add(&again, sb.buf);
	assert_string_equal(again.buf, sb.buf);
	strbuf_release(&again);
	strbuf_release(&sb);
}
#define SAFE(lit, want) safe_is(lit, sizeof lit - 1, want)

static void test_forms(void **st UNUSED)
{
	SAFE("python3", "python3");
	SAFE("", "");
	SAFE("caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80");
	SAFE("back\\slash \"q\"", "back\\slash \"q\"");
	SAFE("a\nb\tc\rd", "a\\nb\\tc\\rd");
	SAFE("esc\x1b[31mred\x1b]0;title\x07", "esc\\x1b[31mred\\x1b]0;title\\x07");
	SAFE("del\x7f", "del\\x7f");
	SAFE("\xff\xfe", "\\xff\\xfe");
	SAFE("caf\xe9", "caf\\xe9");
	SAFE("\xc3", "\\xc3");                 /* a sequence cut short */
	SAFE("\xe2\x82", "\\xe2\\x82");
	SAFE("\xc0\xaf", "\\xc0\\xaf");        /* overlong '/' */
	SAFE("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
	SAFE("c1\xc2\x9b" "31m", "c1\\u009b31m"); /* CSI as C1 */
	SAFE("\xe2\x80\xae" "txt.exe", "\\u202etxt.exe"); /* right-to-left override */
	SAFE("nul\0after", "nul\\x00after");
}

static void test_tail_and_str(void **st UNUSED)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "kept\n");
	size_t from = sb.len;
	strbuf_addstr(&sb, "pid 7 (x\x1b[2J\nFAKE)");
	gp_safe_tail(&sb, from);
	assert_string_equal(sb.buf, "kept\npid 7 (x\\x1b[2J\\nFAKE)");
	strbuf_release(&sb);

	char buf[GP_SAFE_COMM];
	/* The worst comm: 15 bytes, each an escape of 4. */
	assert_string_equal(gp_safe_str("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
					buf, sizeof buf),
			    "\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff");
	/* Cut before an escape or a character that does not fit whole. */
	char small[8];
	assert_string_equal(gp_safe_str("ab\x1b" "cd", small, sizeof small), "ab\\x1bc");
	assert_string_equal(gp_safe_str("abcde\x1b", small, sizeof small), "abcde");
	assert_string_equal(gp_safe_str("abcdef\xc3\xa9", small, sizeof small), "abcdef");
	assert_string_equal(gp_safe_str("abcde\xc3\xa9", small, sizeof small), "abcde\xc3\xa9");
}

static void test_lines(void **st UNUSED)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	assert_non_null(m);
	static const char text[] = "line one (\x1b[31m)\nline two \xff\n\nlast";
	assert_int_equal(gp_safe_lines(m, text, sizeof text - 1), 0);
	fclose(m);
	assert_string_equal(out, "line one (\\x1b[31m)\nline two \\xff\n\nlast");
	free(out);
}

UNIT_MAIN(
	cmocka_unit_test(test_forms),
	cmocka_unit_test(test_tail_and_str),
	cmocka_unit_test(test_lines))
