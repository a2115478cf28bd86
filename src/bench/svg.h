/* SPDX-License-Identifier: MIT */
/*
 * Chart primitives for the bench report: line, grouped bar and radar charts
 * written as inline SVG (no xmlns, no script, no external reference: the
 * HTML parser puts <svg> in the SVG namespace by itself).
 *
 * Every series is one <g class="series" data-series="NAME"> and every point
 * in it an element with data-x and data-y (the values as given, not pixels),
 * so a test can read back what is plotted. All text is XML-escaped.
 *
 * Output goes to a struct svg_out: a FILE* or a growable buffer with a size
 * limit. Write errors are sticky (the first one is kept in o->err), so a
 * writer can emit many pieces and check once.
 */
#ifndef URAID_BENCH_SVG_H
#define URAID_BENCH_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SVG_WIDTH          580          /* px: two charts side by side at 1280 px */
#define SVG_OUT_LIMIT      (64u << 20)  /* default bound of a buffer output */
#define SVG_MAX_SERIES     64
#define SVG_MAX_POINTS     10000        /* per series: downsample longer ones */
#define SVG_MAX_CATEGORIES 64           /* bar groups, radar spokes */

struct svg_out {
	FILE *f;                    /* non-NULL: write here */
	char *buf;                  /* else: grow this (NUL-terminated) */
	size_t len, cap, limit;
	int err;                    /* first error (negative errno), sticky */
};

void svg_out_file(struct svg_out *o, FILE *f);
/* A buffer output of at most limit bytes (0: SVG_OUT_LIMIT). */
void svg_out_buffer(struct svg_out *o, size_t limit);
/* Free a buffer output's memory. */
void svg_out_release(struct svg_out *o);
void svg_printf(struct svg_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void svg_puts(struct svg_out *o, const char *s);
/* s with & < > " ' escaped: safe in XML/HTML text and in quoted attributes. */
void svg_escape(struct svg_out *o, const char *s);

enum svg_kind {
	SVG_LINE,                   /* x/y points per series */
	SVG_BAR,                    /* categories along x, one bar per series in each (a linear
	                               y axis: a bar's length is its value) */
	SVG_RADAR,                  /* one spoke per category, a closed polygon per series */
	SVG_POINTS,                 /* categories along x, a marker per series in each, the
	                               markers of a series joined by a thin line: values that
	                               span decades (percentiles), where a bar's length on a
	                               log axis would mean nothing */
};

enum svg_scale {
	SVG_LINEAR,
	SVG_LOG2,                   /* ticks at powers of two: queue depth, block size */
	SVG_LOG10,                  /* ticks at decades: latency */
};

/* How tick labels and values are written. */
enum svg_unit {
	SVG_UNIT_PLAIN,             /* 1, 2, 128, 2400 */
	SVG_UNIT_SI,                /* 950, 1.2 k, 250 k, 1.5 M (IOPS) */
	SVG_UNIT_BYTES,             /* 512 B, 4 KiB, 1 MiB */
	SVG_UNIT_NS,                /* a duration in ns: 800 ns, 12 µs, 1.5 ms, 2 s */
	SVG_UNIT_PCT,               /* 50 %, 99.999 % */
	SVG_UNIT_SECONDS,           /* 0 s, 30 s */
};

struct svg_axis {
	const char *label;          /* "queue depth", "IOPS"; NULL: none */
	enum svg_scale scale;
	enum svg_unit unit;
	double min, max;            /* fixed range when min < max; else from the data */
	bool integer;               /* SVG_LINEAR: counts (drives, rounds), ticks at whole numbers */
};

#define SVG_DASHED 0x1u             /* a secondary measure (p99 beside the mean) */
#define SVG_NO_MARKERS 0x2u         /* dense series: points kept, drawn invisible */
#define SVG_REFERENCE  0x4u         /* a baseline (JBOD): dark grey whatever the palette */

struct svg_series {
	const char *name;
	size_t n;                   /* points; SVG_BAR/SVG_RADAR: must equal ncat */
	const double *x;            /* SVG_LINE only; */
	const double *y;            /* NaN: no value (a gap in a line) */
	int color;                  /* palette index; < 0: the series' position */
	unsigned flags;             /* SVG_DASHED, SVG_NO_MARKERS */
};

/*
 * Palettes. A ramp (sequential, read/write) keeps the series' order in the
 * colour, but neighbours differ little in hue, so on a ramp every series
 * also gets its own marker shape and every other one a dotted line; the
 * categorical palette does the same past its 10 colours.
 */
enum svg_palette {
	SVG_PAL_CATEGORY,           /* distinct hues: configurations */
	SVG_PAL_SEQUENTIAL,         /* dark to light along the series (viridis): block sizes */
	SVG_PAL_READWRITE,          /* dark blue (all reads) to orange (all writes), plasma: mixes */
};

/*
 * A vertical line across a line chart at x, named above the plot: where a cell begins
 * in a time series of several cells. The span up to the next mark is the cell's; a
 * mark without a label (NULL or "") only ends the span before it. When marks have
 * groups (the 56 cells of the matrix by block size), a group's name is written once
 * above its first cell, and the cells' labels are only their spans' tooltips.
 */
struct svg_mark {
	double x;
	const char *label;
	const char *group;          /* non-NULL: a group of cells begins here */
};
#define SVG_MAX_MARKS 1000

struct svg_chart {
	enum svg_kind kind;
	const char *title;
	const char *subtitle;       /* NULL: none */
	struct svg_axis x;          /* SVG_LINE; SVG_BAR uses only its label */
	struct svg_axis y;          /* SVG_RADAR: the radial axis */
	size_t ncat;
	const char *const *cat;     /* SVG_BAR groups, SVG_RADAR spokes */
	size_t nseries;
	const struct svg_series *series;
	enum svg_palette palette;
	unsigned width;             /* 0: SVG_WIDTH; the height follows from the legend */
	size_t nmarks;              /* SVG_LINE: marks in increasing x (SVG_MAX_MARKS) */
	const struct svg_mark *marks;
};

/* 0 when c can be drawn, else -EINVAL with the reason (svg_chart_write checks too). */
int svg_chart_check(const struct svg_chart *c, char *err, size_t errlen);
/* Write one <svg> element. 0, or -EINVAL with the reason in err, or o's error. */
int svg_chart_write(struct svg_out *o, const struct svg_chart *c, char *err, size_t errlen);

/*
 * v in the unit, with at most 3 significant digits. For SVG_UNIT_NS and
 * SVG_UNIT_BYTES the prefix is chosen from ref (an axis' largest tick, so all
 * its labels share one prefix), or from v when ref is 0.
 */
void svg_format(char *buf, size_t len, enum svg_unit u, double v, double ref);

#endif
