// SPDX-License-Identifier: MIT
/*
 * Line and grouped bar charts, the legend and the frame shared with the
 * radar chart. Layout: title (and subtitle) on top, the plot, x tick labels
 * and the x axis title, then the legend in rows below the plot, so it never
 * covers data; the chart grows in height with the legend instead.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench/svg_int.h"
#include "common/errmsg.h"

#define PLOT_H      300.0
#define LEGEND_ROW  18.0
#define MARGIN_R    28.0

static const char *const FONT = "DejaVu Sans, Verdana, Arial, sans-serif";

static int series_color(const struct svg_chart *c, size_t i)
{
	return c->series[i].color >= 0 ? c->series[i].color : (int)i;
}

/* Palette size for ramps: enough for the highest colour index in use. */
static size_t color_span(const struct svg_chart *c)
{
	size_t n = c->nseries;

	for (size_t i = 0; i < c->nseries; i++)
		if ((size_t)series_color(c, i) + 1 > n)
			n = (size_t)series_color(c, i) + 1;
	return n;
}

void svg_series_color(const struct svg_chart *c, size_t i, char *buf)
{
	if (c->series[i].flags & SVG_REFERENCE)
		snprintf(buf, 8, "#303030");
	else
		svg_color(c->palette, series_color(c, i), color_span(c), buf);
}

void svg_point_end(struct svg_out *o, const struct svg_chart *c, const struct svg_series *s,
		   size_t k, const char *tag)
{
	char ys[48];

	svg_format(ys, sizeof(ys), c->y.unit, s->y[k], 0);
	svg_escape(o, c->cat[k]);
	svg_printf(o, "\" data-y=\"%.9g\"><title>", s->y[k]);
	svg_escape(o, s->name);
	svg_puts(o, ", ");
	svg_escape(o, c->cat[k]);
	svg_puts(o, ": ");
	svg_escape(o, ys);
	svg_printf(o, "</title></%s>\n", tag);
}

void svg_open(struct svg_out *o, const struct svg_chart *c, double w, double h)
{
	svg_printf(o, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
		   "role=\"img\" font-family=\"%s\" data-kind=\"%s\">\n", w, h, w, h, FONT,
		   c->kind == SVG_LINE ? "line" : c->kind == SVG_BAR ? "bar" :
		   c->kind == SVG_POINTS ? "points" : "radar");
	svg_puts(o, "<title>");
	svg_escape(o, c->title ? c->title : "chart");
	svg_puts(o, "</title>\n");
	svg_printf(o, "<rect class=\"bg\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
	if (c->title) {
		svg_printf(o, "<text class=\"title\" x=\"16\" y=\"24\" font-size=\"%.0f\" "
			   "font-weight=\"bold\" fill=\"#222\">", SVG_FONT_TITLE);
		svg_escape(o, c->title);
		svg_puts(o, "</text>\n");
	}
	if (c->subtitle) {
		svg_printf(o, "<text class=\"subtitle\" x=\"16\" y=\"42\" font-size=\"%.0f\" "
			   "fill=\"#666\">", SVG_FONT_LABEL);
		svg_escape(o, c->subtitle);
		svg_puts(o, "</text>\n");
	}
}

static double item_width(const struct svg_chart *c, size_t i)
{
	return 28 + svg_text_width(c->series[i].name ? c->series[i].name : "", SVG_FONT_LABEL) + 18;
}

void svg_legend_layout(struct svg_legend *l, const struct svg_chart *c, double x, double y,
		       double w)
{
	double cx = 0;

	l->x = x;
	l->y = y;
	l->w = w;
	l->rows = c->nseries ? 1 : 0;
	for (size_t i = 0; i < c->nseries; i++) {
		double iw = item_width(c, i);

		if (cx > 0 && cx + iw > w) {
			l->rows++;
			cx = 0;
		}
		cx += iw;
	}
	l->height = l->rows * LEGEND_ROW;
}

void svg_legend_write(struct svg_out *o, const struct svg_legend *l, const struct svg_chart *c)
{
	double cx = 0, cy = l->y + LEGEND_ROW / 2;
	char col[8];

	if (!c->nseries)
		return;
	svg_puts(o, "<g class=\"legend\">\n");
	for (size_t i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];
		double iw = item_width(c, i), x;

		if (cx > 0 && cx + iw > l->w) {
			cy += LEGEND_ROW;
			cx = 0;
		}
		x = l->x + cx;
		svg_series_color(c, i, col);
		svg_puts(o, "<g class=\"legend-item\" data-series=\"");
		svg_escape(o, s->name);
		svg_puts(o, "\">");
		if (c->kind != SVG_BAR) {
			const char *dash = svg_series_dash(c, i);

			svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				   "stroke-width=\"2.2\"", x, cy, x + 22, cy, col);
			if (dash)
				svg_printf(o, " stroke-dasharray=\"%s\"", dash);
			svg_puts(o, "/>");
			if (!(s->flags & SVG_NO_MARKERS)) {
				const char *tag = svg_marker_open(o, "key", svg_series_shape(c, i),
								  x + 11, cy, 3.6, col);
				svg_printf(o, " stroke=\"#fff\" stroke-width=\"0.8\"></%s>", tag);
			}
		} else {
			svg_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"16\" height=\"11\" rx=\"2\" "
				   "fill=\"%s\"/>", x + 3, cy - 5.5, col);
		}
		svg_printf(o, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"#333\">",
			   x + 28, cy + 4, SVG_FONT_LABEL);
		svg_escape(o, s->name);
		svg_puts(o, "</text></g>\n");
		cx += iw;
	}
	svg_puts(o, "</g>\n");
}

