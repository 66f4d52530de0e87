/* gpuprobe bundle: the parts, the MANIFEST and the archive (bundle.h). */
#include "config.h"
#include "bundle.h"
#include "shquote.h"
#include "bundle_parts.h"
#include "commands.h"
#include "error.h"
#include "part.h"
#include "progress.h"
#include "safefile.h"
#include "strbuf.h"
#include "tar.h"
#include "timeutil.h"

#include <dirent.h>
#include <jansson.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A gpuprobe command run in the part's child, in the bundle's directory,
 * with the very argv the MANIFEST shows: what it says can be run again
 * by hand. */
struct cmd_part {
	int (*cmd)(int argc, char **argv, const struct gp_global *g);
	const char *dir;
	int argc;               /* argv[0] "gpuprobe", argv[1] the command */
	char *argv[24];
	char buf[24][64];
};

static void cmd_arg(struct cmd_part *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void cmd_arg(struct cmd_part *c, const char *fmt, ...)
{
	if (c->argc >= 23)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->buf[c->argc], sizeof c->buf[0], fmt, ap);
	va_end(ap);
	c->argv[c->argc] = c->buf[c->argc];
	c->argc++;
	c->argv[c->argc] = NULL;
}

static int run_cmd(void *arg)
{
	struct cmd_part *c = arg;
	if (chdir(c->dir) < 0) {
		fprintf(stderr, "gpuprobe: %s: %s\n", c->dir, strerror(errno));
		return 1;
	}
	char prog[64];
	snprintf(prog, sizeof prog, "gpuprobe %s", c->argv[1]);
	char *cargv[24];
	memcpy(cargv, c->argv + 1, (size_t)c->argc * sizeof *cargv); /* with the NULL */
	cargv[0] = prog;
	/* Hints are what the MANIFEST quotes ("run as root for kernel
	 * stacks"): never quiet here, whatever the bundle was told. */
	gp_quiet = false;
	struct gp_global g = { .quiet = false, .argv0 = "gpuprobe", .argc = c->argc, .argv = c->argv };
	return c->cmd(c->argc - 1, cargv, &g);
}

/* As shell words (common/shquote.h): the MANIFEST's lines are run again
 * by hand, pasted. */
static void cmd_line(const struct cmd_part *c, struct strbuf *sb)
{
	gp_shquote_argv(sb, (const char *const *)c->argv, (size_t)c->argc);
}

/* One row of the MANIFEST. */
struct row {
	const char *file;       /* in the archive */
	char status[48];        /* "ok", "failed (exit 1)", "timed out after 20 s", "skipped" */
	double secs;
	struct strbuf cmd, notes;
	bool have;              /* the file is in the archive */
	struct gp_part_job job; /* while it runs */
	bool started;
	const char *out_name;   /* the file its standard output goes to */
	double deadline;
	struct row *stdout_row; /* the row of that file, when it is another part */
};

struct bundle {
	const struct gp_bundle_opts *o;
	char dir[4096];
	struct row rows[16];
	size_t nrows;
};

static struct row *row_new(struct bundle *b, const char *file)
{
	struct row *r = &b->rows[b->nrows++];
	memset(r, 0, sizeof *r);
	r->file = file;
	strbuf_init(&r->cmd, 0);
	strbuf_init(&r->notes, 0);
	return r;
}

/* The part's standard error, gpuprobe's lines, as MANIFEST notes. */
static void notes_from(struct row *r, const char *err)
{
	const char *s = err;
	int lines = 0;
	while (*s && lines < 12) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len) {
			strbuf_addf(&r->notes, "    %.*s\n", (int)(len > 300 ? 300 : len), s);
			lines++;
		}
		s += len + (e != NULL);
	}
}

/* Starts a part; its row is finished by part_finish. */
static void part_start(struct bundle *b, struct row *r, const char *out_name, double deadline,
		       int (*fn)(void *), void *arg)
{
	r->out_name = out_name ? out_name : r->file;
	r->deadline = deadline;
	char out[4200];
	snprintf(out, sizeof out, "%s/%s", b->dir, r->out_name);
	r->started = gp_part_start(&r->job, out, deadline, fn, arg) == 0;
	if (!r->started)
		snprintf(r->status, sizeof r->status, "not run: %s", strerror(errno));
}

static bool nonempty(const struct bundle *b, const char *name)
{
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/%s", b->dir, name);
	return stat(path, &st) == 0 && st.st_size > 0;
}

