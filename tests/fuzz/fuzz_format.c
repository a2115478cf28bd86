// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the on-disk parsers that read untrusted bytes: superblock
 * decode/validate/checksum, bitmap header decode/validate, bad-block log
 * decode. Properties besides "no crash, no sanitizer report": a superblock
 * that validates re-encodes to bytes that decode to the same fields and
 * validate again.
 *
 * Input: 8 bytes of device size (sectors, little-endian), then the bytes of
 * the superblock block (zero-padded to 4 KiB); the same bytes serve as bitmap
 * header and bad-block log.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/bitmap.h>
#include <uraid/superblock.h>

#include "fuzz.h"

#define INPUT_BYTES (8 + URAID_SB_BYTES)

static const uint32_t values32[] = { 0, 0xffffffffu, 0x80000000u, 1920, 1921, 8 };

/* Seeds: a valid 1.0/1.1/1.2 superblock each, a bitmap header, a full log;
 * mutations favour the device size, the fixed part and the first roles. */
const struct fuzz_target fuzz_target = {
	.name = "fuzz_format", .seeds = 5, .max_input = INPUT_BYTES,
	.hot_bytes = 8 + 256 + 64, .iterations = 300000,
	.values32 = values32, .nvalues32 = sizeof(values32) / sizeof(values32[0]),
};

size_t fuzz_seed(unsigned kind, uint8_t *in, size_t cap)
{
	static struct uraid_sb sb;   /* static: large; the driver is single-threaded */
	uint64_t dev = 65536;   /* 32 MiB */

	if (cap < INPUT_BYTES)
		return 0;
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
	return INPUT_BYTES;
}

static void check_superblock(const uint8_t *buf, uint64_t dev_sectors)
{
	static struct uraid_sb sb, again;   /* static: large; the target is single-threaded */
	static uint8_t out[URAID_SB_BYTES];
	char err[256];

	(void)uraid_sb_checksum(buf);
	if (uraid_sb_decode(buf, &sb) != 0)
		return;
	(void)uraid_sb_role(&sb);
	for (unsigned minor = 0; minor < 3; minor++) {
		if (uraid_sb_validate(buf, minor, dev_sectors, err, sizeof(err)) != 0) {
			if (!err[0] || !memchr(err, 0, sizeof(err)))
				abort();   /* every refusal says why */
			continue;
		}
		/* A valid superblock re-encodes to the same bytes (the part md sums). */
		uraid_sb_encode(&sb, out);
		size_t n = URAID_SB_FIXED_BYTES + 2 * (size_t)sb.max_dev;

		if (memcmp(out, buf, n) != 0 || uraid_sb_decode(out, &again) != 0 ||
		    uraid_sb_validate(out, minor, dev_sectors, err, sizeof(err)) != 0)
			abort();
	}
}

static void check_bitmap(const uint8_t *buf)
{
	struct uraid_bitmap_sb bm;
	char err[256];
	uint8_t uuid[16] = { 0 };

	if (uraid_bitmap_decode(buf, &bm) != 0)
		return;
	if (uraid_bitmap_validate(&bm, uuid, err, sizeof(err)) == 0 &&
	    uraid_bitmap_validate(&bm, NULL, err, sizeof(err)) != 0)
		abort();
	(void)uraid_bitmap_bits(bm.sync_size, bm.chunksize ? bm.chunksize : 512);
	/* bits of the rest of the block: stay inside it */
	(void)uraid_bitmap_count(buf, (URAID_SB_BYTES - URAID_BITMAP_HEADER_BYTES) * 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[URAID_SB_BYTES];
	struct uraid_bb bb[512];
	uint64_t dev_sectors = 0;

	if (size < 8)
		return 0;
	for (int i = 0; i < 8; i++)
		dev_sectors |= (uint64_t)data[i] << (8 * i);
	data += 8, size -= 8;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));

	check_superblock(buf, dev_sectors);
	check_bitmap(buf);
	for (unsigned shift = 0; shift < 12; shift += 3)
		(void)uraid_bblog_decode(buf, sizeof(buf), shift, bb, 512);
	return 0;
}
