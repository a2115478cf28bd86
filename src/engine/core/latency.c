// SPDX-License-Identifier: MIT
/*
 * Request latency buckets (latency.h): which bucket a time falls in, the
 * buckets' bounds, and the sum over reactors a reader asks for.
 */
#include "engine/core/latency.h"

/*
 * Bucket b holds times t with 2^(b-1) us < t <= 2^b us (bucket 0: t <= 1 us):
 * the bound is inclusive, as Prometheus' "le" is. Whole microseconds
 * rounded up, then the position of the highest bit of (us - 1).
 */
unsigned uraid_latency_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000u + (ns % 1000u != 0);
	unsigned b = us <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(us - 1);
	return b < URAID_LATENCY_BUCKETS - 1 ? b : URAID_LATENCY_BUCKETS - 1;
}

uint64_t uraid_latency_bucket_le_ns(unsigned b)
{
	if (b >= URAID_LATENCY_BUCKETS - 1)
		return UINT64_MAX;
	return 1000ull << b;
}

const char *uraid_latency_kind_name(enum uraid_latency_kind kind)
{
	switch (kind) {
	case URAID_LATENCY_READ: return "read";
	case URAID_LATENCY_WRITE: return "write";
	case URAID_LATENCY_OTHER: return "other";
	default: return "?";
	}
}

void latency_sum(const struct latency_counts *const *per, unsigned n,
		 struct uraid_latency_hist *h)
{
	for (unsigned r = 0; r < n; r++) {
		for (unsigned k = 0; k < URAID_LATENCY_KINDS; k++) {
			for (unsigned b = 0; b < URAID_LATENCY_BUCKETS; b++)
				h->count[k][b] += atomic_load_explicit(&per[r]->count[k][b],
								       memory_order_relaxed);
			h->sum_ns[k] += atomic_load_explicit(&per[r]->sum_ns[k],
							     memory_order_relaxed);
		}
	}
}