static void part_finish(struct bundle *b, struct row *r)
{
	if (!r->started)
		return;
	r->started = false;
	struct gp_part_res res;
	int rc = gp_part_finish(&r->job, &res);
	r->secs = res.secs;
	notes_from(r, res.err);
	if (rc == 0)
		snprintf(r->status, sizeof r->status, "ok");
	else if (res.timed_out)
		snprintf(r->status, sizeof r->status, "timed out after %.0f s%s", r->deadline,
			 res.killed ? ", killed" : "");
	else if (rc == 2)
		snprintf(r->status, sizeof r->status, "skipped");
	else if (rc < 0 && !res.reaped)
		snprintf(r->status, sizeof r->status, "lost (not reaped)");
	else if (rc < 0)
		snprintf(r->status, sizeof r->status, "killed by signal %d", WTERMSIG(res.status));
	else
		snprintf(r->status, sizeof r->status, "failed (exit %d)", rc);
	r->have = nonempty(b, r->file);
	if (r->stdout_row) {
		/* The command wrote its file (-o); its standard output is a
		 * part of its own. */
		memcpy(r->stdout_row->status, r->status, sizeof r->status);
		r->stdout_row->have = nonempty(b, r->stdout_row->file);
	}
}

/* A gpuprobe command as a part; stdout_name: its standard output is a
 * part of its own (the command writes `file` with -o). */
static struct row *cmd_part_start(struct bundle *b, const char *file, const char *stdout_name,
				  double deadline, struct cmd_part *c)
{
	struct row *r = row_new(b, file);
	c->dir = b->dir;
	cmd_line(c, &r->cmd);
	if (stdout_name) {
		strbuf_addf(&r->cmd, "  > %s", stdout_name);
		r->stdout_row = row_new(b, stdout_name);
		strbuf_addf(&r->stdout_row->cmd, "(the standard output of %s)", file);
	}
	/* The child has its own copy of c: the caller may reuse it. */
	part_start(b, r, stdout_name, deadline, run_cmd, c);
	return r;
}

static struct row *own_part_start(struct bundle *b, const char *file, double deadline,
				  const char *what, int (*fn)(void *), struct gp_bundle_part_arg *a)
{
	struct row *r = row_new(b, file);
	strbuf_addstr(&r->cmd, what);
	part_start(b, r, NULL, deadline, fn, a);
	return r;
}

static void cmd_init(struct cmd_part *c, int (*cmd)(int, char **, const struct gp_global *),
		     const char *name)
{
	memset(c, 0, sizeof *c);
	c->cmd = cmd;
	cmd_arg(c, "gpuprobe");
	cmd_arg(c, "%s", name);
}

/* jvm-threads.txt: asked only with --jvm-threaddump, for it starts the
 * JVM's attach listener (a thread and a socket that stay); otherwise,
 * for a target whose program is java, a row that says how to ask. */
