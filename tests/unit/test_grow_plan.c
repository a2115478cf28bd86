// SPDX-License-Identifier: MIT
/*
 * setup/grow_plan: every migration `uraid grow` knows, allowed (the steps,
 * in order, with the geometry after each) or refused (the reason's words),
 * and the rules on combining changes, background jobs, degraded arrays and
 * sizes.
 *
 *   test_grow_plan
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "engine/md/grow_plan.h"
#include "../support/check.h"

#define MIB (2048ull)          /* sectors */

/* A healthy array of n members, 1 GiB used on each (room for 2 GiB). */
static struct grow_array arr(int level, uint32_t layout, uint32_t n, uint32_t chunk)
{
	struct grow_array a = {
		.level = level, .layout = layout, .raid_disks = n, .chunk_sectors = chunk,
		.dev_sectors = 1024 * MIB, .member_room_sectors = 2048 * MIB,
		.single_zone = true, .bitmap_room = true,
	};
	uint64_t data = level == 1 ? 1 : level == 0 ? n : level == 6 ? n - 2
			: level == 10 ? n / 2 : n - 1;
	a.computed_sectors = a.exported_sectors = a.dev_sectors * data;
	return a;
}

static int plan(const struct grow_array *a, const struct grow_request *r, struct grow_plan *p,
		char *err)
{
	int rc = grow_plan_build(a, r, p, err, 256);
	if (!rc) {
		/* every step describes itself in one non-empty line */
		struct grow_step prev;
		grow_step_from_array(a, &prev);
		for (unsigned i = 0; i < p->nsteps; i++) {
			char line[256] = "";
			grow_step_describe(&p->step[i], &prev, line, sizeof(line));
			CHECK(line[0] && !strchr(line, '\n'), "step %u: '%s'", i, line);
			prev = p->step[i];
		}
	}
	return rc;
}

#define REFUSED(a, r, words) do {                                               \
	struct grow_plan p_; char e_[256] = "";                                 \
	int rc_ = plan(&(a), &(r), &p_, e_);                                    \
	CHECK(rc_ == -EINVAL && strstr(e_, words), "rc %d '%s' (want '%s')", rc_, e_, words); \
} while (0)

static void step_is(const struct grow_plan *p, unsigned i, enum grow_step_kind k, int level,
		    uint32_t layout, uint32_t disks, uint32_t chunk, bool waits)
{
	CHECK(i < p->nsteps, "step %u of %u", i, p->nsteps);
	if (i >= p->nsteps)
		return;
	const struct grow_step *s = &p->step[i];
	CHECK(s->kind == k && s->level == level && s->layout == layout && s->raid_disks == disks &&
	      s->chunk_sectors == chunk && s->waits == waits,
	      "step %u: kind %d level %d layout %u disks %u chunk %u waits %d; want %d %d %u %u %u %d",
	      i, s->kind, s->level, s->layout, s->raid_disks, s->chunk_sectors, s->waits, k, level,
	      layout, disks, chunk, waits);
}

