/* pyframes against a hostile interpreter (issue 18, item 7): the fake
 * CPython 3.13 of tests/workloads/pyhostile.c, a live process, read with
 * gp_py_* the way stacks.c reads a real one (refresh, begin, each
 * thread's chain, resolve, the JSON).  This test and its own copy of
 * pyframes.c are built with ASan and UBSan whenever the compiler can
 * (configure: TEST_SAN_CFLAGS), so a read past one of pyframes' buffers
 * fails it even where it would not fault.
 *
 * Each case: no read out of bounds; the whole read in under 2 s; hostile
 * debug offsets refused whole, with the reason in the "python" "error";
 * looping or overlong lists refused or cut; the code-object cache within
 * its bound while 6144 code objects go through it.  A valid fake first,
 * so that a refusal is known to come from the hostile part. */
#include "config.h"
#include "pyframes.h"

#include "unit.h"

#include <elfutils/libdwfl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void gp_py_code_cache(const struct gp_py *py, size_t *n, size_t *bytes);

#define FAKE WORKLOADS "/python3.13-hostile"
/* The bound on one read of a hostile fake (before: 22 s for ts-cycle). */
#define MAX_SECS 2.0
/* pyframes.c's cache bound (CODE_MAX, CODE_BYTES) */
#define CODE_MAX 4096
#define CODE_BYTES (32u << 20)

struct fake {
	int pid;
	int tids[64];
	size_t ntids;
};

/* Starts the fake with argv (MODE, FIELD=VALUE...) and waits for its
 * "ready TID..." line. */
static void fake_start(struct fake *f, const char *const *argv)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	const char *args[16] = { FAKE };
	size_t n = 1;
	for (; argv[n - 1] && n < 15; n++)
		args[n] = argv[n - 1];
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(FAKE, (char *const *)args);
		_exit(127);
	}
	close(p[1]);
	FILE *in = fdopen(p[0], "r");
	assert_non_null(in);
	char line[4096];
	if (!fgets(line, sizeof line, in) || strncmp(line, "ready", 5))
		fail_msg("%s %s: no ready line", FAKE, argv[0]);
	fclose(in);
	f->ntids = 0;
	char *s = line + 5, *end;
	long t;
	while (f->ntids < 64 && (t = strtol(s, &end, 10)) > 0 && end != s) {
		f->tids[f->ntids++] = (int)t;
		s = end;
	}
	assert_true(f->ntids > 0);
}

static void fake_stop(struct fake *f)
{
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
}

/* What one read of the fake gave. */
struct seen {
	json_t *info;          /* gp_py_info, as the line writes it */
	const char *error;     /* its "error", or NULL */
	size_t states;         /* threads with a Python thread state */
	size_t frames, named;  /* frames read, and with a function name */
	bool truncated;        /* some chain was cut */
	size_t max_cached, max_bytes; /* the code-object cache at its fullest */
	double secs;
};

typedef void each_fn(const struct fake *f, size_t i, const struct gp_pythread *pt);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One snapshot's worth of pyframes, as stacks.c does it (without the
 * stops: the fake's memory holds still). */
