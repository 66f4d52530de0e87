/* python3.13-hostile MODE [FIELD=VALUE...]: a fake CPython 3.13 whose
 * interpreter state is hostile, for tests/unit/test_pyhostile and
 * tests/e2e/stacks-python-hostile.sh (issue 18, item 7).
 *
 * It is found the way a real interpreter is (src/unwind/pyframes.c): its
 * file name starts with "python" and, linked with -rdynamic, it exports
 * _PyRuntime, Py_Version (3.13.0) and PyCode_Type.  _PyRuntime starts
 * with the _Py_DebugOffsets that CPython 3.13.0 itself carries (printed
 * from a running pyenv 3.13.0: the cookie, then the 72 numbers below), and
 * the interpreters, thread states, frames, code objects, strings and
 * line tables it lays out in its own memory follow those offsets.  The
 * MODE makes one part of it hostile:
 *
 *   valid          a consistent interpreter: the main thread and two
 *                  others, each in f0 <- f1 <- f2 (lines 1, 2, 3)
 *   offsets F=V..  the same, with the debug offset F set to V (F as in
 *                  CPython's struct: thread_state.next, code_object.size)
 *   ts-cycle       two interpreters that point at each other, each with a
 *                  thread-state list A -> B -> A
 *   ts-long        one interpreter with 5000 distinct thread states
 *   interp-cycle   three interpreters in a ring (I0 -> I1 -> I2 -> I1)
 *   frame-cycle    the main thread's frames F0 -> F1 -> F2 -> F1
 *   codes          24 thread states (TIDs 3000000..3000023) of 256
 *                  frames each, every frame its own code object c00000..
 *                  (line = its number + 1): 6144 code objects, more than
 *                  pyframes' cache holds (4096)
 *   junk           frames whose code objects lie: names of length 2^40,
 *                  a string kind of 3, line tables of size -5 and 2^40, a
 *                  first line of INT_MAX, an ob_type that is not code
 *
 * Then it prints "ready TID..." (the TIDs that have thread states) and
 * sleeps until killed. */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What pyframes looks for, under CPython's names. */
extern const unsigned long Py_Version;
extern unsigned char PyCode_Type[416], _PyRuntime[4096];
void _PyEval_EvalFrameDefault(void);

const unsigned long Py_Version = 0x030d00f0; /* 3.13.0 final */
__attribute__((aligned(64))) unsigned char PyCode_Type[416];
__attribute__((aligned(64))) unsigned char _PyRuntime[4096];
__attribute__((noinline)) void _PyEval_EvalFrameDefault(void)
{
	__asm__ volatile("");
}

/* _Py_DebugOffsets of CPython 3.13.0 after its cookie, in its order. */
static const char *const names[] = {
	"version", "free_threaded",
	"runtime_state.size", "runtime_state.finalizing", "runtime_state.interpreters_head",
	"interpreter_state.size", "interpreter_state.id", "interpreter_state.next",
	"interpreter_state.threads_head", "interpreter_state.gc", "interpreter_state.imports_modules",
	"interpreter_state.sysdict", "interpreter_state.builtins", "interpreter_state.ceval_gil",
	"interpreter_state.gil_runtime_state", "interpreter_state.gil_runtime_state_enabled",
	"interpreter_state.gil_runtime_state_locked", "interpreter_state.gil_runtime_state_holder",
	"thread_state.size", "thread_state.prev", "thread_state.next", "thread_state.interp",
	"thread_state.current_frame", "thread_state.thread_id", "thread_state.native_thread_id",
	"thread_state.datastack_chunk", "thread_state.status",
	"interpreter_frame.size", "interpreter_frame.previous", "interpreter_frame.executable",
	"interpreter_frame.instr_ptr", "interpreter_frame.localsplus", "interpreter_frame.owner",
	"code_object.size", "code_object.filename", "code_object.name", "code_object.qualname",
	"code_object.linetable", "code_object.firstlineno", "code_object.argcount",
	"code_object.localsplusnames", "code_object.localspluskinds", "code_object.co_code_adaptive",
	"pyobject.size", "pyobject.ob_type",
	"type_object.size", "type_object.tp_name", "type_object.tp_repr", "type_object.tp_flags",
	"tuple_object.size", "tuple_object.ob_item", "tuple_object.ob_size",
	"list_object.size", "list_object.ob_item", "list_object.ob_size",
	"dict_object.size", "dict_object.ma_keys", "dict_object.ma_values",
	"float_object.size", "float_object.ob_fval",
	"long_object.size", "long_object.lv_tag", "long_object.ob_digit",
	"bytes_object.size", "bytes_object.ob_size", "bytes_object.ob_sval",
	"unicode_object.size", "unicode_object.state", "unicode_object.length",
	"unicode_object.asciiobject_size",
	"gc.size", "gc.collecting",
};
#define NOFFS (sizeof names / sizeof names[0])
_Static_assert(NOFFS == 72, "8 bytes of cookie + 72 numbers = 3.13.0's 584 bytes");

