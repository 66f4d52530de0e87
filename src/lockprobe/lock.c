/* gpuprobe lock: the pinning probe.  Maps FILE (MAP_SHARED, read-only by
 * default) or anonymous memory, pre-faults it with progress, pins it with
 * the runtime (one arm per pool, flag set or repeat), times the pin and
 * the unpin, and records what the pin did to the system.  A watchdog
 * turns a pin that never returns into an arm with status `timeout`. */
#include "config.h"
#include "commands.h"
#include "error.h"
#include "evidence.h"
#include "hostinfo.h"
#include "gpu.h"
#include "gpu_args.h"
#include "mapping.h"
#include "opts.h"
#include "parse.h"
#include "procfs.h"
#include "procstat.h"
#include "arms.h"
#include "result.h"
#include "strbuf.h"
#include "sysinfo.h"
#include "stacks_text.h"
#include "timeutil.h"
#include "unwind.h"
#include "watchdog.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

enum {
	OPT_ANON = 0x100,
	OPT_OFFSET,
	OPT_SIZE,
	OPT_WRITABLE,
	OPT_NO_PREFAULT,
	OPT_POOL,
	OPT_CUDA_FLAGS,
	OPT_REPEAT,
	OPT_REFAULT,
	OPT_TIMEOUT,
	OPT_FORCE,
};

struct lock_opts {
	const char *file;
	uint64_t anon, offset, size;
	bool have_anon, have_size, writable, prefault, force;
	const char *pool;
	bool have_cuda_flags;
	unsigned cuda_flags;
	int repeat, refault;
	int64_t timeout_ns;
	struct gp_runtime_args run;
	struct gp_out_args out;
	struct gp_format_args fmt;
	struct gp_operand_args operand;
};