static void read_fake(const struct fake *f, struct seen *out, each_fn *each)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cbs = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	memset(out, 0, sizeof *out);
	double t0 = now();
	Dwfl *dwfl = dwfl_begin(&cbs);
	assert_non_null(dwfl);
	dwfl_report_begin(dwfl);
	assert_int_equal(dwfl_linux_proc_report(dwfl, f->pid), 0);
	assert_int_equal(dwfl_report_end(dwfl, NULL, NULL), 0);
	struct gp_py *py = gp_py_open(f->pid);
	assert_non_null(py);
	gp_py_refresh(py, dwfl);
	gp_py_begin(py);
	for (size_t i = 0; i < f->ntids; i++) {
		struct gp_pythread *pt = gp_py_read_thread(py, f->tids[i]);
		if (!pt)
			continue;
		out->states++;
		gp_py_resolve(py, pt);
		size_t n, bytes;
		gp_py_code_cache(py, &n, &bytes);
		if (n > out->max_cached)
			out->max_cached = n;
		if (bytes > out->max_bytes)
			out->max_bytes = bytes;
		out->frames += pt->n;
		out->truncated |= pt->truncated;
		for (size_t k = 0; k < pt->n; k++)
			out->named += pt->f[k].function != NULL;
		/* The JSON of its frames, as model/stackline.c writes it. */
		size_t next = 0;
		json_t *g;
		while ((g = gp_pygroup_json(pt, next))) {
			next = gp_pythread_group_end(pt, next);
			json_decref(g);
		}
		if (each)
			each(f, i, pt);
		free(pt);
	}
	struct gp_pyinfo pi;
	out->info = gp_py_info(py, &pi) ? gp_pyinfo_json(&pi) : NULL;
	out->secs = now() - t0;
	gp_py_close(py);
	dwfl_end(dwfl);
	assert_non_null(out->info);
	out->error = json_string_value(json_object_get(out->info, "error"));
}

static void run_within(const char *const *argv, struct seen *out, each_fn *each, double max)
{
	struct fake f;
	fake_start(&f, argv);
	read_fake(&f, out, each);
	fake_stop(&f);
	if (out->secs >= max)
		fail_msg("%s: read in %.2f s (at most %.1f)", argv[0], out->secs, max);
}

static void run(const char *const *argv, struct seen *out, each_fn *each)
{
	run_within(argv, out, each, MAX_SECS);
}

static void expect_error(const struct seen *s, const char *want)
{
	if (!s->error || !strstr(s->error, want))
		fail_msg("python error \"%s\", want one with \"%s\"", s->error ? s->error : "(none)", want);
	assert_int_equal(s->states, 0);
}

/* ---- a valid fake: read like CPython ---------------------------------- */

static void each_valid(const struct fake *f, size_t i, const struct gp_pythread *pt)
{
	(void)f;
	(void)i;
	assert_int_equal(pt->n, 3);
	assert_false(pt->truncated);
	for (size_t k = 0; k < 3; k++) {
		char want[8];
		snprintf(want, sizeof want, "f%zu", k);
		assert_non_null(pt->f[k].function);
		assert_string_equal(pt->f[k].function, want);
		assert_string_equal(pt->f[k].file, "hostile.py");
		assert_int_equal(pt->f[k].line, (int)k + 1);
	}
}

static void test_valid(void **state UNUSED)
{
	static const char *const argv[] = { "valid", NULL };
	struct seen s;
	run(argv, &s, each_valid);
	assert_null(s.error);
	assert_string_equal(json_string_value(json_object_get(s.info, "version")), "3.13.0");
	assert_int_equal(json_integer_value(json_object_get(s.info, "threads")), 3);
	assert_int_equal(s.states, 3);
	json_decref(s.info);
}

/* ---- hostile debug offsets: refused whole, with the reason ------------ */

