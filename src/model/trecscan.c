/* A sample line's thread arrays, scanned from its text into records
 * (model/trec.h) without jansson; and the line split so that jansson
 * parses only the rest.  The scanner takes what gpuprobe writes: on
 * anything else (an escape in a string, a member of another type, a
 * number past int64, a syntax error) it says no, and the caller parses
 * that array with jansson and converts it (gp_trec_from_json), so a
 * stranger's file reads the same either way, only slower. */
#include "config.h"
#include "trecscan.h"
#include "parse.h"
#include "strbuf.h"
#include "waits.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sc {
	const char *p, *end;
};

static inline void ws(struct sc *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static inline bool eat(struct sc *s, char c)
{
	ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

static inline bool peek(struct sc *s, char c)
{
	ws(s);
	return s->p < s->end && *s->p == c;
}

/* A string without escapes (gpuprobe escapes only what it must; a comm
 * with a quote goes the slow way): its bytes and length. */
static bool str(struct sc *s, const char **at, size_t *len)
{
	if (!eat(s, '"'))
		return false;
	const char *b = s->p;
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' || (unsigned char)*s->p < 0x20)
			return false;
		s->p++;
	}
	if (s->p >= s->end)
		return false;
	*at = b;
	*len = (size_t)(s->p - b);
	s->p++;
	return true;
}

static bool str_into(struct sc *s, char *dst, size_t cap)
{
	const char *at;
	size_t len;
	if (!str(s, &at, &len))
		return false;
	if (len >= cap)
		len = cap - 1; /* as snprintf would cut it */
	memcpy(dst, at, len);
	dst[len] = '\0';
	return true;
}

/* A number: *is_int for an integer literal that fits int64 (a larger
 * one: no, as jansson would refuse the line). */
static bool num(struct sc *s, bool *is_int, int64_t *iv, double *dv)
{
	ws(s);
	const char *b = s->p;
	bool neg = s->p < s->end && *s->p == '-';
	if (neg)
		s->p++;
	uint64_t u = 0;
	const char *digits = s->p;
	while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
		if (u > (UINT64_MAX - 9) / 10)
			return false;
		u = u * 10 + (uint64_t)(*s->p++ - '0');
	}
	if (s->p == digits)
		return false;
	if (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E')) {
		char buf[64];
		size_t n = 0;
		s->p = b;
		while (s->p < s->end && n < sizeof buf - 1 && strchr("0123456789+-.eE", *s->p))
			buf[n++] = *s->p++;
		buf[n] = '\0';
		char *e;
		errno = 0;
		*dv = strtod(buf, &e);
		*is_int = false;
		return *e == '\0' && errno == 0;
	}
	if (u > (uint64_t)INT64_MAX + neg)
		return false;
	*iv = neg ? (int64_t)(0 - u) : (int64_t)u;
	*dv = (double)*iv;
	*is_int = true;
	return true;
}

static bool integer(struct sc *s, int64_t *v)
{
	bool is_int;
	double d;
	return num(s, &is_int, v, &d) && is_int;
}

static bool number(struct sc *s, double *v)
{
	bool is_int;
	int64_t i;
	return num(s, &is_int, &i, v);
}

/* A counter as gp_trec_from_json reads it (gp_u64_of_real for a real). */
static bool counter(struct sc *s, uint64_t *v)
{
	bool is_int;
	int64_t i;
	double d;
	if (!num(s, &is_int, &i, &d))
		return false;
	*v = is_int ? i > 0 ? (uint64_t)i : 0 : gp_u64_of_real(d);
	return true;
}

static bool word(struct sc *s, const char *w)
{
	ws(s);
	size_t n = strlen(w);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
		return false;
	s->p += n;
	return true;
}

/* A string, escapes allowed, skipped. */
static bool skip_str(struct sc *s)
{
	if (!eat(s, '"'))
		return false;
	while (s->p < s->end && *s->p != '"')
		s->p += *s->p == '\\' ? 2 : 1;
	if (s->p >= s->end)
		return false;
	s->p++;
	return true;
}

/* Any JSON value, skipped (depth-limited). */
static bool skip(struct sc *s, int depth)
{
	if (depth > 32)
		return false;
	ws(s);
	if (s->p >= s->end)
		return false;
	char c = *s->p;
	if (c == '"')
		return skip_str(s);
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		s->p++;
		if (eat(s, close))
			return true;
		do {
			if (c == '{' && (!skip_str(s) || !eat(s, ':')))
				return false;
			if (!skip(s, depth + 1))
				return false;
		} while (eat(s, ','));
		return eat(s, close);
	}
	if (word(s, "true") || word(s, "false") || word(s, "null"))
		return true;
	int64_t i;
	double d;
	bool is_int;
	return num(s, &is_int, &i, &d);
}

