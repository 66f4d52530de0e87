/* The lines of trace that say what the tree holds and runs (see run.h):
 * a `target` line a process (and one more after an exec), the runtime
 * libraries each maps (`runtime_libs`), NCCL's RAS counts (`ras`). */
#include "config.h"
#include "run.h"
#include "grow.h"
#include "parse.h"
#include "identity.h"
#include "runlibs.h"
#include "target_text.h"
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A descendant's runtimes after an exec: its libs entry replaced. */
static void exec_libs(struct run *r, int pid, json_t *target)
{
	char *paths = gp_runlib_paths(&r->root, pid);
	if (!paths)
		return;
	json_object_set_new(target, "runtime_libs", gp_runlib_json(&r->root, pid, paths));
	for (size_t i = 0; i < r->nlibs; i++)
		if (r->libs[i].pid == pid) {
			free(r->libs[i].paths);
			r->libs[i].paths = paths;
			return;
		}
	free(paths);
}

/* Before the snapshot the verdict compares the processes by: a `target`
 * line, how "exec", for each one whose program or job changed since its
 * last (an exec that kept the name escapes announce's watch: a pyenv
 * shim is a bash script named python3 that execs python3). */
static void refresh_targets(struct run *r, double t)
{
	int pid;
	for (size_t m = 0; gp_tree_member(r->smp.tree, m, &pid, NULL, NULL); m++) {
		json_t *ident = gp_target_identity(&r->root, pid);
		if (!ident || !gp_proctab_changed(&r->procs, ident)) {
			json_decref(ident);
			continue;
		}
		json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid, "t", t,
					   "how", "exec");
		json_object_update_missing(target, ident);
		json_decref(ident);
		exec_libs(r, pid, target);
		gp_proctab_target(&r->procs, target);
		trace_write_line(r, target);
	}
}

/* Every thread of every traced process, once: the stacks the verdict
 * carries ("hang": a phase just went flat for --hang-after; "end"). */
void trace_snapshot_all(struct run *r, double t, const char *why)
{
	if (!r->smp.o.stacks)
		return;
	refresh_targets(r, t);
	gp_sampling_snapshot_all(&r->smp, t, why);
}

/* The runtime libraries PID maps, into its target line, remembered so
 * that a library loaded later (dlopen of libnccl) gets its own line. */
static void target_libs(struct run *r, int pid, json_t *target)
{
	char *paths = gp_runlib_paths(&r->root, pid);
	if (!paths)
		return;
	json_object_set_new(target, "runtime_libs", gp_runlib_json(&r->root, pid, paths));
	if (!gp_grow(&r->libs, &r->caplibs, r->nlibs + 1, sizeof *r->libs, 16)) {
		free(paths);
		return;
	}
	r->libs[r->nlibs++] = (struct libs_seen){ pid, paths };
}

/* A `runtime_libs` line for each process whose mapped runtimes differ
 * from what its last line said.  Every 5 s and at the end, not every
 * tick: a process of a large job maps thousands of files, and its maps
 * are read whole (the build-ids only when the set changed). */
void trace_check_libs(struct run *r, double t, bool now)
{
	if (!now && t - r->libs_checked < 5)
		return;
	r->libs_checked = t;
	int pid;
	for (size_t m = 0; gp_tree_member(r->smp.tree, m, &pid, NULL, NULL); m++) {
		size_t i = 0;
		while (i < r->nlibs && r->libs[i].pid != pid)
			i++;
		if (i == r->nlibs)
			continue; /* no target line yet: trace_announce() writes it */
		char *paths = gp_runlib_paths(&r->root, pid);
		if (!paths || !strcmp(paths, r->libs[i].paths)) {
			free(paths);
			continue;
		}
		free(r->libs[i].paths);
		r->libs[i].paths = paths;
		json_t *line = json_pack("{s:s, s:f, s:i, s:o}", "type", "runtime_libs", "t", t,
					 "pid", pid, "libs", gp_runlib_json(&r->root, pid, paths));
		trace_write_line(r, line);
	}
}

/* NCCL's RAS service (gpu/ras.h): 2 s into the trace (NCCL starts it
 * when the job initializes), every 5 s, and when forced (a hang's
 * snapshot, the end); once a process maps NCCL or RCCL, or always with
 * --ras-port (a port that is no RAS answers garbage: said, never fatal).  A `ras` line when it read counts, or when the
 * state changed: "not listening" is said once.  A service that accepted
 * and then did not answer, or answered garbage, is asked only once more,
 * at the end: each such read costs up to GP_RAS_BUDGET_S. */
/* A process of the tree maps NCCL or RCCL (the runtimes check_libs saw):
 * only then is RAS worth a connection, unless --ras-port asked. */
static bool tree_maps_nccl(const struct run *r)
{
	for (size_t i = 0; i < r->nlibs; i++)
		if (strstr(r->libs[i].paths, "libnccl") || strstr(r->libs[i].paths, "librccl"))
			return true;
	return false;
}

void trace_check_ras(struct run *r, double t, bool force)
{
	if (!r->o->ras_port || !r->root.live || (!r->o->ras_given && !tree_maps_nccl(r)))
		return;
	if (!force && (r->ras_stop || t < 2 || (r->ras_checked >= 0 && t - r->ras_checked < 5)))
		return;
	if (force && r->ras_checked == t)
		return; /* this tick's read was just taken */
	r->ras_checked = t;
	json_t *line = gp_ras_read(r->o->ras_port, t, GP_RAS_BUDGET_S);
	const char *state = json_string_value(json_object_get(line, "state"));
	const char *why = json_string_value(json_object_get(line, "why"));
	if (strcmp(state, "ok") && strcmp(state, "absent"))
		r->ras_stop = true;
	if (strcmp(state, "ok") && r->ras.s.reads && !strcmp(state, r->ras.s.state)
	    && !strncmp(why ? why : "", r->ras.s.why, sizeof r->ras.s.why - 1)) {
		json_decref(line);
		return;
	}
	gp_ras_note_add(&r->ras, line);
	trace_write_line(r, line);
}

