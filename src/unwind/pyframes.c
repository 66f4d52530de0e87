/* Python frames of a live CPython process; see pyframes.h.
 *
 * Offsets.  For 3.11 and 3.12 the layouts below were printed with
 * offsetof() from CPython's own headers (Include/cpython/pystate.h,
 * Include/internal/pycore_frame.h, pycore_code.h via cpython/code.h,
 * pycore_interp.h, pycore_runtime.h, pycore_gil.h, cpython/unicodeobject.h,
 * cpython/bytesobject.h), compiled with Py_BUILD_CORE on x86-64 Linux:
 *   3.11: Debian 12's 3.11.2 (/usr/include/python3.11) and pyenv's 3.11.7
 *         gave the same numbers;
 *   3.12: pyenv's 3.12.1 (the H200 machine runs a 3.12 with torch).
 * CPython keeps these structs stable within a minor version (the
 * out-of-process debuggers py-spy, austin and PyStack rely on it too).
 * 3.13 carries its own offsets, _Py_DebugOffsets, as the first field of
 * _PyRuntime (Include/internal/pycore_runtime.h, 3.13.0), with the cookie
 * "xdebugpy"; its layout is mirrored below (584 bytes in 3.13.0).  The
 * struct changed in 3.14, so 3.14 and later are said to be unknown, as
 * are the free-threaded builds (other object headers).
 *
 * Everything read from the target is untrusted (issue 18, item 7): any
 * process may carry a module named python* that exports _PyRuntime, and a
 * root gpuprobe reads it.  So:
 *   - every pointer is read with process_vm_readv (a bad one fails the
 *     read, never faults us);
 *   - every offset that indexes one of our buffers is checked once, when
 *     the layout is taken (check_layout: offset + field size <= the bytes
 *     read <= the buffer), and again where a field is copied (field());
 *     3.13's _Py_DebugOffsets are refused whole, with the reason in the
 *     line's "python" "error", when a field lies outside the size its own
 *     struct declares or a size is beyond any real CPython's (PyStack
 *     refuses them the same way: "Failed to validate _PyDebugOffsets");
 *   - every list is walked with Floyd's cycle test and a hard bound: the
 *     interpreters (64), the thread states (the process's task count plus
 *     slack), the frames (4 * GP_PY_MAX_FRAMES reads);
 *   - every length and count is bounded (a name 4096 characters, a line
 *     table 1 MiB, the code-object cache CODE_MAX entries and CODE_BYTES);
 *   - a code object is used only when its ob_type is the PyCode_Type of
 *     the interpreter found.
 * tests/unit/test_pyhostile reads a fake interpreter that breaks each of
 * these (tests/workloads/pyhostile.c) under ASan and UBSan.
 *
 * A process in a container (issue 28): the interpreter's symbols are read
 * from its own python3.X, the file libdwfl was given through its root
 * with its build-id checked (tfile.h), never the host's of that name; its
 * version and 3.13's offsets from its memory; its thread states' tids are
 * its pid namespace's, matched to ours through NSpid (nsinfo.h). */
#include "config.h"
#include "pyframes.h"
#include "grow.h"
#include "nsinfo.h"
#include "procfs.h"
#include "result.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- the layouts ----------------------------------------------------- */

struct pyoffs {
	/* _PyRuntimeState */
	uint64_t rt_interp_head;
	int64_t rt_gil;            /* 3.11: &_PyRuntime.ceval.gil; else -1 */
	/* PyInterpreterState */
	uint64_t is_next, is_threads_head;
	int64_t is_gil_ptr;        /* 3.12: interp->ceval.gil (a pointer); else -1 */
	int64_t is_gil;            /* 3.13: interp->_gil (embedded); else -1 */
	/* struct _gil_runtime_state, relative to the gil */
	uint64_t gil_holder, gil_locked;
	/* PyThreadState */
	uint64_t ts_next, ts_native_tid, ts_size;
	int64_t ts_cframe;         /* 3.11/3.12: tstate->cframe; else -1 */
	int64_t ts_current_frame;  /* 3.13: tstate->current_frame; else -1 */
	uint64_t cf_current_frame; /* _PyCFrame.current_frame */
	/* _PyInterpreterFrame */
	uint64_t fr_code, fr_previous, fr_instr, fr_owner, fr_size;
	int64_t fr_is_entry;       /* 3.11 only; else -1 */
	/* PyCodeObject */
	uint64_t co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
		 co_code_adaptive;
	/* PyObject, PyBytesObject, PyASCIIObject / PyCompactUnicodeObject */
	uint64_t ob_type, by_size, by_sval, u_length, u_state, u_ascii_size, u_compact_size;
};

/* 3.11.2 / 3.11.7 */
static const struct pyoffs offs_311 = {
	.rt_interp_head = 40, .rt_gil = 360,
	.is_next = 0, .is_threads_head = 16, .is_gil_ptr = -1, .is_gil = -1,
	.gil_holder = 8, .gil_locked = 16,
	.ts_next = 8, .ts_native_tid = 160, .ts_size = 168, .ts_cframe = 56,
	.ts_current_frame = -1, .cf_current_frame = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .fr_size = 72,
	.fr_is_entry = 68,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 72, .co_code_adaptive = 184,
	.ob_type = 8, .by_size = 16, .by_sval = 32, .u_length = 16, .u_state = 32,
	.u_ascii_size = 48, .u_compact_size = 72,
};

/* 3.12.1 */
static const struct pyoffs offs_312 = {
	.rt_interp_head = 40, .rt_gil = -1,
	.is_next = 0, .is_threads_head = 72, .is_gil_ptr = 384, .is_gil = -1,
	.gil_holder = 8, .gil_locked = 16,
	.ts_next = 8, .ts_native_tid = 144, .ts_size = 152, .ts_cframe = 56,
	.ts_current_frame = -1, .cf_current_frame = 0,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_size = 72,
	.fr_is_entry = -1,
	.co_filename = 112, .co_name = 120, .co_qualname = 128, .co_linetable = 136,
	.co_firstlineno = 68, .co_code_adaptive = 192,
	.ob_type = 8, .by_size = 16, .by_sval = 32, .u_length = 16, .u_state = 32,
	.u_ascii_size = 40, .u_compact_size = 56,
};

