// SPDX-License-Identifier: MIT
/*
 * The array's resync state (resync_state.h): resync_needed, the checkpoint
 * that resync_offset records, and a resync held after a stop on request.
 */
#include "engine/core/array.h"
#include "engine/md/resync_state.h"
#include "engine/md/wib.h"

void md_resync_end(struct array *a, uint32_t flags, uint64_t pos)
{
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return;
	pthread_mutex_lock(&a->meta_lock);
	if (flags & MD_RESYNC_WHOLE) {
		/* md sets recovery_cp to MaxSector after a resync or a repair */
		a->resync_needed = false;
		a->resync_checkpoint = UINT64_MAX;
		wib_resync_done(a, UINT64_MAX);
	} else if (flags & MD_RESYNC_AT_POS) {
		a->resync_checkpoint = pos;
	}
	a->resync_held = flags & MD_RESYNC_HELD;
	/* not active on disk: the superblocks say so now, not at the next clean marking */
	meta_write_resync_offset(a);
	pthread_mutex_unlock(&a->meta_lock);
}

void md_resync_checkpoint(struct array *a, uint64_t at)
{
	pthread_mutex_lock(&a->meta_lock);
	a->resync_checkpoint = at;
	meta_write_resync_offset(a);
	pthread_mutex_unlock(&a->meta_lock);
}

uint64_t md_resync_from(struct array *a, uint64_t span)
{
	uint64_t from = 0;

	pthread_mutex_lock(&a->meta_lock);
	if (a->resync_needed && a->resync_checkpoint < span)
		from = a->resync_checkpoint;
	pthread_mutex_unlock(&a->meta_lock);
	return from;
}

bool md_resync_wanted(struct array *a)
{
	pthread_mutex_lock(&a->meta_lock);
	bool want = a->resync_needed && !a->resync_held;
	pthread_mutex_unlock(&a->meta_lock);
	return want;
}
