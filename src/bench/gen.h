/* SPDX-License-Identifier: MIT */
/*
 * The I/O stream generator: which access line, read or write, random or
 * sequential, and a random offset. Pure computation on a per-worker state,
 * no I/O, so that tests can draw millions of I/Os from it directly.
 *
 * Shares are dealt from decks of 100 cards (a line appears weight times in
 * the line deck; a line's read/write deck holds read_pct read cards, its
 * random deck random_pct random cards), drawn by an incremental
 * Fisher-Yates shuffle: the order is random, and every 100 draws from a deck
 * hold each share exactly, so even short runs have the requested mix.
 */
#ifndef URAID_BENCH_GEN_H
#define URAID_BENCH_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/bench.h"

#define BENCH_DECK 100

struct bench_deck {
	uint8_t card[BENCH_DECK];
	uint8_t pos;
};

struct bench_gen {
	uint64_t rng;
	unsigned nlines;
	struct bench_access line[BENCH_MAX_LINES];  /* align resolved (never 0) */
	struct bench_deck pick;                     /* line indices */
	struct bench_deck rw[BENCH_MAX_LINES];      /* 1: write */
	struct bench_deck rnd[BENCH_MAX_LINES];     /* 1: random offset */
};

struct bench_choice {
	uint32_t len, align;
	uint8_t line;
	bool write, random;
};

static inline uint64_t bench_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform number below n (n >= 1), without a division. */
static inline uint64_t bench_rng_below(uint64_t *s, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)bench_rng_next(s) * n) >> 64);
}

/*
 * Set up g for the workload's lines (weights adding up to 100, checked by
 * the caller) with its own seed; default_align as in struct bench_workload.
 */
void bench_gen_init(struct bench_gen *g, const struct bench_access *line, unsigned nlines,
		    uint32_t default_align, uint64_t seed);

/* The next I/O's line, size, direction and kind. */
void bench_gen_choose(struct bench_gen *g, struct bench_choice *c);

/*
 * A random offset for c in [start, start + len): start + k * c->align with
 * the whole transfer inside. len >= c->len.
 */
static inline uint64_t bench_gen_random_offset(struct bench_gen *g, const struct bench_choice *c,
					       uint64_t start, uint64_t len)
{
	uint64_t slots = (len - c->len) / c->align + 1;
	return start + bench_rng_below(&g->rng, slots) * c->align;
}

#endif
