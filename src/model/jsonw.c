#include "config.h"
#include "jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct gp_jsonw *w, size_t more)
{
	if (w->oom)
		return false;
	if (w->len + more + 1 <= w->cap)
		return true;
	size_t nc = w->cap ? w->cap : 4096;
	while (nc < w->len + more + 1)
		nc *= 2;
	char *nb = realloc(w->buf, nc);
	if (!nb) {
		w->oom = true;
		return false;
	}
	w->buf = nb;
	w->cap = nc;
	return true;
}

static void put(struct gp_jsonw *w, const char *s, size_t n)
{
	if (!reserve(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void putc_(struct gp_jsonw *w, char c)
{
	put(w, &c, 1);
}

void gp_jw_reset(struct gp_jsonw *w)
{
	w->len = 0;
	w->depth = 0;
	w->first = 0;
	w->oom = false;
	w->after_key = false;
	if (w->buf)
		w->buf[0] = '\0';
}

void gp_jw_free(struct gp_jsonw *w)
{
	free(w->buf);
	memset(w, 0, sizeof *w);
}

/* A value (or a key) inside a container: a comma before all but the
 * first.  After a key the value follows directly. */
static void sep(struct gp_jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth == 0)
		return;
	uint64_t bit = 1ull << (w->depth - 1);
	if (w->first & bit)
		w->first &= ~bit;
	else
		putc_(w, ',');
}

static void open_(struct gp_jsonw *w, char c)
{
	sep(w);
	putc_(w, c);
	if (w->depth < 64) {
		w->depth++;
		w->first |= 1ull << (w->depth - 1);
	}
}

static void close_(struct gp_jsonw *w, char c)
{
	if (w->depth)
		w->depth--;
	putc_(w, c);
}

void gp_jw_obj_begin(struct gp_jsonw *w) { open_(w, '{'); }
void gp_jw_obj_end(struct gp_jsonw *w) { close_(w, '}'); }
void gp_jw_arr_begin(struct gp_jsonw *w) { open_(w, '['); }
void gp_jw_arr_end(struct gp_jsonw *w) { close_(w, ']'); }

/* Length of the valid UTF-8 sequence at p and its code point, or 0. */
static int utf8_seq(const unsigned char *p, uint32_t *cp)
{
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	int n;
	uint32_t c, min;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2; c = p[0] & 0x1f; min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3; c = p[0] & 0x0f; min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4; c = p[0] & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static void put_u(struct gp_jsonw *w, uint32_t u)
{
	char b[8];
	snprintf(b, sizeof b, "\\u%04x", u);
	put(w, b, 6);
}

/* ASCII-only output, like jansson's JSON_ENSURE_ASCII; a byte that is not
 * valid UTF-8 becomes the text \xNN (as gp_json_string does), so any comm
 * survives. */
static void str_body(struct gp_jsonw *w, const char *s)
{
	putc_(w, '"');
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		const unsigned char *q = p;
		while (*q >= 0x20 && *q < 0x7f && *q != '"' && *q != '\\')
			q++;
		if (q > p) {
			put(w, (const char *)p, (size_t)(q - p));
			p = q;
			continue;
		}
		uint32_t cp;
		int n = utf8_seq(p, &cp);
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };
			put(w, e, 2);
			p++;
		} else if (n == 0) {
			char b[8];
			snprintf(b, sizeof b, "\\\\x%02x", *p);
			put(w, b, 5);
			p++;
		} else if (cp >= 0x10000) {
			cp -= 0x10000;
			put_u(w, 0xd800 | (cp >> 10));
			put_u(w, 0xdc00 | (cp & 0x3ff));
			p += n;
		} else {
			put_u(w, cp);
			p += n;
		}
	}
	putc_(w, '"');
}

void gp_jw_key(struct gp_jsonw *w, const char *key)
{
	sep(w);
	str_body(w, key);
	putc_(w, ':');
	w->after_key = true;
}

void gp_jw_str(struct gp_jsonw *w, const char *s)
{
	sep(w);
	str_body(w, s);
}

/* v in decimal at the end of b[24], as "%llu" (or "%lld" with neg)
 * writes it; returns where it starts.  Numbers are most of a first
 * sample's text (10 001 threads' records), and snprintf's were 7 % of a
 * 1 s trace's CPU there (perf, 2026-12-06). */
static char *decimal(char b[24], uint64_t v, bool neg)
{
	char *p = b + 24;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (neg)
		*--p = '-';
	return p;
}

void gp_jw_int(struct gp_jsonw *w, int64_t v)
{
	char b[24];
	sep(w);
	/* -(INT64_MIN) as unsigned: 0 - v in uint64_t */
	char *p = decimal(b, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
	put(w, p, (size_t)(b + sizeof b - p));
}

void gp_jw_uint(struct gp_jsonw *w, uint64_t v)
{
	/* jansson reads integers as signed 64-bit: larger values go as
	 * reals rather than break the reader. */
	if (v > INT64_MAX) {
		gp_jw_real(w, (double)v);
		return;
	}
	char b[24];
	sep(w);
	char *p = decimal(b, v, false);
	put(w, p, (size_t)(b + sizeof b - p));
}

void gp_jw_real(struct gp_jsonw *w, double v)
{
	sep(w);
	if (!isfinite(v)) {
		put(w, "null", 4);
		return;
	}
	char b[32];
	/* A whole number below 1e10 is its digits under %.10g: written as
	 * such (-0 is "-0" there, and goes to snprintf). */
	if (v < 1e10 && v > -1e10 && v == (double)(int64_t)v && (v != 0 || !signbit(v))) {
		char d[24];
		char *p = decimal(d, v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v, v < 0);
		size_t len = (size_t)(d + sizeof d - p);
		memcpy(b, p, len);
		memcpy(b + len, ".0", 2);
		put(w, b, len + 2);
		return;
	}
	int n = snprintf(b, sizeof b, "%.10g", v);
	/* Keep it a real for readers that care (jansson does). */
	if (!strpbrk(b, ".eE") && n < (int)sizeof b - 2) {
		b[n++] = '.';
		b[n++] = '0';
		b[n] = '\0';
	}
	put(w, b, (size_t)n);
}

void gp_jw_bool(struct gp_jsonw *w, bool v)
{
	sep(w);
	put(w, v ? "true" : "false", v ? 4 : 5);
}

void gp_jw_hex(struct gp_jsonw *w, uint64_t v)
{
	char b[24];
	sep(w);
	put(w, b, (size_t)snprintf(b, sizeof b, "\"0x%llx\"", (unsigned long long)v));
}
