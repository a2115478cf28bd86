// SPDX-License-Identifier: MIT
/*
 * Radar chart: one spoke per category clockwise from the top, a ring per
 * tick of the radial axis, a closed outline per series. On a log radial
 * axis the centre is the lowest decade, so series that differ by orders of
 * magnitude (IOPS at 512 B and at 1 MiB) both keep their shape.
 */
#include <math.h>
#include <string.h>

#include "bench/svg_int.h"
#include "common/errmsg.h"

#define RADIUS 150.0

struct radar {
	double cx, cy;
	struct svg_map r;           /* value -> distance from the centre */
	size_t n;
};

static void spoke(const struct radar *g, size_t k, double dist, double *x, double *y)
{
	double a = -M_PI / 2 + 2 * M_PI * (double)k / (double)g->n;

	*x = g->cx + dist * cos(a);
	*y = g->cy + dist * sin(a);
}

/* Distance of v from the centre; values the axis cannot show sit at the centre. */
static double dist(const struct radar *g, double v)
{
	double d = svg_map_px(&g->r, v);

	return isnan(d) ? 0 : fmin(fmax(d, 0), RADIUS);
}

static void grid(struct svg_out *o, const struct radar *g, const struct svg_chart *c)
{
	char b[48];
	double x, y;

	svg_puts(o, "<g class=\"radar-grid\">\n");
	for (size_t t = 0; t < g->r.nticks; t++) {
		double d = dist(g, g->r.tick[t]);

		if (d <= 0)
			continue;
		svg_puts(o, "<polygon fill=\"none\" stroke=\"#e0e0e0\" points=\"");
		for (size_t k = 0; k < g->n; k++) {
			spoke(g, k, d, &x, &y);
			svg_printf(o, "%s%.1f,%.1f", k ? " " : "", x, y);
		}
		svg_puts(o, "\"/>\n");
	}
	for (size_t k = 0; k < g->n; k++) {
		double c_, s_;
		const char *anchor;

		spoke(g, k, RADIUS, &x, &y);
		svg_printf(o, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c8c8c8\"/>\n",
			   g->cx, g->cy, x, y);
		spoke(g, k, RADIUS + 12, &x, &y);
		c_ = (x - g->cx) / (RADIUS + 12);
		s_ = (y - g->cy) / (RADIUS + 12);
		anchor = fabs(c_) < 0.3 ? "middle" : c_ > 0 ? "start" : "end";
		svg_printf(o, "<text class=\"spoke\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
			   "font-size=\"%.0f\" fill=\"#333\">", x, y + 4 + (s_ > 0.5 ? 6 : 0) -
			   (s_ < -0.5 ? 2 : 0), anchor, SVG_FONT_LABEL);
		svg_escape(o, c->cat[k]);
		svg_puts(o, "</text>\n");
	}
	/* ring values between the first two spokes (clear of the top spoke's name),
	   on a white halo so that outlines do not run through them */
	for (size_t t = 0; t < g->r.nticks; t++) {
		double d = dist(g, g->r.tick[t]);

		if (d <= 0)
			continue;
		/* half a spoke clockwise from the top, where no outline has a vertex */
		d *= cos(M_PI / (double)g->n);     /* on the ring's edge, not past it */
		x = g->cx + d * cos(-M_PI / 2 + M_PI / (double)g->n);
		y = g->cy + d * sin(-M_PI / 2 + M_PI / (double)g->n);
		svg_map_label(&g->r, t, b, sizeof(b));
		svg_printf(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\" "
			   "fill=\"#666\" stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">",
			   x, y + 3);
		svg_escape(o, b);
		svg_puts(o, "</text>\n");
	}
	if (c->y.label) {
		svg_printf(o, "<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" "
			   "fill=\"#333\">", 16.0, g->cy - RADIUS, SVG_FONT_LABEL);
		svg_escape(o, c->y.label);
		if (g->r.scale != SVG_LINEAR)
			svg_puts(o, " (log scale)");
		svg_puts(o, "</text>\n");
	}
	svg_puts(o, "</g>\n");
}

static void series(struct svg_out *o, const struct radar *g, const struct svg_chart *c,
		   size_t i, const char *col)
{
	const struct svg_series *s = &c->series[i];
	const char *dash = svg_series_dash(c, i), *tag;
	double x, y;

	svg_puts(o, "<g class=\"series\" data-series=\"");
	svg_escape(o, s->name);
	svg_printf(o, "\" data-color=\"%s\">\n<polygon fill=\"%s\" fill-opacity=\"0.035\" "
		   "stroke=\"%s\" stroke-width=\"2\" stroke-linejoin=\"round\"", col, col, col);
	if (dash)
		svg_printf(o, " stroke-dasharray=\"%s\"", dash);
	svg_puts(o, " points=\"");
	for (size_t k = 0; k < g->n; k++) {
		if (!isfinite(s->y[k]))
			continue;
		spoke(g, k, dist(g, s->y[k]), &x, &y);
		svg_printf(o, "%s%.1f,%.1f", k ? " " : "", x, y);
	}
	svg_puts(o, "\"/>\n");
	for (size_t k = 0; k < g->n; k++) {
		if (!isfinite(s->y[k]))
			continue;
		spoke(g, k, dist(g, s->y[k]), &x, &y);
		tag = svg_marker_open(o, "pt", svg_series_shape(c, i), x, y, 3.4, col);
		svg_puts(o, " stroke=\"#fff\" stroke-width=\"0.8\" data-x=\"");
		svg_point_end(o, c, s, k, tag);
	}
	svg_puts(o, "</g>\n");
}

int svg_radar_write(struct svg_out *o, const struct svg_chart *c, char *err, size_t errlen)
{
	struct radar g;
	struct svg_legend leg;
	double w = c->width ? c->width : SVG_WIDTH, lo = INFINITY, hi = -INFINITY, h;
	char col[8];

	memset(&g, 0, sizeof(g));
	g.n = c->ncat;
	for (size_t i = 0; i < c->nseries; i++) {
		for (size_t k = 0; k < c->series[i].n; k++) {
			double v = c->series[i].y[k];

			if (!isfinite(v) || (c->y.scale != SVG_LINEAR && v <= 0))
				continue;
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	g.r.p0 = 0;
	g.r.p1 = RADIUS;
	svg_map_fit(&g.r, &c->y, lo, hi, true, 5);
	g.cx = w / 2;
	g.cy = (c->subtitle ? 60 : 44) + 24 + RADIUS;
	svg_legend_layout(&leg, c, 40, g.cy + RADIUS + 34, w - 80);
	h = leg.y + leg.height + 12;
	svg_open(o, c, w, h);
	grid(o, &g, c);
	for (size_t i = 0; i < c->nseries; i++) {
		svg_series_color(c, i, col);
		series(o, &g, c, i, col);
	}
	svg_legend_write(o, &leg, c);
	svg_puts(o, "</svg>\n");
	if (o->err)
		return uraid_errf(err, errlen, o->err, "chart \"%s\": %s",
				  c->title ? c->title : "", strerror(-o->err));
	return 0;
}
