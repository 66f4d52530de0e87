/* report --format jsonl: a result file as JSON Lines again, decompressed
 * (.zst, .gz) and with format 3's thread references resolved
 * (model/threadref.h), so that jq and other line tools see every thread
 * of every sample whole.  The other lines pass through byte for byte. */
#ifndef GP_EXPAND_H
#define GP_EXPAND_H

#include <stddef.h>
#include <stdio.h>

/* 0, or -1 with a one-line reason in err (unreadable, not a regular
 * file, not a gpuprobe result: no header line first). */
int gp_report_expand(FILE *out, const char *path, char *err, size_t errcap);

#endif
