/* The words of what a stacks session could not take (model/stackline.h's
 * gp_stacks_missing, which the unwinder fills): one line saying what to
 * change to get it, printed once per session (gp_hint). */
#ifndef GP_UNWIND_TEXT_H
#define GP_UNWIND_TEXT_H

#include "stackline.h"

#include <stddef.h>

/* The hint for m into buf; false (buf "") when nothing is missing. */
bool gp_stacks_hint_text(const struct gp_stacks_missing *m, char *buf, size_t cap);

#endif
