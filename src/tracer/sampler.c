#include "config.h"
#include "sampler.h"
#include "gpumem.h"
#include "parse.h"
#include "procstat.h"
#include "jsonw.h"
#include "result.h"
#include "sysinfo.h"
#include "tasks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { P_STAT, P_STATUS, P_IO, P_COUNT };

struct gp_sampler {
	struct gp_sampler_opts o;
	struct gp_tasks *tasks;
	struct gp_gpu_reader *gpu;
	struct gp_sys_reader *sys;
	int fd[P_COUNT];          /* the process's own files, kept open */
	uint64_t starttime;       /* identity: a kept fd of a dead pid reads ESRCH */
	double clk_tck;
	double prev_t;
	double prev_cpu_s;
	bool have_prev;
	struct gp_sampler_totals tot;
	struct gp_jsonw jw;       /* the threads array of the current sample */
	const struct gp_thread *last_threads; /* the last sample's, owned by tasks */
	size_t nlast_threads;
	bool maps_checked;
	uint64_t maps_rss, map_bytes;
	char map_path[512];
	char buf[8192];
};

static int open_proc_file(const struct gp_root *root, int pid, const char *name)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
	return gp_open(root, path, 0);
}

struct gp_sampler *gp_sampler_new(const struct gp_sampler_opts *o)
{
	struct gp_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->o = *o;
	for (int i = 0; i < P_COUNT; i++)
		s->fd[i] = -1;
	s->clk_tck = (double)sysconf(_SC_CLK_TCK);
	static const char *const names[P_COUNT] = { "stat", "status", "io" };
	for (int i = 0; i < P_COUNT; i++)
		s->fd[i] = open_proc_file(o->root, o->pid, names[i]);
	struct gp_stat st;
	if (s->fd[P_STAT] < 0 || gp_pread_all(s->fd[P_STAT], s->buf, sizeof s->buf) <= 0
	    || !gp_parse_stat(s->buf, &st)) {
		int saved = errno ? errno : ESRCH;
		gp_sampler_free(s);
		errno = saved;
		return NULL;
	}
	s->starttime = st.starttime;
	if (s->fd[P_IO] < 0)
		s->tot.io_denied = true;
	unsigned tflags = (o->kstacks ? GP_TASKS_KSTACK : 0) | (o->reopen ? GP_TASKS_REOPEN : 0);
	s->tasks = gp_tasks_new(o->root, o->pid, tflags);
	s->gpu = gp_gpu_reader_new(o->root, o->pid, o->no_nvml ? GP_GPU_NO_NVML : 0);
	s->sys = gp_sys_reader_new(o->root);
	if (!s->tasks || !s->sys) {
		int saved = errno ? errno : ENOMEM;
		gp_sampler_free(s);
		errno = saved;
		return NULL;
	}
	return s;
}

