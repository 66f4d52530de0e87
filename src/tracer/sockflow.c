/* The kernel's count of socket bytes and failed connects: see sockflow.h
 * and src/tracer/bpf/sockflow.bpf.c. */
#include "config.h"
#include "sockflow.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char why_none[160];

const char *gp_sockflow_why(void)
{
	return why_none;
}

#ifndef HAVE_BPF

struct gp_sockflow *gp_sockflow_get(void)
{
	snprintf(why_none, sizeof why_none, "built without BPF (clang, bpftool or libbpf missing)");
	return NULL;
}
bool gp_sockflow_watch(struct gp_sockflow *f, int pid)
{
	return false;
}
void gp_sockflow_unwatch(struct gp_sockflow *f, int pid)
{
}
size_t gp_sockflow_of(struct gp_sockflow *f, double t, int account, struct gp_flowent **buf,
		      size_t *cap)
{
	return 0;
}
bool gp_sockflow_connects(struct gp_sockflow *f, int account, struct gp_connects *out)
{
	return false;
}
bool gp_sockflow_locks(struct gp_sockflow *f, int account, struct gp_lockrefused *out)
{
	return false;
}
void gp_sockflow_cost(const struct gp_sockflow *f, unsigned long *reads, unsigned long *entries,
		      unsigned long *dropped, double *ms)
{
	*reads = *entries = *dropped = 0;
	*ms = 0;
}

#else

#include "bpfload.h"
#include "keytab.h"
#include "timeutil.h"

#include <arpa/inet.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sys/socket.h>

#include "bpf/sockflow_abi.h"
#include "bpf/sockflow.skel.h"

/* A socket's counters at the last read, to tell an idle one. */
struct seen {
	uint64_t key;
	uint64_t total;        /* tx + rx */
	unsigned idle;         /* reads in a row it did not move */
	uint64_t gen;
};

struct gp_sockflow {
	struct sockflow_bpf *skel;
	int flows_fd, watched_fd, connects_fd, lockfails_fd;
	pthread_mutex_t lock;
	double t;
	bool read_once;
	struct gp_flowent *ents; /* this read's, sorted by account */
	size_t n, cap;
	struct gp_keytab seen;
	struct gp_flow_key *idle; /* to forget after this read */
	size_t nidle, idlecap;
	uint64_t gen;
	unsigned long reads, entries;
	double ms;
};

/* A socket forgotten after this many reads without a byte: a server's
 * closed connections must not fill the map (GP_FLOW_MAX).  A byte the
 * kernel adds between the read and the delete is lost (documented in
 * sockflow.h's cost: rare, the socket sat idle for three ticks). */
#define IDLE_READS 3

static uint64_t seen_key(int account, uint64_t ino)
{
	uint64_t k = ((uint64_t)(uint32_t)account << 40) ^ ino;
	return k ? k : 1;
}

