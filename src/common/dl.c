#include "config.h"
#include "dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static __thread char dl_err[320];

void *gp_dlopen(const char *lib, int flags)
{
	dl_err[0] = '\0';
	struct stat st;
	if (lib && strchr(lib, '/') && stat(lib, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(dl_err, sizeof dl_err, "%s: not a regular file (a %s)", lib,
			 S_ISDIR(st.st_mode) ? "directory" : S_ISFIFO(st.st_mode) ? "FIFO"
			 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "device" : "special file");
		return NULL;
	}
	return dlopen(lib, flags);
}

const char *gp_dlerror(void)
{
	if (dl_err[0])
		return dl_err;
	const char *e = dlerror();
	return e ? e : "unknown dlopen error";
}

int gp_dl_which(void *lib, const struct gp_dl_sym *e)
{
	for (int i = 0; e->names[i]; i++)
		if (dlsym(lib, e->names[i]))
			return i;
	return -1;
}

int gp_dl_bind(void *lib, const struct gp_dl_sym *t, size_t n,
	       const char **missing)
{
	int rc = 0;

	if (missing)
		*missing = NULL;
	for (size_t i = 0; i < n; i++) {
		*t[i].slot = NULL;
		for (int k = 0; t[i].names[k] && !*t[i].slot; k++)
			*t[i].slot = dlsym(lib, t[i].names[k]);
		if (!*t[i].slot && t[i].required && rc == 0) {
			rc = -1;
			if (missing)
				*missing = t[i].names[0];
		}
	}
	return rc;
}
