/* A child process that never outlives gpuprobe (the command trace starts,
 * idle's runtime child). */
#ifndef GP_CHILD_H
#define GP_CHILD_H

/* Makes two O_CLOEXEC pipes, a and b, then forks a child that dies with
 * this process (PR_SET_PDEATHSIG SIGKILL; it exits 127 at once where this
 * process is gone already).  Returns the child's pid here and 0 in the
 * child; -1 with errno, nothing left open, when a pipe or fork fails. */
int gp_fork_tied(int a[2], int b[2]);

#endif
