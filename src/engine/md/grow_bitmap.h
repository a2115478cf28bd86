/* SPDX-License-Identifier: MIT */
/* uraid grow --bitmap: the internal bitmap added to or removed from a
 * running array (grow_bitmap.c). */
#ifndef URAID_ENGINE_MD_GROW_BITMAP_H
#define URAID_ENGINE_MD_GROW_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct array;

/* Sectors free for a bitmap at superblock + 8 on every attached member. */
uint64_t grow_bitmap_room(const struct array *a);
/* Frozen, meta_lock held: add (or remove) the internal bitmap, superblocks
 * written. 0 or -errno with err (nothing changed). */
int grow_bitmap_apply(struct array *a, bool add, char *err, size_t errlen);
/* At close: the run-time bits of a bitmap removed while served. */
void grow_bitmap_free(struct array *a);

#endif
