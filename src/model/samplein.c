#include "config.h"
#include "samplein.h"
#include "threadref.h"
#include "trecscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One process's threads of the sample: as read, and resolved. */
struct part {
	struct gp_trecs raw;
	struct gp_trec *res;
	size_t nres, capres;
};

struct gp_samplein {
	struct gp_trecref *refs;
	struct gp_threadref *vm;    /* the vm's deltas (the threads arrays it sees are empty) */
	struct part *part;          /* part[which + 1] */
	size_t nparts, capparts;
	struct gp_sample_split split;
	char *rest;
	size_t restcap;
	struct gp_trecs_budget budget; /* the sample's threads, every process of it */
};

struct gp_samplein *gp_samplein_new(void)
{
	struct gp_samplein *si = calloc(1, sizeof *si);
	if (!si)
		return NULL;
	si->refs = gp_trecref_new();
	si->vm = gp_threadref_new();
	if (!si->refs || !si->vm) {
		gp_samplein_free(si);
		return NULL;
	}
	return si;
}

void gp_samplein_free(struct gp_samplein *si)
{
	if (!si)
		return;
	for (size_t i = 0; i < si->capparts; i++) {
		gp_trecs_free(&si->part[i].raw);
		free(si->part[i].res);
	}
	free(si->part);
	free(si->rest);
	gp_trecref_free(si->refs);
	gp_threadref_free(si->vm);
	free(si);
}

static struct part *part_of(struct gp_samplein *si, int which)
{
	size_t i = (size_t)(which + 1);
	if (i >= si->capparts) {
		size_t cap = si->capparts ? si->capparts : 8;
		while (cap <= i)
			cap *= 2;
		struct part *p = realloc(si->part, cap * sizeof *p);
		if (!p)
			return NULL;
		memset(p + si->capparts, 0, (cap - si->capparts) * sizeof *p);
		for (size_t k = si->capparts; k < cap; k++)
			p[k].raw.budget = &si->budget;
		si->part = p;
		si->capparts = cap;
	}
	if (i >= si->nparts)
		si->nparts = i + 1;
	return &si->part[i];
}

/* The line with every thread array replaced by [], for jansson. */
static const char *rest_of(struct gp_samplein *si, const char *line, size_t len, size_t *rlen)
{
	if (len + 1 > si->restcap) {
		char *r = realloc(si->rest, len + 1);
		if (!r)
			return NULL;
		si->rest = r;
		si->restcap = len + 1;
	}
	size_t n = 0;
	const char *at = line;
	for (size_t i = 0; i < si->split.n; i++) {
		const struct gp_span *sp = &si->split.span[i];
		memcpy(si->rest + n, at, (size_t)(sp->at - at));
		n += (size_t)(sp->at - at);
		memcpy(si->rest + n, "[]", 2);
		n += 2;
		at = sp->at + sp->len;
	}
	memcpy(si->rest + n, at, (size_t)(line + len - at));
	n += (size_t)(line + len - at);
	*rlen = n;
	return si->rest;
}

static struct gp_trecs *raw_of(void *ctx, int which)
{
	struct part *p = part_of(ctx, which);
	return p ? &p->raw : NULL;
}

/* One span's records, when the split did not scan them: through jansson. */
static bool read_span(struct part *p, const struct gp_span *sp)
{
	if (sp->scanned)
		return true;
	if (p->raw.budget->over)
		return false; /* too many threads: not worth jansson's time */
	/* Not JSON here is not JSON in the whole line either: false, and the
	 * line goes to jansson whole (which refuses it, with its reason). */
	json_t *arr = json_loadb(sp->at, sp->len, 0, NULL);
	bool ok = arr && gp_trecs_from_json(arr, &p->raw);
	json_decref(arr);
	return ok;
}

