// SPDX-License-Identifier: MIT
/*
 * The report's charts for --compare and for the read-share and block-size
 * sweeps (report_run.h): configurations side by side as grouped bars (a
 * chart per measure: IOPS and MiB/s split into reads and writes, mean and
 * p99 latency, CPU), and a measure against the read share or block size
 * as lines. The values are the JSON's, so a test can match the two.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report_run.h"
#include "common/errmsg.h"

#define MAX_BARS SVG_MAX_CATEGORIES     /* configurations charted (the table has all) */

/* The configurations measured, in run order: their cell indices (at most MAX_BARS). */
static size_t charted_cells(const struct bench_outcome *o, unsigned *idx)
{
	size_t n = 0;

	for (unsigned i = 0; i < o->ncells && n < MAX_BARS; i++)
		if (bench_cell_charted(o, i))
			idx[n++] = i;
	return n;
}

/* One bar chart: the configurations along x, nser bars in each. */
static int bar_chart(struct bench_report *r, const char *title, const char *subtitle,
		     const char *const *cat, size_t ncat, const struct svg_series *ser,
		     size_t nser, enum svg_unit unit, const char *ylabel, const char *note,
		     char *err, size_t errlen)
{
	struct svg_chart c = {
		.kind = SVG_BAR, .title = title, .subtitle = subtitle,
		.x = { .label = "configuration" },
		.y = { .label = ylabel, .scale = SVG_LINEAR, .unit = unit },
		.ncat = ncat, .cat = cat, .nseries = nser, .series = ser,
		.palette = SVG_PAL_CATEGORY,
	};
	return bench_report_add_chart(r, &c, note, err, errlen);
}

static int compare_section(struct bench_report *r, const struct bench_outcome *o,
			   const char *what, char *err, size_t errlen)
{
	unsigned idx[MAX_BARS];
	size_t n = charted_cells(o, idx);
	const char *cat[MAX_BARS];
	double v[7][MAX_BARS];
	char note[400] = "";
	unsigned skipped = 0;
	int rc;

	unsigned charted = 0;
	for (unsigned i = 0; i < o->ncells; i++) {
		skipped += !bench_cell_measured(o, i);
		charted += bench_cell_charted(o, i);
	}
	if (skipped)
		snprintf(note, sizeof(note), "%u configuration%s not run (the table says why).",
			 skipped, skipped == 1 ? "" : "s");
	if (charted > n)        /* the chart has room for MAX_BARS: say what it leaves out */
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sThe charts show "
			 "the first %zu of the %u configurations run; the table has all.",
			 note[0] ? " " : "", n, charted);
	rc = bench_report_add_heading(r, "Configurations side by side", err, errlen);
	if (rc || !n)
		return rc;
	for (size_t k = 0; k < n; k++) {
		const struct bench_result *res = &o->res[idx[k]];
		cat[k] = o->cells[idx[k]].label;
		v[0][k] = bench_per_s(res->dir[0].ios, res->runtime_ns);
		v[1][k] = bench_per_s(res->dir[1].ios, res->runtime_ns);
		v[2][k] = bench_per_s(res->dir[0].bytes, res->runtime_ns) / (1 << 20);
		v[3][k] = bench_per_s(res->dir[1].bytes, res->runtime_ns) / (1 << 20);
		v[4][k] = bench_total_ios(res) ? (double)hist_mean(&res->lat) : NAN;
		v[5][k] = bench_total_ios(res) ?
			  (double)hist_percentile(&res->lat, bench_pcts[BENCH_PCT_P99]) : NAN;
		v[6][k] = bench_pct_of(res->cpu_user_ns + res->cpu_sys_ns, res->runtime_ns);
	}
	/* reads and writes as two bars: their sum is the total the table shows */
	const struct svg_series iops[2] = {
		{ .name = "read IOPS", .n = n, .y = v[0], .color = -1 },
		{ .name = "write IOPS", .n = n, .y = v[1], .color = -1 },
	};
	const struct svg_series mib[2] = {
		{ .name = "read MiB/s", .n = n, .y = v[2], .color = -1 },
		{ .name = "write MiB/s", .n = n, .y = v[3], .color = -1 },
	};
	/* mean and p99 apart: on one linear axis the tail flattens the means */
	const struct svg_series lat_mean[1] = {
		{ .name = "mean", .n = n, .y = v[4], .color = -1 },
	};
	const struct svg_series lat_p99[1] = {
		{ .name = "p99", .n = n, .y = v[5], .color = -1 },
	};
	const struct svg_series cpu[1] = {
		{ .name = "CPU (user + system)", .n = n, .y = v[6], .color = -1 },
	};
	rc = bar_chart(r, "IOPS per configuration", what, cat, n, iops, 2, SVG_UNIT_SI,
		       "IOPS", note[0] ? note : NULL, err, errlen);
	if (!rc)
		rc = bar_chart(r, "MiB/s per configuration", what, cat, n, mib, 2, SVG_UNIT_PLAIN,
			       "MiB/s", NULL, err, errlen);
	if (!rc)
		rc = bar_chart(r, "Mean latency per configuration", what, cat, n, lat_mean, 1,
			       SVG_UNIT_NS, "mean latency (reads and writes)", NULL, err, errlen);
	if (!rc)
		rc = bar_chart(r, "p99 latency per configuration", what, cat, n, lat_p99, 1,
			       SVG_UNIT_NS, "p99 latency (reads and writes)", NULL, err, errlen);
	if (!rc)
		rc = bar_chart(r, "CPU per configuration", what, cat, n, cpu, 1, SVG_UNIT_PCT,
			       "% of one CPU", "User and system time of the whole process during "
			       "the measured window.", err, errlen);
	return rc;
}

