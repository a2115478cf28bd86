/* SPDX-License-Identifier: MIT */
/*
 * Planning `uraid grow`: from an array's geometry and state and what the
 * user asked for, the steps that get there in md's way (a takeover that
 * changes the level without moving data, a restripe that moves it, a size,
 * an exported size, a bitmap, a partial parity log, a mirror count), or
 * one line saying why md would not and what to do instead.
 *
 * Pure: no I/O, no allocation. md/grow.c fills struct grow_array from the
 * running array and carries the steps out in order;
 * tests/unit/test_grow_plan.c walks every migration.
 *
 * md's rules followed here (kernel 6.1 takeovers, mdadm 4.2 Grow.c):
 *  - RAID 0 -> RAID 4/5: one zone only (every member the same size); one
 *    more slot, parity last (layout parity-last), missing until a spare is
 *    rebuilt onto it; a RAID 5 is then restriped to left-symmetric, as
 *    mdadm does (here once the parity slot is rebuilt).
 *  - RAID 4/5 -> RAID 0: parity-last geometry with exactly the parity slot
 *    (the last) missing; a RAID 5 in another layout is refused, with the
 *    way there (restripe to parity-last, then fail and remove the parity
 *    member).
 *  - RAID 1 -> RAID 5: exactly 2 slots; the chunk is the largest power of
 *    two up to 64 KiB that divides the member size (at least 4 KiB);
 *    left-symmetric. RAID 5 -> RAID 1: exactly 2 slots.
 *  - RAID 4 <-> RAID 5: the RAID 5 layout is parity-last (RAID 5 in
 *    another layout is restriped to it first).
 *  - RAID 5 -> RAID 6: one more slot holding only Q (the -6 layout of the
 *    RAID 5 one), then at once a restripe to the RAID 6 layout asked for
 *    (by default the plain one) with a spare in the Q slot, filled by the
 *    restripe (md's raid5_start_reshape puts it there not in sync). Asked
 *    to keep the -6 layout: the takeover alone, the slot rebuilt by
 *    recovery from a spare.
 *  - RAID 6 -> RAID 5: a -6 layout (or parity-last), the last slot dropped;
 *    another layout is restriped to its -6 form first.
 *  - RAID 10 near-2 -> RAID 0: exactly one member of each pair; mdadm
 *    fails and removes the second of each pair itself when both are there.
 *  - RAID 0 member count or chunk: through RAID 4 (takeover, restripe,
 *    takeover back), as mdadm does.
 *  - --consistency-policy (mdadm's Grow_consistency_policy, md's
 *    raid5_change_consistency_policy): ppl on RAID 5 only, with no bitmap
 *    or journal, not during a reshape (a resync or rebuild may run, as in
 *    md; a degraded array is taken, as md does); resync removes the PPL
 *    (or the bitmap); bitmap is --bitmap=internal. Alone, as --bitmap.
 *  - linear: members appended only (mdadm --grow --add, md's linear_add),
 *    the devices named with --add alone (append=N: the N newest spares);
 *    --raid-devices refused as mdadm refuses it, so an older spare is
 *    never taken; no chunk or layout change.
 */
#ifndef URAID_ENGINE_MD_GROW_PLAN_H
#define URAID_ENGINE_MD_GROW_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/geom.h>

/* What the planner knows of the array. */
struct grow_array {
	int level;                      /* enum uraid_level */
	uint32_t layout;
	uint32_t raid_disks;
	uint32_t chunk_sectors;         /* 0: none (RAID 1) */
	uint64_t dev_sectors;           /* the superblock's size: per-member sectors used */
	/* room for data on the smallest member in a slot (what --size=max
	   takes); RAID 0: whether every member has the same room */
	uint64_t member_room_sectors;
	bool single_zone;
	uint64_t computed_sectors;      /* the geometry's array size */
	uint64_t exported_sectors;      /* what clients see (--array-size) */
	bool slot_missing[URAID_MAX_MEMBERS];   /* no in-sync member in the slot */
	const char *slot_path[URAID_MAX_MEMBERS];       /* its member, for messages; may be NULL */
	unsigned spares;                /* members not in a slot, ready to be rebuilt onto */
	/* members waiting in a slot, not in sync (recovering it, or a
	   replacement): md's raid10_start_reshape counts them as spares */
	unsigned pending;
	bool has_bitmap;
	bool bitmap_room;               /* an internal bitmap fits (sb_areas) */
	bool has_ppl;                   /* a partial parity log (feature 0x400/0x800) */
	bool has_journal;               /* a write journal (feature 0x200) */
	bool reshaping;                 /* a reshape is in progress (on disk or running) */
	const char *job;                /* the background job running ("check"), or NULL */
	bool job_recover;               /* that job is a rebuild onto a spare (md's "recover") */
};