static const struct argp_option lock_options[] = {
	{ NULL, 0, NULL, 0, "What to pin:", 1 },
	{ "anon", OPT_ANON, "SIZE", 0, "Pin SIZE bytes of anonymous memory instead of a file (K/M/G/T)", 1 },
	{ "offset", OPT_OFFSET, "SIZE", 0, "Start this far into FILE (a multiple of the page size)", 1 },
	{ "size", OPT_SIZE, "SIZE", 0, "Pin this many bytes (default: to the end of FILE)", 1 },
	{ "writable", OPT_WRITABLE, NULL, 0,
	  "Map FILE read-write (seed 004's page-dirtying mechanism; gpuprobe never writes)", 1 },
	{ NULL, 0, NULL, 0, "How:", 2 },
	{ "no-prefault", OPT_NO_PREFAULT, NULL, 0, "Do not pre-fault: the pin faults the pages in", 2 },
	{ "pool", OPT_POOL, "NAME", 0,
	  "HSA: lock_to_pool with this pool (see 'gpuprobe pools'), 'cpu', 'gpu' (every pool "
	  "of that agent type), 'all' (one arm per pool) or 'none' (plain hsa_amd_memory_lock, "
	  "the default)", 2 },
	{ "cuda-flags", OPT_CUDA_FLAGS, "FLAGS", 0,
	  "CUDA: cuMemHostRegister flags, e.g. read-only,portable or 0x8 or none "
	  "(default: read-only for a read-only mapping, else none)", 2 },
	{ "repeat", OPT_REPEAT, "K", 0, "Run each arm K times (default 1)", 2 },
	{ "refault", OPT_REFAULT, "N", 0, "N threads keep faulting the range in during the pin", 2 },
	{ "timeout", OPT_TIMEOUT, "SECONDS", 0,
	  "A pin (or unpin) that has not returned after SECONDS is a hang: record where it "
	  "waits and exit (default 600)", 2 },
	{ "force", OPT_FORCE, NULL, 0, "Pin even more than MemAvailable allows", 2 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* The options lock only stores (gp_set_option). */
static const struct gp_opt_field lock_fields[] = {
	GP_OPT_ON(OPT_WRITABLE, struct lock_opts, writable),
	GP_OPT_OFF(OPT_NO_PREFAULT, struct lock_opts, prefault),
	GP_OPT_NS(OPT_TIMEOUT, struct lock_opts, timeout_ns, GP_NS_MS, 86400 * GP_NS_S),
	GP_OPT_ON(OPT_FORCE, struct lock_opts, force),
	GP_OPT_END,
};

static error_t lock_parse(int key, char *arg, struct argp_state *state)
{
	struct lock_opts *o = state->input;
	long page = sysconf(_SC_PAGESIZE);
	switch (key) {
	case OPT_ANON:
		o->anon = gp_arg_size(state, key, arg, 1, UINT64_MAX);
		o->have_anon = true;
		break;
	case OPT_OFFSET:
		o->offset = gp_arg_size(state, key, arg, 0, UINT64_MAX);
		if (o->offset % (uint64_t)page)
			argp_error(state, "--offset '%s': must be a multiple of the page size (%ld)",
				   arg, page);
		break;
	case OPT_SIZE:
		o->size = gp_arg_size(state, key, arg, 1, UINT64_MAX);
		o->have_size = true;
		break;
	case OPT_POOL:
		if (!*arg)
			argp_error(state, "--pool needs a NAME (see 'gpuprobe pools')");
		o->pool = arg;
		break;
	case OPT_CUDA_FLAGS:
		if (!gp_cuda_flags_parse(arg, &o->cuda_flags))
			argp_error(state, "--cuda-flags '%s': give portable, devicemap, iomemory, "
				   "read-only (comma-separated), a number, or none", arg);
		o->have_cuda_flags = true;
		break;
	case OPT_REPEAT:
		o->repeat = (int)gp_arg_count(state, key, arg, 1, 1000);
		break;
	case OPT_REFAULT:
		o->refault = (int)gp_arg_count(state, key, arg, 0, 256);
		break;
	default:
		return gp_set_option(state, lock_fields, key, arg, o);
	}
	return 0;
}

/* FILE or --anon, and what goes with which. */
static void lock_check(struct argp_state *state, void *cmd)
{
	const struct lock_opts *o = cmd;
	if (!o->file && !o->have_anon)
		argp_error(state, "nothing to pin: give FILE or --anon SIZE");
	if (o->file && o->have_anon)
		argp_error(state, "give FILE or --anon SIZE, not both");
	if (o->have_anon && (o->have_size || o->offset || o->writable))
		argp_error(state, "--offset, --size and --writable apply to a FILE, not --anon");
}

static const struct argp lock_argp = {
	lock_options, lock_parse, "FILE\n--anon SIZE",
	"Pin FILE (mapped MAP_SHARED, read-only) or anonymous memory with the GPU runtime, "
	"as seed 004's lockprobe did, without its mistakes: pre-fault with progress, pin "
	"(hsa_amd_memory_lock, hsa_amd_memory_lock_to_pool per --pool, or "
	"cuMemHostRegister_v2), unpin; times, status names, and what the pin did to the "
	"system (pages dirtied and written during the call, VmPin/VmLck, the file's mtime).\v"
	"Each arm is a row of the printed table and an `arm' line of the result (-o).  "
	"A refusal is a result, not an error.  A pin that does not return within "
	"--timeout ends its arm with status `timeout' (with the stuck thread's wchan, "
	"syscall and kernel stack) and gpuprobe exits.  gpuprobe refuses to pin more "
	"than MemAvailable minus a margin unless --force.  FILE is never written.\n\n"
	"Exit status: 0 every arm ran (whatever the runtime answered); 1 runtime error "
	"(file, memory, runtime, or a pin that timed out); 64 usage error.",
	NULL, NULL, NULL,
};

/* ---- system readers -------------------------------------------------- */

struct vm_counts {
	uint64_t dirtied, written;
	bool have;
};

static int vm_kv(const char *key, size_t klen, const char *val, void *ctx)
{
	struct vm_counts *c = ctx;
	if (gp_key_is(key, klen, "nr_dirtied"))
		gp_parse_u64(val, &c->dirtied, NULL), c->have = true;
	else if (gp_key_is(key, klen, "nr_written"))
		gp_parse_u64(val, &c->written, NULL);
	return 0;
}

static char *slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *t = gp_slurp_fd(fd, NULL);
	close(fd);
	return t;
}

static struct vm_counts read_vmstat(void)
{
	struct vm_counts c = { 0 };
	char *t = slurp("/proc/vmstat");
	if (t)
		gp_kv_each(t, vm_kv, &c);
	free(t);
	return c;
}

static int mem_kv(const char *key, size_t klen, const char *val, void *ctx)
{
	uint64_t *m = ctx;
	if (gp_key_is(key, klen, "MemAvailable"))
		gp_parse_mem_value(val, &m[0]);
	else if (gp_key_is(key, klen, "MemTotal"))
		gp_parse_mem_value(val, &m[1]);
	return 0;
}

static bool read_status(struct gp_status_mem *m)
{
	char buf[8192];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = gp_pread_all(fd, buf, sizeof buf);
	close(fd);
	return n > 0 && gp_parse_status_mem(buf, m);
}

/* ---- one arm ------------------------------------------------------- */

struct lock_ctx {
	struct lock_opts *o;
	struct gp_gpu gpu;
	struct gp_file file;
	bool have_file;
	uint64_t bytes;
	enum gp_map_kind kind;
	struct gp_result *out;
	json_t *arms;             /* a JSON array, what the renderers take */
	bool progress;
};

struct pin_call {
	struct gp_gpu *g;
	void *p;
	size_t n;
	int pool;
	unsigned flags;
};

static int64_t do_pin(void *arg)
{
	struct pin_call *c = arg;
	return gp_gpu_pin(c->g, c->p, c->n, c->pool, c->flags);
}

static int64_t do_unpin(void *arg)
{
	struct pin_call *c = arg;
	return gp_gpu_unpin(c->g, c->p);
}

static json_t *stuck_json(const struct gp_wd_stuck *s)
{
	json_t *j = json_pack("{s:i, s:s#, s:o, s:o}", "tid", s->tid, "state", &s->state, 1,
			      "wchan", gp_json_string(s->wchan), "syscall", gp_json_string(s->syscall));
	if (s->kstack) {
		json_t *arr = json_array();
		char *save = NULL, *copy = strdup(s->kstack);
		for (char *l = copy ? strtok_r(copy, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
			json_array_append_new(arr, gp_json_string(l));
		free(copy);
		json_object_set_new(j, "kernel", arr);
	}
	/* Where in the runtime it waits: frames unwound from outside. */
	gp_unwind_stuck(j, s->tid, GP_UNWIND_BUDGET_NS);
	return j;
}

static double mib(uint64_t pages)
{
	return (double)pages * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

static bool same_time(const struct stat *a, const struct stat *b)
{
	return a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The arm's line before the pin: what is pinned, where, how. */
static json_t *arm_line(const struct lock_ctx *x, const char *name, int pool, unsigned flags)
{
	const struct gp_gpu *g = &x->gpu;
	json_t *a = json_pack("{s:s, s:s, s:s, s:s}", "type", "arm", "name", name, "runtime", g->be->name,
			      "call", pool >= 0 ? g->be->pool_call : g->be->pin_call);
	json_object_set_new(a, "pool", pool >= 0 ? json_string(g->pools[pool].name) : json_null());
	json_object_set_new(a, "bytes", json_integer((json_int_t)x->bytes));
	if (x->have_file)
		json_object_set_new(a, "offset", json_integer((json_int_t)x->o->offset));
	json_object_set_new(a, "mapping", json_string(gp_map_kind_name(x->kind)));
	char ftext[64];
	if (!strcmp(g->be->name, "cuda"))
		gp_cuda_flags_text(flags, ftext, sizeof ftext);
	else
		snprintf(ftext, sizeof ftext, "%u", flags);
	json_object_set_new(a, "flags", json_string(ftext));
	json_object_set_new(a, "refault_threads", json_integer(x->o->refault));
	return a;
}

/* An arm that ended before its pin: status STATUS, NOTE says why. */
static void arm_failed(json_t *a, const char *status, json_t *note)
{
	json_object_set_new(a, "status", json_string(status));
	json_object_set_new(a, "status_code", json_null());
	json_object_set_new(a, "note", note);
}

/* Pre-faults M with progress; false (the arm says why) when it failed. */
static bool arm_prefault(const struct lock_ctx *x, json_t *a, struct gp_map *m)
{
	double s = 0;
	const char *method = "";
	struct gp_io_mark io0, io1;
	gp_io_mark_now(&io0);
	if (gp_prefault(m, x->progress, &s, &method) != 0) {
		int e = errno;
		arm_failed(a, "prefault-failed", json_sprintf("pre-fault: %s%s", strerror(e),
			   e == EFAULT ? " (did the file shrink?)" : ""));
		return false;
	}
	json_object_set_new(a, "prefault_s", json_real(s));
	json_object_set_new(a, "prefault_mib_s",
			    json_real(s > 0 ? (double)x->bytes / 1048576.0 / s : 0));
	json_object_set_new(a, "prefault_method", json_string(method));
	gp_io_mark_now(&io1);
	gp_prefault_evidence(a, &io0, &io1, s, x->bytes, x->kind == GP_MAP_ANON);
	return true;
}

/* A call (pin or unpin: SECS_KEY, STATUS_KEY are its) that did not
 * return: the arm ends as a timeout, with where the thread waits.  A pin
 * that never returned has no status code; a hung unpin keeps the pin's. */
static void arm_stuck(json_t *a, const char *secs_key, const char *status_key,
		      int64_t timeout_ns, struct gp_wd_stuck *stuck)
{
	json_object_set_new(a, secs_key, json_real((double)timeout_ns / 1e9));
	json_object_set_new(a, status_key, json_string("timeout"));
	json_object_set_new(a, "status", json_string("timeout"));
	if (!json_object_get(a, "status_code"))
		json_object_set_new(a, "status_code", json_null());
	json_object_set_new(a, "stuck", stuck_json(stuck));
	free(stuck->kstack);
}

/* What the pin did to the system: pages dirtied and written during the
 * call, VmPin/VmLck after it. */
static void arm_system(json_t *a, const struct gp_gpu *g, int64_t st,
		       const struct vm_counts *v0, const struct vm_counts *v1)
{
	if (v0->have && v1->have) {
		json_object_set_new(a, "dirtied_mib", json_real(mib(v1->dirtied - v0->dirtied)));
		json_object_set_new(a, "written_mib", json_real(mib(v1->written - v0->written)));
	}
	struct gp_status_mem sm;
	if (read_status(&sm)) {
		if (sm.have & GP_HAVE_VM_PIN)
			json_object_set_new(a, "vm_pin_mib", json_real((double)sm.vm_pin / 1048576.0));
		if (sm.have & GP_HAVE_VM_LCK)
			json_object_set_new(a, "vm_lck_mib", json_real((double)sm.vm_lck / 1048576.0));
		gp_pin_accounting(a, g->be->name, st == g->be->success,
				  (sm.have & GP_HAVE_VM_PIN) && (sm.have & GP_HAVE_VM_LCK),
				  sm.vm_pin, sm.vm_lck);
	}
}

/* Say what a refusal means where the cause is known. */
static void arm_note(const struct lock_ctx *x, json_t *a, int pool, unsigned flags, int64_t st)
{
	const struct gp_gpu *g = &x->gpu;
	bool cuda = !strcmp(g->be->name, "cuda");
	if (!cuda && pool >= 0 && st == 0x28 &&
	    g->agents[g->pools[pool].agent].type != GP_AGENT_CPU)
		json_object_set_new(a, "note", json_string(
			"expected: hsa_amd_memory_lock_to_pool takes a pool owned by a CPU agent "
			"(hsa_ext_amd.h, its @param pool); a GPU agent's pool is always 0x28"));
	else if (!cuda && st == 0x1000 && getenv("HSA_USE_SVM") && !strcmp(getenv("HSA_USE_SVM"), "0"))
		json_object_set_new(a, "note", json_string(
			"HSA_USE_SVM=0 is set: ROCr refuses this SVM-class call with 0x1000 "
			"(seed 004 arm 1); unset it to measure the pin"));
	else if (cuda && st == 1 && x->kind != GP_MAP_ANON && !(flags & GP_CU_REG_READ_ONLY)) {
		struct utsname u;
		uname(&u);
		json_object_set_new(a, "note", json_sprintf(
			"refused as expected on Linux >= 6.5 (this is %s): the kernel forbids long-term "
			"writable pins (FOLL_LONGTERM) of file-backed shared mappings; register with "
			"read-only (CU_MEMHOSTREGISTER_READ_ONLY) or pin anonymous memory", u.release));
	}
}

/* Returns the arm; *hung when its pin or unpin never returned. */
static json_t *run_arm(struct lock_ctx *x, const char *name, int pool, unsigned flags, bool *hung)
{
	struct lock_opts *o = x->o;
	struct gp_gpu *g = &x->gpu;
	*hung = false;
	json_t *a = arm_line(x, name, pool, flags);

	struct stat before = x->file.st, after;
	if (x->have_file)
		fstat(x->file.fd, &before);
	struct gp_map m;
	if (gp_map_range(&m, x->kind, x->have_file ? &x->file : NULL, o->offset, x->bytes) != 0) {
		arm_failed(a, "mmap-failed", json_sprintf("mmap: %s", strerror(errno)));
		return a;
	}
	if (o->prefault && !arm_prefault(x, a, &m)) {
		gp_map_release(&m);
		return a;
	}

	struct gp_refault *rf = gp_refault_start(&m, o->refault);
	struct vm_counts v0 = read_vmstat();
	struct pin_call call = { g, m.base, x->bytes, pool, flags };
	int64_t st = 0;
	double secs = 0;
	struct gp_wd_stuck stuck;
	if (!gp_watchdog_run(do_pin, &call, o->timeout_ns, &st, &secs, &stuck)) {
		arm_stuck(a, "lock_s", "status", o->timeout_ns, &stuck);
		*hung = true;
		return a; /* the mapping stays: the stuck call may be using it */
	}
	struct vm_counts v1 = read_vmstat();
	uint64_t chunks = gp_refault_stop(rf);
	if (o->refault)
		json_object_set_new(a, "refault_chunks", json_integer((json_int_t)chunks));
	char sname[96];
	gp_gpu_status_name(g, st, sname, sizeof sname);
	json_object_set_new(a, "lock_s", json_real(secs));
	json_object_set_new(a, "status", json_string(sname));
	json_object_set_new(a, "status_code", json_integer((json_int_t)st));
	arm_system(a, g, st, &v0, &v1);
	if (st == g->be->success) {
		int64_t ust = 0;
		double us = 0;
		if (!gp_watchdog_run(do_unpin, &call, o->timeout_ns, &ust, &us, &stuck)) {
			json_object_set_new(a, "call", json_string(g->be->unpin_call));
			arm_stuck(a, "unlock_s", "unlock_status", o->timeout_ns, &stuck);
			*hung = true;
			return a;
		}
		gp_gpu_status_name(g, ust, sname, sizeof sname);
		json_object_set_new(a, "unlock_s", json_real(us));
		json_object_set_new(a, "unlock_status", json_string(sname));
	}
	gp_map_release(&m);
	if (x->have_file) {
		fstat(x->file.fd, &after);
		json_object_set_new(a, "mtime_changed", json_boolean(!same_time(&before, &after) ||
								     before.st_size != after.st_size));
	}
	arm_note(x, a, pool, flags, st);
	return a;
}

static void print_arms(struct lock_ctx *x)
{
	enum gp_format fmt = x->o->fmt.fmt;
	if (fmt == GP_FMT_JSON) {
		size_t i;
		json_t *a;
		json_array_foreach(x->arms, i, a) {
			char *s = json_dumps(a, JSON_COMPACT);
			if (s)
				printf("%s\n", s);
			free(s);
		}
	} else if (fmt == GP_FMT_MARKDOWN) {
		gp_arms_markdown(stdout, x->arms);
	} else {
		gp_arms_text(stdout, x->arms);
	}
	if (fmt != GP_FMT_JSON)
	fflush(stdout);
}

static json_t *gpu_line(struct gp_gpu *g)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "gpu", "runtime", g->be->name,
			      "lib", g->lib, "version", g->version, "build", g->build);
	json_t *agents = json_array();
	for (int i = 0; i < g->nagents; i++) {
		struct gp_gpu_agent *a = &g->agents[i];
		json_t *ja = json_pack("{s:s, s:o, s:s}", "label", a->label, "name", gp_json_string(a->name),
				       "type", gp_agent_type_name(a->type));
		json_object_set_new(ja, "product", a->have_product ? gp_json_string(a->product) : json_null());
		if (a->have_node)
			json_object_set_new(ja, "node", json_integer(a->node));
		if (a->have_uuid)
			json_object_set_new(ja, "uuid", gp_json_string(a->uuid));
		if (a->ro_register >= 0)
			json_object_set_new(ja, "read_only_register", json_boolean(a->ro_register));
		if (a->total_mem)
			json_object_set_new(ja, "total_mem", json_integer((json_int_t)a->total_mem));
		json_array_append_new(agents, ja);
	}
	json_object_set_new(j, "agents", agents);
	json_t *pools = json_array();
	for (int i = 0; i < g->npools; i++) {
		struct gp_gpu_pool *p = &g->pools[i];
		char f[64];
		gp_pool_flags_text(p->flags, f, sizeof f);
		json_t *jp = json_pack("{s:s, s:s}", "name", p->name, "agent", g->agents[p->agent].label);
		json_object_set_new(jp, "flags", p->have_flags ? json_string(f) : json_null());
		json_object_set_new(jp, "size", p->have_size ? json_integer((json_int_t)p->size) : json_null());
		json_object_set_new(jp, "alloc_allowed", p->have_alloc_allowed ? json_boolean(p->alloc_allowed) : json_null());
		json_array_append_new(pools, jp);
	}
	json_object_set_new(j, "pools", pools);
	return j;
}

/* Opening the runtime may hang too (a wedged driver): under the watchdog. */
struct open_call {
	struct gp_gpu *g;
	enum gp_rt rt;
	const char *lib;
};

static int64_t do_open(void *arg)
{
	struct open_call *c = arg;
	return gp_gpu_open(c->g, c->rt, c->lib);
}

int gp_lockprobe_open_runtime(struct gp_gpu *g, enum gp_rt rt, const char *lib, int64_t timeout_ns)
{
	struct open_call c = { g, rt, lib };
	int64_t r = 0;
	double secs;
	struct gp_wd_stuck stuck;
	if (!gp_watchdog_run(do_open, &c, timeout_ns, &r, &secs, &stuck)) {
		json_t *sj = json_object();
		gp_unwind_stuck(sj, stuck.tid, GP_UNWIND_BUDGET_NS);
		char chain[512];
		gp_unwind_chain(sj, 6, chain, sizeof chain);
		json_decref(sj);
		gp_err("runtime", "opening the GPU runtime did not return within %g s "
		       "(stuck in %s, %s%s%s)", (double)timeout_ns / 1e9, stuck.wchan[0] ? stuck.wchan : "?",
		       stuck.syscall[0] ? stuck.syscall : "?", chain[0] ? "; frames: " : "", chain);
		fflush(stdout);
		_exit(GP_EXIT_ERROR);
	}
	if (r != 0) {
		gp_err(NULL, "%s", g->err);
		if (g->hint[0])
			gp_hint("%s", g->hint);
		return -1;
	}
	return 0;
}

/* What is pinned: FILE from --offset for --size (or to its end), or
 * --anon bytes.  Returns an exit status (GP_EXIT_OK: go on). */
static int lock_target(struct lock_ctx *x)
{
	struct lock_opts *o = x->o;
	if (!o->file) {
		x->bytes = o->anon;
		x->kind = GP_MAP_ANON;
		return GP_EXIT_OK;
	}
	char why[300];
	if (gp_file_open(o->file, o->writable, &x->file, why, sizeof why) != 0) {
		gp_err(o->file, "%s", why);
		return GP_EXIT_ERROR;
	}
	x->have_file = true;
	uint64_t fsize = (uint64_t)x->file.st.st_size;
	if (o->offset >= fsize) {
		gp_err(o->file, "--offset %llu is past the end of the file (%llu bytes)",
		       (unsigned long long)o->offset, (unsigned long long)fsize);
		return GP_EXIT_ERROR;
	}
	x->bytes = o->have_size ? o->size : fsize - o->offset;
	if (o->offset + x->bytes > fsize || o->offset + x->bytes < o->offset) {
		gp_err(o->file, "--offset %llu + --size %llu runs past the end of the file (%llu bytes)",
		       (unsigned long long)o->offset, (unsigned long long)x->bytes,
		       (unsigned long long)fsize);
		return GP_EXIT_ERROR;
	}
	x->kind = o->writable ? GP_MAP_FILE_RW : GP_MAP_FILE_RO;
	if (o->writable)
		gp_warn("--writable maps %s read-write: a pin without a read-only flag may "
			"dirty its pages and change its mtime (seed 004's mechanism); gpuprobe "
			"itself never writes to it", o->file);
	return GP_EXIT_OK;
}

/* Memory guard: the seed's probe waited hours for 40 GiB free; say how
 * much is free instead of thrashing the machine.  False: refused. */
static bool memory_allows(uint64_t bytes, bool force)
{
	uint64_t mem[2] = { 0, 0 };
	char *mi = slurp("/proc/meminfo");
	if (mi) {
		gp_kv_each(mi, mem_kv, mem);
		free(mi);
	}
	if (!mem[0])
		return true;
	uint64_t margin = mem[1] / 32 > (256ull << 20) ? mem[1] / 32 : (256ull << 20);
	uint64_t allowed = mem[0] > margin ? mem[0] - margin : 0;
	if (bytes <= allowed || force)
		return true;
	gp_err(NULL, "refusing to pin %.1f GiB: MemAvailable is %.1f GiB, and %.1f GiB "
	       "stays free as a margin (%.1f GiB allowed)", bytes / 1073741824.0,
	       mem[0] / 1073741824.0, margin / 1073741824.0, allowed / 1073741824.0);
	gp_hint("free memory, use --size, or --force to pin anyway");
	return false;
}

/* The pools of the arms per --pool (-1: the plain call) into sel.
 * Returns how many, or -1 after saying why --pool does not apply. */
static int select_pools(const struct gp_gpu *g, const char *pool, int *sel)
{
	if (!pool || !strcmp(pool, "none")) {
		sel[0] = -1;
		return 1;
	}
	if (!strcmp(g->be->name, "cuda")) {
		gp_err("--pool", "CUDA has no memory pools to lock to: use --cuda-flags");
		return -1;
	}
	int nsel = gp_pool_select(g->agents, g->pools, g->npools, pool, sel, GP_GPU_MAX_POOLS);
	if (nsel < 0) {
		struct strbuf names = STRBUF_INIT;
		for (int i = 0; i < g->npools; i++)
			strbuf_addf(&names, "%s%s", i ? ", " : "", g->pools[i].name);
		gp_err("--pool", "no pool named '%s' (this runtime has: %s; or all, cpu, gpu, none)",
		       pool, names.len ? names.buf : "none");
		strbuf_release(&names);
		return -1;
	}
	if (!g->be->pool_call) {
		gp_err("--pool", "this runtime has no lock-to-pool call");
		return -1;
	}
	return nsel;
}

/* -o: the result file, its header (with the host) and gpu lines. */
static int open_result(struct lock_ctx *x, const struct gp_global *gl)
{
	const char *path = x->o->out.path;
	x->out = gp_result_create(path);
	if (!x->out) {
		gp_result_create_failed(path, errno);
		return GP_EXIT_ERROR;
	}
	struct gp_root root;
	json_t *host = NULL;
	if (gp_root_open(&root, "/") == 0) {
		struct gp_host_info_opts hio = { .runtimes = true, .process = true,
						 .hsa_lib = x->o->run.libs[0] };
		host = gp_host_info_ex(&root, &hio);
		gp_root_close(&root);
	}
	gp_result_write(x->out, gp_result_header("lock", gl->argc, gl->argv, host ? host : json_object()));
	gp_result_write(x->out, gpu_line(&x->gpu));
	return GP_EXIT_OK;
}

/* An arm hung: print what ran, say where the thread waits, and leave. */
static _Noreturn void exit_hung(struct lock_ctx *x, json_t *a, const char *name)
{
	print_arms(x);
	json_t *s = json_object_get(a, "stuck");
	gp_err(name, "%s did not return within %g s: status timeout; the thread "
	       "(tid %d) waits in %s, %s", json_string_value(json_object_get(a, "call")),
	       (double)x->o->timeout_ns / 1e9, (int)json_integer_value(json_object_get(s, "tid")),
	       json_string_value(json_object_get(s, "wchan"))[0]
	       ? json_string_value(json_object_get(s, "wchan")) : "(no wchan)",
	       json_string_value(json_object_get(s, "syscall"))[0]
	       ? json_string_value(json_object_get(s, "syscall")) : "(syscall unknown)");
	char chain[512];
	gp_unwind_chain(s, 6, chain, sizeof chain);
	const char *uw = json_string_value(json_object_get(s, "unwind"));
	if (chain[0])
		gp_err(name, "its frames: %s", chain);
	else if (uw && (!strcmp(uw, "ok") || !strcmp(uw, "nostop")) && !json_is_string(json_object_get(s, "unwind_error")))
		gp_err(name, "its user stack had no frames");
	else
		gp_err(name, "its user frames were not read: %s%s%s",
		       uw ? uw : "?",
		       json_is_string(json_object_get(s, "unwind_error")) ? ": " : "",
		       json_is_string(json_object_get(s, "unwind_error"))
		       ? json_string_value(json_object_get(s, "unwind_error")) : "");
	if (x->out)
		gp_result_close(x->out);
	fflush(stdout);
	fflush(stderr);
	/* The stuck thread cannot be cancelled, and the runtime's
	 * destructors might wait for it: leave now. */
	_exit(GP_EXIT_ERROR);
}

/* The arms: one per selected pool (or the plain call), --repeat times
 * each, into x->arms and the result.  Returns an exit status. */
static int run_arms(struct lock_ctx *x, const int *sel, int nsel, unsigned flags)
{
	const struct lock_opts *o = x->o;
	const struct gp_gpu *g = &x->gpu;
	bool cuda = !strcmp(g->be->name, "cuda");
	int rc = GP_EXIT_OK;
	for (int i = 0; i < nsel && rc == GP_EXIT_OK; i++) {
		for (int k = 0; k < o->repeat; k++) {
			char name[64];
			const char *base = sel[i] >= 0 ? g->pools[sel[i]].name : cuda ? "register" : "lock";
			if (o->repeat > 1)
				snprintf(name, sizeof name, "%s#%d", base, k + 1);
			else
				snprintf(name, sizeof name, "%s", base);
			bool hung = false;
			json_t *a = run_arm(x, name, sel[i], cuda ? flags : 0, &hung);
			json_array_append(x->arms, a);
			if (x->out && gp_result_write(x->out, json_incref(a)) != 0) {
				gp_err_errno(errno, o->out.path, "write failed");
				rc = GP_EXIT_ERROR;
			}
			if (hung)
				exit_hung(x, a, name);
			json_decref(a);
			if (rc)
				break;
		}
	}
	return rc;
}

int cmd_lock(int argc, char **argv, const struct gp_global *gl)
{
	struct lock_opts o = { .prefault = true, .repeat = 1, .timeout_ns = 600 * GP_NS_S,
			       .out = { .quiet = gl->quiet,
					.help = (const struct gp_help[]){ { 'q', "No progress bar" }, { 0, NULL } } },
			       .fmt = { GP_FMT_TEXT | GP_FMT_MARKDOWN | GP_FMT_JSON, GP_FMT_TEXT },
			       .operand = { .file = &o.file, .one_only = "one FILE only",
					    .check = lock_check, .cmd = &o } };
	const struct gp_group groups[] = {
		{ &gp_runtime_argp, &o.run, "Runtime:", 3 }, { &gp_out_argp, &o.out, "Output:", 4 },
		{ &gp_format_argp, &o.fmt, NULL, 5 }, { &gp_operand_argp, &o.operand, NULL, 0 },
		GP_GROUPS_END,
	};
	if (gp_parse_command(&lock_argp, groups, argc, argv, &o))
		return GP_EXIT_USAGE;
	struct lock_ctx x = { .o = &o };
	x.progress = !o.out.quiet && isatty(STDERR_FILENO);
	int rc = lock_target(&x);
	if (rc != GP_EXIT_OK)
		return rc;
	if (!memory_allows(x.bytes, o.force))
		return GP_EXIT_ERROR;

	if (gp_lockprobe_open_runtime(&x.gpu, o.run.rt, o.run.libs[0], o.timeout_ns) != 0)
		return GP_EXIT_ERROR;
	struct gp_gpu *g = &x.gpu;
	bool cuda = !strcmp(g->be->name, "cuda");
	int sel[GP_GPU_MAX_POOLS];
	int nsel = select_pools(g, o.pool, sel);
	if (nsel < 0) {
		gp_gpu_close(g);
		return GP_EXIT_USAGE;
	}
	if (!cuda && o.have_cuda_flags)
		gp_warn("--cuda-flags is for the CUDA runtime; ignored with %s", g->be->name);
	unsigned flags = 0;
	if (cuda)
		flags = o.have_cuda_flags ? o.cuda_flags
			: x.kind == GP_MAP_FILE_RO ? GP_CU_REG_READ_ONLY : 0;

	if (o.out.path && open_result(&x, gl) != GP_EXIT_OK) {
		gp_gpu_close(g);
		return GP_EXIT_ERROR;
	}
	x.arms = json_array();
	rc = run_arms(&x, sel, nsel, flags);
	print_arms(&x);
	if (x.out && gp_result_close(x.out) != 0 && !rc) {
		gp_err_errno(errno, o.out.path, "write failed");
		rc = GP_EXIT_ERROR;
	}
	json_decref(x.arms);
	gp_gpu_close(g);
	if (x.have_file)
		close(x.file.fd);
	return rc;
}
