/* SPDX-License-Identifier: MIT */
/*
 * The HTML report of one run of the benchmark method (method.h), built with
 * the report builder (report.h): what was run where (host, date, kernel,
 * version, command, targets, workload), the key figures, the charts that fit
 * the kind of run, and a table of every cell. The charts plot the same
 * figures the CLI's JSON prints, so a test can match one against the other.
 *
 * Functions return 0 or a negative errno with one line of context in err.
 */
#ifndef URAID_BENCH_REPORT_RUN_H
#define URAID_BENCH_REPORT_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/method.h"
#include "bench/report.h"

/* What the report says about the run besides the plan and its outcome. */
struct bench_run_about {
	const char *what;           /* the workload in a few words ("randread, 4 KiB") */
	const char *version;        /* of the program that ran it */
	int argc;                   /* the command line; argv[0] is shown as "uraid bench" */
	char *const *argv;
};

/* Cell i was measured over a window that is not empty: its rates can be charted. */
static inline bool bench_cell_charted(const struct bench_outcome *o, unsigned i)
{
	return bench_cell_measured(o, i) && o->res[i].runtime_ns;
}

/* Write the report of o (run from p) to path (replaced if it exists). */
int bench_report_run_write(const struct bench_runplan *p, const struct bench_outcome *o,
			   const struct bench_run_about *about, const char *path, char *err,
			   size_t errlen);

/*
 * report_run_charts.c: add to r the chart sections that fit the run: load
 * (queue depth or workers), scaling with drive count, the block size x mix
 * matrix, or the steady-state rounds; then latency percentiles and the
 * one-second time series.
 */
int bench_report_add_run_charts(struct bench_report *r, const struct bench_runplan *p,
				const struct bench_outcome *o, const char *what, char *err,
				size_t errlen);

/*
 * report_compare.c: the charts of --compare (a bar per configuration, a
 * chart per measure) and of the read-share and block-size sweeps; nothing
 * for other runs.
 */
int bench_report_add_compare_charts(struct bench_report *r, const struct bench_runplan *p,
				    const struct bench_outcome *o, const char *what, char *err,
				    size_t errlen);

/*
 * report_run_tables.c: the workload as run (what each worker does and its access
 * specification; what is the run's description, "profile database"), and the results
 * of every cell with CPU % (reads and writes apart when a cell mixes them).
 */
int bench_report_add_workload(struct bench_report *r, const struct bench_runplan *p,
			      const struct bench_outcome *o, const char *what, char *err,
			      size_t errlen);
int bench_report_add_results(struct bench_report *r, const struct bench_outcome *o, char *err,
			     size_t errlen);

#endif
