// SPDX-License-Identifier: MIT
/*
 * The levels uraid runs: one line each. What a level is and does is in its
 * own descriptor file; everything else asks through level_find (the
 * engine) or uraid_level_info (outside it).
 */
#include <stddef.h>

#include "engine/level/level.h"

/* each defined in its own file */
extern const struct level level_linear, level_raid0, level_raid1, level_raid4, level_raid5,
	level_raid6, level_raid10;

static const struct level *const levels[] = {
	&level_linear,
	&level_raid0,
	&level_raid1,
	&level_raid4,
	&level_raid5,
	&level_raid6,
	&level_raid10,
};

const struct level *level_find(int md_level)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (levels[i]->info.level == md_level)
			return levels[i];
	return NULL;
}

bool level_survives(const struct level *lv, const struct uraid_geom *g, const bool *ok,
		    unsigned missing, uint64_t *bad_chunk)
{
	if (bad_chunk)
		*bad_chunk = UINT64_MAX;
	if (lv->survives)
		return lv->survives(g, ok, missing, bad_chunk);
	return missing <= uraid_geom_max_failures(g);
}

/* ---- the public view (uraid/level.h) ---- */

const struct uraid_level_info *uraid_level_info(int level)
{
	const struct level *lv = level_find(level);
	return lv ? &lv->info : NULL;
}

bool uraid_level_survives(const struct uraid_geom *g, const bool *present, uint64_t *bad_chunk)
{
	const struct level *lv = level_find(g->level);
	unsigned missing = 0;

	if (bad_chunk)
		*bad_chunk = UINT64_MAX;
	if (!lv)
		return false;
	for (unsigned s = 0; s < g->raid_disks; s++)
		missing += !present[s];
	return level_survives(lv, g, present, missing, bad_chunk);
}

uint64_t uraid_level_full_stripe(const struct uraid_level_info *info, unsigned raid_disks,
				 uint64_t chunk_bytes)
{
	if (!info || info->chunk != URAID_CHUNK_STRIPE)
		return 0;
	if (!info->data_striped)
		return chunk_bytes;
	return raid_disks > info->parity_members ? chunk_bytes * (raid_disks - info->parity_members)
						  : 0;
}