int svg_chart_check(const struct svg_chart *c, char *err, size_t errlen)
{
	if (!c->nseries)
		return 0;
	if (c->nmarks && (c->kind != SVG_LINE || !c->marks || c->nmarks > SVG_MAX_MARKS))
		return uraid_errf(err, errlen, -EINVAL, "chart \"%s\": %zu marks (a line chart "
				  "takes at most %u)", c->title ? c->title : "", c->nmarks,
				  SVG_MAX_MARKS);
	if (!c->series || c->nseries > SVG_MAX_SERIES)
		return uraid_errf(err, errlen, -EINVAL, "chart \"%s\": %zu series (at most %u)",
				  c->title ? c->title : "", c->nseries, SVG_MAX_SERIES);
	if (c->kind != SVG_LINE && (!c->cat || !c->ncat || c->ncat > SVG_MAX_CATEGORIES ||
				    (c->kind == SVG_RADAR && c->ncat < 3)))
		return uraid_errf(err, errlen, -EINVAL,
				  "chart \"%s\": %zu categories (a %s chart needs %u to %u)",
				  c->title ? c->title : "", c->ncat,
				  c->kind == SVG_RADAR ? "radar" : c->kind == SVG_BAR ? "bar" : "points",
				  c->kind == SVG_RADAR ? 3 : 1,
				  SVG_MAX_CATEGORIES);
	for (size_t i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];

		if (!s->name || s->n > SVG_MAX_POINTS || (s->n && !s->y) ||
		    (c->kind == SVG_LINE && s->n && !s->x) || (c->kind != SVG_LINE && s->n != c->ncat))
			return uraid_errf(err, errlen, -EINVAL,
					  "chart \"%s\": series %zu (%s) has %zu points%s",
					  c->title ? c->title : "", i, s->name ? s->name : "no name",
					  s->n, c->kind != SVG_LINE ? ", not one per category" : "");
	}
	return 0;
}

