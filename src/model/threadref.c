#include "config.h"
#include "threadref.h"
#include "keytab.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One thread of the previous sample: its last whole record, and the
 * record a plain reference resolves to (made once, shared by every
 * sample that refers to it: a thread asleep for a day is one object). */
struct entry {
	uint64_t key;            /* pid << 32 | tid, 0 = free */
	json_t *full, *resolved;
};

struct gp_threadref {
	struct gp_keytab prev, cur;  /* of struct entry */
	json_t *vm;              /* the last sample's vm, resolved */
};

struct gp_threadref *gp_threadref_new(void)
{
	struct gp_threadref *r = calloc(1, sizeof *r);
	if (r) {
		gp_keytab_init(&r->prev, sizeof(struct entry));
		gp_keytab_init(&r->cur, sizeof(struct entry));
	}
	return r;
}

static void table_clear(struct gp_keytab *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct entry *e = gp_keytab_slot(t, i);
		if (e->key) {
			json_decref(e->full);
			json_decref(e->resolved);
		}
	}
	gp_keytab_reset(t);
}

void gp_threadref_free(struct gp_threadref *r)
{
	if (!r)
		return;
	table_clear(&r->prev);
	table_clear(&r->cur);
	json_decref(r->vm);
	gp_keytab_free(&r->prev);
	gp_keytab_free(&r->cur);
	free(r);
}

/* Takes a reference to full and resolved. */
static void put(struct gp_keytab *t, uint64_t key, json_t *full, json_t *resolved)
{
	bool made;
	struct entry *e = gp_keytab_put(t, key, &made);
	if (!e)
		return;
	if (!made) {
		json_decref(e->full);
		json_decref(e->resolved);
	}
	e->full = json_incref(full);
	e->resolved = json_incref(resolved);
}

/* What a plain reference stands for: the record, with no CPU this
 * interval (it did not run), not new, and without the kernel stack
 * (written when it was read, not repeated). */
static json_t *resolved_of(json_t *full)
{
	json_t *r = json_copy(full); /* shallow: the members are shared */
	if (!r)
		return NULL;
	json_object_set_new(r, "cpu_pct", json_real(0));
	json_object_set_new(r, "sys_pct", json_real(0));
	json_object_del(r, "new");
	json_object_del(r, "kernel");
	json_object_set_new(r, "unchanged", json_true());
	return r;
}

/* The thread a reference names, resolved (wait_ns: its override, or
 * NULL); NULL when it names nothing.  A new reference. */
static json_t *resolve_one(struct gp_threadref *r, uint64_t key, json_t *wait)
{
	struct entry *e = gp_keytab_find(&r->prev, key);
	if (!e)
		return NULL;
	if (!e->resolved)
		e->resolved = resolved_of(e->full);
	if (!e->resolved)
		return NULL;
	json_t *use = json_incref(e->resolved);
	if (wait) {
		json_t *c = json_copy(use);
		json_decref(use);
		use = c;
		if (use)
			json_object_set(use, "wait_ns", wait);
	}
	if (use)
		put(&r->cur, key, e->full, e->resolved);
	return use;
}

/* {"same":[FIRST,LAST]}: every thread of the previous sample with a tid
 * in the range, in tid order.  The range is a stranger's number: walked
 * tid by tid only while it is no longer than the table, else the table
 * is walked. */
static size_t resolve_run(struct gp_threadref *r, json_t *out, const json_t *range, uint64_t hi)
{
	json_int_t a = json_integer_value(json_array_get(range, 0));
	json_int_t b = json_integer_value(json_array_get(range, 1));
	if (json_array_size(range) != 2 || a <= 0 || b < a || b > INT32_MAX)
		return 0;
	size_t done = 0;
	if ((uint64_t)(b - a) < r->prev.n) {
		for (json_int_t tid = a; tid <= b; tid++) {
			json_t *t = resolve_one(r, hi | (uint32_t)tid, NULL);
			if (t && json_array_append_new(out, t) == 0)
				done++;
		}
		return done;
	}
	size_t nk = 0;
	uint64_t *keys = gp_keytab_range(&r->prev, hi, a, b, &nk);
	for (size_t i = 0; i < nk; i++) {
		json_t *t = resolve_one(r, keys[i], NULL);
		if (t && json_array_append_new(out, t) == 0)
			done++;
	}
	free(keys);
	return done;
}

/* v + by, both integers that a counter can hold, else by's own value
 * (a stranger's file: no overflow, no negative counter). */
static json_t *added(const json_t *v, const json_t *by)
{
	json_int_t a = json_integer_value(v), d = json_integer_value(by), sum;
	if (json_is_integer(v) && json_is_integer(by) && a >= 0 && d >= 0
	    && !__builtin_add_overflow(a, d, &sum))
		return json_integer(sum);
	return json_deep_copy(by);
}

