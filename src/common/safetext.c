/* Safe text: see safetext.h. */
#include "config.h"
#include "safetext.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t gp_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	else if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static uint32_t code_point(const unsigned char *s, size_t len)
{
	static const unsigned char lead_mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & lead_mask[len];
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* A character a terminal obeys or a reader is fooled by (safetext.h). */
static int unsafe_cp(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of the character (or lone byte, when len is 0) at s into
 * e (at least 8 bytes); its length, 0 when it needs none. */
static size_t escape_of(const unsigned char *s, size_t len, char e[8])
{
	if (!len)
		return (size_t)snprintf(e, 8, "\\x%02x", s[0]);
	uint32_t cp = code_point(s, len);
	if (!unsafe_cp(cp))
		return 0;
	switch (cp) {
	case '\n': memcpy(e, "\\n", 3); return 2;
	case '\t': memcpy(e, "\\t", 3); return 2;
	case '\r': memcpy(e, "\\r", 3); return 2;
	default: break;
	}
	if (cp < 0x80)
		return (size_t)snprintf(e, 8, "\\x%02x", (unsigned)cp);
	return (size_t)snprintf(e, 8, "\\u%04x", (unsigned)cp);
}

void gp_safe_add_n(struct strbuf *sb, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		/* Printable ASCII, the common case, in one copy. */
		while (run < n && s[run] >= 0x20 && s[run] < 0x7f)
			run++;
		if (run > i) {
			strbuf_add(sb, s + i, run - i);
			i = run;
			continue;
		}
		size_t len = gp_utf8_len(s + i, n - i);
		char e[8];
		size_t el = escape_of(s + i, len, e);
		if (el)
			strbuf_add(sb, e, el);
		else
			strbuf_add(sb, s + i, len);
		i += len ? len : 1;
	}
}

void gp_safe_add(struct strbuf *sb, const char *s)
{
	if (s)
		gp_safe_add_n(sb, s, strlen(s));
}

int gp_is_safe(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	for (size_t i = 0; i < n;) {
		size_t len = gp_utf8_len(s + i, n - i);
		char e[8];
		if (!len || escape_of(s + i, len, e))
			return 0;
		i += len;
	}
	return 1;
}

void gp_safe_tail(struct strbuf *sb, size_t from)
{
	if (from >= sb->len || gp_is_safe(sb->buf + from))
		return;
	struct strbuf t = STRBUF_INIT;
	gp_safe_add_n(&t, sb->buf + from, sb->len - from);
	strbuf_setlen(sb, from);
	strbuf_add(sb, t.buf, t.len);
	strbuf_release(&t);
}

const char *gp_safe_str(const char *s, char *buf, size_t cap)
{
	struct strbuf t = STRBUF_INIT;
	gp_safe_add(&t, s);
	size_t keep = t.len < cap ? t.len : cap - 1;
	/* Cut before a character or an escape that does not fit whole. */
	if (keep < t.len) {
		size_t i = 0, last = 0;
		while (i < keep) {
			size_t step = t.buf[i] == '\\' ? (t.buf[i + 1] == 'u' ? 6 : t.buf[i + 1] == 'x' ? 4 : 2)
				      : gp_utf8_len((const unsigned char *)t.buf + i, t.len - i);
			if (!step || i + step > keep)
				break;
			i += step;
			last = i;
		}
		keep = last;
	}
	memcpy(buf, t.buf, keep);
	buf[keep] = '\0';
	strbuf_release(&t);
	return buf;
}

int gp_safe_lines(FILE *out, const char *buf, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i = 0;
	while (i < n) {
		const char *nl = memchr(buf + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - buf) : n;
		strbuf_reset(&sb);
		gp_safe_add_n(&sb, buf + i, end - i);
		if (nl)
			strbuf_addch(&sb, '\n');
		if (fwrite(sb.buf, 1, sb.len, out) != sb.len) {
			strbuf_release(&sb);
			return EOF;
		}
		i = nl ? end + 1 : n;
	}
	strbuf_release(&sb);
	return 0;
}
