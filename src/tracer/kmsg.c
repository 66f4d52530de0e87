/* The kernel log: see kmsg.h. */
#include "config.h"
#include "kmsg.h"
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#define HAVE_PERF 1
#endif
#endif

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
	case GP_KMSG_LOST: return "lost";
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
	if (r->kind == GP_KMSG_LOST)
		json_object_set_new(o, "lost", json_integer(r->lost > INT64_MAX ? INT64_MAX
									 : (json_int_t)r->lost));
	return o;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t gp_kmsg_now_us(void)
{
	return mono_ns() / 1000u;
}

/* ------------------------------------------------------------------ */
/* The record clock against CLOCK_MONOTONIC                            */
/* ------------------------------------------------------------------ */

struct clk_pair {
	bool have_ktime, have_cpu;
	uint64_t ktime_ns, cpu_ns;
};

/* "12345.678901": milliseconds and nanoseconds (SPLIT_NS in
 * kernel/sched/debug.c), into ns. */
static bool ms_ns(const char *v, uint64_t *ns)
{
	uint64_t ms, frac = 0;
	const char *p;

	if (!gp_parse_u64(v, &ms, &p) || ms > UINT64_MAX / 1000000u)
		return false;
	if (*p == '.') {
		const char *q = p + 1;
		unsigned digits = 0;
		while (*q >= '0' && *q <= '9' && digits < 6) {
			frac = frac * 10 + (uint64_t)(*q - '0');
			q++, digits++;
		}
		if (digits == 0)
			return false;
		while (digits++ < 6)
			frac *= 10;
	}
	*ns = ms * 1000000u + frac;
	return *ns >= ms * 1000000u;
}

static int clk_kv(const char *key, size_t klen, const char *val, void *ctx)
{
	struct clk_pair *c = ctx;

	/* "ktime    : 1.5": the blanks come before the colon here. */
	if (*val == ':')
		val++;
	if (klen == 5 && !memcmp(key, "ktime", 5))
		c->have_ktime = ms_ns(val, &c->ktime_ns);
	else if (klen == 7 && !memcmp(key, "cpu_clk", 7))
		c->have_cpu = ms_ns(val, &c->cpu_ns);
	return c->have_ktime && c->have_cpu;
}

bool gp_kmsg_clock_parse(const char *text, int64_t *offset_us)
{
	struct clk_pair c = { 0 };

	/* The header comes first: "Sched Debug Version: v0.11, ...",
	 * then ktime, sched_clk, cpu_clk, jiffies (kernel/sched/debug.c,
	 * sched_debug_header). */
	gp_kv_each(text, clk_kv, &c);
	if (!c.have_ktime || !c.have_cpu)
		return false;
	int64_t d = c.cpu_ns >= c.ktime_ns ? (int64_t)((c.cpu_ns - c.ktime_ns) / 1000u)
					   : -(int64_t)((c.ktime_ns - c.cpu_ns) / 1000u);
	*offset_us = d;
	return true;
}

static bool from_sched_debug(const struct gp_root *root, struct gp_kmsg_clock *c)
{
	static const char *const paths[] = { "/proc/sched_debug", "/sys/kernel/debug/sched/debug" };
	char buf[2048];

	/* Only the head: the rest is every CPU's run queue. */
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		if (gp_read_file(root, paths[i], buf, sizeof buf) <= 0)
			continue;
		if (gp_kmsg_clock_parse(buf, &c->offset_us)) {
			/* Both read with interrupts off, within a microsecond;
			 * the ms.ns print keeps the nanoseconds. */
			c->err_us = 1;
			c->how = "sched_debug";
			return true;
		}
	}
	return false;
}

#ifdef HAVE_PERF
/* A perf event's records are stamped by perf_event_clock(), which is
 * local_clock() unless the event asks for another clock
 * (kernel/events/core.c, perf_event_alloc: event->clock = &local_clock):
 * the printk clock.  A dummy software event on ourselves that tracks comm
 * changes (attr.comm, PERF_SAMPLE_TIME in every record) gets one record
 * when we set our own name again, stamped inside the prctl call; two
 * CLOCK_MONOTONIC readings around it bound its time on our clock.  The
 * best of a few tries is kept.  Allowed unprivileged at
 * kernel.perf_event_paranoid <= 2 (user-space-only event, own thread);
 * writes nothing, changes nothing (the same name).  Measured on the
 * 6.18 build VM: +1 360 us after 6 minutes up, +-3.5 us. */