/* _Py_DebugOffsets as 3.13.0 lays it out (Include/internal/pycore_runtime.h). */
struct py313_debug_offsets {
	char cookie[8];
	uint64_t version, free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct { uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
		 ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
		 gil_runtime_state_locked, gil_runtime_state_holder; } interpreter_state;
	struct { uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
		 datastack_chunk, status; } thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
	struct { uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
		 localsplusnames, localspluskinds, co_code_adaptive; } code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object;
	struct { uint64_t size, ob_item, ob_size; } list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};
_Static_assert(sizeof(struct py313_debug_offsets) == 584, "3.13.0's _Py_DebugOffsets is 584 bytes");

/* FRAME_OWNED_BY_CSTACK (pycore_frame.h, 3.12 and 3.13): the entry frame
 * that _PyEval_EvalFrameDefault puts on the C stack, one per call of it. */
#define OWNED_BY_CSTACK 3

/* The most frames one chain walk reads (see gp_py_read_thread). */
#define FRAME_READS (4 * GP_PY_MAX_FRAMES)

/* sizeof(struct _gil_runtime_state) (pycore_gil.h): 208 in 3.11.2, 3.12.1
 * and 3.13.0 -- interval, last_holder, locked, switch_number, then the
 * cond and mutex a thread sleeps on in take_gil() (and switch_cond and
 * switch_mutex, where drop_gil() waits for a waiter to take it). */
#define GIL_STATE_SIZE 208

/* The buffers a struct read from the target lands in: no offset may reach
 * past them (check_layout).  What 3.11.2 / 3.12.1 / 3.13.0 need of each,
 * the fields' end: PyThreadState 168 / 152 / 168, _PyInterpreterFrame
 * 72 / 72 / 71, PyCodeObject up to co_code_adaptive 184 / 192 / 200,
 * PyCompactUnicodeObject 72 / 56 / 56, PyBytesObject up to ob_sval 32. */
#define TS_BUF 512
#define FR_BUF 512
#define CO_BUF 512
#define STR_BUF 128
#define BY_BUF 64

/* off + width <= size, without overflow. */
static bool fits(uint64_t off, uint64_t width, uint64_t size)
{
	return off <= size && width <= size - off;
}

/* The field at off of a buffer of len bytes read from the target.  The
 * layout was checked when it was taken (check_layout), so this never
 * refuses; it is the second line, where the bytes are copied. */
static bool field(const unsigned char *buf, size_t len, uint64_t off, void *out, size_t width)
{
	if (!fits(off, width, len))
		return false;
	memcpy(out, buf + off, width);
	return true;
}

/* Floyd's cycle test for a list walk that keeps the addresses it has
 * visited (a[0..i]): the hare is the walk itself, a[i], and the tortoise
 * a[i / 2], one step for the hare's two, so it costs no read of its own.
 * A list that enters a loop after mu nodes, a loop of lambda, is caught
 * by the step i = 2k with k >= mu a multiple of lambda: within
 * 2 * (mu + lambda) steps.  The old test caught only a node that pointed
 * at itself; a two-node loop then walked until the count bound, 64
 * interpreters x 65536 thread states, 4.2 M reads and 14.7 s (issue 18,
 * bench/results/2026-12-04-pyframes-hostile.md). */
static bool loops(const uint64_t *a, size_t i)
{
	return i > 0 && a[i] == a[i / 2];
}

/* ---- the session ----------------------------------------------------- */

struct range {
	uint64_t lo, hi;
};

struct tsent {
	int tid;
	uint64_t tstate, gil;      /* gil: address of its interpreter's GIL state, 0 unknown */
};

struct codeent {
	struct codeent *next;
	uint64_t addr, filename, qualname, linetable; /* the key: the object and what it points to */
	char *function, *file;
	uint8_t *table;
	size_t ntable;
	size_t bytes;              /* what its names and table hold */
	unsigned gen;              /* the gp_py_resolve call that last used it */
	int firstlineno;
};

/* The code-object cache is bounded: at most CODE_MAX entries and
 * CODE_BYTES of names, files and line tables.  When a new code object
 * finds it full, every entry that the current gp_py_resolve call has not
 * used goes (a clear, not an LRU: a program whose running code outgrows
 * 4096 objects reads each again when a frame next shows it, 7 reads of
 * ~7 us on the 2-CPU test VM).  The entries of the current call stay, because the
 * frames resolved before hold pointers into them; so one call (at most
 * GP_PY_MAX_FRAMES frames) always fits, and when even that would not (a
 * hostile target's 1 MiB tables), a frame goes without its line table,
 * or without a name when the entries run out.
 * 4096: a snapshot of 16 threads at the full 256 frames, each frame its
 * own code; the code objects a program runs at the sampled instants are
 * far fewer (3.13.0's whole stdlib, tests left out, compiles to 20 719).
 * An entry is ~100 bytes plus its names and table: that stdlib's line
 * tables are 45 bytes at the median, 755 at the 99th percentile, 37 380
 * at most, 2.0 MiB all together; 32 MiB holds 4096 tables of 8 KiB.
 * Before the bound, a target that rotated its code objects grew
 * gpuprobe's memory without end (issue 18, item 7). */
#define CODE_BUCKETS 1024
#define CODE_MAX 4096
#define CODE_BYTES (32u << 20)
/* The longest line table read: 28 times the stdlib's longest. */
#define TABLE_MAX (1u << 20)

struct gp_py {
	int pid;
	bool found;                /* an interpreter module was found */
	Dwfl_Module *mod;          /* where it was found */
	char *module;              /* its path */
	char version[32];          /* "3.11.2", "" unknown */
	char error[256];           /* why its frames are not read, "" when they are */
	struct pyoffs o;
	uint64_t runtime, code_type;
	struct range eval[4];
	size_t neval;
	struct range gil_take[8];
	size_t ngil_take;
	char walk_error[256];       /* why this snapshot's thread states were not read */
	struct tsent *ts;
	size_t nts, cap_ts;
	uint64_t *seen;            /* the walk of one thread-state list (Floyd's test) */
	size_t cap_seen;
	struct codeent *code[CODE_BUCKETS];
	size_t ncode, code_bytes;
	unsigned code_gen;
	bool other_pidns;          /* its thread ids are its namespace's (nsinfo.h) */
	struct gp_nstids ns;       /* its tids and ours */
};

