/* An open-addressing hash table of fixed-size entries, each starting with
 * its uint64_t key (0: a free slot), kept at most half full.  The thread
 * references of the result format (threadref.c on json_t, trec.c on
 * structs) keep the last sample's threads in one, keyed pid << 32 | tid. */
#ifndef GP_KEYTAB_H
#define GP_KEYTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_keytab {
	unsigned char *e;
	size_t cap, n;           /* slots, and keys held */
	size_t size;             /* bytes an entry (its first member: the key) */
};

/* An empty table of entries of size bytes (no memory until the first put). */
void gp_keytab_init(struct gp_keytab *t, size_t size);
void gp_keytab_free(struct gp_keytab *t);

/* Slot i (0 <= i < cap): an entry, free when its key is 0. */
static inline void *gp_keytab_slot(const struct gp_keytab *t, size_t i)
{
	return t->e + i * t->size;
}
static inline uint64_t gp_keytab_key(const struct gp_keytab *t, size_t i)
{
	return *(const uint64_t *)gp_keytab_slot(t, i);
}

/* The entry of key, or NULL. */
void *gp_keytab_find(const struct gp_keytab *t, uint64_t key);
/* The entry of key; made when absent (*made true; zero but its key).
 * NULL for key 0, or when memory ran out. */
void *gp_keytab_put(struct gp_keytab *t, uint64_t key, bool *made);
/* Every slot free again; the memory kept. */
void gp_keytab_reset(struct gp_keytab *t);

/* The keys whose high 32 bits are hi's and whose low 32 bits (a tid)
 * lie in [a, b], ascending, malloc'd (*n of them); NULL when out of
 * memory. */
uint64_t *gp_keytab_range(const struct gp_keytab *t, uint64_t hi, int64_t a, int64_t b, size_t *n);

#endif
