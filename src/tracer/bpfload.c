/* See bpfload.h. */
#include "config.h"
#include "bpfload.h"

#ifdef HAVE_BPF
#include <bpf/libbpf.h>
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static char first_error[160];

#ifdef HAVE_BPF
/* libbpf's own messages: the first error is kept; nothing is printed (a
 * trace's stderr is the user's). */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && !first_error[0]) {
		char line[sizeof first_error];
		vsnprintf(line, sizeof line, fmt, ap);
		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "failed") || strstr(line, "permission"))
			snprintf(first_error, sizeof first_error, "%s", line);
	}
	return 0;
}
#endif

int gp_bpf_may_try(char *why, size_t n)
{
	const char *env = getenv("GPUPROBE_BPF");
	if (env && !strcmp(env, "off")) {
		snprintf(why, n, "GPUPROBE_BPF=off");
		return 0;
	}
	FILE *st = fopen("/proc/self/status", "re");
	char line[256];
	while (st && fgets(line, sizeof line, st)) {
		int a, b;
		if (!strncmp(line, "NSpid:", 6) && sscanf(line + 6, "%d %d", &a, &b) == 2) {
			fclose(st);
			snprintf(why, n, "gpuprobe runs in a pid namespace of its own");
			return 0;
		}
	}
	if (st)
		fclose(st);
#ifdef HAVE_BPF
	libbpf_set_print(quiet);
#endif
	return 1;
}

void gp_bpf_failed(int err, char *why, size_t n)
{
	int e = err < 0 ? -err : err;
	if (e == EPERM || e == EACCES)
		snprintf(why, n, "loading BPF needs root, or CAP_BPF and CAP_PERFMON (%s)", strerror(e));
	else
		snprintf(why, n, "BPF: %s%s%.100s", strerror(e), first_error[0] ? ": " : "", first_error);
}

bool gp_bpf_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a, b;
	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > major || (a == major && b >= minor);
}
