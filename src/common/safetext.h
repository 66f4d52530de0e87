/* A stranger's bytes as a terminal, a log line or a text file may show
 * them.  A process name is any 15 bytes its owner chose (prctl
 * PR_SET_NAME, or the name of the file it exec'd), a command line any
 * bytes: ESC starts an escape sequence that moves a terminal's cursor,
 * recolours or retitles it; a newline in a log line forges the next line;
 * a byte that is not UTF-8 makes node_exporter refuse the whole metrics
 * file (issue 27).
 *
 * Safe text is valid UTF-8 (RFC 3629) with no control character: C0 and
 * DEL as \n, \t, \r or \xNN, C1 (U+0080-U+009F, which terminals obey as
 * C0) and the bidirectional overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069, which reorder what a reader sees) as \uNNNN, and a byte
 * that starts no valid sequence as \xNN.  Everything else, backslash
 * included, is kept: safe text is safe again unchanged, so a sentence
 * that quotes a name can be made safe whole. */
#ifndef GP_SAFETEXT_H
#define GP_SAFETEXT_H

#include "strbuf.h"

#include <stddef.h>
#include <stdio.h>

/* A comm (at most 15 bytes) made safe fits: 4 bytes a byte at most. */
#define GP_SAFE_COMM 64

/* The length of the valid UTF-8 sequence at s (at most n bytes), 0 when
 * the bytes there are not one (no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
size_t gp_utf8_len(const unsigned char *s, size_t n);

/* Appends the n bytes of s made safe. */
void gp_safe_add_n(struct strbuf *sb, const char *s, size_t n);
/* Appends s (NUL ended; NULL appends nothing) made safe. */
void gp_safe_add(struct strbuf *sb, const char *s);
/* Makes sb's bytes from offset from on safe, in place. */
void gp_safe_tail(struct strbuf *sb, size_t from);
/* s made safe into buf of cap bytes (cap > 0), cut before the first
 * character or escape that does not fit; returns buf.  For a comm, cap
 * GP_SAFE_COMM holds it whole. */
const char *gp_safe_str(const char *s, char *buf, size_t cap);
/* True when s (NUL ended) is safe already. */
int gp_is_safe(const char *s);
/* Writes the n bytes of buf to out, each line made safe, its '\n' kept:
 * what a renderer built, its own words safe already, with whatever a
 * stranger's string it quotes held.  EOF when a write failed. */
int gp_safe_lines(FILE *out, const char *buf, size_t n);

#endif
