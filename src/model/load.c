#include "config.h"
#include "load.h"
#include "gpujson.h"
#include "gpuwork.h"
#include "parse.h"
#include "point.h"
#include "samplein.h"
#include "rstream.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t get_u64(const json_t *o, const char *key)
{
	return gp_json_u64(json_object_get(o, key));
}

static double get_num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : 0;
}

/* A thread record into a view; its strings stay the record's. */
static void thread_view(const struct gp_trec *th, struct gp_tview *v, bool *kstack_seen)
{
	memset(v, 0, sizeof *v);
	uint32_t h = th->have;
	v->tid = h & TR_BIT(TR_TID) && th->tid > 0 ? th->tid : 0;
	v->comm = h & TR_BIT(TR_COMM) ? th->comm : NULL;
	v->state = h & TR_BIT(TR_STATE) ? th->state : '?';
	v->have_wchan = h & TR_BIT(TR_WCHAN);
	v->wchan = v->have_wchan ? th->wchan : NULL;
	v->have_syscall = h & TR_BIT(TR_SYSCALL);
	v->sc_nr = -2;
	if (v->have_syscall && th->sc.kind == GP_TREC_SC_OBJ && th->sc.have_nr) {
		v->sc_nr = th->sc.nr;
		v->sc_arg0 = th->sc.args[0];
		v->sc_arg1 = th->sc.args[1];
	}
	v->have_kstack = h & TR_BIT(TR_KERNEL);
	if (v->have_kstack)
		*kstack_seen = true;
	if (h & TR_BIT(TR_CPU)) {
		v->have_cpu = true;
		v->cpu_pct = th->cpu_pct;
		v->sys_pct = h & TR_BIT(TR_SYS) ? th->sys_pct : 0;
	}
	v->vcsw = h & TR_BIT(TR_VOL) ? th->vol : 0;
	v->nvcsw = h & TR_BIT(TR_INVOL) ? th->invol : 0;
	v->is_new = h & TR_BIT(TR_NEW);
	v->wait = h & TR_BIT(TR_WAIT) ? (enum gp_wait)th->wait : GP_WAIT_NONE;
	/* Format 3: on whom it waits (model/waitgraph.h); absent before. */
	if (h & TR_BIT(TR_ON))
		v->on = th->on;
	/* Files written before `wait` existed (format 1): the state alone. */
	if (!(h & TR_BIT(TR_WAIT))) {
		if (v->state == 'D')
			v->wait = GP_WAIT_DISK;
		else if (v->state == 'T' || v->state == 't')
			v->wait = GP_WAIT_STOPPED;
	}
}

static void gpu_into_view(const json_t *gpu, struct gp_pview *pv)
{
	if (!json_is_object(gpu))
		return;
	const json_t *act = json_object_get(gpu, "activity");
	if (json_is_object(act)) {
		bool known = false;
		pv->gpu_act_busy = gp_gpuact_json_busy(act, GP_GPU_BUSY_PCT, &known);
		pv->gpu_act_known = known;
		pv->gpu_act_pct = gp_gpuact_json_pct(act);
		gp_gpuact_json_work(act, &pv->gw);
	}
	struct gp_gpu_totals tot;
	memset(&tot, 0, sizeof tot);
	json_t *drm = json_object_get(gpu, "drm");
	size_t i;
	json_t *c;
	json_array_foreach(drm, i, c)
		gp_fdinfo_add_totals(c, &tot);
	pv->gpu_gtt = tot.gtt_bytes;
	pv->gpu_vram = tot.vram_bytes;
	pv->gpu_engine_ns = tot.engine_ns;
	json_t *kfd = json_object_get(gpu, "kfd");
	uint64_t kfd_vram = 0;
	const char *key;
	json_t *v;
	json_object_foreach(json_object_get(kfd, "vram"), key, v)
		kfd_vram += json_is_integer(v) && json_integer_value(v) > 0
			    ? (uint64_t)json_integer_value(v) : 0;
	json_t *nvml = json_object_get(gpu, "nvml");
	uint64_t nv = 0;
	json_array_foreach(nvml, i, c)
		nv += get_u64(c, "used_bytes");
	/* The sampler's precedence (tracer/sampler.c gpu_part): DRM, else
	 * KFD, else NVML. */
	if (json_array_size(drm)) {
		pv->gpu_bytes = tot.drm_total_bytes;
		pv->gpu_have |= GP_PT_GPU_DRM;
	} else if (kfd) {
		pv->gpu_bytes = kfd_vram;
	} else if (nvml) {
		pv->gpu_bytes = nv;
	}
	if (kfd)
		pv->gpu_have |= GP_PT_GPU_KFD;
	if (nvml)
		pv->gpu_have |= GP_PT_GPU_NVML;
}

