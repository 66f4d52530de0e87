/* The processes gpuprobe starts (the command `trace -- CMD` runs, idle's
 * runtime child): their start, the signals and limits they inherit, and
 * the taking of their exit.  One place, so that every child sees the
 * caller's world, not gpuprobe's, and no wait takes what is not its own.
 *
 * What a child gets back before it execs (gp_child_restore): the
 * caller's RLIMIT_NOFILE (gpuprobe raises its own soft limit to the hard
 * one for its many kept /proc files: a command must not inherit 20000
 * where its caller had 1024), SIGPIPE's default action (gpuprobe ignores
 * SIGPIPE to turn a closed output into an error it reports; an ignored
 * signal stays ignored across execve), and the caller's signal mask. */
#ifndef GP_CHILD_H
#define GP_CHILD_H

#include <signal.h>
#include <stdbool.h>

/* At start-up, once: ignores SIGPIPE (a write to a closed pipe fails with
 * EPIPE and takes the output-error path) and raises the soft fd limit to
 * the hard one, remembering the caller's for gp_child_restore. */
void gp_process_setup(void);

/* In a child, before execve: the caller's fd limit, SIGPIPE's default
 * action, and the signal mask `mask` (NULL: leave the mask). */
void gp_child_restore(const sigset_t *mask);

/* Makes two O_CLOEXEC pipes, a and b, then forks a child that dies with
 * this process (PR_SET_PDEATHSIG SIGKILL; it exits 127 at once where this
 * process is gone already) and has the caller's limits and SIGPIPE back
 * (gp_child_restore, mask untouched).  Returns the child's pid here and 0
 * in the child; -1 with errno, nothing left open, when a pipe or fork
 * fails. */
int gp_fork_tied(int a[2], int b[2]);

/* A command started paused: it execs when released, so that gpuprobe
 * has its pid (and its first sample) before the command runs. */
struct gp_child {
	int pid;
	int go_fd;       /* write a byte: the child may exec */
	int err_fd;      /* EOF: exec succeeded; 4 bytes: its errno */
	bool reaped;     /* its exit was taken: status holds it */
	int status;
};

/* Forks cmd paused, with the signal mask orig_mask.  0, or -1 with errno. */
int gp_child_spawn_paused(char **cmd, const sigset_t *orig_mask, struct gp_child *c);

/* Lets the child exec; returns 0, or the child's exec errno. */
int gp_child_release(struct gp_child *c);

/* Takes the child's exit if it has exited, never anything else: looks
 * first (waitid WNOWAIT).  A ptrace stop of its leader that is seen instead
 * (gpuprobe was stacking it: a stop that came late) belongs to the stop's
 * owner: drain (gp_ptstop_drain) is called to take it, and the exit
 * looked for again.  Returns c->reaped. */
bool gp_child_reap(struct gp_child *c, int (*drain)(void));

/* Waits up to secs for the child's exit, draining late stops meanwhile.
 * SIGCHLD must be blocked.  Returns c->reaped. */
bool gp_child_wait(struct gp_child *c, double secs, int (*drain)(void));

#endif
