// SPDX-License-Identifier: MIT
/*
 * RAID 0: chunks striped over the members in zones (members may differ in
 * size, each is used whole). No redundancy. I/O: single_io.c.
 */
#include <uraid/superblock.h>

#include "engine/core/array.h"
#include "engine/level/level.h"

const struct level level_raid0 = {
	.info = {
		.level = URAID_LEVEL_0,
		.name = "raid0",
		.min_members = 1,               /* mdadm: with --force */
		.create_min_members = 2,
		.whole_members = true,
		.chunk = URAID_CHUNK_STRIPE,
		.has_layouts = true,            /* the zone layout: original, alternate */
		.layout_feature = URAID_FEATURE_RAID0_LAYOUT,
		.data_striped = true,
	},
	.io = &level_raid0_ops,
	.keeps_last_copy = true,
};
