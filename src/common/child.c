#include "config.h"
#include "child.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rlimit caller_nofile;
static bool have_caller_nofile;

void gp_process_setup(void)
{
	signal(SIGPIPE, SIG_IGN);
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	caller_nofile = rl;
	have_caller_nofile = true;
	/* Many threads x a few kept files each: the hard limit of fds. */
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

void gp_child_restore(const sigset_t *mask)
{
	if (have_caller_nofile)
		setrlimit(RLIMIT_NOFILE, &caller_nofile);
	signal(SIGPIPE, SIG_DFL);
	if (mask)
		sigprocmask(SIG_SETMASK, mask, NULL);
}

static void close_pipe(int p[2])
{
	int e = errno;
	close(p[0]);
	close(p[1]);
	errno = e;
}

int gp_fork_tied(int a[2], int b[2])
{
	if (pipe2(a, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(b, O_CLOEXEC) < 0) {
		close_pipe(a);
		return -1;
	}
	int parent = getpid();
	int pid = fork();
	if (pid < 0) {
		close_pipe(a);
		close_pipe(b);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		gp_child_restore(NULL);
	}
	return pid;
}

int gp_child_spawn_paused(char **cmd, const sigset_t *orig_mask, struct gp_child *c)
{
	int go[2], err[2];
	/* The command must never outlive gpuprobe, even SIGKILLed. */
	int pid = gp_fork_tied(go, err);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		gp_child_restore(orig_mask);
		close(go[1]);
		close(err[0]);
		char b;
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* gpuprobe gave up before starting us */
		execvp(cmd[0], cmd);
		int e = errno;
		if (write(err[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	memset(c, 0, sizeof *c);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = err[0];
	return 0;
}

int gp_child_release(struct gp_child *c)
{
	char b = 1;
	int e = 0;
	if (write(c->go_fd, &b, 1) != 1)
		e = errno;
	close(c->go_fd);
	c->go_fd = -1;
	ssize_t n;
	int child_errno = 0;
	do
		n = read(c->err_fd, &child_errno, sizeof child_errno);
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof child_errno)
		return child_errno ? child_errno : ENOEXEC;
	return e;
}

bool gp_child_reap(struct gp_child *c, int (*drain)(void))
{
	if (c->reaped || c->pid <= 0)
		return c->reaped;
	/* A tracer's wait reports its tracee's ptrace stops whatever the
	 * flags (kernel/exit.c, wait_task_stopped): a plain waitpid took the
	 * late stop of a stacked leader for the command's end, and gpuprobe
	 * exited and killed it (issue 18).  Look, and take only an exit. */
	for (int tries = 0; tries < 3; tries++) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		if (si.si_pid != c->pid)
			return false; /* running */
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED ||
		    si.si_code == CLD_DUMPED) {
			int st, w;
			do
				w = waitpid(c->pid, &st, WNOHANG);
			while (w < 0 && errno == EINTR);
			if (w == c->pid) {
				c->reaped = true;
				c->status = st;
			}
			return c->reaped;
		}
		/* A stop: the stop's owner takes it, then look again. */
		if (!drain)
			return false;
		drain();
	}
	return false;
}

bool gp_child_wait(struct gp_child *c, double secs, int (*drain)(void))
{
	double end = gp_mono_now() + secs;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	while (!gp_child_reap(c, drain)) {
		/* Threads of the child that died while we held them are ours
		 * to take first: until then its leader cannot be reaped. */
		if (drain)
			drain();
		double left = end - gp_mono_now();
		if (left <= 0)
			return false;
		struct timespec ts = gp_ts_from_s(left > 0.1 ? 0.1 : left);
		sigtimedwait(&chld, NULL, &ts);
	}
	return true;
}
