// SPDX-License-Identifier: MIT
/*
 * uraid_array_grow: what mdadm --grow does to a running array. The plan is
 * grow_plan.c's; here it is carried out. The steps that move no data (md's
 * takeovers, the RAID 1 mirror count, linear's appended members
 * (grow_linear.c), the per-member size, the exported size) change the superblocks and the geometry under a freeze
 * (core/freeze.h): the clients' requests wait on their reactors while the
 * level is switched, and go on under the new geometry. A restripe is
 * grow-core's job (uraid_array_reshape_start).
 *
 * The superblocks after a takeover are md's (kernel 6.1 raid5.c/raid0.c/
 * raid1.c takeovers, then md_update_sb): level, layout, raid_disks,
 * chunksize and size changed, dev_roles from the new slots, events + 1.
 * Members in slots that go away become spares, as md leaves them
 * (raid_disk -1).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <uraid/create.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/jobs/sync.h"
#include "engine/md/grow.h"
#include "engine/md/grow_bitmap.h"
#include "engine/md/grow_linear.h"
#include "engine/md/grow_plan.h"
#include "engine/md/grow_ppl.h"
#include "engine/md/member_state.h"
#include "engine/md/ppl.h"

/* Steps left for uraid_array_grow_continue: plan.step[next...], waiting for
 * the job `job` (a restripe) or, when 0, for the array to be whole again (a
 * slot a takeover added, rebuilt). */
struct grow_pending {
	struct grow_plan plan;
	unsigned next;
	struct grow_step prev;          /* the geometry before step next */
	uint64_t job;
};

#define A(ua) ((struct array *)(ua))

/* The member's size now (a file or device may have grown since it was
 * opened): sectors, or 0 when it cannot be read. */
static uint64_t member_size_now(const struct member *m)
{
	struct stat st;
	uint64_t bytes = 0;

	if (m->fd < 0 || fstat(m->fd, &st))
		return 0;
	if (m->ranged)
		return m->dev_sectors;  /* a pool's partition: its table entry sets its end */
	if (S_ISREG(st.st_mode))
		bytes = (uint64_t)st.st_size;
	else if (!S_ISBLK(st.st_mode) || ioctl(m->fd, BLKGETSIZE64, &bytes))
		return 0;
	return bytes / 512;
}

/*
 * Metadata 1.0 on a member that grew under the array (md's
 * super_1_rdev_size_change for minor 0): the superblock goes to the new
 * end, (size - 16) rounded down to 4 KiB, and the data area up to md's
 * bitmap space for that size and the 8-sector bad-block log below it. Not
 * with a bitmap below the superblock (md: "minor version 0 with bitmap we
 * can't move"), nor with a PPL or a journal there (their areas would have
 * to move too). *sb_at: the superblock's place (its present one when it
 * does not move); the data room, at least the present data_size.
 */
static uint64_t room_1_0(const struct array *a, unsigned i, uint64_t *sb_at)
{
	const struct uraid_sb *own = &a->member_sb[i];
	uint64_t now = member_size_now(a->members[i]);

	*sb_at = own->super_offset;
	if (a->has_bitmap || ppl_enabled(a) || (a->sb.feature_map & URAID_FEATURE_JOURNAL) ||
	    own->data_offset || now < 64)
		return own->data_size;
	uint64_t sb = (now - 16) & ~(uint64_t)7;
	uint64_t reserve = uraid_choose_bm_space(now) + URAID_BBLOG_SECTORS;
	if (sb <= own->super_offset || sb < reserve || sb - reserve <= own->data_size)
		return own->data_size;
	/* move_sb_1_0 copies the bad-block log below the new place before the
	   superblock update writes the new superblock: that copy must not
	   land on the old superblock (a device grown by 4 KiB would put it
	   there), or a refused move or a crash before the update leaves the
	   member with no superblock at all. Such a small growth is left unused. */
	int64_t log_at = own->bblog_size ? (int64_t)sb + own->bblog_offset : (int64_t)sb;
	if (log_at < (int64_t)own->super_offset + 8)
		return own->data_size;
	*sb_at = sb;
	return sb - reserve;
}

/*
 * The room for data on member i, as md's super_1_rdev_size_change gives it:
 * up to the device's end for 1.1 and 1.2 (metadata before the data); for
 * 1.0 what room_1_0 gives (the superblock moved to a grown device's end).
 */
static uint64_t member_room(const struct array *a, unsigned i)
{
	const struct uraid_sb *own = &a->member_sb[i];
	uint64_t now = member_size_now(a->members[i]), sb_at;

	if (a->minor == 0)
		return room_1_0(a, i, &sb_at);
	if (now <= own->data_offset)
		return own->data_size;
	return now - own->data_offset > own->data_size ? now - own->data_offset : own->data_size;
}

/*
 * Metadata 1.0, member i's superblock to sb_at (a grown device's end, with
 * the data room `room`): its bad-block log copied to the same place below
 * it first, the walls moved (the old superblock's place becomes data); the
 * superblock itself is written by the caller's superblock update. Frozen,
 * meta_lock held; on failure nothing has changed.
 */
