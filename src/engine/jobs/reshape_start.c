// SPDX-License-Identifier: MIT
/*
 * The start of a RAID 4/5/6 or RAID 10 reshape (uraid_array_reshape_start):
 * what is refused and why, the new data offset as mdadm picks it (Grow.c
 * set_new_data_offset; RAID 10's least move is its min_offset_change, the
 * larger chunk times an offset layout's copies), the spares taking the new
 * slots (and the empty slot a takeover left: RAID 0's parity, RAID 5 -> 6's
 * Q), the superblocks written with the reshape fields (md's
 * raid5_start_reshape, raid10_start_reshape), and the job. The steps
 * themselves are jobs/reshape.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/jobs/sync.h"
#include "engine/level/level.h"
#include "engine/md/reshape_state.h"

#define A(ua) ((struct array *)(ua))

/* Free sectors between member i's metadata (superblock, bitmap, bad-block
 * log) and its data: where the data offset can move down to. */
static uint64_t room_before(const struct array *a, unsigned i)
{
	const struct member *m = a->members[i];
	uint64_t off = a->member_sb[i].data_offset, end = 0;

	for (unsigned k = 0; k < m->nareas; k++)
		if (m->area[k].end <= off && m->area[k].end > end)
			end = m->area[k].end;
	return off - end;
}

/* Free sectors between the end of member i's data (the array's size per
 * member) and what follows it (a 1.0 superblock, the member's end): where
 * the data offset can move up to. mdadm's space_after. */
static uint64_t room_after(const struct array *a, unsigned i)
{
	const struct member *m = a->members[i];
	uint64_t end = a->member_sb[i].data_offset + a->sb.size, lim = m->dev_sectors;

	for (unsigned k = 0; k < m->nareas; k++)
		if (m->area[k].start >= end && m->area[k].start < lim)
			lim = m->area[k].start;
	return lim > end ? lim - end : 0;
}

/* A spare that holds a slot in dev_roles (md's raid_disk >= 0): recovering
 * it, or a replacement being copied to it. */
static bool role_pending(const struct array *a, unsigned i)
{
	return a->members[i] && a->member_state[i] == URAID_MEMBER_SPARE &&
	       a->member_pending_slot[i] >= 0;
}

static bool spare_free(const struct array *a, unsigned i)
{
	return a->members[i] && a->member_state[i] == URAID_MEMBER_SPARE &&
	       a->member_pending_slot[i] < 0;
}

static bool parity_last(int level, uint32_t layout)
{
	return level == 4 || (level == 5 && layout == URAID_PARITY_LAST);
}

/*
 * A parity-last RAID 4/5 whose parity slot (the last) is missing holds all
 * its data: md restripes it degraded. mdadm grows a RAID 0 so (through a
 * RAID 4, more members, parity last before and after), and takes a RAID 0
 * to RAID 5 so (layout parity-last to left-symmetric, same count). The new
 * members take the slots from the old parity slot on, so that the last
 * slot is the one missing after, as md's raid5_add_disk places them (the
 * first empty slot): a RAID 4 can then be taken back to RAID 0.
 */
static bool parity_gap(const struct array *a, const struct uraid_reshape *r)
{
	const struct uraid_geom *g = &a->geom;
	unsigned last = g->raid_disks - 1;

	return atomic_load(&a->degraded) == 1 && !a->slot[last].m && g->level != 6 &&
	       parity_last(g->level, g->layout) && r->new_raid_disks >= g->raid_disks;
}

/*
 * A RAID 6 in a -6 layout (md's takeover of a RAID 5) whose last slot, the
 * one that holds only Q, is missing: md restripes it at once, a spare in
 * that slot (raid5_start_reshape adds it with recovery_offset 0, not in
 * sync; mdadm's RAID 5 -> 6). The restripe writes that member's new rows;
 * its old-geometry content (no Q was ever written there) is never read.
 */
static bool q_gap(const struct array *a, const struct uraid_reshape *r)
{
	const struct uraid_geom *g = &a->geom;
	unsigned last = g->raid_disks - 1;

	return g->level == 6 && g->layout >= URAID_LEFT_ASYMMETRIC_6 &&
	       g->layout <= URAID_PARITY_FIRST_6 && atomic_load(&a->degraded) == 1 &&
	       !a->slot[last].m && r->new_level == 6 && r->new_raid_disks >= g->raid_disks;
}

#define HOLD_AUTO_NS (10ull * 1000000000u)   /* no automatic job while a start is under way */

