#include "config.h"
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

bool gp_parse_u64(const char *s, uint64_t *out, const char **end)
{
	s = skip_blanks(s);
	if (*s < '0' || *s > '9')
		return false;
	uint64_t v = 0;
	while (*s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	*out = v;
	if (end)
		*end = s;
	return true;
}

bool gp_parse_i64(const char *s, int64_t *out, const char **end)
{
	s = skip_blanks(s);
	bool neg = *s == '-';
	if (neg)
		s++;
	uint64_t u;
	if (!gp_parse_u64(s, &u, end))
		return false;
	if (neg) {
		if (u > (uint64_t)INT64_MAX + 1)
			return false;
		*out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	} else {
		if (u > INT64_MAX)
			return false;
		*out = (int64_t)u;
	}
	return true;
}

bool gp_parse_x64(const char *s, uint64_t *out, const char **end)
{
	s = skip_blanks(s);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		if (!isxdigit((unsigned char)*s))
			return false;
		uint64_t v = 0;
		while (isxdigit((unsigned char)*s)) {
			if (v >> 60)
				return false;
			int c = tolower((unsigned char)*s);
			v = v * 16 + (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
			s++;
		}
		*out = v;
		if (end)
			*end = s;
		return true;
	}
	return gp_parse_u64(s, out, end);
}

int gp_kv_each(const char *buf, gp_kv_fn cb, void *ctx)
{
	const char *p = buf;
	while (*p) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		const char *k = p;
		const char *q = k;
		while (q < eol && *q != ':' && *q != ' ' && *q != '\t')
			q++;
		size_t klen = (size_t)(q - k);
		if (q < eol && *q == ':')
			q++;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if (klen > 0 && q < eol) {
			int r = cb(k, klen, q, ctx);
			if (r)
				return r;
		}
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

bool gp_parse_mem_value(const char *s, uint64_t *bytes)
{
	const char *end;
	uint64_t v;
	if (!gp_parse_u64(s, &v, &end))
		return false;
	end = skip_blanks(end);
	uint64_t mul = 1;
	if (!strncmp(end, "kB", 2) || !strncmp(end, "KiB", 3))
		mul = 1024;
	else if (!strncmp(end, "MiB", 3))
		mul = 1024 * 1024;
	else if (!strncmp(end, "GiB", 3))
		mul = 1024ull * 1024 * 1024;
	if (mul > 1 && v > UINT64_MAX / mul)
		return false;
	*bytes = v * mul;
	return true;
}

bool gp_key_is(const char *key, size_t klen, const char *word)
{
	return strlen(word) == klen && memcmp(key, word, klen) == 0;
}

bool gp_parse_size(const char *s, uint64_t *bytes)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	const char *end;
	uint64_t v;
	if (!gp_parse_u64(s, &v, &end))
		return false;
	static const char units[] = "KMGTPE";
	const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	uint64_t mul = 1;
	if (u) {
		mul = 1ull << (10 * (u - units + 1));
		end++;
		if (end[0] == 'i')
			end++;
	}
	if (*end == 'B')
		end++;
	if (*end || (mul > 1 && v > UINT64_MAX / mul))
		return false;
	*bytes = v * mul;
	return true;
}

/* Digits with an optional '.' and up to 9 fraction digits, as an integer
 * count of 1e-9 units: "1.5" -> 1500000000.  More fraction digits are
 * refused rather than rounded: "0.0000000001" is not 0. */
static bool parse_fixed9(const char *s, int64_t *out, const char **end)
{
	bool lead_dot = s[0] == '.' && s[1] >= '0' && s[1] <= '9'; /* ".5" */
	if ((*s < '0' || *s > '9') && !lead_dot)
		return false;
	int64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX / 1000000000 - (*s - '0')) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	v *= 1000000000;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return false;
		int64_t scale = 100000000;
		for (; *s >= '0' && *s <= '9'; s++, scale /= 10) {
			if (!scale || v > INT64_MAX - (*s - '0') * scale)
				return false;
			v += (*s - '0') * scale;
		}
	}
	*out = v;
	*end = s;
	return true;
}

bool gp_parse_duration(const char *s, int64_t *ns)
{
	static const struct { const char *sfx; int64_t mul, div; } units[] = {
		{ "", 1, 1 }, { "s", 1, 1 }, { "ms", 1, 1000 },
		{ "m", 60, 1 }, { "h", 3600, 1 }, { "d", 86400, 1 },
	};
	int64_t v;
	const char *end;
	if (!s || !parse_fixed9(s, &v, &end))
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].sfx))
			continue;
		if (v > INT64_MAX / units[i].mul)
			return false;
		*ns = v * units[i].mul / units[i].div;
		return true;
	}
	return false;
}

bool gp_parse_percent(const char *s, double *pct)
{
	int64_t v;
	const char *end;
	if (!s || !parse_fixed9(s, &v, &end))
		return false;
	if (*end == '%')
		end++;
	if (*end)
		return false;
	*pct = (double)v / 1e9;
	return true;
}

bool gp_parse_count(const char *s, uint64_t *n)
{
	const char *end;
	return s && *s >= '0' && *s <= '9' && gp_parse_u64(s, n, &end) && !*end;
}

bool gp_parse_seconds(const char *s, double *secs)
{
	int64_t ns;
	if (!gp_parse_duration(s, &ns) || ns > 1000000000LL * 1000000000LL)
		return false;
	*secs = (double)ns / 1e9;
	return true;
}

bool gp_parse_pid(const char *s, int *pid)
{
	if (!s || *s < '0' || *s > '9')
		return false;
	const char *end;
	uint64_t v;
	if (!gp_parse_u64(s, &v, &end) || *end || v == 0 || v > INT_MAX)
		return false;
	*pid = (int)v;
	return true;
}

void gp_strlcpy(char *dst, const char *src, size_t cap)
{
	if (!cap)
		return;
	size_t n = strnlen(src, cap - 1);
	/* Cut short: never inside a UTF-8 character (a comm of a hostile
	 * result file, cut to 15 bytes, made the verdict's summary invalid
	 * UTF-8, which jansson refuses to write). */
	if (src[n])
		while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
			n--;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
