// SPDX-License-Identifier: MIT
/*
 * What tells series apart besides colour: marker shapes and dash patterns
 * (neighbours on a colour ramp, 100/0 and 95/5 or 512 B and 4 KiB, differ
 * too little in hue to be told apart by colour alone, nor by anyone who
 * does not see colour well); and the marks of a line chart: where each cell
 * of a time series begins, with its name.
 */
#include <math.h>
#include <string.h>

#include "bench/svg_int.h"

#define MARK_FONT     10.0
#define MARK_ROOM_MAX 150.0         /* px above the plot for mark labels, at most */

static bool ramp(const struct svg_chart *c)
{
	return c->palette == SVG_PAL_SEQUENTIAL || c->palette == SVG_PAL_READWRITE;
}

static size_t color_index(const struct svg_chart *c, size_t i)
{
	return c->series[i].color >= 0 ? (size_t)c->series[i].color : i;
}

unsigned svg_series_shape(const struct svg_chart *c, size_t i)
{
	size_t k = color_index(c, i);

	if (c->series[i].flags & SVG_REFERENCE)
		return 1;               /* the baseline: squares, whatever the others */
	if (ramp(c))
		return (unsigned)(k % SVG_NSHAPES);
	/* ten distinct colours, then the colours come round again with other shapes */
	return (unsigned)((k / 10) % SVG_NSHAPES);
}

const char *svg_series_dash(const struct svg_chart *c, size_t i)
{
	if (c->series[i].flags & SVG_DASHED)
		return "6 4";
	if (ramp(c) && color_index(c, i) % 2)
		return "2 2.5";
	return NULL;
}

/* Regular polygon of k corners, radius r, the first corner at angle a0 (radians). */
static void polygon(struct svg_out *o, unsigned k, double x, double y, double r, double a0)
{
	svg_puts(o, " d=\"");
	for (unsigned i = 0; i < k; i++) {
		double a = a0 + 2 * M_PI * i / k;

		svg_printf(o, "%s%.1f %.1f", i ? " L" : "M", x + r * cos(a), y + r * sin(a));
	}
	svg_puts(o, " Z\"");
}

const char *svg_marker_open(struct svg_out *o, const char *cls, unsigned shape, double x,
			    double y, double r, const char *col)
{
	static const char *const names[SVG_NSHAPES] = { "circle", "square", "triangle", "diamond",
							"triangle-down", "pentagon", "cross" };

	if (shape % SVG_NSHAPES == 0) {
		svg_printf(o, "<circle class=\"%s\" data-shape=\"circle\" cx=\"%.1f\" cy=\"%.1f\" "
			   "r=\"%.1f\" fill=\"%s\"", cls, x, y, r, col);
		return "circle";
	}
	svg_printf(o, "<path class=\"%s\" data-shape=\"%s\" fill=\"%s\"", cls,
		   names[shape % SVG_NSHAPES], col);
	switch (shape % SVG_NSHAPES) {
	case 1:                         /* square, the same area as the circle roughly */
		polygon(o, 4, x, y, r * 1.25, M_PI / 4);
		break;
	case 2:                         /* triangle, point up */
		polygon(o, 3, x, y + r * 0.2, r * 1.45, -M_PI / 2);
		break;
	case 3:                         /* diamond */
		polygon(o, 4, x, y, r * 1.35, 0);
		break;
	case 4:                         /* triangle, point down */
		polygon(o, 3, x, y - r * 0.2, r * 1.45, M_PI / 2);
		break;
	case 5:                         /* pentagon */
		polygon(o, 5, x, y, r * 1.3, -M_PI / 2);
		break;
	default: {                      /* a fat cross */
		double a = r * 1.3, b = r * 0.45;

		svg_printf(o, " d=\"M%.1f %.1fH%.1fV%.1fH%.1fV%.1fH%.1fV%.1fH%.1fV%.1fH%.1fV%.1f"
			   "H%.1fZ\"", x - a, y - b, x - b, y - a, x + b, y - b, x + a, y + b, x + b,
			   y + a, x - b, y + b, x - a);
		break;
	}
	}
	return "path";
}

static double label_width(const char *s)
{
	return svg_text_width(s ? s : "", MARK_FONT);
}

static bool grouped(const struct svg_chart *c)
{
	for (size_t i = 0; i < c->nmarks; i++)
		if (c->marks[i].group)
			return true;
	return false;
}

