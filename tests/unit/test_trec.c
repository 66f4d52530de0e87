/* The struct path of `report` (model/samplein.c, trecscan.c, trec.c)
 * against the json path (jansson and model/threadref.c, what `report
 * --format jsonl` uses): every sample line of the report fuzz corpus,
 * and a tracer's format 4 output (tracer/threadrec.c), resolve to the
 * same threads either way, and so does a line the scanner must hand to
 * jansson. */
#include "config.h"
#include "unit.h"
#include "jsonw.h"
#include "samplein.h"
#include "tasks.h"
#include "threadrec.h"
#include "threadref.h"
#include "trec.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* One record against another, member by member. */
static void same_rec(const struct gp_trec *a, const struct gp_trec *b, const char *where)
{
	if (a->have != b->have)
		fail_msg("%s: members %#x against %#x", where, a->have, b->have);
	uint32_t h = a->have;
#define EQ(bit, cond) if ((h & TR_BIT(bit)) && !(cond)) fail_msg("%s: member %d differs", where, bit)
	EQ(TR_TID, a->tid == b->tid);
	EQ(TR_COMM, !strcmp(a->comm, b->comm));
	EQ(TR_STATE, a->state == b->state);
	EQ(TR_WCHAN, !strcmp(a->wchan, b->wchan));
	EQ(TR_UTIME, a->utime == b->utime);
	EQ(TR_STIME, a->stime == b->stime);
	EQ(TR_CPU, a->cpu_pct == b->cpu_pct);
	EQ(TR_SYS, a->sys_pct == b->sys_pct);
	EQ(TR_RUN_NS, a->run_ns == b->run_ns);
	EQ(TR_WAIT_NS, a->wait_ns == b->wait_ns);
	EQ(TR_MINFLT, a->minflt == b->minflt);
	EQ(TR_MAJFLT, a->majflt == b->majflt);
	EQ(TR_PROCESSOR, a->processor == b->processor);
	EQ(TR_STARTTIME, a->starttime == b->starttime);
	EQ(TR_VOL, a->vol == b->vol);
	EQ(TR_INVOL, a->invol == b->invol);
	EQ(TR_SYSCALL, a->sc.kind == b->sc.kind && a->sc.have_nr == b->sc.have_nr
	   && !strcmp(a->sc.text, b->sc.text) && a->sc.nr == b->sc.nr
	   && !memcmp(a->sc.args, b->sc.args, sizeof a->sc.args) && a->sc.sp == b->sc.sp
	   && a->sc.pc == b->sc.pc);
	EQ(TR_WAIT, a->wait == b->wait);
	EQ(TR_ON, a->on.how == b->on.how && a->on.id == b->on.id && a->on.shared == b->on.shared
	   && !strcmp(a->on.comm, b->on.comm));
	EQ(TR_KERNEL, !strcmp(a->kernel ? a->kernel : "", b->kernel ? b->kernel : ""));
#undef EQ
}

/* The threads of one process, both ways. */
static void same_threads(const struct gp_samplein *si, int which, const json_t *arr, const char *where)
{
	const struct gp_trec *got;
	size_t n = gp_samplein_threads(si, which, &got), k = 0, i;
	const json_t *th;
	json_array_foreach(arr, i, th) {
		struct gp_trec want;
		if (!gp_trec_from_json(th, &want))
			continue;
		if (k >= n)
			fail_msg("%s: %zu threads by struct, more by json", where, n);
		char w[300];
		snprintf(w, sizeof w, "%s, thread %zu (tid %d)", where, k, want.tid);
		same_rec(&got[k++], &want, w);
		gp_trec_release(&want);
	}
	if (k != n)
		fail_msg("%s: %zu threads by struct, %zu by json", where, n, k);
}

