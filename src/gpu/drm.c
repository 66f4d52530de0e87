/* DRM fdinfo of one process: see drm.h.  Moved from gpumem.c (issue 19,
 * item 5). */
#include "config.h"
#include "result.h"
#include "drm.h"
#include "grow.h"
#include "gpuact.h"
#include "satmath.h"
#include "parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Values                                                              */
/* ------------------------------------------------------------------ */

/* A value token ends at a blank or the end of the line: the spec forbids
 * whitespace inside keys and values (drm-usage-stats.rst, "File format
 * specification"). */
static size_t token_len(const char *s)
{
	size_t n = 0;
	while (s[n] && s[n] != '\n' && s[n] != ' ' && s[n] != '\t' &&
	       s[n] != '\r')
		n++;
	return n;
}

static bool rest_is_blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return *s == '\0' || *s == '\n';
}

enum unit_kind {
	U_COUNT,	/* no unit allowed: client id, capacity, cycles */
	U_BYTES,	/* drm-*-<region>: bytes, "KiB" or "MiB" */
	U_NS,		/* drm-engine-<e>: "ns" */
	U_HZ,		/* drm-maxfreq-<e>: "Hz", "KHz" or "MHz" */
	U_ANY,		/* unknown key: any unit we can name */
};

struct unit {
	const char *name;
	enum unit_kind kind;
	uint64_t mul;
};

/* drm-usage-stats.rst allows "KiB" and "MiB" for memory and "Hz|MHz|KHz"
 * for drm-maxfreq; "kB" and "GiB" are accepted too (the /proc habit, and
 * tomorrow's GPUs).  A number with a unit not listed is not parsed: its
 * meaning is unknown. */
static const struct unit units[] = {
	{ "B",   U_BYTES, 1 },
	{ "KiB", U_BYTES, 1ull << 10 },
	{ "kB",  U_BYTES, 1ull << 10 },
	{ "MiB", U_BYTES, 1ull << 20 },
	{ "GiB", U_BYTES, 1ull << 30 },
	{ "ns",  U_NS,    1 },
	{ "Hz",  U_HZ,    1 },
	{ "KHz", U_HZ,    1000 },
	{ "kHz", U_HZ,    1000 },
	{ "MHz", U_HZ,    1000000 },
	{ "GHz", U_HZ,    1000000000 },
};

static bool unit_mul(const char *u, size_t ulen, enum unit_kind kind,
		     uint64_t *mul)
{
	if (ulen == 0) {
		*mul = 1;	/* "Default unit shall be bytes" (and ns, Hz) */
		return true;
	}
	if (kind == U_COUNT)
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (kind != U_ANY && units[i].kind != kind)
			continue;
		if (gp_key_is(u, ulen, units[i].name)) {
			*mul = units[i].mul;
			return true;
		}
	}
	return false;
}

/* "<uint>[ <unit>]" to end of line, scaled to bytes/ns/Hz.  Refuses
 * overflow, junk after the unit, and anything over INT64_MAX: jansson
 * integers are signed 64-bit, and the JSON and the totals must agree. */
static bool parse_value(const char *val, enum unit_kind kind, uint64_t *out)
{
	const char *end;
	uint64_t v, mul;

	if (!gp_parse_u64(val, &v, &end))
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	size_t ulen = token_len(end);
	if (!unit_mul(end, ulen, kind, &mul) || !rest_is_blank(end + ulen))
		return false;
	if (v > (uint64_t)INT64_MAX / mul)
		return false;
	*out = v * mul;
	return true;
}

/* ------------------------------------------------------------------ */
/* DRM fdinfo: Documentation/gpu/drm-usage-stats.rst                   */
/* ------------------------------------------------------------------ */

/* Keys of the form drm-<what>-<name>.  Order matters: a longer prefix
 * comes before the shorter one it extends ("drm-engine-capacity-" before
 * "drm-engine-", "drm-total-cycles-" before "drm-total-"). */