/* Range of the values that the axis can show (> 0 on log scales). */
static void extent(const struct svg_chart *c, bool of_x, enum svg_scale scale, double *lo,
		   double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < c->nseries; i++) {
		const double *v = of_x ? c->series[i].x : c->series[i].y;

		for (size_t k = 0; k < c->series[i].n; k++) {
			if (!isfinite(v[k]) || (scale != SVG_LINEAR && v[k] <= 0))
				continue;
			*lo = fmin(*lo, v[k]);
			*hi = fmax(*hi, v[k]);
		}
	}
}

static double max_label_width(const struct svg_map *m)
{
	char b[48];
	double w = 0;

	for (size_t i = 0; i < m->nticks; i++) {
		svg_map_label(m, i, b, sizeof(b));
		w = fmax(w, svg_text_width(b, SVG_FONT_TICK));
	}
	return w;
}

static void text(struct svg_out *o, double x, double y, const char *anchor, double size,
		 const char *fill, const char *s)
{
	svg_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\" fill=\"%s\">",
		   x, y, anchor, size, fill);
	svg_escape(o, s);
	svg_puts(o, "</text>\n");
}

/* Horizontal grid, y tick labels and the rotated y axis title. */
static void y_axis(struct svg_out *o, const struct svg_map *y, const struct svg_axis *a,
		   double x0, double x1)
{
	char b[48];

	svg_puts(o, "<g class=\"y-axis\">\n");
	/* faint lines at 2..9 of each decade: a log axis reads like log paper */
	if (y->scale == SVG_LOG10) {
		for (double d = pow(10, floor(log10(y->lo))); d < y->hi; d *= 10) {
			for (int k = 2; k <= 9; k++) {
				double py = svg_map_px(y, d * k);

				if (d * k <= y->lo || d * k >= y->hi)
					continue;
				svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
					   "stroke=\"#f4f4f4\"/>\n", x0, py, x1, py);
			}
		}
	}
	for (size_t i = 0; i < y->nticks; i++) {
		double py = svg_map_px(y, y->tick[i]);

		svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
			   x0, py, x1, py, i == 0 ? "#888" : "#e4e4e4");
		svg_map_label(y, i, b, sizeof(b));
		text(o, x0 - 6, py + 4, "end", SVG_FONT_TICK, "#444", b);
	}
	if (a->label) {
		svg_printf(o, "<text class=\"axis-title\" transform=\"translate(18 %.1f) rotate(-90)\" "
			   "text-anchor=\"middle\" font-size=\"%.0f\" fill=\"#333\">",
			   (y->p0 + y->p1) / 2, SVG_FONT_LABEL);
		svg_escape(o, a->label);
		svg_puts(o, "</text>\n");
	}
	svg_puts(o, "</g>\n");
}

static void point(struct svg_out *o, const struct svg_chart *c, size_t i, double x, double y,
		  const char *xs, const char *col, double px, double py)
{
	const struct svg_series *s = &c->series[i];
	const char *tag;
	char ys[48];

	if (s->flags & SVG_NO_MARKERS) {     /* kept for readers of the data, nothing to hover */
		svg_printf(o, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"0\" data-x=\"%.9g\" "
			   "data-y=\"%.9g\"/>\n", px, py, x, y);
		return;
	}
	svg_format(ys, sizeof(ys), c->y.unit, y, 0);
	tag = svg_marker_open(o, "pt", svg_series_shape(c, i), px, py, 3.4, col);
	svg_printf(o, " data-x=\"%.9g\" data-y=\"%.9g\"><title>", x, y);
	svg_escape(o, s->name);
	svg_puts(o, ": ");
	svg_escape(o, xs);
	svg_puts(o, ", ");
	svg_escape(o, ys);
	svg_printf(o, "</title></%s>\n", tag);
}

