/* The timeline plot of one trace (cairo; SVG or PNG by extension):
 *   1. progress: RssFile, RssAnon, GPU memory, VmPin, bytes read()/written
 *   2. CPU of the busiest threads and of the process, % of one core
 *   3. system writeback: dirtied and written back, MiB/s
 * with the phases shaded, their boundaries dashed, the verdict's "since"
 * marked, and the kernel log's driver errors (an Xid, a ring timeout...)
 * dotted and named, across all three.  1200x800, readable as pasted. */
#include "config.h"
#include "render.h"
#include "safetext.h"
#include "verdict_text.h"
#include "klog.h"
#include "target_text.h"

#include <stdio.h>
#include <string.h>

#ifndef HAVE_CAIRO
int gp_plot(const char *path, const struct gp_doc *d, char *err, size_t errcap)
{
	(void)path;
	(void)d;
	snprintf(err, errcap, "this gpuprobe was built without cairo: no plots "
		 "(install libcairo2-dev and run ./configure again)");
	return -1;
}
#else
#include <cairo.h>
#include <errno.h>
#include <cairo-svg.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

#define W 1200
#define H 800
#define ML 92.0   /* left margin: tick labels */
#define MR 24.0
#define TOP 70.0  /* title, verdict */
#define GAP 34.0
#define BOTTOM 52.0

struct rgb {
	double r, g, b;
};
/* Colour-blind-safe (Okabe-Ito). */
static const struct rgb pal[] = {
	{ 0.00, 0.45, 0.70 }, { 0.90, 0.62, 0.00 }, { 0.00, 0.62, 0.45 }, { 0.80, 0.47, 0.65 },
	{ 0.84, 0.37, 0.00 }, { 0.34, 0.71, 0.91 }, { 0.60, 0.60, 0.60 }, { 0.20, 0.20, 0.20 },
};

struct series {
	char label[64];
	double *v;          /* per point; NAN = absent */
	struct rgb c;
	bool dashed;
};

struct panel {
	const char *title;
	double y0, y1;      /* pixel box */
	struct series s[10];
	size_t ns;
	int unit;           /* 0 bytes, 1 percent, 2 bytes/s */
};

