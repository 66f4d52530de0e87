/* Goroutines of a live Go process; see goroutines.h.
 *
 * What is relied on, from the Go runtime's source (go1.19.8 as installed
 * here, /usr/lib/go-1.19/src/runtime; the same names hold from go1.12 to
 * go1.23):
 *   - proc.go: `allgs []*g`, every g ever made, dead ones included (a
 *     slice: pointer, length, capacity; appended under allglock, so a read
 *     without the lock sees an older length, never a longer one);
 *   - runtime2.go `type g struct`: `stack` (lo, hi), `sched` (a gobuf:
 *     sp, pc, bp saved when the goroutine parked: asm_amd64.s mcall),
 *     `atomicstatus` (_Gidle 0, _Grunnable 1, _Grunning 2, _Gsyscall 3,
 *     _Gwaiting 4, _Gdead 6, _Gcopystack 8, _Gpreempted 9, with _Gscan
 *     0x1000 or'ed in while the GC scans it; an atomic.Uint32 struct from
 *     go1.20, whose value is its first member), `goid`, `waitreason` (a
 *     uint8 index), `startpc` (the function the go statement started);
 *   - runtime2.go `waitReasonStrings`: an array of strings the
 *     waitreason indexes ("chan receive", "semacquire", from go1.20
 *     "sync.Mutex.Lock"), read from the target, so each Go version names
 *     its own reasons;
 *   - traceback.go isSystemGoroutine: the runtime's own goroutines are
 *     those started in package runtime (runtime.main excepted);
 *   - extern.go / the linker: runtime.buildVersion, a string ("go1.19.8").
 * The members' offsets are never assumed: they come from the DWARF of
 * the binary (DW_TAG_structure_type "runtime.g", "runtime.gobuf",
 * "runtime.stack"), each with its size checked, so another Go version or
 * architecture lays them out as it does.
 *
 * Everything read from the target is untrusted, as in pyframes.c:
 *   - every pointer is read with process_vm_readv (a bad one fails the
 *     read, never faults us);
 *   - every member offset is checked against the struct's DWARF size and
 *     our buffer when the layout is taken (layout_ok), and again where a
 *     field is copied (field());
 *   - allgs' length is bounded (GO_MAX_G), the waitReasonStrings count
 *     by the symbol's size and WAIT_MAX, each string's length by WAIT_LEN;
 *   - a goroutine's frame walk follows saved frame pointers (Go keeps
 *     them on amd64 and arm64) only upwards inside the goroutine's own
 *     stack [stack.lo, stack.hi): each step's frame strictly above the
 *     last, so no cycle, and at most FRAME_MAX frames.
 * Nothing is stopped: a parked goroutine's g does not change while it
 * waits; a running one may be read half-updated, and is only counted. */
#include "config.h"
#include "goroutines.h"
#include "keytab.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Bounds on what a target may make us read. */
#define GO_MAX_G (1u << 20)   /* goroutines listed (a server with a million is rare) */
#define GO_WALK_MAX 4096      /* fresh frame walks in one read (struct walked serves the rest) */
#define FRAME_MAX 48          /* frames walked in one goroutine */
#define WAIT_MAX 64           /* go1.19 has 27 wait reasons, go1.22 41 */
#define WAIT_LEN 40           /* the longest is 27 characters */
#define G_BUF 2048            /* runtime.g is 440 bytes in go1.19 on amd64 */
#define GROUPS_MAX 12
#define GROUPS_SEEN 256      /* distinct groups told apart */
#define G_CHUNK 4096          /* g pointers read at once */

#define G_SCAN 0x1000u
enum { G_IDLE = 0, G_RUNNABLE = 1, G_RUNNING = 2, G_SYSCALL = 3, G_WAITING = 4, G_DEAD = 6,
       G_COPYSTACK = 8, G_PREEMPTED = 9 };

struct field {
	uint64_t off, size;
	bool ok;
};

struct golayout {
	uint64_t g_size;
	struct field status, goid, waitreason, startpc, sched, stack;
	struct field sched_sp, sched_pc, sched_bp; /* within gobuf */
	struct field stack_lo, stack_hi;           /* within stack */
};