static const uint64_t real[NOFFS] = {
	0x030d00f0, 0,
	283320, 608, 632,
	194968, 7272, 7264, 7344, 7400, 7656, 7640, 7648, 16, 7752, 0, 7768, 7760,
	304, 0, 8, 16, 72, 152, 160, 232, 32,
	80, 8, 0, 56, 72, 70,
	208, 112, 120, 128, 136, 68, 52, 96, 104, 200,
	16, 8,
	416, 24, 88, 168,
	32, 24, 16,
	40, 24, 16,
	48, 32, 40,
	24, 16,
	32, 16, 24,
	40, 16, 32,
	64, 32, 16, 40,
	240, 200,
};

/* The layout the memory below follows: 3.13.0's, whatever the header says. */
enum {
	RT_INTERP_HEAD = 632,
	IS_SIZE = 8192, IS_NEXT = 7264, IS_THREADS = 7344, IS_GIL = 7752,
	TS_SIZE = 304, TS_NEXT = 8, TS_FRAME = 72, TS_NTID = 160,
	FR_SIZE = 80, FR_PREV = 8, FR_CODE = 0, FR_INSTR = 56, FR_OWNER = 70,
	CO_SIZE = 208, CO_TYPE = 8, CO_FILE = 112, CO_NAME = 120, CO_QUAL = 128,
	CO_TABLE = 136, CO_FIRST = 68, CO_ADAPTIVE = 200,
	STR_LEN = 16, STR_STATE = 32, STR_ASCII = 40,
	BY_SIZE = 16, BY_SVAL = 32,
};

static void *mem(size_t n)
{
	void *p = calloc(1, n);
	if (!p) {
		perror("python3.13-hostile");
		exit(1);
	}
	return p;
}

static void put64(void *base, size_t off, uint64_t v)
{
	memcpy((char *)base + off, &v, sizeof v);
}

