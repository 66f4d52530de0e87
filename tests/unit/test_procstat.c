/* procstat.c: /proc/PID/stat, syscall, status, io, wchan with hostile input. */
#include "config.h"
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "procstat.h"
#include "syscalls.h"

#include <sys/syscall.h>

/* A real line from Linux 6.18, for a thread named "w2 (x) )". */
static const char stat_hostile[] =
	"4243 (w2 (x) )) S 4242 4242 100 34816 4242 1077936192 123 0 4 0 "
	"1500 6543 0 0 20 0 41 0 65491 2654208 422 18446744073709551615 1 1 0 0 0 "
	"0 0 0 0 0 0 0 -1 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

static void test_stat_hostile_comm(void **st)
{
	struct gp_stat s;
	assert_true(gp_parse_stat(stat_hostile, &s));
	assert_int_equal(s.pid, 4243);
	assert_string_equal(s.comm, "w2 (x) )");
	assert_int_equal(s.state, 'S');
	assert_int_equal(s.ppid, 4242);
	assert_int_equal(s.minflt, 123);
	assert_int_equal(s.majflt, 4);
	assert_int_equal(s.utime, 1500);
	assert_int_equal(s.stime, 6543);
	assert_int_equal(s.num_threads, 41);
	assert_int_equal(s.starttime, 65491);
	assert_int_equal(s.rss_pages, 422);
	assert_int_equal(s.processor, 1);
}

static void test_stat_comm_with_spaces_only(void **st)
{
	struct gp_stat s;
	assert_true(gp_parse_stat("7 ( ) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99 0 0\n", &s));
	assert_string_equal(s.comm, " ");
	assert_int_equal(s.state, 'R');
	assert_int_equal(s.starttime, 99);
	assert_int_equal(s.processor, -1); /* field 39 absent: old kernel */
}

static void test_stat_truncated(void **st)
{
	struct gp_stat s;
	/* Every prefix of a valid line that stops before starttime (22) fails. */
	const char *cut = strstr(stat_hostile, "65491");
	for (size_t n = 0; stat_hostile + n < cut; n++) {
		char buf[512];
		memcpy(buf, stat_hostile, n);
		buf[n] = '\0';
		assert_false(gp_parse_stat(buf, &s));
	}
	REJECTS(gp_parse_stat, &s, "", "abc", "12 comm-without-parens S 1",
		"12 )x( S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
		"-5 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
		/* non-numeric where a number must be */
		"5 (x) S 1 2 3 4 5 6 x 8 9 10 11 12 13 14 15 16 17 18 19 20");
}

static void test_syscall(void **st)
{
	struct gp_syscall sc;
	assert_true(gp_parse_syscall("running\n", &sc));
	assert_int_equal(sc.kind, GP_SC_RUNNING);
	assert_true(gp_parse_syscall("-1 0x7ffd3c1c0f98 0x7f3b2a6e8d71\n", &sc));
	assert_int_equal(sc.kind, GP_SC_USER);
	assert_true(sc.sp == 0x7ffd3c1c0f98ull);
	assert_true(sc.pc == 0x7f3b2a6e8d71ull);
	/* ioctl(3, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, ...) as in seed 004 */
	assert_true(gp_parse_syscall("16 0x3 0xc0284b16 0x7ffd00001000 0x0 0x0 0x0 0x7ffd3c1c0f98 0x7f3b2a6e8d71\n", &sc));
	assert_int_equal(sc.kind, GP_SC_IN);
	assert_int_equal(sc.nr, 16);
	assert_int_equal(sc.args[0], 3);
	assert_true(sc.args[1] == 0xc0284b16ull);
	assert_true(sc.pc == 0x7f3b2a6e8d71ull);
	assert_false(gp_parse_syscall("16 0x3 0xc0284b16\n", &sc)); /* truncated */
	assert_false(gp_parse_syscall("", &sc));
	assert_false(gp_parse_syscall("-7 0x1 0x2", &sc));
	assert_false(gp_parse_syscall("garbage", &sc));
}

/* A timed futex wait interrupted by a stop resumes in restart_syscall
 * with its arguments gone: from the same sp and pc it continues the call
 * read before; from elsewhere, or after no call, it is left as it is. */
