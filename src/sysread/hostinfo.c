/* gp_host_info: see hostinfo.h. */
#include "config.h"
#include "dl.h"
#include "hostinfo.h"
#include "parse.h"
#include "result.h"
#include "sysinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <grp.h>
#include <limits.h>
#include <link.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* ---- small readers ---------------------------------------------------- */

static bool read_line(const struct gp_root *root, const char *path, char *buf, size_t cap)
{
	if (gp_read_file(root, path, buf, cap) <= 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static void set_line(json_t *o, const char *key, const struct gp_root *root, const char *path)
{
	char buf[512];
	if (read_line(root, path, buf, sizeof buf) && buf[0])
		json_object_set_new(o, key, json_string(buf));
}

static void set_int_file(json_t *o, const char *key, const struct gp_root *root, const char *path)
{
	char buf[64];
	int64_t v;
	if (read_line(root, path, buf, sizeof buf) && gp_parse_i64(buf, &v, NULL))
		json_object_set_new(o, key, json_integer((json_int_t)v));
}

bool gp_sysfs_choice(const char *text, char *buf, size_t cap)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;
	if (!a || !b || (size_t)(b - a - 1) >= cap)
		return false;
	memcpy(buf, a + 1, (size_t)(b - a - 1));
	buf[b - a - 1] = '\0';
	return true;
}

static void set_choice(json_t *o, const char *key, const struct gp_root *root, const char *path)
{
	char text[256], w[64];
	if (read_line(root, path, text, sizeof text) && gp_sysfs_choice(text, w, sizeof w))
		json_object_set_new(o, key, json_string(w));
}

/* /etc/os-release: PRETTY_NAME="Debian GNU/Linux 12 (bookworm)" */
static void os_release(json_t *os, const struct gp_root *root)
{
	char *t = gp_slurp(root, "/etc/os-release", NULL);
	if (!t)
		t = gp_slurp(root, "/usr/lib/os-release", NULL);
	if (!t)
		return;
	for (char *save = NULL, *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "PRETTY_NAME=", 12) != 0)
			continue;
		char *v = l + 12;
		size_t n = strlen(v);
		if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
			v[n - 1] = '\0';
			v++;
		}
		json_object_set_new(os, "name", json_string(v));
	}
	free(t);
}

static void cpu_model(json_t *cpu, const struct gp_root *root)
{
	char *t = gp_slurp(root, "/proc/cpuinfo", NULL);
	if (!t)
		return;
	/* x86: "model name"; arm64: none (CPU implementer/part); ppc: "cpu". */
	static const char *const keys[] = { "model name", "Model", "cpu model", "cpu", NULL };
	for (int k = 0; keys[k] && !json_object_get(cpu, "model"); k++) {
		size_t kl = strlen(keys[k]);
		for (char *l = t; l && *l; ) {
			char *nl = strchr(l, '\n');
			if (!strncmp(l, keys[k], kl) && (l[kl] == '\t' || l[kl] == ' ' || l[kl] == ':')) {
				char *c = strchr(l, ':');
				if (c && (!nl || c < nl)) {
					c++;
					while (*c == ' ' || *c == '\t')
						c++;
					size_t len = nl ? (size_t)(nl - c) : strlen(c);
					json_object_set_new(cpu, "model", json_stringn(c, len));
					break;
				}
			}
			l = nl ? nl + 1 : NULL;
		}
	}
	free(t);
}

/* ---- GPUs: /sys/class/drm/card* ---------------------------------------- */

