#include "config.h"
#include "tree.h"
#include "forks.h"
#include "grow.h"
#include "house.h"
#include "sockets.h"
#include "parse.h"
#include "point.h"
#include "procstat.h"
#include "result.h"
#include "sysinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct member {
	int pid, ppid, depth;
	uint64_t starttime;
	struct gp_sampler *s;      /* followed; NULL: watched for its io only */
	char comm[64];
	bool gone;
	struct gp_proc_part part;  /* this sample's, followed members */
	struct gp_pview wv;        /* this sample's, watched members */
	json_t *wio;               /* watched: its io object */
};

struct gp_tree {
	struct gp_tree_opts o;
	struct member *m;          /* m[0] is the target */
	size_t n, cap;
	struct gp_sys_reader *sys;
	struct gp_gpu_house *house; /* the GPU readers, one for every member */
	bool own_house;             /* made here (o.house was NULL) */
	struct gp_sockets *socks;   /* the host's sockets, one dump a tick for every member */
	struct gp_point_builder *pb;
	bool first;
	bool keyframe;             /* the next sample's vm whole (gp_tree_keyframe) */
	unsigned long seen, capped;
	struct gp_forks *forks;    /* every start and exit (live, children followed) */
	char forks_why[160];       /* why not, when forks is NULL */
	struct gp_forks_counts fc; /* as of the last sample, since the first */
	struct gp_forks_counts fc0;/* as of the first sample, or of the command's release */
	bool started;              /* fc0 taken at the command's release (gp_tree_mark_start) */
	char *procs;               /* this sample's `procs` member, JSON text */
	size_t plen, pcap;
	/* Zombie children of members found by the first walk: died before
	 * the trace, told once by the first sample's `died` */
	struct { int pid, ppid; char comm[16]; } early[8];
	size_t nearly;
	/* The last walk of /proc (discover_due): when, the connector's
	 * counts then, and whether it found anyone. */
	double walked_t;
	unsigned long walked_started, walked_lost;
	bool walk_found;
};

static struct member *add_member(struct gp_tree *t, int pid, int ppid, int depth, bool follow)
{
	if (!gp_grow(&t->m, &t->cap, t->n + 1, sizeof *t->m, 16))
		return NULL;
	struct member *m = &t->m[t->n];
	memset(m, 0, sizeof *m);
	m->pid = pid;
	m->ppid = ppid;
	m->depth = depth;
	if (follow) {
		struct gp_sampler_opts so = { .root = t->o.root, .pid = pid, .kstacks = t->o.kstacks,
					      .no_nvml = t->o.no_nvml, .reopen = t->o.reopen,
					      .no_system = true, .house = t->house, .socks = t->socks };
		m->s = gp_sampler_new(&so);
		if (!m->s)
			return NULL; /* gone already */
	}
	t->n++;
	t->seen++;
	return m;
}

struct gp_tree *gp_tree_new(const struct gp_tree_opts *o)
{
	struct gp_tree *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->o = *o;
	if (!t->o.max_procs)
		t->o.max_procs = 256;
	t->first = true;
	t->sys = gp_sys_reader_new(o->root);
	t->house = o->house;
	if (!t->house) {
		struct gp_gpu_house_opts ho = { .root = o->root,
						.flags = o->no_nvml ? GP_HOUSE_NO_NVML : 0 };
		t->house = gp_gpu_house_new(&ho);
		t->own_house = true;
	}
	t->pb = gp_point_builder_new();
	t->socks = gp_sockets_new();
	int saved = ENOMEM;
	if (!t->sys || !t->house || !t->pb || !t->socks || !add_member(t, o->pid, 0, 0, true)) {
		saved = errno ? errno : ENOMEM;
		gp_tree_free(t);
		errno = saved;
		return NULL;
	}
	/* Before a command gpuprobe starts is let go: its first fork counts. */
	if (!o->children)
		snprintf(t->forks_why, sizeof t->forks_why, "descendants not followed (--no-children)");
	else if (!o->root->live)
		snprintf(t->forks_why, sizeof t->forks_why, "a replayed /proc");
	else
		t->forks = gp_forks_open(o->pid, t->forks_why, sizeof t->forks_why);
	return t;
}

static void member_clear(struct member *m)
{
	json_decref(m->part.proc);
	json_decref(m->part.gpu);
	json_decref(m->wio);
	m->part.proc = m->part.gpu = m->wio = NULL;
}