void gp_sampler_free(struct gp_sampler *s)
{
	if (!s)
		return;
	gp_tasks_free(s->tasks);
	if (s->gpu)
		gp_gpu_reader_free(s->gpu);
	gp_sys_reader_free(s->sys);
	gp_jw_free(&s->jw);
	for (int i = 0; i < P_COUNT; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	free(s);
}

const char *gp_sampler_threads_json(const struct gp_sampler *s, size_t *len)
{
	if (s->jw.oom || !s->jw.buf) {
		*len = 4;
		return "null";
	}
	*len = s->jw.len;
	return s->jw.buf;
}

const struct gp_thread *gp_sampler_threads(const struct gp_sampler *s, size_t *n)
{
	*n = s->nlast_threads;
	return s->last_threads;
}

void gp_sampler_totals(const struct gp_sampler *s, struct gp_sampler_totals *tot)
{
	*tot = s->tot;
}

static void syscall_write(struct gp_jsonw *w, const struct gp_syscall *sc)
{
	switch (sc->kind) {
	case GP_SC_RUNNING:
		gp_jw_key(w, "syscall");
		gp_jw_str(w, "running");
		break;
	case GP_SC_USER:
	case GP_SC_IN:
		gp_jw_key(w, "syscall");
		gp_jw_obj_begin(w);
		gp_jw_key(w, "nr");
		gp_jw_int(w, sc->kind == GP_SC_USER ? -1 : sc->nr);
		if (sc->kind == GP_SC_IN) {
			gp_jw_key(w, "args");
			gp_jw_arr_begin(w);
			for (int i = 0; i < 6; i++)
				gp_jw_hex(w, sc->args[i]);
			gp_jw_arr_end(w);
		}
		gp_jw_key(w, "sp");
		gp_jw_hex(w, sc->sp);
		gp_jw_key(w, "pc");
		gp_jw_hex(w, sc->pc);
		gp_jw_obj_end(w);
		break;
	default:
		break;
	}
}

/* "[<0>] futex_wait_queue+0x60/0xa0\n..." -> ["futex_wait_queue+0x60/0xa0", ...] */
static void kstack_write(struct gp_jsonw *w, const char *text)
{
	char frame[256];
	gp_jw_key(w, "kernel");
	gp_jw_arr_begin(w);
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		const char *f = p;
		if (*f == '[') {
			const char *rb = memchr(f, ']', len);
			if (rb) {
				f = rb + 1;
				while (*f == ' ')
					f++;
			}
		}
		size_t flen = len - (size_t)(f - p);
		if (flen) {
			if (flen >= sizeof frame)
				flen = sizeof frame - 1;
			memcpy(frame, f, flen);
			frame[flen] = '\0';
			gp_jw_str(w, frame);
		}
		p = eol ? eol + 1 : p + len;
	}
	gp_jw_arr_end(w);
}

/* CPU% of one thread over the interval.  schedstat's run time is exact
 * (ns); utime/stime are sampled at the tick (10 ms at HZ=100), so they
 * only split it into user and system. */
static void thread_cpu(const struct gp_thread *th, double clk, double dt,
		       double *cpu, double *sys)
{
	double ticks = (double)(th->d_utime + th->d_stime);
	if (th->have_sched) {
		*cpu = 100.0 * (double)th->d_run_ns / 1e9 / dt;
		*sys = ticks > 0 ? *cpu * (double)th->d_stime / ticks : 0;
	} else {
		*cpu = 100.0 * ticks / clk / dt;
		*sys = 100.0 * (double)th->d_stime / clk / dt;
	}
}

static void thread_write(struct gp_jsonw *w, const struct gp_thread *th, double clk, double dt)
{
	gp_jw_obj_begin(w);
	gp_jw_key(w, "tid");
	gp_jw_int(w, th->tid);
	gp_jw_key(w, "comm");
	gp_jw_str(w, th->st.comm);
	char state[2] = { th->st.state, 0 };
	gp_jw_key(w, "state");
	gp_jw_str(w, state);
	if (th->have_wchan) {
		gp_jw_key(w, "wchan");
		gp_jw_str(w, th->wchan);
	}
	gp_jw_key(w, "utime");
	gp_jw_real(w, (double)th->st.utime / clk);
	gp_jw_key(w, "stime");
	gp_jw_real(w, (double)th->st.stime / clk);
	if (!th->is_new && dt > 0) {
		double cpu, sys;
		thread_cpu(th, clk, dt, &cpu, &sys);
		gp_jw_key(w, "cpu_pct");
		gp_jw_real(w, cpu);
		gp_jw_key(w, "sys_pct");
		gp_jw_real(w, sys);
	}
	if (th->have_sched) {
		gp_jw_key(w, "run_ns");
		gp_jw_uint(w, th->run_ns);
		gp_jw_key(w, "wait_ns");
		gp_jw_uint(w, th->wait_ns);
	}
	gp_jw_key(w, "minflt");
	gp_jw_uint(w, th->st.minflt);
	gp_jw_key(w, "majflt");
	gp_jw_uint(w, th->st.majflt);
	gp_jw_key(w, "processor");
	gp_jw_int(w, th->st.processor);
	gp_jw_key(w, "starttime");
	gp_jw_uint(w, th->st.starttime);
	if (th->have_ctxt) {
		gp_jw_key(w, "voluntary");
		gp_jw_uint(w, th->vcsw);
		gp_jw_key(w, "involuntary");
		gp_jw_uint(w, th->nvcsw);
	}
	syscall_write(w, &th->sc);
	if (th->kstack)
		kstack_write(w, th->kstack);
	if (th->is_new) {
		gp_jw_key(w, "new");
		gp_jw_bool(w, true);
	}
	if (th->unchanged) {
		gp_jw_key(w, "unchanged");
		gp_jw_bool(w, true);
	}
	gp_jw_obj_end(w);
}

