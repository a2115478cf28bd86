/* SPDX-License-Identifier: MIT */
/* uraid grow --bitmap: the internal bitmap added to or removed from a
 * running array (grow_bitmap.c). */
#ifndef URAID_ENGINE_MD_GROW_BITMAP_H
#define URAID_ENGINE_MD_GROW_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/bitmap.h>

struct array;

/* Every attached member's wall (member_set_areas) from the array's
 * superblock fields now: after a metadata area is added or removed.
 * 0 or -errno with err. meta_lock held. */
int grow_walls(struct array *a, char *err, size_t errlen);
/* Sectors free for a bitmap on every attached member: at superblock + 8
 * (1.1, 1.2), below the bad-block log under the superblock (1.0). */
uint64_t grow_bitmap_room(const struct array *a);
/* Frozen, meta_lock held: add (or remove) the internal bitmap, superblocks
 * written. 0 or -errno with err (nothing changed). */
int grow_bitmap_apply(struct array *a, bool add, char *err, size_t errlen);
/* What a bitmap resize replaced, to put back if the size change fails. */
struct grow_bitmap_undo {
	uint8_t *area;                  /* NULL: nothing to undo */
	uint64_t area_sectors;
	struct uraid_bitmap_sb bitmap;
	uint64_t sectors, found_sync;
};
/*
 * Frozen, meta_lock held, before the superblocks take a new size: the
 * internal bitmap resized to cover new_sync sectors as md_bitmap_resize
 * does (the chunk doubled until it fits the bitmap's space), its set bits
 * carried over, written to the members, the run-time bits reloaded.
 * 0 (also without a bitmap) or -errno with err, nothing changed then.
 */
int grow_bitmap_resize(struct array *a, uint64_t new_sync, struct grow_bitmap_undo *undo,
		       char *err, size_t errlen);
/* The size change failed after the resize: the old bitmap back. */
void grow_bitmap_undo(struct array *a, struct grow_bitmap_undo *undo);
/* It succeeded: the copy dropped. */
void grow_bitmap_undo_done(struct grow_bitmap_undo *undo);
/* At close: the run-time bits of a bitmap removed while served. */
void grow_bitmap_free(struct array *a);

#endif