void gp_tree_free(struct gp_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		member_clear(&t->m[i]);
		gp_sampler_free(t->m[i].s);
	}
	free(t->m);
	if (t->own_house)
		gp_gpu_house_free(t->house);
	gp_sockets_free(t->socks);
	if (t->sys)
		gp_sys_reader_free(t->sys);
	gp_point_builder_free(t->pb);
	gp_forks_close(t->forks);
	free(t->procs);
	free(t);
}

static struct member *find(struct gp_tree *t, int pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].pid == pid)
			return &t->m[i];
	return NULL;
}

/* ---- finding the descendants ----------------------------------------
 * Every process's stat once a sample: its parent says whether it is ours.
 * /proc/PID/task/TID/children would need a read per thread of every
 * member (a 1000-thread target: 1000 reads), and misses nothing only
 * with CONFIG_PROC_CHILDREN; a walk of /proc costs about 4 us a process
 * (300 processes: 1.2 ms a sample). */

struct cand {
	int pid, ppid;
};

static void discover(struct gp_tree *t)
{
	int pfd = gp_open(t->o.root, "/proc", O_DIRECTORY);
	if (pfd < 0)
		return;
	DIR *d = fdopendir(pfd);
	if (!d) {
		close(pfd);
		return;
	}
	struct cand *c = NULL;
	size_t nc = 0, capc = 0;
	struct dirent *de;
	char path[64], buf[1024];
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > 0x3fffffff || find(t, (int)pid))
			continue;
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		struct gp_stat st;
		if (gp_read_file(t->o.root, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st))
			continue;
		if (st.state == 'Z' || st.state == 'X') {
			if (t->first && t->nearly < sizeof t->early / sizeof *t->early) {
				t->early[t->nearly].pid = (int)pid;
				t->early[t->nearly].ppid = st.ppid;
				gp_strlcpy(t->early[t->nearly].comm, st.comm, sizeof t->early[0].comm);
				t->nearly++;
			}
			continue;
		}
		if (!gp_grow(&c, &capc, nc + 1, sizeof *c, 64))
			break;
		c[nc++] = (struct cand){ (int)pid, st.ppid };
	}
	closedir(d);
	/* To a fixed point: a child and its own child born in the same
	 * interval may come in any order. */
	for (bool added = true; added;) {
		added = false;
		for (size_t i = 0; i < nc; i++) {
			if (!c[i].pid)
				continue;
			struct member *parent = find(t, c[i].ppid);
			if (!parent || parent->gone)
				continue;
			bool follow = t->o.children;
			if (!follow && parent != &t->m[0])
				continue; /* --no-children: the target's children only, watched */
			if (!parent->s) /* a watched child's children are not ours */
				continue;
			int pid = c[i].pid, ppid = c[i].ppid, depth = parent->depth + 1;
			c[i].pid = 0;
			if (follow && t->n >= t->o.max_procs) {
				t->capped++;
				continue;
			}
			if (add_member(t, pid, ppid, depth, follow))
				added = true;
		}
	}
	free(c);
}

/* Whether this sample walks /proc for new members.  Each walk reads the
 * stat of every process on the machine (140 here; thousands on a node
 * that runs a fleet's pods, and watch walks for each process it
 * follows).  Where the connector hears the tree's forks (forks.h), no
 * new member can appear without one: walked at the first sample, after
 * a fork of the tree or a lost event, after a walk that found someone
 * (a member found forks before it is tracked: its child is found by
 * the next walk), and every 5 s whatever the connector says. */
static bool discover_due(struct gp_tree *t, double tsec)
{
	if (!t->forks || t->first || t->walk_found || tsec - t->walked_t >= 5)
		return true;
	struct gp_forks_counts c;
	gp_forks_counts(t->forks, &c);
	return c.started != t->walked_started || c.lost != t->walked_lost;
}

static void discover_if_due(struct gp_tree *t, double tsec)
{
	if (!discover_due(t, tsec))
		return;
	struct gp_forks_counts c = { 0 };
	if (t->forks)
		gp_forks_counts(t->forks, &c); /* before: a fork during the walk makes the next one due */
	unsigned long seen = t->seen;
	discover(t);
	t->walk_found = t->seen != seen;
	t->walked_t = tsec;
	t->walked_started = c.started;
	t->walked_lost = c.lost;
}

