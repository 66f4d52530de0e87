/* tasks.c: the per-thread table.  Replays a captured tree, then edits a
 * copy of it to make a thread vanish between readdir and read, and a tid
 * reused; and samples this very process while its threads come and go. */
#include "config.h"
#include "unit.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tasks.h"

#define SPINNER_PID 12623

static const struct gp_thread *find(const struct gp_thread *th, size_t n, int tid)
{
	for (size_t i = 0; i < n; i++)
		if (th[i].tid == tid)
			return &th[i];
	return NULL;
}

static void test_replay(void **st)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, FIXTURES "/proc-spinner"), 0);
	struct gp_tasks *t = gp_tasks_new(&root, SPINNER_PID, GP_TASKS_KSTACK);
	assert_non_null(t);
	struct gp_thread *th;
	size_t n;
	struct gp_tasks_stats s;
	assert_int_equal(gp_tasks_sample(t, &th, &n, &s), 0);
	assert_int_equal(n, 3);
	assert_int_equal(s.vanished, 0);
	assert_int_equal(s.created, 3);
	const struct gp_thread *spin = find(th, n, 12625);
	assert_non_null(spin);
	assert_string_equal(spin->st.comm, "w2 (x) )");
	assert_int_equal(spin->st.state, 'R');
	assert_int_equal(spin->st.utime, 156);
	assert_true(spin->is_new);
	const struct gp_thread *w = find(th, n, 12626);
	assert_non_null(w);
	assert_string_equal(w->wchan, "futex_do_wait");
	assert_int_equal(w->sc.kind, GP_SC_IN);
	assert_int_equal(w->sc.nr, 202); /* futex */
	assert_non_null(w->kstack);

	/* Second sample of the same tree: nothing new, no deltas, and a
	 * thread blocked in the same place is not stack-read again. */
	assert_int_equal(gp_tasks_sample(t, &th, &n, &s), 0);
	assert_int_equal(s.created, 0);
	assert_int_equal(s.exited, 0);
	w = find(th, n, 12626);
	assert_false(w->is_new);
	assert_null(w->kstack);
	assert_int_equal(w->d_utime, 0);
	gp_tasks_free(t);
	gp_root_close(&root);
}

/* A scratch copy of the captured tree, for tests that edit it. */
static char scratch[256];

static int copy_tree(void **st)
{
	snprintf(scratch, sizeof scratch, "/tmp/gp-test-tasks.XXXXXX");
	if (!mkdtemp(scratch))
		return -1;
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cp -r '%s/proc-spinner/proc' '%s/'", FIXTURES, scratch);
	return system(cmd);
}

static int remove_tree(void **st)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
	return system(cmd);
}

static void write_file(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", scratch, rel);
	FILE *f = fopen(path, "r+"); /* in place: kept fds see the change */
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(ftruncate(fileno(f), (off_t)strlen(text)), 0);
	fclose(f);
}

/* The spinner's threads on the scratch tree. */
static struct gp_tasks *scratch_tasks(struct gp_root *root)
{
	assert_int_equal(gp_root_open(root, scratch), 0);
	struct gp_tasks *t = gp_tasks_new(root, SPINNER_PID, 0);
	assert_non_null(t);
	return t;
}

/* One sample of t: its threads and counts. */
struct sample {
	struct gp_thread *th;
	size_t n;
	struct gp_tasks_stats s;
};

static void sample(struct gp_tasks *t, struct sample *x)
{
	assert_int_equal(gp_tasks_sample(t, &x->th, &x->n, &x->s), 0);
}

static void test_vanish_between_readdir_and_read(void **st)
{
	/* The waiter is listed by readdir, but its files are gone. */
	char path[512];
	snprintf(path, sizeof path, "%s/proc/%d/task/12626/stat", scratch, SPINNER_PID);
	assert_int_equal(unlink(path), 0);
	struct gp_root root;
	struct gp_tasks *t = scratch_tasks(&root);
	struct sample x;
	sample(t, &x);
	assert_int_equal(x.n, 2);          /* the sample goes on without it */
	assert_int_equal(x.s.vanished, 1); /* and says so */
	assert_null(find(x.th, x.n, 12626));
	assert_non_null(find(x.th, x.n, 12625));
	gp_tasks_free(t);
	gp_root_close(&root);
}

