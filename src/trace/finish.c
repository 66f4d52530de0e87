/* The end of a trace (see run.h): a last look at the tree, the exit
 * line, the verdict (a pure function of the series and the stacks taken
 * at the hang) and the summary printed for people. */
#include "config.h"
#include "run.h"
#include "commands.h"
#include "error.h"
#include "forks.h"
#include "parse.h"
#include "procstat.h"
#include "sockflow.h"
#include "trace_text.h"
#include "tree.h"
#include "verdict.h"
#include "verdict_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* This thread's time on a CPU and waiting in a run queue, ns
 * (/proc/thread-self/schedstat, CONFIG_SCHED_INFO). */
bool trace_self_sched(uint64_t *run_ns, uint64_t *wait_ns)
{
	char buf[128];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	uint64_t pcount;
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return gp_parse_schedstat(buf, run_ns, wait_ns, &pcount);
}

/* The exit line, the verdict (a pure function of the compact series and
 * the stacks taken at the hang), the summary printed for people. */
void trace_finish(struct run *r, const char *reason, double t_end, const char *comm)
{
	struct trace_opts *o = r->o;
	struct gp_trace_end end = { .pid = o->pid, .comm = comm, .reason = reason,
				    .cmdline = r->cmdline.len ? r->cmdline.buf : NULL,
				    .started_as = r->started_as.len ? r->started_as.buf : NULL,
				    .where = r->where.len ? r->where.buf : NULL,
				    .output = r->out_stdout ? NULL : o->out.path,
				    .late = r->tk.late, .page_size = r->page_size };
	json_t *ex = json_pack("{s:s, s:f, s:s}", "type", "exit", "t", t_end, "reason", reason);
	if (r->is_child && r->child.reaped) {
		end.have_status = true;
		if (WIFEXITED(r->child.status)) {
			end.status = WEXITSTATUS(r->child.status);
			json_object_set_new(ex, "status", json_integer(end.status));
			json_object_set_new(ex, "signal", json_null());
		} else if (WIFSIGNALED(r->child.status)) {
			end.signal = WTERMSIG(r->child.status);
			json_object_set_new(ex, "status", json_null());
			json_object_set_new(ex, "signal", json_integer(end.signal));
		}
	} else {
		json_object_set_new(ex, "status", json_null());
		json_object_set_new(ex, "signal", json_null());
	}
	struct gp_sampler_totals tot;
	gp_tree_totals(r->smp.tree, &tot);
	json_object_set_new(ex, "samples", json_integer((json_int_t)tot.samples));
	json_object_set_new(ex, "threads_vanished", json_integer((json_int_t)tot.vanished));
	json_object_set_new(ex, "tids_reused", json_integer((json_int_t)tot.reused));
	json_object_set_new(ex, "late_ticks", json_integer((json_int_t)r->tk.late));
	uint64_t run_ns, wait_ns;
	if (r->have_sched0 && trace_self_sched(&run_ns, &wait_ns) && run_ns >= r->run0_ns && wait_ns >= r->wait0_ns) {
		end.have_sampler = true;
		end.sampler_cpu_s = (double)(run_ns - r->run0_ns) / 1e9;
		end.sampler_wait_s = (double)(wait_ns - r->wait0_ns) / 1e9;
		end.span_s = t_end;
		json_object_set_new(ex, "sampler", json_pack("{s:f, s:f}", "cpu_s", end.sampler_cpu_s,
							     "runq_wait_s", end.sampler_wait_s));
	}
	/* Where socket bytes came from (tracer/sockflow.h). */
	struct gp_sockflow *sf = gp_sockflow_get();
	unsigned long sf_reads, sf_ents, sf_dropped;
	double sf_ms;
	gp_sockflow_cost(sf, &sf_reads, &sf_ents, &sf_dropped, &sf_ms);
	json_object_set_new(ex, "sockets", sf ? json_pack("{s:s, s:I, s:I, s:I, s:f}", "source", "bpf",
		"reads", (json_int_t)sf_reads, "entries", (json_int_t)sf_ents,
		"dropped", (json_int_t)sf_dropped, "ms", sf_ms)
		: json_pack("{s:s, s:s}", "source", "sock_diag", "why", gp_sockflow_why()));
	struct gp_forks_counts fc;
	const char *fwhy;
	end.have_forks = gp_tree_forks(r->smp.tree, &fc, &fwhy);
	if (end.have_forks) {
		end.forks_started = fc.started;
		end.forks_exited = fc.exited;
		end.forks_lost = fc.lost;
		json_object_set_new(ex, "forks", json_pack("{s:I, s:I, s:I}", "started", (json_int_t)fc.started,
				    "exited", (json_int_t)fc.exited, "lost", (json_int_t)fc.lost));
	} else {
		end.forks_why = fwhy;
		json_object_set_new(ex, "forks_unseen", json_string(fwhy));
	}
	trace_write_line(r, ex);
	end.lines = r->lines;
	end.lost_threads = tot.vanished;
	end.kstack_denied = tot.kstack_denied;
	end.syscall_denied = tot.syscall_denied;
	end.io_denied = tot.io_denied;

	/* The verdict: a pure function of the compact series. */
	struct gp_verdict_opts vo = { .hang_after = o->judge.hang_after, .slow_rate = (double)o->judge.slow_rate,
				      .flat_before = o->flat_before,
				      .page_size = r->page_size, .end_reason = reason,
				      .have_status = end.have_status, .status = end.status,
				      .signal = end.signal,
				      .kstacks_seen = o->st.kstacks && !tot.kstack_denied && tot.kstacks_read,
				      .stuck = r->smp.stuck.t >= 0 ? &r->smp.stuck : NULL,
				      .procs = &r->procs,
				      .kmsg = r->notes, .nkmsg = r->nnotes,
				      .kmsg_why = r->kmsg ? NULL : r->kmsg_why,
				      .ras = r->ras.s.reads ? &r->ras.s : NULL };
	struct gp_verdict *verdict = malloc(sizeof *verdict);
	if (verdict) {
		gp_verdict_compute(r->series.pt, r->series.n, &vo, verdict);
		trace_write_line(r, gp_verdict_json(verdict));
		end.lines = r->lines;
		for (int i = 0; i < o->nfail_on; i++)
			if (!strcmp(o->fail_on[i], gp_class_name(verdict->cls)) && r->rc == 0)
				r->rc = GP_EXIT_VERDICT;
	}

	if (r->out && gp_result_close(r->out) < 0 && (r->rc == 0 || r->rc == GP_EXIT_VERDICT)) {
		gp_err_errno(errno, o->out.path, "cannot write the result");
		r->rc = GP_EXIT_ERROR;
	}
	r->out = NULL;
	FILE *human = r->out_stdout ? stderr : stdout;
	gp_render_trace_summary(human, &r->series, &end);
	if (verdict)
		gp_verdict_print(human, verdict);
	free(verdict);
}