/*
 * --sweep=rwmixread (with or without bs): a measure against the read share,
 * a line per block size.
 */
static int rwmix_section(struct bench_report *r, const struct bench_runplan *p,
			 const struct bench_outcome *o, const char *what, char *err,
			 size_t errlen)
{
	const struct bench_axes *ax = &p->axes;
	size_t nl = ax->nbs ? ax->nbs : 1, nm = ax->nrwmix;
	static const char *const titles[4] = { "IOPS vs read share", "MiB/s vs read share",
					       "Mean latency vs read share",
					       "p99 latency vs read share" };
	static const char *const ylabels[4] = { "IOPS", "MiB/s", "mean latency", "p99 latency" };
	static const enum svg_unit units[4] = { SVG_UNIT_SI, SVG_UNIT_PLAIN, SVG_UNIT_NS,
						SVG_UNIT_NS };
	struct svg_series ser[SVG_MAX_SERIES];
	char names[SVG_MAX_SERIES][32];
	int rc = 0;

	if (nl > SVG_MAX_SERIES)
		nl = SVG_MAX_SERIES;
	double *x = calloc(nl * nm, sizeof(double)), *y = calloc(4 * nl * nm, sizeof(double));
	if (!x || !y) {
		free(x);
		free(y);
		return uraid_errf(err, errlen, -ENOMEM, "report: out of memory");
	}
	for (size_t l = 0; l < nl; l++)
		for (size_t m = 0; m < nm; m++) {
			unsigned i = (unsigned)(l * nm + m);
			const struct bench_result *res = &o->res[i];
			bool ok = i < o->ncells && bench_cell_charted(o, i);
			bool any = ok && bench_total_ios(res);
			x[l * nm + m] = ax->rwmix[m];
			y[0 * nl * nm + l * nm + m] = ok ? bench_iops(res) : NAN;
			y[1 * nl * nm + l * nm + m] = ok ? bench_mib_s(res) : NAN;
			y[2 * nl * nm + l * nm + m] = any ? (double)hist_mean(&res->lat) : NAN;
			y[3 * nl * nm + l * nm + m] = any ? (double)hist_percentile(&res->lat,
						      bench_pcts[BENCH_PCT_P99]) : NAN;
		}
	rc = bench_report_add_heading(r, ax->nbs ? "Read share × block size" : "Read share",
				      err, errlen);
	for (int k = 0; k < 4 && !rc; k++) {
		for (size_t l = 0; l < nl; l++) {
			char sz[32];
			snprintf(names[l], sizeof(names[l]), "all I/O");
			if (ax->nbs) {
				svg_format(sz, sizeof(sz), SVG_UNIT_BYTES, ax->bs[l], 0);
				snprintf(names[l], sizeof(names[l]), "bs=%.24s", sz);
			}
			ser[l] = (struct svg_series){ .name = names[l], .n = nm, .x = x + l * nm,
						      .y = y + (size_t)k * nl * nm + l * nm,
						      .color = -1 };
		}
		struct svg_chart c = {
			.kind = SVG_LINE, .title = titles[k], .subtitle = what,
			.x = { .label = "reads (% of I/Os; 0 = all writes)", .scale = SVG_LINEAR,
			       .unit = SVG_UNIT_PCT, .min = 0, .max = 100 },
			.y = { .label = ylabels[k], .scale = SVG_LINEAR, .unit = units[k] },
			.nseries = nl, .series = ser,
			.palette = nl > 1 ? SVG_PAL_SEQUENTIAL : SVG_PAL_CATEGORY,
		};
		rc = bench_report_add_chart(r, &c, NULL, err, errlen);
	}
	free(x);
	free(y);
	return rc;
}

