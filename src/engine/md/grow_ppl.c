// SPDX-License-Identifier: MIT
/*
 * uraid grow --consistency-policy=ppl|resync on a running RAID 5: md's
 * partial parity log added or removed (mdadm's Grow_consistency_policy,
 * md's raid5_change_consistency_policy; facts in uraid/ppl.h). Frozen and
 * under meta_lock (grow.c): no write is in flight, so no row needs a log
 * entry at the switch.
 *
 * Where the area goes: mdadm's update_super("ppl") on each member, from
 * that member's own superblock: 1.1/1.2 at superblock + 8, up to the
 * bad-block log when there is one, else up to the data; 1.0 right after the
 * data (ppl.offset the gap from the superblock back to the data's end, at
 * most 32768 sectors), up to the bad-block log below the superblock. It
 * takes 1 MiB when that fits, else 4 KiB plus the larger of the chunk and
 * 128 KiB, else what there is, at least 8 KiB (a header and one page).
 * md then keeps ppl.size rounded down to whole pages after the header
 * (ppl_validate_rdev) and writes it; uraid writes that size at once.
 * Each member keeps its own ppl.offset in its own superblock, as md does
 * (1.0 members whose data ends at different distances from their
 * superblocks have the area at different offsets); uraid gives every
 * member the same ppl.size, the least room, so one log shape fits all.
 *
 * Adding, in an order that leaves an array md and uraid assemble after a
 * kill at any point. md takes each member's PPL place from that member's
 * own superblock (super_1_load) but whether the array has a PPL from the
 * freshest one, and starts no array whose PPL lacks a place on a member
 * (ppl_validate_rdev: "PPL space too small"); both accept members one
 * event behind the freshest. With E the events now:
 *   1. every member's area zeroed with an empty header (mdadm's
 *      write_init_ppl; outside the data, named by no superblock yet);
 *   2. one member in a slot (the anchor) written at E + 1, still without
 *      the PPL: the freshest says "no PPL", the others, at E, are one
 *      behind;
 *   3. every other member written with the PPL at E: one behind the
 *      anchor, which still says "no PPL";
 *   4. the anchor written with the PPL at E + 1: the freshest says "PPL"
 *      and every member's own superblock gives its place;
 *   5. every superblock at E + 1 (an ordinary update).
 * A write that fails in 2-4 puts the old state back with one more update
 * (events past any written). The run-time log is made before (no
 * allocation can fail after the superblocks changed) and installed last.
 *
 * Removing: the run-time log is taken off first, then the superblocks are
 * written without the feature bits (events + 1, md's md_update_sb after
 * log_exit): the freshest superblock then says "no PPL" whichever members
 * a kill left behind, and md ignores the per-member places then. The area
 * keeps its last logs (md leaves them too); ppl.offset/ppl.size stay in
 * the word, as md's super_1_sync leaves them. The log is kept, not freed,
 * until close: flushes it issued after its last unit may still complete.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/ppl.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/level/parity_log.h"
#include "engine/md/grow_bitmap.h"
#include "engine/md/grow_ppl.h"
#include "engine/md/member_state.h"
#include "engine/md/ppl.h"

#define PPL_FEATURES (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)
#define HDR_SECTORS (URAID_PPL_HEADER_BYTES / 512u)
/* mdadm's least room: a header and one page of partial parity */
#define MIN_SECTORS (HDR_SECTORS + 8u)

/* mdadm's update_super("ppl") for one superblock: offset and room (sectors). */
static void place_on(const struct uraid_sb *sb, uint32_t chunk, int32_t *offset, int64_t *room)
{
	int64_t bb = sb->bblog_offset;

	if (sb->super_offset < sb->data_offset) {
		*offset = 8;
		*room = bb ? bb - 8 : (int64_t)(sb->data_offset - sb->super_offset) - 8;
	} else {
		int64_t off = -(int64_t)(sb->super_offset - sb->data_offset - sb->data_size);
		if (off < INT16_MIN)
			off = INT16_MIN;
		*offset = (int32_t)off;
		*room = bb - off;
	}
	if (*room >= URAID_PPL_AREA_SECTORS) {
		*room = URAID_PPL_AREA_SECTORS;
	} else if (*room >= MIN_SECTORS) {
		/* choose_ppl_space: a header and a chunk, at least 128 KiB */
		int64_t best = HDR_SECTORS + (chunk > 256 ? chunk : 256);
		if (*room > best)
			*room = best;
	}
}

