#include "config.h"
#include "xmaps.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "lo-hi perms offset dev inode   path" (proc(5)); the path may be
 * absent or hold spaces. */
bool gp_maps_line_exec(const char *line, struct gp_xmap *out)
{
	unsigned long long lo, hi, off, ino;
	char perms[8], dev[16];
	int n = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %15s %llu %n", &lo, &hi, perms, &off, dev, &ino, &n) < 6
	    || hi <= lo || strlen(perms) < 3)
		return false;
	if (perms[2] != 'x')
		return false;
	const char *path = n > 0 ? line + n : "";
	while (*path == ' ' || *path == '\t')
		path++;
	out->lo = lo;
	out->hi = hi;
	if (path[0] == '/')
		out->file = strncmp(path, "/memfd:", 7) != 0;
	else
		out->file = !strncmp(path, "[vdso]", 6) || !strncmp(path, "[vsyscall]", 10);
	return true;
}

int gp_xmaps_read(const struct gp_root *root, int pid, struct gp_xmaps *x)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	size_t len;
	char *text = gp_slurp(root, path, &len);
	x->n = 0;
	if (!text)
		return -1;
	for (char *line = text, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		struct gp_xmap m;
		if (!gp_maps_line_exec(line, &m))
			continue;
		if (!gp_grow(&x->m, &x->cap, x->n + 1, sizeof *x->m, 64)) {
			free(text);
			errno = ENOMEM;
			return -1;
		}
		x->m[x->n++] = m;
	}
	free(text);
	return 0;
}

void gp_xmaps_free(struct gp_xmaps *x)
{
	free(x->m);
	memset(x, 0, sizeof *x);
}

bool gp_xmaps_is_jit(const struct gp_xmaps *x, uint64_t pc)
{
	/* The kernel lists mappings in address order: a binary search. */
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < x->m[mid].lo)
			hi = mid;
		else if (pc >= x->m[mid].hi)
			lo = mid + 1;
		else
			return !x->m[mid].file;
	}
	return false;
}