/*
 * A spare added to such an array starts rebuilding the parity slot by
 * itself (as md's would, had mdadm not frozen sync_action first): that
 * rebuild is stopped and its member taken back as a spare, to become a
 * data member of the new geometry. Automatic starts are held meanwhile.
 */
static bool stop_gap_rebuild(struct array *a, const struct uraid_reshape *r)
{
	const struct uraid_geom *g = &a->geom;
	unsigned last = g->raid_disks - 1;

	if (!parity_last(g->level, g->layout) || g->level == 6 ||
	    r->new_raid_disks <= g->raid_disks || atomic_load(&a->degraded) != 1 ||
	    slot_ok(a, last))
		return false;
	atomic_store(&a->sync_retry_ns, engine_now_ns() + HOLD_AUTO_NS);
	sync_reap(a);
	pthread_mutex_lock(&a->sync_lock);
	struct sync_job *j = atomic_load(&a->sync);
	bool rebuilding = j && j->kind == URAID_SYNC_RECOVER && j->target_slot == (int)last;
	pthread_mutex_unlock(&a->sync_lock);
	if (rebuilding)
		sync_stop_wait(a);
	pthread_mutex_lock(&a->meta_lock);
	struct member *m = a->slot[last].m;
	if (m && a->slot[last].state == URAID_MEMBER_REBUILDING) {
		for (unsigned i = 0; i < a->nmembers; i++) {
			if (a->members[i] != m)
				continue;
			a->member_pending_slot[i] = -1;
			a->member_sb[i].feature_map &= ~URAID_FEATURE_RECOVERY_OFFSET;
			a->member_sb[i].recovery_offset = 0;
		}
		atomic_store(&a->slot[last].m, NULL);
		atomic_store(&a->slot[last].state, URAID_MEMBER_MISSING);
		atomic_store(&a->slot[last].rebuilt, 0);
		slot_changed(a, last);
		meta_recount_degraded(a);
	}
	pthread_mutex_unlock(&a->meta_lock);
	return true;
}

/*
 * A degraded RAID 10: mdadm freezes a rebuild running before the reshape
 * (sync_action "frozen"), and md's raid10_start_reshape keeps its member in
 * the slot, not in sync (md_recovery_end keeps it so here: REBUILDING,
 * recovery_offset where it stopped); reshape_begin then makes it a member
 * that waits in its slot, rebuilt from 0 after the reshape. Automatic
 * starts are held meanwhile (and for the spares the start places).
 */
static bool stop_copies_rebuild(struct array *a)
{
	if (a->level->reshape != LEVEL_RESHAPE_COPIES || !atomic_load(&a->degraded))
		return false;
	atomic_store(&a->sync_retry_ns, engine_now_ns() + HOLD_AUTO_NS);
	sync_reap(a);
	pthread_mutex_lock(&a->sync_lock);
	struct sync_job *j = atomic_load(&a->sync);
	bool rebuilding = j && j->kind == URAID_SYNC_RECOVER;
	pthread_mutex_unlock(&a->sync_lock);
	if (rebuilding)
		sync_stop_wait(a);
	return true;
}

/*
 * What md refuses of a RAID 10 reshape (mdadm's analyse_change and md's
 * raid10_check_reshape, with mdadm's words).
 */
static int check_copies(const struct array *a, const struct uraid_reshape *r, char *err,
			size_t errlen)
{
	uint32_t ol = a->geom.layout, nl = r->new_layout;
	bool ofar = URAID_RAID10_FAR(ol) > 1 && !(ol & URAID_RAID10_OFFSET);
	bool nfar = URAID_RAID10_FAR(nl) > 1 && !(nl & URAID_RAID10_OFFSET);

	if (ofar)
		return uraid_errf(err, errlen, -EINVAL, "Cannot reshape RAID10 in far-mode (md "
				  "moves no far layout: copy the data to a new array instead)");
	if (nfar)
		return uraid_errf(err, errlen, -EINVAL, "Cannot reshape RAID10 to far-mode (md "
				  "reshapes to near and offset layouts only)");
	unsigned oc = URAID_RAID10_NEAR(ol) * URAID_RAID10_FAR(ol);
	unsigned nc = URAID_RAID10_NEAR(nl) * URAID_RAID10_FAR(nl);
	if (oc != nc)
		return uraid_errf(err, errlen, -EINVAL, "Cannot change number of copies when "
				  "reshaping RAID10 (%u copies now, the layout asks for %u)", oc, nc);
	if (r->new_chunk_sectors && array_export_sectors(a) % r->new_chunk_sectors)
		return uraid_errf(err, errlen, -EINVAL, "the array's size (%" PRIu64 " KiB) is not "
				  "a multiple of the new chunk (%u KiB), which md's raid10 needs: "
				  "uraid grow --array-size to a multiple first",
				  array_export_sectors(a) / 2, r->new_chunk_sectors / 2);
	return 0;
}

