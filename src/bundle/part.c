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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: the world a command expects (default signal actions
 * and an empty mask: watch blocks SIGTERM/SIGCHLD for sigtimedwait), its
 * files, then the part. */
static void child(int parent, const char *out, int errfd, int (*fn)(void *), void *arg,
		  volatile double *ended)
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
	if (ended)
		*ended = gp_mono_now();
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

int gp_part_start(struct gp_part_job *j, const char *out, double deadline_s,
		  int (*fn)(void *), void *arg)
{
	memset(j, 0, sizeof *j);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL); /* nothing buffered is written twice */
	int parent = getpid();
	/* Where the child writes when it ended: parts are finished one
	 * after the other, so the time each took is its own only when it
	 * says so (issue 28: every part of a bundle read 10.1 s, the
	 * trace's).  MAP_FAILED: the finish time stands in. */
	j->ended = mmap(NULL, sizeof *j->ended, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (j->ended == MAP_FAILED)
		j->ended = NULL;
	else
		*j->ended = 0;
	j->t0 = gp_mono_now();
	j->deadline_s = deadline_s;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		if (j->ended)
			munmap((void *)j->ended, sizeof *j->ended);
		j->ended = NULL;
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child(parent, out, p[1], fn, arg, j->ended);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	j->pid = pid;
	j->errfd = p[0];
	return 0;
}

int gp_part_finish(struct gp_part_job *j, struct gp_part_res *res)
{
	struct gp_part_res *r = &j->res;
	if (!wait_until(j->pid, j->t0 + j->deadline_s, j->errfd, r, &j->len)) {
		r->timed_out = true;
		kill(j->pid, SIGTERM);
		if (!wait_until(j->pid, gp_mono_now() + 2, j->errfd, r, &j->len)) {
			r->killed = true;
			kill(j->pid, SIGKILL);
			wait_until(j->pid, gp_mono_now() + 2, j->errfd, r, &j->len);
		}
	}
	close(j->errfd);
	double end = j->ended && *j->ended > j->t0 ? *j->ended : gp_mono_now();
	r->secs = end - j->t0;
	if (j->ended)
		munmap((void *)j->ended, sizeof *j->ended);
	j->ended = NULL;
	*res = *r;
	if (r->timed_out || !r->reaped)
		return -1;
	return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

int gp_part_run(const char *out, double deadline_s, int (*fn)(void *), void *arg,
		struct gp_part_res *res)
{
	struct gp_part_job j;
	if (gp_part_start(&j, out, deadline_s, fn, arg) < 0) {
		memset(res, 0, sizeof *res);
		return -1;
	}
	return gp_part_finish(&j, res);
}
