/* SPDX-License-Identifier: MIT */
#ifndef URAID_ENGINE_MD_GROW_LINEAR_H
#define URAID_ENGINE_MD_GROW_LINEAR_H

#include <stddef.h>
#include <stdint.h>

struct array;

/*
 * Frozen, meta_lock held: the newest spares appended to the linear array
 * as slots raid_disks..(the new count - 1), in sync, the geometry switched
 * and the superblocks written. 0, or -errno with one line in err (before
 * the switch: nothing changed).
 */
int grow_linear_append(struct array *a, uint32_t raid_disks, char *err, size_t errlen);

#endif
