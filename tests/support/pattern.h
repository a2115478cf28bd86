/* SPDX-License-Identifier: MIT */
/*
 * The referee tests' data pattern: every 512-byte sector of an array gets
 * pseudo-random content derived from (seed, sector number) alone, so any
 * tool can produce or check any part of it independently.
 */
#ifndef URAID_TESTS_PATTERN_H
#define URAID_TESTS_PATTERN_H

#include <stdint.h>

/* Fill out with the content of array sectors [sector, sector + nsect). */
void test_pattern(uint64_t seed, uint64_t sector, uint64_t nsect, uint8_t *out);

#endif
