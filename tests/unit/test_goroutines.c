/* Go's goroutines (issue 32): what the reader makes of the frames and
 * groups it read (src/unwind/goroutines.c), what the model keeps of a
 * stacks line's "goroutines" -- a result file is input like any other --
 * (src/model/stuck.c), and that the verdict judges a Go program by its
 * goroutines, never by the runtime's threads (src/verdict/waitjudge.c),
 * saying so in words (src/render/verdict_text.c).  The reader itself
 * against a live Go program: tests/e2e/go-goroutines.sh. */
#include "config.h"
#include "unit.h"
#include "goroutines.h"
#include "stuck.h"
#include "verdict.h"
#include "verdict_text.h"
#include "stacks_text.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void test_system_goroutines(void **st)
{
	(void)st;
	assert_true(gp_go_is_system("runtime.bgsweep"));
	assert_true(gp_go_is_system("runtime.forcegchelper"));
	assert_false(gp_go_is_system("runtime.main"));
	assert_false(gp_go_is_system("main.main.func2"));
	assert_false(gp_go_is_system("net/http.(*Server).Serve.func3"));
	assert_false(gp_go_is_system("runtimex.foo"));
}

static void test_where_it_waits(void **st)
{
	(void)st;
	/* a handler on the server's mutex, go1.19: all "semacquire" */
	const char *handler[] = { "runtime.gopark", "runtime.goparkunlock", "runtime.semacquire1",
		"sync.runtime_SemacquireMutex", "sync.(*Mutex).lockSlow", "sync.(*Mutex).Lock",
		"main.main.func1", "net/http.HandlerFunc.ServeHTTP", "net/http.(*conn).serve" };
	assert_string_equal(gp_go_pick_at(handler, 9), "main.main.func1");
	assert_string_equal(gp_go_sync_wait(handler, 9), "sync.Mutex.Lock");
	/* a connection's reader: no code of the program's own */
	const char *reader[] = { "runtime.gopark", "runtime.netpollblock",
		"internal/poll.runtime_pollWait", "internal/poll.(*pollDesc).wait",
		"internal/poll.(*FD).Read", "net.(*netFD).Read", "net.(*conn).Read" };
	assert_string_equal(gp_go_pick_at(reader, 7), "net.(*netFD).Read");
	assert_null(gp_go_sync_wait(reader, 7));
	/* a module's package is the program's own */
	const char *mod[] = { "runtime.gopark", "sync.(*WaitGroup).Wait", "github.com/x/y.(*Pool).Run" };
	assert_string_equal(gp_go_pick_at(mod, 3), "github.com/x/y.(*Pool).Run");
	assert_string_equal(gp_go_sync_wait(mod, 3), "sync.WaitGroup.Wait");
	const char *rt[] = { "runtime.gopark", "runtime.bgsweep" };
	assert_null(gp_go_pick_at(rt, 2));
	assert_null(gp_go_pick_at(NULL, 0));
}

static void set(struct gp_goraw *g, const char *start, const char *at, const char *wait)
{
	memset(g, 0, sizeof *g);
	snprintf(g->start, sizeof g->start, "%s", start);
	snprintf(g->at, sizeof g->at, "%s", at);
	snprintf(g->wait, sizeof g->wait, "%s", wait);
}

static void test_groups(void **st)
{
	(void)st;
	struct gp_goraw g[16];
	for (int i = 0; i < 12; i++)
		set(&g[i], "net/http.(*conn).serve", "main.main.func1", "sync.Mutex.Lock");
	set(&g[12], "main.main.func2", "main.reloadModel", "chan receive");
	set(&g[13], "runtime.main", "main.main", "IO wait");
	set(&g[14], "main.worker", "", "chan receive");
	set(&g[15], "main.worker", "", "chan receive");
	size_t more = 99;
	struct gp_gogroup out[12];
	json_t *a = gp_gogroups_json(out, gp_go_groups(g, 16, 2, out, &more));
	assert_int_equal(json_array_size(a), 2);
	json_t *first = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(first, "wait")), "sync.Mutex.Lock");
	assert_int_equal(json_integer_value(json_object_get(first, "n")), 12);
	assert_string_equal(json_string_value(json_object_get(first, "at")), "main.main.func1");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 1), "n")), 2);
	assert_null(json_object_get(json_array_get(a, 1), "at")); /* none found: no key */
	assert_int_equal(more, 2); /* reloadModel and main, beyond the two kept */
	json_decref(a);
	/* nothing at all */
	a = gp_gogroups_json(out, gp_go_groups(NULL, 0, 12, out, &more));
	assert_int_equal(json_array_size(a), 0);
	assert_int_equal(more, 0);
	json_decref(a);
}

