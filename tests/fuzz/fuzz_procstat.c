/* libFuzzer target: the /proc parsers (proc(5) text the kernel writes,
 * or a captured tree replayed with --proc-root: any bytes at all). */
#include "config.h"
#include "fuzz_text.h"
#include "parse.h"
#include "procstat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int kv_cb(const char *key, size_t klen, const char *val, void *ctx)
{
	uint64_t b;
	int64_t i;
	uint64_t x;
	const char *end;
	(void)key; (void)klen;
	gp_parse_mem_value(val, &b);
	gp_parse_i64(val, &i, &end);
	gp_parse_x64(val, &x, &end);
	(*(unsigned *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_text(data, size);
	if (!buf)
		return 0;

	struct gp_stat st;
	gp_parse_stat(buf, &st);
	struct gp_syscall sc;
	gp_parse_syscall(buf, &sc);
	uint64_t v1, v2, v3;
	gp_parse_status_ctxt(buf, &v1, &v2);
	struct gp_status_mem m;
	memset(&m, 0, sizeof m);
	gp_parse_status_mem(buf, &m);
	struct gp_io io;
	gp_parse_io(buf, &io);
	gp_parse_schedstat(buf, &v1, &v2, &v3);
	char wchan[64];
	gp_parse_wchan(buf, wchan, sizeof wchan);
	unsigned n = 0;
	gp_kv_each(buf, kv_cb, &n);
	/* The command-line parsers take the same bytes. */
	double secs;
	int pid;
	gp_parse_size(buf, &v1);
	gp_parse_seconds(buf, &secs);
	gp_parse_pid(buf, &pid);
	free(buf);
	return 0;
}