static struct gp_sockflow *open_it(void)
{
	if (!gp_bpf_may_try(why_none, sizeof why_none))
		return NULL;
	struct sockflow_bpf *skel = sockflow_bpf__open();
	/* Its hash maps are sized for a fleet's watch (65 536 processes and
	 * sockets): preallocated, that is 4 x 65 536 elements charged at
	 * every start, 14 ms of a 1 s trace's 140 (perf, 2026-12-06).  Since
	 * Linux 6.1 a hash map allocates its elements as they are added
	 * from any context, tracing programs' included (kernel/bpf/
	 * hashtab.c on bpf_mem_alloc; the verifier's "preallocated hash
	 * map" rule for tracing programs went with it); before, they must
	 * be preallocated. */
	if (skel && gp_bpf_kernel_at_least(6, 1)) {
		bpf_map__set_map_flags(skel->maps.flows, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(skel->maps.watched, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(skel->maps.connects, BPF_F_NO_PREALLOC);
		bpf_map__set_map_flags(skel->maps.lockfails, BPF_F_NO_PREALLOC);
	}
	int err = skel ? sockflow_bpf__load(skel) : -errno;
	if (!err)
		err = sockflow_bpf__attach(skel);
	if (err) {
		gp_bpf_failed(err, why_none, sizeof why_none);
		sockflow_bpf__destroy(skel);
		return NULL;
	}
	struct gp_sockflow *f = calloc(1, sizeof *f);
	if (!f) {
		sockflow_bpf__destroy(skel);
		snprintf(why_none, sizeof why_none, "out of memory");
		return NULL;
	}
	f->skel = skel;
	f->flows_fd = bpf_map__fd(skel->maps.flows);
	f->watched_fd = bpf_map__fd(skel->maps.watched);
	f->connects_fd = bpf_map__fd(skel->maps.connects);
	f->lockfails_fd = bpf_map__fd(skel->maps.lockfails);
	pthread_mutex_init(&f->lock, NULL);
	gp_keytab_init(&f->seen, sizeof(struct seen));
	why_none[0] = 0;
	return f;
}

static struct gp_sockflow *the_one;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void)
{
	the_one = open_it();
}

struct gp_sockflow *gp_sockflow_get(void)
{
	pthread_once(&once, open_once);
	return the_one;
}

bool gp_sockflow_watch(struct gp_sockflow *f, int pid)
{
	__u32 k = (__u32)pid, v = (__u32)pid;
	return f && bpf_map_update_elem(f->watched_fd, &k, &v, BPF_ANY) == 0;
}

void gp_sockflow_unwatch(struct gp_sockflow *f, int pid)
{
	if (!f)
		return;
	__u32 k = (__u32)pid;
	bpf_map_delete_elem(f->watched_fd, &k);
	bpf_map_delete_elem(f->connects_fd, &k);
	bpf_map_delete_elem(f->lockfails_fd, &k);
}

static int by_account(const void *a, const void *b)
{
	const struct gp_flowent *x = a, *y = b;
	return (x->account > y->account) - (x->account < y->account);
}

/* One socket of this read: its counters kept in next (the table of this
 * read: what the map no longer holds is forgotten with it); an idle one
 * listed for deletion. */
static void keep_entry(struct gp_sockflow *f, struct gp_keytab *next, const struct gp_flow_key *k,
		       const struct gp_flow_val *v)
{
	uint64_t key = seen_key((int)k->account, k->ino), total = v->tx + v->rx;
	const struct seen *old = gp_keytab_find(&f->seen, key);
	bool made;
	struct seen *s = gp_keytab_put(next, key, &made);
	if (!s)
		return;
	if (!old || total < old->total) {
		s->gen = ++f->gen; /* new, or made again since it was forgotten */
		s->idle = 0;
	} else {
		s->gen = old->gen;
		s->idle = total == old->total ? old->idle + 1 : 0;
	}
	s->total = total;
	if (s->idle >= IDLE_READS && f->nidle < f->idlecap)
		f->idle[f->nidle++] = *k;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct gp_flowent *n = realloc(f->ents, cap * sizeof *n);
		if (!n)
			return;
		f->ents = n;
		f->cap = cap;
	}
	f->ents[f->n++] = (struct gp_flowent){
		.ino = k->ino, .account = (int)k->account, .tgid = (int)v->tgid,
		.tx = v->tx, .rx = v->rx, .io_tx = v->io_tx, .io_rx = v->io_rx,
		.io_writes = v->io_writes, .io_reads = v->io_reads, .gen = s->gen,
		.family = v->family, .type = v->type, .lport = v->lport, .rport = v->rport,
		.named = v->named != 0, .pipe = v->pipe != 0,
	};
}

/* One walk of the map: every socket's counters, sorted by account; the
 * idle ones are deleted after the walk (deleting during it would make
 * get_next_key start over). */