static double nice_step(double range, int want)
{
	double raw = range / want, mag = pow(10, floor(log10(raw))), f = raw / mag;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* Bytes in binary units: a step of 1, 2, 5 x 2^(10k) ... kept decimal
 * inside the unit so the labels read 0, 4, 8, 12, 16 GiB. */
static void unit_of(double max, int unit, double *div, const char **name)
{
	static const char *const b[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const r[] = { "B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s" };
	if (unit == 1) {
		*div = 1;
		*name = "% of one core";
		return;
	}
	int k = 0;
	double d = 1;
	while (k < 4 && max / d >= 1024) {
		d *= 1024;
		k++;
	}
	*div = d;
	*name = unit == 0 ? b[k] : r[k];
}

static void text(cairo_t *cr, double x, double y, const char *s, double size, int align, bool bold)
{
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size);
	cairo_text_extents_t e;
	cairo_text_extents(cr, s, &e);
	double dx = align == 0 ? 0 : align == 1 ? -e.x_advance / 2 : -e.x_advance;
	cairo_move_to(cr, x + dx, y);
	cairo_show_text(cr, s);
}

static double text_width(cairo_t *cr, const char *s, double size)
{
	cairo_set_font_size(cr, size);
	cairo_text_extents_t e;
	cairo_text_extents(cr, s, &e);
	return e.x_advance;
}

struct frame {
	double t0, t1;      /* time range */
	double x0, x1;      /* pixels */
};

static double xpix(const struct frame *f, double t)
{
	return f->x0 + (t - f->t0) / (f->t1 - f->t0) * (f->x1 - f->x0);
}

static void draw_phases(cairo_t *cr, const struct frame *f, const struct gp_doc *d, double y0, double y1)
{
	const struct gp_verdict *v = &d->v;
	for (size_t i = 0; i < v->nphases; i++) {
		const struct gp_phase *p = &v->phase[i];
		double a = xpix(f, p->from), b = xpix(f, p->to);
		if (p->progress)
			cairo_set_source_rgba(cr, 0.0, 0.62, 0.45, 0.07);
		else
			cairo_set_source_rgba(cr, 0.84, 0.20, 0.10, 0.08);
		cairo_rectangle(cr, a, y0, b - a, y1 - y0);
		cairo_fill(cr);
		if (i > 0) {
			static const double dash[] = { 5, 4 };
			cairo_set_dash(cr, dash, 2, 0);
			cairo_set_source_rgba(cr, 0.3, 0.3, 0.3, 0.8);
			cairo_set_line_width(cr, 1);
			cairo_move_to(cr, a + 0.5, y0);
			cairo_line_to(cr, a + 0.5, y1);
			cairo_stroke(cr);
			cairo_set_dash(cr, NULL, 0, 0);
		}
	}
	/* The verdict's "since": where the judged behaviour began. */
	double s = xpix(f, v->since_s);
	if (s >= f->x0 && s <= f->x1) {
		cairo_set_source_rgb(cr, 0.75, 0.10, 0.10);
		cairo_set_line_width(cr, 2);
		cairo_move_to(cr, s, y0);
		cairo_line_to(cr, s, y1);
		cairo_stroke(cr);
	}
}

/* The kernel log's driver errors: a dotted line at each, at most
 * KLOG_MARKS (a flood of Xid 13 draws 64, not thousands: the report's
 * Kernel log lists them).  label_y > 0: their names too, at that height,
 * each where the one before it left room. */
#define KLOG_MARKS 64
#define KLOG_LABEL_MAX 40
static const struct rgb klog_rgb = { 0.60, 0.15, 0.55 };

static size_t draw_klog(cairo_t *cr, const struct frame *f, const struct gp_doc *d, double y0,
			double y1, double label_y)
{
	size_t drawn = 0;
	double free_x = f->x0;
	for (size_t i = 0; i < d->klog.nrow && drawn < KLOG_MARKS; i++) {
		const json_t *line = d->klog.row[i].line;
		double t;
		if (!gp_klog_is_error(line) || !gp_klog_t(line, &t) || !(t >= f->t0 && t <= f->t1))
			continue;
		double x = floor(xpix(f, t)) + 0.5;
		drawn++;
		cairo_set_source_rgb(cr, klog_rgb.r, klog_rgb.g, klog_rgb.b);
		if (label_y <= 0) {
			static const double dots[] = { 2, 3 };
			cairo_set_dash(cr, dots, 2, 0);
			cairo_set_line_width(cr, 1.5);
			cairo_move_to(cr, x, y0);
			cairo_line_to(cr, x, y1);
			cairo_stroke(cr);
			cairo_set_dash(cr, NULL, 0, 0);
			continue;
		}
		if (x < free_x)
			continue;
		struct strbuf lab = STRBUF_INIT;
		gp_klog_label(&lab, line, true);
		if (lab.len > KLOG_LABEL_MAX) {
			size_t len = KLOG_LABEL_MAX;
			while (len > 0 && ((unsigned char)lab.buf[len] & 0xC0) == 0x80)
				len--;
			strbuf_setlen(&lab, len);
			strbuf_addstr(&lab, "...");
		}
		double w = text_width(cr, lab.buf, 11);
		if (x + 3 + w <= f->x1) {
			cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
			cairo_rectangle(cr, x + 1, label_y - 10, w + 4, 13);
			cairo_fill(cr);
			cairo_set_source_rgb(cr, klog_rgb.r, klog_rgb.g, klog_rgb.b);
			text(cr, x + 3, label_y, lab.buf, 11, 0, false);
			free_x = x + w + 8;
		}
		strbuf_release(&lab);
	}
	return drawn;
}

/* The legend: top right, on a white box. */
static void draw_legend(cairo_t *cr, const struct frame *f, const struct panel *p)
{
	double lw = 0;
	for (size_t k = 0; k < p->ns; k++) {
		double w = text_width(cr, p->s[k].label, 12);
		lw = w > lw ? w : lw;
	}
	if (p->ns) {
		double bx = f->x1 - lw - 46, by = p->y0 + 8, bh = 18.0 * (double)p->ns + 8;
		cairo_set_source_rgba(cr, 1, 1, 1, 0.88);
		cairo_rectangle(cr, bx, by, lw + 38, bh);
		cairo_fill_preserve(cr);
		cairo_set_source_rgba(cr, 0, 0, 0, 0.25);
		cairo_set_line_width(cr, 1);
		cairo_stroke(cr);
		for (size_t k = 0; k < p->ns; k++) {
			double y = by + 16 + 18.0 * (double)k;
			cairo_set_source_rgb(cr, p->s[k].c.r, p->s[k].c.g, p->s[k].c.b);
			cairo_set_line_width(cr, 3);
			if (p->s[k].dashed) {
				static const double dash[] = { 5, 3 };
				cairo_set_dash(cr, dash, 2, 0);
			}
			cairo_move_to(cr, bx + 6, y - 4);
			cairo_line_to(cr, bx + 28, y - 4);
			cairo_stroke(cr);
			cairo_set_dash(cr, NULL, 0, 0);
			cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
			text(cr, bx + 33, y, p->s[k].label, 12, 0, false);
		}
	}
}

static void draw_panel(cairo_t *cr, const struct frame *f, const struct gp_doc *d, struct panel *p,
		       bool xlabels)
{
	size_t n = d->l.series.n;
	double vmax = 0;
	for (size_t k = 0; k < p->ns; k++)
		for (size_t i = 0; i < n; i++)
			if (!isnan(p->s[k].v[i]) && p->s[k].v[i] > vmax)
				vmax = p->s[k].v[i];
	double div;
	const char *uname;
	unit_of(vmax, p->unit, &div, &uname);
	double top = vmax / div;
	if (top <= 0)
		top = 1;
	double step = nice_step(top, 4);
	top = ceil(top / step * 1.0001) * step;
	if (p->unit == 1 && top < 100)
		top = 100, step = 25;

	/* frame and grid */
	cairo_set_source_rgb(cr, 1, 1, 1);
	cairo_rectangle(cr, f->x0, p->y0, f->x1 - f->x0, p->y1 - p->y0);
	cairo_fill(cr);
	draw_phases(cr, f, d, p->y0, p->y1);
	draw_klog(cr, f, d, p->y0, p->y1, 0);
	cairo_set_line_width(cr, 1);
	/* At most 100 grid lines: with times or values from a hostile file
	 * (t near 1e17, a step under the ulp) t += step never moves and the
	 * loop never ended (tests/fuzz, regress/report/plot-ulp-step). */
	int lines = 0;
	for (double y = 0; y <= top + step * 0.01 && lines++ < 100; y += step) {
		double py = p->y1 - y / top * (p->y1 - p->y0);
		cairo_set_source_rgba(cr, 0, 0, 0, 0.10);
		cairo_move_to(cr, f->x0, floor(py) + 0.5);
		cairo_line_to(cr, f->x1, floor(py) + 0.5);
		cairo_stroke(cr);
		char lab[32];
		snprintf(lab, sizeof lab, step < 1 ? "%.1f" : "%.0f", y);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		text(cr, f->x0 - 6, py + 4, lab, 12, 2, false);
	}
	double tstep = nice_step(f->t1 - f->t0, 10);
	lines = 0;
	for (double t = ceil(f->t0 / tstep) * tstep; t <= f->t1 + 1e-9 && lines++ < 100; t += tstep) {
		double px = floor(xpix(f, t)) + 0.5;
		cairo_set_source_rgba(cr, 0, 0, 0, 0.10);
		cairo_move_to(cr, px, p->y0);
		cairo_line_to(cr, px, p->y1);
		cairo_stroke(cr);
		if (xlabels) {
			char lab[32];
			snprintf(lab, sizeof lab, tstep < 1 ? "%.1f" : "%.0f", t);
			cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
			text(cr, px, p->y1 + 16, lab, 12, 1, false);
		}
	}
	cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
	cairo_rectangle(cr, f->x0 + 0.5, p->y0 + 0.5, f->x1 - f->x0 - 1, p->y1 - p->y0 - 1);
	cairo_stroke(cr);
	/* axis title, rotated */
	cairo_save(cr);
	cairo_translate(cr, 22, (p->y0 + p->y1) / 2);
	cairo_rotate(cr, -M_PI / 2);
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	text(cr, 0, 0, uname, 13, 1, false);
	cairo_restore(cr);
	/* panel title */
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	text(cr, f->x0, p->y0 - 7, p->title, 14, 0, true);

	/* series */
	cairo_save(cr);
	cairo_rectangle(cr, f->x0, p->y0, f->x1 - f->x0, p->y1 - p->y0);
	cairo_clip(cr);
	for (size_t k = 0; k < p->ns; k++) {
		struct series *s = &p->s[k];
		cairo_set_source_rgb(cr, s->c.r, s->c.g, s->c.b);
		cairo_set_line_width(cr, 2.2);
		if (s->dashed) {
			static const double dash[] = { 7, 4 };
			cairo_set_dash(cr, dash, 2, 0);
		}
		bool pen = false;
		for (size_t i = 0; i < n; i++) {
			double v = s->v[i];
			if (isnan(v)) {
				pen = false;
				continue;
			}
			double px = xpix(f, d->l.series.pt[i].t), py = p->y1 - v / div / top * (p->y1 - p->y0);
			if (pen)
				cairo_line_to(cr, px, py);
			else
				cairo_move_to(cr, px, py);
			pen = true;
		}
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
	}
	cairo_restore(cr);

	draw_legend(cr, f, p);
}

static struct series *add(struct panel *p, const char *label, size_t n)
{
	if (p->ns >= sizeof p->s / sizeof p->s[0])
		return NULL;
	struct series *s = &p->s[p->ns];
	memset(s, 0, sizeof *s);
	snprintf(s->label, sizeof s->label, "%s", label);
	s->v = malloc((n ? n : 1) * sizeof *s->v);
	if (!s->v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s->v[i] = NAN;
	s->c = pal[p->ns % (sizeof pal / sizeof pal[0])];
	p->ns++;
	return s;
}

static bool any_nonzero(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]) && v[i] != 0)
			return true;
	return false;
}

