/* The host object of a result header (gp_host_info, src/sysread/hostinfo.c)
 * rendered: shared by `gpuprobe info` and the report's environment block. */
#ifndef GP_HOST_TEXT_H
#define GP_HOST_TEXT_H

#include <jansson.h>
#include <stdio.h>

/* One fact a line, label column aligned. */
void gp_host_render_text(FILE *out, const json_t *host);
/* A Markdown bullet list, as seed 000's "Environment" section. */
void gp_host_render_markdown(FILE *out, const json_t *host);

#endif
