/* The libdwfl session of a stacks session: the target's modules; see
 * stacks_int.h.
 *
 * Why dwfl_linux_proc_attach(dwfl, pid, true) and not false: with
 * assume_ptrace_stopped false, libdwfl's pid_set_initial_registers() calls
 * __libdwfl_ptrace_attach(), which is PTRACE_ATTACH + waitpid for SIGSTOP
 * (elfutils libdwfl/linux-pid-attach.c) -- the very sequence that leaves a
 * thread in state T when the tracer dies between the two.  With true,
 * libdwfl never attaches nor detaches (pid_thread_detach() skips
 * __libdwfl_ptrace_detach), reads registers with PTRACE_GETREGS
 * (ebl_set_initial_registers_tid) from whatever thread we have stopped, and
 * memory with process_vm_readv on that tid (read_cached_memory, a 4 KiB
 * cache it clears at each thread detach).  So we SEIZE + INTERRUPT exactly
 * one thread, call dwfl_getthread_frames() for it, and DETACH: libdwfl's
 * own thread iteration (dwfl_getthreads) is never used, and no other thread
 * of the target is touched.
 *
 * CFI is loaded for every module when it is first reported (warm_module),
 * before any thread stops. */
#include "config.h"
#include "stacks_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gp_stk_identity(struct gp_stacks *s, uint64_t *starttime, dev_t *dev, ino_t *ino)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", s->pid);
	if (gp_read_file(&s->root, path, buf, sizeof buf) < 0)
		return -1;
	struct gp_stat st;
	if (!gp_parse_stat(buf, &st)) {
		errno = ESRCH;
		return -1;
	}
	if (st.state == 'Z' || st.state == 'X') {
		/* A zombie leader whose threads still run is alive: the task
		 * directory says so. */
		snprintf(path, sizeof path, "/proc/%d/task", s->pid);
		DIR *d = opendir(path);
		int live = 0;
		if (d) {
			struct dirent *e;
			while ((e = readdir(d)))
				if (e->d_name[0] != '.' && atoi(e->d_name) != s->pid)
					live++;
			closedir(d);
		}
		if (!live) {
			errno = ESRCH;
			return -1;
		}
	}
	*starttime = st.starttime;
	struct stat sb;
	snprintf(path, sizeof path, "/proc/%d/exe", s->pid);
	if (stat(path, &sb) == 0) {
		*dev = sb.st_dev;
		*ino = sb.st_ino;
	} else {
		*dev = 0;
		*ino = 0;
	}
	return 0;
}

static void modinfo_free(struct modinfo *mi)
{
	if (!mi)
		return;
	free(mi->path);
	free(mi->soname);
	free(mi);
}

static int free_modinfo_cb(Dwfl_Module *mod, void **ud, const char *name,
			   Dwarf_Addr start, void *arg)
{
	modinfo_free(*ud);
	*ud = NULL;
	return DWARF_CB_OK;
}

void gp_stk_session_end(struct gp_stacks *s)
{
	if (!s->dwfl)
		return;
	dwfl_getmodules(s->dwfl, free_modinfo_cb, NULL, 0);
	dwfl_end(s->dwfl);
	s->dwfl = NULL;
	gp_regstate_free(s->rs);
	s->rs = NULL;
	s->attached = false;
	gp_sym_clear(&s->sym);
	gp_tfile_reset(s->tf); /* an exec may have changed its root */
	free(s->debuginfo_path);
	s->debuginfo_path = gp_tfile_debuginfo_path(s->tf);
	if (s->py) { /* its module and addresses were the old process's */
		gp_py_close(s->py);
		s->py = gp_py_open(s->pid);
	}
	if (s->go) {
		gp_go_close(s->go);
		s->go = gp_go_open(s->pid);
	}
}

/* dwfl_report_end's callback for modules that left the process.  Its
 * second argument is declared void * but is the address of the module's
 * userdata slot, as in every other module callback: dwfl_report_end calls
 * removed(MODCB_ARGS(m), arg), and MODCB_ARGS passes &m->userdata
 * (elfutils libdwfl/dwfl_module.c, libdwfl/libdwflP.h).  Freeing the slot's
 * address instead of what it holds aborted trace on a python3 that
 * munmapped a file (issue 11: free(): invalid pointer). */
static int removed_cb(Dwfl_Module *mod, void *slot, const char *name,
		      Dwarf_Addr base, void *arg)
{
	struct gp_stacks *s = arg;
	void **ud = slot;
	if (ud) {
		modinfo_free(*ud);
		*ud = NULL;
	}
	s->modules_removed = true;
	return DWARF_CB_OK;
}

/* A module seen for the first time: its ELF, build-id, soname and CFI are
 * loaded now, while no thread is stopped, so the unwind does not pay for
 * them with a stopped thread.  Its modinfo is in its userdata slot before
 * the ELF is looked for: find_elf_cb reads the session's tfile there. */