static void fill_metric(struct panel *p, const struct gp_doc *d, size_t m, const char *label,
			bool cumulative_io, bool keep_zero)
{
	size_t n = d->l.series.n;
	struct series *s = add(p, label, n);
	if (!s)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct gp_point *pt = &d->l.series.pt[i];
		if (cumulative_io) {
			if (pt->have & GP_PT_IO)
				s->v[i] = (double)(!strcmp(gp_metric_get(m)->label, "read()")
					   ? pt->io_rchar - d->l.series.pt[0].io_rchar
					   : pt->io_wchar - d->l.series.pt[0].io_wchar);
		} else {
			double v;
			if (gp_metric_value(d, m, i, &v))
				s->v[i] = v;
		}
	}
	if (!keep_zero && !any_nonzero(s->v, n)) {
		free(s->v);
		p->ns--;
	}
}

static size_t metric_index(const char *label)
{
	for (size_t i = 0; i < gp_metric_count(); i++)
		if (!strcmp(gp_metric_get(i)->label, label))
			return i;
	return 0;
}

/* Each phase's words, inside its own band at the foot of the first panel,
 * cut to fit. */
#define LABEL_MAX 196

static void phase_labels(cairo_t *cr, const struct frame *f, const struct gp_doc *d, double y)
{
	for (size_t i = 0; i < d->v.nphases; i++) {
		const struct gp_phase *ph = &d->v.phase[i];
		double a = xpix(f, ph->from) + 6, b = xpix(f, ph->to) - 6;
		struct strbuf lab = STRBUF_INIT;
		strbuf_addstr(&lab, ph->progress ? "progress: " : "flat: ");
		gp_phase_what(&lab, &d->v, i);
		/* No band is wider than LABEL_MAX bytes of 12 px text: cut there
		 * before measuring (a what of 70 000 bytes, fuzz_report), then
		 * one character at a time, on a UTF-8 boundary, marking the cut.
		 * The strbuf grows for the mark: a fixed buffer once took "..."
		 * past its end (crash-74339d11, found on the H200's cores). */
		size_t len = lab.len;
		bool cut = len > LABEL_MAX;
		if (cut)
			len = LABEL_MAX;
		while (cut || (len > 4 && text_width(cr, lab.buf, 12) > b - a)) {
			if (!cut)
				len--;
			cut = false;
			while (len > 0 && ((unsigned char)lab.buf[len] & 0xC0) == 0x80)
				len--;
			strbuf_setlen(&lab, len);
			strbuf_addstr(&lab, "...");
		}
		if (len <= 4 || b - a < 90) {
			strbuf_release(&lab);
			continue;
		}
		cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
		cairo_rectangle(cr, a - 3, y - 13, text_width(cr, lab.buf, 12) + 6, 18);
		cairo_fill(cr);
		cairo_set_source_rgb(cr, ph->progress ? 0.0 : 0.55, ph->progress ? 0.40 : 0.10,
				     ph->progress ? 0.30 : 0.05);
		text(cr, a, y, lab.buf, 12, 0, false);
		strbuf_release(&lab);
	}
}

