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
};

struct gp_metrics_watch {
	unsigned long bundles;
	size_t procs;
};

/* The file's text (pure). */
void gp_metrics_text(struct strbuf *sb, const struct gp_metrics_watch *w,
		     const struct gp_metric_proc *p, size_t n);
/* Writes it to path atomically.  0, or -1 with errno. */
int gp_metrics_write(const char *path, const struct strbuf *sb);

#endif
