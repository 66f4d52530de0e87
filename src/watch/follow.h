/* Which processes watch follows: the PIDs it was given, the processes of
 * --name, and with --gpu every process that holds a GPU: in an NVML
 * process list, or with a GPU device open (/dev/nvidia[0-9]..., /dev/kfd,
 * /dev/dri/...: the same files the kernel's DRM fdinfo and KFD readers
 * serve, and what `fuser /dev/nvidia*` looks at).  Asked every tick, so
 * processes that start later are picked up. */
#ifndef GP_FOLLOW_H
#define GP_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

struct gp_nvml;
struct gp_root;

struct gp_follow {
	/* The PIDs given are processes, not numbers: each is the process
	 * that held it at the first scan, known by its start time
	 * (/proc/PID/stat starttime), and a process that later gets the
	 * number is not it (issue 27: watch followed whatever came next).
	 * A PID with no process at the first scan is never followed. */
	const int *pids;
	size_t npids;
	const struct gp_root *root;  /* where /proc is read */
	unsigned long long *starts;  /* per PID given: its start time, or GP_FOLLOW_NONE */
	const char *name;
	bool gpu;
	struct gp_nvml *nv;          /* --gpu: NVML, NULL when not loaded */
	double fd_scan_every;        /* --gpu: seconds between scans of every process's fds */
	double fd_scanned;           /* when the last scan was, < 0 never */
	int *gpu_pids;               /* its answer, kept until the next one */
	size_t ngpu_pids, capgpu;
};

#define GP_FOLLOW_NONE (~0ull)

/* The candidates at time t (seconds), each once, into *out (malloc'd,
 * the caller frees).  Returns how many, -1 on allocation failure. */
int gp_follow_scan(struct gp_follow *f, double t, int **out);
void gp_follow_free(struct gp_follow *f);

/* True when pid has a GPU device open (reads /proc/PID/fd). */
bool gp_follow_holds_gpu(int pid);

#endif