static const struct {
	const char *set, *reason;
} offsets[] = {
	/* Before the checks: a fault (SIGBUS) at the first thread state. */
	{ "thread_state.next=0x10000000000",
	  "thread_state.next = 1099511627776 (+8 bytes) lies past thread_state.size = 304" },
	/* Before: reads past a 512-byte stack buffer (ASan, UBSan). */
	{ "thread_state.native_thread_id=4000",
	  "thread_state.native_thread_id = 4000 (+8 bytes) lies past thread_state.size = 304" },
	{ "interpreter_frame.previous=1000",
	  "interpreter_frame.previous = 1000 (+8 bytes) lies past interpreter_frame.size = 80" },
	{ "interpreter_frame.executable=700", "interpreter_frame.executable = 700" },
	{ "code_object.filename=3000", "code_object.filename = 3000" },
	{ "pyobject.ob_type=5000", "pyobject.ob_type = 5000 (+8 bytes) lies past pyobject.size = 16" },
	{ "unicode_object.length=300", "unicode_object.length = 300" },
	{ "bytes_object.ob_size=100", "bytes_object.ob_size = 100 (+8 bytes) lies past bytes_object.size = 40" },
	/* Before: read garbage or nothing, without an error. */
	{ "interpreter_frame.owner=400", "interpreter_frame.owner = 400" },
	{ "code_object.firstlineno=198",
	  "code_object.firstlineno = 198 (+4 bytes) lies past the 200 bytes read of its struct" },
	{ "unicode_object.asciiobject_size=200", "unicode_object.asciiobject_size = 200" },
	{ "thread_state.size=0x10000000000",
	  "thread_state.size = 1099511627776 is beyond any CPython's (at most 65536)" },
	{ "code_object.size=4000 code_object.co_code_adaptive=3000",
	  "PyCodeObject would be read to byte 3000 (code_object.co_code_adaptive), past gpuprobe's 512-byte buffer" },
	{ "interpreter_state.gil_runtime_state_holder=0",
	  "interpreter_state.gil_runtime_state_holder = 0 lies outside the GIL state" },
	{ "runtime_state.interpreters_head=0x4000000000000", "runtime_state.interpreters_head = 1125899906842624" },
	{ "interpreter_state.threads_head=0x4000000000000000", "interpreter_state.threads_head" },
	{ "interpreter_state.size=0xffffffffffffffff interpreter_state.threads_head=0xfffffffffffffff8",
	  "interpreter_state.size = 18446744073709551615 is beyond any CPython's" },
	{ "free_threaded=1", "free-threaded build" },
	{ "version=0x030c00f0", "does not start with 3.13's debug offsets" },
};

static void test_offsets(void **state UNUSED)
{
	for (size_t i = 0; i < sizeof offsets / sizeof offsets[0]; i++) {
		const char *argv[8] = { "offsets" };
		char buf[256];
		snprintf(buf, sizeof buf, "%s", offsets[i].set);
		size_t n = 1;
		for (char *save, *w = strtok_r(buf, " ", &save); w && n < 7; w = strtok_r(NULL, " ", &save))
			argv[n++] = w;
		struct seen s;
		run(argv, &s, NULL);
		print_message("%-60s -> %s (%.3f s)\n", offsets[i].set, s.error ? s.error : "(none)", s.secs);
		expect_error(&s, offsets[i].reason);
		assert_null(json_object_get(s.info, "threads"));
		json_decref(s.info);
	}
}

/* ---- lists that loop or never end ---------------------------------------- */

static void test_ts_cycle(void **state UNUSED)
{
	/* Before Floyd's test: 64 x 65536 thread states, 4.2 M reads, 14.7 s
	 * and 100 MB (25.8 s under ASan), "threads": 4194304. */
	static const char *const argv[] = { "ts-cycle", NULL };
	struct seen s;
	run(argv, &s, NULL);
	print_message("ts-cycle -> %s (%.3f s)\n", s.error, s.secs);
	expect_error(&s, "thread states not read: the list of interpreter 0x");
	expect_error(&s, "loops");
	json_decref(s.info);
}

static void test_ts_long(void **state UNUSED)
{
	/* 5000 distinct thread states in a process of 3 tasks. */
	static const char *const argv[] = { "ts-long", NULL };
	struct seen s;
	run(argv, &s, NULL);
	print_message("ts-long -> %s (%.3f s)\n", s.error, s.secs);
	expect_error(&s, "lists more than 67 for 3 tasks");
	json_decref(s.info);
}

static void test_interp_cycle(void **state UNUSED)
{
	/* Before: 64 interpreters read, the one with threads 31 times. */
	static const char *const argv[] = { "interp-cycle", NULL };
	struct seen s;
	run(argv, &s, NULL);
	print_message("interp-cycle -> %s (%.3f s)\n", s.error, s.secs);
	expect_error(&s, "thread states not read: the interpreter list loops");
	json_decref(s.info);
}

static void each_frame_cycle(const struct fake *f, size_t i, const struct gp_pythread *pt)
{
	(void)f;
	if (i == 0) {
		/* F0 -> F1 -> F2 -> F1: cut at the second F1, marked truncated
		 * (before: all 256 frames, the pair over and over) */
		assert_true(pt->truncated);
		assert_int_equal(pt->n, 3);
		assert_string_equal(pt->f[2].function, "f2");
	} else {
		each_valid(f, i, pt);
	}
}

