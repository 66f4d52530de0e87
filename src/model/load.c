#include "config.h"
#include "load.h"
#include "gpumem.h"
#include "parse.h"
#include "verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t get_u64(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		return json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
	/* 2^64 and past: the cast would be undefined (tests/fuzz,
	 * regress/report/u64-real-max); NaN is not > 0. */
	if (json_is_real(v))
		return json_real_value(v) > 0 ? json_real_value(v) < 18446744073709551616.0
			? (uint64_t)json_real_value(v) : UINT64_MAX : 0;
	return 0;
}

static double get_num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static uint64_t get_hex(const json_t *v)
{
	uint64_t x = 0;
	if (json_is_string(v))
		gp_parse_x64(json_string_value(v), &x, NULL);
	else if (json_is_integer(v))
		x = (uint64_t)json_integer_value(v);
	return x;
}

static void set_syscall(const json_t *sc, int64_t *nr, uint64_t *a0, uint64_t *a1)
{
	*nr = -2;
	if (!json_is_object(sc))
		return;
	json_t *n = json_object_get(sc, "nr");
	if (!json_is_integer(n))
		return;
	*nr = json_integer_value(n);
	json_t *args = json_object_get(sc, "args");
	*a0 = get_hex(json_array_get(args, 0));
	*a1 = get_hex(json_array_get(args, 1));
}

static void copy_str(char *dst, size_t cap, const json_t *v)
{
	gp_strlcpy(dst, json_is_string(v) ? json_string_value(v) : "", cap);
}

enum { SLOTS = 32 };

static void threads_into_point(const json_t *threads, bool first, struct gp_point *pt,
			       bool *kstack_seen)
{
	const json_t *top = NULL, *top2 = NULL;
	double best = -1, second = -1;
	const char *wname[SLOTS];
	uint32_t wcount[SLOTS];
	size_t wused = 0;
	int64_t scnr[SLOTS];
	uint64_t sca0[SLOTS], sca1[SLOTS];
	uint32_t sccount[SLOTS];
	size_t scused = 0;
	size_t i;
	json_t *th;
	json_array_foreach(threads, i, th) {
		pt->threads++;
		const char *state = json_string_value(json_object_get(th, "state"));
		char st = state ? state[0] : '?';
		if (st == 'R')
			pt->running++;
		else if (st == 'D')
			pt->blocked_d++;
		pt->vcsw += get_u64(th, "voluntary");
		pt->nvcsw += get_u64(th, "involuntary");
		if (json_object_get(th, "wchan"))
			pt->have |= GP_PT_WCHAN;
		json_t *sc = json_object_get(th, "syscall");
		if (sc)
			pt->have |= GP_PT_SYSCALL;
		if (json_object_get(th, "kernel"))
			*kstack_seen = true;
		if (!first && json_is_true(json_object_get(th, "new")))
			pt->threads_created++;
		json_t *cpu = json_object_get(th, "cpu_pct");
		if (json_is_number(cpu)) {
			double c = json_number_value(cpu);
			if (c > best) {
				second = best;
				top2 = top;
				best = c;
				top = th;
			} else if (c > second) {
				second = c;
				top2 = th;
			}
		}
		if (st == 'R')
			continue;
		const char *w = json_string_value(json_object_get(th, "wchan"));
		if (w && *w) {
			size_t k = 0;
			while (k < wused && strcmp(wname[k], w) != 0)
				k++;
			if (k == wused && wused < SLOTS) {
				wname[wused] = w;
				wcount[wused++] = 0;
			}
			if (k < wused)
				wcount[k]++;
		}
		int64_t nr;
		uint64_t a0 = 0, a1 = 0;
		set_syscall(sc, &nr, &a0, &a1);
		if (nr >= 0) {
			size_t k = 0;
			while (k < scused && !(scnr[k] == nr && sca1[k] == a1))
				k++;
			if (k == scused && scused < SLOTS) {
				scnr[scused] = nr;
				sca0[scused] = a0;
				sca1[scused] = a1;
				sccount[scused++] = 0;
			}
			if (k < scused)
				sccount[k]++;
		}
	}
	for (size_t k = 0; k < wused; k++)
		if (wcount[k] > pt->common_wchan_count) {
			pt->common_wchan_count = wcount[k];
			gp_strlcpy(pt->common_wchan, wname[k], sizeof pt->common_wchan);
		}
	pt->common_sc_nr = -2;
	for (size_t k = 0; k < scused; k++)
		if (sccount[k] > pt->common_sc_count) {
			pt->common_sc_count = sccount[k];
			pt->common_sc_nr = scnr[k];
			pt->common_sc_arg0 = sca0[k];
			pt->common_sc_arg1 = sca1[k];
		}
	pt->top_sc_nr = -2;
	if (top && best > 0) {
		pt->top_tid = (int32_t)get_u64(top, "tid");
		pt->top_cpu_pct = (float)best;
		pt->top_sys_pct = (float)get_num(top, "sys_pct");
		copy_str(pt->top_comm, sizeof pt->top_comm, json_object_get(top, "comm"));
		copy_str(pt->top_wchan, sizeof pt->top_wchan, json_object_get(top, "wchan"));
		json_t *sc = json_object_get(top, "syscall");
		set_syscall(sc, &pt->top_sc_nr, &pt->top_sc_arg0, &pt->top_sc_arg1);
	}
	if (top2 && second > 0) {
		pt->top2_tid = (int32_t)get_u64(top2, "tid");
		pt->top2_cpu_pct = (float)second;
		pt->top2_sys_pct = (float)get_num(top2, "sys_pct");
		copy_str(pt->top2_comm, sizeof pt->top2_comm, json_object_get(top2, "comm"));
	}
}