static const char *vendor_name(const char *id)
{
	if (!strcasecmp(id, "0x1002"))
		return "AMD";
	if (!strcasecmp(id, "0x10de"))
		return "NVIDIA";
	if (!strcasecmp(id, "0x8086"))
		return "Intel";
	if (!strcasecmp(id, "0x1af4"))
		return "virtio";
	if (!strcasecmp(id, "0x1414"))
		return "Microsoft";
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names in a directory under the root, sorted; filter by prefix. */
static size_t list_dir(const struct gp_root *root, const char *path, const char *prefix,
		       char ***out)
{
	*out = NULL;
	int fd = gp_open(root, path, O_DIRECTORY);
	if (fd < 0)
		return 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	size_t n = 0, cap = 0;
	char **v = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void gpus(json_t *host, const struct gp_root *root)
{
	char **cards;
	size_t n = list_dir(root, "/sys/class/drm", "card", &cards);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		/* card0, not card0-DP-1 (connectors) */
		if (strchr(cards[i], '-'))
			continue;
		char p[256], buf[256];
		json_t *g = json_pack("{s:s}", "card", cards[i]);
		snprintf(p, sizeof p, "/sys/class/drm/%s/device/vendor", cards[i]);
		if (read_line(root, p, buf, sizeof buf)) {
			json_object_set_new(g, "vendor", json_string(buf));
			const char *vn = vendor_name(buf);
			if (vn)
				json_object_set_new(g, "vendor_name", json_string(vn));
		}
		snprintf(p, sizeof p, "/sys/class/drm/%s/device/device", cards[i]);
		set_line(g, "device", root, p);
		/* driver is a symlink to .../drivers/amdgpu: its last component */
		snprintf(p, sizeof p, "sys/class/drm/%s/device/driver", cards[i]);
		ssize_t l = readlinkat(root->dirfd, p, buf, sizeof buf - 1);
		if (l > 0) {
			buf[l] = '\0';
			const char *s = strrchr(buf, '/');
			json_object_set_new(g, "driver", json_string(s ? s + 1 : buf));
		}
		snprintf(p, sizeof p, "sys/class/drm/%s/device", cards[i]);
		l = readlinkat(root->dirfd, p, buf, sizeof buf - 1);
		if (l > 0) {
			buf[l] = '\0';
			const char *s = strrchr(buf, '/');
			json_object_set_new(g, "pci", json_string(s ? s + 1 : buf));
		}
		snprintf(p, sizeof p, "/sys/class/drm/%s/device/mem_info_vram_total", cards[i]);
		set_int_file(g, "vram_bytes", root, p);
		json_array_append_new(arr, g);
	}
	free_list(cards, n);

	json_t *drv = json_object();
	/* amdgpu: a DKMS build says its version here; the in-tree driver has
	 * no version file (it is the kernel's). */
	set_line(drv, "amdgpu", root, "/sys/module/amdgpu/version");
	if (!json_object_get(drv, "amdgpu")) {
		struct stat sb;
		if (fstatat(root->dirfd, "sys/module/amdgpu", &sb, 0) == 0)
			json_object_set_new(drv, "amdgpu", json_string("in-tree (the kernel's)"));
	}
	/* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..." */
	char nv[512];
	if (read_line(root, "/proc/driver/nvidia/version", nv, sizeof nv)) {
		json_object_set_new(drv, "nvidia_banner", json_string(nv));
		char v[64];
		if (gp_nvidia_version(nv, v, sizeof v))
			json_object_set_new(drv, "nvidia", json_string(v));
		if (strstr(nv, "Open Kernel Module"))
			json_object_set_new(drv, "nvidia_open", json_true());
	}
	/* NVIDIA GPUs have no /sys/class/drm card without nvidia-drm: the
	 * driver's own list, "Model:  NVIDIA H200" and "Bus Location: ...". */
	char **nvg;
	size_t nn = list_dir(root, "/proc/driver/nvidia/gpus", "", &nvg);
	for (size_t i = 0; i < nn; i++) {
		char p[300];
		snprintf(p, sizeof p, "/proc/driver/nvidia/gpus/%s/information", nvg[i]);
		char *info = gp_slurp(root, p, NULL);
		if (!info)
			continue;
		json_t *g = json_pack("{s:s, s:s, s:s, s:s}", "card", "nvidia", "vendor", "0x10de",
				      "vendor_name", "NVIDIA", "driver", "nvidia");
		json_object_set_new(g, "pci", json_string(nvg[i]));
		for (char *save = NULL, *l = strtok_r(info, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(l, "Model:", 6)) {
				char *m = l + 6;
				while (*m == ' ' || *m == '\t')
					m++;
				json_object_set_new(g, "model", json_string(m));
			}
		}
		free(info);
		json_array_append_new(arr, g);
	}
	free_list(nvg, nn);
	set_line(drv, "kfd_topology_generation", root, "/sys/class/kfd/kfd/topology/generation_id");
	json_object_set_new(host, "drivers", drv);
	json_object_set_new(host, "gpus", arr);
}

/* ---- device nodes ------------------------------------------------------ */

static void mode_string(mode_t m, char out[11])
{
	out[0] = S_ISCHR(m) ? 'c' : S_ISBLK(m) ? 'b' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : '-';
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (m & (1u << (8 - i))) ? rwx[i] : '-';
	out[10] = '\0';
}

static void device(json_t *arr, const struct gp_root *root, const char *abs)
{
	struct stat sb;
	if (fstatat(root->dirfd, abs + 1, &sb, 0) < 0)
		return;
	if (S_ISDIR(sb.st_mode))
		return;
	char m[11];
	mode_string(sb.st_mode, m);
	json_t *d = json_pack("{s:s, s:s}", "path", abs, "mode", m);
	struct group *gr = getgrgid(sb.st_gid);
	if (gr)
		json_object_set_new(d, "group", json_string(gr->gr_name));
	else
		json_object_set_new(d, "gid", json_integer(sb.st_gid));
	/* This user's access, as open(2) would judge it (effective ids). */
	json_object_set_new(d, "read", json_boolean(faccessat(root->dirfd, abs + 1, R_OK, AT_EACCESS) == 0));
	json_object_set_new(d, "write", json_boolean(faccessat(root->dirfd, abs + 1, W_OK, AT_EACCESS) == 0));
	json_array_append_new(arr, d);
}

static void devices(json_t *host, const struct gp_root *root)
{
	json_t *arr = json_array();
	device(arr, root, "/dev/kfd");
	device(arr, root, "/dev/dxg");
	char **v;
	size_t n = list_dir(root, "/dev/dri", "", &v);
	for (size_t i = 0; i < n; i++) {
		char p[300];
		snprintf(p, sizeof p, "/dev/dri/%s", v[i]);
		device(arr, root, p);
	}
	free_list(v, n);
	n = list_dir(root, "/dev", "nvidia", &v);
	for (size_t i = 0; i < n; i++) {
		char p[300];
		snprintf(p, sizeof p, "/dev/%s", v[i]);
		device(arr, root, p);
	}
	free_list(v, n);
	json_object_set_new(host, "devices", arr);

	/* The groups the device nodes ask for: the usual "add yourself to
	 * render/video" answer needs to know them. */
	gid_t gs[256];
	int ng = getgroups(256, gs);
	json_t *groups = json_array();
	for (int i = 0; i < ng; i++) {
		struct group *gr = getgrgid(gs[i]);
		json_array_append_new(groups, gr ? json_string(gr->gr_name) : json_integer(gs[i]));
	}
	json_t *user = json_pack("{s:i, s:o}", "uid", (int)geteuid(), "groups", groups);
	struct passwd *pw = getpwuid(geteuid());
	if (pw)
		json_object_set_new(user, "name", json_string(pw->pw_name));
	json_object_set_new(host, "user", user);
}

/* ---- WSL --------------------------------------------------------------- */

static void wsl(json_t *host, const struct gp_root *root)
{
	json_t *why = json_array();
	char rel[256];
	if (read_line(root, "/proc/sys/kernel/osrelease", rel, sizeof rel)) {
		for (char *c = rel; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (strstr(rel, "microsoft"))
			json_array_append_new(why, json_string("kernel release says microsoft"));
	}
	struct stat sb;
	if (fstatat(root->dirfd, "dev/dxg", &sb, 0) == 0)
		json_array_append_new(why, json_string("/dev/dxg present"));
	/* librocdxg: the thunk over /dev/dxg that ROCm uses on WSL (seed 000). */
	static const char *const dirs[] = { "usr/lib/wsl/lib", "opt/rocm/lib",
					    "usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib", NULL };
	for (int i = 0; dirs[i]; i++) {
		char **v;
		char p[300];
		size_t n = list_dir(root, dirs[i], "librocdxg.so", &v);
		if (n) {
			snprintf(p, sizeof p, "librocdxg: /%s/%s", dirs[i], v[n - 1]);
			json_array_append_new(why, json_string(p));
		}
		free_list(v, n);
	}
	json_object_set_new(host, "wsl", json_pack("{s:b, s:o}", "detected",
						   json_array_size(why) > 0, "evidence", why));
}

/* ---- runtimes ------------------------------------------------------------ */

bool gp_nvidia_version(const char *banner, char *buf, size_t cap)
{
	/* the first blank-separated word that is digits and dots, with a dot */
	for (const char *p = banner; *p; p++) {
		if ((p == banner || p[-1] == ' ') && isdigit((unsigned char)*p)) {
			size_t n = strspn(p, "0123456789.");
			if ((p[n] == ' ' || !p[n]) && memchr(p, '.', n) && n < cap) {
				memcpy(buf, p, n);
				buf[n] = '\0';
				return true;
			}
		}
	}
	return false;
}

const char *gp_soname_version(const char *path)
{
	const char *s = strstr(path, ".so.");
	return s && s[4] ? s + 4 : NULL;
}

/* What a reader of an ELF file looks for: into buf (cap), true when found. */
typedef bool elf_reader(Elf *e, char *buf, size_t cap);

/* The ELF open on FD, handed to READ; false when it cannot be read. */
static bool read_elf_fd(int fd, elf_reader *read, char *buf, size_t cap)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	bool found = e && elf_kind(e) == ELF_K_ELF && read(e, buf, cap);
	if (e)
		elf_end(e);
	return found;
}

/* PATH as ELF, handed to READ; false when it cannot be opened or read. */
static bool read_elf(const char *path, elf_reader *read, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool found = read_elf_fd(fd, read, buf, cap);
	close(fd);
	return found;
}

static bool elf_build_id(Elf *e, char *buf, size_t cap)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4
			    && !memcmp((char *)d->d_buf + noff, "GNU", 4)) {
				const unsigned char *id = (const unsigned char *)d->d_buf + doff;
				static const char hex[] = "0123456789abcdef";
				size_t k = 0;
				for (size_t i = 0; i < nh.n_descsz && k + 3 <= cap; i++) {
					buf[k++] = hex[id[i] >> 4];
					buf[k++] = hex[id[i] & 15];
				}
				if (k)
					buf[k] = '\0';
				return k > 0;
			}
		}
	}
	return false;
}

