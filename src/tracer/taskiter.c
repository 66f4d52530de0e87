/* The sampler's BPF task iterator: see taskiter.h and
 * src/tracer/bpf/taskiter.bpf.c. */
#include "config.h"
#include "taskiter.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char why_none[200];
static pthread_mutex_t cost_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long n_passes, n_records;
static double ms_spent;

const char *gp_taskiter_why(void)
{
	return why_none;
}

void gp_taskiter_cost(unsigned long *passes, unsigned long *records, double *ms)
{
	pthread_mutex_lock(&cost_lock);
	*passes = n_passes;
	*records = n_records;
	*ms = ms_spent;
	pthread_mutex_unlock(&cost_lock);
}

#ifndef HAVE_BPF

bool gp_taskiter_usable(void)
{
	snprintf(why_none, sizeof why_none, "built without BPF (clang, bpftool or libbpf missing)");
	return false;
}
struct gp_taskiter *gp_taskiter_new(int pid)
{
	(void)pid;
	gp_taskiter_usable();
	errno = ENOSYS;
	return NULL;
}
void gp_taskiter_free(struct gp_taskiter *it)
{
	(void)it;
}
int gp_taskiter_pass(struct gp_taskiter *it, struct gp_taskiter_pass *p)
{
	(void)it;
	(void)p;
	errno = ENOSYS;
	return -1;
}

#else

#include "bpfload.h"
#include "timeutil.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/mman.h>

#include "bpf/taskiter.skel.h"

/* The program, its maps and the globals every pass sets: one pass at a
 * time (the globals are the program's, shared by every reader). */
struct prog {
	struct taskiter_bpf *skel;
	int last_fd;
	const uint64_t *visited; /* the visited map, mmap'ed */
	uint32_t next_reader;
	pthread_mutex_t lock;
};

static struct prog *the_prog;
static pthread_once_t once = PTHREAD_ONCE_INIT;

struct gp_taskiter {
	int pid;
	uint32_t reader;
	struct bpf_link *link;
	char *buf;               /* this pass's records */
	size_t cap;
	uint32_t *tids, *prev;   /* this pass's tids, and the last pass's */
	size_t ntids, nprev, captids, capprev;
	struct gp_taskiter_key *keys; /* for deletes */
	size_t capkeys;
};

/* An iterator of one process needs Linux 6.1 (bpf_iter_link_info.task,
 * BPF_TASK_ITER_TGID): tried on gpuprobe itself, so that `info` and the
 * result's header say what a trace would get. */
static bool attach_works(struct taskiter_bpf *skel, char *why, size_t n)
{
	union bpf_iter_link_info li;
	memset(&li, 0, sizeof li);
	li.task.pid = (__u32)getpid();
	LIBBPF_OPTS(bpf_iter_attach_opts, o, .link_info = &li, .link_info_len = sizeof li);
	struct bpf_link *link = bpf_program__attach_iter(skel->progs.gp_taskiter, &o);
	if (!link) {
		int e = errno;
		snprintf(why, n, "the kernel cannot iterate one process's threads "
			 "(BPF_TASK_ITER_TGID needs Linux 6.1): %s", strerror(e));
		return false;
	}
	bpf_link__destroy(link);
	return true;
}

/* How many threads' last values the map keeps: twice the machine's
 * threads now (/proc/loadavg's fourth field, "running/total"), at least
 * 65 536, at most GP_TASKITER_MAXLAST.  A hash map, preallocated or
 * not, allocates its buckets at creation (kernel/bpf/hashtab.c
 * htab_map_alloc: a 16-byte bucket for each of roundup_pow_of_two
 * (max_entries)): 16 MB for 2^20, 7 % of a 1 s trace's CPU (perf,
 * 2026-12-06).  A full map is no error: a thread it cannot keep is
 * written whole at each pass (taskiter.bpf.c, pass.lost). */
static __u32 last_entries(void)
{
	unsigned long run = 0, total = 0;
	FILE *f = fopen("/proc/loadavg", "re");
	if (f) {
		if (fscanf(f, "%*s %*s %*s %lu/%lu", &run, &total) != 2)
			total = 0;
		fclose(f);
	}
	__u32 n = 1u << 16;
	while (n < GP_TASKITER_MAXLAST && n < 2 * total)
		n <<= 1;
	return n;
}