static void test_frame_cycle(void **state UNUSED)
{
	static const char *const argv[] = { "frame-cycle", NULL };
	struct seen s;
	run(argv, &s, each_frame_cycle);
	assert_null(s.error);
	assert_int_equal(s.states, 3);
	assert_true(s.truncated);
	json_decref(s.info);
}

/* ---- the code-object cache ----------------------------------------------- */

static void each_codes(const struct fake *f, size_t i, const struct gp_pythread *pt)
{
	assert_int_equal(f->tids[i], 3000000 + (int)i);
	assert_int_equal(pt->n, GP_PY_MAX_FRAMES);
	for (size_t k = 0; k < pt->n; k++) {
		/* After evictions every frame still has its own code's name
		 * and line: nothing freed under the frames being resolved. */
		int want = (int)(i * 256 + k);
		char name[16];
		snprintf(name, sizeof name, "c%05d", want);
		if (!pt->f[k].function || strcmp(pt->f[k].function, name) || pt->f[k].line != want + 1)
			fail_msg("thread %zu frame %zu: %s:%d, want %s:%d", i, k,
				 pt->f[k].function ? pt->f[k].function : "(null)", pt->f[k].line, name, want + 1);
	}
}

static void test_codes(void **state UNUSED)
{
	/* 24 thread states x 256 frames, each its own code object: 6144,
	 * half again the cache's 4096.  Real work, not a hostile bound: 7
	 * reads a code object, 0.65 s with this test under ASan, 1.1 s in the
	 * --enable-sanitizers build beside a parallel make, on the 2-CPU VM;
	 * so a looser bound than MAX_SECS. */
	static const char *const argv[] = { "codes", NULL };
	struct seen s;
	run_within(argv, &s, each_codes, 10.0);
	print_message("codes: %zu frames, %zu named, cache at most %zu entries, %zu bytes (%.3f s)\n",
		      s.frames, s.named, s.max_cached, s.max_bytes, s.secs);
	assert_null(s.error);
	assert_int_equal(s.states, 24);
	assert_int_equal(s.named, 24 * 256);
	assert_true(s.max_cached <= CODE_MAX);
	assert_true(s.max_bytes <= CODE_BYTES);
	json_decref(s.info);
}

/* ---- code objects, strings and line tables that lie --------------------- */

static void each_junk(const struct fake *f, size_t i, const struct gp_pythread *pt)
{
	if (i) {
		each_valid(f, i, pt);
		return;
	}
	/* name of length 2^40 and a string of kind 3; pointers to page 0
	 * and a table of size -5; a table of 2^40 bytes; a line past
	 * INT_MAX; a code object whose type is not PyCode_Type; one at 0x10 */
	assert_int_equal(pt->n, 6);
	static const char *const fn[] = { NULL, NULL, "big", "over", NULL, NULL };
	static const int line[] = { 1, -1, -1, -1, -1, -1 };
	for (size_t k = 0; k < 6; k++) {
		if (fn[k])
			assert_string_equal(pt->f[k].function, fn[k]);
		else
			assert_null(pt->f[k].function);
		assert_int_equal(pt->f[k].line, line[k]);
	}
	assert_null(pt->f[0].file);
}

static void test_junk(void **state UNUSED)
{
	static const char *const argv[] = { "junk", NULL };
	struct seen s;
	run(argv, &s, each_junk);
	assert_null(s.error);
	assert_int_equal(s.states, 3);
	json_decref(s.info);
}

UNIT_MAIN(
	cmocka_unit_test(test_valid),
	cmocka_unit_test(test_offsets),
	cmocka_unit_test(test_ts_cycle),
	cmocka_unit_test(test_ts_long),
	cmocka_unit_test(test_interp_cycle),
	cmocka_unit_test(test_frame_cycle),
	cmocka_unit_test(test_codes),
	cmocka_unit_test(test_junk),
)