/* A target with goroutines of 1000 distinct start functions: the
 * grouping is bounded (256 told apart), the rest counted, none lost. */
static void test_groups_bounded(void **st)
{
	(void)st;
	static struct gp_goraw g[1000];
	for (int i = 0; i < 1000; i++) {
		char fn[32];
		snprintf(fn, sizeof fn, "main.f%d", i);
		set(&g[i], fn, "", "sleep");
	}
	size_t more = 0;
	struct gp_gogroup out[12];
	json_t *a = gp_gogroups_json(out, gp_go_groups(g, 1000, 12, out, &more));
	assert_int_equal(json_array_size(a), 12);
	assert_int_equal(more, 1000 - 12);
	json_decref(a);
}

static json_t *go_line(int pid, json_t *goroutines)
{
	json_t *threads = json_array();
	json_array_append_new(threads, json_pack("{s:i, s:s, s:s, s:[{s:s}]}", "tid", pid, "comm",
		"goserver", "state", "S", "frames", "symbol", "runtime.futex.abi0"));
	json_array_append_new(threads, json_pack("{s:i, s:s, s:s, s:[{s:s}]}", "tid", pid + 1, "comm",
		"goserver", "state", "S", "frames", "symbol", "runtime.epollwait.abi0"));
	return json_pack("{s:s, s:f, s:s, s:i, s:o, s:o}", "type", "stacks", "t", 20.0, "why", "hang",
			 "pid", pid, "threads", threads, "goroutines", goroutines);
}

static json_t *group(const char *start, const char *at, const char *wait, json_int_t n)
{
	return json_pack("{s:s, s:s, s:s, s:I}", "start", start, "at", at, "wait", wait, "n", n);
}

static json_t *hung_goroutines(void)
{
	return json_pack("{s:s, s:i, s:i, s:[o, o, o]}", "go", "go1.19.8", "n", 14, "system", 4,
		"groups", group("net/http.(*conn).serve", "main.main.func1", "sync.Mutex.Lock", 12),
		group("main.main.func2", "main.reloadModel", "chan receive", 1),
		group("runtime.main", "main.main", "IO wait", 1));
}

static void test_stuck_keeps_goroutines(void **st)
{
	(void)st;
	struct gp_stuck s;
	gp_stuck_init(&s);
	json_t *line = go_line(700, hung_goroutines());
	gp_stuck_add(&s, line);
	json_decref(line);
	assert_int_equal(s.ngo, 1);
	assert_int_equal(s.go[0].pid, 700);
	assert_string_equal(s.go[0].version, "go1.19.8");
	assert_int_equal(s.go[0].n, 14);
	assert_int_equal(s.go[0].ng, 3);
	assert_int_equal(s.go[0].g[0].where, GP_GO_LOCK);
	assert_int_equal(s.go[0].g[1].where, GP_GO_CHAN);
	assert_int_equal(s.go[0].g[2].where, GP_GO_OUTSIDE);
	assert_int_equal(gp_go_where_of("semacquire"), GP_GO_LOCK);
	assert_int_equal(gp_go_where_of("select"), GP_GO_OUTSIDE);
	assert_int_equal(gp_go_where_of("running"), GP_GO_RUN);
	assert_int_equal(gp_go_where_of("chan receive (durable)"), GP_GO_CHAN);
}

/* A stranger's file: wrong types, negative and huge counts, long
 * strings, too many groups -- bounded, clamped, left out. */
