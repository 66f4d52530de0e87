/* A target's namespaces and container; see nsinfo.h. */
#include "config.h"
#include "nsinfo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t gp_nspid_parse(const char *status, long *ids, size_t cap)
{
	const char *p = status;
	while (p && strncmp(p, "NSpid:", 6)) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return 0;
	p += 6;
	size_t n = 0;
	while (n < cap) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || v <= 0)
			return 0;
		ids[n++] = v;
		p = end;
	}
	return n;
}

long gp_ns_inner_tid(int pid, int tid)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = gp_pread_all(fd, buf, sizeof buf);
	close(fd);
	if (r < 0)
		return -1;
	long ids[32];
	size_t n = gp_nspid_parse(buf, ids, 32);
	return n ? ids[n - 1] : -1;
}

static bool ns_differs(int pid, const char *kind)
{
	char a[96], b[96];
	struct stat sa, sb;
	snprintf(a, sizeof a, "/proc/%d/ns/%s", pid, kind);
	snprintf(b, sizeof b, "/proc/self/ns/%s", kind);
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       (sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev);
}

bool gp_ns_other_pidns(int pid)
{
	return ns_differs(pid, "pid");
}

/* ---- its thread ids and ours -------------------------------------------- */

void gp_nstids_init(struct gp_nstids *t, int pid)
{
	memset(t, 0, sizeof *t);
	t->pid = pid;
	t->other = -1;
}

void gp_nstids_free(struct gp_nstids *t)
{
	free(t->m);
	t->m = NULL;
	t->n = 0;
}

int gp_nstids_update(struct gp_nstids *t, const int *tids, size_t n)
{
	struct gp_nstid *m = malloc((n ? n : 1) * sizeof *m);
	if (!m)
		return -1;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		while (j < t->n && t->m[j].host < tids[i])
			j++;
		long own = j < t->n && t->m[j].host == tids[i] ? t->m[j].own : gp_ns_inner_tid(t->pid, tids[i]);
		m[i] = (struct gp_nstid){ tids[i], own };
	}
	free(t->m);
	t->m = m;
	t->n = n;
	return 0;
}

int gp_nstids_find(const struct gp_nstids *t, long own)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].own == own)
			return t->m[i].host;
	return 0;
}

int gp_nstids_ours(struct gp_nstids *t, long own)
{
	if (t->other < 0)
		t->other = gp_ns_other_pidns(t->pid);
	if (!t->other)
		return own > 0 && own <= INT_MAX ? (int)own : 0;
	int host = gp_nstids_find(t, own);
	if (host)
		return host;
	int *tids = NULL;
	size_t n = 0;
	if (gp_list_tids(t->pid, &tids, &n) < 0)
		return 0;
	int r = gp_nstids_update(t, tids, n);
	free(tids);
	return r < 0 ? 0 : gp_nstids_find(t, own);
}

/* ---- the container, from the cgroup path ------------------------------ */

static bool hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* "1b2c3d4e-...": 8-4-4-4-12 hex digits, '-' or '_' (systemd's escape)
 * between them; copied with '-'. */
static bool pod_uid_at(const char *s, size_t len, char out[37])
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	if (len < 36)
		return false;
	size_t k = 0;
	for (size_t g = 0; g < 5; g++) {
		if (g) {
			if (s[k] != '-' && s[k] != '_')
				return false;
			out[k] = '-';
			k++;
		}
		if (!hex_run(s + k, (size_t)groups[g]))
			return false;
		memcpy(out + k, s + k, (size_t)groups[g]);
		k += (size_t)groups[g];
	}
	out[36] = 0;
	return len == 36 || !isxdigit((unsigned char)s[36]);
}

static const struct {
	const char *prefix, *runtime;
} scopes[] = {
	{ "docker-", "docker" },
	{ "cri-containerd-", "containerd" },
	{ "nerdctl-", "containerd" },
	{ "crio-", "cri-o" },
	{ "libpod-", "podman" },
};

/* One component of a cgroup path (len bytes), after prev (its parent's). */
static void component(const char *s, size_t len, const char *prev, size_t plen, bool kube,
		      struct gp_container *c)
{
	size_t core = len;
	if (core > 6 && (!strncmp(s + core - 6, ".scope", 6) || !strncmp(s + core - 6, ".slice", 6)))
		core -= 6;
	for (size_t i = 0; i < sizeof scopes / sizeof scopes[0]; i++) {
		size_t pl = strlen(scopes[i].prefix);
		if (core == pl + 64 && !strncmp(s, scopes[i].prefix, pl) && hex_run(s + pl, 64)) {
			memcpy(c->id, s + pl, 64);
			c->id[64] = 0;
			c->runtime = scopes[i].runtime;
			return;
		}
	}
	if (core == 64 && hex_run(s, 64)) {
		memcpy(c->id, s, 64);
		c->id[64] = 0;
		c->runtime = plen == 6 && !strncmp(prev, "docker", 6) ? "docker" : NULL;
		return;
	}
	/* "pod<UID>" (cgroupfs) or "kubepods-<qos>-pod<UID>.slice" (systemd) */
	for (const char *p = s; kube && p + 3 < s + core; p++) {
		p = memchr(p, 'p', (size_t)(s + core - p));
		if (!p)
			break;
		if (!strncmp(p, "pod", 3) && (p == s || p[-1] == '-') &&
		    pod_uid_at(p + 3, (size_t)(s + core - p - 3), c->pod_uid))
			return;
	}
}