/* A `target` line for each descendant as it appears (DESIGN: one per
 * process), after the sample that first holds it; one more, how "exec",
 * when its name changed since (a shell's child announced before its exec
 * was the shell: issue 29 tells a job's ranks by what they run and their
 * environment, which the exec sets). */
void trace_announce(struct run *r, double t)
{
	int pid;
	const char *comm;
	for (size_t m = 0; gp_tree_member(r->smp.tree, m, &pid, &comm, NULL); m++) {
		if (pid == r->pid)
			continue;
		size_t i = 0;
		while (i < r->nannounced && r->announced[i].pid != pid)
			i++;
		bool exec = i < r->nannounced && comm && comm[0] && strcmp(comm, r->announced[i].comm);
		if (i < r->nannounced && !exec)
			continue;
		if (!exec) {
			if (!gp_grow(&r->announced, &r->capannounced, r->nannounced + 1, sizeof *r->announced, 16))
				return;
			r->announced[r->nannounced++].pid = pid;
		}
		gp_strlcpy(r->announced[i].comm, comm ? comm : "", sizeof r->announced[i].comm);
		json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid,
					   "t", t, "how", exec ? "exec" : "descendant");
		json_t *ident = gp_target_identity(&r->root, pid);
		if (ident)
			json_object_update_missing(target, ident);
		json_decref(ident);
		if (!exec && !r->is_child && !r->announced_once)
			gp_target_still(&r->root, pid, target);
		if (exec)
			exec_libs(r, pid, target);
		else
			target_libs(r, pid, target);
		gp_proctab_target(&r->procs, target);
		trace_write_line(r, target);
	}
	r->announced_once = true;
}

/* An empty argv read from /proc, or procps's "-" for one: the process
 * was mid-exec (the new image's arguments are placed after the point of
 * no return, fs/binfmt_elf.c: begin_new_exec, then create_elf_tables),
 * or a kernel thread. */
static bool argv_unread(const json_t *argv)
{
	size_t n = json_array_size(argv);
	const char *a0 = json_string_value(json_array_get(argv, 0));
	return n == 0 || (n == 1 && a0 && (!strcmp(a0, "-") || !*a0));
}

/* The target renamed since its last `target` line: mostly an exec (`sh
 * -c 'exec xz ...'` becomes xz after the line was written): one more
 * `target` line for the same pid, `how` "exec", or "renamed" when its
 * arguments are the same (doc/result-format.md),
 * so that the report names what ran.  A name read mid-exec with no
 * arguments yet is looked at again at the next sample. */
void trace_follow_exec(struct run *r, double t)
{
	int pid;
	const char *comm;
	if (!gp_tree_member(r->smp.tree, 0, &pid, &comm, NULL) || pid != r->pid || !comm[0]
	    || !strcmp(comm, r->comm))
		return;
	json_t *ident = gp_target_identity(&r->root, pid);
	if (!ident || argv_unread(json_object_get(ident, "cmdline"))) {
		json_decref(ident);
		return;
	}
	/* The same arguments under a new name: prctl(PR_SET_NAME), not an
	 * exec (the demo's workloads rename themselves). */
	struct strbuf words = STRBUF_INIT;
	gp_target_words(&words, ident, 64);
	bool renamed = !strcmp(words.buf, r->cmdline.buf);
	json_t *target = json_pack("{s:s, s:i, s:f, s:s}", "type", "target", "pid", pid,
				   "t", t, "how", renamed ? "renamed" : "exec");
	json_object_update_missing(target, ident);
	json_decref(ident);
	gp_proctab_target(&r->procs, target);
	snprintf(r->comm, sizeof r->comm, "%s", comm);
	if (!renamed && !r->started_as.len) {
		struct strbuf first = r->cmdline;
		r->cmdline = r->started_as;
		r->started_as = first;
	}
	strbuf_release(&r->cmdline);
	r->cmdline = words;
	trace_write_line(r, target);
}

/* The kernel log since the last sample: GPU drivers' lines and the
 * kernel's hang/lockup/OOM warnings, as `kmsg` lines (kmsg.h). */

/* The `target` line; r->comm gets the target's name. */
void trace_write_target(struct run *r)
{
	struct trace_opts *o = r->o;
	json_t *target = json_pack("{s:s, s:i}", "type", "target", "pid", o->pid);
	json_t *ident = gp_target_identity(&r->root, o->pid);
	if (ident)
		json_object_update(target, ident);
	json_decref(ident);
	/* A command read back mid-exec has no arguments yet: the ones
	 * gpuprobe gave it are exact. */
	if (r->is_child && argv_unread(json_object_get(target, "cmdline"))) {
		json_t *a = json_array();
		for (char **p = o->cmd; *p; p++)
			json_array_append_new(a, gp_json_string(*p));
		json_object_set_new(target, "cmdline", a);
	}
	json_object_set_new(target, "how", json_string(r->is_child ? "command" : o->sample.name ? "name" : "pid"));
	if (!r->is_child)
		gp_target_still(&r->root, o->pid, target);
	target_libs(r, o->pid, target);
	json_t *jc = json_object_get(target, "comm");
	if (json_is_string(jc))
		snprintf(r->comm, sizeof r->comm, "%s", json_string_value(jc));
	gp_target_words(&r->cmdline, target, 64);
	gp_target_where(&r->where, target);
	gp_proctab_target(&r->procs, target);
	trace_write_line(r, target);
}

