/* dlopen for paths the user names (--lib): never blocks, never maps a
 * device.  The dynamic linker open(2)s the path as given, so a FIFO
 * hangs it forever and a character device is read from; only regular
 * files reach dlopen.  Names without a '/' go to the search path as
 * they are. */
#ifndef GP_DL_H
#define GP_DL_H

#include <stdbool.h>
#include <stddef.h>

void *gp_dlopen(const char *lib, int flags);
/* The reason of the last failed gp_dlopen (this thread): gp_dlopen's
 * own, else dlerror()'s. */
const char *gp_dlerror(void);

/* One entry of a table of entry points: the names to try, newest first
 * (a versioned name before the bare one: nvmlInit_v2, nvmlInit), and
 * where the address goes.  NULL-terminated names. */
struct gp_dl_sym {
	const char *const *names;
	void **slot;
	bool required;
};

/* Resolves every entry of t[0..n) in lib (dlsym), newest name first.
 * Sets *slot to NULL for a name not found.  Returns 0, or -1 when a
 * required entry is missing; *missing then names its first name. */
/* The names of one entry, newest first: GP_DL_NAMES("f_v2", "f"). */
#define GP_DL_NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })
int gp_dl_bind(void *lib, const struct gp_dl_sym *t, size_t n,
	       const char **missing);
/* Index of the name that bound in the last gp_dl_bind of entry e, or -1;
 * for callers whose ABI depends on the version (nvmlProcessInfo_t). */
int gp_dl_which(void *lib, const struct gp_dl_sym *e);

#endif
