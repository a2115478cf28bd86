// SPDX-License-Identifier: MIT
/*
 * The grow planner (grow_plan.h): which of md's migrations, in which order,
 * or why not. The level numbers are tested here on purpose: this file is
 * md's table of migrations between levels, which no single level's
 * descriptor can hold.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>
#include <uraid/level.h>

#include "engine/md/grow_plan.h"

#define RAID1_TO_5_MAX_CHUNK 128u      /* sectors: md's raid5_takeover_raid1 starts at 64 KiB */
#define RAID1_TO_5_MIN_CHUNK 8u        /* and refuses below 4 KiB */

static int refuse(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *lvname(int level, char *buf, size_t len)
{
	if (level == URAID_LEVEL_LINEAR)
		snprintf(buf, len, "linear");
	else
		snprintf(buf, len, "RAID %d", level);
	return buf;
}

static bool parity_level(int level)
{
	return level == URAID_LEVEL_4 || level == URAID_LEVEL_5 || level == URAID_LEVEL_6;
}

static unsigned parity_slots(int level)
{
	const struct uraid_level_info *li = uraid_level_info(level);
	return li ? li->parity_members : 0;
}

/* RAID 10's array size (md's calc_sectors, geom's); 0 for a geometry md
 * does not run. */
static uint64_t raid10_sectors(uint32_t layout, uint32_t disks, uint32_t chunk, uint64_t dev)
{
	struct uraid_geom_params p = { .level = URAID_LEVEL_10, .layout = layout,
				       .raid_disks = disks, .chunk_sectors = chunk,
				       .dev_sectors = dev };
	struct uraid_geom *g = malloc(sizeof(*g));      /* large: per-member sizes */
	uint64_t n = 0;

	if (g && uraid_geom_init(g, &p, NULL, 0) == 0)
		n = g->array_sectors;
	free(g);
	return n;
}

/* RAID 10's size used per member for dev (md's calc_sectors dev_sectors);
 * 0 for a geometry md does not run. */
static uint64_t raid10_used(uint32_t layout, uint32_t disks, uint32_t chunk, uint64_t dev)
{
	struct uraid_geom_params p = { .level = URAID_LEVEL_10, .layout = layout,
				       .raid_disks = disks, .chunk_sectors = chunk,
				       .dev_sectors = dev };
	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t n = 0;

	if (g && uraid_geom_init(g, &p, NULL, 0) == 0)
		n = g->dev_sectors;
	free(g);
	return n;
}

/* The array size of a geometry with per-member size dev (sectors), where
 * the planner can compute it (RAID 0 one zone, 1, 4, 5, 6, 10); 0 otherwise. */
static uint64_t geometry_sectors(int level, uint32_t layout, uint32_t disks, uint32_t chunk,
				 uint64_t dev)
{
	if (level == URAID_LEVEL_1)
		return dev;
	if (!chunk)
		return 0;
	if (level == URAID_LEVEL_10)
		return raid10_sectors(layout, disks, chunk, dev);
	uint64_t used = dev - dev % chunk;
	if (level == URAID_LEVEL_0)
		return used * disks;
	if (parity_level(level) && disks > parity_slots(level))
		return used * (disks - parity_slots(level));
	return 0;
}

/* md's -6 form of a RAID 5 layout (raid6_takeover), and back. */
static uint32_t layout_to_6(uint32_t l)
{
	switch (l) {
	case URAID_LEFT_ASYMMETRIC: return URAID_LEFT_ASYMMETRIC_6;
	case URAID_RIGHT_ASYMMETRIC: return URAID_RIGHT_ASYMMETRIC_6;
	case URAID_LEFT_SYMMETRIC: return URAID_LEFT_SYMMETRIC_6;
	case URAID_RIGHT_SYMMETRIC: return URAID_RIGHT_SYMMETRIC_6;
	case URAID_PARITY_FIRST: return URAID_PARITY_FIRST_6;
	default: return l;      /* parity-last stays parity-last */
	}
}

/* The RAID 5 layout whose -6 form l is; false when l is none. */
static bool layout_from_6(uint32_t l, uint32_t *out)
{
	switch (l) {
	case URAID_LEFT_ASYMMETRIC_6: *out = URAID_LEFT_ASYMMETRIC; return true;
	case URAID_RIGHT_ASYMMETRIC_6: *out = URAID_RIGHT_ASYMMETRIC; return true;
	case URAID_LEFT_SYMMETRIC_6: *out = URAID_LEFT_SYMMETRIC; return true;
	case URAID_RIGHT_SYMMETRIC_6: *out = URAID_RIGHT_SYMMETRIC; return true;
	case URAID_PARITY_FIRST_6: *out = URAID_PARITY_FIRST; return true;
	case URAID_PARITY_LAST: *out = URAID_PARITY_LAST; return true;
	default: return false;
	}
}

static unsigned missing_count(const struct grow_array *a)
{
	unsigned n = 0;
	for (uint32_t s = 0; s < a->raid_disks && s < URAID_MAX_MEMBERS; s++)
		n += a->slot_missing[s];
	return n;
}

/* Only the last slot (RAID 4/5 parity-last's parity) is missing. */
static bool only_last_missing(const struct grow_array *a)
{
	return a->raid_disks && missing_count(a) == 1 && a->slot_missing[a->raid_disks - 1];
}

struct planner {
	const struct grow_array *a;
	const struct grow_request *r;
	struct grow_plan *p;
	struct grow_step cur;           /* the geometry reached so far */
	/* slots a takeover added that a spare must fill before a restripe
	   that waits for them (RAID 0 -> 5, 5 -> 6) */
	unsigned slots_to_rebuild;
	char *err;
	size_t errlen;
};

static struct grow_step *add_step(struct planner *pl, enum grow_step_kind kind)
{
	struct grow_step *s = &pl->p->step[pl->p->nsteps++];

	*s = pl->cur;
	s->kind = kind;
	s->waits = false;
	s->sectors = 0;
	s->bitmap = false;
	s->ppl = false;
	return s;
}

static void takeover(struct planner *pl, int level, uint32_t layout, uint32_t disks,
		     uint32_t chunk, bool waits)
{
	pl->cur.level = level;
	pl->cur.layout = layout;
	pl->cur.raid_disks = disks;
	pl->cur.chunk_sectors = chunk;
	/* md's size field: whole chunks on a striped level (raid0's zones are
	   made of them) */
	if (chunk && level != URAID_LEVEL_0)
		pl->cur.dev_sectors -= pl->cur.dev_sectors % chunk;
	add_step(pl, GROW_STEP_TAKEOVER)->waits = waits;
}

/* A restripe to layout/disks/chunk from the current geometry, when it
 * changes anything; the checks grow-core cannot make for us (sizes). */
static int restripe(struct planner *pl, uint32_t layout, uint32_t disks, uint32_t chunk,
		    bool waits)
{
	const struct grow_array *a = pl->a;
	char l[16];

	if (layout == pl->cur.layout && disks == pl->cur.raid_disks && chunk == pl->cur.chunk_sectors)
		return 0;
	const struct uraid_level_info *li = uraid_level_info(pl->cur.level);
	if (li && disks < li->min_members)
		return refuse(pl->err, pl->errlen, "%s needs at least %u members, not %u",
			      lvname(pl->cur.level, l, sizeof(l)), li->min_members, disks);
	if (!uraid_layout_valid(pl->cur.level, layout, disks))
		return refuse(pl->err, pl->errlen, "layout %u is not a %s layout", layout,
			      lvname(pl->cur.level, l, sizeof(l)));
	if (chunk & (chunk - 1) || chunk < 8)
		return refuse(pl->err, pl->errlen, "the chunk must be a power of two of 4 KiB or "
			      "more, not %u KiB", chunk / 2);
	if (a->dev_sectors < chunk)
		return refuse(pl->err, pl->errlen, "a chunk of %u KiB is larger than the members' "
			      "used size (%" PRIu64 " KiB)", chunk / 2, a->dev_sectors / 2);
	uint64_t after = geometry_sectors(pl->cur.level, layout, disks, chunk, pl->cur.dev_sectors);
	uint64_t exported = pl->r->array_sectors && pl->r->array_sectors != GROW_SIZE_MAX
			    ? pl->r->array_sectors : a->exported_sectors;
	if (after < exported)
		return refuse(pl->err, pl->errlen, "the change leaves room for %" PRIu64 " KiB, "
			      "less than the %" PRIu64 " KiB the array holds: check that the data "
			      "fits, then give --array-size=%" PRIu64 "K first (with this change "
			      "or before it)", after / 2, exported / 2, after / 2);
	/* new slots are filled from spares: the ones there and those --add gives
	   (a slot a takeover added is filled by a rebuild the restripe waits
	   for, or by the restripe itself: RAID 5 -> 6's Q slot) */
	uint32_t have = pl->cur.raid_disks;
	unsigned need = (disks > have ? disks - have : 0) + pl->slots_to_rebuild;
	/* RAID 10: md's raid10_start_reshape (and mdadm's spare_disks) count
	   a member recovering a slot as a spare too; the free spares fill the
	   empty old slots first, then the new ones */
	unsigned pending = pl->cur.level == URAID_LEVEL_10 ? a->pending : 0;
	if (need && pending && a->spares + pl->r->adding + pending < need)
		return refuse(pl->err, pl->errlen, "Need %u spare%s to avoid degraded array, and "
			      "only have %u (mdadm's words; %u recovering a slot): add them first "
			      "(uraid add, or --add DEV with this command)", need, need == 1 ? "" : "s",
			      a->spares + pl->r->adding + pending, pending);
	if (need && a->spares + pl->r->adding + pending < need)
		return refuse(pl->err, pl->errlen, "%u members need %u spares, the array has %u: "
			      "add them first (uraid add, or --add DEV with this command)", disks,
			      need, a->spares + pl->r->adding);
	pl->cur.layout = layout;
	pl->cur.raid_disks = disks;
	pl->cur.chunk_sectors = chunk;
	add_step(pl, GROW_STEP_RESTRIPE)->waits = waits;
	return 0;
}

/* What the request asks of the geometry, defaults from the array. */
struct target {
	int level;
	uint32_t layout, disks, chunk;
};

static int plan_same_level(struct planner *pl, const struct target *t)
{
	const struct grow_array *a = pl->a;
	char l[16];

	switch (a->level) {
	case URAID_LEVEL_1:
		if (pl->r->chunk_sectors || pl->r->layout_set)
			return refuse(pl->err, pl->errlen, "RAID 1 has no chunk or layout to change");
		if (t->disks == a->raid_disks)
			return 0;
		for (uint32_t s = t->disks; s < a->raid_disks; s++)
			if (!a->slot_missing[s])
				return refuse(pl->err, pl->errlen, "slot %u still holds %s: fail and "
					      "remove the members of slots %u..%u first (uraid fail, "
					      "uraid remove), then grow", s, a->slot_path[s] ?
					      a->slot_path[s] : "a member", t->disks, a->raid_disks - 1);
		if (t->disks < 1)
			return refuse(pl->err, pl->errlen, "RAID 1 needs at least 1 member");
		pl->cur.raid_disks = t->disks;
		add_step(pl, GROW_STEP_MIRRORS);
		return 0;
	case URAID_LEVEL_0:
		if (pl->r->layout_set)
			return refuse(pl->err, pl->errlen, "RAID 0 has no layout to change (its zone "
				      "layout is fixed)");
		if (t->disks == a->raid_disks && t->chunk == a->chunk_sectors)
			return 0;
		if (t->disks < a->raid_disks)
			return refuse(pl->err, pl->errlen, "RAID 0 cannot lose members (md restripes "
				      "RAID 0 through RAID 4 only to grow): copy the data to a new "
				      "array instead");
		if (!a->single_zone)
			return refuse(pl->err, pl->errlen, "RAID 0 with members of different sizes "
				      "(more than one zone) cannot be taken over as RAID 4, which md "
				      "needs to restripe it");
		/* mdadm's way: RAID 4 with the parity slot missing, restripe, back */
		takeover(pl, URAID_LEVEL_4, URAID_PARITY_LAST, a->raid_disks + 1, a->chunk_sectors,
			 false);
		int rc = restripe(pl, URAID_PARITY_LAST, t->disks + 1, t->chunk, false);
		if (rc)
			return rc;
		takeover(pl, URAID_LEVEL_0, 0, t->disks, t->chunk, true);
		return 0;
	case URAID_LEVEL_4:
	case URAID_LEVEL_5:
	case URAID_LEVEL_6:
		if (missing_count(a))
			return refuse(pl->err, pl->errlen, "%s is degraded (%u of %u slots missing): "
				      "let a spare rebuild it first, then grow",
				      lvname(a->level, l, sizeof(l)), missing_count(a), a->raid_disks);
		return restripe(pl, t->layout, t->disks, t->chunk, false);
	case URAID_LEVEL_10:
		/* near and offset layouts, as md (the engine refuses far ones
		   and a change of the number of copies with mdadm's words).
		   Degraded too, as md's raid10_start_reshape: the engine refuses
		   a new geometry that would leave a chunk with no in-sync copy */
		if (t->disks < a->raid_disks) {
			/* fewer members move the data offset up by mdadm's least
			   move (the larger chunk, times an offset layout's
			   copies); without that room after the data, mdadm first
			   makes the used size smaller by it (the engine does so
			   too): the size check counts that */
			uint32_t fo = a->layout & URAID_RAID10_OFFSET ? URAID_RAID10_FAR(a->layout) : 1;
			uint32_t fn = t->layout & URAID_RAID10_OFFSET ? URAID_RAID10_FAR(t->layout) : 1;
			uint64_t lo = (uint64_t)a->chunk_sectors * fo, ln = (uint64_t)t->chunk * fn;
			uint64_t least = lo > ln ? lo : ln;
			if (a->member_room_sectors < a->dev_sectors + least &&
			    pl->cur.dev_sectors > least)
				pl->cur.dev_sectors = (pl->cur.dev_sectors - least) / 2 * 2;
		}
		return restripe(pl, t->layout, t->disks, t->chunk, false);
	case URAID_LEVEL_LINEAR: {
		/* md's linear_add: members appended, nothing else changes.
		   mdadm refuses --raid-devices on linear (Grow.c
		   analyse_change), with or without --add: the count is that of
		   the devices given. md never holds a spare in a linear array
		   (a device added to a running one is appended at once, or
		   refused), so there is no older spare to choose either: only
		   the devices named with --add are appended (append=N) */
		if (pl->r->raid_disks)
			return refuse(pl->err, pl->errlen, "Only --add is supported for LINEAR, "
				      "setting --raid-devices is not needed (mdadm's words): give "
				      "the new members with --add DEV, alone");
		if (pl->r->chunk_sectors || pl->r->layout_set)
			return refuse(pl->err, pl->errlen, "linear has no chunk or layout to change: "
				      "it only grows by appending members (--add DEV)");
		if (t->disks == a->raid_disks)
			return 0;
		if (missing_count(a))
			return refuse(pl->err, pl->errlen, "linear is missing %u of %u members: "
				      "nothing can be appended", missing_count(a), a->raid_disks);
		unsigned need = t->disks - a->raid_disks;
		if (a->spares + pl->r->adding < need)
			return refuse(pl->err, pl->errlen, "%u members need %u new ones, the array "
				      "has %u spares: give them with --add DEV", t->disks, need,
				      a->spares + pl->r->adding);
		pl->cur.raid_disks = t->disks;
		add_step(pl, GROW_STEP_APPEND);
		return 0;
	}
	default:
		return refuse(pl->err, pl->errlen, "%s cannot be grown",
			      lvname(a->level, l, sizeof(l)));
	}
}

/* RAID 4/5 to RAID 0: parity-last with only the parity slot missing. */
static int plan_45_to_0(struct planner *pl, const struct target *t)
{
	const struct grow_array *a = pl->a;

	if (pl->r->layout_set)
		return refuse(pl->err, pl->errlen, "RAID 0 takes no --layout");
	if (a->level == URAID_LEVEL_5 && a->layout != URAID_PARITY_LAST)
		return refuse(pl->err, pl->errlen, "md takes RAID 5 over as RAID 0 only in the "
			      "parity-last layout: grow --layout=parity-last first, then fail "
			      "and remove the last slot's member, then --level=0");
	if (!only_last_missing(a))
		return refuse(pl->err, pl->errlen, "md takes RAID %d over as RAID 0 only with "
			      "the parity slot (slot %u) missing and no other: fail and remove "
			      "%s first", a->level, a->raid_disks - 1,
			      a->slot_path[a->raid_disks - 1] && !a->slot_missing[a->raid_disks - 1]
			      ? a->slot_path[a->raid_disks - 1] : "its member");
	if ((pl->r->raid_disks && t->disks != a->raid_disks - 1) || t->chunk != a->chunk_sectors)
		return refuse(pl->err, pl->errlen, "change the level to RAID 0 first, then its "
			      "members or chunk in another grow");
	takeover(pl, URAID_LEVEL_0, 0, a->raid_disks - 1, a->chunk_sectors, false);
	return 0;
}

static int plan_level_change(struct planner *pl, const struct target *t)
{
	const struct grow_array *a = pl->a;
	const struct grow_request *r = pl->r;
	char from[16], to[16];
	int rc;

	lvname(a->level, from, sizeof(from));
	lvname(t->level, to, sizeof(to));
	/* RAID 0 has no bitmap (mdadm: remove the bitmap first) */
	if (t->level == URAID_LEVEL_0 && a->has_bitmap)
		return refuse(pl->err, pl->errlen, "%s -> RAID 0 with an internal bitmap: RAID 0 "
			      "has none; --bitmap=none first, then --level=0", from);
	if (missing_count(a) && !(t->level == URAID_LEVEL_0 &&
				  (a->level == URAID_LEVEL_4 || a->level == URAID_LEVEL_5 ||
				   a->level == URAID_LEVEL_10)))
		return refuse(pl->err, pl->errlen, "%s is degraded (%u of %u slots missing): let "
			      "a spare rebuild it first, then change the level", from,
			      missing_count(a), a->raid_disks);

	if (a->level == URAID_LEVEL_0 && parity_level(t->level) && t->level != URAID_LEVEL_6) {
		if (!a->single_zone)
			return refuse(pl->err, pl->errlen, "md takes RAID 0 over as %s only when "
				      "its members are the same size (one zone)", to);
		takeover(pl, t->level, URAID_PARITY_LAST, a->raid_disks + 1, a->chunk_sectors, false);
		/* mdadm then restripes a RAID 5 to its default layout at once, on
		   the degraded array (grow-core restripes a parity-last array
		   missing its parity member). With a spare at hand the restripe
		   waits until the parity slot is rebuilt onto it instead (the
		   same end, never degraded while the data moves). */
		bool spare = a->spares + r->adding > 0;
		pl->slots_to_rebuild = spare ? 1 : 0;
		uint32_t disks = r->raid_disks ? r->raid_disks : pl->cur.raid_disks;
		uint32_t layout = r->layout_set ? t->layout : uraid_layout_default(URAID_LEVEL_5);
		return restripe(pl, t->level == URAID_LEVEL_4 ? URAID_PARITY_LAST : layout, disks,
				t->chunk, spare);
	}
	if ((a->level == URAID_LEVEL_4 || a->level == URAID_LEVEL_5) && t->level == URAID_LEVEL_0)
		return plan_45_to_0(pl, t);
	if (a->level == URAID_LEVEL_1 && t->level == URAID_LEVEL_5) {
		if (a->raid_disks != 2)
			return refuse(pl->err, pl->errlen, "md takes RAID 1 over as RAID 5 only with "
				      "2 members, this one has %u: --raid-devices=2 first (after "
				      "failing and removing the others)", a->raid_disks);
		/* md's raid5_takeover_raid1 divides the array's exported size
		   (array_sectors, which --array-size sets), not the members' */
		uint64_t exported = r->array_sectors == GROW_SIZE_MAX ? a->computed_sectors
				    : r->array_sectors ? r->array_sectors : a->exported_sectors;
		uint32_t chunk = RAID1_TO_5_MAX_CHUNK;
		while (chunk >= RAID1_TO_5_MIN_CHUNK && exported % chunk)
			chunk /= 2;
		if (chunk < RAID1_TO_5_MIN_CHUNK)
			return refuse(pl->err, pl->errlen, "the array's size (%" PRIu64 " sectors) "
				      "is not a multiple of 4 KiB, which md needs for the RAID 5 "
				      "chunk: --array-size (or --size) to a multiple of 64K first",
				      exported);
		takeover(pl, URAID_LEVEL_5, URAID_LEFT_SYMMETRIC, 2, chunk, false);
		uint32_t disks = r->raid_disks ? r->raid_disks : 2;
		return restripe(pl, r->layout_set ? t->layout : URAID_LEFT_SYMMETRIC, disks,
				r->chunk_sectors ? r->chunk_sectors : chunk, false);
	}
	if (a->level == URAID_LEVEL_5 && t->level == URAID_LEVEL_1) {
		if (a->raid_disks != 2)
			return refuse(pl->err, pl->errlen, "md takes RAID 5 over as RAID 1 only with "
				      "2 members, this one has %u: restripe to 2 members first "
				      "(--array-size, then --raid-devices=2)", a->raid_disks);
		if (r->chunk_sectors || r->layout_set || (r->raid_disks && r->raid_disks != 2))
			return refuse(pl->err, pl->errlen, "change the level to RAID 1 alone, then "
				      "its member count in another grow");
		takeover(pl, URAID_LEVEL_1, 0, 2, 0, false);
		return 0;
	}
	if (a->level == URAID_LEVEL_4 && t->level == URAID_LEVEL_5) {
		takeover(pl, URAID_LEVEL_5, URAID_PARITY_LAST, a->raid_disks, a->chunk_sectors, false);
		return restripe(pl, r->layout_set ? t->layout : URAID_PARITY_LAST,
				r->raid_disks ? r->raid_disks : a->raid_disks, t->chunk, false);
	}
	if (a->level == URAID_LEVEL_5 && t->level == URAID_LEVEL_4) {
		if (r->layout_set)
			return refuse(pl->err, pl->errlen, "RAID 4 takes no --layout (its parity "
				      "is always last)");
		rc = restripe(pl, URAID_PARITY_LAST, t->disks, t->chunk, false);
		if (rc)
			return rc;
		takeover(pl, URAID_LEVEL_4, 0, pl->cur.raid_disks, pl->cur.chunk_sectors,
			 pl->p->nsteps > 0);
		return 0;
	}
	if (a->level == URAID_LEVEL_5 && t->level == URAID_LEVEL_6) {
		/* md's way: the new slot holds Q only (the -6 layout); the
		   restripe to the RAID 6 layout starts at once with a spare in
		   that slot, which it fills row by row (its old Q is never read).
		   Keeping the -6 layout: the takeover alone, and the spare is
		   rebuilt into the Q slot as any missing slot */
		if (a->spares + r->adding < 1)
			return refuse(pl->err, pl->errlen, "RAID 5 -> RAID 6 needs a spare for "
				      "the Q slot: add one (uraid add, or --add DEV)");
		uint32_t six = layout_to_6(a->layout);
		takeover(pl, URAID_LEVEL_6, six, a->raid_disks + 1, a->chunk_sectors, false);
		pl->slots_to_rebuild = 1;
		uint32_t plain = a->layout;
		uint32_t layout = r->layout_set ? t->layout : plain;
		uint32_t disks = r->raid_disks ? r->raid_disks : a->raid_disks + 1;
		return restripe(pl, layout, disks, t->chunk, false);
	}
	if (a->level == URAID_LEVEL_6 && t->level == URAID_LEVEL_5) {
		uint32_t five;
		if (!layout_from_6(a->layout, &five)) {
			/* restripe to the -6 form of the layout first */
			uint32_t want = r->layout_set ? t->layout : a->layout;
			if (want >= URAID_LEFT_ASYMMETRIC_6 || want > URAID_PARITY_LAST)
				return refuse(pl->err, pl->errlen, "layout %u has no RAID 5 form", want);
			rc = restripe(pl, layout_to_6(want), a->raid_disks, a->chunk_sectors, false);
			if (rc)
				return rc;
			five = want;
		} else if (r->layout_set && t->layout != five) {
			return refuse(pl->err, pl->errlen, "change the level to RAID 5 first, then its "
				      "layout in another grow");
		}
		if (r->raid_disks || r->chunk_sectors)
			return refuse(pl->err, pl->errlen, "change the level to RAID 5 first, then its "
				      "members or chunk in another grow");
		takeover(pl, URAID_LEVEL_5, five, pl->cur.raid_disks - 1, pl->cur.chunk_sectors,
			 pl->p->nsteps > 0);
		return 0;
	}
	if (a->level == URAID_LEVEL_10 && t->level == URAID_LEVEL_0) {
		if (a->layout != 0x102 || a->raid_disks % 2)
			return refuse(pl->err, pl->errlen, "md takes RAID 10 over as RAID 0 only in "
				      "the near=2 layout with an even member count");
		if (r->raid_disks || r->chunk_sectors || r->layout_set)
			return refuse(pl->err, pl->errlen, "change the level to RAID 0 first, then its "
				      "members or chunk in another grow");
		/* a spare would be rebuilt into a RAID 10 slot while the copies go,
		   and left pointing into slots RAID 0 numbers differently */
		if (a->spares + r->adding)
			return refuse(pl->err, pl->errlen, "RAID 10 -> RAID 0 with spares present: "
				      "remove the spares first (uraid remove), then --level=0");
		/* one member of each pair must be left: both missing loses data */
		unsigned missing = 0;
		for (uint32_t s = 0; s < a->raid_disks; s += 2) {
			if (a->slot_missing[s] && a->slot_missing[s + 1])
				return refuse(pl->err, pl->errlen, "slots %u and %u are both missing: "
					      "the array has lost data and cannot become RAID 0", s,
					      s + 1);
			missing += a->slot_missing[s] || a->slot_missing[s + 1];
		}
		if (missing && missing != a->raid_disks / 2)
			return refuse(pl->err, pl->errlen, "md takes RAID 10 over as RAID 0 with "
				      "exactly one member of each pair: %u pairs are whole; fail and "
				      "remove one member of each first, or rebuild the others",
				      a->raid_disks / 2 - missing);
		if (!missing)
			add_step(pl, GROW_STEP_DROP_COPIES);
		takeover(pl, URAID_LEVEL_0, 0, a->raid_disks / 2, a->chunk_sectors, false);
		return 0;
	}
	if (a->level == URAID_LEVEL_10 && t->level == URAID_LEVEL_5)
		return refuse(pl->err, pl->errlen, "RAID 10 -> RAID 5 is not a migration md can "
			      "do: take it over as RAID 0 first (--level=0), then --level=5");
	if (a->level == URAID_LEVEL_0 && t->level == URAID_LEVEL_6)
		return refuse(pl->err, pl->errlen, "RAID 0 -> RAID 6 goes through RAID 5: "
			      "--level=5 first, let the parity slot rebuild, then --level=6");
	if (a->level == URAID_LEVEL_4 && t->level == URAID_LEVEL_6)
		return refuse(pl->err, pl->errlen, "RAID 4 -> RAID 6 goes through RAID 5: "
			      "--level=5 first, then --level=6");
	if (a->level == URAID_LEVEL_6 && t->level == URAID_LEVEL_4)
		return refuse(pl->err, pl->errlen, "RAID 6 -> RAID 4 goes through RAID 5: "
			      "--level=5 first, then --level=4");
	if (a->level == URAID_LEVEL_0 && t->level == URAID_LEVEL_10)
		return refuse(pl->err, pl->errlen, "RAID 0 -> RAID 10 (md's raid10 takeover) is "
			      "not in uraid yet");
	if (a->level == URAID_LEVEL_1 && t->level == URAID_LEVEL_0)
		return refuse(pl->err, pl->errlen, "md takes RAID 1 over as RAID 0 only with a "
			      "single member left, which uraid does not do; go through RAID 5 "
			      "(--level=5) if you want striping");
	return refuse(pl->err, pl->errlen, "%s -> %s is not a migration md can do", from, to);
}

static int plan_geometry(struct planner *pl)
{
	const struct grow_array *a = pl->a;
	const struct grow_request *r = pl->r;
	struct target t = {
		.level = r->level_set ? r->level : a->level,
		.layout = r->layout_set ? r->layout : a->layout,
		.disks = r->raid_disks ? r->raid_disks : a->raid_disks + r->append,
		.chunk = r->chunk_sectors ? r->chunk_sectors : a->chunk_sectors,
	};

	if (r->level_set && r->level != a->level)
		return plan_level_change(pl, &t);
	return plan_same_level(pl, &t);
}

static int plan_size(struct planner *pl)
{
	const struct grow_array *a = pl->a;
	const struct uraid_level_info *li = uraid_level_info(a->level);
	uint64_t want = pl->r->size_sectors;
	char l[16];

	if (!li || !li->redundant || li->whole_members)
		return refuse(pl->err, pl->errlen, "%s uses its members whole: --size does not "
			      "apply (grow it with --raid-devices)", lvname(a->level, l, sizeof(l)));
	/* md's raid10_resize: near and offset layouts only (far copies sit at
	   a stride the member size sets: they would all move) */
	if (a->level == URAID_LEVEL_10 && URAID_RAID10_FAR(a->layout) > 1 &&
	    !(a->layout & URAID_RAID10_OFFSET))
		return refuse(pl->err, pl->errlen, "RAID 10 in a far layout cannot change its size "
			      "(md's raid10_resize refuses it: every far copy would move)");
	if (want == GROW_SIZE_MAX)
		want = a->member_room_sectors;
	else if (want > a->member_room_sectors)
		return refuse(pl->err, pl->errlen, "members too small: --size=%" PRIu64 "K needs "
			      "%" PRIu64 " KiB of data room on each member, the smallest has %" PRIu64
			      " KiB", want / 2, want / 2, a->member_room_sectors / 2);
	if (a->chunk_sectors)
		want -= want % a->chunk_sectors;        /* md rounds down to the chunk */
	/* RAID 10: the size md keeps is its calc_sectors' (the chunks the
	   array holds, spread over the members, rounded up) */
	if (want && a->level == URAID_LEVEL_10)
		want = raid10_used(a->layout, a->raid_disks, a->chunk_sectors, want);
	if (!want)
		return refuse(pl->err, pl->errlen, "--size must leave at least one chunk per member");
	uint64_t after = geometry_sectors(a->level, a->layout, a->raid_disks, a->chunk_sectors,
					  want);
	uint64_t exported = pl->r->array_sectors && pl->r->array_sectors != GROW_SIZE_MAX
			    ? pl->r->array_sectors : a->exported_sectors;
	if (after < exported)
		return refuse(pl->err, pl->errlen, "--size=%" PRIu64 "K leaves %" PRIu64 " KiB, "
			      "less than the %" PRIu64 " KiB the array exports: check that the data "
			      "fits, then --array-size=%" PRIu64 "K first", want / 2, after / 2,
			      exported / 2, after / 2);
	if (want == a->dev_sectors)
		return 0;
	pl->cur.dev_sectors = want;
	add_step(pl, GROW_STEP_SIZE);
	return 0;
}

static int plan_array_size(struct planner *pl, uint64_t computed)
{
	uint64_t want = pl->r->array_sectors;

	if (want == GROW_SIZE_MAX)
		want = computed;
	if (!want)
		return refuse(pl->err, pl->errlen, "--array-size must be above 0 (or max)");
	if (want > computed)
		return refuse(pl->err, pl->errlen, "--array-size=%" PRIu64 "K is above the %" PRIu64
			      " KiB the members hold: at most that, or max", want / 2, computed / 2);
	if (want == pl->a->exported_sectors)
		return 0;
	add_step(pl, GROW_STEP_ARRAY_SIZE)->sectors = want == computed ? 0 : want;
	return 0;
}

static int plan_bitmap(struct planner *pl)
{
	const struct grow_array *a = pl->a;
	const struct uraid_level_info *li = uraid_level_info(a->level);
	char l[16];

	if (pl->r->bitmap == GROW_BITMAP_INTERNAL) {
		if (a->has_bitmap)
			return refuse(pl->err, pl->errlen, "the array already has an internal bitmap");
		if (a->has_ppl)
			return refuse(pl->err, pl->errlen, "the array has a partial parity log, which md "
				      "runs without a bitmap: --consistency-policy=resync first");
		if (!li || !li->redundant)
			return refuse(pl->err, pl->errlen, "%s has no redundancy: a write-intent "
				      "bitmap has nothing to resync", lvname(a->level, l, sizeof(l)));
		if (!a->bitmap_room)
			return refuse(pl->err, pl->errlen, "no room for an internal bitmap next to "
				      "the superblocks (1.1 and 1.2: between the superblock and "
				      "the data; 1.0: between the data and the bad-block log "
				      "below the superblock)");
	} else if (!a->has_bitmap) {
		return refuse(pl->err, pl->errlen, "the array has no bitmap to remove");
	}
	add_step(pl, GROW_STEP_BITMAP)->bitmap = pl->r->bitmap == GROW_BITMAP_INTERNAL;
	return 0;
}

/* The policy now, in md's words (consistency_policy). */
static const char *policy_now(const struct grow_array *a)
{
	const struct uraid_level_info *li = uraid_level_info(a->level);

	return a->has_journal ? "journal" : a->has_ppl ? "ppl" : a->has_bitmap ? "bitmap"
	       : li && li->redundant ? "resync" : "none";
}

/*
 * --consistency-policy: md changes resync <-> ppl on a running RAID 5
 * (raid5_change_consistency_policy; mdadm refuses the rest, and a PPL
 * during a reshape); bitmap and resync from a bitmap are --bitmap's steps.
 */
static int plan_policy(struct planner *pl)
{
	const struct grow_array *a = pl->a;
	enum grow_policy want = pl->r->policy;
	const char *now = policy_now(a);
	char l[16];

	if (a->has_journal)
		return refuse(pl->err, pl->errlen, "the array has a write journal (consistency policy "
			      "journal), which md does not change to another policy");
	if (want == GROW_POLICY_BITMAP) {
		if (a->has_ppl)
			return refuse(pl->err, pl->errlen, "consistency policy is ppl: md runs a bitmap "
				      "without a partial parity log; --consistency-policy=resync first");
		if (a->has_bitmap)
			return refuse(pl->err, pl->errlen, "consistency policy is already bitmap");
		struct grow_request r = *pl->r;
		r.bitmap = GROW_BITMAP_INTERNAL;
		const struct grow_request *keep = pl->r;
		pl->r = &r;
		int rc = plan_bitmap(pl);
		pl->r = keep;
		return rc;
	}
	if (want == GROW_POLICY_RESYNC) {
		if (a->has_bitmap) {
			add_step(pl, GROW_STEP_BITMAP)->bitmap = false;
			return 0;
		}
		if (!a->has_ppl)
			return refuse(pl->err, pl->errlen, "consistency policy is already %s", now);
		add_step(pl, GROW_STEP_PPL)->ppl = false;
		return 0;
	}
	/* ppl: md's ppl_init_log and mdadm's rules */
	if (a->has_ppl)
		return refuse(pl->err, pl->errlen, "consistency policy is already ppl");
	if (a->level != URAID_LEVEL_5)
		return refuse(pl->err, pl->errlen, "a partial parity log is for RAID 5 only (md's "
			      "PPL); this array is %s", lvname(a->level, l, sizeof(l)));
	if (a->has_bitmap)
		return refuse(pl->err, pl->errlen, "the array has an internal bitmap, which md does "
			      "not run with a partial parity log: --bitmap=none first");
	if (a->raid_disks > 64)
		return refuse(pl->err, pl->errlen, "md runs a partial parity log on 64 members at "
			      "most; this array has %u", a->raid_disks);
	if (a->reshaping)
		return refuse(pl->err, pl->errlen, "a partial parity log cannot be added while a "
			      "reshape is in progress (mdadm refuses it too): grow again when it ends");
	add_step(pl, GROW_STEP_PPL)->ppl = true;
	return 0;
}

/*
 * The exported size goes before the other steps when it is within the size
 * both before and after them (a shrink they need), after them when only the
 * new geometry holds it (a growth).
 */
static int place_array_size(struct planner *pl)
{
	struct grow_plan *p = pl->p;
	const struct grow_array *a = pl->a;
	uint64_t final = a->computed_sectors;
	unsigned n = p->nsteps;

	if (n) {
		const struct grow_step *last = &p->step[n - 1];
		uint64_t g = geometry_sectors(last->level, last->layout, last->raid_disks,
					      last->chunk_sectors, last->dev_sectors);
		if (g)
			final = g;
	}
	uint64_t want = pl->r->array_sectors;
	bool first = want != GROW_SIZE_MAX && want <= a->computed_sectors && want <= final;
	if (!first) {
		if (n)
			pl->cur = p->step[n - 1];
		int rc = plan_array_size(pl, final);
		if (rc)
			return rc;
		if (p->nsteps > n && n && p->step[n - 1].kind == GROW_STEP_RESTRIPE)
			p->step[n].waits = true;
		return 0;
	}
	struct grow_plan rest = *p;
	p->nsteps = 0;
	grow_step_from_array(a, &pl->cur);
	int rc = plan_array_size(pl, a->computed_sectors);
	if (rc)
		return rc;
	for (unsigned i = 0; i < rest.nsteps && p->nsteps < GROW_STEPS_MAX; i++)
		p->step[p->nsteps++] = rest.step[i];
	return 0;
}

int grow_plan_build(const struct grow_array *a, const struct grow_request *r,
		    struct grow_plan *p, char *err, size_t errlen)
{
	struct planner pl = { .a = a, .r = r, .p = p, .err = err, .errlen = errlen };
	bool geometry = r->raid_disks || r->level_set || r->chunk_sectors || r->layout_set ||
			r->append;
	bool size = r->size_sectors != 0;
	bool bitmap = r->bitmap != GROW_BITMAP_KEEP;
	bool policy = r->policy != GROW_POLICY_KEEP;
	int rc;

	memset(p, 0, sizeof(*p));
	if (err && errlen)
		err[0] = 0;
	grow_step_from_array(a, &pl.cur);
	if (!geometry && !size && !bitmap && !policy && !r->array_sectors)
		return refuse(err, errlen, "nothing to change: give --raid-devices, --level, "
			      "--chunk, --layout, --size, --array-size, --bitmap or "
			      "--consistency-policy");
	if (policy && (geometry || size || bitmap || r->array_sectors))
		return refuse(err, errlen, "--consistency-policy cannot be combined with other "
			      "changes: grow twice");
	/* mdadm's rules: the bitmap alone; the size alone (it may bring the
	   exported size with it) */
	if (bitmap && (geometry || size || r->array_sectors))
		return refuse(err, errlen, "--bitmap changes cannot be combined with other "
			      "changes: grow twice");
	if (size && geometry)
		return refuse(err, errlen, "--size cannot change together with the level, "
			      "members, chunk or layout: change the size first, check the data, "
			      "then the rest");
	/* --add alone is mdadm's way to grow linear, and only linear */
	if (r->append && a->level != URAID_LEVEL_LINEAR) {
		char l[16];
		return refuse(err, errlen, "--add alone grows linear arrays only; %s takes "
			      "--raid-devices=N with --add DEV", lvname(a->level, l, sizeof(l)));
	}
	if (r->append && (r->raid_disks || r->level_set || r->chunk_sectors || r->layout_set ||
			  r->array_sectors))
		return refuse(err, errlen, "append (--add alone) cannot be combined with other "
			      "changes");
	if (r->append && r->append > URAID_MAX_MEMBERS - a->raid_disks)
		return refuse(err, errlen, "linear holds at most %d members; it has %u, %u more "
			      "asked", URAID_MAX_MEMBERS, a->raid_disks, r->append);
	/* mdadm freezes a rebuild ("recover") before a RAID 10 reshape, and md's
	   raid10_start_reshape keeps its member in the slot, recovering: the
	   engine stops the rebuild so (reshape_start.c) */
	bool r10_restripe = a->level == URAID_LEVEL_10 && geometry && !size && !bitmap &&
			    (!r->level_set || r->level == URAID_LEVEL_10);
	if (a->job && (geometry || size || bitmap) && !(r10_restripe && a->job_recover))
		return refuse(err, errlen, "a %s is running: wait for it to end (uraid status) "
			      "or stop it (uraid sync-cancel), then grow", a->job);

	/* md changes the policy under a resync or rebuild too (not a reshape,
	   which plan_policy refuses with mdadm's reason); a bitmap step is
	   --bitmap's, refused under any job */
	if (policy && a->job && !a->reshaping &&
	    (r->policy == GROW_POLICY_BITMAP || (r->policy == GROW_POLICY_RESYNC && a->has_bitmap)))
		return refuse(err, errlen, "a %s is running: wait for it to end (uraid status) "
			      "or stop it (uraid sync-cancel), then grow", a->job);
	if (policy)
		rc = plan_policy(&pl);
	else if (bitmap)
		rc = plan_bitmap(&pl);
	else if (size)
		rc = plan_size(&pl);
	else
		rc = geometry ? plan_geometry(&pl) : 0;
	if (rc)
		return rc;
	if (r->array_sectors) {
		rc = place_array_size(&pl);
		if (rc)
			return rc;
	}
	if (!p->nsteps) {
		snprintf(err, errlen, "nothing to change: the array already has that geometry");
		return -EALREADY;
	}
	return 0;
}

void grow_step_from_array(const struct grow_array *a, struct grow_step *s)
{
	memset(s, 0, sizeof(*s));
	s->level = a->level;
	s->layout = a->layout;
	s->raid_disks = a->raid_disks;
	s->chunk_sectors = a->chunk_sectors;
	s->dev_sectors = a->dev_sectors;
}

static const char *layout_str(int level, uint32_t layout, char *buf, size_t len)
{
	const char *n = level == URAID_LEVEL_0 ? NULL : uraid_layout_name(level, layout, buf, len);
	if (!n || !*buf)
		snprintf(buf, len, "%s", level == URAID_LEVEL_4 ? "parity-last" : "-");
	return buf;
}

void grow_step_describe(const struct grow_step *s, const struct grow_step *prev, char *buf,
			size_t len)
{
	char l1[16], l2[16], y1[32], y2[32];

	switch (s->kind) {
	case GROW_STEP_ARRAY_SIZE:
		if (s->sectors)
			snprintf(buf, len, "exported size set to %" PRIu64 " KiB", s->sectors / 2);
		else
			snprintf(buf, len, "exported size back to the members' full size");
		break;
	case GROW_STEP_SIZE:
		snprintf(buf, len, "member size used %" PRIu64 " -> %" PRIu64 " KiB",
			 prev->dev_sectors / 2, s->dev_sectors / 2);
		break;
	case GROW_STEP_BITMAP:
		snprintf(buf, len, "%s", s->bitmap ? "internal bitmap added" : "bitmap removed");
		break;
	case GROW_STEP_PPL:
		snprintf(buf, len, "%s", s->ppl ? "partial parity log added (consistency policy ppl)"
			 : "partial parity log removed (consistency policy resync)");
		break;
	case GROW_STEP_MIRRORS:
		snprintf(buf, len, "RAID 1 %u -> %u members", prev->raid_disks, s->raid_disks);
		break;
	case GROW_STEP_DROP_COPIES:
		snprintf(buf, len, "second member of each pair failed and removed");
		break;
	case GROW_STEP_APPEND:
		snprintf(buf, len, "linear %u -> %u members (appended, no data moved)",
			 prev->raid_disks, s->raid_disks);
		break;
	case GROW_STEP_TAKEOVER:
		snprintf(buf, len, "takeover %s -> %s (%u -> %u slots, layout %s)",
			 lvname(prev->level, l1, sizeof(l1)), lvname(s->level, l2, sizeof(l2)),
			 prev->raid_disks, s->raid_disks,
			 layout_str(s->level, s->layout, y2, sizeof(y2)));
		break;
	case GROW_STEP_RESTRIPE: {
		/* what changes only */
		size_t n = (size_t)snprintf(buf, len, "restripe %s", lvname(s->level, l1, sizeof(l1)));
		const char *sep = ":";
		if (prev->raid_disks != s->raid_disks && n < len) {
			n += (size_t)snprintf(buf + n, len - n, "%s %u -> %u members", sep,
					      prev->raid_disks, s->raid_disks);
			sep = ",";
		}
		if (prev->chunk_sectors != s->chunk_sectors && n < len) {
			n += (size_t)snprintf(buf + n, len - n, "%s chunk %u -> %u KiB", sep,
					      prev->chunk_sectors / 2, s->chunk_sectors / 2);
			sep = ",";
		}
		if (prev->layout != s->layout && n < len)
			snprintf(buf + n, len - n, "%s layout %s -> %s", sep,
				 layout_str(prev->level, prev->layout, y1, sizeof(y1)),
				 layout_str(s->level, s->layout, y2, sizeof(y2)));
		break;
	}
	}
}