static uint64_t A(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A compact ASCII str (kind 1, compact, ascii: cpython/unicodeobject.h). */
static void *str(const char *s)
{
	size_t n = strlen(s);
	unsigned char *o = mem(STR_ASCII + n + 1);
	put64(o, STR_LEN, n);
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6;
	memcpy(o + STR_STATE, &state, sizeof state);
	memcpy(o + STR_ASCII, s, n);
	return o;
}

static void *bytes(const void *d, size_t n, int64_t claimed)
{
	unsigned char *o = mem(BY_SVAL + n + 1);
	put64(o, BY_SIZE, (uint64_t)claimed);
	memcpy(o + BY_SVAL, d, n);
	return o;
}

/* One location-table entry: code 10 (line delta 0), 8 code units -- every
 * instruction of the code is on its first line. */
static const unsigned char table[] = { 0x80 | 10 << 3 | 7 };
static void *file_str, *table_bytes;

static void *code(const void *qual, const void *file, const void *tab, int32_t first)
{
	unsigned char *c = mem(CO_SIZE + 16);
	put64(c, CO_TYPE, A(PyCode_Type));
	put64(c, CO_FILE, A(file));
	put64(c, CO_NAME, A(qual));
	put64(c, CO_QUAL, A(qual));
	put64(c, CO_TABLE, A(tab));
	memcpy(c + CO_FIRST, &first, sizeof first);
	return c;
}

static void *frame(const void *co, const void *prev)
{
	unsigned char *f = mem(FR_SIZE);
	put64(f, FR_CODE, A(co));
	put64(f, FR_PREV, A(prev));
	put64(f, FR_INSTR, A(co) + CO_ADAPTIVE); /* its first instruction */
	f[FR_OWNER] = 0; /* FRAME_OWNED_BY_THREAD */
	return f;
}

/* f0 <- f1 <- f2, youngest first: the chain's head is f0's frame. */
static void *chain3(void)
{
	void *prev = NULL;
	for (int i = 2; i >= 0; i--) {
		char name[8];
		snprintf(name, sizeof name, "f%d", i);
		prev = frame(code(str(name), file_str, table_bytes, i + 1), prev);
	}
	return prev;
}

static void *tstate(long tid, const void *fr, const void *next)
{
	unsigned char *t = mem(TS_SIZE);
	put64(t, TS_NTID, (uint64_t)tid);
	put64(t, TS_FRAME, A(fr));
	put64(t, TS_NEXT, A(next));
	return t;
}

static void *interp(const void *threads, const void *next)
{
	unsigned char *i = mem(IS_SIZE);
	put64(i, IS_THREADS, A(threads));
	put64(i, IS_NEXT, A(next));
	return i;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long tids[3];
static int ntids;

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	tids[ntids++] = syscall(SYS_gettid);
	pthread_cond_broadcast(&cv);
	for (;;)
		pthread_cond_wait(&cv, &mu);
	return NULL;
}

/* The real threads' states: main and the two sleepers, each in chain3(). */
static void *threads3(void)
{
	void *head = NULL;
	for (int i = ntids - 1; i >= 0; i--)
		head = tstate(tids[i], chain3(), head);
	return head;
}

static void set_offsets(int argc, char **argv)
{
	uint64_t v[NOFFS];
	memcpy(v, real, sizeof v);
	for (int a = 2; a < argc; a++) {
		char *eq = strchr(argv[a], '=');
		size_t k = 0;
		if (eq)
			for (; k < NOFFS; k++)
				if (strlen(names[k]) == (size_t)(eq - argv[a]) &&
				    !strncmp(names[k], argv[a], (size_t)(eq - argv[a])))
					break;
		if (!eq || k == NOFFS) {
			fprintf(stderr, "python3.13-hostile: no debug offset '%s'\n", argv[a]);
			exit(2);
		}
		v[k] = strtoull(eq + 1, NULL, 0);
	}
	memcpy(_PyRuntime, "xdebugpy", 8);
	memcpy(_PyRuntime + 8, v, sizeof v);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: python3.13-hostile MODE [FIELD=VALUE...]\n");
		return 2;
	}
	const char *mode = argv[1];
	tids[ntids++] = syscall(SYS_gettid);
	for (int i = 0; i < 2; i++) {
		pthread_t t;
		pthread_create(&t, NULL, sleeper, NULL);
	}
	pthread_mutex_lock(&mu);
	while (ntids < 3)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);

	set_offsets(!strcmp(mode, "offsets") ? argc : 2, argv);
	file_str = str("hostile.py");
	table_bytes = bytes(table, sizeof table, sizeof table);
	void *head = NULL;
	char ready[4096] = "ready";
	size_t rl = strlen(ready);
	if (!strcmp(mode, "valid") || !strcmp(mode, "offsets")) {
		head = interp(threads3(), NULL);
	} else if (!strcmp(mode, "ts-cycle")) {
		unsigned char *a = tstate(tids[0], chain3(), NULL), *b = tstate(tids[1], chain3(), a);
		put64(a, TS_NEXT, A(b));
		unsigned char *i0 = interp(a, NULL), *i1 = interp(a, i0);
		put64(i0, IS_NEXT, A(i1));
		head = i0;
	} else if (!strcmp(mode, "ts-long")) {
		void *t = threads3();
		for (int i = 0; i < 5000; i++)
			t = tstate(2000000 + i, NULL, t);
		head = interp(t, NULL);
	} else if (!strcmp(mode, "interp-cycle")) {
		unsigned char *i2 = interp(threads3(), NULL), *i1 = interp(NULL, i2);
		put64(i2, IS_NEXT, A(i1));
		head = interp(NULL, i1);
	} else if (!strcmp(mode, "frame-cycle")) {
		unsigned char *f2 = frame(code(str("f2"), file_str, table_bytes, 3), NULL);
		unsigned char *f1 = frame(code(str("f1"), file_str, table_bytes, 2), f2);
		put64(f2, FR_PREV, A(f1));
		void *f0 = frame(code(str("f0"), file_str, table_bytes, 1), f1);
		void *t = tstate(tids[2], chain3(), NULL);
		t = tstate(tids[1], chain3(), t);
		head = interp(tstate(tids[0], f0, t), NULL);
	} else if (!strcmp(mode, "codes")) {
		void *t = NULL;
		int n = 0;
		for (int th = 23; th >= 0; th--) {
			void *prev = NULL;
			for (int k = 255; k >= 0; k--) {
				char name[16];
				n = th * 256 + k;
				snprintf(name, sizeof name, "c%05d", n);
				prev = frame(code(str(name), file_str, table_bytes, n + 1), prev);
			}
			t = tstate(3000000 + th, prev, t);
		}
		head = interp(t, NULL);
		ntids = 0;
		for (int th = 0; th < 24; th++)
			rl += (size_t)snprintf(ready + rl, sizeof ready - rl, " %d", 3000000 + th);
	} else if (!strcmp(mode, "junk")) {
		/* Each frame of the main thread tells one lie. */
		unsigned char *huge = str("x"), *kind3 = str("y");
		put64(huge, STR_LEN, 1ull << 40);
		uint32_t st = 3u << 2 | 1u << 5;
		memcpy(kind3 + STR_STATE, &st, sizeof st);
		void *neg = bytes(table, sizeof table, -5), *big = bytes(table, sizeof table, 1ll << 40);
		/* line INT_MAX for one code unit, then +1 (code 11): past any int */
		static const unsigned char up[] = { 0x80 | 10 << 3 | 0, 0x80 | 11 << 3 | 7 };
		void *over = bytes(up, sizeof up, sizeof up);
		unsigned char *notcode = code(str("notcode"), file_str, table_bytes, 1);
		put64(notcode, CO_TYPE, A(_PyRuntime));
		void *codes[] = {
			code(huge, kind3, table_bytes, 1),
			code((void *)8, (void *)16, neg, 1),
			code(str("big"), file_str, big, 1),
			code(str("over"), file_str, over, INT_MAX),
			notcode,
			(void *)0x10,
		};
		void *prev = NULL;
		for (int k = (int)(sizeof codes / sizeof codes[0]) - 1; k >= 0; k--) {
			unsigned char *f = frame(codes[k], prev);
			if (k == 3)
				put64(f, FR_INSTR, A(codes[k]) + CO_ADAPTIVE + 2); /* the second entry */
			else if (k == 2)
				put64(f, FR_INSTR, 0xfffffffffffffff0ull);
			prev = f;
		}
		void *t = tstate(tids[2], chain3(), NULL);
		t = tstate(tids[1], chain3(), t);
		head = interp(tstate(tids[0], prev, t), NULL);
	} else {
		fprintf(stderr, "python3.13-hostile: unknown mode '%s'\n", mode);
		return 2;
	}
	put64(_PyRuntime, RT_INTERP_HEAD, A(head));
	for (int i = 0; i < ntids; i++)
		rl += (size_t)snprintf(ready + rl, sizeof ready - rl, " %ld", tids[i]);
	printf("%s\n", ready);
	fflush(stdout);
	for (;;)
		pause();
}