static bool from_perf(struct gp_kmsg_clock *c, char *why, size_t cap)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.comm = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, cap, "perf_event_open: %s", strerror(errno));
		return false;
	}
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)(pg > 0 ? pg : 4096) * 2;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(why, cap, "perf mmap: %s", strerror(errno));
		close(fd);
		return false;
	}
	struct perf_event_mmap_page *mp = m;
	const unsigned char *data = (const unsigned char *)m + len / 2;
	uint64_t size = len / 2, tail = 0;
	char name[17] = "";
	bool got = false;
	prctl(PR_GET_NAME, name, 0, 0, 0);
	for (int i = 0; i < 5; i++) {
		uint64_t m0 = mono_ns();
		prctl(PR_SET_NAME, name, 0, 0, 0);
		uint64_t m1 = mono_ns();
		uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		while (tail + sizeof(struct perf_event_header) <= head) {
			unsigned char rec[256];
			struct perf_event_header h;
			for (size_t b = 0; b < sizeof h; b++)
				((unsigned char *)&h)[b] = data[(tail + b) % size];
			if (h.size < sizeof h || tail + h.size > head)
				break;
			if (h.type == PERF_RECORD_COMM && h.size <= sizeof rec && h.size >= sizeof h + 8) {
				for (size_t b = 0; b < h.size; b++)
					rec[b] = data[(tail + b) % size];
				uint64_t ts;	/* sample_id's time: the record's last 8 bytes */
				memcpy(&ts, rec + h.size - 8, 8);
				int64_t err = (int64_t)(m1 - m0) / 2000 + 1;
				if (!got || err < c->err_us) {
					int64_t mid = (int64_t)(m0 / 2 + m1 / 2);
					c->offset_us = ((int64_t)ts - mid) / 1000;
					c->err_us = err;
					got = true;
				}
			}
			tail += h.size;
		}
		__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	}
	munmap(m, len);
	close(fd);
	if (!got)
		snprintf(why, cap, "perf gave no comm record");
	else
		c->how = "perf";
	return got;
}
#endif

