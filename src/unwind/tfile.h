/* Where a file of a traced process is read from: the one place that
 * decides (issue 28).
 *
 * A process in a container maps its own /usr (another release's libc and
 * python3.13): the host's file of the same name is another file, or none.
 * So every file of the target is read through the target's own root, and
 * taken only when it is the file the target maps -- its GNU build-id equals
 * the one in the target's memory (or, for a file without one, its inode
 * equals the mapping's):
 *
 *   1. /proc/PID/root/REST, where REST is the maps path less the target's
 *      root as we see it (readlink /proc/PID/root): a chroot'ed process
 *      ("unshare --root=DIR") maps "DIR/usr/lib/libc.so.6";
 *   2. /proc/PID/root/PATH: a container that pivot_root'ed (docker,
 *      containerd, cri-o, podman) maps "/usr/lib/libc.so.6" in its own
 *      mount namespace;
 *   3. /proc/PID/map_files/LO-HI: the mapped file itself, whatever its
 *      name (root: CAP_SYS_ADMIN);
 *   4. PATH on the host, as before.
 * A process whose root and mount namespace are ours reads PATH directly:
 * the same file by construction, read exactly as before.
 *
 * Debug info by build-id: the target's /usr/lib/debug/.build-id first,
 * then the host's, then the debuginfod client's cache (and debuginfod
 * itself with --debuginfod); by .gnu_debuglink beside the file, in the
 * target's root, then the host's.  Each checked against the build-id.
 *
 * The kernel facts relied on are cited in tfile.c. */
#ifndef GP_TFILE_H
#define GP_TFILE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_TFILE_CANDS 4

struct gp_tfile;

/* One per traced process.  NULL only when out of memory. */
struct gp_tfile *gp_tfile_open(int pid, bool debuginfod);
void gp_tfile_close(struct gp_tfile *tf);
/* The process exec'd, or its pid was reused: its root is looked at again. */
void gp_tfile_reset(struct gp_tfile *tf);

/* The target's root and mount namespace are ours (a NULL tf too): its
 * paths are the host's. */
bool gp_tfile_own_root(const struct gp_tfile *tf);

/* Dwfl_Callbacks.debuginfo_path for the target (malloc'd): its root's
 * /usr/lib/debug before the host's; NULL for a target whose root is ours
 * (libdwfl's default, ":.debug:/usr/lib/debug"). */
char *gp_tfile_debuginfo_path(const struct gp_tfile *tf);

/* The paths tried for a file the target maps at mpath (its maps text),
 * in order (see above), without map_files and the host's path when
 * own_root.  rootlink: readlink of /proc/PID/root.  range: "lo-hi" of one
 * of its mappings for map_files, or NULL.  Returns the count. */
struct gp_tfile_cands {
	char path[GP_TFILE_CANDS][4200];
	bool exact[GP_TFILE_CANDS]; /* map_files: the mapped file itself */
};
size_t gp_tfile_candidates(int pid, const char *rootlink, const char *mpath, const char *range,
			   bool own_root, struct gp_tfile_cands *c);

/* The GNU build-id note in an ELF image's notes (p_align 4 or 8), bounded
 * by n: its bytes' count (at most cap) into id, or 0. */
size_t gp_tfile_note_build_id(const unsigned char *notes, size_t n, size_t align,
			      unsigned char *id, size_t cap);

/* Opens the file the target maps at mpath (its maps text) whose first
 * mapping starts at base, checked as above.  *opened_as: the path it was
 * opened by (malloc'd).  -1 when none is that file. */
int gp_tfile_open_mapped(struct gp_tfile *tf, const char *mpath, uint64_t base, char **opened_as);

/* libdwfl's callbacks, with the session's tf (NULL: libdwfl's own,
 * dwfl_linux_proc_find_elf and the build-id tree). */
int gp_tfile_find_elf(struct gp_tfile *tf, Dwfl_Module *mod, void **ud, const char *name,
		      Dwarf_Addr base, char **file_name, Elf **elfp);
int gp_tfile_find_debuginfo(struct gp_tfile *tf, Dwfl_Module *mod, void **ud, const char *modname,
			    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			    GElf_Word crc, char **debuginfo_file_name);

#endif
