/* SPDX-License-Identifier: MIT */
/*
 * Linear (concatenation) and RAID 0 (striping over zones of equal-sized
 * member ranges). Facts: reference/md-format.md §3.1; linear rounds each
 * member down to the chunk ("rounding") when one is set.
 */
#include <string.h>

#include "geom/geom_internal.h"

/* ---- linear ---------------------------------------------------------- */

int geom_linear_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		     char *err, size_t errlen)
{
	uint64_t total = 0, largest = 0;

	if (!p->member_sectors)
		return geom_fail(err, errlen, "linear needs the size of every member");
	for (uint32_t i = 0; i < p->raid_disks; i++) {
		uint64_t s = p->member_sectors[i];

		/* The chunk of a linear array is only a rounding unit. */
		if (p->chunk_sectors)
			s -= s % p->chunk_sectors;
		g->member_sectors[i] = s;
		g->linear_start[i] = total;
		total += s;
		if (s > largest)
			largest = s;
	}
	if (!total)
		return geom_fail(err, errlen, "linear array has no usable sectors");
	g->array_sectors = total;
	g->dev_sectors = largest;
	return 0;
}

/* First slot whose extent ends after a (empty members are skipped). */
static uint32_t linear_find(const struct uraid_geom *g, uint64_t a)
{
	uint32_t lo = 0, hi = g->raid_disks - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a < g->linear_start[mid] + g->member_sectors[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int geom_linear_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		    unsigned max_out)
{
	uint32_t i = linear_find(g, a);

	out->slot = i;
	out->sector = a - g->linear_start[i];
	return 1;
}

uint64_t geom_linear_extent_left(const struct uraid_geom *g, uint64_t a)
{
	uint32_t i = linear_find(g, a);

	return g->linear_start[i] + g->member_sectors[i] - a;
}

int geom_linear_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
			struct uraid_rloc *out)
{
	if (sector < g->member_sectors[slot]) {
		out->kind = URAID_CHUNK_DATA;
		out->array_sector = g->linear_start[slot] + sector;
	}
	return 0;
}

/* ---- RAID 0 ---------------------------------------------------------- */

static uint64_t zone_start(const struct uraid_geom *g, uint32_t z)
{
	return z ? g->zones[z - 1].zone_end : 0;
}

int geom_raid0_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		    char *err, size_t errlen)
{
	uint32_t n = p->raid_disks, used = 0;
	uint64_t prev = 0, end = 0;
	bool multi;

	if (!p->member_sectors)
		return geom_fail(err, errlen, "RAID 0 needs the size of every member");
	/*
	 * md only needs the chunk to be a multiple of the members' logical
	 * block size (checked by whoever knows the devices); any non-zero
	 * sector count is a valid geometry, power of two or not.
	 */
	if (!p->chunk_sectors)
		return geom_fail(err, errlen, "RAID 0 needs a chunk size");
	for (uint32_t i = 0; i < n; i++) {
		uint64_t s = p->member_sectors[i];

		s -= s % p->chunk_sectors;
		if (!s)
			return geom_fail(err, errlen,
					 "RAID 0 member %u (%llu sectors) is smaller than one chunk (%u sectors)",
					 i, (unsigned long long)p->member_sectors[i],
					 p->chunk_sectors);
		g->member_sectors[i] = s;
		if (s > g->dev_sectors)
			g->dev_sectors = s;
	}

	/*
	 * Zones: for each distinct usable size L (ascending), the members
	 * larger than the previous size stripe over [prev, L) of their space.
	 */
	for (;;) {
		uint64_t next = UINT64_MAX;
		struct uraid_raid0_zone *z = &g->zones[g->nr_zones];

		for (uint32_t i = 0; i < n; i++)
			if (g->member_sectors[i] > prev && g->member_sectors[i] < next)
				next = g->member_sectors[i];
		if (next == UINT64_MAX)
			break;
		z->dev_start = prev;
		z->first = used;
		z->nb_dev = 0;
		for (uint32_t i = 0; i < n; i++)
			if (g->member_sectors[i] > prev)
				g->zone_slots[used + z->nb_dev++] = (uint16_t)i;
		used += z->nb_dev;
		end += (next - prev) * z->nb_dev;
		z->zone_end = end;
		g->nr_zones++;
		prev = next;
	}
	g->array_sectors = end;

	/*
	 * The two zone layouts differ only when a later zone stripes over
	 * more than one member. md then needs to know which one the array
	 * was written with, and refuses to guess (raid0.default_layout).
	 */
	multi = g->nr_zones > 1 && g->zones[1].nb_dev > 1;
	if (!multi) {
		g->layout = URAID_RAID0_ORIG;
		return 0;
	}
	if (!p->raid0_layout_flag)
		return geom_fail(err, errlen,
				 "RAID 0 with members of different sizes has %u zones but no zone layout (feature 0x1000 not set); md refuses it unless raid0.default_layout is 1 or 2",
				 g->nr_zones);
	if (p->layout != URAID_RAID0_ORIG && p->layout != URAID_RAID0_ALT_MULTIZONE)
		return geom_fail(err, errlen,
				 "RAID 0 layout %u is neither original (1) nor alternate (2); md refuses this multi-zone array",
				 p->layout);
	g->layout = p->layout;
	return 0;
}