int grow_ppl_place(const struct array *a, int32_t *offset, uint32_t *size, char *err,
		   size_t errlen)
{
	int64_t least = INT64_MAX;
	bool any = false;

	for (unsigned i = 0; i < a->nmembers; i++) {
		if (!meta_sb_target(a, i))
			continue;
		const struct uraid_sb *sb = &a->member_sb[i];
		int32_t off;
		int64_t room;
		place_on(sb, a->sb.chunksize, &off, &room);
		if (room < MIN_SECTORS)
			return uraid_errf(err, errlen, -ENOSPC, "no room for a partial parity log on "
					  "%s: %" PRId64 " KiB %s, md needs at least %u KiB (a 4 KiB "
					  "header and 4 KiB of partial parity; mdadm makes it 1 MiB)",
					  a->members[i]->path, room > 0 ? room / 2 : 0,
					  sb->super_offset < sb->data_offset ?
					  "between the superblock and the data or bad-block log" :
					  "between the data and the bad-block log or superblock",
					  MIN_SECTORS / 2);
		any = true;
		offset[i] = off;
		if (room < least)
			least = room;
	}
	if (!any)
		return uraid_errf(err, errlen, -ENODEV, "no member to write a partial parity log to");
	/* md's ppl_validate_rdev: whole pages after the header */
	*size = (uint32_t)(HDR_SECTORS + (least - HDR_SECTORS) / 8 * 8);
	return 0;
}

/* A point where a kill could land: the crash test's snapshot. */
static void step_done(struct array *a, unsigned *step)
{
	if (a->grow_ppl_hook)
		a->grow_ppl_hook(a->grow_ppl_hook_arg, (*step)++);
}

/* The member in a slot, in sync, whose superblock goes first (-1: none). */
static int anchor_of(const struct array *a)
{
	for (unsigned i = 0; i < a->nmembers; i++)
		if (meta_sb_target(a, i) && a->member_slot[i] >= 0 &&
		    a->member_state[i] == URAID_MEMBER_IN_SYNC)
			return (int)i;
	return -1;
}

/* Steps 2-4 (see the top): 0, or the first failure with err. */
static int write_in_order(struct array *a, const struct uraid_sb *old, const struct uraid_sb *with,
			  unsigned anchor, unsigned *step, char *err, size_t errlen)
{
	uint64_t e = old->events;
	int rc;

	a->sb = *old;
	a->sb.events = e + 1;
	if ((rc = meta_write_one(a, anchor)))
		return uraid_errf(err, errlen, rc, "%s: cannot write its superblock: %s",
				  a->members[anchor]->path, strerror(-rc));
	step_done(a, step);
	a->sb = *with;
	a->sb.events = e;
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (i == anchor || !meta_sb_target(a, i))
			continue;
		if ((rc = meta_write_one(a, i)))
			return uraid_errf(err, errlen, rc, "%s: cannot write its superblock: %s",
					  a->members[i]->path, strerror(-rc));
		step_done(a, step);
	}
	a->sb.events = e + 1;
	if ((rc = meta_write_one(a, anchor)))
		return uraid_errf(err, errlen, rc, "%s: cannot write its superblock: %s",
				  a->members[anchor]->path, strerror(-rc));
	step_done(a, step);
	return 0;
}

/*
 * Each member's own place in memory (meta.c's compose writes a member's
 * own ppl.offset once its superblock copy has the PPL), or, with restore,
 * the copies' feature maps and words put back as saved.
 */
static void own_places(struct array *a, const int32_t *offset, uint32_t size, uint32_t bit,
		       uint32_t *saved_map, int32_t *saved_word, bool restore)
{
	for (unsigned i = 0; i < a->nmembers; i++) {
		struct uraid_sb *own = &a->member_sb[i];
		if (!meta_sb_target(a, i))
			continue;
		if (restore) {
			own->feature_map = saved_map[i];
			own->bitmap_offset = saved_word[i];
			continue;
		}
		saved_map[i] = own->feature_map;
		saved_word[i] = own->bitmap_offset;
		own->feature_map = (own->feature_map & ~PPL_FEATURES) | bit;
		uraid_sb_set_ppl(own, (int16_t)offset[i], (uint16_t)size);
	}
}