/* The counters a process line and its io member carry as they are: one
 * name, one field. */
struct u64_field {
	const char *key;
	size_t off;
};
#define PV(name) { #name, offsetof(struct gp_pview, name) }
static const struct u64_field proc_counters[] = {
	PV(minflt), PV(majflt), PV(rss_file), PV(rss_anon), PV(rss_shmem), PV(vm_pin), PV(vm_lck),
	{ NULL, 0 },
};
#define IO(name) { #name, offsetof(struct gp_pview, io_##name) }
static const struct u64_field io_counters[] = {
	IO(rchar), IO(wchar), IO(read_bytes), IO(write_bytes), IO(syscr), IO(syscw), { NULL, 0 },
};

static void get_u64_fields(const json_t *j, const struct u64_field *f, struct gp_pview *pv)
{
	for (; f->key; f++)
		*(uint64_t *)((char *)pv + f->off) = get_u64(j, f->key);
}

static void proc_view(const json_t *proc, struct gp_pview *pv)
{
	const char *state = json_string_value(json_object_get(proc, "state"));
	pv->state = state && *state ? state[0] : '?';
	if (!pv->ppid)
		pv->ppid = (int)get_u64(proc, "ppid");
	pv->utime = get_num(proc, "utime");
	pv->children_cpu = get_num(proc, "children_cpu");
	pv->stime = get_num(proc, "stime");
	get_u64_fields(proc, proc_counters, pv);
	/* RssFile our own stack reads made resident (tracer/sampler.h) */
	uint64_t ours = get_u64(proc, "rss_file_ours");
	pv->rss_file = pv->rss_file > ours ? pv->rss_file - ours : 0;
	pv->map_bytes = get_u64(json_object_get(proc, "largest_file_mapping"), "bytes");
	pv->threads_vanished = (uint32_t)get_u64(proc, "threads_vanished");
	json_t *ended = json_object_get(proc, "thread_ended");
	pv->ended_tid = (int)get_u64(ended, "tid");
	pv->ended_comm = json_string_value(json_object_get(ended, "comm"));
	json_t *io = json_object_get(proc, "io");
	if (json_is_object(io)) {
		pv->have_io = true;
		get_u64_fields(io, io_counters, pv);
	}
	json_t *sock = json_object_get(proc, "sock");
	if (json_is_object(sock)) {
		pv->have_sock = true;
		pv->sock_tx = get_u64(sock, "tx");
		pv->sock_rx = get_u64(sock, "rx");
		pv->sock_io_tx = get_u64(sock, "io_tx");
		pv->sock_io_rx = get_u64(sock, "io_rx");
		pv->sock_io_writes = get_u64(sock, "io_writes");
		pv->sock_io_reads = get_u64(sock, "io_reads");
		pv->sock_backlog = (uint32_t)get_u64(sock, "backlog");
		pv->sock_unread = get_u64(sock, "unread");
		pv->sock_pending = (uint32_t)get_u64(sock, "pending");
		pv->sock_pending_s = get_num(sock, "pending_s");
		json_t *cn = json_object_get(sock, "connects");
		pv->conn_failed = get_u64(cn, "refused") + get_u64(cn, "failed");
		pv->conn_errno = (int)get_u64(cn, "errno");
		pv->conn_to = json_string_value(json_object_get(cn, "to"));
	}
	json_t *lt = json_object_get(proc, "lock_tries");
	if (json_is_object(lt)) {
		pv->lock_refused = get_u64(lt, "refused");
		pv->lock_file = json_string_value(json_object_get(lt, "file"));
		json_t *h = json_object_get(lt, "holder");
		pv->lock_holder = (int)get_u64(h, "pid");
		pv->lock_holder_comm = json_string_value(json_object_get(h, "comm"));
	}
}