/* Where the sleeping threads wait: the most frequent wchan and the most
 * frequent syscall (with its first arguments).  A process has few
 * distinct wait points, so small tables count them in one pass. */
enum { WAIT_SLOTS = 32 };

static void common_wait(const struct gp_thread *th, size_t n, struct gp_point *pt)
{
	const char *name[WAIT_SLOTS];
	uint32_t count[WAIT_SLOTS], sc_count[WAIT_SLOTS];
	const struct gp_syscall *sc[WAIT_SLOTS];
	size_t used = 0, sc_used = 0;
	for (size_t i = 0; i < n; i++) {
		if (th[i].st.state == 'R')
			continue;
		if (th[i].wchan[0]) {
			size_t k = 0;
			while (k < used && strcmp(name[k], th[i].wchan) != 0)
				k++;
			if (k == used && used < WAIT_SLOTS) {
				name[used] = th[i].wchan;
				count[used++] = 0;
			}
			if (k < used)
				count[k]++;
		}
		if (th[i].sc.kind == GP_SC_IN) {
			size_t k = 0;
			while (k < sc_used && !(sc[k]->nr == th[i].sc.nr
						&& sc[k]->args[1] == th[i].sc.args[1]))
				k++;
			if (k == sc_used && sc_used < WAIT_SLOTS) {
				sc[sc_used] = &th[i].sc;
				sc_count[sc_used++] = 0;
			}
			if (k < sc_used)
				sc_count[k]++;
		}
	}
	for (size_t k = 0; k < used; k++) {
		if (count[k] > pt->common_wchan_count) {
			pt->common_wchan_count = count[k];
			gp_strlcpy(pt->common_wchan, name[k], sizeof pt->common_wchan);
		}
	}
	pt->common_sc_nr = -2;
	for (size_t k = 0; k < sc_used; k++) {
		if (sc_count[k] > pt->common_sc_count) {
			pt->common_sc_count = sc_count[k];
			pt->common_sc_nr = sc[k]->nr;
			pt->common_sc_arg0 = sc[k]->args[0];
			pt->common_sc_arg1 = sc[k]->args[1];
		}
	}
}

static enum gp_sample_rc process_files(struct gp_sampler *s, json_t *proc,
				       struct gp_point *pt, const char **why)
{
	struct gp_stat st;
	if (gp_pread_all(s->fd[P_STAT], s->buf, sizeof s->buf) <= 0
	    || !gp_parse_stat(s->buf, &st)) {
		*why = "exited";
		return GP_SAMPLE_GONE;
	}
	if (st.starttime != s->starttime) {
		*why = "pid reused";
		return GP_SAMPLE_GONE;
	}
	/* A zombie leader whose other threads still run (main called
	 * pthread_exit) is alive: only a zombie with no thread left has
	 * exited.  Status' Threads counts the live ones. */
	bool zombie = st.state == 'Z' || st.state == 'X';
	pt->state = st.state;
	pt->utime = (double)st.utime / s->clk_tck;
	pt->stime = (double)st.stime / s->clk_tck;
	pt->minflt = st.minflt;
	pt->majflt = st.majflt;
	char state[2] = { st.state, 0 };
	json_object_set_new(proc, "state", json_string(state));
	json_object_set_new(proc, "utime", json_real((double)st.utime / s->clk_tck));
	json_object_set_new(proc, "stime", json_real((double)st.stime / s->clk_tck));
	json_object_set_new(proc, "minflt", json_integer((json_int_t)st.minflt));
	json_object_set_new(proc, "majflt", json_integer((json_int_t)st.majflt));

