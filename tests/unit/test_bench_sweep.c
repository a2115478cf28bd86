// SPDX-License-Identifier: MIT
/*
 * Sweep planning (axes parsed from --sweep, the 56-cell matrix of
 * workloads.md, drive counts with their JBOD baseline and the level's
 * minimum), the X-bit rating against a hand computation, and the SNIA
 * steady-state rule on synthetic rounds: flat and gently noisy series
 * converge, a 20 % spread or a steady climb does not, and random series are
 * judged exactly as a direct computation of the rule judges them. The
 * progress line's time left counts the current cell's rest and the cells after it.
 * The read-share and block-size sweeps parse and expand into the cells asked
 * for and set every access line; --compare's axes form their cross product,
 * and the configurations the members cannot make (RAID 6 on 3, a layout of
 * another level) or that repeat one (RAID 1's chunk) are skipped with the
 * reason.
 *
 *   test_bench_sweep [SEED]
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>

#include "bench/compare.h"
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

static void check_mix_and_bs(void)
{
	struct bench_axes ax;
	struct bench_cell *c = NULL;
	unsigned n = 0;
	char err[200];

	memset(&ax, 0, sizeof(ax));
	CHECK(!bench_axes_parse("rwmixread=100..0:10", &ax, err, sizeof(err)) && ax.nrwmix == 11,
	      "rwmixread=100..0:10: %u values (%s)", ax.nrwmix, err);
	for (unsigned i = 0; i < ax.nrwmix; i++)
		CHECK(ax.rwmix[i] == 100 - 10 * i, "rwmix[%u] = %u", i, ax.rwmix[i]);
	CHECK(!bench_axes_parse("rwmixread=0..100:30", &ax, err, sizeof(err)) && ax.nrwmix == 5 &&
	      ax.rwmix[0] == 0 && ax.rwmix[3] == 90 && ax.rwmix[4] == 100,
	      "0..100:30 ends on 100: %u values", ax.nrwmix);
	CHECK(!bench_axes_parse("rwmixread=70,30", &ax, err, sizeof(err)) && ax.nrwmix == 2 &&
	      ax.rwmix[1] == 30, "rwmixread list");
	CHECK(!bench_axes_parse("bs=512..1M", &ax, err, sizeof(err)) && ax.nbs == 12 &&
	      ax.bs[0] == 512 && ax.bs[3] == 4096 && ax.bs[11] == 1048576, "bs=512..1M: %u", ax.nbs);
	/* the --bs parser: "KiB", "KB" and a B suffix as --bs takes them */
	CHECK(!bench_axes_parse("bs=4KiB,8KB,1024B", &ax, err, sizeof(err)) && ax.nbs == 3 &&
	      ax.bs[0] == 4096 && ax.bs[1] == 8192 && ax.bs[2] == 1024, "bs=4KiB,8KB,1024B");
	memset(&ax, 0, sizeof(ax));
	CHECK(!bench_axes_parse("rwmixread=70,30", &ax, err, sizeof(err)), "rwmixread again");
	CHECK(!bench_axes_parse("bs=4k,64k", &ax, err, sizeof(err)) && ax.nbs == 2 &&
	      ax.bs[1] == 65536, "bs list");
	static const char *const bad[] = { "rwmixread=", "rwmixread=101", "rwmixread=100..0:0",
					   "rwmixread=-1", "rwmixread=50..", "bs=1000", "bs=4k..1k", "bs=3k..12k",
					   "bs=32M", "bs=", "bs=4q", "rwmixread=10,,20",
					   "bs=18014398509481984k" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bench_axes b;
		memset(&b, 0, sizeof(b));
		CHECK(bench_axes_parse(bad[i], &b, err, sizeof(err)) == -22, "'%s' accepted", bad[i]);
	}

	/* bs x rwmixread: every pair, block size the slow axis */
	CHECK(!bench_plan(&ax, 0, 1, &c, &n, err, sizeof(err)) && n == 4, "bs x mix: %u", n);
	CHECK(c && c[0].bs == 4096 && c[0].read_pct == 70 && c[3].bs == 65536 &&
	      c[3].read_pct == 30 && !c[0].matrix && !strcmp(c[1].label, "bs=4 KiB read=30%"),
	      "bs x mix cells: '%s'", c ? c[1].label : "");
	/* a cell sets every access line's size and read share, the rest stays */
	struct bench_workload wl0, wl;
	struct bench_targets tg0 = { 0 }, tg;
	memset(&wl0, 0, sizeof(wl0));
	wl0.nlines = 2;
	wl0.line[0] = (struct bench_access){ .bytes = 8192, .weight = 60, .read_pct = 100,
					     .random_pct = 100 };
	wl0.line[1] = (struct bench_access){ .bytes = 512, .weight = 40, .read_pct = 0,
					     .random_pct = 0, .align = 512 };
	bench_cell_apply(&c[1], &wl0, &tg0, &wl, &tg);
	CHECK(wl.nlines == 2 && wl.line[0].bytes == 4096 && wl.line[1].bytes == 4096 &&
	      wl.line[0].read_pct == 30 && wl.line[1].read_pct == 30 && wl.line[1].align == 0 &&
	      wl.line[0].weight == 60 && wl.line[1].random_pct == 0, "bs/mix cell applied");
	free(c);

	struct bench_axes mix;
	memset(&mix, 0, sizeof(mix));
	bench_axes_parse("rwmixread=100..0:50", &mix, err, sizeof(err));
	CHECK(!bench_plan(&mix, 0, 1, &c, &n, err, sizeof(err)) && n == 3 && c[2].bs == 0 &&
	      c[2].read_pct == 0 && !strcmp(c[1].label, "read=50%"), "mix alone: %u", n);
	bench_cell_apply(&c[1], &wl0, &tg0, &wl, &tg);
	CHECK(wl.line[0].bytes == 8192 && wl.line[1].bytes == 512 && wl.line[1].read_pct == 50,
	      "mix cell keeps sizes");
	free(c);
	CHECK(!bench_axes_parse("qd=1,2", &mix, err, sizeof(err)) &&
	      bench_plan(&mix, 0, 1, &c, &n, err, sizeof(err)) == -22, "qd with rwmixread planned");

	/* the matrix still makes one line */
	memset(&mix, 0, sizeof(mix));
	bench_axes_parse("matrix", &mix, err, sizeof(err));
	if (!bench_plan(&mix, 0, 1, &c, &n, err, sizeof(err))) {
		bench_cell_apply(&c[9], &wl0, &tg0, &wl, &tg);
		CHECK(c[9].matrix && wl.nlines == 1 && wl.line[0].bytes == c[9].bs &&
		      wl.line[0].read_pct == (uint32_t)c[9].read_pct && wl.line[0].random_pct == 100,
		      "matrix cell");
		free(c);
	}
}