static void gpu_into_point(const json_t *gpu, struct gp_point *pt)
{
	if (!json_is_object(gpu))
		return;
	struct gp_gpu_totals tot;
	memset(&tot, 0, sizeof tot);
	json_t *drm = json_object_get(gpu, "drm");
	size_t i;
	json_t *c;
	json_array_foreach(drm, i, c)
		gp_fdinfo_add_totals(c, &tot);
	pt->gpu_gtt = tot.gtt_bytes;
	pt->gpu_vram = tot.vram_bytes;
	pt->gpu_engine_ns = tot.engine_ns;
	json_t *kfd = json_object_get(gpu, "kfd");
	uint64_t kfd_vram = 0;
	const char *key;
	json_t *v;
	json_object_foreach(json_object_get(kfd, "vram"), key, v)
		kfd_vram += json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	json_t *nvml = json_object_get(gpu, "nvml");
	uint64_t nv = 0;
	json_array_foreach(nvml, i, c)
		nv += get_u64(c, "used_bytes");
	/* The sampler's precedence (tracer/sampler.c): DRM, else KFD, else NVML. */
	if (json_array_size(drm)) {
		pt->gpu_bytes = tot.drm_total_bytes;
		pt->have |= GP_PT_GPU_DRM;
	} else if (kfd) {
		pt->gpu_bytes = kfd_vram;
	} else if (nvml) {
		pt->gpu_bytes = nv;
	}
	if (kfd)
		pt->have |= GP_PT_GPU_KFD;
	if (nvml)
		pt->have |= GP_PT_GPU_NVML;
}

