/* The host facts of a result header (src/sysread/hostinfo.c gathers them)
 * as a person reads them: one fact a line for `gpuprobe info`, the
 * "Environment" bullet list of seed 000 for Markdown (`info --format
 * markdown` and the report's environment block).  Only the JSON object is
 * read here: the renderer never reads /proc. */
#include "config.h"
#include "host_text.h"
#include "strbuf.h"
#include "units.h"

#include <stdbool.h>
#include <string.h>

static const char *s_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void fmt_size(char *buf, size_t cap, const json_t *v)
{
	if (json_is_integer(v))
		gp_fmt_size(buf, cap, (double)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, cap, "%s", json_string_value(v));
	else
		snprintf(buf, cap, "?");
}

/* One fact a line: (label, value) pairs, rendered as text or Markdown. */
typedef void (*fact_fn)(void *ctx, const char *label, const char *value, bool code);

/* The fact LABEL of the array ARR: each element as ITEM writes it, "; "
 * between them; an empty one says NONE.  No ARR, no fact. */
static void fact_list(const json_t *arr, const char *label, const char *none,
		      void (*item)(struct strbuf *sb, const json_t *e), fact_fn fn, void *ctx)
{
	if (!arr)
		return;
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	const json_t *e;
	json_array_foreach(arr, i, e) {
		if (i)
			strbuf_addstr(&sb, "; ");
		item(&sb, e);
	}
	fn(ctx, label, json_array_size(arr) ? sb.buf : none, false);
	strbuf_release(&sb);
}

static void gpu_item(struct strbuf *sb, const json_t *g)
{
	const char *vn = s_of(g, "vendor_name") ? s_of(g, "vendor_name") : s_of(g, "vendor");
	if (s_of(g, "model")) {
		strbuf_addf(sb, "%s, driver %s%s%s",
			    s_of(g, "model"), s_of(g, "driver") ? s_of(g, "driver") : "?",
			    s_of(g, "pci") ? " at " : "", s_of(g, "pci") ? s_of(g, "pci") : "");
		return;
	}
	strbuf_addf(sb, "%s: %s %s:%s, driver %s%s%s",
		    s_of(g, "card") ? s_of(g, "card") : "?", vn ? vn : "?",
		    s_of(g, "vendor") ? s_of(g, "vendor") : "?",
		    s_of(g, "device") ? s_of(g, "device") : "?",
		    s_of(g, "driver") ? s_of(g, "driver") : "none",
		    s_of(g, "pci") ? " at " : "", s_of(g, "pci") ? s_of(g, "pci") : "");
}

static void device_item(struct strbuf *sb, const json_t *d)
{
	bool r = json_is_true(json_object_get(d, "read")), wr = json_is_true(json_object_get(d, "write"));
	strbuf_addf(sb, "%s %s %s (%s)", s_of(d, "path") ? s_of(d, "path") : "?",
		    s_of(d, "mode") ? s_of(d, "mode") : "?",
		    s_of(d, "group") ? s_of(d, "group") : "?",
		    r && wr ? "rw" : r ? "read only" : wr ? "write only" : "no access");
}

/* The machine: OS, CPU, GPUs, drivers, WSL. */
static void walk_system(const json_t *h, fact_fn fn, void *ctx)
{
	struct strbuf sb = STRBUF_INIT;
	char b[1024];
	const json_t *os = json_object_get(h, "os");
	const char *kernel = s_of(os, "kernel") ? s_of(os, "kernel") : s_of(h, "kernel");
	strbuf_addf(&sb, "%s%s%s%s", s_of(os, "name") ? s_of(os, "name") : "",
		    s_of(os, "name") ? ", " : "", kernel ? "kernel " : "", kernel ? kernel : "");
	if (s_of(h, "machine"))
		strbuf_addf(&sb, " (%s)", s_of(h, "machine"));
	if (sb.len)
		fn(ctx, "OS", sb.buf, false);
	const json_t *cpu = json_object_get(h, "cpu");
	json_t *ncpu = json_object_get(h, "cpus");
	if (s_of(cpu, "model") || ncpu) {
		snprintf(b, sizeof b, "%s%s%" JSON_INTEGER_FORMAT " CPUs%s",
			 s_of(cpu, "model") ? s_of(cpu, "model") : "", s_of(cpu, "model") ? " (" : "",
			 json_integer_value(ncpu), s_of(cpu, "model") ? ")" : "");
		fn(ctx, "CPU", b, false);
	}
	fact_list(json_object_get(h, "gpus"), "GPUs", "none in /sys/class/drm or /proc/driver/nvidia",
		  gpu_item, fn, ctx);
	const json_t *drv = json_object_get(h, "drivers");
	if (drv) {
		const char *a = s_of(drv, "amdgpu"), *n = s_of(drv, "nvidia");
		snprintf(b, sizeof b, "amdgpu %s; nvidia %s%s", a ? a : "not loaded", n ? n : "not loaded",
			 json_is_true(json_object_get(drv, "nvidia_open")) ? " (open kernel module)" : "");
		fn(ctx, "Drivers", b, false);
	}
	const json_t *w = json_object_get(h, "wsl");
	if (w) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, json_is_true(json_object_get(w, "detected")) ? "yes" : "no");
		size_t i;
		const json_t *e;
		json_array_foreach(json_object_get(w, "evidence"), i, e)
			strbuf_addf(&sb, "%s%s", i ? ", " : " (",
				    json_string_value(e) ? json_string_value(e) : "?");
		if (json_array_size(json_object_get(w, "evidence")))
			strbuf_addch(&sb, ')');
		fn(ctx, "WSL", sb.buf, false);
	}
	strbuf_release(&sb);
}

