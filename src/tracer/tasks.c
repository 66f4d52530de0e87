#include "config.h"
#include "tasks.h"
#include "parse.h"
#include "result.h"
#include "taskconv.h"
#include "taskiter.h"
#include "threadrec.h"
#include "waitgraph.h"
#include "grow.h"
#include "timeutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { F_SCHEDSTAT, F_STAT, F_STATUS, F_WCHAN, F_SYSCALL, F_STACK, F_COUNT };
static const char *const file_names[F_COUNT] = {
	"schedstat", "stat", "status", "wchan", "syscall", "stack",
};

struct slot {
	int tid;
	unsigned gen;             /* sample generation that last saw it */
	uint64_t starttime;
	int fd[F_COUNT];
	/* What the last kernel-stack read saw, so a thread blocked in one
	 * place is read once, and again only when something changes. */
	char kwchan[64];
	char kstate;
	uint64_t kstime;
	char *kstack;
	uint64_t utime, stime, vcsw, nvcsw, run_ns; /* previous sample's */
	int64_t read_ns;          /* when those were read (monotonic) */
	/* What it waited for at its last sample (waitprobe.c): a sleep we
	 * interrupted to take its stack resumes as restart_syscall. */
	uint8_t wait_mem;
	/* On whom it waited at its last full read (tracer/waitedge.c): an
	 * unchanged thread's edge is carried over, not probed again. */
	struct gp_wait_edge edge_mem;
	/* Its last record as written (threadrec.c): a delta's base. */
	struct gp_thread_rec rec;
	/* The last full read, carried over while the thread has not run. */
	bool have_last;
	struct gp_thread last;
	/* Read by gp_tasks_prime, not yet by a sample: the next sample
	 * reports it as new, with the kernel stack the prime read. */
	bool primed;
	/* The BPF path's cputime_adjust state (taskconv.h). */
	struct gp_cputime cpu_prev;
};

struct gp_tasks {
	const struct gp_root *root;
	int pid;
	unsigned flags;
	int taskdir;              /* fd of /proc/PID/task, re-read with lseek */
	unsigned gen;
	struct slot *slots;
	size_t nslots, capslots;
	int *hash;                /* slot index + 1, open addressing on tid */
	size_t hcap;
	struct gp_thread *out;
	size_t capout;
	int *tids;
	size_t captids;
	bool denied[F_COUNT];
	long ncpu;
	bool runq_busy;           /* this sample: more runnable tasks than CPUs */
	size_t listed;            /* threads at its last sample (all_threads' share) */
	/* The BPF path (taskiter.h), NULL on the /proc path: this sample's
	 * pass, and the next of its records to hand out (iter_thread). */
	struct gp_taskiter *iter;
	struct gp_taskiter_pass pass;
	bool pass_ok;             /* this sample's pass read every thread */
	struct gp_cputime proc_prev; /* the process's cputime_adjust state (gp_tasks_proc_sums) */
	size_t reci;
	long clk_tck;
	char why_proc[200];       /* why the /proc path ("" on BPF's) */
	char buf[8192];
};

/* The fd budget, shared by every table of the process (a tree has one
 * a process).  A sleeping thread costs one kept fd, its schedstat, read
 * every sample (and its stat while the run queues are busy); its other
 * files are read only when it ran.  So room is kept for every thread's
 * schedstat first, then for every thread's stat, then for the rest
 * (may_keep); what does not fit is opened and closed for each read.  Nothing ever hits EMFILE: before this,
 * the first EMFILE switched every table to re-opening but left the fds
 * it already kept pinned for good (13 337 fds at 10 100 threads), and a
 * thread whose open failed vanished from its sample (issue 18). */
static size_t kept_fds, fd_budget;
/* Threads listed at the last sample of every table, and how many of them
 * have their schedstat, and their stat, kept: the budget keeps room for
 * every thread's schedstat first, then for every thread's stat (what a
 * sleeper costs while the run queues are busy, `woken`), and only then
 * for the other files. */
static size_t all_threads, kept_sched, kept_stat;

static size_t budget(void)
{
	if (!fd_budget) {
		struct rlimit rl;
		rlim_t cur = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
		if (cur == RLIM_INFINITY || cur > (1u << 20))
			cur = 1u << 20;
		/* A quarter stays free for everything else gpuprobe opens
		 * (libraries, DRM fdinfo, output, stacks sessions). */
		fd_budget = cur > 256 ? (size_t)cur * 3 / 4 - 64 : 64;
	}
	return fd_budget;
}

