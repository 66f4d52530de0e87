#include "config.h"
#include "waitgraph.h"
#include "waits.h"
#include "parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[GP_EDGE_COUNT] = {
	[GP_EDGE_JOIN] = "join", [GP_EDGE_MUTEX] = "mutex", [GP_EDGE_FUTEX] = "futex",
	[GP_EDGE_PIPE] = "pipe", [GP_EDGE_FLOCK] = "flock", [GP_EDGE_POSIX] = "posix",
	[GP_EDGE_STOPPED] = "stopped", [GP_EDGE_SOCKET] = "socket", [GP_EDGE_ORPHAN] = "orphan",
};

const char *gp_edge_name(enum gp_edge_how h)
{
	return h > GP_EDGE_NONE && h < GP_EDGE_COUNT ? names[h] : NULL;
}

enum gp_edge_how gp_edge_from_name(const char *name)
{
	for (int h = 1; name && h < GP_EDGE_COUNT; h++)
		if (!strcmp(name, names[h]))
			return (enum gp_edge_how)h;
	return GP_EDGE_NONE;
}

/* The walk's state: per node, its end once known and whether it is on
 * the path being followed (a node met again on the path closes a cycle). */
struct walk {
	const struct gp_wg_node *nd;
	size_t n;
	int root;
	uint8_t *end;
	bool *on_path;
	size_t *path, depth;
	struct gp_wg_pt *out;
	struct tid_key *by_tid; /* the nodes by (pid, tid), made on first use */
	bool by_tid_tried;
};

struct tid_key {
	int pid, tid;
	size_t i;
};