static int warm_module_cb(Dwfl_Module *mod, void **ud, const char *name,
			  Dwarf_Addr start, void *arg)
{
	struct gp_stacks *s = arg;
	if (*ud)
		return DWARF_CB_OK;
	struct modinfo *mi = calloc(1, sizeof *mi);
	if (!mi)
		return DWARF_CB_OK;
	mi->path = strdup(name ? name : "?");
	mi->tf = s->tf;
	*ud = mi;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (elf)
		mi->soname = gp_elf_soname(elf);
	if (!mi->soname) {
		const char *b = strrchr(mi->path, '/');
		mi->soname = strdup(b ? b + 1 : mi->path);
	}
	gp_module_build_id(mod, mi->build_id);
	(void)dwfl_module_eh_cfi(mod, &bias);
	mi->c_runtime = mi->soname && gp_is_c_runtime(mi->soname);
	return DWARF_CB_OK;
}

struct modinfo *gp_stk_mod_info(struct gp_stacks *s, Dwfl_Module *mod)
{
	void **ud = NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud && !*ud)
		warm_module_cb(mod, ud, dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
			       0, s);
	return ud ? *ud : NULL;
}

/* Builds (first snapshot, exec, PID reuse) or refreshes the module list. */
int gp_stk_refresh(struct gp_stacks *s)
{
	uint64_t st;
	dev_t dev;
	ino_t ino;
	if (gp_stk_identity(s, &st, &dev, &ino) < 0)
		return -1;
	if (s->dwfl && (st != s->starttime || dev != s->exe_dev || ino != s->exe_ino)) {
		gp_stk_session_end(s);
		s->tot.rebuilds++;
	}
	s->starttime = st;
	s->exe_dev = dev;
	s->exe_ino = ino;
	/* dwfl_report_begin keeps every module that is reported again with
	 * the same name and range, with everything loaded for it; only new
	 * mappings cost anything (~0.15 ms a refresh for a 40-module
	 * process). */
	if (!s->dwfl) {
		s->dwfl = dwfl_begin(&s->cbs);
		if (!s->dwfl) {
			errno = ENOMEM;
			return -1;
		}
	}
	dwfl_report_begin(s->dwfl);
	s->modules_removed = false;
	int r = dwfl_linux_proc_report(s->dwfl, s->pid);
	dwfl_report_end(s->dwfl, removed_cb, s);
	if (s->modules_removed)
		gp_sym_clear(&s->sym); /* a freed Dwfl_Module's address may be reused */
	if (r != 0) {
		/* r > 0: an errno; no user stacks this time.  Only EACCES or
		 * EPERM (/proc/PID/maps of another user's process) is a
		 * refusal (gp_stk_report_refused); the others say the map is
		 * not there to read (stacks.c, report_failed_thread). */
		s->report_failed = true;
		s->report_errno = r > 0 ? r : EIO;
		return 0;
	}
	s->report_failed = false;
	/* JIT code comes and goes between snapshots: read each time, as
	 * dwfl_linux_proc_report just did (unreadable: nothing is JIT). */
	if (gp_xmaps_read(&s->root, s->pid, &s->xm) < 0)
		s->xm.n = 0;
	dwfl_getmodules(s->dwfl, warm_module_cb, s, 0);
	gp_py_refresh(s->py, s->dwfl);
	gp_go_refresh(s->go, s->dwfl);
	if (!s->attached && !(s->flags & GP_STACKS_NO_PTRACE)) {
		/* Our own registers and memory (regstate.h): a thread that must
		 * not be stopped is unwound too.  Elsewhere libdwfl's, with
		 * true: never attach -- see the comment at the top. */
		s->rs = gp_regstate_attach(s->dwfl, s->pid);
		if (s->rs || dwfl_linux_proc_attach(s->dwfl, s->pid, true) == 0)
			s->attached = true;
	}
	return 0;
}

/* ---- the target's files, through its own root (tfile.h) -------------- */

/* libdwfl passes a module's userdata slot, where warm_module_cb put its
 * modinfo, and with it the session's tfile. */
static int find_elf_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	const struct modinfo *mi = ud ? *ud : NULL;
	return gp_tfile_find_elf(mi ? mi->tf : NULL, mod, ud, name, base, file_name, elfp);
}

static int find_debuginfo_cb(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base,
			     const char *file_name, const char *debuglink_file, GElf_Word crc,
			     char **debuginfo_file_name)
{
	const struct modinfo *mi = ud ? *ud : NULL;
	return gp_tfile_find_debuginfo(mi ? mi->tf : NULL, mod, ud, modname, base, file_name,
				       debuglink_file, crc, debuginfo_file_name);
}

void gp_stk_callbacks(struct gp_stacks *s)
{
	s->debuginfo_path = gp_tfile_debuginfo_path(s->tf);
	s->cbs.find_elf = find_elf_cb;
	s->cbs.find_debuginfo = find_debuginfo_cb;
	s->cbs.debuginfo_path = &s->debuginfo_path;
}
