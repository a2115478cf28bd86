// SPDX-License-Identifier: MIT
/*
 * Builders for the charts of workloads.md §7, each turning plain result
 * arrays into chart specs added to the report: IOPS and latency vs queue
 * depth, scaling with drive count (with the JBOD line), a measure vs block
 * size, the block size × mix matrix (lines and radar), latency percentiles,
 * and time series.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "common/errmsg.h"

static const double *measure_of(const struct bench_sweep *s, enum bench_measure m)
{
	switch (m) {
	case BENCH_IOPS: return s->iops;
	case BENCH_MIBS: return s->mib_s;
	case BENCH_LAT_MEAN: return s->lat_mean_ns;
	case BENCH_LAT_P99: return s->lat_p99_ns;
	}
	return NULL;
}

static const char *measure_name(enum bench_measure m)
{
	switch (m) {
	case BENCH_IOPS: return "IOPS";
	case BENCH_MIBS: return "MiB/s";
	case BENCH_LAT_MEAN: return "Mean latency";
	case BENCH_LAT_P99: return "99th percentile latency";
	}
	return "?";
}

/* The y axis of a measure: latency on a log scale, since it spans decades across a sweep. */
static struct svg_axis measure_axis(enum bench_measure m)
{
	struct svg_axis a = { .scale = SVG_LINEAR };

	switch (m) {
	case BENCH_IOPS:
		a.label = "IOPS";
		a.unit = SVG_UNIT_SI;
		break;
	case BENCH_MIBS:
		a.label = "MiB/s";
		a.unit = SVG_UNIT_PLAIN;
		break;
	case BENCH_LAT_MEAN:
	case BENCH_LAT_P99:
		a.label = m == BENCH_LAT_MEAN ? "mean latency" : "p99 latency";
		a.unit = SVG_UNIT_NS;
		a.scale = SVG_LOG10;
		break;
	}
	return a;
}

static int check_cfgs(const char *what, const struct bench_sweep *cfg, size_t ncfg, size_t max,
		      char *err, size_t errlen)
{
	if (!cfg || !ncfg || ncfg > max)
		return uraid_errf(err, errlen, -EINVAL, "report: %s: %zu configurations (1 to %zu)",
				  what, ncfg, max);
	for (size_t i = 0; i < ncfg; i++)
		if (!cfg[i].name || (cfg[i].n && !cfg[i].x) || cfg[i].n > SVG_MAX_POINTS)
			return uraid_errf(err, errlen, -EINVAL,
					  "report: %s: configuration %zu (%s) has no name or no x values",
					  what, i, cfg[i].name ? cfg[i].name : "?");
	return 0;
}

/* One chart of measure m over the sweeps, a series per configuration that has m. */
static int sweep_chart(struct bench_report *r, struct svg_chart *c, enum bench_measure m,
		       const struct bench_sweep *cfg, size_t ncfg, const struct bench_sweep *ref,
		       const char *note, char *err, size_t errlen)
{
	struct svg_series ser[SVG_MAX_SERIES];
	size_t n = 0;

	memset(ser, 0, sizeof(ser));
	for (size_t i = 0; i < ncfg + (ref != NULL); i++) {
		const struct bench_sweep *s = i < ncfg ? &cfg[i] : ref;
		const double *y = measure_of(s, m);

		if (!y || n >= SVG_MAX_SERIES)
			continue;
		ser[n] = (struct svg_series){ .name = s->name, .n = s->n, .x = s->x, .y = y,
					      .color = (int)i,
					      .flags = s->n > 60 ? SVG_NO_MARKERS : 0 };
		if (s == ref)
			ser[n].flags |= SVG_REFERENCE | SVG_DASHED;
		n++;
	}
	if (!n)
		return uraid_errf(err, errlen, -EINVAL, "report: %s: no configuration has %s",
				  c->title, measure_name(m));
	c->series = ser;
	c->nseries = n;
	return bench_report_add_chart(r, c, note, err, errlen);
}

