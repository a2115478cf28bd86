// SPDX-License-Identifier: MIT
/*
 * Superblock state changes as md makes them (reference/md-format.md §1.6-§1.9,
 * §1.12, §2.5; kernel md_update_sb, sync_sbs, super_1_sync,
 * md_bitmap_update_sb): clean <-> active, and the change of the member set
 * (member_state.c says what changed). Every update writes the bitmap header
 * first, then the superblocks, each synchronously; a member whose
 * superblock cannot be written is failed (md_fail_metadata) and the update
 * repeated without it, as md does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/core/array.h"
#include "engine/md/member_state.h"
#include "engine/md/reshape_state.h"

/* Feature bits that are the array's, not the member's (§1.9). */
#define ARRAY_FEATURES                                                                   \
	(URAID_FEATURE_BITMAP_OFFSET | URAID_FEATURE_RESHAPE_ACTIVE |                       \
	 URAID_FEATURE_RESHAPE_BACKWARDS | URAID_FEATURE_CLUSTERED | URAID_FEATURE_JOURNAL | \
	 URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS | URAID_FEATURE_RAID0_LAYOUT)
/* What a member waiting for its slot keeps of its own bits (super_1_sync). */
#define PENDING_FEATURES                                                                 \
	(URAID_FEATURE_RECOVERY_OFFSET | URAID_FEATURE_RECOVERY_BITMAP | URAID_FEATURE_REPLACEMENT)

static bool attached(const struct array *a, unsigned i)
{
	return a->members[i] && a->members[i]->fd >= 0 &&
	       a->member_state[i] != URAID_MEMBER_STALE &&
	       a->member_state[i] != URAID_MEMBER_MISSING;
}

/* Superblocks go to attached members that are not faulty (md_update_sb). */
static bool writable(const struct array *a, unsigned i)
{
	return attached(a, i) && a->member_state[i] != URAID_MEMBER_FAULTY;
}

/* md's raid_disk >= 0: in a slot, or waiting for one (md gives a journal 0). */
static bool has_role_slot(const struct array *a, unsigned i)
{
	return a->member_state[i] == URAID_MEMBER_IN_SYNC ||
	       a->member_state[i] == URAID_MEMBER_JOURNAL ||
	       (a->member_state[i] == URAID_MEMBER_SPARE && a->member_pending_slot[i] >= 0);
}

/* super_1_sync: what dev_roles says of an attached member. */
static uint16_t role_now(const struct array *a, unsigned i)
{
	switch (a->member_state[i]) {
	case URAID_MEMBER_IN_SYNC:
		return (uint16_t)a->member_slot[i];
	case URAID_MEMBER_FAULTY:
		return URAID_ROLE_FAULTY;
	case URAID_MEMBER_JOURNAL:
		return URAID_ROLE_JOURNAL;
	case URAID_MEMBER_SPARE:
		return a->member_pending_slot[i] >= 0 ? (uint16_t)a->member_pending_slot[i]
						      : URAID_ROLE_SPARE;
	default:
		return URAID_ROLE_SPARE;
	}
}

bool meta_slot_in_sync(const struct array *a, unsigned s)
{
	/* md's raid5_calc_degraded counts a member without In_sync in either
	   geometry; the one a reshape fills gets In_sync only at its end (its
	   old rows never held what the slot should: RAID 5 -> 6's Q) */
	return slot_ok(a, s) && !(a->reshape && s < URAID_MAX_MEMBERS &&
				  a->reshape->old_unsynced[s]);
}

void meta_recount_degraded(struct array *a)
{
	unsigned missing = 0;
	for (unsigned s = 0; s < a->geom.raid_disks; s++)
		missing += !meta_slot_in_sync(a, s);
	atomic_store(&a->degraded, missing);
}

/* Member i sits in a slot whose old-geometry content a reshape does not
 * trust (md/reshape_state.h old_unsynced): the reshape fills it. */
static bool filled_by_reshape(const struct array *a, unsigned i)
{
	int s = a->member_slot[i];
	return a->reshape && a->member_state[i] == URAID_MEMBER_IN_SYNC && s >= 0 &&
	       s < URAID_MAX_MEMBERS && a->reshape->old_unsynced[s];
}