void gp_kmsg_calibrate(const struct gp_root *root, struct gp_kmsg_clock *c)
{
	char perf_why[96] = "no perf events in this build";

	memset(c, 0, sizeof *c);
	c->err_us = -1;
	c->how = "none";
#ifdef HAVE_PERF
	if (root->live && from_perf(c, perf_why, sizeof perf_why))
		return;
#endif
	if (from_sched_debug(root, c))
		return;
	c->offset_us = 0;
	c->err_us = -1;
	c->how = "none";
	if (root->live)
		snprintf(c->why, sizeof c->why, "kernel-log times not calibrated (%s; no readable "
			 "sched_debug): they may be off by the printk clock's drift", perf_why);
	else
		snprintf(c->why, sizeof c->why, "kernel-log times not calibrated: the recorded "
			 "root has no proc/sched_debug");
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
	uint64_t start_mono, before_us;
	uint64_t start_us, from_us;	/* on the record clock */
	struct gp_kmsg_clock clk;
	uint64_t calibrated_ns;	/* CLOCK_MONOTONIC of the last calibration */
	uint64_t next_seq;	/* the SEQ expected next */
	bool have_seq;
	uint64_t lost;
	struct gp_kmsg_rec held;	/* kept, but no room left in out */
	bool have_held;
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

/* The window on the record clock, from the trace's start on ours. */
static void place_window(struct gp_kmsg *k)
{
	int64_t s = (int64_t)k->start_mono + k->clk.offset_us;
	k->start_us = s > 0 ? (uint64_t)s : 0;
	k->from_us = k->start_us > k->before_us ? k->start_us - k->before_us : 0;
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
	k->start_mono = start_us;
	k->before_us = before_s > 0 ? (uint64_t)(before_s * 1e6) : 0;
	gp_kmsg_calibrate(root, &k->clk);
	k->calibrated_ns = mono_ns();
	place_window(k);
	return k;
}

/* A note standing for n records lost before the record at. */
static void lost_note(struct gp_kmsg_rec *out, uint64_t n, const struct gp_kmsg_rec *at)
{
	memset(out, 0, sizeof *out);
	out->t = at->t;
	out->ts_us = at->ts_us;
	out->seq = at->seq;
	out->level = 4;
	out->kind = GP_KMSG_LOST;
	out->xid = -1;
	out->lost = n;
	snprintf(out->driver, sizeof out->driver, "kernel");
	snprintf(out->text, sizeof out->text, "%" PRIu64 " kernel-log record%s overwritten before "
		 "gpuprobe read %s (ring buffer overrun)", n, n == 1 ? "" : "s",
		 n == 1 ? "it" : "them");
}

/* One record as read: first a note of the records lost before it (a gap
 * in SEQ) when it falls in the window, then the record when it is one to
 * keep; what does not fit in out[*n..cap) waits in k->held. */
static void take(struct gp_kmsg *k, const char *rec, size_t len,
		 struct gp_kmsg_rec *out, int cap, int *n)
{
	struct gp_kmsg_rec r;
	int kind = gp_kmsg_parse(rec, len, k->start_us, &r);

	if (kind < 0)
		return;
	uint64_t gap = k->have_seq && r.seq > k->next_seq ? r.seq - k->next_seq : 0;
	k->next_seq = r.seq + 1;
	k->have_seq = true;
	if (r.ts_us < k->from_us)
		return;
	if (gap) {
		k->lost += gap;
		lost_note(&out[(*n)++], gap, &r);
	}
	if (kind != 1)
		return;
	if (*n < cap) {
		out[(*n)++] = r;
	} else {
		k->held = r;
		k->have_held = true;
	}
}

static int read_dev(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		    char *why, size_t whycap)
{
	int n = 0;

	while (n < cap && !k->have_held) {
		ssize_t r = read(k->fd, k->buf, REC_MAX);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* Overwritten: the read position moved on to the
			 * oldest record left, whose SEQ says how many. */
			if (errno == EPIPE)
				continue;
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
		take(k, k->buf, (size_t)r, out, cap, &n);
	}
	return n;
}

/* A recorded file: one record a line; lines that start with a blank are
 * the dictionary of the record before. */
static int read_file(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		     char *why, size_t whycap)
{
	int n = 0;

	while (n < cap && !k->have_held) {
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
			take(k, k->buf, len, out, cap, &n);
		size_t used = len < k->have ? len + 1 : len;
		memmove(k->buf, k->buf + used, k->have - used);
		k->have -= used;
	}
	return n;
}

/* The clocks drift apart (seconds a month): a trace of hours, or watch
 * for days, learns the offset again now and then. */
#define RECALIBRATE_NS (60ull * 1000000000u)

int gp_kmsg_read(struct gp_kmsg *k, struct gp_kmsg_rec *out, int cap,
		 char *why, size_t whycap)
{
	int n = 0;

	if (!k || cap <= 0)
		return 0;
	if (k->root->live && k->clk.err_us >= 0 && mono_ns() - k->calibrated_ns > RECALIBRATE_NS) {
		struct gp_kmsg_clock c;
		gp_kmsg_calibrate(k->root, &c);
		k->calibrated_ns = mono_ns();
		if (c.err_us >= 0) {
			k->clk = c;
			place_window(k);
		}
	}
	if (k->have_held) {
		out[n++] = k->held;
		k->have_held = false;
	}
	int r = k->is_dev ? read_dev(k, out + n, cap - n, why, whycap)
			  : read_file(k, out + n, cap - n, why, whycap);
	if (r < 0)
		return n ? n : -1;
	return n + r;
}

uint64_t gp_kmsg_lost(const struct gp_kmsg *k)
{
	return k ? k->lost : 0;
}

const struct gp_kmsg_clock *gp_kmsg_clock(const struct gp_kmsg *k)
{
	return k ? &k->clk : NULL;
}

void gp_kmsg_close(struct gp_kmsg *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}