static void test_stuck_hostile_goroutines(void **st)
{
	(void)st;
	char longname[400];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	json_t *groups = json_array();
	for (int i = 0; i < 20; i++)
		json_array_append_new(groups, group(longname, longname, longname, 1000));
	json_array_append_new(groups, json_pack("{s:i, s:s}", "start", 5, "wait", "x"));
	json_array_append_new(groups, json_string("not an object"));
	json_t *gj = json_pack("{s:s, s:I, s:I, s:o}", "go", longname, "n", (json_int_t)-5,
			       "system", (json_int_t)1 << 40, "groups", groups);
	struct gp_stuck s;
	gp_stuck_init(&s);
	for (int i = 0; i < 9; i++) { /* more Go processes than kept */
		json_t *line = go_line(800 + 10 * i, json_incref(gj));
		gp_stuck_add(&s, line);
		json_decref(line);
	}
	json_decref(gj);
	assert_int_equal(s.ngo, GP_STUCK_GO_PROCS);
	assert_int_equal(s.go[0].n, 0);
	assert_int_equal(s.go[0].system, UINT32_MAX);
	assert_int_equal(s.go[0].ng, GP_STUCK_GO_GROUPS);
	assert_int_equal(s.go[0].more, (20 - GP_STUCK_GO_GROUPS) * 1000);
	assert_int_equal(strlen(s.go[0].g[0].start), sizeof s.go[0].g[0].start - 1);
	assert_int_equal(strlen(s.go[0].version), sizeof s.go[0].version - 1);
	json_t *line = go_line(900, json_string("not an object"));
	gp_stuck_init(&s);
	gp_stuck_add(&s, line);
	json_decref(line);
	assert_int_equal(s.ngo, 0);
}

#define N 30

/* A flat trace whose OS threads wait as a Go runtime's do at rest: the
 * main thread and idle Ms on futexes (locks, no timeout), the netpoller
 * in epoll (input). */
static void go_trace(struct gp_point *p)
{
	memset(p, 0, N * sizeof *p);
	for (int i = 0; i < N; i++) {
		p[i].t = i;
		p[i].state = 'S';
		p[i].threads = 5;
		p[i].procs = 1;
		p[i].rss_file = 8u << 20;
		p[i].rss_anon = 2u << 20;
		p[i].have = GP_PT_IO | GP_PT_WCHAN | GP_PT_SYSCALL;
		p[i].top_sc_nr = p[i].common_sc_nr = -2;
		p[i].wait_n[GP_WAIT_LOCK] = 3;
		p[i].wait_n[GP_WAIT_INPUT] = 1;
		p[i].main_lock_pid = 700;
	}
}

static const char *judge(json_t *goroutines, struct gp_verdict *v)
{
	static struct gp_stuck s;
	static struct strbuf sb = STRBUF_INIT;
	struct gp_point p[N];
	go_trace(p);
	gp_stuck_init(&s);
	json_t *line = go_line(700, goroutines);
	gp_stuck_add(&s, line);
	json_decref(line);
	struct gp_verdict_opts o = { .hang_after = 3, .page_size = 4096, .stuck = &s };
	gp_verdict_compute(p, N, &o, v);
	strbuf_reset(&sb);
	gp_verdict_summary(&sb, v);
	return sb.buf;
}

static void test_verdict_hung_goroutines(void **st)
{
	(void)st;
	struct gp_verdict v;
	const char *w = judge(hung_goroutines(), &v);
	assert_string_equal(gp_class_name(v.cls), "hang-blocked");
	assert_non_null(strstr(w, "goroutines of pid 700 (go1.19.8)"));
	assert_non_null(strstr(w, "12 in net/http.(*conn).serve wait on sync.Mutex.Lock at main.main.func1"));
	assert_non_null(strstr(w, "1 in main.main.func2 waits on chan receive at main.reloadModel"));
	assert_non_null(strstr(w, "do not decide"));
	/* the runtime's main thread on a futex is not "the program's flow" */
	assert_null(strstr(w, "the program's own flow"));
}

