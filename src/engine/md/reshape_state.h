/* SPDX-License-Identifier: MIT */
/*
 * A RAID 4/5/6 restripe or a RAID 10 reshape in progress (md's reshape): the old and the new
 * geometry, where each keeps its data on every member, and the position
 * between them. Below the position (forwards) the array's sectors are in
 * the new geometry, from it on in the old one; backwards the other way
 * round (below it old, from it on new). The position only moves
 * while the rows of the step it passes are held (jobs/reshape.c), so a
 * request routed by it keeps its answer for its whole life.
 *
 * Member I/O adds the member's data_offset: during a reshape that is the
 * lower of the two data offsets on the slot's member, and each geometry
 * adds its own shift (0 for the lower one).
 *
 * Positions are in array sectors, as md's reshape_position; the step is a
 * whole number of rows of both geometries. The position is always on a
 * boundary of new rows (md's rule); uraid moves it by whole steps, but a
 * reshape md stopped may sit inside an old row, whose part below the
 * position is dead (its live part is served in the old geometry).
 *
 * RAID 10 (copies: every chunk on near x far members, near and offset
 * layouts only, as md) has no rows of parity to keep whole: the position is
 * any multiple of 4 KiB (md's raid10 moves it by pieces inside the smaller
 * chunk), job positions are array sectors, and how far one step may go is
 * decided from the position (reshape_copies_safe_end), as md's
 * reshape_request decides when to write a checkpoint. Forwards (more
 * members, or the same count with the larger room before the data) the
 * data offset moves down; backwards (fewer members, or the same count with
 * the larger room after the data, md's RESHAPE_BACKWARDS) it moves up and
 * the position runs from the new array's end (md's raid10_size with the
 * smaller count) down to 0 (reshape_copies_safe_start).
 */
#ifndef URAID_ENGINE_RESHAPE_STATE_H
#define URAID_ENGINE_RESHAPE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <uraid/geom.h>
#include <uraid/superblock.h>

struct array;

enum { RESHAPE_OLD, RESHAPE_NEW };

struct reshape_state {
	struct uraid_geom g[2];         /* RESHAPE_OLD, RESHAPE_NEW */
	uint64_t position;              /* forwards: below it is new; backwards: from it on */
	uint64_t step;                  /* array sectors moved at a time */
	uint64_t end;                   /* the new geometry's array sectors */
	/* backwards (fewer members, or the same count with md's
	   RESHAPE_BACKWARDS, feature 0x20; the new data offset above the old
	   one): the position runs from top down to 0, top being
	   md's start (raid5_size with the smaller data disk count and the size
	   rounded down to the larger chunk; RAID 10: raid10_size, the new
	   array's size) */
	bool backwards;
	bool copies;                    /* RAID 10: copies, not rows of parity */
	uint64_t top;
	int32_t delta_disks;
	/* per slot: the absolute data offset of each geometry (0: the slot is
	   not in that geometry) and the shift added to member I/O */
	uint64_t off[2][URAID_MAX_MEMBERS];
	uint64_t shift[2][URAID_MAX_MEMBERS];
	/* slots whose old-geometry content is not in sync though a member
	   sits there (a parity gap's old parity slot, taken by a new member):
	   never read for the old geometry */
	bool old_unsynced[URAID_MAX_MEMBERS];
};

/* Which geometry holds array sector `sector` (reshape active), and the
 * per-slot shifts its member I/O adds. */
static inline const struct uraid_geom *reshape_geom_at(const struct reshape_state *rs,
						       uint64_t sector, const uint64_t **shift)
{
	/* moved by the job's thread while requests outside its step read it */
	uint64_t pos = __atomic_load_n(&rs->position, __ATOMIC_ACQUIRE);
	int which = (sector < pos) != rs->backwards ? RESHAPE_NEW : RESHAPE_OLD;
	*shift = rs->shift[which];
	return &rs->g[which];
}

/* What job positions count: array sectors divided by this (the new data
 * members of a restripe; 1 for RAID 10, whose positions are array sectors). */
static inline uint64_t reshape_pos_div(const struct reshape_state *rs)
{
	return rs->copies ? 1 : rs->g[RESHAPE_NEW].data_disks;
}