struct prefix_rule {
	const char *prefix;
	const char *obj;	/* member of the client object */
	const char *field;	/* "memory": member of the region object */
	enum unit_kind kind;
	bool full_key;		/* name the entry by the whole key */
};

static const struct prefix_rule rules[] = {
	/* "drm-engine-capacity-<str>: <uint>": engines in the group */
	{ "drm-engine-capacity-", "engine_capacity", NULL, U_COUNT, false },
	/* "drm-engine-<str>: <uint> ns": busy time */
	{ "drm-engine-",          "engine_ns",       NULL, U_NS,    false },
	/* "drm-total-cycles-<str>": cycles elapsed, drm-cycles' clock */
	{ "drm-total-cycles-",    "total_cycles",    NULL, U_COUNT, false },
	{ "drm-cycles-",          "cycles",          NULL, U_COUNT, false },
	{ "drm-maxfreq-",         "maxfreq_hz",      NULL, U_HZ,    false },
	/* "drm-{total,shared,resident,purgeable,active}-<region>" */
	{ "drm-total-",           "memory", "total",     U_BYTES, false },
	{ "drm-resident-",        "memory", "resident",  U_BYTES, false },
	{ "drm-shared-",          "memory", "shared",    U_BYTES, false },
	{ "drm-purgeable-",       "memory", "purgeable", U_BYTES, false },
	{ "drm-active-",          "memory", "active",    U_BYTES, false },
	/* "drm-memory-<region>": the first spec's key, deprecated for
	 * drm-resident-<region>; amdgpu still writes it beside the new ones
	 * (amdgpu_fdinfo.c, "Legacy amdgpu keys") */
	{ "drm-memory-",          "legacy", NULL,        U_BYTES, true },
};

#define KEY_MAX 128
#define STR_MAX 256

struct parse_ctx {
	json_t *client;
	bool has_driver;
};

/* <str> values: driver names, PCI addresses, and client names, which the
 * kernel limits to printable ASCII (drm_file.c, DRM_IOCTL_SET_CLIENT_NAME).
 * Anything else is junk, and would not be valid JSON text either. */
static bool take_string(json_t *c, const char *jkey, const char *val)
{
	size_t n = token_len(val);

	if (n == 0 || n >= STR_MAX || !rest_is_blank(val + n))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)val[i] <= ' ' || (unsigned char)val[i] >= 0x7f)
			return false;
	return json_object_set_new(c, jkey, json_stringn(val, n)) == 0;
}

static void take_prefixed(json_t *c, const struct prefix_rule *rule,
			  const char *key, const char *val)
{
	const char *name = rule->full_key ? key : key + strlen(rule->prefix);
	uint64_t v;

	if (!*name || !parse_value(val, rule->kind, &v))
		return;
	json_t *obj = gp_json_child(c, rule->obj);
	if (obj && rule->field)
		obj = gp_json_child(obj, name);
	gp_json_set_u64(obj, rule->field ? rule->field : name, v);
}

/* Keys outside the spec are kept when numeric: amdgpu's
 * amd-memory-visible-vram, amd-evicted-vram, amd-requested-* (KiB) and
 * "pasid" (amdgpu_fdinfo.c; the pasid ties the client to its KFD
 * process), panfrost's drm-curfreq-<e> (Hz), panthor-*-memory, ...
 * fdinfo's own pos/flags/mnt_id/ino are not GPU facts. */
static void take_other(json_t *c, const char *key, const char *val)
{
	uint64_t v;

	if (!strchr(key, '-') && strcmp(key, "pasid") != 0)
		return;
	if (parse_value(val, U_ANY, &v))
		gp_json_set_u64(gp_json_child(c, "other"), key, v);
}

