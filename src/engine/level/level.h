/* SPDX-License-Identifier: MIT */
/*
 * One md level, described by itself (as SPDK's struct raid_bdev_module): its
 * facts and all its hooks, request path and background work together. The
 * generic code (core/, md/, jobs/, setup/) asks the descriptor and never
 * tests the level's number.
 *
 * A level is its descriptor file (linear.c, raid0.c, raid1.c, raid10.c,
 * raid456.c) plus one line in registry.c; its I/O may be shared with a
 * sibling (single_io.c: linear and RAID 0, mirror_io.c: RAID 1 and 10,
 * raid5*.c: RAID 4/5/6), and its layout math is geom's
 * (src/geom/, one table entry per level).
 */
#ifndef URAID_ENGINE_LEVEL_H
#define URAID_ENGINE_LEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/geom.h>
#include <uraid/level.h>

struct level_ops;
struct sync_level;

/* How a reshape (md's restripe, jobs/reshape.c) moves the level's data. */
enum level_reshape {
	LEVEL_RESHAPE_NONE,     /* not reshaped by a restripe */
	LEVEL_RESHAPE_STRIPES,  /* rows of data and parity (RAID 4/5/6); positions per member */
	LEVEL_RESHAPE_COPIES,   /* every copy of each chunk (RAID 10 near/offset); positions
				   in array sectors, as md's raid10 keeps them */
};

struct level {
	/* the facts, also shown outside the engine (uraid_level_info) */
	struct uraid_level_info info;
	/* the request path (core/array.h) */
	const struct level_ops *io;
	/* background jobs (jobs/sync.h); NULL: the level has none */
	const struct sync_level *sync;
	/*
	 * Can it run with the slots where ok[slot] is true (`missing` are not)?
	 * NULL: as long as missing <= uraid_geom_max_failures(g). False with
	 * *bad_chunk set where a chunk has lost every copy (UINT64_MAX else).
	 */
	bool (*survives)(const struct uraid_geom *g, const bool *ok, unsigned missing,
			 uint64_t *bad_chunk);
	/*
	 * md's raid0/1/10 _error: the last working copy of a slot is never
	 * failed (a write error there fails the request instead); RAID 4/5/6
	 * record the failure even when the array cannot go on.
	 */
	bool keeps_last_copy;
	/*
	 * Writes skip a failed slot, its replacement's part with them (RAID
	 * 4/5/6): a replacement whose member fails becomes the slot's rebuild
	 * instead of completing the copy; RAID 1/10 keep writing it.
	 */
	bool writes_skip_failed_slot;
	/* how a member count, chunk or layout change moves the data */
	enum level_reshape reshape;
};

/* The descriptor of md level `md_level` (registry.c); NULL if uraid has none. */
const struct level *level_find(int md_level);

/* The generic survival rule, and the level's own when it has one. */
bool level_survives(const struct level *lv, const struct uraid_geom *g, const bool *ok,
		    unsigned missing, uint64_t *bad_chunk);

#endif
