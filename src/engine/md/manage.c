// SPDX-License-Identifier: MIT
/*
 * Management of a running array: find a member by path, fail it on request
 * (mdadm --fail, through member_state.c), remove it (mdadm --remove), add a
 * spare or re-add a former member (mdadm --add), replace one (mdadm
 * --replace). Each is a superblock update as md makes it: events+1, the
 * new roles in every live member.
 */
#include <errno.h>
#include <stdalign.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/bitmap.h>
#include <uraid/create.h>

#include "common/errmsg.h"
#include "common/range_path.h"
#include "engine/core/array.h"
#include "engine/md/member_state.h"

#define A(ua) ((struct array *)(ua))

/* Same file or device: device number for block devices, else inode. */
static bool same_target(const struct stat *x, const struct stat *y)
{
	if (S_ISBLK(x->st_mode) || S_ISBLK(y->st_mode))
		return S_ISBLK(x->st_mode) && S_ISBLK(y->st_mode) && x->st_rdev == y->st_rdev;
	return x->st_dev == y->st_dev && x->st_ino == y->st_ino;
}

int uraid_array_find_member(struct uraid_array *ua, const char *path)
{
	struct array *a = A(ua);
	struct stat want, have;
	struct uraid_range_path range;
	/* a range (PATH@START+LENGTH) is that range of PATH, however PATH is spelt */
	bool ranged = uraid_range_path_parse(path, &range, NULL, 0) == 0 && range.ranged;
	bool by_stat = stat(ranged ? range.path : path, &want) == 0;
	int found = -ENOENT;

	pthread_mutex_lock(&a->meta_lock);
	for (unsigned i = 0; i < a->nmembers && found < 0; i++) {
		struct member *m = a->members[i];
		if (!m)
			continue;
		if (!strcmp(m->path, path))
			found = (int)i;
		else if (by_stat && m->fd >= 0 && fstat(m->fd, &have) == 0 &&
			 same_target(&want, &have) &&
			 (!ranged || (m->base == range.start && m->dev_sectors == range.sectors)))
			found = (int)i;
	}
	pthread_mutex_unlock(&a->meta_lock);
	return found;
}

/* The member at index idx, or NULL with the reason in err; meta_lock held. */
static struct member *member_at(struct array *a, unsigned idx, char *err, size_t errlen)
{
	if (idx < a->nmembers && a->members[idx])
		return a->members[idx];
	uraid_errf(err, errlen, -ENOENT, "no member %u in the array", idx);
	return NULL;
}

