// SPDX-License-Identifier: MIT
/*
 * The charts of a run's report (report_run.h) that fit what was run, built
 * from the same results the CLI's JSON prints (so a test can match one
 * against the other):
 * IOPS and latency vs queue depth (a line per thread count) or vs workers,
 * scaling vs drive count with the JBOD line, the block size x mix matrix
 * (lines and radar), the steady-state rounds, latency percentiles and the
 * one-second time series.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>

#include "bench/report_run.h"
#include "common/errmsg.h"

/* What a chart plots of one result: the JSON's total figures, NaN where nothing completed. */
struct meas {
	double iops, mib, mean, p99;
};

static struct meas measure(const struct bench_outcome *o, unsigned i)
{
	const struct bench_result *r = &o->res[i];
	struct meas m = { NAN, NAN, NAN, NAN };

	if (!bench_cell_charted(o, i))
		return m;
	m.iops = bench_iops(r);
	m.mib = bench_mib_s(r);
	if (bench_total_ios(r)) {
		m.mean = (double)hist_mean(&r->lat);
		m.p99 = (double)hist_percentile(&r->lat, bench_pcts[BENCH_PCT_P99]);
	}
	return m;
}

/* Scratch arrays of doubles for one section, freed together. */
struct scratch {
	double *buf;
	size_t used, cap;
};

static double *grab(struct scratch *s, size_t n)
{
	if (s->used + n > s->cap)
		return NULL;
	s->used += n;
	return s->buf + s->used - n;
}

static int scratch_init(struct scratch *s, size_t cap, char *err, size_t errlen)
{
	s->used = 0;
	s->cap = cap;
	s->buf = calloc(cap ? cap : 1, sizeof(double));
	return s->buf ? 0 : uraid_errf(err, errlen, -ENOMEM, "report: out of memory");
}

static void worker_name(char *buf, size_t len, unsigned w)
{
	snprintf(buf, len, "%u worker%s", w, w == 1 ? "" : "s");
}

/* --sweep=qd (with or without threads): a line per thread count; threads alone: vs workers. */
static int load_section(struct bench_report *r, const struct bench_runplan *p,
			const struct bench_outcome *o, const char *what, char *err,
			size_t errlen)
{
	const struct bench_axes *ax = &p->axes;
	unsigned nt = ax->nthreads ? ax->nthreads : 1, nq = ax->nqd ? ax->nqd : 1;
	unsigned ncfg = ax->nqd ? nt : 1, npts = ax->nqd ? nq : nt;
	struct bench_sweep cfg[SVG_MAX_SERIES / 2];
	char names[SVG_MAX_SERIES / 2][48];
	struct scratch s;
	int rc;

	if (ncfg > SVG_MAX_SERIES / 2)
		ncfg = SVG_MAX_SERIES / 2;  /* more thread counts than a chart can tell apart */
	if ((rc = scratch_init(&s, (size_t)ncfg * npts * 5, err, errlen)))
		return rc;
	for (unsigned k = 0; k < ncfg; k++) {
		double *x = grab(&s, npts), *iops = grab(&s, npts), *mib = grab(&s, npts),
		       *mean = grab(&s, npts), *p99 = grab(&s, npts);
		unsigned workers = ax->nthreads ? ax->threads[k] : o->res[0].workers;

		for (unsigned j = 0; j < npts; j++) {
			/* cells run thread-major: cell t * nq + q */
			unsigned i = ax->nqd ? k * nq + j : j;
			struct meas m = measure(o, i);

			x[j] = ax->nqd ? o->cells[i].qd : o->cells[i].threads;
			iops[j] = m.iops;
			mib[j] = m.mib;
			mean[j] = m.mean;
			p99[j] = m.p99;
			if (!ax->nthreads && bench_cell_measured(o, i) && o->res[i].workers)
				workers = o->res[i].workers;
		}
		if (ax->nqd)
			worker_name(names[k], sizeof(names[k]), workers);
		else
			snprintf(names[k], sizeof(names[k]), "QD %u", p->wl.iodepth);
		cfg[k] = (struct bench_sweep){ .name = names[k], .n = npts, .x = x, .iops = iops,
					       .mib_s = mib, .lat_mean_ns = mean, .lat_p99_ns = p99 };
	}
	rc = bench_report_add_heading(r, ax->nqd ? "Queue depth" : "Workers", err, errlen);
	if (!rc && ax->nqd)
		rc = bench_report_add_qd(r, what, cfg, ncfg, err, errlen);
	else if (!rc)
		rc = bench_report_add_workers(r, what, cfg, ncfg, err, errlen);
	free(s.buf);
	return rc;
}

