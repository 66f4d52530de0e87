/* A process's executable mappings, to tell a pc in a file's code from one
 * in code that a JIT wrote (V8, the JVM, LuaJIT, .NET): issue 20 saw
 * node's JIT frames printed as `node+0x7ff29afc6d84`.  libdwfl's module
 * for a file spans from the file's first mapping to its last
 * (libdwfl/linux-proc-maps.c reports one range per file), and node maps
 * part of itself again near its code range (V8's remapped embedded
 * builtins), so every anonymous mapping in between, the JIT's code
 * space, falls inside node's module.  /proc/PID/maps says which memory
 * is anonymous. */
#ifndef GP_XMAPS_H
#define GP_XMAPS_H

#include "procfs.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gp_xmap {
	uint64_t lo, hi;          /* [lo, hi) */
	bool file;                /* backed by a file a symbolizer can read */
};

struct gp_xmaps {
	struct gp_xmap *m;        /* executable mappings, ascending */
	size_t n, cap;
};

/* One line of /proc/PID/maps: true for an executable mapping, with its
 * range and whether a file backs it (a path, or [vdso]; not an anonymous
 * mapping, [anon:NAME], [heap], [stack], nor a memfd, which JITs use for
 * double-mapped code). */
bool gp_maps_line_exec(const char *line, struct gp_xmap *out);

/* Reads /proc/PID/maps into x (replacing what it held); -1 with errno. */
int gp_xmaps_read(const struct gp_root *root, int pid, struct gp_xmaps *x);
void gp_xmaps_free(struct gp_xmaps *x);

/* True when pc lies in an executable mapping no file backs: JIT code. */
bool gp_xmaps_is_jit(const struct gp_xmaps *x, uint64_t pc);

#endif
