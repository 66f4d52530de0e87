#include "config.h"
#include "sysinfo.h"
#include "parse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

struct kv_ctx {
	json_t *obj;
	struct gp_sys_compact *c;
};

static int vmstat_kv(const char *k, size_t kl, const char *v, void *arg)
{
	struct kv_ctx *x = arg;
	uint64_t val;
	if (kl >= 64 || !gp_parse_u64(v, &val, NULL))
		return 0;
	char key[64];
	memcpy(key, k, kl);
	key[kl] = '\0';
	json_object_set_new(x->obj, key, json_integer((json_int_t)val));
	struct gp_sys_compact *c = x->c;
	if (!c)
		return 0;
	if (!strcmp(key, "nr_dirtied")) {
		c->nr_dirtied = val;
		c->have_dirtied = true;
	} else if (!strcmp(key, "nr_written")) {
		c->nr_written = val;
		c->have_written = true;
	} else if (!strcmp(key, "pgsteal_file")) {
		/* pgsteal_file exists since Linux 5.8 (mm/vmstat.c). */
		c->pgsteal_file = val;
		c->have_pgsteal_file = true;
	} else if (!strcmp(key, "nr_dirty")) {
		c->nr_dirty = val;
	} else if (!strcmp(key, "nr_writeback")) {
		c->nr_writeback = val;
	}
	return 0;
}

void gp_vmstat_parse(const char *text, json_t *obj, struct gp_sys_compact *c)
{
	struct kv_ctx x = { obj, c };
	gp_kv_each(text, vmstat_kv, &x);
}

static int meminfo_kv(const char *k, size_t kl, const char *v, void *arg)
{
	struct kv_ctx *x = arg;
	uint64_t val;
	if (kl >= 64 || !gp_parse_mem_value(v, &val))
		return 0;
	char key[64];
	memcpy(key, k, kl);
	key[kl] = '\0';
	json_object_set_new(x->obj, key, json_integer((json_int_t)val));
	if (x->c && !strcmp(key, "MemAvailable")) {
		x->c->mem_available = val;
		x->c->have_mem_available = true;
	}
	return 0;
}

void gp_meminfo_parse(const char *text, json_t *obj, struct gp_sys_compact *c)
{
	struct kv_ctx x = { obj, c };
	gp_kv_each(text, meminfo_kv, &x);
}

json_t *gp_psi_parse(const char *text)
{
	json_t *res = json_object();
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *kind = NULL;
		if (!strncmp(line, "some ", 5))
			kind = "some";
		else if (!strncmp(line, "full ", 5))
			kind = "full";
		if (kind) {
			json_t *o = json_object();
			const char *p = line + 5;
			while (p && *p && *p != '\n') {
				while (*p == ' ')
					p++;
				const char *eq = strchr(p, '=');
				if (!eq || (eol && eq > eol))
					break;
				char key[16];
				size_t kl = (size_t)(eq - p);
				if (kl == 0 || kl >= sizeof key)
					break;
				memcpy(key, p, kl);
				key[kl] = '\0';
				char *end;
				double d = strtod(eq + 1, &end);
				if (end == eq + 1)
					break;
				if (!strcmp(key, "total"))
					json_object_set_new(o, key, json_integer((json_int_t)strtoull(eq + 1, NULL, 10)));
				else
					json_object_set_new(o, key, json_real(d));
				p = end;
			}
			if (json_object_size(o))
				json_object_set_new(res, kind, o);
			else
				json_decref(o);
		}
		line = eol ? eol + 1 : NULL;
	}
	if (!json_object_size(res)) {
		json_decref(res);
		return NULL;
	}
	return res;
}

enum { S_VMSTAT, S_MEMINFO, S_PSI_CPU, S_PSI_MEM, S_PSI_IO, S_COUNT };
static const char *const sys_paths[S_COUNT] = {
	"/proc/vmstat", "/proc/meminfo", "/proc/pressure/cpu",
	"/proc/pressure/memory", "/proc/pressure/io",
};

struct gp_sys_reader {
	int fd[S_COUNT]; /* kept open and pread each sample; -1 = absent */
	char *buf;
	size_t cap;
	json_t *last;    /* the last reading, whole: gp_sys_read_delta's base */
};

struct gp_sys_reader *gp_sys_reader_new(const struct gp_root *root)
{
	struct gp_sys_reader *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	for (int i = 0; i < S_COUNT; i++)
		r->fd[i] = gp_open(root, sys_paths[i], 0);
	r->cap = 16384;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		gp_sys_reader_free(r);
		return NULL;
	}
	return r;
}

void gp_sys_reader_free(struct gp_sys_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < S_COUNT; i++)
		if (r->fd[i] >= 0)
			close(r->fd[i]);
	json_decref(r->last);
	free(r->buf);
	free(r);
}

