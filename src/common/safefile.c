/* Files for others to read, made safely: see safefile.h. */
#include "config.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int refuse(char *why, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
	errno = EPERM;
	return -1;
}

int gp_safe_dir(const char *dir, char *why, size_t cap)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		snprintf(why, cap, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, cap, "not a directory");
		errno = ENOTDIR;
		return -1;
	}
	unsigned mode = (unsigned)(st.st_mode & 07777);
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return refuse(why, cap, "the directory is owned by uid %u, not by this user or root: "
			      "its owner could replace what gpuprobe writes there", (unsigned)st.st_uid);
	if (st.st_mode & S_ISVTX)
		return 0;
	if ((st.st_mode & S_IWGRP) && st.st_gid != getegid() && st.st_gid != 0)
		return refuse(why, cap, "the directory is writable by group %u (mode 0%o) and not "
			      "sticky: its members could replace what gpuprobe writes there",
			      (unsigned)st.st_gid, mode);
	if (st.st_mode & S_IWOTH)
		return refuse(why, cap, "the directory is writable by others (mode 0%o) and not "
			      "sticky: anyone could replace what gpuprobe writes there", mode);
	return 0;
}

int gp_safe_dir_of(const char *path, char *why, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return gp_safe_dir(".", why, cap);
	if (slash == path)
		return gp_safe_dir("/", why, cap);
	char *dir = strndup(path, (size_t)(slash - path));
	if (!dir) {
		snprintf(why, cap, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	int rc = gp_safe_dir(dir, why, cap);
	free(dir);
	return rc;
}

int gp_create_excl(const char *path, mode_t mode)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(path, flags, mode);
	if (fd >= 0 || errno != EEXIST)
		return fd;
	/* A file of our own left by a run killed before its rename goes;
	 * anything else there is somebody's: not ours to take or remove. */
	struct stat st;
	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		errno = EEXIST;
		return -1;
	}
	if (unlink(path) < 0)
		return -1;
	return open(path, flags, mode);
}
