/* The hint of a stacks session: what the unwinder could not take
 * (stacks.h, gp_stacks_missing) in the renderer's words (unwind_text.h).
 * It sits here, above the rooms as commands.h does, because it joins a
 * probe to a renderer, which no probe room may do (README, "The house");
 * whatever prints the hint (the commands, the loop they share) takes it
 * from here. */
#ifndef GP_STACKS_HINT_H
#define GP_STACKS_HINT_H

#include "stacks.h"
#include "unwind_text.h"

/* One line saying what to change to get what was missing (ptrace denied,
 * kernel stacks unreadable), or NULL.  Stays valid until the next call
 * in this thread; callers print it once per session (gp_hint). */
static inline const char *gp_stacks_hint(struct gp_stacks *s)
{
	static _Thread_local char buf[512];
	struct gp_stacks_missing m;
	if (!s || !gp_stacks_missing(s, &m) || !gp_stacks_hint_text(&m, buf, sizeof buf))
		return NULL;
	return buf;
}

#endif