/* `key` is a member name of the given length. */
#define KEY(name) (kl == sizeof(name) - 1 && !memcmp(k, name, kl))

static bool hex_value(struct sc *s, uint64_t *v)
{
	if (peek(s, '"')) {
		char buf[24];
		if (!str_into(s, buf, sizeof buf))
			return false;
		*v = 0;
		gp_parse_x64(buf, v, NULL);
		return true;
	}
	int64_t i;
	if (!integer(s, &i))
		return false;
	*v = (uint64_t)i;
	return true;
}

static bool syscall_obj(struct sc *s, struct gp_trec *r)
{
	r->sc.kind = GP_TREC_SC_OBJ;
	if (eat(s, '}'))
		return true;
	do {
		const char *k;
		size_t kl;
		if (!str(s, &k, &kl) || !eat(s, ':'))
			return false;
		if (KEY("nr")) {
			if (!integer(s, &r->sc.nr))
				return false;
			r->sc.have_nr = true;
		} else if (KEY("args")) {
			if (!eat(s, '['))
				return false;
			size_t n = 0;
			if (!eat(s, ']')) {
				do {
					uint64_t v;
					if (!hex_value(s, &v))
						return false;
					if (n < 6)
						r->sc.args[n] = v;
					n++;
				} while (eat(s, ','));
				if (!eat(s, ']'))
					return false;
			}
		} else if (KEY("sp")) {
			if (!hex_value(s, &r->sc.sp))
				return false;
		} else if (KEY("pc")) {
			if (!hex_value(s, &r->sc.pc))
				return false;
		} else if (!skip(s, 0)) {
			return false;
		}
	} while (eat(s, ','));
	return eat(s, '}');
}

static bool edge_obj(struct sc *s, struct gp_wait_edge *on)
{
	if (!eat(s, '{'))
		return false;
	memset(on, 0, sizeof *on);
	if (eat(s, '}'))
		return true;
	do {
		const char *k;
		size_t kl;
		if (!str(s, &k, &kl) || !eat(s, ':'))
			return false;
		if (KEY("how")) {
			char how[32];
			if (!str_into(s, how, sizeof how))
				return false;
			on->how = (uint8_t)gp_edge_from_name(how);
		} else if (KEY("id")) {
			int64_t id;
			if (!integer(s, &id))
				return false;
			on->id = id > 0 && id <= INT32_MAX ? (int32_t)id : 0;
		} else if (KEY("of")) {
			int64_t of;
			if (!integer(s, &of))
				return false;
			on->of = of > 0 && of <= INT32_MAX ? (int32_t)of : 0;
		} else if (KEY("comm")) {
			if (!str_into(s, on->comm, sizeof on->comm))
				return false;
		} else if (KEY("shared")) {
			if (word(s, "true"))
				on->shared = true;
			else if (!word(s, "false"))
				return false;
		} else if (!skip(s, 0)) {
			return false;
		}
	} while (eat(s, ','));
	return eat(s, '}');
}

static bool kernel_arr(struct sc *s, struct gp_trec *r)
{
	if (!eat(s, '['))
		return false;
	struct strbuf sb = STRBUF_INIT;
	bool ok = true;
	if (!eat(s, ']')) {
		do {
			const char *f;
			size_t fl;
			if (!(ok = str(s, &f, &fl)))
				break;
			strbuf_addf(&sb, "%s%.*s", sb.len ? "\n" : "", (int)fl, f);
		} while (eat(s, ','));
		ok = ok && eat(s, ']');
	}
	free(r->kernel);
	r->kernel = strbuf_detach(&sb, NULL);
	return ok;
}

static bool add_obj(struct sc *s, struct gp_trec *r)
{
	if (!eat(s, '{'))
		return false;
	if (eat(s, '}'))
		return true;
	do {
		const char *k;
		size_t kl;
		int64_t v;
		if (!str(s, &k, &kl) || !eat(s, ':') || !integer(s, &v))
			return false;
		for (int i = 0; i < TR_NADD; i++)
			if (kl == strlen(gp_trec_add_name[i]) && !memcmp(k, gp_trec_add_name[i], kl) && v >= 0) {
				r->add |= (uint8_t)(1u << i);
				r->add_by[i] = (uint64_t)v;
			}
	} while (eat(s, ','));
	return eat(s, '}');
}

