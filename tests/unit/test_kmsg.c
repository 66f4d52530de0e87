/* Unit tests of src/tracer/kmsg.c: the record parser and classifier on
 * the drivers' own lines and on junk, and the reader replaying recorded
 * logs (tests/fixtures/kmsg) from a trace start at 500 s with 300 s of
 * context. */
#include "config.h"
#include "unit.h"
#include "kmsg.h"

#include <errno.h>
#include <fcntl.h>
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
	uint64_t lost;
};

static void replay_from(const char *name, uint64_t start, const struct want *w, int nw, int cap)
{
	char path[4096], why[256];
	struct gp_root root;
	struct gp_kmsg_rec recs[32];
	int got = 0, n;

	snprintf(path, sizeof path, "%s/kmsg/%s", FIXTURES, name);
	assert_int_equal(gp_root_open(&root, path), 0);
	struct gp_kmsg *k = gp_kmsg_open(&root, start, 300, why, sizeof why);
	assert_non_null(k);
	while ((n = gp_kmsg_read(k, recs, cap, why, sizeof why)) > 0) {
		assert_true(n <= cap);
		for (int i = 0; i < n; i++, got++) {
			assert_true(got < nw);
			if (!(recs[i].t > w[got].t - 1e-6 && recs[i].t < w[got].t + 1e-6))
				fail_msg("%s: record %d at %.6f s, not %.6f s", name, got, recs[i].t, w[got].t);
			assert_string_equal(recs[i].driver, w[got].driver);
			assert_string_equal(gp_kmsg_kind_name(recs[i].kind), w[got].kind);
			assert_int_equal(recs[i].pid, w[got].pid);
			assert_int_equal(recs[i].xid, w[got].xid);
			assert_int_equal(recs[i].lost, w[got].lost);
		}
	}
	assert_int_equal(n, 0);
	assert_int_equal(got, nw);
	assert_int_equal(gp_kmsg_read(k, recs, cap, why, sizeof why), 0);	/* stays at the end */
	gp_kmsg_close(k);
	gp_root_close(&root);
}

static void replay(const char *name, const struct want *w, int nw, int cap)
{
	replay_from(name, START, w, nw, cap);
}

static void test_amdgpu_ring_timeout(void **state UNUSED)
{
	static const struct want w[] = {
		{ -150, "amdkfd", "other", 0, -1, 0 },		/* HMM registered */
		{ -2, "amdkfd", "other", 0, -1, 0 },		/* runlist oversubscribed */
		{ 12.345678, "amdgpu", "ring-timeout", 0, -1, 0 },
		{ 12.34569, "amdgpu", "other", 5151, -1, 0 },	/* process information */
		{ 12.3457, "amdgpu", "gpu-reset", 0, -1, 0 },
		{ 12.4, "amdgpu", "other", 5151, -1, 0 },		/* page fault */
		{ 14, "amdgpu", "gpu-reset", 0, -1, 0 },
	};
	replay("amdgpu-ring-timeout", w, 7, 32);
	replay("amdgpu-ring-timeout", w, 7, 1);		/* one at a time */
}

static void test_nvrm_xid(void **state UNUSED)
{
	static const struct want w[] = {
		{ 3, "nvidia", "xid", 7777, 13, 0 },
		{ 3.0001, "nvidia", "xid", 7777, 13, 0 },
		{ 30, "nvidia", "xid", 0, 79, 0 },
		{ 30.0002, "nvidia", "other", 0, -1, 0 },
	};
	replay("nvrm-xid", w, 4, 3);
}

static void test_hung_task(void **state UNUSED)
{
	static const struct want w[] = {
		{ 122, "kernel", "hung-task", 7777, -1, 0 },
		{ 140, "kernel", "soft-lockup", 7778, -1, 0 },
		{ 150, "kernel", "oom", 0, -1, 0 },
		{ 150.0001, "kernel", "oom", 7777, -1, 0 },
		{ 150.0002, "kernel", "oom", 7777, -1, 0 },
	};
	replay("hung-task", w, 5, 32);
}

/* A server up 200 days whose printk clock ran 7.250123 s ahead of
 * CLOCK_MONOTONIC (tests/fixtures/kmsg/README.md): its recorded
 * sched_debug says so, and every record lands where it happened on the
 * trace's clock; read raw, the Xid would be at +10.25 s and a line from
 * 303 s before the start would pass for one from 296 s before. */
static void test_drift(void **state UNUSED)
{
	static const struct want w[] = {
		{ -2, "kernel", "hung-task", 7777, -1, 0 },
		{ 3, "nvidia", "xid", 0, 79, 0 },
	};
	replay_from("drift", 17280000000000ull, w, 2, 32);
	replay_from("drift", 17280000000000ull, w, 2, 1);
}

/* Records overwritten before they were read (gaps in SEQ): one `lost`
 * record per gap in the window, where it was found, saying how many; a
 * gap before the window is not the trace's loss. */
