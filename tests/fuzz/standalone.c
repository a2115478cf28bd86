// SPDX-License-Identifier: MIT
/*
 * A bounded, deterministic fuzz driver for `make check` (no libFuzzer
 * needed), linked with each tests/fuzz/fuzz_*.c: starts from the target's
 * valid seeds (fuzz_seed), applies seeded random mutations (bit flips, byte
 * sets, extreme 32-bit values at aligned offsets, copies of one region over
 * another, truncation, random tails), and runs the target on each. With
 * libFuzzer (`make fuzz`) the same target runs coverage-guided instead.
 *
 *   fuzz_NAME [ITERATIONS [SEED]]
 *   fuzz_NAME --seeds DIR      write the valid seeds to DIR (libFuzzer's corpus)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void mutate(const struct fuzz_target *t, uint8_t *in, size_t len, uint64_t *s)
{
	static const uint32_t generic[] = { 0, 0xffffffffu, 0x80000000u, 1, 0x7fffffffu };
	const uint32_t *vals = t->nvalues32 ? t->values32 : generic;
	unsigned nvals = t->nvalues32 ? t->nvalues32 : sizeof(generic) / sizeof(generic[0]);
	size_t hot = t->hot_bytes && t->hot_bytes < len ? t->hot_bytes : len;
	unsigned n = 1 + rng(s) % 8;

	if (len == 0)
		return;
	for (unsigned i = 0; i < n; i++) {
		size_t pos = rng(s) % 4 ? (size_t)(rng(s) % hot) : (size_t)(rng(s) % len);
		switch (rng(s) % 5) {
		case 0: in[pos] ^= (uint8_t)(1u << (rng(s) % 8)); break;
		case 1: in[pos] = (uint8_t)rng(s); break;
		case 2: in[pos] = (uint8_t[]){ 0, 0xff, 0x7f, 0x80, 1 }[rng(s) % 5]; break;
		case 3: {   /* an extreme 32-bit value at an aligned field */
			uint32_t v = vals[rng(s) % nvals];
			pos &= ~(size_t)3;
			if (pos + 4 <= len)
				memcpy(in + pos, &v, 4);
			break;
		}
		default: {  /* copy a short region elsewhere (moves fields, repeats records) */
			size_t from = (size_t)(rng(s) % len), k = 1 + (size_t)(rng(s) % 32);
			if (from + k <= len && pos + k <= len)
				memmove(in + pos, in + from, k);
		}
		}
	}
}

/* --seeds DIR: write every seed kind to DIR/seed-N, a corpus for libFuzzer. */
static int dump_seeds(const struct fuzz_target *t, const char *dir)
{
	uint8_t *in = calloc(1, t->max_input);
	char path[4096];

	for (unsigned k = 0; in && k < t->seeds; k++) {
		memset(in, 0, t->max_input);
		size_t len = fuzz_seed(k, in, t->max_input);
		snprintf(path, sizeof(path), "%s/seed-%u", dir, k);
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(in, 1, len, f) != len || fclose(f)) {
			perror(path);
			return 1;
		}
	}
	free(in);
	return in ? 0 : 1;
}

int main(int argc, char **argv)
{
	const struct fuzz_target *t = &fuzz_target;
	if (argc > 2 && strcmp(argv[1], "--seeds") == 0)
		return dump_seeds(t, argv[2]);
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 0) : t->iterations;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed2026;
	uint8_t *in = malloc(t->max_input);

	if (!in)
		return 1;
	printf("%s: %lu iterations, seed 0x%" PRIx64 "\n", t->name, iterations, seed);
	fflush(stdout);
	uint64_t s = seed;
	for (unsigned long i = 0; i < iterations; i++) {
		memset(in, 0, t->max_input);
		size_t len = fuzz_seed((unsigned)(i % t->seeds), in, t->max_input);
		mutate(t, in, len, &s);
		unsigned r = (unsigned)(rng(&s) % 32);
		if (r < 2 && len)                      /* truncated */
			len = (size_t)(rng(&s) % len);
		else if (r == 2 && len < t->max_input) {   /* a random tail */
			size_t extra = 1 + (size_t)(rng(&s) % (t->max_input - len));
			for (size_t k = 0; k < extra; k++)
				in[len + k] = (uint8_t)rng(&s);
			len += extra;
		}
		LLVMFuzzerTestOneInput(in, len);
	}
	printf("%s: done, no failure (seed 0x%" PRIx64 ")\n", t->name, seed);
	free(in);
	return 0;
}