struct gp_go {
	int pid;
	bool looked;              /* the modules were searched since the last change */
	bool is_go;               /* a Go module was found */
	Dwfl_Module *mod;
	char *module;             /* its path */
	uint64_t mod_low;         /* its start, to find it again after a refresh */
	char error[96];           /* why its goroutines are not read, "" when they are */
	char version[32];
	uint64_t allgs, wrs, wrs_size;
	struct golayout l;
	char wait[WAIT_MAX][WAIT_LEN];
	size_t nwait;
	struct gp_keytab names;   /* struct pcname: libdwfl's name of a pc, by pc */
	struct gp_keytab walked;  /* struct walked: what a walk found, by walk_key */
	struct gp_gogroup top[GROUPS_MAX]; /* the last read's largest groups */
	char why[96];             /* the last read's error, when it says a number */
};

/* Goroutines of one start function parked at one pc with one wait
 * reason and one stack depth (stack.hi - the saved frame pointer) have
 * the same frames in all but a freak case (a recursion that ends at the
 * same depth): one walk serves them all -- 100 000 goroutines of two
 * kinds read in 75 ms, not 1 s of walks.  A collision names the wrong
 * frame, nothing worse. */
struct walked {
	uint64_t key;
	char at[GP_GO_NAME];
	char wait[GP_GO_WAIT];   /* its sync call's name (gp_go_sync_wait), "" none */
};

/* dwfl_module_addrname walks the module's symbols at each call (~25 us
 * for a Go binary's 10 000 on the 2-CPU test VM: 135 ms for a snapshot
 * of 1000 goroutines); goroutines share a few pcs, so the names are
 * kept, at most NAMES_MAX (then dropped all: a clear, as pyframes.c's
 * code cache). */
#define NAMES_MAX 16384
struct pcname {
	uint64_t pc;
	char name[GP_GO_NAME];   /* "" no symbol */
};

static int rd(const struct gp_go *go, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return -1;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(go->pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : -1;
}

/* off + width <= size, without overflow. */
static bool fits(uint64_t off, uint64_t width, uint64_t size)
{
	return off <= size && width <= size - off;
}

static bool field(const unsigned char *buf, size_t len, struct field f, void *out, size_t width)
{
	if (!f.ok || f.size != width || !fits(f.off, width, len))
		return false;
	memcpy(out, buf + f.off, width);
	return true;
}

struct gp_go *gp_go_open(int pid)
{
	struct gp_go *go = calloc(1, sizeof *go);
	if (go) {
		go->pid = pid;
		gp_keytab_init(&go->names, sizeof(struct pcname));
		gp_keytab_init(&go->walked, sizeof(struct walked));
	}
	return go;
}

static void forget(struct gp_go *go)
{
	int pid = go->pid;
	free(go->module);
	gp_keytab_free(&go->names);
	gp_keytab_free(&go->walked);
	memset(go, 0, sizeof *go);
	go->pid = pid;
	gp_keytab_init(&go->names, sizeof(struct pcname));
	gp_keytab_init(&go->walked, sizeof(struct walked));
}

void gp_go_close(struct gp_go *go)
{
	if (!go)
		return;
	forget(go);
	gp_keytab_free(&go->names);
	gp_keytab_free(&go->walked);
	free(go);
}

/* ---- finding the runtime ------------------------------------------------ */

/* A Go binary keeps these sections even when stripped: the linker's
 * buildinfo for `go version -m` (cmd/link since go1.13), and the build
 * id note (ELF since go1.5). */
static bool go_sections(Elf *elf)
{
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name))
		    && (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".note.go.buildid")))
			return true;
	}
	return false;
}

/* runtime.allgs, runtime.waitReasonStrings (with its size) and
 * runtime.buildVersion from the module's symbol table. */
static bool find_syms(Dwfl_Module *mod, uint64_t *allgs, uint64_t *wrs, uint64_t *wrs_size,
		      uint64_t *version)
{
	*allgs = *wrs = *wrs_size = *version = 0;
	int n = dwfl_module_getsymtab(mod);
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || strncmp(name, "runtime.", 8))
			continue;
		if (!strcmp(name + 8, "allgs"))
			*allgs = addr;
		else if (!strcmp(name + 8, "waitReasonStrings")) {
			*wrs = addr;
			*wrs_size = sym.st_size;
		} else if (!strcmp(name + 8, "buildVersion"))
			*version = addr;
	}
	return *allgs != 0;
}