static void test_overrun(void **state UNUSED)
{
	static const struct want w[] = {
		{ -1, "nvidia", "xid", 7777, 13, 0 },
		{ 5, "kernel", "lost", 0, -1, 1000 },
		{ 5, "nvidia", "xid", 0, 79, 0 },
		{ 6, "kernel", "lost", 0, -1, 2 },
	};
	replay("overrun", w, 4, 32);
	replay("overrun", w, 4, 1);	/* a lost note and its record, one at a time */
	replay("overrun", w, 4, 2);

	char why[256];
	struct gp_root root;
	struct gp_kmsg_rec recs[8];
	assert_int_equal(gp_root_open(&root, FIXTURES "/kmsg/overrun"), 0);
	struct gp_kmsg *k = gp_kmsg_open(&root, START, 300, why, sizeof why);
	assert_non_null(k);
	assert_int_equal(gp_kmsg_read(k, recs, 8, why, sizeof why), 4);
	assert_int_equal(gp_kmsg_lost(k), 1002);
	json_t *j = gp_kmsg_json(&recs[1]);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "lost");
	assert_int_equal(json_integer_value(json_object_get(j, "lost")), 1000);
	assert_non_null(strstr(json_string_value(json_object_get(j, "text")), "1000 kernel-log records"));
	json_decref(j);
	j = gp_kmsg_json(&recs[2]);
	assert_null(json_object_get(j, "lost"));
	json_decref(j);
	gp_kmsg_close(k);
	gp_root_close(&root);
}

/* The kernel's statement of both clocks, and what is not one. */
static void test_clock_parse(void **state UNUSED)
{
	int64_t off = 0;

	assert_true(gp_kmsg_clock_parse("Sched Debug Version: v0.11, 6.8.0 #1\n"
					"ktime                                   : 1000.000500\n"
					"sched_clk                               : 998.000000\n"
					"cpu_clk                                 : 998.000000\n", &off));
	assert_int_equal(off, -2000);	/* 2.0005 ms behind: whole us, toward zero */
	assert_true(gp_kmsg_clock_parse("ktime : 5.000000\ncpu_clk : 5.25\n", &off));
	assert_int_equal(off, 250);
	assert_false(gp_kmsg_clock_parse("", &off));
	assert_false(gp_kmsg_clock_parse("ktime : 5.000000\n", &off));
	assert_false(gp_kmsg_clock_parse("ktime : x\ncpu_clk : 5.0\n", &off));
	assert_false(gp_kmsg_clock_parse("ktime : 5.\ncpu_clk : 5.0\n", &off));
	assert_false(gp_kmsg_clock_parse("ktime : 99999999999999999999\ncpu_clk : 5.0\n", &off));
}

/* Live: the calibration agrees with the kernel's own stamp of a record.
 * Root only (it writes one debug-level line to the kernel log, the way
 * the clock would be checked by hand): the record's time, less the
 * offset, falls between the CLOCK_MONOTONIC readings around the write. */
static void test_clock_live(void **state UNUSED)
{
	struct gp_root root;
	struct gp_kmsg_clock c;

	assert_int_equal(gp_root_open(&root, "/"), 0);
	gp_kmsg_calibrate(&root, &c);
	print_message("calibration: %s, offset %+lld us, +-%lld us%s%s\n", c.how,
		      (long long)c.offset_us, (long long)c.err_us, c.why[0] ? ": " : "", c.why);
	int fd = c.err_us >= 0 && geteuid() == 0 ? open("/dev/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1;
	if (fd < 0) {
		gp_root_close(&root);
		skip();
	}
	lseek(fd, 0, SEEK_END);
	char msg[96], want[64], buf[8192];
	snprintf(want, sizeof want, "gpuprobe test_kmsg clock check %d", (int)getpid());
	snprintf(msg, sizeof msg, "<7>%s\n", want);
	uint64_t m0 = gp_kmsg_now_us();
	ssize_t w = write(fd, msg, strlen(msg));
	uint64_t m1 = gp_kmsg_now_us();
	assert_int_equal(w, (ssize_t)strlen(msg));
	bool found = false;
	for (int i = 0; i < 2000 && !found; i++) {
		ssize_t r = read(fd, buf, sizeof buf - 1);
		if (r < 0 && errno == EAGAIN) {
			usleep(1000);
			continue;
		}
		if (r <= 0)
			continue;
		buf[r] = '\0';
		if (!strstr(buf, want))
			continue;
		struct gp_kmsg_rec rec;
		assert_true(gp_kmsg_parse(buf, (size_t)r, 0, &rec) >= 0);
		int64_t at = (int64_t)rec.ts_us - c.offset_us;
		int64_t slack = c.err_us + 50;
		print_message("record at %llu us on its clock: %+lld us from the write's [%llu, %llu]\n",
			      (unsigned long long)rec.ts_us, (long long)(at - (int64_t)m0),
			      (unsigned long long)m0, (unsigned long long)m1);
		assert_true(at >= (int64_t)m0 - slack && at <= (int64_t)m1 + slack);
		found = true;
	}
	assert_true(found);
	close(fd);
	gp_root_close(&root);
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
	cmocka_unit_test(test_drift),
	cmocka_unit_test(test_overrun),
	cmocka_unit_test(test_clock_parse),
	cmocka_unit_test(test_clock_live),
	cmocka_unit_test(test_json),
	cmocka_unit_test(test_missing))