/* One process (the sample's own members, or an element of `procs`) into
 * the builder.  *at: its first thread's position in the sample. */
static void add_process(struct gp_point_builder *b, struct gp_point *pt, const json_t *proc,
			const struct gp_trec *threads, size_t n, const json_t *gpu,
			struct gp_pview *pv, bool first, bool *kstack_seen)
{
	proc_view(proc, pv);
	gpu_into_view(gpu, pv);
	struct gp_tview *tv = n ? calloc(n, sizeof *tv) : NULL;
	if (n && !tv)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		thread_view(&threads[i], &tv[i], kstack_seen);
		if (!first && tv[i].is_new)
			pv->threads_created++;
	}
	gp_point_add(b, pt, pv, tv, n);
	free(tv);
}

/* One sample (its threads read by si) into *pt. */
static void point_from_sample(struct gp_point_builder *b, const json_t *s,
			      const struct gp_samplein *si, bool first, struct gp_point *pt,
			      bool *kstack_seen)
{
	gp_point_begin(b, pt, get_num(s, "t"), first);
	/* Format 2: the target's descendants, children before parents, then
	 * the target itself (the sample's own members). */
	size_t i;
	json_t *c;
	const struct gp_trec *th;
	size_t n;
	json_array_foreach(json_object_get(s, "procs"), i, c) {
		if (!json_is_object(c))
			continue;
		struct gp_pview pv = { 0 };
		pv.pid = (int)get_u64(c, "pid");
		pv.ppid = (int)get_u64(c, "ppid");
		pv.comm = json_string_value(json_object_get(c, "comm"));
		pv.followed = !json_is_false(json_object_get(c, "followed"));
		pv.children_followed = true;
		n = gp_samplein_threads(si, (int)i, &th);
		add_process(b, pt, json_object_get(c, "proc"), th, n, json_object_get(c, "gpu"), &pv,
			    first, kstack_seen);
	}
	json_t *proc = json_object_get(s, "proc");
	if (json_is_object(proc)) {
		struct gp_pview pv = { 0 };
		pv.pid = (int)get_u64(s, "pid");
		pv.comm = json_string_value(json_object_get(s, "comm"));
		pv.followed = true;
		pv.children_followed = !json_is_false(json_object_get(s, "children"));
		n = gp_samplein_threads(si, -1, &th);
		add_process(b, pt, proc, th, n, json_object_get(s, "gpu"), &pv, first, kstack_seen);
	} else {
		pt->root_gone = true;
	}
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
	gp_point_end(b, pt);
	gp_point_deaths(pt, json_object_get(s, "died"));
}

/* A CPython thread (stacks.h "python"): the youngest Python frame after
 * the native one, "long_mod <- spin (load.py:39)", as far as cap allows. */
static void py_top_frame(const json_t *th, char *buf, size_t cap)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(th, "frames"), i, f) {
		json_t *p = json_array_get(json_object_get(f, "python"), 0);
		if (!json_is_object(p))
			continue;
		const char *fn = json_string_value(json_object_get(p, "function"));
		const char *file = json_string_value(json_object_get(p, "file"));
		const char *base = file ? strrchr(file, '/') : NULL;
		json_t *l = json_object_get(p, "line");
		size_t len = strlen(buf);
		if (len < cap)
			snprintf(buf + len, cap - len, " <- %s (%s:%" JSON_INTEGER_FORMAT ")", fn ? fn : "?",
				 base ? base + 1 : file ? file : "?", json_is_integer(l) ? json_integer_value(l) : 0);
		return;
	}
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
		const char *mod = json_string_value(json_object_get(f, "module"));
		const char *off = json_string_value(json_object_get(f, "offset"));
		if (sym) {
			gp_strlcpy(buf, sym, cap);
		} else if (mod) {
			const char *base = strrchr(mod, '/');
			snprintf(buf, cap, "%s+%s", base ? base + 1 : mod, off ? off : "?");
		} else {
			return false;
		}
		py_top_frame(th, buf, cap);
		return true;
	}
	return false;
}