static void take_key(struct parse_ctx *ctx, const char *key, const char *val)
{
	json_t *c = ctx->client;
	uint64_t v;

	if (!strcmp(key, "drm-driver")) {
		if (take_string(c, "driver", val))
			ctx->has_driver = true;
		return;
	}
	if (!strcmp(key, "drm-pdev")) {
		take_string(c, "pdev", val);
		return;
	}
	if (!strcmp(key, "drm-client-name")) {
		take_string(c, "name", val);
		return;
	}
	if (!strcmp(key, "drm-client-id")) {
		if (parse_value(val, U_COUNT, &v))
			gp_json_set_u64(c, "client_id", v);
		return;
	}
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		if (!strncmp(key, rules[i].prefix, strlen(rules[i].prefix))) {
			take_prefixed(c, &rules[i], key, val);
			return;
		}
	}
	take_other(c, key, val);
}

static int fdinfo_kv(const char *key, size_t klen, const char *val, void *arg)
{
	char k[KEY_MAX];

	/* "Colon character (`:`) must be used to delimit keys and values":
	 * a line without one is not a key of the spec. */
	if (key[klen] != ':' || klen >= sizeof k)
		return 0;
	/* "Neither keys or values are allowed to contain whitespace": nor
	 * control bytes, which a JSON member name should not carry. */
	for (size_t i = 0; i < klen; i++)
		if ((unsigned char)key[i] <= ' ' || (unsigned char)key[i] >= 0x7f)
			return 0;
	memcpy(k, key, klen);
	k[klen] = '\0';
	take_key(arg, k, val);
	return 0;
}

json_t *gp_fdinfo_parse(const char *text)
{
	struct parse_ctx ctx = { .client = NULL, .has_driver = false };

	if (!text)
		return NULL;
	ctx.client = json_object();
	if (!ctx.client)
		return NULL;
	/* gp_kv_each skips any run of blanks and tabs after the colon:
	 * amdgpu writes "drm-memory-gtt: \t%llu KiB" (amdgpu_fdinfo.c). */
	gp_kv_each(text, fdinfo_kv, &ctx);
	/* "drm-driver" is the one mandatory key: without it, not DRM. */
	if (!ctx.has_driver) {
		json_decref(ctx.client);
		return NULL;
	}
	return ctx.client;
}

/* xe names its device memory "vram0", "vram1" (xe-drm-usage-stats.rst);
 * amdgpu says "vram".  Both are device memory. */
/* ------------------------------------------------------------------ */
/* The reader                                                          */
/* ------------------------------------------------------------------ */

/* One fd of the target, as the last sample left it. */
struct fd_slot {
	int fd;
	bool drm;
	char *link;	/* readlink of /proc/PID/fd/N; NULL when not a link
			 * (replay trees hold plain files) */
	int info_fd;	/* /proc/PID/fdinfo/N kept open for a DRM fd, or -1 */
};

struct gp_drm_reader {
	const struct gp_root *root;
	int pid;
	int pid_dirfd;		/* /proc/PID, held: a reused pid reads as gone */
	struct fd_slot *slots;	/* sorted by fd */
	size_t nslots;
	char *buf;
	size_t bufcap;
};

struct gp_drm_reader *gp_drm_reader_new(const struct gp_root *root, int pid)
{
	struct gp_drm_reader *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->root = root;
	r->pid = pid;
	r->pid_dirfd = -1;
	r->bufcap = 4096;	/* amdgpu's fdinfo is ~1 KiB, xe's ~1.5 KiB */
	r->buf = malloc(r->bufcap);
	if (!r->buf) {
		gp_drm_reader_free(r);
		return NULL;
	}
	return r;
}

static void slots_free(struct fd_slot *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i].info_fd >= 0)
			close(s[i].info_fd);
		free(s[i].link);
	}
	free(s);
}

void gp_drm_reader_free(struct gp_drm_reader *r)
{
	if (!r)
		return;
	slots_free(r->slots, r->nslots);
	if (r->pid_dirfd >= 0)
		close(r->pid_dirfd);
	free(r->buf);
	free(r);
}