static int move_sb_1_0(struct array *a, unsigned i, uint64_t sb_at, uint64_t room, char *err,
		       size_t errlen)
{
	struct uraid_sb *own = &a->member_sb[i];
	struct member *m = a->members[i];
	struct uraid_sb was = *own;
	uint64_t was_dev = m->dev_sectors;
	alignas(4096) uint8_t log[URAID_BBLOG_SECTORS * 512];
	bool has_log = own->bblog_size && own->bblog_offset < 0 &&
		       own->bblog_size <= URAID_BBLOG_SECTORS &&
		       (uint64_t)-(int64_t)own->bblog_offset >= own->bblog_size;
	int rc = 0;

	if (has_log)
		rc = member_pread_sync(m, log, own->bblog_size * 512ull,
				       own->super_offset + (uint64_t)(int64_t)own->bblog_offset);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: cannot read its bad-block log: %s", m->path,
				  strerror(-rc));
	m->dev_sectors = member_size_now(m);
	own->super_offset = sb_at;
	own->data_size = room;
	rc = array_member_areas(a, m, own, true, err, errlen);
	if (!rc && has_log) {
		rc = member_pwrite_sync(m, log, own->bblog_size * 512ull,
					sb_at + (uint64_t)(int64_t)own->bblog_offset);
		if (rc)
			uraid_errf(err, errlen, rc, "%s: cannot write its bad-block log at the new "
				   "end: %s", m->path, strerror(-rc));
	}
	if (rc) {
		*own = was;
		m->dev_sectors = was_dev;
		(void)array_member_areas(a, m, own, true, NULL, 0);
	}
	return rc;
}

/* The running job's name, or NULL. */
static const char *running_job(struct array *a, bool *recover)
{
	struct uraid_sync_status ss;

	uraid_array_sync_status((struct uraid_array *)a, &ss);
	*recover = ss.running && ss.kind == URAID_SYNC_RECOVER;
	return ss.running ? uraid_sync_kind_name(ss.kind) : NULL;
}

/* What the planner needs, read under meta_lock. */
static void gather(struct array *a, struct grow_array *ga)
{
	memset(ga, 0, sizeof(*ga));
	ga->job = running_job(a, &ga->job_recover);
	pthread_mutex_lock(&a->meta_lock);
	ga->level = a->geom.level;
	ga->layout = a->sb.layout;
	ga->raid_disks = a->geom.raid_disks;
	ga->chunk_sectors = a->geom.chunk_sectors;
	ga->dev_sectors = a->level->info.whole_members ? a->geom.member_sectors[0] : a->sb.size;
	ga->computed_sectors = a->geom.array_sectors;
	ga->exported_sectors = array_export_sectors(a);
	ga->has_bitmap = a->has_bitmap;
	ga->bitmap_room = grow_bitmap_room(a) >= 8;   /* a 4 KiB page */
	ga->has_ppl = ppl_enabled(a);
	ga->has_journal = (a->sb.feature_map & URAID_FEATURE_JOURNAL) != 0;
	ga->reshaping = a->reshape || (a->sb.feature_map & URAID_FEATURE_RESHAPE_ACTIVE);
	ga->single_zone = true;
	ga->member_room_sectors = UINT64_MAX;
	for (uint32_t s = 0; s < a->geom.raid_disks; s++) {
		ga->slot_missing[s] = !slot_ok(a, s);
		if (a->geom.member_sectors[s] != a->geom.member_sectors[0])
			ga->single_zone = false;
	}
	for (unsigned i = 0; i < a->nmembers; i++) {
		int s = a->member_slot[i];
		if (a->member_state[i] == URAID_MEMBER_SPARE && a->member_pending_slot[i] < 0)
			ga->spares++;
		else if (a->member_state[i] == URAID_MEMBER_SPARE)
			ga->pending++;
		if (s < 0 || a->member_state[i] != URAID_MEMBER_IN_SYNC)
			continue;
		/* a copy: the member may be removed once meta_lock is let go
		   (NULL when out of memory: messages then say "a member") */
		ga->slot_path[s] = strdup(a->members[i]->path);
		uint64_t room = member_room(a, i);
		if (room < ga->member_room_sectors)
			ga->member_room_sectors = room;
	}
	if (ga->member_room_sectors == UINT64_MAX)
		ga->member_room_sectors = ga->dev_sectors;
	pthread_mutex_unlock(&a->meta_lock);
}

/* The geometry the superblock sb describes with the slots' data sizes. */
static int geom_of(const struct array *a, const struct uraid_sb *sb, const int *slot_member,
		   struct uraid_geom *g, char *err, size_t errlen)
{
	uint64_t member_sectors[URAID_MAX_MEMBERS];
	uint64_t any = 0;

	for (uint32_t s = 0; s < sb->raid_disks; s++) {
		member_sectors[s] = slot_member[s] >= 0 ? a->member_sb[slot_member[s]].data_size : 0;
		if (member_sectors[s])
			any = member_sectors[s];
	}
	for (uint32_t s = 0; s < sb->raid_disks; s++)
		if (!member_sectors[s])
			member_sectors[s] = any;        /* a missing slot: as the others */
	struct uraid_geom_params gp = {
		.level = sb->level, .layout = sb->layout, .raid_disks = sb->raid_disks,
		.chunk_sectors = sb->chunksize, .dev_sectors = sb->size,
		.member_sectors = member_sectors,
		.raid0_layout_flag = sb->feature_map & URAID_FEATURE_RAID0_LAYOUT,
	};
	char why[200];
	if (uraid_geom_init(g, &gp, why, sizeof(why)))
		return uraid_errf(err, errlen, -EINVAL, "the new geometry is not valid: %s", why);
	return 0;
}

/*
 * The new slot of each old one (-1: the slot goes), for a step to s from
 * the geometry in place: the same slot, but RAID 10 -> RAID 0 keeps the
 * member left of each pair.
 */
static void slot_map(const struct array *a, const struct grow_step *s, int *map)
{
	for (uint32_t o = 0; o < a->geom.raid_disks; o++)
		map[o] = o < s->raid_disks ? (int)o : -1;
	if (a->geom.level == URAID_LEVEL_10 && s->level == URAID_LEVEL_0) {
		for (uint32_t o = 0; o < a->geom.raid_disks; o++)
			map[o] = slot_ok(a, o) ? (int)(o / 2) : -1;
	}
}

