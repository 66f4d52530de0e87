/* watch's log: see wproc.h. */
#include "config.h"
#include "wproc.h"
#include "safetext.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void watch_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* One line whatever the names in it hold (a comm with a newline
	 * would forge the next line, one with ESC drive the terminal):
	 * made safe whole (common/safetext.h). */
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	gp_safe_tail(&sb, 0);
	printf("%s gpuprobe watch: %s\n", ts, sb.buf);
	fflush(stdout);
	strbuf_release(&sb);
}