/* A struct member's offset and its type's size. */
static struct field member(Dwarf_Die *st, const char *name)
{
	struct field f = { 0, 0, false };
	Dwarf_Die m, type;
	if (dwarf_child(st, &m) != 0)
		return f;
	do {
		if (dwarf_tag(&m) != DW_TAG_member || !dwarf_diename(&m) || strcmp(dwarf_diename(&m), name))
			continue;
		Dwarf_Attribute at;
		Dwarf_Word off, size;
		if (!dwarf_attr(&m, DW_AT_data_member_location, &at) || dwarf_formudata(&at, &off) != 0
		    || !dwarf_attr_integrate(&m, DW_AT_type, &at) || !dwarf_formref_die(&at, &type)
		    || dwarf_aggregate_size(&type, &size) != 0)
			return f;
		f.off = off;
		f.size = size;
		f.ok = true;
		return f;
	} while (dwarf_siblingof(&m, &m) == 0);
	return f;
}

/* runtime.g, runtime.gobuf and runtime.stack, among the top-level DIEs of
 * the binary's units (Go's linker puts type DIEs there). */
static bool find_types(Dwarf *dw, Dwarf_Die *g, Dwarf_Die *gobuf, Dwarf_Die *stk)
{
	bool fg = false, fb = false, fs = false;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (!(fg && fb && fs) && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				if (dwarf_tag(&d) != DW_TAG_structure_type || !dwarf_diename(&d))
					continue;
				const char *n = dwarf_diename(&d);
				if (!fg && !strcmp(n, "runtime.g"))
					*g = d, fg = true;
				else if (!fb && !strcmp(n, "runtime.gobuf"))
					*gobuf = d, fb = true;
				else if (!fs && !strcmp(n, "runtime.stack"))
					*stk = d, fs = true;
			} while (dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
	return fg;
}

/* Every member we read lies inside runtime.g as DWARF sizes it, and the
 * struct inside our buffer; the scalar members have the sizes we copy. */
static bool layout_ok(const struct golayout *l, char *why, size_t cap)
{
	if (!l->g_size || l->g_size > G_BUF) {
		snprintf(why, cap, "runtime.g of %llu bytes", (unsigned long long)l->g_size);
		return false;
	}
	const struct { const struct field *f; uint64_t width; const char *name; } need[] = {
		{ &l->status, 4, "atomicstatus" }, { &l->goid, 8, "goid" },
		{ &l->waitreason, 1, "waitreason" }, { &l->startpc, 8, "startpc" },
	};
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		const struct field *f = need[i].f;
		if (!f->ok || f->size != need[i].width || !fits(f->off, f->size, l->g_size)) {
			snprintf(why, cap, "runtime.g.%s not as expected", need[i].name);
			return false;
		}
	}
	return true;
}

/* The frame walk's members: optional (no walk without them). */
static void walk_layout(struct golayout *l, Dwarf_Die *gobuf, Dwarf_Die *stk, bool fb, bool fs)
{
	struct field *inner[] = { &l->sched_sp, &l->sched_pc, &l->sched_bp, &l->stack_lo, &l->stack_hi };
	if (fb) {
		l->sched_sp = member(gobuf, "sp");
		l->sched_pc = member(gobuf, "pc");
		l->sched_bp = member(gobuf, "bp");
	}
	if (fs) {
		l->stack_lo = member(stk, "lo");
		l->stack_hi = member(stk, "hi");
	}
	for (size_t i = 0; i < sizeof inner / sizeof inner[0]; i++) {
		const struct field *outer = i < 3 ? &l->sched : &l->stack;
		struct field *f = inner[i];
		if (!f->ok || !outer->ok || f->size != 8 || !fits(f->off, 8, outer->size)
		    || !fits(outer->off + f->off, 8, l->g_size)) {
			f->ok = false;
			continue;
		}
		f->off += outer->off; /* relative to the g from here on */
	}
}

