/* The verdict's words: every sentence a verdict (src/verdict/, pure data)
 * is told in — its summary, confidence reason, phases, evidence readings
 * and what could not be seen — and its two outputs, the `verdict` result
 * line (doc/result-format.md) and the block printed at the end of a
 * trace.  Built with the bounded string builder (common/strbuf.h). */
#include "config.h"
#include "verdict_text.h"
#include "activity_text.h"
#include "parse.h"
#include "safetext.h"
#include "siblings_text.h"
#include "strbuf.h"
#include "syscalls.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const metric_label[GP_M_COUNT] = {
	"RssFile", "RssAnon", "VmPin", "GPU memory", "GPU engine time",
	"read()", "write()", "received on sockets", "sent on sockets", "threads or processes",
	"GPU work",
};

/* ---- phases, summary, confidence ------------------------------------ */

static const char *machine_of(const struct gp_verdict *v)
{
	return v->machine_set ? v->machine : NULL;
}

static void phase_what(struct strbuf *sb, const struct gp_verdict *v, size_t i)
{
	const struct gp_phase *ph = &v->phase[i];
	switch (ph->kind) {
	case GP_PHASE_NO_OUTPUT:
		strbuf_addstr(sb, "no output");
		return;
	case GP_PHASE_STOPPED:
		strbuf_addstr(sb, "stopped");
		return;
	case GP_PHASE_ACTIVITY:
		gp_activity_words(sb, &v->act, machine_of(v));
		return;
	case GP_PHASE_PROGRESS:
		break;
	}
	for (unsigned k = 0; k < ph->nm && k < GP_M_COUNT; k++) {
		const char *label = (unsigned)ph->m[k] < GP_M_COUNT ? metric_label[ph->m[k]] : "?";
		if (ph->m[k] == GP_M_GPU_WORK && ph->have_gw) {
			strbuf_addf(sb, "%sGPU working: ", k ? ", " : "");
			gp_gpu_work_words(sb, &ph->gw);
			continue;
		}
		if (ph->moving) {
			strbuf_addf(sb, "%s moving", label);
			break;
		}
		char r[32];
		gp_fmt_rate(r, sizeof r, ph->mrate[k]);
		strbuf_addf(sb, "%s%s +%s", k ? ", " : "", label, r);
	}
	if (ph->pid)
		strbuf_addf(sb, " in pid %d (%s)", ph->pid, ph->comm);
}

/* The words name processes and threads by their comm, any bytes the
 * target chose: the sentence is made safe whole (common/safetext.h). */
void gp_phase_what(struct strbuf *sb, const struct gp_verdict *v, size_t i)
{
	size_t from = sb->len;
	phase_what(sb, v, i);
	gp_safe_tail(sb, from);
}

/* The phase before the last one: "; before that +0.0-10.0 s: ..." */
static void before_that(struct strbuf *sb, const struct gp_verdict *v)
{
	size_t i = v->nphases >= 2 ? v->nphases - 2 : 0;
	strbuf_addf(sb, "; before that +%.1f-%.1f s: ", v->phase[i].from, v->phase[i].to);
	phase_what(sb, v, i);
}

/* A progress phase carried by anonymous memory, with no io, GPU or
 * threads among its outputs (file pages beside it: the start-up's). */
static bool anon_only(const struct gp_phase *ph)
{
	if (!ph->nm || ph->m[0] != GP_M_RSS_ANON)
		return false;
	for (unsigned k = 1; k < ph->nm; k++)
		if (ph->m[k] != GP_M_RSS_FILE)
			return false;
	return true;
}

/* A flat time that began before the trace: how it is known (issue 28). */
static void still_words(struct strbuf *sb, const struct gp_verdict *v)
{
	if (v->still_before_s <= 0)
		return;
	char d[32];
	gp_fmt_duration(d, sizeof d, v->still_before_s);
	const char *began = v->watching ? "the watch began" : "the trace began";
	if (v->before_by == GP_BEFORE_CALLER)
		strbuf_addf(sb, ", %s before %s, as its caller saw it (--flat-before)", d, began);
	else if (v->before_by == GP_BEFORE_LAST_WATCH)
		strbuf_addf(sb, ", %s before %s, as the watch before it saw it (its --metrics file)", d,
			    began);
	else
		strbuf_addf(sb, ", %s before %s: no thread of it had run for that long", d, began);
}

