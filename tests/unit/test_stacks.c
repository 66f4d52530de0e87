/* The stacks API across snapshots of one session, on a live target
 * (tests/workloads/stackload): a library dlopen'ed after the session
 * started is named in the next snapshot; every thread is stopped (its
 * stop time is in the line); no thread is ever left stopped; and, seen
 * from outside through /proc while a snapshot runs, never two threads
 * stopped at once.  And the pure helpers. */
#include "config.h"
#include "stacks.h"
#include "symbols.h"
#include "stacks_text.h"

#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int start_target(FILE **out)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	int pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(WORKLOADS "/stackload", "stackload", "3", "0", WORKLOADS "/libgplate.so", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out = fdopen(p[0], "r");
	char line[64];
	if (!fgets(line, sizeof line, *out) || strncmp(line, "ready", 5))
		return -1;
	return pid;
}

/* Does any frame of the line have this soname / symbol? */
static bool has_frame(json_t *line, const char *key, const char *want)
{
	size_t i, j;
	json_t *t, *f;
	json_array_foreach(json_object_get(line, "threads"), i, t)
		json_array_foreach(json_object_get(t, "frames"), j, f) {
			const char *v = json_string_value(json_object_get(f, key));
			if (v && !strcmp(v, want))
				return true;
		}
	return false;
}

static bool any_stopped(int pid)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "cat /proc/%d/task/*/stat | sed 's/.*) //' | cut -c1 | grep -q '[tT]'", pid);
	return system(cmd) == 0;
}

/* ---- a watcher outside the module: /proc/PID/task/TID/stat polled
 * while a snapshot runs.  Each observation of a stopped thread (state t
 * or T) carries the monotonic times before and after the read.  A
 * snapshot stops each thread once, so when thread A is seen stopped
 * before and again after thread B is seen stopped (times that do not
 * overlap), A was stopped all along: two threads stopped at once.  The
 * check can miss a violation; it cannot invent one. */
struct seen { int tid; double before, after; };
struct watch {
	int pid;
	volatile int stop;
	struct seen s[20000];
	size_t n;
	unsigned passes;
};

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *watch_run(void *arg)
{
	struct watch *w = arg;
	char path[64], buf[512];
	while (!w->stop) {
		snprintf(path, sizeof path, "/proc/%d/task", w->pid);
		DIR *d = opendir(path);
		if (!d)
			break;
		struct dirent *e;
		while ((e = readdir(d))) {
			int tid = atoi(e->d_name);
			if (tid <= 0)
				continue;
			snprintf(path, sizeof path, "/proc/%d/task/%d/stat", w->pid, tid);
			double b = mono();
			FILE *f = fopen(path, "r");
			size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
			if (f)
				fclose(f);
			double a = mono();
			buf[k] = '\0';
			char *r = strrchr(buf, ')');
			if (r && (r[2] == 't' || r[2] == 'T') && w->n < sizeof w->s / sizeof w->s[0])
				w->s[w->n++] = (struct seen){ tid, b, a };
		}
		closedir(d);
		w->passes++;
	}
	return NULL;
}

/* The pair of tids seen stopped at once, or 0. */
static int two_at_once(const struct watch *w, int *other)
{
	for (size_t j = 0; j < w->n; j++)
		for (size_t i = 0; i < w->n; i++) {
			if (w->s[i].tid == w->s[j].tid || w->s[i].after >= w->s[j].before)
				continue;
			for (size_t k = 0; k < w->n; k++)
				if (w->s[k].tid == w->s[i].tid && w->s[k].before > w->s[j].after) {
					*other = w->s[j].tid;
					return w->s[i].tid;
				}
		}
	return 0;
}

/* How many threads of the line say they were stopped (stop_us > 0). */
static size_t stopped_in_line(json_t *line)
{
	size_t i, n = 0;
	json_t *t;
	json_array_foreach(json_object_get(line, "threads"), i, t)
		if (json_integer_value(json_object_get(t, "stop_us")) > 0
		    || json_number_value(json_object_get(t, "stop_us")) > 0
		    /* unwound without a stop (a read of a pipe: stopcut.h) */
		    || (json_array_size(json_object_get(t, "frames"))
			&& !strcmp(json_string_value(json_object_get(t, "unwind")), "nostop"))
		    /* from its saved registers, asleep (taskregs.h) */
		    || (json_array_size(json_object_get(t, "frames"))
			&& json_object_get(t, "regs_from")))
			n++;
	return n;
}

