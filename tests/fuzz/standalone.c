// SPDX-License-Identifier: MIT
/*
 * A bounded, deterministic fuzz driver for `make check` (no libFuzzer
 * needed): starts from valid superblocks, bitmaps and logs built with
 * liburaid, applies seeded random mutations (bit flips, byte sets, field
 * splices, truncation), and runs the target on each. With libFuzzer
 * (`make fuzz`) the same target runs coverage-guided instead.
 *
 *   fuzz_format [ITERATIONS [SEED]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/bitmap.h>
#include <uraid/superblock.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define INPUT_BYTES (8 + URAID_SB_BYTES)

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seeds: a valid 1.0/1.1/1.2 superblock each, a bitmap header, a full log. */
static void make_seed(unsigned kind, uint8_t *in)
{
	static struct uraid_sb sb;
	uint64_t dev = 65536;   /* 32 MiB */

	memset(in, 0, INPUT_BYTES);
	for (int i = 0; i < 8; i++)
		in[i] = (uint8_t)(dev >> (8 * i));
	if (kind < 3) {
		memset(&sb, 0, sizeof(sb));
		sb.magic = URAID_SB_MAGIC;
		sb.major_version = 1;
		sb.level = 5;
		sb.layout = 2;
		sb.raid_disks = 4;
		sb.chunksize = 128;
		sb.super_offset = uraid_sb_location(kind, dev);
		sb.data_offset = kind == 0 ? 0 : 2048;
		sb.data_size = kind == 0 ? sb.super_offset - 16 : dev - 2048;
		sb.size = sb.data_size & ~127ull;
		sb.max_dev = 128 + kind;   /* odd max_dev exercises the checksum tail */
		sb.resync_offset = URAID_MAX_SECTOR;
		sb.bblog_size = 8;
		sb.bblog_offset = kind == 0 ? -8 : 16;
		for (unsigned d = 0; d < URAID_SB_MAX_DEV; d++)
			sb.dev_roles[d] = d < 4 ? (uint16_t)d : URAID_ROLE_SPARE;
		uraid_sb_encode(&sb, in + 8);
	} else if (kind == 3) {
		struct uraid_bitmap_sb bm = {
			.magic = URAID_BITMAP_MAGIC, .version = 4, .sync_size = 61440,
			.chunksize = 64 << 20, .daemon_sleep = 5,
		};
		uraid_bitmap_encode(&bm, in + 8);
	} else {
		uraid_bblog_init(in + 8, URAID_SB_BYTES);
		for (int e = 0; e < 20; e++) {
			uint64_t v = uraid_bblog_entry(1000u * e, 8, 0);
			memcpy(in + 8 + 8 * e, &v, 8);
		}
	}
}

static void mutate(uint8_t *in, uint64_t *s)
{
	unsigned n = 1 + rng(s) % 8;
	/* most interesting bytes: the device size, the fixed part, the first roles */
	for (unsigned i = 0; i < n; i++) {
		unsigned pos = rng(s) % 4 ? (unsigned)(rng(s) % (8 + 256 + 64))
					  : (unsigned)(rng(s) % INPUT_BYTES);
		switch (rng(s) % 4) {
		case 0: in[pos] ^= (uint8_t)(1u << (rng(s) % 8)); break;
		case 1: in[pos] = (uint8_t)rng(s); break;
		case 2: in[pos] = (uint8_t[]){ 0, 0xff, 0x7f, 0x80, 1 }[rng(s) % 5]; break;
		default: {   /* an extreme 32-bit value at an aligned field */
			uint32_t v = (uint32_t[]){ 0, 0xffffffffu, 0x80000000u, 1920, 1921, 8 }[rng(s) % 6];
			pos &= ~3u;
			if (pos + 4 <= INPUT_BYTES)
				memcpy(in + pos, &v, 4);
		}
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 0) : 300000;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed2026;
	static uint8_t in[INPUT_BYTES];

	printf("fuzz_format: %lu iterations, seed 0x%" PRIx64 "\n", iterations, seed);
	fflush(stdout);
	uint64_t s = seed;
	for (unsigned long i = 0; i < iterations; i++) {
		make_seed((unsigned)(i % 5), in);
		mutate(in, &s);
		size_t len = rng(&s) % 16 ? INPUT_BYTES : (size_t)(rng(&s) % INPUT_BYTES);
		LLVMFuzzerTestOneInput(in, len);
	}
	printf("fuzz_format: done, no failure (seed 0x%" PRIx64 ")\n", seed);
	return 0;
}
