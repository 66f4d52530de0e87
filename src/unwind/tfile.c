/* Where a file of a traced process is read from; see tfile.h.
 *
 * The kernel facts this relies on:
 *   - /proc/PID/maps names a file with d_path() against the *reader's*
 *     root (fs/proc/task_mmu.c show_map_vma -> seq_file_path ->
 *     d_path, which takes current->fs->root).  A file of another mount
 *     namespace has no path below our root: prepend_path() stops at that
 *     namespace's root, and the name is the path from there (fs/d_path.c).
 *     So a chroot'ed target ("unshare --root=DIR", same files as ours)
 *     shows "DIR/usr/lib/libc.so.6", and a container that pivot_root'ed
 *     into its image (runc, crun: docker, containerd, cri-o, podman) shows
 *     "/usr/lib/libc.so.6", a path that on the host names the host's libc.
 *   - readlink("/proc/PID/root") is d_path()'ed the same way
 *     (proc_root_link, do_proc_readlink): the maps path less that prefix is
 *     the file's path below the target's root.
 *   - A lookup below /proc/PID/root starts at the target's root and
 *     crosses the mounts of its namespace (the magic link jumps to its
 *     fs->root: vfsmount and dentry); allowed with
 *     PTRACE_MODE_READ_FSCREDS (proc_fd_access_allowed), as the stacks
 *     themselves are.
 *   - A symbolic link met below /proc/PID/root is followed from *our*
 *     root when absolute (the magic link only sets where the walk starts),
 *     so a container's "/lib64/ld-linux-x86-64.so.2 -> /lib/..." would name
 *     the host's file: files below its root are opened with openat2()'s
 *     RESOLVE_IN_ROOT (Linux 5.6), which scopes "/" and ".." to the
 *     target's root as chroot would; plain open() where openat2 is not.
 *   - /proc/PID/map_files/LO-HI ("%lx-%lx", Linux 3.3, CONFIG_
 *     CHECKPOINT_RESTORE) opens the very file a mapping maps, deleted or
 *     renamed; following it takes CAP_SYS_ADMIN in the initial user
 *     namespace (Linux 4.3, proc_map_files_get_link; 5.9: or
 *     CAP_CHECKPOINT_RESTORE).
 * And elfutils' (0.188, libdwfl):
 *   - dwfl_linux_proc_find_elf() opens the maps name as it is, on our
 *     side: stat(module_name), open(module_name)
 *     (libdwfl/linux-proc-maps.c); only a "(deleted)" file or the vDSO is
 *     read from the target's memory.  A module reported by
 *     dwfl_linux_proc_report() carries no build-id of its own (only
 *     dwfl_segment_report_module reads one from memory), so libdwfl
 *     checks nothing: the host's libc.so.6 was taken for the container's,
 *     and its symbols were read at the wrong offsets.
 *   - dwfl_build_id_find_debuginfo() looks for .build-id/xx/rest.debug in
 *     every absolute directory of Dwfl_Callbacks.debuginfo_path, in order,
 *     and keeps a file only when its build-id is the module's
 *     (libdwfl/dwfl_build_id_find_elf.c __libdwfl_open_by_build_id,
 *     find-debuginfo.c validate).
 *   - The debuginfod client caches a debug file as
 *     CACHE/BUILDID/debuginfo, CACHE being $DEBUGINFOD_CACHE_PATH, else
 *     $XDG_CACHE_HOME/debuginfod_client, else
 *     $HOME/.cache/debuginfod_client (debuginfod/debuginfod-client.c). */
#include "config.h"
#include "tfile.h"
#include "parse.h"
#include "procfs.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

struct gp_tfile {
	int pid;
	bool debuginfod;
	bool own_root;
	char *maps;               /* the last /proc/PID/maps read, or NULL */
};

/* ---- whose root ---------------------------------------------------------- */