static void jvm_part(struct bundle *b, struct row **rows, size_t *nr, struct gp_bundle_part_arg *pa)
{
	if (b->o->jvm_dump) {
		rows[(*nr)++] = own_part_start(b, "jvm-threads.txt", 25, "(built in, --jvm-threaddump) "
			"the JVM's own thread dump and deadlock report through its attach protocol, "
			"as jstack -l: THIS STARTS THE JVM'S ATTACH LISTENER (a thread and "
			"/tmp/.java_pidPID in the target, for its life; .attach_pidPID and SIGQUIT "
			"when it was not running) (src/bundle/bundle_jvm.c)", gp_bundle_jvm_part, pa);
		return;
	}
	char path[64], exe[4096];
	snprintf(path, sizeof path, "/proc/%d/exe", b->o->pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	const char *base = strrchr(exe, '/');
	if (strcmp(base ? base + 1 : exe, "java"))
		return;
	struct row *r = row_new(b, "jvm-threads.txt");
	snprintf(r->status, sizeof r->status, "skipped");
	strbuf_addstr(&r->cmd, "(gpuprobe bundle --jvm-threaddump)");
	strbuf_addstr(&r->notes, "    gpuprobe: not asked: the JVM's own thread dump and deadlock "
		      "report come through its attach listener, which asking starts in the target "
		      "(a thread and a socket); --jvm-threaddump asks\n");
}

static void comm_of(int pid, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", pid);
	snprintf(buf, cap, "?");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0) {
		snprintf(buf, cap, "?");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* The capabilities gpuprobe ran with, and what each missing one cost
 * (issue 28: in a container, root is not enough: kernel stacks need
 * CAP_SYS_ADMIN, fs/proc/base.c proc_pid_stack; deploy/daemonset.yaml
 * asks for these).  CapEff of /proc/self/status. */
static void caps_line(struct strbuf *m)
{
	static const struct { int bit; const char *name, *cost; } caps[] = {
		{ 19, "SYS_PTRACE", "user stacks and memory of other users' and containers' processes" },
		{ 21, "SYS_ADMIN", "kernel stacks (/proc/PID/stack)" },
		{ 34, "SYSLOG", "the kernel log (/dev/kmsg)" },
		{ 2, "DAC_READ_SEARCH", "/proc/PID/io and fdinfo of other users' processes" },
		{ 39, "BPF", "the BPF path (socket bytes, stacks of sleeping threads without a stop)" },
		{ 38, "PERFMON", "the BPF path's tracing programs" },
		{ 40, "CHECKPOINT_RESTORE", "/proc/PID/map_files (replaced or deleted libraries)" },
	};
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff = 0;
	bool found = false;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	if (f)
		fclose(f);
	if (!found)
		return;
	strbuf_addstr(m, "capabilities:");
	bool any = false;
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
		if (eff >> caps[i].bit & 1) {
			strbuf_addf(m, "%s%s", any ? ", " : " held ", caps[i].name);
			any = true;
		}
	bool missing = false;
	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
		if (!(eff >> caps[i].bit & 1)) {
			strbuf_addf(m, "%s%s (costs %s)", missing ? "; " : any ? "; missing " : " missing ",
				    caps[i].name, caps[i].cost);
			missing = true;
		}
	strbuf_addch(m, '\n');
}

/* Which of the target's variables env.txt holds, by name (its lines
 * NAME=value; # lines are its own words). */
static void env_kept(const struct bundle *b, struct strbuf *m)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/env.txt", b->dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	strbuf_addf(m, "\nEnvironment kept (env.txt; %s; no other variable is in this bundle):",
		    gp_bundle_env_rule);
	char line[512];
	unsigned n = 0;
	bool whole = true;
	while (fgets(line, sizeof line, f)) {
		size_t len = strlen(line);
		bool part = whole;
		whole = len && line[len - 1] == '\n';
		if (!part || line[0] == '#')
			continue;
		size_t name = strcspn(line, "=\n");
		strbuf_addf(m, "%s%.*s", n++ ? ", " : " ", (int)(name > 64 ? 64 : name), line);
	}
	fclose(f);
	strbuf_addstr(m, n ? "\n" : " none\n");
}

static void manifest(struct bundle *b, struct strbuf *m, const char *comm, const char *started,
		     double secs)
{
	const struct gp_bundle_opts *o = b->o;
	strbuf_addf(m, "gpuprobe %s bundle of pid %d (%s), started %s, %.1f s, as uid %u%s\n",
		    PACKAGE_VERSION, o->pid, comm, started, secs, (unsigned)geteuid(),
		    geteuid() == 0 ? " (root)" : " (not root: no kernel stacks, no other "
		    "users' processes' memory, maybe no kernel log)");
	if (o->why)
		strbuf_addf(m, "why: %s\n", o->why);
	caps_line(m);
	strbuf_addf(m, "\nEach part, its status, wall seconds, and the command that made it "
		    "(run in this bundle's directory):\n\n");
	for (size_t i = 0; i < b->nrows; i++) {
		const struct row *r = &b->rows[i];
		strbuf_addf(m, "%-18s %-30s %6.1f  %s\n", r->file,
			    r->have ? r->status : (strcmp(r->status, "ok") ? r->status : "ok, empty"),
			    r->secs, r->cmd.buf);
	}
	env_kept(b, m);
	strbuf_addf(m, "\nMissing, cut or skipped, and why:\n\n");
	bool any = false;
	for (size_t i = 0; i < b->nrows; i++) {
		const struct row *r = &b->rows[i];
		bool whole = !strcmp(r->status, "ok") && r->have;
		if (whole && !r->notes.len)
			continue;
		/* The part's first line on standard error says why (a part
		 * that completed but said something has gaps). */
		const char *why = r->notes.buf;
		while (*why == ' ')
			why++;
		int wl = (int)strcspn(why, "\n");
		strbuf_addf(m, "  %s: %s%s%s%.*s\n", r->file,
			    whole ? "complete, with gaps" : r->have ? r->status : "not in the bundle: ",
			    whole || r->have ? "" : r->status, wl ? ": " : "", wl, why);
		any = true;
	}
	if (!any)
		strbuf_addf(m, "  nothing: every part completed\n");
	strbuf_addf(m, "\nWhat the parts said (their standard error):\n\n");
	for (size_t i = 0; i < b->nrows; i++)
		if (b->rows[i].notes.len)
			strbuf_addf(m, "  %s:\n%s", b->rows[i].file, b->rows[i].notes.buf);
}

