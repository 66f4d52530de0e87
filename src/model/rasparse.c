#include "config.h"
#include "rasparse.h"
#include "parse.h"

#include <stdio.h>
#include <string.h>

/* A stranger's string as a name we keep: printable ASCII, cut to fit. */
static void clean(char *dst, size_t cap, const char *src, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < len && src[i] && k + 1 < cap; i++)
		dst[k++] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[k] = '\0';
}

static json_t *clean_string(const char *s)
{
	char b[24];
	clean(b, sizeof b, s ? s : "", s ? strlen(s) : 0);
	return json_string(b);
}

/* An integer field of a stranger's object, in [lo, hi]; false otherwise. */
static bool int_field(const json_t *o, const char *key, json_int_t lo, json_int_t hi, json_int_t *v)
{
	const json_t *j = json_object_get(o, key);
	if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
		return false;
	*v = json_integer_value(j);
	return true;
}

/* ---- JSON (NCCL 2.28.7 and later) ------------------------------------ */

static json_t *json_rank(const json_t *r)
{
	json_int_t rank, pid;
	if (!json_is_object(r) || !int_field(r, "rank", 0, 1 << 24, &rank))
		return NULL;
	json_t *out = json_pack("{s:I}", "rank", rank);
	if (int_field(r, "pid", 1, INT32_MAX, &pid))
		json_object_set_new(out, "pid", json_integer(pid));
	return out;
}

static json_t *json_comm(const json_t *c)
{
	if (!json_is_object(c))
		return NULL;
	json_t *out = json_pack("{s:o, s:[], s:[]}", "hash",
				clean_string(json_string_value(json_object_get(c, "hash"))),
				"ranks", "missing");
	json_int_t size;
	if (int_field(c, "size", 0, 1 << 24, &size))
		json_object_set_new(out, "size", json_integer(size));
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(c, "ranks"), i, r) {
		if (i >= GP_RAS_MAX_RANKS)
			break;
		json_t *o = json_rank(r);
		if (!o)
			continue;
		json_t *counts = json_object();
		const char *op;
		json_t *v;
		unsigned nop = 0;
		json_object_foreach(json_object_get(r, "collective_counts"), op, v) {
			if (nop >= GP_RAS_MAX_OPS)
				break;
			if (!json_is_integer(v) || json_integer_value(v) < 0)
				continue;
			char name[16];
			clean(name, sizeof name, op, strlen(op));
			json_object_set_new(counts, name, json_integer(json_integer_value(v)));
			nop++;
		}
		json_object_set_new(o, "counts", counts);
		json_array_append_new(json_object_get(out, "ranks"), o);
	}
	json_array_foreach(json_object_get(c, "missing_ranks"), i, r) {
		if (i >= GP_RAS_MAX_RANKS)
			break;
		json_t *o = json_rank(r);
		if (!o)
			continue;
		const json_t *st = json_object_get(r, "status");
		json_object_set_new(o, "unresponsive",
				    json_boolean(json_is_true(json_object_get(st, "unresponsive"))));
		json_object_set_new(o, "dead", json_boolean(json_is_true(json_object_get(st, "considered_dead"))));
		json_array_append_new(json_object_get(out, "missing"), o);
	}
	return out;
}

static json_t *parse_json(const char *buf, size_t len, char *why, size_t cap)
{
	json_error_t err;
	json_t *doc = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, &err);
	if (!json_is_object(doc)) {
		snprintf(why, cap, "not JSON: %.60s", doc ? "not an object" : err.text);
		for (char *c = why; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		json_decref(doc);
		return NULL;
	}
	const json_t *comms = json_object_get(doc, "communicators");
	if (!json_is_array(comms)) {
		snprintf(why, cap, "JSON without a communicators array: not NCCL's RAS");
		json_decref(doc);
		return NULL;
	}
	json_t *out = json_pack("{s:o, s:[]}", "nccl_version",
				clean_string(json_string_value(json_object_get(doc, "nccl_version"))),
				"comms");
	size_t i;
	json_t *c;
	json_array_foreach(comms, i, c) {
		if (i >= GP_RAS_MAX_COMMS)
			break;
		json_t *o = json_comm(c);
		if (o)
			json_array_append_new(json_object_get(out, "comms"), o);
	}
	json_decref(doc);
	return out;
}

/* ---- text (NCCL 2.24 to 2.28) ---------------------------------------- */

