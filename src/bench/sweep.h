/* SPDX-License-Identifier: MIT */
/*
 * Runs of several cells: sweeps over queue depth, threads x queue depth,
 * the 56-cell block size x read/write mix matrix, and drive count (an array
 * of the chosen level on the first 1..N members, plus the JBOD baseline of
 * the same members); the X-bit rating of a queue-depth sweep; and the SNIA
 * steady-state rule over rounds. Planning and arithmetic only: the caller
 * runs each cell with bench_run.
 */
#ifndef URAID_BENCH_SWEEP_H
#define URAID_BENCH_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"

#define BENCH_SWEEP_MAX 64          /* values of one axis */

/*
 * The axes asked for (--sweep may be given for qd and threads together, and
 * for bs and rwmixread together: every pair).
 */
struct bench_axes {
	unsigned nqd, nthreads, ndrives, nbs, nrwmix;
	unsigned qd[BENCH_SWEEP_MAX], threads[BENCH_SWEEP_MAX], drives[BENCH_SWEEP_MAX];
	uint32_t bs[BENCH_SWEEP_MAX];       /* bytes */
	unsigned rwmix[BENCH_SWEEP_MAX];    /* read share in %, 0..100 */
	bool matrix;
};

#define BENCH_COMPARE_MAX_KEYS 6    /* --compare options (compare.h) */

/* One cell: what differs from the base workload and targets (0: unchanged). */
struct bench_cell {
	unsigned qd, threads;
	uint32_t bs;                /* matrix, bs sweep: block size */
	int read_pct;               /* matrix, rwmixread sweep: read share; -1 unchanged */
	bool matrix;                /* a matrix cell: one access line of bs and read_pct */
	bool compare;               /* a configuration of --compare: its values in cmp */
	uint8_t cmp[BENCH_COMPARE_MAX_KEYS];    /* index of the value of each compare axis */
	uint8_t cmp_unused;         /* bit a: axis a does not apply to this configuration (a
				       chunk on RAID 1): left out of its label and config */
	unsigned drives;            /* drives sweep: members used */
	bool jbod;                  /* drives sweep: the raw baseline of those members */
	char label[64];             /* "qd=4", "threads=2 qd=8", "bs=4 KiB read=65%", "raid5 x3" */
	char skip[96];              /* non-empty: not run, and why */
};

/* The matrix of workloads.md: 8 block sizes x 7 read shares. */
#define BENCH_MATRIX_NBS  8
#define BENCH_MATRIX_NMIX 7
extern const uint32_t bench_matrix_bs[BENCH_MATRIX_NBS];
extern const unsigned bench_matrix_read_pct[BENCH_MATRIX_NMIX];
/* ... run by two workers at QD 32 each (the review method's defaults) */
#define BENCH_MATRIX_WORKERS 2
#define BENCH_MATRIX_IODEPTH 32

/*
 * Add one --sweep argument to ax: "qd=1,2,4", "qd=1..256" (powers of two),
 * "threads=1..32", "matrix", "drives=1..N" or "drives=2,4",
 * "rwmixread=100..0:10" (A to B in steps, either way; default step 10) or
 * "rwmixread=100,70,0", "bs=512..1M" (A a power of two, doubled up to B;
 * sizes as --bs takes them: common/size_parse.h) or "bs=4k,64k"; 0 or
 * -EINVAL.
 */
int bench_axes_parse(const char *arg, struct bench_axes *ax, char *err, size_t errlen);

/*
 * The cells of ax, in run order, into a new array (free()); for drives,
 * level is the array's (members beyond npaths refused), JBOD cell first.
 */
int bench_plan(const struct bench_axes *ax, int level, unsigned npaths,
	       struct bench_cell **cells, unsigned *ncells, char *err, size_t errlen);

/*
 * The cell's workload and targets from the base ones. A bs or rwmixread
 * cell sets the size or read share of every access line; a matrix cell
 * makes one line (the base's first line's random share). A compare cell's
 * configuration is compare.h's (bench_compare_apply), not set here.
 */
void bench_cell_apply(const struct bench_cell *c, const struct bench_workload *wl0,
		      const struct bench_targets *tg0, struct bench_workload *wl,
		      struct bench_targets *tg);

/*
 * X-bit labs' rating: the sum over QD in {1,2,4,8,16,32} of IOPS(QD)/QD,
 * from the cells measured (n pairs); *complete when all six were.
 */
double bench_xbit_rating(const unsigned *qd, const double *iops, unsigned n, bool *complete);

/*
 * Seconds left of a run of ncells cells of cell_s seconds each, in_cell_s
 * into cell (1-based): the rest of this cell and every cell after it.
 */
double bench_eta_s(unsigned cell, unsigned ncells, double cell_s, double in_cell_s);

/* SNIA PTS steady state over the last window rounds of y (n rounds so far). */
#define BENCH_SS_WINDOW     5
#define BENCH_SS_RANGE_PCT  20
#define BENCH_SS_SLOPE_PCT  10
#define BENCH_SS_MAX_ROUNDS 25
struct bench_steady {
	bool reached;
	double avg;                 /* of the window */
	double range;               /* max - min in the window */
	double slope;               /* of the least-squares line, per round */
	double excursion;           /* |slope| x (window - 1): change of the fit across it */
};
/* Evaluate the rule on the last BENCH_SS_WINDOW of y[0..n); false while n < window. */
bool bench_steady_check(const double *y, unsigned n, struct bench_steady *ev);

#endif