/* Whole text of an open fdinfo (pread from 0 regenerates it), in r->buf,
 * grown when full.  NULL when it cannot be read (the fd closed since). */
static const char *read_text(struct gp_drm_reader *r, int fd)
{
	for (;;) {
		ssize_t n = gp_pread_all(fd, r->buf, r->bufcap);
		if (n < 0)
			return NULL;
		if ((size_t)n < r->bufcap - 1 || r->bufcap >= (1u << 20))
			return r->buf;
		char *nb = realloc(r->buf, r->bufcap * 2);
		if (!nb)
			return r->buf;	/* a truncated text still parses */
		r->buf = nb;
		r->bufcap *= 2;
	}
}

static bool name_to_fd(const char *name, int *fd)
{
	const char *end;
	uint64_t v;

	if (*name < '0' || *name > '9' || !gp_parse_u64(name, &v, &end) ||
	    *end || v > INT_MAX)
		return false;
	*fd = (int)v;
	return true;
}

static int slot_cmp(const void *a, const void *b)
{
	const struct fd_slot *x = a, *y = b;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static bool slot_push(struct fd_slot **s, size_t *n, size_t *cap, int fd,
		      int dirfd, const char *name)
{
	char link[4096];

	if (!gp_grow(s, cap, *n + 1, sizeof **s, 64))
		return false;
	struct fd_slot *e = &(*s)[(*n)++];
	e->fd = fd;
	e->drm = false;
	e->info_fd = -1;
	e->link = NULL;
	/* readlink only names the fd (d_path); unlike stat it never touches
	 * the file's filesystem, which may be the very thing that hangs. */
	ssize_t len = readlinkat(dirfd, name, link, sizeof link);
	if (len > 0 && (size_t)len < sizeof link)
		e->link = strndup(link, (size_t)len);
	return true;
}

/* The fd numbers of the target now, sorted; -1 when the fd directory
 * cannot be listed (process gone, no permission). */
static int list_fds(struct gp_drm_reader *r, struct fd_slot **out, size_t *n)
{
	size_t cap = 0;
	struct dirent *de;
	int fd;

	*out = NULL;
	*n = 0;
	int dfd = openat(r->pid_dirfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((de = readdir(dir))) {
		if (name_to_fd(de->d_name, &fd) &&
		    !slot_push(out, n, &cap, fd, dirfd(dir), de->d_name))
			break;
	}
	closedir(dir);
	/* No fds (a zombie leader's fd/ is empty): *out is NULL, and
	 * qsort(NULL, 0) is undefined (UBSan: nonnull argument). */
	if (*n)
		qsort(*out, *n, sizeof **out, slot_cmp);
	return 0;
}

/* Links the kernel gives sockets and pipes: never a DRM device. */
static bool link_not_drm(const char *link)
{
	return link && (!strncmp(link, "socket:[", 8) ||
			!strncmp(link, "pipe:[", 6));
}

/* Decides from the last sample whether fd s needs its fdinfo read: an fd
 * whose link is unchanged keeps its verdict, and a DRM fd its open
 * fdinfo.  Returns false for a known non-DRM fd. */
static bool slot_inherit(struct gp_drm_reader *r, struct fd_slot *s)
{
	struct fd_slot *old = r->nslots ? bsearch(s, r->slots, r->nslots,
						  sizeof *s, slot_cmp) : NULL;

	if (link_not_drm(s->link))
		return false;
	if (!old || !old->link || !s->link || strcmp(old->link, s->link))
		return true;
	if (!old->drm)
		return false;
	s->info_fd = old->info_fd;
	old->info_fd = -1;
	return true;
}

/* Reads fd s's fdinfo; the parsed client, or NULL (not DRM, or gone). */
static json_t *slot_read(struct gp_drm_reader *r, struct fd_slot *s)
{
	char path[32];

	if (s->info_fd < 0) {
		snprintf(path, sizeof path, "fdinfo/%d", s->fd);
		s->info_fd = openat(r->pid_dirfd, path,
				    O_RDONLY | O_CLOEXEC | O_NOCTTY);
	}
	const char *text = s->info_fd >= 0 ? read_text(r, s->info_fd) : NULL;
	json_t *client = text ? gp_fdinfo_parse(text) : NULL;

	if (!text) {
		/* Unreadable (closed in between, EACCES): no verdict, so
		 * the next sample asks again. */
		free(s->link);
		s->link = NULL;
	}
	s->drm = client != NULL;
	if (!client && s->info_fd >= 0) {
		close(s->info_fd);
		s->info_fd = -1;
	}
	return client;
}

/* Clients are one per struct drm_file: "drm-client-id ... used to
 * distinguish duplicated and shared file descriptors", unique per device
 * when drm-pdev is given (drm-usage-stats.rst, drm-client-id).  dup()ed
 * fds and fds passed over a socket show the same id and count once. */
static void client_key(const json_t *c, int fd, char *key, size_t cap)
{
	const char *pdev = json_string_value(json_object_get(c, "pdev"));
	json_t *id = json_object_get(c, "client_id");
	const char *drv = json_string_value(json_object_get(c, "driver"));

	if (json_is_integer(id))
		snprintf(key, cap, "%s/%s/id:%lld", drv ? drv : "",
			 pdev ? pdev : "", (long long)json_integer_value(id));
	else
		snprintf(key, cap, "%s/%s/fd:%d", drv ? drv : "",
			 pdev ? pdev : "", fd);
}

static void add_client(json_t *arr, json_t *byk, json_t *c, int fd,
		       struct gp_gpu_totals *tot)
{
	char key[STR_MAX * 2 + 64];
	json_t *prev;

	client_key(c, fd, key, sizeof key);
	prev = json_object_get(byk, key);
	if (prev) {
		json_array_append_new(json_object_get(prev, "fds"),
				      json_integer(fd));
		json_decref(c);
		return;
	}
	json_t *fds = json_array();
	json_array_append_new(fds, json_integer(fd));
	json_object_set_new(c, "fds", fds);
	json_object_set(byk, key, c);
	json_array_append_new(arr, c);
	gp_fdinfo_add_totals(c, tot);
	tot->drm_clients++;
}

static bool open_pid_dir(struct gp_drm_reader *r)
{
	char path[64];

	if (r->pid_dirfd >= 0)
		return true;
	snprintf(path, sizeof path, "/proc/%d", r->pid);
	r->pid_dirfd = gp_open(r->root, path, O_DIRECTORY);
	return r->pid_dirfd >= 0;
}

void gp_drm_read(struct gp_drm_reader *r, json_t *arr, struct gp_gpu_totals *tot)
{
	struct fd_slot *now;
	size_t n;
	json_t *byk;

	if (!open_pid_dir(r) || list_fds(r, &now, &n) < 0)
		return;
	byk = json_object();
	for (size_t i = 0; i < n; i++) {
		json_t *c = slot_inherit(r, &now[i]) ? slot_read(r, &now[i])
						     : NULL;
		if (c)
			add_client(arr, byk, c, now[i].fd, tot);
	}
	json_decref(byk);
	slots_free(r->slots, r->nslots);
	r->slots = now;
	r->nslots = n;
	tot->drm_seen = tot->drm_clients > 0;
}


/* ------------------------------------------------------------------ */
/* DRM engine time                                                     */
/* ------------------------------------------------------------------ */

/* Same identity as the clients' de-duplication (client_key): one drm_file per
 * driver/pdev/client-id (drm-usage-stats.rst, drm-client-id). */
static void eng_key(const json_t *c, const char *engine, char *key, size_t cap)
{
	const char *drv = json_string_value(json_object_get(c, "driver"));
	const char *pdev = json_string_value(json_object_get(c, "pdev"));
	json_t *id = json_object_get(c, "client_id");
	json_t *fds = json_object_get(c, "fds");

	if (json_is_integer(id))
		snprintf(key, cap, "%s/%s/id:%lld/%s", drv ? drv : "",
			 pdev ? pdev : "", (long long)json_integer_value(id),
			 engine);
	else
		snprintf(key, cap, "%s/%s/fd:%lld/%s", drv ? drv : "",
			 pdev ? pdev : "",
			 (long long)json_integer_value(json_array_get(fds, 0)),
			 engine);
}

/* Engine group totals of one read: name -> Δns summed over clients,
 * with the capacity (drm-engine-capacity-<e>: engines in the group;
 * "the default is one"). */
struct eng_sum {
	char name[32];
	uint64_t delta_ns;
	uint64_t capacity;
	bool both;		/* some client had it at both reads */
};

static struct eng_sum *eng_sum_slot(struct eng_sum *s, size_t *n, size_t cap,
				    const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	if (*n == cap)
		return NULL;
	struct eng_sum *e = &s[(*n)++];
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->capacity = 1;
	return e;
}

static const struct gp_drm_eng *eng_find(const struct gp_drm_eng *p, size_t n,
				       const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(p[i].key, key))
			return &p[i];
	return NULL;
}

/* Collects the engine counters of a "drm" array; with prev, sums the
 * deltas of clients present in both per engine.  Returns the new
 * counters (malloc'd, *nout). */
static struct gp_drm_eng *eng_collect(const json_t *drm, const struct gp_drm_eng *prev,
				    size_t nprev, struct eng_sum *sum,
				    size_t *nsum, size_t sumcap, size_t *nout,
				    uint64_t *total_ns, bool *amdgpu)
{
	size_t i, cap = 0;
	json_t *c;
	struct gp_drm_eng *out = NULL;

	*nout = 0;
	json_array_foreach(drm, i, c) {
		json_t *eng = json_object_get(c, "engine_ns");
		json_t *capo = json_object_get(c, "engine_capacity");
		const char *drv = json_string_value(json_object_get(c, "driver"));
		const char *e;
		json_t *v;

		if (drv && !strcmp(drv, "amdgpu"))
			*amdgpu = true;
		json_object_foreach(eng, e, v) {
			uint64_t ns, capn = 1;

			if (!json_is_integer(v) || json_integer_value(v) < 0)
				continue;
			ns = (uint64_t)json_integer_value(v);
			*total_ns = gp_sat_add(*total_ns, ns);
			if (*nout == cap) {
				size_t nc = cap ? cap * 2 : 16;
				void *nb = realloc(out, nc * sizeof *out);
				if (!nb)
					break;
				out = nb;
				cap = nc;
			}
			struct gp_drm_eng *o = &out[(*nout)++];
			eng_key(c, e, o->key, sizeof o->key);
			o->ns = ns;
			struct eng_sum *s = eng_sum_slot(sum, nsum, sumcap, e);
			if (!s)
				continue;
			if (gp_json_get_u64(capo, e, &capn) && capn > s->capacity)
				s->capacity = capn;
			const struct gp_drm_eng *p = prev ? eng_find(prev, nprev, o->key)
							: NULL;
			/* A counter that went back is a new client on a
			 * reused id: no delta. */
			if (p && ns >= p->ns) {
				s->delta_ns += ns - p->ns;
				s->both = true;
			}
		}
	}
	return out;
}

static bool eng_best(const struct eng_sum *sum, size_t n, double dt,
		     double *busy, char *engine, size_t cap)
{
	bool any = false;

	*busy = 0;
	if (cap)
		engine[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!sum[i].both || dt <= 0)
			continue;
		double pct = (double)sum[i].delta_ns / (dt * 1e9) /
			     (double)sum[i].capacity * 100.0;
		/* Engine time is accounted when a job completes (amdgpu:
		 * at fence signal), so a job that spans two reads lands
		 * in one: clamp, do not report 180%. */
		if (pct > 100.0)
			pct = 100.0;
		if (!any || pct > *busy) {
			*busy = pct;
			snprintf(engine, cap, "%s", sum[i].name);
		}
		any = true;
	}
	return any;
}