/*
 * RAID 10, forwards: the end (at most limit) up to which the copies of
 * array sectors [pos, end) may be written in the new geometry while the
 * superblocks say pos, without touching old data still live (array
 * sectors at or above pos, in the old geometry). It ends on a boundary of
 * the new geometry's chunks or at limit; pos when not even the piece at
 * pos is safe (a distance between the data offsets md would refuse).
 */
uint64_t reshape_copies_safe_end(const struct reshape_state *rs, uint64_t pos, uint64_t limit);

/*
 * RAID 10, backwards (the mirror of reshape_copies_safe_end): the start (at
 * least limit) down to which the copies of array sectors [start, pos) may
 * be written in the new geometry while the superblocks say pos, without
 * touching old data still live (array sectors below pos, in the old
 * geometry). It lies on a boundary of the new geometry's chunks or at
 * limit; pos when not even the piece below pos is safe.
 */
uint64_t reshape_copies_safe_start(const struct reshape_state *rs, uint64_t pos, uint64_t limit);

/* Where a backwards reshape starts (md's raid5_size during a reshape):
 * dev_sectors rounded down to the larger chunk, times the smaller data
 * disk count. */
uint64_t reshape_top(const struct uraid_geom *old, const struct uraid_geom *new,
		     uint64_t dev_sectors);

/* mdadm's new data offset between lo and hi, held inside [min, max]
 * (jobs/reshape_start.c: the room before or after the data, the least
 * distance). */
uint64_t reshape_choose_offset(uint64_t lo, uint64_t hi, uint64_t min, uint64_t max);

/* The job moves the position (its step's rows held, core/freeze.h). */
static inline void reshape_set_position(struct reshape_state *rs, uint64_t pos)
{
	__atomic_store_n(&rs->position, pos, __ATOMIC_RELEASE);
}

/* md's rule for a position (raid5_run): a multiple of the larger chunk
 * times the new data disks. */
uint64_t reshape_align(const struct uraid_geom *old, const struct uraid_geom *new);

/* The step of a reshape from old to new: the least common multiple of
 * both rows and of reshape_align, so that every checkpoint is a position
 * assembly takes (a member count and a chunk change together disagree
 * otherwise: RAID 5 4 -> 5, 128 -> 64 KiB). */
uint64_t reshape_step(const struct uraid_geom *old, const struct uraid_geom *new);

/* RAID 10: md's least distance between the two data offsets (the larger
 * chunk times the copies an offset stripe holds: mdadm's
 * min_offset_change), and the job's unit (4 MiB, whole larger chunks). */
uint64_t reshape_copies_distance(const struct uraid_geom *old, const struct uraid_geom *new);
uint64_t reshape_copies_step(const struct uraid_geom *old, const struct uraid_geom *new);

/*
 * Build the state from the superblock (feature RESHAPE_ACTIVE) and each
 * slot's own superblock (data_offset, new_offset): every field checked as
 * md's raid5_run does (old raid_disks = raid_disks - delta_disks at least
 * the level's minimum, both geometries valid, the position on a boundary
 * of new rows and inside the array, each new data area inside its member).
 * Backwards ones as md takes them (delta_disks < 0, or 0 with
 * RESHAPE_BACKWARDS; 0x20 with more members is ignored, as md does):
 * the new data offset above the old one, the position at most top. Either
 * way the distance between the offsets must let every step left go on
 * without overwriting live data (check_distance). 0, or -EINVAL with one
 * line in err; *out is allocated.
 */
int reshape_state_from_sb(const struct uraid_sb *sb, const struct uraid_sb *const *slot_sb,
			  const uint64_t *member_sectors, struct reshape_state **out,
			  char *err, size_t errlen);

/* Slot s's member: its new data area (`used` sectors) clear of its
 * metadata areas (set by assembly). 0, or -EINVAL with one line in err. */
struct member;
int reshape_check_member(const struct reshape_state *rs, unsigned s, const struct member *m,
			 uint64_t used, char *err, size_t errlen);

/* Set the members' data_offset to the lower of the two, and their walls to
 * cover both data areas. Frozen (or not yet serving). */
void reshape_set_member_areas(struct array *a, const struct reshape_state *rs);

#endif
