#include "config.h"
#include "stuck.h"
#include "parse.h"

#include <stdio.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

void gp_stuck_init(struct gp_stuck *s)
{
	memset(s, 0, sizeof *s);
	s->t = -1;
}

/* "load_shard (load.py:12)": a Python frame (stacks.h: a native frame's
 * "python" array, youngest first: function, file, line). */
static bool py_label(const json_t *p, char *buf, size_t cap)
{
	const char *fn = json_string_value(json_object_get(p, "function"));
	const char *file = json_string_value(json_object_get(p, "file"));
	const json_t *line = json_object_get(p, "line");
	if (!fn && !file)
		return false;
	const char *base = file ? strrchr(file, '/') : NULL;
	snprintf(buf, cap, "%s (%s:%lld)", fn ? fn : "?", base ? base + 1 : file ? file : "?",
		 json_is_integer(line) ? (long long)json_integer_value(line) : 0LL);
	return true;
}

bool gp_frame_label(const json_t *f, char *buf, size_t cap)
{
	/* Code a JIT wrote (unwind/xmaps.h): its pc is all there is. */
	const char *pc = json_string_value(json_object_get(f, "pc"));
	if (json_is_true(json_object_get(f, "jit"))) {
		snprintf(buf, cap, "[jit] %s", pc ? pc : "?");
		return true;
	}
	const char *sym = json_string_value(json_object_get(f, "symbol"));
	if (sym && *sym) {
		gp_strlcpy(buf, sym, cap);
		return true;
	}
	const char *mod = json_string_value(json_object_get(f, "module"));
	const char *off = json_string_value(json_object_get(f, "offset"));
	if (!mod)
		return false;
	const char *base = strrchr(mod, '/');
	snprintf(buf, cap, "%s+%s", base ? base + 1 : mod, off ? off : "?");
	return true;
}

/* The C runtime's wait wrappers say how a thread waits, not where: the
 * caller above them does (PyThread_acquire_lock_timed, WaitEventSetWait,
 * cuCtxSynchronize). */
