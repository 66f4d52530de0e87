#include "config.h"
#include "sampler.h"
#include "grow.h"
#include "gpumem.h"
#include "house.h"
#include "parse.h"
#include "procstat.h"
#include "jsonw.h"
#include "result.h"
#include "sysinfo.h"
#include "proctab.h"
#include "tasks.h"
#include "threadrec.h"
#include "point.h"
#include "waitprobe.h"
#include "waitedge.h"
#include "sockets.h"
#include "sockflow.h"
#include "gpuact.h"
#include "gpujson.h"
#include "gpuwork.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* P_LSTAT: the leader thread's stat (/proc/PID/task/PID/stat), on the
 * BPF path only: what the process's stat says but the sums of its
 * threads (state, parent, name, start, reaped children), without the
 * walk over every thread that /proc/PID/stat does for those sums; they
 * come with the pass (tasks.h, gp_tasks_proc_sums). */
enum { P_STAT, P_STATUS, P_IO, P_LSTAT, P_COUNT };

struct gp_sampler {
	struct gp_sampler_opts o;
	/* The last sample's GPU: a context held, what its kernels did (read
	 * once a second: GP_GW_UNKNOWN between), gp_sampler_gpu. */
	bool gpu_ctx;
	uint8_t gpu_gw;
	struct gp_tasks *tasks;
	struct gp_gpu_reader *gpu;
	struct gp_gpu_house *house; /* o.house, or its own (own_house) */
	bool own_house;
	struct gp_sys_reader *sys;
	struct gp_sockets *socks;  /* o.socks, or its own (own_socks) */
	bool own_socks;
	struct gp_sockproc *sock;  /* this process's sockets */
	char conn_to[80];          /* where its last failed connect went (pv->conn_to) */
	int lock_holder;           /* who holds the lock it was last refused (pv->lock_*) */
	char lock_holder_comm[16], lock_file[256];
	int fd[P_COUNT];          /* the process's own files, kept open */
	uint64_t starttime;       /* identity: a kept fd of a dead pid reads ESRCH */
	double clk_tck;
	double prev_t;
	double prev_cpu_s;
	bool have_prev;
	bool keyframe;            /* the next sample writes every thread whole */
	struct gp_sampler_totals tot;
	struct gp_jsonw jw;       /* the threads array of the current sample */
	const struct gp_thread *last_threads; /* the last sample's, owned by tasks */
	size_t nlast_threads;
	struct gp_waitprobe *waits;
	struct gp_waitedge *edges;   /* on whom each thread waits */
	struct gp_gpuact *act;    /* GPU activity of this process (issue 13) */
	struct gp_tview *tv;      /* the last sample's thread views */
	size_t tvcap;
	struct gp_point_builder *pb; /* gp_sampler_take's own (one process) */
	int ppid;
	char comm[64];
	char ended_comm[16];      /* the last sample's ended thread's, for its view */
	uint64_t prev_threads_total;
	bool had_mm;              /* status had Vm lines (a user process) */
	bool act_read;            /* GPU activity read at act_t */
	double act_t;
	bool maps_checked;
	uint64_t maps_rss, map_bytes;
	uint64_t rss_file_ours;   /* RssFile our reads made resident (gp_sampler_add_ours) */
	char map_path[512];
	char buf[8192];
};

static int open_proc_file(const struct gp_root *root, int pid, const char *name)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
	return gp_open(root, path, 0);
}