/* What r asks of a, refused with the reason (0: it can start). */
static int check_request(struct array *a, const struct uraid_reshape *r, char *err, size_t errlen)
{
	const struct uraid_geom *g = &a->geom;
	int level = g->level;
	enum level_reshape kind = a->level->reshape;
	const struct level *to = level_find(r->new_level);

	/* the reshape reads and writes members' descriptors directly */
	if (array_has_stacked_member(a))
		return uraid_errf(err, errlen, -EINVAL, "%s is the RAID 0 of a nested array (its "
				  "members are arrays): uraid does not reshape it", a->sb.set_name);
	if (kind == LEVEL_RESHAPE_NONE)
		return uraid_errf(err, errlen, -EINVAL, "%s has no stripes to reshape",
				  uraid_level_name(level));
	if (kind == LEVEL_RESHAPE_COPIES && r->new_level != level)
		return uraid_errf(err, errlen, -EINVAL, "a RAID 10 reshape ends at RAID 10, not %d "
				  "(RAID 10 -> RAID 0 is md's takeover: uraid grow --level=0)",
				  r->new_level);
	if (!to || to->reshape != kind)
		return uraid_errf(err, errlen, -EINVAL, "a restripe ends at RAID 4, 5 or 6, not %d",
				  r->new_level);
	/* md resumes only a reshape within one level (raid5_run) */
	if (level != r->new_level)
		return uraid_errf(err, errlen, -EINVAL, "RAID %d to RAID %d: md changes the level "
				  "by a takeover first (uraid grow --level), then restripes",
				  level, r->new_level);
	if (!(a->e->flags & URAID_ENGINE_THREADS))
		return uraid_errf(err, errlen, -EINVAL, "a reshape needs an engine that runs its "
				  "own threads");
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return uraid_errf(err, errlen, -EROFS, "the array is read-only");
	if (a->reshape)
		return uraid_errf(err, errlen, -EBUSY, "a reshape is in progress already");
	if (a->has_bitmap)
		return uraid_errf(err, errlen, -EINVAL, "the array has a write-intent bitmap: remove "
				  "it first (as md asks), and add it again after the reshape");
	/* RAID 10 degraded: as md (its check on the new geometry: reshape_begin) */
	if (atomic_load(&a->degraded) && kind != LEVEL_RESHAPE_COPIES && !parity_gap(a, r) &&
	    !q_gap(a, r))
		return uraid_errf(err, errlen, -EINVAL, "the array is degraded: rebuild it first "
				  "(only a parity-last RAID 4/5 missing its parity member, or a "
				  "RAID 6 in a -6 layout missing its Q member, is restriped "
				  "degraded, as md does after a RAID 0 or RAID 5 takeover; and "
				  "RAID 10)");
	if (r->new_raid_disks == g->raid_disks && r->new_chunk_sectors == g->chunk_sectors &&
	    r->new_layout == g->layout && r->new_level == level)
		return uraid_errf(err, errlen, -EINVAL, "nothing to change: that is the array's "
				  "geometry now");
	if (r->new_raid_disks > URAID_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EINVAL, "%u members: at most %u",
				  r->new_raid_disks, URAID_MAX_MEMBERS);
	return kind == LEVEL_RESHAPE_COPIES ? check_copies(a, r, err, errlen) : 0;
}

/* The new geometry, checked as md would (layout, chunk, member count),
 * with size sectors used per member. */
static int new_geometry(const struct uraid_reshape *r, uint64_t size, struct uraid_geom *g,
			char *err, size_t errlen)
{
	char why[200];
	struct uraid_geom_params p = { .level = r->new_level, .layout = r->new_layout,
				       .raid_disks = r->new_raid_disks,
				       .chunk_sectors = r->new_chunk_sectors,
				       .dev_sectors = size };
	if (uraid_geom_init(g, &p, why, sizeof(why)))
		return uraid_errf(err, errlen, -EINVAL, "the new geometry: %s", why);
	return 0;
}

/*
 * Fewer RAID 10 members with less room after the data than the least move
 * (min): mdadm makes the component size smaller by min first
 * (analyse_change's new_size, raid10_reshape's component_size), which
 * md's raid10_resize takes as calc_sectors counts it (the old geometry's
 * used sectors). The size to use: a->sb.size when there is room.
 */
