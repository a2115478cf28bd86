// SPDX-License-Identifier: MIT
/*
 * RAID 4, 5 and 6: data chunks striped with one (P) or two (P and Q) parity
 * chunks per row; they differ in where parity lives (geom's layouts) and how
 * many failures parity covers. I/O: raid5.c and the raid5_*.c it lists; background work:
 * jobs/sync_raid5.c.
 */
#include "engine/core/array.h"
#include "engine/jobs/sync.h"
#include "engine/level/level.h"

#define RAID456_INFO(lvl, nm, npar, min)                                        \
	{                                                                       \
		.level = (lvl), .name = (nm),                                   \
		.min_members = (min), .create_min_members = (min),              \
		.parity_members = (npar), .redundant = true,                    \
		.chunk = URAID_CHUNK_STRIPE, .chunk_pow2 = true,                \
		.has_layouts = true, .data_striped = true,                      \
		.zeroes_whole_rows = true,                                      \
	}

const struct level level_raid4 = {
	.info = RAID456_INFO(URAID_LEVEL_4, "raid4", 1, 2),
	.io = &level_raid5_ops,
	.sync = &sync_raid5_level,
	.writes_skip_failed_slot = true,
	.reshape = LEVEL_RESHAPE_STRIPES,
};

const struct level level_raid5 = {
	.info = RAID456_INFO(URAID_LEVEL_5, "raid5", 1, 2),
	.io = &level_raid5_ops,
	.sync = &sync_raid5_level,
	.writes_skip_failed_slot = true,
	.reshape = LEVEL_RESHAPE_STRIPES,
};

const struct level level_raid6 = {
	.info = RAID456_INFO(URAID_LEVEL_6, "raid6", 2, 4),
	.io = &level_raid5_ops,
	.sync = &sync_raid5_level,
	.writes_skip_failed_slot = true,
	.reshape = LEVEL_RESHAPE_STRIPES,
};
