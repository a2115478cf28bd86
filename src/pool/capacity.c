// SPDX-License-Identifier: MIT
/* Volume shapes, sizes and placement (capacity.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/level.h>
#include <uraid/nested.h>
#include <uraid/superblock.h>

#include "common/errmsg.h"
#include "pool/capacity.h"
#include "pool/gpt.h"

static const char *const resiliency_names[POOL_RESILIENCIES] = {
	[POOL_SIMPLE] = "simple",
	[POOL_MIRROR] = "mirror",
	[POOL_THREE_WAY_MIRROR] = "three-way-mirror",
	[POOL_PARITY] = "parity",
	[POOL_DUAL_PARITY] = "dual-parity",
};

const char *pool_resiliency_name(enum pool_resiliency r)
{
	return r < POOL_RESILIENCIES ? resiliency_names[r] : "?";
}

int pool_resiliency_parse(const char *s, enum pool_resiliency *r)
{
	for (unsigned i = 0; i < POOL_RESILIENCIES; i++)
		if (!strcmp(s, resiliency_names[i])) {
			*r = (enum pool_resiliency)i;
			return 0;
		}
	if (!strcmp(s, "two-way-mirror")) {
		*r = POOL_MIRROR;
		return 0;
	}
	return -EINVAL;
}

unsigned pool_resiliency_min_drives(enum pool_resiliency r)
{
	/* simple: md's RAID 0 takes two members at least (uraid create, mdadm without --force) */
	static const unsigned min[POOL_RESILIENCIES] = { 2, 2, 3, 3, 4 };
	return r < POOL_RESILIENCIES ? min[r] : 0;
}

unsigned pool_nested_group_min(int level)
{
	return pool_resiliency_min_drives(level == URAID_LEVEL_6 ? POOL_DUAL_PARITY : POOL_PARITY);
}

#define DEFAULT_CHUNK_KIB 512u

static int shape(int level, uint32_t near, unsigned drives, uint32_t chunk_kib,
		 struct pool_shape *s, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->level = level;
	s->drives = drives;
	s->chunk_sectors = level == URAID_LEVEL_1 ? 0 : (chunk_kib ? chunk_kib : DEFAULT_CHUNK_KIB) * 2;
	if (level == URAID_LEVEL_10)
		s->layout = 0x100u | near;              /* near copies, one far copy */
	else if (level == URAID_LEVEL_5 || level == URAID_LEVEL_6)
		s->layout = URAID_LEFT_SYMMETRIC;       /* mdadm's default */
	const struct uraid_level_info *li = uraid_level_info(level);
	if (!li)
		return uraid_errf(err, errlen, -EINVAL, "level %d is not one a pool volume takes "
				  "(0, 1, 5, 6, 10)", level);
	unsigned min = level == URAID_LEVEL_10 ? near : li->create_min_members;
	if (drives < min)
		return uraid_errf(err, errlen, -EINVAL, "%s needs at least %u drives, not %u",
				  uraid_level_name(level), min, drives);
	if (drives > URAID_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EINVAL, "at most %u drives", URAID_MAX_MEMBERS);
	return 0;
}

int pool_shape_of(enum pool_resiliency r, unsigned drives, uint32_t chunk_kib,
		  struct pool_shape *s, char *err, size_t errlen)
{
	if (drives < pool_resiliency_min_drives(r))
		return uraid_errf(err, errlen, -EINVAL, "%s needs at least %u drives, not %u",
				  pool_resiliency_name(r), pool_resiliency_min_drives(r), drives);
	switch (r) {
	case POOL_SIMPLE:
		return shape(URAID_LEVEL_0, 0, drives, chunk_kib, s, err, errlen);
	case POOL_MIRROR:
		return drives == 2 ? shape(URAID_LEVEL_1, 0, drives, 0, s, err, errlen)
				   : shape(URAID_LEVEL_10, 2, drives, chunk_kib, s, err, errlen);
	case POOL_THREE_WAY_MIRROR:
		return drives == 3 ? shape(URAID_LEVEL_1, 0, drives, 0, s, err, errlen)
				   : shape(URAID_LEVEL_10, 3, drives, chunk_kib, s, err, errlen);
	case POOL_PARITY:
		return shape(URAID_LEVEL_5, 0, drives, chunk_kib, s, err, errlen);
	case POOL_DUAL_PARITY:
		return shape(URAID_LEVEL_6, 0, drives, chunk_kib, s, err, errlen);
	default:
		return uraid_errf(err, errlen, -EINVAL, "unknown resiliency");
	}
}

int pool_shape_of_level(int level, unsigned drives, uint32_t chunk_kib, struct pool_shape *s,
			char *err, size_t errlen)
{
	if (level != URAID_LEVEL_0 && level != URAID_LEVEL_1 && level != URAID_LEVEL_5 &&
	    level != URAID_LEVEL_6 && level != URAID_LEVEL_10)
		return uraid_errf(err, errlen, -EINVAL, "level %s is not one a pool volume takes "
				  "(0, 1, 5, 6, 10)", uraid_level_name(level));
	return shape(level, 2, drives, chunk_kib, s, err, errlen);
}

int pool_shape_nested(int level, unsigned drives, unsigned groups, uint32_t chunk_kib,
		      struct pool_shape *s, char *err, size_t errlen)
{
	int rc;