bool gp_drm_engine_busy(const json_t *prev, const json_t *cur, double dt,
			   double *busy_pct, char *engine, size_t cap)
{
	struct eng_sum sum[32];
	size_t nsum = 0, np = 0, nc = 0;
	uint64_t tot = 0;
	bool amd = false;
	struct gp_drm_eng *p = eng_collect(json_object_get(prev, "drm"), NULL, 0,
					 sum, &nsum, 32, &np, &tot, &amd);
	nsum = 0;
	struct gp_drm_eng *c = eng_collect(json_object_get(cur, "drm"), p, np,
					 sum, &nsum, 32, &nc, &tot, &amd);
	bool ok = eng_best(sum, nsum, dt, busy_pct, engine, cap);

	free(p);
	free(c);
	return ok;
}

/* amdgpu's drm-engine-<ip> is amdgpu_ctx_mgr_usage() (amdgpu_fdinfo.c,
 * amdgpu_show_fdinfo): the summed fence times of the jobs of the file's
 * amdgpu_ctx entities, i.e. work submitted through the DRM_AMDGPU_CS
 * ioctl and the GPU scheduler.  KFD compute queues (what HIP/ROCr uses:
 * user-mode AQL queues, doorbells rung from user space, mapped by the
 * hardware scheduler) create no amdgpu_ctx job and no fence, so HIP
 * kernels are not counted: an amdgpu client with a flat engine time says
 * nothing about compute.  (Checked against torvalds/linux
 * drivers/gpu/drm/amd/amdgpu/amdgpu_fdinfo.c and amdgpu_ctx.c; the
 * documented meaning of drm-engine-<e> is "time spent by the GPU engine
 * executing workloads belonging to this client",
 * Documentation/gpu/drm-usage-stats.rst.) */
