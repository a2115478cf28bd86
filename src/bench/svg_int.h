/* SPDX-License-Identifier: MIT */
/* Shared by the chart writers (svg_axis.c, svg_chart.c, svg_radar.c); not an API. */
#ifndef URAID_BENCH_SVG_INT_H
#define URAID_BENCH_SVG_INT_H

#include "bench/svg.h"

#define SVG_MAX_TICKS 40

#define SVG_FONT_TICK   11.0        /* px: tick labels */
#define SVG_FONT_LABEL  12.0        /* axis titles, legend */
#define SVG_FONT_TITLE  15.0

/* An axis fitted to data and mapped to pixels. */
struct svg_map {
	enum svg_scale scale;
	enum svg_unit unit;
	double lo, hi;              /* domain in data units (lo > 0 on log scales) */
	double p0, p1;              /* pixels of lo and hi */
	size_t nticks;
	double tick[SVG_MAX_TICKS];
	unsigned label_every;       /* label every n-th tick (crowded log2 axes) */
};

/*
 * Fit m to the data range [dmin, dmax] (values <= 0 already left out on
 * log scales) or to the axis' fixed range; zero_base starts a linear axis at
 * 0 when the data are positive; target is about how many ticks to aim for.
 */
void svg_map_fit(struct svg_map *m, const struct svg_axis *a, double dmin, double dmax,
		 bool zero_base, unsigned target);
/* Pixel of v; NaN when v cannot be shown (not finite, <= 0 on a log scale). */
double svg_map_px(const struct svg_map *m, double v);
/* Tick label i of the axis (the prefix shared across a linear axis). */
void svg_map_label(const struct svg_map *m, size_t i, char *buf, size_t len);
/* Label every n-th tick so that labels of about width w px do not touch. */
void svg_map_thin(struct svg_map *m, double w);

/* Width in px of s at font size px (DejaVu Sans, roughly: 0.6 em per character). */
double svg_text_width(const char *s, double px);
/* "#rrggbb" of series i of n in the palette; buf of at least 8 bytes. */
void svg_color(enum svg_palette p, int i, size_t n, char *buf);

/* "#rrggbb" of series i of the chart (its color index, palette and flags). */
void svg_series_color(const struct svg_chart *c, size_t i, char *buf);

/* svg_marker.c: what tells series apart besides their colour. */
#define SVG_NSHAPES 7               /* circle, square, triangle, diamond, ... */
/* Marker shape of series i: its own on a ramp palette (or past the categorical colours). */
unsigned svg_series_shape(const struct svg_chart *c, size_t i);
/* stroke-dasharray of series i ("6 4" for SVG_DASHED, dotted for every other series
   on a ramp), or NULL for a solid line. */
const char *svg_series_dash(const struct svg_chart *c, size_t i);
/* "<circle" or "<path" of a marker of radius r at (x, y) in col, with class cls, left
   open for the caller's attributes; returns the tag name to close it with. */
const char *svg_marker_open(struct svg_out *o, const char *cls, unsigned shape, double x,
			    double y, double r, const char *col);
/* Room above a line chart's plot for its marks' labels (0 without marks). */
double svg_marks_room(const struct svg_chart *c);
/* Cell spans (shaded every other one, the label as a tooltip), the boundaries and their
   labels above the plot (y0, its top; y1, its bottom), thinned so that none overlap. */
void svg_marks_write(struct svg_out *o, const struct svg_chart *c, const struct svg_map *xm,
		     double y0, double y1);

/* Legend below the plot: rows of swatch + name within width w. */
struct svg_legend {
	double x, y, w;             /* top-left and width */
	unsigned rows;
	double height;
};
void svg_legend_layout(struct svg_legend *l, const struct svg_chart *c, double x, double y,
		       double w);
void svg_legend_write(struct svg_out *o, const struct svg_legend *l, const struct svg_chart *c);

/* <svg ...> with the background and the title; the closing tag is the caller's. */
void svg_open(struct svg_out *o, const struct svg_chart *c, double w, double h);

int svg_radar_write(struct svg_out *o, const struct svg_chart *c, char *err, size_t errlen);
/* The end of a category point's element: data-x (the category), data-y,
 * its tooltip ("series, category: value") and the closing tag. */
void svg_point_end(struct svg_out *o, const struct svg_chart *c, const struct svg_series *s,
		   size_t k, const char *tag);

#endif