	if (level != URAID_LEVEL_5 && level != URAID_LEVEL_6)
		return uraid_errf(err, errlen, -EINVAL, "groups are for parity (RAID 50) and "
				  "dual-parity (RAID 60) volumes");
	if (groups < 2 || groups > URAID_NESTED_MAX_GROUPS)
		return uraid_errf(err, errlen, -EINVAL, "a RAID %d0 has 2 to %u groups, not %u",
				  level, URAID_NESTED_MAX_GROUPS, groups);
	if (drives % groups)
		return uraid_errf(err, errlen, -EINVAL, "%u drives do not split into %u groups of "
				  "equal size", drives, groups);
	/* md takes a 2-member RAID 5 (a mirror in parity's clothes); a group
	   of a RAID 50/60 takes what a parity or dual-parity volume takes */
	if (drives / groups < pool_nested_group_min(level))
		return uraid_errf(err, errlen, -EINVAL, "a RAID %d0 group needs at least %u "
				  "drives: %u drives in %u groups give %u per group", level,
				  pool_nested_group_min(level), drives, groups, drives / groups);
	if ((rc = shape(level, 0, drives / groups, chunk_kib, s, err, errlen)))
		return rc;
	s->drives = drives;
	s->groups = groups;
	return 0;
}

/* As uraid create plans it (setup/create_plan.c plan_sizes) for metadata 1.2. */
uint64_t pool_max_part(const struct pool_shape *s, uint64_t room, uint64_t *volume)
{
	uint64_t best = room / GPT_ALIGN_SECTORS * GPT_ALIGN_SECTORS;
	uint64_t best_v = pool_volume_sectors(s, best);

	/* md's steps are at powers of two (placement.c: headroom, bitmap) */
	for (uint64_t step = 2 * GPT_ALIGN_SECTORS; step && step <= room; step <<= 1) {
		uint64_t v = pool_volume_sectors(s, step - GPT_ALIGN_SECTORS);
		if (v > best_v) {
			best_v = v;
			best = step - GPT_ALIGN_SECTORS;
		}
	}
	if (volume)
		*volume = best_v;
	return best;
}

uint64_t pool_volume_sectors(const struct pool_shape *s, uint64_t part)
{
	const struct uraid_level_info *li = uraid_level_info(s->level);

	if (s->groups >= 2) {
		/* the inner arrays over the partitions, then the RAID 0 over
		   them as uraid_nested_create makes it: its members the inner
		   arrays, its data offset chosen for their size */
		struct pool_shape in = *s, out = { .level = URAID_LEVEL_0, .drives = s->groups,
						   .chunk_sectors = s->chunk_sectors };
		in.groups = 0;
		in.drives = s->drives / s->groups;
		uint64_t inner = pool_volume_sectors(&in, part);
		return inner ? pool_volume_sectors(&out, inner) : 0;
	}
	uint64_t off = uraid_default_data_offset(part, s->chunk_sectors);
	uint64_t members[URAID_MAX_MEMBERS];
	struct uraid_geom g;
	char why[200];

	if (!li || part <= off + 8)
		return 0;
	uint64_t avail = (part - off) & ~1ull;
	if (s->chunk_sectors)
		avail -= avail % s->chunk_sectors;
	if (li->create_size_align_kib)
		avail &= ~((uint64_t)li->create_size_align_kib * 2 - 1);
	if (avail == 0)
		return 0;
	for (unsigned i = 0; i < s->drives && i < URAID_MAX_MEMBERS; i++)
		members[i] = part - off;
	struct uraid_geom_params gp = {
		.level = s->level, .layout = s->layout, .raid_disks = s->drives,
		.chunk_sectors = s->chunk_sectors, .dev_sectors = li->whole_members ? 0 : avail,
		.member_sectors = members,
	};
	if (uraid_geom_init(&g, &gp, why, sizeof(why)))
		return 0;
	return uraid_geom_array_sectors(&g);
}

uint64_t pool_part_sectors_for(const struct pool_shape *s, uint64_t want)
{
	const uint64_t mib = GPT_ALIGN_SECTORS;
	uint64_t lo = 0, hi = mib;

	if (want == 0)
		return 0;
	/* the size grows with the partition: double, then bisect in MiBs */
	while (pool_volume_sectors(s, hi) < want) {
		lo = hi;
		if (hi > UINT64_MAX / 4)
			return 0;
		hi *= 2;
	}
	while (hi - lo > mib) {
		uint64_t mid = (lo + (hi - lo) / 2) / mib * mib;
		if (mid <= lo)
			mid = lo + mib;
		if (pool_volume_sectors(s, mid) >= want)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

uint64_t pool_place(const uint64_t *free_sectors, unsigned n, unsigned want, unsigned *pick)
{
	bool taken[URAID_MAX_MEMBERS * 2] = { false };
	uint64_t smallest = UINT64_MAX;

	if (want == 0 || want > n || n > sizeof(taken) / sizeof(taken[0]))
		return 0;
	for (unsigned k = 0; k < want; k++) {
		int best = -1;
		for (unsigned i = 0; i < n; i++)
			if (!taken[i] && (best < 0 || free_sectors[i] > free_sectors[best]))
				best = (int)i;
		taken[best] = true;
		pick[k] = (unsigned)best;
		if (free_sectors[best] < smallest)
			smallest = free_sectors[best];
	}
	return smallest;
}