	struct gp_status_mem m;
	bool have_status = gp_pread_all(s->fd[P_STATUS], s->buf, sizeof s->buf) > 0
			   && gp_parse_status_mem(s->buf, &m);
	if (zombie && (!have_status || !(m.have & GP_HAVE_THREADS) || m.threads <= 1)) {
		*why = "exited"; /* not yet reaped by its parent */
		return GP_SAMPLE_GONE;
	}
	if (have_status) {
		static const struct {
			const char *key;
			size_t off;
			unsigned bit;
		} mem[] = {
			{ "rss_anon", offsetof(struct gp_status_mem, rss_anon), GP_HAVE_RSS_ANON },
			{ "rss_file", offsetof(struct gp_status_mem, rss_file), GP_HAVE_RSS_FILE },
			{ "rss_shmem", offsetof(struct gp_status_mem, rss_shmem), GP_HAVE_RSS_SHMEM },
			{ "vm_lck", offsetof(struct gp_status_mem, vm_lck), GP_HAVE_VM_LCK },
			{ "vm_pin", offsetof(struct gp_status_mem, vm_pin), GP_HAVE_VM_PIN },
			{ "vm_rss", offsetof(struct gp_status_mem, vm_rss), GP_HAVE_VM_RSS },
			{ "vm_hwm", offsetof(struct gp_status_mem, vm_hwm), GP_HAVE_VM_HWM },
			{ "vm_size", offsetof(struct gp_status_mem, vm_size), GP_HAVE_VM_SIZE },
		};
		for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
			if (m.have & mem[i].bit)
				json_object_set_new(proc, mem[i].key, json_integer(
					(json_int_t)*(uint64_t *)((char *)&m + mem[i].off)));
		if (m.have & GP_HAVE_THREADS)
			json_object_set_new(proc, "threads", json_integer(m.threads));
		pt->rss_file = m.rss_file;
		pt->rss_anon = m.rss_anon;
		pt->rss_shmem = m.rss_shmem;
		pt->vm_pin = m.vm_pin;
		pt->vm_lck = m.vm_lck;
	}
	struct gp_io io;
	if (s->fd[P_IO] >= 0 && gp_pread_all(s->fd[P_IO], s->buf, sizeof s->buf) > 0
	    && gp_parse_io(s->buf, &io)) {
		json_object_set_new(proc, "io", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"rchar", (json_int_t)io.rchar, "wchar", (json_int_t)io.wchar,
			"syscr", (json_int_t)io.syscr, "syscw", (json_int_t)io.syscw,
			"read_bytes", (json_int_t)io.read_bytes, "write_bytes", (json_int_t)io.write_bytes,
			"cancelled_write_bytes", (json_int_t)io.cancelled_write_bytes));
		pt->io_rchar = io.rchar;
		pt->io_wchar = io.wchar;
		pt->io_read_bytes = io.read_bytes;
		pt->io_write_bytes = io.write_bytes;
		pt->io_syscr = io.syscr;
		pt->io_syscw = io.syscw;
		pt->have |= GP_PT_IO;
	}
	return GP_SAMPLE_OK;
}

/* The largest file mapped by the process (summed over its mappings):
 * when RssFile climbs, this is what is being paged in, and its size
 * gives the verdict an ETA.  /proc/PID/maps costs ~1 us a mapping, so it
 * is read again only when RssFile has grown by 16 MiB since. */
