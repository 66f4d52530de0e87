/* What the files of pyframes.h share: the layouts of CPython's structs,
 * the session, and its reads of the target's memory.  pyframes.c finds
 * the interpreter and reads the frames; pylayout.c takes the layout of
 * its version (the offsets, checked); pycode.c turns code objects into
 * names and lines after the detach.  Everything read from the target is
 * untrusted: pyframes.c says how each read is bounded. */
#ifndef GP_PYFRAMES_INT_H
#define GP_PYFRAMES_INT_H

#include "pyframes.h"
#include "nsinfo.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

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
static inline bool fits(uint64_t off, uint64_t width, uint64_t size)
{
	return off <= size && width <= size - off;
}

/* The field at off of a buffer of len bytes read from the target.  The
 * layout was checked when it was taken (check_layout), so this never
 * refuses; it is the second line, where the bytes are copied. */
static inline bool field(const unsigned char *buf, size_t len, uint64_t off, void *out, size_t width)
{
	if (!fits(off, width, len))
		return false;
	memcpy(out, buf + off, width);
	return true;
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

static inline int rd(const struct gp_py *py, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -1;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(py->pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : -1;
}

static inline int rd_u64(const struct gp_py *py, uint64_t addr, uint64_t *v)
{
	return rd(py, addr, v, sizeof *v);
}

/* pylayout.c: the layout of version hex (PY_VERSION_HEX) into py->o, or
 * py->error set to why not. */
void gp_py_set_layout(struct gp_py *py, uint64_t hex);

/* pycode.c: drops every cached code object. */
void gp_py_code_clear(struct gp_py *py);

#endif
