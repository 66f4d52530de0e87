#include "config.h"
#include "runlibs.h"
#include "hostinfo.h"
#include "strbuf.h"
#include "tfile.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* File names, not sonames: libcuda.so.1 and libcuda.so.580.95.05 both
 * start "libcuda.so", and "libcuda" alone would take libcudnn. */
static const char *const prefixes[] = {
	"libnccl", "librccl", "libcuda.so", "libcudart", "libhsa-runtime64", "libamdhip64",
};

bool gp_runlib_name(const char *base)
{
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(base, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The path of one maps line ("start-end perms off dev inode   path"),
 * NUL-ended in place; NULL for an anonymous or special mapping. */
static char *maps_path(char *line)
{
	char *p = line;
	for (int field = 0; field < 5 && p; field++) {
		p = strchr(p, ' ');
		while (p && *p == ' ')
			p++;
	}
	return p && *p == '/' ? p : NULL;
}

static bool listed(const char *list, const char *path)
{
	size_t n = strlen(path);
	for (const char *l = list; (l = strstr(l, path)); l += n)
		if ((l == list || l[-1] == '\n') && l[n] == '\n')
			return true;
	return false;
}

char *gp_runlib_paths(const struct gp_root *root, int pid)
{
	char file[64];
	snprintf(file, sizeof file, "/proc/%d/maps", pid);
	size_t len;
	char *maps = gp_slurp(root, file, &len);
	if (!maps)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	for (char *line = maps, *next; line && *line && n < GP_RUNLIBS_MAX; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *path = maps_path(line);
		if (!path)
			continue;
		const char *base = strrchr(path, '/') + 1;
		/* A file replaced on disk is "path (deleted)": not the file
		 * mapped any more, so not named. */
		if (!gp_runlib_name(base) || strstr(path, " (deleted)") || strchr(path, '\n'))
			continue;
		if (listed(sb.buf, path))
			continue;
		strbuf_addf(&sb, "%s\n", path);
		n++;
	}
	free(maps);
	char *out = strbuf_detach(&sb, NULL);
	return out ? out : strdup("");
}

/* The file as this process sees it, tried where tfile.h says a target's
 * file is (its root first: a process in a container maps its own /usr;
 * below a chroot, the path less the root's own).  No build-id to check it
 * by here: the first that reads is named. */
static bool ids_of(const struct gp_root *root, int pid, const char *path, char *id, size_t idcap,
		   char *so, size_t socap)
{
	char link[64], rootlink[4096];
	snprintf(link, sizeof link, "proc/%d/root", pid);
	ssize_t rl = readlinkat(root->dirfd, link, rootlink, sizeof rootlink - 1);
	rootlink[rl > 0 ? rl : 0] = '\0';
	struct gp_tfile_cands *c = malloc(sizeof *c);
	if (!c)
		return false;
	size_t n = gp_tfile_candidates(pid, rootlink, path, NULL, false, c);
	bool have = false;
	for (size_t i = 0; i < n && !have; i++)
		have = gp_elf_ids_at(root, c->path[i], id, idcap, so, socap);
	free(c);
	return have;
}

json_t *gp_runlib_json(const struct gp_root *root, int pid, const char *paths)
{
	json_t *arr = json_array();
	for (const char *p = paths; p && *p; ) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char path[PATH_MAX];
		if (n < sizeof path) {
			memcpy(path, p, n);
			path[n] = '\0';
			char id[129], so[256];
			bool have = ids_of(root, pid, path, id, sizeof id, so, sizeof so);
			json_array_append_new(arr, json_pack("{s:s, s:s, s:o}",
				"soname", so[0] ? so : strrchr(path, '/') + 1, "path", path,
				"build_id", have ? json_string(id) : json_null()));
		}
		p = nl ? nl + 1 : p + n;
	}
	return arr;
}
