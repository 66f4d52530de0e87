/* The bundle's own parts: see bundle_parts.h. */
#include "config.h"
#include "bundle.h"
#include "bundle_parts.h"
#include "gpumem.h"
#include "house.h"
#include "kmsg.h"
#include "nvml.h"
#include "procfs.h"
#include "runlibs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gp_bundle_kmsg(void *arg)
{
	const struct gp_bundle_part_arg *a = arg;
	struct gp_root root;
	char why[256] = "";
	if (gp_root_open(&root, NULL) < 0)
		return 1;
	struct gp_kmsg *k = gp_kmsg_open(&root, gp_kmsg_now_us(), a->window_s, why, sizeof why);
	if (!k) {
		fprintf(stderr, "gpuprobe: kernel log: %s\n", why[0] ? why : "cannot be read");
		gp_root_close(&root);
		return 2;
	}
	printf("# The kernel log's GPU-driver lines and hang/lockup/OOM warnings of the "
	       "last %.0f s (seconds before now; src/tracer/kmsg.c keeps which)\n", a->window_s);
	struct gp_kmsg_rec rec[16];
	int n;
	unsigned long kept = 0;
	/* Bounded: the window is in the buffer already, and a log that
	 * floods while we read stops at 100000 records. */
	while ((n = gp_kmsg_read(k, rec, 16, why, sizeof why)) > 0 && kept < 100000) {
		for (int i = 0; i < n; i++, kept++)
			printf("%+10.3f  %-8s %-12s %s\n", rec[i].t, rec[i].driver,
			       gp_kmsg_kind_name(rec[i].kind), rec[i].text);
	}
	if (n < 0)
		fprintf(stderr, "gpuprobe: kernel log: %s\n", why);
	printf("# %lu lines\n", kept);
	gp_kmsg_close(k);
	gp_root_close(&root);
	return 0;
}

/* A /dev path of a GPU driver: NVIDIA's character devices, AMD's KFD,
 * DRM nodes (amdgpu, i915, xe, nouveau...). */
/* The process's GPU file descriptors: [{"fd", "path"}], or NULL with
 * errno when its fd directory cannot be read. */
static json_t *gpu_fds(int pid)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	json_t *arr = json_array();
	struct dirent *e;
	while ((e = readdir(d)) && json_array_size(arr) < 1024) {
		char path[400], target[256];
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (gp_gpu_device_path(target))
			json_array_append_new(arr, json_pack("{s:i, s:s}", "fd", atoi(e->d_name),
							     "path", target));
	}
	closedir(d);
	return arr;
}

int gp_bundle_gpu(void *arg)
{
	const struct gp_bundle_part_arg *a = arg;
	struct gp_root root;
	if (gp_root_open(&root, NULL) < 0)
		return 1;
	int family[64];
	int nf = gp_bundle_family(a->pid, family, 64);
	json_t *doc = json_object(), *procs = json_array();
	json_object_set_new(doc, "processes", procs);
	/* One set of GPU readers (gpu/house.h) for the family: NVML first,
	 * its absence said once, with why. */
	struct gp_gpu_house_opts ho = { .root = &root };
	struct gp_gpu_house *house = gp_gpu_house_new(&ho);
	const char *why = "out of memory";
	struct gp_nvml *nv = house ? gp_gpu_house_nvml(house, &why) : NULL;
	if (house)
		gp_gpu_house_tick(house, 0); /* one reading of the lists for the family */
	if (nv) {
		json_object_set_new(doc, "nvml_gpus", json_integer(gp_nvml_count(nv)));
	} else {
		json_object_set_new(doc, "nvml", json_string(why));
		fprintf(stderr, "gpuprobe: NVML: %s\n", why);
	}
	unsigned with_fds = 0;
	for (int i = 0; i < nf; i++) {
		json_t *p = json_pack("{s:i}", "pid", family[i]);
		json_t *fds = gpu_fds(family[i]);
		if (fds) {
			with_fds += json_array_size(fds) > 0;
			json_object_set_new(p, "fds", fds);
		} else {
			json_object_set_new(p, "fds_error", json_string(strerror(errno)));
			fprintf(stderr, "gpuprobe: /proc/%d/fd: %s: GPU file descriptors unknown\n",
				family[i], strerror(errno));
		}
		struct gp_gpu_reader *r = house ? gp_gpu_reader_new_in(house, family[i], 0) : NULL;
		json_t *gpu = NULL;
		struct gp_gpu_totals tot;
		if (r && gp_gpu_read(r, &gpu, &tot) == 0 && gpu)
			json_object_set_new(p, "gpu", gpu);
		gp_gpu_reader_free(r);
		json_array_append_new(procs, p);
	}
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(doc);
	gp_gpu_house_free(house);
	gp_root_close(&root);
	if (!with_fds)
		fprintf(stderr, "gpuprobe: no process of the bundle holds a GPU device open "
			"(/dev/nvidia*, /dev/kfd, /dev/dri/*)\n");
	return 0;
}

int gp_bundle_libs(void *arg)
{
	const struct gp_bundle_part_arg *a = arg;
	struct gp_root root;
	if (gp_root_open(&root, NULL) < 0)
		return 1;
	int family[64];
	int nf = gp_bundle_family(a->pid, family, 64);
	json_t *doc = json_array();
	int rc = 0;
	for (int i = 0; i < nf; i++) {
		char *paths = gp_runlib_paths(&root, family[i]);
		if (!paths) {
			fprintf(stderr, "gpuprobe: /proc/%d/maps: %s: its runtime libraries unknown\n",
				family[i], strerror(errno));
			rc = i == 0 ? 1 : rc;
			continue;
		}
		json_array_append_new(doc, json_pack("{s:i, s:o}", "pid", family[i], "libs",
						     gp_runlib_json(&root, family[i], paths)));
		free(paths);
	}
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
	gp_root_close(&root);
	return rc;
}

int gp_bundle_ras_part(void *arg)
{
	const struct gp_bundle_part_arg *a = arg;
	char why[256] = "";
	int rc = gp_bundle_ras(a->pid, stdout, why, sizeof why);
	if (rc)
		fprintf(stderr, "gpuprobe: %s\n", why);
	return rc;
}

int gp_bundle_jvm_part(void *arg)
{
	const struct gp_bundle_part_arg *a = arg;
	char why[320] = "";
	int rc = gp_bundle_jvm(a->pid, stdout, why, sizeof why);
	if (rc)
		fprintf(stderr, "gpuprobe: %s\n", why);
	return rc;
}

static void family_add(int pid, int *out, int *n, int cap)
{
	for (int i = 0; i < *n; i++)
		if (out[i] == pid)
			return;
	if (*n < cap)
		out[(*n)++] = pid;
}

int gp_bundle_family(int pid, int *out, int cap)
{
	int n = 0;
	family_add(pid, out, &n, cap);
	/* Breadth first over what is found: each member's threads' children
	 * (Documentation/filesystems/proc.rst, /proc/PID/task/TID/children). */
	for (int i = 0; i < n && n < cap; i++) {
		char dir[64];
		snprintf(dir, sizeof dir, "/proc/%d/task", out[i]);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[400], buf[4096];
			snprintf(path, sizeof path, "%s/%s/children", dir, e->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t len = read(fd, buf, sizeof buf - 1);
			close(fd);
			if (len <= 0)
				continue;
			buf[len] = '\0';
			for (char *s = buf, *end; *s; s = end) {
				long c = strtol(s, &end, 10);
				if (end == s)
					break;
				if (c > 0)
					family_add((int)c, out, &n, cap);
			}
		}
		closedir(d);
	}
	return n;
}
