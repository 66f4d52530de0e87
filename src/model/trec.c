#include "config.h"
#include "trec.h"
#include "keytab.h"
#include "parse.h"
#include "strbuf.h"
#include "waits.h"

#include <stdlib.h>
#include <string.h>

/* ---- a JSON thread object into a record ------------------------------ */

const char *const gp_trec_add_name[TR_NADD] = {
	"run_ns", "wait_ns", "minflt", "majflt", "voluntary", "involuntary",
};
static const uint8_t add_member[TR_NADD] = {
	TR_RUN_NS, TR_WAIT_NS, TR_MINFLT, TR_MAJFLT, TR_VOL, TR_INVOL,
};

/* By the key's length first: a strcmp down the list of 26 names for
 * every key was 5 % of report's time. */
int gp_trec_key(const char *k, size_t kl)
{
	static const struct { const char *name; int m; } keys[] = {
		{ "on", TR_ON }, { "tid", TR_TID }, { "new", TR_NEW }, { "add", GP_TREC_K_ADD },
		{ "comm", TR_COMM }, { "wait", TR_WAIT }, { "same", GP_TREC_K_SAME },
		{ "gone", GP_TREC_K_GONE }, { "state", TR_STATE }, { "wchan", TR_WCHAN },
		{ "utime", TR_UTIME }, { "stime", TR_STIME }, { "delta", GP_TREC_K_DELTA },
		{ "run_ns", TR_RUN_NS }, { "minflt", TR_MINFLT }, { "majflt", TR_MAJFLT },
		{ "kernel", TR_KERNEL }, { "cpu_pct", TR_CPU }, { "sys_pct", TR_SYS },
		{ "wait_ns", TR_WAIT_NS }, { "syscall", TR_SYSCALL }, { "processor", TR_PROCESSOR },
		{ "starttime", TR_STARTTIME }, { "voluntary", TR_VOL }, { "unchanged", TR_UNCHANGED },
		{ "involuntary", TR_INVOL },
	};
	/* keys[] is ordered by length: start at the first of this length */
	static const unsigned char first[12] = { 0, 0, 0, 1, 4, 8, 13, 17, 21, 21, 25, 25 };
	if (kl < 2 || kl > 11)
		return -1;
	/* from first[kl] on, no name is shorter than kl: name[kl] exists,
	 * and is its end only for a name of this length */
	for (size_t i = first[kl]; i < sizeof keys / sizeof keys[0] && !keys[i].name[kl]; i++)
		if (!memcmp(keys[i].name, k, kl))
			return keys[i].m;
	return -1;
}

int gp_trec_member(const char *name)
{
	int m = gp_trec_key(name, strlen(name));
	return m < TR_NMEMBERS ? m : -1;
}

uint64_t gp_u64_of_real(double d)
{
	/* 2^64 and past: the cast would be undefined (tests/fuzz,
	 * regress/report/u64-real-max); NaN is not > 0. */
	return d > 0 ? d < 18446744073709551616.0 ? (uint64_t)d : UINT64_MAX : 0;
}

uint64_t gp_json_u64(const json_t *v)
{
	if (json_is_integer(v))
		return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
	return json_is_real(v) ? gp_u64_of_real(json_real_value(v)) : 0;
}

static uint64_t hex_of(const json_t *v)
{
	uint64_t x = 0;
	if (json_is_string(v))
		gp_parse_x64(json_string_value(v), &x, NULL);
	else if (json_is_integer(v))
		x = (uint64_t)json_integer_value(v);
	return x;
}

static void syscall_from(const json_t *v, struct gp_trec *r)
{
	if (json_is_string(v)) {
		r->sc.kind = GP_TREC_SC_TEXT;
		snprintf(r->sc.text, sizeof r->sc.text, "%s", json_string_value(v));
		return;
	}
	r->sc.kind = GP_TREC_SC_OBJ;
	const json_t *nr = json_object_get(v, "nr");
	r->sc.have_nr = json_is_integer(nr);
	r->sc.nr = json_integer_value(nr);
	const json_t *args = json_object_get(v, "args");
	for (size_t i = 0; i < 6; i++)
		r->sc.args[i] = hex_of(json_array_get(args, i));
	r->sc.sp = hex_of(json_object_get(v, "sp"));
	r->sc.pc = hex_of(json_object_get(v, "pc"));
}

