#include "config.h"
#include "identity.h"
#include "nsinfo.h"
#include "procstat.h"
#include "result.h"
#include "still.h"

#include <libproc2/pids.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int gp_find_by_name(const char *name, int **pidsp)
{
	enum pids_item items[] = { PIDS_ID_PID, PIDS_CMD, PIDS_CMDLINE_V, PIDS_TICS_BEGAN };
	enum { I_PID, I_CMD, I_ARGV, I_BEGAN };
	struct pids_info *info = NULL;
	*pidsp = NULL;
	if (procps_pids_new(&info, items, 4) < 0)
		return -1;
	struct pids_fetch *f = procps_pids_reap(info, PIDS_FETCH_TASKS_ONLY);
	if (!f) {
		procps_pids_unref(&info);
		return -1;
	}
	int total = f->counts->total, n = 0;
	int *pids = malloc(sizeof *pids * (size_t)(total ? total : 1));
	unsigned long long *began = malloc(sizeof *began * (size_t)(total ? total : 1));
	int self = getpid();
	for (int i = 0; pids && began && i < total; i++) {
		struct pids_stack *s = f->stacks[i];
		int pid = PIDS_VAL(I_PID, s_int, s, info);
		const char *cmd = PIDS_VAL(I_CMD, str, s, info);
		char **argv = PIDS_VAL(I_ARGV, strv, s, info);
		bool match = pid != self && cmd && strcmp(cmd, name) == 0;
		if (!match && pid != self && argv && argv[0] && argv[0][0] != '-') {
			const char *base = strrchr(argv[0], '/');
			match = strcmp(base ? base + 1 : argv[0], name) == 0;
		}
		if (!match)
			continue;
		/* insertion by start time: oldest first */
		unsigned long long b = PIDS_VAL(I_BEGAN, ull_int, s, info);
		int j = n++;
		while (j > 0 && began[j - 1] > b) {
			pids[j] = pids[j - 1];
			began[j] = began[j - 1];
			j--;
		}
		pids[j] = pid;
		began[j] = b;
	}
	free(began);
	procps_pids_unref(&info);
	if (!pids)
		return -1;
	*pidsp = pids;
	return n;
}

static void set_start_time(json_t *t, double epoch)
{
	char buf[64];
	time_t sec = (time_t)epoch;
	struct tm tm;
	gmtime_r(&sec, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(t, "start_time", json_string(buf));
}

/* One argument into cmdline.  JSON holds text only: an argument that is
 * not UTF-8 (a Latin-1 file name) is written as gp_json_string makes it
 * readable, and its bytes, in hex, at the same index of raw (null where
 * the text is exact), so that `report` quotes the real bytes
 * (render/: shell words, common/shquote.h). */
static void argv_add(json_t *cmdline, json_t *raw, const char *arg)
{
	json_t *exact = json_string(arg);
	if (exact) {
		json_array_append_new(cmdline, exact);
		json_array_append_new(raw, json_null());
		return;
	}
	json_array_append_new(cmdline, gp_json_string(arg));
	size_t n = strlen(arg);
	char *hex = malloc(2 * n + 1);
	if (!hex) {
		json_array_append_new(raw, json_null());
		return;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)arg[i]);
	json_array_append_new(raw, json_string(hex));
	free(hex);
}

/* cmdline, and cmdline_bytes when an argument needed it. */
static void set_argv(json_t *t, json_t *cmdline, json_t *raw)
{
	size_t i;
	json_t *v;
	bool any = false;
	json_array_foreach(raw, i, v)
		any |= !json_is_null(v);
	json_object_set_new(t, "cmdline", cmdline);
	if (any)
		json_object_set_new(t, "cmdline_bytes", raw);
	else {
		json_object_del(t, "cmdline_bytes");
		json_decref(raw);
	}
}

/* The names of a distributed job's variables that a process's
 * environment may hold (issue 29: "ranks" only for a job's processes):
 * torchrun's and torch.distributed's env:// (RANK, LOCAL_RANK,
 * WORLD_SIZE, ...), Open MPI's, PMI's and PMIx's, Slurm's.  Only these
 * are read out of /proc/PID/environ: the rest of an environment holds
 * tokens and passwords, and never reaches a result. */
static const char *const job_vars[] = {
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
	"TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
	"PMI_RANK", "PMI_SIZE", "PMIX_RANK",
	"SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL
};

/* job_env: those of job_vars the environment holds (an empty object
 * none); not set when the environment is not readable (another user's
 * process, without root).  The block read is the one the process was
 * started with (mm->env_start..env_end): what a launcher gave it. */