/* ---- one sample ------------------------------------------------------ */

static int by_depth(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	return y->depth - x->depth;
}

static void watched_read(struct gp_tree *t, struct member *m)
{
	char path[64], buf[2048];
	struct gp_stat st;
	snprintf(path, sizeof path, "/proc/%d/stat", m->pid);
	if (gp_read_file(t->o.root, path, buf, sizeof buf) <= 0 || !gp_parse_stat(buf, &st)) {
		m->gone = true;
		return;
	}
	gp_strlcpy(m->comm, st.comm, sizeof m->comm);
	memset(&m->wv, 0, sizeof m->wv);
	m->wv.pid = m->pid;
	m->wv.ppid = st.ppid;
	m->wv.comm = m->comm;
	m->wv.state = st.state;
	snprintf(path, sizeof path, "/proc/%d/io", m->pid);
	struct gp_io io;
	if (gp_read_file(t->o.root, path, buf, sizeof buf) > 0 && gp_parse_io(buf, &io)) {
		m->wv.have_io = true;
		m->wv.io_rchar = io.rchar;
		m->wv.io_wchar = io.wchar;
		m->wv.io_read_bytes = io.read_bytes;
		m->wv.io_write_bytes = io.write_bytes;
		m->wv.io_syscr = io.syscr;
		m->wv.io_syscw = io.syscw;
		m->wio = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}",
			"rchar", (json_int_t)io.rchar, "wchar", (json_int_t)io.wchar,
			"syscr", (json_int_t)io.syscr, "syscw", (json_int_t)io.syscw,
			"read_bytes", (json_int_t)io.read_bytes,
			"write_bytes", (json_int_t)io.write_bytes);
	}
}

static void procs_add(struct gp_tree *t, const char *s, size_t len)
{
	if (!gp_grow(&t->procs, &t->pcap, t->plen + len + 1, 1, 256))
		return;
	memcpy(t->procs + t->plen, s, len);
	t->plen += len;
	t->procs[t->plen] = '\0';
}

/* {"pid":..,"ppid":..,"comm":..,"proc":{..},"gpu":{..},"threads":[..]} */
static void procs_member(struct gp_tree *t, struct member *m)
{
	json_t *o = json_pack("{s:i, s:i, s:s}", "pid", m->pid,
			      "ppid", m->s ? m->part.pv.ppid : m->wv.ppid, "comm", m->comm);
	if (!o)
		return;
	if (m->s) {
		json_object_set(o, "proc", m->part.proc);
		if (m->part.gpu)
			json_object_set(o, "gpu", m->part.gpu);
	} else {
		json_object_set_new(o, "followed", json_false());
		json_t *p = json_object();
		if (m->wio)
			json_object_set(p, "io", m->wio);
		json_object_set_new(o, "proc", p);
	}
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return;
	size_t len = strlen(s);
	if (t->plen > 1)
		procs_add(t, ",", 1);
	if (m->s && len > 1) {
		size_t tl;
		const char *threads = gp_sampler_threads_json(m->s, &tl);
		procs_add(t, s, len - 1);
		procs_add(t, ",\"threads\":", 11);
		procs_add(t, threads, tl);
		procs_add(t, "}", 1);
	} else {
		procs_add(t, s, len);
	}
	free(s);
}

/* A zombie's exit code, as wait(2) would give it: /proc/PID/stat's 52nd
 * field, exit_code (proc(5), since Linux 3.5); -1 when not a zombie or
 * unreadable (reaped already). */
static int zombie_code(const struct gp_root *root, int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (gp_read_file(root, path, buf, sizeof buf) <= 0)
		return -1;
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || (p[2] != 'Z' && p[2] != 'X'))
		return -1;
	/* field 3 (state) is the first after ") "; 52 is 49 further */
	p += 2;
	for (int f = 3; f < 52 && p; f++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p && *p >= '0' && *p <= '9' ? atoi(p) : -1;
}

static void death_json(json_t *arr, int pid, int ppid, const char *comm, int code)
{
	json_t *d = json_pack("{s:i, s:i, s:s}", "pid", pid, "ppid", ppid, "comm", comm);
	if (code & 0x7f) {
		json_object_set_new(d, "signal", json_integer(code & 0x7f));
		if (code & 0x80)
			json_object_set_new(d, "core", json_true());
	} else {
		json_object_set_new(d, "status", json_integer((code >> 8) & 0xff));
	}
	json_array_append_new(arr, d);
}

