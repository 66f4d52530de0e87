/* Python frames of a live CPython process, read from outside.
 *
 * For a process whose executable or a library is CPython (python3.X,
 * libpython3.X.so), the interpreter's own state is read with
 * process_vm_readv: _PyRuntime (found in the module's .dynsym, so no debug
 * info is needed) -> interpreters -> thread states, matched to kernel TIDs
 * by native_thread_id -> the chain of _PyInterpreterFrame -> code objects
 * (qualified name, file name, line table).  Python 3.11 and 3.12 by their
 * struct layouts (offsets taken from CPython's own headers, see
 * pylayout.c); 3.13 by the _Py_DebugOffsets at the start of _PyRuntime;
 * any other version is named and not read.
 *
 * How it fits the stacks contract (stacks.h): the thread states are listed
 * before any thread stops; while one thread is stopped only its frame
 * chain (code object and instruction pointers) and the GIL's holder are
 * read, a few microseconds; names, files and line tables are read after
 * the detach, cached per code object.
 *
 * The result, as stacks.c hands it to model/stackline.h for a `stacks`
 * line (struct gp_pythread, struct gp_pyinfo):
 *   line:   "python": {"version":"3.11.2", "module":PATH, "threads":N}
 *           or {"version":..|null, "module":PATH, "error":"why not read"}
 *   thread: "python": {"gil":"held"|"waiting"|"not-held", "frames":N,
 *                      "unplaced":[pyframe...] (only when some could not
 *                      be put at an evaluation frame)}
 *   frame:  "python": [pyframe...] on each native frame that runs the
 *           interpreter's evaluation loop (_PyEval_EvalFrameDefault),
 *           the frames it evaluates, youngest first;
 *   pyframe: {"function":"Loader.load_shard" (co_qualname), "file":"load.py",
 *             "line":12 (null when the code has no line there)}. */
#ifndef GP_PYFRAMES_H
#define GP_PYFRAMES_H

#include "stackline.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_py;

struct gp_py *gp_py_open(int pid);
void gp_py_close(struct gp_py *py);

/* After each module refresh (no thread stopped): finds the interpreter
 * the first time, or again when the module it was found in is gone. */
void gp_py_refresh(struct gp_py *py, Dwfl *dwfl);

/* Once per snapshot, before any thread stops: lists the thread states
 * (tid -> PyThreadState). */
void gp_py_begin(struct gp_py *py);

/* While thread tid is stopped: its frame chain and whether it holds the
 * GIL.  NULL when the thread has no Python thread state (or no
 * interpreter is known); caller frees. */
struct gp_pythread *gp_py_read_thread(struct gp_py *py, int tid);

/* The thread (not holding the GIL) sleeps in futex(uaddr, ...) on the
 * GIL's own condition variable or mutex: it waits for the GIL. */
bool gp_py_waits_gil(const struct gp_pythread *pt, long nr, uint64_t uaddr);

/* After the detach: names, files, lines of pt's frames.  The names and
 * files stay valid until the next call (the cache is bounded: pycode.c,
 * CODE_MAX). */
void gp_py_resolve(struct gp_py *py, struct gp_pythread *pt);

/* pc (already pc-1 for a caller frame) lies in the evaluation loop /
 * in a function that takes the GIL (PyEval_RestoreThread, ...). */
bool gp_py_is_eval(const struct gp_py *py, uint64_t pc);
bool gp_py_is_gil_take(const struct gp_py *py, uint64_t pc);

/* mod is the interpreter whose frames are read. */
bool gp_py_is_module(const struct gp_py *py, Dwfl_Module *mod);

/* The line's "python" (model/stackline.h writes it): false when the
 * process is not CPython. */
bool gp_py_info(const struct gp_py *py, struct gp_pyinfo *pi);

#endif