/* Removes the working directory, whatever the parts left in it (it is
 * ours: made by mkdtemp, nothing in it is followed). */
static void cleanup(struct bundle *b)
{
	for (size_t i = 0; i < b->nrows; i++) {
		strbuf_release(&b->rows[i].cmd);
		strbuf_release(&b->rows[i].notes);
	}
	DIR *d = opendir(b->dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(b->dir);
}

static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	char buf[65536];
	ssize_t n = -1;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0)
		n = -1;
	return n == 0 ? 0 : -1;
}

/* The archive was opened first (a FILE that cannot be written is said
 * before ten seconds of work); the parts go in now. */
static int write_archive(struct bundle *b, struct gp_tar *t, const char *top, const struct strbuf *m)
{
	char name[160], path[4200];
	snprintf(name, sizeof name, "%s/MANIFEST", top);
	gp_tar_add_mem(t, name, m->buf, m->len);
	for (size_t i = 0; i < b->nrows; i++) {
		if (!b->rows[i].have)
			continue;
		snprintf(name, sizeof name, "%s/%s", top, b->rows[i].file);
		snprintf(path, sizeof path, "%s/%s", b->dir, b->rows[i].file);
		gp_tar_add_file(t, name, path);
	}
	if (gp_tar_close(t) < 0) {
		gp_err_errno(errno, b->o->out, "cannot write the bundle");
		return -1;
	}
	return 0;
}

static void secs_arg(struct cmd_part *c, const char *opt, double v)
{
	cmd_arg(c, "%s", opt);
	cmd_arg(c, "%g", v);
}

/* The archive, in a directory nobody else may write to, through a new
 * FILE.tmp of ours (common/safefile.h).  NULL, said, when it cannot be. */
static struct gp_tar *open_archive(const char *out)
{
	char why[256];
	if (gp_safe_dir_of(out, why, sizeof why) < 0) {
		if (errno == EPERM)
			gp_err(out, "refusing to write the bundle there: %s", why);
		else
			gp_err(out, "cannot write the bundle: its directory: %s", why);
		return NULL;
	}
	struct gp_tar *tar = gp_tar_open(out);
	if (!tar && errno == EEXIST)
		gp_err(out, "refusing to write the bundle: %s.tmp is there and is not a file of "
		       "this user's (remove it, or give another -o)", out);
	else if (!tar)
		gp_err_errno(errno, out, "cannot write the bundle");
	return tar;
}

/* How long watch's record had seen the process flat when it judged a
 * hang (its verdict line: judged.to - since_s); 0 none.  The bundle's
 * trace is told (--flat-before), so that the bundle holds one verdict,
 * not watch's hang beside its own 10 s "undecided" (issue 28). */
static double watch_flat(const char *record)
{
	if (!record)
		return 0;
	FILE *f = fopen(record, "re");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	double flat = 0;
	while (getline(&line, &cap, f) > 0) {
		if (!strstr(line, "\"verdict\""))
			continue;
		json_t *j = json_loads(line, 0, NULL);
		const char *type = json_string_value(json_object_get(j, "type"));
		const char *cls = json_string_value(json_object_get(j, "class"));
		json_t *since = json_object_get(j, "since_s");
		json_t *to = json_object_get(json_object_get(j, "judged"), "to");
		if (type && !strcmp(type, "verdict") && cls && !strncmp(cls, "hang-", 5)
		    && json_is_number(since) && json_is_number(to))
			flat = json_number_value(to) - json_number_value(since);
		else if (type && !strcmp(type, "verdict"))
			flat = 0;
		json_decref(j);
	}
	free(line);
	fclose(f);
	return flat > 0 && flat < 1e9 ? flat : 0;
}

