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
 * Everything read from the target is untrusted: every pointer is read
 * with process_vm_readv (a bad one fails the read, never faults us), every
 * length and count is bounded, and a code object is used only when its
 * ob_type is the PyCode_Type of the interpreter found. */
#include "config.h"
#include "pyframes.h"
#include "grow.h"
#include "result.h"

#include <errno.h>
#include <gelf.h>
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

/* sizeof(struct _gil_runtime_state) (pycore_gil.h): 208 in 3.11.2, 3.12.1
 * and 3.13.0 -- interval, last_holder, locked, switch_number, then the
 * cond and mutex a thread sleeps on in take_gil() (and switch_cond and
 * switch_mutex, where drop_gil() waits for a waiter to take it). */
#define GIL_STATE_SIZE 208

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
	int firstlineno;
};

#define CODE_BUCKETS 1024

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
	struct tsent *ts;
	size_t nts, cap_ts;
	struct codeent *code[CODE_BUCKETS];
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
	if (py)
		py->pid = pid;
	return py;
}

static void code_clear(struct gp_py *py)
{
	for (size_t i = 0; i < CODE_BUCKETS; i++) {
		struct codeent *e = py->code[i], *n;
		for (; e; e = n) {
			n = e->next;
			free(e->function);
			free(e->file);
			free(e->table);
			free(e);
		}
		py->code[i] = NULL;
	}
}