/*
 * Frozen, meta_lock held: the superblock fields and slots of step s, the
 * level switched, the superblocks written (events + 1) when `write` (not:
 * a takeover whose restripe starts under the same freeze, which writes
 * both). On failure nothing has changed.
 */
static int apply_geometry(struct array *a, const struct grow_step *s, bool write, char *err,
			  size_t errlen)
{
	int map[URAID_MAX_MEMBERS], slot_member[URAID_MAX_MEMBERS];
	struct uraid_sb old_sb = a->sb;
	struct uraid_geom *g = malloc(sizeof(*g));
	int rc;

	if (!g)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	slot_map(a, s, map);
	for (uint32_t n = 0; n < s->raid_disks; n++)
		slot_member[n] = -1;
	for (unsigned i = 0; i < a->nmembers; i++) {
		int o = a->member_slot[i];
		if (o >= 0 && a->member_state[i] == URAID_MEMBER_IN_SYNC && map[o] >= 0)
			slot_member[map[o]] = (int)i;
	}
	if (s->level == URAID_LEVEL_0)
		for (uint32_t n = 0; n < s->raid_disks; n++)
			if (slot_member[n] < 0) {
				free(g);
				return uraid_errf(err, errlen, -EBUSY, "RAID 0 slot %u would have no "
						  "member (the array changed since the plan): grow "
						  "again", n);
			}
	/* md's raid0_takeover_raid45 sets each member's size to the array's
	   per-member size (dev_sectors), which super_1_sync writes as
	   data_size: RAID 0 then uses no more of a larger member than RAID 4/5
	   did (no stale bytes exported, one zone) */
	uint64_t old_data_size[URAID_MAX_MEMBERS];
	for (unsigned i = 0; i < a->nmembers; i++)
		old_data_size[i] = a->member_sb[i].data_size;
	if (s->level == URAID_LEVEL_0 &&
	    (old_sb.level == URAID_LEVEL_4 || old_sb.level == URAID_LEVEL_5)) {
		uint64_t per = old_sb.size - old_sb.size % s->chunk_sectors;
		for (uint32_t n = 0; n < s->raid_disks; n++)
			a->member_sb[slot_member[n]].data_size = per;
	}
	a->sb.level = s->level;
	a->sb.layout = s->layout;
	a->sb.raid_disks = s->raid_disks;
	a->sb.chunksize = s->chunk_sectors;
	if (!uraid_level_info(s->level)->whole_members)
		a->sb.size = s->dev_sectors;
	/* a takeover to or from RAID 0 leaves one zone: no zone layout to record */
	bool old_needed = a->resync_needed;
	uint64_t old_checkpoint = a->resync_checkpoint;
	if (s->level == URAID_LEVEL_0 || old_sb.level == URAID_LEVEL_0) {
		a->sb.feature_map &= ~URAID_FEATURE_RAID0_LAYOUT;
		/* and no resync owed: md sets recovery_cp = MaxSector in
		   raid0_takeover_raid45/raid10 and raid45_takeover_raid0 */
		a->resync_needed = false;
		a->resync_checkpoint = UINT64_MAX;
		if (a->in_sync)
			a->sb.resync_offset = UINT64_MAX;
	}
	rc = geom_of(a, &a->sb, slot_member, g, err, errlen);
	if (!rc)
		rc = array_switch_geometry(a, g, err, errlen);
	free(g);
	if (rc) {
		a->sb = old_sb;
		a->resync_needed = old_needed;
		a->resync_checkpoint = old_checkpoint;
		for (unsigned i = 0; i < a->nmembers; i++)
			a->member_sb[i].data_size = old_data_size[i];
		return rc;
	}
	/* the members follow their slots; those whose slot went are spares */
	struct array_slot old_slot[URAID_MAX_MEMBERS];
	memcpy(old_slot, a->slot, sizeof(old_slot));
	for (uint32_t n = 0; n < URAID_MAX_MEMBERS; n++) {
		atomic_store(&a->slot[n].m, NULL);
		atomic_store(&a->slot[n].state, URAID_MEMBER_MISSING);
		atomic_store(&a->slot[n].repl, NULL);
		atomic_store(&a->slot[n].rebuilt, 0);
		slot_changed(a, n);     /* each slot's content moves */
	}
	for (uint32_t o = 0; o < old_sb.raid_disks; o++) {
		if (map[o] < 0)
			continue;
		struct array_slot *ns = &a->slot[map[o]];
		atomic_store(&ns->m, atomic_load(&old_slot[o].m));
		atomic_store(&ns->state, atomic_load(&old_slot[o].state));
		ns->dev_number = old_slot[o].dev_number;
	}
	for (unsigned i = 0; i < a->nmembers; i++) {
		int o = a->member_slot[i];
		if (o < 0) {
			/* a spare bound for a slot: the slot's new number, or none */
			int p = a->member_pending_slot[i];
			if (p >= 0)
				a->member_pending_slot[i] = (uint32_t)p < old_sb.raid_disks ? map[p]
							    : -1;
			continue;
		}
		if (map[o] >= 0) {
			a->member_slot[i] = map[o];
		} else {
			a->member_slot[i] = -1;
			if (a->member_state[i] == URAID_MEMBER_IN_SYNC)
				a->member_state[i] = URAID_MEMBER_SPARE;
		}
	}
	meta_recount_degraded(a);
	if (!write)
		return 0;
	rc = meta_record_change(a);
	if (rc)
		uraid_errf(err, errlen, rc, "the geometry changed but the superblocks could not be "
			   "written: %s", strerror(-rc));
	return rc;
}

