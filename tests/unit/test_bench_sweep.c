// SPDX-License-Identifier: MIT
/*
 * Sweep planning (axes parsed from --sweep, the 56-cell matrix of
 * workloads.md, drive counts with their JBOD baseline and the level's
 * minimum), the X-bit rating against a hand computation, and the SNIA
 * steady-state rule on synthetic rounds: flat and gently noisy series
 * converge, a 20 % spread or a steady climb does not, and random series are
 * judged exactly as a direct computation of the rule judges them. The
 * progress line's time left counts the current cell's rest and the cells after it.
 *
 *   test_bench_sweep [SEED]
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>

#include "bench/sweep.h"
#include "../support/check.h"

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void check_axes(void)
{
	struct bench_axes ax;
	struct bench_cell *c = NULL;
	unsigned n = 0;
	char err[200];

	memset(&ax, 0, sizeof(ax));
	CHECK(!bench_axes_parse("qd=1..256", &ax, err, sizeof(err)) && ax.nqd == 9 &&
	      ax.qd[8] == 256, "qd=1..256: %u values", ax.nqd);
	CHECK(!bench_axes_parse("threads=1,2,32", &ax, err, sizeof(err)) && ax.nthreads == 3,
	      "threads list");
	CHECK(!bench_plan(&ax, 0, 1, &c, &n, err, sizeof(err)) && n == 27 &&
	      c[0].threads == 1 && c[0].qd == 1 && c[26].threads == 32 && c[26].qd == 256 &&
	      !strcmp(c[1].label, "threads=1 qd=2"), "threads x qd: %u cells, '%s'", n,
	      c ? c[1].label : "");
	free(c);
	static const char *const bad[] = { "qd", "qd=", "qd=0", "qd=4..2", "qd=1,,2", "depth=4",
					   "qd=5000", "drives=1..100", "matrix=1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bench_axes b;
		memset(&b, 0, sizeof(b));
		CHECK(bench_axes_parse(bad[i], &b, err, sizeof(err)) == -22, "'%s' accepted", bad[i]);
	}

	memset(&ax, 0, sizeof(ax));
	CHECK(!bench_axes_parse("matrix", &ax, err, sizeof(err)), "matrix");
	CHECK(!bench_plan(&ax, 0, 1, &c, &n, err, sizeof(err)) && n == 56, "matrix: %u cells", n);
	unsigned seen_bs = 0, seen_mix = 0;
	for (unsigned i = 0; c && i < n; i++) {
		seen_bs += c[i].bs == 512 || c[i].bs == 1048576;
		seen_mix += c[i].read_pct == 65;
	}
	CHECK(seen_bs == 14 && seen_mix == 8, "matrix: 512 B and 1 MiB in 7 cells each, 65/35 "
	      "in 8 cells (got %u, %u)", seen_bs, seen_mix);
	free(c);

	memset(&ax, 0, sizeof(ax));
	CHECK(!bench_axes_parse("drives=1..4", &ax, err, sizeof(err)) && ax.ndrives == 4, "drives");
	CHECK(!bench_plan(&ax, URAID_LEVEL_6, 4, &c, &n, err, sizeof(err)) && n == 8, "drives cells");
	for (unsigned i = 0; c && i < n; i++) {
		CHECK(c[i].drives == i / 2 + 1 && c[i].jbod == (i % 2 == 0), "cell %u order", i);
		CHECK(!!c[i].skip[0] == (!c[i].jbod && c[i].drives < 4), "cell %s skip '%s'",
		      c[i].label, c[i].skip);
	}
	free(c);
	CHECK(bench_plan(&ax, URAID_LEVEL_5, 3, &c, &n, err, sizeof(err)) == -22,
	      "drives=1..4 with 3 DEVICEs accepted");
	ax.matrix = true;
	CHECK(bench_plan(&ax, URAID_LEVEL_5, 4, &c, &n, err, sizeof(err)) == -22,
	      "matrix with drives accepted");
}

static void check_rating(void)
{
	unsigned qd[] = { 1, 2, 4, 8, 16, 32, 64 };
	double iops[] = { 10000, 18000, 30000, 48000, 64000, 80000, 90000 };
	bool complete;
	double r = bench_xbit_rating(qd, iops, 7, &complete);
	/* 10000 + 9000 + 7500 + 6000 + 4000 + 2500: QD 64 does not count */
	CHECK(complete && r == 39000, "rating %.1f, complete %d", r, complete);
	r = bench_xbit_rating(qd, iops, 3, &complete);
	CHECK(!complete && r == 26500, "partial rating %.1f", r);
}