size_t gp_tasks_kept_fds(void)
{
	return kept_fds;
}

static void fd_close(struct slot *s, int which)
{
	if (s->fd[which] >= 0) {
		close(s->fd[which]);
		kept_fds--;
		kept_sched -= which == F_SCHEDSTAT;
		kept_stat -= which == F_STAT;
	}
	s->fd[which] = -1;
}

/* Whether one more fd of this kind may be kept (see kept_fds). */
static bool may_keep(int which)
{
	size_t b = budget();
	size_t want_sched = all_threads > kept_sched ? all_threads - kept_sched : 0;
	size_t want_stat = all_threads > kept_stat ? all_threads - kept_stat : 0;
	if (which == F_SCHEDSTAT)
		return kept_fds < b;
	if (which == F_STAT)
		return kept_fds + want_sched < b;
	return kept_fds + want_sched + want_stat < b;
}

static int open_task_file(struct gp_tasks *t, int tid, int which)
{
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/task/%d/%s", t->pid, tid, file_names[which]);
	return gp_open(t->root, path, 0);
}

/* The BPF path where it loads (taskiter.h), the /proc path where it does
 * not, for a recorded tree (--proc-root: the kernel's threads are not
 * those files') and for the benchmark's re-opening baseline.  The choice
 * goes into the result's header (sampler_path, doc/result-format.md). */
static void choose_path(struct gp_tasks *t)
{
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (!t->root->live)
		snprintf(t->why_proc, sizeof t->why_proc, "a recorded /proc (--proc-root)");
	else if (t->flags & GP_TASKS_REOPEN)
		snprintf(t->why_proc, sizeof t->why_proc, "--reopen (the /proc baseline)");
	else if (!(t->iter = gp_taskiter_new(t->pid)))
		snprintf(t->why_proc, sizeof t->why_proc, "%s",
			 gp_taskiter_why()[0] ? gp_taskiter_why() : strerror(errno));
	if (t->root->live)
		gp_result_note_sampler(t->iter ? "bpf" : "proc", t->why_proc);
}

const char *gp_tasks_path(const struct gp_tasks *t, const char **why)
{
	if (why)
		*why = t->why_proc;
	return t->iter ? "bpf" : "proc";
}

struct gp_tasks *gp_tasks_new(const struct gp_root *root, int pid, unsigned flags)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	int dfd = gp_open(root, path, O_DIRECTORY);
	if (dfd < 0)
		return NULL;
	struct gp_tasks *t = calloc(1, sizeof *t);
	if (!t) {
		close(dfd);
		return NULL;
	}
	t->root = root;
	t->pid = pid;
	t->flags = flags;
	t->taskdir = dfd;
	/* The CPUs the target may run on: pinned to 4 of 64, it can wait
	 * for a CPU while most of the machine idles.  (loadavg's count is
	 * machine-wide, so this errs toward the extra stat reads.) */
	t->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t cpus;
	if (sched_getaffinity(pid, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) > 0
	    && CPU_COUNT(&cpus) < t->ncpu)
		t->ncpu = CPU_COUNT(&cpus);
	if (!(flags & GP_TASKS_KSTACK))
		t->denied[F_STACK] = true;
	/* schedstat needs CONFIG_SCHED_INFO; without it, every thread is
	 * read in full.  Decided once here: a thread's ENOENT later may
	 * just mean that it exited. */
	char spath[64];
	snprintf(spath, sizeof spath, "/proc/%d/schedstat", pid);
	int sfd = gp_open(root, spath, 0);
	if (sfd < 0)
		t->denied[F_SCHEDSTAT] = true;
	else
		close(sfd);
	choose_path(t);
	return t;
}

static void slot_close(struct slot *s)
{
	for (int i = 0; i < F_COUNT; i++)
		fd_close(s, i);
	free(s->kstack);
	s->kstack = NULL;
	s->have_last = false;
}

void gp_tasks_free(struct gp_tasks *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nslots; i++)
		slot_close(&t->slots[i]);
	all_threads -= all_threads < t->listed ? all_threads : t->listed;
	gp_taskiter_free(t->iter);
	free(t->slots);
	free(t->hash);
	free(t->out);
	free(t->tids);
	close(t->taskdir);
	free(t);
}

