/* watch's Prometheus text file: see metrics.h. */
#include "config.h"
#include "metrics.h"
#include "safefile.h"
#include "safetext.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A label value as the exposition format wants it: UTF-8, with
 * backslash, double quote and newline escaped (Prometheus "Exposition
 * formats", text format: label_value).  comm is any 15 bytes the process
 * chose: node_exporter refuses the whole file for one byte that is not
 * UTF-8 ("invalid label value"), so the value is the name as the watch's
 * log shows it (common/safetext.h: \xNN for such a byte, no control
 * character left), then escaped. */
static void label(struct strbuf *sb, const char *v)
{
	struct strbuf safe = STRBUF_INIT;
	gp_safe_add(&safe, v);
	for (const char *c = safe.buf; *c; c++) {
		if (*c == '\\' || *c == '"')
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *c);
	}
	strbuf_release(&safe);
}

static void head(struct strbuf *sb, const char *name, const char *type, const char *help)
{
	strbuf_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void proc_labels(struct strbuf *sb, const char *name, const struct gp_metric_proc *p)
{
	strbuf_addf(sb, "%s{pid=\"%d\",comm=\"", name, p->pid);
	label(sb, p->comm);
	strbuf_addch(sb, '"');
	/* Where it lives, only where it is somewhere (an empty label is no
	 * label to Prometheus: a host process's series stay as they were). */
	const struct { const char *name, *v; } where[] = {
		{ "nspid", p->nspid }, { "container_id", p->container_id },
		{ "pod", p->pod }, { "namespace", p->pod_ns },
	};
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
		if (where[i].v[0]) {
			strbuf_addf(sb, ",%s=\"", where[i].name);
			label(sb, where[i].v);
			strbuf_addch(sb, '"');
		}
}

void gp_metrics_gpu_add(struct gp_metric_proc *p, const char *uuid, const char *pci)
{
	char key[96];
	snprintf(key, sizeof key, "%.60s|%.32s", uuid ? uuid : "", pci ? pci : "");
	if (!strcmp(key, "|"))
		return;
	for (size_t i = 0; i < p->ngpus; i++)
		if (!strcmp(p->gpus[i], key))
			return;
	if (p->ngpus < sizeof p->gpus / sizeof p->gpus[0])
		snprintf(p->gpus[p->ngpus++], sizeof p->gpus[0], "%s", key);
}

/* The hang clock and the GPUs held: see metrics.h. */
static void hang_and_gpus(struct strbuf *sb, const struct gp_metric_proc *p, size_t n)
{
	head(sb, "gpuprobe_process_hang_since_timestamp_seconds", "gauge",
	     "For a hung process: when its flat stretch began (Unix time).");
	for (size_t i = 0; i < n; i++) {
		if (!p[i].hang || p[i].hang_since_unix <= 0)
			continue;
		proc_labels(sb, "gpuprobe_process_hang_since_timestamp_seconds", &p[i]);
		strbuf_addf(sb, "} %.3f\n", p[i].hang_since_unix);
	}
	head(sb, "gpuprobe_process_gpu_info", "gauge",
	     "1 for each GPU the process holds: NVML's UUID (as DCGM exporter labels it), or its PCI address.");
	for (size_t i = 0; i < n; i++)
		for (size_t g = 0; g < p[i].ngpus; g++) {
			const char *bar = strchr(p[i].gpus[g], '|');
			proc_labels(sb, "gpuprobe_process_gpu_info", &p[i]);
			strbuf_addstr(sb, ",UUID=\"");
			struct strbuf u = STRBUF_INIT;
			strbuf_addf(&u, "%.*s", (int)(bar - p[i].gpus[g]), p[i].gpus[g]);
			label(sb, u.buf);
			strbuf_release(&u);
			strbuf_addstr(sb, "\",pci_bus_id=\"");
			label(sb, bar + 1);
			strbuf_addstr(sb, "\"} 1\n");
		}
}

void gp_metrics_text(struct strbuf *sb, const struct gp_metrics_watch *w,
		     const struct gp_metric_proc *p, size_t n)
{
	head(sb, "gpuprobe_watch_up", "gauge", "1 while gpuprobe watch runs.");
	strbuf_addstr(sb, "gpuprobe_watch_up 1\n");
	head(sb, "gpuprobe_watch_processes", "gauge", "Processes gpuprobe watch follows.");
	strbuf_addf(sb, "gpuprobe_watch_processes %zu\n", w->procs);
	head(sb, "gpuprobe_watch_bundles_total", "counter",
	     "Bundles gpuprobe watch has written since it started.");
	strbuf_addf(sb, "gpuprobe_watch_bundles_total %lu\n", w->bundles);
	head(sb, "gpuprobe_watch_last_update_timestamp_seconds", "gauge",
	     "When gpuprobe watch last wrote this file (Unix time): stale when it stopped.");
	strbuf_addf(sb, "gpuprobe_watch_last_update_timestamp_seconds %.3f\n", w->now_unix);

	head(sb, "gpuprobe_process_class", "gauge",
	     "1 for the verdict class of the process now (gpuprobe trace's classes).");
	for (size_t i = 0; i < n; i++) {
		proc_labels(sb, "gpuprobe_process_class", &p[i]);
		strbuf_addstr(sb, ",class=\"");
		label(sb, p[i].cls);
		strbuf_addstr(sb, "\"} 1\n");
	}
	head(sb, "gpuprobe_process_hang", "gauge", "1 when the verdict of the process is a hang class.");
	for (size_t i = 0; i < n; i++) {
		proc_labels(sb, "gpuprobe_process_hang", &p[i]);
		strbuf_addf(sb, "} %d\n", p[i].hang ? 1 : 0);
	}
	head(sb, "gpuprobe_process_seconds_since_progress", "gauge",
	     "Seconds since the process last made progress (output, memory, GPU work).");
	for (size_t i = 0; i < n; i++) {
		proc_labels(sb, "gpuprobe_process_seconds_since_progress", &p[i]);
		strbuf_addf(sb, "} %.3f\n", p[i].since_progress);
	}
	head(sb, "gpuprobe_process_cpu_cores", "gauge", "CPU cores the process burns now.");
	for (size_t i = 0; i < n; i++) {
		proc_labels(sb, "gpuprobe_process_cpu_cores", &p[i]);
		strbuf_addf(sb, "} %.3f\n", p[i].cpu_cores);
	}
	head(sb, "gpuprobe_process_idle_cpu_cores", "gauge",
	     "CPU cores the process burns while it makes no progress (class idle or hang).");
	for (size_t i = 0; i < n; i++) {
		proc_labels(sb, "gpuprobe_process_idle_cpu_cores", &p[i]);
		strbuf_addf(sb, "} %.3f\n", p[i].idle_cpu_cores);
	}
	head(sb, "gpuprobe_process_wait_signature", "gauge",
	     "1 for where the main thread of a process with no progress waits: a signature of its frames.");
	for (size_t i = 0; i < n; i++) {
		if (!p[i].signature[0])
			continue;
		proc_labels(sb, "gpuprobe_process_wait_signature", &p[i]);
		strbuf_addstr(sb, ",dist_job=\"");
		label(sb, p[i].dist_job);
		strbuf_addstr(sb, "\",rank=\"");
		if (p[i].rank >= 0)
			strbuf_addf(sb, "%d", p[i].rank);
		strbuf_addstr(sb, "\",signature=\"");
		label(sb, p[i].signature);
		strbuf_addstr(sb, "\",frame=\"");
		label(sb, p[i].frame);
		strbuf_addstr(sb, "\"} 1\n");
	}
	hang_and_gpus(sb, p, n);
	head(sb, "gpuprobe_process_gpu", "gauge",
	     "1 for what the GPU does for the process now: work, spin, busy, idle or unknown.");
	for (size_t i = 0; i < n; i++) {
		proc_labels(sb, "gpuprobe_process_gpu", &p[i]);
		strbuf_addstr(sb, ",state=\"");
		label(sb, p[i].gpu);
		strbuf_addstr(sb, "\"} 1\n");
	}
}

int gp_metrics_write(const char *path, const struct strbuf *sb)
{
	char tmp[4200];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* A new file of ours, never one that was there (common/safefile.h);
	 * 0644: node_exporter reads it as its own user (Debian's unit runs it
	 * as prometheus), and it says no more than the scrape serves. */
	int fd = gp_create_excl(tmp, 0644);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < sb->len) {
		ssize_t n = write(fd, sb->buf + done, sb->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			unlink(tmp);
			errno = e;
			return -1;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* The file's text, when it is a regular file of at most 4 MiB. */
static char *read_small(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (4 << 20)
	    && (buf = malloc((size_t)st.st_size + 1))) {
		size_t done = 0;
		ssize_t n;
		while (done < (size_t)st.st_size
		       && ((n = read(fd, buf + done, (size_t)st.st_size - done)) > 0
			   || (n < 0 && errno == EINTR)))
			done += n > 0 ? (size_t)n : 0;
		buf[done] = '\0';
	}
	close(fd);
	return buf;
}

size_t gp_metrics_read_hangs(const char *path, struct gp_metric_hang *out, size_t cap)
{
	static const char name[] = "gpuprobe_process_hang_since_timestamp_seconds{pid=\"";
	char *text = path ? read_small(path) : NULL;
	size_t n = 0;
	for (char *l = text; l && *l && n < cap;) {
		char *end = strchr(l, '\n');
		if (end)
			*end = '\0';
		char *v = strrchr(l, ' ');
		char *e1, *e2;
		if (!strncmp(l, name, sizeof name - 1) && v) {
			long pid = strtol(l + sizeof name - 1, &e1, 10);
			double since = strtod(v + 1, &e2);
			if (*e1 == '"' && e1 != l + sizeof name - 1 && !*e2 && pid > 0 && pid <= 0x3fffffff
			    && since > 0 && since < 1e11)
				out[n++] = (struct gp_metric_hang){ (int)pid, since };
		}
		l = end ? end + 1 : NULL;
	}
	free(text);
	return n;
}