/* s after the literal prefix p, or NULL. */
static const char *after(const char *s, const char *p)
{
	size_t n = strlen(p);
	return strncmp(s, p, n) ? NULL : s + n;
}

static bool small_int(const char *s, int *v, const char **end)
{
	uint64_t u;
	if (!gp_parse_u64(s, &u, end) || u > INT32_MAX)
		return false;
	*v = (int)u;
	return true;
}

/* "... managed by process P on node H": P. */
static int process_of(const char *s)
{
	const char *p = strstr(s, "managed by process ");
	int pid;
	if (!p || !small_int(p + strlen("managed by process "), &pid, NULL) || pid < 1)
		return 0;
	return pid;
}

struct text_state {
	json_t *out;
	json_t *comm;            /* the communicator of the block being read */
	char op[16];             /* the kind of collective whose counts differ; "": none */
	bool have_group;
	uint64_t group_count;    /* "N ranks have launched up to operation X": X */
};

static json_t *rank_entry(json_t *comm, int rank, int pid)
{
	json_t *ranks = json_object_get(comm, "ranks");
	size_t i;
	json_t *r;
	json_array_foreach(ranks, i, r)
		if (json_integer_value(json_object_get(r, "rank")) == rank)
			return r;
	if (json_array_size(ranks) >= GP_RAS_MAX_RANKS)
		return NULL;
	r = json_pack("{s:i, s:{}}", "rank", rank, "counts");
	if (pid)
		json_object_set_new(r, "pid", json_integer(pid));
	json_array_append_new(ranks, r);
	return r;
}

static void text_rank(struct text_state *st, int rank, uint64_t count, const char *line)
{
	if (!st->comm || !st->op[0])
		return;
	json_t *r = rank_entry(st->comm, rank, process_of(line));
	if (r && json_object_size(json_object_get(r, "counts")) < GP_RAS_MAX_OPS)
		json_object_set_new(json_object_get(r, "counts"), st->op, json_integer((json_int_t)count));
}

static void text_line(struct text_state *st, const char *s)
{
	const char *p;
	int n, rank;
	uint64_t x;
	while (*s == ' ')
		s++;
	if ((p = after(s, "NCCL version "))) {
		char v[24];
		size_t k = strcspn(p, " ");
		clean(v, sizeof v, p, k);
		json_object_set_new(st->out, "nccl_version", json_string(v));
	} else if (s[0] == '#' && (p = strstr(s, " (")) && strchr(p, ')')) {
		/* "#0-0 (27a079b828ff1a75) MISMATCH": a communicator's block */
		char hash[24] = "0x";
		size_t k = strcspn(p + 2, ")");
		clean(hash + 2, sizeof hash - 2, p + 2, k);
		json_t *comms = json_object_get(st->out, "comms");
		size_t i;
		json_t *c;
		st->comm = NULL;
		json_array_foreach(comms, i, c)
			if (!strcmp(json_string_value(json_object_get(c, "hash")), hash))
				st->comm = c;
		if (!st->comm && json_array_size(comms) < GP_RAS_MAX_COMMS) {
			st->comm = json_pack("{s:s, s:[], s:[], s:[]}", "hash", hash, "ranks", "missing",
					     "groups");
			json_array_append_new(comms, st->comm);
		}
		st->op[0] = '\0';
		st->have_group = false;
	} else if ((p = after(s, "Communicator ranks have different "))) {
		const char *e = strstr(p, " operation counts");
		if (e)
			clean(st->op, sizeof st->op, p, (size_t)(e - p));
		else
			st->op[0] = '\0'; /* "different status": no counts */
		st->have_group = false;
	} else if (small_int(s, &n, &p) && (after(p, " ranks have launched up to operation ")
					    || after(p, " ranks have not launched any operations"))) {
		const char *q = after(p, " ranks have launched up to operation ");
		st->have_group = !q || gp_parse_u64(q, &x, NULL);
		st->group_count = q ? x : 0;
		if (st->have_group && st->comm && st->op[0]
		    && json_array_size(json_object_get(st->comm, "groups")) < GP_RAS_MAX_RANKS)
			json_array_append_new(json_object_get(st->comm, "groups"),
					      json_pack("{s:s, s:i, s:I}", "op", st->op, "ranks", n,
							"count", (json_int_t)st->group_count));
	} else if ((p = after(s, "Rank ")) && small_int(p, &rank, &p)) {
		const char *q;
		if ((q = after(p, " has launched up to operation ")) && gp_parse_u64(q, &x, NULL))
			text_rank(st, rank, x, s);
		else if (after(p, " has not launched any operations"))
			text_rank(st, rank, 0, s);
		else if (after(p, " -- ") && st->have_group)
			text_rank(st, rank, st->group_count, s); /* a member of the group above */
	}
}

