#include "config.h"
#include "procstat.h"
#include "syscalls.h"
#include "parse.h"

#include <string.h>

/* Skip n space-separated fields. */
static const char *skip_fields(const char *p, int n)
{
	while (n-- > 0) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return NULL;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	while (*p == ' ')
		p++;
	return (*p && *p != '\n') ? p : NULL;
}

/* The 64-bit fields of stat after ppid, by number (proc(5)); fields up to
 * starttime (22) are required, later ones optional. */
static const struct {
	int field;
	bool is_signed;
	size_t off;
} stat_fields[] = {
	{ 10, false, offsetof(struct gp_stat, minflt) },
	{ 12, false, offsetof(struct gp_stat, majflt) },
	{ 14, false, offsetof(struct gp_stat, utime) },
	{ 15, false, offsetof(struct gp_stat, stime) },
	{ 16, true, offsetof(struct gp_stat, cutime) },
	{ 17, true, offsetof(struct gp_stat, cstime) },
	{ 20, true, offsetof(struct gp_stat, num_threads) },
	{ 22, false, offsetof(struct gp_stat, starttime) },
	{ 24, true, offsetof(struct gp_stat, rss_pages) },
};

bool gp_parse_stat(const char *buf, struct gp_stat *st)
{
	memset(st, 0, sizeof *st);
	st->processor = -1;
	int64_t pid;
	const char *p;
	if (!gp_parse_i64(buf, &pid, &p) || pid <= 0 || pid > 0x7fffffff)
		return false;
	st->pid = (int)pid;
	const char *open = strchr(p, '(');
	const char *close = strrchr(buf, ')');
	if (!open || !close || close < open)
		return false;
	size_t n = (size_t)(close - open - 1);
	if (n >= sizeof st->comm)
		n = sizeof st->comm - 1;
	memcpy(st->comm, open + 1, n);
	st->comm[n] = '\0';
	p = close + 1;
	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return false;
	st->state = *p;                       /* field 3 */
	/* Walk fields 4..39 by number; stop quietly when the line ends. */
	const char *f = p;
	int field = 3;
	int64_t v;
	uint64_t u;
#define ADVANCE_TO(N) do { f = skip_fields(f, (N) - field); field = (N); if (!f) goto short_line; } while (0)
	ADVANCE_TO(4);
	if (!gp_parse_i64(f, &v, NULL)) return false;
	st->ppid = (int)v;
	for (size_t i = 0; i < sizeof stat_fields / sizeof stat_fields[0]; i++) {
		ADVANCE_TO(stat_fields[i].field);
		void *to = (char *)st + stat_fields[i].off;
		if (!(stat_fields[i].is_signed ? gp_parse_i64(f, to, NULL) : gp_parse_u64(f, to, NULL)))
			return false;
	}
	ADVANCE_TO(39);
	if (gp_parse_u64(f, &u, NULL))
		st->processor = (int)u;
	return true;
short_line:
	/* Fields up to starttime (22) are required; later ones optional. */
	return field > 22;
#undef ADVANCE_TO
}

bool gp_parse_syscall(const char *buf, struct gp_syscall *sc)
{
	memset(sc, 0, sizeof *sc);
	while (*buf == ' ')
		buf++;
	if (!strncmp(buf, "running", 7)) {
		sc->kind = GP_SC_RUNNING;
		return true;
	}
	const char *p;
	if (!gp_parse_i64(buf, &sc->nr, &p))
		return false;
	if (sc->nr == -1) {
		sc->kind = GP_SC_USER;
		return gp_parse_x64(p, &sc->sp, &p) && gp_parse_x64(p, &sc->pc, NULL);
	}
	if (sc->nr < 0)
		return false;
	sc->kind = GP_SC_IN;
	for (int i = 0; i < 6; i++)
		if (!gp_parse_x64(p, &sc->args[i], &p))
			return false;
	return gp_parse_x64(p, &sc->sp, &p) && gp_parse_x64(p, &sc->pc, NULL);
}

bool gp_syscall_continued(const struct gp_syscall *before, struct gp_syscall *now)
{
	if (now->kind != GP_SC_IN || before->kind != GP_SC_IN || now->sp != before->sp
	    || now->pc != before->pc || now->nr == before->nr)
		return false;
	const char *n = gp_syscall_name(now->nr);
	if (!n || strcmp(n, "restart_syscall"))
		return false;
	now->nr = before->nr;
	memcpy(now->args, before->args, sizeof now->args);
	return true;
}

struct ctxt_acc {
	uint64_t *vol, *invol;
	int found;
};

static int ctxt_kv(const char *k, size_t kl, const char *v, void *ctx)
{
	struct ctxt_acc *a = ctx;
	if (gp_key_is(k, kl, "voluntary_ctxt_switches") && gp_parse_u64(v, a->vol, NULL))
		a->found |= 1;
	else if (gp_key_is(k, kl, "nonvoluntary_ctxt_switches") && gp_parse_u64(v, a->invol, NULL))
		a->found |= 2;
	return a->found == 3;
}

