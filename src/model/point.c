#include "config.h"
#include "point.h"
#include "satmath.h"
#include "grow.h"
#include "parse.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(GP_WAIT_COUNT <= sizeof ((struct gp_point *)0)->wait_n
	       / sizeof ((struct gp_point *)0)->wait_n[0], "gp_point.wait_n too small");

enum { IO_RCHAR, IO_WCHAR, IO_READ, IO_WRITE, IO_SYSCR, IO_SYSCW, IO_N };

struct proc_entry {
	int pid, ppid;
	bool followed, seen, has_io;
	char comm[16];
	uint64_t whole[IO_N];      /* /proc/PID/io as last read */
	uint64_t offset[IO_N];     /* inherited from reaped children */
	uint64_t own_out;          /* own rchar + wchar (+ socket bytes) at the previous sample */
	uint64_t sock[4];          /* its socket bytes out and in, failed connects, refused locks, as last read */
	uint64_t sockio[4];        /* of its socket bytes, those its write()/read() moved, as last
				      read: rx and tx bytes, read and write calls */
	double utime, stime;       /* CPU seconds as last read */
	double children_cpu;       /* reaped children's, as last read */
	bool have_prev;
	uint32_t nthreads;         /* its threads, as last read */
};

enum { SLOTS = 32 };

struct gp_point_builder {
	struct proc_entry *e;
	size_t n, cap;
	uint64_t gone[IO_N];       /* own io of followed processes that exited */
	uint64_t tree_io[IO_N];    /* the last point's tree io: a floor for the next */
	uint64_t gone_sock[4];     /* socket bytes and failed connects of followed processes that exited */
	uint64_t tree_sock[4];     /* the last point's: a floor for the next */
	double gone_utime, gone_stime; /* their CPU time */
	double prev_t, prev_cpu;
	bool have_prev_cpu;
	bool first;
	/* this sample's tallies */
	double best, second;
	char wname[SLOTS][32];
	uint32_t wcount[SLOTS];
	size_t wused;
	int64_t scnr[SLOTS];
	uint64_t sca0[SLOTS], sca1[SLOTS];
	uint32_t sccount[SLOTS];
	bool scsame[SLOTS];
	size_t scused;
	uint32_t inside_best, outside_best;
	/* the wait-for graph's nodes of this sample (model/waitgraph.h);
	 * their strings are the views', valid until gp_point_end */
	struct gp_wg_node *nodes;
	size_t nnodes, capnodes;
	int root;
	/* the previous sample's cycle, if any: members and what each waited on */
	uint8_t last_ncycle;
	int32_t last_cyc_tid[GP_WG_MEMBERS], last_cyc_on[GP_WG_MEMBERS];
};

struct gp_point_builder *gp_point_builder_new(void)
{
	return calloc(1, sizeof(struct gp_point_builder));
}

void gp_point_builder_free(struct gp_point_builder *b)
{
	if (!b)
		return;
	free(b->e);
	free(b->nodes);
	free(b);
}

static struct proc_entry *entry(struct gp_point_builder *b, int pid, bool create)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->e[i].pid == pid)
			return &b->e[i];
	if (!create)
		return NULL;
	if (!gp_grow(&b->e, &b->cap, b->n + 1, sizeof *b->e, 16))
		return NULL;
	b->e[b->n] = (struct proc_entry){ .pid = pid };
	return &b->e[b->n++];
}

void gp_point_begin(struct gp_point_builder *b, struct gp_point *pt, double t, bool first)
{
	memset(pt, 0, sizeof *pt);
	pt->t = t;
	pt->state = '?';
	pt->common_sc_nr = -2;
	pt->top_sc_nr = -2;
	b->first = first;
	b->best = b->second = 0;
	b->wused = b->scused = 0;
	b->inside_best = b->outside_best = 0;
	b->nnodes = 0;
	b->root = 0;
	for (size_t i = 0; i < b->n; i++)
		b->e[i].seen = false;
}

