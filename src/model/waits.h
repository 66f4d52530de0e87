/* What a sleeping thread waits for: a recorded fact of each thread in a
 * sample (`wait`, doc/result-format.md), classified live by the tracer
 * (tracer/waitprobe.c: the syscall it sleeps in and the kind of file it
 * waits on) and read back as it was written.  The verdict groups them:
 * a wait for something from outside the process (input on a socket, pipe
 * or tty; a timer; a signal; a peer reading) is idle, a wait inside (a
 * lock, a driver call, uninterruptible sleep) is blocked, and some cannot
 * be told from outside (an eventfd, a condition variable with a timeout). */
#ifndef GP_WAITS_H
#define GP_WAITS_H

#include <stdbool.h>

enum gp_wait {
	GP_WAIT_NONE = 0,   /* running, or not known */
	GP_WAIT_INPUT,      /* read/recv/accept/poll on a socket, pipe, FIFO or tty */
	GP_WAIT_OUTPUT,     /* write/send blocked until a peer reads */
	GP_WAIT_TIMER,      /* nanosleep, clock_nanosleep, poll/select with no fds */
	GP_WAIT_SIGNAL,     /* pause, sigsuspend, sigtimedwait */
	GP_WAIT_WAKEUP,     /* eventfd/signalfd/pipe-only event sets: inside or outside */
	GP_WAIT_CONDVAR,    /* futex with a timeout: a timed condition or a polling lock */
	GP_WAIT_LOCK,       /* futex without timeout, flock, fcntl F_SETLKW, semop */
	GP_WAIT_CHILD,      /* wait4/waitid: what its child does decides */
	GP_WAIT_DRIVER,     /* ioctl on a device file (GPU driver) */
	GP_WAIT_DISK,       /* uninterruptible sleep (state D) */
	GP_WAIT_STOPPED,    /* state T/t */
	GP_WAIT_OTHER,      /* asleep in another syscall, or in none readable */
	GP_WAIT_COUNT
};

enum gp_wait_group {
	GP_WG_NONE,         /* running or unknown */
	GP_WG_OUTSIDE,      /* idle: the process waits for the world */
	GP_WG_UNCLEAR,      /* the outside look cannot tell */
	GP_WG_INSIDE,       /* blocked: locks, driver calls, D state */
	GP_WG_CHILD,
	GP_WG_STOPPED,
};

/* "input", "timer", ... (the result's spelling); NULL for an invalid value. */
const char *gp_wait_name(enum gp_wait w);
/* GP_WAIT_NONE for an unknown name. */
enum gp_wait gp_wait_from_name(const char *name);
enum gp_wait_group gp_wait_group(enum gp_wait w);

#endif