/* The array superblock with member i's own fields, as super_1_sync writes it. */
static void compose(const struct array *a, unsigned i, struct uraid_sb *out)
{
	const struct uraid_sb *own = &a->member_sb[i];
	bool pending = a->member_state[i] == URAID_MEMBER_SPARE && a->member_pending_slot[i] >= 0;

	*out = a->sb;
	out->feature_map = (a->sb.feature_map & ARRAY_FEATURES) |
			   (pending ? own->feature_map & PENDING_FEATURES : 0);
	out->data_offset = own->data_offset;
	out->data_size = own->data_size;
	out->super_offset = own->super_offset;
	out->recovery_offset = (out->feature_map & URAID_FEATURE_RECOVERY_OFFSET)
				       ? own->recovery_offset : 0;
	if (filled_by_reshape(a, i)) {
		/* as md's raid5_start_reshape leaves it (raid_disk set, not
		   In_sync), its recovery_offset where md's reshape_request puts
		   it: the position in member sectors of the new geometry
		   forwards (measured: 11776 at reshape_position 35328 with 3
		   data members), 0 backwards: md resumed on it reads none of
		   its old rows, and takes it in sync when the reshape ends */
		const struct reshape_state *rs = a->reshape;
		unsigned dd = rs->g[RESHAPE_NEW].data_disks;
		out->feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
		/* copies layouts (RAID 10, data_disks 0) fill no slot
		   (md/assemble.c fills_by_reshape): 0, never a division by 0 */
		out->recovery_offset = rs->backwards || !dd ? 0 : a->sb.reshape_position / dd;
	}
	/* super_1_sync: a journal's recovery_offset is its journal_tail */
	if (a->member_state[i] == URAID_MEMBER_JOURNAL)
		out->recovery_offset = own->recovery_offset;
	out->dev_number = own->dev_number;
	out->cnt_corrected_read = own->cnt_corrected_read;
	memcpy(out->device_uuid, own->device_uuid, 16);
	out->devflags = own->devflags;
	out->bblog_shift = own->bblog_shift;
	out->bblog_size = own->bblog_size;
	out->bblog_offset = own->bblog_offset;
	out->new_offset = own->new_offset;
	/* super_1_sync: ppl.offset and ppl.size are the member's own (1.0
	   members of different sizes may have the area after their data at
	   different offsets); a member not written with a PPL yet takes the
	   array's */
	if ((out->feature_map & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)) &&
	    (own->feature_map & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)))
		out->bitmap_offset = own->bitmap_offset;
	/* per device, during a reshape that moves its data (jobs/reshape.c) */
	if ((out->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) &&
	    (own->feature_map & URAID_FEATURE_NEW_OFFSET))
		out->feature_map |= URAID_FEATURE_NEW_OFFSET;
	out->pad0 = 0;
	memset(out->pad3, 0, sizeof(out->pad3));
}

/* dev_roles from who is attached now (super_1_sync), growing max_dev if needed. */
static void sync_roles(struct array *a)
{
	struct uraid_sb *sb = &a->sb;
	uint32_t max_dev = sb->max_dev;

	for (unsigned i = 0; i < a->nmembers; i++)
		if (attached(a, i) && a->member_sb[i].dev_number < URAID_SB_MAX_DEV &&
		    a->member_sb[i].dev_number + 1 > max_dev)
			max_dev = a->member_sb[i].dev_number + 1;
	sb->max_dev = max_dev;
	for (uint32_t d = 0; d < max_dev; d++)
		sb->dev_roles[d] = URAID_ROLE_SPARE;
	for (unsigned i = 0; i < a->nmembers; i++)
		if (attached(a, i) && a->member_sb[i].dev_number < max_dev)
			sb->dev_roles[a->member_sb[i].dev_number] = role_now(a, i);
}

/* Should member i be left alone on this update? (sync_sbs with nospares) */
static bool skip_spare(const struct array *a, unsigned i, bool nospares)
{
	uint64_t ev = a->member_sb[i].events;
	return !has_role_slot(a, i) &&
	       (ev == a->sb.events || (nospares && ev < a->sb.events && a->sb.events - ev == 1));
}

