/* Symbols, source lines and ELF facts of a target's modules; see
 * symbols.h. */
#include "config.h"
#include "symbols.h"

#include <dlfcn.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- demangling through libstdc++, found at run time ---------------- */

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

char *gp_demangle(const char *name)
{
	static cxa_demangle_fn fn;
	static bool tried;
	if (!name || strncmp(name, "_Z", 2) != 0)
		return NULL;
	if (!tried) {
		tried = true;
		/* Already in the process (a sanitizer runtime, a C++ host)? */
		fn = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!fn) {
			void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
			if (h)
				fn = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
		}
	}
	if (!fn)
		return NULL;
	int status = -1;
	char *out = fn(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---- a cache of symbolized addresses -------------------------------- */

static unsigned sym_hash(Dwfl_Module *m, uint64_t a)
{
	uint64_t h = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull ^ a * 0xff51afd7ed558ccdull;
	return (unsigned)(h >> 40) % GP_SYM_BUCKETS;
}

const struct gp_sym *gp_sym_lookup(struct gp_symcache *c, Dwfl_Module *mod, uint64_t addr,
				   bool lines)
{
	unsigned h = sym_hash(mod, addr);
	for (struct gp_sym *e = c->b[h]; e; e = e->next)
		if (e->mod == mod && e->addr == addr)
			return e;
	struct gp_sym *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->mod = mod;
	e->addr = addr;
	GElf_Off off = 0;
	GElf_Sym sym;
	memset(&sym, 0, sizeof sym);
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	/* The nearest preceding symbol of a stripped module (its .dynsym) is
	 * a guess, and a wrong one for every internal function: take a
	 * symbol only when the address lies inside its size. */
	if (name && sym.st_size > 0 && off < sym.st_size) {
		char *d = gp_demangle(name);
		e->symbol = d ? d : strdup(name);
		/* "pthread_cond_wait@@GLIBC_2.3.2": the version is noise here. */
		char *at = e->symbol && !d ? strchr(e->symbol, '@') : NULL;
		if (at && at != e->symbol)
			*at = 0;
	}
	Dwfl_Line *l = lines ? dwfl_module_getsrc(mod, addr) : NULL;
	if (l) {
		int line = 0;
		const char *file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		if (file && line > 0) {
			e->file = strdup(file);
			e->line = line;
		}
	}
	e->next = c->b[h];
	c->b[h] = e;
	return e;
}

void gp_sym_clear(struct gp_symcache *c)
{
	for (size_t i = 0; i < GP_SYM_BUCKETS; i++) {
		struct gp_sym *e = c->b[i], *n;
		for (; e; e = n) {
			n = e->next;
			free(e->symbol);
			free(e->file);
			free(e);
		}
		c->b[i] = NULL;
	}
}

/* ---- ELF facts -------------------------------------------------------- */

char *gp_elf_soname(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			return NULL;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_SONAME) {
				const char *n = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				return n ? strdup(n) : NULL;
			}
		}
	}
	return NULL;
}

static bool elf_has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

/* The C runtime's own frames are named by their symbols; reading their
 * source lines means opening libc6-dbg's DWARF, whose compressed .debug_*
 * sections libdw inflates whole at dwarf_begin: 150 ms of a 230 ms
 * one-shot snapshot (perf, 33 threads, Debian 12, libc6-dbg installed),
 * against 120 ms for eu-stack without lines.  GP_STACKS_LINES_ALL reads
 * them too. */
bool gp_is_c_runtime(const char *soname)
{
	static const char *const pfx[] = { "libc.so", "ld-linux", "libm.so", "libpthread.so",
		"libstdc++.so", "libgcc_s.so", "libdl.so", "librt.so", "ld64.so",
		/* CPython's own C frames: see stacks.c, no_lines() */
		"libpython3", "python3", NULL };
	for (size_t i = 0; pfx[i]; i++)
		if (!strncmp(soname, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

const char *gp_module_debug(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (dwfl_module_getdwarf(mod, &bias))
		return "dwarf";
	if (elf && elf_has_symtab(elf))
		return "symtab";
	return elf ? "dynsym" : "none";
}

void gp_module_build_id(Dwfl_Module *mod, char *hex)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	hex[0] = 0;
	for (int i = 0; i < len && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
}
