/* SPDX-License-Identifier: MIT */
/*
 * The HTML report of `uraid bench`: one self-contained file (inline CSS and
 * SVG, no script, no external reference) with a run description, key
 * figures and a list of sections (headings, charts, tables).
 *
 * The report owns copies of everything given to it (strings and arrays), so
 * callers may pass stack data. Its memory is bounded (BENCH_REPORT_MAX_BYTES,
 * BENCH_REPORT_MAX_SECTIONS); a call past a bound fails with -E2BIG.
 * Functions return 0 or a negative errno with one line of context in err.
 *
 * Builders for the charts of workloads.md §7 take results in plain arrays:
 * struct bench_sweep (one configuration over queue depths, drive counts,
 * block sizes or seconds), struct bench_matrix (block size × read/write mix)
 * and struct bench_latency (percentiles).
 */
#ifndef URAID_BENCH_REPORT_H
#define URAID_BENCH_REPORT_H

#include <stddef.h>

#include "bench/bench.h"        /* BENCH_NPCT, the percentiles */
#include "bench/svg.h"

#define BENCH_REPORT_MAX_BYTES    (32u << 20)
#define BENCH_REPORT_MAX_SECTIONS 256
#define BENCH_REPORT_TS_POINTS    900   /* time series longer than this are averaged down */

struct bench_report;

int bench_report_new(struct bench_report **rp, const char *title, char *err, size_t errlen);
void bench_report_free(struct bench_report *r);

/* A line of the run description ("host", "date", "targets", "workload", ...), in order. */
int bench_report_add_info(struct bench_report *r, const char *key, const char *value,
			  char *err, size_t errlen);
/* A key figure: value shown in unit (svg_format) followed by suffix ("IOPS", "MiB/s", NULL). */
int bench_report_add_figure(struct bench_report *r, const char *label, double value,
			    enum svg_unit unit, const char *suffix, char *err, size_t errlen);

/* A heading that starts a group of sections. */
int bench_report_add_heading(struct bench_report *r, const char *text, char *err, size_t errlen);
/* Any chart (copied); note: a caption below it, or NULL. */
int bench_report_add_chart(struct bench_report *r, const struct svg_chart *c, const char *note,
			   char *err, size_t errlen);
/* A table of ncols columns; rows follow with bench_report_add_row (each ncols cells). */
int bench_report_add_table(struct bench_report *r, const char *title, size_t ncols,
			   const char *const *header, char *err, size_t errlen);
int bench_report_add_row(struct bench_report *r, const char *const *cells, char *err,
			 size_t errlen);

/* Write the report as one HTML file (replaced if it exists). */
int bench_report_write_html(const struct bench_report *r, const char *path, char *err,
			    size_t errlen);
/* The same into an svg_out (a FILE* or a buffer). */
int bench_report_write(const struct bench_report *r, struct svg_out *o, char *err,
		       size_t errlen);

/* One configuration over a sweep; every array has n values, a measure may be NULL. */
struct bench_sweep {
	const char *name;           /* "raid5, 4 members", "JBOD" */
	size_t n;
	const double *x;            /* queue depth, drive count, block size (bytes), second */
	const double *iops;
	const double *mib_s;
	const double *lat_mean_ns;
	const double *lat_p99_ns;
};

enum bench_measure {
	BENCH_IOPS,
	BENCH_MIBS,
	BENCH_LAT_MEAN,
	BENCH_LAT_P99,
};

/* IOPS vs queue depth and latency vs queue depth (mean solid, p99 dashed), a line per
   configuration; workload names the pattern ("4 KiB random read"). */
int bench_report_add_qd(struct bench_report *r, const char *workload,
			const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen);
/* The same with workers on x (a threads sweep without a queue-depth axis), x = workers. */
int bench_report_add_workers(struct bench_report *r, const char *workload,
			     const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen);
/* m vs drive count, a line per configuration (level), with the JBOD baseline (may be NULL)
   drawn as a dashed black line. */
int bench_report_add_scaling(struct bench_report *r, const char *workload, enum bench_measure m,
			     const struct bench_sweep *cfg, size_t ncfg,
			     const struct bench_sweep *jbod, char *err, size_t errlen);
/* m vs block size (x in bytes, log2 axis), a line per configuration. */
int bench_report_add_bs(struct bench_report *r, const char *workload, enum bench_measure m,
			const struct bench_sweep *cfg, size_t ncfg, char *err, size_t errlen);
/* m per second of the run (x in seconds), a line per configuration. */
int bench_report_add_timeseries(struct bench_report *r, const char *workload,
				enum bench_measure m, const struct bench_sweep *cfg, size_t ncfg,
				char *err, size_t errlen);

/* The same over several cells end to end: marks[i] is where cell i begins (x in seconds)
   and its name, drawn as a boundary with the name above the plot. */
int bench_report_add_timeseries_cells(struct bench_report *r, const char *workload,
				      enum bench_measure m, const struct bench_sweep *cfg,
				      size_t ncfg, const struct svg_mark *marks, size_t nmarks,
				      char *err, size_t errlen);

/* The block size × read/write mix matrix of one configuration. */
struct bench_matrix {
	const char *name;           /* the configuration */
	size_t nbs, nmix;
	const double *bs;           /* bytes, nbs values */
	const double *read_pct;     /* nmix values: 100, 95, 65, 50, 35, 5, 0 */
	const double *iops;         /* nbs × nmix, one row per block size */
	const double *mib_s;        /* the same; either may be NULL */
};
/* IOPS and MiB/s vs block size (a line per mix), and IOPS and MiB/s as radar charts
   (the mixes around the circle, an outline per block size). */
int bench_report_add_matrix(struct bench_report *r, const struct bench_matrix *m, char *err,
			    size_t errlen);

struct bench_latency {
	const char *name;           /* the configuration */
	double ns[BENCH_NPCT];      /* at bench_pcts */
};
/* Latency percentiles as points joined by lines (log scale), a series per configuration. */
int bench_report_add_percentiles(struct bench_report *r, const char *workload,
				 const struct bench_latency *cfg, size_t ncfg, char *err,
				 size_t errlen);

#endif
