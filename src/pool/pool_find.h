/* SPDX-License-Identifier: MIT */
/*
 * A pool as found on its drives: the drives whose label names it, in the
 * order of their index, and its volumes (partitions of the same
 * "POOL/VOLUME" name), each with what its md superblocks say.
 */
#ifndef URAID_POOL_POOL_FIND_H
#define URAID_POOL_POOL_FIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/nested.h>

#include "pool/pool.h"

enum pool_part_state { POOL_PART_MEMBER, POOL_PART_STALE, POOL_PART_SPARE, POOL_PART_BLANK };

struct pool_volume {
	char name[POOL_VOL_NAME_MAX + 1];
	unsigned nparts;
	unsigned drive[POOL_MAX_DRIVES];        /* index into pool.drive */
	unsigned entry[POOL_MAX_DRIVES];        /* GPT entry on that drive */
	/* from the freshest valid md superblock among the partitions */
	bool has_md;
	uint8_t uuid[16];
	int level;
	uint32_t layout, chunk_sectors, raid_disks;
	uint64_t array_sectors;
	unsigned present;           /* partitions in an active slot of the freshest events */
	unsigned stale;             /* partitions with an older superblock or another array's */
	/* partitions that are not members: a spare of this array (fresh events),
	   or no md superblock at all (a volume grow --drives stopped between its
	   table write and md taking the partition) */
	unsigned spares, blank;
	uint8_t part_state[POOL_MAX_DRIVES];    /* enum pool_part_state */
	bool resync_needed;
	/* partition i's superblock is older than another partition's that has
	   its device number: the member it was was replaced (a spare rebuilt in
	   its place, uraid serve --pool); assembling both is refused, so serve
	   leaves it out */
	bool superseded[POOL_MAX_DRIVES];
	bool reshaping;             /* a reshape stopped in the middle (serve goes on with it) */
	/*
	 * A RAID 50/60 volume (its partitions hold the inner arrays of a
	 * nested array, the RAID 0 found on their data): groups >= 2, level
	 * and layout the inner arrays', raid_disks and present summed over
	 * them, uuid and array_sectors the RAID 0's; each partition's inner
	 * array in part_group (-1: none of them). 0 for one array.
	 */
	unsigned groups;
	int8_t part_group[POOL_MAX_DRIVES];
	uint8_t group_uuid[URAID_NESTED_MAX_GROUPS][16];
	char group_name[URAID_NESTED_MAX_GROUPS][33];   /* the inner array's md name */
	unsigned group_disks[URAID_NESTED_MAX_GROUPS], group_present[URAID_NESTED_MAX_GROUPS];
	/* partitions of inner arrays past URAID_NESTED_MAX_GROUPS: in no group
	   (part_group -1), reported by the status */
	unsigned over_groups;
};

struct pool {
	struct pool_label label;                /* the pool's (its first drive's) */
	unsigned ndrives;
	struct pool_drive *drive[POOL_MAX_DRIVES];
	unsigned nvolumes;
	struct pool_volume vol[POOL_MAX_VOLUMES];
};

/*
 * The drives among paths (each read with pool_drive_read; those that are
 * not pool drives are skipped) that belong to pool `name`. 0 with p filled (p->ndrives 0: none found), or
 * -EINVAL when two pools of that name are found, or a drive index is given
 * twice, with err.
 */
int pool_find(const char *name, char *const *paths, unsigned n, struct pool *p, char *err,
	      size_t errlen);
void pool_release(struct pool *p);

/* Read each volume's md superblocks (pool_find does it). */
void pool_volumes_probe(struct pool *p);

/* The volume of that name, or NULL. */
struct pool_volume *pool_volume_find(struct pool *p, const char *name);

#endif
