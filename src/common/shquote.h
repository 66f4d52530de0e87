/* A command line as shell words that paste back into a shell and give
 * the same argv (issue 20: "command lines printed without their quoting,
 * not pasteable").  One function, used by every renderer that prints an
 * argv: the report's "Command line", the trace summary.
 *
 * The forms, chosen per argument, the plainest that is exact:
 *   - a word of characters no shell treats specially stays as it is
 *     (`make`, `-j4`, `/usr/bin/xz`, `a=b`);
 *   - an empty argument is '';
 *   - printable text otherwise goes in single quotes, each ' as '\''
 *     (POSIX XCU 2.2.2: nothing is special inside single quotes but ');
 *   - an argument with a control character (a newline, a tab, ESC) or a
 *     byte that is not UTF-8 is written $'...' with \n, \t, \xHH escapes
 *     (dollar-single-quotes: bash, zsh, ksh93, busybox sh, and POSIX.1-2024
 *     XCU 2.2.4), so that the line stays one line and shows what it holds:
 *     a literal newline inside '...' would be exact too but would break a
 *     Markdown code span and hide a trailing space or a carriage return. */
#ifndef GP_SHQUOTE_H
#define GP_SHQUOTE_H

#include "strbuf.h"

#include <stddef.h>

/* Appends one argument of len bytes (it may hold any byte but NUL). */
void gp_shquote_word(struct strbuf *sb, const char *s, size_t len);
/* Appends argc arguments, separated by one space. */
void gp_shquote_argv(struct strbuf *sb, const char *const *argv, size_t argc);

#endif
