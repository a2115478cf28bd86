// SPDX-License-Identifier: MIT
/*
 * The bench's latency histogram: bucket arithmetic (bounds, width at most
 * 1/128 of the value, monotonic), and percentiles, min, mean and max against
 * synthetic data whose nearest-rank percentiles are known exactly (computed
 * here by sorting), within 1 %, over a range past ten minutes; merging
 * per-worker histograms gives the same answers as one histogram.
 *
 *   test_histogram [SEED]
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bench/histogram.h"
#include "../support/check.h"

static const double pcts[] = { 0.001, 1, 10, 50, 90, 99, 99.9, 99.99, 99.999, 100 };
#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of sorted values, computed exactly with integers. */
static uint64_t exact(const uint64_t *sorted, uint64_t n, double p)
{
	/* rank = ceil(p * n / 100) with p given to 3 decimals: use p * 1000 as an integer */
	uint64_t p1000 = (uint64_t)(p * 1000 + 0.5);
	unsigned __int128 num = (unsigned __int128)p1000 * n;
	uint64_t rank = (uint64_t)((num + 100000 - 1) / 100000);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void check_against(const char *name, uint64_t *v, uint64_t n, struct hist *h)
{
	long double sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), cmp_u64);
	CHECK(h->count == n, "%s: count %" PRIu64 " != %" PRIu64, name, h->count, n);
	CHECK(h->min == v[0], "%s: min %" PRIu64 " != %" PRIu64, name, h->min, v[0]);
	CHECK(h->max == v[n - 1], "%s: max %" PRIu64 " != %" PRIu64, name, h->max, v[n - 1]);
	uint64_t mean = (uint64_t)(sum / n + 0.5L);
	CHECK(hist_mean(h) == mean, "%s: mean %" PRIu64 " != %" PRIu64, name, hist_mean(h), mean);
	for (size_t i = 0; i < NPCT; i++) {
		uint64_t want = exact(v, n, pcts[i]), got = hist_percentile(h, pcts[i]);
		double diff = got > want ? (double)(got - want) : (double)(want - got);
		double err = want ? diff / (double)want : (double)got;
		CHECK(err <= 0.01, "%s: p%g = %" PRIu64 ", exactly %" PRIu64 " (error %.3f %%)",
		      name, pcts[i], got, want, err * 100);
		/* the design bound is tighter: half a bucket, 1/256 */
		CHECK(err <= 1.0 / 256 + 1e-12, "%s: p%g error %.4f %% above 0.39 %%", name, pcts[i],
		      err * 100);
	}
	printf("ok %-28s n=%-9" PRIu64 " p50=%" PRIu64 " p99.999=%" PRIu64 " max=%" PRIu64 "\n",
	       name, n, hist_percentile(h, 50), hist_percentile(h, 99.999), h->max);
}

static void test_buckets(uint64_t seed)
{
	uint64_t s = seed;
	unsigned prev = 0;

	for (uint64_t v = 0; v < (1u << 20); v++) {
		unsigned i = hist_index(v);
		CHECK(i >= prev, "index not monotonic at %" PRIu64, v);
		prev = i;
		CHECK(hist_bucket_low(i) <= v && v < hist_bucket_low(i) + hist_bucket_width(i),
		      "%" PRIu64 " outside its bucket %u", v, i);
		if (v < 256)
			CHECK(hist_bucket_width(i) == 1, "%" PRIu64 " is not exact", v);
		else
			CHECK(hist_bucket_width(i) * 128 <= hist_bucket_low(i),
			      "bucket of %" PRIu64 " wider than 1/128", v);
	}
	for (int k = 0; k < 1000000; k++) {
		uint64_t v = rng_next(&s) >> (20 + rng_next(&s) % 44);
		unsigned i = hist_index(v);
		CHECK(i < HIST_BUCKETS, "index %u out of range", i);
		CHECK(hist_bucket_low(i) <= v && v < hist_bucket_low(i) + hist_bucket_width(i),
		      "%" PRIu64 " outside its bucket %u", v, i);
	}
	/* every bucket follows the previous one without a gap, up to the range's end */
	for (unsigned i = 1; i < HIST_BUCKETS; i++)
		CHECK(hist_bucket_low(i) == hist_bucket_low(i - 1) + hist_bucket_width(i - 1),
		      "gap before bucket %u", i);
	uint64_t top = hist_bucket_low(HIST_BUCKETS - 1) + hist_bucket_width(HIST_BUCKETS - 1);
	CHECK(top == 1ull << HIST_MAX_BITS, "range ends at %" PRIu64, top);
	CHECK(top >= 600ull * 1000000000ull, "range below ten minutes");
	CHECK(hist_index(UINT64_MAX) == HIST_BUCKETS - 1, "huge values not clamped");
}

