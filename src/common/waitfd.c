/* SIGCHLD-driven waits on one descriptor: see waitfd.h.
 *
 * Facts relied on: a ptrace stop sends SIGCHLD to the tracer
 * (kernel/signal.c do_notify_parent_cldstop); signalfd(2) reads a
 * signal only while it is blocked, and takes it off both the thread's and
 * the process's pending sets; SIGCHLD is not queued, so one taken stands
 * for any number and must be given back for the caller's own wait (the
 * exit of its command). */
#include "config.h"
#include "waitfd.h"
#include "timeutil.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/signalfd.h>
#include <unistd.h>

static int (*chld_hook)(void);
static int sfd = -1;          /* signalfd of SIGCHLD; -2: none to be had */

void gp_wait_set_chld_hook(int (*hook)(void))
{
	chld_hook = hook;
}

void gp_wait_chld_hook(void)
{
	if (chld_hook)
		chld_hook();
}

static int chld_fd(void)
{
	if (sfd == -1) {
		sigset_t chld;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
		if (sfd < 0)
			sfd = -2;
	}
	return sfd;
}

/* Takes every SIGCHLD pending; true when there was one. */
static bool take_chld(int fd)
{
	struct signalfd_siginfo si;
	bool took = false;
	while (read(fd, &si, sizeof si) == (ssize_t)sizeof si)
		took = true;
	return took;
}

/* One poll of fd (and of SIGCHLD's signalfd when sf >= 0) for at most ms:
 * fd's revents, 0 when only SIGCHLD or time came, -1 on an error. */
static int poll_once(int fd, short events, int sf, int ms, bool *took)
{
	struct pollfd p[2] = { { .fd = fd, .events = events }, { .fd = sf, .events = POLLIN } };
	int n = poll(p, sf >= 0 ? 2 : 1, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	if (sf >= 0 && (p[1].revents & POLLIN) && take_chld(sf))
		*took = true;
	return p[0].revents;
}

int gp_wait_fd(int fd, short events, double deadline)
{
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int sf = chld_hook ? chld_fd() : -2;
	if (sf >= 0)
		pthread_sigmask(SIG_BLOCK, &chld, &old);
	bool took = false;
	int r = 0;
	for (;;) {
		gp_wait_chld_hook();
		double left = deadline - gp_mono_now();
		if (left <= 0)
			break;
		int ms = (int)(left * 1000) + 1;
		if (chld_hook && ms > GP_WAIT_HOOK_MS)
			ms = GP_WAIT_HOOK_MS;
		r = poll_once(fd, events, sf, ms, &took);
		if (r != 0)
			break;
	}
	if (sf >= 0) {
		if (took)
			raise(SIGCHLD); /* pending again, for the caller's wait */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return r;
}