static void tally_wait(struct gp_point_builder *b, const struct gp_tview *th)
{
	if (th->wchan && th->wchan[0]) {
		size_t k = 0;
		while (k < b->wused && strcmp(b->wname[k], th->wchan) != 0)
			k++;
		if (k == b->wused && b->wused < SLOTS) {
			gp_strlcpy(b->wname[k], th->wchan, sizeof b->wname[k]);
			b->wcount[b->wused++] = 0;
		}
		if (k < b->wused)
			b->wcount[k]++;
	}
	if (th->sc_nr >= 0) {
		/* Grouped by syscall and operation (a futex's op, a read's fd
		 * is arg0): same_arg0 says whether one address or fd holds
		 * them all, so "18 in futex(0x...)" is never said of 18
		 * different words. */
		size_t k = 0;
		while (k < b->scused && !(b->scnr[k] == th->sc_nr && b->sca1[k] == th->sc_arg1))
			k++;
		if (k == b->scused && b->scused < SLOTS) {
			b->scnr[k] = th->sc_nr;
			b->sca0[k] = th->sc_arg0;
			b->sca1[k] = th->sc_arg1;
			b->scsame[k] = true;
			b->sccount[b->scused++] = 0;
		}
		if (k < b->scused) {
			b->sccount[k]++;
			if (b->sca0[k] != th->sc_arg0)
				b->scsame[k] = false;
		}
	}
}

/* The second busiest thread of the point. */
static void set_top2(struct gp_point *pt, int tid, float cpu, float sys, int pid,
		     const char *comm, const char *pcomm)
{
	pt->top2_tid = tid;
	pt->top2_cpu_pct = cpu;
	pt->top2_sys_pct = sys;
	pt->top2_pid = pid;
	gp_strlcpy(pt->top2_comm, comm ? comm : "", sizeof pt->top2_comm);
	gp_strlcpy(pt->top2_pcomm, pcomm ? pcomm : "", sizeof pt->top2_pcomm);
}

static void tally_top(struct gp_point_builder *b, struct gp_point *pt, const struct gp_pview *p,
		      const struct gp_tview *th)
{
	if (!th->have_cpu || th->cpu_pct <= 0)
		return;
	double c = th->cpu_pct;
	if (c > b->best) {
		/* the old first becomes the second */
		b->second = b->best;
		set_top2(pt, pt->top_tid, pt->top_cpu_pct, pt->top_sys_pct, pt->top_pid,
			 pt->top_comm, pt->top_pcomm);
		b->best = c;
		pt->top_tid = th->tid;
		pt->top_cpu_pct = (float)c;
		pt->top_sys_pct = (float)th->sys_pct;
		pt->top_pid = p->pid;
		gp_strlcpy(pt->top_comm, th->comm ? th->comm : "", sizeof pt->top_comm);
		gp_strlcpy(pt->top_pcomm, p->comm ? p->comm : "", sizeof pt->top_pcomm);
		gp_strlcpy(pt->top_wchan, th->wchan ? th->wchan : "", sizeof pt->top_wchan);
		pt->top_sc_nr = th->sc_nr;
		pt->top_sc_arg0 = th->sc_arg0;
		pt->top_sc_arg1 = th->sc_arg1;
	} else if (c > b->second) {
		b->second = c;
		set_top2(pt, th->tid, (float)c, (float)th->sys_pct, p->pid, th->comm, p->comm);
	}
}

/* Remember process p for the next point: its io (less what a reaped
 * child owes it) and CPU, and count it when it is new in the tree. */