struct gp_sampler *gp_sampler_new(const struct gp_sampler_opts *o)
{
	struct gp_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->o = *o;
	for (int i = 0; i < P_COUNT; i++)
		s->fd[i] = -1;
	s->clk_tck = (double)sysconf(_SC_CLK_TCK);
	static const char *const names[P_LSTAT] = { "stat", "status", "io" };
	for (int i = 0; i < P_LSTAT; i++)
		s->fd[i] = open_proc_file(o->root, o->pid, names[i]);
	struct gp_stat st;
	if (s->fd[P_STAT] < 0 || gp_pread_all(s->fd[P_STAT], s->buf, sizeof s->buf) <= 0
	    || !gp_parse_stat(s->buf, &st)) {
		int saved = errno ? errno : ESRCH;
		gp_sampler_free(s);
		errno = saved;
		return NULL;
	}
	s->starttime = st.starttime;
	if (s->fd[P_IO] < 0)
		s->tot.io_denied = true;
	unsigned tflags = (o->kstacks ? GP_TASKS_KSTACK : 0) | (o->reopen ? GP_TASKS_REOPEN : 0);
	s->tasks = gp_tasks_new(o->root, o->pid, tflags);
	if (s->tasks && !strcmp(gp_tasks_path(s->tasks, NULL), "bpf")) {
		char leader[32];
		snprintf(leader, sizeof leader, "task/%d/stat", o->pid);
		s->fd[P_LSTAT] = open_proc_file(o->root, o->pid, leader);
	}
	s->house = o->house;
	if (!s->house) {
		struct gp_gpu_house_opts ho = { .root = o->root,
						.flags = o->no_nvml ? GP_HOUSE_NO_NVML : 0 };
		s->house = gp_gpu_house_new(&ho);
		s->own_house = true;
	}
	s->gpu = s->house ? gp_gpu_reader_new_in(s->house, o->pid, 0) : NULL;
	s->sys = o->no_system ? NULL : gp_sys_reader_new(o->root);
	s->waits = gp_waitprobe_new(o->root, o->pid);
	s->edges = gp_waitedge_new(o->root, o->pid);
	struct gp_gpuact_opts ao = { .house = s->house, .pid = o->pid };
	s->act = s->house ? gp_gpuact_new(&ao) : NULL;
	s->pb = gp_point_builder_new();
	s->socks = o->socks;
	if (!s->socks) {
		s->socks = gp_sockets_new();
		s->own_socks = true;
	}
	s->sock = s->socks ? gp_sockproc_new(s->socks, o->root, o->pid) : NULL;
	if (!s->sock || !s->tasks || !s->house || (!s->sys && !o->no_system) || !s->waits || !s->edges || !s->pb) {
		int saved = errno ? errno : ENOMEM;
		gp_sampler_free(s);
		errno = saved;
		return NULL;
	}
	return s;
}

void gp_sampler_free(struct gp_sampler *s)
{
	if (!s)
		return;
	gp_tasks_free(s->tasks);
	if (s->gpu)
		gp_gpu_reader_free(s->gpu);
	if (s->sys)
		gp_sys_reader_free(s->sys);
	gp_waitprobe_free(s->waits);
	gp_waitedge_free(s->edges);
	gp_gpuact_free(s->act);
	if (s->own_house)
		gp_gpu_house_free(s->house);
	gp_point_builder_free(s->pb);
	gp_sockproc_free(s->sock);
	if (s->own_socks)
		gp_sockets_free(s->socks);
	free(s->tv);
	gp_jw_free(&s->jw);
	for (int i = 0; i < P_COUNT; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	free(s);
}

const char *gp_sampler_threads_json(const struct gp_sampler *s, size_t *len)
{
	if (s->jw.oom || !s->jw.buf) {
		*len = 4;
		return "null";
	}
	*len = s->jw.len;
	return s->jw.buf;
}

const struct gp_thread *gp_sampler_threads(const struct gp_sampler *s, size_t *n)
{
	*n = s->nlast_threads;
	return s->last_threads;
}

void gp_sampler_gpu(const struct gp_sampler *s, bool *ctx, uint8_t *gw)
{
	*ctx = s->gpu_ctx;
	*gw = s->gpu_gw;
}

bool gp_sampler_main_mark(const struct gp_sampler *s, struct gp_ran_mark *m)
{
	for (size_t i = 0; i < s->nlast_threads; i++) {
		const struct gp_thread *th = &s->last_threads[i];
		if (th->tid != s->o.pid)
			continue;
		m->run_ns = th->have_sched ? th->run_ns : 0;
		m->cpu = (double)(th->st.utime + th->st.stime);
		return true;
	}
	return false;
}

void gp_sampler_totals(const struct gp_sampler *s, struct gp_sampler_totals *tot)
{
	*tot = s->tot;
}

bool gp_sampler_rss_file_now(struct gp_sampler *s, uint64_t *bytes)
{
	struct gp_status_mem m;
	if (s->fd[P_STATUS] < 0 || gp_pread_all(s->fd[P_STATUS], s->buf, sizeof s->buf) <= 0
	    || !gp_parse_status_mem(s->buf, &m) || !(m.have & GP_HAVE_RSS_FILE))
		return false;
	*bytes = m.rss_file;
	return true;
}

void gp_sampler_add_ours(struct gp_sampler *s, uint64_t bytes)
{
	s->rss_file_ours += bytes;
}

/* The process's CPU times (clock ticks) and faults into proc and pt. */
static void proc_times(const struct gp_sampler *s, json_t *proc, struct gp_pview *pt, uint64_t utime,
		       uint64_t stime, uint64_t minflt, uint64_t majflt)
{
	pt->utime = (double)utime / s->clk_tck;
	pt->stime = (double)stime / s->clk_tck;
	pt->minflt = minflt;
	pt->majflt = majflt;
	json_object_set_new(proc, "utime", json_real((double)utime / s->clk_tck));
	json_object_set_new(proc, "stime", json_real((double)stime / s->clk_tck));
	json_object_set_new(proc, "minflt", json_integer((json_int_t)minflt));
	json_object_set_new(proc, "majflt", json_integer((json_int_t)majflt));
}

/* Its io (/proc/PID/io's counters) into proc and pt. */
static void proc_io(json_t *proc, struct gp_pview *pt, const struct gp_io *io)
{
	json_object_set_new(proc, "io", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"rchar", (json_int_t)io->rchar, "wchar", (json_int_t)io->wchar,
		"syscr", (json_int_t)io->syscr, "syscw", (json_int_t)io->syscw,
		"read_bytes", (json_int_t)io->read_bytes, "write_bytes", (json_int_t)io->write_bytes,
		"cancelled_write_bytes", (json_int_t)io->cancelled_write_bytes));
	pt->io_rchar = io->rchar;
	pt->io_wchar = io->wchar;
	pt->io_read_bytes = io->read_bytes;
	pt->io_write_bytes = io->write_bytes;
	pt->io_syscr = io->syscr;
	pt->io_syscw = io->syscw;
	pt->have_io = true;
}