static size_t hslot(int tid, size_t cap)
{
	return ((unsigned)tid * 2654435761u) & (cap - 1);
}

static void hash_rebuild(struct gp_tasks *t)
{
	size_t want = 64;
	while (want < t->nslots * 2)
		want *= 2;
	if (want != t->hcap) {
		free(t->hash);
		t->hash = malloc(want * sizeof *t->hash);
		t->hcap = t->hash ? want : 0;
	}
	if (!t->hash)
		return;
	memset(t->hash, 0, t->hcap * sizeof *t->hash);
	for (size_t i = 0; i < t->nslots; i++) {
		size_t h = hslot(t->slots[i].tid, t->hcap);
		while (t->hash[h])
			h = (h + 1) & (t->hcap - 1);
		t->hash[h] = (int)i + 1;
	}
}

static struct slot *hash_find(struct gp_tasks *t, int tid)
{
	if (!t->hcap)
		return NULL;
	for (size_t h = hslot(tid, t->hcap); t->hash[h]; h = (h + 1) & (t->hcap - 1))
		if (t->slots[t->hash[h] - 1].tid == tid)
			return &t->slots[t->hash[h] - 1];
	return NULL;
}

/* getdents64 into t->tids.  -1 when the directory cannot be read (the
 * process is gone). */