/* IOPS vs x and latency vs x (mean solid, p99 dashed): x is the queue depth or the workers. */
static int load_charts(struct bench_report *r, const char *workload, const char *xlabel,
		       const char *iops_title, const char *lat_title,
		       const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen)
{
	struct svg_series ser[SVG_MAX_SERIES];
	struct svg_chart c = {
		.kind = SVG_LINE, .title = iops_title, .subtitle = workload,
		.x = { .label = xlabel, .scale = SVG_LOG2, .unit = SVG_UNIT_PLAIN },
		.y = measure_axis(BENCH_IOPS),
	};
	size_t n = 0;
	int rc = check_cfgs(c.title, cfg, ncfg, SVG_MAX_SERIES / 2, err, errlen);

	if (rc || (rc = sweep_chart(r, &c, BENCH_IOPS, cfg, ncfg, NULL, NULL, err, errlen)))
		return rc;
	/* mean solid and p99 dashed in the configuration's colour */
	memset(ser, 0, sizeof(ser));
	for (size_t i = 0; i < ncfg; i++) {
		const double *y[2] = { cfg[i].lat_mean_ns, cfg[i].lat_p99_ns };
		static const char *const what[2] = { "mean", "p99" };

		for (unsigned k = 0; k < 2; k++) {
			char *name;

			if (!y[k])
				continue;
			if (asprintf(&name, "%s %s", cfg[i].name, what[k]) < 0) {
				rc = uraid_errf(err, errlen, -ENOMEM, "report: latency vs queue depth: "
						"out of memory");
				goto out;
			}
			ser[n++] = (struct svg_series){ .name = name, .n = cfg[i].n, .x = cfg[i].x,
							.y = y[k], .color = (int)i,
							.flags = k ? SVG_DASHED : 0 };
		}
	}
	if (!n)
		return 0;
	c.title = lat_title;
	c.y = (struct svg_axis){ .label = "latency", .scale = SVG_LOG10, .unit = SVG_UNIT_NS };
	c.series = ser;
	c.nseries = n;
	rc = bench_report_add_chart(r, &c, "Solid: mean; dashed: 99th percentile.", err, errlen);
out:
	for (size_t i = 0; i < n; i++)
		free((char *)ser[i].name);
	return rc;
}

int bench_report_add_qd(struct bench_report *r, const char *workload,
			const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen)
{
	return load_charts(r, workload, "queue depth (outstanding I/Os per worker)",
			   "IOPS vs queue depth", "Latency vs queue depth", cfg, ncfg, err, errlen);
}

int bench_report_add_workers(struct bench_report *r, const char *workload,
			     const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen)
{
	return load_charts(r, workload, "workers (threads, each with its queue depth)",
			   "IOPS vs workers", "Latency vs workers", cfg, ncfg, err, errlen);
}

int bench_report_add_scaling(struct bench_report *r, const char *workload, enum bench_measure m,
			     const struct bench_sweep *cfg, size_t ncfg,
			     const struct bench_sweep *jbod, char *err, size_t errlen)
{
	char title[96];
	struct svg_chart c = {
		.kind = SVG_LINE, .title = title, .subtitle = workload,
		.x = { .label = "drives", .scale = SVG_LINEAR, .unit = SVG_UNIT_PLAIN,
		       .integer = true },
		.y = measure_axis(m),
	};
	int rc;

	snprintf(title, sizeof(title), "%s vs drive count", measure_name(m));
	rc = check_cfgs(title, cfg, ncfg, SVG_MAX_SERIES - 1, err, errlen);
	if (!rc && jbod)
		rc = check_cfgs(title, jbod, 1, 1, err, errlen);
	if (rc)
		return rc;
	return sweep_chart(r, &c, m, cfg, ncfg, jbod,
			   jbod ? "Dashed: JBOD, every drive on its own at once: the ceiling an array "
				  "of those drives can approach." : NULL, err, errlen);
}

int bench_report_add_bs(struct bench_report *r, const char *workload, enum bench_measure m,
			const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen)
{
	char title[96];
	struct svg_chart c = {
		.kind = SVG_LINE, .title = title, .subtitle = workload,
		.x = { .label = "block size", .scale = SVG_LOG2, .unit = SVG_UNIT_BYTES },
		.y = measure_axis(m),
	};
	int rc;

	snprintf(title, sizeof(title), "%s vs block size", measure_name(m));
	rc = check_cfgs(title, cfg, ncfg, SVG_MAX_SERIES, err, errlen);
	return rc ? rc : sweep_chart(r, &c, m, cfg, ncfg, NULL, NULL, err, errlen);
}

