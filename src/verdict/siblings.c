/* Siblings compared: see siblings.h. */
#include "config.h"
#include "siblings.h"
#include "verdict.h"
#include "verdict_int.h"
#include "parse.h"

#include <stdlib.h>
#include <string.h>

/* A thread on a CPU at the snapshot, or the busiest of the phase at this
 * share of a core or more, computes (unless it is in a collective: NCCL's
 * host thread spins there while it waits). */
#define SIB_BUSY_PCT 50.0f

static void from_snapshot(struct gp_sibling *s, const struct gp_stuck_proc *p,
			  const struct gp_proc_ident *id, int busy_pid, float busy_cpu, double t)
{
	memset(s, 0, sizeof *s);
	s->pid = p->pid;
	s->rank = s->world_size = -1;
	s->dist = p->dist;
	s->in_coll = p->lead_dist;
	gp_strlcpy(s->frame, p->wait_frame, sizeof s->frame);
	gp_strlcpy(s->user, p->user_frame, sizeof s->user);
	gp_strlcpy(s->program, p->comm, sizeof s->program);
	gp_strlcpy(s->label, p->comm, sizeof s->label);
	if (id) {
		s->ppid = id->ppid;
		s->rank = id->rank;
		s->world_size = id->world_size;
		s->job_env = id->job_env;
		gp_strlcpy(s->program, id->program, sizeof s->program);
		gp_strlcpy(s->label, id->label, sizeof s->label);
		gp_strlcpy(s->job, id->job, sizeof s->job);
	}
	bool busy = busy_pid == p->pid && busy_cpu >= SIB_BUSY_PCT;
	if (id && id->active_known) {
		s->stop_t = id->active_t;
		s->stop_known = true;
	}
	if (p->state == 'Z' || p->state == 'X') {
		/* exited; its parent has not reaped it yet */
		s->how = GP_SIB_EXITED;
		s->exit_t = t;
		/* when its main thread last ran, else when it was seen gone */
		if (!s->stop_known)
			s->stop_t = id && id->gone ? id->gone_t : t;
		s->stop_known = true;
		s->frame[0] = s->user[0] = '\0';
		if (id && id->ended) {
			s->ended = true;
			s->status = id->status;
			s->signal = id->signal;
		}
	} else if (!p->wait_frame[0]) {
		s->how = GP_SIB_UNREAD;
	} else if ((p->state == 'R' || busy) && !p->lead_dist) {
		s->how = GP_SIB_RUNS;
		s->cpu = busy ? busy_cpu : 0.0f;
	} else {
		s->how = GP_SIB_WAITS;
	}
}

static bool in_snapshot(const struct gp_stuck *st, int pid)
{
	for (size_t i = 0; i < st->nproc; i++)
		if (st->proc[i].pid == pid)
			return true;
	return false;
}

/* A process of the snapshot runs it (a tree's short-lived helpers that
 * came and went are no one's siblings). */
static bool program_in(const struct gp_sibling *s, size_t n, const char *program)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].how != GP_SIB_EXITED && !strcmp(s[i].program, program))
			return true;
	return false;
}

size_t gp_siblings_of(const struct gp_stuck *stuck, const struct gp_proctab *procs, int busy_pid,
		      float busy_cpu, unsigned source, struct gp_sibling *out, size_t cap)
{
	size_t n = 0;
	if (!stuck || stuck->t < 0)
		return 0;
	for (size_t i = 0; i < stuck->nproc && n < cap; i++) {
		const struct gp_stuck_proc *p = &stuck->proc[i];
		if (!p->lead)
			continue;
		from_snapshot(&out[n], p, procs ? gp_proctab_find(procs, p->pid) : NULL, busy_pid,
			      busy_cpu, stuck->t);
		out[n++].source = source;
	}
	/* The processes that left before the snapshot. */
	for (size_t i = 0; procs && i < procs->n && n < cap; i++) {
		const struct gp_proc_ident *id = &procs->p[i];
		if (!id->gone || id->gone_t > stuck->t || in_snapshot(stuck, id->pid)
		    || !program_in(out, n, id->program))
			continue;
		struct gp_sibling *s = &out[n++];
		memset(s, 0, sizeof *s);
		s->pid = id->pid;
		s->ppid = id->ppid;
		s->rank = id->rank;
		s->world_size = id->world_size;
		s->job_env = id->job_env;
		s->how = GP_SIB_EXITED;
		s->exit_t = s->stop_t = id->gone_t;
		if (id->active_known && id->active_t < id->gone_t)
			s->stop_t = id->active_t;
		s->stop_known = true;
		s->ended = id->ended;
		s->status = id->status;
		s->signal = id->signal;
		s->source = source;
		gp_strlcpy(s->program, id->program, sizeof s->program);
		gp_strlcpy(s->label, id->label, sizeof s->label);
		gp_strlcpy(s->job, id->job, sizeof s->job);
	}
	return n;
}

