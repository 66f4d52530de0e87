/* What a stacks session could not take, in words; see unwind_text.h. */
#include "config.h"
#include "unwind_text.h"

#include <stdio.h>
#include <string.h>

bool gp_stacks_hint_text(const struct gp_stacks_missing *m, char *buf, size_t cap)
{
	buf[0] = 0;
	if (!m->user && !m->kern && !m->kthread)
		return false;
	if (m->kthread) {
		snprintf(buf, cap, "pid %d is a kernel thread: it has no user stack%s", m->pid,
			 m->kern ? "; its kernel stack needs root" : "");
		return true;
	}
	char what[96];
	snprintf(what, sizeof what, "%s%s%s", m->user ? "user stacks" : "",
		 m->user && m->kern ? " and " : "", m->kern ? "kernel stacks" : "");
	if (m->user && m->owner != m->me && m->me != 0)
		snprintf(buf, cap,
			 "no %s: pid %d belongs to uid %u, gpuprobe runs as uid %u; run it as root "
			 "(or as uid %u with CAP_SYS_PTRACE)", what, m->pid, m->owner, m->me, m->owner);
	else if (m->user && m->yama >= 1 && m->me != 0)
		snprintf(buf, cap,
			 "no %s: kernel.yama.ptrace_scope=%d forbids ptrace of a non-child; run as root, "
			 "grant CAP_SYS_PTRACE, or 'sysctl kernel.yama.ptrace_scope=0'", what, m->yama);
	else if (m->user)
		snprintf(buf, cap, "no %s (%s): run as root or grant CAP_SYS_PTRACE%s", what,
			 strerror(m->err), m->kern ? " (kernel stacks need root)" : "");
	else
		snprintf(buf, cap,
			 "no kernel stacks: /proc/PID/task/TID/stack is readable by root only; run as root");
	return true;
}