static bool gone_arr(struct sc *s, struct gp_trec *r)
{
	if (!eat(s, '['))
		return false;
	if (eat(s, ']'))
		return true;
	do {
		char name[32];
		if (!str_into(s, name, sizeof name))
			return false;
		int m = gp_trec_member(name);
		if (m >= 0)
			r->gone |= TR_BIT(m);
	} while (eat(s, ','));
	return eat(s, ']');
}

/* "same": 1 (one thread) or [FIRST,LAST] (a run), as gp_trec_from_json. */
static bool same_value(struct sc *s, struct gp_trec *r)
{
	if (!eat(s, '[')) {
		if (r->kind != GP_TREC_DELTA)
			r->kind = GP_TREC_SAME;
		return skip(s, 0);
	}
	int64_t a, b;
	if (!integer(s, &a) || !eat(s, ',') || !integer(s, &b) || !eat(s, ']'))
		return false;
	r->kind = GP_TREC_RUN;
	if (a > 0 && b >= a && b <= INT32_MAX) {
		r->run_first = (int)a;
		r->run_last = (int)b;
	}
	return true;
}

/* One member's value into r: false when it is not what gpuprobe writes
 * there (the caller then reads the array with jansson). */
static bool member(struct sc *s, struct gp_trec *r, const char *k, size_t kl)
{
	int64_t i;
	int m = gp_trec_key(k, kl);
	switch (m) {
	case GP_TREC_K_SAME:
		return same_value(s, r);
	case GP_TREC_K_DELTA:
		r->kind = GP_TREC_DELTA;
		return skip(s, 0);
	case GP_TREC_K_ADD:
		return add_obj(s, r);
	case GP_TREC_K_GONE:
		return gone_arr(s, r);
	}
	bool ok;
	switch (m) {
	case TR_TID:
		ok = integer(s, &i);
		r->tid = (int)i;
		break;
	case TR_COMM: ok = str_into(s, r->comm, sizeof r->comm); break;
	case TR_STATE: {
		char st[8] = "";
		ok = str_into(s, st, sizeof st);
		r->state = st[0] ? st[0] : '?';
		break;
	}
	case TR_WCHAN: ok = str_into(s, r->wchan, sizeof r->wchan); break;
	case TR_UTIME: ok = number(s, &r->utime); break;
	case TR_STIME: ok = number(s, &r->stime); break;
	case TR_CPU: ok = number(s, &r->cpu_pct); break;
	case TR_SYS: ok = number(s, &r->sys_pct); break;
	case TR_RUN_NS: ok = counter(s, &r->run_ns); break;
	case TR_WAIT_NS: ok = counter(s, &r->wait_ns); break;
	case TR_MINFLT: ok = counter(s, &r->minflt); break;
	case TR_MAJFLT: ok = counter(s, &r->majflt); break;
	case TR_STARTTIME: ok = counter(s, &r->starttime); break;
	case TR_VOL: ok = counter(s, &r->vol); break;
	case TR_INVOL: ok = counter(s, &r->invol); break;
	case TR_PROCESSOR: ok = integer(s, &r->processor); break;
	case TR_SYSCALL:
		if (peek(s, '"')) {
			r->sc.kind = GP_TREC_SC_TEXT;
			ok = str_into(s, r->sc.text, sizeof r->sc.text);
		} else {
			ok = eat(s, '{') && syscall_obj(s, r);
		}
		break;
	case TR_WAIT: {
		char w[32];
		ok = str_into(s, w, sizeof w);
		r->wait = (uint8_t)gp_wait_from_name(w);
		break;
	}
	case TR_ON: ok = edge_obj(s, &r->on); break;
	case TR_KERNEL: ok = kernel_arr(s, r); break;
	case TR_NEW:
	case TR_UNCHANGED:
		/* only true is present; false reads as absent */
		if (word(s, "true"))
			return r->have |= TR_BIT(m), true;
		return word(s, "false");
	default:
		return skip(s, 0);
	}
	if (ok)
		r->have |= TR_BIT(m);
	return ok;
}

static bool record(struct sc *s, struct gp_trec *r)
{
	memset(r, 0, sizeof *r);
	if (!eat(s, '{'))
		return false;
	if (eat(s, '}'))
		return true;
	do {
		const char *k;
		size_t kl;
		if (!str(s, &k, &kl) || !eat(s, ':') || !member(s, r, k, kl))
			return false;
	} while (eat(s, ','));
	return eat(s, '}');
}

void gp_trecs_clear(struct gp_trecs *a)
{
	for (size_t i = 0; i < a->n; i++)
		gp_trec_release(&a->r[i]);
	if (a->budget)
		a->budget->left += a->n;
	a->n = 0;
}