/* /proc/PID/io, where it can be read. */
static void proc_io_file(struct gp_sampler *s, json_t *proc, struct gp_pview *pt)
{
	struct gp_io io;
	if (s->fd[P_IO] >= 0 && gp_pread_all(s->fd[P_IO], s->buf, sizeof s->buf) > 0
	    && gp_parse_io(s->buf, &io))
		proc_io(proc, pt, &io);
}

/* On the BPF path, after the pass: the process's sums from it, or, when
 * this sample's pass failed, from /proc/PID/stat and io as on the /proc
 * path (process_files wrote the leader's own as placeholders: the keys
 * keep their order). */
static void process_sums(struct gp_sampler *s, json_t *proc, struct gp_pview *pt)
{
	struct gp_tasks_proc ps;
	struct gp_stat st;
	if (gp_tasks_proc_sums(s->tasks, &ps)) {
		proc_times(s, proc, pt, ps.utime, ps.stime, ps.minflt, ps.majflt);
		if (ps.have_io)
			proc_io(proc, pt, &ps.io);
		else
			proc_io_file(s, proc, pt);
		return;
	}
	if (gp_pread_all(s->fd[P_STAT], s->buf, sizeof s->buf) > 0 && gp_parse_stat(s->buf, &st))
		proc_times(s, proc, pt, st.utime, st.stime, st.minflt, st.majflt);
	proc_io_file(s, proc, pt);
}

static enum gp_sample_rc process_files(struct gp_sampler *s, json_t *proc,
				       struct gp_pview *pt, const char **why)
{
	struct gp_stat st;
	bool sums = s->fd[P_LSTAT] >= 0; /* the BPF path: process_sums after the pass */
	if (gp_pread_all(s->fd[sums ? P_LSTAT : P_STAT], s->buf, sizeof s->buf) <= 0
	    || !gp_parse_stat(s->buf, &st)) {
		*why = "exited";
		return GP_SAMPLE_GONE;
	}
	if (st.starttime != s->starttime) {
		*why = "pid reused";
		return GP_SAMPLE_GONE;
	}
	/* A zombie leader whose other threads still run (main called
	 * pthread_exit) is alive: only a zombie with no thread left has
	 * exited.  Status' Threads counts the live ones. */
	bool zombie = st.state == 'Z' || st.state == 'X';
	pt->state = st.state;
	pt->ppid = s->ppid = st.ppid;
	gp_strlcpy(s->comm, st.comm, sizeof s->comm);
	char state[2] = { st.state, 0 };
	json_object_set_new(proc, "state", json_string(state));
	proc_times(s, proc, pt, st.utime, st.stime, st.minflt, st.majflt);
	/* Reaped children's CPU: grows when a child is reaped, seen or not
	 * (model/point.c uses it to tell a reap's io from the process's own). */
	pt->children_cpu = (double)(st.cutime + st.cstime) / s->clk_tck;
	json_object_set_new(proc, "children_cpu", json_real(pt->children_cpu));