/* How the seconds before the trace are known, in the SHORT story's words. */
static const char *before_how(const struct gp_verdict *v)
{
	if (v->before_by == GP_BEFORE_CALLER)
		return "as its caller saw it";
	if (v->before_by == GP_BEFORE_LAST_WATCH)
		return "as the watch before it saw it";
	return "when no thread had run since";
}

static void story(struct strbuf *sb, const struct gp_verdict *v)
{
	char d[32], rs[32], ps[32];
	switch (v->story) {
	case GP_STORY_TOO_FEW:
		strbuf_addf(sb, "%zu sample%s: too few to judge (3 at least)", v->n_samples,
			    v->n_samples == 1 ? "" : "s");
		return;
	case GP_STORY_NO_MEMORY:
		strbuf_addstr(sb, "out of memory");
		return;
	case GP_STORY_STOPPED:
		strbuf_addf(sb, "stopped (state %c) since +%.1f s: ", v->state, v->since_s);
		if (v->act.wg.stopped_pid)
			gp_stopper_words(sb, &v->act.wg);
		else
			strbuf_addstr(sb, "held by SIGSTOP or a debugger");
		strbuf_addstr(sb, ", not hung");
		return;
	case GP_STORY_HANG:
		gp_fmt_duration(d, sizeof d, v->flat);
		strbuf_addf(sb, "no progress for %s (since %+.1f s", d, v->since_s);
		still_words(sb, v);
		strbuf_addstr(sb, "): ");
		gp_activity_words(sb, &v->act, machine_of(v));
		if (v->after_progress && v->nphases)
			before_that(sb, v);
		return;
	case GP_STORY_SHORT:
		if (v->after_progress)
			strbuf_addf(sb, "flat for %.0f s since +%.1f s, %.0f s short of --hang-after %.0f: "
				    "leans %s (", v->flat, v->since_s, v->needs_s, v->hang_after,
				    gp_class_name(v->leans));
		else if (v->still_before_s > 0)
			strbuf_addf(sb, "no progress for %.0f s (%.0f s before the %s, %s, and %.0f s "
				    "of %s), %.0f s short of --hang-after %.0f: leans %s (", v->flat,
				    v->still_before_s, v->watching ? "watch" : "trace", before_how(v),
				    v->flat - v->still_before_s, v->watching ? "watch" : "trace",
				    v->needs_s, v->hang_after, gp_class_name(v->leans));
		else
			strbuf_addf(sb, "no progress in %.0f s of trace, %.0f s short of --hang-after %.0f: "
				    "leans %s (", v->flat, v->needs_s, v->hang_after, gp_class_name(v->leans));
		gp_activity_words(sb, &v->act, machine_of(v));
		strbuf_addch(sb, ')');
		return;
	case GP_STORY_SLOWED:
		gp_fmt_rate(rs, sizeof rs, v->rate_now);
		gp_fmt_rate(ps, sizeof ps, v->rate_before);
		strbuf_addf(sb, "slow progress since +%.1f s: %s, down from %s before (%.0fx slower)",
			    v->since_s, rs, ps, v->ratio);
		break;
	case GP_STORY_PROGRESS:
	case GP_STORY_SLOW_RATE:
		strbuf_addf(sb, v->story == GP_STORY_SLOW_RATE ? "slow progress since +%.1f s: "
			    : "making progress since +%.1f s: ", v->since_s);
		if (v->nphases)
			phase_what(sb, v, v->nphases - 1);
		if (v->nphases && anon_only(&v->phase[v->nphases - 1])) {
			/* a heap that fills, or a leak: no io, no GPU */
			gp_fmt_rate(rs, sizeof rs, v->phase[v->nphases - 1].mrate[0]);
			strbuf_addf(sb, "; only anonymous memory grows: +%s, no io and no GPU output "
				    "(a heap filling up, or a leak)", rs);
		}
		if (v->story == GP_STORY_SLOW_RATE)
			strbuf_addstr(sb, ", under --slow-rate");
		break;
	}
	if (v->eta_s >= 0) {
		char tot[32], res[32], eta[32];
		gp_fmt_size(tot, sizeof tot, v->eta_total);
		gp_fmt_size(res, sizeof res, v->eta_resident);
		gp_fmt_duration(eta, sizeof eta, v->eta_s);
		gp_fmt_rate(rs, sizeof rs, v->rate_now);
		strbuf_addf(sb, "; %s of a %s file mapping resident, ETA %s at %s", res, tot, eta, rs);
	}
}