static void line_series(struct svg_out *o, const struct svg_chart *c, size_t i,
			const struct svg_map *xm, const struct svg_map *ym)
{
	const struct svg_series *s = &c->series[i];
	const char *dash = svg_series_dash(c, i);
	bool pen = false;
	char col[8], xs[48];

	svg_series_color(c, i, col);
	svg_puts(o, "<g class=\"series\" data-series=\"");
	svg_escape(o, s->name);
	svg_printf(o, "\" data-color=\"%s\">\n<path fill=\"none\" stroke=\"%s\" stroke-width=\"2.2\" "
		   "stroke-linejoin=\"round\"", col, col);
	if (dash)
		svg_printf(o, " stroke-dasharray=\"%s\"", dash);
	svg_puts(o, " d=\"");
	for (size_t k = 0; k < s->n; k++) {
		double px = svg_map_px(xm, s->x[k]), py = svg_map_px(ym, s->y[k]);

		if (isnan(px) || isnan(py)) {
			pen = false;        /* a gap: the next point starts a new piece */
			continue;
		}
		svg_printf(o, "%s%.1f %.1f", pen ? " L" : " M", px, py);
		pen = true;
	}
	svg_puts(o, "\"/>\n");
	for (size_t k = 0; k < s->n; k++) {
		double px = svg_map_px(xm, s->x[k]), py = svg_map_px(ym, s->y[k]);

		if (isnan(px) || isnan(py))
			continue;
		svg_format(xs, sizeof(xs), c->x.unit, s->x[k], 0);
		point(o, c, i, s->x[k], s->y[k], xs, col, px, py);
	}
	svg_puts(o, "</g>\n");
}

/* Frame shared by line and bar charts: fits y, places the plot, returns its geometry. */
struct frame {
	double w, top, x0, x1, y0, y1;
	struct svg_map y;
};

static void frame_fit(struct frame *f, const struct svg_chart *c)
{
	double lo, hi, left;

	f->w = c->width ? c->width : SVG_WIDTH;
	f->top = (c->subtitle ? 60 : 44) + svg_marks_room(c);
	f->y0 = f->top;
	f->y1 = f->top + PLOT_H;
	extent(c, false, c->y.scale, &lo, &hi);
	f->y.p0 = f->y1;
	f->y.p1 = f->y0;
	svg_map_fit(&f->y, &c->y, lo, hi, true, 6);
	left = 10 + (c->y.label ? 18 : 0) + max_label_width(&f->y) + 8;
	f->x0 = fmax(left, 48);
	f->x1 = f->w - MARGIN_R;
}

/* An x tick label below the plot, tilted when labels would otherwise touch. */
static void x_label(struct svg_out *o, double x, double y1, bool tilt, const char *s)
{
	if (!tilt) {
		text(o, x, y1 + 17, "middle", SVG_FONT_TICK, "#444", s);
		return;
	}
	svg_printf(o, "<text transform=\"translate(%.1f %.1f) rotate(-35)\" text-anchor=\"end\" "
		   "font-size=\"%.0f\" fill=\"#444\">", x + 4, y1 + 15, SVG_FONT_TICK);
	svg_escape(o, s);
	svg_puts(o, "</text>\n");
}

/* Height below the plot taken by tick labels of width wl. */
static double x_label_room(bool tilt, double wl)
{
	return tilt ? 16 + wl * 0.58 : 22;     /* sin 35° */
}

