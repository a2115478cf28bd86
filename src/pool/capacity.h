/* SPDX-License-Identifier: MIT */
/*
 * A volume's shape from Storage Spaces' resiliency words or an md level,
 * and its arithmetic: the array size md gives partitions of a size (the
 * same data offset and rounding as uraid create and mdadm), the partition
 * size a volume size needs, and where a new volume goes (the drives with
 * the most free space).
 */
#ifndef URAID_POOL_CAPACITY_H
#define URAID_POOL_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pool_resiliency {
	POOL_SIMPLE,            /* RAID 0 (2 drives at least, as md's) */
	POOL_MIRROR,            /* RAID 1 on 2 drives, RAID 10 n2 on more */
	POOL_THREE_WAY_MIRROR,  /* RAID 1 on 3 drives, RAID 10 n3 on more */
	POOL_PARITY,            /* RAID 5 */
	POOL_DUAL_PARITY,       /* RAID 6 */
	POOL_RESILIENCIES
};

const char *pool_resiliency_name(enum pool_resiliency r);
/* -EINVAL when unknown. */
int pool_resiliency_parse(const char *s, enum pool_resiliency *r);
unsigned pool_resiliency_min_drives(enum pool_resiliency r);
/* The fewest drives a group of a RAID 50 (level 5) or 60 (level 6) volume
 * takes: those of parity or dual-parity. */
unsigned pool_nested_group_min(int level);

/*
 * What md makes: level, layout word, member count, chunk (0 for RAID 1).
 * A nested volume (RAID 50/60, groups >= 2): level and layout are the
 * inner arrays', each over drives / groups of the partitions, and a RAID 0
 * of the same chunk over them, its superblock on their data (uraid/nested.h).
 */
struct pool_shape {
	int level;
	uint32_t layout;
	unsigned drives;
	uint32_t chunk_sectors;
	unsigned groups;            /* 0: one array */
};

/* The shape of a resiliency over `drives` drives (chunk_kib 0: 512 KiB). */
int pool_shape_of(enum pool_resiliency r, unsigned drives, uint32_t chunk_kib,
		  struct pool_shape *s, char *err, size_t errlen);
/* The shape of an md level (0, 1, 5, 6, 10: RAID 10 n2) over `drives`. */
int pool_shape_of_level(int level, unsigned drives, uint32_t chunk_kib, struct pool_shape *s,
			char *err, size_t errlen);

/*
 * A nested shape: RAID 50 (parity, level 5) or 60 (dual-parity, level 6)
 * of `groups` inner arrays over `drives` drives (a multiple of groups, each
 * group at least the level's minimum).
 */
int pool_shape_nested(int level, unsigned drives, unsigned groups, uint32_t chunk_kib,
		      struct pool_shape *s, char *err, size_t errlen);

/* The array sectors md exports for the shape over partitions of part_sectors
 * each (metadata 1.2, mdadm's default data offset); 0 when too small. */
uint64_t pool_volume_sectors(const struct pool_shape *s, uint64_t part_sectors);

/*
 * The partition size, in whole MiB and at most room sectors, that gives
 * the largest volume, and that volume's sectors in *volume (may be NULL).
 * Not always the largest partition: md's data offset grows in steps with
 * the member's size (its reshape headroom doubles at 32, 64, 128 GiB ...),
 * so a partition just past a step can hold a smaller volume than one a
 * MiB below it; the largest and each step's size less a MiB are tried.
 */
uint64_t pool_max_part(const struct pool_shape *s, uint64_t room, uint64_t *volume);

/* The smallest partition size, in whole MiB, whose volume holds want
 * sectors; 0 when want is 0. */
uint64_t pool_part_sectors_for(const struct pool_shape *s, uint64_t want);

/*
 * Placement: the `want` drives with the most free space (largest free
 * extent, ties to the lower index) among n; their indexes into pick, in
 * the order chosen. Returns the smallest free extent among them (what a
 * volume over them can use per drive), 0 when fewer than want drives have
 * any.
 */
uint64_t pool_place(const uint64_t *free_sectors, unsigned n, unsigned want, unsigned *pick);

#endif