static void edge_from(const json_t *v, struct gp_wait_edge *on)
{
	on->how = (uint8_t)gp_edge_from_name(json_string_value(json_object_get(v, "how")));
	json_int_t id = json_integer_value(json_object_get(v, "id"));
	on->id = id > 0 && id <= INT32_MAX ? (int32_t)id : 0;
	json_int_t of = json_integer_value(json_object_get(v, "of"));
	on->of = of > 0 && of <= INT32_MAX ? (int32_t)of : 0;
	on->shared = json_is_true(json_object_get(v, "shared"));
	const char *c = json_string_value(json_object_get(v, "comm"));
	snprintf(on->comm, sizeof on->comm, "%s", c ? c : "");
}

static char *kernel_from(const json_t *v)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	const json_t *f;
	json_array_foreach(v, i, f)
		if (json_is_string(f))
			strbuf_addf(&sb, "%s%s", sb.len ? "\n" : "", json_string_value(f));
	return strbuf_detach(&sb, NULL);
}

/* Member m of value v; false when v has the wrong type for it. */
static bool member_from(struct gp_trec *r, int m, const json_t *v)
{
	const char *s = json_string_value(v);
	switch (m) {
	case TR_TID:
		if (!json_is_integer(v))
			return false;
		r->tid = (int)json_integer_value(v);
		return true;
	case TR_COMM:
		return s && snprintf(r->comm, sizeof r->comm, "%s", s) >= 0;
	case TR_STATE:
		r->state = s && *s ? s[0] : '?';
		return true;
	case TR_WCHAN:       /* present whatever its type: a wchan was read */
		snprintf(r->wchan, sizeof r->wchan, "%s", s ? s : "");
		return true;
	case TR_UTIME: case TR_STIME: case TR_CPU: case TR_SYS: {
		if (!json_is_number(v))
			return false;
		double *d[] = { &r->utime, &r->stime, &r->cpu_pct, &r->sys_pct };
		*d[m - TR_UTIME] = json_number_value(v);
		return true;
	}
	case TR_RUN_NS: case TR_WAIT_NS: case TR_MINFLT: case TR_MAJFLT: case TR_STARTTIME:
	case TR_VOL: case TR_INVOL: {
		if (!json_is_number(v))
			return false;
		uint64_t *u[] = { [TR_RUN_NS] = &r->run_ns, [TR_WAIT_NS] = &r->wait_ns,
			[TR_MINFLT] = &r->minflt, [TR_MAJFLT] = &r->majflt, [TR_STARTTIME] = &r->starttime,
			[TR_VOL] = &r->vol, [TR_INVOL] = &r->invol };
		*u[m] = gp_json_u64(v);
		return true;
	}
	case TR_PROCESSOR:
		r->processor = json_integer_value(v);
		return json_is_integer(v);
	case TR_SYSCALL:     /* present whatever its type (load.c: have_syscall) */
		syscall_from(v, r);
		return true;
	case TR_WAIT:
		if (!s)
			return false;
		r->wait = (uint8_t)gp_wait_from_name(s);
		return true;
	case TR_ON:
		if (!json_is_object(v))
			return false;
		edge_from(v, &r->on);
		return true;
	case TR_KERNEL:      /* present whatever its type; frames when an array */
		r->kernel = kernel_from(v);
		return true;
	case TR_NEW:
	case TR_UNCHANGED:
		return json_is_true(v);
	}
	return false;
}

bool gp_trec_from_json(const json_t *th, struct gp_trec *r)
{
	memset(r, 0, sizeof *r);
	if (!json_is_object(th))
		return false;
	const json_t *same = json_object_get(th, "same");
	if (json_is_array(same)) {
		r->kind = GP_TREC_RUN;
		json_int_t a = json_integer_value(json_array_get(same, 0));
		json_int_t b = json_integer_value(json_array_get(same, 1));
		/* as model/threadref.c: any other range resolves to nothing */
		if (json_array_size(same) == 2 && a > 0 && b >= a && b <= INT32_MAX) {
			r->run_first = (int)a;
			r->run_last = (int)b;
		}
		return true;
	}
	r->kind = json_object_get(th, "delta") ? GP_TREC_DELTA : same ? GP_TREC_SAME : GP_TREC_WHOLE;
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)th, k, v) {
		int m = gp_trec_member(k);
		if (m >= 0 && member_from(r, m, v))
			r->have |= TR_BIT(m);
	}
	if (r->kind != GP_TREC_DELTA)
		return true;
	json_object_foreach(json_object_get(th, "add"), k, v)
		for (int i = 0; i < TR_NADD; i++)
			if (!strcmp(k, gp_trec_add_name[i]) && json_is_integer(v) && json_integer_value(v) >= 0) {
				r->add |= (uint8_t)(1u << i);
				r->add_by[i] = (uint64_t)json_integer_value(v);
			}
	size_t i;
	json_array_foreach(json_object_get(th, "gone"), i, v) {
		int m = json_is_string(v) ? gp_trec_member(json_string_value(v)) : -1;
		if (m >= 0)
			r->gone |= TR_BIT(m);
	}
	return true;
}

