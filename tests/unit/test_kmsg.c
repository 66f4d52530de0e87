/* Unit tests of src/tracer/kmsg.c: the record parser and classifier on
 * the drivers' own lines and on junk, and the reader replaying recorded
 * logs (tests/fixtures/kmsg) from a trace start at 500 s with 300 s of
 * context. */
#include "config.h"
#include "unit.h"
#include "kmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif

#define START 500000000ull

static int parse(const char *rec, struct gp_kmsg_rec *r)
{
	return gp_kmsg_parse(rec, strlen(rec), START, r);
}

static void test_parse(void **state UNUSED)
{
	struct gp_kmsg_rec r;

	assert_int_equal(parse("3,1234,512345678,-;[drm:amdgpu_job_timedout [amdgpu]] *ERROR* "
			       "ring gfx_0.0.0 timeout, signaled seq=1, emitted seq=3\n"
			       " SUBSYSTEM=pci\n", &r), 1);
	assert_string_equal(r.driver, "amdgpu");
	assert_string_equal(gp_kmsg_kind_name(r.kind), "ring-timeout");
	assert_int_equal(r.level, 3);
	assert_int_equal(r.seq, 1234);
	assert_true(r.t > 12.345 && r.t < 12.346);
	assert_null(strchr(r.text, '\n'));	/* dictionary not in the text */

	assert_int_equal(parse("4,1,499000000,-;NVRM: Xid (PCI:0000:9a:00): 79, pid=7777, "
			       "name=python3, GPU has fallen off the bus.", &r), 1);
	assert_string_equal(r.driver, "nvidia");
	assert_int_equal(r.kind, GP_KMSG_XID);
	assert_int_equal(r.xid, 79);
	assert_int_equal(r.pid, 7777);
	assert_true(r.t < -0.99 && r.t > -1.01);

	assert_int_equal(parse("3,2,1,-;INFO: task kworker/u8:2:123 blocked for more than 120 seconds.", &r), 1);
	assert_int_equal(r.kind, GP_KMSG_HUNG_TASK);
	assert_string_equal(r.driver, "kernel");
	assert_int_equal(r.pid, 123);
	assert_int_equal(parse("0,2,1,-;watchdog: BUG: soft lockup - CPU#3 stuck for 26s! [python3:77]", &r), 1);
	assert_int_equal(r.kind, GP_KMSG_SOFT_LOCKUP);
	assert_int_equal(r.pid, 77);
	assert_int_equal(parse("3,2,1,-;Out of memory: Killed process 42 (python3) total-vm:1kB", &r), 1);
	assert_int_equal(r.kind, GP_KMSG_OOM);
	assert_int_equal(r.pid, 42);
	assert_int_equal(parse("6,2,1,-;amdgpu 0000:03:00.0: amdgpu: GPU reset begin!", &r), 1);
	assert_int_equal(r.kind, GP_KMSG_GPU_RESET);
	assert_int_equal(parse("6,2,1,-;kfd kfd: amdgpu: added device 1002:744c", &r), 1);
	assert_string_equal(r.driver, "amdkfd");
	assert_int_equal(parse("6,2,1,-;i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in Xorg [977]", &r), 1);
	assert_string_equal(r.driver, "i915");
	assert_int_equal(r.kind, GP_KMSG_RING_TIMEOUT);
	assert_int_equal(parse("6,2,1,-;nouveau 0000:01:00.0: fifo: SCHED_ERROR 0a [CTXSW_TIMEOUT]", &r), 1);
	assert_string_equal(r.driver, "nouveau");
	assert_int_equal(r.kind, GP_KMSG_OTHER);

	/* The H200's own lines (flags "c": a continued record). */
	assert_int_equal(parse("4,357,2131641,c;NVRM: gpuClearFbhubPoisonIntrForBug2924523_GA100: "
			       "FBHUB Interrupt detected. Clearing it.", &r), 1);
	assert_string_equal(r.driver, "nvidia");
	assert_int_equal(parse("6,355,1181428,-;nvidia-nvlink: Nvlink Core is being initialized", &r), 1);
	assert_string_equal(r.driver, "nvidia");
	/* Other subsystems: not kept. */
	assert_int_equal(parse("6,2,1,-;usb 1-4: new high-speed USB device", &r), 0);
	assert_int_equal(parse("6,2,1,-;EXT4-fs (sda1): mounted filesystem", &r), 0);
	/* Not records. */
	assert_int_equal(parse("", &r), -1);
	assert_int_equal(parse("garbage", &r), -1);
	assert_int_equal(parse("6,1,2;NVRM: no flags field", &r), -1);
	assert_int_equal(parse("6,1,2,-NVRM: no semicolon", &r), -1);
	assert_int_equal(parse("6,1,99999999999999999999999,-;NVRM: x", &r), -1);
	/* Bytes that are not printable ASCII never reach the text. */
	assert_int_equal(parse("6,1,2,-;NVRM: \x01\xff\xc3\xa9 odd", &r), 1);
	for (const char *p = r.text; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
	/* An Xid whose pid is '<unknown>' has none. */
	assert_int_equal(parse("4,1,2,-;NVRM: Xid (PCI:0000:9a:00): 79, pid='<unknown>', name=<unknown>, x", &r), 1);
	assert_int_equal(r.pid, 0);
	assert_int_equal(r.xid, 79);
}

struct want {
	double t;
	const char *driver, *kind;
	int pid, xid;
};

static void replay(const char *name, const struct want *w, int nw, int cap)
{
	char path[4096], why[256];
	struct gp_root root;
	struct gp_kmsg_rec recs[32];
	int got = 0, n;

	snprintf(path, sizeof path, "%s/kmsg/%s", FIXTURES, name);
	assert_int_equal(gp_root_open(&root, path), 0);
	struct gp_kmsg *k = gp_kmsg_open(&root, START, 300, why, sizeof why);
	assert_non_null(k);
	while ((n = gp_kmsg_read(k, recs, cap, why, sizeof why)) > 0) {
		for (int i = 0; i < n; i++, got++) {
			assert_true(got < nw);
			assert_true(recs[i].t > w[got].t - 1e-6 && recs[i].t < w[got].t + 1e-6);
			assert_string_equal(recs[i].driver, w[got].driver);
			assert_string_equal(gp_kmsg_kind_name(recs[i].kind), w[got].kind);
			assert_int_equal(recs[i].pid, w[got].pid);
			assert_int_equal(recs[i].xid, w[got].xid);
		}
	}
	assert_int_equal(n, 0);
	assert_int_equal(got, nw);
	assert_int_equal(gp_kmsg_read(k, recs, cap, why, sizeof why), 0);	/* stays at the end */
	gp_kmsg_close(k);
	gp_root_close(&root);
}

static void test_amdgpu_ring_timeout(void **state UNUSED)
{
	static const struct want w[] = {
		{ -150, "amdkfd", "other", 0, -1 },		/* HMM registered */
		{ -2, "amdkfd", "other", 0, -1 },		/* runlist oversubscribed */
		{ 12.345678, "amdgpu", "ring-timeout", 0, -1 },
		{ 12.34569, "amdgpu", "other", 5151, -1 },	/* process information */
		{ 12.3457, "amdgpu", "gpu-reset", 0, -1 },
		{ 12.4, "amdgpu", "other", 5151, -1 },		/* page fault */
		{ 14, "amdgpu", "gpu-reset", 0, -1 },
	};
	replay("amdgpu-ring-timeout", w, 7, 32);
	replay("amdgpu-ring-timeout", w, 7, 1);		/* one at a time */
}

static void test_nvrm_xid(void **state UNUSED)
{
	static const struct want w[] = {
		{ 3, "nvidia", "xid", 7777, 13 },
		{ 3.0001, "nvidia", "xid", 7777, 13 },
		{ 30, "nvidia", "xid", 0, 79 },
		{ 30.0002, "nvidia", "other", 0, -1 },
	};
	replay("nvrm-xid", w, 4, 3);
}

static void test_hung_task(void **state UNUSED)
{
	static const struct want w[] = {
		{ 122, "kernel", "hung-task", 7777, -1 },
		{ 140, "kernel", "soft-lockup", 7778, -1 },
		{ 150, "kernel", "oom", 0, -1 },
		{ 150.0001, "kernel", "oom", 7777, -1 },
		{ 150.0002, "kernel", "oom", 7777, -1 },
	};
	replay("hung-task", w, 5, 32);
}

static void test_json(void **state UNUSED)
{
	struct gp_kmsg_rec r;

	assert_int_equal(parse("4,1,503000000,-;NVRM: Xid (PCI:0000:9a:00): 13, pid=7777, name=python3, x", &r), 1);
	json_t *j = gp_kmsg_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "kmsg");
	assert_true(json_real_value(json_object_get(j, "t")) == 3.0);
	assert_string_equal(json_string_value(json_object_get(j, "driver")), "nvidia");
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "xid");
	assert_int_equal(json_integer_value(json_object_get(j, "xid")), 13);
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), 7777);
	assert_int_equal(json_integer_value(json_object_get(j, "level")), 4);
	assert_non_null(strstr(json_string_value(json_object_get(j, "text")), "Xid"));
	json_decref(j);
}