/* "; kernel log in the phase: nvidia Xid 79 at +12.0 s, ..." */
static void kmsg_words(struct strbuf *sb, const struct gp_verdict *v)
{
	for (size_t i = 0; i < v->nkmsg && i < GP_VERDICT_MAX_KMSG; i++) {
		const struct gp_kmsg_note *k = &v->kmsg[i];
		if (!strcmp(k->kind, "lost") && k->lost)
			strbuf_addf(sb, "%s%u records lost (ring overrun) at %+.1f s",
				    i ? ", " : "; kernel log in the phase: ", k->lost, k->t);
		else if (!strcmp(k->kind, "lost"))
			strbuf_addf(sb, "%srecords lost (ring overrun) at %+.1f s",
				    i ? ", " : "; kernel log in the phase: ", k->t);
		else if (k->xid >= 0)
			strbuf_addf(sb, "%s%s Xid %d at %+.1f s", i ? ", " : "; kernel log in the phase: ",
				    k->driver, k->xid, k->t);
		else
			strbuf_addf(sb, "%s%s %s at %+.1f s (%.60s)", i ? ", " : "; kernel log in the phase: ",
				    k->driver, k->kind, k->t, k->text);
	}
	if (v->kmsg_more)
		strbuf_addf(sb, ", and %u more", v->kmsg_more);
}

/* NCCL RAS's counts join the ranks' comparison (issue 29): on a GPU every
 * rank's host thread waits in the same collective call, where the
 * stacks tell no odd one and RAS's counts can; where the stacks name one
 * too, whether it is the same. */
static void ras_joins_siblings(struct strbuf *sb, const struct gp_verdict *v)
{
	const struct gp_sibcmp *c = &v->act.sib;
	const struct gp_ras_seen *r = &v->ras;
	if (c->kind != GP_SIBK_RANKS)
		return;
	if (c->story == GP_SIBS_SAME) {
		strbuf_addstr(sb, ", the odd one the stacks cannot tell (its ranks all wait in one place),");
		return;
	}
	bool apart = false;
	for (unsigned i = 0; i < c->nodd && i < GP_SIB_ODD_NAMED; i++)
		apart |= c->odd[i].rank == r->rank || (r->pid && c->odd[i].pid == r->pid);
	strbuf_addstr(sb, apart ? ", the rank apart in the stacks too," : ", not the rank apart in the stacks,");
}

/* "; NCCL RAS 2.29.1: rank 1 (pid 4242) is behind in AllReduce: 6649, the
 * others up to 6650; no count moved from +2.0 to +40.0 s".  Not of a job
 * making progress: there a rank behind by one is a rank arriving later
 * (NVIDIA's RAS guide: fine "as long as the counts increase"). */