static bool remember_proc(struct gp_point_builder *b, struct gp_point *pt, const struct gp_pview *p,
			  size_t nthreads)
{
	struct proc_entry *e = entry(b, p->pid, true);
	if (!e)
		return false;
	bool created = !e->seen && !e->have_prev && !b->first && p->followed && b->n > 1;
	if (created)
		pt->procs_created++;
	e->nthreads = (uint32_t)nthreads;
	e->seen = true;
	e->ppid = p->ppid;
	e->followed = p->followed;
	/* Not following its children (--no-children), a process that
	 * reaped one in this interval (its children's CPU grew) may owe
	 * any io jump to it: the kernel adds the child's io at the reap.
	 * Count none of this interval's io as its own. */
	/* A socket's bytes count once, as the socket's (sockets.c decides
	 * which are output: a traced client's requests to a traced server
	 * are not).  Those moved by write()/read() are in rchar/wchar too,
	 * so they leave them here, their calls syscr/syscw (a small write's
	 * bytes per call are judged on the rest: steps.c); the counts only
	 * grow. */
	if (p->have_sock) {
		e->sockio[0] = p->sock_io_rx > e->sockio[0] ? p->sock_io_rx : e->sockio[0];
		e->sockio[1] = p->sock_io_tx > e->sockio[1] ? p->sock_io_tx : e->sockio[1];
		e->sockio[2] = p->sock_io_reads > e->sockio[2] ? p->sock_io_reads : e->sockio[2];
		e->sockio[3] = p->sock_io_writes > e->sockio[3] ? p->sock_io_writes : e->sockio[3];
	}
	const uint64_t now[IO_N] = { gp_sat_sub(p->io_rchar, e->sockio[0]),
		gp_sat_sub(p->io_wchar, e->sockio[1]), p->io_read_bytes,
		p->io_write_bytes, gp_sat_sub(p->io_syscr, e->sockio[2]),
		gp_sat_sub(p->io_syscw, e->sockio[3]) };   /* in IO_* order */
	if (p->have_io && e->have_prev && !p->children_followed
	    && p->children_cpu > e->children_cpu + 1e-9) {
		for (int k = 0; k < IO_N; k++)
			if (now[k] > e->whole[k])
				e->offset[k] += now[k] - e->whole[k];
	}
	e->children_cpu = p->children_cpu;
	e->has_io = p->have_io;
	e->utime = p->utime;
	e->stime = p->stime;
	gp_strlcpy(e->comm, p->comm ? p->comm : "", sizeof e->comm);
	if (p->have_io)
		memcpy(e->whole, now, sizeof now);
	/* Socket bytes are the sockets', not the process's io: a reap adds
	 * nothing to the parent's, and they only grow (sockets.c). */
	if (p->have_sock) {
		e->sock[0] = p->sock_tx > e->sock[0] ? p->sock_tx : e->sock[0];
		e->sock[1] = p->sock_rx > e->sock[1] ? p->sock_rx : e->sock[1];
		e->sock[2] = p->conn_failed > e->sock[2] ? p->conn_failed : e->sock[2];
	}
	e->sock[3] = p->lock_refused > e->sock[3] ? p->lock_refused : e->sock[3];
	return created;
}

/* Process p's own figures into the point's totals.  created: p is new
 * in the tree: its threads are threads created in the tree (a sampler's
 * first look at a process counts none, having no earlier one), so that
 * the tree's "threads 1 -> 3" says "2 created" (issue 20). */