static void line_chart(struct svg_out *o, const struct svg_chart *c)
{
	struct frame f;
	struct svg_map xm;
	struct svg_legend leg;
	double lo, hi, h, wl = 0, gap = INFINITY, below;
	bool tilt = false;
	char b[48];

	frame_fit(&f, c);
	extent(c, true, c->x.scale, &lo, &hi);
	/* the axis shows every cell whole, up to the end of the last one */
	for (size_t i = 0; i < c->nmarks; i++)
		if (isfinite(c->marks[i].x) && (c->x.scale == SVG_LINEAR || c->marks[i].x > 0)) {
			lo = fmin(lo, c->marks[i].x);
			hi = fmax(hi, c->marks[i].x);
		}
	xm.p0 = f.x0;
	xm.p1 = f.x1;
	svg_map_fit(&xm, &c->x, lo, hi, false, 8);
	for (size_t i = 0; i < xm.nticks; i++) {
		svg_map_label(&xm, i, b, sizeof(b));
		wl = fmax(wl, svg_text_width(b, SVG_FONT_TICK));
		if (i)
			gap = fmin(gap, svg_map_px(&xm, xm.tick[i]) - svg_map_px(&xm, xm.tick[i - 1]));
	}
	/* every power of two keeps its label when they are few (block sizes, queue
	   depths): tilted; a long run of ticks is thinned instead */
	if (xm.nticks > 1 && gap < wl + 8 && xm.nticks <= 16)
		tilt = true;
	else
		svg_map_thin(&xm, wl);
	below = x_label_room(tilt, wl);
	svg_legend_layout(&leg, c, f.x0, f.y1 + below + (c->x.label ? 26 : 8), f.x1 - f.x0);
	h = leg.y + leg.height + 12;
	svg_open(o, c, f.w, h);
	y_axis(o, &f.y, &c->y, f.x0, f.x1);
	svg_puts(o, "<g class=\"x-axis\">\n");
	for (size_t i = 0; i < xm.nticks; i++) {
		double px = svg_map_px(&xm, xm.tick[i]);

		svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#f0f0f0\"/>\n",
			   px, f.y0, px, f.y1);
		svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
			   px, f.y1, px, f.y1 + 4);
		if (i % xm.label_every)
			continue;
		svg_map_label(&xm, i, b, sizeof(b));
		x_label(o, px, f.y1, tilt, b);
	}
	if (c->x.label) {
		svg_printf(o, "<g class=\"axis-title\">");
		text(o, (f.x0 + f.x1) / 2, f.y1 + below + 16, "middle", SVG_FONT_LABEL, "#333",
		     c->x.label);
		svg_puts(o, "</g>\n");
	}
	svg_puts(o, "</g>\n");
	svg_marks_write(o, c, &xm, f.y0, f.y1);
	for (size_t i = 0; i < c->nseries; i++)
		line_series(o, c, i, &xm, &f.y);
	svg_legend_write(o, &leg, c);
	svg_puts(o, "</svg>\n");
}

/* A series of a points chart: a marker at each category's centre, joined by a thin line. */
static void points_series(struct svg_out *o, const struct svg_chart *c, size_t i,
			  const struct frame *f, double band)
{
	const struct svg_series *s = &c->series[i];
	const char *dash = svg_series_dash(c, i), *tag;
	bool pen = false;
	char col[8];

	svg_series_color(c, i, col);
	svg_puts(o, "<g class=\"series\" data-series=\"");
	svg_escape(o, s->name);
	svg_printf(o, "\" data-color=\"%s\">\n<path fill=\"none\" stroke=\"%s\" "
		   "stroke-width=\"1.5\" stroke-opacity=\"0.75\"", col, col);
	if (dash)
		svg_printf(o, " stroke-dasharray=\"%s\"", dash);
	svg_puts(o, " d=\"");
	for (size_t k = 0; k < c->ncat; k++) {
		double py = svg_map_px(&f->y, s->y[k]);

		if (isnan(py)) {
			pen = false;
			continue;
		}
		svg_printf(o, "%s%.1f %.1f", pen ? " L" : " M", f->x0 + band * ((double)k + 0.5), py);
		pen = true;
	}
	svg_puts(o, "\"/>\n");
	for (size_t k = 0; k < c->ncat; k++) {
		double py = svg_map_px(&f->y, s->y[k]);

		if (isnan(py))
			continue;
		tag = svg_marker_open(o, "pt", svg_series_shape(c, i),
				      f->x0 + band * ((double)k + 0.5), py, 4, col);
		svg_puts(o, " stroke=\"#fff\" stroke-width=\"0.8\" data-x=\"");
		svg_point_end(o, c, s, k, tag);
	}
	svg_puts(o, "</g>\n");
}

