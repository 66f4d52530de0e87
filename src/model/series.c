#include "config.h"
#include "series.h"
#include "grow.h"

#include <stdlib.h>

int gp_series_push(struct gp_series *s, const struct gp_point *p)
{
	if (!gp_grow(&s->pt, &s->cap, s->n + 1, sizeof *s->pt, 256))
		return -1;
	s->pt[s->n++] = *p;
	return 0;
}

void gp_series_free(struct gp_series *s)
{
	free(s->pt);
	s->pt = NULL;
	s->n = s->cap = 0;
}
