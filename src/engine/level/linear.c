// SPDX-License-Identifier: MIT
/*
 * Linear (md's "linear"): the members one after another, each used whole.
 * No redundancy; the chunk only rounds each member down. I/O: single_io.c.
 */
#include "engine/core/array.h"
#include "engine/level/level.h"

const struct level level_linear = {
	.info = {
		.level = URAID_LEVEL_LINEAR,
		.name = "linear",
		.min_members = 1,
		.create_min_members = 1,
		.whole_members = true,
		.chunk = URAID_CHUNK_ROUNDING,
	},
	.io = &level_linear_ops,
	.keeps_last_copy = true,
};
