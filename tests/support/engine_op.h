/* SPDX-License-Identifier: MIT */
/*
 * Shared by the unit tests that drive an engine array asynchronously: the
 * seeded generator they draw from (splitmix64) and a request that records
 * its result for the thread that waits on it.
 */
#ifndef URAID_TESTS_ENGINE_OP_H
#define URAID_TESTS_ENGINE_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <uraid/engine.h>

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill len bytes (a multiple of 8) from the generator. */
static inline void rng_fill(uint64_t *s, uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rng_next(s);
		memcpy(p + i, &v, 8);
	}
}

/* io.ctx must point at the op; done turns true (release) when io completes. */
struct op {
	struct uraid_io io;
	uint8_t *buf;
	int result;
	bool done;
};

static inline void op_done(struct uraid_io *io, int res)
{
	struct op *o = io->ctx;
	o->result = res;
	__atomic_store_n(&o->done, true, __ATOMIC_RELEASE);
}

#endif
