#include "config.h"
#include "strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The "" every empty strbuf points at: never written (every write path
 * allocates first, and setlen on an empty strbuf returns early). */
char strbuf_slopbuf[1];

static _Noreturn void out_of_memory(void)
{
	/* No stdio, no malloc: the reason we are here. */
	static const char msg[] = "gpuprobe: out of memory\n";
	ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
	(void)r;
	exit(1); /* GP_EXIT_ERROR */
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = 0;
	sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	if (!sb->alloc)
		strbuf_grow(sb, 0);
	char *r = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return r;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len >= sb->len)
		return;
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = '\0';
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	/* len + extra + 1 must not wrap: a length from outside can be
	 * anything. */
	if (extra > SIZE_MAX / 2 - 1 - sb->len)
		out_of_memory();
	size_t need = sb->len + extra + 1;
	if (sb->alloc && need <= sb->alloc)
		return;
	size_t cap = sb->alloc ? sb->alloc : 64;
	while (cap < need)
		cap = cap / 2 * 3 + 16;
	char *nb = sb->alloc ? realloc(sb->buf, cap) : malloc(cap);
	if (!nb)
		out_of_memory();
	if (!sb->alloc)
		nb[0] = '\0';
	sb->buf = nb;
	sb->alloc = cap;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	if (s)
		strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	if (!sb->alloc)
		strbuf_grow(sb, 64);
	va_copy(cp, ap);
	int n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0) {
		/* An encoding error: keep what was there, add nothing. */
		sb->buf[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		va_copy(cp, ap);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
		va_end(cp);
		if (n < 0) {
			sb->buf[sb->len] = '\0';
			return;
		}
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

size_t strbuf_copy_to(const struct strbuf *sb, char *dst, size_t cap)
{
	if (cap) {
		size_t n = sb->len < cap - 1 ? sb->len : cap - 1;
		memcpy(dst, sb->buf, n);
		dst[n] = '\0';
	}
	return sb->len;
}