static void takeovers(void)
{
	struct grow_plan p;
	char err[256];

	/* RAID 0 -> 5: one slot more, parity last; then mdadm's default
	   layout: at once on the degraded array without a spare (as mdadm),
	   once the parity slot is rebuilt with one */
	struct grow_array a = arr(0, 0, 3, 128);
	struct grow_request r = { .level_set = true, .level = 5 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "0->5 without a spare: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 5, URAID_PARITY_LAST, 4, 128, false);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 5, URAID_LEFT_SYMMETRIC, 4, 128, false);
	r.adding = 1;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "0->5: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 5, URAID_PARITY_LAST, 4, 128, false);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 5, URAID_LEFT_SYMMETRIC, 4, 128, true);
	r.layout_set = true;
	r.layout = URAID_PARITY_LAST;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "0->5 parity-last kept: %s", err);
	r = (struct grow_request){ .level_set = true, .level = 4 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "0->4: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 4, URAID_PARITY_LAST, 4, 128, false);
	a.single_zone = false;
	REFUSED(a, r, "same size");
	/* 0 -> 5 then more members: a restripe after the parity is rebuilt */
	a = arr(0, 0, 3, 128);
	a.spares = 1;
	r = (struct grow_request){ .level_set = true, .level = 5, .raid_disks = 5 };
	REFUSED(a, r, "need 2 spares");
	a.spares = 2;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "0->5 x5: %s", err);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 5, URAID_LEFT_SYMMETRIC, 5, 128, true);

	/* RAID 4/5 -> 0: parity-last, only the parity slot missing */
	a = arr(5, URAID_PARITY_LAST, 4, 128);
	r = (struct grow_request){ .level_set = true, .level = 0 };
	REFUSED(a, r, "parity slot (slot 3) missing");
	a.slot_missing[3] = true;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "5->0: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 0, 0, 3, 128, false);
	a.slot_missing[3] = false;
	a.slot_missing[1] = true;
	REFUSED(a, r, "parity slot");
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	a.slot_missing[3] = true;
	REFUSED(a, r, "parity-last");
	a = arr(4, 0, 4, 128);
	a.slot_missing[3] = true;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "4->0: %s", err);

	/* RAID 1 -> 5: two members; the chunk from the size */
	a = arr(1, 0, 2, 0);
	r = (struct grow_request){ .level_set = true, .level = 5 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "1->5: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 5, URAID_LEFT_SYMMETRIC, 2, 128, false);
	/* md divides the exported size (array_sectors), not the members' */
	a.exported_sectors = 1024 * MIB + 24;   /* 12 KiB over: 4 KiB chunk */
	CHECK(!plan(&a, &r, &p, err) && p.step[0].chunk_sectors == 8, "1->5 chunk: %s", err);
	a.exported_sectors = 1024 * MIB + 2;
	REFUSED(a, r, "multiple of 4 KiB");
	a.exported_sectors = 1024 * MIB;
	a.dev_sectors = 1024 * MIB + 24;        /* the members' size does not count */
	CHECK(!plan(&a, &r, &p, err) && p.step[0].chunk_sectors == 128, "1->5 chunk of the "
	      "exported size: %s", err);
	a = arr(1, 0, 3, 0);
	REFUSED(a, r, "only with 2 members");
	/* 1 -> 5 with 3 members: takeover, then restripe */
	a = arr(1, 0, 2, 0);
	a.spares = 1;
	r.raid_disks = 3;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "1->5 x3: %s", err);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 5, URAID_LEFT_SYMMETRIC, 3, 128, false);

	/* RAID 5 -> 1: two members */
	a = arr(5, URAID_LEFT_SYMMETRIC, 2, 128);
	r = (struct grow_request){ .level_set = true, .level = 1 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "5->1: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 1, 0, 2, 0, false);
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	REFUSED(a, r, "only with 2 members");

	/* RAID 4 <-> 5 */
	a = arr(4, 0, 4, 128);
	r = (struct grow_request){ .level_set = true, .level = 5 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "4->5: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 5, URAID_PARITY_LAST, 4, 128, false);
	a = arr(5, URAID_PARITY_LAST, 4, 128);
	r.level = 4;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "5->4: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 4, 0, 4, 128, false);
	/* another layout: restripe to parity-last, then the takeover */
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "5(ls)->4: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 5, URAID_PARITY_LAST, 4, 128, false);
	step_is(&p, 1, GROW_STEP_TAKEOVER, 4, 0, 4, 128, true);

	/* RAID 5 -> 6: -6 layout with one more slot, then the restripe */
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	r = (struct grow_request){ .level_set = true, .level = 6 };
	REFUSED(a, r, "needs a spare");
	r.adding = 1;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "5->6: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 6, URAID_LEFT_SYMMETRIC_6, 4, 128, false);
	/* md's way: the restripe starts at once, the spare in the Q slot */
	step_is(&p, 1, GROW_STEP_RESTRIPE, 6, URAID_LEFT_SYMMETRIC, 4, 128, false);
	/* one more member as well: a spare for the Q slot and one for the new one */
	r.raid_disks = 5;
	REFUSED(a, r, "5 members need 2 spares, the array has 1");
	r.adding = 2;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "5->6 (+1): %s", err);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 6, URAID_LEFT_SYMMETRIC, 5, 128, false);
	r.raid_disks = 0;
	r.adding = 1;
	/* asked to keep the -6 layout: the takeover alone */
	r.layout_set = true;
	r.layout = URAID_LEFT_SYMMETRIC_6;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "5->6 (-6 kept): %s", err);

	/* RAID 6 -> 5: a -6 layout drops its Q slot */
	a = arr(6, URAID_LEFT_SYMMETRIC_6, 4, 128);
	r = (struct grow_request){ .level_set = true, .level = 5 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "6->5: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 5, URAID_LEFT_SYMMETRIC, 3, 128, false);
	a = arr(6, URAID_LEFT_SYMMETRIC, 5, 128);
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "6(ls)->5: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 6, URAID_LEFT_SYMMETRIC_6, 5, 128, false);
	step_is(&p, 1, GROW_STEP_TAKEOVER, 5, URAID_LEFT_SYMMETRIC, 4, 128, true);

	/* RAID 10 near-2 -> 0 */
	a = arr(10, 0x102, 4, 128);
	r = (struct grow_request){ .level_set = true, .level = 0 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "10->0: %s", err);
	CHECK(p.step[0].kind == GROW_STEP_DROP_COPIES, "10->0 drops copies first");
	step_is(&p, 1, GROW_STEP_TAKEOVER, 0, 0, 2, 128, false);
	a.slot_missing[1] = true;
	REFUSED(a, r, "exactly one member of each pair");
	a.slot_missing[2] = true;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10->0 half missing: %s", err);
	a.slot_missing[3] = true;
	REFUSED(a, r, "lost data");
	a = arr(10, 0x201, 4, 128);
	REFUSED(a, r, "near=2");
	/* no bitmap on RAID 0 */
	a = arr(10, 0x102, 4, 128);
	a.has_bitmap = true;
	REFUSED(a, r, "--bitmap=none first, then --level=0");
	/* a spare would be rebuilt into a slot the takeover renumbers */
	a = arr(10, 0x102, 4, 128);
	a.spares = 1;
	REFUSED(a, r, "remove the spares first");
	a.spares = 0;
	r.adding = 1;
	REFUSED(a, r, "remove the spares first");

	/* what md cannot do */
	a = arr(10, 0x102, 4, 128);
	r = (struct grow_request){ .level_set = true, .level = 5 };
	REFUSED(a, r, "RAID 10 -> RAID 5 is not a migration md can do");
	a = arr(0, 0, 3, 128);
	r.level = 6;
	REFUSED(a, r, "goes through RAID 5");
	a = arr(1, 0, 2, 0);
	r.level = 6;
	REFUSED(a, r, "RAID 1 -> RAID 6 is not a migration md can do");
	a = arr(-1, 0, 2, 0);
	r.level = 5;
	REFUSED(a, r, "linear -> RAID 5 is not a migration md can do");
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	r.level = 10;
	REFUSED(a, r, "RAID 5 -> RAID 10 is not a migration md can do");
	a.slot_missing[0] = true;
	r.level = 6;
	REFUSED(a, r, "degraded");
}