static bool take_layout(struct gp_go *go)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(go->mod, &bias);
	Dwarf_Die g, gobuf, stk;
	memset(&gobuf, 0, sizeof gobuf);
	memset(&stk, 0, sizeof stk);
	if (!dw) {
		snprintf(go->error, sizeof go->error, "no DWARF: stripped, or linked with -ldflags=-w");
		return false;
	}
	if (!find_types(dw, &g, &gobuf, &stk)) {
		snprintf(go->error, sizeof go->error, "no runtime.g in its DWARF");
		return false;
	}
	struct golayout *l = &go->l;
	Dwarf_Word size = 0;
	l->g_size = dwarf_aggregate_size(&g, &size) == 0 ? size : 0;
	l->status = member(&g, "atomicstatus");
	if (l->status.ok && l->status.size != 4)
		l->status.ok = false; /* go1.20's atomic.Uint32 is {noCopy, value}: 4 bytes too */
	l->goid = member(&g, "goid");
	l->waitreason = member(&g, "waitreason");
	l->startpc = member(&g, "startpc");
	l->sched = member(&g, "sched");
	l->stack = member(&g, "stack");
	walk_layout(l, &gobuf, &stk, dwarf_diename(&gobuf) != NULL, dwarf_diename(&stk) != NULL);
	return layout_ok(l, go->error, sizeof go->error);
}

/* The wait reasons' names, from the target (a Go string is {ptr, len}). */
static void read_wait_reasons(struct gp_go *go)
{
	go->nwait = 0;
	size_t n = go->wrs_size / 16;
	for (size_t i = 0; i < n && i < WAIT_MAX; i++) {
		uint64_t s[2];
		char *dst = go->wait[i];
		dst[0] = 0;
		if (rd(go, go->wrs + 16 * i, s, sizeof s) == 0 && s[1] < WAIT_LEN
		    && (s[1] == 0 || rd(go, s[0], dst, (size_t)s[1]) == 0))
			dst[s[1]] = 0;
		go->nwait = i + 1;
	}
}

static void read_version(struct gp_go *go, uint64_t addr)
{
	uint64_t s[2];
	char buf[sizeof go->version];
	go->version[0] = 0;
	if (addr && rd(go, addr, s, sizeof s) == 0 && s[1] < sizeof buf && rd(go, s[0], buf, (size_t)s[1]) == 0) {
		buf[s[1]] = 0;
		for (size_t i = 0; i < s[1]; i++)
			if (buf[i] < 0x21 || buf[i] > 0x7e)
				return;
		memcpy(go->version, buf, s[1] + 1);
	}
}

struct find_arg {
	struct gp_go *go;
	bool again;               /* looking for the module found before */
};

static int find_cb(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)ud;
	struct find_arg *fa = arg;
	struct gp_go *go = fa->go;
	if (fa->again) {
		if (start == go->mod_low && name && go->module && !strcmp(name, go->module)) {
			go->mod = mod;
			return DWARF_CB_ABORT;
		}
		return DWARF_CB_OK;
	}
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	/* The section headers first: a C++ library's symbol table can hold
	 * half a million names, and only a Go module is worth reading. */
	if (!go_sections(elf))
		return DWARF_CB_OK;
	uint64_t allgs, wrs, wrs_size, version;
	bool syms = find_syms(mod, &allgs, &wrs, &wrs_size, &version);
	go->is_go = true;
	go->mod = mod;
	go->module = strdup(name ? name : "");
	go->mod_low = start;
	if (!syms) {
		snprintf(go->error, sizeof go->error, "no symbols: stripped, or linked with -ldflags=-s");
		return DWARF_CB_ABORT;
	}
	go->allgs = allgs;
	go->wrs = wrs;
	go->wrs_size = wrs_size;
	read_version(go, version);
	if (take_layout(go))
		read_wait_reasons(go);
	return DWARF_CB_ABORT;
}

void gp_go_refresh(struct gp_go *go, Dwfl *dwfl)
{
	if (!go || !dwfl)
		return;
	if (go->looked && go->is_go) {
		struct find_arg fa = { go, true };
		go->mod = NULL;
		dwfl_getmodules(dwfl, find_cb, &fa, 0);
		if (go->mod)
			return;
		forget(go); /* its module is gone (an exec): look again */
	}
	if (go->looked && !go->is_go)
		return; /* not Go: a process does not become Go without an exec */
	struct find_arg fa = { go, false };
	dwfl_getmodules(dwfl, find_cb, &fa, 0);
	go->looked = true;
}

/* ---- groups ------------------------------------------------------------------ */

/* Goroutines in groups as they are read: the distinct groups (at most
 * GROUPS_SEEN, found by a hash of their strings, so a million goroutines
 * cost a million lookups, not a quadratic search), and how many fell
 * outside them. */