	struct gp_status_mem m;
	bool have_status = gp_pread_all(s->fd[P_STATUS], s->buf, sizeof s->buf) > 0
			   && gp_parse_status_mem(s->buf, &m);
	if (zombie && (!have_status || !(m.have & GP_HAVE_THREADS) || m.threads <= 1)) {
		*why = "exited"; /* not yet reaped by its parent */
		return GP_SAMPLE_GONE;
	}
	/* A process in exit_mm has no address space left: status loses its
	 * Vm lines before the state turns Z.  Sampled then, every memory
	 * and GPU figure reads 0 (a 12 GiB load on the H200 read GPU 0, RSS
	 * 0 at its last sample), which is the exit, not the program
	 * releasing what it loaded. */
	if (have_status && s->had_mm && !(m.have & GP_HAVE_VM_SIZE)) {
		*why = "exited";
		return GP_SAMPLE_GONE;
	}
	if (have_status && (m.have & GP_HAVE_VM_SIZE))
		s->had_mm = true;
	if (have_status) {
		for (size_t i = 0; i < GP_STATUS_MEM_NFIELDS; i++) {
			const struct gp_status_mem_field *f = &gp_status_mem_fields[i];
			if (m.have & f->bit)
				json_object_set_new(proc, f->json_key,
						    json_integer((json_int_t)gp_status_mem_value(&m, f)));
		}
		if (m.have & GP_HAVE_THREADS)
			json_object_set_new(proc, "threads", json_integer(m.threads));
		pt->rss_file = m.rss_file > s->rss_file_ours ? m.rss_file - s->rss_file_ours : 0;
		if (s->rss_file_ours)
			json_object_set_new(proc, "rss_file_ours", json_integer((json_int_t)s->rss_file_ours));
		pt->rss_anon = m.rss_anon;
		pt->rss_shmem = m.rss_shmem;
		pt->vm_pin = m.vm_pin;
		pt->vm_lck = m.vm_lck;
	}
	if (!sums)
		proc_io_file(s, proc, pt);
	return GP_SAMPLE_OK;
}

/* What the process moves through its sockets and what waits in them
 * (sockets.h): proc.sock, written whenever one of its sockets was found. */
static void sockets_part(struct gp_sampler *s, double t, json_t *proc, struct gp_pview *pv)
{
	struct gp_sock_totals st;
	if (!gp_sockproc_read(s->sock, t, &st))
		return;
	json_t *sock = json_pack("{s:I,s:I,s:i,s:i,s:i,s:I,s:I}",
		"tx", (json_int_t)st.tx, "rx", (json_int_t)st.rx, "conns", (int)st.conns,
		"listen", (int)st.listeners, "backlog", (int)st.backlog,
		"unread", (json_int_t)st.unread, "unsent", (json_int_t)st.unsent);
	if (st.io_tx || st.io_rx) {
		json_object_set_new(sock, "io_tx", json_integer((json_int_t)st.io_tx));
		json_object_set_new(sock, "io_rx", json_integer((json_int_t)st.io_rx));
		json_object_set_new(sock, "io_writes", json_integer((json_int_t)st.io_writes));
		json_object_set_new(sock, "io_reads", json_integer((json_int_t)st.io_reads));
	}
	if (st.pending) {
		json_object_set_new(sock, "pending", json_integer(st.pending));
		json_object_set_new(sock, "pending_s", json_real(st.pending_s));
	}
	if (st.conn_refused || st.conn_failed)
		json_object_set_new(sock, "connects", json_pack("{s:I,s:I,s:I,s:i,s:s}",
			"refused", (json_int_t)st.conn_refused, "failed", (json_int_t)st.conn_failed,
			"ok", (json_int_t)st.conn_ok, "errno", st.conn_errno, "to", st.conn_to));
	json_object_set_new(proc, "sock", sock);
	pv->have_sock = true;
	pv->sock_tx = st.tx;
	pv->sock_rx = st.rx;
	pv->sock_io_tx = st.io_tx;
	pv->sock_io_rx = st.io_rx;
	pv->sock_io_writes = st.io_writes;
	pv->sock_io_reads = st.io_reads;
	pv->sock_backlog = st.backlog;
	pv->sock_unread = st.unread;
	pv->sock_pending = st.pending;
	pv->sock_pending_s = st.pending_s;
	pv->conn_failed = st.conn_refused + st.conn_failed;
	pv->conn_errno = st.conn_errno;
	gp_strlcpy(s->conn_to, st.conn_to, sizeof s->conn_to);
	pv->conn_to = s->conn_to;
}

