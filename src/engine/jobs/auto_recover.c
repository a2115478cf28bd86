// SPDX-License-Identifier: MIT
/*
 * The automatic start of background jobs (auto_recover.h): the policy only;
 * the job runner is sync.c, the members' roles md/member_state.c.
 */
#include <errno.h>

#include "engine/core/array.h"
#include "engine/jobs/auto_recover.h"
#include "engine/jobs/sync.h"
#include "engine/md/member_state.h"
#include "engine/md/reshape_state.h"
#include "engine/md/resync_state.h"

/*
 * A resync that is needed runs whenever nothing else does and the array
 * has its redundancy (md resumes one while recovery_cp < MaxSector): at
 * start, after a rebuild or a replacement, after a member failed under it
 * and was rebuilt. From the checkpoint. Not after a stop on request
 * (resync_held) until another job has ended: a stop is not undone at once.
 * meta_lock not held; 0 (started, or none wanted) or sync_start's -errno.
 */
static int resync_resume(struct array *a, char *err, size_t errlen)
{
	return md_resync_wanted(a) ? sync_start(a, URAID_SYNC_RESYNC, sync_resync_from(a), 0, err, errlen) : 0;
}

/*
 * A reshape in progress goes on whenever no job runs (md resumes one found
 * at start), unless it was stopped on request: then until the array is
 * assembled again. true when there is one (nothing else may start).
 */
static bool reshape_resume(struct array *a, char *err, size_t errlen)
{
	pthread_mutex_lock(&a->meta_lock);
	bool active = a->reshape != NULL;
	uint64_t from = active ? a->reshape->position / reshape_pos_div(a->reshape) : 0;
	pthread_mutex_unlock(&a->meta_lock);
	if (!active)
		return false;
	pthread_mutex_lock(&a->sync_lock);
	bool held = a->sync_last.kind == URAID_SYNC_RESHAPE && a->sync_last.result == -ECANCELED;
	pthread_mutex_unlock(&a->sync_lock);
	int rc = held ? 0 : sync_start(a, URAID_SYNC_RESHAPE, from, 0, err, errlen);
	/* -EBUSY: started meanwhile (uraid_array_reshape_start) */
	if (rc && rc != -EBUSY && a->sync_warned++ == 0)
		ulog(array_log(a), URAID_LOG_ERR, "the reshape cannot go on: %s", err);
	return true;
}

/* Registered only for arrays that can be written and have background work
 * (sync_attach_pending). */
static void auto_recover_tick(struct array *a, uint64_t now_ns)
{
	char err[256];

	if (!(a->e->flags & URAID_ENGINE_THREADS) || now_ns < atomic_load(&a->sync_retry_ns) ||
	    atomic_load(&a->starts_held))
		return;
	sync_reap(a);
	if (atomic_load(&a->sync))
		return;
	if (reshape_resume(a, err, sizeof(err)))
		return;
	if (!atomic_load(&a->degraded)) {
		/* redundancy first, as md does (-EBUSY: a job was started meanwhile) */
		int rc = resync_resume(a, err, sizeof(err));
		if (rc == -EBUSY || atomic_load(&a->sync))
			return;
		if (rc && a->sync_warned++ == 0)
			ulog(array_log(a), URAID_LOG_ERR, "the array needs a resync, which cannot run: %s",
				err);
		/* a replacement waiting (uraid replace, or one a restart interrupted) */
		if (md_replace_waiting(a) && sync_start(a, URAID_SYNC_REPLACE, 0, 0, err, sizeof(err)) != 0 &&
		    a->sync_warned++ == 0)
			ulog(array_log(a), URAID_LOG_ERR, "a replacement is waiting but cannot start: %s", err);
		return;
	}
	/* a spare and a missing slot? (md_recovery_begin decides, under the lock) */
	if (md_spare_waiting(a) && sync_start(a, URAID_SYNC_RECOVER, 0, 0, err, sizeof(err)) != 0 &&
	    a->sync_warned++ == 0)
		ulog(array_log(a), URAID_LOG_ERR, "a spare is there but the rebuild cannot start: %s", err);
}

int auto_recover_attach(struct array *a)
{
	return array_tick_add(a, auto_recover_tick);
}