bool gp_elf_build_id(const char *path, char *buf, size_t cap)
{
	return read_elf(path, elf_build_id, buf, cap);
}

/* DT_SONAME of the dynamic section: the name a library answers to
 * ("libnccl.so.2"), whatever its file is called. */
static bool elf_soname(Elf *e, char *buf, size_t cap)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_SONAME)
				continue;
			const char *s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (!s || !*s)
				return false;
			gp_strlcpy(buf, s, cap);
			return true;
		}
	}
	return false;
}

bool gp_elf_ids_at(const struct gp_root *root, const char *path, char *id, size_t idcap,
		   char *soname, size_t socap)
{
	id[0] = soname[0] = '\0';
	int fd = gp_open(root, path, O_RDONLY);
	if (fd < 0)
		return false;
	bool found = read_elf_fd(fd, elf_build_id, id, idcap);
	if (!read_elf_fd(fd, elf_soname, soname, socap))
		soname[0] = '\0';
	close(fd);
	return found;
}

/* The first string of .comment: the compiler that built the library,
 * which for ROCm builds names the ROCm release ("AMD clang version ...
 * roc-7.2.4"). */
static bool elf_comment_of(Elf *e, char *buf, size_t cap)
{
	bool found = false;
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return false;
	Elf_Scn *scn = NULL;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".comment"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_size) {
			const char *s = d->d_buf;
			size_t n = strnlen(s, d->d_size);
			while (n == 0 && d->d_size > 1) { /* leading NUL */
				s++;
				n = strnlen(s, d->d_size - 1);
				break;
			}
			gp_strlcpy(buf, s, n + 1 < cap ? n + 1 : cap);
			found = n > 0;
		}
	}
	return found;
}