static void run_case(const char *name, uint64_t n, uint64_t seed,
		     uint64_t (*gen)(uint64_t i, uint64_t *s))
{
	uint64_t *v = malloc(n * sizeof(*v));
	struct hist *h = malloc(sizeof(*h)), *part = malloc(4 * sizeof(*part)),
		    *merged = malloc(sizeof(*merged));
	uint64_t s = seed;

	if (!v || !h || !part || !merged) {
		CHECK(0, "out of memory");
		exit(1);
	}
	hist_init(h);
	hist_init(merged);
	for (int k = 0; k < 4; k++)
		hist_init(&part[k]);
	for (uint64_t i = 0; i < n; i++) {
		v[i] = gen(i, &s);
		hist_record(h, v[i]);
		hist_record(&part[i % 4], v[i]);
	}
	for (int k = 0; k < 4; k++)
		hist_merge(merged, &part[k]);
	CHECK(!memcmp(merged->bucket, h->bucket, sizeof(h->bucket)) && merged->count == h->count
	      && merged->min == h->min && merged->max == h->max,
	      "%s: merged histograms differ from one histogram", name);
	check_against(name, v, n, h);
	free(v);
	free(h);
	free(part);
	free(merged);
}

/* 1 .. n ns: p% is exactly ceil(p n / 100) */
static uint64_t gen_linear(uint64_t i, uint64_t *s) { (void)s; return i + 1; }
/* microseconds 1 .. 100 ms, shuffled by a multiplicative permutation */
static uint64_t gen_us(uint64_t i, uint64_t *s) { (void)s; return (i * 7919 % 100000 + 1) * 1000; }
/* log-uniform by octave from 128 ns to 2^40 ns (eighteen minutes) */
static uint64_t gen_log(uint64_t i, uint64_t *s)
{
	(void)i;
	unsigned k = 7 + (unsigned)(rng_next(s) % 33);
	return (1ull << k) + (rng_next(s) & ((1ull << k) - 1));
}
/* heavy tail (1/U): 1 us plus up to about 17 minutes */
static uint64_t gen_tail(uint64_t i, uint64_t *s)
{
	(void)i;
	return 1000 + 1000000000000ull / (1 + rng_next(s) % 1000000000ull);
}
/* 99.99 % at 80 µs, the rest at 10 minutes: the tail percentiles land on the stall */
static uint64_t gen_stall(uint64_t i, uint64_t *s)
{
	(void)s;
	return i % 10000 == 9999 ? 600ull * 1000000000ull : 80000;
}
/* small exact values only */
static uint64_t gen_small(uint64_t i, uint64_t *s) { (void)i; return rng_next(s) % 256; }

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240601;

	printf("seed %" PRIu64 "\n", seed);
	test_buckets(seed);
	run_case("linear 1..1e6 ns", 1000000, seed, gen_linear);
	run_case("1 us .. 100 ms", 100000, seed, gen_us);
	run_case("log-uniform 128 ns .. 18 min", 2000000, seed, gen_log);
	run_case("heavy tail to 17 min", 1000000, seed, gen_tail);
	run_case("stalls of 10 minutes", 1000000, seed, gen_stall);
	run_case("exact below 256 ns", 100000, seed, gen_small);

	struct hist h;
	hist_init(&h);
	CHECK(hist_percentile(&h, 50) == 0 && hist_mean(&h) == 0, "empty histogram not 0");
	hist_record(&h, UINT64_MAX / 2);
	CHECK(h.max == UINT64_MAX / 2 && hist_percentile(&h, 50) == UINT64_MAX / 2,
	      "a value past the range is not reported as the max");

	if (failures)
		fprintf(stderr, "%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