static void test_syscall_continued(void **st)
{
	char line[160];
	struct gp_syscall before, now;
	assert_true(gp_parse_syscall("202 0x7f0013e28 0x189 0x0 0x7f00aa10 0x0 0xffffffff 0x7f00c0 0x7f3b2a6e8d71\n",
				     &before));
	snprintf(line, sizeof line, "%ld 0x1 0x2 0x3 0x4 0x5 0x6 0x7f00c0 0x7f3b2a6e8d71\n", (long)SYS_restart_syscall);
	assert_true(gp_parse_syscall(line, &now));
	assert_true(gp_syscall_continued(&before, &now));
	assert_int_equal(now.nr, 202);
	assert_true(now.args[0] == 0x7f0013e28ull && now.args[1] == 0x189);
	/* chained: the next reading continues the one continued */
	struct gp_syscall again;
	assert_true(gp_parse_syscall(line, &again));
	assert_true(gp_syscall_continued(&now, &again));
	assert_int_equal(again.nr, 202);
	/* another sp: another call */
	snprintf(line, sizeof line, "%ld 0x1 0x2 0x3 0x4 0x5 0x6 0x7f0100 0x7f3b2a6e8d71\n", (long)SYS_restart_syscall);
	assert_true(gp_parse_syscall(line, &now));
	assert_false(gp_syscall_continued(&before, &now));
	assert_int_equal(now.nr, SYS_restart_syscall);
	/* not a restart; nothing before */
	assert_false(gp_syscall_continued(&before, &before));
	assert_true(gp_parse_syscall("running\n", &before));
	snprintf(line, sizeof line, "%ld 0x1 0x2 0x3 0x4 0x5 0x6 0x7f00c0 0x7f3b2a6e8d71\n", (long)SYS_restart_syscall);
	assert_true(gp_parse_syscall(line, &now));
	assert_false(gp_syscall_continued(&before, &now));
}

static void test_status(void **st)
{
	const char *status =
		"Name:\tllama-cli\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t1000\t1000\t1000\t1000\n"
		"VmPeak:\t 2654208 kB\nVmSize:\t 2654208 kB\nVmLck:\t       0 kB\nVmPin:\t      64 kB\n"
		"VmHWM:\t17000000 kB\nVmRSS:\t16952320 kB\nRssAnon:\t  108 kB\nRssFile:\t16952212 kB\n"
		"RssShmem:\t       0 kB\nThreads:\t41\nvoluntary_ctxt_switches:\t150\n"
		"nonvoluntary_ctxt_switches:\t7\n";
	struct gp_status_mem m;
	assert_true(gp_parse_status_mem(status, &m));
	assert_true(m.rss_file == 16952212ull * 1024);
	assert_true(m.rss_anon == 108ull * 1024);
	assert_true(m.vm_pin == 64ull * 1024);
	assert_int_equal(m.threads, 41);
	assert_int_equal(m.uid, 1000);
	assert_true(m.have & GP_HAVE_RSS_FILE);
	uint64_t v, i;
	assert_true(gp_parse_status_ctxt(status, &v, &i));
	assert_int_equal(v, 150);
	assert_int_equal(i, 7);
	/* A kernel without RssFile (pre-4.5): absent, not 0 with the bit set. */
	assert_true(gp_parse_status_mem("VmRSS:\t 100 kB\n", &m));
	assert_false(m.have & GP_HAVE_RSS_FILE);
	assert_false(gp_parse_status_mem("", &m));
	assert_false(gp_parse_status_ctxt("voluntary_ctxt_switches:\tx\n", &v, &i));
	assert_false(gp_parse_status_mem("RssFile:\tlots kB\n", &m));
}

static void test_io(void **st)
{
	struct gp_io io;
	assert_true(gp_parse_io("rchar: 17559175168\nwchar: 12\nsyscr: 4\nsyscw: 1\n"
				"read_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n", &io));
	assert_true(io.rchar == 17559175168ull);
	assert_int_equal(io.read_bytes, 4096);
	assert_false(gp_parse_io("nothing here\n", &io));
}

static void test_wchan(void **st)
{
	char w[64];
	gp_parse_wchan("futex_do_wait", w, sizeof w);
	assert_string_equal(w, "futex_do_wait");
	gp_parse_wchan("0", w, sizeof w);
	assert_string_equal(w, "");
	gp_parse_wchan("", w, sizeof w);
	assert_string_equal(w, "");
	char small[4];
	gp_parse_wchan("hrtimer_nanosleep", small, sizeof small);
	assert_string_equal(small, "hrt");
}

static void test_syscall_names(void **st)
{
	assert_string_equal(gp_syscall_name(SYS_ioctl), "ioctl");
	assert_string_equal(gp_syscall_name(SYS_futex), "futex");
	assert_null(gp_syscall_name(99999));
	char b[128];
	uint64_t a[6] = { 3, 0xc0284b16, 0, 0, 0, 0 };
	gp_syscall_describe(b, sizeof b, SYS_ioctl, a);
	assert_string_equal(b, "ioctl(fd 3, 0xc0284b16 AMDKFD_IOC_ALLOC_MEMORY_OF_GPU)");
	uint64_t f[6] = { 0x1000, 128, 0, 0, 0, 0 };
	gp_syscall_describe(b, sizeof b, SYS_futex, f);
	assert_string_equal(b, "futex(0x1000, FUTEX_WAIT_PRIVATE)");
	gp_syscall_describe(b, sizeof b, 99999, a);
	assert_string_equal(b, "syscall 99999");
}