/* What gpuprobe and the runtime may use: devices, user, runtimes, environment. */
static void walk_access(const json_t *h, fact_fn fn, void *ctx)
{
	struct strbuf sb = STRBUF_INIT;
	fact_list(json_object_get(h, "devices"), "Devices",
		  "none of /dev/kfd, /dev/dri/*, /dev/nvidia*, /dev/dxg", device_item, fn, ctx);
	const json_t *u = json_object_get(h, "user");
	if (u) {
		size_t i;
		strbuf_reset(&sb);
		strbuf_addf(&sb, "%s (uid %" JSON_INTEGER_FORMAT "), groups",
			    s_of(u, "name") ? s_of(u, "name") : "?",
			    json_integer_value(json_object_get(u, "uid")));
		const json_t *g;
		json_array_foreach(json_object_get(u, "groups"), i, g) {
			if (json_is_string(g))
				strbuf_addf(&sb, " %s", json_string_value(g));
			else
				strbuf_addf(&sb, " %" JSON_INTEGER_FORMAT, json_integer_value(g));
		}
		if (!json_array_size(json_object_get(u, "groups")))
			strbuf_addstr(&sb, " none");
		fn(ctx, "User", sb.buf, false);
	}
	const json_t *rt = json_object_get(h, "runtimes");
	static const char *const rts[] = { "hsa", "cuda", NULL };
	for (int k = 0; rt && rts[k]; k++) {
		const json_t *r = json_object_get(rt, rts[k]);
		if (!r)
			continue;
		strbuf_reset(&sb);
		if (s_of(r, "path")) {
			strbuf_addstr(&sb, s_of(r, "path"));
			if (s_of(r, "file_version"))
				strbuf_addf(&sb, " (version %s)", s_of(r, "file_version"));
			if (s_of(r, "version"))
				strbuf_addf(&sb, ", driver API %s", s_of(r, "version"));
			if (s_of(r, "build_id"))
				strbuf_addf(&sb, ", build-id %s", s_of(r, "build_id"));
			if (s_of(r, "build"))
				strbuf_addf(&sb, ", built by %s", s_of(r, "build"));
		} else {
			strbuf_addf(&sb, "%s not loadable", s_of(r, "name") ? s_of(r, "name") : rts[k]);
		}
		fn(ctx, k == 0 ? "HSA runtime" : "CUDA driver", sb.buf, false);
	}
	const json_t *env = json_object_get(h, "env");
	if (env) {
		const char *key;
		const json_t *v;
		strbuf_reset(&sb);
		json_object_foreach((json_t *)env, key, v)
			strbuf_addf(&sb, "%s%s=%s", sb.len ? " " : "", key,
				    json_string_value(v) ? json_string_value(v) : "?");
		fn(ctx, "Environment", sb.len ? sb.buf : "no HSA_/ROCR_/HIP_/CUDA_ variables", sb.len > 0);
	}
	strbuf_release(&sb);
}

