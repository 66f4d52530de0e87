/* A `stacks` line written from what the unwinder read; see stackline.h. */
#include "config.h"
#include "stackline.h"
#include "result.h"

#include <stdio.h>
#include <string.h>

/* ---- Python frames ------------------------------------------------------ */

size_t gp_pythread_group_end(const struct gp_pythread *pt, size_t start)
{
	size_t i = start;
	for (; pt && i < pt->n; i++)
		if (pt->f[i].group_end)
			return i + 1;
	return i;
}

json_t *gp_pygroup_json(const struct gp_pythread *pt, size_t start)
{
	if (!pt || start >= pt->n)
		return NULL;
	json_t *a = json_array();
	size_t end = gp_pythread_group_end(pt, start);
	for (size_t i = start; i < end; i++) {
		const struct gp_pyframe_raw *f = &pt->f[i];
		json_array_append_new(a, json_pack("{s:o, s:o, s:o}",
			"function", f->function ? gp_json_string(f->function) : json_null(),
			"file", f->file ? gp_json_string(f->file) : json_null(),
			"line", f->line > 0 ? json_integer(f->line) : json_null()));
	}
	return a;
}

json_t *gp_pyinfo_json(const struct gp_pyinfo *pi)
{
	json_t *o = json_object();
	json_object_set_new(o, "version", pi->version ? json_string(pi->version) : json_null());
	json_object_set_new(o, "module", gp_json_string(pi->module));
	if (pi->error)
		json_object_set_new(o, "error", gp_json_string(pi->error));
	else
		json_object_set_new(o, "threads", json_integer((json_int_t)pi->threads));
	return o;
}

/* The thread's "python" object: the GIL, and the frames no evaluation-loop
 * frame took (the native unwind stopped early). */
static json_t *py_thread_json(const struct gp_stk_thread *th)
{
	const struct gp_pythread *py = th->py;
	const char *gil = py->gil == 1 ? "held" : th->gil_take ? "waiting" :
			  py->gil == 0 ? "not-held" : NULL;
	json_t *o = json_pack("{s:o, s:I}", "gil", gil ? json_string(gil) : json_null(),
			      "frames", (json_int_t)py->n);
	if (py->truncated)
		json_object_set_new(o, "truncated", json_true());
	if (th->py_placed < py->n) {
		json_t *rest = json_array();
		size_t next = th->py_placed;
		json_t *g;
		while ((g = gp_pygroup_json(py, next))) {
			next = gp_pythread_group_end(py, next);
			json_array_extend(rest, g);
			json_decref(g);
		}
		json_object_set_new(o, "unplaced", rest);
	}
	return o;
}

/* ---- Go's goroutines ------------------------------------------------------ */

json_t *gp_gogroups_json(const struct gp_gogroup *g, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_pack("{s:s, s:s, s:I}", "start", g[i].g.start, "wait", g[i].g.wait,
				      "n", (json_int_t)g[i].n);
		if (g[i].g.at[0])
			json_object_set_new(o, "at", json_string(g[i].g.at));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *goinfo_json(const struct gp_goinfo *gi)
{
	json_t *o = json_object();
	if (gi->version)
		json_object_set_new(o, "go", json_string(gi->version));
	json_object_set_new(o, "module", json_string(gi->module ? gi->module : ""));
	if (gi->error)
		json_object_set_new(o, "error", json_string(gi->error));
	if (!gi->counted)
		return o;
	json_object_set_new(o, "n", json_integer((json_int_t)gi->n));
	json_object_set_new(o, "system", json_integer((json_int_t)gi->system));
	json_object_set_new(o, "groups", gp_gogroups_json(gi->groups, gi->ngroups));
	if (gi->more)
		json_object_set_new(o, "more", json_integer((json_int_t)gi->more));
	return o;
}

/* ---- modules and frames ----------------------------------------------- */

/* Where to get what a module without DWARF lacks.  A container's file is
 * its release's, not the host's: its debug package is the container's
 * (tfile.h: its tree is read first).  NULL for a module with DWARF, or
 * whose lines are not read. */
static json_t *module_hint(const struct gp_stk_module *m)
{
	if (!strcmp(m->debug, "dwarf") || !strcmp(m->debug, "not-read"))
		return NULL;
	char hint[768];
	const char *where = m->in_container ? " in the container" : "";
	bool dynsym = !strcmp(m->debug, "dynsym");
	if (m->build_id[0] && strlen(m->build_id) > 2)
		snprintf(hint, sizeof hint,
			 "%s (build-id %s): %s; install its debug package%s, or put the "
			 "debug file at /usr/lib/debug/.build-id/%.2s/%s.debug%s",
			 m->soname, m->build_id,
			 dynsym ? "stripped, no debug info: only exported functions are named"
				: "no debug info: no source lines", where,
			 m->build_id, m->build_id + 2, m->in_container ? " in its root or the host's" : "");
	else
		snprintf(hint, sizeof hint, "%s: %s; install its debug package%s", m->soname,
			 dynsym ? "stripped, no debug info" : "no debug info: no source lines", where);
	return gp_json_string(hint);
}

static json_t *module_json(const struct gp_stk_module *m)
{
	json_t *o = json_pack("{s:o, s:o, s:o, s:s}",
		"path", gp_json_string(m->path),
		"soname", gp_json_string(m->soname),
		"build_id", m->build_id[0] ? json_string(m->build_id) : json_null(),
		"debug", m->debug);
	json_t *hint = module_hint(m);
	if (hint)
		json_object_set_new(o, "hint", hint);
	return o;
}

static json_t *frame_json(const struct gp_stk_thread *th, const struct gp_stk_frame *fr,
			  json_t *mods_seen)
{
	const struct gp_stk_module *m = fr->mod;
	json_t *f = json_object();
	json_object_set_new(f, "pc", gp_json_hex(fr->pc));
	if (fr->jit)
		json_object_set_new(f, "jit", json_true());
	json_object_set_new(f, "module", m ? gp_json_string(m->path) : json_null());
	json_object_set_new(f, "soname", m ? gp_json_string(m->soname) : json_null());
	json_object_set_new(f, "offset", m ? gp_json_hex(fr->offset) : json_null());
	json_object_set_new(f, "build_id", m && m->build_id[0] ? json_string(m->build_id) : json_null());
	json_object_set_new(f, "symbol", m && fr->symbol ? gp_json_string(fr->symbol) : json_null());
	json_object_set_new(f, "file", m && fr->file ? gp_json_string(fr->file) : json_null());
	json_object_set_new(f, "line", m && fr->file ? json_integer(fr->line) : json_null());
	if (m && !json_object_get(mods_seen, m->path))
		json_object_set_new(mods_seen, m->path, module_json(m));
	json_t *pf = fr->python ? gp_pygroup_json(th->py, fr->py_start) : NULL;
	if (pf)
		json_object_set_new(f, "python", pf);
	return f;
}

/* /proc/TID/stack's text, "[<0>] futex_wait_queue+0x60/0x90" a line: the
 * functions. */
static json_t *kernel_json(const char *text)
{
	json_t *a = json_array();
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *q = memchr(p, ']', len);
		const char *b = q ? q + 1 : p;
		while (b < p + len && *b == ' ')
			b++;
		if (b < p + len) {
			char tmp[256];
			size_t l = (size_t)(p + len - b);
			if (l >= sizeof tmp)
				l = sizeof tmp - 1;
			memcpy(tmp, b, l);
			tmp[l] = 0;
			json_array_append_new(a, json_string(tmp));
		}
		p = nl ? nl + 1 : NULL;
	}
	return a;
}