static int rd(const struct gp_py *py, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -1;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(py->pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : -1;
}

static int rd_u64(const struct gp_py *py, uint64_t addr, uint64_t *v)
{
	return rd(py, addr, v, sizeof *v);
}

struct gp_py *gp_py_open(int pid)
{
	struct gp_py *py = calloc(1, sizeof *py);
	if (py) {
		py->pid = pid;
		py->other_pidns = gp_ns_other_pidns(pid);
		gp_nstids_init(&py->ns, pid);
	}
	return py;
}

static void code_free(struct gp_py *py, struct codeent *e)
{
	py->ncode--;
	py->code_bytes -= e->bytes;
	free(e->function);
	free(e->file);
	free(e->table);
	free(e);
}

/* Drops every cached code object but those the current gp_py_resolve
 * call uses (all of them with keep false). */
static void code_evict(struct gp_py *py, bool keep)
{
	for (size_t i = 0; i < CODE_BUCKETS; i++) {
		struct codeent **pp = &py->code[i], *e;
		while ((e = *pp)) {
			if (keep && e->gen == py->code_gen) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			code_free(py, e);
		}
	}
}

static void code_clear(struct gp_py *py)
{
	code_evict(py, false);
}

static void forget(struct gp_py *py)
{
	free(py->module);
	py->module = NULL;
	py->mod = NULL;
	py->found = false;
	py->version[0] = py->error[0] = py->walk_error[0] = 0;
	py->runtime = py->code_type = 0;
	py->neval = py->ngil_take = 0;
	py->nts = 0;
	code_clear(py);
}

void gp_py_close(struct gp_py *py)
{
	if (!py)
		return;
	forget(py);
	free(py->ts);
	free(py->seen);
	gp_nstids_free(&py->ns);
	free(py);
}

/* ---- finding the interpreter ------------------------------------------- */

/* A module that may be CPython: python3.11, python3, libpython3.12.so.1.0. */
static bool python_name(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

struct dynsyms {
	uint64_t runtime, version, code_type;
	struct range eval[4];
	size_t neval;
	struct range gil_take[8];
	size_t ngil_take;
};

/* The few names we need, from .dynsym (always there, stripped or not):
 * a linear pass, a few microseconds for CPython's ~2000 exports.  An
 * interpreter linked without exporting them (no -Xlinker -export-dynamic)
 * still has them in .symtab when it is not stripped: looked at second. */
static bool scan_syms(Elf *elf, uint64_t bias, struct dynsyms *d, Elf64_Word type);
static bool scan_dynsym(Elf *elf, uint64_t bias, struct dynsyms *d)
{
	return scan_syms(elf, bias, d, SHT_DYNSYM) || scan_syms(elf, bias, d, SHT_SYMTAB);
}

static bool scan_syms(Elf *elf, uint64_t bias, struct dynsyms *d, Elf64_Word type)
{
	static const char *const gil_fns[] = { "PyEval_RestoreThread", "PyEval_AcquireThread",
		"PyEval_AcquireLock", "PyGILState_Ensure", "_PyEval_ReInitThreads", NULL };
	memset(d, 0, sizeof *d);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		/* The module's file is the target's too: the count comes from
		 * the data libelf read and the size of a symbol, not from
		 * sh_size / sh_entsize (an sh_entsize of 1 made sh_size turns,
		 * all but the first d_size / 24 failing gelf_getsym). */
		size_t symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		if (!symsz || sh.sh_entsize != symsz)
			continue;
		size_t n = data->d_size / symsz;
		if (n > INT_MAX)
			n = INT_MAX; /* gelf_getsym takes an int */
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || (name[0] != '_' && name[0] != 'P'))
				continue;
			uint64_t a = sym.st_value + bias;
			if (!strcmp(name, "_PyRuntime"))
				d->runtime = a;
			else if (!strcmp(name, "Py_Version"))
				d->version = a;
			else if (!strcmp(name, "PyCode_Type"))
				d->code_type = a;
			else if (!strncmp(name, "_PyEval_EvalFrameDefault", 24) && d->neval < 4)
				d->eval[d->neval++] = (struct range){ a, a + (sym.st_size ? sym.st_size : 1) };
			else
				for (size_t k = 0; gil_fns[k]; k++)
					if (!strcmp(name, gil_fns[k]) && d->ngil_take < 8)
						d->gil_take[d->ngil_take++] =
							(struct range){ a, a + (sym.st_size ? sym.st_size : 1) };
		}
	}
	return d->runtime != 0;
}

