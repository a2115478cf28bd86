/* SPDX-License-Identifier: MIT */
/*
 * A pool on disk (docs/pools.md): every drive has a GPT; partition 1 is the
 * pool's label (1 MiB, type POOL_TYPE_LABEL, named "uraid-pool:NAME", its
 * first sector a record with the pool's UUID and name and the drive's
 * index); each volume is one partition per drive it uses (type
 * POOL_TYPE_VOLUME, named "POOL/VOLUME") and an md array (superblock 1.2)
 * over those partitions. Nothing else: mdadm assembles every volume from
 * the partitions without uraid.
 */
#ifndef URAID_POOL_POOL_H
#define URAID_POOL_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pool/gpt.h"

#define POOL_NAME_MAX      16u   /* "POOL/VOLUME" must fit a GPT name (36) */
#define POOL_VOL_NAME_MAX  19u
#define POOL_MAX_DRIVES    32u
#define POOL_MAX_VOLUMES   (GPT_ENTRIES - 1)
#define POOL_LABEL_FIRST   GPT_ALIGN_SECTORS          /* LBA 2048 */
#define POOL_LABEL_SECTORS GPT_ALIGN_SECTORS          /* 1 MiB */

/* The partition types (random GUIDs chosen for uraid; text in docs/pools.md). */
extern const uint8_t pool_type_label[16];   /* 7e1f6d2a-3c9b-4f51-a0d8-5b2e6c4a9f13 */
extern const uint8_t pool_type_volume[16];  /* c4667a33-60e5-446a-85d3-32d64c31e516 */
#define POOL_TYPE_LABEL_TEXT  "7e1f6d2a-3c9b-4f51-a0d8-5b2e6c4a9f13"
#define POOL_TYPE_VOLUME_TEXT "c4667a33-60e5-446a-85d3-32d64c31e516"

/* The label record (the label partition's first sector). */
struct pool_label {
	uint8_t uuid[16];
	char name[POOL_NAME_MAX + 1];
	uint32_t index;             /* the drive's number in the pool, from 0 */
	uint64_t ctime;             /* when the pool was made (seconds) */
	/* how many drives the pool had when this label was last written (0: not
	   recorded, a label of before it was); pool add refuses unless it finds
	   them all, so that a new drive never takes a missing drive's index */
	uint32_t ndrives;
};

/* Is name a valid pool or volume name (1..max of [A-Za-z0-9_.-], not starting with '.' or '-')? */
bool pool_name_ok(const char *name, unsigned max);

void pool_label_encode(const struct pool_label *l, uint8_t sector[512]);
/* 0, -ENOENT (no magic), -EINVAL (damaged: why in err). */
int pool_label_decode(const uint8_t sector[512], struct pool_label *l, char *err, size_t errlen);

/* One drive as read from disk. */
struct pool_drive {
	char path[256];
	uint64_t sectors;
	bool blockdev;
	struct gpt gpt;
	struct gpt_read_info info;
	struct pool_label label;
	int label_part;             /* entry index of the label, -1 none */
};

/*
 * Read a drive (read-only, unlocked: a look). 0: a pool drive; -ENOENT: no
 * pool label (d->info and d->gpt tell what it holds; err says it in words);
 * -EINVAL: damaged table or label; other -errno: cannot open or read.
 */
int pool_drive_read(const char *path, struct pool_drive *d, char *err, size_t errlen);

/*
 * Is the open drive blank enough for a pool (no partition table, no md
 * superblock, nothing but zeroes in its first and last MiB)? 0, or -EEXIST
 * with what it holds in err (the refusal that --force overrides).
 */
int pool_drive_check_blank(int fd, uint64_t sectors, char *err, size_t errlen);

/* Write a new GPT with the pool label onto the open drive. */
int pool_drive_format(int fd, uint64_t sectors, const struct pool_label *l, char *err,
		      size_t errlen);

/* The name of a volume's partition ("POOL/VOLUME") and the reverse: the
 * volume's name if entry p is a volume partition of pool `pool`, else NULL. */
void pool_part_name(const char *pool, const char *vol, char *out, size_t len);
const char *pool_part_volume(const struct gpt_part *p, const char *pool);

/*
 * How a volume's member is named for md and for uraid: the partition's
 * device node when the drive is a block device whose partition the kernel
 * knows with the same start and size (/dev/sdb2, /dev/nvme0n1p2; sysfs),
 * else the range PATH@START+LENGTH
 * (common/range_path.h). POOL_SPEC_LEN bytes hold any of them.
 */
#define POOL_SPEC_LEN 320
void pool_member_spec(const struct pool_drive *d, unsigned entry, char *out, size_t len);

/* The largest free extent of a drive (sectors, 1 MiB aligned) and its start. */
uint64_t pool_drive_largest_free(const struct pool_drive *d, uint64_t *first);

#endif