/*
 * The per-member size (md's update_size): members whose data area grew
 * under them get it recorded, the walls follow, and a growth is resynced
 * from the old end as md does (resync_offset = the old size).
 */
static int apply_size(struct array *a, const struct grow_step *s, char *err, size_t errlen)
{
	/* where a resync counts (RAID 10: array sectors, md's recovery_cp and
	   bitmap sync size over raid10_size; the others: member sectors) */
	uint64_t old = a->sb.size, new_sync = s->dev_sectors;
	uint64_t room[URAID_MAX_MEMBERS];

	if (a->level->info.sync_in_array_sectors) {
		struct uraid_geom *g = malloc(sizeof(*g));
		struct uraid_geom_params gp = {
			.level = a->geom.level, .layout = a->sb.layout,
			.raid_disks = a->geom.raid_disks, .chunk_sectors = a->geom.chunk_sectors,
			.dev_sectors = s->dev_sectors,
		};
		char why[200];
		int grc = !g ? -ENOMEM : uraid_geom_init(g, &gp, why, sizeof(why)) ? -EINVAL : 0;
		if (!grc) {
			old = a->geom.array_sectors;
			new_sync = g->array_sectors;
		}
		free(g);
		if (grc)
			return uraid_errf(err, errlen, grc, "the new size's geometry: %s",
					  grc == -ENOMEM ? "out of memory" : why);
	}

	/* every member checked before any is changed */
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (a->member_slot[i] < 0 || a->member_state[i] != URAID_MEMBER_IN_SYNC)
			continue;
		room[i] = member_room(a, i);
		if (room[i] < s->dev_sectors)
			return uraid_errf(err, errlen, -ENOSPC, "%s: %" PRIu64 " KiB of data room, "
					  "%" PRIu64 " needed", a->members[i]->path, room[i] / 2,
					  s->dev_sectors / 2);
	}
	/* the bitmap first (md_bitmap_resize before update_size's superblock
	   write): its header may say the new range before the superblocks do,
	   never the reverse; md and uraid read either */
	struct grow_bitmap_undo undo;
	int rc = grow_bitmap_resize(a, new_sync, &undo, err, errlen);
	if (rc)
		return rc;
	struct uraid_sb old_sb = a->sb;
	uint64_t old_data_size[URAID_MAX_MEMBERS], old_dev_sectors[URAID_MAX_MEMBERS];
	uint64_t old_super[URAID_MAX_MEMBERS];
	bool old_needed = a->resync_needed;
	uint64_t old_checkpoint = a->resync_checkpoint;
	for (unsigned i = 0; i < a->nmembers; i++) {
		old_data_size[i] = a->member_sb[i].data_size;
		old_super[i] = a->member_sb[i].super_offset;
		old_dev_sectors[i] = a->members[i] ? a->members[i]->dev_sectors : 0;
	}
	for (unsigned i = 0; !rc && i < a->nmembers; i++) {
		if (a->member_slot[i] < 0 || a->member_state[i] != URAID_MEMBER_IN_SYNC ||
		    a->member_sb[i].data_size >= s->dev_sectors)
			continue;
		uint64_t sb_at = a->member_sb[i].super_offset;
		if (a->minor == 0)
			(void)room_1_0(a, i, &sb_at);
		if (sb_at != a->member_sb[i].super_offset) {
			rc = move_sb_1_0(a, i, sb_at, room[i], err, errlen);
		} else {
			a->members[i]->dev_sectors = member_size_now(a->members[i]);
			a->member_sb[i].data_size = room[i];
		}
	}
	/* the new range to resync goes in the same superblock write as the
	   new size (md's single md_update_sb): a crash between the two would
	   leave a clean superblock whose new range was never resynced */
	if (new_sync > old) {
		if (!a->resync_needed || a->resync_checkpoint > old) {
			a->resync_needed = true;
			a->resync_checkpoint = old;
		}
		a->sb.resync_offset = a->resync_checkpoint;
	}
	if (!rc)
		rc = apply_geometry(a, s, true, err, errlen);
	if (rc && a->sb.size != s->dev_sectors) {
		/* refused before the switch (apply_geometry put its own fields back);
		   a 1.0 superblock moved is back at its place, walls too (the
		   copy of its bad-block log at the new end is unused) */
		a->sb = old_sb;
		a->resync_needed = old_needed;
		a->resync_checkpoint = old_checkpoint;
		for (unsigned i = 0; i < a->nmembers; i++) {
			bool moved = a->member_sb[i].super_offset != old_super[i];
			a->member_sb[i].data_size = old_data_size[i];
			a->member_sb[i].super_offset = old_super[i];
			if (a->members[i])
				a->members[i]->dev_sectors = old_dev_sectors[i];
			if (moved)
				(void)array_member_areas(a, a->members[i], &a->member_sb[i], true,
							 NULL, 0);
		}
		grow_bitmap_undo(a, &undo);
	}
	grow_bitmap_undo_done(&undo);
	if (rc)
		return rc;
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (!a->members[i] || a->members[i]->fd < 0 || a->member_slot[i] < 0)
			continue;
		rc = array_member_areas(a, a->members[i], &a->member_sb[i], true, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

/* The checks and the change of step s, the array frozen by the caller
 * (apply_frozen's body); `write`: the superblocks too (apply_geometry). */
static int apply_held(struct array *a, const struct grow_step *s, const struct grow_step *expect,
		      bool write, char *err, size_t errlen)
{
	int rc = 0;
	/* the plan was made before the freeze: a job started meanwhile (md's
	   level_store refuses under a sync thread too), or a level or member
	   count no longer the one planned, and the step is not done */
	bool recover;
	const char *job = running_job(a, &recover);
	pthread_mutex_lock(&a->meta_lock);
	/* md changes the PPL under a resync or rebuild (paused by the freeze);
	   grow_ppl_apply refuses a reshape itself */
	if (job && s->kind != GROW_STEP_PPL)
		rc = uraid_errf(err, errlen, -EBUSY, "a %s started while the grow was being "
				"planned: grow again when it ends", job);
	else if (expect && (a->geom.level != expect->level ||
			    a->geom.raid_disks != expect->raid_disks))
		rc = uraid_errf(err, errlen, -EBUSY, "the array changed while the grow was being "
				"planned (now RAID %d with %u slots): grow again", a->geom.level,
				a->geom.raid_disks);
	else if (s->kind == GROW_STEP_SIZE)
		rc = apply_size(a, s, err, errlen);
	else if (s->kind == GROW_STEP_BITMAP)
		rc = grow_bitmap_apply(a, s->bitmap, err, errlen);
	else if (s->kind == GROW_STEP_PPL)
		rc = grow_ppl_apply(a, s->ppl, err, errlen);
	else if (s->kind == GROW_STEP_APPEND)
		rc = grow_linear_append(a, s->raid_disks, err, errlen);
	else
		rc = apply_geometry(a, s, write, err, errlen);
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

/* After a step applied under a freeze, the freeze let go. */
static void applied(struct array *a, const struct grow_step *s)
{
	md_notify_change(a);
	/* an array opened at a level without redundancy (RAID 0) has no
	   automatic rebuild registered: a takeover to one that has needs it, or
	   the new slot stays missing (registering twice is a no-op) */
	if (s->kind == GROW_STEP_TAKEOVER)
		sync_attach_pending(a);
}

/* One step that moves no data, frozen; expect: the geometry the plan had
 * before it (NULL: not checked). */
static int apply_frozen(struct array *a, const struct grow_step *s, const struct grow_step *expect,
			char *err, size_t errlen)
{
	int rc = array_freeze(a);
	if (rc)
		return uraid_errf(err, errlen, rc, "cannot hold the array's requests: %s",
				  strerror(-rc));
	rc = apply_held(a, s, expect, true, err, errlen);
	array_thaw(a);
	if (!rc)
		applied(a, s);
	return rc;
}

/*
 * A takeover whose restripe starts at once (RAID 5 -> 6 md's way, RAID 0
 * -> 4 of a RAID 0 growth): both under one freeze, and one superblock
 * update with the takeover's fields and the reshape's (level 6, layout
 * 18, new_layout 2, reshape active: what md's superblocks say once its
 * restripe runs). md writes the takeover first, and a crash before its
 * restripe starts leaves a RAID 6 in the -6 layout missing Q, which md
 * then rebuilds onto the spare, the layout asked for forgotten; here a
 * kill -9 leaves either the array as it was or the reshape, which goes on
 * at the restart. No write reaches the members in between: the freeze
 * holds them all. 0, or -errno with the takeover undone in memory when
 * refused before the superblocks (*written false: nothing on disk
 * changed; true: the reshape is on disk, only its job failed to start,
 * which the automatic start retries).
 */
static int takeover_restripe(struct array *a, const struct grow_step *t,
			     const struct grow_step *r, const struct grow_step *expect,
			     bool *written, char *err, size_t errlen)
{
	*written = false;
	int rc = array_freeze(a);
	if (rc)
		return uraid_errf(err, errlen, rc, "cannot hold the array's requests: %s",
				  strerror(-rc));
	/* no automatic job from the takeover on (the new slot missing, a spare
	   there): a rebuild started before the restripe would write the bare
	   takeover to the disks (seen: test_grow_r6 2b, layout 18 without the
	   reshape bit). Set under the start lock: a start under way ends first */
	bool keep_held = false;
	pthread_mutex_lock(&a->sync_start_lock);
	atomic_store(&a->starts_held, true);
	pthread_mutex_unlock(&a->sync_start_lock);
	/* the geometry and fields to go back to: the step before (as
	   undo_takeover does), the superblock and data sizes as they were */
	struct grow_step back = *expect;
	uint64_t data_size[URAID_MAX_MEMBERS];
	pthread_mutex_lock(&a->meta_lock);
	struct uraid_sb sb_before = a->sb;
	bool needed_before = a->resync_needed;
	uint64_t checkpoint_before = a->resync_checkpoint;
	for (unsigned i = 0; i < a->nmembers; i++)
		data_size[i] = a->member_sb[i].data_size;
	pthread_mutex_unlock(&a->meta_lock);
	rc = apply_held(a, t, expect, false, err, errlen);
	if (!rc) {
		struct uraid_reshape rs = {
			.new_level = r->level, .new_layout = r->layout,
			.new_chunk_sectors = r->chunk_sectors, .new_raid_disks = r->raid_disks,
		};
		rc = reshape_start_frozen(a, &rs, err, errlen);
		if (rc) {
			/* back to the geometry the disks still have (nothing written) */
			char undo_err[200];
			back.kind = GROW_STEP_TAKEOVER;
			pthread_mutex_lock(&a->meta_lock);
			int urc = apply_geometry(a, &back, false, undo_err, sizeof(undo_err));
			if (!urc) {
				a->sb = sb_before;
				a->resync_needed = needed_before;
				a->resync_checkpoint = checkpoint_before;
				for (unsigned i = 0; i < a->nmembers; i++)
					a->member_sb[i].data_size = data_size[i];
			}
			pthread_mutex_unlock(&a->meta_lock);
			if (urc) {
				/* memory holds a bare takeover the disks do not: keep
				   every automatic job held (a rebuild would write it
				   out) until the array is restarted from the disks */
				keep_held = true;
				size_t n = strlen(err);
				snprintf(err + n, errlen > n ? errlen - n : 0, "; the takeover could not "
					 "be undone in memory (%s): no rebuild or resync will start; "
					 "restart the array", undo_err);
			}
		}
	}
	if (!keep_held)
		atomic_store(&a->starts_held, false);
	array_thaw(a);
	if (rc)
		return rc;
	*written = true;
	applied(a, t);
	return reshape_start_job(a, err, errlen);
}

/* RAID 10 -> RAID 0 on a whole array: fail and remove the right member of
 * each pair. mdadm's remove_disks_for_takeover keeps the first member of a
 * pair in its sysfs listing, whose order is kernfs's (a hash of "dev-NAME"):
 * measured in the referee guest, it kept vda, vdc, vde, vdg over vdb, vdd,
 * vdf, vdh whichever slot they held, but vdj, vdl, vdn over vdi, vdk, vdm.
 * So an array created in name order from vda keeps its first slot of each
 * pair; uraid knows no kernel names and always keeps the first slot. */
static int drop_copies(struct array *a, char *err, size_t errlen)
{
	for (uint32_t s = 1; s < a->geom.raid_disks; s += 2) {
		int idx = -1;
		pthread_mutex_lock(&a->meta_lock);
		for (unsigned i = 0; i < a->nmembers; i++)
			if (a->member_slot[i] == (int)s && a->member_state[i] == URAID_MEMBER_IN_SYNC)
				idx = (int)i;
		pthread_mutex_unlock(&a->meta_lock);
		if (idx < 0)
			continue;
		int rc = uraid_array_fail_member((struct uraid_array *)a, (unsigned)idx, 0, err,
						 errlen);
		if (!rc)
			rc = uraid_array_remove_member((struct uraid_array *)a, (unsigned)idx, err,
						       errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int apply_step(struct array *a, const struct grow_step *s, const struct grow_step *prev,
		      char *err, size_t errlen)
{
	switch (s->kind) {
	case GROW_STEP_ARRAY_SIZE:
		atomic_store(&a->export_sectors, s->sectors);
		md_notify_change(a);
		return 0;
	case GROW_STEP_SIZE:
	case GROW_STEP_TAKEOVER:
	case GROW_STEP_MIRRORS:
	case GROW_STEP_APPEND:
		return apply_frozen(a, s, prev, err, errlen);
	case GROW_STEP_DROP_COPIES:
		return drop_copies(a, err, errlen);
	case GROW_STEP_BITMAP:
	case GROW_STEP_PPL:
		return apply_frozen(a, s, prev, err, errlen);
	case GROW_STEP_RESTRIPE: {
		struct uraid_reshape rs = {
			.new_level = s->level, .new_layout = s->layout,
			.new_chunk_sectors = s->chunk_sectors, .new_raid_disks = s->raid_disks,
		};
		return uraid_array_reshape_start((struct uraid_array *)a, &rs, err, errlen);
	}
	}
	return -EINVAL;
}

/* line and a newline at done + *used, as far as it goes */
static void append(char *done, size_t donelen, size_t *used, const char *line)
{
	if (!done || *used + 1 >= donelen)
		return;
	int n = snprintf(done + *used, donelen - *used, "%s\n", line);
	if (n > 0)
		*used += (size_t)n < donelen - *used ? (size_t)n : donelen - *used - 1;
}

/*
 * A restripe refused right after the takeover that was to lead to it: the
 * takeover is undone (the array back at the level it had, its added slot
 * dropped while still empty), so that a refused grow leaves the geometry
 * as it found it. The refusal's text stays in err, told that it was undone.
 */
static void undo_takeover(struct array *a, const struct grow_step *takeover,
			  const struct grow_step *before, struct grow_step first,
			  const struct uraid_sb *sb_before, char *err, size_t errlen)
{
	struct grow_step back = before ? *before : first;
	char why[400], undo_err[200];

	back.kind = GROW_STEP_TAKEOVER;
	snprintf(why, sizeof(why), "%s", err);
	/* the slot the takeover added is still empty: no rebuild started on it
	   (uraid_array_grow held the automatic ones back) */
	int rc = apply_frozen(a, &back, takeover, undo_err, sizeof(undo_err));
	if (!rc) {
		/* the fields the two takeovers rounded or dropped, as they were
		   (RAID 0's size unrounded, its zone layout flag, its layout) */
		pthread_mutex_lock(&a->meta_lock);
		a->sb.feature_map = (a->sb.feature_map & ~URAID_FEATURE_RAID0_LAYOUT) |
				    (sb_before->feature_map & URAID_FEATURE_RAID0_LAYOUT);
		if (uraid_level_info(a->sb.level)->whole_members) {
			a->sb.size = sb_before->size;
			a->sb.layout = sb_before->layout;
		}
		rc = meta_write_all(a);
		pthread_mutex_unlock(&a->meta_lock);
	}
	if (!rc)
		snprintf(err, errlen, "%s (the takeover to RAID %d was undone: the geometry is as "
			 "it was, the superblocks rewritten)", why, takeover->level);
	else
		snprintf(err, errlen, "%s; the takeover to RAID %d could not be undone: %s", why,
			 takeover->level, undo_err);
}

/*
 * plan's steps from `from` on; the first waiting one (not `from` itself
 * when its wait is over) and those after it are kept for
 * uraid_array_grow_continue, and listed as "then ..." lines.
 */
static int run_steps(struct array *a, const struct grow_plan *plan, unsigned from,
		     struct grow_step prev, char *done, size_t donelen, char *err, size_t errlen)
{
	size_t used = done ? strlen(done) : 0;
	uint64_t last_job = 0;
	const struct grow_step first = prev;
	struct uraid_sb sb_before = a->sb;     /* before the last takeover (for its undo) */

	for (unsigned i = from; i < plan->nsteps; i++) {
		const struct grow_step *s = &plan->step[i];
		char line[300], then[340];
		if (s->waits && i > from) {
			struct grow_pending *p = calloc(1, sizeof(*p));
			if (!p)
				return uraid_errf(err, errlen, -ENOMEM, "out of memory");
			p->plan = *plan;
			p->next = i;
			p->prev = prev;
			p->job = prev.kind == GROW_STEP_RESTRIPE ? last_job : 0;
			pthread_mutex_lock(&a->meta_lock);
			free(a->grow_pending);
			a->grow_pending = p;
			pthread_mutex_unlock(&a->meta_lock);
			struct grow_step q = prev;
			for (unsigned k = i; k < plan->nsteps; k++) {
				grow_step_describe(&plan->step[k], &q, line, sizeof(line));
				snprintf(then, sizeof(then), "then, when %s: %s", k > i ? "that is done"
					 : p->job ? "the restripe ends" : "the new slot is rebuilt", line);
				append(done, donelen, &used, then);
				q = plan->step[k];
			}
			return 0;
		}
		if (s->kind == GROW_STEP_TAKEOVER) {
			pthread_mutex_lock(&a->meta_lock);
			sb_before = a->sb;
			pthread_mutex_unlock(&a->meta_lock);
		}
		/* a takeover and the restripe that starts right after it: one
		   freeze, one superblock update (takeover_restripe) */
		const struct grow_step *next = i + 1 < plan->nsteps ? &plan->step[i + 1] : NULL;
		bool joined = s->kind == GROW_STEP_TAKEOVER && next &&
			      next->kind == GROW_STEP_RESTRIPE && !next->waits;
		int rc;
		bool written = false;
		if (joined)
			rc = takeover_restripe(a, s, next, &prev, &written, err, errlen);
		else
			rc = apply_step(a, s, &prev, err, errlen);
		if (rc && !joined && s->kind == GROW_STEP_RESTRIPE && i > from &&
		    plan->step[i - 1].kind == GROW_STEP_TAKEOVER)
			undo_takeover(a, &plan->step[i - 1], i > 1 ? &plan->step[i - 2] : NULL,
				      first, &sb_before, err, errlen);
		if (rc && joined && !written) {
			size_t n = strlen(err);
			snprintf(err + n, errlen > n ? errlen - n : 0, " (the takeover to RAID %d "
				 "with it was not made: the array is as it was)", s->level);
		}
		if (rc && joined && written) {
			/* on disk and in memory: the automatic start takes it up */
			ulog(array_log(a), URAID_LOG_WARNING, "%s: grow: the restripe's job did not "
			     "start (%s): it is started again automatically", a->sb.set_name, err);
			rc = 0;
		}
		if (rc) {
			ulog(array_log(a), URAID_LOG_ERR, "%s: grow: %s", a->sb.set_name, err);
			return rc;
		}
		grow_step_describe(s, &prev, line, sizeof(line));
		if (joined) {
			/* the takeover's line, then the restripe's as its own step */
			ulog(array_log(a), URAID_LOG_INFO, "%s: grow: %s", a->sb.set_name, line);
			append(done, donelen, &used, line);
			prev = *s;
			s = next;
			i++;
			grow_step_describe(s, &prev, line, sizeof(line));
		}
		const char *shown = line;
		if (s->kind == GROW_STEP_RESTRIPE) {
			struct uraid_sync_status ss;
			uraid_array_sync_status((struct uraid_array *)a, &ss);
			last_job = ss.job;
			snprintf(then, sizeof(then), "%s: started, see uraid status", line);
			shown = then;
		}
		ulog(array_log(a), URAID_LOG_INFO, "%s: grow: %s", a->sb.set_name, shown);
		append(done, donelen, &used, shown);
		prev = *s;
	}
	return 0;
}

/*
 * run_steps with the automatic job starts held all along: between two steps
 * (or between the plan and its freeze) the tick would otherwise start a
 * rebuild onto a spare under a level about to change, or into a slot a
 * restripe is to fill. Given back afterwards (a step that waits for a
 * rebuild needs them).
 */
static int run_steps_held(struct array *a, const struct grow_plan *plan, unsigned from,
			  struct grow_step prev, char *done, size_t donelen, char *err,
			  size_t errlen)
{
	atomic_store(&a->sync_retry_ns, UINT64_MAX);
	int rc = run_steps(a, plan, from, prev, done, donelen, err, errlen);
	atomic_store(&a->sync_retry_ns, 0);
	return rc;
}

void grow_pending_drop(struct array *a)
{
	struct grow_pending *p = a->grow_pending;

	if (!p)
		return;
	a->grow_pending = NULL;
	for (unsigned k = p->next; k < p->plan.nsteps; k++) {
		const struct grow_step *s = &p->plan.step[k];
		char lay[32] = "", cmd[320];
		if (s->kind == GROW_STEP_TAKEOVER) {
			snprintf(cmd, sizeof(cmd), "uraid grow %s --level=%d", a->sb.set_name, s->level);
		} else if (s->kind == GROW_STEP_RESTRIPE) {
			const char *n = uraid_layout_name(s->level, s->layout, lay, sizeof(lay));
			snprintf(cmd, sizeof(cmd), "uraid grow %s --raid-devices=%u --chunk=%uK%s%s",
				 a->sb.set_name, s->raid_disks, s->chunk_sectors / 2,
				 n ? " --layout=" : "", n ? n : "");
		} else {
			char line[256];
			grow_step_describe(s, k > p->next ? &p->plan.step[k - 1] : &p->prev, line,
					   sizeof(line));
			snprintf(cmd, sizeof(cmd), "(%s)", line);
		}
		ulog(array_log(a), URAID_LOG_WARNING, "%s: grow left unfinished (the array closed "
		     "with step %u of %u waiting); to finish it when the array is whole and no "
		     "job runs: %s", a->sb.set_name, k + 1, p->plan.nsteps, cmd);
	}
	free(p);
}

bool uraid_array_grow_pending(struct uraid_array *ua)
{
	struct array *a = A(ua);

	pthread_mutex_lock(&a->meta_lock);
	bool p = a->grow_pending != NULL;
	pthread_mutex_unlock(&a->meta_lock);
	return p;
}

int uraid_array_grow_continue(struct uraid_array *ua, char *done, size_t donelen, char *err,
			      size_t errlen)
{
	struct array *a = A(ua);
	struct uraid_sync_status ss;

	if (done && donelen)
		done[0] = 0;
	pthread_mutex_lock(&a->meta_lock);
	struct grow_pending *p = a->grow_pending;
	pthread_mutex_unlock(&a->meta_lock);
	if (!p)
		return 0;
	uraid_array_sync_status(ua, &ss);
	if (ss.running)
		return 0;
	if (p->job) {
		struct uraid_sync_status js;
		int rc = uraid_array_sync_job(ua, p->job, &js);
		if (rc || js.result) {
			pthread_mutex_lock(&a->meta_lock);
			a->grow_pending = NULL;
			pthread_mutex_unlock(&a->meta_lock);
			free(p);
			return uraid_errf(err, errlen, rc ? rc : js.result, "the restripe did not "
					  "end well (%s): the grow's next steps are not done",
					  rc ? "its outcome is no longer known" : strerror(-js.result));
		}
	} else if (atomic_load(&a->degraded)) {
		return 0;
	}
	pthread_mutex_lock(&a->meta_lock);
	a->grow_pending = NULL;
	pthread_mutex_unlock(&a->meta_lock);
	int rc = run_steps_held(a, &p->plan, p->next, p->prev, done, donelen, err, errlen);
	free(p);
	return rc ? rc : 1;
}

int uraid_array_grow(struct uraid_array *ua, const struct uraid_grow *r, char *done,
		     size_t donelen, char *err, size_t errlen)
{
	struct array *a = A(ua);
	struct grow_plan plan;
	int rc;

	if (done && donelen)
		done[0] = 0;
	if ((r->chunk_bytes % 512) || (r->size_bytes != URAID_GROW_MAX && r->size_bytes % 1024) ||
	    (r->array_bytes != URAID_GROW_MAX && r->array_bytes % 1024))
		return uraid_errf(err, errlen, -EINVAL, "sizes are whole KiB");
	if (array_has_stacked_member(a))
		return uraid_errf(err, errlen, -EINVAL, "%s is the RAID 0 of a nested array (its "
				  "members are arrays): uraid does not grow, reshape or take it "
				  "over; nothing changed", a->sb.set_name);
	if (uraid_array_grow_pending(ua))
		return uraid_errf(err, errlen, -EBUSY, "an earlier grow still has steps waiting "
				  "(uraid status shows the job they wait for): grow again when "
				  "they are done");
	struct grow_request gr = {
		.raid_disks = r->raid_disks, .level_set = r->level_set, .level = r->level,
		.chunk_sectors = r->chunk_bytes / 512, .layout_set = r->layout_set,
		.layout = r->layout,
		.size_sectors = r->size_bytes == URAID_GROW_MAX ? GROW_SIZE_MAX : r->size_bytes / 512,
		.array_sectors = r->array_bytes == URAID_GROW_MAX ? GROW_SIZE_MAX
				 : r->array_bytes / 512,
		.bitmap = r->bitmap > 0 ? GROW_BITMAP_INTERNAL
			  : r->bitmap < 0 ? GROW_BITMAP_NONE : GROW_BITMAP_KEEP,
		.policy = r->policy == URAID_GROW_POLICY_RESYNC ? GROW_POLICY_RESYNC
			  : r->policy == URAID_GROW_POLICY_PPL ? GROW_POLICY_PPL
			  : r->policy == URAID_GROW_POLICY_BITMAP ? GROW_POLICY_BITMAP
			  : GROW_POLICY_KEEP,
		.adding = r->adding,
		.append = r->append,
	};
	struct grow_array *ga = malloc(sizeof(*ga));
	if (!ga)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	gather(a, ga);
	rc = grow_plan_build(ga, &gr, &plan, err, errlen);
	struct grow_step prev;
	grow_step_from_array(ga, &prev);
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++)
		free((char *)ga->slot_path[s]);
	free(ga);
	if (rc)
		return rc;
	if (r->plan_only) {
		size_t used = 0;
		for (unsigned i = 0; i < plan.nsteps; i++) {
			char line[256];
			grow_step_describe(&plan.step[i], &prev, line, sizeof(line));
			append(done, donelen, &used, line);
			prev = plan.step[i];
		}
		return 0;
	}
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return uraid_errf(err, errlen, -EROFS, "the array is read-only");
	/* a takeover that leaves a slot missing before a restripe: no automatic
	   rebuild may take the spares the restripe is to use (mdadm's RAID 0
	   growth keeps the parity slot missing all along) */
	uint64_t export_before = atomic_load(&a->export_sectors);
	rc = run_steps_held(a, &plan, 0, prev, done, donelen, err, errlen);
	if (rc && atomic_load(&a->export_sectors) != export_before) {
		/* the exported size was set for a step that then failed: back */
		atomic_store(&a->export_sectors, export_before);
		size_t n = strlen(err);
		if (n + 1 < errlen)
			snprintf(err + n, errlen - n, " (the exported size is back as it was)");
	}
	return rc;
}