/* The tree's processes that ended since the last sample, with how
 * (issue 32: a child's death, and what waited on it, belongs in the
 * verdict; a child of one command exiting non-zero again and again is a
 * retry): "died", from the process connector, else from the zombie of a
 * member that went (its parent has not reaped it yet). */
static void deaths_part(struct gp_tree *t, json_t *line)
{
	struct gp_death d[32];
	unsigned lost = 0;
	size_t n = gp_forks_deaths(t->forks, d, sizeof d / sizeof *d, &lost);
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		const char *comm = d[i].comm;
		for (size_t k = 0; !comm[0] && k < t->n; k++)
			if (t->m[k].pid == d[i].pid)
				comm = t->m[k].comm;
		death_json(arr, d[i].pid, d[i].ppid, comm[0] ? comm : "?", d[i].code);
	}
	/* A member that went, and that the connector did not report (none
	 * listens, or it died before the trace: a zombie found by the walk);
	 * at the first sample, every zombie of the tree: a child that died
	 * before the trace began (an engine SIGKILLed, its frontend still
	 * reading requests) is the story, and no event will tell it. */
	for (size_t k = 1; k < t->n; k++) {
		bool told = false;
		for (size_t i = 0; i < n && !told; i++)
			told = d[i].pid == t->m[k].pid;
		bool ask = t->m[k].gone || (t->first && t->m[k].part.pv.state == 'Z');
		int code = ask && !told ? zombie_code(t->o.root, t->m[k].pid) : -1;
		if (code >= 0)
			death_json(arr, t->m[k].pid, t->m[k].ppid, t->m[k].comm[0] ? t->m[k].comm : "?", code);
	}
	for (size_t k = 0; t->first && k < t->nearly; k++) {
		int code = find(t, t->early[k].ppid) ? zombie_code(t->o.root, t->early[k].pid) : -1;
		if (code < 0)
			continue;
		death_json(arr, t->early[k].pid, t->early[k].ppid, t->early[k].comm, code);
		json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "before_trace",
				    json_true());
	}
	if (json_array_size(arr))
		json_object_set_new(line, "died", arr);
	else
		json_decref(arr);
	if (lost)
		json_object_set_new(line, "died_lost", json_integer(lost));
}

