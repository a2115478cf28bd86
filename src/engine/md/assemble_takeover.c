// SPDX-License-Identifier: MIT
/*
 * A kill between the members' superblock writes of a RAID 5 -> 6 update
 * (md/grow.c takeover_restripe: the takeover to the -6 layout and the
 * restripe's start in one update, events + 1) leaves the members written
 * last one event behind, still saying RAID 5. md's analyze_sbs kicks such
 * a member ("strangely different superblock": level and layout differ),
 * and mdadm --assemble --force only raises its events, which the kernel
 * kicks the same way; mdadm 4.2 does not even get there: it aborts the
 * whole assembly ("superblock on /dev/vdh doesn't match others", measured
 * by tests/interop/test-grow-r6-window.sh). uraid before this left them
 * out: the restripe ran degraded by that many, or not at all when three or
 * more were behind.
 *
 * Their data has not moved: the restripe's first step is written only
 * after every member holds the update, and each step is checkpointed
 * (events + 1 again) before the next, so while the freshest superblocks
 * still say the restripe is at its start, every member's rows are those of
 * the RAID 5, which are the takeover's rows (the -6 layout keeps the RAID
 * 5's placement and adds Q on the new slot). Such a member is taken as
 * the update would have left it: an in-sync member keeps its slot; the
 * spare the update gave the Q slot fills it as md's raid5_start_reshape
 * leaves it (recovery_offset 0, not In_sync). Only that exact state:
 * anything else stays md's kick (md/assemble.c).
 *
 * A RAID 0 growth is the same update (md's raid45_takeover_raid0: RAID 4
 * parity-last with P missing, then the forwards restripe to more members,
 * one superblock update here), and its members behind say RAID 0: the
 * same rules, with RAID 0's own fields (used size 0, the zone-layout bit,
 * layout 0..2: one zone, the takeover needs it, places the chunks as the
 * RAID 4's data slots). test_grow_r6 2d.
 *
 * What reaches the disks is the next ordinary superblock update (the
 * restripe's first checkpoint), the same fields for every member, which md
 * assembles as any mid-reshape RAID 6.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>
#include "engine/md/assemble_takeover.h"
#include "engine/md/reshape_state.h"

/* Bits of a member's own (super_1_sync writes them per member). */
#define OWN_FEATURES                                                                   \
	(URAID_FEATURE_RECOVERY_OFFSET | URAID_FEATURE_BAD_BLOCKS |                      \
	 URAID_FEATURE_REPLACEMENT | URAID_FEATURE_NEW_OFFSET | URAID_FEATURE_RECOVERY_BITMAP)
/* What the restripe's start adds to the array's bits. */
#define RESHAPE_FEATURES                                                               \
	(URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_RESHAPE_BACKWARDS)

/* md's raid6_takeover: the -6 form of a RAID 5 layout (parity-last keeps its
 * number); false for a layout that is none of RAID 5's. */
static bool layout_6_of(uint32_t l5, uint32_t *l6)
{
	switch (l5) {
	case URAID_LEFT_ASYMMETRIC: *l6 = URAID_LEFT_ASYMMETRIC_6; return true;
	case URAID_RIGHT_ASYMMETRIC: *l6 = URAID_RIGHT_ASYMMETRIC_6; return true;
	case URAID_LEFT_SYMMETRIC: *l6 = URAID_LEFT_SYMMETRIC_6; return true;
	case URAID_RIGHT_SYMMETRIC: *l6 = URAID_RIGHT_SYMMETRIC_6; return true;
	case URAID_PARITY_FIRST: *l6 = URAID_PARITY_FIRST_6; return true;
	case URAID_PARITY_LAST: *l6 = URAID_PARITY_LAST; return true;
	default: return false;
	}
}

/* The restripe fresh describes has not moved a sector: forwards at 0,
 * backwards at its top (md's start). */
static bool restripe_at_start(const struct uraid_sb *fresh, char *why, size_t whylen)
{
	const struct uraid_sb *none[URAID_MAX_MEMBERS] = { 0 };
	uint64_t sectors[URAID_MAX_MEMBERS] = { 0 };
	struct reshape_state *rs;
	char err[200];

	if (reshape_state_from_sb(fresh, none, sectors, &rs, err, sizeof(err))) {
		snprintf(why, whylen, "the freshest reshape state is not usable: %s", err);
		return false;
	}
	uint64_t start = rs->backwards ? rs->top : 0;
	free(rs);
	if (fresh->reshape_position != start) {
		snprintf(why, whylen, "the restripe has moved data (reshape_position %" PRIu64
			 ", its start %" PRIu64 ")", fresh->reshape_position, start);
		return false;
	}
	return true;
}

#define NO(...) (snprintf(why, whylen, __VA_ARGS__), false)

