/* The helper that unwinds a stuck runtime call from outside (unwind.h),
 * and the caller's side: spawn, let it trace us, a bounded wait. */
#include "config.h"
#include "unwind.h"
#include "commands.h"
#include "error.h"
#include "opts.h"
#include "parse.h"
#include "stacks_hint.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Bounded append: never past cap, *len clamped to it. */
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	if (*len >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	*len = n < 0 ? cap : *len + (size_t)n > cap ? cap : *len + (size_t)n;
}

static void say_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
	fflush(stdout);
}

/* One attempt: a stacks session of its own, used by a thread of its own.
 *
 * Why a thread each: a thread that does not take the stop within
 * GP_STACKS_STOP_TIMEOUT_MS ("timeout": in a long kernel call, which it
 * leaves only to take the stop, or not given a CPU) stays seized with the
 * interrupt armed (ptstop.h: pending).  A ptrace tracer is a thread, and
 * the kernel releases a thread's tracees when it exits (exit_ptrace, from
 * exit_notify), the armed interrupt with them: whatever an attempt left
 * pending is gone with its thread, the target is never left stopped, and
 * the next attempt seizes it afresh.  (A retry on one session used to
 * read `off` every time: "thread N has not stopped yet", N being the very
 * thread asked for; ptstop now waits for that stop instead.) */
struct attempt {
	struct gp_stacks *s;
	int tid;
	json_t *line;
	int err;
};

static void *attempt_run(void *arg)
{
	struct attempt *a = arg;
	a->err = gp_stacks_snapshot(a->s, 0, &a->tid, 1, &a->line) != 0 ? errno : 0;
	return NULL;
}

static const char *unwind_of(const json_t *line)
{
	json_t *t = json_array_get(json_object_get(line, "threads"), 0);
	return json_string_value(json_object_get(t, "unwind"));
}

/* The thread's state letter from /proc, '?' when unreadable. */
static char thread_state(int pid, int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Hidden: `gpuprobe __unwind PID TID`.  Waits for the caller's go (a byte
 * on stdin: it has named us its ptracer by then, for Yama ptrace_scope 1),
 * then snapshots TID, again while it is in D state or would not stop and
 * time remains (a thread in a driver call goes in and out of D; one in a
 * long kernel call takes a stop only on its way out), each attempt from a
 * thread of its own (struct attempt says why), and prints one JSON line:
 * the `stacks` line with "attempts" added, or {"error": reason}. */
int cmd_unwind(int argc, char **argv, const struct gp_global *gl)
{
	(void)gl;
	int pid, tid;
	if (argc != 3 || !gp_parse_pid(argv[1], &pid) || !gp_parse_pid(argv[2], &tid)) {
		gp_err("__unwind", "give PID TID");
		return GP_EXIT_USAGE;
	}
	/* Dies with the caller: a helper must never outlive it holding a
	 * thread (the kernel would let the thread go anyway). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != pid)
		return GP_EXIT_ERROR;
	int64_t end = gp_ns_add(gp_mono_ns(), GP_UNWIND_BUDGET_NS - GP_NS_S / 2);
	struct pollfd pf = { STDIN_FILENO, POLLIN, 0 };
	char go;
	if (poll(&pf, 1, 2000) != 1 || read(STDIN_FILENO, &go, 1) != 1) {
		say_json(json_pack("{s:s}", "error", "no go from gpuprobe"));
		return GP_EXIT_ERROR;
	}
	json_t *line = NULL;
	char hint[512] = "";
	int attempts = 0;
	for (;;) {
		struct attempt a = { .s = gp_stacks_open(pid, GP_STACKS_NO_PYTHON), .tid = tid };
		if (!a.s) {
			json_decref(line);
			say_json(json_pack("{s:s}", "error", strerror(errno)));
			return GP_EXIT_ERROR;
		}
		pthread_t th;
		if (pthread_create(&th, NULL, attempt_run, &a) == 0)
			pthread_join(th, NULL);
		else
			attempt_run(&a); /* no thread: one attempt, no retry */
		attempts++;
		const char *h = gp_stacks_hint(a.s);
		if (h)
			gp_strlcpy(hint, h, sizeof hint);
		gp_stacks_close(a.s); /* traces nothing now: the thread took its stops with it */
		if (a.err) {
			json_decref(line);
			say_json(json_pack("{s:s}", "error", strerror(a.err)));
			return GP_EXIT_ERROR;
		}
		json_decref(line);
		line = a.line;
		const char *u = unwind_of(line);
		bool d = u && !strcmp(u, "d-state"), late = u && !strcmp(u, "timeout");
		if ((!d && !late) || gp_mono_ns() + 200 * GP_NS_MS > end)
			break;
		/* In D: try again when it is out of it (or 100 ms on), never
		 * before.  Late: at once, while it may be running. */
		for (int i = 0; d && i < 100 && gp_mono_ns() + 200 * GP_NS_MS < end; i++) {
			struct timespec nap = { 0, 1000 * 1000 };
			nanosleep(&nap, NULL);
			if (thread_state(pid, tid) != 'D')
				break;
		}
	}
	if (hint[0])
		json_object_set_new(line, "hint", json_string(hint));
	json_object_set_new(line, "attempts", json_integer(attempts));
	say_json(line);
	return GP_EXIT_OK;
}

static void set_failed(json_t *stuck, const char *why, double ms)
{
	json_object_set_new(stuck, "unwind", json_string("helper-failed"));
	json_object_set_new(stuck, "unwind_error", json_string(why));
	json_object_set_new(stuck, "frames", json_null());
	json_object_set_new(stuck, "unwind_ms", json_real(ms));
}

