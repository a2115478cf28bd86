// SPDX-License-Identifier: MIT
/*
 * RAID 1: every slot holds the whole array. I/O: mirror_io.c; background
 * work: jobs/sync_mirror.c.
 */
#include "engine/core/array.h"
#include "engine/jobs/sync.h"
#include "engine/level/level.h"

const struct level level_raid1 = {
	.info = {
		.level = URAID_LEVEL_1,
		.name = "raid1",
		.min_members = 1,               /* mdadm: with --force */
		.create_min_members = 2,
		.redundant = true,
		.chunk = URAID_CHUNK_NONE,
		.create_size_align_kib = 64,    /* mdadm: room for a later reshape to RAID 5 */
	},
	.io = &level_raid1_ops,
	.sync = &sync_mirror_level,
	.keeps_last_copy = true,
};
