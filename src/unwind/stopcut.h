/* Whether a ptrace stop of a thread would change what its system call
 * returns: the one question asked before any thread is stopped.
 *
 * A stop (PTRACE_INTERRUPT) wakes the thread inside its call as a signal
 * would (kernel/ptrace.c ptrace_interrupt -> signal_wake_up).  A call that
 * has done nothing yet returns -ERESTARTSYS and the kernel restarts it
 * unchanged once we let go, since no handler ran (arch signal code,
 * handle_signal/restart_syscall paths).  But a call that has moved some
 * bytes returns that partial count instead: pipe_write() returns `ret` once
 * `ret` is non-zero and a signal is pending (fs/pipe.c), unix and TCP
 * sendmsg likewise (net/unix/af_unix.c unix_stream_sendmsg, "sent"), a
 * recv with MSG_WAITALL what it had, a tty read its partial input.  A
 * plain read of a pipe or socket waits only while nothing was copied, so
 * a stop restarts it unchanged (stopcut.c).  A writer that trusts POSIX (a blocking pipe write
 * is whole unless a caught signal interrupts it) then sees a short write it
 * never could have: issue 27 measured 65 536 of 1 048 576 bytes and exit 3.
 * And a few calls return EINTR to the program on any stop, with no handler
 * (signal(7), "Interruption of system calls ... by stop signals":
 * epoll_wait, semop, sigtimedwait, io_getevents).
 *
 * Those threads are never stopped: their Python frames are read from
 * memory, their native frames unwound from the sp/pc the kernel saved
 * (regstate.h), or not taken. */
#ifndef GP_STOPCUT_H
#define GP_STOPCUT_H

#include "procfs.h"
#include "procstat.h"

#include <stdbool.h>
#include <stddef.h>

/* True when stopping thread sc's owner (a thread of pid) inside sc would
 * change its result; why then says so in a few words ("a stop would cut
 * its write to a pipe", "a stop would make its epoll_wait return EINTR"). */
bool gp_stop_would_change(const struct gp_root *root, int pid, const struct gp_syscall *sc,
			  char *why, size_t cap);

#endif
