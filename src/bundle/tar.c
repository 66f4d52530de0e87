/* ustar over gzip: see tar.h. */
#include "config.h"
#include "tar.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

struct gp_tar {
	gzFile gz;
	char path[4096], tmp[4100];
	int err;                     /* the first errno, sticky */
};

struct gp_tar *gp_tar_open(const char *path)
{
	struct gp_tar *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	if (snprintf(t->path, sizeof t->path, "%s", path) >= (int)sizeof t->path) {
		free(t);
		errno = ENAMETOOLONG;
		return NULL;
	}
	snprintf(t->tmp, sizeof t->tmp, "%s.tmp", path);
	/* A new file of ours, never one that was there (common/safefile.h). */
	int fd = gp_create_excl(t->tmp, 0640);
	if (fd < 0) {
		free(t);
		return NULL;
	}
	/* "wb6": level 6, zlib's default trade of size for time. */
	t->gz = gzdopen(fd, "wb6");
	if (!t->gz) {
		int e = errno ? errno : ENOMEM;
		close(fd);
		unlink(t->tmp);
		free(t);
		errno = e;
		return NULL;
	}
	return t;
}

static int put(struct gp_tar *t, const void *buf, size_t len)
{
	if (t->err)
		return -1;
	if (len && gzwrite(t->gz, buf, (unsigned)len) != (int)len) {
		int zerr;
		gzerror(t->gz, &zerr);
		t->err = zerr == Z_ERRNO && errno ? errno : EIO;
		return -1;
	}
	return 0;
}

/* An octal field of width w: w-1 digits and a NUL (ustar's form). */
static void octal(char *field, size_t w, unsigned long long v)
{
	snprintf(field, w, "%0*llo", (int)(w - 1), v);
}

/* The 512-byte header of a regular file.  Field offsets are ustar's:
 * name 0/100, mode 100/8, uid 108/8, gid 116/8, size 124/12, mtime
 * 136/12, chksum 148/8, typeflag 156, linkname 157/100, magic 257/6,
 * version 263/2, uname 265/32, gname 297/32, devmajor 329/8, devminor
 * 337/8, prefix 345/155.  The checksum is the sum of the header's bytes
 * with the checksum field read as eight spaces. */
static int header(struct gp_tar *t, const char *name, unsigned long long size)
{
	unsigned char h[512];
	size_t nl = strlen(name);
	/* 8 GiB is ustar's largest size (11 octal digits): no part of a
	 * bundle comes near it, and a name fits without the prefix field. */
	if (nl == 0 || nl > 99 || size >= (1ull << 33)) {
		t->err = t->err ? t->err : ENAMETOOLONG;
		return -1;
	}
	memset(h, 0, sizeof h);
	memcpy(h, name, nl);
	octal((char *)h + 100, 8, 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, (unsigned long long)time(NULL));
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof h; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	return put(t, h, sizeof h);
}

static int pad(struct gp_tar *t, unsigned long long size)
{
	static const char zero[512];
	size_t rem = (size_t)(size % 512);
	return rem ? put(t, zero, 512 - rem) : 0;
}

int gp_tar_add_mem(struct gp_tar *t, const char *name, const void *data, size_t len)
{
	if (header(t, name, len) < 0 || put(t, data, len) < 0 || pad(t, len) < 0)
		return -1;
	return 0;
}

int gp_tar_add_file(struct gp_tar *t, const char *name, const char *src)
{
	int fd = open(src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = fd < 0 || errno ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		errno = e ? e : EINVAL;
		return -1; /* a part that is not there: not the archive's error */
	}
	/* The size the header promises is what is copied: a file that grows
	 * meanwhile is cut, one that shrinks is padded with zeros. */
	unsigned long long size = (unsigned long long)st.st_size, done = 0;
	if (header(t, name, size) < 0) {
		close(fd);
		return -1;
	}
	char buf[65536];
	while (done < size) {
		size_t want = size - done < sizeof buf ? (size_t)(size - done) : sizeof buf;
		ssize_t n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			memset(buf, 0, want);
			n = (ssize_t)want;
		}
		if (put(t, buf, (size_t)n) < 0)
			break;
		done += (unsigned long long)n;
	}
	close(fd);
	return pad(t, size) < 0 || t->err ? -1 : 0;
}

int gp_tar_close(struct gp_tar *t)
{
	static const char zero[1024];
	put(t, zero, sizeof zero);
	int zrc = gzclose(t->gz);
	int e = t->err ? t->err : zrc != Z_OK ? (errno ? errno : EIO) : 0;
	if (!e && rename(t->tmp, t->path) < 0)
		e = errno;
	if (e)
		unlink(t->tmp);
	free(t);
	errno = e;
	return e ? -1 : 0;
}

void gp_tar_abandon(struct gp_tar *t)
{
	gzclose(t->gz);
	unlink(t->tmp);
	free(t);
}