/* pread the whole file, growing the buffer when it filled up. */
static const char *sys_pread(struct gp_sys_reader *r, int i)
{
	if (r->fd[i] < 0)
		return NULL;
	for (;;) {
		ssize_t n = gp_pread_all(r->fd[i], r->buf, r->cap);
		if (n < 0)
			return NULL;
		if ((size_t)n < r->cap - 1)
			return r->buf;
		char *nb = realloc(r->buf, r->cap * 2);
		if (!nb)
			return r->buf;
		r->buf = nb;
		r->cap *= 2;
	}
}

json_t *gp_sys_read(struct gp_sys_reader *r, struct gp_sys_compact *c)
{
	memset(c, 0, sizeof *c);
	json_t *vm = json_object();
	const char *t;
	if ((t = sys_pread(r, S_VMSTAT))) {
		json_t *o = json_object();
		gp_vmstat_parse(t, o, c);
		json_object_set_new(vm, "vmstat", o);
	}
	if ((t = sys_pread(r, S_MEMINFO))) {
		json_t *o = json_object();
		gp_meminfo_parse(t, o, c);
		json_object_set_new(vm, "meminfo", o);
	}
	json_t *psi = json_object();
	static const char *const names[] = { "cpu", "memory", "io" };
	for (int i = 0; i < 3; i++) {
		json_t *p;
		if ((t = sys_pread(r, S_PSI_CPU + i)) && (p = gp_psi_parse(t)))
			json_object_set_new(psi, names[i], p);
	}
	if (json_object_size(psi))
		json_object_set_new(vm, "psi", psi);
	else
		json_decref(psi);
	return vm;
}

static void set_sysctl_int(json_t *o, const struct gp_root *root,
			   const char *key, const char *path)
{
	char buf[64];
	int64_t v;
	if (gp_read_file(root, path, buf, sizeof buf) > 0 && gp_parse_i64(buf, &v, NULL))
		json_object_set_new(o, key, json_integer(v));
}

json_t *gp_host_facts(const struct gp_root *root)
{
	json_t *h = json_object();
	char buf[256];
	/* From the root, so replayed trees describe their own host. */
	if (gp_read_file(root, "/proc/sys/kernel/osrelease", buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		json_object_set_new(h, "kernel", json_string(buf));
	}
	if (gp_read_file(root, "/proc/sys/kernel/hostname", buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		json_object_set_new(h, "hostname", json_string(buf));
	}
	struct utsname u;
	if (uname(&u) == 0)
		json_object_set_new(h, "machine", json_string(u.machine));
	json_object_set_new(h, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(h, "page_size", json_integer(sysconf(_SC_PAGESIZE)));
	json_object_set_new(h, "clk_tck", json_integer(sysconf(_SC_CLK_TCK)));
	set_sysctl_int(h, root, "vm.dirty_ratio", "/proc/sys/vm/dirty_ratio");
	set_sysctl_int(h, root, "vm.dirty_background_ratio", "/proc/sys/vm/dirty_background_ratio");
	set_sysctl_int(h, root, "vm.dirty_bytes", "/proc/sys/vm/dirty_bytes");
	set_sysctl_int(h, root, "vm.dirty_background_bytes", "/proc/sys/vm/dirty_background_bytes");
	set_sysctl_int(h, root, "kernel.yama.ptrace_scope", "/proc/sys/kernel/yama/ptrace_scope");
	char *st = gp_slurp(root, "/proc/stat", NULL);
	if (st) {
		const char *b = strstr(st, "\nbtime ");
		uint64_t btime;
		if (b && gp_parse_u64(b + 7, &btime, NULL))
			json_object_set_new(h, "boot_time", json_integer((json_int_t)btime));
		free(st);
	}
	return h;
}

/* Format 4 (doc/result-format.md, "vm"): of vmstat's ~190 counters and
 * meminfo's ~55 lines, 14 and 6 moved between two samples a second apart
 * on an idle machine (2026-12-05), and the whole object was 5.8 KB of a
 * 200-thread sample's 16 KB once its threads were deltas. */
json_t *gp_sys_read_delta(struct gp_sys_reader *r, struct gp_sys_compact *c, bool whole)
{
	json_t *vm = gp_sys_read(r, c);
	json_t *last = r->last;
	r->last = json_incref(vm);
	const char *part;
	json_t *now;
	json_object_foreach(last, part, now)
		if (!json_object_get(vm, part))
			whole = true; /* a part unreadable now: the base would keep it */
	if (whole || !last || !vm) {
		json_decref(last);
		return vm;
	}
	json_t *d = json_object();
	json_object_set_new(d, "delta", json_integer(1));
	json_object_foreach(vm, part, now) {
		json_t *was = json_object_get(last, part), *moved = json_object();
		const char *k;
		json_t *v;
		json_object_foreach(now, k, v)
			if (!json_equal(v, json_object_get(was, k)))
				json_object_set(moved, k, v);
		json_object_set_new(d, part, moved);
	}
	json_decref(last);
	json_decref(vm);
	return d;
}
