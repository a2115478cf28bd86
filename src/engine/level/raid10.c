// SPDX-License-Identifier: MIT
/*
 * RAID 10: near, far and offset copies of each chunk (geom's layout_raid10.c).
 * It survives as long as every chunk keeps a copy, which depends on which
 * slots are missing, not only on how many. I/O: mirror_io.c; background
 * work: jobs/sync_mirror.c, over array sectors for a resync, check or
 * repair (md's resync_max_sectors).
 */
#include "engine/core/array.h"
#include "engine/jobs/sync.h"
#include "engine/level/level.h"

/*
 * md's raid10 "enough()": every chunk keeps a copy on a slot present. The
 * copies repeat with a period of at most raid_disks chunks (far copies
 * shifted within it), so a few periods decide it for the whole array.
 */
static bool raid10_survives(const struct uraid_geom *g, const bool *ok, unsigned missing,
			    uint64_t *bad_chunk)
{
	struct uraid_loc loc[URAID_MAX_MEMBERS];
	uint64_t chunks = g->chunk_sectors ? g->array_sectors / g->chunk_sectors : 0;

	if (missing == 0)
		return true;
	for (uint64_t c = 0; c < chunks && c < 4ull * g->raid_disks; c++) {
		int n = uraid_geom_map(g, c * g->chunk_sectors, loc, URAID_MAX_MEMBERS);
		bool present = false;
		for (int k = 0; k < n; k++)
			present |= ok[loc[k].slot];
		if (n > 0 && !present) {
			if (bad_chunk)
				*bad_chunk = c;
			return false;
		}
	}
	return true;
}

const struct level level_raid10 = {
	.info = {
		.level = URAID_LEVEL_10,
		.name = "raid10",
		.min_members = 2,
		.create_min_members = 2,
		.redundant = true,
		.chunk = URAID_CHUNK_STRIPE,
		.chunk_pow2 = true,
		.has_layouts = true,
		.sync_in_array_sectors = true,
	},
	.io = &level_raid10_ops,
	.sync = &sync_mirror_level,
	.survives = raid10_survives,
	.keeps_last_copy = true,
	.reshape = LEVEL_RESHAPE_COPIES,
};