/* No log at all, and the live one: either it reads, or it says what is
 * missing. */
static void test_missing(void **state UNUSED)
{
	char why[256] = "";
	struct gp_root root;
	struct gp_kmsg_rec recs[8];

	assert_int_equal(gp_root_open(&root, FIXTURES "/gpuact/none"), 0);
	assert_null(gp_kmsg_open(&root, START, 300, why, sizeof why));
	assert_non_null(strstr(why, "dev/kmsg"));
	gp_root_close(&root);

	assert_int_equal(gp_root_open(&root, "/"), 0);
	struct gp_kmsg *k = gp_kmsg_open(&root, gp_kmsg_now_us(), 300, why, sizeof why);
	if (!k) {
		assert_non_null(strstr(why, "/dev/kmsg"));
		if (errno == EPERM || errno == EACCES)
			assert_non_null(strstr(why, "CAP_SYSLOG"));
	} else {
		assert_true(gp_kmsg_read(k, recs, 8, why, sizeof why) >= 0);
		gp_kmsg_close(k);
	}
	gp_root_close(&root);
}

UNIT_MAIN(
	cmocka_unit_test(test_parse),
	cmocka_unit_test(test_amdgpu_ring_timeout),
	cmocka_unit_test(test_nvrm_xid),
	cmocka_unit_test(test_hung_task),
	cmocka_unit_test(test_json),
	cmocka_unit_test(test_missing))