/* --sweep=drives: the level's line against the JBOD of the same drives. */
static int drives_section(struct bench_report *r, const struct bench_runplan *p,
			  const struct bench_outcome *o, const char *what, char *err,
			  size_t errlen)
{
	static const enum bench_measure ms[3] = { BENCH_IOPS, BENCH_MIBS, BENCH_LAT_MEAN };
	unsigned n = o->ncells / 2;
	struct bench_sweep cfg[2];
	char name[64], chunk[32] = "";
	struct scratch s;
	int rc;

	if ((rc = scratch_init(&s, (size_t)n * 8, err, errlen)))
		return rc;
	if (p->tg.chunk_kib) {
		char sz[24];

		svg_format(sz, sizeof(sz), SVG_UNIT_BYTES, p->tg.chunk_kib * 1024.0, 0);
		snprintf(chunk, sizeof(chunk), ", chunk %s", sz);
	}
	snprintf(name, sizeof(name), "%s%s", uraid_level_name(p->tg.level) ?
		 uraid_level_name(p->tg.level) : "array", chunk);
	for (unsigned k = 0; k < 2; k++) {
		double *x = grab(&s, n), *iops = grab(&s, n), *mib = grab(&s, n),
		       *mean = grab(&s, n);

		/* cells come in pairs: the JBOD of N drives, then the array on them */
		for (unsigned j = 0; j < n; j++) {
			struct meas m = measure(o, 2 * j + (k == 0));

			x[j] = o->cells[2 * j].drives;
			iops[j] = m.iops;
			mib[j] = m.mib;
			mean[j] = m.mean;
		}
		cfg[k] = (struct bench_sweep){ .name = k ? "JBOD (each drive alone)" : name,
					       .n = n, .x = x, .iops = iops, .mib_s = mib,
					       .lat_mean_ns = mean };
	}
	rc = bench_report_add_heading(r, "Scaling with drive count", err, errlen);
	for (unsigned k = 0; k < 3 && !rc; k++)
		rc = bench_report_add_scaling(r, what, ms[k], &cfg[0], 1, &cfg[1], err, errlen);
	free(s.buf);
	return rc;
}

static int index_of_u32(const uint32_t *v, unsigned n, uint32_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return (int)i;
	return -1;
}

static int index_of_pct(int x)
{
	for (unsigned i = 0; i < BENCH_MATRIX_NMIX; i++)
		if ((int)bench_matrix_read_pct[i] == x)
			return (int)i;
	return -1;
}

/* --sweep=matrix: IOPS and MiB/s vs block size (a line per mix) and as radars. */
static int matrix_section(struct bench_report *r, const struct bench_runplan *p,
			  const struct bench_outcome *o, const char *what, char *err,
			  size_t errlen)
{
	double bs[BENCH_MATRIX_NBS], mix[BENCH_MATRIX_NMIX];
	double iops[BENCH_MATRIX_NBS * BENCH_MATRIX_NMIX], mib[BENCH_MATRIX_NBS * BENCH_MATRIX_NMIX];
	char name[256];
	unsigned first = 0;
	int rc;

	for (unsigned i = 0; i < BENCH_MATRIX_NBS; i++)
		bs[i] = bench_matrix_bs[i];
	for (unsigned j = 0; j < BENCH_MATRIX_NMIX; j++)
		mix[j] = bench_matrix_read_pct[j];
	for (unsigned i = 0; i < BENCH_MATRIX_NBS * BENCH_MATRIX_NMIX; i++)
		iops[i] = mib[i] = NAN;
	for (unsigned i = 0; i < o->ncells; i++) {
		int b = index_of_u32(bench_matrix_bs, BENCH_MATRIX_NBS, o->cells[i].bs);
		int m = index_of_pct(o->cells[i].read_pct);
		struct meas v = measure(o, i);

		if (b < 0 || m < 0)
			continue;
		if (!bench_cell_measured(o, first) && bench_cell_measured(o, i))
			first = i;
		iops[b * BENCH_MATRIX_NMIX + m] = v.iops;
		mib[b * BENCH_MATRIX_NMIX + m] = v.mib;
	}
	snprintf(name, sizeof(name), "%s, %u worker%s × QD %u", o->res[first].target_desc,
		 o->res[first].workers, o->res[first].workers == 1 ? "" : "s",
		 o->res[first].iodepth);
	struct bench_matrix m = { .name = name, .nbs = BENCH_MATRIX_NBS,
				  .nmix = BENCH_MATRIX_NMIX, .bs = bs, .read_pct = mix,
				  .iops = iops, .mib_s = mib };
	rc = bench_report_add_heading(r, "Block size × read/write mix", err, errlen);
	return rc ? rc : bench_report_add_matrix(r, &m, err, errlen);
}