bool meta_bitmap_target(const struct array *a, unsigned i)
{
	return writable(a, i) && has_role_slot(a, i);
}

bool meta_sb_target(const struct array *a, unsigned i)
{
	return writable(a, i);
}

int meta_write_one(struct array *a, unsigned i)
{
	alignas(4096) uint8_t buf[URAID_SB_BYTES];
	struct uraid_sb sb;

	if (a->flags & URAID_ASSEMBLE_READONLY)
		return -EROFS;
	if (!writable(a, i))
		return 0;
	sync_roles(a);
	a->sb.utime = (uint64_t)time(NULL);
	compose(a, i, &sb);
	uraid_sb_encode(&sb, buf);
	int rc = member_pwrite_sync(a->members[i], buf, uraid_sb_write_bytes(sb.max_dev),
				    sb.super_offset);
	if (!rc)
		a->member_sb[i] = sb;
	return rc;
}

/* Bitmap header (events = sb events) to members with a slot: md_bitmap_update_sb. */
static int write_bitmaps(struct array *a, int *failed)
{
	alignas(4096) uint8_t buf[512];
	struct uraid_bitmap_sb *bm = &a->bitmap;

	/* a stale header keeps its events: md must keep treating every bit as set */
	if (!a->bitmap_stale)
		bm->events = a->sb.events;
	if (bm->events_cleared > a->sb.events)
		bm->events_cleared = a->sb.events;    /* "rocking back to read-only" */
	bm->state &= ~URAID_BITMAP_STATE_WRITE_ERROR;
	memset(buf, 0, sizeof(buf));
	uraid_bitmap_encode(bm, buf);
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (!meta_bitmap_target(a, i))
			continue;
		int64_t at = (int64_t)a->member_sb[i].super_offset + a->sb.bitmap_offset;
		int rc = at < 0 ? -EINVAL
				: member_pwrite_sync(a->members[i], buf, URAID_BITMAP_HEADER_BYTES,
						     (uint64_t)at);
		if (rc) {
			md_fail_metadata(a, i, rc, "bitmap header");
			*failed = 1;
		}
	}
	return 0;
}

/*
 * events + 1 for an update. At 2^64 - 1 the counter cannot go on without
 * wrapping to 0, which would make every member look older than any other
 * copy: the update is refused (assembly refuses a writable array there).
 */
static int events_bump(struct array *a)
{
	if (a->sb.events == UINT64_MAX) {
		ulog(array_log(a), URAID_LOG_ERR, "%s: events %" PRIu64 " is the counter's limit; the "
			"superblocks are not updated", a->sb.set_name, a->sb.events);
		return -EOVERFLOW;
	}
	a->sb.events++;
	return 0;
}

/*
 * One md_update_sb: bitmap header, then every superblock. Returns 0 when
 * every member still writable holds the new superblock; members that failed
 * are marked faulty and the update is repeated (events+1) without them.
 */
static int meta_write(struct array *a, bool nospares)
{
	alignas(4096) uint8_t buf[URAID_SB_BYTES];
	struct uraid_sb sb;

	if (a->flags & URAID_ASSEMBLE_READONLY)
		return -EROFS;
	for (unsigned round = 0; round <= a->nmembers; round++) {
		int failed = 0;
		unsigned written = 0;

		sync_roles(a);
		a->sb.utime = (uint64_t)time(NULL);
		/* reads corrected since the last update (md_read_corrected) */
		for (unsigned i = 0; i < a->nmembers; i++)
			a->member_sb[i].cnt_corrected_read +=
				atomic_exchange(&a->members[i]->corrected_unrecorded, 0);
		if (a->has_bitmap)
			write_bitmaps(a, &failed);
		for (unsigned i = 0; i < a->nmembers; i++) {
			if (!writable(a, i) || skip_spare(a, i, nospares))
				continue;
			compose(a, i, &sb);
			uraid_sb_encode(&sb, buf);
			size_t len = uraid_sb_write_bytes(sb.max_dev);
			int rc = member_pwrite_sync(a->members[i], buf, len, sb.super_offset);
			if (rc) {
				md_fail_metadata(a, i, rc, "superblock");
				failed = 1;
				continue;
			}
			a->member_sb[i] = sb;
			written++;
		}
		if (!failed)
			return 0;
		if (!written) {
			bool any = false;
			for (unsigned i = 0; i < a->nmembers; i++)
				any |= writable(a, i);
			if (!any)
				return -EIO;
		}
		/* md_error set MD_SB_CHANGE_DEVS: another update, going forward */
		if (events_bump(a))
			return -EIO;
		a->last_update_was_dirty = false;
		nospares = false;
	}
	return -EIO;
}

