/* src/sysread/sysinfo.c: vmstat fields by name (unknown kept, missing absent),
 * meminfo in bytes, pressure lines. */
#include "config.h"
#include "unit.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sysinfo.h"

static void test_vmstat(void **st)
{
	json_t *o = json_object();
	struct gp_sys_compact c;
	memset(&c, 0, sizeof c);
	gp_vmstat_parse("nr_free_pages 1012388\nnr_dirtied 5000\nnr_written 4990\n"
			"nr_some_future_field 7\nbroken_line\nnr_bad abc\npgsteal_file 12\n", o, &c);
	assert_int_equal(json_integer_value(json_object_get(o, "nr_free_pages")), 1012388);
	assert_int_equal(json_integer_value(json_object_get(o, "nr_some_future_field")), 7);
	assert_null(json_object_get(o, "nr_bad"));
	assert_null(json_object_get(o, "broken_line"));
	assert_true(c.have_dirtied && c.have_written && c.have_pgsteal_file);
	assert_int_equal(c.nr_dirtied, 5000);
	assert_int_equal(c.nr_written, 4990);
	json_decref(o);

	/* A kernel without pgsteal_file: absent, and said so. */
	o = json_object();
	memset(&c, 0, sizeof c);
	gp_vmstat_parse("nr_dirtied 1\n", o, &c);
	assert_null(json_object_get(o, "pgsteal_file"));
	assert_false(c.have_pgsteal_file);
	assert_false(c.have_written);
	json_decref(o);
}

static void test_meminfo(void **st)
{
	json_t *o = json_object();
	struct gp_sys_compact c;
	memset(&c, 0, sizeof c);
	gp_meminfo_parse("MemTotal:       24601234 kB\nMemAvailable:    5242880 kB\n"
			 "HugePages_Total:       0\nHugepagesize:       2048 kB\n"
			 "DirectMap1G:    junk kB\n", o, &c);
	assert_true(json_integer_value(json_object_get(o, "MemAvailable")) == 5242880ll * 1024);
	assert_int_equal(json_integer_value(json_object_get(o, "HugePages_Total")), 0);
	assert_null(json_object_get(o, "DirectMap1G"));
	assert_true(c.have_mem_available);
	assert_true(c.mem_available == 5242880ull * 1024);
	json_decref(o);
}

static void test_psi(void **st)
{
	json_t *p = gp_psi_parse("some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
				 "full avg10=0.00 avg60=0.00 avg300=0.00 total=42\n");
	assert_non_null(p);
	json_t *some = json_object_get(p, "some");
	assert_true(json_real_value(json_object_get(some, "avg10")) > 1.49);
	assert_int_equal(json_integer_value(json_object_get(some, "total")), 123456);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "full"), "total")), 42);
	json_decref(p);
	/* cpu pressure on older kernels has only "some" */
	p = gp_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	assert_non_null(p);
	assert_null(json_object_get(p, "full"));
	json_decref(p);
	assert_null(gp_psi_parse(""));
	assert_null(gp_psi_parse("garbage\n"));
	assert_null(gp_psi_parse("some =1 avg10\n"));
}

static void test_reader_replay(void **st)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, FIXTURES "/proc-spinner"), 0);
	struct gp_sys_reader *r = gp_sys_reader_new(&root);
	assert_non_null(r);
	struct gp_sys_compact c;
	json_t *vm = gp_sys_read(r, &c);
	assert_non_null(json_object_get(vm, "vmstat"));
	assert_non_null(json_object_get(vm, "meminfo"));
	assert_true(c.have_dirtied);
	json_decref(vm);
	json_t *h = gp_host_facts(&root);
	assert_non_null(json_object_get(h, "kernel"));
	json_decref(h);
	gp_sys_reader_free(r);
	gp_root_close(&root);
}

UNIT_MAIN(
	cmocka_unit_test(test_vmstat),
	cmocka_unit_test(test_meminfo),
	cmocka_unit_test(test_psi),
	cmocka_unit_test(test_reader_replay))