static void ras_words(struct strbuf *sb, const struct gp_verdict *v)
{
	const struct gp_ras_seen *r = &v->ras;
	enum gp_class c = v->cls == GP_CLASS_EXITED ? v->before : v->cls;
	if (!r->ok_reads || !r->lag || c == GP_CLASS_PROGRESS || c == GP_CLASS_SLOW_PROGRESS)
		return;
	strbuf_addf(sb, "; NCCL RAS%s%s: rank %d", r->version[0] ? " " : "", r->version, r->rank);
	if (r->pid)
		strbuf_addf(sb, " (pid %d)", r->pid);
	ras_joins_siblings(sb, v);
	if (r->missing)
		strbuf_addf(sb, " of communicator %s did not answer (%s)", r->comm,
			    r->dead ? "considered dead" : "unresponsive");
	else
		strbuf_addf(sb, " is behind in %s: %llu, the others up to %llu", r->op,
			    (unsigned long long)r->count, (unsigned long long)r->max);
	if (r->lagging > 1)
		strbuf_addf(sb, " (%u ranks behind of %u)", r->lagging, r->ranks);
	if (r->ok_reads < 2)
		return;
	if (!r->moved_any)
		strbuf_addf(sb, "; no count moved from %+.1f to %+.1f s", r->t_first, r->t_last);
	else if (!r->lag_moved)
		strbuf_addf(sb, "; its count did not move from %+.1f to %+.1f s, others' did", r->t_first,
			    r->t_last);
	else
		strbuf_addf(sb, "; its count still moves (%+.1f to %+.1f s)", r->t_first, r->t_last);
}

void gp_verdict_summary(struct strbuf *sb, const struct gp_verdict *v)
{
	size_t from = sb->len;
	if (v->cls == GP_CLASS_EXITED) {
		if (v->have_status && v->signal)
			strbuf_addf(sb, "exited (killed by signal %d)", v->signal);
		else if (v->have_status)
			strbuf_addf(sb, "exited with status %d", v->status);
		else
			strbuf_addstr(sb, "exited");
		strbuf_addf(sb, " at +%.1f s; before that: ", v->exit_t);
	}
	story(sb, v);
	kmsg_words(sb, v);
	ras_words(sb, v);
	gp_safe_tail(sb, from); /* as gp_phase_what */
}

void gp_verdict_reason(struct strbuf *sb, const struct gp_verdict *v)
{
	switch (v->story) {
	case GP_STORY_TOO_FEW:
		strbuf_addstr(sb, "too few samples");
		return;
	case GP_STORY_NO_MEMORY:
		return;
	case GP_STORY_STOPPED:
		strbuf_addf(sb, "the process state is %c (stopped) in the last %zu samples", v->state,
			    v->stopped_n);
		return;
	case GP_STORY_HANG:
		strbuf_addf(sb, "flat %.0f s = %.1fx --hang-after; memory%s%s flat%s", v->flat,
			    v->flat / v->hang_after, v->io_seen ? ", io" : "", v->gpu_seen ? ", GPU" : "",
			    v->io_seen ? "" : "; io not visible");
		strbuf_addstr(sb, v->cap_why == GP_CAP_BUSY_USER ? "; computing and spinning look alike from outside"
			      : v->cap_why == GP_CAP_GPU ? "; the GPU was not busy in every sample"
			      : v->cap_why == GP_CAP_GPU_WORK ? "; the GPU's work read without its pipes "
				"(no GPM): from power and util.memory, or occupancy alone"
			      : v->cap_why == GP_CAP_WAITS ? "; what the threads wait for is not certain from outside"
			      : v->cap_why == GP_CAP_JAVA ? "; what a parked Java thread waits for "
				"(a lock's owner, a future) is in the JVM's heap, not read from outside"
			      : "");
		return;
	case GP_STORY_SHORT:
		if (v->after_progress)
			strbuf_addf(sb, "flat for less than --hang-after; trace %.0f s longer to decide",
				    v->needs_s);
		else
			strbuf_addf(sb, "trace %.0f s longer (or lower --hang-after) to decide", v->needs_s);
		return;
	case GP_STORY_PROGRESS:
	case GP_STORY_SLOW_RATE:
	case GP_STORY_SLOWED:
		strbuf_addf(sb, "%u interval%s with output in this phase; last output %.1f s before the end",
			    v->events, v->events == 1 ? "" : "s", v->flat);
		return;
	}
}

