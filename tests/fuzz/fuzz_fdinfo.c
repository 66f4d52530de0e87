/* libFuzzer target: /proc/PID/fdinfo/FD of a DRM client (every
 * driver's drm-usage-stats keys, amdgpu's legacy ones). */
#include "config.h"
#include "fuzz_text.h"
#include "gpumem.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_text(data, size);
	if (!buf)
		return 0;
	json_t *c = gp_fdinfo_parse(buf);
	if (c) {
		struct gp_gpu_totals tot;
		memset(&tot, 0, sizeof tot);
		gp_fdinfo_add_totals(c, &tot);
		gp_fdinfo_add_totals(c, &tot);
		char *s = json_dumps(c, JSON_COMPACT);
		free(s);
		json_decref(c);
	}
	free(buf);
	return 0;
}