static int list_tids(struct gp_tasks *t, size_t *n)
{
	char dbuf[32768];
	*n = 0;
	if (lseek(t->taskdir, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		long nread = syscall(SYS_getdents64, t->taskdir, dbuf, sizeof dbuf);
		if (nread < 0)
			return -1;
		if (nread == 0)
			break;
		for (long off = 0; off < nread;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(dbuf + off);
			off += d->reclen;
			const char *p = d->name;
			if (*p < '1' || *p > '9')
				continue;
			long tid = strtol(p, NULL, 10);
			if (tid <= 0)
				continue;
			if (!gp_grow(&t->tids, &t->captids, *n + 1, sizeof *t->tids, 256))
				return -1;
			t->tids[(*n)++] = (int)tid;
		}
	}
	return 0;
}

/* Gives back every kept fd of this table but schedstat's (all of them
 * when `all`): the way out when an open fails for want of fds anyway
 * (another part of gpuprobe, or a lower limit than we read). */
static void shed_fds(struct gp_tasks *t, bool all)
{
	for (size_t i = 0; i < t->nslots; i++)
		for (int k = 0; k < F_COUNT; k++)
			if (all || k != F_SCHEDSTAT)
				fd_close(&t->slots[i], k);
}

/* Read one file of a slot.  Returns length, or -1 with errno.  Opens
 * lazily, and keeps the fd when the budget allows. */
static ssize_t slot_read(struct gp_tasks *t, struct slot *s, int which,
			 char *buf, size_t cap)
{
	int fd = s->fd[which];
	if (fd < 0) {
		fd = open_task_file(t, s->tid, which);
		for (int pass = 0; fd < 0 && (errno == EMFILE || errno == ENFILE) && pass < 2; pass++) {
			shed_fds(t, pass == 1);
			fd_budget = kept_fds > 64 ? kept_fds : 64; /* what fits */
			fd = open_task_file(t, s->tid, which);
		}
		if (fd < 0)
			return -1;
		if (!(t->flags & GP_TASKS_REOPEN) && may_keep(which)) {
			s->fd[which] = fd;
			kept_fds++;
			kept_sched += which == F_SCHEDSTAT;
			kept_stat += which == F_STAT;
		}
	}
	ssize_t n = gp_pread_all(fd, buf, cap);
	if (s->fd[which] != fd) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return n;
}

static bool is_denied(int err)
{
	return err == EACCES || err == EPERM;
}

/* Optional file: a permission error switches it off for the whole table
 * (every thread would fail the same way).  Returns length or -1. */
static ssize_t optional_read(struct gp_tasks *t, struct slot *s, int which,
			     char *buf, size_t cap)
{
	if (t->denied[which])
		return -1;
	ssize_t n = slot_read(t, s, which, buf, cap);
	if (n < 0 && is_denied(errno))
		t->denied[which] = true;
	return n;
}

static bool want_kstack(const struct slot *s, const struct gp_thread *th)
{
	if (th->st.state == 'D' || !s->kstack)
		return true;
	if (th->st.stime != s->kstime && th->st.state == 'R')
		return true; /* burning system time: where, this time? */
	return th->st.state != s->kstate || strcmp(th->wchan, s->kwchan) != 0;
}

/* More runnable tasks than CPUs right now (/proc/loadavg's 4th field
 * counts them, the reader included): a thread woken since the last
 * sample may be waiting for a CPU, not yet scheduled, so schedstat has
 * not moved for it.  False when unreadable (a replayed tree without it). */
static bool runqueue_busy(struct gp_tasks *t)
{
	char buf[128];
	long running = 0, total = 0;
	if (t->ncpu <= 0 || gp_read_file(t->root, "/proc/loadavg", buf, sizeof buf) <= 0)
		return false;
	if (sscanf(buf, "%*s %*s %*s %ld/%ld", &running, &total) != 2)
		return false;
	return running > t->ncpu;
}

/* A thread that schedstat says has not run: is it runnable now (woken,
 * waiting in a run queue)?  One stat read, only while the run queues are
 * busy. */
static bool woken(struct gp_tasks *t, struct slot *s)
{
	struct gp_stat st;
	return slot_read(t, s, F_STAT, t->buf, sizeof t->buf) > 0 && gp_parse_stat(t->buf, &st)
	       && st.state == 'R';
}

/* A thread that has not run since its last reading: that reading stands
 * (wait_ns, the time it waited for a CPU, can grow without a run: a
 * dequeue before it ran). */
static void carry_last(struct slot *s, struct gp_thread *th, uint64_t wait_ns, int64_t read_ns)
{
	*th = s->last;
	th->read_ns = read_ns;
	th->last_wait_ns = th->wait_ns;
	th->wait_ns = wait_ns;
	th->unchanged = true;
	if (s->primed)
		th->kstack = s->kstack;	/* read by the prime, written by no sample yet */
}

static int kstack_part(struct gp_tasks *t, struct slot *s, struct gp_thread *th);

/* Reads the whole thread.  0 = ok, -1 = vanished (or unreadable).
 *
 * Cost, measured on Linux 6.18 (a pread of a kept fd, 1000 threads):
 * schedstat 4.6 us, stat 3.7, status 8.0, wchan 4.4, syscall 8.1,
 * stack 13.4.  Most threads of a big process sleep, so schedstat comes
 * first: when its run count and run time have not moved since the last
 * sample and the thread was not runnable then, the thread has not been
 * on a CPU in between, so nothing stat, status, wchan or syscall say can
 * have changed, and the last read is carried over.  One thing can: a
 * sleeper woken but not yet scheduled is runnable.  That needs more
 * runnable tasks than CPUs, so while /proc/loadavg says so, such a thread
 * also gets its stat read (+3.7 us) and, when runnable, a full read.
 * An idle thread costs one read, 4.6 us instead of 28. */
static int read_thread(struct gp_tasks *t, struct slot *s, struct gp_thread *th)
{
	memset(th, 0, sizeof *th);
	th->tid = s->tid;
	ssize_t n;
	if (!t->denied[F_SCHEDSTAT]) {
		n = slot_read(t, s, F_SCHEDSTAT, t->buf, sizeof t->buf);
		th->read_ns = gp_mono_ns();
		if (n > 0 && gp_parse_schedstat(t->buf, &th->run_ns, &th->wait_ns, &th->pcount))
			th->have_sched = true;
		else if (n < 0 && errno == ESRCH)
			return -1;
	}
	if (th->have_sched && s->have_last && s->last.st.state != 'R'
	    && th->pcount == s->last.pcount && th->run_ns == s->last.run_ns
	    && (!t->runq_busy || !woken(t, s))) {
		carry_last(s, th, th->wait_ns, th->read_ns);
		return 0;
	}
	if (slot_read(t, s, F_STAT, t->buf, sizeof t->buf) <= 0
	    || !gp_parse_stat(t->buf, &th->st))
		return -1;
	if (slot_read(t, s, F_STATUS, t->buf, sizeof t->buf) <= 0)
		return -1;
	th->have_ctxt = gp_parse_status_ctxt(t->buf, &th->vcsw, &th->nvcsw);
	n = optional_read(t, s, F_WCHAN, t->buf, sizeof t->buf);
	if (n >= 0) {
		gp_parse_wchan(t->buf, th->wchan, sizeof th->wchan);
		th->have_wchan = true;
	} else if (errno == ESRCH) {
		return -1;
	}
	n = optional_read(t, s, F_SYSCALL, t->buf, sizeof t->buf);
	if (n > 0)
		gp_parse_syscall(t->buf, &th->sc);
	else if (n < 0 && errno == ESRCH)
		return -1;
	return kstack_part(t, s, th);
}

/* A thread read in full: its kernel stack when asked for and it says
 * something new (want_kstack), and this reading kept as its last.  0, or
 * -1 when it vanished. */
static int kstack_part(struct gp_tasks *t, struct slot *s, struct gp_thread *th)
{
	ssize_t n;
	if (!t->denied[F_STACK] && want_kstack(s, th)) {
		n = optional_read(t, s, F_STACK, t->buf, sizeof t->buf);
		if (n >= 0) {
			free(s->kstack);
			s->kstack = strdup(t->buf);
			th->kstack = s->kstack;
			snprintf(s->kwchan, sizeof s->kwchan, "%s", th->wchan);
			s->kstate = th->st.state;
			s->kstime = th->st.stime;
		} else if (errno == ESRCH) {
			return -1;
		}
	} else if (s->primed) {
		th->kstack = s->kstack;	/* read by the prime, written by no sample yet */
	}
	if (s->have_last)
		gp_syscall_continued(&s->last.sc, &th->sc);
	s->have_last = true;
	s->last = *th;
	s->last.kstack = NULL; /* read once; not repeated when carried over */
	return 0;
}

/* The BPF path's listing (taskiter.h): every thread the iterator saw this
 * pass, in /proc/PID/task's order; iter_thread takes the records of those
 * that moved, which come in the same order.  -1 with errno when the pass
 * failed: this sample is read from /proc (list_tids, read_thread). */
static int iter_tids(struct gp_tasks *t, size_t *n)
{
	if (gp_taskiter_pass(t->iter, &t->pass) < 0) {
		if (errno == E2BIG) { /* for good: every pass would be cut */
			gp_taskiter_free(t->iter);
			t->iter = NULL;
			snprintf(t->why_proc, sizeof t->why_proc, "more threads than a pass lists (%u)",
				 GP_TASKITER_MAXV);
			gp_result_note_sampler("proc", t->why_proc);
		}
		return -1;
	}
	if (!gp_grow(&t->tids, &t->captids, t->pass.ntids, sizeof *t->tids, 256))
		return -1;
	for (size_t i = 0; i < t->pass.ntids; i++)
		t->tids[i] = (int)t->pass.tids[i];
	*n = t->pass.ntids;
	t->reci = 0;
	return 0;
}

/* A thread on the BPF path: its record when the iterator wrote one (it
 * moved), converted to what /proc would say (taskconv.h), else its last
 * reading carried over untouched -- no file read, no record.  A record
 * is judged by read_thread's rule: not run since its last reading (run
 * count and run time equal, neither then nor now runnable) carries that
 * reading, with the new wait_ns.  0, or -1 when it vanished (the /proc
 * read of a thread never read). */
static int iter_thread(struct gp_tasks *t, struct slot *s, struct gp_thread *th)
{
	const struct gp_taskiter_rec *r = NULL;
	if (t->reci < t->pass.nrecs && t->pass.recs[t->reci].tid == (uint32_t)s->tid)
		r = &t->pass.recs[t->reci++];
	if (!r && !s->have_last)
		return read_thread(t, s, th); /* not written, never read: from /proc */
	if (!r) {
		carry_last(s, th, s->last.wait_ns, t->pass.read_ns);
		return 0;
	}
	/* Another task under this tid (a reused tid; or exec's de_thread,
	 * which gives the leader's tid and start time to the thread that
	 * exec'd: GP_TI_NEW, its task differs), or the first reading:
	 * /proc's prev_cputime is then that task's own. */
	if (!s->have_last || (r->flags & GP_TI_NEW)
	    || gp_ns_to_ticks(r->start_boottime, t->clk_tck) != s->starttime)
		s->cpu_prev = (struct gp_cputime){ 0, 0 };
	gp_taskconv_thread(r, t->clk_tck, &s->cpu_prev, th);
	th->read_ns = t->pass.read_ns;
	if (s->have_last && s->last.st.state != 'R' && th->st.state != 'R'
	    && th->pcount == s->last.pcount && th->run_ns == s->last.run_ns) {
		carry_last(s, th, th->wait_ns, th->read_ns);
		return 0;
	}
	return kstack_part(t, s, th);
}

/* Drops the slots not seen this sample: those threads exited.  The first
 * of them that had been read is named in stats (ended_tid). */
static void drop_exited(struct gp_tasks *t, struct gp_tasks_stats *stats)
{
	size_t w = 0;
	for (size_t i = 0; i < t->nslots; i++) {
		struct slot *x = &t->slots[i];
		if (x->gen == t->gen) {
			/* A slot is 1.2 KB: copied only when one before it left
			 * (copying each, every sample, was a third of the BPF
			 * path's user time at 10 000 threads, perf 2026-12-06). */
			if (w != i)
				t->slots[w] = *x;
			w++;
			continue;
		}
		if (x->gen != 0) {
			stats->exited++;
			if (!stats->ended_tid && x->rec.valid) {
				stats->ended_tid = x->tid;
				gp_strlcpy(stats->ended_comm, x->rec.th.st.comm, sizeof stats->ended_comm);
			}
		}
		slot_close(x);
	}
	t->nslots = w;
}

/* What each thread keeps in its slot, pointed to only once the slots of
 * exited threads are dropped: that moves the ones after them (pointed to
 * before, a thread exiting gave the threads after it their neighbour's
 * wait, edge and record base for that sample). */
static void point_into_slots(struct gp_tasks *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct slot *s = hash_find(t, t->out[i].tid);
		t->out[i].wait_mem = s ? &s->wait_mem : NULL;
		t->out[i].edge_mem = s ? &s->edge_mem : NULL;
		t->out[i].rec_mem = s ? &s->rec : NULL;
	}
}