void gp_drm_activity(const json_t *drm, int pid, bool live, bool have_prev, double dt,
		     struct gp_drm_engines *st, struct gp_gpu_activity *a)
{
	struct eng_sum sum[32];
	size_t nsum = 0, nnew = 0, i;
	bool amd = false;
	json_t *c;

	if (!json_is_array(drm) || json_array_size(drm) == 0) {
		snprintf(a->why_drm, sizeof a->why_drm,
			 "no DRM client in /proc/%d/fdinfo (no DRM fd%s)",
			 pid, live ? "" : " in the recorded tree");
		gp_drm_engines_free(st);
		return;
	}
	struct gp_drm_eng *now = eng_collect(drm, st->eng, st->n, sum, &nsum, 32,
					   &nnew, &a->engine_ns, &amd);
	a->engine_kfd_blind = amd;
	json_array_foreach(drm, i, c) {
		uint64_t ev;
		if (gp_json_get_u64(json_object_get(c, "other"), "amd-evicted-vram", &ev)) {
			a->have_drm_evicted = true;
			a->drm_evicted_vram_bytes += ev;	/* KiB scaled by gpumem */
		}
	}
	const char *w = "";
	if (nnew == 0)
		w = "DRM clients without drm-engine-* keys";
	else if (!have_prev || !st->eng)
		w = "first read: engine busy needs two";
	else if (!eng_best(sum, nsum, dt, &a->engine_busy_pct, a->engine,
			   sizeof a->engine))
		w = "no DRM client with engine time at both reads";
	else
		a->have_drm_engine = true;
	snprintf(a->why_drm, sizeof a->why_drm, "%s", w);
	free(st->eng);
	st->eng = now;
	st->n = nnew;
}

void gp_drm_engines_free(struct gp_drm_engines *st)
{
	free(st->eng);
	st->eng = NULL;
	st->n = 0;
}
