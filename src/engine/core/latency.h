/* SPDX-License-Identifier: MIT */
/*
 * The request latency histogram (uraid_latency_hist in include/uraid/engine.h):
 * each reactor counts the requests it completes in its own copy, inside
 * the array's per-reactor counters; only that reactor writes it (relaxed
 * loads and stores, no read-modify-write shared between threads), and a
 * reader sums the copies.
 */
#ifndef URAID_ENGINE_LATENCY_H
#define URAID_ENGINE_LATENCY_H

#include <stdatomic.h>
#include <stdint.h>

#include <uraid/engine.h>

struct latency_counts {
	_Atomic uint64_t count[URAID_LATENCY_KINDS][URAID_LATENCY_BUCKETS];
	_Atomic uint64_t sum_ns[URAID_LATENCY_KINDS];
};

/*
 * The bucket a request of ns nanoseconds is counted in (inline: it is on
 * the I/O path). Bucket b holds times t with 2^(b-1) us < t <= 2^b us
 * (bucket 0: t <= 1 us): the bound is inclusive, as Prometheus' "le" is.
 * Whole microseconds rounded up, then the position of the highest bit of
 * (us - 1).
 */
static inline unsigned uraid_latency_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000u + (ns % 1000u != 0);
	unsigned b = us <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(us - 1);
	return b < URAID_LATENCY_BUCKETS - 1 ? b : URAID_LATENCY_BUCKETS - 1;
}

/* On the owning reactor: one request of kind took ns. */
static inline void latency_note(struct latency_counts *lc, enum uraid_latency_kind kind,
				uint64_t ns)
{
	_Atomic uint64_t *b = &lc->count[kind][uraid_latency_bucket(ns)];
	atomic_store_explicit(b, atomic_load_explicit(b, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&lc->sum_ns[kind],
			      atomic_load_explicit(&lc->sum_ns[kind], memory_order_relaxed) + ns,
			      memory_order_relaxed);
}

/* Add n reactors' counts into h (which the caller zeroed). */
void latency_sum(const struct latency_counts *const *per, unsigned n,
		 struct uraid_latency_hist *h);

#endif