static uint64_t copies_shrink_size(struct array *a, unsigned new_disks, uint64_t min)
{
	uint64_t after = UINT64_MAX, size = a->sb.size;

	if (a->level->reshape != LEVEL_RESHAPE_COPIES || new_disks >= a->geom.raid_disks)
		return size;
	pthread_mutex_lock(&a->meta_lock);
	for (unsigned i = 0; i < a->nmembers; i++) {
		int s = a->member_slot[i];
		if (a->members[i] && s >= 0 && (unsigned)s < a->geom.raid_disks &&
		    a->member_state[i] == URAID_MEMBER_IN_SYNC && room_after(a, i) < after)
			after = room_after(a, i);
	}
	pthread_mutex_unlock(&a->meta_lock);
	if (after >= min || size <= min)
		return size;
	struct uraid_geom *g = malloc(sizeof(*g));      /* large: per-member sizes */
	struct uraid_geom_params p = { .level = a->geom.level, .layout = a->geom.layout,
				       .raid_disks = a->geom.raid_disks,
				       .chunk_sectors = a->geom.chunk_sectors,
				       .dev_sectors = (size - min) / 2 * 2 };  /* mdadm writes KiB */
	/* (the geometry with less is valid when the one with more is: on
	   failure the size stays, and the room check refuses) */
	if (g && uraid_geom_init(g, &p, NULL, 0) == 0)
		size = g->dev_sectors;
	free(g);
	return size;
}

/* The superblocks refused the start: the geometry, the members' data
 * areas and the reshape state as before it. Frozen, meta_lock held. */
static void unwind_start(struct array *a, struct reshape_state *rs, struct uraid_geom *scratch)
{
	char why[200];

	a->reshape = NULL;
	*scratch = rs->g[RESHAPE_OLD];
	if (array_switch_geometry(a, scratch, why, sizeof(why)))
		ulog(array_log(a), URAID_LOG_ERR, "reshape start: back to the old geometry: %s", why);
	for (unsigned i = 0; i < a->nmembers; i++) {
		int s = a->member_slot[i];
		if (role_pending(a, i)) {
			a->member_sb[i].new_offset = 0;
			a->member_sb[i].feature_map &= ~URAID_FEATURE_NEW_OFFSET;
		}
		if (!a->members[i] || s < 0 || (unsigned)s >= rs->g[RESHAPE_OLD].raid_disks)
			continue;
		a->member_sb[i].new_offset = 0;
		a->member_sb[i].feature_map &= ~URAID_FEATURE_NEW_OFFSET;
		if (array_member_areas(a, a->members[i], &a->member_sb[i], true, why, sizeof(why)))
			ulog(array_log(a), URAID_LOG_ERR, "reshape start: %s", why);
	}
	free(rs);
}

/*
 * RAID 10: the new geometry keeps an in-sync copy of every chunk, counting
 * the members in sync now and the spares taken into new slots (a spare
 * into an old empty slot recovers after the reshape: not counted). md's
 * raid10_start_reshape checks only the old geometry (enough()): it would
 * start and write such chunks to recovering members alone, which its
 * recovery then has no source for, and its raid10_run refuses the array
 * in mid-reshape ("not enough operational mirrors"). meta_lock held.
 */
static int copies_new_survives(const struct array *a, const struct uraid_geom *ng,
			       const unsigned *to_slot, unsigned ntake, char *err, size_t errlen)
{
	bool present[URAID_MAX_MEMBERS] = { false };
	unsigned old_disks = a->geom.raid_disks;
	uint64_t bad = UINT64_MAX;

	for (unsigned s = 0; s < ng->raid_disks && s < old_disks; s++)
		present[s] = slot_ok(a, s);
	for (unsigned k = 0; k < ntake; k++)
		if (to_slot[k] >= old_disks && to_slot[k] < URAID_MAX_MEMBERS)
			present[to_slot[k]] = true;
	if (uraid_level_survives(ng, present, &bad))
		return 0;
	char miss[160] = "";
	size_t used = 0;
	for (unsigned s = 0; s < ng->raid_disks && used + 8 < sizeof(miss); s++)
		if (!present[s])
			used += (size_t)snprintf(miss + used, sizeof(miss) - used, "%s%u",
						 used ? "," : "", s);
	return uraid_errf(err, errlen, -EINVAL, "not enough operational mirrors in the new "
			  "geometry (md's raid10 words): chunk %" PRIu64 " would have no in-sync "
			  "copy there (slots %s missing or recovering); md would start it and "
			  "lose that data: rebuild the missing members first", bad, miss);
}

