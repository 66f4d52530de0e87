#include "config.h"
#include "rstream.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- lines, bounded ---------------------------------------------------- */

#define CHUNK (64 * 1024)

int gp_rlines_open(struct gp_rlines *r, int fd)
{
	memset(r, 0, sizeof *r);
	struct stat st;
	bool have_size = fstat(fd, &st) == 0;
	r->compressed = kind_of(fd) != PLAIN;
	r->in_size = have_size && st.st_size > 0 ? (unsigned long long)st.st_size : 0;
	r->max_line = GP_RLINES_LINE_MAX;
	r->max_total = (unsigned long long)-1;
	if (r->compressed) {
		unsigned long long by_ratio = r->in_size * GP_RLINES_RATIO;
		r->max_total = by_ratio > GP_RLINES_FLOOR ? by_ratio : GP_RLINES_FLOOR;
	}
	r->chunk = malloc(CHUNK);
	if (!r->chunk) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	r->f = gp_rstream_open(fd);
	if (!r->f) {
		int e = errno;
		free(r->chunk);
		r->chunk = NULL;
		errno = e;
		return -1;
	}
	return 0;
}

/* The next chunk read ahead; false at the end or on an error (r->err). */
static bool refill(struct gp_rlines *r)
{
	size_t k = fread(r->chunk, 1, CHUNK, r->f);
	if (!k) {
		if (ferror(r->f)) {
			r->err = GP_RLINES_IO;
			r->errnum = errno ? errno : EIO;
		}
		return false;
	}
	r->total += k;
	if (r->total > r->max_total) {
		r->err = GP_RLINES_BOMB;
		return false;
	}
	r->cpos = 0;
	r->clen = k;
	return true;
}

/* JSON objects and arrays that k bytes at p may open. */
static size_t nodes_in(const char *p, size_t k)
{
	size_t n = 0;
	for (size_t i = 0; i < k; i++)
		n += p[i] == '{' || p[i] == '[';
	return n;
}

static bool append(struct gp_rlines *r, const char *p, size_t k)
{
	if (r->len + k > r->max_line) {
		r->err = GP_RLINES_LONG;
		return false;
	}
	size_t nodes = nodes_in(p, k);
	r->line_nodes += nodes;
	if (r->line_nodes > GP_RLINES_LINE_NODES) {
		r->err = GP_RLINES_NODES;
		return false;
	}
	r->total += (unsigned long long)nodes * (GP_RLINES_NODE_COST - 1);
	if (r->total > r->max_total) {
		r->err = GP_RLINES_BOMB;
		return false;
	}
	if (r->len + k + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + k + 1)
			cap *= 2;
		if (cap > r->max_line + 1)
			cap = r->max_line + 1;
		char *b = realloc(r->line, cap);
		if (!b) {
			r->err = GP_RLINES_IO;
			r->errnum = ENOMEM;
			return false;
		}
		r->line = b;
		r->cap = cap;
	}
	memcpy(r->line + r->len, p, k);
	r->len += k;
	r->line[r->len] = '\0';
	return true;
}

ssize_t gp_rlines_next(struct gp_rlines *r)
{
	r->len = 0;
	r->line_nodes = 0;
	if (r->err)
		return -1;
	for (;;) {
		if (r->cpos == r->clen && !refill(r))
			break;
		const char *p = r->chunk + r->cpos;
		const char *nl = memchr(p, '\n', r->clen - r->cpos);
		size_t k = nl ? (size_t)(nl - p) + 1 : r->clen - r->cpos;
		if (!append(r, p, k))
			return -1;
		r->cpos += k;
		if (nl)
			break;
	}
	if (r->err)
		return -1;
	if (r->len)
		r->n++;
	return (ssize_t)r->len;
}

static void size_words(char *buf, size_t cap, unsigned long long b)
{
	if (b >= (1ull << 30))
		snprintf(buf, cap, "%.1f GiB", (double)b / (1ull << 30));
	else if (b >= (1ull << 20))
		snprintf(buf, cap, "%.0f MiB", (double)b / (1ull << 20));
	else
		snprintf(buf, cap, "%llu bytes", b);
}

const char *gp_rlines_why(const struct gp_rlines *r, char *buf, size_t cap)
{
	char a[32], b[32];
	switch (r->err) {
	case GP_RLINES_LONG:
		size_words(a, sizeof a, r->max_line);
		snprintf(buf, cap, "line %lu is longer than %s: not a line gpuprobe writes "
			 "(a corrupt or crafted file)", r->n + 1, a);
		break;
	case GP_RLINES_NODES:
		snprintf(buf, cap, "line %lu holds more than %zu JSON objects and arrays: not a line "
			 "gpuprobe writes (a corrupt or crafted file)", r->n + 1, (size_t)GP_RLINES_LINE_NODES);
		break;
	case GP_RLINES_BOMB:
		size_words(a, sizeof a, r->max_total);
		size_words(b, sizeof b, r->in_size);
		snprintf(buf, cap, "decompresses to more than %s (an object or array counted as %d "
			 "bytes), over %d times its %s: not a result gpuprobe wrote (a decompression "
			 "bomb?); if you trust it, decompress it and give report the plain file", a,
			 GP_RLINES_NODE_COST, GP_RLINES_RATIO, b);
		break;
	case GP_RLINES_IO:
		snprintf(buf, cap, "read error: %s", strerror(r->errnum ? r->errnum : EIO));
		break;
	default:
		snprintf(buf, cap, "no error");
		break;
	}
	return buf;
}

void gp_rlines_close(struct gp_rlines *r)
{
	if (r->f)
		fclose(r->f);
	free(r->line);
	free(r->chunk);
	memset(r, 0, sizeof *r);
}