/* Memory and writeback settings, ptrace, memlock. */
static void walk_memory(const json_t *h, fact_fn fn, void *ctx)
{
	struct strbuf sb = STRBUF_INIT;
	char b[1024];
	const json_t *vm = json_object_get(h, "vm");
	json_t *dr = vm ? json_object_get(vm, "vm.dirty_ratio") : json_object_get(h, "vm.dirty_ratio");
	json_t *dbr = vm ? json_object_get(vm, "vm.dirty_background_ratio")
			 : json_object_get(h, "vm.dirty_background_ratio");
	if (dr || dbr) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "dirty_ratio=%" JSON_INTEGER_FORMAT " dirty_background_ratio=%" JSON_INTEGER_FORMAT,
			    json_integer_value(dr), json_integer_value(dbr));
		json_t *x = json_object_get(vm, "vm.dirty_bytes");
		if (json_integer_value(x))
			strbuf_addf(&sb, " dirty_bytes=%" JSON_INTEGER_FORMAT, json_integer_value(x));
		x = json_object_get(vm, "vm.dirty_background_bytes");
		if (json_integer_value(x))
			strbuf_addf(&sb, " dirty_background_bytes=%" JSON_INTEGER_FORMAT, json_integer_value(x));
		const json_t *thp = json_object_get(h, "thp");
		if (s_of(thp, "enabled"))
			strbuf_addf(&sb, "; THP %s, defrag %s", s_of(thp, "enabled"),
				    s_of(thp, "defrag") ? s_of(thp, "defrag") : "?");
		fn(ctx, "Writeback", sb.buf, true);
	}
	json_t *ys = json_object_get(h, "kernel.yama.ptrace_scope");
	if (json_object_get(h, "os")) {
		if (ys)
			snprintf(b, sizeof b, "%" JSON_INTEGER_FORMAT "%s", json_integer_value(ys),
				 json_integer_value(ys) >= 1 ? " (attaching needs CAP_SYS_PTRACE or a parent)" : "");
		else
			snprintf(b, sizeof b, "no Yama");
		fn(ctx, "ptrace_scope", b, false);
	}
	const json_t *bpf = json_object_get(h, "bpf");
	if (bpf) {
		bool on = json_is_true(json_object_get(bpf, "sockets"));
		snprintf(b, sizeof b, "%s%s", on ? "socket bytes and failed connects counted by the kernel"
			 : "not used: ", on ? "" : s_of(bpf, "why") ? s_of(bpf, "why") : "?");
		fn(ctx, "BPF", b, false);
	}
	const json_t *smp = json_object_get(h, "sampler");
	if (smp) {
		bool on = s_of(smp, "path") && !strcmp(s_of(smp, "path"), "bpf");
		snprintf(b, sizeof b, "%s%s", on ? "threads read by a BPF task iterator (only those that moved)"
			 : "/proc: ", on ? "" : s_of(smp, "why") ? s_of(smp, "why") : "?");
		fn(ctx, "Sampler", b, false);
	}
	const json_t *ml = json_object_get(h, "memlock");
	if (ml) {
		char s1[32], s2[32];
		fmt_size(s1, sizeof s1, json_object_get(ml, "soft"));
		fmt_size(s2, sizeof s2, json_object_get(ml, "hard"));
		snprintf(b, sizeof b, "%s (hard %s)", s1, s2);
		fn(ctx, "ulimit -l", b, false);
	}
	json_t *ma = json_object_get(h, "mem_available");
	if (ma) {
		char s1[32], s2[32];
		fmt_size(s1, sizeof s1, ma);
		fmt_size(s2, sizeof s2, json_object_get(h, "mem_total"));
		snprintf(b, sizeof b, "%s of %s", s1, s2);
		fn(ctx, "MemAvailable", b, false);
	}
	strbuf_release(&sb);
}

static void walk(const json_t *h, fact_fn fn, void *ctx)
{
	walk_system(h, fn, ctx);
	walk_access(h, fn, ctx);
	walk_memory(h, fn, ctx);
}

static void text_fact(void *ctx, const char *label, const char *value, bool code)
{
	fprintf((FILE *)ctx, "%-14s %s\n", label, value);
}

/* Markdown: a bullet list, as seed 000's "Environment" section. */
static void md_fact(void *ctx, const char *label, const char *value, bool code)
{
	FILE *out = ctx;
	fprintf(out, "- **%s**: ", label);
	if (code) {
		fprintf(out, "`%s`\n", value);
		return;
	}
	for (const char *c = value; *c; c++) {
		/* Markdown specials that a path or a version could hold. */
		if (strchr("\\`*_[]<>|", *c))
			fputc('\\', out);
		fputc(*c, out);
	}
	fputc('\n', out);
}

void gp_host_render_text(FILE *out, const json_t *host)
{
	walk(host, text_fact, out);
}

void gp_host_render_markdown(FILE *out, const json_t *host)
{
	walk(host, md_fact, out);
}