bool assemble_takeover_member(const struct uraid_sb *fresh, struct uraid_sb *sb, char *why,
			      size_t whylen)
{
	uint32_t l6;

	/* RAID 5 -> 6, or RAID 0 -> 4 (a RAID 0 growth: md's
	   raid45_takeover_raid0, parity-last with the parity slot missing,
	   then the restripe to more members, forwards; RAID 0 again at its
	   end). Both keep the source's rows: a RAID 0 of one zone (the
	   takeover needs one) places its chunks as the RAID 4's data slots */
	bool from0 = sb->level == 0;
	if (!(fresh->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) ||
	    (from0 ? fresh->level != 4 || fresh->new_level != 4
		   : fresh->level != 6 || fresh->new_level != 6 || sb->level != 5))
		return NO("not a RAID 5 member of a RAID 5 -> 6 restripe, nor a RAID 0 member of "
			  "a RAID 0 -> 4 one");
	/* a member in a slot: exactly the update before; a spare's superblock
	   may be older (md_update_sb leaves spares out of clean/dirty updates,
	   and the kernel asks no event match of a spare): what the update gave
	   it is a slot filled from scratch, nothing of its content is read */
	uint32_t dn = sb->dev_number;
	if (dn >= fresh->max_dev || dn >= sb->max_dev || dn >= URAID_SB_MAX_DEV)
		return NO("device number %u has no role in the freshest superblock", dn);
	bool was_spare = sb->dev_roles[dn] == URAID_ROLE_SPARE;
	if (was_spare ? sb->events >= fresh->events : sb->events + 1 != fresh->events)
		return NO("events %" PRIu64 " are not %s behind %" PRIu64, sb->events,
			  was_spare ? "(a spare's)" : "one", fresh->events);
	if (from0 ? fresh->layout != URAID_PARITY_LAST || sb->layout > 2
		  : !layout_6_of(sb->layout, &l6) || fresh->layout != l6)
		return NO("layout %u is not the RAID %d form of %u", sb->layout, from0 ? 0 : 5,
			  fresh->layout);
	if ((int64_t)fresh->raid_disks - fresh->delta_disks != (int64_t)sb->raid_disks + 1)
		return NO("%u members, the restripe's old geometry %" PRId64 " (one more: Q or P)",
			  sb->raid_disks, (int64_t)fresh->raid_disks - fresh->delta_disks);
	/* RAID 0's used size is 0 (whole members); the takeover's is the
	   members' data area, which it must not pass */
	if (sb->chunksize != fresh->chunksize ||
	    (from0 ? sb->size != 0 || fresh->size > sb->data_size : sb->size != fresh->size))
		return NO("chunk %u / used size %" PRIu64 " sectors, the restripe's old %u / %" PRIu64,
			  sb->chunksize, sb->size, fresh->chunksize, fresh->size);
	if (sb->data_offset != fresh->data_offset)
		return NO("data_offset %" PRIu64 ", the restripe's old %" PRIu64, sb->data_offset,
			  fresh->data_offset);
	/* a bitmap's header would be an update behind too (5 -> 6 refuses one) */
	if (fresh->feature_map & URAID_FEATURE_BITMAP_OFFSET)
		return NO("the array has a write-intent bitmap");
	uint32_t array_bits = fresh->feature_map & ~OWN_FEATURES & ~RESHAPE_FEATURES;
	/* the takeover from RAID 0 drops its zone layout bit (one zone) */
	uint32_t own_bits = sb->feature_map & ~URAID_FEATURE_BAD_BLOCKS &
			    ~(from0 ? URAID_FEATURE_RAID0_LAYOUT : 0);
	if (own_bits != array_bits)
		return NO("feature_map 0x%x, the restripe's old 0x%x", sb->feature_map, array_bits);
	/* the same members in the same slots; the update may have given a
	   spare the Q slot (or, with --raid-devices, a new slot) */
	for (uint32_t d = 0; d < sb->max_dev && d < URAID_SB_MAX_DEV; d++) {
		uint16_t was = sb->dev_roles[d];
		uint16_t now = d < fresh->max_dev ? fresh->dev_roles[d] : URAID_ROLE_SPARE;
		if (was < sb->raid_disks ? now != was
					  : d == dn && now != URAID_ROLE_SPARE &&
					    (now < sb->raid_disks || now >= fresh->raid_disks))
			return NO("device %u's role 0x%x is 0x%x in the freshest superblock", d,
				  was, now);
	}
	if (!restripe_at_start(fresh, why, whylen))
		return false;

	/* as the update would have written it (md/meta.c compose) */
	struct uraid_sb own = *sb;
	*sb = *fresh;
	sb->feature_map = (fresh->feature_map & ~OWN_FEATURES) |
			  (own.feature_map & URAID_FEATURE_BAD_BLOCKS) |
			  (fresh->feature_map & URAID_FEATURE_NEW_OFFSET);
	sb->new_offset = fresh->new_offset;
	sb->recovery_offset = 0;
	uint16_t role = fresh->dev_roles[dn];
	if (role >= own.raid_disks && role < (int64_t)fresh->raid_disks - fresh->delta_disks)
		sb->feature_map |= URAID_FEATURE_RECOVERY_OFFSET;   /* Q or P: filled from 0 */
	sb->data_offset = own.data_offset;
	sb->data_size = own.data_size;
	sb->super_offset = own.super_offset;
	sb->dev_number = own.dev_number;
	sb->cnt_corrected_read = own.cnt_corrected_read;
	memcpy(sb->device_uuid, own.device_uuid, 16);
	sb->devflags = own.devflags;
	sb->bblog_shift = own.bblog_shift;
	sb->bblog_size = own.bblog_size;
	sb->bblog_offset = own.bblog_offset;
	sb->sb_csum = own.sb_csum;
	return true;
}
