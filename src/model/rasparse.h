/* NCCL's RAS answer, read: which ranks of which communicator launched
 * how many collectives (issue 19).  Pure: bytes in, the result's `ras`
 * fields out (doc/result-format.md), and what the verdict needs from
 * the `ras` lines of a trace.  The bytes come from whatever listens on
 * the port: they are untrusted input (tests/fuzz/fuzz_ras.c).
 *
 * The answer's two shapes are NCCL's (github.com/NVIDIA/nccl,
 * src/ras/client_support.cc): from 2.28.7, after `SET FORMAT json`, one
 * JSON document (jsonWriteHeader/jsonWriteRankData: `nccl_version`,
 * `communicators` [{`hash`, `size`, `ranks` [{`rank`, `pid`,
 * `collective_counts` {op: n}}], `missing_ranks` [{`rank`, `pid`,
 * `status` {`unresponsive`, `considered_dead`}}]}]); before, text only
 * (rasClientRunComms: "NCCL version ...", and under Warnings, per
 * communicator "#G-C (HASH) MISMATCH", "Communicator ranks have different
 * OP operation counts", "N ranks have launched up to operation X", and
 * for the outliers "Rank R has launched up to operation X -- GPU G
 * managed by process P on node H"): only the outliers' counts. */
#ifndef GP_RASPARSE_H
#define GP_RASPARSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what a stranger's answer can make us keep. */
#define GP_RAS_MAX_COMMS 16
#define GP_RAS_MAX_RANKS 256     /* per communicator */
#define GP_RAS_MAX_OPS 8         /* collective kinds per rank (NCCL has 5) */

/* The answer in BUF (len bytes, not NUL-terminated) as the `ras` line's
 * fields: {nccl_version, comms: [{hash, size, ranks: [{rank, pid,
 * counts: {op: n}}], missing: [{rank, pid, unresponsive, dead}],
 * groups (text: [{op, ranks, count}])}], partial (text: only outliers
 * are listed)}.  NULL, with a one-line reason in why, when the bytes are
 * no RAS answer. */
json_t *gp_ras_parse(const char *buf, size_t len, bool json_format, char *why, size_t cap);

/* What the verdict says of a trace's `ras` lines: the last read's state,
 * and from the first and last that read counts, the rank that lags. */
struct gp_ras_seen {
	unsigned reads, ok_reads;
	char addr[32];           /* "127.0.0.1:28028" */
	char state[12];          /* the last read's: ok, absent, no-answer, garbage */
	char why[96];            /* its reason, when not ok */
	char said[136];          /* the last read that was not ok, for people:
				    "RAS: not listening on 127.0.0.1:28028" */
	char version[24];        /* NCCL's, from the last that said it */
	double t_first, t_last;  /* the first and last reads that read counts */
	/* The lagging rank of the last read: the lowest count of one kind of
	 * collective in its communicator, or a rank RAS could not reach. */
	bool lag;
	bool missing;            /* RAS could not reach it (unresponsive, dead) */
	bool dead;
	int rank, pid;
	char comm[24], op[16];
	uint64_t count, max;
	unsigned lagging, ranks; /* ranks behind, and ranks of that communicator */
	bool moved_any;          /* any count moved between t_first and t_last */
	bool lag_moved;          /* the lagging rank's count moved */
};

struct gp_ras_note {
	struct gp_ras_seen s;
	/* the first read's counts, to diff against */
	unsigned nfirst;
	struct gp_ras_count { char comm[24], op[16]; int rank; uint64_t n; } first[64];
};

void gp_ras_note_init(struct gp_ras_note *n);
/* Takes one `ras` line (from the live trace or a loaded result). */
void gp_ras_note_add(struct gp_ras_note *n, const json_t *line);

#endif