/* The readings told in words alone, and those told as a rate after a
 * prefix ("new highs, +84.0 MiB/s", "+12.0 MiB/s"). */
static const char *const reads_words[] = {
	[GP_READS_FLAT] = "flat",
	[GP_READS_REFILL] = "refilling below its earlier peak: not new output",
	[GP_READS_FALLING] = "falling",
};
static const char *const reads_rate_prefix[] = {
	[GP_READS_NEW_HIGHS] = "new highs, +",
	[GP_READS_RATE] = "+",
};
/* Those told from x (and y) through a format of their own. */
static const char *const reads_xy_format[] = {
	[GP_READS_FAULTS] = "+%.1f faults/s",
	[GP_READS_GPU_BUSY] = "GPU busy %.0f%% of the time",
	[GP_READS_CORES] = "%.2f cores, %.0f%% of it system",
	[GP_READS_KERNEL_CORES] = "%.2f cores in the kernel",
	[GP_READS_PER_S] = "%.0f/s (live threads)",
};

void gp_evidence_reads(struct strbuf *sb, const struct gp_evidence *e)
{
	size_t k = (size_t)e->reads;
	if (k < sizeof reads_words / sizeof reads_words[0] && reads_words[k]) {
		strbuf_addstr(sb, reads_words[k]);
		return;
	}
	if (k < sizeof reads_rate_prefix / sizeof reads_rate_prefix[0] && reads_rate_prefix[k]) {
		char r[32];
		gp_fmt_rate(r, sizeof r, e->x);
		strbuf_addf(sb, "%s%s", reads_rate_prefix[k], r);
		return;
	}
	if (k < sizeof reads_xy_format / sizeof reads_xy_format[0] && reads_xy_format[k]) {
		/* a format that reads x only leaves y unread, as C allows; the
		 * formats are the constant table above */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		strbuf_addf(sb, reads_xy_format[k], e->x, e->y);
#pragma GCC diagnostic pop
		return;
	}
	switch (e->reads) {
	case GP_READS_GPU_ACTIVITY:
		strbuf_addf(sb, "this process's GPU work busy in %u of %u samples, peak %.0f%%", e->n1,
			    e->n2, e->x);
		break;
	case GP_READS_GPU_WORK:
		strbuf_addf(sb, "work in %u of %u readings, a spin in %.0f", e->n1, e->n2, e->x);
		if (e->gw.work == GP_GW_WORK || e->gw.work == GP_GW_SPIN) {
			strbuf_addstr(sb, "; latest: ");
			gp_gpu_work_words(sb, &e->gw);
		}
		break;
	case GP_READS_CREATED:
		if (e->n1)
			strbuf_addf(sb, "%u created", e->n1);
		else
			strbuf_addstr(sb, "none created");
		break;
	case GP_READS_BUSIEST:
		strbuf_addf(sb, "busiest now: %d (", e->tid);
		gp_safe_add(sb, e->comm);
		strbuf_addf(sb, ") %.0f%%, %.0f%% system", e->x, e->y);
		break;
	default:
		break;
	}
}

size_t gp_verdict_unseen(const struct gp_verdict *v, const char *line[GP_VERDICT_UNSEEN_MAX])
{
	size_t n = 0;
	if (v->unseen & GP_UNSEEN_IO)
		line[n++] = "io: /proc/PID/io not readable (run as root or as the target's user)";
	if (v->unseen & GP_UNSEEN_GPU)
		line[n++] = "GPU: no DRM fdinfo, KFD or NVML entry for this process";
	if (v->unseen & GP_UNSEEN_SYSCALL)
		line[n++] = "syscalls: /proc/TID/syscall not readable (run as root)";
	if (v->unseen & GP_UNSEEN_KSTACKS)
		line[n++] = "kernel stacks: not read (run as root)";
	if (v->kmsg_why[0])
		line[n++] = v->kmsg_why;
	if (v->ras.reads && !v->ras.ok_reads && v->ras.said[0])
		line[n++] = v->ras.said;   /* "RAS: not listening on 127.0.0.1:28028" */
	return n;
}