static void add_proc_totals(struct gp_point *pt, const struct gp_pview *p, size_t n, bool created)
{
	pt->state = p->state;
	pt->procs++;
	pt->utime += p->utime;
	pt->stime += p->stime;
	pt->minflt += p->minflt;
	pt->majflt += p->majflt;
	pt->rss_file += p->rss_file;
	pt->rss_anon += p->rss_anon;
	pt->rss_shmem += p->rss_shmem;
	pt->vm_pin += p->vm_pin;
	pt->vm_lck += p->vm_lck;
	if (p->map_bytes > pt->map_bytes)
		pt->map_bytes = p->map_bytes;
	pt->gpu_bytes += p->gpu_bytes;
	pt->gpu_gtt += p->gpu_gtt;
	pt->gpu_vram += p->gpu_vram;
	pt->gpu_engine_ns += p->gpu_engine_ns;
	pt->have |= p->gpu_have;
	if (!pt->gw_pid || gp_gpu_work_more(&pt->gw, &p->gw)) {
		if (p->gw.work != GP_GW_UNKNOWN || !pt->gw_pid) {
			pt->gw = p->gw;
			pt->gw_pid = p->gw.work != GP_GW_UNKNOWN ? p->pid : 0;
			gp_strlcpy(pt->gw_comm, p->comm ? p->comm : "", sizeof pt->gw_comm);
		}
	}
	if (p->gpu_act_known) {
		pt->gpu_act_known = true;
		if (p->gpu_act_busy)
			pt->gpu_act_busy = true;
		if (p->gpu_act_pct >= pt->gpu_act_pct && (p->gpu_act_busy || !pt->gpu_act_pid)) {
			pt->gpu_act_pct = (float)p->gpu_act_pct;
			pt->gpu_act_pid = p->pid;
			gp_strlcpy(pt->gpu_act_comm, p->comm ? p->comm : "", sizeof pt->gpu_act_comm);
		}
	}
	if (p->have_io)
		pt->have |= GP_PT_IO;
	if (p->have_sock) {
		pt->have |= GP_PT_SOCK;
		/* where most input waits: the server whose loop should take it */
		uint64_t waiting = (uint64_t)p->sock_backlog + p->sock_pending + p->sock_unread;
		if (waiting && waiting > (uint64_t)pt->sock_backlog + pt->sock_pending + pt->sock_unread)
			pt->sock_wait_pid = p->pid;
		pt->sock_backlog += p->sock_backlog;
		pt->sock_unread += p->sock_unread;
		pt->sock_pending += p->sock_pending;
		if (p->sock_pending_s > pt->sock_pending_s)
			pt->sock_pending_s = (float)p->sock_pending_s;
		/* the process whose connects fail most names what is retried */
		if (p->conn_failed > pt->conn_fail_most) {
			pt->conn_fail_most = p->conn_failed;
			pt->conn_fail_pid = p->pid;
			pt->conn_errno = p->conn_errno;
			gp_strlcpy(pt->conn_to, p->conn_to ? p->conn_to : "", sizeof pt->conn_to);
			gp_strlcpy(pt->conn_comm, p->comm ? p->comm : "", sizeof pt->conn_comm);
		}
	}
	if (p->lock_refused > pt->lock_refused_most) {
		pt->lock_refused_most = p->lock_refused;
		pt->lock_pid = p->pid;
		pt->lock_holder = p->lock_holder;
		gp_strlcpy(pt->lock_comm, p->comm ? p->comm : "", sizeof pt->lock_comm);
		gp_strlcpy(pt->lock_holder_comm, p->lock_holder_comm ? p->lock_holder_comm : "",
			   sizeof pt->lock_holder_comm);
		gp_strlcpy(pt->lock_file, p->lock_file ? p->lock_file : "", sizeof pt->lock_file);
	}
	pt->threads_created += created ? (uint32_t)n : p->threads_created;
	if (!created)
		pt->threads_spawned += p->threads_created;
	pt->threads_exited += p->threads_exited;
	pt->threads_vanished += p->threads_vanished;
	if (p->ended_tid && !pt->ended_tid) {
		pt->ended_tid = p->ended_tid;
		pt->ended_pid = p->pid;
		gp_strlcpy(pt->ended_comm, p->ended_comm ? p->ended_comm : "?", sizeof pt->ended_comm);
	}
	pt->threads += (uint32_t)n;
}

static void add_node(struct gp_point_builder *b, const struct gp_pview *p, const struct gp_tview *t)
{
	if (!gp_grow(&b->nodes, &b->capnodes, b->nnodes + 1, sizeof *b->nodes, 64))
		return;
	b->nodes[b->nnodes++] = (struct gp_wg_node){
		.pid = p->pid, .ppid = p->ppid, .tid = t->tid, .comm = t->comm, .pcomm = p->comm,
		.state = t->state, .wait = (uint8_t)t->wait, .on = t->on,
	};
	b->root = p->pid; /* the root is added last */
}