#define GROW_SIZE_MAX UINT64_MAX        /* --size=max, --array-size=max */

enum grow_bitmap { GROW_BITMAP_KEEP, GROW_BITMAP_INTERNAL, GROW_BITMAP_NONE };
/* --consistency-policy */
enum grow_policy { GROW_POLICY_KEEP, GROW_POLICY_RESYNC, GROW_POLICY_PPL, GROW_POLICY_BITMAP };

/* What the user asked for; 0 / false / KEEP: unchanged. */
struct grow_request {
	uint32_t raid_disks;
	bool level_set;
	int level;
	uint32_t chunk_sectors;
	bool layout_set;
	uint32_t layout;
	uint64_t size_sectors;          /* per member; GROW_SIZE_MAX: max */
	uint64_t array_sectors;         /* exported; GROW_SIZE_MAX: the computed size */
	enum grow_bitmap bitmap;
	enum grow_policy policy;
	unsigned adding;                /* devices named with --add, spares before the steps */
	unsigned append;                /* --add alone: a linear array's new members */
};

enum grow_step_kind {
	GROW_STEP_ARRAY_SIZE,           /* the exported size: sectors (0: the computed one) */
	GROW_STEP_SIZE,                 /* the per-member size: dev_sectors */
	GROW_STEP_BITMAP,               /* add (bitmap) or remove the internal bitmap */
	GROW_STEP_PPL,                  /* add (ppl) or remove the partial parity log */
	GROW_STEP_MIRRORS,              /* RAID 1 slots: raid_disks */
	GROW_STEP_DROP_COPIES,          /* fail and remove the second member of each pair */
	GROW_STEP_TAKEOVER,             /* a new level on the same data: level, layout, raid_disks, chunk */
	GROW_STEP_RESTRIPE,             /* grow-core's reshape to layout, raid_disks, chunk */
	GROW_STEP_APPEND,               /* linear: spares appended as slots up to raid_disks */
};

struct grow_step {
	enum grow_step_kind kind;
	/* the geometry after the step (every kind) */
	int level;
	uint32_t layout, raid_disks, chunk_sectors;
	uint64_t dev_sectors;           /* per-member size used (SIZE changes it) */
	uint64_t sectors;               /* ARRAY_SIZE */
	bool bitmap;                    /* BITMAP: add */
	bool ppl;                       /* PPL: add */
	/* the step waits for what the one before left to do: a restripe to end
	   (a RESTRIPE before it), or the new slot's recovery (RAID 0 -> 5's
	   restripe to left-symmetric) */
	bool waits;
};

#define GROW_STEPS_MAX 6

struct grow_plan {
	unsigned nsteps;
	struct grow_step step[GROW_STEPS_MAX];
};

/*
 * The plan for r on a, or -EINVAL with one line in err saying why not and
 * what to do; -EALREADY (err says so) when r asks for nothing new.
 */
int grow_plan_build(const struct grow_array *a, const struct grow_request *r,
		    struct grow_plan *p, char *err, size_t errlen);

/* One line for a step, given the geometry before it (prev: the array, or
 * the step before): "takeover RAID 0 -> RAID 4 (2 -> 3 slots, ...)". */
void grow_step_describe(const struct grow_step *s, const struct grow_step *prev, char *buf,
			size_t len);

/* The geometry of a as a step (kind ignored), for grow_step_describe. */
void grow_step_from_array(const struct grow_array *a, struct grow_step *s);

#endif