/* Once more at the end, while the tree is still there: the stacks the
 * verdict carries when no hang snapshot was taken, or a newer one of the
 * same flat stretch; the runtimes and RAS.  Not after Ctrl-C when this
 * flat stretch has its hang snapshot: the signal has reached the tree by
 * now (from the terminal, or forwarded by stop_child), and the stacks
 * show its exit -- zombies, a KeyboardInterrupt unwinding -- not the hang
 * (the gloo ranks of tests/e2e/trace-gloo-ranks.sh: both leaders Z, the
 * ranks unnamed).  Then the command is ended or waited for. */
void trace_last_look(struct run *r, const char *reason, double t_end)
{
	bool dying = !strcmp(reason, "interrupted") && r->smp.hang_snapped;
	if (strcmp(reason, "exited") != 0 && strcmp(reason, "output error") != 0
	    && strcmp(reason, "pid reused") != 0 && !dying) {
		trace_snapshot_all(r, t_end, "end");
		trace_check_libs(r, t_end, true);
		trace_check_ras(r, t_end, true);
	}
	if (r->is_child && !r->child.reaped) {
		if (!strcmp(reason, "time limit") || !strcmp(reason, "output error"))
			trace_stop_child(r, SIGTERM, true);
		else
			trace_wait_child(r, 2);
	}
}