/* Process p's threads: states, waits, the busiest, and which process
 * waits most inside and outside. */
static void add_threads(struct gp_point_builder *b, struct gp_point *pt, const struct gp_pview *p,
			const struct gp_tview *th, size_t n)
{
	uint32_t sleeping = 0, child_waits = 0, inside = 0, outside = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gp_tview *t = &th[i];
		pt->vcsw += t->vcsw;
		pt->nvcsw += t->nvcsw;
		if (t->have_wchan)
			pt->have |= GP_PT_WCHAN;
		if (t->have_syscall)
			pt->have |= GP_PT_SYSCALL;
		if (t->have_kstack)
			pt->have |= GP_PT_KSTACK;
		if (t->state == 'R')
			pt->running++;
		else if (t->state == 'D')
			pt->blocked_d++;
		tally_top(b, pt, p, t);
		add_node(b, p, t);
		if (t->state == 'R')
			continue;
		sleeping++;
		if ((unsigned)t->wait < GP_WAIT_COUNT)
			pt->wait_n[t->wait]++;
		/* The main thread is the program's own flow: waiting on a lock
		 * with no timeout, it is blocked, whoever else waits outside. */
		if (t->tid == p->pid) {
			pt->root_main_wait = (uint8_t)t->wait; /* the root is added last */
			if (t->wait == GP_WAIT_LOCK && !pt->main_lock_pid)
				pt->main_lock_pid = p->pid;
		}
		if (t->wait == GP_WAIT_CHILD)
			child_waits++;
		if (gp_wait_group(t->wait) == GP_WG_INSIDE)
			inside++;
		else if (gp_wait_group(t->wait) == GP_WG_OUTSIDE)
			outside++;
		tally_wait(b, t);
	}
	if (sleeping && child_waits == sleeping && !pt->child_wait_pid) {
		pt->child_wait_pid = p->pid;
		gp_strlcpy(pt->child_wait_comm, p->comm ? p->comm : "", sizeof pt->child_wait_comm);
	}
	if (outside > b->outside_best) {
		b->outside_best = outside;
		pt->outside_pid = p->pid;
		gp_strlcpy(pt->outside_comm, p->comm ? p->comm : "", sizeof pt->outside_comm);
	}
	if (inside > b->inside_best) {
		b->inside_best = inside;
		pt->inside_pid = p->pid;
		gp_strlcpy(pt->inside_comm, p->comm ? p->comm : "", sizeof pt->inside_comm);
	}
}

void gp_point_add(struct gp_point_builder *b, struct gp_point *pt, const struct gp_pview *p,
		  const struct gp_tview *th, size_t n)
{
	bool created = remember_proc(b, pt, p, n);
	if (!p->followed)
		return;
	/* The tree's root is added last (children first): its state is
	 * the point's state. */
	add_proc_totals(pt, p, n, created);
	add_threads(b, pt, p, th, n);
}

/* Whether this sample's cycle is the one the sample before read: the
 * same members, each waiting on the same owner.  One reading can join
 * edges read microseconds apart across a hand-over (a waiter read before
 * the owner let go, the new owner after); a deadlock does not change, so
 * it shows in two readings a tick apart (issue 27). */
static void cycle_seen_twice(struct gp_point_builder *b, struct gp_wg_pt *g)
{
	bool same = g->ncycle >= 2 && g->ncycle == b->last_ncycle;
	for (unsigned i = 0; same && i < g->ncycle && i < GP_WG_MEMBERS; i++) {
		bool found = false;
		for (unsigned k = 0; k < b->last_ncycle && k < GP_WG_MEMBERS && !found; k++)
			found = b->last_cyc_tid[k] == g->cyc_tid[i] && b->last_cyc_on[k] == g->cyc_on[i];
		same = found;
	}
	g->cycle_twice = same;
	b->last_ncycle = g->ncycle;
	memcpy(b->last_cyc_tid, g->cyc_tid, sizeof b->last_cyc_tid);
	memcpy(b->last_cyc_on, g->cyc_on, sizeof b->last_cyc_on);
}