static bool same_inode(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return true; /* cannot tell: read as before */
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Its / is ours and it lives in our mount namespace: every path it maps
 * names, on our side, the file it maps. */
static bool root_is_ours(int pid)
{
	char root[64], mnt[64];
	snprintf(root, sizeof root, "/proc/%d/root", pid);
	snprintf(mnt, sizeof mnt, "/proc/%d/ns/mnt", pid);
	return same_inode(root, "/") && same_inode(mnt, "/proc/self/ns/mnt");
}

struct gp_tfile *gp_tfile_open(int pid, bool debuginfod)
{
	struct gp_tfile *tf = calloc(1, sizeof *tf);
	if (!tf)
		return NULL;
	tf->pid = pid;
	tf->debuginfod = debuginfod;
	tf->own_root = root_is_ours(pid);
	return tf;
}

void gp_tfile_reset(struct gp_tfile *tf)
{
	if (!tf)
		return;
	free(tf->maps);
	tf->maps = NULL;
	tf->own_root = root_is_ours(tf->pid);
}

void gp_tfile_close(struct gp_tfile *tf)
{
	if (!tf)
		return;
	free(tf->maps);
	free(tf);
}

bool gp_tfile_own_root(const struct gp_tfile *tf)
{
	return !tf || tf->own_root;
}

char *gp_tfile_debuginfo_path(const struct gp_tfile *tf)
{
	if (gp_tfile_own_root(tf))
		return NULL;
	/* libdwfl's default (":.debug:/usr/lib/debug": beside the file, its
	 * .debug, the tree) with the target's tree first. */
	char buf[128];
	snprintf(buf, sizeof buf, ":.debug:/proc/%d/root/usr/lib/debug:/usr/lib/debug", tf->pid);
	return strdup(buf);
}

/* A candidate's file: below the target's root by openat2, others as named. */
static int open_cand(int pid, const char *path)
{
	char proot[64];
	int n = snprintf(proot, sizeof proot, "/proc/%d/root/", pid);
	if (n > 0 && !strncmp(path, proot, (size_t)n))
		return gp_open_in_root(pid, path + n - 1);
	return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

/* ---- the candidates -------------------------------------------------------- */

static bool add(struct gp_tfile_cands *c, size_t *n, bool exact, const char *a, const char *b,
		const char *d)
{
	if (*n >= GP_TFILE_CANDS)
		return false;
	int w = snprintf(c->path[*n], sizeof c->path[*n], "%s%s%s", a, b, d);
	if (w < 0 || (size_t)w >= sizeof c->path[*n])
		return false;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(c->path[i], c->path[*n]))
			return false;
	c->exact[*n] = exact;
	(*n)++;
	return true;
}

size_t gp_tfile_candidates(int pid, const char *rootlink, const char *mpath, const char *range,
			   bool own_root, struct gp_tfile_cands *c)
{
	size_t n = 0;
	if (!mpath || mpath[0] != '/')
		return 0;
	if (own_root) {
		add(c, &n, false, mpath, "", "");
		return n;
	}
	char proot[64];
	snprintf(proot, sizeof proot, "/proc/%d/root", pid);
	size_t rl = rootlink ? strlen(rootlink) : 0;
	while (rl > 1 && rootlink[rl - 1] == '/')
		rl--;
	/* 1: below a chroot: the maps path starts with the root's own path. */
	if (rl > 1 && rootlink[0] == '/' && !strncmp(mpath, rootlink, rl) && mpath[rl] == '/')
		add(c, &n, false, proot, mpath + rl, "");
	/* 2: a container's own mount namespace, its root its image. */
	add(c, &n, false, proot, mpath, "");
	/* 3: the mapped file itself. */
	if (range && *range) {
		char mf[96];
		snprintf(mf, sizeof mf, "/proc/%d/map_files/", pid);
		add(c, &n, true, mf, range, "");
	}
	/* 4: the host's file of that name, as before, when it is that file. */
	add(c, &n, false, mpath, "", "");
	return n;
}

/* ---- build-ids ----------------------------------------------------------------- */

static uint64_t align_up(uint64_t v, size_t a)
{
	return (v + a - 1) & ~(uint64_t)(a - 1);
}

size_t gp_tfile_note_build_id(const unsigned char *p, size_t n, size_t align,
			      unsigned char *id, size_t cap)
{
	if (align != 8)
		align = 4;
	uint64_t off = 0;
	while (off + 12 <= n) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, p + off, 4);
		memcpy(&descsz, p + off + 4, 4);
		memcpy(&type, p + off + 8, 4);
		uint64_t name = off + 12;
		uint64_t desc = align_up(name + namesz, align);
		if (desc > n || descsz > n - desc)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(p + name, "GNU", 4) &&
		    descsz > 0 && descsz <= cap) {
			memcpy(id, p + desc, descsz);
			return descsz;
		}
		uint64_t next = align_up(desc + descsz, align);
		if (next <= off)
			return 0;
		off = next;
	}
	return 0;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MY_ELFDATA ELFDATA2LSB
#else
#define MY_ELFDATA ELFDATA2MSB
#endif

/* The most note bytes read from one PT_NOTE: the build-id's note comes
 * first in every linker's layout, 36 bytes for a SHA-1 one. */
#define NOTES_MAX 8192

