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

/* ---- where it lives: namespaces and container (issue 28) ---------------- */

/* A stranger's file: only what has the shape gpuprobe writes is said. */
static bool all_of(const char *s, const char *set, size_t min, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	return n >= min && n <= max && strspn(s, set) == n;
}

static void where_container(struct strbuf *sb, const json_t *c)
{
	static const char *const runtimes[] = { "docker", "containerd", "cri-o", "podman" };
	const char *id = json_string_value(json_object_get(c, "id"));
	const char *rt = json_string_value(json_object_get(c, "runtime"));
	const char *pod = json_string_value(json_object_get(c, "pod_uid"));
	bool known = false;
	for (size_t i = 0; rt && i < sizeof runtimes / sizeof runtimes[0]; i++)
		known |= !strcmp(rt, runtimes[i]);
	bool have_id = all_of(id, "0123456789abcdef", 12, 64);
	bool have_pod = all_of(pod, "0123456789abcdef-", 36, 36);
	if (!have_id && !have_pod)
		return;
	strbuf_addstr(sb, sb->len ? "; " : "");
	if (have_id)
		/* docker ps' short form; the whole id is in the result. */
		strbuf_addf(sb, "container %.12s%s%s%s", id, known ? " (" : "", known ? rt : "",
			    known ? ")" : "");
	if (!have_pod)
		return;
	/* namespace/name, as kubectl names a pod, then its UID */
	static const char dns[] = "abcdefghijklmnopqrstuvwxyz0123456789-.";
	const char *name = json_string_value(json_object_get(c, "pod"));
	const char *ns = json_string_value(json_object_get(c, "namespace"));
	strbuf_addf(sb, "%sKubernetes pod ", have_id ? ", " : "");
	if (all_of(name, dns, 1, 253))
		strbuf_addf(sb, "%s%s%s (UID %s)", all_of(ns, dns, 1, 253) ? ns : "",
			    all_of(ns, dns, 1, 253) ? "/" : "", name, pod);
	else
		strbuf_addf(sb, "UID %s", pod);
}

bool gp_target_where(struct strbuf *sb, const json_t *target)
{
	size_t start = sb->len;
	const json_t *nspid = json_object_get(target, "nspid");
	const json_t *own = json_array_get(nspid, json_array_size(nspid) - 1);
	if (json_array_size(nspid) > 1 && json_is_integer(own) && json_integer_value(own) > 0)
		strbuf_addf(sb, "pid %" JSON_INTEGER_FORMAT " in its own pid namespace",
			    json_integer_value(own));
	where_container(sb, json_object_get(target, "container"));
	static const char *const kinds[] = { "mnt", "pid", "net", "uts", "ipc", "user", "cgroup" };
	size_t i, nk = 0;
	const json_t *k;
	json_array_foreach(json_object_get(target, "ns"), i, k) {
		const char *s = json_string_value(k);
		for (size_t j = 0; s && j < sizeof kinds / sizeof kinds[0]; j++)
			if (!strcmp(s, kinds[j])) {
				strbuf_addf(sb, "%s%s", nk++ ? ", " : sb->len > start ? "; namespaces of its own: "
							       : "namespaces of its own: ", kinds[j]);
				break;
			}
	}
	return sb->len > start;
}