void gp_trecs_free(struct gp_trecs *a)
{
	gp_trecs_clear(a);
	free(a->r);
	memset(a, 0, sizeof *a);
}

static struct gp_trec *trecs_add(struct gp_trecs *a)
{
	if (a->budget && !a->budget->left) {
		a->budget->over = true;
		return NULL;
	}
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		struct gp_trec *r = realloc(a->r, nc * sizeof *r);
		if (!r)
			return NULL;
		a->r = r;
		a->cap = nc;
	}
	if (a->budget)
		a->budget->left--;
	return &a->r[a->n++];
}

/* An array of records at s, into out; false (out cleared) on anything
 * the scanner does not take. */
static bool scan_array(struct sc *s, struct gp_trecs *out)
{
	gp_trecs_clear(out);
	bool ok = eat(s, '[');
	if (ok && !eat(s, ']')) {
		do {
			struct gp_trec *r = trecs_add(out);
			if (!r || !record(s, r)) {
				if (r)
					gp_trec_release(r);
				ok = false;
				break;
			}
		} while (eat(s, ','));
		ok = ok && eat(s, ']');
	}
	if (!ok)
		gp_trecs_clear(out);
	return ok;
}

bool gp_trecs_scan(const char *text, size_t len, struct gp_trecs *out)
{
	struct sc s = { text, text + len };
	if (!scan_array(&s, out))
		return false;
	ws(&s);
	if (s.p != s.end) {
		gp_trecs_clear(out);
		return false;
	}
	return true;
}

bool gp_trecs_from_json(const json_t *arr, struct gp_trecs *out)
{
	gp_trecs_clear(out);
	size_t i;
	const json_t *th;
	json_array_foreach(arr, i, th) {
		struct gp_trec *r = trecs_add(out);
		if (!r)
			return false;
		if (!gp_trec_from_json(th, r)) {
			out->n--; /* not an object: no thread (as the readers skip it) */
			if (out->budget)
				out->budget->left++;
		}
	}
	return true;
}

/* ---- the line, split ------------------------------------------------- */

static bool add_span(struct gp_sample_split *sp, int which, const char *b, const char *e,
		     bool scanned)
{
	if (sp->n == sizeof sp->span / sizeof sp->span[0])
		return false;
	sp->span[sp->n++] = (struct gp_span){ which, b, (size_t)(e - b), scanned };
	return true;
}

/* A thread array at s: scanned into its process's records as it is met
 * (one pass over the text), else skipped and left to jansson. */
static bool threads_value(struct sc *s, struct gp_sample_split *sp, int which)
{
	ws(s);
	const char *b = s->p;
	struct gp_trecs *t = sp->get(sp->ctx, which);
	if (t && scan_array(s, t))
		return add_span(sp, which, b, s->p, true);
	s->p = b;
	return skip(s, 1) && add_span(sp, which, b, s->p, false);
}

/* procs: [{..., "threads":[...]}, ...]: each element's threads. */
static bool procs_value(struct sc *s, struct gp_sample_split *sp)
{
	if (!peek(s, '['))
		return skip(s, 0);
	eat(s, '[');
	if (eat(s, ']'))
		return true;
	int idx = 0;
	do {
		if (!eat(s, '{'))
			return false;
		if (!eat(s, '}')) {
			do {
				const char *k;
				size_t kl;
				if (!str(s, &k, &kl) || !eat(s, ':'))
					return false;
				if (KEY("threads") && peek(s, '[')) {
					if (!threads_value(s, sp, idx))
						return false;
				} else if (!skip(s, 1)) {
					return false;
				}
			} while (eat(s, ','));
			if (!eat(s, '}'))
				return false;
		}
		idx++;
	} while (eat(s, ','));
	return eat(s, ']');
}

bool gp_sample_split(const char *line, size_t len, struct gp_sample_split *sp)
{
	struct sc s = { line, line + len };
	sp->n = 0;
	if (!eat(&s, '{'))
		return false;
	if (eat(&s, '}'))
		return true;
	do {
		const char *k;
		size_t kl;
		if (!str(&s, &k, &kl) || !eat(&s, ':'))
			return false;
		bool ok;
		if (KEY("procs"))
			ok = procs_value(&s, sp);
		else if (KEY("threads") && peek(&s, '['))
			ok = threads_value(&s, sp, -1);
		else
			ok = skip(&s, 0);
		if (!ok)
			return false;
	} while (eat(&s, ','));
	if (!eat(&s, '}'))
		return false;
	ws(&s);
	return s.p == s.end;
}
