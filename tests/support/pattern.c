// SPDX-License-Identifier: MIT
#include <string.h>

#include "pattern.h"

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void test_pattern(uint64_t seed, uint64_t sector, uint64_t nsect, uint8_t *out)
{
	for (uint64_t i = 0; i < nsect; i++) {
		uint64_t s = seed ^ ((sector + i) * 0x2545f4914f6cdd1dull);
		for (int k = 0; k < 64; k++) {
			uint64_t v = splitmix(&s);
			memcpy(out + i * 512 + k * 8, &v, 8);
		}
	}
}