void gp_point_from_sample(const json_t *s, bool first, struct gp_point *pt, bool *kstack_seen)
{
	memset(pt, 0, sizeof *pt);
	pt->t = get_num(s, "t");
	json_t *proc = json_object_get(s, "proc");
	const char *state = json_string_value(json_object_get(proc, "state"));
	pt->state = state ? state[0] : '?';
	pt->utime = get_num(proc, "utime");
	pt->stime = get_num(proc, "stime");
	pt->minflt = get_u64(proc, "minflt");
	pt->majflt = get_u64(proc, "majflt");
	pt->rss_file = get_u64(proc, "rss_file");
	pt->rss_anon = get_u64(proc, "rss_anon");
	pt->rss_shmem = get_u64(proc, "rss_shmem");
	pt->vm_pin = get_u64(proc, "vm_pin");
	pt->vm_lck = get_u64(proc, "vm_lck");
	pt->map_bytes = get_u64(json_object_get(proc, "largest_file_mapping"), "bytes");
	json_t *io = json_object_get(proc, "io");
	if (json_is_object(io)) {
		pt->have |= GP_PT_IO;
		pt->io_rchar = get_u64(io, "rchar");
		pt->io_wchar = get_u64(io, "wchar");
		pt->io_read_bytes = get_u64(io, "read_bytes");
		pt->io_write_bytes = get_u64(io, "write_bytes");
		pt->io_syscr = get_u64(io, "syscr");
		pt->io_syscw = get_u64(io, "syscw");
	}
	threads_into_point(json_object_get(s, "threads"), first, pt, kstack_seen);
	gpu_into_point(json_object_get(s, "gpu"), pt);
	json_t *vmstat = json_object_get(json_object_get(s, "vm"), "vmstat");
	if (json_object_get(vmstat, "nr_dirtied") && json_object_get(vmstat, "nr_written")) {
		pt->have |= GP_PT_SYS_WB;
		pt->sys_dirtied = get_u64(vmstat, "nr_dirtied");
		pt->sys_written = get_u64(vmstat, "nr_written");
	}
	if (json_object_get(vmstat, "pgsteal_file")) {
		pt->have |= GP_PT_SYS_RECLAIM;
		pt->sys_pgsteal_file = get_u64(vmstat, "pgsteal_file");
	}
	/* CPU% of the process is the sampler's, from consecutive samples: the
	 * loader fills it in gp_load_result. */
}

bool gp_stacks_top_frame(const json_t *stacks, int tid, char *buf, size_t cap)
{
	size_t i;
	json_t *th;
	json_array_foreach(json_object_get(stacks, "threads"), i, th) {
		if (json_integer_value(json_object_get(th, "tid")) != tid)
			continue;
		json_t *f = json_array_get(json_object_get(th, "frames"), 0);
		if (!f)
			return false;
		const char *sym = json_string_value(json_object_get(f, "symbol"));
		if (sym) {
			gp_strlcpy(buf, sym, cap);
			return true;
		}
		const char *mod = json_string_value(json_object_get(f, "module"));
		const char *off = json_string_value(json_object_get(f, "offset"));
		if (!mod)
			return false;
		const char *base = strrchr(mod, '/');
		snprintf(buf, cap, "%s+%s", base ? base + 1 : mod, off ? off : "?");
		return true;
	}
	return false;
}

static void keep(json_t **slot, json_t *line)
{
	json_decref(*slot);
	*slot = json_incref(line);
}