/* Non-blocking locks the process asked for and was refused, where the
 * kernel counts them (sockflow.h): a busy handler (SQLite's) polls a
 * lock another process holds, sleeping between tries -- no thread waits
 * in the lock, so no wait edge names the holder; /proc/locks does.
 * proc.lock_tries, written once one was refused. */
static void lock_tries_part(struct gp_sampler *s, json_t *proc, struct gp_pview *pv)
{
	struct gp_lockrefused lr;
	if (!gp_sockflow_locks(gp_sockflow_get(), s->o.pid, &lr))
		return;
	s->lock_holder = gp_lock_holder(s->o.root, lr.major, lr.minor, lr.ino, s->o.pid,
					s->lock_holder_comm, sizeof s->lock_holder_comm);
	if (!s->lock_holder)
		s->lock_holder_comm[0] = 0;
	char link[64];
	snprintf(link, sizeof link, "proc/%d/fd/%d", s->o.pid, lr.fd);
	ssize_t len = readlinkat(s->o.root->dirfd, link, s->lock_file, sizeof s->lock_file - 1);
	s->lock_file[len > 0 ? len : 0] = 0;
	json_t *lt = json_pack("{s:I, s:s, s:s}", "refused", (json_int_t)lr.refused,
			       "how", lr.is_flock ? "flock" : "fcntl", "file", s->lock_file);
	if (s->lock_holder)
		json_object_set_new(lt, "holder", json_pack("{s:i, s:s}", "pid", s->lock_holder,
							    "comm", s->lock_holder_comm));
	json_object_set_new(proc, "lock_tries", lt);
	pv->lock_refused = lr.refused;
	pv->lock_holder = s->lock_holder;
	pv->lock_holder_comm = s->lock_holder_comm;
	pv->lock_file = s->lock_file;
}

/* The largest file mapped by the process (summed over its mappings):
 * when RssFile climbs, this is what is being paged in, and its size
 * gives the verdict an ETA.  /proc/PID/maps costs ~1 us a mapping, so it
 * is read again only when RssFile has grown by 16 MiB since. */