struct groups {
	struct gp_goraw g[GROUPS_SEEN];
	size_t n[GROUPS_SEEN];
	size_t ng, over;
	struct gp_keytab idx;     /* struct groupidx, by hash */
};

struct groupidx {
	uint64_t key;
	size_t k;
};

static bool same(const struct gp_goraw *a, const struct gp_goraw *b)
{
	return !strcmp(a->start, b->start) && !strcmp(a->at, b->at) && !strcmp(a->wait, b->wait);
}

/* FNV-1a over the three strings, each with its terminator. */
static uint64_t group_hash(const struct gp_goraw *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *parts[] = { r->start, r->at, r->wait };
	for (size_t i = 0; i < 3; i++)
		for (const char *c = parts[i];; c++) {
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
			if (!*c)
				break;
		}
	return h ? h : 1;
}

static struct groups *groups_new(void)
{
	struct groups *a = calloc(1, sizeof *a);
	if (a)
		gp_keytab_init(&a->idx, sizeof(struct groupidx));
	return a;
}

static void groups_free(struct groups *a)
{
	if (a)
		gp_keytab_free(&a->idx);
	free(a);
}

static void groups_add(struct groups *a, const struct gp_goraw *r)
{
	uint64_t h = group_hash(r);
	struct groupidx *e = gp_keytab_find(&a->idx, h);
	bool made;
	if (!e && a->ng < GROUPS_SEEN && (e = gp_keytab_put(&a->idx, h, &made))) {
		e->k = a->ng++;
		a->g[e->k] = *r;
	}
	if (!e || !same(&a->g[e->k], r)) {
		a->over++; /* beyond the bound (the table stays small), or a hash collision */
		return;
	}
	a->n[e->k]++;
}

struct ranked {
	size_t n, k;
};

static int by_count(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;
	return (a->n < b->n) - (a->n > b->n);
}

/* The largest max groups into out, largest first; the rest, and those
 * over, in *more.  Their count. */
static size_t groups_top(const struct groups *a, size_t max, struct gp_gogroup *out, size_t *more)
{
	struct ranked order[GROUPS_SEEN];
	for (size_t k = 0; k < a->ng; k++)
		order[k] = (struct ranked){ a->n[k], k };
	qsort(order, a->ng, sizeof order[0], by_count);
	*more = a->over;
	size_t k = 0;
	for (size_t i = 0; i < a->ng; i++) {
		size_t n = order[i].n;
		if (i >= max) {
			*more += n;
			continue;
		}
		out[k++] = (struct gp_gogroup){ a->g[order[i].k], n };
	}
	return k;
}

/* ---- reading the goroutines --------------------------------------------- */

static bool name_of(struct gp_go *go, uint64_t pc, char *buf, size_t cap)
{
	if (!pc)
		return false;
	if (go->names.n >= NAMES_MAX)
		gp_keytab_reset(&go->names);
	bool made;
	struct pcname *e = gp_keytab_put(&go->names, pc, &made);
	if (!e || made) {
		const char *n = dwfl_module_addrname(go->mod, pc);
		if (!e) {
			snprintf(buf, cap, "%s", n ? n : "");
			return n != NULL;
		}
		snprintf(e->name, sizeof e->name, "%s", n ? n : "");
	}
	snprintf(buf, cap, "%s", e->name);
	return e->name[0] != 0;
}

/* Where a parked goroutine waits: its frames from the pc and frame
 * pointer it saved when it parked, up its own stack. */
/* The frames from pc and frame pointer bp up the stack [lo, hi), into
 * names (fr points at each); how many. */
static size_t walk_frames(struct gp_go *go, uint64_t pc, uint64_t bp, uint64_t lo, uint64_t hi,
			  char (*names)[GP_GO_NAME], const char **fr)
{
	size_t n = 0;
	while (n < FRAME_MAX) {
		if (!name_of(go, n ? pc - 1 : pc, names[n], sizeof names[n]))
			break;
		fr[n] = names[n];
		n++;
		uint64_t up[2]; /* the caller's frame pointer, the return address */
		if (!bp || bp < lo || !fits(bp - lo, sizeof up, hi - lo) || rd(go, bp, up, sizeof up) < 0)
			break;
		if (up[0] <= bp) /* frames only go up the stack: no cycle */
			break;
		bp = up[0];
		pc = up[1];
	}
	return n;
}