int geom_raid0_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		   unsigned max_out)
{
	uint32_t lo = 0, hi = g->nr_zones - 1;
	const struct uraid_raid0_zone *z;
	uint64_t c = g->chunk_sectors, r, k;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a < g->zones[mid].zone_end)
			hi = mid;
		else
			lo = mid + 1;
	}
	z = &g->zones[lo];
	r = a - zone_start(g, lo);
	/*
	 * Original layout picks the member from the array sector, the
	 * alternate one from the offset inside the zone; the row and the
	 * offset in the chunk are the same for both.
	 */
	k = g->layout == URAID_RAID0_ALT_MULTIZONE ? r : a;
	out->slot = g->zone_slots[z->first + (k / c) % z->nb_dev];
	out->sector = z->dev_start + r / (c * z->nb_dev) * c + a % c;
	return 1;
}

int geom_raid0_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		       struct uraid_rloc *out)
{
	const struct uraid_raid0_zone *z;
	uint64_t c = g->chunk_sectors, zs, row, x;
	uint32_t zi = 0, j;

	if (sector >= g->member_sectors[slot])
		return 0;
	/* Last zone starting at or before the sector; the slot is in it. */
	while (zi + 1 < g->nr_zones && g->zones[zi + 1].dev_start <= sector)
		zi++;
	z = &g->zones[zi];
	for (j = 0; j < z->nb_dev; j++)
		if (g->zone_slots[z->first + j] == slot)
			break;
	if (j == z->nb_dev)
		return 0;       /* cannot happen for a geometry from init */
	zs = zone_start(g, zi);
	row = (sector - z->dev_start) / c;
	if (g->layout == URAID_RAID0_ALT_MULTIZONE)
		x = j;
	else    /* member index = (A / C) mod nb, and zone starts are chunk-aligned */
		x = (j + z->nb_dev - (zs / c) % z->nb_dev) % z->nb_dev;
	out->kind = URAID_CHUNK_DATA;
	out->array_sector = zs + (row * z->nb_dev + x) * c + (sector - z->dev_start) % c;
	return 0;
}

/* Linear and RAID 0 have no redundancy: one copy, no failure survived. */
static unsigned no_failure(const struct uraid_geom *g)
{
	return 0;
}

const struct geom_layout geom_layout_linear = {
	.init = geom_linear_init,
	.map = geom_linear_map,
	.reverse = geom_linear_reverse,
	.extent_left = geom_linear_extent_left,
	.max_failures = no_failure,
};

const struct geom_layout geom_layout_raid0 = {
	.init = geom_raid0_init,
	.map = geom_raid0_map,
	.reverse = geom_raid0_reverse,
	.max_failures = no_failure,
};
