// SPDX-License-Identifier: MIT
/*
 * Output of the chart and report writers: a FILE* or a bounded growable
 * buffer, with a sticky error so that writers check once at the end; XML
 * escaping; numbers with units.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench/svg.h"

void svg_out_file(struct svg_out *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
}

void svg_out_buffer(struct svg_out *o, size_t limit)
{
	memset(o, 0, sizeof(*o));
	o->limit = limit ? limit : SVG_OUT_LIMIT;
}

void svg_out_release(struct svg_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

/* Room for n more bytes plus the NUL in the buffer. */
static int reserve(struct svg_out *o, size_t n)
{
	size_t want = o->len + n + 1, cap;
	char *p;

	if (want <= o->cap)
		return 0;
	if (want > o->limit)
		return -EFBIG;
	cap = o->cap ? o->cap : 4096;
	while (cap < want)
		cap *= 2;
	if (cap > o->limit)
		cap = o->limit;
	p = realloc(o->buf, cap);
	if (!p)
		return -ENOMEM;
	o->buf = p;
	o->cap = cap;
	return 0;
}

static void put(struct svg_out *o, const char *s, size_t n)
{
	int rc;

	if (o->err || !n)
		return;
	if (o->f) {
		if (fwrite(s, 1, n, o->f) != n)
			o->err = errno ? -errno : -EIO;
		return;
	}
	rc = reserve(o, n);
	if (rc) {
		o->err = rc;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

void svg_puts(struct svg_out *o, const char *s)
{
	put(o, s, strlen(s));
}

void svg_printf(struct svg_out *o, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n;

	if (o->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->err = -EINVAL;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		put(o, small, (size_t)n);
		return;
	}
	big = malloc((size_t)n + 1);
	if (!big) {
		o->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	put(o, big, (size_t)n);
	free(big);
}

void svg_escape(struct svg_out *o, const char *s)
{
	const char *run = s;

	if (!s)
		return;
	for (; *s; s++) {
		const char *rep = NULL;
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			/* control characters are not allowed in XML 1.0 at all */
			if (c < 0x20 && c != '\t' && c != '\n')
				rep = " ";
		}
		if (rep) {
			put(o, run, (size_t)(s - run));
			svg_puts(o, rep);
			run = s + 1;
		}
	}
	put(o, run, (size_t)(s - run));
}

/* v with 3 significant digits (more for large numbers), no exponent, no trailing zeros. */
static void sig3(char *buf, size_t len, double v)
{
	double a = fabs(v);
	int dec = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
	char *dot, *end;

	if (a < 0.0005) {
		snprintf(buf, len, "0");
		return;
	}
	snprintf(buf, len, "%.*f", dec, v);
	dot = strchr(buf, '.');
	if (!dot)
		return;
	end = buf + strlen(buf) - 1;
	while (end > dot && *end == '0')
		*end-- = '\0';
	if (end == dot)
		*end = '\0';
}

static void scaled(char *buf, size_t len, double v, double div, const char *suffix)
{
	char num[48];

	sig3(num, sizeof(num), v / div);
	snprintf(buf, len, "%s%s", num, suffix);
}

void svg_format(char *buf, size_t len, enum svg_unit u, double v, double ref)
{
	static const char *const bytes[] = { " B", " KiB", " MiB", " GiB", " TiB", " PiB" };
	static const char *const ns[] = { " ns", " µs", " ms", " s" };
	double r = fabs(ref ? ref : v), div = 1;
	unsigned i = 0;

	if (!buf || !len)
		return;
	if (!isfinite(v)) {
		snprintf(buf, len, "–");
		return;
	}
	switch (u) {
	case SVG_UNIT_PLAIN:
		if (fabs(v) >= 1000)
			snprintf(buf, len, "%.0f", v);
		else
			sig3(buf, len, v);
		return;
	case SVG_UNIT_SI:
		if (r >= 1e9)
			scaled(buf, len, v, 1e9, " G");
		else if (r >= 1e6)
			scaled(buf, len, v, 1e6, " M");
		else if (r >= 1e3)
			scaled(buf, len, v, 1e3, " k");
		else
			sig3(buf, len, v);
		return;
	case SVG_UNIT_BYTES:
		while (r >= 1024 && i + 1 < sizeof(bytes) / sizeof(bytes[0])) {
			r /= 1024;
			div *= 1024;
			i++;
		}
		scaled(buf, len, v, div, bytes[i]);
		return;
	case SVG_UNIT_NS:
		while (r >= 1000 && i + 1 < sizeof(ns) / sizeof(ns[0])) {
			r /= 1000;
			div *= 1000;
			i++;
		}
		scaled(buf, len, v, div, ns[i]);
		return;
	case SVG_UNIT_PCT:
		/* percentiles need their nines: 99.999, not 100 */
		snprintf(buf, len, "%.6g %%", v);
		return;
	case SVG_UNIT_SECONDS:
		scaled(buf, len, v, 1, " s");
		return;
	}
	sig3(buf, len, v);
}
