/* SPDX-License-Identifier: MIT */
/*
 * uraid bench, split by concern: bench_opts.c parses the command line,
 * bench.c runs the single run, sweep, steady-state rounds or replay (with a
 * progress line), bench_out.c prints the human table, JSON and CSV,
 * bench_html.c and bench_html_charts.c write the HTML report (--html).
 */
#ifndef URAID_CLI_BENCH_CLI_H
#define URAID_CLI_BENCH_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/sweep.h"
#include "bench/trace.h"

enum bench_fmt { BENCH_FMT_HUMAN, BENCH_FMT_JSON, BENCH_FMT_CSV };

struct bench_cli {
	struct bench_workload wl;
	struct bench_targets tg;
	const char *rw;             /* --rw as given (default "read") */
	const char *layout;
	const char *profile;        /* --profile */
	bool rwmix_given, rw_given, bs_given, random_given, runtime_given;
	bool iodepth_given, numjobs_given;
	unsigned nbs;               /* --bs / --bssplit sizes (weights set) */
	struct bench_access bs[BENCH_MAX_LINES];
	unsigned nacc;              /* --access / --access-file lines */
	struct bench_access acc[BENCH_MAX_LINES];
	bool acc_weight[BENCH_MAX_LINES];
	enum bench_fmt fmt;
	const char *csv_path;       /* --csv */
	const char *html_path;      /* --html */
	int argc;                   /* the command line, for the report's description */
	char **argv;
	bool sweep;
	struct bench_axes axes;
	unsigned steady_max;        /* --steady-state: at most this many rounds; 0 off */
	const char *replay_path;
	struct bench_trace trace;
	char what[96];              /* the workload in a few words, for headings */
};

/* What was run: one result per cell (a single run is one cell without a plan). */
struct bench_outcome {
	unsigned ncells;
	struct bench_cell *cells;   /* NULL for a single run */
	struct bench_result *res;   /* ncells */
	bool *ran;                  /* ncells: false when skipped or not reached (error) */
	const char *kind;           /* "single", "sweep", "steady-state", "replay" */
	/* qd sweep */
	bool has_rating, rating_complete;
	double rating;
	/* steady state */
	bool ss_reached;
	unsigned ss_rounds;
	struct bench_steady ss;
	/* when and how long (the report's description) */
	time_t started;
	uint64_t wall_ns;
};

/* Parse argv into c; -1: help or list printed (exit 0); else 0 or an exit status. */
int bench_parse_args(int argc, char **argv, struct bench_cli *c);

void bench_print_human(FILE *f, const struct bench_cli *c, const struct bench_outcome *o);
void bench_print_json(FILE *f, const struct bench_cli *c, const struct bench_outcome *o);
void bench_print_csv(FILE *f, const struct bench_cli *c, const struct bench_outcome *o);
/* The HTML report of what was run, with the charts that fit it; 0 or -errno with err. */
int bench_write_html(const struct bench_cli *c, const struct bench_outcome *o, const char *path,
		     char *err, size_t errlen);
struct bench_report;
/* bench_html_charts.c: the chart sections of that report. */
int bench_html_charts(struct bench_report *r, const struct bench_cli *c,
		      const struct bench_outcome *o, char *err, size_t errlen);

/* Rates and totals of a result, for the table, JSON, CSV and the report. */
static inline double bench_per_s(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0;
}

static inline uint64_t bench_total_ios(const struct bench_result *r)
{
	return r->dir[0].ios + r->dir[1].ios;
}

static inline uint64_t bench_total_bytes(const struct bench_result *r)
{
	return r->dir[0].bytes + r->dir[1].bytes;
}

#endif
