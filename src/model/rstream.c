#include "config.h"
#include "rstream.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* The frame magic numbers: RFC 8878 section 3.1.1 (zstd, 0xFD2FB528
 * little-endian) and RFC 1952 section 2.3.1 (gzip, 0x1f 0x8b). */
static const unsigned char zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
static const unsigned char gzip_magic[2] = { 0x1f, 0x8b };

enum kind { PLAIN, ZSTD, GZIP };

static enum kind kind_of(int fd)
{
	unsigned char m[4];
	ssize_t n = pread(fd, m, sizeof m, 0);
	if (n == 4 && !memcmp(m, zstd_magic, 4))
		return ZSTD;
	if (n >= 2 && !memcmp(m, gzip_magic, 2))
		return GZIP;
	return PLAIN;
}

const char *gp_rstream_kind(int fd)
{
	static const char *const names[] = { "plain", "zstd", "gzip" };
	return names[kind_of(fd)];
}

struct zs {
	int fd;
	ZSTD_DStream *d;
	ZSTD_inBuffer in;
	unsigned char *ibuf;
	size_t icap;
	bool eof;
};

/* Decompressed bytes into buf; 0 at the end of the file.  A cut frame
 * (a run killed mid-write) ends where its last whole block ends: what
 * was flushed reads back, the line in progress is the reader's cut tail.
 * Frames follow each other (zstd's concatenation rule, RFC 8878 3.1):
 * ZSTD_decompressStream goes on to the next by itself. */
static ssize_t zs_read(void *cookie, char *buf, size_t size)
{
	struct zs *z = cookie;
	ZSTD_outBuffer out = { buf, size, 0 };
	for (;;) {
		/* First what the decoder holds: a block decoded into its own
		 * buffer comes out over several calls when buf is smaller. */
		if (!z->eof || z->in.pos < z->in.size) {
			size_t rc = ZSTD_decompressStream(z->d, &out, &z->in);
			if (ZSTD_isError(rc)) {
				/* Corrupt from here on: what came before stands,
				 * as a plain file's bad line would. */
				z->eof = true;
				z->in.pos = z->in.size;
				return (ssize_t)out.pos;
			}
			if (out.pos)
				return (ssize_t)out.pos;
		}
		if (z->in.pos < z->in.size)
			continue;
		if (z->eof)
			return 0;
		ssize_t n;
		do
			n = read(z->fd, z->ibuf, z->icap);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -1;
		if (n == 0)
			z->eof = true;
		z->in = (ZSTD_inBuffer){ z->ibuf, (size_t)n, 0 };
	}
}

static int zs_close(void *cookie)
{
	struct zs *z = cookie;
	ZSTD_freeDStream(z->d);
	free(z->ibuf);
	int rc = close(z->fd);
	free(z);
	return rc;
}

static ssize_t gz_read(void *cookie, char *buf, size_t size)
{
	gzFile g = cookie;
	if (size > (unsigned)INT32_MAX)
		size = INT32_MAX;
	int n = gzread(g, buf, (unsigned)size);
	/* A cut file (Z_BUF_ERROR after the data it had) or a corrupt one:
	 * the end of the text, like zs_read. */
	return n < 0 ? 0 : n;
}

static int gz_close(void *cookie)
{
	return gzclose_r(cookie) == Z_OK ? 0 : -1;
}

static FILE *open_zstd(int fd)
{
	struct zs *z = calloc(1, sizeof *z);
	if (!z)
		return NULL;
	z->fd = fd;
	z->icap = ZSTD_DStreamInSize();
	z->ibuf = malloc(z->icap);
	z->d = ZSTD_createDStream();
	/* A stranger's frame may ask for any window: the library's default
	 * limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT, 128 MiB) stands; the writer's
	 * level 3 uses far less. */
	if (z->ibuf && z->d && !ZSTD_isError(ZSTD_initDStream(z->d))) {
		cookie_io_functions_t io = { .read = zs_read, .close = zs_close };
		FILE *f = fopencookie(z, "r", io);
		if (f)
			return f;
	}
	ZSTD_freeDStream(z->d);
	free(z->ibuf);
	free(z);
	errno = ENOMEM;
	return NULL;
}

static FILE *open_gzip(int fd)
{
	/* zlib reads from the fd's current offset: from the start. */
	gzFile g = lseek(fd, 0, SEEK_SET) == 0 ? gzdopen(fd, "rb") : NULL;
	if (!g) {
		/* gzdopen leaves fd open when it fails (zlib.h). */
		int e = errno ? errno : ENOMEM;
		close(fd);
		errno = e;
		return NULL;
	}
	gzbuffer(g, 128 * 1024);
	cookie_io_functions_t io = { .read = gz_read, .close = gz_close };
	FILE *f = fopencookie(g, "r", io);
	if (!f) {
		gzclose_r(g); /* closes fd */
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

FILE *gp_rstream_open(int fd)
{
	FILE *f = NULL;
	switch (kind_of(fd)) {
	case ZSTD:
		if (lseek(fd, 0, SEEK_SET) == 0)
			f = open_zstd(fd);
		break;
	case GZIP:
		return open_gzip(fd); /* owns fd even on failure */
	case PLAIN:
		if (lseek(fd, 0, SEEK_SET) == 0)
			f = fdopen(fd, "r");
		break;
	}
	if (!f) {
		int e = errno ? errno : EIO;
		close(fd);
		errno = e;
	}
	return f;
}
