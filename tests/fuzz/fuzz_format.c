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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