static void draw(cairo_t *cr, const struct gp_doc *d)
{
	size_t n = d->l.series.n;
	cairo_set_source_rgb(cr, 0.97, 0.97, 0.965);
	cairo_paint(cr);
	struct frame f = { d->l.series.pt[0].t, d->l.series.pt[n - 1].t, ML, W - MR };
	/* A trace starts at +0: the first sample lands a hair after. */
	if (f.t0 > 0 && f.t0 < 0.05 * (f.t1 - f.t0))
		f.t0 = 0;
	if (f.t1 <= f.t0)
		f.t1 = f.t0 + 1;

	/* title and verdict */
	char title[256];
	const char *comm = gp_doc_comm(d);
	snprintf(title, sizeof title, "%s (pid %lld): %zu samples over %.0f s",
		 comm ? comm : "?", (long long)json_integer_value(json_object_get(d->l.target, "pid")),
		 d->l.series.samples, f.t1 - f.t0);
	cairo_set_source_rgb(cr, 0.05, 0.05, 0.05);
	text(cr, ML, 26, title, 17, 0, true);
	char vline[320];
	snprintf(vline, sizeof vline, "verdict: %s since %+.1f s (confidence %s)%s",
		 gp_class_name(d->v.cls), d->v.since_s, gp_conf_name(d->v.confidence), d->l.exit ? "" : "  [file cut short]");
	cairo_set_source_rgb(cr, 0.70, 0.08, 0.08);
	text(cr, ML, 50, vline, 15, 0, true);
	/* key to the shading, right of the title */
	cairo_set_source_rgba(cr, 0.0, 0.62, 0.45, 0.25);
	cairo_rectangle(cr, W - MR - 330, 38, 14, 14);
	cairo_fill(cr);
	cairo_set_source_rgba(cr, 0.84, 0.20, 0.10, 0.25);
	cairo_rectangle(cr, W - MR - 208, 38, 14, 14);
	cairo_fill(cr);
	cairo_set_source_rgb(cr, 0.75, 0.10, 0.10);
	cairo_set_line_width(cr, 2);
	cairo_move_to(cr, W - MR - 92, 38);
	cairo_line_to(cr, W - MR - 92, 52);
	cairo_stroke(cr);
	cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
	text(cr, W - MR - 312, 50, "progress phase", 12, 0, false);
	text(cr, W - MR - 190, 50, "flat phase", 12, 0, false);
	text(cr, W - MR - 86, 50, "verdict since", 12, 0, false);

	double avail = H - TOP - BOTTOM - 2 * GAP;
	struct panel p[3];
	memset(p, 0, sizeof p);
	p[0].title = "Progress: memory and io (output)";
	p[0].unit = 0;
	p[0].y0 = TOP + 10;
	p[0].y1 = p[0].y0 + avail * 0.40;
	p[1].title = "CPU: the busiest threads and the process (effort)";
	p[1].unit = 1;
	p[1].y0 = p[0].y1 + GAP;
	p[1].y1 = p[1].y0 + avail * 0.32;
	p[2].title = "System writeback: pages dirtied and written back";
	p[2].unit = 2;
	p[2].y0 = p[1].y1 + GAP;
	p[2].y1 = H - BOTTOM - 10;

	fill_metric(&p[0], d, metric_index("RssFile"), "RssFile", false, true);
	fill_metric(&p[0], d, metric_index("RssAnon"), "RssAnon", false, false);
	bool gpu = false;
	for (size_t i = 0; i < n; i++)
		gpu |= (d->l.series.pt[i].have & (GP_PT_GPU_DRM | GP_PT_GPU_KFD | GP_PT_GPU_NVML)) != 0;
	if (gpu)
		fill_metric(&p[0], d, metric_index("GPU memory"), "GPU memory", false, true);
	fill_metric(&p[0], d, metric_index("VmPin"), "VmPin", false, false);
	fill_metric(&p[0], d, metric_index("read()"), "read() since start", true, false);
	fill_metric(&p[0], d, metric_index("write()"), "write() since start", true, false);

	const struct gp_thread_agg *top[5];
	size_t nt = gp_doc_top_threads(d, top, 5);
	for (size_t k = 0; k < nt; k++) {
		if (top[k]->judged == 0 || top[k]->cpu_sum / top[k]->judged < 0.5)
			continue;
		char lab[64], tcomm[40]; /* safe: cairo draws UTF-8 only */
		snprintf(lab, sizeof lab, "thread %d (%s)", top[k]->tid,
			 gp_safe_str(top[k]->comm, tcomm, sizeof tcomm));
		struct series *s = add(&p[1], lab, n);
		if (!s)
			break;
		for (size_t i = 0; i < n && top[k]->cpu; i++)
			s->v[i] = top[k]->cpu[i];
	}
	size_t before = p[1].ns;
	fill_metric(&p[1], d, metric_index("process CPU"), "process total", false, true);
	if (p[1].ns > before) {
		p[1].s[p[1].ns - 1].dashed = true;
		p[1].s[p[1].ns - 1].c = pal[7];
	}
	fill_metric(&p[2], d, metric_index("system dirtied"), "dirtied", false, true);
	fill_metric(&p[2], d, metric_index("system written back"), "written back", false, true);
	p[2].s[1].dashed = p[2].ns > 1;

	for (int k = 0; k < 3; k++)
		draw_panel(cr, &f, d, &p[k], k == 2);
	phase_labels(cr, &f, d, p[0].y0 + (p[0].y1 - p[0].y0) * 0.55);
	if (draw_klog(cr, &f, d, 0, 0, p[0].y0 + 14)) {
		/* its key, left of the phases' */
		static const double dots[] = { 2, 3 };
		cairo_set_source_rgb(cr, klog_rgb.r, klog_rgb.g, klog_rgb.b);
		cairo_set_dash(cr, dots, 2, 0);
		cairo_set_line_width(cr, 1.5);
		cairo_move_to(cr, W - MR - 500.5, 38);
		cairo_line_to(cr, W - MR - 500.5, 52);
		cairo_stroke(cr);
		cairo_set_dash(cr, NULL, 0, 0);
		cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
		text(cr, W - MR - 494, 50, "driver error (kernel log)", 12, 0, false);
	}
	cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
	text(cr, (f.x0 + f.x1) / 2, H - 12, "time since the trace began (s)", 13, 1, false);
	for (int k = 0; k < 3; k++)
		for (size_t j = 0; j < p[k].ns; j++)
			free(p[k].s[j].v);
}

