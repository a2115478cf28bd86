/* SPDX-License-Identifier: MIT */
/*
 * Geometry entry points: validation common to every level, RAID 1 (which is
 * too small for a file of its own) and the table of levels' layouts
 * (struct geom_layout, one line per level) that the entry points go through.
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

static int raid1_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		     unsigned max_out)
{
	for (uint32_t i = 0; i < g->raid_disks; i++) {
		out[i].slot = i;
		out[i].sector = a;
	}
	return (int)g->raid_disks;
}

static int raid1_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
			 struct uraid_rloc *out)
{
	if (sector < g->dev_sectors) {
		out->kind = URAID_CHUNK_DATA;
		out->array_sector = sector;
		out->copy = slot;
	}
	return 0;
}

/* No chunks: a piece may run to the array's end. */
static uint64_t raid1_extent_left(const struct uraid_geom *g, uint64_t a)
{
	return g->array_sectors - a;
}

/* Every slot holds a copy. */
static unsigned raid1_copies(const struct uraid_geom *g)
{
	return g->raid_disks;
}

static unsigned raid1_max_failures(const struct uraid_geom *g)
{
	return g->raid_disks - 1;
}

static const struct geom_layout geom_layout_raid1 = {
	.init = raid1_init,
	.map = raid1_map,
	.reverse = raid1_reverse,
	.extent_left = raid1_extent_left,
	.max_failures = raid1_max_failures,
	.copies = raid1_copies,
};

/* The levels geom knows, one line each. */
static const struct {
	int level;
	const struct geom_layout *layout;
} layouts[] = {
	{ URAID_LEVEL_LINEAR, &geom_layout_linear },
	{ URAID_LEVEL_0, &geom_layout_raid0 },
	{ URAID_LEVEL_1, &geom_layout_raid1 },
	{ URAID_LEVEL_4, &geom_layout_raid456 },
	{ URAID_LEVEL_5, &geom_layout_raid456 },
	{ URAID_LEVEL_6, &geom_layout_raid456 },
	{ URAID_LEVEL_10, &geom_layout_raid10 },
};

static const struct geom_layout *layout_of(int level)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].level == level)
			return layouts[i].layout;
	return NULL;
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

	const struct geom_layout *l = layout_of(p->level);
	if (!l)
		return geom_fail(err, errlen, "level %d is not an md level uraid handles",
				 p->level);
	return l->init(g, p, err, errlen);
}

unsigned uraid_geom_copies(const struct uraid_geom *g)
{
	const struct geom_layout *l = layout_of(g->level);
	return l && l->copies ? l->copies(g) : 1;
}

int uraid_geom_map(const struct uraid_geom *g, uint64_t array_sector,
		   struct uraid_loc *out, unsigned max_out)
{
	const struct geom_layout *l = layout_of(g->level);

	if (array_sector >= g->array_sectors || !l)
		return -EINVAL;
	if (max_out < uraid_geom_copies(g))
		return -ENOSPC;
	return l->map(g, array_sector, out, max_out);
}

int uraid_geom_reverse(const struct uraid_geom *g, uint32_t slot,
		       uint64_t sector, struct uraid_rloc *out)
{
	const struct geom_layout *l = layout_of(g->level);

	if (slot >= g->raid_disks)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->kind = URAID_CHUNK_UNUSED;
	if (!l)
		return -EINVAL;
	return l->reverse(g, slot, sector, out);
}

uint64_t uraid_geom_chunk_left(const struct uraid_geom *g, uint64_t array_sector)
{
	const struct geom_layout *l = layout_of(g->level);
	uint64_t left, to_end;

	if (array_sector >= g->array_sectors)
		return 0;
	if (l && l->extent_left)
		return l->extent_left(g, array_sector);
	/*
	 * RAID 0 zones start on chunk boundaries (members are rounded down to
	 * the chunk), so A mod C is the offset in the chunk for every chunked
	 * level, power of two or not.
	 */
	to_end = g->array_sectors - array_sector;
	left = g->chunk_sectors - array_sector % g->chunk_sectors;
	return left < to_end ? left : to_end;
}

unsigned uraid_geom_max_failures(const struct uraid_geom *g)
{
	const struct geom_layout *l = layout_of(g->level);
	return l ? l->max_failures(g) : 0;
}