void gp_point_end(struct gp_point_builder *b, struct gp_point *pt)
{
	gp_waitgraph_judge(b->nodes, b->nnodes, b->root, &pt->wg);
	cycle_seen_twice(b, &pt->wg);
	/* A main thread on a lock whose chain ends outside (it joins a
	 * thread that waits in accept()) is not the program's flow blocked. */
	pt->main_lock_pid = pt->wg.main_blocked_pid;
	/* Processes gone since the last sample.  A reaped child's io is added
	 * to its parent's /proc/PID/io by the kernel (wait_task_zombie:
	 * task_io_accounting_add(&psig->ioac, ...)): it is the child's
	 * output, already counted there, not the parent's.  A child that was
	 * born and reaped between two samples was never seen: its io shows
	 * in the parent, and is the tree's output of that interval. */
	for (size_t i = 0; i < b->n;) {
		struct proc_entry *e = &b->e[i];
		if (e->seen) {
			i++;
			continue;
		}
		struct proc_entry *parent = entry(b, e->ppid, false);
		for (int k = 0; k < IO_N; k++) {
			if (parent && e->has_io)
				parent->offset[k] += e->whole[k];
			if (e->followed)
				b->gone[k] += e->whole[k] > e->offset[k] ? e->whole[k] - e->offset[k] : 0;
		}
		if (e->followed) {
			b->gone_sock[0] = gp_sat_add(b->gone_sock[0], e->sock[0]);
			b->gone_sock[1] = gp_sat_add(b->gone_sock[1], e->sock[1]);
			b->gone_sock[2] = gp_sat_add(b->gone_sock[2], e->sock[2]);
			b->gone_sock[3] = gp_sat_add(b->gone_sock[3], e->sock[3]);
			pt->procs_exited++;
			pt->threads_exited += e->nthreads; /* its threads left the tree with it */
			b->gone_utime += e->utime;
			b->gone_stime += e->stime;
		}
		b->e[i] = b->e[--b->n];
	}
	uint64_t io[IO_N] = { 0 };
	uint64_t sock[4] = { b->gone_sock[0], b->gone_sock[1], b->gone_sock[2], b->gone_sock[3] };
	uint64_t best_out = 0;
	for (size_t i = 0; i < b->n; i++) {
		struct proc_entry *e = &b->e[i];
		if (!e->followed)
			continue;
		uint64_t own[IO_N];
		for (int k = 0; k < IO_N; k++) {
			own[k] = e->whole[k] > e->offset[k] ? e->whole[k] - e->offset[k] : 0;
			io[k] += own[k];
		}
		sock[0] = gp_sat_add(sock[0], e->sock[0]);
		sock[1] = gp_sat_add(sock[1], e->sock[1]);
		sock[2] = gp_sat_add(sock[2], e->sock[2]);
		sock[3] = gp_sat_add(sock[3], e->sock[3]);
		uint64_t out = own[IO_RCHAR] + own[IO_WCHAR] + e->sock[0] + e->sock[1];
		uint64_t d = e->have_prev && out > e->own_out ? out - e->own_out : 0;
		if (d > best_out) {
			best_out = d;
			pt->out_pid = e->pid;
			gp_strlcpy(pt->out_comm, e->comm, sizeof pt->out_comm);
			pt->out_bytes = d;
		}
		e->own_out = out;
		e->have_prev = true;
	}
	/* CPU time of the tree, the exited processes' included: it only
	 * grows, so a phase's CPU is last - first. */
	pt->utime += b->gone_utime;
	pt->stime += b->gone_stime;
	double cpu = pt->utime + pt->stime;
	if (b->have_prev_cpu && pt->t > b->prev_t && cpu >= b->prev_cpu)
		pt->cpu_pct = (float)(100.0 * (cpu - b->prev_cpu) / (pt->t - b->prev_t));
	b->prev_t = pt->t;
	b->prev_cpu = cpu;
	b->have_prev_cpu = true;
	/* The tree's io never goes down: a process that turns zombie reads
	 * lower counters than it did alive (its exited threads' io leaves
	 * /proc/PID/io with them), and a drop would wrap every difference
	 * taken later (issue 32: "io read 16384 PiB" when an engine process
	 * was SIGKILLed and left a zombie). */
	for (int k = 0; k < IO_N; k++) {
		io[k] = gp_sat_add(io[k], b->gone[k]);
		if (io[k] < b->tree_io[k])
			io[k] = b->tree_io[k];
		b->tree_io[k] = io[k];
	}
	pt->io_rchar = io[IO_RCHAR];
	pt->io_wchar = io[IO_WCHAR];
	pt->io_read_bytes = io[IO_READ];
	pt->io_write_bytes = io[IO_WRITE];
	pt->io_syscr = io[IO_SYSCR];
	pt->io_syscw = io[IO_SYSCW];
	for (int k = 0; k < 4; k++) {
		if (sock[k] < b->tree_sock[k])
			sock[k] = b->tree_sock[k];
		b->tree_sock[k] = sock[k];
	}
	pt->sock_tx = sock[0];
	pt->sock_rx = sock[1];
	pt->conn_failed = sock[2];
	pt->lock_refused = sock[3];

	for (size_t k = 0; k < b->wused; k++)
		if (b->wcount[k] > pt->common_wchan_count) {
			pt->common_wchan_count = b->wcount[k];
			gp_strlcpy(pt->common_wchan, b->wname[k], sizeof pt->common_wchan);
		}
	for (size_t k = 0; k < b->scused; k++)
		if (b->sccount[k] > pt->common_sc_count) {
			pt->common_sc_count = b->sccount[k];
			pt->common_sc_nr = b->scnr[k];
			pt->common_sc_arg0 = b->sca0[k];
			pt->common_sc_arg1 = b->sca1[k];
			pt->common_sc_same_arg0 = b->scsame[k];
		}
}