/* On a terminal, the trace's seconds as they pass (issue 28: a bundle
 * said one line, then nothing for ten seconds or more); the child is
 * looked at, not reaped (WNOWAIT), so part_finish still takes it. */
static void trace_progress(const struct bundle *b, const struct row *trace, double seconds)
{
	if (!b->o->say || !trace->started || !isatty(STDERR_FILENO))
		return;
	struct gp_progress p;
	gp_progress_start(&p, "bundle: tracing (tenths of a second)", (uint64_t)(seconds * 10), true);
	for (;;) {
		siginfo_t si = { 0 };
		if (waitid(P_PID, (id_t)trace->job.pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid)
			break;
		double el = gp_mono_now() - trace->job.t0;
		if (el >= seconds + 20)
			break;
		gp_progress_update(&p, (uint64_t)((el < seconds ? el : seconds) * 10));
		usleep(100000);
	}
	gp_progress_end(&p);
	fprintf(stderr, "gpuprobe: bundle of pid %d: the trace is done; the stacks, then the "
		"report\n", b->o->pid);
}

/* The folder inside the archive is named as the archive is, less its
 * .tar.gz, .tgz or .tar (issue 28: b.tar.gz held
 * gpuprobe-bundle-PID-TIME/, a second earlier than its own name said);
 * "" when that leaves no name a folder can have in a ustar header. */
static void top_name(const char *out, char *top, size_t cap)
{
	static const char *const exts[] = { ".tar.gz", ".tgz", ".tar" };
	const char *base = strrchr(out, '/');
	base = base ? base + 1 : out;
	size_t n = strlen(base);
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		size_t e = strlen(exts[i]);
		if (n > e && !strcmp(base + n - e, exts[i])) {
			n -= e;
			break;
		}
	}
	top[0] = '\0';
	if (n == 0 || n >= cap || n > 80 || base[0] == '.')
		return;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)base[i] < 0x20 || base[i] == 0x7f)
			return;
	memcpy(top, base, n);
	top[n] = '\0';
}

/* report.md and plot.svg: the report of what the bundle holds, the
 * watch's record first (its plot is the one drawn), then the bundle's
 * own trace. */
static void report_part(struct bundle *b, struct cmd_part *c)
{
	bool have_trace = false;
	for (size_t i = 0; i < b->nrows; i++)
		if (!strcmp(b->rows[i].file, "trace.jsonl"))
			have_trace = b->rows[i].have;
	cmd_init(c, cmd_report, "report");
	if (b->o->watch_result) {
		struct row *w = row_new(b, "watch.jsonl");
		char dst[4200];
		snprintf(dst, sizeof dst, "%s/watch.jsonl", b->dir);
		strbuf_addf(&w->cmd, "(gpuprobe watch's record of the process: its samples "
			    "before the hang, the stacks at it, its verdict)");
		w->have = copy_file(b->o->watch_result, dst) == 0;
		snprintf(w->status, sizeof w->status, w->have ? "ok" : "not copied");
		cmd_arg(c, "watch.jsonl");
	}
	if (have_trace)
		cmd_arg(c, "trace.jsonl");
#ifdef HAVE_CAIRO
	cmd_arg(c, "--plot");
	cmd_arg(c, "plot.svg");
#endif
	if (c->argc > 2) {
		part_finish(b, cmd_part_start(b, "report.md", NULL, 60, c));
#ifdef HAVE_CAIRO
		struct row *p = row_new(b, "plot.svg");
		struct stat st;
		char path[4200];
		snprintf(path, sizeof path, "%s/plot.svg", b->dir);
		p->have = stat(path, &st) == 0 && st.st_size > 0;
		snprintf(p->status, sizeof p->status, "%s", p->have ? "ok" : "not drawn");
		strbuf_addstr(&p->cmd, "(drawn by report.md's command)");
#else
		struct row *p = row_new(b, "plot.svg");
		snprintf(p->status, sizeof p->status, "skipped");
		strbuf_addstr(&p->notes, "    gpuprobe: built without cairo: no plots\n");
#endif
	} else {
		struct row *r = row_new(b, "report.md");
		snprintf(r->status, sizeof r->status, "skipped");
		strbuf_addstr(&r->notes, "    gpuprobe: no result to report: the trace wrote none\n");
	}
}