static struct prog *open_prog(void)
{
	if (!gp_bpf_may_try(why_none, sizeof why_none))
		return NULL;
	const char *env = getenv("GPUPROBE_BPF_SAMPLER");
	if (env && !strcmp(env, "off")) {
		snprintf(why_none, sizeof why_none, "GPUPROBE_BPF_SAMPLER=off");
		return NULL;
	}
	/* CO-RE finds each member in the running kernel's BTF: without it
	 * libbpf cannot place one (CONFIG_DEBUG_INFO_BTF). */
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		snprintf(why_none, sizeof why_none, "no kernel BTF (/sys/kernel/btf/vmlinux: %s)",
			 strerror(errno));
		return NULL;
	}
	struct taskiter_bpf *skel = taskiter_bpf__open();
	if (skel)
		bpf_map__set_max_entries(skel->maps.last, last_entries());
	int err = skel ? taskiter_bpf__load(skel) : -errno;
	if (err) {
		gp_bpf_failed(err, why_none, sizeof why_none);
		taskiter_bpf__destroy(skel);
		return NULL;
	}
	void *vis = mmap(NULL, (size_t)GP_TASKITER_MAXV * sizeof(uint64_t), PROT_READ, MAP_SHARED,
			 bpf_map__fd(skel->maps.visited), 0);
	struct prog *p = vis != MAP_FAILED ? calloc(1, sizeof *p) : NULL;
	if (!p || !skel->bss || !attach_works(skel, why_none, sizeof why_none)) {
		if (!p || !skel->bss)
			snprintf(why_none, sizeof why_none, "BPF: the iterator's maps cannot be mapped (%s)",
				 strerror(errno));
		if (vis != MAP_FAILED)
			munmap(vis, (size_t)GP_TASKITER_MAXV * sizeof(uint64_t));
		free(p);
		taskiter_bpf__destroy(skel);
		return NULL;
	}
	p->skel = skel;
	p->last_fd = bpf_map__fd(skel->maps.last);
	p->visited = vis;
	pthread_mutex_init(&p->lock, NULL);
	why_none[0] = 0;
	return p;
}

static void open_once(void)
{
	the_prog = open_prog();
}

bool gp_taskiter_usable(void)
{
	pthread_once(&once, open_once);
	return the_prog != NULL;
}

struct gp_taskiter *gp_taskiter_new(int pid)
{
	if (!gp_taskiter_usable()) {
		errno = ENOSYS;
		return NULL;
	}
	struct gp_taskiter *it = calloc(1, sizeof *it);
	if (!it)
		return NULL;
	union bpf_iter_link_info li;
	memset(&li, 0, sizeof li);
	li.task.pid = (__u32)pid;
	LIBBPF_OPTS(bpf_iter_attach_opts, o, .link_info = &li, .link_info_len = sizeof li);
	it->link = bpf_program__attach_iter(the_prog->skel->progs.gp_taskiter, &o);
	if (!it->link) {
		int e = errno;
		free(it);
		errno = e;
		return NULL;
	}
	it->pid = pid;
	pthread_mutex_lock(&the_prog->lock);
	it->reader = ++the_prog->next_reader;
	pthread_mutex_unlock(&the_prog->lock);
	return it;
}

static bool grow(void *pp, size_t *cap, size_t want, size_t size)
{
	if (want <= *cap)
		return true;
	size_t c = *cap ? *cap : 256;
	while (c < want)
		c *= 2;
	void *n = realloc(*(void **)pp, c * size);
	if (!n)
		return false;
	*(void **)pp = n;
	*cap = c;
	return true;
}

/* Drops (reader, tid) for each of tids from the map (hash maps delete a
 * batch in one call, kernel >= 5.6; a key already gone stops the batch,
 * so it goes on past it). */
