/* One voice for every message: "gpuprobe: CONTEXT: REASON", and a hint
 * line where one exists.  Exit codes are documented in gpuprobe(1). */
#ifndef GP_ERROR_H
#define GP_ERROR_H

#include <stdbool.h>

enum gp_exit {
	GP_EXIT_OK = 0,
	GP_EXIT_ERROR = 1,   /* runtime error: the target, a file, the runtime */
	GP_EXIT_VERDICT = 3, /* --fail-on matched the verdict */
	GP_EXIT_USAGE = 64,  /* bad command line (argp's EX_USAGE) */
};

extern bool gp_quiet;

/* Prints "gpuprobe: CTX: MESSAGE\n" on stderr. */
void gp_err(const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Same, with ": strerror(errnum)" appended. */
void gp_err_errno(int errnum, const char *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "gpuprobe: hint: ..." — suppressed by -q. */
void gp_hint(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "gpuprobe: warning: ..." — suppressed by -q. */
void gp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
