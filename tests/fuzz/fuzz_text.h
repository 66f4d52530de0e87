/* The fuzz input as the text the parsers take: /proc files are read into
 * NUL-terminated buffers, so the targets see the bytes the same way.
 * Returns a copy (free it), NULL out of memory. */
#ifndef GP_FUZZ_TEXT_H
#define GP_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);
	if (!buf)
		return NULL;
	memcpy(buf, data, size);
	buf[size] = '\0';
	return buf;
}

#endif
