/* Which system calls a stop would change: see stopcut.h. */
#include "config.h"
#include "stopcut.h"
#include "syscalls.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Calls that move bytes, and the arguments that hold their fds (-1: none
 * more).  A transfer on a regular file or a block device is not cut by a
 * signal (filemap reads and writes run to the end of the page cache copy);
 * one on a pipe, FIFO, socket or character device (a tty) is. */
/* A read blocks only while nothing was copied (pipe_read waits only with
 * ret == 0, fs/pipe.c; tcp_recvmsg and unix_stream_read_generic wait
 * only below their target, 1 byte unless MSG_WAITALL or SO_RCVLOWAT):
 * a stop then returns -ERESTARTSYS and the call restarts unchanged
 * (tests/faults/harm-transfer.sh counts every byte its pipe reader gets
 * under stops).  So reads are stopped as any call is -- but a recv with
 * MSG_WAITALL, which blocks with bytes copied, and a terminal's read
 * (non-canonical with VMIN > 1 does too).  flags: the argument that holds
 * a recv's flags, -1 none. */
#define MSG_WAITALL_FLAG 0x100

static const struct transfer {
	const char *name;
	signed char fd[2];
	const char *verb;
	signed char flags;
} transfers[] = {
	{ "read", { 0, -1 }, "read", -1 },        { "write", { 0, -1 }, "write", -1 },
	{ "readv", { 0, -1 }, "read", -1 },       { "writev", { 0, -1 }, "write", -1 },
	{ "pread64", { 0, -1 }, "read", -1 },     { "pwrite64", { 0, -1 }, "write", -1 },
	{ "preadv", { 0, -1 }, "read", -1 },      { "pwritev", { 0, -1 }, "write", -1 },
	{ "preadv2", { 0, -1 }, "read", -1 },     { "pwritev2", { 0, -1 }, "write", -1 },
	{ "recvfrom", { 0, -1 }, "receive", 3 },  { "sendto", { 0, -1 }, "send", -1 },
	{ "recvmsg", { 0, -1 }, "receive", 2 },   { "sendmsg", { 0, -1 }, "send", -1 },
	{ "recvmmsg", { 0, -1 }, "receive", 3 },  { "sendmmsg", { 0, -1 }, "send", -1 },
	{ "splice", { 0, 2 }, "splice", -1 },     { "tee", { 0, 1 }, "tee", -1 },
	{ "vmsplice", { 0, -1 }, "vmsplice", -1 }, { "sendfile", { 0, 1 }, "sendfile", -1 },
	{ "copy_file_range", { 0, 2 }, "copy", -1 },
};

/* Calls that return EINTR after any stop, handler or not (signal(7)). */
static const char *const eintr_on_stop[] = {
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "semop", "semtimedop",
	"rt_sigtimedwait", "io_getevents", "io_pgetevents",
};

/* What kind of file pid's fd is, in a word; NULL for one a signal does
 * not cut (a regular file, a block device, an eventfd...) or unreadable. */
static const char *cut_kind(const struct gp_root *root, int pid, long fd)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof p, "proc/%d/fd/%ld", pid, fd);
	/* Unreadable: another user's process, which ptrace cannot stop
	 * either (both need PTRACE_MODE_ATTACH, fs/proc/fd.c). */
	if (fd < 0 || fstatat(root->dirfd, p, &st, 0) != 0)
		return NULL;
	switch (st.st_mode & S_IFMT) {
	case S_IFIFO: return "pipe";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "terminal or device";
	default: return NULL;
	}
}

bool gp_stop_would_change(const struct gp_root *root, int pid, const struct gp_syscall *sc,
			  char *why, size_t cap)
{
	if (sc->kind != GP_SC_IN)
		return false;
	const char *name = gp_syscall_name(sc->nr);
	if (!name)
		return false;
	for (size_t i = 0; i < sizeof eintr_on_stop / sizeof *eintr_on_stop; i++)
		if (!strcmp(name, eintr_on_stop[i])) {
			snprintf(why, cap, "a stop would make its %s return EINTR", name);
			return true;
		}
	for (size_t i = 0; i < sizeof transfers / sizeof *transfers; i++) {
		const struct transfer *x = &transfers[i];
		if (strcmp(name, x->name))
			continue;
		bool reads = x->verb[0] == 'r';
		bool waitall = x->flags >= 0 && (sc->args[(int)x->flags] & MSG_WAITALL_FLAG);
		for (int k = 0; k < 2 && x->fd[k] >= 0; k++) {
			const char *kind = cut_kind(root, pid, (long)sc->args[(int)x->fd[k]]);
			if (kind && reads && !waitall && strcmp(kind, "terminal or device"))
				kind = NULL; /* nothing copied while it waits: restarts unchanged */
			if (kind) {
				snprintf(why, cap, "a stop would cut its %s %s a %s", x->verb,
					 x->verb[0] == 'r' ? "from" : "to", kind);
				return true;
			}
		}
		return false;
	}
	return false;
}
