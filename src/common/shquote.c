#include "config.h"
#include "shquote.h"
#include "safetext.h"

#include <stdbool.h>
#include <stdint.h>

/* Characters no POSIX shell gives a meaning to in a word (XCU 2.2 and 2.6:
 * not an operator, quote, expansion, glob or comment character); '=' is
 * special only in a leading assignment, which an argument after the first
 * is not and which a first word like `a=b` would be anyway in the
 * original command too.  '~' and '#' are special at a word's start only:
 * quoted wherever they are, for simplicity. */
static bool plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '/' || c == ',' || c == ':' ||
	       c == '+' || c == '=' || c == '@' || c == '%';
}

/* $'...' is needed for a control character or a byte that is not UTF-8;
 * single quotes do for the rest of what is not plain. */
enum form { PLAIN, SINGLE, DOLLAR };

static enum form form_of(const unsigned char *s, size_t n)
{
	if (!n)
		return SINGLE;
	enum form f = PLAIN;
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c < 0x20 || c == 0x7f)
			return DOLLAR;
		size_t l = gp_utf8_len(s + i, n - i);
		if (!l)
			return DOLLAR;
		/* C1 controls (U+0080-U+009F) move a terminal as C0 ones do. */
		if (l == 2 && c == 0xc2 && s[i + 1] < 0xa0)
			return DOLLAR;
		if (!plain(c))
			f = SINGLE;
		i += l;
	}
	return f;
}

void gp_shquote_word(struct strbuf *sb, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	switch (form_of(s, n)) {
	case PLAIN:
		strbuf_add(sb, s, n);
		return;
	case SINGLE:
		strbuf_addch(sb, '\'');
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '\'')
				strbuf_addstr(sb, "'\\''");
			else
				strbuf_addch(sb, s[i]);
		}
		strbuf_addch(sb, '\'');
		return;
	case DOLLAR:
		break;
	}
	strbuf_addstr(sb, "$'");
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t l = c < 0x80 ? 1 : gp_utf8_len(s + i, n - i);
		bool c1 = l == 2 && c == 0xc2 && s[i + 1] < 0xa0;
		if (l > 1 && !c1) {
			strbuf_add(sb, s + i, l); /* a character, as it is */
			i += l;
			continue;
		}
		if (!l || c1)
			l = 1; /* one byte that is not a character: \xHH */
		switch (c) {
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\'': strbuf_addstr(sb, "\\'"); break;
		default:
			if (c < 0x20 || c >= 0x7f)
				strbuf_addf(sb, "\\x%02x", c);
			else
				strbuf_addch(sb, c);
		}
		i += l;
	}
	strbuf_addch(sb, '\'');
}

void gp_shquote_argv(struct strbuf *sb, const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		const char *a = argv[i] ? argv[i] : "";
		size_t n = 0;
		while (a[n])
			n++;
		gp_shquote_word(sb, a, n);
	}
}