int gp_tasks_sample(struct gp_tasks *t, struct gp_thread **out, size_t *nout,
		    struct gp_tasks_stats *stats)
{
	memset(stats, 0, sizeof *stats);
	size_t ntids;
	bool via_iter = t->iter && iter_tids(t, &ntids) == 0;
	t->pass_ok = via_iter;
	if (!via_iter && (list_tids(t, &ntids) < 0 || ntids == 0)) {
		errno = ESRCH;
		return -1;
	}
	t->gen++;
	all_threads = all_threads - (all_threads < t->listed ? all_threads : t->listed) + ntids;
	t->listed = ntids;
	t->runq_busy = !via_iter && runqueue_busy(t);
	if (ntids > t->capout) {
		struct gp_thread *no = realloc(t->out, ntids * sizeof *no);
		if (!no)
			return -1;
		t->out = no;
		t->capout = ntids;
	}
	/* Room for every new slot now, so slot pointers stay valid below. */
	if (!gp_grow(&t->slots, &t->capslots, t->nslots + ntids, sizeof *t->slots, 64))
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < ntids; i++) {
		int tid = t->tids[i];
		struct slot *s = hash_find(t, tid);
		if (s && s->gen == t->gen)
			continue; /* listed twice (directory changed under us) */
		bool fresh = !s || s->primed;
		if (!s) {
			s = &t->slots[t->nslots++];
			memset(s, 0, sizeof *s);
			for (int k = 0; k < F_COUNT; k++)
				s->fd[k] = -1;
			s->tid = tid;
		}
		s->gen = t->gen;
		struct gp_thread *th = &t->out[n];
		int rc = via_iter ? iter_thread(t, s, th) : read_thread(t, s, th);
		s->primed = false;
		if (rc < 0) {
			/* A kept fd of an exited thread reads ESRCH even when the
			 * tid was reused: re-open once to tell the two apart. */
			if (!fresh) {
				slot_close(s);
				if (read_thread(t, s, th) == 0) {
					stats->reused++;
					fresh = true;
					s->starttime = th->st.starttime;
					goto keep;
				}
			}
			slot_close(s);
			s->gen = 0; /* collected below */
			stats->vanished++;
			continue;
		}
		if (!fresh && th->st.starttime != s->starttime) {
			stats->reused++;
			fresh = true;
		}
		s->starttime = th->st.starttime;
keep:;
		/* When this thread's counters were read, not when the sample
		 * began: reading 200 threads under load took longer than a
		 * 0.05 s interval, and one thread's delta over the sample's dt
		 * read 202.9 % of a core (2026-12-05, bench/workloads/busy). */
		int64_t read_ns = th->read_ns ? th->read_ns : gp_mono_ns();
		th->is_new = fresh;
		if (fresh) {
			s->wait_mem = 0;
			memset(&s->edge_mem, 0, sizeof s->edge_mem);
			s->rec.valid = false;
		}
		if (fresh) {
			stats->created++;
		} else {
			/* Counters only grow; guard anyway against a bad read. */
			th->d_utime = th->st.utime >= s->utime ? th->st.utime - s->utime : 0;
			th->d_stime = th->st.stime >= s->stime ? th->st.stime - s->stime : 0;
			th->d_vcsw = th->vcsw >= s->vcsw ? th->vcsw - s->vcsw : 0;
			th->d_nvcsw = th->nvcsw >= s->nvcsw ? th->nvcsw - s->nvcsw : 0;
			th->d_run_ns = th->run_ns >= s->run_ns ? th->run_ns - s->run_ns : 0;
			th->d_read_ns = s->read_ns && read_ns > s->read_ns ? (uint64_t)(read_ns - s->read_ns) : 0;
		}
		s->read_ns = read_ns;
		s->utime = th->st.utime;
		s->stime = th->st.stime;
		s->vcsw = th->vcsw;
		s->nvcsw = th->nvcsw;
		s->run_ns = th->run_ns;
		n++;
	}
	/* Drop slots not seen this sample: those threads exited. */
	drop_exited(t, stats);
	hash_rebuild(t);
	point_into_slots(t, n);
	stats->threads = (unsigned)n;
	stats->wchan_denied = t->denied[F_WCHAN];
	stats->syscall_denied = t->denied[F_SYSCALL];
	stats->kstack_denied = (t->flags & GP_TASKS_KSTACK) && t->denied[F_STACK];
	*out = t->out;
	*nout = n;
	if (n == 0) {
		errno = ESRCH;
		return -1;
	}
	return 0;
}

