/* Reading a result file whatever its compression: zstd (`-o x.jsonl.zst`,
 * model/result.c writes it), gzip (a user's `gzip trace.jsonl`) or none,
 * told apart by the file's first bytes, not its name.  The stream is a
 * stdio FILE (fopencookie), so the line reader is the same for all. */
#ifndef GP_RSTREAM_H
#define GP_RSTREAM_H

#include <stdio.h>

/* A stream of fd's decompressed text from offset 0; the FILE owns fd
 * (fclose closes it).  NULL with errno (fd closed then too). */
FILE *gp_rstream_open(int fd);

/* "zstd", "gzip" or "plain": what fd holds, by its first bytes. */
const char *gp_rstream_kind(int fd);

#endif