static int rd(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* The build-id of the ELF image mapped at base, read from the target's
 * memory: the header, the program headers, and each PT_NOTE lying in the
 * first mapping (span bytes from base, file offset 0), where linkers put
 * them.  A 64-bit image of our byte order only; 0 when none is read. */
static size_t mem_build_id(int pid, uint64_t base, uint64_t span, unsigned char *id, size_t cap)
{
	Elf64_Ehdr eh;
	if (rd(pid, base, &eh, sizeof eh) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != MY_ELFDATA ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum > 64)
		return 0;
	size_t phbytes = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	if (eh.e_phoff > span || phbytes > span - eh.e_phoff)
		return 0;
	Elf64_Phdr ph[64];
	if (rd(pid, base + eh.e_phoff, ph, phbytes) < 0)
		return 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_offset > span || ph[i].p_filesz > span - ph[i].p_offset
		    || ph[i].p_filesz < 12)
			continue;
		size_t len = ph[i].p_filesz < NOTES_MAX ? ph[i].p_filesz : NOTES_MAX;
		unsigned char notes[NOTES_MAX];
		if (rd(pid, base + ph[i].p_offset, notes, len) < 0)
			continue;
		size_t n = gp_tfile_note_build_id(notes, len, ph[i].p_align, id, cap);
		if (n)
			return n;
	}
	return 0;
}

/* The file's own build-id equals want[0..wn). */
static bool fd_has_build_id(int fd, const unsigned char *want, size_t wn)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return false;
	const void *bits = NULL;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
	bool same = n > 0 && (size_t)n == wn && !memcmp(bits, want, wn);
	elf_end(elf);
	return same;
}

/* ---- the target's mappings ------------------------------------------------------- */

struct mapping {
	uint64_t lo, hi, ino;
	char range[40];
};

static bool find_line(const char *maps, uint64_t base, const char *mpath, struct mapping *m)
{
	size_t plen = strlen(mpath);
	for (const char *l = maps; l && *l;) {
		unsigned long long lo, hi, off, ino;
		unsigned maj, min;
		int at = 0;
		int got = sscanf(l, "%llx-%llx %*s %llx %x:%x %llu %n", &lo, &hi, &off, &maj, &min, &ino, &at);
		const char *nl = strchr(l, '\n');
		const char *path = l + at;
		bool same = got == 6 && at > 0 && !strncmp(path, mpath, plen) &&
			    (path[plen] == '\n' || path[plen] == 0);
		l = nl ? nl + 1 : NULL;
		if (same && lo == base && off == 0 && hi > lo) {
			m->lo = lo;
			m->hi = hi;
			m->ino = ino;
			snprintf(m->range, sizeof m->range, "%llx-%llx", lo, hi);
			return true;
		}
	}
	return false;
}

/* The mapping of mpath that starts at base (a module's first, at file
 * offset 0), from the maps read last, read again when it is not there. */
static bool mapping_at(struct gp_tfile *tf, uint64_t base, const char *mpath, struct mapping *m)
{
	if (tf->maps && find_line(tf->maps, base, mpath, m))
		return true;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", tf->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len;
	char *maps = gp_slurp_fd(fd, &len);
	close(fd);
	if (!maps)
		return false;
	free(tf->maps);
	tf->maps = maps;
	return find_line(tf->maps, base, mpath, m);
}

/* ---- opening --------------------------------------------------------------------- */

static bool is_deleted(const char *path)
{
	size_t n = strlen(path), d = strlen(" (deleted)");
	return n > d && !strcmp(path + n - d, " (deleted)");
}

int gp_tfile_open_mapped(struct gp_tfile *tf, const char *mpath, uint64_t base, char **opened_as)
{
	*opened_as = NULL;
	struct mapping m = { 0 };
	bool have_map = mapping_at(tf, base, mpath, &m);
	unsigned char want[64];
	size_t wn = have_map ? mem_build_id(tf->pid, base, m.hi - m.lo, want, sizeof want) : 0;
	char link[64], rootlink[4096];
	snprintf(link, sizeof link, "/proc/%d/root", tf->pid);
	ssize_t rl = readlink(link, rootlink, sizeof rootlink - 1);
	rootlink[rl > 0 ? rl : 0] = 0;
	struct gp_tfile_cands c;
	size_t n = gp_tfile_candidates(tf->pid, rootlink, mpath, have_map ? m.range : NULL, false, &c);
	for (size_t i = 0; i < n; i++) {
		/* A file replaced on disk is the mapping's only by map_files. */
		if (is_deleted(mpath) && !c.exact[i])
			continue;
		int fd = open_cand(tf->pid, c.path[i]);
		if (fd < 0)
			continue;
		struct stat st;
		bool take = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
			    (c.exact[i] || (wn ? fd_has_build_id(fd, want, wn)
					       : have_map && st.st_ino == m.ino));
		if (take) {
			/* Named by a path below its root, not map_files': libdwfl
			 * looks for its .gnu_debuglink beside the name. */
			*opened_as = strdup(c.exact[i] && i > 0 ? c.path[0] : c.path[i]);
			if (*opened_as)
				return fd;
		}
		close(fd);
	}
	errno = 0;
	return -1;
}

