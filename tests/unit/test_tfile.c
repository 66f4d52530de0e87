/* tfile.c: where a target's file is read from (issue 28).  The paths
 * tried for each container shape, the build-id notes read from a target's
 * memory, and the file of a live mapping opened and checked. */
#include "config.h"
#include "unit.h"
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "tfile.h"

static void test_candidates(void **st UNUSED)
{
	struct gp_tfile_cands c;
	/* unshare --root=/var/tmp/trixie-root: maps name the host's path of
	 * the chroot; below its root first, then as a container's, then
	 * map_files, then the host's */
	size_t n = gp_tfile_candidates(21045, "/var/tmp/trixie-root",
				       "/var/tmp/trixie-root/usr/lib/x86_64-linux-gnu/libc.so.6",
				       "7ff3a7428000-7ff3a7450000", false, &c);
	assert_int_equal(n, 4);
	assert_string_equal(c.path[0], "/proc/21045/root/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(c.path[1], "/proc/21045/root/var/tmp/trixie-root/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(c.path[2], "/proc/21045/map_files/7ff3a7428000-7ff3a7450000");
	assert_true(c.exact[2]);
	assert_false(c.exact[0] || c.exact[1] || c.exact[3]);
	assert_string_equal(c.path[3], "/var/tmp/trixie-root/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* a container that pivot_root'ed: its root reads "/" */
	n = gp_tfile_candidates(7, "/", "/usr/bin/python3.13", NULL, false, &c);
	assert_int_equal(n, 2);
	assert_string_equal(c.path[0], "/proc/7/root/usr/bin/python3.13");
	assert_string_equal(c.path[1], "/usr/bin/python3.13");
	/* a root with a trailing slash; a sibling directory is not below it */
	n = gp_tfile_candidates(7, "/srv/r/", "/srv/r/lib/a.so", NULL, false, &c);
	assert_string_equal(c.path[0], "/proc/7/root/lib/a.so");
	n = gp_tfile_candidates(7, "/srv/r", "/srv/rx/lib/a.so", NULL, false, &c);
	assert_int_equal(n, 2);
	assert_string_equal(c.path[0], "/proc/7/root/srv/rx/lib/a.so");
	/* our own root: the path itself, as before */
	n = gp_tfile_candidates(7, "/", "/usr/lib/libc.so.6", "1-2", true, &c);
	assert_int_equal(n, 1);
	assert_string_equal(c.path[0], "/usr/lib/libc.so.6");
	/* not a path: nothing */
	assert_int_equal(gp_tfile_candidates(7, "/", "[vdso: 7]", NULL, false, &c), 0);
	assert_int_equal(gp_tfile_candidates(7, "/", NULL, NULL, false, &c), 0);
	/* longer than a candidate holds: left out, never cut */
	char *longp = malloc(5000);
	memset(longp, 'a', 4999);
	longp[0] = '/';
	longp[4999] = 0;
	n = gp_tfile_candidates(7, "/", longp, NULL, false, &c);
	assert_int_equal(n, 0);
	free(longp);
}

/* A note as a linker lays it out: namesz, descsz, type, name, desc. */
static size_t put_note(unsigned char *p, size_t align, uint32_t type, const char *name,
		       const unsigned char *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	memcpy(p, &namesz, 4);
	memcpy(p + 4, &descsz, 4);
	memcpy(p + 8, &type, 4);
	memcpy(p + 12, name, namesz);
	size_t d = (12 + namesz + align - 1) & ~(align - 1);
	memcpy(p + d, desc, descsz);
	return (d + descsz + align - 1) & ~(align - 1);
}

static void test_notes(void **st UNUSED)
{
	unsigned char buf[256] = { 0 }, id[64];
	const unsigned char sha1[20] = { 0x93, 0xf7, 0x0d, 0x1a, 0x8a, 0xe3, 0x4f, 0x8e, 0x63, 0xc2,
					 0x23, 0xf1, 0x50, 0x03, 0x27, 0xfb, 0xd7, 0x17, 0xf8, 0x71 };
	const unsigned char abi[16] = { 0 };
	/* .note.ABI-tag then .note.gnu.build-id, 4-aligned (glibc's libc) */
	size_t n = put_note(buf, 4, NT_GNU_ABI_TAG, "GNU", abi, sizeof abi);
	n += put_note(buf + n, 4, NT_GNU_BUILD_ID, "GNU", sha1, sizeof sha1);
	assert_int_equal(gp_tfile_note_build_id(buf, n, 4, id, sizeof id), 20);
	assert_memory_equal(id, sha1, 20);
	/* 8-aligned (.note.gnu.property's segment) */
	memset(buf, 0, sizeof buf);
	n = put_note(buf, 8, NT_GNU_PROPERTY_TYPE_0, "GNU", abi, 12);
	n += put_note(buf + n, 8, NT_GNU_BUILD_ID, "GNU", sha1, sizeof sha1);
	assert_int_equal(gp_tfile_note_build_id(buf, n, 8, id, sizeof id), 20);
	assert_memory_equal(id, sha1, 20);
	/* another vendor's note of type 3 is not a build-id */
	memset(buf, 0, sizeof buf);
	n = put_note(buf, 4, NT_GNU_BUILD_ID, "Go", sha1, sizeof sha1);
	assert_int_equal(gp_tfile_note_build_id(buf, n, 4, id, sizeof id), 0);
	/* cut short: the desc runs past the bytes read */
	memset(buf, 0, sizeof buf);
	n = put_note(buf, 4, NT_GNU_BUILD_ID, "GNU", sha1, sizeof sha1);
	assert_int_equal(gp_tfile_note_build_id(buf, n - 1, 4, id, sizeof id), 0);
	/* bigger than the caller holds */
	assert_int_equal(gp_tfile_note_build_id(buf, n, 4, id, 8), 0);
	/* sizes that would wrap an offset */
	uint32_t huge = 0xfffffff0u;
	memcpy(buf, &huge, 4);
	assert_int_equal(gp_tfile_note_build_id(buf, n, 4, id, sizeof id), 0);
	memcpy(buf, (uint32_t[]){ 4 }, 4);
	memcpy(buf + 4, &huge, 4);
	assert_int_equal(gp_tfile_note_build_id(buf, n, 4, id, sizeof id), 0);
	assert_int_equal(gp_tfile_note_build_id(buf, 11, 4, id, sizeof id), 0);
}

/* The libc this test maps: its path and first mapping, from our maps. */
static bool libc_mapping(char *path, size_t cap, uint64_t *base)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4608];
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f)) {
		unsigned long long lo, off;
		int at = 0;
		if (sscanf(line, "%llx-%*[0-9a-f] %*s %llx %*s %*s %n", &lo, &off, &at) >= 2 && at && off == 0 &&
		    strstr(line + at, "/libc.so")) {
			snprintf(path, cap, "%s", line + at);
			path[strcspn(path, "\n")] = 0;
			*base = lo;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static void test_open_live(void **st UNUSED)
{
	char path[4096], *as = NULL;
	uint64_t base = 0;
	if (!libc_mapping(path, sizeof path, &base))
		skip();
	struct gp_tfile *tf = gp_tfile_open(getpid(), false);
	assert_true(gp_tfile_own_root(tf));
	assert_null(gp_tfile_debuginfo_path(tf));
	/* our libc, through our own root, its build-id checked against our
	 * memory's */
	int fd = gp_tfile_open_mapped(tf, path, base, &as);
	assert_true(fd >= 0);
	char want[64];
	snprintf(want, sizeof want, "/proc/%d/root/", (int)getpid());
	assert_true(!strncmp(as, want, strlen(want)));
	close(fd);
	free(as);
	/* a name whose first mapping is not at base: nothing is taken on
	 * faith (no mapping to check it by) */
	fd = gp_tfile_open_mapped(tf, path, base + 4096, &as);
	assert_int_equal(fd, -1);
	assert_null(as);
	fd = gp_tfile_open_mapped(tf, "/etc/passwd", base, &as);
	assert_int_equal(fd, -1);
	/* a file below our root, opened inside it */
	fd = gp_open_in_root(getpid(), "/proc/self/maps");
	assert_true(fd >= 0);
	close(fd);
	gp_tfile_close(tf);
}

UNIT_MAIN(cmocka_unit_test(test_candidates), cmocka_unit_test(test_notes),
	  cmocka_unit_test(test_open_live))