/* Signals that end a process on someone's request or as a pipeline's
 * normal end: not a death to name. */
static bool requested_signal(int sig)
{
	return sig == 1 /* HUP */ || sig == 2 /* INT */ || sig == 13 /* PIPE */ || sig == 15 /* TERM */;
}

void gp_point_deaths(struct gp_point *pt, const json_t *died)
{
	size_t i;
	const json_t *d;
	json_array_foreach(died, i, d) {
		int sig = (int)json_integer_value(json_object_get(d, "signal"));
		int st = (int)json_integer_value(json_object_get(d, "status"));
		bool killed = sig && !requested_signal(sig);
		if (pt->died < UINT16_MAX)
			pt->died++;
		if (killed && pt->died_killed < UINT16_MAX)
			pt->died_killed++;
		if (!sig && st && pt->died_nonzero < UINT16_MAX)
			pt->died_nonzero++;
		/* name a killed one first, else the first non-zero exit */
		bool better = killed ? pt->death_signal == 0 || requested_signal(pt->death_signal)
				     : !pt->death_pid && (st || sig);
		if (better) {
			pt->death_pid = (int32_t)json_integer_value(json_object_get(d, "pid"));
			pt->death_ppid = (int32_t)json_integer_value(json_object_get(d, "ppid"));
			pt->death_signal = (int16_t)sig;
			pt->death_status = (int16_t)st;
			pt->death_before = json_is_true(json_object_get(d, "before_trace"));
			const char *c = json_string_value(json_object_get(d, "comm"));
			gp_strlcpy(pt->death_comm, c ? c : "?", sizeof pt->death_comm);
		}
	}
}