static json_t *parse_text(const char *buf, size_t len, char *why, size_t cap)
{
	struct text_state st = { .out = json_pack("{s:s, s:[], s:b}", "nccl_version", "", "comms",
						  "partial", 1) };
	bool ras = false;
	char line[512];
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && buf[e] != '\n')
			e++;
		size_t k = e - i < sizeof line - 1 ? e - i : sizeof line - 1;
		memcpy(line, buf + i, k);
		line[k] = '\0';
		if (k && line[k - 1] == '\r')
			line[k - 1] = '\0';
		/* NCCL's headings (rasClientRunInit, rasClientRunComms) */
		if ((k >= 13 && !memcmp(line, "NCCL version ", 13)) || !strcmp(line, "Job summary")
		    || (k >= 16 && !memcmp(line, "Communicators...", 16)))
			ras = true;
		text_line(&st, line);
		i = e + 1;
	}
	if (!ras) {
		char first[48];
		size_t k = 0;
		while (k < len && buf[k] != '\n')
			k++;
		clean(first, sizeof first, buf, k);
		snprintf(why, cap, "not NCCL's RAS: it said \"%s\"", first);
		json_decref(st.out);
		return NULL;
	}
	return st.out;
}

json_t *gp_ras_parse(const char *buf, size_t len, bool json_format, char *why, size_t cap)
{
	why[0] = '\0';
	if (!len) {
		snprintf(why, cap, "an empty answer");
		return NULL;
	}
	return json_format ? parse_json(buf, len, why, cap) : parse_text(buf, len, why, cap);
}

/* ---- the trace's reads, for the verdict ------------------------------ */

void gp_ras_note_init(struct gp_ras_note *n)
{
	memset(n, 0, sizeof *n);
}

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : dflt;
}

/* The first read's count of (comm, rank, op); false when it had none. */
static bool first_count(const struct gp_ras_note *n, const char *comm, int rank, const char *op,
			uint64_t *v)
{
	for (unsigned i = 0; i < n->nfirst; i++)
		if (n->first[i].rank == rank && !strcmp(n->first[i].comm, comm)
		    && !strcmp(n->first[i].op, op)) {
			*v = n->first[i].n;
			return true;
		}
	return false;
}

/* Each count of the read, through fn. */
typedef void (*count_fn)(struct gp_ras_note *n, const json_t *comms, const char *comm, int rank,
			 int pid, const char *op, uint64_t v, unsigned ranks);

static void each_count(struct gp_ras_note *n, const json_t *comms, count_fn fn)
{
	size_t i, j;
	json_t *c, *r;
	json_array_foreach(comms, i, c) {
		char comm[24];
		const char *h = str_or(c, "hash", "?");
		clean(comm, sizeof comm, h, strlen(h));
		unsigned ranks = (unsigned)json_array_size(json_object_get(c, "ranks"));
		json_int_t size = json_integer_value(json_object_get(c, "size"));
		if (size > 0 && size < 1 << 24 && (unsigned)size > ranks)
			ranks = (unsigned)size;
		json_array_foreach(json_object_get(c, "ranks"), j, r) {
			const char *op;
			json_t *v;
			json_object_foreach(json_object_get(r, "counts"), op, v)
				if (json_is_integer(v) && json_integer_value(v) >= 0)
					fn(n, comms, comm, (int)json_integer_value(json_object_get(r, "rank")),
					   (int)json_integer_value(json_object_get(r, "pid")), op,
					   (uint64_t)json_integer_value(v), ranks);
		}
	}
}

static void keep_first(struct gp_ras_note *n, const json_t *comms, const char *comm, int rank,
		       int pid, const char *op, uint64_t v, unsigned ranks)
{
	(void)comms;
	(void)pid;
	(void)ranks;
	if (n->nfirst >= sizeof n->first / sizeof n->first[0])
		return;
	struct gp_ras_count *f = &n->first[n->nfirst++];
	gp_strlcpy(f->comm, comm, sizeof f->comm);
	gp_strlcpy(f->op, op, sizeof f->op);
	f->rank = rank;
	f->n = v;
}