static void forget(struct gp_taskiter *it, uint32_t reader, const uint32_t *tids, size_t n)
{
	if (!n || !grow(&it->keys, &it->capkeys, n, sizeof *it->keys))
		return;
	for (size_t i = 0; i < n; i++)
		it->keys[i] = (struct gp_taskiter_key){ .tid = tids[i], .reader = reader };
	for (size_t at = 0; at < n;) {
		__u32 count = (__u32)(n - at);
		int rc = bpf_map_delete_batch(the_prog->last_fd, it->keys + at, &count, NULL);
		at += count + (rc < 0);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The threads of the last pass not in this one have exited: their last
 * values go (a tid reused later would otherwise be compared with a dead
 * thread's).  Only when the list changed: same length and no new tid. */
static void forget_exited(struct gp_taskiter *it, bool any_new)
{
	if (!it->nprev || (!any_new && it->ntids == it->nprev))
		return;
	uint32_t *sorted = malloc((it->ntids ? it->ntids : 1) * sizeof *sorted);
	if (!sorted)
		return;
	memcpy(sorted, it->tids, it->ntids * sizeof *sorted);
	qsort(sorted, it->ntids, sizeof *sorted, cmp_u32);
	size_t w = 0;
	for (size_t i = 0; i < it->nprev; i++)
		if (!bsearch(&it->prev[i], sorted, it->ntids, sizeof *sorted, cmp_u32))
			it->prev[w++] = it->prev[i];
	free(sorted);
	forget(it, it->reader, it->prev, w);
}

/* Records were lost or a pass was cut: this reader starts again under a
 * new id (every thread written at its next pass), its old values gone. */
static void restart(struct gp_taskiter *it, __u32 visited)
{
	forget(it, it->reader, it->prev, it->nprev);
	forget(it, it->reader, it->tids, it->ntids);
	size_t n = visited < GP_TASKITER_MAXV ? visited : GP_TASKITER_MAXV;
	if (grow(&it->prev, &it->capprev, n, sizeof *it->prev)) {
		for (size_t i = 0; i < n; i++)
			it->prev[i] = (uint32_t)the_prog->visited[i];
		forget(it, it->reader, it->prev, n);
	}
	it->nprev = it->ntids = 0;
	it->reader = ++the_prog->next_reader;
}

void gp_taskiter_free(struct gp_taskiter *it)
{
	if (!it)
		return;
	pthread_mutex_lock(&the_prog->lock);
	forget(it, it->reader, it->prev, it->nprev);
	pthread_mutex_unlock(&the_prog->lock);
	bpf_link__destroy(it->link);
	free(it->buf);
	free(it->tids);
	free(it->prev);
	free(it->keys);
	free(it);
}

/* Every read() of one pass, appended to it->buf.  *boundaries: reads
 * that returned records and were followed by another (a pass resumed
 * across read() calls).  -1 with errno. */
static ssize_t read_all(struct gp_taskiter *it, int fd, unsigned *boundaries)
{
	/* A read returns at most the iterator's seq_file buffer (8 pages,
	 * kernel/bpf/bpf_iter.c), whole records only. */
	const size_t chunk = 64 * 1024;
	size_t len = 0;
	*boundaries = 0;
	for (;;) {
		if (!grow(&it->buf, &it->cap, len + chunk, 1))
			return -1;
		ssize_t n = read(fd, it->buf + len, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		*boundaries += len > 0;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

/* One pass under the program's lock.  0, or -1 with errno. */
static int pass_locked(struct gp_taskiter *it, struct gp_taskiter_pass *p)
{
	struct taskiter_bpf__bss *g = the_prog->skel->bss;
	g->want_tgid = (__u32)it->pid;
	g->reader = it->reader;
	memset(&g->pass, 0, sizeof g->pass);
	g->wchan_ip = 0;
	int fd = bpf_iter_create(bpf_link__fd(it->link));
	if (fd < 0)
		return -1;
	unsigned boundaries;
	ssize_t len = read_all(it, fd, &boundaries);
	int saved = errno;
	close(fd);
	struct gp_taskiter_pass_info info = g->pass;
	if (len < 0 || len % (ssize_t)sizeof(struct gp_taskiter_rec)) {
		restart(it, info.visited);
		errno = len < 0 ? saved : EIO;
		return -1;
	}
	/* Cut: a pass that ran across read() calls resumes at the thread it
	 * stopped on, and ends there if that thread exited in between
	 * (kernel/bpf/task_iter.c task_group_seq_get_next); or more threads
	 * than visited[] holds.  Fewer seen than the process had then. */
	if (info.visited > GP_TASKITER_MAXV
	    || (boundaries && info.visited < (__u32)(info.nr_threads > 0 ? info.nr_threads : 0))) {
		restart(it, info.visited);
		errno = info.visited > GP_TASKITER_MAXV ? E2BIG : EAGAIN;
		return -1;
	}
	if (info.visited == 0) {
		errno = ESRCH;
		return -1;
	}
	uint32_t *t = it->prev;
	size_t c = it->capprev;
	it->prev = it->tids;
	it->capprev = it->captids;
	it->nprev = it->ntids;
	it->tids = t;
	it->captids = c;
	it->ntids = 0;
	if (!grow(&it->tids, &it->captids, info.visited, sizeof *it->tids)) {
		restart(it, info.visited);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < info.visited; i++)
		it->tids[i] = (uint32_t)the_prog->visited[i];
	it->ntids = info.visited;
	p->tids = it->tids;
	p->ntids = it->ntids;
	p->recs = (const struct gp_taskiter_rec *)it->buf;
	p->nrecs = (size_t)len / sizeof(struct gp_taskiter_rec);
	p->info = info;
	bool any_new = false;
	for (size_t i = 0; i < p->nrecs && !any_new; i++)
		any_new = p->recs[i].flags & GP_TI_NEW;
	forget_exited(it, any_new);
	return 0;
}

int gp_taskiter_pass(struct gp_taskiter *it, struct gp_taskiter_pass *p)
{
	memset(p, 0, sizeof *p);
	int64_t t0 = gp_mono_ns();
	pthread_mutex_lock(&the_prog->lock);
	int rc = pass_locked(it, p);
	int saved = errno;
	pthread_mutex_unlock(&the_prog->lock);
	p->read_ns = gp_mono_ns();
	pthread_mutex_lock(&cost_lock);
	n_passes++;
	n_records += p->nrecs;
	ms_spent += (double)(p->read_ns - t0) / 1e6;
	pthread_mutex_unlock(&cost_lock);
	errno = saved;
	return rc;
}

#endif
