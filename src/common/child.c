#include "config.h"
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

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
	}
	return pid;
}
