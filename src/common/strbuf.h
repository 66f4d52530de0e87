/* One bounded string builder, in the shape of git's strbuf.h: a buffer
 * that grows to fit and never writes past its end.  Every sentence a
 * renderer builds from pieces goes through it, never through a chain of
 * snprintf calls that add each return value to an offset `l` and write at
 * `b + l` with `sizeof b - l` room: once `l` passes the buffer's size (a
 * return value is what would have been written), `sizeof b - l` wraps and
 * the next snprintf writes past the buffer (issue 12: a result header's long runtime strings did that
 * to hostinfo.c's stack buffer).
 *
 * Invariants: `buf` is never NULL and always NUL-terminated (an empty
 * strbuf points at a shared, read-only "" until its first append), and
 * `len < alloc` once anything was allocated.
 *
 * Allocation failure is fatal and clean: "gpuprobe: out of memory" on
 * stderr, exit status 1 (GP_EXIT_ERROR).  Nothing a renderer could do with
 * a half-built sentence would help a user more, and a sticky error would
 * need a check at every one of the callers. */
#ifndef GP_STRBUF_H
#define GP_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	size_t alloc; /* bytes allocated; 0 while buf is the shared "" */
	size_t len;   /* bytes used, not counting the NUL */
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

/* hint: bytes to allocate now (0: none until the first append). */
void strbuf_init(struct strbuf *sb, size_t hint);
/* Frees the buffer; sb is empty and usable again. */
void strbuf_release(struct strbuf *sb);
/* Hands the buffer (malloc'd, NUL-terminated) to the caller, who frees
 * it; sb is empty and usable again.  *len gets its length when len is
 * not NULL. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Empties sb, keeping its allocation. */
void strbuf_reset(struct strbuf *sb);
/* Shortens sb to len bytes (no-op when already shorter). */
void strbuf_setlen(struct strbuf *sb, size_t len);
/* Makes room for extra more bytes (and the NUL) without another realloc. */
void strbuf_grow(struct strbuf *sb, size_t extra);

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
/* s NULL appends nothing. */
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Copies sb into a caller's fixed buffer of cap bytes, cut short (and
 * NUL-terminated) where it does not fit; for the functions whose contract
 * is still (char *buf, size_t cap).  Returns sb->len, as snprintf would. */
size_t strbuf_copy_to(const struct strbuf *sb, char *dst, size_t cap);

#endif
