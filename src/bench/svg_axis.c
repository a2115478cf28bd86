// SPDX-License-Identifier: MIT
/*
 * Axes (fitting a range to data, ticks on linear, log2 and log10 scales,
 * pixel mapping), text width estimates and palettes for the charts.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/svg_int.h"

/* 1, 2, 2.5, 5 or 10 times a power of ten, at least raw. */
static double nice_step(double raw)
{
	double p = pow(10, floor(log10(raw))), f = raw / p;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
}

static void add_tick(struct svg_map *m, double v)
{
	if (m->nticks < SVG_MAX_TICKS)
		m->tick[m->nticks++] = v;
}

static void fit_linear(struct svg_map *m, const struct svg_axis *a, double dmin, double dmax,
		       bool zero_base, unsigned target)
{
	bool fixed = a->min < a->max;
	double lo = fixed ? a->min : dmin, hi = fixed ? a->max : dmax, step, v;

	if (!fixed) {
		if (!(lo <= hi)) {              /* no data */
			lo = 0;
			hi = 1;
		}
		if (zero_base && lo > 0)
			lo = 0;
		if (zero_base && hi < 0)
			hi = 0;
		if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
			lo -= fmax(0.5, fabs(lo) * 0.1);
			hi += fmax(0.5, fabs(hi) * 0.1);
			if (zero_base && dmin >= 0 && lo < 0)
				lo = 0;
		}
	}
	step = nice_step((hi - lo) / (target ? target : 5));
	/* SVG_MAX_TICKS bounds the loop below whatever the range */
	while ((hi - lo) / step > SVG_MAX_TICKS - 1)
		step = nice_step(step * 1.01);
	/* no tick at 2.5 drives: a count's ticks are whole numbers (2.5 becomes 3) */
	if (a->integer)
		step = ceil(step - 1e-9) < 1 ? 1 : ceil(step - 1e-9);
	if (!fixed) {
		lo = floor(lo / step + 1e-9) * step;
		hi = ceil(hi / step - 1e-9) * step;
	}
	m->lo = lo;
	m->hi = hi;
	for (v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
		add_tick(m, fabs(v) < step * 1e-9 ? 0 : v);
}

