// SPDX-License-Identifier: MIT
/*
 * Management of a running array: find a member by path, fail it on request
 * (mdadm --fail), remove it (mdadm --remove). Both are superblock updates
 * as md makes them: events+1, the new roles in every live member.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "engine/array.h"

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
	bool by_stat = stat(path, &want) == 0;
	int found = -ENOENT;

	pthread_mutex_lock(&a->meta_lock);
	for (unsigned i = 0; i < a->nmembers && found < 0; i++) {
		struct member *m = a->members[i];
		if (!m)
			continue;
		if (!strcmp(m->path, path))
			found = (int)i;
		else if (by_stat && m->fd >= 0 && fstat(m->fd, &have) == 0 &&
			 same_target(&want, &have))
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

/* Fail the in-sync member i of slot s; meta_lock held. */
static int fail_in_sync(struct array *a, unsigned i, int s, uint32_t flags, char *err,
			size_t errlen)
{
	struct member *m = a->members[i];

	a->slot[s].state = URAID_MEMBER_FAULTY;
	bool survives = array_level_survives(a);
	bool fatal_ok = a->geom.level == URAID_LEVEL_4 || a->geom.level == URAID_LEVEL_5 ||
			a->geom.level == URAID_LEVEL_6;
	if (!survives && (!(flags & URAID_FAIL_FORCE) || !fatal_ok)) {
		a->slot[s].state = URAID_MEMBER_IN_SYNC;
		if (!fatal_ok)
			return uraid_errf(err, errlen, -EBUSY,
					  "%s holds the last working copy of slot %d; md does not "
					  "fail it, and neither does uraid", m->path, s);
		return uraid_errf(err, errlen, -EBUSY,
				  "failing %s would leave the array without enough members "
				  "(its data would be lost); add --force to fail it anyway", m->path);
	}
	a->member_state[i] = URAID_MEMBER_FAULTY;
	meta_recount_degraded(a);
	fprintf(stderr, "uraid: %s: failed on request, slot %d; array %s\n", m->path, s,
		survives ? "continues degraded" : "has failed (too many members lost)");
	int rc = meta_record_change(a);
	if (rc && rc != -EROFS)
		return uraid_errf(err, errlen, rc, "%s is failed, but the superblocks could not "
				  "be updated: %s", m->path, strerror(-rc));
	return 0;
}

int uraid_array_fail_member(struct uraid_array *ua, unsigned idx, uint32_t flags, char *err,
			    size_t errlen)
{
	struct array *a = A(ua);
	int rc = 0;

	pthread_mutex_lock(&a->meta_lock);
	struct member *m = member_at(a, idx, err, errlen);
	if (!m) {
		rc = -ENOENT;
		goto out;
	}
	switch (a->member_state[idx]) {
	case URAID_MEMBER_FAULTY:
		break;                  /* already: nothing to change, as mdadm --fail */
	case URAID_MEMBER_IN_SYNC: {
		int s = a->member_slot[idx];
		if (s < 0 || a->slot[s].m != m) {
			rc = uraid_errf(err, errlen, -EINVAL, "%s has no slot", m->path);
			break;
		}
		rc = fail_in_sync(a, idx, s, flags, err, errlen);
		break;
	}
	case URAID_MEMBER_SPARE:
		a->member_state[idx] = URAID_MEMBER_FAULTY;
		a->member_pending_slot[idx] = -1;
		fprintf(stderr, "uraid: %s: spare failed on request\n", m->path);
		rc = meta_record_change(a);
		if (rc == -EROFS)
			rc = 0;
		break;
	default:
		rc = uraid_errf(err, errlen, -EINVAL, "%s is not part of the running array "
				"(left out at assembly)", m->path);
		break;
	}
out:
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
	int s = a->member_slot[idx];
	if (st == URAID_MEMBER_FAULTY && s >= 0 && a->slot[s].m == m) {
		a->slot[s].state = URAID_MEMBER_MISSING;
		a->slot[s].m = NULL;
	}
	a->retired[a->nretired++] = m;
	for (unsigned j = idx; j + 1 < a->nmembers; j++) {
		a->members[j] = a->members[j + 1];
		a->member_state[j] = a->member_state[j + 1];
		a->member_slot[j] = a->member_slot[j + 1];
		a->member_sb[j] = a->member_sb[j + 1];
		a->member_pending_slot[j] = a->member_pending_slot[j + 1];
	}
	a->nmembers--;
	a->members[a->nmembers] = NULL;
	fprintf(stderr, "uraid: %s: removed from the array\n", m->path);
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
