/* Text rendering of a trace: the live line per sample and the end
 * summary.  Works from the compact series only; never reads /proc. */
#ifndef GP_TRACE_TEXT_H
#define GP_TRACE_TEXT_H

#include "series.h"

#include <stdbool.h>
#include <stdio.h>

struct gp_trace_end {
	int pid;
	const char *comm;          /* its name at the end (after an exec) */
	const char *cmdline;       /* its command line as shell words, or NULL */
	const char *started_as;    /* the command line before an exec, or NULL */
	const char *where;         /* its namespaces and container (gp_target_where), or NULL */
	const char *reason;        /* "exited", "interrupted", "time limit", "pid reused", ... */
	bool have_status;
	int status, signal;        /* for a command gpuprobe started */
	const char *output;        /* result file, or NULL */
	unsigned long lines;       /* lines written to it */
	unsigned long lost_threads;/* vanished between readdir and read */
	unsigned long late;        /* ticks skipped because a sample overran */
	long page_size;
	/* Every process the tree started (tracer/forks.h), or why unknown. */
	bool have_forks;
	unsigned long forks_started, forks_exited, forks_lost;
	const char *forks_why;
	bool kstack_denied, syscall_denied, io_denied;
	/* The sampling thread over the trace (span_s): its CPU time and its
	 * time waiting for a CPU (schedstat), to say why ticks were late. */
	bool have_sampler;
	double sampler_cpu_s, sampler_wait_s, span_s;
};

/* "  3.0s  top 4243 hal-mem  98% (sys 97%)  total 105%  RssFile 16555 MiB  GPU 298 MiB  dirtied 512.0 / written 510.3 MiB/s" */
void gp_render_live_line(FILE *out, const struct gp_point *prev,
			 const struct gp_point *cur, long page_size);
void gp_render_trace_summary(FILE *out, const struct gp_series *s,
			     const struct gp_trace_end *end);


#endif