static void restripes(void)
{
	struct grow_plan p;
	char err[256];

	/* RAID 5 3 -> 4 needs a spare */
	struct grow_array a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	struct grow_request r = { .raid_disks = 4 };
	REFUSED(a, r, "need 1 spares");
	r.adding = 1;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "5 3->4: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 5, URAID_LEFT_SYMMETRIC, 4, 128, false);
	/* chunk and layout */
	r = (struct grow_request){ .chunk_sectors = 64, .layout_set = true,
				   .layout = URAID_RIGHT_ASYMMETRIC };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "chunk+layout: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 5, URAID_RIGHT_ASYMMETRIC, 3, 64, false);
	r = (struct grow_request){ .chunk_sectors = 96 };
	REFUSED(a, r, "power of two");
	/* 4 -> 3: the exported size must go first */
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	r = (struct grow_request){ .raid_disks = 3 };
	REFUSED(a, r, "--array-size=2097152K first");
	r.array_sectors = 2048 * MIB;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "5 4->3 with array size: %s", err);
	CHECK(p.step[0].kind == GROW_STEP_ARRAY_SIZE && p.step[0].sectors == 2048 * MIB,
	      "array size first: kind %d %" PRIu64, p.step[0].kind, p.step[0].sectors);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 5, URAID_LEFT_SYMMETRIC, 3, 128, false);
	/* RAID 6 below 4 members */
	a = arr(6, URAID_LEFT_SYMMETRIC, 4, 128);
	r = (struct grow_request){ .raid_disks = 3, .array_sectors = 1024 * MIB };
	REFUSED(a, r, "at least 4 members");
	/* degraded RAID 5 */
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	a.slot_missing[2] = true;
	r = (struct grow_request){ .raid_disks = 4, .adding = 1 };
	REFUSED(a, r, "degraded");
	/* same geometry: nothing */
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	r = (struct grow_request){ .raid_disks = 3 };
	CHECK(plan(&a, &r, &p, err) == -EALREADY, "same geometry: %s", err);

	/* RAID 0 3 -> 4: through RAID 4 and back */
	a = arr(0, 0, 3, 128);
	a.spares = 1;
	r = (struct grow_request){ .raid_disks = 4 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 3, "0 3->4: %s", err);
	step_is(&p, 0, GROW_STEP_TAKEOVER, 4, URAID_PARITY_LAST, 4, 128, false);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 4, URAID_PARITY_LAST, 5, 128, false);
	step_is(&p, 2, GROW_STEP_TAKEOVER, 0, 0, 4, 128, true);
	r.raid_disks = 2;
	REFUSED(a, r, "cannot lose members");
	a.single_zone = false;
	r.raid_disks = 4;
	REFUSED(a, r, "more than one zone");

	/* RAID 1 mirrors */
	a = arr(1, 0, 2, 0);
	r = (struct grow_request){ .raid_disks = 3 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "1 2->3: %s", err);
	step_is(&p, 0, GROW_STEP_MIRRORS, 1, 0, 3, 0, false);
	a = arr(1, 0, 3, 0);
	a.slot_path[2] = "/tmp/m2";
	r.raid_disks = 2;
	REFUSED(a, r, "slot 2 still holds /tmp/m2");
	a.slot_missing[2] = true;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "1 3->2 empty slot: %s", err);
	r = (struct grow_request){ .chunk_sectors = 128 };
	REFUSED(a, r, "no chunk or layout");

	/* RAID 10: a restripe (the engine refuses far layouts and a change of
	   the number of copies with mdadm's words) */
	a = arr(10, 0x102, 4, 128);
	a.spares = 2;
	r = (struct grow_request){ .raid_disks = 6 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 4->6: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 10, 0x102, 6, 128, false);
	r = (struct grow_request){ .chunk_sectors = 64 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 chunk 64K -> 32K: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 10, 0x102, 4, 64, false);
	r = (struct grow_request){ .layout = 0x10201, .layout_set = true };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 n2 -> o2: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 10, 0x10201, 4, 128, false);
	a.spares = 0;
	r = (struct grow_request){ .raid_disks = 6 };
	REFUSED(a, r, "spares");
	r = (struct grow_request){ .raid_disks = 3 };
	REFUSED(a, r, "less than");
	/* fewer members with --array-size: room after the data for mdadm's
	   least move (one chunk), 3/2 of the used size; without it mdadm makes
	   the used size one chunk smaller first: 3/2 of 1 GiB less a chunk,
	   rounded down to the chunk (16383 chunks x 3 / 2: 24574) */
	r = (struct grow_request){ .raid_disks = 3, .array_sectors = 1536 * MIB };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "10 4->3 with room after: %s", err);
	step_is(&p, 1, GROW_STEP_RESTRIPE, 10, 0x102, 3, 128, false);
	a.member_room_sectors = a.dev_sectors;
	REFUSED(a, r, "room for 1572736 KiB");
	r.array_sectors = 24574ull * 128;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2, "10 4->3 without room after: %s", err);
	a.member_room_sectors = 2048 * MIB;
	/* degraded: as md's raid10_start_reshape, which counts a member
	   recovering a slot as a spare (the engine checks the new geometry) */
	a.slot_missing[1] = true;
	a.spares = 2;
	r = (struct grow_request){ .raid_disks = 6 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 degraded 4->6: %s", err);
	step_is(&p, 0, GROW_STEP_RESTRIPE, 10, 0x102, 6, 128, false);
	r = (struct grow_request){ .chunk_sectors = 64 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 degraded chunk: %s", err);
	a.spares = 0;
	a.pending = 1;
	r = (struct grow_request){ .raid_disks = 5 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 degraded 4->5, recovering: %s", err);
	r = (struct grow_request){ .raid_disks = 6 };
	REFUSED(a, r, "Need 2 spares to avoid degraded array, and only have 1");
	/* a rebuild running: mdadm freezes it (the engine stops it); not a check */
	a.pending = 0;
	a.spares = 1;
	a.job = "recovery";
	a.job_recover = true;
	r = (struct grow_request){ .raid_disks = 5 };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1, "10 4->5 under a rebuild: %s", err);
	r = (struct grow_request){ .size_sectors = GROW_SIZE_MAX };
	REFUSED(a, r, "a recovery is running");
	a.job = "check";
	a.job_recover = false;
	r = (struct grow_request){ .raid_disks = 5 };
	REFUSED(a, r, "a check is running");
	/* RAID 5 stays refused degraded */
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	a.slot_missing[1] = true;
	a.spares = 2;
	REFUSED(a, r, "degraded");
}

static void sizes_and_rules(void)
{
	struct grow_plan p;
	char err[256];

	struct grow_array a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	struct grow_request r = { .size_sectors = GROW_SIZE_MAX };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_SIZE &&
	      p.step[0].dev_sectors == 2048 * MIB, "size max: %s", err);
	/* rounded down to the chunk */
	r.size_sectors = 1500 * MIB + 100;
	CHECK(!plan(&a, &r, &p, err) && p.step[0].dev_sectors == 1500 * MIB, "rounded: %" PRIu64,
	      p.step[0].dev_sectors);
	r.size_sectors = 4096 * MIB;
	REFUSED(a, r, "members too small");
	/* with a bitmap: planned as without (the engine resizes the bitmap) */
	a.has_bitmap = true;
	r.size_sectors = GROW_SIZE_MAX;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_SIZE,
	      "--size with a bitmap: %s", err);
	a.has_bitmap = false;
	/* shrinking below what is exported */
	r.size_sectors = 512 * MIB;
	REFUSED(a, r, "--array-size=1048576K first");
	r.array_sectors = 1024 * MIB;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2 && p.step[0].kind == GROW_STEP_ARRAY_SIZE &&
	      p.step[1].kind == GROW_STEP_SIZE, "shrink with array size: %s", err);
	r = (struct grow_request){ .size_sectors = 1024 * MIB };
	CHECK(plan(&a, &r, &p, err) == -EALREADY, "same size: %s", err);
	a = arr(0, 0, 3, 128);
	r = (struct grow_request){ .size_sectors = GROW_SIZE_MAX };
	REFUSED(a, r, "uses its members whole");
	/* RAID 10 near and offset (md's raid10_resize), the size md keeps:
	   n2 of 3, 128-sector chunks, 1000 MiB + 3 chunks asked: 16003
	   chunks, 24004 in the array, 16003 used per member (calc_sectors) */
	a = arr(10, 0x102, 4, 128);
	r = (struct grow_request){ .size_sectors = GROW_SIZE_MAX };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_SIZE &&
	      p.step[0].dev_sectors == 2048 * MIB, "RAID 10 n2 size max: %s", err);
	a = arr(10, 0x102, 3, 128);
	r.size_sectors = 1000 * MIB + 3 * 128 + 5;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].dev_sectors == 16003 * 128,
	      "RAID 10 n2 of 3: %" PRIu64 " (%s)", p.step[0].dev_sectors, err);
	/* o2 of 4, 2 copies at a stride of one chunk: 15 chunks asked -> 7
	   whole far pairs, 28 array chunks, 14 used per member */
	a = arr(10, 0x10201, 4, 128);
	a.dev_sectors = 8 * 128;
	a.computed_sectors = a.exported_sectors = 16 * 128;
	r.size_sectors = 15 * 128;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].dev_sectors == 14 * 128,
	      "RAID 10 o2 of 4: %" PRIu64 " (%s)", p.step[0].dev_sectors, err);
	a = arr(10, 0x201, 4, 128);
	r.size_sectors = GROW_SIZE_MAX;
	REFUSED(a, r, "far layout cannot change its size");
	/* smaller than exported: --array-size first */
	a = arr(10, 0x102, 4, 128);
	r.size_sectors = 512 * MIB;
	REFUSED(a, r, "--array-size=1048576K first");

	/* exported size */
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	r = (struct grow_request){ .array_sectors = 1000 * MIB };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].sectors == 1000 * MIB,
	      "array size: %s", err);
	r.array_sectors = 4096 * MIB;
	REFUSED(a, r, "above the");
	a.exported_sectors = 1000 * MIB;
	r.array_sectors = GROW_SIZE_MAX;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].sectors == 0,
	      "array size max: %s", err);
	/* growing the exported size with the restripe: after it, waiting */
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	a.exported_sectors = 1000 * MIB;
	a.spares = 1;
	r = (struct grow_request){ .raid_disks = 4, .array_sectors = GROW_SIZE_MAX };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 2 && p.step[1].kind == GROW_STEP_ARRAY_SIZE &&
	      p.step[1].waits, "array size after restripe: %s", err);

	/* bitmap */
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	r = (struct grow_request){ .bitmap = GROW_BITMAP_INTERNAL };
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].bitmap, "bitmap add: %s", err);
	a.has_bitmap = true;
	REFUSED(a, r, "already has");
	r.bitmap = GROW_BITMAP_NONE;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && !p.step[0].bitmap, "bitmap rm: %s", err);
	a.has_bitmap = false;
	REFUSED(a, r, "no bitmap to remove");
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	a.bitmap_room = false;
	r.bitmap = GROW_BITMAP_INTERNAL;
	REFUSED(a, r, "no room");
	a = arr(0, 0, 3, 128);
	REFUSED(a, r, "no redundancy");
	a = arr(5, URAID_LEFT_SYMMETRIC, 3, 128);
	r.raid_disks = 4;
	REFUSED(a, r, "cannot be combined");

	/* rules */
	r = (struct grow_request){ .size_sectors = GROW_SIZE_MAX, .raid_disks = 4 };
	REFUSED(a, r, "--size cannot change together");
	r = (struct grow_request){ 0 };
	REFUSED(a, r, "nothing to change");
	a.job = "check";
	r = (struct grow_request){ .raid_disks = 4, .adding = 1 };
	REFUSED(a, r, "a check is running");
	/* the exported size needs no quiet array */
	r = (struct grow_request){ .array_sectors = 1000 * MIB };
	CHECK(!plan(&a, &r, &p, err), "array size during a check: %s", err);
}

