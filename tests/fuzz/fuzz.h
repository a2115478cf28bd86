/* SPDX-License-Identifier: MIT */
/*
 * What a fuzz target (tests/fuzz/fuzz_*.c) provides besides
 * LLVMFuzzerTestOneInput, for the bounded seeded driver (standalone.c) that
 * runs it in `make check`. Under libFuzzer (`make fuzz`) these are unused.
 */
#ifndef URAID_TESTS_FUZZ_H
#define URAID_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

struct fuzz_target {
	const char *name;
	unsigned seeds;            /* kinds of valid input fuzz_seed builds: 0 .. seeds-1 */
	size_t max_input;          /* the largest input, bytes */
	size_t hot_bytes;          /* 3 of 4 mutations hit the first hot_bytes (0: anywhere) */
	unsigned long iterations;  /* default iteration count of the driver */
	const uint32_t *values32;  /* extreme 32-bit values to plant at aligned offsets */
	unsigned nvalues32;
};

extern const struct fuzz_target fuzz_target;

/* Write a valid input of the given kind into buf (cap >= max_input bytes);
 * return its length. */
size_t fuzz_seed(unsigned kind, uint8_t *buf, size_t cap);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
