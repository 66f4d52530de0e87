/* A bundle's part in a child with a deadline: see part.h. */
#include "config.h"
#include "part.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: the world a command expects (default signal actions
 * and an empty mask: watch blocks SIGTERM/SIGCHLD for sigtimedwait), its
 * files, then the part. */
static void child(int parent, const char *out, int errfd, int (*fn)(void *), void *arg)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGCHLD };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int o = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)
		    : open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (in < 0 || o < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(errfd, 2) < 0) {
		dprintf(errfd, "gpuprobe: %s: %s\n", out ? out : "/dev/null", strerror(errno));
		_exit(1);
	}
	int rc = fn(arg);
	fflush(stdout);
	fflush(stderr);
	_exit(rc & 0xff);
}

/* Drains the child's stderr into res->err (the rest is read and
 * dropped, so the child never blocks on a full pipe). */
static void drain(int fd, struct gp_part_res *res, size_t *len)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		size_t room = sizeof res->err - 1 - *len;
		size_t k = (size_t)n < room ? (size_t)n : room;
		memcpy(res->err + *len, buf, k);
		*len += k;
		res->err[*len] = '\0';
	}
}

/* Polls for the child's exit until deadline (monotonic seconds). */
static bool wait_until(int pid, double deadline, int fd, struct gp_part_res *res, size_t *len)
{
	for (;;) {
		drain(fd, res, len);
		pid_t w = waitpid(pid, &res->status, WNOHANG);
		if (w == pid || (w < 0 && errno == ECHILD)) {
			res->reaped = w == pid;
			drain(fd, res, len);
			return true;
		}
		if (gp_mono_now() >= deadline)
			return false;
		usleep(10000);
	}
}

int gp_part_run(const char *out, double deadline_s, int (*fn)(void *), void *arg,
		struct gp_part_res *res)
{
	memset(res, 0, sizeof *res);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL); /* nothing buffered is written twice */
	int parent = getpid();
	double t0 = gp_mono_now();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(parent, out, p[1], fn, arg);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	size_t len = 0;
	if (!wait_until(pid, t0 + deadline_s, p[0], res, &len)) {
		res->timed_out = true;
		kill(pid, SIGTERM);
		if (!wait_until(pid, gp_mono_now() + 2, p[0], res, &len)) {
			res->killed = true;
			kill(pid, SIGKILL);
			wait_until(pid, gp_mono_now() + 2, p[0], res, &len);
		}
	}
	close(p[0]);
	res->secs = gp_mono_now() - t0;
	if (res->timed_out || !res->reaped)
		return -1;
	return WIFEXITED(res->status) ? WEXITSTATUS(res->status) : -1;
}