void gp_siblings_shift(struct gp_sibling *s, size_t n, double by)
{
	for (size_t i = 0; i < n; i++) {
		s[i].stop_t += by;
		s[i].exit_t += by;
	}
}

/* ---- the comparison ---------------------------------------------------- */

static bool same_program(const struct gp_sibling *a, const struct gp_sibling *b)
{
	return !strcmp(a->program, b->program) && !strcmp(a->job, b->job);
}

/* a's parent is b (one result: pids are a host's). */
static bool child_of(const struct gp_sibling *a, const struct gp_sibling *b)
{
	return a->source == b->source && a->ppid && a->ppid == b->pid;
}

/* Where one is: the groups' key. */
static bool same_place(const struct gp_sibling *a, const struct gp_sibling *b)
{
	if (a->how != b->how)
		return false;
	if (a->how != GP_SIB_WAITS)
		return true; /* exited; computing (each at its own line of the loop) */
	return !strcmp(a->frame, b->frame) && !strcmp(a->user, b->user);
}

static int by_rank(const struct gp_sibling *a, const struct gp_sibling *b)
{
	if ((a->rank >= 0) != (b->rank >= 0))
		return a->rank >= 0 ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->source != b->source)
		return a->source < b->source ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The set compared: indices into s, sorted by rank then pid. */
struct set {
	const struct gp_sibling *s;
	size_t *ix;
	size_t n;
	unsigned nunread;        /* of the kind and program, but UNREAD (not in ix) */
	struct gp_sib_member unread[GP_SIB_ODD_NAMED];
	enum gp_sib_kind kind;
	int parent;              /* workers: index of their parent in s, else -1 */
};

/* ix sorted by rank, then pid (a few dozen: insertion). */
static void sort_set(struct set *st)
{
	for (size_t i = 1; i < st->n; i++) {
		size_t v = st->ix[i], j = i;
		while (j > 0 && by_rank(&st->s[st->ix[j - 1]], &st->s[v]) > 0) {
			st->ix[j] = st->ix[j - 1];
			j--;
		}
		st->ix[j] = v;
	}
}

/* The group holding most of the set: its first member's index in ix,
 * and its size.  A tie goes to a group in the collective. */
static size_t majority(const struct set *st, unsigned *size)
{
	size_t best = 0;
	unsigned bn = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct gp_sibling *a = &st->s[st->ix[i]];
		unsigned c = 0;
		for (size_t j = 0; j < st->n; j++)
			c += same_place(a, &st->s[st->ix[j]]);
		if (c > bn || (c == bn && a->in_coll && !st->s[st->ix[best]].in_coll)) {
			bn = c;
			best = i;
		}
	}
	*size = bn;
	return best;
}

/* Who stopped first (see siblings.h).  One that computes has not
 * stopped: the others stopped while it ran, and it is first only in
 * that sense (first_runs).  Every member's stop must be known, and the
 * first must be apart from the others by more than a sample's grain. */
static void timeline(const struct set *st, const struct gp_sibling *rep, struct gp_sibcmp *c)
{
	const struct gp_sibling *first = NULL, *runs = NULL;
	double from = 0, to = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct gp_sibling *a = &st->s[st->ix[i]];
		if (a->how == GP_SIB_RUNS) {
			runs = runs ? runs : a;
			continue;
		}
		if (!a->stop_known)
			return;
		if (!first || a->stop_t < first->stop_t)
			first = a;
	}
	if (runs) {
		/* the others' span: every stopped one */
		first = NULL;
		for (size_t i = 0; i < st->n; i++) {
			const struct gp_sibling *a = &st->s[st->ix[i]];
			if (a->how == GP_SIB_RUNS)
				continue;
			from = first ? (a->stop_t < from ? a->stop_t : from) : a->stop_t;
			to = first ? (a->stop_t > to ? a->stop_t : to) : a->stop_t;
			first = a;
		}
		if (!first)
			return;
		c->first = (struct gp_sib_member){ runs->pid, runs->rank, runs->source };
		c->first_runs = true;
		c->first_odd = !same_place(runs, rep);
	} else {
		if (!first)
			return;
		bool any = false;
		for (size_t i = 0; i < st->n; i++) {
			const struct gp_sibling *a = &st->s[st->ix[i]];
			if (a == first)
				continue;
			from = any ? (a->stop_t < from ? a->stop_t : from) : a->stop_t;
			to = any ? (a->stop_t > to ? a->stop_t : to) : a->stop_t;
			any = true;
		}
		/* 1.5 s: more than a 1 Hz sample's grain apart */
		if (!any || from - first->stop_t < 1.5)
			return;
		c->first = (struct gp_sib_member){ first->pid, first->rank, first->source };
		c->first_t = first->stop_t;
		c->first_odd = !same_place(first, rep);
	}
	c->rest_from = from;
	c->rest_to = to;
	c->timeline = true;
}