/* Format 4: {"tid":N,"delta":1,...}, thread N's last record with the
 * members given replaced, "add" added to its counters, "gone" removed,
 * and no CPU, `new` or `kernel` but what is given.  A new reference;
 * with no last record (a cut or edited file), the members alone. */
static json_t *resolve_delta(struct gp_threadref *r, uint64_t key, json_t *th)
{
	struct entry *e = gp_keytab_find(&r->prev, key);
	json_t *out = e ? json_copy(e->full) : json_object();
	if (!out)
		return NULL;
	json_object_del(out, "cpu_pct");
	json_object_del(out, "sys_pct");
	json_object_del(out, "new");
	json_object_del(out, "kernel");
	json_object_del(out, "unchanged");
	const char *k;
	json_t *v;
	json_object_foreach(th, k, v) {
		if (!strcmp(k, "delta") || !strcmp(k, "gone"))
			continue;
		if (!strcmp(k, "add")) {
			const char *ak;
			json_t *av;
			json_object_foreach(v, ak, av)
				json_object_set_new(out, ak, added(json_object_get(out, ak), av));
			continue;
		}
		json_object_set(out, k, v);
	}
	size_t i;
	json_array_foreach(json_object_get(th, "gone"), i, v)
		if (json_is_string(v))
			json_object_del(out, json_string_value(v));
	/* Written only when not 0: the interval's CPU, like a whole record's. */
	if (!json_object_get(out, "cpu_pct"))
		json_object_set_new(out, "cpu_pct", json_real(0));
	if (!json_object_get(out, "sys_pct"))
		json_object_set_new(out, "sys_pct", json_real(0));
	return out;
}

/* parent.threads, references resolved, into a new array. */
static size_t resolve_threads(struct gp_threadref *r, json_t *parent, int64_t pid)
{
	json_t *threads = json_object_get(parent, "threads");
	if (!json_is_array(threads))
		return 0;
	json_t *out = json_array();
	if (!out)
		return 0;
	uint64_t hi = (uint64_t)(uint32_t)pid << 32;
	size_t done = 0, i;
	json_t *th;
	json_array_foreach(threads, i, th) {
		json_t *same = json_object_get(th, "same");
		if (json_is_array(same)) {
			done += resolve_run(r, out, same, hi);
			continue;
		}
		json_t *jtid = json_object_get(th, "tid");
		uint64_t key = json_is_integer(jtid)
			       ? hi | (uint32_t)json_integer_value(jtid) : 0;
		json_t *use = NULL;
		if (json_object_get(th, "delta")) {
			use = resolve_delta(r, key, th);
			if (use) {
				if (key)
					put(&r->cur, key, use, NULL);
				json_array_append_new(out, use);
				done++;
			}
			continue;
		}
		if (same && key)
			use = resolve_one(r, key, json_object_get(th, "wait_ns"));
		if (use) {
			done++;
		} else {
			/* A whole record; or a reference to nothing (a cut
			 * or edited file): a thread with only a tid. */
			use = json_incref(th);
			if (!same)
				put(&r->cur, key, th, NULL);
		}
		json_array_append_new(out, use);
	}
	json_object_set_new(parent, "threads", out);
	return done;
}

/* Format 4: "vm":{"delta":1,PART:{MEMBERS}}, the last sample's vm with
 * each part's members given replaced (sysread/sysinfo.c). */
static void resolve_vm(struct gp_threadref *r, json_t *sample)
{
	json_t *vm = json_object_get(sample, "vm");
	if (!json_is_object(vm))
		return;
	if (!json_object_get(vm, "delta")) {
		json_decref(r->vm);
		r->vm = json_incref(vm);
		return;
	}
	json_t *full = r->vm ? json_copy(r->vm) : json_object();
	if (!full)
		return;
	const char *part;
	json_t *moved;
	json_object_foreach(vm, part, moved) {
		if (!json_is_object(moved))
			continue;
		json_t *base = json_object_get(full, part);
		json_t *now = json_is_object(base) ? json_copy(base) : json_object();
		if (now)
			json_object_update(now, moved);
		json_object_set_new(full, part, now);
	}
	json_object_set(sample, "vm", full);
	json_decref(r->vm);
	r->vm = full;
}

size_t gp_threadref_resolve(struct gp_threadref *r, json_t *sample)
{
	if (!r)
		return 0;
	resolve_vm(r, sample);
	size_t n = 0, i;
	json_t *c;
	json_array_foreach(json_object_get(sample, "procs"), i, c)
		n += resolve_threads(r, c, json_integer_value(json_object_get(c, "pid")));
	n += resolve_threads(r, sample, json_integer_value(json_object_get(sample, "pid")));
	/* Only this sample's threads can be referred to by the next one. */
	table_clear(&r->prev);
	struct gp_keytab t = r->prev;
	r->prev = r->cur;
	r->cur = t;
	return n;
}