/* Average runs of k points into one, so that a long run stays a readable line. */
static size_t downsample(const double *x, const double *y, size_t n, size_t k, double *ox,
			 double *oy)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i += k, out++) {
		size_t e = i + k < n ? i + k : n, cnt = 0;
		double sx = 0, sy = 0;

		for (size_t j = i; j < e; j++) {
			if (!isfinite(y[j]))
				continue;
			sx += x[j];
			sy += y[j];
			cnt++;
		}
		ox[out] = cnt ? sx / (double)cnt : x[i];
		oy[out] = cnt ? sy / (double)cnt : NAN;
	}
	return out;
}

int bench_report_add_timeseries(struct bench_report *r, const char *workload,
				enum bench_measure m, const struct bench_sweep *cfg, size_t ncfg,
				char *err, size_t errlen)
{
	return bench_report_add_timeseries_cells(r, workload, m, cfg, ncfg, NULL, 0, err, errlen);
}

int bench_report_add_timeseries_cells(struct bench_report *r, const char *workload,
				      enum bench_measure m, const struct bench_sweep *cfg,
				      size_t ncfg, const struct svg_mark *marks, size_t nmarks,
				      char *err, size_t errlen)
{
	struct bench_sweep ds[SVG_MAX_SERIES];
	double *buf[SVG_MAX_SERIES][2];
	char title[96], note[128] = "";
	struct svg_chart c = {
		.kind = SVG_LINE, .title = title, .subtitle = workload,
		.x = { .label = "time", .scale = SVG_LINEAR, .unit = SVG_UNIT_SECONDS },
		.y = measure_axis(m),
		.marks = marks, .nmarks = marks ? nmarks : 0,
	};
	size_t k = 1;
	int rc;

	snprintf(title, sizeof(title), "%s over time", measure_name(m));
	rc = check_cfgs(title, cfg, ncfg, SVG_MAX_SERIES, err, errlen);
	if (rc)
		return rc;
	if (c.y.scale == SVG_LOG10)     /* steady state reads better on a linear scale */
		c.y.scale = SVG_LINEAR;
	memset(buf, 0, sizeof(buf));
	for (size_t i = 0; i < ncfg; i++)
		while ((cfg[i].n + k - 1) / k > BENCH_REPORT_TS_POINTS)
			k++;
	for (size_t i = 0; i < ncfg; i++) {
		const double *y = measure_of(&cfg[i], m);

		ds[i] = cfg[i];
		if (k == 1 || !y)
			continue;
		buf[i][0] = malloc(cfg[i].n * sizeof(double));
		buf[i][1] = malloc(cfg[i].n * sizeof(double));
		if (!buf[i][0] || !buf[i][1]) {
			rc = uraid_errf(err, errlen, -ENOMEM, "report: %s: out of memory", title);
			goto out;
		}
		ds[i].n = downsample(cfg[i].x, y, cfg[i].n, k, buf[i][0], buf[i][1]);
		ds[i].x = buf[i][0];
		ds[i].iops = ds[i].mib_s = ds[i].lat_mean_ns = ds[i].lat_p99_ns = buf[i][1];
	}
	if (k > 1)
		snprintf(note, sizeof(note), "Each point is the average of %zu seconds.", k);
	rc = sweep_chart(r, &c, m, ds, ncfg, NULL, k > 1 ? note : NULL, err, errlen);
out:
	for (size_t i = 0; i < ncfg; i++) {
		free(buf[i][0]);
		free(buf[i][1]);
	}
	return rc;
}

int bench_report_add_percentiles(struct bench_report *r, const char *workload,
				 const struct bench_latency *cfg, size_t ncfg, char *err,
				 size_t errlen)
{
	struct svg_series ser[SVG_MAX_SERIES];
	struct svg_chart c = {
		.kind = SVG_POINTS, .title = "Latency percentiles", .subtitle = workload,
		.x = { .label = "percentile" },
		.y = { .label = "latency", .scale = SVG_LOG10, .unit = SVG_UNIT_NS },
		.ncat = BENCH_NPCT, .cat = bench_pct_names, .series = ser, .nseries = ncfg,
	};

	if (!cfg || !ncfg || ncfg > SVG_MAX_SERIES)
		return uraid_errf(err, errlen, -EINVAL, "report: %s: %zu configurations (1 to %u)",
				  c.title, ncfg, SVG_MAX_SERIES);
	for (size_t i = 0; i < ncfg; i++)
		ser[i] = (struct svg_series){ .name = cfg[i].name, .n = BENCH_NPCT, .y = cfg[i].ns,
					      .color = (int)i };
	return bench_report_add_chart(r, &c, NULL, err, errlen);
}

