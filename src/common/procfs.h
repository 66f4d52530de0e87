/* Access to /proc and /sys under a root directory.
 *
 * Every reader takes a struct gp_root so tests can replay captured trees
 * (util-linux's --sysroot pattern): with --proc-root DIR, "/proc/1/stat"
 * is read as DIR/proc/1/stat.  Paths passed here are absolute-looking
 * ("/proc/..."); the leading slash is stripped and the path opened
 * relative to the root's directory fd. */
#ifndef GP_PROCFS_H
#define GP_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gp_root {
	int dirfd;        /* O_PATH|O_DIRECTORY fd of the root */
	char path[4096];  /* as given, for messages */
	bool live;        /* root is "/": the running system */
};

int gp_root_open(struct gp_root *root, const char *path);
void gp_root_close(struct gp_root *root);

/* openat(root, path) with O_RDONLY|O_CLOEXEC|O_NOCTTY|O_NONBLOCK added:
 * never blocks on a FIFO, never takes a terminal. */
int gp_open(const struct gp_root *root, const char *path, int flags);

/* pread from offset 0 until EOF or the buffer is full; NUL-terminates.
 * Returns the length read, or -1 with errno set. */
ssize_t gp_pread_all(int fd, char *buf, size_t cap);

/* Open, read whole (up to cap-1 bytes), close. -1 with errno on failure. */
ssize_t gp_read_file(const struct gp_root *root, const char *path,
		     char *buf, size_t cap);

/* As gp_read_file, into a malloc'd buffer that grows as needed (for
 * /proc files whose size is unknown: vmstat, meminfo, stack).  Caller
 * frees.  NULL with errno on failure. */
char *gp_slurp(const struct gp_root *root, const char *path, size_t *len);
char *gp_slurp_fd(int fd, size_t *len);

/* Opens path as process pid sees it below its root (its absolute symbolic
 * links followed inside it: openat2 RESOLVE_IN_ROOT), read-only,
 * non-blocking.  -1 with errno.  Where a target's file is read from is
 * decided in src/unwind/tfile.h; this is only the open. */
int gp_open_in_root(int pid, const char *path);

/* The thread ids of a live process (/proc/PID/task), in ascending order.
 * 0 with a malloc'd *tids, or -1 with errno (ENOENT: no such process). */
int gp_list_tids(int pid, int **tids, size_t *n);

#endif
