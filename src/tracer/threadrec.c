#include "config.h"
#include "threadrec.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void syscall_write(struct gp_jsonw *w, const struct gp_syscall *sc)
{
	switch (sc->kind) {
	case GP_SC_RUNNING:
		gp_jw_kstr(w, "syscall", "running");
		break;
	case GP_SC_USER:
	case GP_SC_IN:
		gp_jw_key(w, "syscall");
		gp_jw_obj_begin(w);
		gp_jw_kint(w, "nr", sc->kind == GP_SC_USER ? -1 : sc->nr);
		if (sc->kind == GP_SC_IN) {
			gp_jw_key(w, "args");
			gp_jw_arr_begin(w);
			for (int i = 0; i < 6; i++)
				gp_jw_hex(w, sc->args[i]);
			gp_jw_arr_end(w);
		}
		gp_jw_khex(w, "sp", sc->sp);
		gp_jw_khex(w, "pc", sc->pc);
		gp_jw_obj_end(w);
		break;
	default:
		break;
	}
}

/* "[<0>] futex_wait_queue+0x60/0xa0\n..." -> ["futex_wait_queue+0x60/0xa0", ...] */
static void kstack_write(struct gp_jsonw *w, const char *text)
{
	char frame[256];
	gp_jw_key(w, "kernel");
	gp_jw_arr_begin(w);
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *f = p;
		if (*f == '[') {
			const char *rb = memchr(f, ']', len);
			if (rb) {
				f = rb + 1;
				while (*f == ' ')
					f++;
			}
		}
		size_t flen = len - (size_t)(f - p);
		if (flen) {
			if (flen >= sizeof frame)
				flen = sizeof frame - 1;
			memcpy(frame, f, flen);
			frame[flen] = '\0';
			gp_jw_str(w, frame);
		}
		p = eol ? eol + 1 : p + len;
	}
	gp_jw_arr_end(w);
}

/* CPU% of one thread over the interval.  schedstat's run time is in ns
 * but, for a thread on a CPU, only as new as that CPU's last scheduler
 * tick (fs/proc/base.c prints se.sum_exec_runtime, which update_curr()
 * moves at ticks and switches); utime/stime are sampled at the tick
 * (10 ms at HZ=100), so they only split it into user and system.  At
 * --interval 0.05 that lag read 106.6 % for one spinning thread: one
 * thread runs on one CPU at a time, so it is capped at 100. */
void gp_thread_cpu(const struct gp_thread *th, double clk, double dt, double *cpu, double *sys)
{
	double ticks = (double)(th->d_utime + th->d_stime);
	/* Over the time between this thread's own two readings (tasks.c),
	 * which is the sample's interval only on average. */
	if (th->d_read_ns)
		dt = (double)th->d_read_ns / 1e9;
	if (th->have_sched) {
		*cpu = 100.0 * (double)th->d_run_ns / 1e9 / dt;
		*sys = ticks > 0 ? *cpu * (double)th->d_stime / ticks : 0;
	} else {
		*cpu = 100.0 * ticks / clk / dt;
		*sys = 100.0 * (double)th->d_stime / clk / dt;
	}
	if (*cpu > 100.0)
		*cpu = 100.0;
	if (*sys > *cpu)
		*sys = *cpu;
	/* To 0.01 % of a core (100 us a second), written and judged alike:
	 * the ten digits %.10g wrote were noise, and the least compressible
	 * part of a record (a 200-thread sample whose threads all ran: 90 ->
	 * 70 KB after zstd -3 for 20 such samples, 2026-12-05). */
	*cpu = round(*cpu * 100.0) / 100.0;
	*sys = round(*sys * 100.0) / 100.0;
}

/* The thread's `on` member (doc/result-format.md): on whom it waits. */
static void edge_write(struct gp_jsonw *w, const struct gp_wait_edge *on)
{
	gp_jw_key(w, "on");
	gp_jw_obj_begin(w);
	gp_jw_kstr(w, "how", gp_edge_name((enum gp_edge_how)on->how));
	if (on->id)
		gp_jw_kint(w, "id", on->id);
	if (on->of)
		gp_jw_kint(w, "of", on->of);
	if (on->comm[0])
		gp_jw_kstr(w, "comm", on->comm);
	if (on->how == GP_EDGE_FUTEX && on->shared)
		gp_jw_kbool(w, "shared", true);
	gp_jw_obj_end(w);
}