static cairo_status_t write_to(void *closure, const unsigned char *data, unsigned int len)
{
	return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

int gp_plot(const char *path, const struct gp_doc *d, char *err, size_t errcap)
{
	if (d->l.series.n < 2) {
		snprintf(err, errcap, "nothing to plot: fewer than two samples");
		return -1;
	}
	size_t pl = strlen(path);
	bool svg = pl > 4 && !strcasecmp(path + pl - 4, ".svg");
	FILE *out = fopen(path, "we");
	if (!out) {
		snprintf(err, errcap, "cannot create: %s", strerror(errno));
		return -1;
	}
	cairo_surface_t *sf = svg ? cairo_svg_surface_create_for_stream(write_to, out, W, H)
				  : cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
	cairo_t *cr = cairo_create(sf);
	draw(cr, d);
	cairo_destroy(cr);
	cairo_status_t st;
	if (svg) {
		cairo_surface_finish(sf);
		st = cairo_surface_status(sf);
	} else {
		st = cairo_surface_write_to_png_stream(sf, write_to, out);
	}
	cairo_surface_destroy(sf);
	/* cairo keeps font caches for the process's life; a command draws
	 * one plot, so give them back (and keep leak checkers quiet). */
	cairo_debug_reset_static_data();
	int rc = fclose(out);
	if (st != CAIRO_STATUS_SUCCESS || rc != 0) {
		snprintf(err, errcap, "cannot write: %s",
			 st != CAIRO_STATUS_SUCCESS ? cairo_status_to_string(st) : strerror(errno));
		remove(path);
		return -1;
	}
	return 0;
}
#endif