/* --sweep=bs alone: the measures against block size (one line). */
static int bs_section(struct bench_report *r, const struct bench_runplan *p,
		      const struct bench_outcome *o, const char *what, char *err, size_t errlen)
{
	size_t n = p->axes.nbs < o->ncells ? p->axes.nbs : o->ncells;
	double *v = calloc(5 * (n ? n : 1), sizeof(double));
	int rc;

	if (!v)
		return uraid_errf(err, errlen, -ENOMEM, "report: out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct bench_result *res = &o->res[i];
		bool ok = bench_cell_charted(o, (unsigned)i), any = ok && bench_total_ios(res);
		v[i] = p->axes.bs[i];
		v[n + i] = ok ? bench_iops(res) : NAN;
		v[2 * n + i] = ok ? bench_mib_s(res) : NAN;
		v[3 * n + i] = any ? (double)hist_mean(&res->lat) : NAN;
		v[4 * n + i] = any ? (double)hist_percentile(&res->lat,
							     bench_pcts[BENCH_PCT_P99]) : NAN;
	}
	const struct bench_sweep sw = { .name = "all I/O", .n = n, .x = v, .iops = v + n,
					.mib_s = v + 2 * n, .lat_mean_ns = v + 3 * n,
					.lat_p99_ns = v + 4 * n };
	rc = bench_report_add_heading(r, "Block size", err, errlen);
	if (!rc)
		rc = bench_report_add_bs(r, what, BENCH_IOPS, &sw, 1, err, errlen);
	if (!rc)
		rc = bench_report_add_bs(r, what, BENCH_MIBS, &sw, 1, err, errlen);
	if (!rc)
		rc = bench_report_add_bs(r, what, BENCH_LAT_MEAN, &sw, 1, err, errlen);
	free(v);
	return rc;
}

int bench_report_add_compare_charts(struct bench_report *r, const struct bench_runplan *p,
				    const struct bench_outcome *o, const char *what, char *err,
				    size_t errlen)
{
	if (p->kind == BENCH_RUN_COMPARE)
		return compare_section(r, o, what, err, errlen);
	if (p->kind != BENCH_RUN_SWEEP)
		return 0;
	if (p->axes.nrwmix)
		return rwmix_section(r, p, o, what, err, errlen);
	if (p->axes.nbs)
		return bs_section(r, p, o, what, err, errlen);
	return 0;
}