/*
 * --steady-state: IOPS per round, the last window's mean, the band of ±10 %
 * around it and the least-squares line through the window that the SNIA PTS
 * plots (the rule itself allows a range of 20 % of the mean anywhere, so the
 * band is a guide, not the rule; the line's change across the window is the
 * rule's second test).
 */
static int steady_section(struct bench_report *r, const struct bench_runplan *p,
			  const struct bench_outcome *o, const char *what, char *err,
			  size_t errlen)
{
	double x[1000], y[1000], wx[BENCH_SS_WINDOW], wmean[BENCH_SS_WINDOW],
	       wlo[BENCH_SS_WINDOW], whi[BENCH_SS_WINDOW], wfit[BENCH_SS_WINDOW];
	unsigned n = o->ncells < 1000 ? o->ncells : 1000, nw = 0;
	struct svg_series ser[5] = {
		{ .name = "IOPS per round", .x = x, .y = y, .n = n, .color = 0 },
		{ .name = "window mean", .x = wx, .y = wmean, .color = 1, .flags = SVG_DASHED },
		{ .name = "mean + 10 %", .x = wx, .y = whi, .color = 1,
		  .flags = SVG_DASHED | SVG_NO_MARKERS },
		{ .name = "mean − 10 %", .x = wx, .y = wlo, .color = 1,
		  .flags = SVG_DASHED | SVG_NO_MARKERS },
		{ .name = "least-squares fit", .x = wx, .y = wfit, .color = 2,
		  .flags = SVG_NO_MARKERS },
	};
	struct svg_chart ch = {
		.kind = SVG_LINE, .title = "Steady state: IOPS per round", .subtitle = what,
		.x = { .label = "round", .scale = SVG_LINEAR, .unit = SVG_UNIT_PLAIN, .integer = true },
		.y = { .label = "IOPS", .scale = SVG_LINEAR, .unit = SVG_UNIT_SI },
		.series = ser, .nseries = 1,
	};
	char note[320];
	int rc;

	for (unsigned i = 0; i < n; i++) {
		x[i] = i + 1;
		y[i] = measure(o, i).iops;
	}
	if (n >= BENCH_SS_WINDOW) {
		for (unsigned i = n - BENCH_SS_WINDOW; i < n; i++, nw++) {
			wx[nw] = i + 1;
			wmean[nw] = o->ss.avg;
			wlo[nw] = o->ss.avg * (1 - BENCH_SS_RANGE_PCT / 200.0);
			whi[nw] = o->ss.avg * (1 + BENCH_SS_RANGE_PCT / 200.0);
			/* the fit passes through the window's mean at its middle round */
			wfit[nw] = o->ss.avg + o->ss.slope * (nw - (BENCH_SS_WINDOW - 1) / 2.0);
		}
		for (unsigned k = 1; k < 5; k++)
			ser[k].n = nw;
		ch.nseries = 5;
	}
	snprintf(note, sizeof(note), "SNIA PTS rule over the last %u rounds: range at most %d %% "
		 "of their mean and a fitted line that moves at most %d %% across them. %s after "
		 "%u rounds (range %.1f %%, fitted change %.1f %%).", BENCH_SS_WINDOW,
		 BENCH_SS_RANGE_PCT, BENCH_SS_SLOPE_PCT, o->ss_reached ? "Reached" : "Not reached",
		 o->ss_rounds, o->ss.avg > 0 ? 100 * o->ss.range / o->ss.avg : 0,
		 o->ss.avg > 0 ? 100 * o->ss.excursion / o->ss.avg : 0);
	rc = bench_report_add_heading(r, "Steady state", err, errlen);
	return rc ? rc : bench_report_add_chart(r, &ch, note, err, errlen);
}