/* ---- a thread, the cost, the line ------------------------------------------------- */

static json_t *thread_json(const struct gp_stk_thread *th, json_t *mods_seen)
{
	char sb[2] = { th->state, 0 };
	json_t *o = json_object();
	json_object_set_new(o, "tid", json_integer(th->tid));
	json_object_set_new(o, "comm", gp_json_string(th->comm));
	json_object_set_new(o, "state", json_string(sb));
	json_object_set_new(o, "wchan", th->wchan ? gp_json_string(th->wchan) : json_null());
	json_object_set_new(o, "syscall", th->syscall ? gp_json_string(th->syscall) : json_null());
	if (th->in_call)
		json_object_set_new(o, "syscall_nr", json_integer(th->syscall_nr));
	json_object_set_new(o, "unwind", json_string(th->unwind ? th->unwind : "off"));
	if (th->err[0])
		json_object_set_new(o, "unwind_error", gp_json_string(th->err));
	if (th->stop_us >= 0)
		json_object_set_new(o, "stop_us", json_real(th->stop_us));
	if (th->regs_bpf)
		json_object_set_new(o, "regs_from", json_string("bpf"));
	if (th->frames) {
		json_t *fr = json_array();
		for (size_t i = 0; i < th->nframes; i++)
			json_array_append_new(fr, frame_json(th, &th->frames[i], mods_seen));
		json_object_set_new(o, "frames", fr);
	} else {
		json_object_set_new(o, "frames", json_null());
	}
	json_object_set_new(o, "kernel", th->kstack ? kernel_json(th->kstack) : json_null());
	if (th->py)
		json_object_set_new(o, "python", py_thread_json(th));
	return o;
}

static json_t *cost_json(const struct gp_stk_cost *c)
{
	json_t *o = json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
		"stopped", (int)c->stopped, "nostop", (int)c->nostop, "stop_us_max", c->stop_us_max,
		"stop_us_mean", c->stopped ? c->stop_us_sum / c->stopped : 0.0,
		"refresh_ms", c->refresh_ms, "unwind_ms", c->unwind_ms,
		"symbolize_ms", c->symbolize_ms, "wall_ms", c->wall_ms,
		"python_us_max", c->python_us_max);
	/* the goroutines' read: every g, and the parked ones' frames */
	if (c->goroutines_us >= 0)
		json_object_set_new(o, "goroutines_us", json_real(c->goroutines_us));
	return o;
}

void gp_stackline_begin(struct gp_stackline *b, double t, int pid)
{
	b->line = json_pack("{s:s, s:f, s:i}", "type", "stacks", "t", t, "pid", pid);
	b->threads = json_array();
	b->mods = json_object();
}

void gp_stackline_thread(struct gp_stackline *b, const struct gp_stk_thread *th)
{
	json_array_append_new(b->threads, thread_json(th, b->mods));
}

json_t *gp_stackline_end(struct gp_stackline *b, const struct gp_pyinfo *py,
			 const struct gp_goinfo *go, const struct gp_stk_cost *c)
{
	json_t *o = b->line;
	json_object_set_new(o, "threads", b->threads);
	json_t *marr = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(b->mods, k, v)
		json_array_append(marr, v);
	json_decref(b->mods);
	json_object_set_new(o, "modules", marr);
	if (py)
		json_object_set_new(o, "python", gp_pyinfo_json(py));
	if (go)
		json_object_set_new(o, "goroutines", goinfo_json(go));
	json_object_set_new(o, "cost", cost_json(c));
	*b = (struct gp_stackline){ 0 };
	return o;
}
