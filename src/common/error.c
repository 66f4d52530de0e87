#include "config.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool gp_quiet;

static void vmsg(const char *ctx, int errnum, const char *fmt, va_list ap)
{
	/* Build the line first, then write it once: a message never
	 * interleaves with another process writing to the same terminal. */
	char line[1024];
	int n = snprintf(line, sizeof line, "gpuprobe: ");
	if (ctx && *ctx)
		n += snprintf(line + n, sizeof line - (size_t)n, "%s: ", ctx);
	if ((size_t)n < sizeof line)
		n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	if (errnum && (size_t)n < sizeof line)
		n += snprintf(line + n, sizeof line - (size_t)n, ": %s", strerror(errnum));
	if ((size_t)n >= sizeof line - 1)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
}

void gp_err(const char *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(ctx, 0, fmt, ap);
	va_end(ap);
}

void gp_err_errno(int errnum, const char *ctx, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(ctx, errnum, fmt, ap);
	va_end(ap);
}

void gp_hint(const char *fmt, ...)
{
	if (gp_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("hint", 0, fmt, ap);
	va_end(ap);
}

void gp_warn(const char *fmt, ...)
{
	if (gp_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning", 0, fmt, ap);
	va_end(ap);
}
