/* watch --metrics FILE: a Prometheus text file (exposition format 0.0.4,
 * which node_exporter's textfile collector reads: it takes *.prom files
 * of its --collector.textfile.directory, HELP and TYPE lines included,
 * and refuses timestamps) written atomically each tick: to FILE.tmp,
 * then rename(2), so that the collector never reads half a file.
 *
 * The series (every value a gauge unless said):
 *   gpuprobe_watch_up 1
 *   gpuprobe_watch_processes                 processes followed
 *   gpuprobe_watch_bundles_total             counter: bundles written
 *   gpuprobe_process_class{pid,comm,class}   1 for the process's class now
 *   gpuprobe_process_hang{pid,comm}          1 when the class is a hang-*
 *   gpuprobe_process_seconds_since_progress{pid,comm}
 *   gpuprobe_process_cpu_cores{pid,comm}     CPU the process burns now
 *   gpuprobe_process_idle_cpu_cores{pid,comm}
 *        CPU burnt while it makes no progress (class idle or hang-*):
 *        seed 000's runtime thread polling while the GPU context idles
 *   gpuprobe_process_gpu{pid,comm,state}     1 for its GPU's state now:
 *        work, spin, busy (occupancy alone), idle, unknown (gpuwork.h)
 *   gpuprobe_watch_last_update_timestamp_seconds
 *        when this file was written (Unix time): a watch killed with -9
 *        leaves its last file behind, "up 1" included; an alert on
 *        time() minus this sees it
 *   gpuprobe_process_hang_since_timestamp_seconds{pid,comm,...}
 *        for a process whose class is a hang-*: when its flat stretch
 *        began (Unix time), from what gpuprobe saw and, for a process
 *        found already still, how long no thread of it had run
 *        (tracer/still.h): a watch restarted does not restart the clock
 *        of a hang that went on meanwhile.  "Hung 5 minutes" is one
 *        expression: time() - gpuprobe_process_hang_since_timestamp_seconds > 300
 *   gpuprobe_process_gpu_info{pid,comm,...,UUID,pci_bus_id} 1
 *        a GPU the process holds (NVML's UUID; DRM fdinfo's drm-pdev for
 *        the others): joins DCGM exporter's series, which carry UUID
 * Every process series carries, besides pid and comm: nspid (its pid in
 * its own namespace, "" when the same), container_id, pod and namespace
 * (nsinfo.c: the cgroup path, the pod's own files), "" where none.
 *   A followed process's descendants whose threads the hang snapshot
 *   stacked get lines of their own too (their pid, comm, CPU and
 *   signature, the tree's class and seconds): the hung worker named.
 *   gpuprobe_process_wait_signature{pid,comm,dist_job,rank,signature,frame} 1
 *        where the main thread of a process with no progress for
 *        --hang-after (idle or hung) waits, as a short stable signature
 *        (issue 29): deploy/prometheus-rules.yaml names the rank whose
 *        signature differs from its job's majority.  dist_job, not job:
 *        Prometheus owns the job label (its scrape job). */
#ifndef GP_METRICS_H
#define GP_METRICS_H

#include "strbuf.h"

#include <stddef.h>

struct gp_metric_proc {
	int pid;
	char comm[16];
	const char *cls;            /* a verdict class name */
	int hang;                   /* the class is a hang-* */
	double since_progress;      /* seconds */
	double cpu_cores, idle_cpu_cores;
	const char *gpu;            /* gp_gpu_work_name() */
	/* A flat process's wait signature (model/stuck.h), "" none; its
	 * distributed job ("" none) and rank (-1 none) from its environment
	 * (model/proctab.h). */
	char signature[12];
	char frame[160];
	char dist_job[64];
	int rank;
	/* Where it lives (target nspid, container), "" unknown or none. */
	char nspid[16];
	char container_id[72];
	char pod[72];
	char pod_ns[72];
	double hang_since_unix;     /* hang: when its flat stretch began; 0 none */
	/* The GPUs it holds: NVML UUIDs, or PCI addresses (drm-pdev), each
	 * "UUID|pci" as gp_metrics_gpu_add keeps them. */
	char gpus[4][96];
	size_t ngpus;
};

struct gp_metrics_watch {
	unsigned long bundles;
	size_t procs;
	double now_unix;            /* the time of this writing */
};

/* Adds a GPU the process holds (uuid "" or pci "" when not known; kept
 * once, at most 4). */
void gp_metrics_gpu_add(struct gp_metric_proc *p, const char *uuid, const char *pci);

/* The file's text (pure). */
void gp_metrics_text(struct strbuf *sb, const struct gp_metrics_watch *w,
		     const struct gp_metric_proc *p, size_t n);
/* Writes it to path atomically.  0, or -1 with errno. */
int gp_metrics_write(const char *path, const struct strbuf *sb);

/* A hang a watch before this one exported: gpuprobe_process_hang_since_
 * timestamp_seconds of pid. */
struct gp_metric_hang {
	int pid;
	double since_unix;
};
/* The hangs of the metrics file at path, as this file writes them (up to
 * cap): a watch restarted keeps a hang's start (issue 28), even where
 * no thread's last run can date it -- our own stops of an earlier watch
 * ran every thread (tracer/still.h).  Only a regular file of at most
 * 4 MiB is read, never blocking (a FIFO is none); 0 when none. */
size_t gp_metrics_read_hangs(const char *path, struct gp_metric_hang *out, size_t cap);

#endif