static const char *const members4[] = { "a", "b", "c", "d" };

static void check_compare(void)
{
	struct bench_compare cmp;
	struct bench_cell *c = NULL;
	unsigned n = 0;
	char err[200];
	struct bench_targets tg0 = { .kind = BENCH_ARRAY, .paths = members4, .npaths = 3 };

	memset(&cmp, 0, sizeof(cmp));
	/* given chunk first: the axes still apply in the table's order, level first */
	CHECK(!bench_compare_parse("chunk=64K,128k", &cmp, err, sizeof(err)), "chunk: %s", err);
	CHECK(!bench_compare_parse("level=0,1,5,6", &cmp, err, sizeof(err)), "level: %s", err);
	CHECK(cmp.naxes == 2 && !strcmp(cmp.axis[0].key->name, "level") &&
	      cmp.axis[1].val[1].num == 128 && !strcmp(cmp.axis[1].val[0].text, "64 KiB"),
	      "axes in table order");
	CHECK(!bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) && n == 8,
	      "4 levels x 2 chunks: %u (%s)", n, err);
	static const char *const label[8] = {
		/* RAID 1 has no chunk: left out of its label, kept in its duplicate's */
		"raid0 chunk=64 KiB", "raid0 chunk=128 KiB", "raid1", "raid1 chunk=128 KiB",
		"raid5 chunk=64 KiB", "raid5 chunk=128 KiB", "raid6 chunk=64 KiB",
		"raid6 chunk=128 KiB",
	};
	for (unsigned i = 0; c && i < n; i++) {
		CHECK(c[i].compare && !strcmp(c[i].label, label[i]), "cell %u '%s'", i, c[i].label);
		bool want_skip = i == 3 || i >= 6;
		CHECK(!!c[i].skip[0] == want_skip, "cell %s skip '%s'", c[i].label, c[i].skip);
	}
	if (c && n == 8) {
		CHECK(strstr(c[3].skip, "same array as 'raid1'") &&
		      strstr(c[3].skip, "chunk"), "RAID 1's second chunk: '%s'", c[3].skip);
		CHECK(strstr(c[6].skip, "raid6 needs at least 4 members"), "RAID 6 on 3: '%s'",
		      c[6].skip);
		struct bench_workload wl0 = { 0 }, wl;
		struct bench_targets tg;
		char why[96];
		CHECK(!bench_compare_apply(&cmp, &c[5], &wl0, &tg0, &wl, &tg, why, sizeof(why)) &&
		      tg.level == URAID_LEVEL_5 && tg.chunk_kib == 128 && tg.npaths == 3 &&
		      tg.kind == BENCH_ARRAY && (tg.flags & BENCH_CREATE), "raid5 chunk=128k set up");
		CHECK(!bench_compare_apply(&cmp, &c[2], &wl0, &tg0, &wl, &tg, why, sizeof(why)) &&
		      tg.level == URAID_LEVEL_1 && tg.chunk_kib == 0, "raid1: no chunk");
	}
	free(c);

	/* members and layouts, with the level from --level */
	memset(&cmp, 0, sizeof(cmp));
	tg0.npaths = 4;
	tg0.flags = BENCH_CREATE;
	tg0.level = URAID_LEVEL_10;
	CHECK(!bench_compare_parse("members=2,3,4", &cmp, err, sizeof(err)) &&
	      !bench_compare_parse("layout=n2,f2,left-symmetric", &cmp, err, sizeof(err)),
	      "members, layout: %s", err);
	CHECK(!bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) && n == 9, "3 x 3: %u", n);
	for (unsigned i = 0; c && i < n; i++) {
		bool lsym = i % 3 == 2;
		CHECK(!!c[i].skip[0] == lsym, "cell %s skip '%s'", c[i].label, c[i].skip);
	}
	if (c && n == 9)
		CHECK(!strcmp(c[2].skip, "left-symmetric is not a raid10 layout") &&
		      !strcmp(c[4].label, "members=3 layout=f2"), "'%s' '%s'", c[2].skip, c[4].label);
	free(c);

	/* what is refused, before any run */
	CHECK(bench_compare_parse("members=5", &cmp, err, sizeof(err)) == -22, "members twice");
	memset(&cmp, 0, sizeof(cmp));
	bench_compare_parse("members=5", &cmp, err, sizeof(err));
	CHECK(bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) == -22 &&
	      strstr(err, "only 4 DEVICEs"), "5 of 4 members: %s", err);
	memset(&cmp, 0, sizeof(cmp));
	bench_compare_parse("chunk=64k", &cmp, err, sizeof(err));
	tg0.flags = 0;
	CHECK(bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) == -22 &&
	      strstr(err, "level"), "no level: %s", err);
	static const char *const bad[] = { "level=7", "level=", "level=5,5", "chunk=6k",
					   "chunk=0", "members=0", "members=x", "colour=red",
					   "level", "layout=", "chunk=18014398509481984M", "chunk=4G",
					   "chunk=64q" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bench_compare b;
		memset(&b, 0, sizeof(b));
		CHECK(bench_compare_parse(bad[i], &b, err, sizeof(err)) == -22, "'%s' accepted",
		      bad[i]);
	}
	/* --compare chunk= takes what --chunk takes: a plain number is KiB, KiB/MB suffixes */
	memset(&cmp, 0, sizeof(cmp));
	CHECK(!bench_compare_parse("chunk=64,128KiB,1MB", &cmp, err, sizeof(err)) &&
	      cmp.axis[0].val[0].num == 64 && cmp.axis[0].val[1].num == 128 &&
	      cmp.axis[0].val[2].num == 1024 && !strcmp(cmp.axis[0].val[2].text, "1 MiB"),
	      "chunk=64,128KiB,1MB: %s", err);

	/* a base --chunk one level cannot take skips that configuration, before any write */
	memset(&cmp, 0, sizeof(cmp));
	CHECK(!bench_compare_parse("level=0,5,10,1", &cmp, err, sizeof(err)), "levels: %s", err);
	tg0.flags = 0;
	tg0.npaths = 4;
	tg0.chunk_kib = 12;
	CHECK(!bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) && n == 4,
	      "levels with a 12 KiB chunk: %s", err);
	if (c && n == 4) {
		CHECK(!c[0].skip[0] && !c[3].skip[0], "raid0, raid1 run: '%s' '%s'", c[0].skip,
		      c[3].skip);
		CHECK(!strcmp(c[1].skip, "raid5 takes a power-of-two chunk, not 12 KiB") &&
		      !strcmp(c[2].skip, "raid10 takes a power-of-two chunk, not 12 KiB"),
		      "'%s' '%s'", c[1].skip, c[2].skip);
	}
	free(c);
	memset(&cmp, 0, sizeof(cmp));
	CHECK(!bench_compare_parse("level=5,10", &cmp, err, sizeof(err)), "levels: %s", err);
	CHECK(bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) == -22 &&
	      strstr(err, "no configuration can be made"), "nothing to run refused: %s", err);
	tg0.chunk_kib = 0;

	/* the configuration words of the CSV: only the axes that apply */
	memset(&cmp, 0, sizeof(cmp));
	CHECK(!bench_compare_parse("level=1,5", &cmp, err, sizeof(err)) &&
	      !bench_compare_parse("chunk=64k", &cmp, err, sizeof(err)), "level x chunk: %s", err);
	CHECK(!bench_compare_plan(&cmp, &tg0, &c, &n, err, sizeof(err)) && n == 2, "2: %s", err);
	if (c && n == 2) {
		char conf[96];
		bench_compare_config(&cmp, &c[0], conf, sizeof(conf));
		CHECK(!strcmp(conf, "level=raid1") && !strcmp(c[0].label, "raid1"), "raid1: '%s'",
		      conf);
		bench_compare_config(&cmp, &c[1], conf, sizeof(conf));
		CHECK(!strcmp(conf, "level=raid5;chunk=64 KiB"), "raid5: '%s'", conf);
	}
	free(c);

	for (unsigned i = 0; bench_compare_key_at(i); i++)
		CHECK(bench_compare_key_at(i)->parse && bench_compare_key_at(i)->apply,
		      "key %u has a parser and an apply", i);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240609;

	printf("seed %" PRIu64 "\n", seed);
	check_axes();
	check_rating();
	check_steady(seed);
	check_eta();
	check_mix_and_bs();
	check_compare();
	if (failures)
		fprintf(stderr, "%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
