#include "config.h"
#include "target_text.h"
#include "parse.h"
#include "shquote.h"

#include <stdlib.h>
#include <string.h>

const char *gp_doc_comm(const struct gp_doc *d)
{
	if (d->comm_now[0])
		return d->comm_now;
	const char *c = json_string_value(json_object_get(d->target_now, "comm"));
	if (!c)
		c = json_string_value(json_object_get(d->l.target, "comm"));
	return c ? c : "?";
}

const json_t *gp_doc_target_now(const struct gp_doc *d)
{
	return d->target_now ? d->target_now : d->l.target;
}

static int hexdigit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The bytes of hex (an even count of hex digits, no NUL among them), into
 * a malloc'd string; NULL when it is not that (a stranger's file). */
static char *unhex(const char *hex, size_t *len)
{
	size_t n = strlen(hex);
	if (n % 2 || n > 1 << 20)
		return NULL;
	char *out = malloc(n / 2 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexdigit(hex[2 * i]), lo = hexdigit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0 || (hi | lo) == 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)(hi << 4 | lo);
	}
	out[n / 2] = '\0';
	*len = n / 2;
	return out;
}

bool gp_target_words(struct strbuf *sb, const json_t *target, size_t max_args)
{
	const json_t *argv = json_object_get(target, "cmdline");
	const json_t *raw = json_object_get(target, "cmdline_bytes");
	if (!json_array_size(argv))
		return false;
	size_t i;
	const json_t *a;
	json_array_foreach(argv, i, a) {
		if (i >= max_args) {
			strbuf_addstr(sb, " ...");
			break;
		}
		if (i)
			strbuf_addch(sb, ' ');
		const char *hex = json_string_value(json_array_get(raw, i));
		size_t len;
		char *bytes = hex ? unhex(hex, &len) : NULL;
		if (bytes) {
			gp_shquote_word(sb, bytes, len);
			free(bytes);
			continue;
		}
		/* Not a string in a stranger's file: an empty argument. */
		const char *s = json_string_value(a);
		gp_shquote_word(sb, s ? s : "", s ? strlen(s) : 0); /* to a \u0000 in it */
	}
	return true;
}
