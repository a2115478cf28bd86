// SPDX-License-Identifier: MIT
/*
 * The built-in profiles against reference/workloads.md section 1: the
 * table below is the article's, typed in independently of profiles.c. For
 * every profile, 1,000,000 I/Os are drawn from the generator (no I/O) and
 * each line's share of I/Os, block size, read share and random share must
 * be within 1 % of the definition (relative: the decks of gen.h make them
 * exact, so this is the stricter reading); offsets must be
 * aligned and inside the range. Also: the access line and bssplit parsers.
 *
 *   test_bench_profiles [SEED]
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/gen.h"
#include "../support/check.h"

#define N_IOS 1000000

struct want_line { uint32_t bytes; double pct; };
struct want {
	const char *name;
	double read_pct, random_pct;
	unsigned n;
	struct want_line line[10];
};

#define K 1024
static const struct want table[] = {
	{ "web-server", 100, 100, 10, { { 512, 22 }, { 1 * K, 15 }, { 2 * K, 8 }, { 4 * K, 23 },
	  { 8 * K, 15 }, { 16 * K, 2 }, { 32 * K, 6 }, { 64 * K, 7 }, { 128 * K, 1 },
	  { 512 * K, 1 } } },
	{ "database", 67, 100, 1, { { 8 * K, 100 } } },
	{ "exchange", 62, 100, 1, { { 32 * K, 100 } } },
	{ "file-server", 80, 100, 8, { { 512, 10 }, { 1 * K, 5 }, { 2 * K, 5 }, { 4 * K, 60 },
	  { 8 * K, 2 }, { 16 * K, 4 }, { 32 * K, 4 }, { 64 * K, 10 } } },
	{ "workstation", 80, 80, 1, { { 8 * K, 100 } } },
	{ "streaming-read", 100, 0, 3, { { 64 * K, 34 }, { 128 * K, 33 }, { 256 * K, 33 } } },
	{ "streaming-write", 0, 0, 3, { { 64 * K, 34 }, { 128 * K, 33 }, { 256 * K, 33 } } },
	{ "4k-random-read", 100, 100, 1, { { 4 * K, 100 } } },
	{ "4k-random-write", 0, 100, 1, { { 4 * K, 100 } } },
	{ "128k-seq-read", 100, 0, 1, { { 128 * K, 100 } } },
	{ "128k-seq-write", 0, 0, 1, { { 128 * K, 100 } } },
};
#define NPROF (sizeof(table) / sizeof(table[0]))

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

/* within 1 % of want (and within 0.01 points of 0) */
static bool near(double got, double want)
{
	double tol = want > 1 ? want / 100 : 0.01;
	return got >= want - tol && got <= want + tol;
}