static int cmp_key(const void *a, const void *b)
{
	const struct tid_key *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* The index by (pid, tid), made on first use; false when it could not be. */
static bool index_nodes(struct walk *w)
{
	if (!w->by_tid_tried) {
		w->by_tid_tried = true;
		w->by_tid = malloc(w->n * sizeof *w->by_tid);
		if (w->by_tid) {
			for (size_t i = 0; i < w->n; i++)
				w->by_tid[i] = (struct tid_key){ w->nd[i].pid, w->nd[i].tid, i };
			qsort(w->by_tid, w->n, sizeof *w->by_tid, cmp_key);
		}
	}
	return w->by_tid != NULL;
}

/* The first index entry at or after (pid, tid). */
static size_t lower_bound(const struct walk *w, int pid, int tid)
{
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tid_key *m = &w->by_tid[mid];
		if (m->pid < pid || (m->pid == pid && m->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The node of thread tid of process pid (the first such), SIZE_MAX none.
 * By binary search: a scan per join or mutex edge was quadratic in a
 * process of 10 000 threads; a scan still when the index could not be
 * made. */
static size_t find_tid(struct walk *w, int pid, int tid)
{
	if (!index_nodes(w)) {
		for (size_t i = 0; i < w->n; i++)
			if (w->nd[i].tid == tid && w->nd[i].pid == pid)
				return i;
		return SIZE_MAX;
	}
	size_t lo = lower_bound(w, pid, tid);
	return lo < w->n && w->by_tid[lo].pid == pid && w->by_tid[lo].tid == tid ? w->by_tid[lo].i : SIZE_MAX;
}

static bool stopped(char s)
{
	return s == 'T' || s == 't';
}

/* The nodes of process pid: [*from, *to) of the index, or of the nodes
 * themselves (every one, to be filtered) when there is no index. */
static void process_nodes(struct walk *w, int pid, size_t *from, size_t *to, bool *indexed)
{
	*indexed = index_nodes(w);
	if (!*indexed) {
		*from = 0;
		*to = w->n;
		return;
	}
	/* Both ends by binary search: walking to the end of the process was
	 * a pass over its threads for each lone_private_lock question, one a
	 * thread -- 10 000 idle threads of one process made that 66 % of a
	 * trace's CPU (perf, 2026-12-06). */
	*from = lower_bound(w, pid, INT_MIN);
	*to = pid == INT_MAX ? w->n : lower_bound(w, pid + 1, INT_MIN);
}

/* A process as the end of an edge (a pipe's peer, a lock's holder):
 * stopped if a thread of it is (*stopped_at: the first such), running if
 * one runs, else where its main thread's chain ends: that thread, to be
 * followed, in *next (the end GP_END_NONE then).  By the index: a chain
 * of pipes through 300 000 processes was a scan of every node a hop. */
static enum gp_chain_end process_end(struct walk *w, int pid, size_t *stopped_at, size_t *next)
{
	size_t main = SIZE_MAX, first = SIZE_MAX, from, to;
	bool running = false, indexed;
	process_nodes(w, pid, &from, &to, &indexed);
	for (size_t k = from; k < to; k++) {
		size_t i = indexed ? w->by_tid[k].i : k;
		if (w->nd[i].pid != pid)
			continue;
		if (stopped(w->nd[i].state) && (*stopped_at == SIZE_MAX || i < *stopped_at))
			*stopped_at = i;
		running |= w->nd[i].state == 'R';
		if (w->nd[i].tid == pid && (main == SIZE_MAX || i > main))
			main = i; /* the last, as a scan in order kept */
		if (first == SIZE_MAX || i < first)
			first = i;
	}
	if (*stopped_at != SIZE_MAX)
		return GP_END_STOPPED;
	if (first == SIZE_MAX)
		return GP_END_OUTSIDE; /* not in the traced tree */
	if (running)
		return GP_END_RUNNING;
	*next = main != SIZE_MAX ? main : first;
	return GP_END_NONE;
}

static void note_stopped(struct walk *w, size_t s)
{
	struct gp_wg_pt *o = w->out;
	if (o->stopped_pid && o->stopped_pid != w->nd[s].pid)
		return;
	o->stopped_pid = w->nd[s].pid;
	gp_strlcpy(o->stopped_comm, w->nd[s].pcomm ? w->nd[s].pcomm : "", sizeof o->stopped_comm);
	if (w->nd[s].on.how == GP_EDGE_STOPPED) {
		o->stopper_pid = w->nd[s].on.id;
		gp_strlcpy(o->stopper_comm, w->nd[s].on.comm, sizeof o->stopper_comm);
	}
}

/* The path from the node met again to the top is the cycle. */
static void note_cycle(struct walk *w, size_t again)
{
	struct gp_wg_pt *o = w->out;
	if (o->ncycle)
		return;
	size_t k = w->depth;
	while (k > 0 && w->path[k - 1] != again)
		k--;
	for (size_t q = k ? k - 1 : 0; q < w->depth && o->ncycle < GP_WG_MEMBERS; q++) {
		const struct gp_wg_node *x = &w->nd[w->path[q]];
		unsigned m = o->ncycle++;
		o->cyc_tid[m] = x->tid;
		o->cyc_pid[m] = x->pid;
		o->cyc_on[m] = x->on.id;
		o->cyc_how[m] = x->on.how;
		gp_strlcpy(o->cyc_comm[m], x->comm ? x->comm : "", sizeof o->cyc_comm[m]);
	}
}

/* What a lock's waiter's chain ends in, from where its holder's ends: a
 * holder that sleeps, or lives outside the tree, holds the lock
 * meanwhile: the waiter is blocked behind it. */
static enum gp_chain_end through_lock(enum gp_chain_end e)
{
	return e == GP_END_STOPPED || e == GP_END_CYCLE || e == GP_END_RUNNING ? e : GP_END_HOLDER;
}

/* What the chain of x's waiter ends in, given where its edge leads ends
 * in e: a lock's edge changes it, the others pass it on. */
static enum gp_chain_end hop(const struct gp_wg_node *x, enum gp_chain_end e)
{
	return x->on.how == GP_EDGE_FLOCK || x->on.how == GP_EDGE_POSIX ? through_lock(e) : e;
}

/* A process at the end of x's edge (a pipe's or socket's peer, a lock's
 * holder): its end, or GP_END_NONE and the node to follow in *next. */
static enum gp_chain_end peer_end(struct walk *w, const struct gp_wg_node *x, size_t *next)
{
	size_t s = SIZE_MAX;
	enum gp_chain_end e = process_end(w, x->on.id, &s, next);
	if (e == GP_END_STOPPED && s != SIZE_MAX)
		note_stopped(w, s);
	return *next != SIZE_MAX ? GP_END_NONE : hop(x, e);
}

/* One step of x's chain: where its edge ends, or GP_END_NONE and the
 * node it leads to in *next (SIZE_MAX: none, the end is the answer). */
static enum gp_chain_end edge_step(struct walk *w, const struct gp_wg_node *x, size_t *next)
{
	*next = SIZE_MAX;
	switch (x->on.how) {
	case GP_EDGE_STOPPED:
		return GP_END_STOPPED;
	case GP_EDGE_JOIN:
	case GP_EDGE_MUTEX:
		*next = find_tid(w, x->pid, x->on.id);
		/* gone, or not a thread of it: unknown */
		return *next == SIZE_MAX ? GP_END_UNKNOWN : GP_END_NONE;
	case GP_EDGE_PIPE:
	case GP_EDGE_SOCKET:
		return x->on.id ? peer_end(w, x, next) : GP_END_OUTSIDE;
	case GP_EDGE_FLOCK:
	case GP_EDGE_POSIX:
		return x->on.id ? peer_end(w, x, next) : GP_END_UNKNOWN;
	case GP_EDGE_FUTEX:
		return GP_END_UNKNOWN;
	case GP_EDGE_ORPHAN:
		return GP_END_ORPHAN; /* no thread of its process will unlock it */
	default:
		break;
	}
	switch (gp_wait_group((enum gp_wait)x->wait)) {
	case GP_WG_OUTSIDE: return GP_END_OUTSIDE;
	case GP_WG_STOPPED: return GP_END_STOPPED;
	case GP_WG_NONE: return x->state == 'R' ? GP_END_RUNNING : GP_END_NONE;
	case GP_WG_CHILD: return GP_END_NONE; /* the children are judged as processes */
	default: return GP_END_UNKNOWN;
	}
}

/* Where the chain from node start ends, each node on it memoized.  A
 * loop with an explicit path, not a recursion: a chain is as long as the
 * input makes it (issue 27: 300 000 threads each joining the next
 * overflowed the stack of `report`). */
static enum gp_chain_end follow(struct walk *w, size_t start)
{
	size_t base = w->depth, i = start;
	enum gp_chain_end e;
	bool direct = false; /* the last node pushed reached its end itself */
	for (;;) {
		const struct gp_wg_node *x = &w->nd[i];
		if (w->end[i] != GP_END_NONE) {
			e = (enum gp_chain_end)w->end[i];
			break;
		}
		if (w->on_path[i]) {
			note_cycle(w, i);
			e = GP_END_CYCLE;
			break;
		}
		if (x->state == 'R' || stopped(x->state)) {
			if (stopped(x->state))
				note_stopped(w, i);
			e = x->state == 'R' ? GP_END_RUNNING : GP_END_STOPPED;
			w->end[i] = (uint8_t)e;
			break;
		}
		size_t next;
		w->on_path[i] = true;
		w->path[w->depth++] = i;
		e = edge_step(w, x, &next);
		if (next == SIZE_MAX) {
			direct = true;
			break;
		}
		i = next;
	}
	/* Back along the path: each node ends where the node its edge leads
	 * to ends, through a lock as a holder (hop).  GP_END_NONE, "not
	 * followed", is zero: out of the memo's way. */
	while (w->depth > base) {
		size_t k = w->path[--w->depth];
		w->on_path[k] = false;
		if (!direct)
			e = hop(&w->nd[k], e);
		direct = false;
		w->end[k] = (uint8_t)e;
	}
	return e;
}

/* An unknown edge (a futex with no owner field) whose every possible
 * releaser waits outside: the chain ends outside through it.  Who can
 * release it: the other threads of its process (a private futex), or of
 * its sibling processes of one name (a shared one: a pool's workers on
 * one queue's lock, forked from one parent).  Releasers that wait on an
 * unknown edge themselves do not count; none left, or one not waiting
 * outside: unknown. */
/* Is y among those that can release x's futex: its process's threads (a
 * private futex), or its same-named siblings' (a shared one)? */
static bool in_scope(const struct gp_wg_node *x, const struct gp_wg_node *y)
{
	return x->on.shared ? y->ppid == x->ppid && y->pcomm && x->pcomm && !strcmp(y->pcomm, x->pcomm)
			    : y->pid == x->pid;
}

static bool released_outside(const struct walk *w, size_t i)
{
	const struct gp_wg_node *x = &w->nd[i];
	if (x->on.shared && !x->pcomm)
		return false; /* no sibling can be told by name */
	unsigned outside = 0;
	for (size_t k = 0; k < w->n; k++) {
		const struct gp_wg_node *y = &w->nd[k];
		if (k == i)
			continue;
		if (!in_scope(x, y) || y->on.how == GP_EDGE_FUTEX)
			continue;
		if (w->end[k] != GP_END_OUTSIDE)
			return false;
		outside++;
	}
	return outside > 0;
}

/* Unknown edges released by threads that wait outside.  The answer is
 * the same for every futex waiter of one scope (futex waiters are not
 * releasers, so marking one changes no other's answer): it is kept for
 * the last scope asked, as nodes come process by process -- asked once a
 * node, 10 000 idle threads of one process made this a quarter of the
 * sampler's CPU (perf, 2026-12-05). */
static void mark_released(struct walk *w, struct gp_wg_pt *out)
{
	const struct gp_wg_node *asked = NULL; /* the last waiter whose scope was judged */
	bool answer = false;
	for (size_t i = 0; i < w->n; i++) {
		const struct gp_wg_node *x = &w->nd[i];
		if (x->on.how != GP_EDGE_FUTEX)
			continue;
		if (!asked || asked->on.shared != x->on.shared || !in_scope(x, asked)) {
			asked = x;
			answer = released_outside(w, i);
		}
		if (answer) {
			w->end[i] = GP_END_OUTSIDE;
			out->released++;
		}
	}
}

/* The only thread of its process asleep with no timeout on a lock
 * private to the process (FUTEX_PRIVATE_FLAG: no other process can wake
 * it, futex(2)) that names no owner: no thread of the process is left to
 * release it.  A lock a forked child inherited held (fork(2): the child
 * has one thread; a DataLoader worker's copy of a lock its parent's
 * thread held), with no owner field to read (CPython's locks are
 * semaphores). */
static bool lone_private_lock(struct walk *w, const struct gp_wg_node *x)
{
	if (x->on.how != GP_EDGE_FUTEX || x->on.shared || x->wait != GP_WAIT_LOCK || x->state != 'S')
		return false;
	size_t from, to;
	bool indexed;
	process_nodes(w, x->pid, &from, &to, &indexed);
	unsigned threads = 0;
	for (size_t k = from; k < to && threads < 2; k++)
		threads += w->nd[indexed ? w->by_tid[k].i : k].pid == x->pid;
	return threads == 1;
}

void gp_waitgraph_judge(const struct gp_wg_node *nodes, size_t n, int root,
			struct gp_wg_pt *out)
{
	memset(out, 0, sizeof *out);
	if (!n)
		return;
	struct walk w = { .nd = nodes, .n = n, .root = root, .out = out };
	out->root = root;
	w.end = calloc(n, sizeof *w.end);
	w.on_path = calloc(n, sizeof *w.on_path);
	w.path = calloc(n + 1, sizeof *w.path);
	if (!w.end || !w.on_path || !w.path)
		goto done;
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].on.how != GP_EDGE_NONE)
			out->edges++;
		follow(&w, i);
	}
	mark_released(&w, out);
	/* Chains through a released edge end outside too (a join on a
	 * thread released that way), as do those through a cycle's member. */
	for (size_t i = 0; i < n; i++)
		if (w.end[i] == GP_END_UNKNOWN && (nodes[i].on.how == GP_EDGE_JOIN
						    || nodes[i].on.how == GP_EDGE_MUTEX)) {
			size_t j = find_tid(&w, nodes[i].pid, nodes[i].on.id);
			if (j != SIZE_MAX && w.end[j] == GP_END_OUTSIDE)
				w.end[i] = GP_END_OUTSIDE;
		}
	/* Who is behind the stopped process, and which holder has the most waiters. */
	struct { int pid, tid; uint8_t how; unsigned n; int first; } h[8];
	size_t nh = 0;
	for (size_t i = 0; i < n; i++) {
		const struct gp_wg_node *x = &nodes[i];
		if (w.end[i] == GP_END_STOPPED && !stopped(x->state))
			out->behind++;
		if ((x->on.how == GP_EDGE_ORPHAN || lone_private_lock(&w, x))
		    && out->orphan_waiters++ == 0) {
			out->orphan_waiter = x->tid;
			out->orphan_pid = x->pid;
			out->orphan_owner = x->on.id;
			out->orphan_of = x->on.of;
			gp_strlcpy(out->orphan_comm, x->pcomm ? x->pcomm : "", sizeof out->orphan_comm);
			gp_strlcpy(out->orphan_of_comm, x->on.comm, sizeof out->orphan_of_comm);
		}
		int hp = 0, ht = 0;
		if ((x->on.how == GP_EDGE_FLOCK || x->on.how == GP_EDGE_POSIX) && x->on.id)
			hp = x->on.id;
		else if (x->on.how == GP_EDGE_MUTEX && w.end[i] != GP_END_CYCLE)
			hp = x->pid, ht = x->on.id;
		if (!hp)
			continue;
		size_t k = 0;
		while (k < nh && !(h[k].pid == hp && h[k].tid == ht))
			k++;
		if (k == nh) {
			if (nh == 8)
				continue;
			h[nh++] = (typeof(h[0])){ hp, ht, x->on.how, 0, x->tid };
		}
		h[k].n++;
	}
	size_t best = SIZE_MAX;
	for (size_t k = 0; k < nh; k++)
		if (best == SIZE_MAX || h[k].n > h[best].n)
			best = k;
	if (best != SIZE_MAX) {
		out->holder_pid = h[best].pid;
		out->holder_tid = h[best].tid;
		out->holder_how = h[best].how;
		out->holder_waiters = (uint16_t)h[best].n;
		out->waiter_tid = h[best].first;
		out->holder_outside = true;
		for (size_t i = 0; i < n; i++) {
			const struct gp_wg_node *x = &nodes[i];
			if (x->pid == h[best].pid && (!h[best].tid || x->tid == h[best].tid)) {
				out->holder_outside = false;
				gp_strlcpy(out->holder_comm, (h[best].tid ? x->comm : x->pcomm) ? (h[best].tid ? x->comm : x->pcomm) : "",
					   sizeof out->holder_comm);
				break;
			}
		}
		if (out->holder_outside)
			for (size_t i = 0; i < n; i++)
				if (nodes[i].tid == out->waiter_tid)
					gp_strlcpy(out->holder_comm, nodes[i].on.comm, sizeof out->holder_comm);
	}
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].tid == root && nodes[i].pid == root) {
			out->main_end = w.end[i];
			size_t j = i;
			for (size_t hops = 0; hops < n && nodes[j].on.how == GP_EDGE_JOIN; hops++) {
				size_t k = find_tid(&w, nodes[j].pid, nodes[j].on.id);
				if (k == SIZE_MAX)
					break;
				j = k;
			}
			if (j != i)
				out->main_joins = nodes[j].tid;
		}
		if (nodes[i].tid == nodes[i].pid && nodes[i].wait == GP_WAIT_LOCK
		    && w.end[i] != GP_END_OUTSIDE && !out->main_blocked_pid)
			out->main_blocked_pid = nodes[i].pid;
	}
done:
	free(w.by_tid);
	free(w.end);
	free(w.on_path);
	free(w.path);
}
