/* KFD: /sys/class/kfd/kfd/proc/<pid>/, see kfd.h.  Moved from gpumem.c
 * (memory) and gpuact.c (activity), which read the directory each with
 * its own copy of the helpers (issue 19, item 5). */
#include "config.h"
#include "result.h"
#include "kfd.h"
#include "gpuact.h"
#include "parse.h"
#include "satmath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool read_u64_at(int dirfd, const char *name, uint64_t *v)
{
	char buf[64];
	const char *end;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return false;
	ssize_t n = gp_pread_all(fd, buf, sizeof buf);
	close(fd);
	if (n <= 0 || !gp_parse_u64(buf, v, &end))
		return false;
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	return *end == '\0' && *v <= (uint64_t)INT64_MAX;
}

static const char *gpuid_after(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) || name[n] < '0' || name[n] > '9')
		return NULL;
	for (const char *p = name + n; *p; p++)
		if (*p < '0' || *p > '9')
			return NULL;
	return name + n;
}

/* The index of GPU id in k[0..n), or n. */
static size_t kfd_index(const struct gp_kfd_gpu *k, size_t n, const char *id)
{
	size_t i = 0;
	while (i < n && strcmp(k[i].id, id))
		i++;
	return i;
}

static const struct gp_kfd_gpu *kfd_find(const struct gp_kfd_gpu *k, size_t n,
				      const char *id)
{
	size_t i = kfd_index(k, n, id);
	return i < n ? &k[i] : NULL;
}

/* GPU id's entry in k[0..*n), added (zeroed) when new; NULL when k is full. */
static struct gp_kfd_gpu *kfd_slot(struct gp_kfd_gpu *k, size_t *n, size_t cap,
				 const char *id)
{
	size_t i = kfd_index(k, *n, id);
	if (i == *n) {
		if (*n == cap)
			return NULL;
		k[i] = (struct gp_kfd_gpu){ 0 };
		snprintf(k[i].id, sizeof k[i].id, "%s", id);
		(*n)++;
	}
	return &k[i];
}

/* Per GPU the process opened (kfd_procfs_add_sysfs_stats and
 * _counters, kfd_process.c):
 *   stats_<gpuid>/evicted_ms    time its queues spent evicted, ms
 *                               (jiffies64_to_msecs of
 *                               evict_duration_counter): memory
 *                               evictions stop every queue of the
 *                               process, the slowness of seed-like loads
 *   stats_<gpuid>/cu_occupancy  CUs its waves occupy now (GFX9+; each
 *                               read walks the queues' wave slots)
 *   counters_<gpuid>/faults, page_in, page_out   SVM (HMM) counters
 *   sdma_<gpuid>                SDMA busy time, µs, cumulative */
static void kfd_stats_dir(int pdfd, const char *name, const char *id,
			  struct gp_gpu_activity *a)
{
	int d = openat(pdfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t v;

	(void)id;
	if (d < 0)
		return;
	if (!strncmp(name, "stats_", 6)) {
		if (read_u64_at(d, "evicted_ms", &v))
			a->kfd_evicted_ms += v;
		if (read_u64_at(d, "cu_occupancy", &v)) {
			a->have_cu_occupancy = true;
			a->cu_occupancy += v;
		}
	} else {
		bool any = false;
		if (read_u64_at(d, "faults", &v))
			a->kfd_faults += v, any = true;
		if (read_u64_at(d, "page_in", &v))
			a->kfd_page_in += v, any = true;
		if (read_u64_at(d, "page_out", &v))
			a->kfd_page_out += v, any = true;
		if (any)
			a->have_kfd_faults = true;
	}
	close(d);
}

void gp_kfd_act_read(const struct gp_root *root, int pid, double dt,
		     struct gp_kfd_state *st, struct gp_gpu_activity *a)
{
	char path[80];
	struct dirent *de;
	struct gp_kfd_gpu now[16];
	size_t nnow = 0;
	double sdma_us = 0;
	bool sdma_both = false;

