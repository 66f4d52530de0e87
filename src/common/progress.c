#include "config.h"
#include "progress.h"
#include "timeutil.h"

#include <stdio.h>

void gp_progress_start(struct gp_progress *p, const char *label, uint64_t total, bool on)
{
	p->label = label;
	p->total = total;
	p->t0 = gp_mono_now();
	p->last_draw = 0;
	p->on = on;
}

void gp_progress_update(struct gp_progress *p, uint64_t done)
{
	if (!p->on)
		return;
	double now = gp_mono_now();
	if (done < p->total && now - p->last_draw < 0.1)
		return;
	p->last_draw = now;
	double frac = p->total ? (double)done / (double)p->total : 1.0;
	double dt = now - p->t0;
	double mib = (double)done / 1048576.0;
	char bar[31];
	int fill = (int)(frac * 30);
	for (int i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = '\0';
	fprintf(stderr, "\r%s [%s] %3.0f%% %.0f/%.0f MiB %.0f MiB/s ", p->label, bar,
		frac * 100, mib, (double)p->total / 1048576.0, dt > 0 ? mib / dt : 0.0);
	fflush(stderr);
}

void gp_progress_end(struct gp_progress *p)
{
	if (!p->on)
		return;
	fprintf(stderr, "\r%80s\r", "");
	fflush(stderr);
}