static void fill(const struct set *st, size_t maj, unsigned m, enum gp_sib_story story,
		 struct gp_sibcmp *c)
{
	const struct gp_sibling *rep = &st->s[st->ix[maj]];
	memset(c, 0, sizeof *c);
	c->kind = st->kind;
	c->story = story;
	c->n = (unsigned)st->n;
	c->world_size = rep->world_size;
	gp_strlcpy(c->label, rep->label, sizeof c->label);
	if (st->parent >= 0) {
		c->parent_pid = st->s[st->parent].pid;
		gp_strlcpy(c->parent_label, st->s[st->parent].label, sizeof c->parent_label);
	}
	c->how = rep->how;
	c->in_coll = rep->in_coll;
	gp_strlcpy(c->frame, rep->frame, sizeof c->frame);
	gp_strlcpy(c->user, rep->user, sizeof c->user);
	c->nsame = m;
	unsigned k = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct gp_sibling *a = &st->s[st->ix[i]];
		if (a->world_size != c->world_size)
			c->world_size = -1;
		if (same_place(a, rep)) {
			if (k < GP_SIB_SAME_NAMED)
				c->same[k++] = (struct gp_sib_member){ a->pid, a->rank, a->source };
		} else {
			if (c->nodd < GP_SIB_ODD_NAMED)
				c->odd[c->nodd] = *a;
			c->nodd++;
		}
	}
	c->nunread = st->nunread;
	memcpy(c->unread, st->unread, sizeof c->unread);
	c->all_wait = c->kind == GP_SIBK_RANKS && story == GP_SIBS_SAME && c->how == GP_SIB_WAITS && c->in_coll
		      && c->world_size == (int)c->n && !c->nunread;
	for (unsigned i = 0; i < c->nodd && i < GP_SIB_ODD_NAMED; i++)
		if (c->kind == GP_SIBK_RANKS && story == GP_SIBS_ODD && c->how == GP_SIB_WAITS && c->in_coll
		    && c->odd[i].how == GP_SIB_EXITED)
			c->waits_for_exited = true;
	if (story != GP_SIBS_SAME)
		timeline(st, rep, c);
}

/* The comparison of one set; false: nothing to say. */
static bool judge_set(const struct set *st, struct gp_sibcmp *c)
{
	unsigned m;
	size_t maj = majority(st, &m);
	size_t k = st->n;
	if (m == k) {
		fill(st, maj, m, GP_SIBS_SAME, c);
		return st->kind == GP_SIBK_RANKS;
	}
	if (k == 2) {
		/* Of two ranks, the one outside the collective is the late one. */
		const struct gp_sibling *a = &st->s[st->ix[0]], *b = &st->s[st->ix[1]];
		bool ca = a->how == GP_SIB_WAITS && a->in_coll, cb = b->how == GP_SIB_WAITS && b->in_coll;
		if (st->kind == GP_SIBK_RANKS && ca != cb) {
			fill(st, ca ? 0 : 1, 1, GP_SIBS_ODD, c);
			return true;
		}
		fill(st, 0, 1, GP_SIBS_TWO, c);
		return true;
	}
	unsigned apart = (unsigned)k - m, few = (unsigned)k / 4 > 1 ? (unsigned)k / 4 : 1;
	if (m * 2 <= k || apart > few)
		return false;
	fill(st, maj, m, GP_SIBS_ODD, c);
	return true;
}

static bool rankish(const struct gp_sibling *a)
{
	return a->job_env || a->dist;
}

/* j has a parent among the processes of s[i]'s program (that are ranks,
 * with only_ranks). */
static bool has_parent(const struct gp_sibling *s, size_t n, size_t i, size_t j, bool only_ranks)
{
	for (size_t q = 0; q < n; q++)
		if (q != j && same_program(&s[i], &s[q]) && child_of(&s[j], &s[q])
		    && (!only_ranks || rankish(&s[q])))
			return true;
	return false;
}

/* The set of s that shares s[i]'s program, and its kind: a job's ranks
 * (those whose parent is no rank: a rank's loader workers carry its
 * RANK too), a pool's workers (of the parent with the most of them), or
 * processes of one program.  ix has room for n. */
