/* SPDX-License-Identifier: MIT */
/*
 * The kernel's partitions of a block device, from sysfs: a pool's volume
 * member is the partition's node when the kernel knows it, and a range of
 * a whole device must not be written while the kernel (md, dm) or another
 * program holds a partition over the same sectors: the kernel's exclusive
 * claim of /dev/sdb2 does not cover opens of /dev/sdb.
 */
#ifndef URAID_COMMON_BLOCK_PARTS_H
#define URAID_COMMON_BLOCK_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The node (/dev/NAME) of partition number `partno` of the whole device
 * `disk` (its st_rdev), when the kernel knows it with exactly that extent
 * (sectors). True and out filled, else false.
 */
bool uraid_block_part_node(dev_t disk, unsigned partno, uint64_t start, uint64_t sectors,
			   char *out, size_t len);

/*
 * Is any partition of `disk` that overlaps [start, start + sectors) in use:
 * held by the kernel (its sysfs holders: md, dm) or opened exclusively by a
 * program (O_EXCL refused)? 0, -EBUSY with which and by what in err, or
 * 0 when sysfs cannot tell (no sysfs: nothing known).
 */
int uraid_block_parts_free(dev_t disk, uint64_t start, uint64_t sectors, const char *what,
			   char *err, size_t errlen);

#endif