void gp_trec_release(struct gp_trec *r)
{
	free(r->kernel);
	r->kernel = NULL;
}

/* ---- the resolver ---------------------------------------------------- */

struct slot {
	uint64_t key;            /* pid << 32 | tid, 0 = free */
	struct gp_trec rec;      /* resolved, kernel NULL */
};

struct gp_trecref {
	struct gp_keytab prev, cur;  /* of struct slot */
};

struct gp_trecref *gp_trecref_new(void)
{
	struct gp_trecref *r = calloc(1, sizeof *r);
	if (r) {
		gp_keytab_init(&r->prev, sizeof(struct slot));
		gp_keytab_init(&r->cur, sizeof(struct slot));
	}
	return r;
}

void gp_trecref_free(struct gp_trecref *r)
{
	if (!r)
		return;
	gp_keytab_free(&r->prev);
	gp_keytab_free(&r->cur);
	free(r);
}

static void put(struct gp_keytab *t, uint64_t key, const struct gp_trec *rec)
{
	bool made;
	struct slot *e = gp_keytab_put(t, key, &made);
	if (!e)
		return;
	e->rec = *rec;
	e->rec.kernel = NULL;
}

void gp_trecref_next(struct gp_trecref *r)
{
	struct gp_keytab t = r->prev;
	r->prev = r->cur;
	gp_keytab_reset(&t);
	r->cur = t;
}

static bool push(struct gp_trec **out, size_t *cap, size_t *n, const struct gp_trec *rec)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct gp_trec *o = realloc(*out, nc * sizeof *o);
		if (!o)
			return false;
		*out = o;
		*cap = nc;
	}
	(*out)[(*n)++] = *rec;
	return true;
}

/* What a reference stands for (model/threadref.c resolved_of): the last
 * record with no CPU this interval, not new, no kernel stack, unchanged. */
static struct gp_trec referred(const struct gp_trec *full)
{
	struct gp_trec t = *full;
	t.kind = GP_TREC_WHOLE;
	t.have &= ~(TR_BIT(TR_NEW) | TR_BIT(TR_KERNEL));
	t.have |= TR_BIT(TR_CPU) | TR_BIT(TR_SYS) | TR_BIT(TR_UNCHANGED);
	t.cpu_pct = t.sys_pct = 0;
	t.kernel = NULL;
	return t;
}