static void largest_file_mapping(struct gp_sampler *s, json_t *proc, struct gp_pview *pt)
{
	if (s->maps_checked && pt->rss_file < s->maps_rss + (16u << 20)) {
		pt->map_bytes = s->map_bytes;
		if (s->map_bytes)
			json_object_set_new(proc, "largest_file_mapping", json_pack("{s:s, s:I}",
				"path", s->map_path, "bytes", (json_int_t)s->map_bytes));
		return;
	}
	s->maps_checked = true;
	s->maps_rss = pt->rss_file;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", s->o.pid);
	char *text = gp_slurp(s->o.root, path, NULL);
	if (!text)
		return;
	char best[sizeof s->map_path] = "";
	uint64_t best_bytes = 0, cur_bytes = 0;
	char cur[sizeof s->map_path] = "";
	for (char *line = text; line && *line;) {
		char *eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		unsigned long long lo, hi, ino;
		int name_at = 0;
		/* Only a file's line names a path: the rest (a thread's stack,
		 * the heap: 20 000 of 20 030 lines of a 10 001-thread process)
		 * are passed over without sscanf (3 % of a 1 s trace's CPU
		 * there, perf 2026-12-06). */
		if (strchr(line, '/')
		    && sscanf(line, "%llx-%llx %*s %*s %*s %llu %n", &lo, &hi, &ino, &name_at) == 3
		    && ino != 0 && name_at > 0 && line[name_at] == '/' && hi > lo) {
			const char *name = line + name_at;
			/* Mappings of one file are adjacent in maps. */
			if (strcmp(name, cur) != 0) {
				gp_strlcpy(cur, name, sizeof cur);
				cur_bytes = 0;
			}
			cur_bytes += hi - lo;
			if (cur_bytes > best_bytes) {
				best_bytes = cur_bytes;
				gp_strlcpy(best, cur, sizeof best);
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	free(text);
	s->map_bytes = best_bytes;
	memcpy(s->map_path, best, sizeof best);
	pt->map_bytes = best_bytes;
	if (best_bytes)
		json_object_set_new(proc, "largest_file_mapping", json_pack("{s:s, s:I}",
			"path", best, "bytes", (json_int_t)best_bytes));
}

/* An unchanged thread's edge, carried over (no fd link or memory read
 * again) -- except an edge that names an owner: a mutex changes hands
 * and a joined thread exits while the waiter sleeps on, never running,
 * and its old owner then closes cycles that are not there (issue 27:
 * holder -> queued-b on M2 and a stale queued-b -> holder on M1 was
 * "deadlock ... high", while M1's owner was a third thread).  The owner
 * word is one process_vm_readv (waitedge.c), not a run of the thread:
 * read it fresh every sample.  True when it moved (*on is the fresh edge,
 * to be written); false with *on the kept one. */
static bool owner_moved(struct gp_sampler *s, const struct gp_thread *th, enum gp_wait wait,
			struct gp_wait_edge *on)
{
	*on = th->edge_mem ? *th->edge_mem : (struct gp_wait_edge){ 0 };
	/* Only edges that name an owner: a futex with none (a condition, a
	 * pool's queue) can only miss an edge, not invent one, and reading
	 * each of 10 000 idle pool threads' words costs a stat of its
	 * candidate owner per sample. */
	if (on->how != GP_EDGE_MUTEX && on->how != GP_EDGE_JOIN)
		return false;
	struct gp_wait_edge fresh;
	gp_waitedge_probe(s->edges, th, wait, &fresh);
	if (fresh.how == on->how && fresh.id == on->id)
		return false;
	*on = fresh;
	return true;
}

/* The threads array (streamed) and the thread views of this sample. */
static int threads_part(struct gp_sampler *s, struct gp_thread *th, size_t n, double dt)
{
	if (!gp_grow(&s->tv, &s->tvcap, n, sizeof *s->tv, 16))
		return -1;
	struct gp_jsonw *w = &s->jw;
	gp_jw_reset(w);
	gp_jw_arr_begin(w);
	gp_waitprobe_reset(s->waits);
	gp_waitedge_reset(s->edges, s->ppid);
	struct gp_same_run run = { 0 };
	bool whole = s->keyframe;
	s->keyframe = false;
	for (size_t i = 0; i < n; i++) {
		double cpu = 0, sys = 0;
		if (!th[i].is_new && dt > 0)
			gp_thread_cpu(&th[i], s->clk_tck, dt, &cpu, &sys);
		th[i].cpu_pct = (float)cpu;
		/* Not run since its last reading: it waits for what it waited
		 * for then, on whom it waited then (no fdinfo, fd link or
		 * memory read again). */
		char state = th[i].st.state;
		enum gp_wait wait;
		if (th[i].unchanged && th[i].wait_mem && *th[i].wait_mem && state != 'Z' && state != 'X')
			wait = (enum gp_wait)*th[i].wait_mem;
		else
			wait = gp_waitprobe_classify(s->waits, &th[i]);
		struct gp_wait_edge on;
		if (th[i].unchanged && dt > 0 && !whole && !owner_moved(s, &th[i], wait, &on)) {
			gp_same_add(w, &run, &th[i]);
		} else {
			gp_same_flush(w, &run);
			if (!th[i].unchanged || dt <= 0 || whole)
				gp_waitedge_probe(s->edges, &th[i], wait, &on);
			if (th[i].edge_mem)
				*th[i].edge_mem = on;
			gp_threadrec_write(w, &th[i], s->clk_tck, dt, wait, &on, whole);
		}
		struct gp_tview *v = &s->tv[i];
		memset(v, 0, sizeof *v);
		v->tid = th[i].tid;
		v->comm = th[i].st.comm;
		v->state = th[i].st.state;
		v->wchan = th[i].wchan;
		v->have_wchan = th[i].have_wchan;
		v->have_syscall = th[i].sc.kind != GP_SC_UNKNOWN;
		v->have_kstack = th[i].kstack != NULL;
		v->have_cpu = !th[i].is_new && dt > 0;
		v->cpu_pct = cpu;
		v->sys_pct = sys;
		v->sc_nr = th[i].sc.kind == GP_SC_IN ? th[i].sc.nr
			   : th[i].sc.kind == GP_SC_USER ? -1 : -2;
		v->sc_arg0 = th[i].sc.args[0];
		v->sc_arg1 = th[i].sc.args[1];
		v->vcsw = th[i].vcsw;
		v->nvcsw = th[i].nvcsw;
		v->is_new = th[i].is_new;
		v->wait = wait;
		v->on = on;
		if (th[i].kstack)
			s->tot.kstacks_read++;
	}
	gp_same_flush(w, &run);
	gp_jw_arr_end(w);
	return 0;
}

/* GPU activity beside the memory: sample.gpu.activity (gpu/gpuact.h),
 * its absences said once (when they change). */
static void gpu_activity(struct gp_sampler *s, double t, json_t **gpup, struct gp_pview *pv)
{
	struct gp_gpu_activity a;
	/* At most once a second: NVML's per-process call costs 1.5 ms of CPU
	 * on the H200 (bench/results/2026-12-03-gpu-readers.md), and its
	 * last-seen timestamp makes each read cover the time since the last
	 * one, so a faster --interval loses only resolution. */
	if (s->act_read && t - s->act_t < 0.95)
		return;
	if (!s->act || gp_gpuact_read(s->act, t, *gpup, &a) != 0)
		return;
	s->act_read = true;
	s->act_t = t;
	if (!*gpup)
		*gpup = json_object();
	json_t *act = gp_gpuact_json(&a, a.absent_changed);
	json_object_set_new(*gpup, "activity", act);
	/* Judged from the very object written, as report judges the file. */
	gp_gpuact_json_work(act, &pv->gw);
	s->gpu_gw = pv->gw.work;
	pv->gpu_act_known = gp_gpuact_known(&a);
	pv->gpu_act_busy = gp_gpuact_busy(&a, GP_GPU_BUSY_PCT);
	pv->gpu_act_pct = gp_gpuact_pct(&a);
}

static void gpu_part(struct gp_sampler *s, double t, json_t **gpup, struct gp_pview *pv)
{
	*gpup = NULL;
	s->gpu_gw = GP_GW_UNKNOWN;
	s->gpu_ctx = false;
	/* One tick of the trace's GPU readers: every process of this sample
	 * passes the same t, and the device-wide answers are read once. */
	if (s->house)
		gp_gpu_house_tick(s->house, t);
	if (!s->gpu) {
		gpu_activity(s, t, gpup, pv);
		return;
	}
	struct gp_gpu_totals gt;
	memset(&gt, 0, sizeof gt);
	if (gp_gpu_read(s->gpu, gpup, &gt) != 0)
		*gpup = NULL;
	gpu_activity(s, t, gpup, pv);
	pv->gpu_gtt = gt.gtt_bytes;
	pv->gpu_vram = gt.vram_bytes;
	pv->gpu_engine_ns = gt.engine_ns;
	/* One precedence for the process's GPU memory, live and on replay
	 * (model/load.c): DRM, else KFD, else NVML. */
	if (gt.drm_seen) {
		pv->gpu_bytes = gt.drm_total_bytes;
		pv->gpu_have |= GP_PT_GPU_DRM;
	} else if (gt.kfd_seen) {
		pv->gpu_bytes = gt.kfd_vram_bytes;
	} else if (gt.nvml_seen) {
		pv->gpu_bytes = gt.nvml_bytes;
	}
	if (gt.kfd_seen)
		pv->gpu_have |= GP_PT_GPU_KFD;
	if (gt.nvml_seen)
		pv->gpu_have |= GP_PT_GPU_NVML;
	/* What the loader reads back from this object (model/proctab.h) */
	s->gpu_ctx = gp_gpu_json_ctx(*gpup);
}

enum gp_sample_rc gp_sampler_take_part(struct gp_sampler *s, double t, struct gp_proc_part *part,
				       const char **why)
{
	memset(part, 0, sizeof *part);
	*why = NULL;
	struct gp_pview *pv = &part->pv;
	pv->pid = s->o.pid;
	pv->followed = true;
	json_t *proc = json_object();
	enum gp_sample_rc rc = process_files(s, proc, pv, why);
	if (rc != GP_SAMPLE_OK) {
		json_decref(proc);
		return rc;
	}
	pv->comm = s->comm;
	double dt = s->have_prev ? t - s->prev_t : 0;
	largest_file_mapping(s, proc, pv);
	sockets_part(s, t, proc, pv);
	lock_tries_part(s, proc, pv);

	struct gp_thread *th;
	size_t n;
	struct gp_tasks_stats ts;
	if (gp_tasks_sample(s->tasks, &th, &n, &ts) < 0 || threads_part(s, th, n, dt) < 0) {
		json_decref(proc);
		*why = "exited";
		return GP_SAMPLE_GONE;
	}
	if (s->fd[P_LSTAT] >= 0)
		process_sums(s, proc, pv);
	if (ts.vanished)
		json_object_set_new(proc, "threads_vanished", json_integer(ts.vanished));
	if (ts.ended_tid && s->tot.samples)
		json_object_set_new(proc, "thread_ended", json_pack("{s:i, s:s}", "tid", ts.ended_tid,
			"comm", ts.ended_comm));
	if (ts.reused)
		json_object_set_new(proc, "tids_reused", json_integer(ts.reused));
	pv->threads_created = s->tot.samples ? ts.created : 0;
	pv->threads_exited = ts.exited;
	pv->threads_vanished = ts.vanished;
	if (ts.ended_tid && s->tot.samples) {
		gp_strlcpy(s->ended_comm, ts.ended_comm, sizeof s->ended_comm);
		pv->ended_tid = ts.ended_tid;
		pv->ended_comm = s->ended_comm;
	}
	s->tot.kstack_denied = ts.kstack_denied;
	s->tot.syscall_denied = ts.syscall_denied;
	s->last_threads = th;
	s->nlast_threads = n;
	s->tot.thread_samples += n;
	s->tot.vanished += ts.vanished;
	s->tot.reused += ts.reused;
	s->tot.created += s->tot.samples ? ts.created : 0;
	s->tot.exited += ts.exited;
	gpu_part(s, t, &part->gpu, pv);
	part->proc = proc;
	part->tv = s->tv;
	part->ntv = n;
	s->prev_t = t;
	s->have_prev = true;
	s->tot.samples++;
	return GP_SAMPLE_OK;
}

void gp_sampler_keyframe(struct gp_sampler *s)
{
	s->keyframe = true;
}

void gp_sampler_prime(struct gp_sampler *s)
{
	if (s->tot.samples == 0)
		(void)gp_tasks_prime(s->tasks); /* a failure: the first sample reads it all */
}

json_t *gp_sampler_vm(struct gp_sys_reader *sys, struct gp_point *pt, bool whole)
{
	struct gp_sys_compact sc;
	json_t *vm = gp_sys_read_delta(sys, &sc, whole);
	pt->sys_dirtied = sc.nr_dirtied;
	pt->sys_written = sc.nr_written;
	pt->sys_pgsteal_file = sc.pgsteal_file;
	if (sc.have_dirtied && sc.have_written)
		pt->have |= GP_PT_SYS_WB;
	if (sc.have_pgsteal_file)
		pt->have |= GP_PT_SYS_RECLAIM;
	return vm;
}

enum gp_sample_rc gp_sampler_take(struct gp_sampler *s, double t, json_t **linep,
				  struct gp_point *pt, const char **why)
{
	*linep = NULL;
	struct gp_proc_part part;
	bool first = s->tot.samples == 0, whole = s->keyframe;
	enum gp_sample_rc rc = gp_sampler_take_part(s, t, &part, why);
	if (rc != GP_SAMPLE_OK)
		return rc;
	gp_point_begin(s->pb, pt, t, first);
	gp_point_add(s->pb, pt, &part.pv, part.tv, part.ntv);
	gp_point_end(s->pb, pt);
	json_t *line = json_object();
	json_object_set_new(line, "type", json_string("sample"));
	json_object_set_new(line, "t", json_real(t));
	json_object_set_new(line, "proc", part.proc);
	if (part.gpu)
		json_object_set_new(line, "gpu", part.gpu);
	if (s->sys)
		json_object_set_new(line, "vm", gp_sampler_vm(s->sys, pt, whole));
	*linep = line;
	return GP_SAMPLE_OK;
}