/* The traced machine's numbering, whatever machine reads the result
 * (issue 12): x86_64 by asm/unistd_64.h, aarch64 and riscv64 by
 * asm-generic/unistd.h.  Where the build had no headers for a machine,
 * its numbers stay unnamed -- never another machine's name. */
static void expect_on(const char *machine, int64_t nr, const char *name)
{
	char b[128], want[160];
	uint64_t a[6] = { 0 };
	const char *got = gp_syscall_name_on(machine, nr);
	gp_syscall_describe_on(b, sizeof b, machine, nr, a);
	if (gp_syscall_machine_known(machine)) {
		assert_non_null(got);
		assert_string_equal(got, name);
	} else {
		assert_null(got);
		snprintf(want, sizeof want, "syscall %lld (name unknown on %s)", (long long)nr, machine);
		assert_string_equal(b, want);
	}
}

static void test_syscall_names_by_machine(void **st)
{
	expect_on("x86_64", 0, "read");
	expect_on("x86_64", 1, "write");
	expect_on("x86_64", 16, "ioctl");
	expect_on("x86_64", 202, "futex");
	expect_on("x86_64", 231, "exit_group");
	expect_on("aarch64", 63, "read");
	expect_on("aarch64", 64, "write");
	expect_on("aarch64", 29, "ioctl");
	expect_on("aarch64", 98, "futex");
	expect_on("aarch64", 25, "fcntl");       /* __NR3264_fcntl: 64-bit names */
	expect_on("aarch64", 222, "mmap");
	expect_on("aarch64", 79, "newfstatat");
	expect_on("riscv64", 63, "read");
	expect_on("riscv64", 98, "futex");
	/* On this build (x86_64 headers installed: Debian's linux-libc-dev)
	 * both tables must exist; elsewhere the contract above still holds. */
#if defined(__x86_64__)
	assert_true(gp_syscall_machine_known("x86_64"));
	assert_true(gp_syscall_machine_known("aarch64"));
#endif
	/* One number, two machines, two names: 0 is read on x86_64 and
	 * io_setup on aarch64; a number past the table has none. */
	if (gp_syscall_machine_known("x86_64") && gp_syscall_machine_known("aarch64")) {
		assert_string_equal(gp_syscall_name_on("aarch64", 0), "io_setup");
		assert_null(gp_syscall_name_on("aarch64", 500));
	}

	char b[128];
	uint64_t f[6] = { 0x1000, 128, 0, 0, 0, 0 };
	if (gp_syscall_machine_known("aarch64")) {
		gp_syscall_describe_on(b, sizeof b, "aarch64", 98, f);
		assert_string_equal(b, "futex(0x1000, FUTEX_WAIT_PRIVATE)");
		gp_syscall_describe_on(b, sizeof b, "aarch64", 99999, f);
		assert_string_equal(b, "syscall 99999");
	}
	/* A machine with no table: the number, and why it has no name. */
	if (strcmp(gp_syscall_this_machine(), "ppc64le") != 0) {
		assert_false(gp_syscall_machine_known("ppc64le"));
		assert_null(gp_syscall_name_on("ppc64le", 3));
		gp_syscall_describe_on(b, sizeof b, "ppc64le", 3, f);
		assert_string_equal(b, "syscall 3 (name unknown on ppc64le)");
	}
	/* A result that does not record its machine ("" from the loader). */
	assert_false(gp_syscall_machine_known(""));
	gp_syscall_describe_on(b, sizeof b, "", 16, f);
	assert_string_equal(b, "syscall 16 (name unknown: machine not recorded)");
	/* NULL is the running machine: the live paths. */
	assert_true(gp_syscall_machine_known(NULL));
	assert_string_equal(gp_syscall_name_on(NULL, SYS_read), "read");
}

UNIT_MAIN(
	cmocka_unit_test(test_stat_hostile_comm),
	cmocka_unit_test(test_stat_comm_with_spaces_only),
	cmocka_unit_test(test_stat_truncated),
	cmocka_unit_test(test_syscall),
	cmocka_unit_test(test_syscall_continued),
	cmocka_unit_test(test_status),
	cmocka_unit_test(test_io),
	cmocka_unit_test(test_wchan),
	cmocka_unit_test(test_syscall_names),
	cmocka_unit_test(test_syscall_names_by_machine))