static void set_job_env(json_t *t, const struct gp_root *root, int pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	size_t n = 0;
	char *env = gp_slurp(root, path, &n);
	if (!env)
		return;
	json_t *job = json_object();
	for (size_t i = 0; i < n;) {
		const char *kv = env + i;
		size_t len = strnlen(kv, n - i);
		i += len + 1;
		const char *eq = memchr(kv, '=', len);
		if (!eq)
			continue;
		size_t kl = (size_t)(eq - kv), vl = len - kl - 1;
		for (size_t k = 0; job_vars[k]; k++) {
			if (kl != strlen(job_vars[k]) || strncmp(kv, job_vars[k], kl) || vl >= 128)
				continue;
			char v[128];
			memcpy(v, eq + 1, vl);
			v[vl] = '\0';
			json_object_set_new(job, job_vars[k], gp_json_string(v));
		}
	}
	free(env);
	json_object_set_new(t, "job_env", job);
}

/* exe: the file the process runs (/proc/PID/exe), "" unknown (a kernel
 * thread, another user's process without root).  Processes of one
 * program are told by it and their script (issue 29). */
static void set_exe(json_t *t, const struct gp_root *root, int pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "proc/%d/exe", pid);
	ssize_t l = readlinkat(root->dirfd, path, buf, sizeof buf - 1);
	if (l <= 0)
		return;
	buf[l] = '\0';
	json_object_set_new(t, "exe", gp_json_string(buf));
}

static json_t *identity_from_files(const struct gp_root *root, int pid)
{
	char path[64], buf[4096];
	struct gp_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (gp_read_file(root, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st))
		return NULL;
	json_t *t = json_object();
	json_object_set_new(t, "pid", json_integer(pid));
	json_object_set_new(t, "comm", gp_json_string(st.comm));
	json_object_set_new(t, "ppid", json_integer(st.ppid));
	json_object_set_new(t, "starttime_ticks", json_integer((json_int_t)st.starttime));
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	/* Whole (a command line may be longer than any fixed buffer), its
	 * arguments split at the NULs only: an argument is any bytes. */
	size_t n = 0;
	char *cl = gp_slurp(root, path, &n);
	json_t *argv = json_array(), *raw = json_array();
	for (size_t i = 0; cl && i < n;) {
		argv_add(argv, raw, cl + i);
		i += strlen(cl + i) + 1;
	}
	free(cl);
	set_argv(t, argv, raw);
	set_exe(t, root, pid);
	set_job_env(t, root, pid);
	/* Where it lives: its own pid, its container (issue 28). */
	gp_ns_target_json(root, pid, t);
	return t;
}

json_t *gp_target_identity(const struct gp_root *root, int pid)
{
	json_t *t = identity_from_files(root, pid);
	if (!t || !root->live)
		return t;
	enum pids_item items[] = { PIDS_CMDLINE_V, PIDS_ID_EUSER, PIDS_TIME_START, PIDS_ID_EUID };
	enum { I_ARGV, I_USER, I_START, I_EUID };
	struct pids_info *info = NULL;
	if (procps_pids_new(&info, items, 4) < 0)
		return t;
	unsigned want = (unsigned)pid;
	struct pids_fetch *f = procps_pids_select(info, &want, 1, PIDS_SELECT_PID);
	if (f && f->counts->total == 1) {
		struct pids_stack *s = f->stacks[0];
		/* libproc2's vector only where the file gave none: it splits
		 * an argument at a newline ("n\nFAKE" read as two), the file's
		 * NULs do not (issue 27). */
		char **argv = PIDS_VAL(I_ARGV, strv, s, info);
		if (argv && argv[0] && argv[0][0] && !json_array_size(json_object_get(t, "cmdline"))) {
			json_t *a = json_array(), *raw = json_array();
			for (char **p = argv; *p; p++)
				argv_add(a, raw, *p);
			set_argv(t, a, raw);
		}
		const char *user = PIDS_VAL(I_USER, str, s, info);
		if (user)
			json_object_set_new(t, "user", json_string(user));
		json_object_set_new(t, "uid", json_integer(PIDS_VAL(I_EUID, u_int, s, info)));
		/* TIME_START is seconds after boot; add the boot time. */
		double after_boot = PIDS_VAL(I_START, real, s, info);
		struct timespec rt, bt;
		clock_gettime(CLOCK_REALTIME, &rt);
		clock_gettime(CLOCK_BOOTTIME, &bt);
		double boot = (double)rt.tv_sec + rt.tv_nsec / 1e9
			      - ((double)bt.tv_sec + bt.tv_nsec / 1e9);
		set_start_time(t, boot + after_boot);
	}
	procps_pids_unref(&info);
	return t;
}

void gp_target_still(const struct gp_root *root, int pid, json_t *target)
{
	double s = gp_proc_still_s(root, pid);
	if (s >= 0)
		json_object_set_new(target, "still_s", json_real(s));
}