/* The thread arrays of j itself (a line the splitter did not take). */
static void read_json_threads(struct gp_samplein *si, json_t *j)
{
	struct part *p = part_of(si, -1);
	json_t *arr = json_object_get(j, "threads");
	if (p && json_is_array(arr)) {
		gp_trecs_from_json(arr, &p->raw);
		json_object_set_new(j, "threads", json_array());
	}
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(j, "procs"), i, c) {
		arr = json_object_get(c, "threads");
		if (i > 255 || !json_is_array(arr) || !(p = part_of(si, (int)i)))
			continue;
		gp_trecs_from_json(arr, &p->raw);
		json_object_set_new(c, "threads", json_array());
	}
}

static int pid_of(const json_t *o)
{
	json_int_t v = json_integer_value(json_object_get(o, "pid"));
	return (int)v;
}

/* Every process's records resolved, procs first (as model/threadref.c). */
static void resolve(struct gp_samplein *si, json_t *j)
{
	size_t nprocs = json_array_size(json_object_get(j, "procs"));
	for (size_t k = 0; k < si->nparts; k++) {
		size_t i = (k + 1) % si->nparts; /* part[1..] then part[0] */
		struct part *p = &si->part[i];
		int which = (int)i - 1;
		const json_t *owner = which < 0 ? j : json_array_get(json_object_get(j, "procs"), (size_t)which);
		p->nres = 0;
		if (which >= 0 && (size_t)which >= nprocs)
			continue;
		size_t n = gp_trecref_resolve(si->refs, pid_of(owner), p->raw.r, p->raw.n, &p->res, &p->capres);
		p->nres = n == (size_t)-1 ? 0 : n;
	}
	gp_trecref_next(si->refs);
	gp_threadref_resolve(si->vm, j);
}

/* A sample of too many threads: refused, its records let go. */
static json_t *too_many(struct gp_samplein *si, json_t *j, json_error_t *err)
{
	json_decref(j);
	for (size_t i = 0; i < si->nparts; i++) {
		gp_trecs_clear(&si->part[i].raw);
		si->part[i].nres = 0;
	}
	si->nparts = 0;
	if (err)
		snprintf(err->text, sizeof err->text, "a sample of more than %zu threads",
			 GP_SAMPLE_MAX_THREADS);
	return NULL;
}

bool gp_samplein_over(const struct gp_samplein *si)
{
	return si->budget.over;
}

json_t *gp_samplein_parse(struct gp_samplein *si, const char *line, size_t len, json_error_t *err)
{
	json_t *j;
	for (size_t i = 0; i < si->nparts; i++) {
		gp_trecs_clear(&si->part[i].raw);
		si->part[i].nres = 0;
	}
	si->nparts = 0;
	si->budget = (struct gp_trecs_budget){ GP_SAMPLE_MAX_THREADS, false };
	if (len < 16 || memcmp(line, "{\"type\":\"sample\"", 16) != 0)
		goto whole;
	si->split.get = raw_of;
	si->split.ctx = si;
	if (!gp_sample_split(line, len, &si->split))
		goto whole;
	size_t rlen;
	const char *rest = rest_of(si, line, len, &rlen);
	j = rest ? json_loadb(rest, rlen, 0, err) : NULL;
	if (!j)
		goto whole;
	for (size_t i = 0; i < si->split.n; i++) {
		struct part *p = part_of(si, si->split.span[i].which);
		if (!p || !read_span(p, &si->split.span[i])) {
			json_decref(j);
			goto whole;
		}
	}
	part_of(si, -1);
	resolve(si, j);
	return j;
whole:
	if (si->budget.over)
		return too_many(si, NULL, err);
	for (size_t i = 0; i < si->nparts; i++)
		gp_trecs_clear(&si->part[i].raw);
	si->nparts = 0;
	j = json_loadb(line, len, 0, err);
	const char *type = json_string_value(json_object_get(j, "type"));
	if (type && !strcmp(type, "sample")) {
		read_json_threads(si, j);
		if (si->budget.over)
			return too_many(si, j, err);
		part_of(si, -1);
		resolve(si, j);
	}
	return j;
}

size_t gp_samplein_threads(const struct gp_samplein *si, int which, const struct gp_trec **out)
{
	size_t i = (size_t)(which + 1);
	if (which < -1 || i >= si->nparts) {
		*out = NULL;
		return 0;
	}
	*out = si->part[i].res;
	return si->part[i].nres;
}
