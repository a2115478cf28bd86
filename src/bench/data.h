/* SPDX-License-Identifier: MIT */
/*
 * What the bench writes: random (incompressible) data by default, or, in
 * fio's words, --zero_buffers (all zeroes) or --buffer_pattern (a byte
 * pattern repeated from the start of every write buffer), for targets whose
 * speed depends on the data (compressing or deduplicating controllers).
 * Buffers are filled once before the run; --verify's block headers are
 * stamped over the pattern at each write, so checking is unchanged.
 */
#ifndef URAID_BENCH_DATA_H
#define URAID_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"

/*
 * fio's --buffer_pattern: "0x" and hex digits (bytes in the order written,
 * an even number of digits), or a string in double or single quotes. Into
 * pat (at most BENCH_MAX_PATTERN bytes); 0 or -EINVAL with the reason.
 */
int bench_parse_pattern(const char *s, uint8_t *pat, unsigned *len, char *err, size_t errlen);

/* Fill one write buffer of len bytes as w asks (seed: of the random data). */
void bench_fill_data(void *buf, size_t len, const struct bench_workload *w, uint64_t seed);

#endif