static void keep(json_t **slot, json_t *line)
{
	json_decref(*slot);
	*slot = json_incref(line);
}

/* A `stacks` line: the snapshot the verdict carries (why hang/end), and
 * the busiest threads' hot frames for the sample it follows. */
static void stacks_line(struct gp_loaded *out, const json_t *j)
{
	const char *why = json_string_value(json_object_get(j, "why"));
	if (why && (!strcmp(why, "hang") || !strcmp(why, "end")))
		gp_stuck_add(&out->stuck, j);
	struct gp_point *last = &out->series.pt[out->series.n - 1];
	if (last->top_tid)
		gp_stacks_top_frame(j, last->top_tid, last->top_frame, sizeof last->top_frame);
	if (last->top2_tid)
		gp_stacks_top_frame(j, last->top2_tid, last->top2_frame, sizeof last->top2_frame);
}

/* The file, opened for the first pass and kept for the second (out->fd):
 * a regular file that holds something, read as bounded lines (rstream.h).
 * -1 with err filled. */
static int open_result(const char *path, struct gp_loaded *out, struct gp_rlines *rl,
		       char *err, size_t errcap)
{
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
	if (out->fd < 0) {
		snprintf(err, errcap, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	/* zstd or gzip by the first bytes (model/rstream.h). */
	if (gp_rlines_open(rl, fd) < 0) {
		snprintf(err, errcap, "%s", strerror(errno));
		if (out->fd >= 0)
			close(out->fd);
		out->fd = -1;
		return -1;
	}
	return 0;
}

/* The header line: the page size and whose syscall numbers the samples
 * hold (syscalls.h). */
static void on_header(struct gp_loaded *out, json_t *j)
{
	keep(&out->header, j);
	json_t *ps = json_object_get(json_object_get(j, "host"), "page_size");
	if (json_is_integer(ps) && json_integer_value(ps) > 0)
		out->page_size = (long)json_integer_value(ps);
	const char *m = json_string_value(json_object_get(json_object_get(j, "host"), "machine"));
	snprintf(out->machine, sizeof out->machine, "%s", m ? m : "");
	for (char *c = out->machine; *c; c++)   /* a name, not markup */
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			*c = '?';
}

/* The first pass's state. */
struct loader {
	struct gp_loaded *out;
	struct gp_samplein *si;
	struct gp_point_builder *pb;
	bool first_sample;
	char why[200];              /* why the file is no result, until a header */
	unsigned long over_at;      /* the line of a sample of too many threads, 0 none */
};

/* A line of a known type into the model.  false: out of memory. */
static bool on_typed(struct loader *ld, const char *type, json_t *j)
{
	struct gp_loaded *out = ld->out;
	if (!strcmp(type, "header")) {
		on_header(out, j);
	} else if (!strcmp(type, "target")) {
		/* The first target is the trace's; later ones are
		 * descendants that appeared (format 2). */
		if (!out->target)
			keep(&out->target, j);
		gp_proctab_target(&out->procs, j);
	} else if (!strcmp(type, "exit")) {
		keep(&out->exit, j);
	} else if (!strcmp(type, "verdict")) {
		keep(&out->verdict, j);
	} else if (!strcmp(type, "kmsg")) {
		gp_kmsg_note_add(out->kmsg, &out->nkmsg, j);
	} else if (!strcmp(type, "ras")) {
		gp_ras_note_add(&out->ras, j);
	} else if (!strcmp(type, "stacks") && out->series.n) {
		stacks_line(out, j);
	} else if (!strcmp(type, "sample")) {
		struct gp_point pt;
		if (!ld->pb)
			ld->pb = gp_point_builder_new();
		if (!ld->pb)
			return false;
		/* Format 1 samples name no pid: the target line's. */
		if (!json_object_get(j, "pid") && out->target) {
			json_object_set(j, "pid", json_object_get(out->target, "pid"));
			json_object_set(j, "comm", json_object_get(out->target, "comm"));
		}
		point_from_sample(ld->pb, j, ld->si, ld->first_sample, &pt, &out->kstacks_seen);
		gp_proctab_sample(&out->procs, j, ld->si);
		ld->first_sample = false;
		if (gp_series_push(&out->series, &pt) < 0)
			return false;
	}
	return true;
}

/* One line of the file.  1: go on; 0: stop here (the file ends, or is
 * no result); -1: out of memory. */
static int on_line(struct loader *ld, const char *line, size_t len)
{
	struct gp_loaded *out = ld->out;
	out->lines++;
	bool terminated = line[len - 1] == '\n';
	if (terminated)
		out->bytes += (unsigned long long)len;
	json_error_t jerr;
	json_t *j = gp_samplein_parse(ld->si, line, len, &jerr);
	if (!j && gp_samplein_over(ld->si)) {
		ld->over_at = out->lines; /* refused whole, as a line too long */
		return 0;
	}
	if (!j || !terminated) {
		/* A killed run leaves at most one cut line, at the end. */
		json_decref(j);
		if (!terminated) {
			out->truncated = true;
			return 0;
		}
		out->bad_lines++;
		if (out->lines > 1)
			return 1;
		/* Say why line 1 is no header: jansson's reason, bytes of the
		 * file in it made printable (one line). */
		snprintf(ld->why, sizeof ld->why, "line 1 is not JSON: %s", jerr.text);
		for (char *c = ld->why; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		return 0;
	}
	const char *type = json_string_value(json_object_get(j, "type"));
	if (out->lines == 1 && (!type || strcmp(type, "header") != 0 || !json_object_get(j, "gpuprobe"))) {
		json_decref(j);
		out->bad_lines++;
		return 0;
	}
	bool ok = true;
	if (!type)
		out->bad_lines++;
	else
		ok = on_typed(ld, type, j);
	json_decref(j);
	return ok ? 1 : -1;
}

int gp_load_result(const char *path, struct gp_loaded *out, char *err, size_t errcap)
{
	memset(out, 0, sizeof *out);
	gp_stuck_init(&out->stuck);
	out->page_size = 4096;
	out->fd = -1;
	struct gp_rlines rl;
	if (open_result(path, out, &rl, err, errcap) < 0)
		return -1;
	struct loader ld = { .out = out, .si = gp_samplein_new(), .first_sample = true,
			     .why = "no header line" };
	int rc = ld.si ? 1 : -1;
	ssize_t len;
	while (rc > 0 && (len = gp_rlines_next(&rl)) > 0)
		rc = on_line(&ld, rl.line, (size_t)len);
	gp_point_builder_free(ld.pb);
	gp_samplein_free(ld.si);
	/* A bound passed (a line too long, a bomb) or a read that failed:
	 * the file is refused whole, with why (rstream.h). */
	if (rc > 0 && rl.err)
		gp_rlines_why(&rl, err, errcap);
	else if (ld.over_at)
		snprintf(err, errcap, "line %lu is a sample of more than %zu threads: not a sample "
			 "gpuprobe writes (a corrupt or crafted file)", ld.over_at, GP_SAMPLE_MAX_THREADS);
	else if (rc < 0)
		snprintf(err, errcap, "out of memory");
	else if (!out->header)
		snprintf(err, errcap, "not a gpuprobe result (%s)", ld.why);
	bool failed = (rc > 0 && rl.err) || ld.over_at || rc < 0 || !out->header;
	gp_rlines_close(&rl);
	if (failed) {
		gp_loaded_free(out);
		return -1;
	}
	return 0;
}

void gp_loaded_free(struct gp_loaded *l)
{
	gp_series_free(&l->series);
	gp_proctab_free(&l->procs);
	json_decref(l->header);
	json_decref(l->target);
	json_decref(l->exit);
	json_decref(l->verdict);
	l->header = l->target = l->exit = l->verdict = NULL;
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

double gp_loaded_started(const struct gp_loaded *l)
{
	const char *s = json_string_value(json_object_get(l->header, "started"));
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *rest = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!rest)
		return 0;
	double frac = 0;
	if (*rest == '.') {
		char *end;
		frac = strtod(rest, &end);
		if (end == rest || frac < 0 || frac >= 1)
			frac = 0;
	}
	time_t t = timegm(&tm);
	return t > 0 ? (double)t + frac : 0;
}