/* Lines (x: block size, a series per mix) or a radar (spokes: mixes, a series per block size). */
static int matrix_chart(struct bench_report *r, const struct bench_matrix *m, const double *v,
			enum bench_measure what, bool radar, char *err, size_t errlen)
{
	struct svg_series ser[SVG_MAX_SERIES];
	char names[SVG_MAX_SERIES][32], cat[SVG_MAX_CATEGORIES][32], title[96];
	const char *catp[SVG_MAX_CATEGORIES];
	double col[SVG_MAX_SERIES][SVG_MAX_CATEGORIES], lo = INFINITY, hi = 0;
	struct svg_chart c = {
		.kind = radar ? SVG_RADAR : SVG_LINE, .title = title, .subtitle = m->name,
		.x = { .label = "block size", .scale = SVG_LOG2, .unit = SVG_UNIT_BYTES },
		.y = measure_axis(what),
		.series = ser, .palette = radar ? SVG_PAL_SEQUENTIAL : SVG_PAL_READWRITE,
	};

	for (size_t i = 0; i < m->nbs * m->nmix; i++)
		if (isfinite(v[i]) && v[i] > 0) {
			lo = fmin(lo, v[i]);
			hi = fmax(hi, v[i]);
		}
	/* IOPS at 512 B and at 1 MiB differ by orders of magnitude: a log scale keeps both */
	if (hi > 20 * lo)
		c.y.scale = SVG_LOG10;
	memset(ser, 0, sizeof(ser));
	if (radar) {
		snprintf(title, sizeof(title), "%s by read/write mix and block size",
			 measure_name(what));
		for (size_t j = 0; j < m->nmix; j++) {
			snprintf(cat[j], sizeof(cat[j]), "%g/%g R/W", m->read_pct[j],
				 100 - m->read_pct[j]);
			catp[j] = cat[j];
		}
		c.cat = catp;
		c.ncat = m->nmix;
		for (size_t i = 0; i < m->nbs; i++) {
			svg_format(names[i], sizeof(names[i]), SVG_UNIT_BYTES, m->bs[i], 0);
			ser[i] = (struct svg_series){ .name = names[i], .n = m->nmix,
						      .y = v + i * m->nmix, .color = -1 };
		}
		c.nseries = m->nbs;
		return bench_report_add_chart(r, &c, "Read/write mix around the circle, an outline "
					      "per block size.", err, errlen);
	}
	snprintf(title, sizeof(title), "%s vs block size by read/write mix", measure_name(what));
	for (size_t j = 0; j < m->nmix; j++) {
		for (size_t i = 0; i < m->nbs; i++)
			col[j][i] = v[i * m->nmix + j];
		snprintf(names[j], sizeof(names[j]), "%g/%g R/W", m->read_pct[j],
			 100 - m->read_pct[j]);
		ser[j] = (struct svg_series){ .name = names[j], .n = m->nbs, .x = m->bs,
					      .y = col[j], .color = -1 };
	}
	c.nseries = m->nmix;
	return bench_report_add_chart(r, &c, NULL, err, errlen);
}

int bench_report_add_matrix(struct bench_report *r, const struct bench_matrix *m, char *err,
			    size_t errlen)
{
	const double *v[2];
	enum bench_measure what[2] = { BENCH_IOPS, BENCH_MIBS };
	int rc = 0;

	if (!m || !m->name || !m->bs || !m->read_pct || !m->nbs || !m->nmix ||
	    m->nbs > SVG_MAX_SERIES || m->nbs > SVG_MAX_CATEGORIES ||
	    m->nmix > SVG_MAX_SERIES || m->nmix > SVG_MAX_CATEGORIES || m->nmix < 3)
		return uraid_errf(err, errlen, -EINVAL, "report: block size × mix matrix: %zu × %zu "
				  "cells (1 to %u block sizes, 3 to %u mixes)",
				  m ? m->nbs : 0, m ? m->nmix : 0, SVG_MAX_SERIES,
				  SVG_MAX_CATEGORIES);
	v[0] = m->iops;
	v[1] = m->mib_s;
	for (unsigned k = 0; k < 2 && !rc; k++)
		if (v[k])
			rc = matrix_chart(r, m, v[k], what[k], false, err, errlen);
	for (unsigned k = 0; k < 2 && !rc; k++)
		if (v[k])
			rc = matrix_chart(r, m, v[k], what[k], true, err, errlen);
	return rc;
}