bool gp_container_parse(const char *cgroup, struct gp_container *c)
{
	memset(c, 0, sizeof *c);
	for (const char *line = cgroup; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		const char *end = line + ll, *colon = memchr(line, ':', ll);
		colon = colon ? memchr(colon + 1, ':', (size_t)(end - (colon + 1))) : NULL;
		if (colon) {
			const char *path = colon + 1;
			bool kube = false;
			for (const char *k = path; k + 8 <= end && !kube; k++)
				kube = !strncmp(k, "kubepods", 8);
			const char *prev = "";
			size_t plen = 0;
			for (const char *p = path; p < end;) {
				while (p < end && *p == '/')
					p++;
				const char *q = p;
				while (q < end && *q != '/')
					q++;
				if (q > p)
					component(p, (size_t)(q - p), prev, plen, kube, c);
				prev = p;
				plen = (size_t)(q - p);
				p = q;
			}
			if (c->id[0] || c->pod_uid[0])
				return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/* ---- a pod's name and namespace ----------------------------------------- */

/* A DNS-1123 name, as Kubernetes names pods and namespaces. */
static bool dns_name(const char *s, size_t n)
{
	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		      s[i] == '.'))
			return false;
	return true;
}

/* The value of variable name in an environ block (NUL-separated). */
static const char *env_of(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < len;) {
		const char *e = env + i;
		size_t el = strnlen(e, len - i);
		if (el > nl && !strncmp(e, name, nl) && e[nl] == '=') {
			*vlen = el - nl - 1;
			return e + nl + 1;
		}
		i += el + 1;
	}
	return NULL;
}

/* The pod's name and namespace, where the process's own files say them:
 * the downward API's POD_NAME / POD_NAMESPACE when the pod's spec sets
 * them, else its HOSTNAME (a pod's hostname is its name unless the spec
 * sets one) and the namespace the kubelet writes beside the service
 * account's token (/var/run/secrets/kubernetes.io/serviceaccount/
 * namespace, in its root).  Only these variables are looked at. */
static void pod_names(const struct gp_root *root, int pid, json_t *c)
{
	char path[128];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	size_t len = 0, vl = 0;
	char *env = gp_slurp(root, path, &len);
	const char *v = env ? env_of(env, len, "POD_NAME", &vl) : NULL;
	if (!v && env)
		v = env_of(env, len, "HOSTNAME", &vl);
	if (v && dns_name(v, vl))
		json_object_set_new(c, "pod", json_stringn(v, vl));
	v = env ? env_of(env, len, "POD_NAMESPACE", &vl) : NULL;
	char ns[256];
	if (!v) {
		/* Live, inside its root as it sees it (a link there is its own:
		 * procfs.h, gp_open_in_root); replayed, the tree's copy. */
		static const char sa_ns[] = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
		snprintf(path, sizeof path, "/proc/%d/root%s", pid, sa_ns);
		int fd = root->live ? gp_open_in_root(pid, sa_ns) : gp_open(root, path, 0);
		ssize_t n = fd >= 0 ? gp_pread_all(fd, ns, sizeof ns) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			v = ns;
			vl = strcspn(ns, "\n");
		}
	}
	if (v && dns_name(v, vl))
		json_object_set_new(c, "namespace", json_stringn(v, vl));
	free(env);
}

/* ---- the target record -------------------------------------------------- */

void gp_ns_target_json(const struct gp_root *root, int pid, json_t *target)
{
	char path[64], buf[8192];
	snprintf(path, sizeof path, "/proc/%d/status", pid);
	long ids[32];
	size_t n = gp_read_file(root, path, buf, sizeof buf) > 0 ? gp_nspid_parse(buf, ids, 32) : 0;
	if (n > 1) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, json_integer(ids[i]));
		json_object_set_new(target, "nspid", a);
	}
	if (root->live) {
		static const char *const kinds[] = { "mnt", "pid", "net", "uts", "ipc", "user", "cgroup" };
		json_t *ns = json_array();
		for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
			if (ns_differs(pid, kinds[i]))
				json_array_append_new(ns, json_string(kinds[i]));
		if (json_array_size(ns))
			json_object_set_new(target, "ns", ns);
		else
			json_decref(ns);
	}
	snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
	size_t len;
	char *cg = gp_slurp(root, path, &len);
	struct gp_container c;
	if (cg && gp_container_parse(cg, &c)) {
		json_t *o = json_pack("{s:o, s:o, s:o}",
			"runtime", c.runtime ? json_string(c.runtime) : json_null(),
			"id", c.id[0] ? json_string(c.id) : json_null(),
			"pod_uid", c.pod_uid[0] ? json_string(c.pod_uid) : json_null());
		if (c.pod_uid[0])
			pod_names(root, pid, o);
		json_object_set_new(target, "container", o);
	}
	free(cg);
}
