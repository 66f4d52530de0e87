/* xmaps.c: which pcs are JIT code (issue 20: node's JIT frames printed as
 * node+0x7ff29afc6d84).  Lines as /proc/PID/maps of a real node 20
 * process shows them: node's own file mapped low and again high (its
 * remapped builtins), V8's anonymous rwx code space in between. */
#include "config.h"
#include "unit.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmaps.h"

static void test_lines(void **st UNUSED)
{
	struct gp_xmap m;
	assert_true(gp_maps_line_exec("00b72000-025fe000 r-xp 00772000 fe:00 247823                             /usr/bin/node", &m));
	assert_true(m.file);
	assert_int_equal(m.lo, 0xb72000);
	assert_int_equal(m.hi, 0x25fe000);
	assert_true(gp_maps_line_exec("7f7f937c3000-7f7f937ff000 rwxp 00000000 00:00 0 ", &m));
	assert_false(m.file);
	assert_true(gp_maps_line_exec("7f7f937c3000-7f7f937ff000 rwxp 00000000 00:00 0", &m));
	assert_false(m.file);
	assert_true(gp_maps_line_exec("7f0000000000-7f0000001000 r-xp 00000000 00:00 0    [anon:v8 code]", &m));
	assert_false(m.file);
	assert_true(gp_maps_line_exec("7f0000000000-7f0000001000 r-xp 00000000 00:01 12   /memfd:doublemapper (deleted)", &m));
	assert_false(m.file);
	assert_true(gp_maps_line_exec("7ffd0000000-7ffd0002000 r-xp 00000000 00:00 0      [vdso]", &m));
	assert_true(m.file);
	assert_true(gp_maps_line_exec("7f0000000000-7f0000001000 r-xp 00001000 fe:00 99   /opt/my app/lib x.so", &m));
	assert_true(m.file);
	assert_true(gp_maps_line_exec("7f0000000000-7f0000001000 r-xp 00001000 fe:00 99   /usr/lib/libfoo.so (deleted)", &m));
	assert_true(m.file);
	/* not executable, not a line */
	assert_false(gp_maps_line_exec("00400000-00b6f000 r--p 00000000 fe:00 247823 /usr/bin/node", &m));
	assert_false(gp_maps_line_exec("", &m));
	assert_false(gp_maps_line_exec("garbage", &m));
	assert_false(gp_maps_line_exec("2000-1000 r-xp 0 0:0 0", &m));
	assert_false(gp_maps_line_exec("1000-2000 r 0 0:0 0", &m));
}

static void test_is_jit(void **st UNUSED)
{
	struct gp_xmap m[] = {
		{ 0xb72000, 0x25fe000, true },
		{ 0x7f7f937c3000, 0x7f7f937ff000, false },
		{ 0x7f7fb3600000, 0x7f7fb3792000, true },
	};
	struct gp_xmaps x = { m, 3, 3 };
	assert_false(gp_xmaps_is_jit(&x, 0xb72000));
	assert_true(gp_xmaps_is_jit(&x, 0x7f7f937c3000));
	assert_true(gp_xmaps_is_jit(&x, 0x7f7f937fefff));
	assert_false(gp_xmaps_is_jit(&x, 0x7f7f937ff000)); /* just past it: no mapping, not said JIT */
	assert_false(gp_xmaps_is_jit(&x, 0x7f7fb3600010));
	assert_false(gp_xmaps_is_jit(&x, 0));
	struct gp_xmaps none = { 0 };
	assert_false(gp_xmaps_is_jit(&none, 0x7f7f937c3000));
}

/* This very process: its code is in a file, its stack is not executable. */
static void test_self(void **st UNUSED)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, "/"), 0);
	struct gp_xmaps x = { 0 };
	assert_int_equal(gp_xmaps_read(&root, getpid(), &x), 0);
	assert_true(x.n > 0);
	assert_false(gp_xmaps_is_jit(&x, (uint64_t)(uintptr_t)&test_self));
	gp_xmaps_free(&x);
	gp_root_close(&root);
}

UNIT_MAIN(
	cmocka_unit_test(test_lines),
	cmocka_unit_test(test_is_jit),
	cmocka_unit_test(test_self))