/* "libpython3.10.so.1.0" / "python3.10": the version the name says. */
static bool version_from_name(const char *path, char *buf, size_t cap)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	const char *p = strstr(b, "python");
	int maj, min;
	if (p && sscanf(p + 6, "%d.%d", &maj, &min) == 2) {
		snprintf(buf, cap, "%d.%d", maj, min);
		return true;
	}
	return false;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* 3.13's _Py_DebugOffsets, checked before any is used.  Each size we rely
 * on is one a CPython could have (the limits are far above 3.13.0's own
 * sizes, in the comments: a struct past them is not an interpreter's),
 * and each offset we use lies, with its field, inside the size its own
 * struct declares.  false, with why, at the first that does not. */
static bool check_debug_offsets(const struct py313_debug_offsets *d, char *why, size_t cap)
{
	static const uint64_t KiB = 1024, MiB = 1024 * 1024;
	const struct { const char *name; uint64_t size, max; } sizes[] = {
		{ "runtime_state.size", d->runtime_state.size, 16 * MiB },         /* 283 320 */
		{ "interpreter_state.size", d->interpreter_state.size, 16 * MiB }, /* 194 968 */
		{ "thread_state.size", d->thread_state.size, 64 * KiB },           /* 304 */
		{ "interpreter_frame.size", d->interpreter_frame.size, 4 * KiB },  /* 80 */
		{ "code_object.size", d->code_object.size, 4 * KiB },              /* 208 */
		{ "pyobject.size", d->pyobject.size, 256 },                         /* 16 */
		{ "bytes_object.size", d->bytes_object.size, 256 },                 /* 40 */
		{ "unicode_object.size", d->unicode_object.size, 256 },             /* 64 */
	};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		if (sizes[i].size > sizes[i].max) {
			snprintf(why, cap, "%s = %llu is beyond any CPython's (at most %llu)", sizes[i].name,
				 (unsigned long long)sizes[i].size, (unsigned long long)sizes[i].max);
			return false;
		}
#define IN(sub, f, w) { #sub "." #f, d->sub.f, w, #sub ".size", d->sub.size }
	const struct { const char *name; uint64_t off, width; const char *in; uint64_t size; } in[] = {
		IN(runtime_state, interpreters_head, 8),
		IN(interpreter_state, next, 8),
		IN(interpreter_state, threads_head, 8),
		IN(interpreter_state, gil_runtime_state, GIL_STATE_SIZE),
		IN(thread_state, next, 8),
		IN(thread_state, current_frame, 8),
		IN(thread_state, native_thread_id, 8),
		IN(interpreter_frame, previous, 8),
		IN(interpreter_frame, executable, 8),
		IN(interpreter_frame, instr_ptr, 8),
		IN(interpreter_frame, owner, 1),
		IN(code_object, filename, 8),
		IN(code_object, name, 8),
		IN(code_object, qualname, 8),
		IN(code_object, linetable, 8),
		IN(code_object, firstlineno, 4),
		IN(code_object, co_code_adaptive, 1),
		IN(pyobject, ob_type, 8),
		IN(bytes_object, ob_size, 8),
		IN(bytes_object, ob_sval, 1),
		IN(unicode_object, state, 4),
		IN(unicode_object, length, 8),
		/* PyCompactUnicodeObject: PyASCIIObject + utf8_length, utf8 */
		IN(unicode_object, asciiobject_size, 16),
	};
#undef IN
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
		if (!fits(in[i].off, in[i].width, in[i].size)) {
			snprintf(why, cap, "%s = %llu (+%llu bytes) lies past %s = %llu", in[i].name,
				 (unsigned long long)in[i].off, (unsigned long long)in[i].width, in[i].in,
				 (unsigned long long)in[i].size);
			return false;
		}
	/* The GIL's holder and locked flag, inside the GIL state. */
	uint64_t gil = d->interpreter_state.gil_runtime_state;
	const struct { const char *name; uint64_t off, width; } g[] = {
		{ "interpreter_state.gil_runtime_state_holder", d->interpreter_state.gil_runtime_state_holder, 8 },
		{ "interpreter_state.gil_runtime_state_locked", d->interpreter_state.gil_runtime_state_locked, 4 },
	};
	for (size_t i = 0; i < 2; i++)
		if (g[i].off < gil || !fits(g[i].off - gil, g[i].width, GIL_STATE_SIZE)) {
			snprintf(why, cap, "%s = %llu lies outside the GIL state (%llu, %d bytes)", g[i].name,
				 (unsigned long long)g[i].off, (unsigned long long)gil, GIL_STATE_SIZE);
			return false;
		}
	return true;
}

/* The offsets of o fit the buffers their structs are read into: the
 * bytes read of each struct fit our buffer, and each field, with its
 * size, lies inside those bytes (for 3.11 and 3.12 a check of the tables
 * above; for 3.13 of what the target said).  false, with why, at the
 * first that does not. */
static bool check_layout(const struct pyoffs *o, char *why, size_t cap)
{
	const struct { const char *type, *from; uint64_t len, buf; } r[] = {
		{ "PyThreadState", "thread_state.next, .native_thread_id", o->ts_size, TS_BUF },
		{ "_PyInterpreterFrame", "interpreter_frame.*", o->fr_size, FR_BUF },
		{ "PyCodeObject", "code_object.co_code_adaptive", o->co_code_adaptive, CO_BUF },
		{ "PyCompactUnicodeObject", "unicode_object.asciiobject_size", o->u_compact_size, STR_BUF },
		{ "PyBytesObject", "bytes_object.ob_sval", o->by_sval, BY_BUF },
	};
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
		if (r[i].len > r[i].buf) {
			snprintf(why, cap, "%s would be read to byte %llu (%s), past gpuprobe's %llu-byte buffer",
				 r[i].type, (unsigned long long)r[i].len, r[i].from, (unsigned long long)r[i].buf);
			return false;
		}
	const struct { const char *name; uint64_t off, width, len; } f[] = {
		{ "thread_state.next", o->ts_next, 8, o->ts_size },
		{ "thread_state.native_thread_id", o->ts_native_tid, 8, o->ts_size },
		{ "interpreter_frame.executable", o->fr_code, 8, o->fr_size },
		{ "interpreter_frame.previous", o->fr_previous, 8, o->fr_size },
		{ "interpreter_frame.instr_ptr", o->fr_instr, 8, o->fr_size },
		{ "interpreter_frame.owner", o->fr_owner, 1, o->fr_size },
		{ "interpreter_frame.is_entry", o->fr_is_entry >= 0 ? (uint64_t)o->fr_is_entry : 0, 1, o->fr_size },
		{ "pyobject.ob_type", o->ob_type, 8, o->co_code_adaptive },
		{ "code_object.filename", o->co_filename, 8, o->co_code_adaptive },
		{ "code_object.name", o->co_name, 8, o->co_code_adaptive },
		{ "code_object.qualname", o->co_qualname, 8, o->co_code_adaptive },
		{ "code_object.linetable", o->co_linetable, 8, o->co_code_adaptive },
		{ "code_object.firstlineno", o->co_firstlineno, 4, o->co_code_adaptive },
		{ "unicode_object.length", o->u_length, 8, o->u_ascii_size },
		{ "unicode_object.state", o->u_state, 4, o->u_ascii_size },
		{ "unicode_object.asciiobject_size", o->u_ascii_size, 0, o->u_compact_size },
		{ "bytes_object.ob_size", o->by_size, 8, o->by_sval },
		{ "interpreter_state.gil_runtime_state_holder", o->gil_holder, 8, GIL_STATE_SIZE },
		{ "interpreter_state.gil_runtime_state_locked", o->gil_locked, 4, GIL_STATE_SIZE },
	};
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
		if (!fits(f[i].off, f[i].width, f[i].len)) {
			snprintf(why, cap, "%s = %llu (+%llu bytes) lies past the %llu bytes read of its struct",
				 f[i].name, (unsigned long long)f[i].off, (unsigned long long)f[i].width,
				 (unsigned long long)f[i].len);
			return false;
		}
	return true;
}

/* 3.13: the layout from the _Py_DebugOffsets at the start of _PyRuntime,
 * once they are checked.  false, with py->error set, when refused. */
static bool layout_313(struct gp_py *py, uint64_t hex)
{
	struct py313_debug_offsets d;
	if (rd(py, py->runtime, &d, sizeof d) < 0) {
		snprintf(py->error, sizeof py->error, "cannot read _PyRuntime's debug offsets");
		return false;
	}
	if (memcmp(d.cookie, "xdebugpy", 8) || (d.version >> 16) != (hex >> 16)) {
		snprintf(py->error, sizeof py->error,
			 "Python %s: _PyRuntime does not start with 3.13's debug offsets", py->version);
		return false;
	}
	if (d.free_threaded) {
		snprintf(py->error, sizeof py->error,
			 "Python %s free-threaded build: its object layout is not known to this gpuprobe",
			 py->version);
		return false;
	}
	char why[192];
	if (!check_debug_offsets(&d, why, sizeof why)) {
		snprintf(py->error, sizeof py->error, "Python %s: debug offsets refused: %s", py->version, why);
		return false;
	}
	/* Every number below is now at most 16 MiB: no sum overflows. */
	struct pyoffs *o = &py->o;
	memset(o, 0, sizeof *o);
	o->rt_interp_head = d.runtime_state.interpreters_head;
	o->rt_gil = -1;
	o->is_next = d.interpreter_state.next;
	o->is_threads_head = d.interpreter_state.threads_head;
	o->is_gil_ptr = -1;
	o->is_gil = (int64_t)d.interpreter_state.gil_runtime_state;
	o->gil_holder = d.interpreter_state.gil_runtime_state_holder - d.interpreter_state.gil_runtime_state;
	o->gil_locked = d.interpreter_state.gil_runtime_state_locked - d.interpreter_state.gil_runtime_state;
	o->ts_next = d.thread_state.next;
	o->ts_native_tid = d.thread_state.native_thread_id;
	/* The bytes read of each struct: to the end of the last field used. */
	o->ts_size = max64(d.thread_state.next, d.thread_state.native_thread_id) + 8;
	o->ts_cframe = -1;
	o->ts_current_frame = (int64_t)d.thread_state.current_frame;
	o->fr_code = d.interpreter_frame.executable;
	o->fr_previous = d.interpreter_frame.previous;
	o->fr_instr = d.interpreter_frame.instr_ptr;
	o->fr_owner = d.interpreter_frame.owner;
	o->fr_size = max64(max64(o->fr_code, o->fr_previous), o->fr_instr) + 8;
	o->fr_size = max64(o->fr_size, o->fr_owner + 1);
	o->fr_is_entry = -1;
	o->co_filename = d.code_object.filename;
	o->co_name = d.code_object.name;
	o->co_qualname = d.code_object.qualname;
	o->co_linetable = d.code_object.linetable;
	o->co_firstlineno = d.code_object.firstlineno;
	o->co_code_adaptive = d.code_object.co_code_adaptive;
	o->ob_type = d.pyobject.ob_type;
	o->by_size = d.bytes_object.ob_size;
	o->by_sval = d.bytes_object.ob_sval;
	o->u_length = d.unicode_object.length;
	o->u_state = d.unicode_object.state;
	o->u_ascii_size = d.unicode_object.asciiobject_size;
	/* PyCompactUnicodeObject adds utf8_length and utf8 (3.12+). */
	o->u_compact_size = d.unicode_object.asciiobject_size + 16;
	return true;
}

static void set_layout(struct gp_py *py, uint64_t hex)
{
	unsigned maj = (unsigned)(hex >> 24) & 0xff, min = (unsigned)(hex >> 16) & 0xff;
	unsigned mic = (unsigned)(hex >> 8) & 0xff;
	snprintf(py->version, sizeof py->version, "%u.%u.%u", maj, min, mic);
	if (maj == 3 && min == 11) {
		py->o = offs_311;
	} else if (maj == 3 && min == 12) {
		py->o = offs_312;
	} else if (maj == 3 && min == 13) {
		if (!layout_313(py, hex))
			return;
	} else {
		snprintf(py->error, sizeof py->error,
			 "Python %s: its interpreter layout is not known to this gpuprobe (3.11, 3.12 and 3.13 are)",
			 py->version);
		return;
	}
	char why[192];
	if (!check_layout(&py->o, why, sizeof why))
		snprintf(py->error, sizeof py->error, "Python %s: %s refused: %s", py->version,
			 min == 13 ? "debug offsets" : "offsets", why);
}

struct find_arg {
	struct gp_py *py;
	bool present;
};

static int present_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	struct find_arg *fa = arg;
	if (mod == fa->py->mod && name && fa->py->module && !strcmp(name, fa->py->module)) {
		fa->present = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static int find_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	struct gp_py *py = ((struct find_arg *)arg)->py;
	if (!name || !python_name(name))
		return DWARF_CB_OK;
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	struct dynsyms d;
	if (!elf || !scan_dynsym(elf, bias, &d)) {
		/* python3.10 and older have _PyRuntime too; a name alone
		 * (a launcher script's interpreter without it) is noted. */
		if (!py->module && version_from_name(name, py->version, sizeof py->version)) {
			py->module = strdup(name);
			snprintf(py->error, sizeof py->error, "no _PyRuntime in %s's dynamic symbols", name);
		}
		return DWARF_CB_OK;
	}
	free(py->module);
	py->module = strdup(name);
	py->mod = mod;
	py->found = true;
	py->version[0] = py->error[0] = 0;
	py->runtime = d.runtime;
	py->code_type = d.code_type;
	memcpy(py->eval, d.eval, sizeof d.eval);
	py->neval = d.neval;
	memcpy(py->gil_take, d.gil_take, sizeof d.gil_take);
	py->ngil_take = d.ngil_take;
	uint64_t hex = 0;
	if (!d.version) {
		/* Py_Version appeared in 3.11: older interpreters are named by
		 * their module's file name when it has one. */
		char v[32];
		if (version_from_name(name, v, sizeof v))
			snprintf(py->version, sizeof py->version, "%s", v);
		snprintf(py->error, sizeof py->error,
			 "Python %s: no Py_Version symbol (older than 3.11); its frames are not read",
			 py->version[0] ? py->version : "of unknown version");
	} else if (rd_u64(py, d.version, &hex) < 0) {
		snprintf(py->error, sizeof py->error, "cannot read Py_Version: %s", strerror(errno));
	} else if (!d.code_type) {
		set_layout(py, hex);
		if (!py->error[0])
			snprintf(py->error, sizeof py->error, "no PyCode_Type in %s's dynamic symbols", name);
	} else {
		set_layout(py, hex);
	}
	return DWARF_CB_ABORT;
}

void gp_py_refresh(struct gp_py *py, Dwfl *dwfl)
{
	if (!py || !dwfl)
		return;
	struct find_arg fa = { py, false };
	if (py->found) {
		dwfl_getmodules(dwfl, present_cb, &fa, 0);
		if (fa.present)
			return;
		forget(py);
	}
	/* Not (yet) a Python process: a name test per module, every
	 * refresh (an interpreter dlopen'ed late is found). */
	dwfl_getmodules(dwfl, find_cb, &fa, 0);
}

/* ---- thread states --------------------------------------------------- */

static uint64_t interp_gil(const struct gp_py *py, uint64_t interp)
{
	const struct pyoffs *o = &py->o;
	if (o->rt_gil >= 0)
		return py->runtime + (uint64_t)o->rt_gil;
	if (o->is_gil >= 0)
		return interp + (uint64_t)o->is_gil;
	uint64_t g = 0;
	if (o->is_gil_ptr >= 0 && rd_u64(py, interp + (uint64_t)o->is_gil_ptr, &g) == 0)
		return g;
	return 0;
}

/* The first 64 interpreters are read, as before the cycle test: there is
 * more than the main one only when a program asks (Py_NewInterpreter,
 * the _xxsubinterpreters module), and a longer list is cut, not refused. */
#define MAX_INTERPS 64
/* One interpreter's thread states: one per thread of the process that
 * entered it, since a thread's state goes before the thread does
 * (Modules/_threadmodule.c: thread_run() ends with PyThreadState_Clear
 * and _PyThreadState_DeleteCurrent; PyGILState_Release deletes the state
 * PyGILState_Ensure made).  So the task count of /proc/PID/task bounds
 * the list, plus slack for states made and not yet bound
 * (PyThreadState_New before its thread starts) or threads that end while
 * we read.  A list past it is refused. */
#define TS_SLACK 64

/* The snapshot's thread states are not read: why (in the line's "python"
 * "error"); the next snapshot tries again, since a live list can change
 * under a read (a state freed and reused while we walk it). */
static void walk_fail(struct gp_py *py, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void walk_fail(struct gp_py *py, const char *fmt, ...)
{
	char why[192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(py->walk_error, sizeof py->walk_error, "Python %s: thread states not read: %s",
		 py->version, why);
	py->nts = 0;
}

/* In a pid namespace of its own (a container), a thread state's
 * native_thread_id is the thread's id there (CPython takes it from gettid()
 * in the target), not ours: 1 for the main thread of a container's first
 * process, when ours is 21045.  Each thread state gets our tid through the
 * tasks' NSpid lines (nsinfo.h), the map kept across snapshots. */
static void to_host_tids(struct gp_py *py, const int *tids, size_t ntids)
{
	if (gp_nstids_update(&py->ns, tids, ntids) < 0) {
		py->nts = 0;
		return;
	}
	for (size_t k = 0; k < py->nts; k++)
		py->ts[k].tid = gp_nstids_find(&py->ns, py->ts[k].tid); /* 0: no live task */
}

static void walk_states(struct gp_py *py, size_t ntasks);
void gp_py_begin(struct gp_py *py)
{
	if (!py)
		return;
	py->nts = 0;
	py->walk_error[0] = 0;
	if (!py->found || py->error[0])
		return;
	int *tids = NULL;
	size_t ntasks = 0;
	if (gp_list_tids(py->pid, &tids, &ntasks) < 0)
		return; /* gone */
	walk_states(py, ntasks);
	if (py->other_pidns)
		to_host_tids(py, tids, ntasks);
	free(tids);
}

/* The thread states of every interpreter, into py->ts (their own tids). */
static void walk_states(struct gp_py *py, size_t ntasks)
{
	const struct pyoffs *o = &py->o;
	size_t max_ts = ntasks + TS_SLACK;
	if (!gp_grow(&py->seen, &py->cap_seen, max_ts, sizeof *py->seen, 64))
		return;
	uint64_t interps[MAX_INTERPS], interp = 0;
	if (rd_u64(py, py->runtime + o->rt_interp_head, &interp) < 0)
		return;
	for (size_t ni = 0; interp && ni < MAX_INTERPS; ni++) {
		interps[ni] = interp;
		if (loops(interps, ni)) {
			walk_fail(py, "the interpreter list loops (0x%llx again at step %zu)",
				  (unsigned long long)interp, ni);
			return;
		}
		uint64_t gil = interp_gil(py, interp), ts = 0;
		if (rd_u64(py, interp + o->is_threads_head, &ts) < 0)
			break;
		for (size_t nt = 0; ts; nt++) {
			if (nt == max_ts) {
				walk_fail(py, "interpreter 0x%llx lists more than %zu for %zu tasks",
					  (unsigned long long)interp, max_ts, ntasks);
				return;
			}
			py->seen[nt] = ts;
			if (loops(py->seen, nt)) {
				walk_fail(py, "the list of interpreter 0x%llx loops (0x%llx again at step %zu)",
					  (unsigned long long)interp, (unsigned long long)ts, nt);
				return;
			}
			unsigned char buf[TS_BUF];
			uint64_t next, ntid;
			if (o->ts_size > sizeof buf || rd(py, ts, buf, o->ts_size) < 0 ||
			    !field(buf, o->ts_size, o->ts_next, &next, 8) ||
			    !field(buf, o->ts_size, o->ts_native_tid, &ntid, 8))
				break;
			if (ntid > 0 && ntid < (1u << 31)) {
				if (!gp_grow(&py->ts, &py->cap_ts, py->nts + 1, sizeof *py->ts, 32))
					return;
				py->ts[py->nts++] = (struct tsent){ (int)ntid, ts, gil };
			}
			ts = next;
		}
		uint64_t next = 0;
		if (rd_u64(py, interp + o->is_next, &next) < 0)
			break;
		interp = next;
	}
}

/* ---- one stopped thread ---------------------------------------------- */

struct gp_pythread *gp_py_read_thread(struct gp_py *py, int tid)
{
	if (!py || !py->found || py->error[0])
		return NULL;
	const struct tsent *te = NULL;
	for (size_t i = 0; i < py->nts; i++)
		if (py->ts[i].tid == tid) {
			te = &py->ts[i];
			break;
		}
	if (!te)
		return NULL;
	const struct pyoffs *o = &py->o;
	struct gp_pythread *pt = calloc(1, sizeof *pt);
	if (!pt)
		return NULL;
	pt->tstate = te->tstate;
	pt->gil = -1;
	if (te->gil) {
		pt->gil_lo = te->gil;
		pt->gil_hi = te->gil + GIL_STATE_SIZE;
	}
	if (te->gil) {
		/* A stopped thread cannot let go of the GIL: what it shows now
		 * is true for the whole stop. */
		uint64_t holder = 0;
		int locked = 0;
		if (rd_u64(py, te->gil + o->gil_holder, &holder) == 0 &&
		    rd(py, te->gil + o->gil_locked, &locked, sizeof locked) == 0)
			pt->gil = locked && holder == te->tstate;
	}
	uint64_t fr = 0;
	if (o->ts_current_frame >= 0) {
		if (rd_u64(py, te->tstate + (uint64_t)o->ts_current_frame, &fr) < 0)
			fr = 0;
	} else {
		uint64_t cf = 0;
		if (rd_u64(py, te->tstate + (uint64_t)o->ts_cframe, &cf) < 0 ||
		    rd_u64(py, cf + o->cf_current_frame, &fr) < 0)
			fr = 0;
	}
	/* The chain: Floyd's test over the frames visited, and at most
	 * FRAME_READS of them (GP_PY_MAX_FRAMES kept, and as many shim frames,
	 * one per evaluation-loop call, 3.12+, twice over).  Before the test,
	 * a two-frame loop filled all 256 frames with the pair. */
	uint64_t seen[FRAME_READS];
	for (size_t nseen = 0; fr; nseen++) {
		if (nseen == FRAME_READS) {
			pt->truncated = true;
			break;
		}
		seen[nseen] = fr;
		if (loops(seen, nseen)) {
			pt->truncated = true;
			break;
		}
		unsigned char buf[FR_BUF];
		uint64_t code, prev, instr;
		unsigned char owner, entry = 0;
		if (o->fr_size > sizeof buf || rd(py, fr, buf, o->fr_size) < 0 ||
		    !field(buf, o->fr_size, o->fr_code, &code, 8) ||
		    !field(buf, o->fr_size, o->fr_previous, &prev, 8) ||
		    !field(buf, o->fr_size, o->fr_instr, &instr, 8) ||
		    !field(buf, o->fr_size, o->fr_owner, &owner, 1) ||
		    (o->fr_is_entry >= 0 && !field(buf, o->fr_size, (uint64_t)o->fr_is_entry, &entry, 1))) {
			pt->truncated = true;
			break;
		}
		if (owner == OWNED_BY_CSTACK && o->fr_is_entry < 0) {
			/* 3.12+: the shim frame of one evaluation-loop call. */
			if (pt->n)
				pt->f[pt->n - 1].group_end = true;
		} else {
			if (pt->n == GP_PY_MAX_FRAMES) {
				pt->truncated = true;
				break;
			}
			struct gp_pyframe_raw *f = &pt->f[pt->n++];
			f->code = code;
			f->instr = instr;
			f->line = -1;
			f->group_end = entry != 0;
		}
		fr = prev;
	}
	return pt;
}

/* ---- code objects, after the detach ----------------------------------- */

/* A str object as UTF-8 (malloc'd), or NULL. */
static char *read_str(const struct gp_py *py, uint64_t addr)
{
	const struct pyoffs *o = &py->o;
	unsigned char hdr[STR_BUF];
	size_t hl = o->u_compact_size;
	int64_t len;
	uint32_t state;
	if (!addr || hl > sizeof hdr || rd(py, addr, hdr, hl) < 0 ||
	    !field(hdr, hl, o->u_length, &len, 8) || !field(hdr, hl, o->u_state, &state, 4))
		return NULL;
	/* state: interned:2, kind:3, compact:1, ascii:1 (cpython/unicodeobject.h,
	 * the same bits in 3.11, 3.12 and 3.13). */
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (len < 0 || len > 4096 || !compact || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	uint64_t data = addr + (ascii ? o->u_ascii_size : o->u_compact_size);
	size_t raw = (size_t)len * kind;
	unsigned char *b = malloc(raw + 1);
	if (!b)
		return NULL;
	if (rd(py, data, b, raw) < 0) {
		free(b);
		return NULL;
	}
	if (ascii) {
		b[raw] = 0;
		for (size_t i = 0; i < raw; i++)
			if (b[i] >= 0x80 || !b[i])
				b[i] = '?';
		return (char *)b;
	}
	char *out = malloc((size_t)len * 4 + 1);
	if (!out) {
		free(b);
		return NULL;
	}
	size_t k = 0;
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? b[i] : kind == 2 ? ((uint16_t *)b)[i] : ((uint32_t *)b)[i];
		if (!c || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = '?';
		if (c < 0x80) {
			out[k++] = (char)c;
		} else if (c < 0x800) {
			out[k++] = (char)(0xc0 | c >> 6);
			out[k++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[k++] = (char)(0xe0 | c >> 12);
			out[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[k++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[k++] = (char)(0xf0 | c >> 18);
			out[k++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[k++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[k] = 0;
	free(b);
	return out;
}

/* The line of the instruction at byte offset addrq, from a 3.11+ location
 * table (Objects/locations.md; PyCode_Addr2Line and advance() in
 * Objects/codeobject.c, the same in 3.11, 3.12 and 3.13).  An entry:
 * 1CCCCLLL, code C, length L+1 code units; codes 13 (no column) and 14
 * (long) start with a signed varint line delta, 10-12 are deltas 0-2,
 * 15 means "no line", the others keep the line.  -1: no line. */
int gp_py_addr2line(const uint8_t *t, size_t n, int firstlineno, long addrq);
int gp_py_addr2line(const uint8_t *t, size_t n, int firstlineno, long addrq)
{
	if (addrq < 0)
		return firstlineno;
	long line = firstlineno, end = 0;
	size_t i = 0;
	while (i < n) {
		uint8_t b = t[i];
		if (!(b & 0x80))
			return -1; /* not at an entry: a table we do not understand */
		unsigned code = (b >> 3) & 15;
		long delta = 0;
		if (code == 13 || code == 14) {
			/* scan_signed_varint(ptr + 1) */
			size_t j = i + 1;
			unsigned long val = 0;
			unsigned shift = 0;
			uint8_t r;
			do {
				if (j >= n || shift > 30)
					return -1;
				r = t[j++];
				val |= (unsigned long)(r & 63) << shift;
				shift += 6;
			} while (r & 64);
			delta = (val & 1) ? -(long)(val >> 1) : (long)(val >> 1);
		} else if (code >= 10 && code <= 12) {
			delta = code - 10;
		}
		line += delta;
		end += ((b & 7) + 1) * 2;
		if (addrq < end)
			/* A line that is no int is a table that lies. */
			return code == 15 || line < 0 || line > INT_MAX ? -1 : (int)line;
		do
			i++;
		while (i < n && !(t[i] & 0x80));
	}
	return -1;
}

static struct codeent *code_get(struct gp_py *py, uint64_t addr)
{
	const struct pyoffs *o = &py->o;
	unsigned char hdr[CO_BUF];
	size_t hl = o->co_code_adaptive;
	uint64_t type, filename, qualname, name, linetable;
	int32_t first;
	if (hl > sizeof hdr || rd(py, addr, hdr, hl) < 0 || !field(hdr, hl, o->ob_type, &type, 8))
		return NULL;
	if (type != py->code_type)
		return NULL; /* not (or no longer) a code object */
	if (!field(hdr, hl, o->co_filename, &filename, 8) ||
	    !field(hdr, hl, o->co_qualname, &qualname, 8) ||
	    !field(hdr, hl, o->co_name, &name, 8) ||
	    !field(hdr, hl, o->co_linetable, &linetable, 8) ||
	    !field(hdr, hl, o->co_firstlineno, &first, 4))
		return NULL;
	unsigned h = (unsigned)((addr >> 4) * 0x9e3779b1u) % CODE_BUCKETS;
	for (struct codeent *e = py->code[h]; e; e = e->next)
		if (e->addr == addr && e->filename == filename && e->qualname == qualname &&
		    e->linetable == linetable) {
			e->gen = py->code_gen;
			return e;
		}
	if (py->ncode >= CODE_MAX || py->code_bytes >= CODE_BYTES) {
		code_evict(py, true);
		if (py->ncode >= CODE_MAX || py->code_bytes >= CODE_BYTES)
			return NULL; /* all in use by this call's frames */
	}
	struct codeent *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->addr = addr;
	e->filename = filename;
	e->qualname = qualname;
	e->linetable = linetable;
	e->firstlineno = first;
	e->gen = py->code_gen;
	e->function = read_str(py, qualname);
	if (!e->function)
		e->function = read_str(py, name);
	e->file = read_str(py, filename);
	e->bytes = sizeof *e + (e->function ? strlen(e->function) + 1 : 0) +
		   (e->file ? strlen(e->file) + 1 : 0);
	unsigned char bh[BY_BUF];
	int64_t sz = 0;
	if (o->by_sval > sizeof bh || rd(py, linetable, bh, o->by_sval) < 0 ||
	    !field(bh, o->by_sval, o->by_size, &sz, 8))
		sz = 0;
	if (sz > 0 && (uint64_t)sz <= TABLE_MAX && py->code_bytes + e->bytes + (size_t)sz <= CODE_BYTES) {
		e->table = malloc((size_t)sz);
		if (e->table && rd(py, linetable + o->by_sval, e->table, (size_t)sz) == 0) {
			e->ntable = (size_t)sz;
			e->bytes += (size_t)sz;
		} else {
			free(e->table);
			e->table = NULL;
		}
	}
	py->ncode++;
	py->code_bytes += e->bytes;
	e->next = py->code[h];
	py->code[h] = e;
	return e;
}

/* For tests/unit/test_pyhostile: the code-object cache's entries and bytes. */
void gp_py_code_cache(const struct gp_py *py, size_t *n, size_t *bytes);
void gp_py_code_cache(const struct gp_py *py, size_t *n, size_t *bytes)
{
	*n = py->ncode;
	*bytes = py->code_bytes;
}

bool gp_py_waits_gil(const struct gp_pythread *pt, long nr, uint64_t uaddr)
{
	return pt && pt->gil != 1 && nr == SYS_futex && uaddr >= pt->gil_lo && uaddr < pt->gil_hi;
}

void gp_py_resolve(struct gp_py *py, struct gp_pythread *pt)
{
	if (!py || !pt)
		return;
	py->code_gen++; /* the entries this call uses stay until the next */
	for (size_t i = 0; i < pt->n; i++) {
		struct gp_pyframe_raw *f = &pt->f[i];
		struct codeent *e = code_get(py, f->code);
		if (!e)
			continue;
		f->function = e->function;
		f->file = e->file;
		/* 3.11/3.12 prev_instr, 3.13 instr_ptr: both point at the
		 * instruction being executed (_PyInterpreterFrame_LASTI). */
		long lasti = (long)((int64_t)(f->instr - (f->code + py->o.co_code_adaptive)) / 2);
		f->line = e->ntable ? gp_py_addr2line(e->table, e->ntable, e->firstlineno, lasti * 2) : -1;
	}
}

/* ---- lookups and JSON ----------------------------------------------- */

static bool in_ranges(const struct range *r, size_t n, uint64_t pc)
{
	for (size_t i = 0; i < n; i++)
		if (pc >= r[i].lo && pc < r[i].hi)
			return true;
	return false;
}

bool gp_py_is_eval(const struct gp_py *py, uint64_t pc)
{
	return py && py->found && in_ranges(py->eval, py->neval, pc);
}

bool gp_py_is_gil_take(const struct gp_py *py, uint64_t pc)
{
	return py && py->found && in_ranges(py->gil_take, py->ngil_take, pc);
}

bool gp_py_is_module(const struct gp_py *py, Dwfl_Module *mod)
{
	return py && py->found && !py->error[0] && mod && py->mod == mod;
}

json_t *gp_py_info_json(const struct gp_py *py)
{
	if (!py || !py->module)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "version", py->version[0] ? json_string(py->version) : json_null());
	json_object_set_new(o, "module", gp_json_string(py->module));
	if (py->error[0] || py->walk_error[0])
		json_object_set_new(o, "error", gp_json_string(py->error[0] ? py->error : py->walk_error));
	else
		json_object_set_new(o, "threads", json_integer((json_int_t)py->nts));
	return o;
}

json_t *gp_py_group_json(const struct gp_pythread *pt, size_t start, size_t *next)
{
	if (!pt || start >= pt->n)
		return NULL;
	json_t *a = json_array();
	size_t i = start;
	for (; i < pt->n; i++) {
		const struct gp_pyframe_raw *f = &pt->f[i];
		json_array_append_new(a, json_pack("{s:o, s:o, s:o}",
			"function", f->function ? gp_json_string(f->function) : json_null(),
			"file", f->file ? gp_json_string(f->file) : json_null(),
			"line", f->line > 0 ? json_integer(f->line) : json_null()));
		if (f->group_end) {
			i++;
			break;
		}
	}
	*next = i;
	return a;
}