static bool elf_comment(const char *path, char *buf, size_t cap)
{
	return read_elf(path, elf_comment_of, buf, cap);
}

/* dlopen a runtime and say which file the dynamic linker really took:
 * the name asked for is a symlink chain (libhsa-runtime64.so.1 ->
 * .so.1.18.70204), and which of several installs wins depends on the
 * search path (seed 000 compared two). */
static json_t *probe_lib(const char *name, void **handle_out)
{
	json_t *o = json_pack("{s:s}", "name", name);
	void *h = gp_dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	if (!h) {
		const char *e = gp_dlerror();
		json_object_set_new(o, "error", json_string(e ? e : "not found"));
		if (handle_out)
			*handle_out = NULL;
		return o;
	}
	struct link_map *lm = NULL;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0]) {
		json_object_set_new(o, "loaded_as", json_string(lm->l_name));
		char real[PATH_MAX];
		if (realpath(lm->l_name, real)) {
			json_object_set_new(o, "path", json_string(real));
			const char *v = gp_soname_version(real);
			if (v)
				json_object_set_new(o, "file_version", json_string(v));
			char id[128], cm[256];
			if (gp_elf_build_id(real, id, sizeof id))
				json_object_set_new(o, "build_id", json_string(id));
			if (elf_comment(real, cm, sizeof cm))
				json_object_set_new(o, "build", json_string(cm));
		}
	}
	if (handle_out)
		*handle_out = h;
	else
		dlclose(h);
	return o;
}

