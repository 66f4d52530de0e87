/* Every process the traced tree starts, the ones that start and end
 * between two samples included, from the kernel's process connector
 * (drivers/connector/cn_proc.c: a netlink multicast of each fork, exec
 * and exit on the machine).  A sample sees only the processes alive at
 * its instant: a build that ran 294 processes showed "45 started" at
 * 1 Hz (issue 20).  Nothing in /proc counts a process's forks (stat's
 * cutime/cminflt sum the reaped children's time and faults, not their
 * number; /proc/PID/sched has no fork counter), so this is the cheap
 * exact source: one non-blocking read of a socket per sample, 76 bytes
 * an event.
 *
 * Who may listen: the kernel takes PROC_CN_MCAST_LISTEN only from a
 * task with CAP_NET_ADMIN in the initial user and pid namespaces
 * (cn_proc_mcast_ctl; from elsewhere it answers nothing, or EPERM), and
 * reports pids of the initial pid namespace.  gp_forks_open waits for
 * the kernel's answer (a PROC_EVENT_NONE whose ack carries the error)
 * and otherwise says why not, so that a count is never a silent zero. */
#ifndef GP_FORKS_H
#define GP_FORKS_H

#include <stdbool.h>
#include <stddef.h>

struct gp_forks;

/* Listening, with root's pid in the tree; NULL with a reason in why
 * (no CAP_NET_ADMIN, another pid namespace, no connector). */
struct gp_forks *gp_forks_open(int root, char *why, size_t cap);
void gp_forks_close(struct gp_forks *f);

/* pid is in the tree (the /proc walk found it): its children count. */
void gp_forks_track(struct gp_forks *f, int pid);

/* Reads every event queued so far: a fork whose parent is in the tree
 * puts the child in it (a process, not a thread) and counts it started;
 * an exit of a process of the tree counts it exited. */
void gp_forks_drain(struct gp_forks *f);

struct gp_forks_counts {
	unsigned long started, exited;  /* processes of the tree, since the open */
	unsigned long lost;             /* times events were dropped (ENOBUFS): a lower bound then */
};
void gp_forks_counts(const struct gp_forks *f, struct gp_forks_counts *c);

/* A process of the tree that ended, with its exit code as wait(2) gives
 * it (the connector's exit_code: status << 8, or the signal; kernel
 * exit.c do_exit -> proc_exit_connector) and its last name (from the
 * connector's comm events: an exec renames it). */
struct gp_death {
	int pid, ppid;
	int code;
	char comm[16];
};
/* The deaths read since the last call (at most cap; the oldest dropped
 * past 64 between calls, *lost says how many).  Returns how many. */
size_t gp_forks_deaths(struct gp_forks *f, struct gp_death *out, size_t cap, unsigned *lost);

#endif
