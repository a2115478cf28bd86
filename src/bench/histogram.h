/* SPDX-License-Identifier: MIT */
/*
 * A log-linear latency histogram in the manner of HdrHistogram: values in
 * nanoseconds, exact below 256 ns, then 128 equal buckets per power of two,
 * so a bucket is at most 1/128 of its value wide and a percentile (reported
 * at the bucket's middle) is within 0.4 % of the true value. The range is
 * 2^44 ns (about 4.9 hours); larger values count in the last bucket. Fixed
 * size, O(1) recording, no allocation; one per worker, merged at the end.
 */
#ifndef URAID_BENCH_HISTOGRAM_H
#define URAID_BENCH_HISTOGRAM_H

#include <stdint.h>

#define HIST_LINEAR_BITS 8                  /* values below 256 ns are exact */
#define HIST_SUB_BITS    7                  /* 128 buckets per power of two above */
#define HIST_MAX_BITS    44                 /* range: [0, 2^44) ns */
#define HIST_BUCKETS     ((1u << HIST_LINEAR_BITS) + \
			  (HIST_MAX_BITS - HIST_LINEAR_BITS) * (1u << HIST_SUB_BITS))

struct hist {
	uint64_t count;
	uint64_t min, max;          /* exact; min is UINT64_MAX while empty */
	long double sum;            /* for the exact mean */
	uint64_t bucket[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t ns);
/* Add src's values to dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * The value at percentile p (0 < p <= 100) by the nearest-rank rule: the
 * smallest recorded value with at least p % of the values at or below it,
 * approximated by its bucket's middle (clamped to min and max). 0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);
uint64_t hist_mean(const struct hist *h);

/* Bucket arithmetic, exposed for tests. */
unsigned hist_index(uint64_t ns);
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_width(unsigned idx);

#endif