/* Reaps the helper: it has answered or been killed, so a short wait. */
static void reap(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, NULL, WNOHANG) != 0)
			return;
		struct timespec nap = { 0, 10 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void gp_unwind_stuck(json_t *stuck, int tid, int64_t budget_ns)
{
	int64_t t0 = gp_mono_ns(), end = gp_ns_add(t0, budget_ns);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		set_failed(stuck, "cannot find gpuprobe's own binary (/proc/self/exe)", 0);
		return;
	}
	self[n] = 0;
	int go[2], res[2];
	if (pipe2(go, O_CLOEXEC) != 0) {
		set_failed(stuck, strerror(errno), 0);
		return;
	}
	if (pipe2(res, O_CLOEXEC) != 0) {
		set_failed(stuck, strerror(errno), 0);
		close(go[0]);
		close(go[1]);
		return;
	}
	char spid[24], stid[24];
	snprintf(spid, sizeof spid, "%d", (int)getpid());
	snprintf(stid, sizeof stid, "%d", tid);
	char *argv[] = { "gpuprobe", "__unwind", spid, stid, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, go[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, res[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int e = posix_spawn(&pid, self, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(go[0]);
	close(res[1]);
	if (e) {
		close(go[1]);
		close(res[0]);
		set_failed(stuck, strerror(e), 0);
		return;
	}
	/* Yama ptrace_scope 1 lets a process trace only its descendants,
	 * unless the tracee names its tracer: name the helper, for as long as
	 * it works (EINVAL: no Yama, nothing to do). */
	prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0);
	ssize_t w = write(go[1], "g", 1);
	close(go[1]);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	bool eof = false, too_big = false;
	while (w == 1 && !eof && !too_big) {
		int64_t left = end - gp_mono_ns();
		if (left <= 0)
			break;
		struct pollfd pf = { res[0], POLLIN, 0 };
		int r = poll(&pf, 1, (int)(left / GP_NS_MS) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (len + 4096 > cap) {
			if (cap >= (8u << 20)) {
				too_big = true;
				break;
			}
			char *nb = realloc(buf, cap ? cap * 2 : 65536);
			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		ssize_t k = read(res[0], buf + len, cap - len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			eof = true;
		else
			len += (size_t)k;
	}
	close(res[0]);
	if (!eof)
		kill(pid, SIGKILL); /* the kernel lets go of the thread it holds */
	reap(pid);
	prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);
	double ms = (double)(gp_mono_ns() - t0) / 1e6;
	if (!eof) {
		char why[160];
		snprintf(why, sizeof why, w != 1 ? "the unwind helper did not start"
			 : too_big ? "the unwind helper's answer was too long"
			 : "the unwind took longer than %.0f s: given up", (double)budget_ns / 1e9);
		set_failed(stuck, why, ms);
		free(buf);
		return;
	}
	json_error_t je;
	json_t *line = buf ? json_loadb(buf, len, 0, &je) : NULL;
	free(buf);
	const char *err = json_string_value(json_object_get(line, "error"));
	json_t *t = json_array_get(json_object_get(line, "threads"), 0);
	if (!json_is_object(t)) {
		set_failed(stuck, err ? err : "the unwind helper gave no answer", ms);
		json_decref(line);
		return;
	}
	json_t *u = json_object_get(t, "unwind");
	json_object_set_new(stuck, "pid", json_integer(getpid())); /* the process that waits */
	json_object_set_new(stuck, "unwind", json_is_string(u) ? json_incref(u) : json_string("failed"));
	json_t *ue = json_object_get(t, "unwind_error");
	if (json_is_string(ue))
		json_object_set(stuck, "unwind_error", ue);
	else if (json_is_string(json_object_get(line, "hint")) && !(json_is_string(u) && !strcmp(json_string_value(u), "ok")))
		json_object_set(stuck, "unwind_error", json_object_get(line, "hint"));
	json_t *fr = json_object_get(t, "frames");
	json_object_set(stuck, "frames", json_is_array(fr) ? fr : json_null());
	json_object_set_new(stuck, "unwind_ms", json_real(ms));
	json_t *at = json_object_get(line, "attempts");
	if (json_is_integer(at))
		json_object_set(stuck, "unwind_attempts", at);
	json_decref(line);
}

static bool is_libc(const json_t *f)
{
	const char *m = json_string_value(json_object_get(f, "soname"));
	if (!m)
		m = json_string_value(json_object_get(f, "module"));
	return m && (strstr(m, "libc.so") || strstr(m, "libpthread") || strstr(m, "ld-linux"));
}

void gp_unwind_chain(const json_t *stuck, unsigned max, char *buf, size_t cap)
{
	size_t len = 0;
	if (cap)
		buf[0] = 0;
	const json_t *fr = json_object_get(stuck, "frames");
	size_t n = json_array_size(fr), shown = 0;
	for (size_t i = 0; i < n && shown < max; i++) {
		const json_t *f = json_array_get(fr, i);
		/* One libc frame (the system call's wrapper) is enough. */
		if (i + 1 < n && is_libc(f) && is_libc(json_array_get(fr, i + 1)))
			continue;
		const char *sym = json_string_value(json_object_get(f, "symbol"));
		const char *mod = json_string_value(json_object_get(f, "soname"));
		const char *path = json_string_value(json_object_get(f, "module"));
		const char *off = json_string_value(json_object_get(f, "offset"));
		if (!mod && path)
			mod = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		if (shown++)
			add(buf, cap, &len, " ← ");
		if (sym)
			add(buf, cap, &len, "%s", sym);
		else
			add(buf, cap, &len, "%s+%s", mod ? mod : "?", off ? off : "?");
	}
}