/* Every line of text both ways; returns the sample lines compared. */
static unsigned compare_lines(char *text, const char *name)
{
	struct gp_samplein *si = gp_samplein_new();
	struct gp_threadref *refs = gp_threadref_new();
	unsigned samples = 0, lineno = 0;
	for (char *line = text, *eol; line && *line; line = eol ? eol + 1 : NULL) {
		eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) + 1 : strlen(line);
		lineno++;
		json_t *j = json_loadb(line, len, 0, NULL);
		json_t *k = gp_samplein_parse(si, line, len, NULL);
		assert_true((j == NULL) == (k == NULL));
		const char *type = json_string_value(json_object_get(j, "type"));
		if (type && !strcmp(type, "sample")) {
			gp_threadref_resolve(refs, j);
			char where[200];
			snprintf(where, sizeof where, "%s line %u", name, lineno);
			same_threads(si, -1, json_object_get(j, "threads"), where);
			size_t i;
			json_t *c;
			json_array_foreach(json_object_get(j, "procs"), i, c)
				same_threads(si, (int)i, json_object_get(c, "threads"), where);
			/* the rest alike, vm resolved, threads left empty */
			if (json_is_array(json_object_get(j, "threads")))
				json_object_set_new(j, "threads", json_array());
			json_array_foreach(json_object_get(j, "procs"), i, c)
				if (json_is_array(json_object_get(c, "threads")))
					json_object_set_new(c, "threads", json_array());
			if (!json_equal(j, k))
				fail_msg("%s: the rest of the sample differs", where);
			samples++;
		}
		json_decref(j);
		json_decref(k);
	}
	gp_threadref_free(refs);
	gp_samplein_free(si);
	return samples;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(m);
	fclose(f);
	return buf;
}

static void test_corpus(void **st)
{
	(void)st;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/../fuzz/corpus/report", FIXTURES);
	DIR *d = opendir(dir);
	assert_non_null(d);
	unsigned files = 0, samples = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		char *text = slurp(path);
		if (!text)
			continue;
		samples += compare_lines(text, e->d_name);
		free(text);
		files++;
	}
	closedir(d);
	assert_true(files > 20);
	assert_true(samples > 100);
}

/* A tracer's format 4 output, with a comm the scanner must leave to
 * jansson every fifth sample, and a process tree. */
static void test_tracer_output(void **st)
{
	(void)st;
	enum { NT = 5 };
	struct gp_thread th[NT];
	struct gp_thread_rec base[NT];
	struct gp_wait_edge on = { 0 };
	memset(th, 0, sizeof th);
	memset(base, 0, sizeof base);
	for (int i = 0; i < NT; i++) {
		th[i].tid = 200 + i;
		th[i].is_new = true;
		th[i].have_sched = th[i].have_ctxt = th[i].have_wchan = true;
		snprintf(th[i].st.comm, sizeof th[i].st.comm, "w%d", i);
		snprintf(th[i].wchan, sizeof th[i].wchan, "futex_wait_queue");
		th[i].st.state = 'S';
		th[i].sc.kind = GP_SC_IN;
		th[i].sc.nr = 202;
		th[i].rec_mem = &base[i];
	}
	struct gp_jsonw w = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	for (int k = 0; k < 60; k++) {
		gp_jw_reset(&w);
		gp_jw_arr_begin(&w);
		struct gp_same_run run = { 0 };
		for (int i = 0; i < NT; i++) {
			if (k && (i + k) % 3 == 0) {
				th[i].unchanged = true;
				th[i].last_wait_ns = th[i].wait_ns;
				gp_same_add(&w, &run, &th[i]);
				continue;
			}
			gp_same_flush(&w, &run);
			th[i].is_new = k == 0;
			th[i].unchanged = false;
			th[i].run_ns += 1000u * (unsigned)(k + i);
			th[i].d_run_ns = 1000u * (unsigned)(k + i);
			th[i].vcsw += 1;
			th[i].st.processor = (k + i) % 4;
			if (k % 5 == 4 && i == 0)
				snprintf(th[i].st.comm, sizeof th[i].st.comm, "q\"%d", k);
			gp_threadrec_write(&w, &th[i], 100, k ? 1.0 : 0, GP_WAIT_LOCK, &on, false);
		}
		gp_same_flush(&w, &run);
		gp_jw_arr_end(&w);
		fprintf(out, "{\"type\":\"sample\",\"t\":%d,\"pid\":9,\"procs\":[{\"pid\":10,\"threads\":%.*s}],"
			"\"threads\":%.*s}\n", k, (int)w.len, w.buf, (int)w.len, w.buf);
	}
	fclose(out);
	assert_int_equal(compare_lines(text, "tracer output"), 60);
	free(text);
	gp_jw_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_tracer_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