/* A name for cell i in the percentile chart (NULL: leave the cell out). */
static const char *pct_name(const struct bench_runplan *p, const struct bench_outcome *o,
			    unsigned i, char *buf, size_t len)
{
	const struct bench_cell *cl = &o->cells[i];

	if (p->axes.matrix) {
		/* 56 bars per group say nothing: the 4 KiB cells, one per mix */
		char sz[24];

		if (cl->bs != 4096)
			return NULL;
		svg_format(sz, sizeof(sz), SVG_UNIT_BYTES, cl->bs, 0);
		snprintf(buf, len, "%s, %d/%d R/W", sz, cl->read_pct, 100 - cl->read_pct);
		return buf;
	}
	if (p->kind == BENCH_RUN_STEADY && i + BENCH_SS_WINDOW < o->ncells)
		return NULL;            /* the steady-state window only */
	snprintf(buf, len, "%s", cl->label);
	return buf;
}

static int percentile_section(struct bench_report *r, const struct bench_runplan *p,
			      const struct bench_outcome *o, const char *what, char *err,
			      size_t errlen)
{
	struct bench_latency lat[SVG_MAX_SERIES];
	char names[SVG_MAX_SERIES][64], sub[200];
	const char *subject = p->axes.matrix ? "4 KiB cells of the matrix" : what;
	size_t n = 0, skipped = 0;
	int rc;

	if (!o->cells) {
		static const char *const dn[3] = { "read", "write", "total" };
		const struct bench_result *res = &o->res[0];
		const struct hist *h[3] = { &res->dir[0].lat, &res->dir[1].lat, &res->lat };

		for (unsigned d = 0; d < 3; d++) {
			/* total only when it differs from the one direction there is */
			if (!h[d]->count || (d == 2 && (!h[0]->count || !h[1]->count)))
				continue;
			lat[n].name = dn[d];
			for (unsigned k = 0; k < BENCH_NPCT; k++)
				lat[n].ns[k] = (double)hist_percentile(h[d], bench_pcts[k]);
			n++;
		}
	} else {
		for (unsigned i = 0; i < o->ncells; i++) {
			if (!bench_cell_measured(o, i) || !o->res[i].lat.count ||
			    !pct_name(p, o, i, names[n], sizeof(names[n])))
				continue;
			if (n == SVG_MAX_SERIES) {
				skipped++;
				continue;
			}
			lat[n].name = names[n];
			for (unsigned k = 0; k < BENCH_NPCT; k++)
				lat[n].ns[k] = (double)hist_percentile(&o->res[i].lat,
								       bench_pcts[k]);
			n++;
		}
	}
	if (!n)
		return 0;
	/* reads and writes together, as the JSON's "total" */
	snprintf(sub, sizeof(sub), "%s%s", subject, skipped ? ", the first cells (all are in the "
		 "table)" : "");
	rc = bench_report_add_heading(r, "Latency percentiles", err, errlen);
	return rc ? rc : bench_report_add_percentiles(r, sub, lat, n, err, errlen);
}

/*
 * The one-second series: for one run its read, write and total IOPS and the
 * mean latency; for several cells or rounds the cells end to end on one
 * time axis (measured windows only, ramps left out).
 */
