// SPDX-License-Identifier: MIT
/* Log-linear latency histogram (see histogram.h). */
#include <string.h>

#include "bench/histogram.h"

#define LINEAR (1u << HIST_LINEAR_BITS)
#define SUB    (1u << HIST_SUB_BITS)

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned hist_index(uint64_t ns)
{
	if (ns < LINEAR)
		return (unsigned)ns;
	unsigned k = 63u - (unsigned)__builtin_clzll(ns);    /* ns in [2^k, 2^(k+1)) */
	if (k >= HIST_MAX_BITS)
		return HIST_BUCKETS - 1;
	unsigned sub = (unsigned)(ns >> (k - HIST_SUB_BITS)) & (SUB - 1);
	return LINEAR + (k - HIST_LINEAR_BITS) * SUB + sub;
}

uint64_t hist_bucket_low(unsigned idx)
{
	if (idx < LINEAR)
		return idx;
	unsigned k = (idx - LINEAR) / SUB + HIST_LINEAR_BITS;
	uint64_t sub = (idx - LINEAR) % SUB;
	return (SUB + sub) << (k - HIST_SUB_BITS);
}

uint64_t hist_bucket_width(unsigned idx)
{
	if (idx < LINEAR)
		return 1;
	unsigned k = (idx - LINEAR) / SUB + HIST_LINEAR_BITS;
	return 1ull << (k - HIST_SUB_BITS);
}

void hist_record(struct hist *h, uint64_t ns)
{
	h->bucket[hist_index(ns)]++;
	h->count++;
	h->sum += ns;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	if (!h->count)
		return 0;
	/* nearest rank: the ceil(p/100 * n)-th smallest value (1-based) */
	long double want = (long double)p * (long double)h->count / 100.0L;
	uint64_t rank = want < 1 ? 1 : want >= h->count ? h->count : (uint64_t)want;
	if (rank < h->count && want - rank > 1e-9L)
		rank++;         /* ceil, ignoring the rounding error of p */
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen < rank)
			continue;
		uint64_t v = hist_bucket_low(i) + hist_bucket_width(i) / 2;
		if (v < h->min)
			v = h->min;
		if (v > h->max)
			v = h->max;
		return v;
	}
	return h->max;
}

uint64_t hist_mean(const struct hist *h)
{
	return h->count ? (uint64_t)(h->sum / h->count + 0.5L) : 0;
}
