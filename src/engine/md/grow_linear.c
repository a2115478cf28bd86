// SPDX-License-Identifier: MIT
/*
 * A linear array grows by appending members (mdadm --grow --add, md's
 * linear_add): each new member takes the next slot (role raid_disks), in
 * sync at once since no data moves; the array's end moves out by the new
 * member's data size (rounded down to the chunk, as linear rounds every
 * member). md then writes every superblock with raid_disks + 1 and the new
 * role in dev_roles (events + 1), which meta_record_change does here.
 *
 * The members appended are the newest spares (the ones grow --add just
 * added: md_member_add appends, so the highest indices), in the order they
 * were added.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/md/grow_linear.h"
#include "engine/md/member_state.h"

int grow_linear_append(struct array *a, uint32_t raid_disks, char *err, size_t errlen)
{
	uint32_t old = a->geom.raid_disks;
	int picked[URAID_MAX_MEMBERS];
	uint64_t member_sectors[URAID_MAX_MEMBERS];
	uint32_t chunk = a->geom.chunk_sectors;

	if (a->geom.level != URAID_LEVEL_LINEAR || raid_disks <= old ||
	    raid_disks > URAID_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EBUSY, "the array changed while the grow was being "
				  "planned: grow again");
	unsigned need = raid_disks - old, got = 0;
	/* the newest spares, then put back in the order they came */
	for (unsigned i = a->nmembers; i-- > 0 && got < need;) {
		if (a->member_slot[i] >= 0 || a->member_state[i] != URAID_MEMBER_SPARE ||
		    a->member_pending_slot[i] >= 0 || !a->members[i] || a->members[i]->fd < 0)
			continue;
		picked[got++] = (int)i;
	}
	if (got < need)
		return uraid_errf(err, errlen, -EBUSY, "%u members need %u spares, the array has "
				  "%u: add them first (--add DEV)", raid_disks, need, got);
	for (unsigned k = 0; k < need / 2; k++) {
		int t = picked[k];
		picked[k] = picked[need - 1 - k];
		picked[need - 1 - k] = t;
	}
	for (uint32_t s = 0; s < old; s++) {
		if (!slot_ok(a, s))
			return uraid_errf(err, errlen, -EIO, "slot %u of the linear array has no "
					  "working member: nothing appended", s);
		member_sectors[s] = a->geom.member_sectors[s];
	}
	for (unsigned k = 0; k < need; k++) {
		const struct uraid_sb *sb = &a->member_sb[picked[k]];
		uint64_t use = chunk ? sb->data_size - sb->data_size % chunk : sb->data_size;
		if (!use)
			return uraid_errf(err, errlen, -ENOSPC, "%s: its data area (%" PRIu64 " KiB) "
					  "holds no whole chunk of %u KiB: nothing appended",
					  a->members[picked[k]]->path, sb->data_size / 2, chunk / 2);
		member_sectors[old + k] = sb->data_size;
	}
	struct uraid_geom *g = malloc(sizeof(*g));
	if (!g)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	struct uraid_geom_params gp = {
		.level = URAID_LEVEL_LINEAR, .layout = a->sb.layout, .raid_disks = raid_disks,
		.chunk_sectors = chunk, .dev_sectors = a->sb.size,
		.member_sectors = member_sectors,
	};
	char why[200];
	int rc = uraid_geom_init(g, &gp, why, sizeof(why));
	if (rc) {
		free(g);
		return uraid_errf(err, errlen, -EINVAL, "the new geometry is not valid: %s", why);
	}
	/* the old members keep their place: same starts, same sizes */
	for (uint32_t s = 0; s < old; s++)
		if (g->linear_start[s] != a->geom.linear_start[s] ||
		    g->member_sectors[s] != a->geom.member_sectors[s]) {
			free(g);
			return uraid_errf(err, errlen, -EINVAL, "appending would move slot %u's data "
					  "(a bug): nothing appended", s);
		}
	uint32_t old_disks = a->sb.raid_disks;
	a->sb.raid_disks = raid_disks;
	rc = array_switch_geometry(a, g, err, errlen);
	free(g);
	if (rc) {
		a->sb.raid_disks = old_disks;
		return rc;
	}
	for (unsigned k = 0; k < need; k++) {
		unsigned i = (unsigned)picked[k], s = old + k;
		atomic_store(&a->slot[s].repl, NULL);
		atomic_store(&a->slot[s].rebuilt, 0);
		a->slot[s].dev_number = a->member_sb[i].dev_number;
		atomic_store(&a->slot[s].state, URAID_MEMBER_IN_SYNC);
		atomic_store(&a->slot[s].m, a->members[i]);
		slot_changed(a, s);
		a->member_slot[i] = (int)s;
		a->member_state[i] = URAID_MEMBER_IN_SYNC;
		/* the wall as a slot holder's (linear uses the data area whole) */
		rc = array_member_areas(a, a->members[i], &a->member_sb[i], true, err, errlen);
		if (rc)
			return rc;
	}
	meta_recount_degraded(a);
	rc = meta_record_change(a);
	if (rc)
		return uraid_errf(err, errlen, rc, "the members were appended but the superblocks "
				  "could not be written: %s", strerror(-rc));
	return 0;
}
