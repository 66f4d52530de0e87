/* The stacks API across snapshots of one session, on a live target
 * (tests/workloads/stackload): a library dlopen'ed after the session
 * started is named in the next snapshot; no thread is ever left stopped;
 * at most one thread is stopped at a time.  And the pure helpers. */
#include "config.h"
#include "stacks.h"
#include "stacks_text.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
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

static void test_late_dlopen(void **state)
{
	(void)state;
	FILE *out;
	int pid = start_target(&out);
	assert_true(pid > 0);
	struct gp_stacks *s = gp_stacks_open(pid, 0);
	assert_non_null(s);

	json_t *l1 = NULL;
	assert_int_equal(gp_stacks_snapshot(s, 0.0, NULL, 0, &l1), 0);
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

	struct gp_stacks_totals tot;
	gp_stacks_totals(s, &tot);
	assert_int_equal(tot.snapshots, 2);
	assert_int_equal(tot.stopped, 4 + 5);
	assert_int_equal(tot.max_stopped_at_once, 1);
	assert_int_equal(tot.rebuilds, 0);

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_gone),
		cmocka_unit_test(test_late_dlopen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