static void runtimes(json_t *host, const struct gp_host_info_opts *o)
{
	json_t *rt = json_object();
	/* HSA: no hsa_init (it opens /dev/kfd and starts threads): the file,
	 * its version suffix, the build-id from the ELF note. */
	json_t *hsa = probe_lib(o->hsa_lib ? o->hsa_lib : "libhsa-runtime64.so.1", NULL);
	json_object_set_new(rt, "hsa", hsa);
	/* CUDA: cuDriverGetVersion needs no cuInit (CUDA driver API docs). */
	void *h;
	json_t *cuda = probe_lib("libcuda.so.1", &h);
	if (h) {
		int (*get)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
		int v = 0;
		if (get && get(&v) == 0 && v > 0) {
			char s[32];
			snprintf(s, sizeof s, "%d.%d", v / 1000, (v % 1000) / 10);
			json_object_set_new(cuda, "driver_version", json_integer(v));
			json_object_set_new(cuda, "version", json_string(s));
		}
		dlclose(h);
	}
	json_object_set_new(rt, "cuda", cuda);
	json_object_set_new(host, "runtimes", rt);
}

/* ---- this process -------------------------------------------------------- */

json_t *gp_env_json(const char *const *prefixes)
{
	json_t *env = json_object();
	for (char **e = environ; e && *e; e++) {
		for (int i = 0; prefixes[i]; i++) {
			if (strncmp(*e, prefixes[i], strlen(prefixes[i])))
				continue;
			const char *eq = strchr(*e, '=');
			if (!eq)
				break;
			char key[128];
			size_t kl = (size_t)(eq - *e) < sizeof key - 1 ? (size_t)(eq - *e) : sizeof key - 1;
			memcpy(key, *e, kl);
			key[kl] = '\0';
			json_object_set_new(env, key, gp_json_string(eq + 1));
			break;
		}
	}
	return env;
}

static void environment(json_t *host)
{
	static const char *const prefixes[] = { "HSA_", "ROCR_", "HIP_", "CUDA_", "HSAKMT_",
						"GPU_", "AMD_", "ROC_", "HCC_", NULL };
	json_object_set_new(host, "env", gp_env_json(prefixes));
}

static json_t *rlim_json(rlim_t v)
{
	return v == RLIM_INFINITY ? json_string("unlimited") : json_integer((json_int_t)v);
}

static void memlock(json_t *host)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
		json_object_set_new(host, "memlock", json_pack("{s:o, s:o}", "soft", rlim_json(rl.rlim_cur),
							       "hard", rlim_json(rl.rlim_max)));
}

/* ---- all together ---------------------------------------------------------- */

json_t *gp_host_info_ex(const struct gp_root *root, const struct gp_host_info_opts *o)
{
	json_t *h = gp_host_facts(root);
	json_t *os = json_object();
	os_release(os, root);
	set_line(os, "kernel", root, "/proc/sys/kernel/osrelease");
	set_line(os, "kernel_version", root, "/proc/sys/kernel/version");
	json_object_set_new(h, "os", os);
	json_t *cpu = json_object();
	cpu_model(cpu, root);
	json_object_set_new(h, "cpu", cpu);
	gpus(h, root);
	wsl(h, root);
	devices(h, root);

	json_t *vm = json_object();
	static const char *const knobs[] = { "dirty_ratio", "dirty_background_ratio", "dirty_bytes",
					     "dirty_background_bytes", "dirty_expire_centisecs",
					     "dirty_writeback_centisecs", NULL };
	for (int i = 0; knobs[i]; i++) {
		char p[128], k[64];
		snprintf(p, sizeof p, "/proc/sys/vm/%s", knobs[i]);
		snprintf(k, sizeof k, "vm.%s", knobs[i]);
		set_int_file(vm, k, root, p);
	}
	json_object_set_new(h, "vm", vm);
	json_t *thp = json_object();
	set_choice(thp, "enabled", root, "/sys/kernel/mm/transparent_hugepage/enabled");
	set_choice(thp, "defrag", root, "/sys/kernel/mm/transparent_hugepage/defrag");
	json_object_set_new(h, "thp", thp);
	/* kernel.yama.ptrace_scope is in gp_host_facts already; absent = no Yama. */

	char *mi = gp_slurp(root, "/proc/meminfo", NULL);
	if (mi) {
		json_t *m = json_object();
		struct gp_sys_compact c;
		memset(&c, 0, sizeof c);
		gp_meminfo_parse(mi, m, &c);
		json_t *v = json_object_get(m, "MemAvailable");
		if (v)
			json_object_set(h, "mem_available", v);
		v = json_object_get(m, "MemTotal");
		if (v)
			json_object_set(h, "mem_total", v);
		json_decref(m);
		free(mi);
	}
	if (o->process) {
		environment(h);
		memlock(h);
	}
	if (o->runtimes)
		runtimes(h, o);
	return h;
}

json_t *gp_host_info(const struct gp_root *root)
{
	struct gp_host_info_opts o = { .runtimes = root->live, .process = root->live };
	return gp_host_info_ex(root, &o);
}
