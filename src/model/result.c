#include "config.h"
#include "result.h"
#include "error.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

struct gp_result {
	int fd;
	int err;   /* first errno, sticky */
	char *path;
	/* -o FILE.zst: one zstd frame, flushed after every line
	 * (ZSTD_e_flush ends the block, so everything written so far can
	 * be decompressed: zstd.h, ZSTD_compressStream2), ended on close. */
	ZSTD_CCtx *z;
	char *zbuf;
	size_t zcap;
};

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n > k && !strcmp(s + n - k, suf);
}

/* The writer of an open fd, which it owns from now on (closed on failure). */
static struct gp_result *result_of(int fd, const char *path)
{
	struct gp_result *r = calloc(1, sizeof *r);
	if (!r) {
		close(fd);
		return NULL;
	}
	r->fd = fd;
	r->path = strdup(path);
	return r;
}

struct gp_result *gp_result_create(const char *path)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY;
	/* Root writing into a world-writable directory must not follow a
	 * planted symlink (issue 8). */
	if (geteuid() == 0)
		flags |= O_NOFOLLOW;
	/* O_NONBLOCK: a FIFO with no reader fails (ENXIO) instead of
	 * blocking the probe forever in open(2); one with a reader
	 * (`-o >(jq ...)`) works.  Writes block again afterwards. */
	int fd = open(path, flags | O_NONBLOCK, 0644);
	if (fd < 0)
		return NULL;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct gp_result *r = result_of(fd, path);
	if (r && has_suffix(path, ".zst")) {
		r->z = ZSTD_createCCtx();
		r->zcap = ZSTD_CStreamOutSize();
		r->zbuf = malloc(r->zcap);
		/* Level 9 with a 1 MiB window: format 4's 200-thread sample
		 * whose threads all ran (17.7 KB a line) went from 2 190 to
		 * 1 889 bytes against level 3, for 1.3 ms of CPU a sample
		 * and a 14 MiB context (3.5 at level 3; level 12: 1 855
		 * bytes, 4.3 ms, 50 MiB); the window is 60 such samples
		 * (bench/results/2026-12-05-scale-day.md). */
		if (!r->z || !r->zbuf
		    || ZSTD_isError(ZSTD_CCtx_setParameter(r->z, ZSTD_c_compressionLevel, 9))
		    || ZSTD_isError(ZSTD_CCtx_setParameter(r->z, ZSTD_c_windowLog, 20))
		    || ZSTD_isError(ZSTD_CCtx_setParameter(r->z, ZSTD_c_checksumFlag, 0))) {
			gp_result_close(r);
			errno = ENOMEM;
			return NULL;
		}
	}
	return r;
}

void gp_result_create_failed(const char *path, int e)
{
	struct stat sb;
	bool have = lstat(path, &sb) == 0;
	if (e == ENXIO && have && S_ISFIFO(sb.st_mode))
		gp_err(path, "cannot create the result file: a FIFO with no reader "
		       "(start the reader first: gpuprobe never waits in open)");
	else if (e == ELOOP && geteuid() == 0 && have && S_ISLNK(sb.st_mode))
		gp_err(path, "cannot create the result file: a symbolic link, which gpuprobe "
		       "does not follow as root (give the real path)");
	else
		gp_err_errno(e, path, "cannot create the result file");
}

struct gp_result *gp_result_stdout(const char *path)
{
	int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return NULL;
	return result_of(fd, path);
}

const char *gp_result_path(const struct gp_result *r)
{
	return r->path;
}

static int write_plain(struct gp_result *r, const char *s, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = write(r->fd, s + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->err = errno;
			break;
		}
		off += (size_t)n;
	}
	if (r->err) {
		errno = r->err;
		return -1;
	}
	return 0;
}

/* Through the compressor: the line, then a flush, so that a kill loses
 * at most the line in progress (each line is a whole sample). */
static int write_zstd(struct gp_result *r, const char *s, size_t len, ZSTD_EndDirective how)
{
	ZSTD_inBuffer in = { s, len, 0 };
	for (;;) {
		ZSTD_outBuffer out = { r->zbuf, r->zcap, 0 };
		size_t left = ZSTD_compressStream2(r->z, &out, &in, how);
		if (ZSTD_isError(left)) {
			r->err = EIO;
			errno = r->err;
			return -1;
		}
		if (out.pos && write_plain(r, r->zbuf, out.pos) < 0)
			return -1;
		if (left == 0 && in.pos == in.size)
			return 0;
	}
}

static int write_all(struct gp_result *r, const char *s, size_t len)
{
	if (r->err) {
		errno = r->err;
		return -1;
	}
	return r->z ? write_zstd(r, s, len, ZSTD_e_flush) : write_plain(r, s, len);
}

static char *dump_line(struct gp_result *r, json_t *line)
{
	char *s = json_dumps(line, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(10));
	json_decref(line);
	if (!s && !r->err)
		r->err = ENOMEM;
	if (r->err) {
		free(s);
		errno = r->err;
		return NULL;
	}
	return s;
}