double svg_marks_room(const struct svg_chart *c)
{
	double w = 0;

	if (c->kind != SVG_LINE || !c->nmarks || !c->marks)
		return 0;
	if (grouped(c))
		return MARK_FONT + 12;  /* one line of group names */
	for (size_t i = 0; i < c->nmarks; i++)
		w = fmax(w, label_width(c->marks[i].label));
	return fmin(w, MARK_ROOM_MAX) + 10;
}

/* s shortened with "…" to fit w px at the mark font. */
static void fit_label(char *buf, size_t len, const char *s, double w)
{
	size_t max = (size_t)(w / (MARK_FONT * 0.62)), n = 0, i = 0;

	for (; s[i] && i + 4 < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && ++n > max)
			break;
		buf[i] = s[i];
	}
	buf[i] = '\0';
	if (s[i] && i + 4 < len) {
		while (i > 0 && ((unsigned char)buf[i - 1] & 0xc0) == 0x80)
			i--;            /* not within a code point */
		if (i > 0)
			i--;
		strcpy(buf + i, "…");
	}
}

void svg_marks_write(struct svg_out *o, const struct svg_chart *c, const struct svg_map *xm,
		     double y0, double y1)
{
	double room = svg_marks_room(c), last = -INFINITY;
	bool groups = room && grouped(c);
	unsigned ngroup = 0;
	char lab[96];

	if (!room)
		return;
	svg_puts(o, "<g class=\"marks\">\n");
	for (size_t i = 0; i < c->nmarks; i++) {
		const struct svg_mark *m = &c->marks[i];
		double px = svg_map_px(xm, m->x), end;

		if (isnan(px))
			continue;
		if (!m->label || !*m->label) {  /* the end of the last span */
			svg_printf(o, "<line class=\"mark-end\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				   "y2=\"%.1f\" stroke=\"#7a8594\" stroke-dasharray=\"3 3\"/>\n", px,
				   y0, px, y1);
			continue;
		}
		end = i + 1 < c->nmarks ? svg_map_px(xm, c->marks[i + 1].x) : xm->p1;
		if (isnan(end) || end < px)
			end = xm->p1;
		ngroup += m->group != NULL;
		/* the cell's span: every other one (or every other group's) shaded, its name
		   on hover anywhere in it */
		svg_printf(o, "<rect class=\"span\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			   "height=\"%.1f\" fill=\"#1f3f66\" fill-opacity=\"%s\"><title>", px, y0,
			   end - px, y1 - y0, (groups ? ngroup + 1 : i) % 2 ? "0.055" : "0");
		svg_escape(o, m->label);
		svg_puts(o, "</title></rect>\n");
		/* within a group, cells are parted by fainter lines */
		svg_printf(o, "<line class=\"mark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			   "stroke=\"%s\" stroke-dasharray=\"3 3\" data-at=\"%.9g\" data-label=\"",
			   px, groups && !m->group ? y0 : y0 - room + 2, px, y1,
			   groups && !m->group ? "#c3cad4" : "#7a8594", m->x);
		svg_escape(o, m->label);
		svg_puts(o, "\"/>\n");
		if (groups) {
			double gend = xm->p1;

			if (!m->group)
				continue;
			/* the group's name, left-aligned over its span, cut to fit it */
			for (size_t k = i + 1; k < c->nmarks; k++)
				if (c->marks[k].group || !c->marks[k].label || !*c->marks[k].label) {
					double e = svg_map_px(xm, c->marks[k].x);

					gend = isnan(e) ? gend : e;
					break;
				}
			fit_label(lab, sizeof(lab), m->group, gend - px - 6);
			svg_printf(o, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\" "
				   "font-size=\"%.0f\" fill=\"#444\">", px + 3, y0 - 6, MARK_FONT);
			svg_escape(o, lab);
			svg_puts(o, "</text>\n");
			continue;
		}
		/* labels read upwards beside their line; one that would touch the last is left
		   out (the span's tooltip still names the cell) */
		if (px - last < MARK_FONT + 2)
			continue;
		last = px;
		fit_label(lab, sizeof(lab), m->label, room - 10);
		svg_printf(o, "<text class=\"mark-label\" transform=\"translate(%.1f %.1f) "
			   "rotate(-90)\" font-size=\"%.0f\" fill=\"#444\">", px + MARK_FONT + 1,
			   y0 - 4, MARK_FONT);
		svg_escape(o, lab);
		svg_puts(o, "</text>\n");
	}
	svg_puts(o, "</g>\n");
}