int gp_bundle_write(const struct gp_bundle_opts *o)
{
	struct bundle b = { .o = o };
	struct gp_tar *tar = open_archive(o->out);
	if (!tar)
		return -1;
	if (o->say)
		fprintf(stderr, "gpuprobe: bundle of pid %d: a %g s trace and the other parts, "
			"into %s\n", o->pid, o->seconds > 0 ? o->seconds : GP_BUNDLE_SECONDS_DEFAULT,
			o->out);
	const char *tmp = getenv("TMPDIR");
	snprintf(b.dir, sizeof b.dir, "%s/gpuprobe-bundle.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(b.dir)) {
		gp_err_errno(errno, b.dir, "cannot make the bundle's working directory");
		gp_tar_abandon(tar);
		return -1;
	}
	double t0 = gp_mono_now();
	char comm[32], started[32], top[96];
	comm_of(o->pid, comm, sizeof comm);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
	char stamp[24];
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	top_name(o->out, top, sizeof top);
	if (!top[0])
		snprintf(top, sizeof top, "gpuprobe-bundle-%d-%s", o->pid, stamp);
	double seconds = o->seconds > 0 ? o->seconds : GP_BUNDLE_SECONDS_DEFAULT;

	/* Versions and environment first: what a maintainer asks for first,
	 * and the part least likely to be cut by a later wedge.  The parts
	 * that never ptrace run beside the trace; the stacks after it (one
	 * ptracing part at a time: part.h). */
	struct cmd_part c;
	cmd_init(&c, cmd_info, "info");
	struct row *rows[10];
	size_t nr = 0;
	rows[nr++] = cmd_part_start(&b, "info.txt", NULL, 20, &c);

	cmd_init(&c, cmd_trace, "trace");
	cmd_arg(&c, "%d", o->pid);
	secs_arg(&c, "--seconds", seconds);
	if (o->interval > 0)
		secs_arg(&c, "--interval", o->interval);
	if (o->hang_after > 0)
		secs_arg(&c, "--hang-after", o->hang_after);
	double flat = watch_flat(o->watch_result);
	if (flat > 0)
		secs_arg(&c, "--flat-before", flat);
	cmd_arg(&c, "-o");
	cmd_arg(&c, "trace.jsonl");
	/* At the deadline trace gets SIGTERM and still writes its verdict. */
	struct row *trace = cmd_part_start(&b, "trace.jsonl", "trace.txt", seconds + 20, &c);

	struct gp_bundle_part_arg pa = { .pid = o->pid, .window_s = 600 };
	rows[nr++] = own_part_start(&b, "kmsg.txt", 10, "(built in) /dev/kmsg: GPU-driver and "
				    "hang/lockup/OOM lines of the last 10 minutes (src/tracer/kmsg.c)",
				    gp_bundle_kmsg, &pa);
	rows[nr++] = own_part_start(&b, "gpu.json", 20, "(built in) GPU fds from /proc/PID/fd, one "
				    "reading of DRM fdinfo, KFD and NVML per process (src/gpu/gpumem.c)",
				    gp_bundle_gpu, &pa);
	rows[nr++] = own_part_start(&b, "runtime-libs.json", 15, "(built in) GPU runtimes mapped "
				    "in /proc/PID/maps and their build-ids (src/unwind/runlibs.c)",
				    gp_bundle_libs, &pa);
	rows[nr++] = own_part_start(&b, "env.txt", 10, "(built in) the target's environment "
				    "variables the allow-list keeps, never the others (src/bundle/bundle_env.c)",
				    gp_bundle_env, &pa);
	rows[nr++] = own_part_start(&b, "ras.txt", 15, "(built in) NCCL/RCCL RAS status "
				    "(src/bundle/bundle_ras.c)", gp_bundle_ras_part, &pa);
	jvm_part(&b, rows, &nr, &pa);
	trace_progress(&b, trace, seconds);
	part_finish(&b, trace);

	cmd_init(&c, cmd_stacks, "stacks");
	cmd_arg(&c, "%d", o->pid);
	part_finish(&b, cmd_part_start(&b, "stacks.txt", NULL, 30, &c));
	for (size_t i = 0; i < nr; i++)
		part_finish(&b, rows[i]);

	report_part(&b, &c);

	struct strbuf m = STRBUF_INIT;
	manifest(&b, &m, comm, started, gp_mono_now() - t0);
	int rc = write_archive(&b, tar, top, &m);
	strbuf_release(&m);
	cleanup(&b);
	return rc;
}
