/* watch on a hang: one log line and, with --bundle-dir, one bundle made
 * in a child through the command table (see wproc.h, watch.h). */
#include "config.h"
#include "wproc.h"
#include "commands.h"
#include "error.h"
#include "strbuf.h"
#include "timeutil.h"
#include "verdict_text.h"
#include "watch.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t dir_bundle_bytes(const char *dir)
{
	uint64_t sum = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "gpuprobe-bundle-", 16))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	return sum;
}

/* In the bundle's child: the record as one result file, then the bundle,
 * through the command table (the commands sit side by side: watch runs
 * `gpuprobe bundle` as a person would, with the hidden options that hand
 * it the record and the reason). */
static void bundle_child(struct watch *W, struct wproc *w, json_t *verdict, const char *why)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Its working files under the watch's spool: removed with it.  Its
	 * standard output (the bundle's name) is not the watch's log: the
	 * watch logs the one line when the bundle is done. */
	setenv("TMPDIR", W->spool, 1);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, STDOUT_FILENO);
	char rec[4200], pid[16], secs[32], hang[32];
	snprintf(rec, sizeof rec, "%s/bundle-%d.jsonl", W->spool, w->pid);
	json_t *tail[3] = { verdict, json_pack("{s:s, s:f, s:s, s:n, s:n}", "type", "exit", "t",
					       w->series.n ? w->series.pt[w->series.n - 1].t : 0.0,
					       "reason", "time limit", "status", "signal"), NULL };
	bool have_rec = w->spooled && gp_spool_export(&w->spool, rec, tail) == 0;
	snprintf(pid, sizeof pid, "%d", w->pid);
	snprintf(secs, sizeof secs, "%g", W->o->bundle_seconds);
	snprintf(hang, sizeof hang, "%g", W->o->judge.hang_after);
	char *argv[] = { "gpuprobe", "bundle", pid, "-q", "-o", W->bundle_path, "--seconds", secs,
			 "--interval", "0.25", "--hang-after", hang, "--why", (char *)why,
			 have_rec ? "--watch-record" : NULL, rec, NULL };
	int argc = 0;
	while (argv[argc])
		argc++;
	char prog[] = "gpuprobe bundle";
	char *cargv[sizeof argv / sizeof argv[0]];
	memcpy(cargv, argv + 1, sizeof argv - sizeof argv[0]);
	cargv[0] = prog;
	struct gp_global g = { .quiet = true, .argv0 = "gpuprobe", .argc = argc, .argv = argv };
	int rc = cmd_bundle(argc - 1, cargv, &g);
	unlink(rec);
	fflush(NULL);
	_exit(rc == 0 ? 0 : 1);
}

static void safe_name(const char *in, char *out, size_t cap)
{
	size_t j = 0;
	for (const char *c = in; *c && j + 1 < cap; c++)
		out[j++] = (isalnum((unsigned char)*c) || *c == '.' || *c == '_' || *c == '-') ? *c : '_';
	out[j] = '\0';
}

/* A line snprintf cut short (its return at cap or more) ends at a word,
 * with an ellipsis, not mid-word: the verdict's summary is long. */
static void clip_words(char *buf, size_t cap, int wanted)
{
	if (wanted < 0 || (size_t)wanted < cap || cap < 16)
		return;
	size_t end = cap - 5; /* room for " ..." and the NUL */
	while (end > cap / 2 && buf[end] != ' ')
		end--;
	while (end > 0 && (buf[end - 1] == ',' || buf[end - 1] == ';' || buf[end - 1] == ':' || buf[end - 1] == ' '))
		end--;
	memcpy(buf + end, " ...", 5);
}

static void start_bundle(struct watch *W, struct wproc *w, double t, const char *summary)
{
	char why[512], comm[32], stamp[24];
	clip_words(why, sizeof why, snprintf(why, sizeof why, "gpuprobe watch: %s, no progress for %.1f s: %s",
					     gp_class_name(w->cls), w->since, summary));
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	safe_name(w->comm, comm, sizeof comm);
	snprintf(W->bundle_path, sizeof W->bundle_path, "%s/gpuprobe-bundle-%d-%s-%s.tar.gz",
		 W->o->bundle_dir, w->pid, comm, stamp);
	json_t *verdict = gp_verdict_json(W->v);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		bundle_child(W, w, verdict, why);
	json_decref(verdict);
	if (pid < 0) {
		watch_log("pid %d (%s): %s: no bundle: fork: %s", w->pid, w->comm,
			 gp_class_name(w->cls), strerror(errno));
		return;
	}
	W->bundle_pid = pid;
	W->bundle_t0 = gp_mono_now();
	W->last_bundle = t;
	clip_words(W->bundle_line, sizeof W->bundle_line,
		   snprintf(W->bundle_line, sizeof W->bundle_line, "pid %d (%s): %s, no progress for %.1f s: %s",
			    w->pid, w->comm, gp_class_name(w->cls), w->since, summary));
}

/* The bundle's child, taken when it is done; the one log line. */
void watch_reap_bundle(struct watch *W)
{
	int st;
	if (!W->bundle_pid || waitpid(W->bundle_pid, &st, WNOHANG) != W->bundle_pid)
		return;
	W->bundle_pid = 0;
	struct stat sb;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && stat(W->bundle_path, &sb) == 0) {
		W->bundles++;
		watch_log("%s: bundle %s (%.0f KiB, %.1f s)", W->bundle_line, W->bundle_path,
			 (double)sb.st_size / 1024, gp_mono_now() - W->bundle_t0);
	} else {
		watch_log("%s: the bundle %s could not be written", W->bundle_line, W->bundle_path);
	}
}

void watch_stop_bundle(struct watch *W)
{
	if (!W->bundle_pid)
		return;
	kill(W->bundle_pid, SIGKILL);
	waitpid(W->bundle_pid, NULL, 0);
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.tmp", W->bundle_path);
	unlink(tmp);
	W->bundle_pid = 0;
}

/* A hang was judged: once per flat stretch, a line and maybe a bundle. */
void watch_on_hang(struct watch *W, struct wproc *w, double t)
{
	struct strbuf sb = STRBUF_INIT;
	gp_verdict_summary(&sb, W->v);
	if (!w->episode) {
		w->episode = true;
		w->want_bundle = W->o->bundle_dir != NULL;
		if (!w->want_bundle)
			watch_log("pid %d (%s): %s, no progress for %.1f s: %s", w->pid, w->comm,
				 gp_class_name(w->cls), w->since, sb.buf);
	}
	if (w->want_bundle && !W->bundle_pid
	    && (W->last_bundle < 0 || t - W->last_bundle >= W->o->bundle_every)) {
		w->want_bundle = false;
		uint64_t used = dir_bundle_bytes(W->o->bundle_dir);
		if (used >= W->o->bundle_max)
			watch_log("pid %d (%s): %s, no progress for %.1f s: %s: no bundle: %s holds "
				 "%llu bytes of bundles (--bundle-max %llu)", w->pid, w->comm,
				 gp_class_name(w->cls), w->since, sb.buf, W->o->bundle_dir,
				 (unsigned long long)used, (unsigned long long)W->o->bundle_max);
		else
			start_bundle(W, w, t, sb.buf);
	}
	strbuf_release(&sb);
}