static void whole_write(struct gp_jsonw *w, const struct gp_thread *th, double clk, double dt,
			enum gp_wait wait, const struct gp_wait_edge *on)
{
	gp_jw_obj_begin(w);
	gp_jw_kint(w, "tid", th->tid);
	gp_jw_kstr(w, "comm", th->st.comm);
	char state[2] = { th->st.state, 0 };
	gp_jw_kstr(w, "state", state);
	if (th->have_wchan)
		gp_jw_kstr(w, "wchan", th->wchan);
	gp_jw_kreal(w, "utime", (double)th->st.utime / clk);
	gp_jw_kreal(w, "stime", (double)th->st.stime / clk);
	if (!th->is_new && dt > 0) {
		double cpu, sys;
		gp_thread_cpu(th, clk, dt, &cpu, &sys);
		gp_jw_kreal(w, "cpu_pct", cpu);
		gp_jw_kreal(w, "sys_pct", sys);
	}
	if (th->have_sched) {
		gp_jw_kuint(w, "run_ns", th->run_ns);
		gp_jw_kuint(w, "wait_ns", th->wait_ns);
	}
	gp_jw_kuint(w, "minflt", th->st.minflt);
	gp_jw_kuint(w, "majflt", th->st.majflt);
	gp_jw_kint(w, "processor", th->st.processor);
	gp_jw_kuint(w, "starttime", th->st.starttime);
	if (th->have_ctxt) {
		gp_jw_kuint(w, "voluntary", th->vcsw);
		gp_jw_kuint(w, "involuntary", th->nvcsw);
	}
	syscall_write(w, &th->sc);
	if (wait != GP_WAIT_NONE)
		gp_jw_kstr(w, "wait", gp_wait_name(wait));
	if (on->how != GP_EDGE_NONE)
		edge_write(w, on);
	if (th->kstack)
		kstack_write(w, th->kstack);
	if (th->is_new)
		gp_jw_kbool(w, "new", true);
	gp_jw_obj_end(w);
}

static bool syscall_same(const struct gp_syscall *a, const struct gp_syscall *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind != GP_SC_USER && a->kind != GP_SC_IN)
		return true;
	return a->sp == b->sp && a->pc == b->pc
	       && (a->kind == GP_SC_USER
		   || (a->nr == b->nr && !memcmp(a->args, b->args, sizeof a->args)));
}

static bool edge_same(const struct gp_wait_edge *a, const struct gp_wait_edge *b)
{
	return a->how == b->how && (a->how == GP_EDGE_NONE
				    || (a->id == b->id && a->shared == b->shared
					&& !strcmp(a->comm, b->comm)));
}

/* The members of a delta record that the base lacks or that are gone,
 * collected while writing and written last as "gone":[...]. */
struct gone {
	const char *name[6];
	int n;
};

/* A counter that only grows, as an increment in "add" (the base's
 * value plus it); a smaller value (never seen: a counter reset) is
 * written whole beside the others. */
struct add {
	const char *name[6];
	uint64_t by[6];
	int n;
};

static void counter(struct gp_jsonw *w, struct add *a, const char *name, uint64_t now,
		    uint64_t was)
{
	if (now == was)
		return;
	if (now < was) {
		gp_jw_kuint(w, name, now);
		return;
	}
	a->name[a->n] = name;
	a->by[a->n++] = now - was;
}

/* Format 4's delta record (doc/result-format.md, "Threads that ran"): the
 * thread's last record with these members replaced, "add" added to its
 * counters and "gone" removed.  A pool's worker that woke on its timer
 * and slept again in the same place is {"tid":N,"delta":1,"add":{
 * "run_ns":..,"wait_ns":..,"voluntary":1}}: 200 such threads a second
 * wrote 291 MB a day as whole records after zstd, 162 MB as deltas
 * (bench/results/2026-12-05-scale-day.md). */