	snprintf(path, sizeof path, "/sys/class/kfd/kfd/proc/%d", pid);
	int dfd = gp_open(root, path, O_DIRECTORY);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		int k = gp_open(root, "/sys/class/kfd/kfd/proc", O_DIRECTORY);
		if (k < 0)
			snprintf(a->why_kfd, sizeof a->why_kfd, "no /sys/class/kfd/kfd/proc (amdkfd not loaded)");
		else if (e == EACCES || e == EPERM)
			snprintf(a->why_kfd, sizeof a->why_kfd, "%s: %s", path, strerror(e));
		else
			snprintf(a->why_kfd, sizeof a->why_kfd, "no %s: not a KFD (ROCm) process", path);
		if (k >= 0)
			close(k);
		st->have_prev = false;
		return;
	}
	a->have_kfd = true;
	while ((de = readdir(dir))) {
		const char *id;
		uint64_t v;

		if ((id = gpuid_after(de->d_name, "stats_")) ||
		    (id = gpuid_after(de->d_name, "counters_")))
			kfd_stats_dir(dirfd(dir), de->d_name, id, a);
		else if ((id = gpuid_after(de->d_name, "sdma_")) &&
			 read_u64_at(dirfd(dir), de->d_name, &v)) {
			struct gp_kfd_gpu *n = kfd_slot(now, &nnow, 16, id);
			if (!n)
				continue;
			n->sdma_us = v;
			n->have_sdma = true;
			const struct gp_kfd_gpu *p = kfd_find(st->gpu, st->n, id);
			if (p && p->have_sdma && v >= p->sdma_us) {
				sdma_us += (double)(v - p->sdma_us);
				sdma_both = true;
			}
		}
	}
	closedir(dir);
	if (sdma_both && dt > 0) {
		a->have_sdma = true;
		a->sdma_busy_pct = sdma_us / (dt * 1e6) * 100.0;
	}
	if (st->have_prev && a->kfd_evicted_ms >= st->evicted_ms_prev)
		a->kfd_evicted_ms_delta = a->kfd_evicted_ms - st->evicted_ms_prev;
	st->evicted_ms_prev = a->kfd_evicted_ms;
	st->have_prev = true;
	memcpy(st->gpu, now, nnow * sizeof now[0]);
	st->n = nnow;
}


/* ---- memory (sample.gpu.kfd) ---- */


/* kfd_procfs_add_sysfs_files() creates, per GPU the process opened,
 * "vram_%u" (bytes of VRAM it allocated) and "sdma_%u" (SDMA busy time
 * in microseconds: the 100 MHz counter / SDMA_ACTIVITY_DIVISOR, kfd_priv.h)
 * with the gpu_id of the KFD topology; "pasid" beside them.  The
 * directory is named by the pid in the initial pid namespace. */
static void kfd_entry(int dfd, const char *name, json_t *kfd,
		      struct gp_gpu_totals *tot)
{
	const char *id;
	uint64_t v;

	if ((id = gpuid_after(name, "vram_"))) {
		if (!read_u64_at(dfd, name, &v))
			return;
		gp_json_set_u64(gp_json_child(kfd, "vram"), id, v);
		tot->kfd_vram_bytes = gp_sat_add(tot->kfd_vram_bytes, v);
	} else if ((id = gpuid_after(name, "sdma_"))) {
		/* Each read schedules a kernel work item that samples
		 * the SDMA counters (kfd_procfs_show): fine at 20 Hz. */
		if (read_u64_at(dfd, name, &v))
			gp_json_set_u64(gp_json_child(kfd, "sdma_us"), id, v);
	} else if (!strcmp(name, "pasid")) {
		if (read_u64_at(dfd, name, &v))
			gp_json_set_u64(kfd, "pasid", v);
	}
}

json_t *gp_kfd_mem_read(const struct gp_root *root, int pid, struct gp_gpu_totals *tot)
{
	char path[64];
	struct dirent *de;

	snprintf(path, sizeof path, "/sys/class/kfd/kfd/proc/%d", pid);
	int dfd = gp_open(root, path, O_DIRECTORY);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	json_t *kfd = json_object();
	gp_json_child(kfd, "vram");
	while ((de = readdir(dir)))
		kfd_entry(dirfd(dir), de->d_name, kfd, tot);
	closedir(dir);
	tot->kfd_seen = true;
	return kfd;
}