static void make_set(const struct gp_sibling *s, size_t n, size_t i, size_t *ix, struct set *st)
{
	st->s = s;
	st->ix = ix;
	st->n = 0;
	st->nunread = 0;
	st->parent = -1;
	bool ranks = false, pool = false;
	for (size_t j = 0; j < n; j++)
		if (same_program(&s[i], &s[j])) {
			ranks |= rankish(&s[j]);
			pool |= has_parent(s, n, i, j, false);
		}
	st->kind = ranks ? GP_SIBK_RANKS : pool ? GP_SIBK_WORKERS : GP_SIBK_PROCESSES;
	unsigned best = 0;
	for (size_t q = 0; st->kind == GP_SIBK_WORKERS && q < n; q++) {
		unsigned c = 0;
		for (size_t j = 0; same_program(&s[i], &s[q]) && j < n; j++)
			c += same_program(&s[i], &s[j]) && child_of(&s[j], &s[q]);
		if (c > best) {
			best = c;
			st->parent = (int)q;
		}
	}
	for (size_t j = 0; j < n; j++) {
		if (!same_program(&s[i], &s[j]))
			continue;
		bool in = st->kind == GP_SIBK_RANKS ? rankish(&s[j]) && !has_parent(s, n, i, j, true)
			  : st->kind == GP_SIBK_WORKERS ? child_of(&s[j], &s[st->parent])
			  : true;
		if (in && s[j].how == GP_SIB_UNREAD) {
			if (st->nunread < GP_SIB_ODD_NAMED)
				st->unread[st->nunread] = (struct gp_sib_member){ s[j].pid, s[j].rank, s[j].source };
			st->nunread++;
		} else if (in) {
			ix[st->n++] = j;
		}
	}
	sort_set(st);
	/* A rank number twice (each its own pid, on top): two jobs of one
	 * program, not one job's ranks; not compared. */
	for (size_t a = 1; st->kind == GP_SIBK_RANKS && a < st->n; a++)
		if (s[ix[a]].rank >= 0 && s[ix[a]].rank == s[ix[a - 1]].rank)
			st->n = 0;
}

/* Which comparison to tell: ranks first, something apart before none. */
static int score(const struct gp_sibcmp *c)
{
	int r = c->kind == GP_SIBK_RANKS ? 4 : 0;
	return r + (c->story != GP_SIBS_SAME ? 2 : 0) + 1;
}

bool gp_siblings_compare(const struct gp_sibling *s, size_t n, struct gp_sibcmp *c)
{
	memset(c, 0, sizeof *c);
	size_t *ix = malloc((n ? n : 1) * sizeof *ix);
	if (!ix)
		return false;
	int best = 0;
	for (size_t i = 0; i < n; i++) {
		bool first = true;
		for (size_t j = 0; j < i && first; j++)
			first = !same_program(&s[i], &s[j]);
		if (!first)
			continue;
		struct set st;
		make_set(s, n, i, ix, &st);
		struct gp_sibcmp t;
		if (st.n < 2 || !judge_set(&st, &t))
			continue;
		if (score(&t) > best || (score(&t) == best && t.n > c->n)) {
			best = score(&t);
			*c = t;
		}
	}
	free(ix);
	return c->kind != GP_SIBK_NONE;
}

void measure_siblings(const struct gp_stuck *stuck, const struct gp_proctab *procs,
		      struct gp_activity *a)
{
	struct gp_sibling *s = malloc(GP_SIBLINGS_MAX * sizeof *s);
	if (!s)
		return;
	size_t n = gp_siblings_of(stuck, procs, a->tcpu >= SIB_BUSY_PCT ? a->pid : 0, (float)a->tcpu, 0, s,
				  GP_SIBLINGS_MAX);
	gp_siblings_compare(s, n, &a->sib);
	free(s);
	/* Ranks that wait in the job's code for one that exited wait for
	 * what never comes, though a rendezvous waits on a timer (torch's
	 * FileStore polls every 10 ms): no rest.  Nor when every rank of
	 * the job waits in it (each recv's sender is itself in a recv):
	 * their threads wait on sockets, which alone reads as rest. */
	if ((a->sib.waits_for_exited || a->sib.all_wait) && (a->kind == GP_CLASS_IDLE || a->kind == GP_CLASS_UNDECIDED)) {
		a->kind = GP_CLASS_HANG_BLOCKED;
		a->sib_decided = true;
		if (a->conf_cap > GP_CONF_MEDIUM)
			a->conf_cap = GP_CONF_MEDIUM;
	}
	/* At rest, a pool's worker apart is its ordinary shape (one reads
	 * the task queue, the others wait for its lock: tests/real's
	 * pool-rest.py): no news.  A job's ranks are still compared, none
	 * called the odd one out. */
	if (a->kind == GP_CLASS_IDLE && a->sib.kind != GP_SIBK_RANKS)
		memset(&a->sib, 0, sizeof a->sib);
	a->sib.at_rest = a->kind == GP_CLASS_IDLE;
}