static void test_verdict_resting_goroutines(void **st)
{
	(void)st;
	struct gp_verdict v;
	json_t *gj = json_pack("{s:s, s:i, s:[o, o]}", "go", "go1.19.8", "n", 3, "groups",
			       group("runtime.main", "main.main", "IO wait", 1),
			       group("main.worker", "main.worker", "chan receive", 2));
	const char *w = judge(gj, &v);
	assert_string_equal(gp_class_name(v.cls), "idle");
	assert_non_null(strstr(w, "1 in runtime.main waits for input (IO wait) at main.main"));
	/* goroutines that only wait on each other: nobody outside wakes them */
	gj = json_pack("{s:s, s:i, s:[o]}", "go", "go1.19.8", "n", 2, "groups",
		       group("main.main", "main.main", "chan receive", 2));
	w = judge(gj, &v);
	assert_string_equal(gp_class_name(v.cls), "hang-blocked");
	assert_non_null(strstr(w, "every goroutine waits on another one"));
}

static void test_verdict_goroutines_out_of_sight(void **st)
{
	(void)st;
	struct gp_verdict v;
	json_t *gj = json_pack("{s:s, s:s}", "module", "/srv/goserver", "error",
			       "no DWARF: stripped, or linked with -ldflags=-w");
	const char *w = judge(gj, &v);
	assert_non_null(strstr(w, "the program's goroutines are out of sight (no DWARF"));
	assert_int_equal(v.confidence, GP_CONF_LOW);
	/* its main thread on a futex decides nothing: the runtime's */
	assert_null(strstr(w, "the program's own flow"));
}

static char *render(json_t *line, enum gp_stacks_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	struct gp_stacks_render_opts o = { .format = fmt };
	gp_render_stacks(m, line, &o);
	fclose(m);
	return buf;
}

/* `gpuprobe stacks` and `report` show the groups under the threads; a
 * stranger's line (wrong types, a control character) prints as text. */
static void test_stacks_text(void **st)
{
	(void)st;
	json_t *line = go_line(700, hung_goroutines());
	char *t = render(line, GP_STACKS_TEXT);
	assert_non_null(strstr(t, "goroutines (go1.19.8): 14 of the program's, 4 of the runtime's own"));
	assert_non_null(strstr(t, "  12  [sync.Mutex.Lock] net/http.(*conn).serve at main.main.func1"));
	free(t);
	t = render(line, GP_STACKS_MARKDOWN);
	assert_non_null(strstr(t, "| 1 | chan receive | `main.main.func2` | `main.reloadModel` |"));
	free(t);
	json_decref(line);
	json_t *bad = json_pack("{s:s, s:s, s:[o, s]}", "go", "go\x1b[2J", "n", "many", "groups",
				json_pack("{s:i, s:s}", "start", 3, "wait", "x\ny"), "junk");
	line = go_line(701, bad);
	t = render(line, GP_STACKS_TEXT);
	assert_null(strchr(t, '\x1b'));
	assert_non_null(strstr(t, "0 of the program's"));
	assert_non_null(strstr(t, "[?] ?"));
	assert_null(strstr(t, "[x\ny]")); /* a name's newline starts no line of its own */
	free(t);
	json_decref(line);
	line = go_line(702, json_pack("{s:s, s:s}", "module", "/x", "error", "no DWARF: stripped"));
	t = render(line, GP_STACKS_TEXT);
	assert_non_null(strstr(t, "goroutines: out of sight (no DWARF: stripped)"));
	free(t);
	json_decref(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system_goroutines),
		cmocka_unit_test(test_where_it_waits),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_groups_bounded),
		cmocka_unit_test(test_stuck_keeps_goroutines),
		cmocka_unit_test(test_stuck_hostile_goroutines),
		cmocka_unit_test(test_verdict_hung_goroutines),
		cmocka_unit_test(test_verdict_resting_goroutines),
		cmocka_unit_test(test_verdict_goroutines_out_of_sight),
		cmocka_unit_test(test_stacks_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
