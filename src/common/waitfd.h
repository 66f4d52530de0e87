/* Waiting on one file descriptor without holding anything else up: the
 * wait for a socket that may never answer (NCCL's RAS service, the
 * process connector) runs the SIGCHLD hook whenever SIGCHLD comes, so
 * that a thread of the target whose ptrace stop came late is let go
 * within milliseconds, whatever step gpuprobe is in (issue 27: 2.94 s
 * stopped behind a RAS read of a port that never answered).
 *
 * The hook is set once by whoever owns ptrace stops (src/unwind/ptstop.c
 * sets gp_ptstop_drain at its first stop); without one these are plain
 * waits.  Not thread-safe: called from gpuprobe's main thread. */
#ifndef GP_WAITFD_H
#define GP_WAITFD_H

/* The hook: non-blocking, returns how many things it still waits for. */
void gp_wait_set_chld_hook(int (*hook)(void));

/* Runs the hook now, when there is one. */
void gp_wait_chld_hook(void);

/* Waits until fd has one of events (POLLIN, POLLOUT...) or deadline
 * (gp_mono_now() seconds) passes, running the hook on every SIGCHLD and
 * at least every GP_WAIT_HOOK_MS.  SIGCHLD is blocked meanwhile and, when
 * one was taken, raised again at the end for the caller's own wait.
 * Returns the revents (> 0), 0 at the deadline, -1 on a poll error. */
#define GP_WAIT_HOOK_MS 50
int gp_wait_fd(int fd, short events, double deadline);

#endif