static void forget(struct gp_py *py)
{
	free(py->module);
	py->module = NULL;
	py->mod = NULL;
	py->found = false;
	py->version[0] = py->error[0] = 0;
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
		size_t n = sh.sh_size / sh.sh_entsize;
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

static void set_layout(struct gp_py *py, uint64_t hex)
{
	unsigned maj = (unsigned)(hex >> 24) & 0xff, min = (unsigned)(hex >> 16) & 0xff;
	unsigned mic = (unsigned)(hex >> 8) & 0xff;
	snprintf(py->version, sizeof py->version, "%u.%u.%u", maj, min, mic);
	if (maj == 3 && min == 11) {
		py->o = offs_311;
		return;
	}
	if (maj == 3 && min == 12) {
		py->o = offs_312;
		return;
	}
	if (maj == 3 && min == 13) {
		struct py313_debug_offsets d;
		if (rd(py, py->runtime, &d, sizeof d) < 0) {
			snprintf(py->error, sizeof py->error, "cannot read _PyRuntime's debug offsets");
			return;
		}
		if (memcmp(d.cookie, "xdebugpy", 8) || (d.version >> 16) != (hex >> 16)) {
			snprintf(py->error, sizeof py->error,
				 "Python %s: _PyRuntime does not start with 3.13's debug offsets", py->version);
			return;
		}
		if (d.free_threaded) {
			snprintf(py->error, sizeof py->error,
				 "Python %s free-threaded build: its object layout is not known to this gpuprobe",
				 py->version);
			return;
		}
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
		o->ts_size = d.thread_state.native_thread_id + 8;
		o->ts_cframe = -1;
		o->ts_current_frame = (int64_t)d.thread_state.current_frame;
		o->fr_code = d.interpreter_frame.executable;
		o->fr_previous = d.interpreter_frame.previous;
		o->fr_instr = d.interpreter_frame.instr_ptr;
		o->fr_owner = d.interpreter_frame.owner;
		o->fr_size = d.interpreter_frame.owner + 1;
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
		bool sane = o->ts_size < 4096 && o->fr_size < 512 && o->co_code_adaptive < 4096 &&
			    o->is_threads_head < 65536 && o->u_ascii_size < 256 && o->by_sval < 256;
		if (!sane)
			snprintf(py->error, sizeof py->error,
				 "Python %s: its debug offsets are out of range", py->version);
		return;
	}
	snprintf(py->error, sizeof py->error,
		 "Python %s: its interpreter layout is not known to this gpuprobe (3.11, 3.12 and 3.13 are)",
		 py->version);
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

void gp_py_begin(struct gp_py *py)
{
	if (!py)
		return;
	py->nts = 0;
	if (!py->found || py->error[0])
		return;
	const struct pyoffs *o = &py->o;
	uint64_t interp = 0;
	if (rd_u64(py, py->runtime + o->rt_interp_head, &interp) < 0)
		return;
	for (int ni = 0; interp && ni < 64; ni++) {
		uint64_t gil = interp_gil(py, interp), ts = 0;
		if (rd_u64(py, interp + o->is_threads_head, &ts) < 0)
			break;
		for (int nt = 0; ts && nt < 65536; nt++) {
			unsigned char buf[512];
			size_t len = o->ts_size <= sizeof buf ? o->ts_size : sizeof buf;
			if (rd(py, ts, buf, len) < 0)
				break;
			uint64_t next, ntid;
			memcpy(&next, buf + o->ts_next, 8);
			memcpy(&ntid, buf + o->ts_native_tid, 8);
			if (!gp_grow(&py->ts, &py->cap_ts, py->nts + 1, sizeof *py->ts, 32))
				return;
			if (ntid > 0 && ntid < (1u << 31))
				py->ts[py->nts++] = (struct tsent){ (int)ntid, ts, gil };
			if (next == ts)
				break;
			ts = next;
		}
		uint64_t next = 0;
		if (rd_u64(py, interp + o->is_next, &next) < 0 || next == interp)
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
	for (int guard = 0; fr && guard < 4 * GP_PY_MAX_FRAMES; guard++) {
		unsigned char buf[512];
		size_t len = o->fr_size <= sizeof buf ? o->fr_size : sizeof buf;
		if (rd(py, fr, buf, len) < 0) {
			pt->truncated = true;
			break;
		}
		uint64_t code, prev, instr;
		memcpy(&code, buf + o->fr_code, 8);
		memcpy(&prev, buf + o->fr_previous, 8);
		memcpy(&instr, buf + o->fr_instr, 8);
		unsigned char owner = buf[o->fr_owner];
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
			f->group_end = o->fr_is_entry >= 0 && buf[o->fr_is_entry];
		}
		if (prev == fr)
			break;
		fr = prev;
	}
	return pt;
}

/* ---- code objects, after the detach ----------------------------------- */

/* A str object as UTF-8 (malloc'd), or NULL. */
static char *read_str(const struct gp_py *py, uint64_t addr)
{
	const struct pyoffs *o = &py->o;
	unsigned char hdr[128];
	size_t hl = o->u_compact_size <= sizeof hdr ? o->u_compact_size : sizeof hdr;
	if (!addr || rd(py, addr, hdr, hl) < 0)
		return NULL;
	int64_t len;
	uint32_t state;
	memcpy(&len, hdr + o->u_length, 8);
	memcpy(&state, hdr + o->u_state, 4);
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
			return code == 15 ? -1 : (int)line;
		do
			i++;
		while (i < n && !(t[i] & 0x80));
	}
	return -1;
}

static struct codeent *code_get(struct gp_py *py, uint64_t addr)
{
	const struct pyoffs *o = &py->o;
	unsigned char hdr[512];
	size_t hl = o->co_code_adaptive;
	if (hl > sizeof hdr || rd(py, addr, hdr, hl) < 0)
		return NULL;
	uint64_t type, filename, qualname, name, linetable;
	int32_t first;
	memcpy(&type, hdr + o->ob_type, 8);
	if (type != py->code_type)
		return NULL; /* not (or no longer) a code object */
	memcpy(&filename, hdr + o->co_filename, 8);
	memcpy(&qualname, hdr + o->co_qualname, 8);
	memcpy(&name, hdr + o->co_name, 8);
	memcpy(&linetable, hdr + o->co_linetable, 8);
	memcpy(&first, hdr + o->co_firstlineno, 4);
	unsigned h = (unsigned)((addr >> 4) * 0x9e3779b1u) % CODE_BUCKETS;
	for (struct codeent *e = py->code[h]; e; e = e->next)
		if (e->addr == addr && e->filename == filename && e->qualname == qualname &&
		    e->linetable == linetable)
			return e;
	struct codeent *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->addr = addr;
	e->filename = filename;
	e->qualname = qualname;
	e->linetable = linetable;
	e->firstlineno = first;
	e->function = read_str(py, qualname);
	if (!e->function)
		e->function = read_str(py, name);
	e->file = read_str(py, filename);
	unsigned char bh[64];
	int64_t sz = 0;
	if (o->by_sval <= sizeof bh && rd(py, linetable, bh, o->by_sval) == 0)
		memcpy(&sz, bh + o->by_size, 8);
	if (sz > 0 && sz <= (1 << 20)) {
		e->table = malloc((size_t)sz);
		if (e->table && rd(py, linetable + o->by_sval, e->table, (size_t)sz) == 0)
			e->ntable = (size_t)sz;
	}
	e->next = py->code[h];
	py->code[h] = e;
	return e;
}

bool gp_py_waits_gil(const struct gp_pythread *pt, long nr, uint64_t uaddr)
{
	return pt && pt->gil != 1 && nr == SYS_futex && uaddr >= pt->gil_lo && uaddr < pt->gil_hi;
}

void gp_py_resolve(struct gp_py *py, struct gp_pythread *pt)
{
	if (!py || !pt)
		return;
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
	if (py->error[0])
		json_object_set_new(o, "error", gp_json_string(py->error));
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
