/* strbuf.c: the bounded string builder, and the renderer it replaced the
 * append chains in (issue 12: a header's long runtime strings overflowed
 * hostinfo.c's stack buffer; the renderer is src/render/host_text.c
 * now). */
#include "config.h"
#include "unit.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_text.h"
#include "strbuf.h"

static void test_empty(void **st)
{
	struct strbuf sb = STRBUF_INIT;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_reset(&sb);
	strbuf_setlen(&sb, 0);
	strbuf_addstr(&sb, NULL);
	strbuf_add(&sb, "", 0);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
	strbuf_release(&sb); /* twice: still fine */
	/* detach of an empty strbuf hands over a real, freeable "" */
	char *s = strbuf_detach(&sb, NULL);
	assert_string_equal(s, "");
	free(s);
	strbuf_init(&sb, 100);
	assert_true(sb.alloc > 100);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
	assert_int_equal(sb.alloc, 0);
}

static void test_appends(void **st)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "gpu");
	strbuf_addch(&sb, ':');
	strbuf_addf(&sb, " %d %s %.1f", 42, "x", 2.5);
	strbuf_add(&sb, "ab\0cd", 5); /* bytes, NUL included */
	assert_int_equal(sb.len, 18);
	assert_memory_equal(sb.buf, "gpu: 42 x 2.5ab\0cd", 19);
	assert_int_equal(sb.buf[sb.len], '\0');
	strbuf_setlen(&sb, 3);
	assert_string_equal(sb.buf, "gpu");
	strbuf_setlen(&sb, 10); /* longer: no-op */
	assert_string_equal(sb.buf, "gpu");
	size_t alloc = sb.alloc;
	strbuf_reset(&sb);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.alloc, alloc); /* kept */
	size_t len;
	strbuf_addf(&sb, "%s", "detached");
	char *s = strbuf_detach(&sb, &len);
	assert_string_equal(s, "detached");
	assert_int_equal(len, 8);
	assert_int_equal(sb.len, 0);
	assert_string_equal(sb.buf, "");
	free(s);
	strbuf_release(&sb);
}

/* Many small appends past every growth step, and single appends far
 * longer than any initial allocation: nothing is lost or cut. */
static void test_long_appends(void **st)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 200000; i++)
		strbuf_addf(&sb, "%05d;", i % 100000);
	assert_int_equal(sb.len, 200000 * 6);
	assert_int_equal(strlen(sb.buf), sb.len);
	assert_memory_equal(sb.buf + 6 * 123456, "23456;", 6);
	assert_true(sb.alloc > sb.len);

	size_t big = 8u << 20; /* 8 MiB in one addf */
	char *s = malloc(big + 1);
	assert_non_null(s);
	memset(s, 'a', big);
	s[big] = '\0';
	strbuf_reset(&sb);
	strbuf_addf(&sb, "<%s>", s);
	assert_int_equal(sb.len, big + 2);
	assert_int_equal(sb.buf[0], '<');
	assert_int_equal(sb.buf[big], 'a');
	assert_int_equal(sb.buf[big + 1], '>');
	assert_int_equal(sb.buf[big + 2], '\0');
	strbuf_addstr(&sb, s);
	strbuf_add(&sb, s, big);
	assert_int_equal(sb.len, 3 * big + 2);
	assert_int_equal(strlen(sb.buf), sb.len);
	/* addch at exact capacity boundaries */
	strbuf_release(&sb);
	for (int i = 0; i < 100000; i++) {
		strbuf_addch(&sb, 'x');
		assert_int_equal(sb.buf[sb.len], '\0');
		assert_true(sb.len < sb.alloc);
	}
	strbuf_release(&sb);
	free(s);
}

static void test_copy_to(void **st)
{
	struct strbuf sb = STRBUF_INIT;
	char small[8];
	memset(small, 'z', sizeof small);
	strbuf_addstr(&sb, "0123456789abcdef");
	assert_int_equal(strbuf_copy_to(&sb, small, sizeof small), 16);
	assert_string_equal(small, "0123456");
	assert_int_equal(strbuf_copy_to(&sb, small, 0), 16); /* writes nothing */
	assert_string_equal(small, "0123456");
	char one[1] = { 'q' };
	strbuf_copy_to(&sb, one, 1);
	assert_int_equal(one[0], '\0');
	char fits[32];
	strbuf_copy_to(&sb, fits, sizeof fits);
	assert_string_equal(fits, "0123456789abcdef");
	strbuf_release(&sb);
}

/* The finding of issue 12: a header whose runtime entry holds long
 * strings; every fact must come out whole (the old code cut at 1 KiB, or
 * wrote past its 1 KiB stack buffer). */
static void test_host_long_runtime(void **st)
{
	size_t big = 70000;
	char *s = malloc(big + 1);
	assert_non_null(s);
	memset(s, 'r', big);
	s[big] = '\0';
	json_t *h = json_pack("{s:{s:{s:s,s:s,s:s,s:s,s:s}},s:{s:s},s:[{s:s,s:s}],s:{s:s,s:s}}",
			      "runtimes", "hsa", "path", s, "file_version", s, "version", s,
			      "build_id", s, "build", s,
			      "os", "kernel", s,
			      "gpus", "model", s, "driver", s,
			      "env", "HSA_X", s, "ROCR_Y", s);
	assert_non_null(h);
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	assert_non_null(f);
	gp_host_render_markdown(f, h);
	gp_host_render_text(f, h);
	fclose(f);
	assert_true(outlen > 2 * 10 * big); /* 10 long fields, twice */
	const char *rt = strstr(out, "**HSA runtime**: ");
	assert_non_null(rt);
	assert_non_null(strstr(rt, ", built by "));
	free(out);
	json_decref(h);
	free(s);
}

UNIT_MAIN(
	cmocka_unit_test(test_empty),
	cmocka_unit_test(test_appends),
	cmocka_unit_test(test_long_appends),
	cmocka_unit_test(test_copy_to),
	cmocka_unit_test(test_host_long_runtime))