static uint64_t walk_key(uint64_t startpc, uint64_t pc, uint64_t depth, uint8_t wr)
{
	uint64_t k = startpc * 0x9E3779B97F4A7C15ull ^ pc * 0xC2B2AE3D27D4EB4Full
		     ^ depth * 0x165667B19E3779F9ull ^ wr;
	return k ? k : 1;
}

/* Where a parked goroutine waits: its frames from the pc and frame
 * pointer it saved when it parked, up its own stack; a walk made for a
 * goroutine like it when there was one (struct walked), a new walk only
 * when may_walk.  True when it walked. */
static bool walk_at(struct gp_go *go, const unsigned char *gb, uint64_t startpc, uint8_t wr,
		    bool may_walk, struct gp_goraw *r)
{
	const struct golayout *l = &go->l;
	uint64_t pc, bp, lo, hi;
	if (!field(gb, G_BUF, l->sched_pc, &pc, 8) || !field(gb, G_BUF, l->sched_bp, &bp, 8)
	    || !field(gb, G_BUF, l->stack_lo, &lo, 8) || !field(gb, G_BUF, l->stack_hi, &hi, 8))
		return false;
	uint64_t key = walk_key(startpc, pc, hi - bp, wr);
	struct walked *w = gp_keytab_find(&go->walked, key);
	bool fresh = !w && may_walk;
	if (fresh) {
		char names[FRAME_MAX][GP_GO_NAME];
		const char *fr[FRAME_MAX];
		size_t n = walk_frames(go, pc, bp, lo, hi, names, fr);
		bool made;
		if (go->walked.n >= NAMES_MAX)
			gp_keytab_reset(&go->walked);
		w = gp_keytab_put(&go->walked, key, &made);
		if (!w)
			return true;
		const char *at = gp_go_pick_at(fr, n), *sw = gp_go_sync_wait(fr, n);
		snprintf(w->at, sizeof w->at, "%s", at ? at : "");
		snprintf(w->wait, sizeof w->wait, "%s", sw ? sw : "");
	}
	if (!w)
		return false;
	snprintf(r->at, sizeof r->at, "%s", w->at);
	if (w->wait[0] && !strcmp(r->wait, "semacquire"))
		snprintf(r->wait, sizeof r->wait, "%s", w->wait);
	return fresh;
}

static const char *status_words(uint32_t st)
{
	switch (st) {
	case G_RUNNABLE: return "runnable";
	case G_RUNNING: return "running";
	case G_SYSCALL: return "syscall";
	case G_COPYSTACK: return "running"; /* its stack grows: it ran */
	case G_PREEMPTED: return "preempted";
	default: return NULL;
	}
}

/* One g: false when it is not a live goroutine (dead, idle, unreadable).
 * *walks counts the fresh frame walks (at most GO_WALK_MAX a read). */
static bool read_g(struct gp_go *go, uint64_t gaddr, size_t *walks, struct gp_goraw *r)
{
	unsigned char gb[G_BUF];
	const struct golayout *l = &go->l;
	uint32_t st;
	uint8_t wr;
	uint64_t startpc;
	memset(r, 0, sizeof *r);
	if (rd(go, gaddr, gb, (size_t)l->g_size) < 0 || !field(gb, l->g_size, l->status, &st, 4)
	    || !field(gb, l->g_size, l->waitreason, &wr, 1) || !field(gb, l->g_size, l->startpc, &startpc, 8))
		return false;
	st &= ~G_SCAN;
	if (st == G_DEAD || st == G_IDLE)
		return false;
	if (!name_of(go, startpc, r->start, sizeof r->start))
		snprintf(r->start, sizeof r->start, "0x%llx", (unsigned long long)startpc);
	const char *w = status_words(st);
	if (st == G_WAITING)
		w = wr < go->nwait && go->wait[wr][0] ? go->wait[wr] : "waiting";
	snprintf(r->wait, sizeof r->wait, "%s", w ? w : "unknown state");
	if ((st == G_WAITING || st == G_PREEMPTED)
	    && walk_at(go, gb, startpc, st == G_WAITING ? wr : 0xff, *walks < GO_WALK_MAX, r))
		(*walks)++;
	return true;
}

