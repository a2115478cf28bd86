// SPDX-License-Identifier: MIT
/*
 * Request latency buckets (latency.h): the buckets' bounds, and the sum
 * over reactors a reader asks for.
 */
#include "engine/core/latency.h"

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