static void test_tid_reuse(void **st)
{
	struct gp_root root;
	struct gp_tasks *t = scratch_tasks(&root);
	struct sample sm;
	sample(t, &sm);
	/* Same tid, later starttime: another thread. */
	char rel[128];
	snprintf(rel, sizeof rel, "proc/%d/task/12625/stat", SPINNER_PID);
	write_file(rel, "12625 (newcomer) S 12622 12612 1219 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 3 0 90000 "
			"19320832 281 18446744073709551615 1 1 0 0 0 0 0 6 0 0 0 0 -1 0\n");
	sample(t, &sm);
	assert_int_equal(sm.s.reused, 1);
	const struct gp_thread *x = find(sm.th, sm.n, 12625);
	assert_non_null(x);
	assert_true(x->is_new);
	assert_string_equal(x->st.comm, "newcomer");
	assert_int_equal(x->d_utime, 0); /* no delta across two threads */
	gp_tasks_free(t);
	gp_root_close(&root);
}

static void create_file(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", scratch, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	fclose(f);
}

/* A sleeper whose schedstat has not moved is carried over from the last
 * sample -- unless the run queues hold more tasks than there are CPUs:
 * then it may have been woken and be waiting for a CPU, and its stat is
 * read again. */
static void test_woken_sleeper(void **st)
{
	static const int tids[] = { SPINNER_PID, 12625, 12626 };
	char rel[128];
	snprintf(rel, sizeof rel, "proc/%d/schedstat", SPINNER_PID);
	create_file(rel, "1000 2000 3\n");
	for (size_t i = 0; i < sizeof tids / sizeof *tids; i++) {
		snprintf(rel, sizeof rel, "proc/%d/task/%d/schedstat", SPINNER_PID, tids[i]);
		create_file(rel, "1000 2000 3\n");
	}
	create_file("proc/loadavg", "0.00 0.00 0.00 1/300 1\n");
	struct gp_root root;
	struct gp_tasks *t = scratch_tasks(&root);
	struct sample x;
	sample(t, &x);
	assert_int_equal(find(x.th, x.n, 12626)->st.state, 'S');

	/* Woken, not yet run: state R, schedstat unchanged. */
	snprintf(rel, sizeof rel, "proc/%d/task/12626/stat", SPINNER_PID);
	write_file(rel, "12626 (waiter) R 12622 12612 1219 0 -1 4194368 1 0 0 0 0 0 0 0 20 0 3 0 79119 "
			"19320832 281 18446744073709551615 1 1 0 0 0 0 0 6 0 1 0 0 -1 0\n");
	/* Idle run queues: nobody waits for a CPU, the carry-over holds. */
	sample(t, &x);
	const struct gp_thread *w = find(x.th, x.n, 12626);
	assert_true(w->unchanged);
	assert_int_equal(w->st.state, 'S');
	/* Busy run queues: the waiter is read again and seen runnable. */
	write_file("proc/loadavg", "64.00 64.00 64.00 1000000/1000300 1\n");
	sample(t, &x);
	w = find(x.th, x.n, 12626);
	assert_false(w->unchanged);
	assert_int_equal(w->st.state, 'R');
	gp_tasks_free(t);
	gp_root_close(&root);
}

static void test_process_gone(void **st)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, FIXTURES "/proc-spinner"), 0);
	assert_null(gp_tasks_new(&root, 999999, 0));
	gp_root_close(&root);
}

/* Live: this process, with threads that come and go between samples. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int release;

static void *parked(void *arg)
{
	pthread_mutex_lock(&mu);
	while (!release)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return arg;
}

static void test_live_churn(void **st)
{
	struct gp_root root;
	assert_int_equal(gp_root_open(&root, "/"), 0);
	struct gp_tasks *t = gp_tasks_new(&root, getpid(), 0);
	assert_non_null(t);
	struct gp_thread *th;
	size_t n;
	struct gp_tasks_stats s;
	assert_int_equal(gp_tasks_sample(t, &th, &n, &s), 0);
	size_t base = n;
	pthread_t p[8];
	release = 0;
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_create(&p[i], NULL, parked, NULL), 0);
	assert_int_equal(gp_tasks_sample(t, &th, &n, &s), 0);
	assert_int_equal(n, base + 8);
	assert_int_equal(s.created, 8);
	pthread_mutex_lock(&mu);
	release = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 8; i++)
		pthread_join(p[i], NULL);
	assert_int_equal(gp_tasks_sample(t, &th, &n, &s), 0);
	assert_int_equal(n, base);
	assert_int_equal(s.exited, 8);
	assert_int_equal(s.vanished, 0);
	gp_tasks_free(t);
	gp_root_close(&root);
}

UNIT_MAIN(
	cmocka_unit_test(test_replay),
	cmocka_unit_test_setup_teardown(test_vanish_between_readdir_and_read, copy_tree, remove_tree),
	cmocka_unit_test_setup_teardown(test_tid_reuse, copy_tree, remove_tree),
	cmocka_unit_test_setup_teardown(test_woken_sleeper, copy_tree, remove_tree),
	cmocka_unit_test(test_process_gone),
	cmocka_unit_test(test_live_churn))