int meta_record_change(struct array *a)
{
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return -EROFS;
	int rc = events_bump(a);
	if (rc)
		return rc;
	a->last_update_was_dirty = false;
	return meta_write(a, false);   /* members that fail it are failed inside */
}

int meta_write_all(struct array *a)
{
	return meta_write(a, false);
}

int meta_mark_active(struct array *a)
{
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return -EROFS;
	/* md_update_sb: a pure clean/dirty change leaves spares alone unless degraded */
	bool nospares = atomic_load(&a->degraded) == 0;
	uint64_t old_offset = a->sb.resync_offset;
	/* with a clean journal md writes MaxSector while active; uraid only
	   while no resync is pending (md would also hide one started later, a
	   grown size's, behind MaxSector: a crash would then skip it) */
	a->sb.resync_offset = a->journal_clean && !a->resync_needed ? URAID_MAX_SECTOR : 0;
	if (events_bump(a)) {
		a->sb.resync_offset = old_offset;
		return -EOVERFLOW;
	}
	a->last_update_was_dirty = nospares;
	int rc = meta_write(a, nospares);
	if (rc == 0)
		a->in_sync = false;
	return rc;
}

int meta_journal_unclean(struct array *a)
{
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return -EROFS;
	atomic_store(&a->journal_clean, false);
	ulog(array_log(a), URAID_LOG_NOTICE, "%s: a write the journal cannot log whole (not "
	     "4 KiB pages, or a RAID 6 missing a member): from now until it stops, a crash while it "
	     "is written makes it resync", a->sb.set_name);
	if (a->in_sync)
		return 0;       /* clean on disk: the marking active writes 0 */
	uint64_t old_offset = a->sb.resync_offset;
	a->sb.resync_offset = 0;
	if (events_bump(a)) {
		a->sb.resync_offset = old_offset;
		return -EOVERFLOW;
	}
	/* not a clean->active transition: the clean marking does not step back */
	a->last_update_was_dirty = false;
	return meta_write(a, false);
}

int meta_mark_clean(struct array *a)
{
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return -EROFS;
	bool nospares = atomic_load(&a->degraded) == 0;
	uint64_t checkpoint = a->resync_needed ? a->resync_checkpoint : URAID_MAX_SECTOR;
	uint64_t old_offset = a->sb.resync_offset;

	a->sb.resync_offset = checkpoint;
	if (nospares && checkpoint == URAID_MAX_SECTOR && a->last_update_was_dirty &&
	    a->sb.events != 1) {
		/* roll back to the previous clean state's count (can_decrease_events) */
		a->sb.events--;
		a->last_update_was_dirty = false;
	} else if (events_bump(a)) {
		a->sb.resync_offset = old_offset;
		return -EOVERFLOW;
	} else {
		a->last_update_was_dirty = nospares;
	}
	int rc = meta_write(a, nospares);
	if (rc == 0) {
		a->in_sync = true;
	} else {
		/* not known to be clean anywhere: keep writing "active" */
		a->sb.resync_offset = old_offset;
		a->last_update_was_dirty = false;
	}
	return rc;
}

int meta_write_resync_offset(struct array *a)
{
	uint64_t want = a->resync_needed ? a->resync_checkpoint : URAID_MAX_SECTOR;

	if ((a->flags & URAID_ASSEMBLE_READONLY) || !a->in_sync || a->sb.resync_offset == want)
		return 0;
	return meta_mark_clean(a);
}
