/* SPDX-License-Identifier: MIT */
/*
 * What each md level is, read-only: the facts the engine's level descriptors
 * (src/engine/level/) hold, for code outside the engine (create, bench, the
 * CLI, a planner). There is one table, the engine's; this header only shows
 * its public part, so a new level brings its facts along with its code.
 */
#ifndef URAID_LEVEL_H
#define URAID_LEVEL_H

#include <stdbool.h>
#include <stdint.h>

#include <uraid/geom.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the superblock's chunksize means for a level. */
enum uraid_chunk_use {
	URAID_CHUNK_NONE,       /* no chunks (RAID 1): chunksize 0 */
	URAID_CHUNK_STRIPE,     /* the stripe unit (RAID 0, 4, 5, 6, 10) */
	URAID_CHUNK_ROUNDING,   /* members rounded down to it, 0 for none (linear) */
};

struct uraid_level_info {
	int level;                  /* md's number (enum uraid_level) */
	const char *name;           /* "raid5", as uraid_level_name gives it */
	/* the fewest slots md runs the level with (mdadm takes 1 slot for
	   linear, RAID 0 and 1 only with --force) */
	unsigned min_members;
	/* the fewest slots uraid create (and a bench drive sweep) accepts */
	unsigned create_min_members;
	unsigned parity_members;    /* parity chunks in a stripe row: 0, 1 (RAID 4/5), 2 (RAID 6) */
	/* survives losing a member on some geometry: it can have spares, a
	   write-intent bitmap, background jobs (resync, check, rebuild), a
	   replacement, and members missing at creation */
	bool redundant;
	/* each member is used whole and sizes may differ (linear, RAID 0): the
	   superblock's size field does not apply, nor --size */
	bool whole_members;
	enum uraid_chunk_use chunk;
	bool chunk_pow2;            /* the chunk must be a power of two */
	bool has_layouts;           /* takes a layout word (--layout) */
	/* the feature bit without which md ignores the layout word (RAID 0's
	   URAID_FEATURE_RAID0_LAYOUT, which uraid create always sets); 0 */
	uint32_t layout_feature;
	/* a row of data runs across every member but the parity ones (RAID 0,
	   4, 5, 6): a full stripe is chunk x (members - parity_members); RAID
	   10's copies make its natural unit one chunk */
	bool data_striped;
	/* a WRITE_ZEROES or discard that covers part of a stripe row reads the
	   row and writes parity (RAID 4/5/6): fast only on whole rows */
	bool zeroes_whole_rows;
	/* resync, check, repair and the write-intent bitmap count array
	   sectors, not member sectors (md's RAID 10) */
	bool sync_in_array_sectors;
	/* uraid create without --size rounds the member size down to this
	   (mdadm's RAID 1: room for a later reshape to RAID 5); 0 */
	uint32_t create_size_align_kib;
	/* the levels it can be reshaped to (none yet: [grow]) */
	const int *reshape_to;
	unsigned nreshape_to;
};

/* The facts of md level `level`; NULL for a level uraid does not run. */
const struct uraid_level_info *uraid_level_info(int level);

/*
 * Can an array of geometry g run with the slots where present[slot] is true
 * (md's rules)? False: *bad_chunk (may be NULL) is the first chunk no slot
 * present holds a copy of (RAID 10), or UINT64_MAX when simply more slots
 * are missing than the level survives (uraid_geom_max_failures).
 */
bool uraid_level_survives(const struct uraid_geom *g, const bool *present, uint64_t *bad_chunk);

/* The full stripe of data in bytes, where the level has one (0: none). */
uint64_t uraid_level_full_stripe(const struct uraid_level_info *info, unsigned raid_disks,
				 uint64_t chunk_bytes);

#ifdef __cplusplus
}
#endif
#endif
