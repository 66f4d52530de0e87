/* LD_PRELOAD shim for gpuprobe: SIGKILL the target while one of its
 * threads is ptrace-stopped, deterministically.
 *
 * With GP_FAULT_KILL_PID=P, the first PTRACE_DETACH of a thread other
 * than P's leader (a stopped leader dies as a zombie with Threads: 1,
 * which looks dead as it should) sends
 * SIGKILL to process P first and gives the kernel 20 ms to wake the
 * stopped thread.  The detach then fails (ESRCH: the thread is no longer
 * in a ptrace stop) and the dying thread stays traced by gpuprobe: a dead
 * process whose zombie leader shows Threads: 2 until gpuprobe takes the
 * thread's exit.  A gpuprobe that forgot to do so traced a dead target
 * until its time limit (odd-targets.sh, CI, 2026-12-02).
 * GP_FAULT_KILL_MARK=FILE: created when the kill is sent, so that a test
 * knows the fault really happened. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static int fired;

long ptrace(enum __ptrace_request req, ...)
{
	static long (*real)(enum __ptrace_request, pid_t, void *, void *);
	va_list ap;
	va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (long (*)(enum __ptrace_request, pid_t, void *, void *))dlsym(RTLD_NEXT, "ptrace");
	const char *victim = getenv("GP_FAULT_KILL_PID");
	if (req == PTRACE_DETACH && victim && !fired && pid != (pid_t)atoi(victim)) {
		fired = 1;
		kill((pid_t)atoi(victim), SIGKILL);
		const char *mark = getenv("GP_FAULT_KILL_MARK");
		if (mark) {
			int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
		}
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return real(req, pid, addr, data);
}