/* --consistency-policy: md's resync <-> ppl on RAID 5, bitmap as --bitmap */
static void policies(void)
{
	struct grow_array a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	struct grow_request r = { .policy = GROW_POLICY_PPL };
	struct grow_plan p;
	char err[256] = "";

	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_PPL &&
	      p.step[0].ppl, "ppl add: %s", err);
	/* md takes it degraded and under a resync or rebuild */
	a.slot_missing[1] = true;
	a.job = "resync";
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].ppl,
	      "ppl add degraded, under a resync: %s", err);
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	a.reshaping = true;
	a.job = "reshape";
	REFUSED(a, r, "while a reshape is in progress");
	a = arr(6, URAID_LEFT_SYMMETRIC, 4, 128);
	REFUSED(a, r, "RAID 5 only");
	a = arr(1, 0, 2, 0);
	REFUSED(a, r, "RAID 5 only");
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	a.has_bitmap = true;
	REFUSED(a, r, "--bitmap=none first");
	a.has_bitmap = false;
	a.has_journal = true;
	REFUSED(a, r, "write journal");
	a.has_journal = false;
	a.has_ppl = true;
	REFUSED(a, r, "already ppl");
	/* resync removes it; bitmap is refused over it */
	r.policy = GROW_POLICY_RESYNC;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_PPL &&
	      !p.step[0].ppl, "ppl remove: %s", err);
	r.policy = GROW_POLICY_BITMAP;
	REFUSED(a, r, "--consistency-policy=resync first");
	r = (struct grow_request){ .bitmap = GROW_BITMAP_INTERNAL };
	REFUSED(a, r, "--consistency-policy=resync first");
	a.has_ppl = false;
	r = (struct grow_request){ .policy = GROW_POLICY_RESYNC };
	REFUSED(a, r, "already resync");
	r.policy = GROW_POLICY_BITMAP;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_BITMAP &&
	      p.step[0].bitmap, "policy bitmap: %s", err);
	a.has_bitmap = true;
	REFUSED(a, r, "already bitmap");
	r.policy = GROW_POLICY_RESYNC;
	CHECK(!plan(&a, &r, &p, err) && p.nsteps == 1 && p.step[0].kind == GROW_STEP_BITMAP &&
	      !p.step[0].bitmap, "policy resync from bitmap: %s", err);
	a.job = "check";
	REFUSED(a, r, "a check is running");
	a = arr(5, URAID_LEFT_SYMMETRIC, 4, 128);
	r = (struct grow_request){ .policy = GROW_POLICY_PPL, .raid_disks = 5 };
	REFUSED(a, r, "cannot be combined");
	r = (struct grow_request){ .policy = GROW_POLICY_PPL, .bitmap = GROW_BITMAP_NONE };
	REFUSED(a, r, "cannot be combined");
}

