// SPDX-License-Identifier: MIT
/*
 * The write journal at assembly: the replay (journal_replay.c) over the
 * assembled members with synchronous I/O, then journal_tail recorded in the
 * superblocks before any new write, as md's r5l_recovery_log ends with
 * r5l_write_super and a superblock update; then the run-time hooks
 * (level/raid5_journal.c) from where the replay left the log.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/full_io.h"
#include "engine/core/array.h"
#include "engine/level/raid5_journal.h"
#include "engine/md/journal.h"

struct jctx {
	struct array *a;
	struct member *journal;
};

/*
 * Data-area I/O before the array serves (no reactor yet): through the
 * member's wall like the data path, 4 KiB buffers 4 KiB aligned, so O_DIRECT
 * holds whenever data_offset is on the device's alignment.
 */
static int data_rw(struct member *m, bool write, void *buf, size_t len, uint64_t sector)
{
	uint64_t off = (m->data_offset + sector) * 512;

	if (!member_in_data(m, sector, len / 512))
		return member_wall(m, write ? "journal replay write" : "journal replay read", true,
				   sector, len / 512);
	if (m->direct && (off % m->dio_align || len % m->dio_align))
		return -EINVAL;
	return write ? uraid_pwrite_full(m->fd, buf, len, (off_t)off)
		     : uraid_pread_full(m->fd, buf, len, (off_t)off);
}

static int j_log_read(void *c, uint64_t sector, void *buf, size_t len)
{
	struct jctx *j = c;
	return data_rw(j->journal, false, buf, len, sector);
}

static int j_log_write(void *c, uint64_t sector, const void *buf, size_t len)
{
	struct jctx *j = c;
	return data_rw(j->journal, true, (void *)buf, len, sector);
}

static int sync_fd(struct member *m)
{
	return fdatasync(m->fd) < 0 ? -errno : 0;
}

static int j_log_flush(void *c)
{
	struct jctx *j = c;
	return sync_fd(j->journal);
}

static int j_member_flush(void *c)
{
	struct jctx *j = c;
	for (unsigned s = 0; s < j->a->geom.raid_disks; s++) {
		struct member *m = j->a->slot[s].m;
		int rc = m && j->a->slot[s].state == URAID_MEMBER_IN_SYNC ? sync_fd(m) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static struct member *slot_member(struct jctx *j, unsigned slot)
{
	if (slot >= j->a->geom.raid_disks || j->a->slot[slot].state != URAID_MEMBER_IN_SYNC)
		return NULL;
	return j->a->slot[slot].m;
}

static int j_member_read(void *c, unsigned slot, uint64_t sector, void *buf, size_t len)
{
	struct jctx *j = c;
	struct member *m = slot_member(j, slot);
	if (!m)
		return -ENODEV;
	return data_rw(m, false, buf, len, sector);
}

static int j_member_write(void *c, unsigned slot, uint64_t sector, const void *buf, size_t len)
{
	struct jctx *j = c;
	struct member *m = slot_member(j, slot);
	if (!m)
		return -ENODEV;
	return data_rw(m, true, (void *)buf, len, sector);
}

static void j_note(void *c, const char *line)
{
	struct jctx *j = c;
	ulog(array_log(j->a), URAID_LOG_NOTICE, "%s: %s", j->a->sb.set_name, line);
}

/*
 * The replay wrote only to in-sync slots. A member partway through its
 * rebuild (a spare with a slot and recovery_offset, attached later by
 * md_attach_pending, or a replacement) holds the old content of the rows
 * replayed below its offset: its recovery_offset goes down to the lowest
 * row written, so the rebuild copies them again (md writes the replayed
 * rows to such members instead; same result). Recorded with the tail.
 */
static void lower_rebuilds(struct array *a, uint64_t low_row)
{
	if (low_row == UINT64_MAX)
		return;
	for (unsigned i = 0; i < a->nmembers; i++) {
		struct uraid_sb *own = &a->member_sb[i];
		int s = a->member_pending_slot[i];

		if (!a->members[i] || s < 0 || a->member_state[i] == URAID_MEMBER_JOURNAL ||
		    !(own->feature_map & URAID_FEATURE_RECOVERY_OFFSET) ||
		    own->recovery_offset <= low_row)
			continue;
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: %s: rebuild goes back from sector %"
		     PRIu64 " to %" PRIu64 " (journal rows replayed below it)", a->sb.set_name,
		     a->members[i]->path, own->recovery_offset, low_row);
		own->recovery_offset = low_row;
	}
	/* a slot already rebuilding from its superblock at assembly */
	for (unsigned s = 0; s < a->geom.raid_disks; s++)
		if (a->slot[s].state == URAID_MEMBER_REBUILDING &&
		    atomic_load(&a->slot[s].rebuilt) > low_row)
			atomic_store(&a->slot[s].rebuilt, low_row);
}

int journal_assemble(struct array *a, char *err, size_t errlen)
{
	struct journal_replay_result r;
	struct jctx j = { .a = a };
	unsigned idx = a->nmembers;
	int rc;

	for (unsigned i = 0; i < a->nmembers; i++)
		if (a->member_state[i] == URAID_MEMBER_JOURNAL && a->members[i])
			idx = i;
	if (idx == a->nmembers)
		return 0;
	if (a->flags & (URAID_ASSEMBLE_READONLY | URAID_ASSEMBLE_PEEK)) {
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: read-only: the write journal on %s is not "
		     "replayed (rows written just before a crash may read back old until it is "
		     "served read-write)", a->sb.set_name, a->members[idx]->path);
		return 0;
	}
	j.journal = a->members[idx];
	struct journal_io io = {
		.ctx = &j, .log_read = j_log_read, .log_write = j_log_write, .log_flush = j_log_flush,
		.member_read = j_member_read, .member_write = j_member_write,
		.member_flush = j_member_flush, .note = j_note,
	};
	char why[300];
	rc = journal_replay(&a->geom, a->sb.set_uuid, a->member_sb[idx].data_size,
			    a->member_sb[idx].recovery_offset, &io, &r, why, sizeof(why));
	if (rc && (a->flags & URAID_ASSEMBLE_FORCE)) {
		/* nothing was written (rows go out at the scan's end, all or none but
		   for a failing write): served read-only, the log left as it is */
		ulog(array_log(a), URAID_LOG_WARNING, "%s: write journal %s: %s; --force: served "
		     "read-only without the replay (rows written just before the crash may read "
		     "back old)", a->sb.set_name, j.journal->path, why);
		a->flags |= URAID_ASSEMBLE_READONLY;
		return 0;
	}
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: write journal %s: %s (--force serves the "
				  "array read-only without replaying it)", a->sb.set_name,
				  j.journal->path, why);
	lower_rebuilds(a, r.low_row);
	/* the new tail must be on disk before anything is written to the slots */
	a->member_sb[idx].recovery_offset = r.tail;
	rc = meta_record_change(a);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: recording journal_tail %" PRIu64 " in the "
				  "superblocks: %s", a->sb.set_name, r.tail, strerror(-rc));
	/* from now on every RAID 4/5/6 unit is logged before its member writes */
	rc = raid5_journal_log_create(a, idx, a->member_sb[idx].data_size / 8 * 8, r.log_start,
				      r.next_seq, r.tail, &a->plog);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: write journal %s: %s", a->sb.set_name,
				  j.journal->path, strerror(-rc));
	return 0;
}