int gp_tfile_find_elf(struct gp_tfile *tf, Dwfl_Module *mod, void **ud, const char *name,
		      Dwarf_Addr base, char **file_name, Elf **elfp)
{
	if (gp_tfile_own_root(tf) || name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, ud, name, base, file_name, elfp);
	int fd = gp_tfile_open_mapped(tf, name, base, file_name);
	if (fd < 0 && is_deleted(name))
		return dwfl_linux_proc_find_elf(mod, ud, name, base, file_name, elfp);
	return fd;
}

/* ---- debug info ------------------------------------------------------------------- */

/* fd (a debug file) carries the module's build-id, or the module has
 * none to check it by. */
static bool debug_matches(Dwfl_Module *mod, int fd)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	return n <= 0 || fd_has_build_id(fd, bits, (size_t)n);
}

static int open_checked(const struct gp_tfile *tf, Dwfl_Module *mod, const char *path, char **out)
{
	int fd = tf ? open_cand(tf->pid, path) : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (!debug_matches(mod, fd) || !(*out = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The debuginfod client's cache (see the top), without asking any server. */
static int from_cache(Dwfl_Module *mod, char **out)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > 64)
		return -1;
	char hex[129];
	for (int i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char path[4400];
	if (env && *env)
		snprintf(path, sizeof path, "%s/%s/debuginfo", env, hex);
	else if (xdg && *xdg)
		snprintf(path, sizeof path, "%s/debuginfod_client/%s/debuginfo", xdg, hex);
	else if (home && *home)
		snprintf(path, sizeof path, "%s/.cache/debuginfod_client/%s/debuginfo", home, hex);
	else
		return -1;
	return open_checked(NULL, mod, path, out);
}

/* .gnu_debuglink: beside the file, in its .debug, then under the debug
 * tree by the file's directory: the target's tree, then the host's. */
static int by_debuglink(const struct gp_tfile *tf, Dwfl_Module *mod, const char *file_name,
			const char *link, char **out)
{
	if (!link || !file_name || strchr(link, '/'))
		return -1;
	char dir[4096];
	gp_strlcpy(dir, file_name, sizeof dir);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	char proot[64] = "";
	if (!gp_tfile_own_root(tf))
		snprintf(proot, sizeof proot, "/proc/%d/root", tf->pid);
	size_t pl = strlen(proot);
	const char *rel = pl && !strncmp(dir, proot, pl) ? dir + pl : dir; /* below its root */
	char cand[4][8400];
	snprintf(cand[0], sizeof cand[0], "%s/%s", dir, link);
	snprintf(cand[1], sizeof cand[1], "%s/.debug/%s", dir, link);
	snprintf(cand[2], sizeof cand[2], "%s/usr/lib/debug%s/%s", proot, rel, link);
	snprintf(cand[3], sizeof cand[3], "/usr/lib/debug%s/%s", rel, link);
	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(cand[i], file_name) || (i == 3 && !pl))
			continue;
		int fd = open_checked(tf, mod, cand[i], out);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

int gp_tfile_find_debuginfo(struct gp_tfile *tf, Dwfl_Module *mod, void **ud, const char *modname,
			    Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			    GElf_Word crc, char **debuginfo_file_name)
{
	/* --debuginfod: libdwfl's own search (the build-id tree in
	 * debuginfo_path's order, the target's first; the debuglink by path,
	 * CRC-checked), then the server. */
	if (tf && tf->debuginfod)
		return dwfl_standard_find_debuginfo(mod, ud, modname, base, file_name, debuglink_file,
						    crc, debuginfo_file_name);
	/* Without it, never debuginfod: dwfl_standard_find_debuginfo ends by
	 * asking it, and elfutils 0.188 dlopens libdebuginfod (curl, gnutls,
	 * krb5: ~30 libraries, 40 ms measured) to do so even with
	 * DEBUGINFOD_URLS unset. */
	int fd = dwfl_build_id_find_debuginfo(mod, ud, modname, base, file_name, debuglink_file, crc,
					      debuginfo_file_name);
	if (fd >= 0)
		return fd;
	fd = from_cache(mod, debuginfo_file_name);
	if (fd < 0)
		fd = by_debuglink(tf, mod, file_name, debuglink_file, debuginfo_file_name);
	if (fd < 0)
		errno = 0;
	return fd;
}