/* md's raid10_add_disk at a reshape's start: spare i takes old slot s,
 * empty, not in sync (recovery_offset 0), rebuilt after the reshape; the
 * reshape writes none of its rows. meta_lock held, frozen. */
static void place_recovering(struct array *a, unsigned i, unsigned s)
{
	a->member_pending_slot[i] = (int)s;
	a->member_sb[i].feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
	a->member_sb[i].recovery_offset = 0;
	a->slot[s].dev_number = a->member_sb[i].dev_number;
	atomic_store(&a->slot[s].rebuilt, 0);
	atomic_store(&a->slot[s].state, URAID_MEMBER_REBUILDING);
	atomic_store(&a->slot[s].m, a->members[i]);
	slot_changed(a, s);
}

/*
 * The start up to the superblocks written with the reshape fields; the job
 * too when start_job. frozen: the caller holds the array frozen (grow's
 * takeover just before, applied in memory only: the two reach the disks in
 * one superblock update) and lets it go; nothing here freezes or thaws.
 */
static int reshape_begin(struct array *a, const struct uraid_reshape *r, bool frozen,
			 bool start_job, char *err, size_t errlen)
{
	bool held = !a->reshape && (a->e->flags & URAID_ENGINE_THREADS) &&
		    !(a->flags & URAID_ASSEMBLE_READONLY) && stop_gap_rebuild(a, r);
	struct uraid_geom *ng = NULL;
	int rc = check_request(a, r, err, errlen);
	if (rc)
		goto out;
	held |= stop_copies_rebuild(a);
	ng = malloc(sizeof(*ng));
	if (!ng) {
		rc = uraid_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = new_geometry(r, a->sb.size, ng, err, errlen)))
		goto out;
	bool copies = a->level->reshape == LEVEL_RESHAPE_COPIES;
	/* the size used per member: smaller for fewer RAID 10 members without
	   room after the data (mdadm's way) */
	uint64_t old_size = a->sb.size, size = old_size;
	if (copies) {
		size = copies_shrink_size(a, ng->raid_disks,
					  reshape_copies_distance(&a->geom, ng));
		if (size != old_size && (rc = new_geometry(r, size, ng, err, errlen)))
			goto out;
	}
	unsigned old_disks = a->geom.raid_disks, new_disks = ng->raid_disks;
	uint64_t exported = array_export_sectors(a);
	if (ng->array_sectors < exported) {
		rc = uraid_errf(err, errlen, -EINVAL, "this change will reduce the size of the "
				"array (to %" PRIu64 " KiB%s, it exports %" PRIu64 " KiB): reduce its "
				"size first (uraid grow --array-size=%" PRIu64 "K)",
				ng->array_sectors / 2, size != old_size ? ", the members' used size "
				"one chunk smaller to make room after the data, as mdadm does" : "",
				exported / 2, ng->array_sectors / 2);
		goto out;
	}
	if ((rc = sync_refuse_if_running(a, err, errlen)))
		goto out;
	/* mdadm's distance (min_offset_change): a step's worth of the old rows
	   per member (backup_blocks / old data disks); RAID 10: the larger
	   chunk times an offset layout's copies. The members in the count:
	   data members, or RAID 10's all */
	uint64_t min = copies ? reshape_copies_distance(&a->geom, ng)
			      : reshape_step(&a->geom, ng) / a->geom.data_disks;
	int ddelta = copies ? (int)ng->raid_disks - (int)a->geom.raid_disks
			    : (int)ng->data_disks - (int)a->geom.data_disks;

	pthread_mutex_lock(&a->meta_lock);
	/* the new slots' members: spares, in the order they came (a Q gap's
	   spare first, into the Q slot) */
	bool qgap = q_gap(a, r);
	unsigned want = (new_disks > old_disks ? new_disks - old_disks : 0) + (qgap ? 1 : 0);
	int take[URAID_MAX_MEMBERS];
	unsigned to_slot[URAID_MAX_MEMBERS], nslots = 0, npending = 0;
	if (copies && new_disks > old_disks) {
		/* md's raid10_start_reshape adds every spare to the first empty
		   slot (raid10_add_disk): an old one first, where it recovers
		   from 0 after the reshape, then the new ones */
		for (unsigned s = 0; s < old_disks; s++)
			if (!a->slot[s].m)
				to_slot[nslots++] = s;
		want += nslots;
	}
	for (unsigned s = old_disks; s < new_disks; s++)
		to_slot[nslots++] = s;
	unsigned ntake = 0;
	for (unsigned i = 0; i < a->nmembers && ntake < want; i++)
		if (spare_free(a, i) && a->member_sb[i].data_size >= a->sb.size)
			take[ntake++] = (int)i;
	for (unsigned i = 0; i < a->nmembers; i++)
		npending += role_pending(a, i) && (unsigned)a->member_pending_slot[i] < old_disks;
	/* RAID 10: md counts a member recovering a slot as a spare (its
	   raid10_start_reshape, mdadm's spare_disks); a new slot may then stay
	   empty, as md leaves it */
	unsigned delta = new_disks > old_disks ? new_disks - old_disks : 0;
	if (copies && ntake + npending < delta) {
		pthread_mutex_unlock(&a->meta_lock);
		rc = uraid_errf(err, errlen, -EINVAL, "Need %u spare%s to avoid degraded array, "
				"and only have %u (mdadm's words; spares of %" PRIu64 " KiB or more, "
				"members recovering a slot counted): add them first (uraid add)",
				delta, delta == 1 ? "" : "s", ntake + npending, a->sb.size / 2);
		goto out;
	}
	if (!copies && ntake < want) {
		pthread_mutex_unlock(&a->meta_lock);
		rc = uraid_errf(err, errlen, -EINVAL, "%u members need %u spares large enough "
				"(%" PRIu64 " KiB each)%s, the array has %u: add them first (uraid "
				"add)", new_disks, want, a->sb.size / 2, qgap ? ", one for the Q "
				"slot" : "", ntake);
		goto out;
	}
	/* the first slot a spare takes otherwise: the old parity slot of a
	   parity gap, the Q slot of a Q gap */
	unsigned first = parity_gap(a, r) || qgap ? old_disks - 1 : old_disks;
	if (!copies)
		for (unsigned k = 0; k < ntake; k++)
			to_slot[k] = first + k;
	if (copies && (rc = copies_new_survives(a, ng, to_slot, ntake, err, errlen))) {
		pthread_mutex_unlock(&a->meta_lock);
		goto out;
	}
	/* the room before and after the data, the least of every member's
	   (mdadm's space_before and space_after) */
	uint64_t before = UINT64_MAX, after = UINT64_MAX;
	for (unsigned i = 0; i < a->nmembers; i++) {
		bool in = false;
		for (unsigned s = 0; s < old_disks; s++)
			in |= a->slot[s].m && a->members[i] == a->slot[s].m;
		for (unsigned k = 0; k < ntake; k++)
			in |= (unsigned)take[k] == i;
		in |= role_pending(a, i) && (unsigned)a->member_pending_slot[i] < old_disks;
		if (!in)
			continue;
		before = room_before(a, i) < before ? room_before(a, i) : before;
		after = room_after(a, i) < after ? room_after(a, i) : after;
	}
	if (after != UINT64_MAX)
		after += old_size - size;       /* what the smaller used size frees */
	/* the direction as mdadm's set_new_data_offset picks it: fewer data
	   members backwards (the data offset up), more forwards (down), the
	   same count towards the larger room (backwards on a tie) */
	bool backwards = ddelta < 0 || (ddelta == 0 && before <= after);
	if (!backwards && before < min) {
		pthread_mutex_unlock(&a->meta_lock);
		rc = uraid_errf(err, errlen, -ENOSPC, "needs %" PRIu64 " KiB before the data, has "
				"%" PRIu64 " (uraid moves the data offset down; there is no backup "
				"file)", min / 2, before / 2);
		goto out;
	}
	if (backwards && after < min) {
		pthread_mutex_unlock(&a->meta_lock);
		rc = uraid_errf(err, errlen, -ENOSPC, "needs %" PRIu64 " KiB after the data, has "
				"%" PRIu64 " (this reshape moves the data offset up, as md does; there "
				"is no backup file): give the members room after the data (uraid grow "
				"--size smaller by %" PRIu64 " KiB, or larger members)", min / 2,
				after / 2, (min - after + 1) / 2);
		goto out;
	}
	/* RAID 10: md's raid10_size with the smaller count, the new array */
	uint64_t top = copies ? ng->array_sectors : reshape_top(&a->geom, ng, size);
	if (backwards && exported > top) {
		pthread_mutex_unlock(&a->meta_lock);
		rc = uraid_errf(err, errlen, -EINVAL, "this change will reduce the size of the "
				"array (to %" PRIu64 " KiB while it runs, it exports %" PRIu64 " KiB): "
				"reduce its size first (uraid grow --array-size=%" PRIu64 "K)",
				top / 2, exported / 2, top / 2);
		goto out;
	}
	pthread_mutex_unlock(&a->meta_lock);

	if (!frozen && (rc = array_freeze(a))) {
		uraid_errf(err, errlen, rc, "cannot freeze the array: %s", strerror(-rc));
		goto out;
	}
	/* a check, repair or automatic start may have come in since the look
	   above: looked at again with starts held until a->reshape is in place
	   (start_one refuses every other kind from then on) */
	pthread_mutex_lock(&a->sync_start_lock);
	if ((rc = sync_refuse_if_running(a, err, errlen))) {
		pthread_mutex_unlock(&a->sync_start_lock);
		if (!frozen)
			array_thaw(a);
		goto out;
	}
	pthread_mutex_lock(&a->meta_lock);
	for (unsigned k = 0; k < ntake; k++) {
		unsigned i = (unsigned)take[k], s = to_slot[k];
		if (copies && s < old_disks) {
			place_recovering(a, i, s);
			continue;
		}
		a->member_state[i] = URAID_MEMBER_IN_SYNC;
		a->member_slot[i] = (int)s;
		atomic_store(&a->slot[s].state, URAID_MEMBER_IN_SYNC);
		atomic_store(&a->slot[s].m, a->members[i]);
		slot_changed(a, s);
	}
	for (unsigned s = old_disks; s < new_disks; s++) {
		/* the new parity slot of a parity gap stays missing, and a new
		   RAID 10 slot no spare was left for (md leaves it so) */
		if (a->slot[s].m && a->slot[s].state == URAID_MEMBER_IN_SYNC)
			continue;
		atomic_store(&a->slot[s].m, NULL);
		atomic_store(&a->slot[s].state, URAID_MEMBER_MISSING);
		slot_changed(a, s);
	}
	const struct uraid_sb *slot_sb[URAID_MAX_MEMBERS] = { 0 };
	uint64_t member_sectors[URAID_MAX_MEMBERS] = { 0 };
	for (unsigned i = 0; i < a->nmembers; i++) {
		bool pending = role_pending(a, i);
		int s = pending ? a->member_pending_slot[i] : a->member_slot[i];
		/* fewer members: the slots that go away are in the old geometry */
		if ((a->member_state[i] != URAID_MEMBER_IN_SYNC && !pending) || s < 0 ||
		    (unsigned)s >= (new_disks > old_disks ? new_disks : old_disks))
			continue;
		/* mdadm's new offset, from each member's own data offset */
		uint64_t d = a->member_sb[i].data_offset, no;
		if (ddelta > 0)
			no = d - min;
		else if (ddelta < 0)
			no = d + min;
		else if (backwards)
			no = reshape_choose_offset(d, d + after, d + min, d + after);
		else
			no = reshape_choose_offset(d - before, d, d - before, d - min);
		a->member_sb[i].new_offset = (int32_t)((int64_t)no - (int64_t)d);
		a->member_sb[i].feature_map |= URAID_FEATURE_NEW_OFFSET;
		if (pending) {
			/* a member recovering (or copied to) a slot: md counts its
			   move too (raid10_run's least offset difference over every
			   member in a slot), so it moves as mdadm moves every device.
			   The reshape writes none of its rows: after it, it is rebuilt
			   whole at the new offset (jobs/reshape.c finish_plan) */
			a->member_sb[i].feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
			a->member_sb[i].recovery_offset = 0;
			/* and no write goes to it meanwhile (a replacement's rows
			   copied so far, a rebuild's). A refused start keeps this:
			   the copy then goes again from 0, which is safe */
			if (atomic_load(&a->slot[s].repl) == a->members[i])
				atomic_store(&a->slot[s].repl_rebuilt, 0);
			if (a->slot[s].m == a->members[i] &&
			    a->slot[s].state == URAID_MEMBER_REBUILDING)
				atomic_store(&a->slot[s].rebuilt, 0);
			continue;
		}
		slot_sb[s] = &a->member_sb[i];
		member_sectors[s] = a->members[i]->dev_sectors;
	}
	struct uraid_sb *sb = &a->sb;
	sb->size = size;
	sb->feature_map |= URAID_FEATURE_RESHAPE_ACTIVE;
	sb->new_level = (uint32_t)r->new_level;
	sb->new_layout = r->new_layout;
	sb->new_chunk = r->new_chunk_sectors;
	sb->delta_disks = (int32_t)(new_disks - old_disks);
	sb->raid_disks = new_disks;
	sb->reshape_position = backwards ? top : 0;
	/* md writes 0x20 only for the same count (super_1_sync): fewer
	   members say backwards by delta_disks alone */
	if (backwards && new_disks == old_disks)
		sb->feature_map |= URAID_FEATURE_RESHAPE_BACKWARDS;
	struct reshape_state *rs;
	rc = reshape_state_from_sb(sb, slot_sb, member_sectors, &rs, err, errlen);
	if (rc == 0) {
		/* the requests' geometry: the larger member count (the stripe
		   heads and pieces are sized by it; fewer members: the slots that
		   go away stay until the end); the size stays until the end */
		struct uraid_geom *during = ng;
		*during = rs->g[new_disks < old_disks ? RESHAPE_OLD : RESHAPE_NEW];
		during->array_sectors = a->geom.array_sectors;
		if (backwards && during->array_sectors > top)
			during->array_sectors = top;    /* md's raid5_size while it runs */
		rc = array_switch_geometry(a, during, err, errlen);
		if (rc)
			free(rs);
	}
	if (rc == 0) {
		/* the old parity slot of a parity gap (the Q slot of a Q gap)
		   holds a new member: its old-geometry content is not parity
		   (review 9); its superblock says so (meta.c: md's
		   recovery_offset 0, not in sync until the end) */
		if (first < old_disks)
			rs->old_unsynced[first] = true;
		a->reshape = rs;
		reshape_set_member_areas(a, rs);
		meta_recount_degraded(a);
		rc = meta_record_change(a);
		if (rc) {
			uraid_errf(err, errlen, rc, "cannot write the superblocks: %s", strerror(-rc));
			/* no member took them (meta.c fails the ones that refuse):
			   back to the old geometry in memory too, so that nothing
			   runs in the new one while the disks do not say so */
			unwind_start(a, rs, ng);
		}
	}
	if (rc) {
		/* the array as it was */
		sb->feature_map &= ~(URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_RESHAPE_BACKWARDS);
		sb->size = old_size;
		sb->raid_disks = old_disks;
		sb->delta_disks = 0;
		for (unsigned i = 0; i < a->nmembers; i++) {
			a->member_sb[i].new_offset = 0;
			a->member_sb[i].feature_map &= ~URAID_FEATURE_NEW_OFFSET;
		}
		for (unsigned k = 0; k < ntake; k++) {
			unsigned i = (unsigned)take[k], s = to_slot[k];
			atomic_store(&a->slot[s].m, NULL);
			atomic_store(&a->slot[s].state, URAID_MEMBER_MISSING);
			slot_changed(a, s);
			a->member_state[i] = URAID_MEMBER_SPARE;
			a->member_slot[i] = -1;
			a->member_pending_slot[i] = -1;
			a->member_sb[i].feature_map &= ~URAID_FEATURE_RECOVERY_OFFSET;
			a->member_sb[i].recovery_offset = 0;
		}
		meta_recount_degraded(a);
	}
	pthread_mutex_unlock(&a->meta_lock);
	pthread_mutex_unlock(&a->sync_start_lock);
	if (!frozen)
		array_thaw(a);
	if (rc)
		goto out;
	ulog(array_log(a), URAID_LOG_INFO, "reshape: %u -> %u members, chunk %u -> %u KiB, "
	     "layout %u -> %u, %s", old_disks, new_disks,
	     a->reshape->g[RESHAPE_OLD].chunk_sectors / 2, r->new_chunk_sectors / 2,
	     a->reshape->g[RESHAPE_OLD].layout, r->new_layout,
	     backwards ? "backwards (the data offset up)" : "forwards (the data offset down)");
	if (start_job)
		rc = reshape_start_job(a, err, errlen);
out:
	if (held)       /* automatic starts as before (a reshape started holds them itself) */
		atomic_store(&a->sync_retry_ns, 0);
	free(ng);
	return rc;
}

int reshape_start_job(struct array *a, char *err, size_t errlen)
{
	int rc = sync_start(a, URAID_SYNC_RESHAPE, 0, 0, err, errlen);
	if (rc == -EBUSY) {
		/* the automatic start (auto_recover.c) may have been first */
		pthread_mutex_lock(&a->sync_lock);
		struct sync_job *j = atomic_load(&a->sync);
		if (j && j->kind == URAID_SYNC_RESHAPE)
			rc = 0;
		pthread_mutex_unlock(&a->sync_lock);
	}
	return rc;
}

int reshape_start_frozen(struct array *a, const struct uraid_reshape *r, char *err,
			 size_t errlen)
{
	return reshape_begin(a, r, true, false, err, errlen);
}

int uraid_array_reshape_start(struct uraid_array *ua, const struct uraid_reshape *r, char *err,
			      size_t errlen)
{
	return reshape_begin(A(ua), r, false, true, err, errlen);
}