static void delta_write(struct gp_jsonw *w, const struct gp_thread *th, const struct gp_thread_rec *b,
			double clk, double dt, enum gp_wait wait, const struct gp_wait_edge *on)
{
	const struct gp_thread *p = &b->th;
	struct gone g = { .n = 0 };
	struct add a = { .n = 0 };
	gp_jw_obj_begin(w);
	gp_jw_kint(w, "tid", th->tid);
	gp_jw_kint(w, "delta", 1);
	if (strcmp(th->st.comm, p->st.comm))
		gp_jw_kstr(w, "comm", th->st.comm);
	if (th->st.state != p->st.state) {
		char state[2] = { th->st.state, 0 };
		gp_jw_kstr(w, "state", state);
	}
	if (th->have_wchan && (!p->have_wchan || strcmp(th->wchan, p->wchan)))
		gp_jw_kstr(w, "wchan", th->wchan);
	else if (!th->have_wchan && p->have_wchan)
		g.name[g.n++] = "wchan";
	if (th->st.utime != p->st.utime)
		gp_jw_kreal(w, "utime", (double)th->st.utime / clk);
	if (th->st.stime != p->st.stime)
		gp_jw_kreal(w, "stime", (double)th->st.stime / clk);
	double cpu, sys;
	gp_thread_cpu(th, clk, dt, &cpu, &sys);
	if (cpu != 0)
		gp_jw_kreal(w, "cpu_pct", cpu);
	if (sys != 0)
		gp_jw_kreal(w, "sys_pct", sys);
	if (th->have_sched && p->have_sched) {
		counter(w, &a, "run_ns", th->run_ns, p->run_ns);
		counter(w, &a, "wait_ns", th->wait_ns, p->wait_ns);
	} else if (th->have_sched) {
		gp_jw_kuint(w, "run_ns", th->run_ns);
		gp_jw_kuint(w, "wait_ns", th->wait_ns);
	}
	counter(w, &a, "minflt", th->st.minflt, p->st.minflt);
	counter(w, &a, "majflt", th->st.majflt, p->st.majflt);
	if (th->st.processor != p->st.processor)
		gp_jw_kint(w, "processor", th->st.processor);
	if (th->have_ctxt && p->have_ctxt) {
		counter(w, &a, "voluntary", th->vcsw, p->vcsw);
		counter(w, &a, "involuntary", th->nvcsw, p->nvcsw);
	} else if (th->have_ctxt) {
		gp_jw_kuint(w, "voluntary", th->vcsw);
		gp_jw_kuint(w, "involuntary", th->nvcsw);
	}
	if (!syscall_same(&th->sc, &p->sc)) {
		if (th->sc.kind == GP_SC_UNKNOWN)
			g.name[g.n++] = "syscall";
		else
			syscall_write(w, &th->sc);
	}
	if (wait != b->wait) {
		if (wait == GP_WAIT_NONE)
			g.name[g.n++] = "wait";
		else
			gp_jw_kstr(w, "wait", gp_wait_name(wait));
	}
	if (!edge_same(on, &b->on)) {
		if (on->how == GP_EDGE_NONE)
			g.name[g.n++] = "on";
		else
			edge_write(w, on);
	}
	if (th->kstack)
		kstack_write(w, th->kstack);
	if (a.n) {
		gp_jw_key(w, "add");
		gp_jw_obj_begin(w);
		for (int i = 0; i < a.n; i++)
			gp_jw_kuint(w, a.name[i], a.by[i]);
		gp_jw_obj_end(w);
	}
	/* Lost since the base (the schedstat or the status line it was read
	 * from unreadable now): gone, or the base's value would stand. */
	if (p->have_sched && !th->have_sched) {
		g.name[g.n++] = "run_ns";
		g.name[g.n++] = "wait_ns";
	}
	if (g.n || (p->have_ctxt && !th->have_ctxt)) {
		gp_jw_key(w, "gone");
		gp_jw_arr_begin(w);
		for (int i = 0; i < g.n; i++)
			gp_jw_str(w, g.name[i]);
		if (p->have_ctxt && !th->have_ctxt) {
			gp_jw_str(w, "voluntary");
			gp_jw_str(w, "involuntary");
		}
		gp_jw_arr_end(w);
	}
	gp_jw_obj_end(w);
}

void gp_threadrec_write(struct gp_jsonw *w, const struct gp_thread *th, double clk, double dt,
			enum gp_wait wait, const struct gp_wait_edge *on, bool whole)
{
	struct gp_thread_rec *b = th->rec_mem;
	if (!whole && b && b->valid && !th->is_new && dt > 0 && b->th.st.starttime == th->st.starttime)
		delta_write(w, th, b, clk, dt, wait, on);
	else
		whole_write(w, th, clk, dt, wait, on);
	if (b) {
		b->valid = true;
		b->th = *th;
		b->th.kstack = NULL;
		b->wait = (uint8_t)wait;
		b->on = *on;
	}
}

/* Threads that have not run since their last full record (tasks.c:
 * their schedstat did not move) are written as references to those
 * records, format 3 (doc/result-format.md, "Unchanged threads"):
 * {"tid":N,"same":1} for one, {"same":[FIRST,LAST]} for a run of them
 * listed one after the other with tids FIRST..LAST (10 000 idle threads
 * of a pool are a few runs).  Everything but the time a thread waited for
 * a CPU is the record's, with no CPU this interval; that time is written,
 * in the single form, only when it moved (schedstat's run_delay also
 * grows when a thread is dequeued before it ran). */
void gp_same_flush(struct gp_jsonw *w, struct gp_same_run *r)
{
	if (!r->open)
		return;
	gp_jw_obj_begin(w);
	if (r->first == r->last) {
		gp_jw_kint(w, "tid", r->first);
		gp_jw_kint(w, "same", 1);
	} else {
		gp_jw_key(w, "same");
		gp_jw_arr_begin(w);
		gp_jw_int(w, r->first);
		gp_jw_int(w, r->last);
		gp_jw_arr_end(w);
	}
	gp_jw_obj_end(w);
	r->open = false;
}

void gp_same_add(struct gp_jsonw *w, struct gp_same_run *r, const struct gp_thread *th)
{
	if (th->have_sched && th->wait_ns != th->last_wait_ns) {
		gp_same_flush(w, r);
		gp_jw_obj_begin(w);
		gp_jw_kint(w, "tid", th->tid);
		gp_jw_kint(w, "same", 1);
		gp_jw_kuint(w, "wait_ns", th->wait_ns);
		gp_jw_obj_end(w);
		return;
	}
	if (r->open && th->tid == r->last + 1 && r->last < INT32_MAX) {
		r->last = th->tid;
		return;
	}
	gp_same_flush(w, r);
	*r = (struct gp_same_run){ th->tid, th->tid, true };
}