int gp_result_write(struct gp_result *r, json_t *line)
{
	char *s = dump_line(r, line);
	if (!s)
		return -1;
	size_t len = strlen(s);
	s[len] = '\n'; /* json_dumps' NUL becomes the line end */
	int rc = write_all(r, s, len + 1);
	free(s);
	return rc;
}

int gp_result_write_raws(struct gp_result *r, json_t *line, const struct gp_raw *raws,
			 size_t nraws)
{
	bool empty = json_object_size(line) == 0;
	char *s = dump_line(r, line);
	if (!s)
		return -1;
	size_t len = strlen(s), total = len + 2;
	for (size_t i = 0; i < nraws; i++)
		total += strlen(raws[i].key) + raws[i].len + 4;
	/* s ends with '}': reopen it, append the members, close, newline. */
	char *b = malloc(total);
	if (!b || len < 2 || s[len - 1] != '}') {
		free(b);
		free(s);
		r->err = b ? EINVAL : ENOMEM;
		errno = r->err;
		return -1;
	}
	size_t n = len - 1;
	memcpy(b, s, n);
	for (size_t i = 0; i < nraws; i++) {
		if (!empty || i)
			b[n++] = ',';
		size_t klen = strlen(raws[i].key);
		b[n++] = '"';
		memcpy(b + n, raws[i].key, klen);
		n += klen;
		b[n++] = '"';
		b[n++] = ':';
		memcpy(b + n, raws[i].text, raws[i].len);
		n += raws[i].len;
	}
	b[n++] = '}';
	b[n++] = '\n';
	free(s);
	int rc = write_all(r, b, n);
	free(b);
	return rc;
}

int gp_result_write_raw(struct gp_result *r, json_t *line, const char *key,
			const char *raw, size_t rawlen)
{
	struct gp_raw one = { key, raw, rawlen };
	return gp_result_write_raws(r, line, &one, 1);
}

int gp_result_close(struct gp_result *r)
{
	if (!r)
		return 0;
	if (r->z && !r->err)
		write_zstd(r, "", 0, ZSTD_e_end); /* the frame's end mark */
	ZSTD_freeCCtx(r->z);
	free(r->zbuf);
	int err = r->err;
	if (close(r->fd) < 0 && !err)
		err = errno;
	free(r->path);
	free(r);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

static char sampler_path[8], sampler_why[200];

void gp_result_note_sampler(const char *path, const char *why)
{
	if (sampler_path[0] && strcmp(path, "proc") != 0)
		return;
	snprintf(sampler_path, sizeof sampler_path, "%s", path);
	snprintf(sampler_why, sizeof sampler_why, "%s", why ? why : "");
}

json_t *gp_result_header(const char *command, int argc, char **argv, json_t *host)
{
	char now[64];
	gp_iso8601_now(now, sizeof now);
	json_t *a = json_array();
	for (int i = 0; i < argc; i++)
		json_array_append_new(a, json_string(argv[i]));
	json_t *h = json_pack("{s:s, s:s, s:i, s:s, s:o, s:s}", "type", "header",
			      "gpuprobe", PACKAGE_VERSION, "format", GP_RESULT_FORMAT,
			      "command", command, "argv", a, "started", now);
	json_object_set_new(h, "host", host ? host : json_object());
	if (sampler_path[0]) {
		json_object_set_new(h, "sampler_path", json_string(sampler_path));
		if (sampler_why[0])
			json_object_set_new(h, "sampler_why", gp_json_string(sampler_why));
	}
	return h;
}

json_t *gp_json_string(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	size_t len = strlen(s);
	char *buf = malloc(len * 4 + 1);
	if (!buf)
		return json_string("");
	char *w = buf;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x80) {
			*w++ = (char)*p;
		} else {
			static const char hex[] = "0123456789abcdef";
			*w++ = '\\';
			*w++ = 'x';
			*w++ = hex[*p >> 4];
			*w++ = hex[*p & 15];
		}
	}
	*w = '\0';
	j = json_string(buf);
	free(buf);
	return j ? j : json_string("");
}

json_t *gp_json_child(json_t *parent, const char *name)
{
	json_t *o = json_object_get(parent, name);
	if (json_is_object(o))
		return o;
	if (!parent)
		return NULL;
	o = json_object();
	if (json_object_set_new(parent, name, o))
		return NULL;
	return o;
}

void gp_json_set_u64(json_t *obj, const char *key, uint64_t v)
{
	if (obj)
		json_object_set_new(obj, key, json_integer((json_int_t)v));
}

bool gp_json_get_u64(const json_t *o, const char *k, uint64_t *v)
{
	json_t *j = json_object_get(o, k);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

json_t *gp_json_hex(unsigned long long v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%llx", v);
	return json_string(buf);
}
