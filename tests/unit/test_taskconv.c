/* taskconv.c: the BPF path's raw values turned into what /proc prints
 * (issue 30), case by case against the kernel's own rules. */
#include "config.h"
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "taskconv.h"

/* kernel/sched/cputime.c cputime_adjust: the split and its clamps. */
static void test_cputime_adjust(void **st)
{
	struct gp_cputime prev = { 0, 0 };
	uint64_t ut, stm;
	/* stime 0: all of rtime is user time */
	gp_cputime_adjust(1000, 40, 0, &prev, &ut, &stm);
	assert_int_equal(ut, 1000);
	assert_int_equal(stm, 0);
	/* the ratio 1:3 of 2000, but stime never goes back below 0 and
	 * utime never below the 1000 reported: stime = 2000 - 1000 */
	gp_cputime_adjust(2000, 10, 30, &prev, &ut, &stm);
	assert_int_equal(ut, 1000);
	assert_int_equal(stm, 1000);
	/* rtime not past what was reported: the last answer again */
	gp_cputime_adjust(1500, 10, 30, &prev, &ut, &stm);
	assert_int_equal(ut, 1000);
	assert_int_equal(stm, 1000);
	/* a fresh thread at 1:3 of 4000 */
	struct gp_cputime p2 = { 0, 0 };
	gp_cputime_adjust(4000, 10, 30, &p2, &ut, &stm);
	assert_int_equal(stm, 3000);
	assert_int_equal(ut, 1000);
	/* utime 0: all of it system time */
	struct gp_cputime p3 = { 0, 0 };
	gp_cputime_adjust(7, 0, 5, &p3, &ut, &stm);
	assert_int_equal(stm, 7);
	assert_int_equal(ut, 0);
	/* exact where 64 bits would overflow: mul_u64_u64_div_u64 */
	struct gp_cputime p4 = { 0, 0 };
	uint64_t big = 3ull << 60;
	gp_cputime_adjust(big, big / 3, big / 3, &p4, &ut, &stm);
	assert_true(stm == big / 2);
	assert_true(ut == big - big / 2);
}

/* task_state_index() over __state | exit_state, "RSDTtXZPI". */
static void test_state_letters(void **st)
{
	assert_int_equal(gp_task_state_char(0, 0), 'R');
	assert_int_equal(gp_task_state_char(0x1, 0), 'S');
	assert_int_equal(gp_task_state_char(0x2, 0), 'D');
	assert_int_equal(gp_task_state_char(0x4, 0), 'T');
	assert_int_equal(gp_task_state_char(0x8, 0), 't');
	assert_int_equal(gp_task_state_char(0x80, 0x10), 'X');
	assert_int_equal(gp_task_state_char(0x80, 0x20), 'Z');
	assert_int_equal(gp_task_state_char(0x40, 0), 'P');
	/* TASK_IDLE (UNINTERRUPTIBLE | NOLOAD): I, not D */
	assert_int_equal(gp_task_state_char(0x402, 0), 'I');
	/* TASK_KILLABLE (WAKEKILL | UNINTERRUPTIBLE): D */
	assert_int_equal(gp_task_state_char(0x102, 0), 'D');
	/* TASK_FREEZABLE | INTERRUPTIBLE: S; frozen or an rtlock wait: D */
	assert_int_equal(gp_task_state_char(0x2001, 0), 'S');
	assert_int_equal(gp_task_state_char(0x8000, 0), 'D');
	assert_int_equal(gp_task_state_char(0x1000, 0), 'D');
	/* TASK_WAKING alone reports R (outside TASK_REPORT) */
	assert_int_equal(gp_task_state_char(0x200, 0), 'R');
}

static void test_ticks(void **st)
{
	assert_int_equal(gp_ns_to_ticks(0, 100), 0);
	assert_int_equal(gp_ns_to_ticks(9999999, 100), 0);
	assert_int_equal(gp_ns_to_ticks(10000000, 100), 1);
	assert_int_equal(gp_ns_to_ticks(158335227, 100), 15);
	assert_int_equal(gp_ns_to_ticks(1000000000, 250), 250);
}

static struct gp_taskiter_rec sleeper(void)
{
	struct gp_taskiter_rec r;
	memset(&r, 0, sizeof r);
	r.tid = 4243;
	r.flags = GP_TI_REGS | GP_TI_WCHAN;
	r.state = 1;
	r.cpu = 3;
	r.ppid = 1;
	r.nr_threads = 41;
	memcpy(r.comm, "sixteen-bytes-xx", 16); /* no NUL: comm fills TASK_COMM_LEN */
	r.utime = 4000000;
	r.stime = 172000000;
	r.sum_exec = 161990204;
	r.run_delay = 64443000;
	r.pcount = 7341;
	r.nvcsw = 2;
	r.nivcsw = 7339;
	r.min_flt = 10824;
	r.start_boottime = 35339173133382ull;
	r.orig_ax = 202;
	r.args[0] = 0x560e31d2a148;
	r.args[1] = 0x189;
	r.sp = 0x7ffdf41bd700;
	r.ip = 0x7f90c1ae0301;
	snprintf(r.wchan, sizeof r.wchan, "futex_wait_queue");
	return r;
}