static int add_ppl(struct array *a, char *err, size_t errlen)
{
	int32_t offset[URAID_MAX_MEMBERS];
	uint32_t saved_map[URAID_MAX_MEMBERS];
	int32_t saved_word[URAID_MAX_MEMBERS];
	uint32_t size;
	int rc = grow_ppl_place(a, offset, &size, err, errlen);
	if (rc)
		return rc;
	int anchor = anchor_of(a);
	if (anchor < 0)
		return uraid_errf(err, errlen, -ENODEV, "no member in sync to write first");
	if (a->sb.events >= UINT64_MAX - 2)
		return uraid_errf(err, errlen, -EOVERFLOW, "events %" PRIu64 " are at the counter's "
				  "limit: no change can be recorded", a->sb.events);
	struct uraid_sb old = a->sb;
	uint32_t bit = ppl_area_multi(size) ? URAID_FEATURE_MULTIPLE_PPLS : URAID_FEATURE_PPL;
	bool same = true;
	for (unsigned i = 0; i < a->nmembers; i++)
		same = same && (!meta_sb_target(a, i) || offset[i] == offset[anchor]);
	/* the areas named in memory first: the walls let them through; the
	   array's word (for a member that has no place yet) is the anchor's */
	a->sb.feature_map = (a->sb.feature_map & ~PPL_FEATURES) | bit;
	uraid_sb_set_ppl(&a->sb, (int16_t)offset[anchor], (uint16_t)size);
	own_places(a, offset, size, bit, saved_map, saved_word, false);
	struct uraid_sb with = a->sb;
	struct parity_log *pl = NULL;
	rc = grow_walls(a, err, errlen);
	if (!rc && (rc = ppl_log_new(a, &pl)))
		uraid_errf(err, errlen, rc, "cannot set up the partial parity log: %s",
			   strerror(-rc));
	/* 1: every area emptied before any superblock names it */
	for (unsigned i = 0; !rc && i < a->nmembers; i++) {
		if (!meta_sb_target(a, i))
			continue;
		if ((rc = ppl_write_empty(a, a->members[i])))
			uraid_errf(err, errlen, rc, "%s: cannot write an empty partial parity log: %s",
				   a->members[i]->path, strerror(-rc));
	}
	if (rc) {
		if (pl)
			pl->ops->fini(pl);
		a->sb = old;
		own_places(a, offset, size, bit, saved_map, saved_word, true);
		grow_walls(a, NULL, 0);
		return rc;
	}
	unsigned step = 0;
	step_done(a, &step);
	/* 2-4, then 5 */
	rc = write_in_order(a, &old, &with, (unsigned)anchor, &step, err, errlen);
	if (rc) {
		/* back without the PPL, past every count written (E + 1) */
		char why[200];
		pl->ops->fini(pl);
		a->sb = old;
		a->sb.events = old.events + 1;
		own_places(a, offset, size, bit, saved_map, saved_word, true);
		grow_walls(a, NULL, 0);
		if (meta_record_change(a))
			snprintf(why, sizeof(why), "; the superblocks could not all be written back "
				 "either: see uraid status");
		else
			snprintf(why, sizeof(why), "; the superblocks are back without it");
		size_t n = strlen(err);
		if (n + 1 < errlen)
			snprintf(err + n, errlen - n, "%s", why);
		return rc;
	}
	a->last_update_was_dirty = false;
	rc = meta_write_all(a);
	if (rc)
		ulog(array_log(a), URAID_LOG_ERR, "%s: partial parity log added, but not every "
		     "superblock took its last update (%s); the next update writes them",
		     a->sb.set_name, strerror(-rc));
	step_done(a, &step);
	a->plog = pl;
	if (same)
		ulog(array_log(a), URAID_LOG_INFO, "%s: partial parity log added: %u sectors at "
		     "%d sectors from each superblock%s", a->sb.set_name, size, offset[anchor],
		     bit == URAID_FEATURE_MULTIPLE_PPLS ? " (multiple PPLs)" : "");
	else
		ulog(array_log(a), URAID_LOG_INFO, "%s: partial parity log added: %u sectors at "
		     "each member's own offset from its superblock (%d on %s)%s", a->sb.set_name,
		     size, offset[anchor], a->members[anchor]->path,
		     bit == URAID_FEATURE_MULTIPLE_PPLS ? " (multiple PPLs)" : "");
	return 0;
}

static int remove_ppl(struct array *a, char *err, size_t errlen)
{
	struct parity_log *pl = a->plog;
	struct uraid_sb old = a->sb;

	/* no unit is in the log (frozen): writes after the thaw go unlogged */
	a->plog = NULL;
	a->sb.feature_map &= ~PPL_FEATURES;
	int rc = grow_walls(a, err, errlen);
	if (!rc && (rc = meta_record_change(a)))
		uraid_errf(err, errlen, rc, "the superblocks could not be written: %s",
			   strerror(-rc));
	if (rc) {
		/* the in-memory state as it was; members that failed are failed */
		uint64_t ev = a->sb.events;
		a->sb = old;
		a->sb.events = ev;
		a->plog = pl;
		grow_walls(a, NULL, 0);
		return rc;
	}
	if (pl) {
		pl->retired_next = a->plog_retired;
		a->plog_retired = pl;
	}
	ulog(array_log(a), URAID_LOG_INFO, "%s: partial parity log removed (consistency policy "
	     "resync)", a->sb.set_name);
	return 0;
}

int grow_ppl_apply(struct array *a, bool add, char *err, size_t errlen)
{
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return uraid_errf(err, errlen, -EROFS, "the array is read-only");
	if (add) {
		/* checked again under the lock (the plan was made before) */
		if (ppl_enabled(a) || a->has_bitmap || (a->sb.feature_map & URAID_FEATURE_JOURNAL) ||
		    a->plog)
			return uraid_errf(err, errlen, -EBUSY, "the array's consistency policy changed "
					  "while the grow was being planned: grow again");
		if (a->reshape || (a->sb.feature_map & URAID_FEATURE_RESHAPE_ACTIVE))
			return uraid_errf(err, errlen, -EBUSY, "a partial parity log cannot be added "
					  "while a reshape is in progress");
		if (a->geom.level != URAID_LEVEL_5)
			return uraid_errf(err, errlen, -EINVAL, "a partial parity log is for RAID 5 only");
		return add_ppl(a, err, errlen);
	}
	if (!ppl_enabled(a))
		return uraid_errf(err, errlen, -EBUSY, "the array has no partial parity log (any "
				  "more): nothing removed");
	return remove_ppl(a, err, errlen);
}
