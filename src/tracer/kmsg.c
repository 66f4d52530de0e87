/* The kernel log: see kmsg.h. */
#include "config.h"
#include "kmsg.h"
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Classification (pure)                                               */
/* ------------------------------------------------------------------ */

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The driver a message comes from, by the prefix its driver prints
 * (dev_printk: "DRIVER BUS-ID: ", DRM_ERROR: "[drm:FUNC [MODULE]] ",
 * NVRM's "NVRM: ").  NULL for a line of no GPU driver. */
static const char *driver_of(const char *m)
{
	/* amdkfd prints through dev_* on the kfd device ("kfd kfd: amdgpu:
	 * ...") and with "amdgpu: " pr_fmt; its own words name it. */
	if (starts(m, "kfd kfd:") || strstr(m, "amdkfd") || starts(m, "[drm:kfd_") ||
	    (starts(m, "amdgpu: ") && (strstr(m, "KFD") || strstr(m, "queue") ||
				      strstr(m, "ROCm") || strstr(m, "HMM"))))
		return "amdkfd";
	if (starts(m, "[drm:amdgpu_") || strstr(m, "[amdgpu]") ||
	    starts(m, "amdgpu ") || starts(m, "amdgpu:"))
		return "amdgpu";
	/* NVRM: the resource manager; nvidia-modeset:, nvidia-uvm:,
	 * nvidia-nvlink: (seen on the H200), nvidia: the module loader. */
	if (starts(m, "NVRM:") || starts(m, "nvidia-") || starts(m, "nvidia ") ||
	    starts(m, "nvidia:"))
		return "nvidia";
	if (starts(m, "nouveau ") || strstr(m, "[nouveau]"))
		return "nouveau";
	if (starts(m, "i915 ") || strstr(m, "[i915]") || starts(m, "[drm:i915_"))
		return "i915";
	if (starts(m, "xe ") || strstr(m, "[xe]"))
		return "xe";
	if (starts(m, "[drm:drm_sched_") || starts(m, "[drm] "))
		return "drm";
	return NULL;
}

/* A number after a marker: "pid=1234", "Killed process 1234". */
static int int_after(const char *m, const char *marker)
{
	const char *p = strstr(m, marker);
	uint64_t v;
	const char *end;

	if (!p)
		return 0;
	p += strlen(marker);
	if (!gp_parse_u64(p, &v, &end) || v > 4194304)
		return 0;
	return (int)v;
}

/* hung_task.c: "INFO: task %s:%d blocked for more than %ld seconds."; the
 * watchdog: "BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]".  The pid
 * follows the last ':' before the end marker. */
static int pid_before(const char *m, const char *end_marker)
{
	const char *e = strstr(m, end_marker);
	const char *c = NULL;

	if (!e)
		return 0;
	for (const char *p = m; p < e; p++)
		if (*p == ':')
			c = p;
	return c ? int_after(c, ":") : 0;
}

static enum gp_kmsg_kind kind_of(const char *m, const char *drv, int *pid, int *xid)
{
	if (strstr(m, "blocked for more than")) {
		*pid = pid_before(m, " blocked for more than");
		return GP_KMSG_HUNG_TASK;
	}
	if (strstr(m, "soft lockup") || strstr(m, "hard LOCKUP")) {
		const char *b = strrchr(m, '[');
		*pid = b ? pid_before(b, "]") : 0;
		return GP_KMSG_SOFT_LOCKUP;
	}
	if (strstr(m, "invoked oom-killer") || starts(m, "oom-kill:") ||
	    strstr(m, "Out of memory")) {
		*pid = strstr(m, "Killed process ") ? int_after(m, "Killed process ")
						    : int_after(m, ",pid=");
		return GP_KMSG_OOM;
	}
	if (!drv)
		return GP_KMSG_OTHER;
	/* NVRM: "Xid (PCI:0000:9a:00): 79, pid=7777, name=python3, GPU has
	 * fallen off the bus." (NVIDIA's Xid catalog; pid= since R470). */
	if (starts(m, "NVRM: Xid")) {
		const char *p = strstr(m, "): ");
		uint64_t v;
		const char *end;
		if (p && gp_parse_u64(p + 3, &v, &end) && v < 100000)
			*xid = (int)v;
		*pid = int_after(m, "pid=");
		return GP_KMSG_XID;
	}
	/* amdgpu_job.c amdgpu_job_timedout: "ring %s timeout, signaled
	 * seq=%u, emitted seq=%u"; drm_sched: job timed out; i915: "GPU
	 * HANG". */
	if ((strstr(m, "ring ") && strstr(m, " timeout")) || strstr(m, "job timed out") ||
	    strstr(m, "GPU HANG"))
		return GP_KMSG_RING_TIMEOUT;
	if (strstr(m, "GPU reset") || strstr(m, "GPU recovery") ||
	    strstr(m, "Resetting chip") || strstr(m, "GPU reset(") ||
	    strstr(m, "reset begin"))
		return GP_KMSG_GPU_RESET;
	/* amdgpu's page-fault report names the process: "(src_id:0 ring:24
	 * vmid:8 pasid:32770, for process python3 pid 5151 thread ...)" and
	 * the job timeout's "Process information: process X pid N". */
	if (strstr(m, "process ") && strstr(m, " pid "))
		*pid = int_after(m, " pid ");
	return GP_KMSG_OTHER;
}

int gp_kmsg_parse(const char *rec, size_t len, uint64_t start_us,
		  struct gp_kmsg_rec *out)
{
	uint64_t pri, seq, ts;
	const char *end = rec + len;
	char head[96];

	memset(out, 0, sizeof *out);
	out->xid = -1;
	/* PRI,SEQ,TS,FLAGS[,more];MESSAGE.  The record is len bytes, not a
	 * string (a read(2) of /dev/kmsg is not NUL-terminated): the
	 * numbers are parsed from a bounded, terminated copy of the head
	 * (libFuzzer found the unbounded read). */
	const char *semi = memchr(rec, ';', len);
	if (!semi || (size_t)(semi - rec) >= sizeof head)
		return -1;
	memcpy(head, rec, (size_t)(semi - rec));
	head[semi - rec] = '\0';
	const char *p = head;
	if (!gp_parse_u64(p, &pri, &p) || *p != ',' ||
	    !gp_parse_u64(p + 1, &seq, &p) || *p != ',' ||
	    !gp_parse_u64(p + 1, &ts, &p) || *p != ',')
		return -1;
	const char *msg = semi + 1;
	const char *nl = memchr(msg, '\n', (size_t)(end - msg));
	size_t mlen = (size_t)((nl ? nl : end) - msg), o = 0;

	/* The kernel escapes unprintable bytes as \xNN; a replayed file is
	 * any bytes: keep printable ASCII, so the text is valid JSON. */
	for (size_t i = 0; i < mlen && o < sizeof out->text - 1; i++) {
		unsigned char c = (unsigned char)msg[i];
		out->text[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out->text[o] = '\0';
	out->level = (int)(pri & 7);
	out->seq = seq;
	out->ts_us = ts;
	out->t = ((double)ts - (double)start_us) / 1e6;

	const char *drv = driver_of(out->text);
	out->kind = kind_of(out->text, drv, &out->pid, &out->xid);
	if (!drv && out->kind == GP_KMSG_OTHER)
		return 0;
	snprintf(out->driver, sizeof out->driver, "%s", drv ? drv : "kernel");
	return 1;
}

const char *gp_kmsg_kind_name(enum gp_kmsg_kind k)
{
	switch (k) {
	case GP_KMSG_RING_TIMEOUT: return "ring-timeout";
	case GP_KMSG_GPU_RESET: return "gpu-reset";
	case GP_KMSG_XID: return "xid";
	case GP_KMSG_HUNG_TASK: return "hung-task";
	case GP_KMSG_SOFT_LOCKUP: return "soft-lockup";
	case GP_KMSG_OOM: return "oom";
	case GP_KMSG_OTHER: break;
	}
	return "other";
}

json_t *gp_kmsg_json(const struct gp_kmsg_rec *r)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "type", json_string("kmsg"));
	json_object_set_new(o, "t", json_real((double)(long long)(r->t * 1000) / 1000));
	json_object_set_new(o, "driver", json_string(r->driver));
	json_object_set_new(o, "kind", json_string(gp_kmsg_kind_name(r->kind)));
	json_object_set_new(o, "text", json_string(r->text));
	json_object_set_new(o, "level", json_integer(r->level));
	if (r->pid > 0)
		json_object_set_new(o, "pid", json_integer(r->pid));
	if (r->xid >= 0)
		json_object_set_new(o, "xid", json_integer(r->xid));
	return o;
}

uint64_t gp_kmsg_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/* printk's CONSOLE_EXT_LOG_MAX is 8 KiB: a read with a smaller buffer
 * fails with EINVAL. */
#define REC_MAX 8192

struct gp_kmsg {
	const struct gp_root *root;
	int fd;
	bool is_dev;		/* the character device: one record per read */
	uint64_t start_us, from_us;
	unsigned lost;
	char buf[REC_MAX + 1];
	size_t have;		/* replay: bytes buffered, not yet parsed */
	bool eof;
};

static void no_permission(const struct gp_root *root, int e, char *why, size_t cap)
{
	char v[16] = "";

	if (gp_read_file(root, "/proc/sys/kernel/dmesg_restrict", v, sizeof v) > 0)
		v[strcspn(v, "\n")] = '\0';
	snprintf(why, cap, "/dev/kmsg: %s%s%s: no kernel log (GPU driver messages, "
		 "hung-task and OOM warnings); run as root or with CAP_SYSLOG",
		 strerror(e), v[0] ? ", kernel.dmesg_restrict = " : "", v);
}

struct gp_kmsg *gp_kmsg_open(const struct gp_root *root, uint64_t start_us,
			     double before_s, char *why, size_t cap)
{
	struct gp_kmsg *k = calloc(1, sizeof *k);
	struct stat st;

	if (!k) {
		snprintf(why, cap, "out of memory");
		return NULL;
	}
	k->fd = gp_open(root, "/dev/kmsg", 0);
	if (k->fd < 0) {
		int e = errno;
		if (e == EPERM || e == EACCES)
			no_permission(root, e, why, cap);
		else
			snprintf(why, cap, "%s/dev/kmsg: %s: no kernel log",
				 root->live ? "" : root->path, strerror(e));
		free(k);
		errno = e;
		return NULL;
	}
	k->root = root;
	k->is_dev = fstat(k->fd, &st) == 0 && S_ISCHR(st.st_mode);
	k->start_us = start_us;
	uint64_t before = before_s > 0 ? (uint64_t)(before_s * 1e6) : 0;
	k->from_us = start_us > before ? start_us - before : 0;
	return k;
}

static int keep(struct gp_kmsg *k, const char *rec, size_t len,
		struct gp_kmsg_rec *out)
{
	if (gp_kmsg_parse(rec, len, k->start_us, out) != 1)
		return 0;
	return out->ts_us >= k->from_us;
}

static int read_dev(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		    char *why, size_t whycap)
{
	int n = 0;

	while (n < cap) {
		ssize_t r = read(k->fd, k->buf, REC_MAX);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE) {	/* overwritten: go on at the next */
				k->lost++;
				continue;
			}
			if (errno == EAGAIN)
				break;
			if (errno == EPERM || errno == EACCES)
				no_permission(k->root, errno, why, whycap);
			else
				snprintf(why, whycap, "/dev/kmsg: %s", strerror(errno));
			return n ? n : -1;
		}
		if (r == 0)
			break;
		n += keep(k, k->buf, (size_t)r, &out[n]);
	}
	return n;
}