enum gp_sample_rc gp_tree_take(struct gp_tree *t, double tsec, struct gp_point *pt,
			       json_t **linep, struct gp_raw *raws, size_t *nraws,
			       const char **why)
{
	*linep = NULL;
	*nraws = 0;
	*why = NULL;
	/* The events up to now, then the walk: a process the events missed
	 * (a full queue) is tracked from the walk on. */
	gp_forks_drain(t->forks);
	/* Counted from the first sample's start: the connector's reader runs
	 * on its own (forks.c), and what starts while this first sample is
	 * read is started during the trace. */
	if (t->first && t->forks && !t->started)
		gp_forks_counts(t->forks, &t->fc0);
	discover_if_due(t, tsec);
	for (size_t i = 0; t->forks && i < t->n; i++)
		if (t->m[i].s)
			gp_forks_track(t->forks, t->m[i].pid);
	/* Children before parents: a parent's io is read after the reap
	 * that its child's disappearance will be matched with (point.c). */
	if (t->n > 1)
		qsort(t->m + 1, t->n - 1, sizeof *t->m, by_depth);
	struct member *root = &t->m[0];
	member_clear(root);
	enum gp_sample_rc rc = gp_sampler_take_part(root->s, tsec, &root->part, why);
	if (rc != GP_SAMPLE_OK)
		return rc;
	gp_strlcpy(root->comm, root->part.pv.comm ? root->part.pv.comm : "", sizeof root->comm);
	root->part.pv.comm = root->comm;
	root->part.pv.children_followed = t->o.children;

	gp_point_begin(t->pb, pt, tsec, t->first);
	t->plen = 0;
	procs_add(t, "[", 1);
	for (size_t i = 1; i < t->n; i++) {
		struct member *m = &t->m[i];
		member_clear(m);
		if (m->s) {
			const char *w;
			if (gp_sampler_take_part(m->s, tsec, &m->part, &w) != GP_SAMPLE_OK) {
				m->gone = true;
				continue;
			}
			gp_strlcpy(m->comm, m->part.pv.comm ? m->part.pv.comm : "", sizeof m->comm);
			m->part.pv.comm = m->comm;
			m->part.pv.children_followed = true;
			gp_point_add(t->pb, pt, &m->part.pv, m->part.tv, m->part.ntv);
		} else {
			watched_read(t, m);
			if (m->gone)
				continue;
			gp_point_add(t->pb, pt, &m->wv, NULL, 0);
		}
		procs_member(t, m);
	}
	procs_add(t, "]", 1);
	gp_point_add(t->pb, pt, &root->part.pv, root->part.tv, root->part.ntv);

	json_t *line = json_object();
	json_object_set_new(line, "type", json_string("sample"));
	json_object_set_new(line, "t", json_real(tsec));
	json_object_set_new(line, "pid", json_integer(root->pid));
	json_object_set_new(line, "comm", json_string(root->comm));
	if (!t->o.children)
		json_object_set_new(line, "children", json_false());
	if (t->forks) {
		struct gp_forks_counts fc;
		gp_forks_counts(t->forks, &fc);
		/* From the first sample on: a child started before it is in
		 * its process count already (so first + started - exited =
		 * last holds). */
		fc.started -= t->fc0.started;
		fc.exited -= t->fc0.exited;
		t->fc = fc;
		json_object_set_new(line, "forks", json_pack("{s:I, s:I, s:I}",
			"started", (json_int_t)fc.started, "exited", (json_int_t)fc.exited,
			"lost", (json_int_t)fc.lost));
	}
	deaths_part(t, line);
	json_object_set(line, "proc", root->part.proc);
	if (root->part.gpu)
		json_object_set(line, "gpu", root->part.gpu);
	json_object_set_new(line, "vm", gp_sampler_vm(t->sys, pt, t->keyframe));
	t->keyframe = false;
	gp_point_end(t->pb, pt);
	gp_point_deaths(pt, json_object_get(line, "died"));
	t->first = false;

	size_t tl;
	const char *threads = gp_sampler_threads_json(root->s, &tl);
	raws[0] = (struct gp_raw){ "threads", threads, tl };
	*nraws = 1;
	if (t->plen > 2 && t->procs)
		raws[(*nraws)++] = (struct gp_raw){ "procs", t->procs, t->plen };

	/* Drop the members that are gone; the builder has seen them go. */
	for (size_t i = 1; i < t->n;) {
		if (t->m[i].gone) {
			member_clear(&t->m[i]);
			gp_sampler_free(t->m[i].s);
			t->m[i] = t->m[--t->n];
		} else {
			i++;
		}
	}
	*linep = line;
	return GP_SAMPLE_OK;
}

bool gp_tree_member(const struct gp_tree *t, size_t i, int *pid, const char **comm,
		    struct gp_sampler **s)
{
	size_t k = 0;
	for (size_t j = 0; j < t->n; j++) {
		if (!t->m[j].s || t->m[j].gone)
			continue;
		if (k++ == i) {
			*pid = t->m[j].pid;
			if (comm)
				*comm = t->m[j].comm;
			if (s)
				*s = t->m[j].s;
			return true;
		}
	}
	return false;
}

void gp_tree_counts(const struct gp_tree *t, unsigned long *seen, unsigned long *capped)
{
	*seen = t->seen;
	*capped = t->capped;
}

bool gp_tree_forks(const struct gp_tree *t, struct gp_forks_counts *c, const char **why)
{
	*c = t->fc;
	*why = t->forks ? NULL : t->forks_why;
	return t->forks != NULL;
}

void gp_tree_totals(const struct gp_tree *t, struct gp_sampler_totals *tot)
{
	gp_sampler_totals(t->m[0].s, tot);
}

void gp_tree_mark_start(struct gp_tree *t)
{
	if (t->forks) {
		gp_forks_counts(t->forks, &t->fc0);
		t->started = true;
	}
}

void gp_tree_prime(struct gp_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].s)
			gp_sampler_prime(t->m[i].s);
}

void gp_tree_keyframe(struct gp_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].s)
			gp_sampler_keyframe(t->m[i].s);
	t->keyframe = true;
}
