#include "config.h"
#include "error.h"
#include "safetext.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool gp_quiet;

static void vmsg(const char *ctx, int errnum, const char *fmt, va_list ap)
{
	/* Build the line first, then write it once: a message never
	 * interleaves with another process writing to the same terminal. */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "gpuprobe: ");
	if (ctx && *ctx)
		strbuf_addf(&sb, "%s: ", ctx);
	strbuf_vaddf(&sb, fmt, ap);
	if (errnum)
		strbuf_addf(&sb, ": %s", strerror(errnum));
	/* One line whatever a name in it holds (a file's, a process's). */
	gp_safe_tail(&sb, 0);
	strbuf_addch(&sb, '\n');
	fwrite(sb.buf, 1, sb.len, stderr);
	strbuf_release(&sb);
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
