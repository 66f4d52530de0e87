/* Renders a `stacks` line (DESIGN.md) as text or Markdown: identical
 * stacks grouped with a thread count, hot threads first, so a 40-thread
 * dump reads in one screen.  Pure over the JSON: used live by `gpuprobe
 * stacks` and later by `gpuprobe report` on a saved file. */
#ifndef GP_STACKS_TEXT_H
#define GP_STACKS_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

enum gp_stacks_format { GP_STACKS_TEXT, GP_STACKS_MARKDOWN };

struct gp_stacks_render_opts {
	enum gp_stacks_format format;
	double hot_pct;       /* a thread at or over this CPU% is hot */
	double window_s;      /* the CPU measurement window, 0 = none */
	const char *comm;     /* of the process, or NULL */
	unsigned max_frames;  /* frames shown per group (0: 16) */
	const char *where;    /* its namespaces and container (gp_target_where), or NULL */
};

/* A Go process's goroutines, the line's "goroutines" (unwind/
 * goroutines.h): its OS threads are the runtime's; these are the
 * program's units of work, in groups, as `goroutine N [wait reason]:`
 * heads a Go traceback.  Nothing when the line has none. */
void gp_stacks_goroutine_lines(FILE *f, const json_t *line, bool md);

/* Threads may carry "cpu_pct" (added by the caller). */
void gp_render_stacks(FILE *f, const json_t *line, const struct gp_stacks_render_opts *o);

/* The one-line summary of a thread's stack: "futex_wait ← pthread_cond_wait
 * ← ns::Queue::pop()" into buf.  Pure; exposed for tests. */
void gp_stacks_chain(const json_t *thread, char *buf, size_t cap);

/* The Python frames a native frame carries ("python", stacks.h), one line
 * each in the traceback module's words: indent + File "load.py", line 12,
 * in load_shard.  Given a thread: its "unplaced" Python frames.  Nothing
 * for a frame or thread without them. */
void gp_stacks_python_lines(FILE *f, const json_t *frame, const char *indent);

#endif