static void test_late_dlopen(void **state)
{
	(void)state;
	FILE *out = NULL;
	int pid = start_target(&out);
	assert_true(pid > 0);
	struct gp_stacks *s = gp_stacks_open(pid, 0);
	assert_non_null(s);

	json_t *l1 = NULL;
	static struct watch w;
	w.pid = pid;
	pthread_t wt;
	assert_int_equal(pthread_create(&wt, NULL, watch_run, &w), 0);
	usleep(20000);
	assert_int_equal(gp_stacks_snapshot(s, 0.0, NULL, 0, &l1), 0);
	w.stop = 1;
	pthread_join(wt, NULL);
	int b = 0, a = two_at_once(&w, &b);
	print_message("watcher: %u passes over /proc, %zu stopped-thread sightings\n", w.passes, w.n);
	if (a)
		fail_msg("threads %d and %d were stopped at the same time", a, b);
	assert_true(w.passes > 0);
	assert_true(has_frame(l1, "symbol", "gpw::server::Queue::start_loop(long)"));
	assert_false(has_frame(l1, "soname", "libgplate.so"));
	assert_false(any_stopped(pid));

	/* The target dlopens libgplate.so and starts a thread in it. */
	kill(pid, SIGUSR1);
	char line[64];
	assert_non_null(fgets(line, sizeof line, out));
	assert_string_equal(line, "late\n");
	usleep(50000);

	json_t *l2 = NULL;
	assert_int_equal(gp_stacks_snapshot(s, 1.0, NULL, 0, &l2), 0);
	assert_true(has_frame(l2, "soname", "libgplate.so"));
	assert_true(has_frame(l2, "symbol", "gplate_wait"));
	assert_int_equal(json_array_size(json_object_get(l2, "threads")), 5);
	assert_false(any_stopped(pid));

	/* What the lines say, not the module's own counters: every thread
	 * of each snapshot was unwound (4 first, 5 with the late one),
	 * stopped one at a time or, in a read a stop would cut, not at all. */
	assert_int_equal(stopped_in_line(l1), 4);
	assert_int_equal(stopped_in_line(l2), 5);

	json_decref(l1);
	json_decref(l2);
	gp_stacks_close(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fclose(out);
}

static void test_gone(void **state)
{
	(void)state;
	int pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	errno = 0;
	assert_null(gp_stacks_open(pid, 0));
	assert_int_equal(errno, ESRCH);
}

static void test_demangle(void **state)
{
	(void)state;
	char *d = gp_demangle("_ZN3gpw6server5Queue10start_loopEl");
	assert_non_null(d);
	assert_string_equal(d, "gpw::server::Queue::start_loop(long)");
	free(d);
	assert_null(gp_demangle("start_thread"));
	assert_null(gp_demangle("_Znot a name"));
}

static void test_chain(void **state)
{
	(void)state;
	json_t *t = json_loads(
		"{\"wchan\":\"futex_wait_queue\",\"state\":\"S\",\"syscall\":\"futex(0x1, FUTEX_WAIT)\","
		"\"unwind\":\"ok\",\"frames\":["
		"{\"symbol\":\"__futex_abstimed_wait_common\",\"soname\":\"libc.so.6\"},"
		"{\"symbol\":\"___pthread_cond_timedwait64\",\"soname\":\"libc.so.6\"},"
		"{\"symbol\":\"llama::server::queue::start_loop(long)\",\"soname\":\"libllama.so\"},"
		"{\"symbol\":null,\"soname\":\"libllama.so\",\"offset\":\"0x1234\"},"
		"{\"symbol\":\"start_thread\",\"soname\":\"libc.so.6\"}]}", 0, NULL);
	assert_non_null(t);
	char buf[512];
	gp_stacks_chain(t, buf, sizeof buf);
	assert_string_equal(buf, "futex_wait_queue ← pthread_cond_timedwait64 ← "
			    "llama::server::queue::start_loop(long) ← libllama.so+0x1234");
	json_decref(t);
}

UNIT_MAIN(
	cmocka_unit_test(test_demangle),
	cmocka_unit_test(test_chain),
	cmocka_unit_test(test_gone),
	cmocka_unit_test(test_late_dlopen))
