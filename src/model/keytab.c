#include "config.h"
#include "keytab.h"

#include <stdlib.h>
#include <string.h>

void gp_keytab_init(struct gp_keytab *t, size_t size)
{
	memset(t, 0, sizeof *t);
	t->size = size;
}

void gp_keytab_free(struct gp_keytab *t)
{
	free(t->e);
	t->e = NULL;
	t->cap = t->n = 0;
}

/* Fibonacci hashing: tids are dense, so their low bits alone cluster. */
static size_t home(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* The slot of key, or the free slot where it would go. */
static size_t probe(const struct gp_keytab *t, uint64_t key)
{
	size_t h = home(key, t->cap);
	while (gp_keytab_key(t, h) && gp_keytab_key(t, h) != key)
		h = (h + 1) & (t->cap - 1);
	return h;
}

void *gp_keytab_find(const struct gp_keytab *t, uint64_t key)
{
	if (!t->cap || !key)
		return NULL;
	size_t h = probe(t, key);
	return gp_keytab_key(t, h) ? gp_keytab_slot(t, h) : NULL;
}

/* Room for want keys at most half full; false when out of memory. */
static bool reserve(struct gp_keytab *t, size_t want)
{
	if (want * 2 <= t->cap)
		return true;
	size_t cap = t->cap ? t->cap : 64;
	while (cap < want * 2)
		cap *= 2;
	struct gp_keytab n = { calloc(cap, t->size), cap, t->n, t->size };
	if (!n.e)
		return false;
	for (size_t i = 0; i < t->cap; i++) {
		uint64_t k = gp_keytab_key(t, i);
		if (k)
			memcpy(gp_keytab_slot(&n, probe(&n, k)), gp_keytab_slot(t, i), t->size);
	}
	free(t->e);
	*t = n;
	return true;
}

void *gp_keytab_put(struct gp_keytab *t, uint64_t key, bool *made)
{
	*made = false;
	if (!key || !reserve(t, t->n + 1))
		return NULL;
	size_t h = probe(t, key);
	void *e = gp_keytab_slot(t, h);
	if (!gp_keytab_key(t, h)) {
		memcpy(e, &key, sizeof key);
		t->n++;
		*made = true;
	}
	return e;
}

void gp_keytab_reset(struct gp_keytab *t)
{
	if (t->cap)
		memset(t->e, 0, t->cap * t->size);
	t->n = 0;
}

static int by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

uint64_t *gp_keytab_range(const struct gp_keytab *t, uint64_t hi, int64_t a, int64_t b, size_t *n)
{
	uint64_t *keys = malloc((t->n + 1) * sizeof *keys);
	*n = 0;
	if (!keys)
		return NULL;
	for (size_t i = 0; i < t->cap; i++) {
		uint64_t k = gp_keytab_key(t, i);
		if (k && (k >> 32) == hi >> 32 && (int64_t)(uint32_t)k >= a && (int64_t)(uint32_t)k <= b)
			keys[(*n)++] = k;
	}
	qsort(keys, *n, sizeof *keys, by_key);
	return keys;
}