/* The first sample of a big process opens and reads five files a thread
 * (1 000 threads: 0.13-0.19 s on a 2-CPU VM, longer than a 0.1 s
 * interval, so tick 1 was lost in about half the runs; issue 21).  This
 * does that reading before the trace's clock starts: the first sample
 * then finds each thread's files open and its last reading standing,
 * and re-reads in full only the threads that ran since (read_thread's
 * schedstat test).  It still reports every thread as new. */
bool gp_tasks_proc_sums(struct gp_tasks *t, struct gp_tasks_proc *out)
{
	const struct gp_taskiter_pass_info *p = &t->pass.info;
	if (!t->iter || !t->pass_ok || !p->sums)
		return false;
	/* As cputime_of (taskconv.c): the kernel's prev_cputime where a
	 * /proc reader moved it past ours. */
	if (p->prev_utime + p->prev_stime > t->proc_prev.utime + t->proc_prev.stime)
		t->proc_prev = (struct gp_cputime){ p->prev_utime, p->prev_stime };
	uint64_t ut, st;
	gp_cputime_adjust(p->sum_exec, p->utime, p->stime, &t->proc_prev, &ut, &st);
	memset(out, 0, sizeof *out);
	out->utime = gp_ns_to_ticks(ut, t->clk_tck);
	out->stime = gp_ns_to_ticks(st, t->clk_tck);
	out->minflt = p->min_flt;
	out->majflt = p->maj_flt;
	out->have_io = p->io;
	out->io = (struct gp_io){ p->rchar, p->wchar, p->syscr, p->syscw, p->read_bytes, p->write_bytes,
				  p->cancelled_write_bytes };
	return true;
}

int gp_tasks_prime(struct gp_tasks *t)
{
	struct gp_thread *out;
	size_t n;
	struct gp_tasks_stats st;
	if (gp_tasks_sample(t, &out, &n, &st) < 0)
		return -1;
	for (size_t i = 0; i < t->nslots; i++)
		t->slots[i].primed = true;
	return 0;
}
