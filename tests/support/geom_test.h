/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the geometry unit tests (header only, so nothing here is
 * linked into the other unit tests): a check counter that prints one line per
 * failing check, and a seeded generator (splitmix64) whose seed is printed
 * with every failure.
 */
#ifndef URAID_TEST_GEOM_TEST_H
#define URAID_TEST_GEOM_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <uraid/geom.h>

static long gt_checks, gt_failures;
static uint64_t gt_seed;                /* 0 = the test uses no randomness */

#define GT_MAX_PRINTED 60

#define GT_CHECK(cond, ...)                                                   \
	do {                                                                  \
		gt_checks++;                                                  \
		if (!(cond)) {                                                \
			if (++gt_failures <= GT_MAX_PRINTED) {                \
				printf("FAIL %s:%d: ", __FILE__, __LINE__);   \
				printf(__VA_ARGS__);                          \
				if (gt_seed)                                  \
					printf(" [seed 0x%" PRIx64 "]", gt_seed); \
				printf("\n");                                 \
			}                                                     \
		}                                                             \
	} while (0)

static inline uint64_t gt_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform-enough value in [lo, hi]. */
static inline uint64_t gt_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	return lo + gt_rand(state) % (hi - lo + 1);
}

static inline int gt_finish(const char *name)
{
	if (gt_failures > GT_MAX_PRINTED)
		printf("... %ld more failures not printed\n", gt_failures - GT_MAX_PRINTED);
	printf("%s: %ld checks, %ld failed%s\n", name, gt_checks, gt_failures,
	       gt_failures ? "" : ", all passed");
	return gt_failures ? 1 : 0;
}

/* A short description of a parameter set, for failure lines. */
static inline const char *gt_desc(const struct uraid_geom_params *p, char *buf, size_t len)
{
	snprintf(buf, len, "level=%d layout=0x%x disks=%u chunk=%u dev=%" PRIu64 "%s",
		 p->level, p->layout, p->raid_disks, p->chunk_sectors, p->dev_sectors,
		 p->raid0_layout_flag ? " flag0x1000" : "");
	return buf;
}

#endif
