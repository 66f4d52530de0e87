/* The layouts of CPython's structs, by version; see pyframes_int.h.
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
 *
 * A layout is taken only once checked (check_layout: no offset reaches
 * past the buffer its struct is read into; 3.13's _Py_DebugOffsets
 * refused whole when a field lies outside its own struct's size). */
#include "config.h"
#include "pyframes_int.h"

#include <stdio.h>

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

void gp_py_set_layout(struct gp_py *py, uint64_t hex)
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