static void check_profile(const struct want *w, uint64_t seed)
{
	const struct bench_profile *p = bench_profile_find(w->name);
	uint64_t ios[BENCH_MAX_LINES] = { 0 }, reads[BENCH_MAX_LINES] = { 0 };
	uint64_t randoms[BENCH_MAX_LINES] = { 0 }, bytes_of[BENCH_MAX_LINES] = { 0 };
	const uint64_t range = 1ull << 30;
	struct bench_gen *g = malloc(sizeof(*g));

	CHECK(p != NULL, "profile %s missing", w->name);
	if (!p || !g) {
		free(g);
		return;
	}
	CHECK(p->nlines == w->n, "%s: %u lines, want %u", w->name, p->nlines, w->n);
	bench_gen_init(g, p->line, p->nlines, 0, seed);
	for (uint64_t i = 0; i < N_IOS; i++) {
		struct bench_choice c;
		bench_gen_choose(g, &c);
		ios[c.line]++;
		reads[c.line] += !c.write;
		randoms[c.line] += c.random;
		bytes_of[c.line] = c.len;
		if (c.random) {
			uint64_t off = bench_gen_random_offset(g, &c, 4096, range);
			CHECK(off >= 4096 && off + c.len <= 4096 + range && (off - 4096) % c.align == 0,
			      "%s (seed %" PRIu64 "): offset %" PRIu64 " of %u bytes, align %u",
			      w->name, seed, off, c.len, c.align);
		}
	}
	/* every I/O of a line has the line's size; shares per line within 1 point */
	for (unsigned k = 0; k < w->n && k < p->nlines; k++) {
		double share = pct(ios[k], N_IOS);
		CHECK(bytes_of[k] == w->line[k].bytes, "%s line %u: %" PRIu64 " bytes, want %u",
		      w->name, k, bytes_of[k], w->line[k].bytes);
		CHECK(near(share, w->line[k].pct),
		      "%s (seed %" PRIu64 ") %u bytes: %.3f %% of I/Os, want %.0f %%", w->name,
		      seed, w->line[k].bytes, share, w->line[k].pct);
		double rd = pct(reads[k], ios[k]), rn = pct(randoms[k], ios[k]);
		CHECK(near(rd, w->read_pct),
		      "%s (seed %" PRIu64 ") %u bytes: %.3f %% reads, want %.0f %%", w->name, seed,
		      w->line[k].bytes, rd, w->read_pct);
		CHECK(near(rn, w->random_pct),
		      "%s (seed %" PRIu64 ") %u bytes: %.3f %% random, want %.0f %%", w->name,
		      seed, w->line[k].bytes, rn, w->random_pct);
	}
	printf("ok %-16s %u lines, 1e6 I/Os\n", w->name, p->nlines);
	free(g);
}

static void check_parsers(void)
{
	struct bench_access l[BENCH_MAX_LINES];
	bool hw[BENCH_MAX_LINES];
	unsigned n = 0;
	char err[200];

	CHECK(!bench_parse_access("4k,67,100,4k/60", &l[0], &hw[0], err, sizeof(err)), "%s", err);
	CHECK(l[0].bytes == 4096 && l[0].read_pct == 67 && l[0].random_pct == 100 &&
	      l[0].align == 4096 && l[0].weight == 60 && hw[0], "4k,67,100,4k/60 parsed wrong");
	CHECK(!bench_parse_access("64k,0,0", &l[1], &hw[1], err, sizeof(err)), "%s", err);
	CHECK(l[1].bytes == 65536 && !l[1].read_pct && !l[1].align && !hw[1], "64k,0,0 wrong");
	n = 2;
	CHECK(!bench_access_finish(l, hw, &n, err, sizeof(err)) && n == 2 && l[1].weight == 40,
	      "the line without a weight gets the rest (40), got %u", l[1].weight);
	static const char *const bad[] = { "4k", "4k,67", "4k,101,0", "4k,50,50,1000",
					   "4k,50,50/101", "1000,50,50", "4k,50,x", "4k,1,2,3,4",
					   "", ",50,50" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = bench_parse_access(bad[i], &l[0], &hw[0], err, sizeof(err));
		CHECK(rc == -22 && err[0], "access line '%s' accepted", bad[i]);
	}
	hw[0] = hw[1] = true;
	l[0].weight = 60;
	l[1].weight = 30;
	n = 2;
	CHECK(bench_access_finish(l, hw, &n, err, sizeof(err)) == -22, "60 + 30 accepted");
	CHECK(!bench_parse_bssplit("4k/50:64k", l, &n, err, sizeof(err)) && n == 2 &&
	      l[0].weight == 50 && l[1].weight == 50 && l[1].bytes == 65536, "bssplit 4k/50:64k");
	CHECK(bench_parse_bssplit("4k/50:64k/60", l, &n, err, sizeof(err)) == -22,
	      "bssplit adding up to 110 accepted");
	CHECK(bench_profile_find("nonesuch") == NULL, "unknown profile found");
	unsigned np = 0;
	while (bench_profile_at(np))
		np++;
	CHECK(np == NPROF, "%u profiles, want %zu", np, NPROF);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240607;

	printf("seed %" PRIu64 "\n", seed);
	check_parsers();
	for (size_t i = 0; i < NPROF; i++)
		check_profile(&table[i], seed + i);
	if (failures)
		fprintf(stderr, "%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