bool gp_parse_status_ctxt(const char *buf, uint64_t *vol, uint64_t *invol)
{
	/* Both lines are at the end of status; scan from the first. */
	const char *start = strstr(buf, "\nvoluntary_ctxt_switches");
	struct ctxt_acc a = { vol, invol, 0 };
	*vol = *invol = 0;
	gp_kv_each(start ? start + 1 : buf, ctxt_kv, &a);
	return a.found == 3;
}

#define MEM_FIELD(status, json, field, bit) \
	{ status, json, offsetof(struct gp_status_mem, field), bit }
const struct gp_status_mem_field gp_status_mem_fields[GP_STATUS_MEM_NFIELDS] = {
	MEM_FIELD("RssAnon", "rss_anon", rss_anon, GP_HAVE_RSS_ANON),
	MEM_FIELD("RssFile", "rss_file", rss_file, GP_HAVE_RSS_FILE),
	MEM_FIELD("RssShmem", "rss_shmem", rss_shmem, GP_HAVE_RSS_SHMEM),
	MEM_FIELD("VmLck", "vm_lck", vm_lck, GP_HAVE_VM_LCK),
	MEM_FIELD("VmPin", "vm_pin", vm_pin, GP_HAVE_VM_PIN),
	MEM_FIELD("VmRSS", "vm_rss", vm_rss, GP_HAVE_VM_RSS),
	MEM_FIELD("VmHWM", "vm_hwm", vm_hwm, GP_HAVE_VM_HWM),
	MEM_FIELD("VmSize", "vm_size", vm_size, GP_HAVE_VM_SIZE),
};
#undef MEM_FIELD

static uint64_t *mem_slot(struct gp_status_mem *m, const struct gp_status_mem_field *f)
{
	return (uint64_t *)((char *)m + f->off);
}

uint64_t gp_status_mem_value(const struct gp_status_mem *m, const struct gp_status_mem_field *f)
{
	return *(const uint64_t *)((const char *)m + f->off);
}

static int mem_kv(const char *k, size_t kl, const char *v, void *ctx)
{
	struct gp_status_mem *m = ctx;
	for (size_t i = 0; i < GP_STATUS_MEM_NFIELDS; i++) {
		const struct gp_status_mem_field *f = &gp_status_mem_fields[i];
		if (gp_key_is(k, kl, f->status_key)) {
			if (gp_parse_mem_value(v, mem_slot(m, f)))
				m->have |= f->bit;
			return 0;
		}
	}
	if (gp_key_is(k, kl, "Threads")) {
		if (gp_parse_i64(v, &m->threads, NULL))
			m->have |= GP_HAVE_THREADS;
	} else if (gp_key_is(k, kl, "Uid")) {
		uint64_t u;
		if (gp_parse_u64(v, &u, NULL))
			m->uid = (unsigned)u;
	}
	return 0;
}

bool gp_parse_status_mem(const char *buf, struct gp_status_mem *m)
{
	memset(m, 0, sizeof *m);
	gp_kv_each(buf, mem_kv, m);
	return m->have != 0;
}

static int io_kv(const char *k, size_t kl, const char *v, void *ctx)
{
	struct { struct gp_io *io; int found; } *a = ctx;
	static const struct {
		const char *key;
		size_t off;
	} tab[] = {
		{ "rchar", offsetof(struct gp_io, rchar) },
		{ "wchar", offsetof(struct gp_io, wchar) },
		{ "syscr", offsetof(struct gp_io, syscr) },
		{ "syscw", offsetof(struct gp_io, syscw) },
		{ "read_bytes", offsetof(struct gp_io, read_bytes) },
		{ "write_bytes", offsetof(struct gp_io, write_bytes) },
		{ "cancelled_write_bytes", offsetof(struct gp_io, cancelled_write_bytes) },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (gp_key_is(k, kl, tab[i].key)
		    && gp_parse_u64(v, (uint64_t *)((char *)a->io + tab[i].off), NULL))
			a->found++;
	return 0;
}

bool gp_parse_io(const char *buf, struct gp_io *io)
{
	memset(io, 0, sizeof *io);
	struct { struct gp_io *io; int found; } a = { io, 0 };
	gp_kv_each(buf, io_kv, &a);
	return a.found > 0;
}

void gp_parse_wchan(const char *buf, char *out, unsigned cap)
{
	unsigned n = 0;
	while (buf[n] && buf[n] != '\n' && buf[n] != ' ' && n + 1 < cap)
		n++;
	memcpy(out, buf, n);
	out[n] = '\0';
	if (!strcmp(out, "0"))
		out[0] = '\0';
}

bool gp_parse_schedstat(const char *buf, uint64_t *run_ns, uint64_t *wait_ns,
			uint64_t *pcount)
{
	const char *p;
	return gp_parse_u64(buf, run_ns, &p) && gp_parse_u64(p, wait_ns, &p)
	       && gp_parse_u64(p, pcount, NULL);
}
