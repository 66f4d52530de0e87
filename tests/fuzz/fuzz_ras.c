/* libFuzzer target: an answer from whatever listens on NCCL's RAS port
 * (gpu/ras.c), read as JSON (NCCL 2.28.7 on) and as text (before) by
 * model/rasparse.c; what it keeps goes into a `ras` line, judged twice
 * by the note the verdict reads, and rendered as JSON. */
#include "config.h"
#include "rasparse.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gp_ras_note *note = calloc(1, sizeof *note);
	if (!note)
		return 0;
	for (int fmt = 0; fmt < 2; fmt++) {
		char why[96];
		/* Not NUL-terminated on purpose: the parser takes a length. */
		json_t *got = gp_ras_parse((const char *)data, size, fmt, why, sizeof why);
		if (!got && !why[0])
			abort();	/* no answer without a reason */
		json_t *line = json_pack("{s:s, s:f, s:s, s:s}", "type", "ras", "t", 1.0 + fmt,
					 "addr", "127.0.0.1:28028", "state", got ? "ok" : "garbage");
		if (got)
			json_object_update(line, got);
		else
			json_object_set_new(line, "why", json_string(why));
		gp_ras_note_add(note, line);
		gp_ras_note_add(note, line);
		char *s = json_dumps(line, JSON_COMPACT);
		if (!s)
			abort();	/* what we keep must always be valid JSON */
		free(s);
		json_decref(line);
		json_decref(got);
	}
	free(note);
	return 0;
}
