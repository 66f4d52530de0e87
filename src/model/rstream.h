/* Reading a result file whatever its compression: zstd (`-o x.jsonl.zst`,
 * model/result.c writes it), gzip (a user's `gzip trace.jsonl`) or none,
 * told apart by the file's first bytes, not its name.  The stream is a
 * stdio FILE (fopencookie), so the line reader is the same for all. */
#ifndef GP_RSTREAM_H
#define GP_RSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* A stream of fd's decompressed text from offset 0; the FILE owns fd
 * (fclose closes it).  NULL with errno (fd closed then too). */
FILE *gp_rstream_open(int fd);

/* "zstd", "gzip" or "plain": what fd holds, by its first bytes. */
const char *gp_rstream_kind(int fd);

/* ---- its lines, bounded ------------------------------------------------
 * A result file is a stranger's input (issue 27: a 34 KB .jsonl.zst of
 * one 1 GB line made `report` use 4.2 GB for 55 s).  Its lines are read
 * with bounds, each with a reason a person can read:
 *
 * - a line holds at most GP_RLINES_LINE_MAX bytes.  gpuprobe's longest
 *   lines are samples and stacks of every thread: a sample of 10 000
 *   threads each written whole is ~4 MiB (~400 bytes a thread); a stacks
 *   line ~2.4 KiB a thread (sleepers: 8 frames, 250 bytes a frame), so
 *   ~24 MiB for 10 000 threads.  64 MiB holds those with room.
 * - a line holds at most GP_RLINES_LINE_NODES JSON objects and arrays
 *   ('{' and '[' counted, in strings too): jansson holds a small object in
 *   ~230 bytes, so 3 bytes of "{}," cost 77 times their size.  10 000
 *   threads of 128-frame stacks are ~1.3 M.
 * - a compressed file reads as at most GP_RLINES_RATIO times its own
 *   size, and at least GP_RLINES_FLOOR: each byte counted once and each
 *   object or array GP_RLINES_NODE_COST times (what it costs to hold,
 *   against the text's byte).  gpuprobe's .zst results read so 13 to
 *   210 times their size (1 000 idle threads at 0.05 s: 39 and 43; 4 000
 *   with --stacks all: 121; `stacks -o` of 4 000 identical threads: 208,
 *   156 in bytes alone); a bomb decompresses 1 000 to 30 000 times
 *   (zstd's RLE blocks: 128 KiB in 4 bytes), and 5 KB of "{}," repeated
 *   held 4.8 GB in jansson.  A plain file is bounded by
 *   its size on disk, the user's to judge: give report a decompressed
 *   copy to read past the bound. */
#define GP_RLINES_LINE_MAX ((size_t)64 << 20)
#define GP_RLINES_LINE_NODES ((size_t)1 << 21)
#define GP_RLINES_RATIO 1000
#define GP_RLINES_FLOOR ((unsigned long long)16 << 20)
#define GP_RLINES_NODE_COST 64

enum gp_rlines_err { GP_RLINES_OK, GP_RLINES_LONG, GP_RLINES_NODES, GP_RLINES_BOMB, GP_RLINES_IO };

struct gp_rlines {
	FILE *f;
	char *line;                  /* the line, its '\n' kept, NUL ended */
	size_t len, cap;
	char *chunk;                 /* read ahead */
	size_t cpos, clen;
	unsigned long long total;    /* bytes read (decompressed), objects and arrays weighed */
	unsigned long long max_total, in_size;
	size_t max_line, line_nodes;
	unsigned long n;             /* lines returned */
	bool compressed;
	enum gp_rlines_err err;
	int errnum;                  /* GP_RLINES_IO: why */
};

/* Opens fd's lines (gp_rstream_open: the reader owns fd, even on
 * failure), with the bounds above.  0, or -1 with errno. */
int gp_rlines_open(struct gp_rlines *r, int fd);
/* The next line into r->line: its length (a last line may lack its
 * '\n'), 0 at the end, -1 when a bound was passed or a read failed
 * (r->err; gp_rlines_why says it). */
ssize_t gp_rlines_next(struct gp_rlines *r);
/* Why gp_rlines_next failed, one line, into buf. */
const char *gp_rlines_why(const struct gp_rlines *r, char *buf, size_t cap);
void gp_rlines_close(struct gp_rlines *r);

#endif
