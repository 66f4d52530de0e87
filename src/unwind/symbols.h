/* Symbols, source lines and ELF facts of a target's modules, looked up
 * after every thread runs again (stacks.h: the unwind is the only work
 * done while a thread is stopped).
 *
 * A symbol is given only when the address lies inside the symbol's size:
 * the nearest preceding symbol of a stripped module (its .dynsym) is a
 * guess, and a wrong one for every internal function. */
#ifndef GP_SYMBOLS_H
#define GP_SYMBOLS_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

/* Demangles an Itanium C++ name with libstdc++'s __cxa_demangle, found by
 * dlopen at run time (gpuprobe has no C++ link dependency).  Returns a
 * malloc'd string, or NULL when name is not mangled or no demangler is
 * available. */
char *gp_demangle(const char *name);

/* One address of one module, symbolized. */
struct gp_sym {
	struct gp_sym *next;
	Dwfl_Module *mod;
	uint64_t addr;
	char *symbol, *file;  /* NULL: none */
	int line;
};

/* Symbolized addresses, per (module, address), for one libdwfl session. */
#define GP_SYM_BUCKETS 4096
struct gp_symcache {
	struct gp_sym *b[GP_SYM_BUCKETS];
};

/* addr (inside mod; a caller frame's already taken at pc-1) with its
 * source line when lines.  Cached; NULL when out of memory. */
const struct gp_sym *gp_sym_lookup(struct gp_symcache *c, Dwfl_Module *mod, uint64_t addr,
				   bool lines);
/* Empties the cache: a freed Dwfl_Module's address may be reused. */
void gp_sym_clear(struct gp_symcache *c);

/* DT_SONAME of an ELF file (malloc'd), or NULL. */
char *gp_elf_soname(Elf *elf);

/* The C runtime's own libraries (libc, ld.so, libstdc++, ...) and
 * CPython's: no source lines by default (symbols.c says why). */
bool gp_is_c_runtime(const char *soname);

/* How much mod says of itself: "dwarf", "symtab" (a symbol table),
 * "dynsym" (stripped: exported functions only), "none" (no ELF). */
const char *gp_module_debug(Dwfl_Module *mod);

/* mod's GNU build-id in hex into hex (at least 129 bytes), "" none. */
void gp_module_build_id(Dwfl_Module *mod, char *hex);

#endif
