#include "config.h"
#include "series.h"

#include <stdlib.h>

int gp_series_push(struct gp_series *s, const struct gp_point *p)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct gp_point *np = realloc(s->pt, nc * sizeof *np);
		if (!np)
			return -1;
		s->pt = np;
		s->cap = nc;
	}
	s->pt[s->n++] = *p;
	return 0;
}

void gp_series_free(struct gp_series *s)
{
	free(s->pt);
	s->pt = NULL;
	s->n = s->cap = 0;
}
