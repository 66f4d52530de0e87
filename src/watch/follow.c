/* Which processes watch follows: see follow.h. */
#include "config.h"
#include "follow.h"
#include "grow.h"
#include "house.h"
#include "identity.h"
#include "nvml.h"
#include "procfs.h"
#include "procstat.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool add(int **out, size_t *n, size_t *cap, int pid)
{
	for (size_t i = 0; i < *n; i++)
		if ((*out)[i] == pid)
			return true;
	if (!gp_grow(out, cap, *n + 1, sizeof **out, 16))
		return false;
	(*out)[(*n)++] = pid;
	return true;
}

bool gp_follow_holds_gpu(int pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool yes = false;
	struct dirent *e;
	while (!yes && (e = readdir(d))) {
		char path[400], t[64];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, t, sizeof t - 1);
		if (n <= 0)
			continue;
		t[n] = '\0';
		yes = gp_gpu_device_path(t);
	}
	closedir(d);
	return yes;
}

/* Every process's fds: the cost grows with the machine's processes and
 * fds (a readlink each), so it runs every fd_scan_every seconds, not
 * every tick; NVML's lists are asked every tick. */
static void scan_fds(struct gp_follow *f)
{
	f->ngpu_pids = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return;
	int self = getpid();
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		if (gp_follow_holds_gpu((int)pid))
			add(&f->gpu_pids, &f->ngpu_pids, &f->capgpu, (int)pid);
	}
	closedir(d);
}

/* pid's start time (clock ticks after boot), GP_FOLLOW_NONE when it has
 * no process.  A zombie leader whose threads run is followed (its stat
 * reads Z): a process that ended is let go by its sampler (watch_cmd.c). */
static unsigned long long start_of(const struct gp_root *root, int pid)
{
	char path[64], buf[1024];
	struct gp_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (gp_read_file(root, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st))
		return GP_FOLLOW_NONE;
	return (unsigned long long)st.starttime;
}

/* The PIDs given whose process is still the one first seen there. */
static bool given(struct gp_follow *f, int **v, size_t *n, size_t *cap)
{
	if (f->npids && !f->starts) {
		f->starts = malloc(f->npids * sizeof *f->starts);
		if (!f->starts)
			return false;
		for (size_t i = 0; i < f->npids; i++)
			f->starts[i] = start_of(f->root, f->pids[i]);
	}
	bool ok = true;
	for (size_t i = 0; i < f->npids; i++) {
		if (f->starts[i] == GP_FOLLOW_NONE)
			continue;
		if (start_of(f->root, f->pids[i]) != f->starts[i]) {
			f->starts[i] = GP_FOLLOW_NONE; /* gone: for good */
			continue;
		}
		ok = ok && add(v, n, cap, f->pids[i]);
	}
	return ok;
}

int gp_follow_scan(struct gp_follow *f, double t, int **out)
{
	int *v = NULL;
	size_t n = 0, cap = 0;
	bool ok = given(f, &v, &n, &cap);
	if (f->name) {
		int *pids = NULL;
		int k = gp_find_by_name(f->name, &pids);
		for (int i = 0; i < k; i++)
			ok = ok && add(&v, &n, &cap, pids[i]);
		free(pids);
	}
	if (f->gpu) {
		if (f->fd_scanned < 0 || t - f->fd_scanned >= f->fd_scan_every) {
			scan_fds(f);
			f->fd_scanned = t;
		}
		for (size_t i = 0; i < f->ngpu_pids; i++)
			if (kill(f->gpu_pids[i], 0) == 0 || errno == EPERM)
				ok = ok && add(&v, &n, &cap, f->gpu_pids[i]);
		int nv[1024];
		unsigned k = gp_nvml_pids(f->nv, nv, 1024);
		for (unsigned i = 0; i < k; i++)
			if (nv[i] != getpid())
				ok = ok && add(&v, &n, &cap, nv[i]);
	}
	if (!ok) {
		free(v);
		return -1;
	}
	*out = v;
	return (int)n;
}

void gp_follow_free(struct gp_follow *f)
{
	free(f->gpu_pids);
	f->gpu_pids = NULL;
	free(f->starts);
	f->starts = NULL;
}
