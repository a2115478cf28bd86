/* SPDX-License-Identifier: MIT */
/*
 * Geometry entry points: validation common to every level, RAID 1 (which is
 * too small for a file of its own) and dispatch to the per-level files.
 * Facts: reference/md-format.md §3.
 */
#include <string.h>

#include "geom/geom_internal.h"

static int raid1_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		      char *err, size_t errlen)
{
	/* md's RAID 1 has no chunks; mdadm writes chunksize 0. */
	if (p->chunk_sectors)
		return geom_fail(err, errlen,
				 "RAID 1 has no chunk size, got %u sectors",
				 p->chunk_sectors);
	if (!p->dev_sectors)
		return geom_fail(err, errlen, "RAID 1 member size is 0 sectors");
	g->dev_sectors = p->dev_sectors;
	/* raid1_size: the array is exactly one member's used size. */
	g->array_sectors = p->dev_sectors;
	for (uint32_t i = 0; i < g->raid_disks; i++)
		g->member_sectors[i] = p->dev_sectors;
	return 0;
}

int uraid_geom_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		    char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!g || !p)
		return geom_fail(err, errlen, "no geometry given");
	memset(g, 0, sizeof(*g));
	g->level = p->level;
	g->layout = p->layout;
	g->raid_disks = p->raid_disks;
	g->chunk_sectors = p->chunk_sectors;

	if (p->raid0_layout_flag && p->level != URAID_LEVEL_0)
		return geom_fail(err, errlen,
				 "feature 0x1000 (RAID0_LAYOUT) is only valid for RAID 0, not level %d",
				 p->level);
	if (p->raid_disks == 0)
		return geom_fail(err, errlen, "an array needs at least one member");
	if (p->raid_disks > URAID_MAX_MEMBERS)
		return geom_fail(err, errlen, "%u members, at most %u are supported",
				 p->raid_disks, URAID_MAX_MEMBERS);

	switch (p->level) {
	case URAID_LEVEL_LINEAR:
		return geom_linear_init(g, p, err, errlen);
	case URAID_LEVEL_0:
		return geom_raid0_init(g, p, err, errlen);
	case URAID_LEVEL_1:
		return raid1_init(g, p, err, errlen);
	case URAID_LEVEL_4:
	case URAID_LEVEL_5:
	case URAID_LEVEL_6:
		return geom_r456_init(g, p, err, errlen);
	case URAID_LEVEL_10:
		return geom_r10_init(g, p, err, errlen);
	default:
		return geom_fail(err, errlen, "level %d is not an md level uraid handles",
				 p->level);
	}
}

int uraid_geom_map(const struct uraid_geom *g, uint64_t array_sector,
		   struct uraid_loc *out, unsigned max_out)
{
	if (array_sector >= g->array_sectors)
		return -EINVAL;
	switch (g->level) {
	case URAID_LEVEL_LINEAR:
		if (max_out < 1)
			return -ENOSPC;
		return geom_linear_map(g, array_sector, out);
	case URAID_LEVEL_0:
		if (max_out < 1)
			return -ENOSPC;
		return geom_raid0_map(g, array_sector, out);
	case URAID_LEVEL_1:
		if (max_out < g->raid_disks)
			return -ENOSPC;
		for (uint32_t i = 0; i < g->raid_disks; i++) {
			out[i].slot = i;
			out[i].sector = array_sector;
		}
		return (int)g->raid_disks;
	case URAID_LEVEL_4:
	case URAID_LEVEL_5:
	case URAID_LEVEL_6:
		if (max_out < 1)
			return -ENOSPC;
		return geom_r456_map(g, array_sector, out);
	case URAID_LEVEL_10:
		return geom_r10_map(g, array_sector, out, max_out);
	default:
		return -EINVAL;
	}
}

int uraid_geom_reverse(const struct uraid_geom *g, uint32_t slot,
		       uint64_t sector, struct uraid_rloc *out)
{
	if (slot >= g->raid_disks)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->kind = URAID_CHUNK_UNUSED;
	switch (g->level) {
	case URAID_LEVEL_LINEAR:
		return geom_linear_reverse(g, slot, sector, out);
	case URAID_LEVEL_0:
		return geom_raid0_reverse(g, slot, sector, out);
	case URAID_LEVEL_1:
		if (sector < g->dev_sectors) {
			out->kind = URAID_CHUNK_DATA;
			out->array_sector = sector;
			out->copy = slot;
		}
		return 0;
	case URAID_LEVEL_4:
	case URAID_LEVEL_5:
	case URAID_LEVEL_6:
		return geom_r456_reverse(g, slot, sector, out);
	case URAID_LEVEL_10:
		return geom_r10_reverse(g, slot, sector, out);
	default:
		return -EINVAL;
	}
}

uint64_t uraid_geom_chunk_left(const struct uraid_geom *g, uint64_t array_sector)
{
	uint64_t left, to_end;

	if (array_sector >= g->array_sectors)
		return 0;
	to_end = g->array_sectors - array_sector;
	switch (g->level) {
	case URAID_LEVEL_LINEAR:
		return geom_linear_extent_left(g, array_sector);
	case URAID_LEVEL_1:
		return to_end;
	default:
		/*
		 * RAID 0 zones start on chunk boundaries (members are rounded
		 * down to the chunk), so A mod C is the offset in the chunk
		 * for every chunked level, power of two or not.
		 */
		left = g->chunk_sectors - array_sector % g->chunk_sectors;
		return left < to_end ? left : to_end;
	}
}

unsigned uraid_geom_max_failures(const struct uraid_geom *g)
{
	switch (g->level) {
	case URAID_LEVEL_1:
		return g->raid_disks - 1;
	case URAID_LEVEL_4:
	case URAID_LEVEL_5:
		return 1;
	case URAID_LEVEL_6:
		return 2;
	case URAID_LEVEL_10:
		/* Guaranteed: every chunk has nc*fc copies on distinct members. */
		return g->near_copies * g->far_copies - 1;
	default:
		return 0;
	}
}
