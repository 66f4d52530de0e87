/* Python frames of a live CPython process; see pyframes.h.
 *
 * The offsets of each version, and where they come from: pylayout.c.
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
#include "pyframes_int.h"
#include "grow.h"
#include "procfs.h"

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
	gp_py_code_clear(py);
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
		gp_py_set_layout(py, hex);
		if (!py->error[0])
			snprintf(py->error, sizeof py->error, "no PyCode_Type in %s's dynamic symbols", name);
	} else {
		gp_py_set_layout(py, hex);
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

bool gp_py_waits_gil(const struct gp_pythread *pt, long nr, uint64_t uaddr)
{
	return pt && pt->gil != 1 && nr == SYS_futex && uaddr >= pt->gil_lo && uaddr < pt->gil_hi;
}

/* ---- lookups --------------------------------------------------- */

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

bool gp_py_info(const struct gp_py *py, struct gp_pyinfo *pi)
{
	if (!py || !py->module)
		return false;
	*pi = (struct gp_pyinfo){
		.version = py->version[0] ? py->version : NULL,
		.module = py->module,
		.error = py->error[0] ? py->error : py->walk_error[0] ? py->walk_error : NULL,
		.threads = py->nts,
	};
	return true;
}

