/* A sample's thread records read into structs, not json_t: `report` of a
 * day at 1 Hz of a 200-thread process is 17 million records, and building
 * each as a jansson object (then copying it to resolve a format 4 delta)
 * was 83 % of report's time, jansson 53 % and malloc 30 % (perf,
 * 2026-12-05).  Here a record is scanned from the line's text
 * (model/trecscan.c), or converted from jansson's object where the
 * scanner meets anything it does not expect, and references and deltas
 * (doc/result-format.md, formats 3 and 4) are resolved on the structs.
 * model/threadref.c resolves the same on json_t, for `report --format
 * jsonl`; tests/unit/test_trec.c holds the two to the same answers. */
#ifndef GP_TREC_H
#define GP_TREC_H

#include "waitgraph.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The members a record can carry, as bits of gp_trec.have. */
enum gp_trec_member {
	TR_TID, TR_COMM, TR_STATE, TR_WCHAN, TR_UTIME, TR_STIME, TR_CPU, TR_SYS,
	TR_RUN_NS, TR_WAIT_NS, TR_MINFLT, TR_MAJFLT, TR_PROCESSOR, TR_STARTTIME,
	TR_VOL, TR_INVOL, TR_SYSCALL, TR_WAIT, TR_ON, TR_KERNEL, TR_NEW, TR_UNCHANGED,
	TR_NMEMBERS
};
#define TR_BIT(m) (1u << (m))

enum gp_trec_kind {
	GP_TREC_WHOLE,   /* a whole record (every format) */
	GP_TREC_SAME,    /* {"tid":N,"same":1}, format 3 */
	GP_TREC_RUN,     /* {"same":[FIRST,LAST]}, format 3 */
	GP_TREC_DELTA,   /* {"tid":N,"delta":1,...}, format 4 */
};

/* The counters a delta's "add" can name, in this order. */
enum { TR_ADD_RUN_NS, TR_ADD_WAIT_NS, TR_ADD_MINFLT, TR_ADD_MAJFLT, TR_ADD_VOL, TR_ADD_INVOL,
       TR_NADD };

/* `syscall`: a string ("running"), or an object (nr, args, sp, pc). */
enum { GP_TREC_SC_NONE, GP_TREC_SC_TEXT, GP_TREC_SC_OBJ };

struct gp_trec {
	uint32_t have;             /* TR_BIT(member): present (of the right type) */
	uint8_t kind;              /* enum gp_trec_kind */
	int tid;                   /* a positive int, else 0 */
	char state;                /* the first character, '?' when empty */
	char comm[64], wchan[64];  /* wchan may be present but not a string: "" */
	double utime, stime, cpu_pct, sys_pct;
	uint64_t run_ns, wait_ns, minflt, majflt, vol, invol, starttime;
	int64_t processor;
	struct {
		uint8_t kind;      /* GP_TREC_SC_* */
		bool have_nr;      /* an object with an integer nr */
		char text[24];
		int64_t nr;
		uint64_t args[6], sp, pc;
	} sc;
	uint8_t wait;              /* enum gp_wait (TR_WAIT: named, maybe unknown) */
	struct gp_wait_edge on;    /* TR_ON: an object, how GP_EDGE_NONE if unknown */
	char *kernel;              /* frames joined by '\n' (malloc'd), or NULL */
	/* A delta's "add" (TR_NADD bits) and "gone" (member bits); a run's
	 * tids. */
	uint8_t add;
	uint64_t add_by[TR_NADD];
	uint32_t gone;
	int run_first, run_last;
};

/* Keys past the record's members: format 3 and 4's. */
enum { GP_TREC_K_SAME = TR_NMEMBERS, GP_TREC_K_DELTA, GP_TREC_K_ADD, GP_TREC_K_GONE };
/* The member (TR_*) or format key (GP_TREC_K_*) a JSON key of kl bytes
 * names, or -1. */
int gp_trec_key(const char *k, size_t kl);
/* The member named name (its JSON key), or -1. */
int gp_trec_member(const char *name);
/* The counters' names in "add", TR_ADD_* order. */
extern const char *const gp_trec_add_name[TR_NADD];

/* A counter from a stranger's file, as every reader takes one: a
 * positive integer, a real clamped to 0 .. 2^64-1 (NaN is 0), else 0. */
uint64_t gp_json_u64(const json_t *v);
uint64_t gp_u64_of_real(double d);

/* One JSON thread object into *r (kind from its members); members of the
 * wrong type read as absent.  False when it is not an object. */
bool gp_trec_from_json(const json_t *th, struct gp_trec *r);

/* Frees r->kernel. */
void gp_trec_release(struct gp_trec *r);

/* The resolver: the previous sample's resolved records by pid and tid. */
struct gp_trecref;
struct gp_trecref *gp_trecref_new(void);
void gp_trecref_free(struct gp_trecref *r);

/* One sample's records of process pid (raw: as read), resolved into out
 * (grown as needed; references expand to many).  Every process of a
 * sample, then gp_trecref_next.  Returns how many were written into
 * *out, or (size_t)-1 when out of memory.  out's kernel strings are
 * raw's, not copied: valid while raw is. */
size_t gp_trecref_resolve(struct gp_trecref *r, int pid, const struct gp_trec *raw, size_t n,
			  struct gp_trec **out, size_t *cap);
/* The sample is done: only its records can be referred to by the next. */
void gp_trecref_next(struct gp_trecref *r);

#endif