/* A delta on its base (model/threadref.c resolve_delta). */
static struct gp_trec applied(const struct gp_trec *base, const struct gp_trec *d)
{
	static const uint32_t dropped = TR_BIT(TR_CPU) | TR_BIT(TR_SYS) | TR_BIT(TR_NEW)
					| TR_BIT(TR_KERNEL) | TR_BIT(TR_UNCHANGED);
	struct gp_trec t;
	if (base) {
		t = *base;
	} else {
		memset(&t, 0, sizeof t);
		t.state = '?';
	}
	t.kind = GP_TREC_WHOLE;
	t.have &= ~dropped;
	t.cpu_pct = t.sys_pct = 0;
	t.kernel = d->kernel;
	/* the members given, field by field as their bits say */
#define TAKE(bit, field) if (d->have & TR_BIT(bit)) t.field = d->field
	TAKE(TR_TID, tid);
	if (d->have & TR_BIT(TR_COMM))
		memcpy(t.comm, d->comm, sizeof t.comm);
	TAKE(TR_STATE, state);
	if (d->have & TR_BIT(TR_WCHAN))
		memcpy(t.wchan, d->wchan, sizeof t.wchan);
	TAKE(TR_UTIME, utime); TAKE(TR_STIME, stime); TAKE(TR_CPU, cpu_pct); TAKE(TR_SYS, sys_pct);
	TAKE(TR_RUN_NS, run_ns); TAKE(TR_WAIT_NS, wait_ns); TAKE(TR_MINFLT, minflt);
	TAKE(TR_MAJFLT, majflt); TAKE(TR_PROCESSOR, processor); TAKE(TR_STARTTIME, starttime);
	TAKE(TR_VOL, vol); TAKE(TR_INVOL, invol); TAKE(TR_SYSCALL, sc); TAKE(TR_WAIT, wait);
	TAKE(TR_ON, on);
#undef TAKE
	t.have |= d->have;
	uint64_t *ctr[TR_NADD] = { &t.run_ns, &t.wait_ns, &t.minflt, &t.majflt, &t.vol, &t.invol };
	for (int i = 0; i < TR_NADD; i++) {
		if (!(d->add & (1u << i)))
			continue;
		uint64_t sum;
		bool had = t.have & TR_BIT(add_member[i]);
		/* as json: base + by when both fit a JSON integer, else by */
		if (!had || __builtin_add_overflow(*ctr[i], d->add_by[i], &sum) || sum > INT64_MAX)
			sum = d->add_by[i];
		*ctr[i] = sum;
		t.have |= TR_BIT(add_member[i]);
	}
	t.have &= ~d->gone;
	if (d->gone & TR_BIT(TR_KERNEL))
		t.kernel = NULL;
	/* CPU not given (or gone) is 0, as a whole record's */
	if (!(t.have & TR_BIT(TR_CPU)))
		t.cpu_pct = 0;
	if (!(t.have & TR_BIT(TR_SYS)))
		t.sys_pct = 0;
	t.have |= TR_BIT(TR_CPU) | TR_BIT(TR_SYS);
	return t;
}

/* {"same":[FIRST,LAST]}: walked tid by tid only while the range is no
 * longer than the table, else the table is walked (a stranger's range). */
static bool resolve_run(struct gp_trecref *r, uint64_t hi, const struct gp_trec *run,
			struct gp_trec **out, size_t *cap, size_t *n)
{
	int64_t a = run->run_first, b = run->run_last;
	if (a <= 0 || b < a)
		return true;
	if ((uint64_t)(b - a) < r->prev.n) {
		for (int64_t tid = a; tid <= b; tid++) {
			struct slot *e = gp_keytab_find(&r->prev, hi | (uint32_t)tid);
			if (!e)
				continue;
			struct gp_trec t = referred(&e->rec);
			if (!push(out, cap, n, &t))
				return false;
			put(&r->cur, e->key, &e->rec);
		}
		return true;
	}
	size_t nk = 0;
	uint64_t *keys = gp_keytab_range(&r->prev, hi, a, b, &nk);
	if (!keys)
		return false;
	bool ok = true;
	for (size_t i = 0; ok && i < nk; i++) {
		struct slot *e = gp_keytab_find(&r->prev, keys[i]);
		struct gp_trec t = referred(&e->rec);
		ok = push(out, cap, n, &t);
		put(&r->cur, e->key, &e->rec);
	}
	free(keys);
	return ok;
}

size_t gp_trecref_resolve(struct gp_trecref *r, int pid, const struct gp_trec *raw, size_t nraw,
			  struct gp_trec **out, size_t *cap)
{
	uint64_t hi = (uint64_t)(uint32_t)pid << 32;
	size_t n = 0;
	for (size_t i = 0; i < nraw; i++) {
		const struct gp_trec *th = &raw[i];
		if (th->kind == GP_TREC_RUN) {
			if (!resolve_run(r, hi, th, out, cap, &n))
				return (size_t)-1;
			continue;
		}
		uint64_t key = th->have & TR_BIT(TR_TID) ? hi | (uint32_t)th->tid : 0;
		struct slot *e = gp_keytab_find(&r->prev, key);
		struct gp_trec t;
		if (th->kind == GP_TREC_DELTA) {
			t = applied(e ? &e->rec : NULL, th);
			put(&r->cur, key, &t);
		} else if (th->kind == GP_TREC_SAME && e) {
			t = referred(&e->rec);
			if (th->have & TR_BIT(TR_WAIT_NS))
				t.wait_ns = th->wait_ns;
			put(&r->cur, key, &e->rec);
		} else {
			/* A whole record; or a reference to nothing (a cut or
			 * edited file): a thread with only what it says. */
			t = *th;
			if (th->kind == GP_TREC_WHOLE)
				put(&r->cur, key, &t);
		}
		if (!push(out, cap, &n, &t))
			return (size_t)-1;
	}
	return n;
}