static bool c_runtime(const char *soname)
{
	static const char *const pfx[] = { "libc.so", "ld-linux", "libpthread.so", "libstdc++.so",
		"libgcc_s.so", "ld64.so", "libc.musl", "ld-musl", NULL };
	if (!soname)
		return false;
	const char *b = strrchr(soname, '/');
	b = b ? b + 1 : soname;
	for (size_t i = 0; pfx[i]; i++)
		if (!strncmp(b, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* A Python file of the interpreter's library or an installed package
 * (torch's distributed_c10d.py, threading.py), not the user's program:
 * the paths CPython's site module puts on sys.path (Lib/site.py:
 * getsitepackages, "site-packages"; Debian's patched site.py,
 * "dist-packages"), and the standard library's lib/pythonX.Y. */
static bool library_file(const char *file)
{
	return file && (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/")
			|| strstr(file, "/lib/python3") || strstr(file, "/lib64/python3"));
}

/* Where the user's code called into a library the thread waits in:
 * "reduce_grads (gloo_ranks.py:20)" under torch's all_reduce.  "" when
 * the youngest Python frame is the user's own (wait_frame says it). */
static void user_frame(const json_t *frames, char *buf, size_t cap)
{
	buf[0] = '\0';
	size_t i, q;
	json_t *f, *p;
	bool in_library = false;
	json_array_foreach(frames, i, f) {
		json_array_foreach(json_object_get(f, "python"), q, p) {
			const char *file = json_string_value(json_object_get(p, "file"));
			if (library_file(file)) {
				in_library = true;
				continue;
			}
			if (in_library)
				py_label(p, buf, cap);
			return;
		}
	}
}

/* A V8 builtin that JavaScript called ("v8::internal::Builtin_AtomicsWait(int,
 * ...)": Atomics.wait): the nearest a stack gets to the script's own
 * frames, which V8 compiled at run time and no symbol names (issue 32:
 * node's loop thread asleep in a handler's Atomics.wait read as
 * "v8::base::ConditionVariable::WaitFor").  "Builtin_AtomicsWait (V8)". */
static bool v8_builtin(const char *sym, char *buf, size_t cap)
{
	static const char pfx[] = "v8::internal::Builtin_";
	if (!sym || strncmp(sym, pfx, sizeof pfx - 1))
		return false;
	const char *name = sym + sizeof pfx - 1 - strlen("Builtin_");
	size_t len = strcspn(name, "(");
	snprintf(buf, cap, "%.*s (V8)", (int)(len < 48 ? len : 48), name);
	return true;
}

static void wait_frame(const json_t *frames, char *buf, size_t cap)
{
	buf[0] = '\0';
	size_t i;
	json_t *f;
	char lab[64];
	/* A Python frame first: what the user's code waits in. */
	json_array_foreach(frames, i, f)
		if (py_label(json_array_get(json_object_get(f, "python"), 0), buf, cap))
			return;
	json_array_foreach(frames, i, f)
		if (v8_builtin(json_string_value(json_object_get(f, "symbol")), buf, cap))
			return;
	json_array_foreach(frames, i, f) {
		const char *sym = json_string_value(json_object_get(f, "symbol"));
		const char *so = json_string_value(json_object_get(f, "soname"));
		if (!so)
			so = json_string_value(json_object_get(f, "module"));
		if (sym && *sym && !c_runtime(so)) {
			gp_strlcpy(buf, sym, cap);
			return;
		}
	}
	json_array_foreach(frames, i, f) {
		const char *sym = json_string_value(json_object_get(f, "symbol"));
		if (sym && *sym) {
			gp_strlcpy(buf, sym, cap);
			return;
		}
	}
	if (gp_frame_label(json_array_get(frames, 0), lab, sizeof lab))
		gp_strlcpy(buf, lab, cap);
}

/* The thread sleeps in libjvm.so: its innermost frame outside the C
 * runtime is the JVM's (a Java thread in accept() through libnio is not,
 * whatever frames of libjvm lie deeper). */
static bool waits_in_jvm(const json_t *frames)
{
	size_t i;
	json_t *f;
	json_array_foreach(frames, i, f) {
		const char *so = json_string_value(json_object_get(f, "soname"));
		if (!so)
			so = json_string_value(json_object_get(f, "module"));
		if (c_runtime(so))
			continue;
		const char *b = so ? strrchr(so, '/') : NULL;
		b = b ? b + 1 : so;
		return b && !strncmp(b, "libjvm.so", 9);
	}
	return false;
}

/* "futex" of "futex(0x7f.., FUTEX_WAIT_BITSET_PRIVATE)" */
static void syscall_name(const json_t *th, char *buf, size_t cap)
{
	const char *sc = json_string_value(json_object_get(th, "syscall"));
	gp_strlcpy(buf, sc ? sc : "", cap);
	char *paren = strchr(buf, '(');
	if (paren)
		*paren = '\0';
}

/* One thread of a `stacks` line, as the verdict keeps it. */
static void read_thread(struct gp_stuck_thread *x, int pid, const json_t *th)
{
	memset(x, 0, sizeof *x);
	x->count = 1;
	x->pid = pid;
	x->tid = (int)json_integer_value(json_object_get(th, "tid"));
	gp_strlcpy(x->comm, json_string_value(json_object_get(th, "comm")) ?: "", sizeof x->comm);
	const char *st = json_string_value(json_object_get(th, "state"));
	x->state = st && *st ? st[0] : '?';
	json_t *frames = json_object_get(th, "frames");
	size_t k;
	json_t *f;
	json_array_foreach(frames, k, f) {
		if (x->nframes >= GP_STUCK_FRAMES)
			break;
		if (gp_frame_label(f, x->frames[x->nframes], sizeof x->frames[0]))
			x->nframes++;
		/* its Python frames, interleaved where the interpreter ran them */
		size_t q;
		json_t *pf;
		json_array_foreach(json_object_get(f, "python"), q, pf)
			if (x->nframes < GP_STUCK_FRAMES
			    && py_label(pf, x->frames[x->nframes], sizeof x->frames[0]))
				x->nframes++;
	}
	wait_frame(frames, x->wait_frame, sizeof x->wait_frame);
	user_frame(frames, x->user_frame, sizeof x->user_frame);
	gp_strlcpy(x->syscall, json_string_value(json_object_get(th, "syscall")) ?: "", sizeof x->syscall);
	const char *gil = json_string_value(json_object_get(json_object_get(th, "python"), "gil"));
	x->gil = !gil ? 0 : !strcmp(gil, "held") ? 'h' : !strcmp(gil, "waiting") ? 'w' : 0;
	char sc[32];
	syscall_name(th, sc, sizeof sc);
	gp_jvm_classify((const char (*)[64])x->frames, x->nframes, waits_in_jvm(frames), x->comm,
			sc, &x->jvm);
	const char *k0 = json_string_value(json_array_get(json_object_get(th, "kernel"), 0));
	if (k0) {
		gp_strlcpy(x->kernel, k0, sizeof x->kernel);
		char *plus = strchr(x->kernel, '+');
		if (plus)
			*plus = '\0';
	}
}

static bool same_stack(const struct gp_stuck_thread *a, const struct gp_stuck_thread *b)
{
	if (a->pid != b->pid || a->state != b->state || a->nframes != b->nframes ||
	    a->tid == a->pid || b->tid == b->pid || a->gil != b->gil || strcmp(a->comm, b->comm) ||
	    strcmp(a->wait_frame, b->wait_frame) || strcmp(a->kernel, b->kernel))
		return false;
	for (unsigned i = 0; i < a->nframes; i++)
		if (strcmp(a->frames[i], b->frames[i]))
			return false;
	return true;
}

/* A sleeping thread's wait frame into the counts (a frame beyond the
 * table's bound is not counted: never one of the most common then). */
static void count_wait_frame(struct gp_stuck *s, const struct gp_stuck_thread *x)
{
	if (!x->wait_frame[0] || x->state == 'R')
		return;
	size_t k = 0;
	while (k < s->nwf && strcmp(s->wf[k].frame, x->wait_frame))
		k++;
	if (k == s->nwf) {
		if (s->nwf == GP_STUCK_WAIT_FRAMES)
			return;
		gp_strlcpy(s->wf[k].frame, x->wait_frame, sizeof s->wf[k].frame);
		s->wf[k].n = 0;
		s->nwf++;
	}
	s->wf[k].n++;
}

bool gp_stuck_dist_frame(const char *f)
{
	static const char *const words[] = { "c10d", "gloo::", "nccl", "rccl", "MPI_", "ProcessGroup",
		NULL };
	for (size_t i = 0; words[i]; i++)
		if (strstr(f, words[i]))
			return true;
	return false;
}

static bool dist_thread(const struct gp_stuck_thread *x)
{
	for (unsigned i = 0; i < x->nframes; i++)
		if (gp_stuck_dist_frame(x->frames[i]))
			return true;
	return false;
}

/* The process of one `stacks` line into s->proc: its main thread, and
 * whether a thread of it is in a collective's code. */
static void note_proc(struct gp_stuck *s, int pid, const struct gp_stuck_thread *x)
{
	size_t k = 0;
	while (k < s->nproc && s->proc[k].pid != pid)
		k++;
	if (k == s->nproc) {
		if (s->nproc == GP_STUCK_PROCS)
			return;
		memset(&s->proc[k], 0, sizeof s->proc[k]);
		s->proc[k].pid = pid;
		s->nproc++;
	}
	struct gp_stuck_proc *p = &s->proc[k];
	bool dist = dist_thread(x);
	p->dist |= dist;
	if (x->tid != pid)
		return;
	p->lead = true;
	p->state = x->state;
	p->lead_dist = dist;
	gp_strlcpy(p->comm, x->comm, sizeof p->comm);
	gp_strlcpy(p->wait_frame, x->wait_frame, sizeof p->wait_frame);
	gp_strlcpy(p->user_frame, x->user_frame, sizeof p->user_frame);
}

/* A sleeping thread of a JVM into the snapshot's Java counts; the first
 * ones asleep from user code named (jvmthreads.h). */
static void note_java(struct gp_stuck *s, const struct gp_stuck_thread *x, const char *lead_comm)
{
	struct gp_stuck_java *j = &s->java;
	const struct gp_jvm_thread *r = &x->jvm;
	if (x->state == 'R' || r->role == GP_JVM_NONE || r->role >= GP_JVM_ROLES)
		return;
	/* a wait the frames do not say: its count is left as it is */
	if (r->counted != GP_WAIT_NONE && (unsigned)r->counted < GP_WAIT_COUNT) {
		j->counted[r->counted]++;
		if ((unsigned)r->meant < GP_WAIT_COUNT)
			j->meant[r->meant]++;
	}
	if (r->role == GP_JVM_RUNTIME) {
		j->runtime++;
		return;
	}
	j->user++;
	j->role_n[r->role]++;
	if (r->timed)
		j->timed_n[r->role]++;
	if (j->nnamed == GP_STUCK_JAVA_NAMED)
		return;
	struct gp_stuck_java_thread *n = &j->named[j->nnamed++];
	n->pid = x->pid;
	n->tid = x->tid;
	gp_strlcpy(n->comm, x->comm, sizeof n->comm);
	n->role = (unsigned char)r->role;
	n->timed = r->timed;
	/* The launcher attaches the main thread (JNI_CreateJavaVM): no
	 * Thread.start named it, so it keeps the process's name. */
	n->main = x->tid != x->pid && lead_comm && !strcmp(x->comm, lead_comm);
}

/* The name of the line's process: its leader's comm, NULL if absent. */
static const char *lead_comm_of(const json_t *threads, int pid)
{
	size_t i;
	json_t *th;
	json_array_foreach(threads, i, th)
		if (json_integer_value(json_object_get(th, "tid")) == pid)
			return json_string_value(json_object_get(th, "comm"));
	return NULL;
}

/* Where a goroutine waits, by the Go runtime's own names for it
 * (runtime2.go waitReasonStrings; unwind/goroutines.c names go1.19's
 * "semacquire" from its frames): what the verdict weighs (stuck.h). */
enum gp_go_where gp_go_where_of(const char *wait)
{
	static const char *const lock[] = { "sync.Mutex.Lock", "sync.RWMutex.Lock",
		"sync.RWMutex.RLock", "semacquire", NULL };
	/* waits on another goroutine of the program: a channel nobody
	 * sends on, a condition, a group of goroutines (go1.24's
	 * "(durable)" forms of them too) */
	static const char *const chan[] = { "chan receive", "chan send", "chan receive (nil chan)",
		"chan send (nil chan)", "select (no cases)", "sync.Cond.Wait", "sync.WaitGroup.Wait",
		"chan receive (durable)", "chan send (durable)", "sync.WaitGroup.Wait (durable)", NULL };
	static const char *const run[] = { "running", "runnable", "syscall", "preempted", NULL };
	for (size_t i = 0; lock[i]; i++)
		if (!strcmp(wait, lock[i]))
			return GP_GO_LOCK;
	for (size_t i = 0; chan[i]; i++)
		if (!strcmp(wait, chan[i]))
			return GP_GO_CHAN;
	for (size_t i = 0; run[i]; i++)
		if (!strcmp(wait, run[i]))
			return GP_GO_RUN;
	/* IO wait (the netpoller: input from outside), sleep, a select
	 * (on channels and timers: which cannot be told), the GC's */
	return GP_GO_OUTSIDE;
}

static unsigned small_count(const json_t *v)
{
	json_int_t n = json_integer_value(v);
	return n < 0 ? 0 : n > (json_int_t)UINT32_MAX ? UINT32_MAX : (unsigned)n;
}

/* The line's "goroutines" (a Go process), kept when there is room.  A
 * result file is input like any other: strings are copied bounded,
 * counts clamped, and anything not of its type is left out. */
static void note_go(struct gp_stuck *s, int pid, const json_t *gj)
{
	if (!json_is_object(gj) || s->ngo == GP_STUCK_GO_PROCS)
		return;
	struct gp_stuck_go *g = &s->go[s->ngo++];
	memset(g, 0, sizeof *g);
	g->pid = pid;
	const char *v = json_string_value(json_object_get(gj, "go"));
	const char *e = json_string_value(json_object_get(gj, "error"));
	gp_strlcpy(g->version, v ? v : "", sizeof g->version);
	gp_strlcpy(g->error, e ? e : "", sizeof g->error);
	g->n = small_count(json_object_get(gj, "n"));
	g->system = small_count(json_object_get(gj, "system"));
	g->more = small_count(json_object_get(gj, "more"));
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(gj, "groups"), i, o) {
		const char *st = json_string_value(json_object_get(o, "start"));
		const char *at = json_string_value(json_object_get(o, "at"));
		const char *w = json_string_value(json_object_get(o, "wait"));
		if (!st || !w)
			continue;
		if (g->ng == GP_STUCK_GO_GROUPS) {
			g->more += small_count(json_object_get(o, "n"));
			continue;
		}
		struct gp_stuck_gogroup *x = &g->g[g->ng++];
		gp_strlcpy(x->start, st, sizeof x->start);
		gp_strlcpy(x->at, at ? at : "", sizeof x->at);
		gp_strlcpy(x->wait, w, sizeof x->wait);
		x->where = gp_go_where_of(w);
		x->n = small_count(json_object_get(o, "n"));
	}
}

void gp_stuck_add(struct gp_stuck *s, const json_t *line)
{
	double t = json_number_value(json_object_get(line, "t"));
	const char *why = json_string_value(json_object_get(line, "why"));
	if (s->t < 0 || t != s->t) {
		gp_stuck_init(s);
		s->t = t;
		gp_strlcpy(s->why, why ? why : "", sizeof s->why);
	}
	int pid = (int)json_integer_value(json_object_get(line, "pid"));
	note_go(s, pid, json_object_get(line, "goroutines"));
	size_t i;
	json_t *th;
	const json_t *threads = json_object_get(line, "threads");
	const char *lead = lead_comm_of(threads, pid);
	unsigned jvm = 0, unplaced = 0;
	json_array_foreach(threads, i, th) {
		s->total++;
		struct gp_stuck_thread x;
		read_thread(&x, pid, th);
		count_wait_frame(s, &x);
		note_proc(s, pid, &x);
		note_java(s, &x, lead);
		jvm += x.jvm.role != GP_JVM_NONE;
		unplaced += x.state == 'R' || !x.nframes; /* awake, or its stack not read */
		/* Threads with the same stack are one entry with a count: a
		 * 10 000-thread server's snapshot keeps every distinct stack,
		 * not the first 32 threads in /proc order (issue 18).  The
		 * leader stays an entry of its own: the verdict looks it up. */
		size_t k = 0;
		while (k < s->n && !same_stack(&s->th[k], &x))
			k++;
		if (k < s->n)
			s->th[k].count++;
		else if (s->n < GP_STUCK_MAX)
			s->th[s->n++] = x;
		else
			s->dropped++;
	}
	if (jvm)
		s->java.unplaced += unplaced;
}

bool gp_stuck_signature(const struct gp_stuck *s, int pid, char *sig, size_t sigcap, char *frame,
			size_t framecap)
{
	for (size_t i = 0; s && s->t >= 0 && i < s->nproc; i++) {
		const struct gp_stuck_proc *p = &s->proc[i];
		if (p->pid != pid || !p->lead || p->state == 'R' || !p->wait_frame[0])
			continue;
		uint32_t h = 2166136261u; /* FNV-1a, 32 bits: offset basis and prime */
		for (const char *c = p->wait_frame; *c; c++)
			h = (h ^ (unsigned char)*c) * 16777619u;
		h = (h ^ '\n') * 16777619u;
		for (const char *c = p->user_frame; *c; c++)
			h = (h ^ (unsigned char)*c) * 16777619u;
		snprintf(sig, sigcap, "%08x", h);
		snprintf(frame, framecap, "%s%s%s", p->wait_frame, p->user_frame[0] ? " <- " : "",
			 p->user_frame);
		return true;
	}
	return false;
}

unsigned gp_stuck_common_frame(const struct gp_stuck *s, char *buf, size_t cap)
{
	unsigned best = 0;
	buf[0] = '\0';
	if (s->nwf) {
		for (size_t k = 0; k < s->nwf; k++)
			if (s->wf[k].n > best) {
				best = s->wf[k].n;
				gp_strlcpy(buf, s->wf[k].frame, cap);
			}
		return best;
	}
	for (size_t i = 0; i < s->n; i++) {
		const char *f = s->th[i].wait_frame;
		if (!*f || s->th[i].state == 'R')
			continue;
		unsigned c = 0;
		for (size_t j = 0; j < s->n; j++)
			if (s->th[j].state != 'R' && !strcmp(s->th[j].wait_frame, f))
				c += s->th[j].count;
		if (c > best) {
			best = c;
			gp_strlcpy(buf, f, cap);
		}
	}
	return best;
}

static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

void gp_kmsg_note_add(struct gp_kmsg_note *ring, size_t *n, const json_t *line)
{
	if (*n == GP_KMSG_NOTES) {
		memmove(ring, ring + 1, (GP_KMSG_NOTES - 1) * sizeof *ring);
		(*n)--;
	}
	struct gp_kmsg_note *k = &ring[(*n)++];
	memset(k, 0, sizeof *k);
	const json_t *t = json_object_get(line, "t");
	k->t = json_is_number(t) ? json_number_value(t) : 0;
	const char *s = json_string_value(json_object_get(line, "driver"));
	gp_strlcpy(k->driver, s ? s : "?", sizeof k->driver);
	s = json_string_value(json_object_get(line, "kind"));
	gp_strlcpy(k->kind, s ? s : "other", sizeof k->kind);
	const json_t *x = json_object_get(line, "xid");
	k->xid = json_is_integer(x) ? (int)json_integer_value(x) : -1;
	/* A stranger's file: a count out of range reads as none. */
	const json_t *l = json_object_get(line, "lost");
	k->lost = json_is_integer(l) && json_integer_value(l) > 0 && json_integer_value(l) <= UINT_MAX
		  ? (unsigned)json_integer_value(l) : 0;
	s = json_string_value(json_object_get(line, "text"));
	gp_strlcpy(k->text, s ? s : "", sizeof k->text);
	/* The tracer keeps printable ASCII; a stranger's file may hold an
	 * escape sequence, which the verdict's summary would print as is. */
	printable(k->driver);
	printable(k->kind);
	printable(k->text);
}