static int series_section(struct bench_report *r, const struct bench_runplan *p,
			  const struct bench_outcome *o, const char *what, char *err,
			  size_t errlen)
{
	size_t n = 0;
	struct scratch s;
	int rc;

	for (unsigned i = 0; i < o->ncells; i++)
		if (bench_cell_measured(o, i))
			n += o->res[i].nseries;
	if (!n)
		return 0;
	if ((rc = scratch_init(&s, n * 5, err, errlen)))
		return rc;
	double *x = grab(&s, n), *rd = grab(&s, n), *wr = grab(&s, n), *tot = grab(&s, n),
	       *lat = grab(&s, n), t0 = 0;
	bool reads = false, writes = false;
	size_t k = 0, nmarks = 0;
	/* the matrix's 56 cells: named by block size above the plot, each cell on hover */
	char groups[BENCH_MATRIX_NBS][24];
	unsigned ngroups = 0;
	uint32_t group_bs = 0;
	/* where each cell begins on the time axis, named as in the table */
	struct svg_mark *marks = o->cells ? calloc(o->ncells + 1, sizeof(*marks)) : NULL;

	if (o->cells && !marks) {
		free(s.buf);
		return uraid_errf(err, errlen, -ENOMEM, "report: time series: out of memory");
	}

	for (unsigned i = 0; i < o->ncells; i++) {
		const struct bench_result *res = &o->res[i];

		if (!bench_cell_measured(o, i))
			continue;
		if (marks && res->nseries && nmarks + 1 < SVG_MAX_MARKS) {
			const struct bench_cell *cl = &o->cells[i];

			marks[nmarks] = (struct svg_mark){ .x = t0, .label = cl->label };
			if (p->axes.matrix && cl->bs != group_bs && ngroups < BENCH_MATRIX_NBS) {
				group_bs = cl->bs;
				svg_format(groups[ngroups], sizeof(groups[0]), SVG_UNIT_BYTES,
					   cl->bs, 0);
				marks[nmarks].group = groups[ngroups++];
			}
			nmarks++;
		}
		for (unsigned j = 0; j < res->nseries; j++, k++) {
			const struct bench_second *sec = &res->series[j];
			uint64_t ios = sec->ios[0] + sec->ios[1];

			/* a second without a duration is a gap, not a zero; each point sits in the
			   middle of its window, so within its cell's span, not on a boundary */
			x[k] = t0 + j + (sec->dur_ns ? sec->dur_ns / 2e9 : 0.5);
			rd[k] = sec->dur_ns ? bench_per_s(sec->ios[0], sec->dur_ns) : NAN;
			wr[k] = sec->dur_ns ? bench_per_s(sec->ios[1], sec->dur_ns) : NAN;
			tot[k] = sec->dur_ns ? bench_per_s(ios, sec->dur_ns) : NAN;
			lat[k] = ios ? (double)(sec->lat_sum_ns / ios) : NAN;
			reads |= sec->ios[0] > 0;
			writes |= sec->ios[1] > 0;
		}
		t0 += res->runtime_ns / 1e9;
	}
	if (nmarks)      /* where the last cell ends */
		marks[nmarks++] = (struct svg_mark){ .x = t0, .label = "" };
	bool one = !o->cells;
	struct bench_sweep cfg[3];
	size_t ncfg = 0;
	char sub[200];

	snprintf(sub, sizeof(sub), "%s%s", what, one ? "" : p->kind == BENCH_RUN_STEADY ?
		 ", the rounds end to end" : p->axes.matrix ? ", cells by block size" :
		 p->kind == BENCH_RUN_COMPARE ? ", the configurations end to end in the order "
		 "run, each marked where it begins" : ", the cells end to end in the order run");
	if (reads && writes) {
		cfg[ncfg++] = (struct bench_sweep){ .name = "read", .n = n, .x = x, .iops = rd };
		cfg[ncfg++] = (struct bench_sweep){ .name = "write", .n = n, .x = x, .iops = wr };
	}
	cfg[ncfg++] = (struct bench_sweep){ .name = one ? "total" : p->kind == BENCH_RUN_COMPARE ?
					    "all configurations" : "all cells", .n = n, .x = x,
					    .iops = tot, .lat_mean_ns = lat };
	rc = bench_report_add_heading(r, "Time series", err, errlen);
	if (!rc)
		rc = bench_report_add_timeseries_cells(r, sub, BENCH_IOPS, cfg, ncfg, marks,
						       nmarks, err, errlen);
	if (!rc)
		rc = bench_report_add_timeseries_cells(r, sub, BENCH_LAT_MEAN, &cfg[ncfg - 1], 1,
						       marks, nmarks, err, errlen);
	free(marks);
	free(s.buf);
	return rc;
}

int bench_report_add_run_charts(struct bench_report *r, const struct bench_runplan *p,
				const struct bench_outcome *o, const char *what, char *err,
				size_t errlen)
{
	int rc = 0;

	/* the chart of the kind of run, then those that fit any run */
	if (p->kind == BENCH_RUN_SWEEP) {
		if (p->axes.nqd || p->axes.nthreads)
			rc = load_section(r, p, o, what, err, errlen);
		else if (p->axes.ndrives)
			rc = drives_section(r, p, o, what, err, errlen);
		else if (p->axes.matrix)
			rc = matrix_section(r, p, o, what, err, errlen);
	} else if (p->kind == BENCH_RUN_STEADY && o->ncells) {
		rc = steady_section(r, p, o, what, err, errlen);
	}
	if (!rc)
		rc = percentile_section(r, p, o, what, err, errlen);
	if (!rc)
		rc = series_section(r, p, o, what, err, errlen);
	return rc;
}
