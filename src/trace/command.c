/* trace -- COMMAND: the command's signals and its exit (see run.h). */
#include "config.h"
#include "run.h"
#include "error.h"
#include "ptstop.h"
#include "tree.h"

#include <signal.h>
#include <unistd.h>

/* The command's exit, taken only when it is one (child.h); a late
 * ptrace stop seen instead is let go by its owner (ptstop.h). */
bool trace_reap(struct run *r)
{
	return r->is_child && gp_child_reap(&r->child, gp_ptstop_drain);
}

bool trace_wait_child(struct run *r, double secs)
{
	return gp_child_wait(&r->child, secs, gp_ptstop_drain);
}

/* SIG to the command and its descendants too: a shell killed alone
 * leaves its children running, and gpuprobe lets nothing it started
 * outlive it.  Only processes seen in its tree this trace. */
static void kill_tree(const struct run *r, int sig)
{
	kill(r->pid, sig);
	int pid;
	for (size_t m = 0; r->smp.tree && gp_tree_member(r->smp.tree, m, &pid, NULL, NULL); m++)
		if (pid != r->pid)
			kill(pid, sig);
}

void trace_stop_child(struct run *r, int sig, bool forward)
{
	if (!r->is_child || trace_reap(r))
		return;
	if (forward)
		kill_tree(r, sig);
	if (!trace_wait_child(r, r->o->kill_after)) {
		gp_warn("pid %d did not exit %.1f s after signal %d: sending SIGKILL",
			r->pid, r->o->kill_after, sig);
		kill_tree(r, SIGKILL);
		trace_wait_child(r, 5);
	}
}
/* After SIGKILL (or an exec that failed: the child _exits), the child is
 * reaped within 5 s or left behind with a warning: a child stuck in the
 * kernel (D state) must not hang gpuprobe in a blocking waitpid. */
void trace_reap_killed(struct run *r)
{
	if (!trace_wait_child(r, 5))
		gp_warn("pid %d did not exit 5 s after SIGKILL: left behind", r->pid);
}

/* A command that will not be traced after all: killed before its exec. */
void trace_abandon(struct run *r)
{
	if (!r->is_child)
		return;
	kill(r->child.pid, SIGKILL);
	close(r->child.go_fd);
	close(r->child.err_fd);
	trace_reap_killed(r);
}