/* What /proc/PID/task/TID/stat said of the same thread (Linux 6.18):
 * utime 0 and stime 15 ticks, start 3533917. */
static void test_thread(void **st)
{
	struct gp_taskiter_rec r = sleeper();
	struct gp_cputime prev = { 0, 0 };
	struct gp_thread th;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.tid, 4243);
	assert_string_equal(th.st.comm, "sixteen-bytes-xx");
	assert_int_equal(th.st.state, 'S');
	assert_int_equal(th.st.utime, 0);
	assert_int_equal(th.st.stime, 15);
	assert_int_equal(th.st.starttime, 3533917);
	assert_int_equal(th.st.processor, 3);
	assert_int_equal(th.st.minflt, 10824);
	assert_int_equal(th.vcsw, 2);
	assert_int_equal(th.nvcsw, 7339);
	assert_true(th.have_ctxt && th.have_sched && th.have_wchan);
	assert_int_equal(th.run_ns, 161990204);
	assert_int_equal(th.wait_ns, 64443000);
	assert_int_equal(th.pcount, 7341);
	assert_string_equal(th.wchan, "futex_wait_queue");
	assert_int_equal(th.sc.kind, GP_SC_IN);
	assert_int_equal(th.sc.nr, 202);
	assert_true(th.sc.args[0] == 0x560e31d2a148 && th.sc.args[1] == 0x189);
	assert_true(th.sc.sp == 0x7ffdf41bd700 && th.sc.pc == 0x7f90c1ae0301);
}

/* The later prev_cputime of the two stands: a /proc reader (top) told
 * 160 ms system, 2 ms user since gpuprobe last computed it. */
static void test_kernel_prev(void **st)
{
	struct gp_taskiter_rec r = sleeper();
	r.prev_stime = 160000000;
	r.prev_utime = 1990204;
	struct gp_cputime prev = { 1000, 1000 };
	struct gp_thread th;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.st.stime, 16);
	assert_int_equal(th.st.utime, 0);
	assert_true(prev.stime == 160000000 && prev.utime == 1990204);
}

/* syscall and wchan as /proc prints them in each case. */
static void test_syscall_wchan(void **st)
{
	struct gp_taskiter_rec r = sleeper();
	struct gp_cputime prev = { 0, 0 };
	struct gp_thread th;
	/* running: "running", and wchan "0" */
	r.state = 0;
	r.flags = GP_TI_REGS;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.sc.kind, GP_SC_RUNNING);
	assert_string_equal(th.wchan, "");
	assert_true(th.have_wchan);
	/* asleep outside a call: "-1 sp pc" */
	r = sleeper();
	r.orig_ax = -1;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.sc.kind, GP_SC_USER);
	assert_int_equal(th.sc.nr, -1);
	assert_true(th.sc.sp == r.sp && th.sc.pc == r.ip && th.sc.args[0] == 0);
	/* no kernel stack (a zombie leader): "-1 0x0 0x0" */
	r = sleeper();
	r.flags = 0;
	r.state = 0x80;
	r.exit_state = 0x20;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.st.state, 'Z');
	assert_int_equal(th.sc.kind, GP_SC_USER);
	assert_true(th.sc.sp == 0 && th.sc.pc == 0);
	assert_string_equal(th.wchan, "");
	/* a negative nr other than -1: what gp_parse_syscall refuses */
	r = sleeper();
	r.orig_ax = -38;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.sc.kind, GP_SC_UNKNOWN);
	/* nr printed as an int */
	r.orig_ax = 0x100000000ll + 7;
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(th.sc.nr, 7);
	/* a module's symbol: "%ps" says "name [module]", wchan "name" */
	r = sleeper();
	snprintf(r.wchan, sizeof r.wchan, "amdgpu_fence_wait [amdgpu]");
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_string_equal(th.wchan, "amdgpu_fence_wait");
	/* 64 bytes without a NUL stay within the record */
	memset(r.wchan, 'x', sizeof r.wchan);
	gp_taskconv_thread(&r, 100, &prev, &th);
	assert_int_equal(strlen(th.wchan), sizeof th.wchan - 1);
}

UNIT_MAIN(cmocka_unit_test(test_cputime_adjust),
	  cmocka_unit_test(test_state_letters),
	  cmocka_unit_test(test_ticks),
	  cmocka_unit_test(test_thread),
	  cmocka_unit_test(test_kernel_prev),
	  cmocka_unit_test(test_syscall_wchan))