static void largest_file_mapping(struct gp_sampler *s, json_t *proc, struct gp_point *pt)
{
	if (s->maps_checked && pt->rss_file < s->maps_rss + (16u << 20)) {
		pt->map_bytes = s->map_bytes;
		if (s->map_bytes)
			json_object_set_new(proc, "largest_file_mapping", json_pack("{s:s, s:I}",
				"path", s->map_path, "bytes", (json_int_t)s->map_bytes));
		return;
	}
	s->maps_checked = true;
	s->maps_rss = pt->rss_file;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", s->o.pid);
	char *text = gp_slurp(s->o.root, path, NULL);
	if (!text)
		return;
	char best[sizeof s->map_path] = "";
	uint64_t best_bytes = 0, cur_bytes = 0;
	char cur[sizeof s->map_path] = "";
	for (char *line = text; line && *line;) {
		char *eol = strchr(line, '\n');
		if (eol)
			*eol = '\0';
		unsigned long long lo, hi, ino;
		int name_at = 0;
		if (sscanf(line, "%llx-%llx %*s %*s %*s %llu %n", &lo, &hi, &ino, &name_at) == 3
		    && ino != 0 && name_at > 0 && line[name_at] == '/' && hi > lo) {
			const char *name = line + name_at;
			/* Mappings of one file are adjacent in maps. */
			if (strcmp(name, cur) != 0) {
				gp_strlcpy(cur, name, sizeof cur);
				cur_bytes = 0;
			}
			cur_bytes += hi - lo;
			if (cur_bytes > best_bytes) {
				best_bytes = cur_bytes;
				gp_strlcpy(best, cur, sizeof best);
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	free(text);
	s->map_bytes = best_bytes;
	memcpy(s->map_path, best, sizeof best);
	pt->map_bytes = best_bytes;
	if (best_bytes)
		json_object_set_new(proc, "largest_file_mapping", json_pack("{s:s, s:I}",
			"path", best, "bytes", (json_int_t)best_bytes));
}

static void threads_part(struct gp_sampler *s, json_t *line, struct gp_point *pt,
			 struct gp_thread *th, size_t n, const struct gp_tasks_stats *ts, double dt)
{
	struct gp_jsonw *w = &s->jw;
	gp_jw_reset(w);
	gp_jw_arr_begin(w);
	double best = 0, best_sys = 0, second = 0, second_sys = 0;
	const struct gp_thread *top = NULL, *top2 = NULL;
	for (size_t i = 0; i < n; i++) {
		thread_write(w, &th[i], s->clk_tck, dt);
		pt->vcsw += th[i].vcsw;
		pt->nvcsw += th[i].nvcsw;
		if (th[i].st.state == 'R')
			pt->running++;
		else if (th[i].st.state == 'D')
			pt->blocked_d++;
		double cpu = 0, sys = 0;
		if (!th[i].is_new && dt > 0)
			thread_cpu(&th[i], s->clk_tck, dt, &cpu, &sys);
		th[i].cpu_pct = (float)cpu;
		if (cpu > best) {
			second = best;
			second_sys = best_sys;
			top2 = top;
			best = cpu;
			best_sys = sys;
			top = &th[i];
		} else if (cpu > second) {
			second = cpu;
			second_sys = sys;
			top2 = &th[i];
		}
		if (th[i].kstack)
			s->tot.kstacks_read++;
	}
	gp_jw_arr_end(w);
	if (ts->vanished)
		json_object_set_new(line, "threads_vanished", json_integer(ts->vanished));
	if (ts->reused)
		json_object_set_new(line, "tids_reused", json_integer(ts->reused));
	pt->threads = (uint32_t)n;
	pt->threads_created = ts->created;
	pt->threads_exited = ts->exited;
	pt->threads_vanished = ts->vanished;
	pt->top_sc_nr = -2;
	if (top && dt > 0) {
		pt->top_tid = top->tid;
		pt->top_cpu_pct = (float)best;
		pt->top_sys_pct = (float)best_sys;
		if (top2) {
			pt->top2_tid = top2->tid;
			pt->top2_cpu_pct = (float)second;
			pt->top2_sys_pct = (float)second_sys;
			gp_strlcpy(pt->top2_comm, top2->st.comm, sizeof pt->top2_comm);
		}
		gp_strlcpy(pt->top_comm, top->st.comm, sizeof pt->top_comm);
		gp_strlcpy(pt->top_wchan, top->wchan, sizeof pt->top_wchan);
		if (top->sc.kind == GP_SC_IN) {
			pt->top_sc_nr = top->sc.nr;
			pt->top_sc_arg0 = top->sc.args[0];
			pt->top_sc_arg1 = top->sc.args[1];
		} else if (top->sc.kind == GP_SC_USER) {
			pt->top_sc_nr = -1;
		}
	}
	common_wait(th, n, pt);
	if (!ts->wchan_denied)
		pt->have |= GP_PT_WCHAN;
	if (!ts->syscall_denied)
		pt->have |= GP_PT_SYSCALL;
	if (s->o.kstacks && !ts->kstack_denied)
		pt->have |= GP_PT_KSTACK;
	s->tot.kstack_denied = ts->kstack_denied;
	s->tot.syscall_denied = ts->syscall_denied;
}

enum gp_sample_rc gp_sampler_take(struct gp_sampler *s, double t, json_t **linep,
				  struct gp_point *pt, const char **why)
{
	memset(pt, 0, sizeof *pt);
	*linep = NULL;
	*why = NULL;
	pt->t = t;
	json_t *line = json_object();
	json_object_set_new(line, "type", json_string("sample"));
	json_object_set_new(line, "t", json_real(t));
	json_t *proc = json_object();
	enum gp_sample_rc rc = process_files(s, proc, pt, why);
	if (rc != GP_SAMPLE_OK) {
		json_decref(proc);
		json_decref(line);
		return rc;
	}
	double dt = s->have_prev ? t - s->prev_t : 0;
	double cpu_s = pt->utime + pt->stime;
	if (s->have_prev && dt > 0 && cpu_s >= s->prev_cpu_s)
		pt->cpu_pct = (float)(100.0 * (cpu_s - s->prev_cpu_s) / dt);
	largest_file_mapping(s, proc, pt);
	json_object_set_new(line, "proc", proc);

	struct gp_thread *th;
	size_t n;
	struct gp_tasks_stats ts;
	if (gp_tasks_sample(s->tasks, &th, &n, &ts) < 0) {
		json_decref(line);
		*why = "exited";
		return GP_SAMPLE_GONE;
	}
	threads_part(s, line, pt, th, n, &ts, dt);
	s->last_threads = th;
	s->nlast_threads = n;
	s->tot.thread_samples += n;
	s->tot.vanished += ts.vanished;
	s->tot.reused += ts.reused;
	s->tot.created += s->tot.samples ? ts.created : 0;
	s->tot.exited += ts.exited;

	if (s->gpu) {
		json_t *gpu = NULL;
		struct gp_gpu_totals gt;
		memset(&gt, 0, sizeof gt);
		if (gp_gpu_read(s->gpu, &gpu, &gt) == 0 && gpu)
			json_object_set_new(line, "gpu", gpu);
		pt->gpu_gtt = gt.gtt_bytes;
		pt->gpu_vram = gt.vram_bytes;
		pt->gpu_engine_ns = gt.engine_ns;
		if (gt.drm_seen) {
			pt->gpu_bytes = gt.drm_total_bytes;
			pt->have |= GP_PT_GPU_DRM;
		} else if (gt.kfd_seen) {
			pt->gpu_bytes = gt.kfd_vram_bytes;
		} else if (gt.nvml_seen) {
			pt->gpu_bytes = gt.nvml_bytes;
		}
		if (gt.kfd_seen)
			pt->have |= GP_PT_GPU_KFD;
		if (gt.nvml_seen)
			pt->have |= GP_PT_GPU_NVML;
	}
	struct gp_sys_compact sc;
	json_object_set_new(line, "vm", gp_sys_read(s->sys, &sc));
	pt->sys_dirtied = sc.nr_dirtied;
	pt->sys_written = sc.nr_written;
	pt->sys_pgsteal_file = sc.pgsteal_file;
	if (sc.have_dirtied && sc.have_written)
		pt->have |= GP_PT_SYS_WB;
	if (sc.have_pgsteal_file)
		pt->have |= GP_PT_SYS_RECLAIM;

	s->prev_t = t;
	s->prev_cpu_s = cpu_s;
	s->have_prev = true;
	s->tot.samples++;
	*linep = line;
	return GP_SAMPLE_OK;
}
