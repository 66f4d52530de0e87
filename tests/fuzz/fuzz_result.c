/* libFuzzer target: a saved result, as `gpuprobe report` reads it: the
 * file (through a temporary file, as gp_doc_load takes a path), each
 * line into the model (gp_load_result, gp_point_from_sample), the
 * verdict judged again, and the three renderers. */
#include "config.h"
#include "doc.h"
#include "render.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];
static FILE *sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof path, "/tmp/gpuprobe-fuzz-result.%ld", (long)getpid());
		sink = fopen("/dev/null", "w");
	}
	FILE *f = fopen(path, "w");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	struct gp_verdict_opts vo = { 0 };
	struct gp_doc d;
	memset(&d, 0, sizeof d);
	char err[256];
	if (gp_doc_load(path, &vo, &d, err, sizeof err) == 0) {
		gp_render_markdown(sink, &d, 1);
		gp_render_text(sink, &d);
		json_t *j = gp_render_json(&d);
		char *s = json_dumps(j, JSON_COMPACT);
		free(s);
		json_decref(j);
		gp_doc_free(&d);
	}
	unlink(path);
	return 0;
}