/* Bars or points over categories: the same frame and x axis. */
static void bar_chart(struct svg_out *o, const struct svg_chart *c)
{
	struct frame f;
	struct svg_legend leg;
	double band, group, bw, base, wl = 0, below, h;
	bool tilt;
	char col[8];

	frame_fit(&f, c);
	band = (f.x1 - f.x0) / (double)c->ncat;
	group = band * (c->nseries > 1 ? 0.82 : 0.6);
	bw = group / (double)(c->nseries ? c->nseries : 1);
	/* few categories would make slabs of bars: cap the width and keep groups centred */
	if (bw > 34) {
		bw = 34;
		group = bw * (double)c->nseries;
	}
	for (size_t k = 0; k < c->ncat; k++)
		wl = fmax(wl, svg_text_width(c->cat[k] ? c->cat[k] : "", SVG_FONT_TICK));
	/* long category names are tilted rather than left to run into each other */
	tilt = wl > band - 6;
	below = x_label_room(tilt, wl);
	svg_legend_layout(&leg, c, f.x0, f.y1 + below + (c->x.label ? 26 : 8), f.x1 - f.x0);
	h = leg.y + leg.height + 12;
	svg_open(o, c, f.w, h);
	y_axis(o, &f.y, &c->y, f.x0, f.x1);
	svg_puts(o, "<g class=\"x-axis\">\n");
	for (size_t k = 0; k < c->ncat; k++) {
		double cx = f.x0 + band * ((double)k + 0.5);

		if (c->kind == SVG_POINTS)
			svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				   "stroke=\"#ececec\"/>\n", cx, f.y0, cx, f.y1);
		x_label(o, cx, f.y1, tilt, c->cat[k]);
	}
	if (c->x.label)
		text(o, (f.x0 + f.x1) / 2, f.y1 + below + 16, "middle", SVG_FONT_LABEL, "#333",
		     c->x.label);
	svg_puts(o, "</g>\n");
	if (c->kind == SVG_POINTS) {
		for (size_t i = 0; i < c->nseries; i++)
			points_series(o, c, i, &f, band);
		svg_legend_write(o, &leg, c);
		svg_puts(o, "</svg>\n");
		return;
	}
	/* bars grow from the axis' bottom: 0 on a linear axis, the lowest decade on a log one */
	base = f.y1;
	for (size_t i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];

		svg_series_color(c, i, col);
		svg_puts(o, "<g class=\"series\" data-series=\"");
		svg_escape(o, s->name);
		svg_printf(o, "\" data-color=\"%s\">\n", col);
		for (size_t k = 0; k < c->ncat; k++) {
			double py = svg_map_px(&f.y, s->y[k]), x;

			if (isnan(py))
				continue;
			py = fmin(py, base);
			x = f.x0 + band * (double)k + (band - group) / 2 + bw * (double)i;
			svg_printf(o, "<rect class=\"pt\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				   "height=\"%.1f\" fill=\"%s\" data-x=\"", x + 0.5, py,
				   fmax(bw - 1, 1), base - py, col);
			svg_point_end(o, c, s, k, "rect");
		}
		svg_puts(o, "</g>\n");
	}
	svg_legend_write(o, &leg, c);
	svg_puts(o, "</svg>\n");
}

int svg_chart_write(struct svg_out *o, const struct svg_chart *c, char *err, size_t errlen)
{
	int rc = svg_chart_check(c, err, errlen);

	if (rc)
		return rc;
	switch (c->kind) {
	case SVG_LINE:
		line_chart(o, c);
		break;
	case SVG_BAR:
	case SVG_POINTS:
		bar_chart(o, c);
		break;
	case SVG_RADAR:
		return svg_radar_write(o, c, err, errlen);
	default:
		return uraid_errf(err, errlen, -EINVAL, "chart \"%s\": unknown kind %d",
				  c->title ? c->title : "", (int)c->kind);
	}
	if (o->err)
		return uraid_errf(err, errlen, o->err, "chart \"%s\": %s",
				  c->title ? c->title : "", strerror(-o->err));
	return 0;
}
