/* SPDX-License-Identifier: MIT */
/*
 * Test fixtures for src/format: a seeded RNG and superblocks shaped like the
 * ones mdadm writes, for each of 1.0 / 1.1 / 1.2.
 */
#ifndef URAID_TESTS_FORMAT_FIXTURE_H
#define URAID_TESTS_FORMAT_FIXTURE_H

#include <stdint.h>

#include "uraid/superblock.h"
#include "uraid/bitmap.h"

/* splitmix64; never seeded from the clock. */
uint64_t format_rng_next(uint64_t *state);

/*
 * A consistent member superblock as mdadm would create it: RAID5 of 4,
 * 512 KiB chunk, dev_number = role = 1, events 0, clean, max_dev as given
 * (128 when 0), bad-block log of 8 sectors, and (with_bitmap) an internal
 * bitmap of 64 MiB chunks at the mdadm location. bm (may be NULL) gets the
 * matching bitmap header.
 */
void format_good_sb(unsigned minor, uint64_t dev_sectors, uint32_t max_dev,
		    int with_bitmap, struct uraid_sb *sb, struct uraid_bitmap_sb *bm);

#endif