/* A recorded file: one record a line; lines that start with a blank are
 * the dictionary of the record before. */
static int read_file(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		     char *why, size_t whycap)
{
	int n = 0;

	while (n < cap) {
		char *nl = memchr(k->buf, '\n', k->have);
		if (!nl) {
			if (k->eof || k->have == REC_MAX) {
				if (k->have == 0)
					break;
				nl = k->buf + k->have;	/* last line, or too long */
			} else {
				ssize_t r = read(k->fd, k->buf + k->have, REC_MAX - k->have);
				if (r < 0) {
					if (errno == EINTR)
						continue;
					snprintf(why, whycap, "kmsg file: %s", strerror(errno));
					return n ? n : -1;
				}
				if (r == 0)
					k->eof = true;
				k->have += (size_t)r;
				continue;
			}
		}
		size_t len = (size_t)(nl - k->buf);
		if (len && k->buf[0] != ' ')
			n += keep(k, k->buf, len, &out[n]);
		size_t used = len < k->have ? len + 1 : len;
		memmove(k->buf, k->buf + used, k->have - used);
		k->have -= used;
	}
	return n;
}

int gp_kmsg_read(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		 char *why, size_t whycap)
{
	if (!k || cap <= 0)
		return 0;
	return k->is_dev ? read_dev(k, out, cap, why, whycap)
			 : read_file(k, out, cap, why, whycap);
}

unsigned gp_kmsg_lost(const struct gp_kmsg *k)
{
	return k ? k->lost : 0;
}

void gp_kmsg_close(struct gp_kmsg *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}