/* The rule computed directly: range and change of the fitted line across the window. */
static bool rule(const double *v)
{
	double mx = 2, sy = 0, sxy = 0, lo = v[0], hi = v[0];
	for (int i = 0; i < 5; i++) {
		sy += v[i];
		sxy += (i - mx) * v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	double avg = sy / 5, slope = sxy / 10;   /* sum (i - 2)^2 = 10 */
	double change = (slope < 0 ? -slope : slope) * 4;
	return hi - lo <= 0.2 * avg && change <= 0.1 * avg;
}

static void check_steady(uint64_t seed)
{
	struct bench_steady ev;
	double flat[] = { 100, 100, 100, 100, 100 };
	double noisy[] = { 50, 120, 100, 104, 97, 101, 99 };
	double spread[] = { 90, 110, 90, 110, 90 };            /* range 20 of mean 98: 20.4 % */
	double climb[] = { 90, 93, 96, 99, 102 };               /* range 12 %, change 12.4 % */

	CHECK(!bench_steady_check(flat, 4, &ev), "4 rounds are not enough");
	CHECK(bench_steady_check(flat, 5, &ev) && ev.avg == 100 && ev.range == 0, "flat");
	CHECK(!bench_steady_check(noisy, 5, &ev), "noisy start counted");
	CHECK(bench_steady_check(noisy, 7, &ev), "noisy, settled: range %.1f slope %.2f", ev.range,
	      ev.slope);
	CHECK(!bench_steady_check(spread, 5, &ev), "a 20.4 %% range passed");
	CHECK(!bench_steady_check(climb, 5, &ev) && ev.slope > 2.99 && ev.slope < 3.01,
	      "a climb passed (slope %.3f)", ev.slope);
	uint64_t s = seed;
	for (int k = 0; k < 10000; k++) {
		double v[5];
		for (int i = 0; i < 5; i++)
			v[i] = 1000 + (double)(rng_next(&s) % 300) + (k % 3) * 20.0 * i;
		CHECK(bench_steady_check(v, 5, &ev) == rule(v), "seed %" PRIu64 " case %d: %.0f %.0f "
		      "%.0f %.0f %.0f", seed, k, v[0], v[1], v[2], v[3], v[4]);
	}
}

/* The progress line's estimate: the rest of the current cell plus the cells after it. */
static void check_eta(void)
{
	double e;

	CHECK((e = bench_eta_s(1, 3, 10, 0)) == 30, "start of cell 1 of 3: %.1f s, not 30", e);
	CHECK((e = bench_eta_s(1, 3, 10, 4)) == 26, "4 s into cell 1 of 3: %.1f s, not 26", e);
	CHECK((e = bench_eta_s(3, 3, 10, 2)) == 8, "2 s into the last cell: %.1f s, not 8", e);
	CHECK((e = bench_eta_s(3, 3, 10, 12)) == 0, "an overrun last cell: %.1f s, not 0", e);
	CHECK((e = bench_eta_s(2, 3, 10, 12)) == 10, "an overrun cell 2 of 3: %.1f s, not 10", e);
	CHECK((e = bench_eta_s(1, 1, 5, 1)) == 4, "1 s into a single run of 5: %.1f s, not 4", e);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240609;

	printf("seed %" PRIu64 "\n", seed);
	check_axes();
	check_rating();
	check_steady(seed);
	check_eta();
	if (failures)
		fprintf(stderr, "%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
