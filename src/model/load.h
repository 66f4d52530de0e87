/* Reading a saved result (JSON Lines) back into the model: the compact
 * series the verdict judges, and the header/target/exit/verdict lines.
 * The live trace fills the same points from /proc directly; a test
 * checks that both give the same verdict. */
#ifndef GP_LOAD_H
#define GP_LOAD_H

#include "proctab.h"
#include "series.h"
#include "stuck.h"
#include "rasparse.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct gp_loaded {
	struct gp_series series;
	json_t *header, *target, *exit, *verdict; /* owned; NULL when absent */
	long page_size;
	char machine[32];           /* header host.machine; "" when not recorded */
	bool kstacks_seen;
	struct gp_stuck stuck;      /* the last snapshot of every thread (why hang/end) */
	struct gp_proctab procs;    /* the tree's processes (`target` lines, samples) */
	struct gp_kmsg_note kmsg[GP_KMSG_NOTES]; /* `kmsg` lines, the newest */
	size_t nkmsg;
	struct gp_ras_note ras;     /* `ras` lines: NCCL's RAS service (rasparse.h) */
	bool truncated;             /* the last line was cut (a killed run) */
	unsigned long lines, bad_lines;
	/* The file stays open for a second pass (report's per-type scan,
	 * doc.c): the same file even if the path is replaced meanwhile, and
	 * the same bytes -- the complete lines read here, `bytes` of them --
	 * even while a live trace appends to it.  -1 once freed. */
	int fd;
	unsigned long long bytes;
};

/* 0, or -1 with a one-line reason in err (not a regular file, empty,
 * not a gpuprobe result, unreadable). */
int gp_load_result(const char *path, struct gp_loaded *out, char *err, size_t errcap);
void gp_loaded_free(struct gp_loaded *l);



/* Pure: from a `stacks` line, the innermost frame of thread tid, as the
 * series keeps it ("symbol" or "module+0xoffset"); false when absent. */
bool gp_stacks_top_frame(const json_t *stacks, int tid, char *buf, size_t cap);

/* The header's "started" (ISO 8601 UTC, milliseconds) as Unix seconds;
 * 0 when absent or unreadable.  Results traced apart are aligned by it
 * (report of several files: a job's nodes). */
double gp_loaded_started(const struct gp_loaded *l);

#endif