static void read_map(struct gp_sockflow *f)
{
	double t0 = gp_mono_now();
	f->n = 0;
	f->nidle = 0;
	if (!f->idle) {
		f->idle = malloc(4096 * sizeof *f->idle);
		f->idlecap = f->idle ? 4096 : 0;
	}
	struct gp_keytab next;
	gp_keytab_init(&next, sizeof(struct seen));
	struct gp_flow_key k;
	struct gp_flow_val v;
	bool first = true;
	/* the kernel copies the current key in before it writes the next */
	while (bpf_map_get_next_key(f->flows_fd, first ? NULL : &k, &k) == 0) {
		first = false;
		if (bpf_map_lookup_elem(f->flows_fd, &k, &v) == 0)
			keep_entry(f, &next, &k, &v);
	}
	gp_keytab_free(&f->seen);
	f->seen = next;
	for (size_t i = 0; i < f->nidle; i++) {
		bpf_map_delete_elem(f->flows_fd, &f->idle[i]);
		/* forgotten: counted again from 0, under a new gen */
		struct seen *s = gp_keytab_find(&f->seen, seen_key((int)f->idle[i].account, f->idle[i].ino));
		if (s)
			s->total = UINT64_MAX;
	}
	if (f->n > 1)
		qsort(f->ents, f->n, sizeof *f->ents, by_account);
	f->reads++;
	f->entries += f->n;
	f->ms += (gp_mono_now() - t0) * 1e3;
}

size_t gp_sockflow_of(struct gp_sockflow *f, double t, int account, struct gp_flowent **buf,
		      size_t *cap)
{
	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	if (!f->read_once || t != f->t) {
		read_map(f);
		f->t = t;
		f->read_once = true;
	}
	/* the first of account's, by bisection */
	size_t lo = 0, hi = f->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->ents[mid].account < account)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t n = 0;
	for (size_t i = lo; i < f->n && f->ents[i].account == account; i++) {
		if (n == *cap) {
			size_t c = *cap ? 2 * *cap : 16;
			struct gp_flowent *b = realloc(*buf, c * sizeof *b);
			if (!b)
				break;
			*buf = b;
			*cap = c;
		}
		(*buf)[n++] = f->ents[i];
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

static void format_to(const struct gp_connfail *c, char *to, size_t n)
{
	char a[INET6_ADDRSTRLEN];
	if (c->family == AF_INET && inet_ntop(AF_INET, c->addr, a, sizeof a))
		snprintf(to, n, "%s:%u", a, c->port);
	else if (c->family == AF_INET6 && inet_ntop(AF_INET6, c->addr, a, sizeof a))
		snprintf(to, n, "[%s]:%u", a, c->port);
	else if (c->family == AF_UNIX)
		snprintf(to, n, "%.*s", (int)sizeof c->path, c->path);
	else
		to[0] = 0;
}

bool gp_sockflow_connects(struct gp_sockflow *f, int account, struct gp_connects *out)
{
	memset(out, 0, sizeof *out);
	if (!f)
		return false;
	__u32 k = (__u32)account;
	struct gp_connfail c;
	if (bpf_map_lookup_elem(f->connects_fd, &k, &c) != 0)
		return false;
	out->refused = c.refused;
	out->failed = c.failed;
	out->ok = c.ok;
	out->last_errno = c.last_errno;
	format_to(&c, out->to, sizeof out->to);
	return true;
}

bool gp_sockflow_locks(struct gp_sockflow *f, int account, struct gp_lockrefused *out)
{
	memset(out, 0, sizeof *out);
	if (!f)
		return false;
	__u32 k = (__u32)account;
	struct gp_lockfail l;
	if (bpf_map_lookup_elem(f->lockfails_fd, &k, &l) != 0 || !l.refused)
		return false;
	out->refused = l.refused;
	out->major = l.dev >> 20; /* include/linux/kdev_t.h: MINORBITS 20 */
	out->minor = l.dev & ((1u << 20) - 1);
	out->ino = l.ino;
	out->fd = l.fd;
	out->is_flock = l.is_flock != 0;
	return true;
}

void gp_sockflow_cost(const struct gp_sockflow *f, unsigned long *reads, unsigned long *entries,
		      unsigned long *dropped, double *ms)
{
	*reads = f ? f->reads : 0;
	*entries = f ? f->entries : 0;
	*dropped = f && f->skel->bss ? (unsigned long)f->skel->bss->dropped : 0;
	*ms = f ? f->ms : 0;
}

#endif