int gp_load_result(const char *path, struct gp_loaded *out, char *err, size_t errcap)
{
	memset(out, 0, sizeof *out);
	out->page_size = 4096;
	out->fd = -1;
	/* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errcap, "%s", strerror(errno));
		return -1;
	}
	struct stat sb;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, errcap, "not a regular file");
		close(fd);
		return -1;
	}
	if (sb.st_size == 0) {
		/* Size 0 is an empty file -- or a /proc or /sys one, which
		 * reads data all the same: read and judge what it holds. */
		char c;
		ssize_t k = read(fd, &c, 1);
		if (k <= 0 || lseek(fd, 0, SEEK_SET) != 0) {
			if (k == 0)
				snprintf(err, errcap, "empty file: not a gpuprobe result");
			else
				snprintf(err, errcap, "not a gpuprobe result (%s)",
					 k < 0 ? strerror(errno) : "cannot read it from the start");
			close(fd);
			return -1;
		}
	}
	out->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	FILE *f = out->fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		snprintf(err, errcap, "%s", strerror(errno));
		close(fd);
		if (out->fd >= 0)
			close(out->fd);
		out->fd = -1;
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	bool first_sample = true;
	char why[200] = "no header line";
	while ((len = getline(&line, &cap, f)) > 0) {
		out->lines++;
		bool terminated = line[len - 1] == '\n';
		if (terminated)
			out->bytes += (unsigned long long)len;
		json_error_t jerr;
		json_t *j = json_loadb(line, (size_t)len, 0, &jerr);
		if (!j || !terminated) {
			/* A killed run leaves at most one cut line, at the end. */
			json_decref(j);
			if (!terminated) {
				out->truncated = true;
				break;
			}
			out->bad_lines++;
			if (out->lines == 1) {
				/* Say why line 1 is no header: jansson's reason, bytes
				 * of the file in it made printable (one line). */
				snprintf(why, sizeof why, "line 1 is not JSON: %s", jerr.text);
				for (char *c = why; *c; c++)
					if ((unsigned char)*c < 0x20 || *c == 0x7f)
						*c = '?';
				break;
			}
			continue;
		}
		const char *type = json_string_value(json_object_get(j, "type"));
		if (out->lines == 1 && (!type || strcmp(type, "header") != 0
					|| !json_object_get(j, "gpuprobe"))) {
			json_decref(j);
			out->bad_lines++;
			break;
		}
		if (!type) {
			out->bad_lines++;
		} else if (!strcmp(type, "header")) {
			keep(&out->header, j);
			json_t *ps = json_object_get(json_object_get(j, "host"), "page_size");
			if (json_is_integer(ps) && json_integer_value(ps) > 0)
				out->page_size = (long)json_integer_value(ps);
		} else if (!strcmp(type, "target")) {
			keep(&out->target, j);
		} else if (!strcmp(type, "exit")) {
			keep(&out->exit, j);
		} else if (!strcmp(type, "verdict")) {
			keep(&out->verdict, j);
		} else if (!strcmp(type, "stacks") && out->series.n) {
			struct gp_point *last = &out->series.pt[out->series.n - 1];
			if (last->top_tid)
				gp_stacks_top_frame(j, last->top_tid, last->top_frame, sizeof last->top_frame);
			if (last->top2_tid)
				gp_stacks_top_frame(j, last->top2_tid, last->top2_frame, sizeof last->top2_frame);
		} else if (!strcmp(type, "sample")) {
			struct gp_point pt;
			gp_point_from_sample(j, first_sample, &pt, &out->kstacks_seen);
			if (out->series.n) {
				const struct gp_point *prev = &out->series.pt[out->series.n - 1];
				double dt = pt.t - prev->t;
				double d = (pt.utime + pt.stime) - (prev->utime + prev->stime);
				if (dt > 0 && d >= 0)
					pt.cpu_pct = (float)(100.0 * d / dt);
			}
			first_sample = false;
			if (gp_series_push(&out->series, &pt) < 0) {
				json_decref(j);
				snprintf(err, errcap, "out of memory");
				free(line);
				fclose(f);
				gp_loaded_free(out);
				return -1;
			}
		}
		json_decref(j);
	}
	free(line);
	bool read_error = ferror(f);
	fclose(f);
	if (!out->header) {
		snprintf(err, errcap, "not a gpuprobe result (%s)", why);
		gp_loaded_free(out);
		return -1;
	}
	if (read_error) {
		snprintf(err, errcap, "read error");
		gp_loaded_free(out);
		return -1;
	}
	return 0;
}

void gp_loaded_free(struct gp_loaded *l)
{
	gp_series_free(&l->series);
	json_decref(l->header);
	json_decref(l->target);
	json_decref(l->exit);
	json_decref(l->verdict);
	l->header = l->target = l->exit = l->verdict = NULL;
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

void gp_loaded_verdict_opts(const struct gp_loaded *l, struct gp_verdict_opts *vo)
{
	vo->page_size = l->page_size;
	vo->kstacks_seen = l->kstacks_seen;
	if (vo->hang_after <= 0) {
		json_t *h = json_object_get(l->verdict, "hang_after_s");
		vo->hang_after = json_is_number(h) ? json_number_value(h) : GP_VERDICT_HANG_AFTER_DEFAULT;
	}
	json_t *st = json_object_get(l->exit, "status"), *sg = json_object_get(l->exit, "signal");
	vo->end_reason = json_string_value(json_object_get(l->exit, "reason"));
	vo->have_status = json_is_integer(st) || json_is_integer(sg);
	vo->status = json_is_integer(st) ? (int)json_integer_value(st) : 0;
	vo->signal = json_is_integer(sg) ? (int)json_integer_value(sg) : 0;
}