bool gp_go_read(struct gp_go *go, struct gp_goinfo *gi)
{
	if (!go || !go->is_go || !go->mod)
		return false;
	*gi = (struct gp_goinfo){ .version = go->version[0] ? go->version : NULL, .module = go->module,
				  .error = go->error[0] ? go->error : NULL };
	if (go->error[0])
		return true;
	uint64_t sl[2]; /* allgs: pointer, length */
	if (rd(go, go->allgs, sl, sizeof sl) < 0) {
		gi->error = "runtime.allgs unreadable";
		return true;
	}
	if (sl[1] > GO_MAX_G) {
		snprintf(go->why, sizeof go->why, "runtime.allgs holds %llu goroutines, more than %u: not read",
			 (unsigned long long)sl[1], GO_MAX_G);
		gi->error = go->why;
		return true;
	}
	struct groups *acc = groups_new();
	if (!acc) {
		gi->error = "out of memory";
		return true;
	}
	/* The g pointers a chunk at a time: a bounded buffer whatever
	 * allgs' length (a slice header's length is the target's word). */
	size_t n = (size_t)sl[1], live = 0, sys = 0, walked = 0;
	uint64_t gp[G_CHUNK];
	for (size_t i = 0; i < n; i += G_CHUNK) {
		size_t c = n - i < G_CHUNK ? n - i : G_CHUNK;
		if (rd(go, sl[0] + i * sizeof gp[0], gp, c * sizeof gp[0]) < 0) {
			gi->error = "runtime.allgs unreadable";
			break;
		}
		for (size_t k = 0; k < c; k++) {
			struct gp_goraw r;
			if (!read_g(go, gp[k], &walked, &r))
				continue;
			if (gp_go_is_system(r.start)) {
				sys++;
				continue;
			}
			live++;
			groups_add(acc, &r);
		}
	}
	gi->counted = true;
	gi->n = live;
	gi->system = sys;
	gi->ngroups = groups_top(acc, GROUPS_MAX, go->top, &gi->more);
	gi->groups = go->top;
	groups_free(acc);
	return true;
}

/* ---- pure parts ------------------------------------------------------------ */

bool gp_go_is_system(const char *start)
{
	return !strncmp(start, "runtime.", 8) && strcmp(start, "runtime.main") != 0;
}

/* The program's own code: package main, or an import path whose first
 * element has a dot (the standard library's never do: "net/http"). */
static bool own_code(const char *fn)
{
	if (!strncmp(fn, "main.", 5))
		return true;
	const char *slash = strchr(fn, '/'), *dot = strchr(fn, '.');
	return slash && dot && dot < slash;
}

static bool plumbing(const char *fn)
{
	return !strncmp(fn, "runtime.", 8) || !strncmp(fn, "sync.", 5) || !strncmp(fn, "sync/", 5)
	       || !strncmp(fn, "internal/", 9);
}

const char *gp_go_pick_at(const char *const *frames, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (own_code(frames[i]))
			return frames[i];
	for (size_t i = 0; i < n; i++)
		if (!plumbing(frames[i]))
			return frames[i];
	return NULL;
}

const char *gp_go_sync_wait(const char *const *frames, size_t n)
{
	/* go1.20 named these waits itself (runtime2.go waitReasonSyncMutexLock,
	 * waitReasonSyncRWMutexRLock, waitReasonSyncRWMutexLock; go1.22
	 * waitReasonSyncWaitGroupWait); before, all were "semacquire". */
	static const struct { const char *fn, *wait; } sync_fns[] = {
		{ "sync.(*Mutex).Lock", "sync.Mutex.Lock" },
		{ "sync.(*Mutex).lockSlow", "sync.Mutex.Lock" },
		{ "sync.(*RWMutex).RLock", "sync.RWMutex.RLock" },
		{ "sync.(*RWMutex).Lock", "sync.RWMutex.Lock" },
		{ "sync.(*WaitGroup).Wait", "sync.WaitGroup.Wait" },
	};
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof sync_fns / sizeof sync_fns[0]; k++)
			if (!strcmp(frames[i], sync_fns[k].fn))
				return sync_fns[k].wait;
	return NULL;
}

size_t gp_go_groups(const struct gp_goraw *g, size_t n, size_t max, struct gp_gogroup *out,
		    size_t *more)
{
	struct groups *a = groups_new();
	*more = 0;
	if (!a)
		return 0;
	for (size_t i = 0; i < n; i++)
		groups_add(a, &g[i]);
	size_t k = groups_top(a, max, out, more);
	groups_free(a);
	return k;
}