/* mdadm --fail: the member state machine decides (md/member_state.c). */
int uraid_array_fail_member(struct uraid_array *ua, unsigned idx, uint32_t flags, char *err,
			    size_t errlen)
{
	struct array *a = A(ua);

	pthread_mutex_lock(&a->meta_lock);
	int rc = md_member_fail(a, &(struct md_fail){ .cause = MD_FAIL_REQUEST, .where = idx,
						    .flags = flags, .msg = err, .msglen = errlen });
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

/*
 * Requests already queued on a reactor may still name the member's
 * descriptor (the overflow list keeps the number, not the file). Closing it
 * would let the number be reused by the next open or accept; instead it is
 * pointed at /dev/null, which lets the device go (O_EXCL, the file) while
 * the number stays taken until the array closes.
 */
static int retire_descriptor(struct member *m)
{
	int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		return -errno;
	int rc = dup3(null_fd, m->fd, O_CLOEXEC) < 0 ? -errno : 0;
	close(null_fd);
	return rc;
}

int uraid_array_remove_member(struct uraid_array *ua, unsigned idx, char *err, size_t errlen)
{
	struct array *a = A(ua);
	int rc = 0;

	pthread_mutex_lock(&a->meta_lock);
	struct member *m = member_at(a, idx, err, errlen);
	if (!m) {
		rc = -ENOENT;
		goto out;
	}
	enum uraid_member_state st = a->member_state[idx];
	if (st == URAID_MEMBER_IN_SYNC ||
	    (st == URAID_MEMBER_SPARE && a->member_pending_slot[idx] >= 0)) {
		rc = uraid_errf(err, errlen, -EBUSY, "%s is in use by the array; fail it first "
				"(uraid fail), as md requires", m->path);
		goto out;
	}
	if (m->fd >= 0 && (rc = retire_descriptor(m)) != 0) {
		rc = uraid_errf(err, errlen, rc, "cannot release %s: %s", m->path, strerror(-rc));
		goto out;
	}
	md_member_remove(a, idx);
	ulog(array_log(a), URAID_LOG_NOTICE, "%s: removed from the array", m->path);
	/* a stale member never counted: nothing on disk names it */
	if (st != URAID_MEMBER_STALE) {
		rc = meta_record_change(a);
		if (rc == -EROFS)
			rc = 0;
		else if (rc)
			rc = uraid_errf(err, errlen, rc, "%s is removed, but the superblocks could "
					"not be updated: %s", m->path, strerror(-rc));
	}
out:
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

/* A free dev_number: the lowest index no member of the array uses (md's choice). */
static uint32_t free_dev_number(const struct array *a)
{
	for (uint32_t d = 0;; d++) {
		bool used = false;
		for (unsigned i = 0; i < a->nmembers && !used; i++)
			used = a->member_sb[i].dev_number == d;
		if (!used)
			return d;
	}
}

/*
 * The new member's own superblock: the array's fields as a live member has
 * them, its placement (super_offset, data_offset, bad-block log) copied from
 * that member, and its own dev_number, device_uuid and data_size.
 */
static int compose_new_member(const struct array *a, const struct uraid_sb *like,
			      uint64_t dev_sectors, struct uraid_sb *sb, char *err, size_t errlen)
{
	*sb = *like;
	/* what the array needs of a new member: a spare is rebuilt onto a slot
	   of geom.dev_sectors; linear rebuilds none, a member appended to it
	   (grow --add) uses what it has, down to one chunk (md's linear_add) */
	uint64_t need = a->geom.dev_sectors;
	if (a->geom.level == URAID_LEVEL_LINEAR)
		need = a->geom.chunk_sectors ? a->geom.chunk_sectors : 8;
	if (a->minor == 0) {
		/*
		 * 1.0: the superblock at the device's end, and below it the same
		 * room for bitmap and bad-block log as the member copied (their
		 * offsets are relative to the superblock); the data from sector 0.
		 */
		uint64_t room = like->super_offset - like->data_size;
		sb->super_offset = uraid_sb_location(0, dev_sectors);
		sb->data_size = sb->super_offset > room ? sb->super_offset - room : 0;
		if (sb->data_size < need)
			return uraid_errf(err, errlen, -ENOSPC, "too small: %llu sectors, the array "
					  "needs %llu for data and %llu for metadata at the end",
					  (unsigned long long)dev_sectors,
					  (unsigned long long)need,
					  (unsigned long long)(room + (dev_sectors - sb->super_offset)));
	} else {
		if (dev_sectors < like->data_offset + need)
			return uraid_errf(err, errlen, -ENOSPC, "too small: %llu sectors, the array "
					  "needs %llu from data offset %llu",
					  (unsigned long long)dev_sectors,
					  (unsigned long long)need,
					  (unsigned long long)like->data_offset);
		sb->data_size = dev_sectors - like->data_offset;
	}
	sb->dev_number = free_dev_number(a);
	if (getrandom(sb->device_uuid, 16, 0) != 16)
		return uraid_errf(err, errlen, -EIO, "cannot get random bytes");
	sb->feature_map &= ~(uint32_t)(URAID_FEATURE_RECOVERY_OFFSET | URAID_FEATURE_RECOVERY_BITMAP |
				       URAID_FEATURE_REPLACEMENT);
	sb->recovery_offset = 0;
	sb->cnt_corrected_read = 0;
	sb->devflags = 0;
	sb->events = a->sb.events;
	return 0;
}

/* The array's bitmap as a live member holds it, onto m (so that it has the
 * same bits when it takes a slot). meta_lock held: no bit changes meanwhile. */
static int copy_bitmap(struct array *a, struct member *m, const struct uraid_sb *sb, int like)
{
	size_t len = uraid_bitmap_disk_sectors(a->bitmap.sync_size, a->bitmap.chunksize) * 512;
	/* relative to each one's superblock (1.0: the superblocks' places differ) */
	uint64_t from = (uint64_t)((int64_t)a->member_sb[like].super_offset + sb->bitmap_offset);
	uint64_t to = (uint64_t)((int64_t)sb->super_offset + sb->bitmap_offset);
	uint8_t *area;
	int rc;

	if (posix_memalign((void **)&area, 4096, len))
		return -ENOMEM;
	rc = member_pread_sync(a->members[like], area, len, from);
	if (!rc)
		rc = member_pwrite_sync(m, area, len, to);
	free(area);
	return rc;
}

/*
 * What mdadm writes besides the superblock: an empty bad-block log, and the
 * bitmap. meta_lock held.
 */
static int write_member_areas(struct array *a, struct member *m, const struct uraid_sb *sb,
			      int like, char *err, size_t errlen)
{
	alignas(4096) uint8_t log[URAID_BBLOG_SECTORS * 512];
	int rc = 0;

	if (sb->bblog_size && sb->bblog_offset) {
		uraid_bblog_init(log, sizeof(log));
		rc = member_pwrite_sync(m, log, sizeof(log),
					(uint64_t)((int64_t)sb->super_offset + sb->bblog_offset));
	}
	if (!rc && a->has_bitmap)
		rc = copy_bitmap(a, m, sb, like);
	if (rc)
		uraid_errf(err, errlen, rc, "%s: writing its bad-block log or bitmap: %s", m->path,
			   strerror(-rc));
	return rc;
}

/*
 * md's re-add: a former member, back after a short absence, takes its old
 * slot again and only the bitmap chunks written since it left are rebuilt
 * (feature 0x80). That needs a live bitmap, a device whose own superblock
 * says it held a slot that is empty now, and events no older than the
 * bitmap's events_cleared (no bit was let go since it left: bits are never
 * cleared while the array misses a member). The slot, or -1 with the reason
 * in why. meta_lock held.
 */
static int readd_slot(const struct array *a, const struct uraid_sb *o, char *why, size_t len)
{
	uint32_t d = o->dev_number;
	uint16_t role = d < o->max_dev && d < URAID_SB_MAX_DEV ? o->dev_roles[d] : URAID_ROLE_SPARE;

	if (!a->wib)
		return uraid_errf(why, len, -1, a->has_bitmap ? "the array's bitmap is out of date"
					: "the array has no write-intent bitmap");
	if (role >= a->geom.raid_disks)
		return uraid_errf(why, len, -1, "it held no slot when it left");
	for (unsigned i = 0; i < a->nmembers; i++)
		if (a->members[i] && a->member_sb[i].dev_number == d)
			return uraid_errf(why, len, -1, "its device number %u is %s's now", d,
					  a->members[i]->path);
	if (a->slot[role].m)
		return uraid_errf(why, len, -1, "its slot %u is %s's now", role,
				  a->slot[role].m->path);
	if (o->events < a->bitmap.events_cleared || o->events > a->sb.events)
		return uraid_errf(why, len, -1, "its events %llu are outside what the bitmap covers "
				  "(%llu to %llu)", (unsigned long long)o->events,
				  (unsigned long long)a->bitmap.events_cleared,
				  (unsigned long long)a->sb.events);
	if (o->data_size < a->geom.dev_sectors)
		return uraid_errf(why, len, -1, "its data area is smaller than the array needs");
	return role;
}

/* Take member m back into slot `slot` with its own superblock `o` (see readd_slot). */
static int readd(struct array *a, struct member *m, const struct uraid_sb *o, int slot, int like,
		 char *err, size_t errlen)
{
	struct uraid_sb sb = *o;
	/* its own superblock placed its areas: checked as at assembly */
	int rc = array_member_areas(a, m, &sb, true, err, errlen);

	if (rc)
		return rc;
	rc = copy_bitmap(a, m, &sb, like);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: writing its bitmap: %s", m->path,
				  strerror(-rc));
	sb.feature_map |= URAID_FEATURE_RECOVERY_OFFSET | URAID_FEATURE_RECOVERY_BITMAP;
	sb.feature_map &= ~(uint32_t)URAID_FEATURE_REPLACEMENT;
	sb.recovery_offset = 0;
	md_member_add(a, m, &sb, slot);
	ulog(array_log(a), URAID_LOG_NOTICE, "%s: re-added to slot %d (device %u); only what the bitmap marks "
		"is rebuilt", m->path, slot, sb.dev_number);
	return 0;
}

int uraid_array_add_member(struct uraid_array *ua, const char *path, uint32_t flags, char *err,
			   size_t errlen)
{
	struct array *a = A(ua);
	struct uraid_probe probe;
	int rc;

	if (a->flags & URAID_ASSEMBLE_READONLY)
		return uraid_errf(err, errlen, -EROFS, "the array is read-only");
	if (uraid_array_find_member(ua, path) >= 0)
		return uraid_errf(err, errlen, -EEXIST, "%s is a member already", path);
	/* md holds no linear spares: the kernel hands an added disk to
	   linear_add at once (linear has no hot_remove_disk), which refuses any
	   role but the next slot, so mdadm --add fails there with EINVAL; the
	   append is mdadm --grow --add (Grow_Add_device), uraid grow --add */
	if (a->geom.level == URAID_LEVEL_LINEAR && !(flags & URAID_ADD_APPEND))
		return uraid_errf(err, errlen, -EINVAL, "a linear array takes no spares (md "
				  "neither): append %s with 'uraid grow ARRAY --add %s'", path,
				  path);
	struct member *m = member_new();
	if (!m)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	rc = member_open(m, path, a->flags & URAID_ASSEMBLE_BUFFERED ? MEMBER_OPEN_BUFFERED : 0,
			 array_log(a), err, errlen);
	if (rc) {
		free(m);
		return rc;
	}
	/* nothing written to a disk of another array without --force (mdadm's rule) */
	bool foreign = false, ours = false;
	struct uraid_sb old;
	if (uraid_probe_range(m->fd, m->base, m->dev_sectors, &probe) == 0 && (probe.chosen >= 0 || probe.has_md090)) {
		foreign = true;
		if (probe.chosen >= 0) {
			old = probe.loc[probe.chosen].sb;
			ours = !memcmp(old.set_uuid, a->sb.set_uuid, 16);
		}
	}
	if (foreign && !ours && !(flags & URAID_ADD_FORCE)) {
		rc = uraid_errf(err, errlen, -EBUSY, "%s holds an md superblock of another array; "
				"add --force to overwrite it", path);
		goto fail;
	}
	pthread_mutex_lock(&a->meta_lock);
	int like = -1;
	for (unsigned i = 0; i < a->nmembers && like < 0; i++)
		if (a->member_state[i] == URAID_MEMBER_IN_SYNC)
			like = (int)i;
	struct uraid_sb sb;
	char why[200] = "no member in sync to copy from";
	int slot = ours && like >= 0 && a->nmembers < URAID_MAX_MEMBERS
			   ? readd_slot(a, &old, why, sizeof(why)) : -1;
	if (slot >= 0) {
		rc = readd(a, m, &old, slot, like, err, errlen);
		if (rc == 0) {
			rc = meta_record_change(a);
			if (rc)
				uraid_errf(err, errlen, rc, "%s is re-added, but the superblocks could "
					   "not be written: %s", path, strerror(-rc));
			else
				rc = URAID_ADD_READDED;
			m = NULL;
		}
		pthread_mutex_unlock(&a->meta_lock);
		goto out;
	}
	rc = ours && !(flags & URAID_ADD_FORCE)
		     ? uraid_errf(err, errlen, -EBUSY, "%s is an old member of this array that cannot "
				  "be re-added (%s); add --force to add it as a new spare, rebuilt in "
				  "full", path, why)
	     : like < 0 ? uraid_errf(err, errlen, -EIO, "no member in sync to copy the layout from")
		      : a->nmembers >= URAID_MAX_MEMBERS
		      ? uraid_errf(err, errlen, -E2BIG, "the array has %u members already",
				   a->nmembers)
		      : compose_new_member(a, &a->member_sb[like], m->dev_sectors, &sb, err, errlen);
	if (rc == 0)
		rc = array_member_areas(a, m, &sb, false, err, errlen);
	if (rc == 0)
		rc = write_member_areas(a, m, &sb, like, err, errlen);
	if (rc == 0) {
		md_member_add(a, m, &sb, -1);
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: added as a spare (device %u)", path, sb.dev_number);
		rc = meta_record_change(a);
		if (rc)
			uraid_errf(err, errlen, rc, "%s is added, but the superblocks could not be "
				   "written: %s", path, strerror(-rc));
		m = NULL;       /* the array's now */
	}
	pthread_mutex_unlock(&a->meta_lock);
out:
	if (!m)
		return rc;
fail:
	member_close(m);
	free(m);
	return rc;
}

int uraid_array_replace_member(struct uraid_array *ua, unsigned old_idx, const char *path,
			       uint32_t flags, char *err, size_t errlen)
{
	struct array *a = A(ua);
	int rc;

	if (!a->level->info.redundant)
		return uraid_errf(err, errlen, -EOPNOTSUPP, "a %s has no redundancy to keep its "
				  "data while a member is replaced", uraid_level_name(a->geom.level));
	/* the old member: in sync, with no replacement under way anywhere */
	pthread_mutex_lock(&a->meta_lock);
	struct member *old = member_at(a, old_idx, err, errlen);
	int s = old ? a->member_slot[old_idx] : -1;
	rc = !old ? -ENOENT
	   : a->member_state[old_idx] != URAID_MEMBER_IN_SYNC || s < 0 || a->slot[s].m != old
	   ? uraid_errf(err, errlen, -EINVAL, "%s is not in sync in a slot: only a working member "
			"is replaced (a missing one is rebuilt onto a spare)", old->path) : 0;
	for (unsigned i = 0; i < a->nmembers && !rc; i++)
		if (a->member_state[i] == URAID_MEMBER_SPARE && a->member_pending_slot[i] >= 0)
			rc = uraid_errf(err, errlen, -EBUSY, "%s is taking over slot %d already; one "
					"rebuild or replacement at a time", a->members[i]->path,
					a->member_pending_slot[i]);
	pthread_mutex_unlock(&a->meta_lock);
	if (rc)
		return rc;

	/* the new one: a spare of the array already, or added as one now */
	int idx = uraid_array_find_member(ua, path);
	if (idx < 0) {
		rc = uraid_array_add_member(ua, path, flags, err, errlen);
		if (rc == URAID_ADD_READDED)
			return uraid_errf(err, errlen, -EINVAL, "%s went back to its own slot "
					  "(re-add) instead", path);
		if (rc < 0)
			return rc;
		idx = uraid_array_find_member(ua, path);
	}
	pthread_mutex_lock(&a->meta_lock);
	rc = idx < 0 || (unsigned)idx >= a->nmembers ? -ENOENT : 0;
	if (!rc && (a->member_state[idx] != URAID_MEMBER_SPARE || a->member_pending_slot[idx] >= 0))
		rc = uraid_errf(err, errlen, -EINVAL, "%s is not a spare of the array", path);
	else if (!rc && a->member_sb[idx].data_size < a->geom.dev_sectors)
		rc = uraid_errf(err, errlen, -ENOSPC, "%s is too small to replace %s", path,
				old->path);
	else if (!rc && (a->slot[s].m != old || a->member_state[old_idx] != URAID_MEMBER_IN_SYNC))
		rc = uraid_errf(err, errlen, -EAGAIN, "%s changed state meanwhile; try again",
				old->path);
	if (!rc) {
		md_want_replacement(a, (unsigned)idx, s);
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: will replace %s in slot %d", path, old->path, s);
		rc = meta_record_change(a);
		if (rc)
			uraid_errf(err, errlen, rc, "the superblocks could not be written: %s",
				   strerror(-rc));
	}
	pthread_mutex_unlock(&a->meta_lock);
	if (rc)
		return rc;
	/* now, or when the background work running ends (jobs/auto_recover.c) */
	char why[256];
	if (uraid_array_sync_start(ua, URAID_SYNC_REPLACE, why, sizeof(why)) < 0 &&
	    !atomic_load(&a->sync))
		ulog(array_log(a), URAID_LOG_NOTICE, "the replacement waits: %s", why);
	return 0;
}