/* The highest count of (comm, op) in the read: ranks' and groups'. */
static uint64_t max_count(const json_t *comms, const char *comm, const char *op)
{
	uint64_t m = 0;
	size_t i, j;
	json_t *c, *r;
	json_array_foreach(comms, i, c) {
		char h[24];
		const char *s = str_or(c, "hash", "?");
		clean(h, sizeof h, s, strlen(s));
		if (strcmp(h, comm))
			continue;
		json_array_foreach(json_object_get(c, "ranks"), j, r) {
			json_int_t v = json_integer_value(json_object_get(json_object_get(r, "counts"), op));
			if (v > 0 && (uint64_t)v > m)
				m = (uint64_t)v;
		}
		json_array_foreach(json_object_get(c, "groups"), j, r) {
			json_int_t v = json_integer_value(json_object_get(r, "count"));
			if (!strcmp(str_or(r, "op", ""), op) && v > 0 && (uint64_t)v > m)
				m = (uint64_t)v;
		}
	}
	return m;
}

static void find_lag(struct gp_ras_note *n, const json_t *comms, const char *comm, int rank,
		     int pid, const char *op, uint64_t v, unsigned ranks)
{
	uint64_t f;
	if (first_count(n, comm, rank, op, &f) && f != v)
		n->s.moved_any = true;
	uint64_t m = max_count(comms, comm, op);
	if (v >= m)
		return;
	n->s.lagging++;
	/* the rank furthest behind */
	if (n->s.lag && !n->s.missing && m - v <= n->s.max - n->s.count)
		return;
	n->s.lag = true;
	n->s.missing = n->s.dead = false;
	n->s.rank = rank;
	n->s.pid = pid;
	gp_strlcpy(n->s.comm, comm, sizeof n->s.comm);
	gp_strlcpy(n->s.op, op, sizeof n->s.op);
	n->s.count = v;
	n->s.max = m;
	n->s.ranks = ranks;
	n->s.lag_moved = first_count(n, comm, rank, op, &f) && f != v;
}

void gp_ras_note_add(struct gp_ras_note *n, const json_t *line)
{
	n->s.reads++;
	const char *addr = str_or(line, "addr", "?");
	clean(n->s.addr, sizeof n->s.addr, addr, strlen(addr));
	const char *state = str_or(line, "state", "?");
	clean(n->s.state, sizeof n->s.state, state, strlen(state));
	const char *why = str_or(line, "why", "");
	clean(n->s.why, sizeof n->s.why, why, strlen(why));
	if (strcmp(n->s.state, "ok")) {
		if (!strcmp(n->s.state, "absent"))
			snprintf(n->s.said, sizeof n->s.said, "RAS: %s", n->s.why);
		else
			snprintf(n->s.said, sizeof n->s.said, "RAS on %s: %s", n->s.addr, n->s.why);
		return;
	}
	const char *ver = str_or(line, "nccl_version", "");
	if (*ver)
		clean(n->s.version, sizeof n->s.version, ver, strlen(ver));
	double t = json_number_value(json_object_get(line, "t"));
	const json_t *comms = json_object_get(line, "comms");
	if (!n->s.ok_reads++) {
		n->s.t_first = t;
		each_count(n, comms, keep_first);
	}
	n->s.t_last = t;
	/* The last read decides who lags; the first says whether it moved. */
	n->s.lag = n->s.missing = n->s.dead = n->s.moved_any = n->s.lag_moved = false;
	n->s.lagging = 0;
	each_count(n, comms, find_lag);
	/* A rank RAS could not reach lags behind every count. */
	size_t i, j;
	json_t *c, *r;
	json_array_foreach(comms, i, c) {
		json_array_foreach(json_object_get(c, "missing"), j, r) {
			n->s.lagging++;
			if (n->s.missing)
				continue;
			n->s.lag = n->s.missing = true;
			n->s.dead = json_is_true(json_object_get(r, "dead"));
			n->s.rank = (int)json_integer_value(json_object_get(r, "rank"));
			n->s.pid = (int)json_integer_value(json_object_get(r, "pid"));
			const char *h = str_or(c, "hash", "?");
			clean(n->s.comm, sizeof n->s.comm, h, strlen(h));
			n->s.op[0] = '\0';
			n->s.count = n->s.max = 0;
			json_int_t size = json_integer_value(json_object_get(c, "size"));
			n->s.ranks = size > 0 && size < 1 << 24 ? (unsigned)size : 0;
			n->s.lag_moved = false;
		}
	}
}
