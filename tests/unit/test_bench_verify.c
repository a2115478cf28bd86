// SPDX-License-Identifier: MIT
/*
 * --verify's block headers: stamped blocks check clean; a flipped bit
 * anywhere in a block, a block at the wrong offset, an older write (stale
 * sequence number), another run's seed, a missing header (strict) and
 * another unit size are each reported with the offset. The crc is crc32c
 * (checked against the well-known value of "123456789").
 *
 *   test_bench_verify [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "bench/verify.h"
#include "../support/check.h"

#define UNIT 512u
#define LEN  (8 * UNIT)

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int check(const uint8_t *buf, uint64_t off, const uint32_t *exp, bool strict, char *msg)
{
	uint64_t n = 0;
	return bench_verify_check(buf, LEN, UNIT, off, 42, exp, strict, &n, msg, 240);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240608, s = seed;
	uint8_t buf[LEN], copy[LEN];
	uint32_t exp[LEN / UNIT];
	char msg[240];
	const uint64_t off = 1 << 20;

	printf("seed %" PRIu64 "\n", seed);
	/* crc32c check value (RFC 3720 / the Castagnoli polynomial) */
	CHECK((crc32_iscsi((unsigned char *)"123456789", 9, 0xffffffffu) ^ 0xffffffffu) == 0xe3069283,
	      "crc32_iscsi is not crc32c");
	for (size_t i = 0; i < LEN; i++)
		buf[i] = (uint8_t)rng_next(&s);
	bench_verify_stamp(buf, LEN, UNIT, off, 7, 42);
	for (unsigned i = 0; i < LEN / UNIT; i++)
		exp[i] = 7;
	uint64_t n = 0;
	CHECK(!bench_verify_check(buf, LEN, UNIT, off, 42, exp, false, &n, msg, sizeof(msg)) &&
	      n == LEN / UNIT, "clean blocks: %s (%" PRIu64 " checked)", msg, n);
	CHECK(!check(buf, off, NULL, true, msg), "strict, clean: %s", msg);

	/* a flipped bit in 200 random places: always caught, at the right block */
	for (int k = 0; k < 200; k++) {
		memcpy(copy, buf, LEN);
		size_t at = (size_t)(rng_next(&s) % LEN);
		copy[at] ^= (uint8_t)(1u << (rng_next(&s) % 8));
		int rc = check(copy, off, exp, false, msg);
		char want[64];
		snprintf(want, sizeof(want), "offset %" PRIu64 ":", off + at / UNIT * UNIT);
		CHECK(rc == -EILSEQ && strstr(msg, want), "bit flip at byte %zu (seed %" PRIu64
		      "): rc %d, '%s'", at, seed, rc, msg);
	}
	/* block 3 holds block 1's data: a misdirected write */
	memcpy(copy, buf, LEN);
	memcpy(copy + 3 * UNIT, buf + UNIT, UNIT);
	CHECK(check(copy, off, exp, false, msg) == -EILSEQ && strstr(msg, "found the one for"),
	      "misplaced block: '%s'", msg);
	/* an older write of block 2 (seq 5, expected 7): a lost write */
	memcpy(copy, buf, LEN);
	bench_verify_stamp(copy + 2 * UNIT, UNIT, UNIT, off + 2 * UNIT, 5, 42);
	CHECK(check(copy, off, exp, false, msg) == -EILSEQ && strstr(msg, "sequence number 7") &&
	      strstr(msg, "found 5"), "stale block: '%s'", msg);
	/* not written by this run: not checked, unless strict */
	uint32_t none[LEN / UNIT] = { 0 };
	memset(copy, 0, LEN);
	CHECK(!check(copy, off, none, false, msg), "unwritten blocks checked: %s", msg);
	CHECK(check(copy, off, NULL, true, msg) == -EILSEQ && strstr(msg, "magic"),
	      "strict, no header: '%s'", msg);
	/* another seed, another unit */
	memcpy(copy, buf, LEN);
	bench_verify_stamp(copy, LEN, UNIT, off, 7, 43);
	CHECK(check(copy, off, exp, false, msg) == -EILSEQ && strstr(msg, "seed"),
	      "other seed: '%s'", msg);
	bench_verify_stamp(copy, LEN, 2 * UNIT, off, 7, 42);
	CHECK(check(copy, off, exp, false, msg) == -EILSEQ && strstr(msg, "1024 bytes"),
	      "other unit: '%s'", msg);
	if (failures)
		fprintf(stderr, "%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
