/* One part of a bundle, made in a child with a deadline: a bundle never
 * hangs on a wedged process or driver.  A part that reads /proc of a
 * process in D state, dlopens a driver library whose init spins, or
 * unwinds a thread that never stops, is the child's problem: at the
 * deadline it gets SIGTERM (trace answers it by writing its verdict and
 * exit line), two seconds later SIGKILL, and two seconds after that it
 * is left behind (a child stuck in the kernel cannot be reaped; it dies
 * with us through PR_SET_PDEATHSIG).  The ptrace contract (ptstop.h)
 * makes the kill safe for the target: a SEIZEd thread is let go by the
 * kernel when its tracer dies. */
#ifndef GP_PART_H
#define GP_PART_H

#include <stdbool.h>
#include <stddef.h>

struct gp_part_res {
	int status;          /* wait status, valid when reaped */
	bool reaped, timed_out, killed;
	double secs;         /* wall time, to its own end (not to when it was waited for) */
	char err[1024];      /* the child's standard error, first lines */
};

/* Runs fn(arg) in a child whose standard output is the file out (created
 * mode 0644; NULL: /dev/null) and standard input /dev/null; its standard
 * error is captured into res->err.  Waits at most deadline_s.  Returns
 * fn's exit code (0..255), or -1 when it did not exit by itself (res
 * says how) or the child could not be started (errno). */
int gp_part_run(const char *out, double deadline_s, int (*fn)(void *), void *arg,
		struct gp_part_res *res);

/* The same in two halves, so that parts that never ptrace run beside
 * one that does (at most one thread of the machine stopped by gpuprobe:
 * ptstop.h; parts in other processes would break that, so a bundle runs
 * at most one ptracing part at a time).  gp_part_start returns 0 or -1
 * with errno; gp_part_finish waits for it as gp_part_run does, the
 * deadline counted from the start. */
struct gp_part_job {
	int pid, errfd;
	double t0, deadline_s;
	size_t len;
	struct gp_part_res res;
	volatile double *ended; /* shared with the child: when it ended */
};
int gp_part_start(struct gp_part_job *j, const char *out, double deadline_s,
		  int (*fn)(void *), void *arg);
int gp_part_finish(struct gp_part_job *j, struct gp_part_res *res);

#endif