/* linear: members appended only (md's linear_add), from spares */
static void linear_append(void)
{
	struct grow_plan p;
	char err[256];
	struct grow_array a = arr(URAID_LEVEL_LINEAR, 0, 2, 0);
	struct grow_request r = { .append = 1, .adding = 1 };

	/* --add alone, planned before the spare is added (adding=1) */
	CHECK(plan(&a, &r, &p, err) == 0 && p.nsteps == 1, "append: %s", err);
	step_is(&p, 0, GROW_STEP_APPEND, URAID_LEVEL_LINEAR, 0, 3, 0, false);
	/* then done with the spare there */
	a.spares = 1;
	r = (struct grow_request){ .append = 1 };
	CHECK(plan(&a, &r, &p, err) == 0 && p.nsteps == 1, "append with a spare: %s", err);
	step_is(&p, 0, GROW_STEP_APPEND, URAID_LEVEL_LINEAR, 0, 3, 0, false);
	/* --raid-devices on linear: mdadm refuses it, with --add or without
	   (an older spare would be taken otherwise) */
	a.spares = 0;
	r = (struct grow_request){ .raid_disks = 4, .adding = 2 };
	REFUSED(a, r, "Only --add is supported for LINEAR");
	a.spares = 1;
	r = (struct grow_request){ .raid_disks = 3 };
	REFUSED(a, r, "Only --add is supported for LINEAR");
	r = (struct grow_request){ .raid_disks = 1 };
	REFUSED(a, r, "Only --add is supported for LINEAR");
	r = (struct grow_request){ .raid_disks = 2 };
	REFUSED(a, r, "Only --add is supported for LINEAR");
	/* --add alone with an older spare there: the one being added only */
	r = (struct grow_request){ .append = 1, .adding = 1 };
	CHECK(plan(&a, &r, &p, err) == 0 && p.nsteps == 1, "append with an older spare: %s", err);
	step_is(&p, 0, GROW_STEP_APPEND, URAID_LEVEL_LINEAR, 0, 3, 0, false);
	a.spares = 0;
	r = (struct grow_request){ .chunk_sectors = 128 };
	REFUSED(a, r, "no chunk or layout to change");
	r = (struct grow_request){ .append = 1, .adding = 1, .array_sectors = 2048 * MIB };
	REFUSED(a, r, "cannot be combined");
	r = (struct grow_request){ .append = 1 };
	REFUSED(a, r, "give them with --add DEV");
	a.spares = 1;
	a.slot_missing[1] = true;
	REFUSED(a, r, "missing 1 of 2 members");
	a = arr(URAID_LEVEL_LINEAR, 0, URAID_MAX_MEMBERS, 0);
	a.spares = 1;
	REFUSED(a, r, "at most 256 members");
	/* --add alone on another level: mdadm's way is linear's only */
	a = arr(1, 0, 2, 0);
	a.spares = 1;
	REFUSED(a, r, "--add alone grows linear arrays only");
}

int main(void)
{
	takeovers();
	restripes();
	sizes_and_rules();
	policies();
	linear_append();
	if (failures)
		printf("%d failures\n", failures);
	else
		printf("ok: takeovers, restripes, sizes, bitmap, policies, linear appends and their "
		       "refusals\n");
	return failures ? 1 : 0;
}