/* Powers of two: queue depths, block sizes. */
static void fit_log2(struct svg_map *m, const struct svg_axis *a, double dmin, double dmax)
{
	bool fixed = a->min > 0 && a->min < a->max;
	double lo = fixed ? a->min : dmin, hi = fixed ? a->max : dmax, e0, e1, step = 1;

	if (!(lo > 0 && lo <= hi)) {
		lo = 1;
		hi = 2;
	}
	e0 = floor(log2(lo) + 1e-9);
	e1 = ceil(log2(hi) - 1e-9);
	if (e1 <= e0)
		e1 = e0 + 1;
	m->lo = fixed ? lo : exp2(e0);
	m->hi = fixed ? hi : exp2(e1);
	while ((e1 - e0) / step > SVG_MAX_TICKS - 1)
		step++;
	for (double e = e0; e <= e1 + 1e-9; e += step) {
		double t = exp2(e);

		if (t >= m->lo * (1 - 1e-9) && t <= m->hi * (1 + 1e-9))
			add_tick(m, t);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Decades: latency, IOPS over block sizes. The ends are 1, 2 or 5 times a
 * power of ten around the data rather than whole decades, which would leave
 * up to 90 % of a decade empty at each end.
 */
static void fit_log10(struct svg_map *m, const struct svg_axis *a, double dmin, double dmax)
{
	static const double mult[] = { 1, 2, 5, 10 };
	bool fixed = a->min > 0 && a->min < a->max;
	double lo = fixed ? a->min : dmin, hi = fixed ? a->max : dmax, span, e0, e1;

	if (!(lo > 0 && lo <= hi)) {
		lo = 1;
		hi = 10;
	}
	if (!fixed) {
		double p = pow(10, floor(log10(lo) + 1e-9)), q = pow(10, floor(log10(hi) + 1e-9));
		double l = p, h = q * 10;

		for (unsigned i = 0; i < 3; i++)
			if (mult[i] * p <= lo * (1 + 1e-9))
				l = mult[i] * p;
		for (unsigned i = 4; i-- > 0;)
			if (mult[i] * q >= hi * (1 - 1e-9))
				h = mult[i] * q;
		/* less than a decade shows too few ticks: take whole decades then */
		if (h / l < 10) {
			l = p;
			h = q * 10;
		}
		lo = l;
		hi = h;
	}
	m->lo = lo;
	m->hi = hi;
	span = log10(hi / lo);
	e0 = floor(log10(lo) + 1e-9);
	e1 = ceil(log10(hi) - 1e-9);
	for (double e = e0; e <= e1 + 1e-9; e++) {
		double t = pow(10, e);
		/* within one or two decades, 2 and 5 (and 3 within one) help reading */
		static const double sub[] = { 1, 2, 3, 5 };

		for (unsigned i = 0; i < 4; i++) {
			if ((i == 1 || i == 3) && span > 2.01)
				continue;
			if (i == 2 && span > 1.01)
				continue;
			if (t * sub[i] >= lo * (1 - 1e-9) && t * sub[i] <= hi * (1 + 1e-9))
				add_tick(m, t * sub[i]);
		}
	}
	/* the ends are labelled too, so the range is read off without guessing */
	qsort(m->tick, m->nticks, sizeof(m->tick[0]), cmp_double);
	if (!m->nticks || m->tick[m->nticks - 1] < hi * (1 - 1e-9))
		add_tick(m, hi);
	if (m->tick[0] > lo * (1 + 1e-9))
		add_tick(m, lo);
	qsort(m->tick, m->nticks, sizeof(m->tick[0]), cmp_double);
}

void svg_map_fit(struct svg_map *m, const struct svg_axis *a, double dmin, double dmax,
		 bool zero_base, unsigned target)
{
	double p0 = m->p0, p1 = m->p1;

	memset(m, 0, sizeof(*m));
	m->p0 = p0;
	m->p1 = p1;
	m->scale = a->scale;
	m->unit = a->unit;
	m->label_every = 1;
	if (a->scale == SVG_LOG2)
		fit_log2(m, a, dmin, dmax);
	else if (a->scale == SVG_LOG10)
		fit_log10(m, a, dmin, dmax);
	else
		fit_linear(m, a, dmin, dmax, zero_base, target);
}

double svg_map_px(const struct svg_map *m, double v)
{
	double t;

	if (!isfinite(v))
		return NAN;
	if (m->scale == SVG_LINEAR) {
		t = (v - m->lo) / (m->hi - m->lo);
	} else {
		if (v <= 0)
			return NAN;
		t = (log(v) - log(m->lo)) / (log(m->hi) - log(m->lo));
	}
	return m->p0 + t * (m->p1 - m->p0);
}

void svg_map_label(const struct svg_map *m, size_t i, char *buf, size_t len)
{
	/* a linear axis shares its largest tick's prefix (0.5 ms, 1 ms, 1.5 ms);
	   log ticks each take their own (100 µs, 1 ms); IOPS read best as 200 k ... 1.2 M */
	double ref = m->scale == SVG_LINEAR && m->unit != SVG_UNIT_SI
		? fmax(fabs(m->lo), fabs(m->hi)) : 0;

	svg_format(buf, len, m->unit, m->tick[i], ref);
}

void svg_map_thin(struct svg_map *m, double w)
{
	double gap = INFINITY;

	for (size_t i = 1; i < m->nticks; i++)
		gap = fmin(gap, fabs(svg_map_px(m, m->tick[i]) - svg_map_px(m, m->tick[i - 1])));
	m->label_every = 1;
	if (!isfinite(gap) || gap <= 0)
		return;
	while (m->label_every < m->nticks && gap * m->label_every < w + 8)
		m->label_every++;
}

double svg_text_width(const char *s, double px)
{
	size_t n = 0;

	for (; s && *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)     /* count code points, not bytes */
			n++;
	return (double)n * px * 0.62;
}

struct rgb { uint8_t r, g, b; };

static const struct rgb category[] = {
	{ 0x4e, 0x79, 0xa7 }, { 0xf2, 0x8e, 0x2b }, { 0xe1, 0x57, 0x59 }, { 0x49, 0x98, 0x94 },
	{ 0x59, 0xa1, 0x4f }, { 0xc9, 0xa2, 0x27 }, { 0xb0, 0x7a, 0xa1 }, { 0xd3, 0x72, 0x95 },
	{ 0x9c, 0x75, 0x5f }, { 0x79, 0x70, 0x6e },
};
/* viridis from 0 to about 0.9: the lightest yellow would vanish on white */
static const struct rgb sequential[] = {
	{ 0x44, 0x01, 0x54 }, { 0x47, 0x2c, 0x7a }, { 0x3b, 0x52, 0x8b }, { 0x2c, 0x72, 0x8e },
	{ 0x21, 0x90, 0x8d }, { 0x27, 0xad, 0x81 }, { 0x5c, 0xc8, 0x63 }, { 0xa0, 0xda, 0x39 },
};
/*
 * plasma from 0 to about 0.85: all reads dark blue, all writes orange, through
 * purple and red. Its lightness rises steadily, so neighbouring mixes differ
 * in lightness as well as hue (the series' markers and dashes differ too);
 * the lightest yellow is left out, it would vanish on white.
 */
static const struct rgb readwrite[] = {
	{ 0x0d, 0x08, 0x87 }, { 0x4c, 0x02, 0xa1 }, { 0x7e, 0x03, 0xa8 }, { 0xa8, 0x22, 0x96 },
	{ 0xcb, 0x47, 0x78 }, { 0xe5, 0x6b, 0x5d }, { 0xf8, 0x95, 0x40 }, { 0xfb, 0xa2, 0x38 },
};

static struct rgb ramp(const struct rgb *stops, size_t nstops, double t)
{
	double pos = t * (double)(nstops - 1), f;
	size_t k = (size_t)pos;
	struct rgb a, b, c;

	if (k >= nstops - 1)
		return stops[nstops - 1];
	f = pos - (double)k;
	a = stops[k];
	b = stops[k + 1];
	c.r = (uint8_t)lround(a.r + (b.r - a.r) * f);
	c.g = (uint8_t)lround(a.g + (b.g - a.g) * f);
	c.b = (uint8_t)lround(a.b + (b.b - a.b) * f);
	return c;
}

void svg_color(enum svg_palette p, int i, size_t n, char *buf)
{
	double t = n > 1 ? (double)i / (double)(n - 1) : 0;
	struct rgb c;

	if (i < 0)
		i = 0;
	if (p == SVG_PAL_SEQUENTIAL)
		c = ramp(sequential, sizeof(sequential) / sizeof(sequential[0]), t);
	else if (p == SVG_PAL_READWRITE)
		c = ramp(readwrite, sizeof(readwrite) / sizeof(readwrite[0]), t);
	else
		c = category[(size_t)i % (sizeof(category) / sizeof(category[0]))];
	snprintf(buf, 8, "#%02x%02x%02x", c.r, c.g, c.b);
}
