// SPDX-License-Identifier: MIT
/*
 * The members' state machine (member_state.h): failing a member for any
 * cause, and the role changes of a rebuild and a replacement, as md makes
 * them (md_error, raid*_error, md's spare_active, want_replacement).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/md/member_state.h"
#include "engine/md/ppl.h"

static int member_index(const struct array *a, const struct member *m)
{
	for (unsigned i = 0; m && i < a->nmembers; i++)
		if (a->members[i] == m)
			return (int)i;
	return -1;
}

void md_notify_change(struct array *a)
{
	/* an array opened without an engine (the offline tools, unit tests) has no one to tell */
	if (a->e && a->e->changed)
		a->e->changed(a->e->changed_opaque);
}

/* ---- failing ---- */

/*
 * The member of a slot with a replacement failed (RAID 4/5/6, whose writes
 * skip a failed slot): the replacement becomes the slot's member being
 * rebuilt, from where its copy got, and a rebuild from the others finishes
 * it (RAID 1/10 keep copying from the other mirrors).
 */
static void replacement_takes_over(struct array *a, unsigned slot)
{
	struct member *r = atomic_load(&a->slot[slot].repl);
	int i = r ? member_index(a, r) : -1;

	if (i < 0 || !a->level->writes_skip_failed_slot)
		return;
	uint64_t at = atomic_load(&a->slot[slot].repl_rebuilt);
	atomic_store(&a->slot[slot].repl, NULL);
	struct uraid_sb *own = &a->member_sb[i];
	own->feature_map &= ~(uint32_t)URAID_FEATURE_REPLACEMENT;
	own->feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
	own->recovery_offset = at;
	atomic_store(&a->slot[slot].rebuilt, at);
	a->slot[slot].dev_number = own->dev_number;
	a->slot[slot].m = r;
	a->slot[slot].state = URAID_MEMBER_REBUILDING;
	slot_changed(a, slot);
	/* the copy stops (its job sees repl go); a rebuild from the others goes
	   on from `at` (jobs/auto_recover.c) */
	ulog(array_log(a), URAID_LOG_NOTICE, "%s: its slot %u lost its member: the rest is rebuilt onto it "
		"from member sector %llu", r->path, slot, (unsigned long long)at);
}

/*
 * A spare that holds a slot (rebuilding it, or replacing its member) leaves
 * it: out of the data path, and a background job working on it stops (it
 * sees the slot's m or repl change: jobs/sync.c target_gone).
 */
static void leave_slot(struct array *a, unsigned idx)
{
	struct member *m = a->members[idx];
	int s = a->member_pending_slot[idx];

	if (s >= 0) {
		if (a->slot[s].m == m) {
			a->slot[s].state = URAID_MEMBER_MISSING;
			a->slot[s].m = NULL;
			slot_changed(a, (unsigned)s);
		}
		if (atomic_load(&a->slot[s].repl) == m)
			atomic_store(&a->slot[s].repl, NULL);
	}
	a->member_pending_slot[idx] = -1;
}

/*
 * The in-sync member i (-1: not found among the members) of slot s fails
 * (an I/O error, or on request), under md's rule: RAID 4/5/6 always
 * record the failure (on request only with URAID_FAIL_FORCE when the array
 * does not survive it); RAID 0/1/10 keep their last working copy rather
 * than fail it (raid0/1/10 _error).
 */
static int fail_slot_member(struct array *a, const struct md_fail *f, unsigned s, int i)
{
	struct member *m = a->slot[s].m;
	bool request = f->cause == MD_FAIL_REQUEST;
	int err = f->err < 0 ? -f->err : f->err;

	a->slot[s].state = URAID_MEMBER_FAULTY;
	slot_changed(a, s);
	bool survives = array_level_survives(a);
	bool fatal_ok = !a->level->keeps_last_copy;
	if (!survives && (!fatal_ok || (request && !(f->flags & URAID_FAIL_FORCE)))) {
		a->slot[s].state = URAID_MEMBER_IN_SYNC;
		slot_changed(a, s);
		if (!request) {
			ulog(array_log(a), URAID_LOG_ERR, "%s: I/O error (%s) on the last working copy "
			     "of slot %u; not failing it", m->path, strerror(err), s);
			return -EBUSY;
		}
		if (!fatal_ok)
			return uraid_errf(f->msg, f->msglen, -EBUSY,
					  "%s holds the last working copy of slot %u; md does not "
					  "fail it, and neither does uraid", m->path, s);
		return uraid_errf(f->msg, f->msglen, -EBUSY,
				  "failing %s would leave the array without enough members "
				  "(its data would be lost); add --force to fail it anyway", m->path);
	}
	if (!request)
		ulog(array_log(a), URAID_LOG_ERR, "%s: write error (%s), slot %u failed; array "
		     "continues %s", m->path, strerror(err), s,
		     survives ? "degraded" : "no further (too many failed)");
	if (i >= 0)
		a->member_state[i] = URAID_MEMBER_FAULTY;   /* member_slot keeps the slot it had */
	replacement_takes_over(a, s);
	meta_recount_degraded(a);
	if (request)
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: failed on request, slot %u; array %s",
		     m->path, s, survives ? "continues degraded" : "has failed (too many members lost)");
	/* a read-only array records nothing (-EROFS) */
	int rc = meta_record_change(a);
	if (request && rc && rc != -EROFS)
		return uraid_errf(f->msg, f->msglen, rc, "%s is failed, but the superblocks could not "
				  "be updated: %s", m->path, strerror(-rc));
	return 0;
}

/* uraid fail of member index f->where. */
static int fail_on_request(struct array *a, const struct md_fail *f)
{
	unsigned idx = f->where;
	struct member *m = idx < a->nmembers ? a->members[idx] : NULL;
	int rc;

	if (!m)
		return uraid_errf(f->msg, f->msglen, -ENOENT, "no member %u in the array", idx);
	switch (a->member_state[idx]) {
	case URAID_MEMBER_FAULTY:
		return 0;               /* already: nothing to change, as mdadm --fail */
	case URAID_MEMBER_IN_SYNC: {
		int s = a->member_slot[idx];
		if (s < 0 || a->slot[s].m != m)
			return uraid_errf(f->msg, f->msglen, -EINVAL, "%s has no slot", m->path);
		return fail_slot_member(a, f, (unsigned)s, (int)idx);
	}
	case URAID_MEMBER_SPARE:
		leave_slot(a, idx);
		a->member_state[idx] = URAID_MEMBER_FAULTY;
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: spare failed on request", m->path);
		rc = meta_record_change(a);
		return rc == -EROFS ? 0 : rc;
	case URAID_MEMBER_JOURNAL:
		/* md fails a journal into a read-only array (r5l_log_disk_error) */
		return uraid_errf(f->msg, f->msglen, -EOPNOTSUPP, "%s is the array's write journal, "
				  "which uraid does not fail while serving; stop the array and serve "
				  "it with --force without the journal to run it read-only", m->path);
	default:
		return uraid_errf(f->msg, f->msglen, -EINVAL, "%s is not part of the running array "
				  "(left out at assembly)", m->path);
	}
}

static int member_fail(struct array *a, const struct md_fail *f)
{
	struct member *m;
	int i, s;

	switch (f->cause) {
	case MD_FAIL_IO:
		if (f->where >= a->geom.raid_disks || !slot_ok(a, f->where))
			return 0;       /* failed already */
		return fail_slot_member(a, f, f->where, member_index(a, a->slot[f->where].m));
	case MD_FAIL_REPLACEMENT:
		m = atomic_load(&a->slot[f->where].repl);
		i = member_index(a, m);
		if (i < 0)
			return 0;
		ulog(array_log(a), URAID_LOG_ERR, "%s: write error on the replacement for slot %u (%s); "
		     "it is failed and the replace stops", m->path, f->where, strerror(-f->err));
		leave_slot(a, (unsigned)i);
		a->member_state[i] = URAID_MEMBER_FAULTY;
		meta_record_change(a);
		return 0;
	case MD_FAIL_REQUEST:
		return fail_on_request(a, f);
	case MD_FAIL_METADATA:
		/* md_error from the superblock write: the caller's update repeats */
		m = a->members[f->where];
		s = a->member_slot[f->where];
		ulog(array_log(a), URAID_LOG_ERR, "%s: %s write failed: %s; marking the member faulty",
		     m->path, f->what, strerror(-f->err));
		a->member_state[f->where] = URAID_MEMBER_FAULTY;
		a->member_pending_slot[f->where] = -1;
		if (s >= 0 && a->slot[s].m == m) {
			a->slot[s].state = URAID_MEMBER_FAULTY;
			slot_changed(a, (unsigned)s);
		}
		meta_recount_degraded(a);
		return 0;
	case MD_FAIL_JOB_TARGET:
		m = a->members[f->where];
		s = a->member_pending_slot[f->where];
		if (a->member_sb[f->where].feature_map & URAID_FEATURE_REPLACEMENT)
			ulog(array_log(a), URAID_LOG_ERR, "%s: write error while replacing slot %d; "
			     "failed", m->path, s);
		else
			ulog(array_log(a), URAID_LOG_ERR, "%s: write error during its rebuild; failed",
			     m->path);
		leave_slot(a, f->where);
		a->member_state[f->where] = URAID_MEMBER_FAULTY;
		meta_recount_degraded(a);
		if (!(a->flags & URAID_ASSEMBLE_READONLY))
			meta_record_change(a);
		return 0;
	}
	return -EINVAL;
}

int md_member_fail(struct array *a, const struct md_fail *f)
{
	int rc = member_fail(a, f);
	if (rc == 0)
		md_notify_change(a);    /* also when nothing changed: cheap, and rare */
	return rc;
}

bool md_fail_slot(struct array *a, unsigned slot, int err)
{
	pthread_mutex_lock(&a->meta_lock);
	int rc = md_member_fail(a, &(struct md_fail){ .cause = MD_FAIL_IO, .where = slot, .err = err });
	bool ok = rc == 0 && array_level_survives(a);
	pthread_mutex_unlock(&a->meta_lock);
	return ok;
}

void md_fail_replacement(struct array *a, unsigned slot, int err)
{
	pthread_mutex_lock(&a->meta_lock);
	md_member_fail(a, &(struct md_fail){ .cause = MD_FAIL_REPLACEMENT, .where = slot, .err = err });
	pthread_mutex_unlock(&a->meta_lock);
}

/* A failure found in a completion, with the metadata worker. */
struct fail_parked {
	struct meta_call call;
	struct array *a;
	unsigned slot;
	int err;
	bool replacement;
	bool survives;
	void (*resume)(void *arg, bool survives);
	void *arg;
};

static int fail_parked_run(struct meta_call *c)
{
	struct fail_parked *f = (struct fail_parked *)((char *)c - offsetof(struct fail_parked, call));

	if (f->replacement) {
		md_fail_replacement(f->a, f->slot, f->err);
		f->survives = true;
	} else {
		f->survives = md_fail_slot(f->a, f->slot, f->err);
	}
	return 0;
}

static void fail_parked_done(struct meta_call *c, int rc)
{
	struct fail_parked *f = (struct fail_parked *)((char *)c - offsetof(struct fail_parked, call));
	void (*resume)(void *arg, bool survives) = f->resume;
	void *arg = f->arg;
	bool survives = f->survives;

	(void)rc;
	free(f);
	resume(arg, survives);
}

static void fail_park(struct array *a, struct reactor *r, unsigned slot, int err, bool repl,
		      void (*resume)(void *arg, bool survives), void *arg)
{
	/* a failure is rare: allocated for it, not kept per I/O */
	struct fail_parked *f = a->e->worker ? malloc(sizeof(*f)) : NULL;

	if (!f) {
		bool ok = true;
		if (repl)
			md_fail_replacement(a, slot, err);
		else
			ok = md_fail_slot(a, slot, err);
		resume(arg, ok);
		return;
	}
	*f = (struct fail_parked){ .a = a, .slot = slot, .err = err, .replacement = repl,
				   .resume = resume, .arg = arg };
	meta_call_submit(a->e, a, &f->call, r, fail_parked_run, fail_parked_done);
}

void md_fail_slot_parked(struct array *a, struct reactor *r, unsigned slot, int err,
			 void (*resume)(void *arg, bool survives), void *arg)
{
	fail_park(a, r, slot, err, false, resume, arg);
}

void md_fail_replacement_parked(struct array *a, struct reactor *r, unsigned slot, int err,
				void (*resume)(void *arg, bool survives), void *arg)
{
	fail_park(a, r, slot, err, true, resume, arg);
}

void md_fail_metadata(struct array *a, unsigned i, int err, const char *what)
{
	md_member_fail(a, &(struct md_fail){ .cause = MD_FAIL_METADATA, .where = i, .err = err,
					     .what = what });
}

/* No meta_lock: it runs on reactors. A member that leaves its slot is
 * retired, not freed, before the array is, so m stays valid. */
void md_read_corrected(struct array *a, unsigned slot)
{
	if (slot >= a->geom.raid_disks)
		return;
	struct member *m = atomic_load(&a->slot[slot].m);
	if (!m)
		return;
	/* into member_sb's cnt_corrected_read at the next update (meta.c) */
	atomic_fetch_add(&m->corrected_unrecorded, 1);
	atomic_fetch_add(&m->corrected_reads, 1);
}

/* ---- joining and leaving ---- */

void md_member_add(struct array *a, struct member *m, const struct uraid_sb *sb,
		   int pending_slot)
{
	unsigned k = a->nmembers;

	m->data_offset = sb->data_offset;
	a->members[k] = m;
	a->member_state[k] = URAID_MEMBER_SPARE;
	a->member_slot[k] = -1;
	a->member_pending_slot[k] = pending_slot;
	a->member_sb[k] = *sb;
	a->nmembers++;
	md_notify_change(a);
}

void md_member_remove(struct array *a, unsigned idx)
{
	struct member *m = a->members[idx];
	int s = a->member_slot[idx];

	if (a->member_state[idx] == URAID_MEMBER_FAULTY && s >= 0 && a->slot[s].m == m) {
		a->slot[s].state = URAID_MEMBER_MISSING;
		a->slot[s].m = NULL;
		slot_changed(a, (unsigned)s);
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
	md_notify_change(a);
}

void md_want_replacement(struct array *a, unsigned idx, int s)
{
	struct uraid_sb *own = &a->member_sb[idx];

	own->feature_map |= URAID_FEATURE_REPLACEMENT | URAID_FEATURE_RECOVERY_OFFSET;
	own->feature_map &= ~(uint32_t)URAID_FEATURE_RECOVERY_BITMAP;
	own->recovery_offset = 0;
	a->member_pending_slot[idx] = s;
	atomic_store(&a->slot[s].repl_rebuilt, 0);
	atomic_store(&a->slot[s].repl, a->members[idx]);
	md_notify_change(a);
}

/* ---- rebuild (recovery) and replacement: the roles the jobs change ---- */

/*
 * Choose what to rebuild: a spare already rebuilding a missing slot (from
 * its recovery_offset, as md resumes), else the first plain spare onto the
 * first missing slot. The spare then holds the slot in dev_roles with
 * feature 0x2 and recovery_offset, as md writes it. meta_lock held.
 */
static int recovery_begin(struct array *a, uint32_t unit, struct md_rebuild *rb)
{
	int pick = -1, slot = -1;
	uint64_t from = 0;

	for (unsigned i = 0; i < a->nmembers && pick < 0; i++) {
		int s = a->member_pending_slot[i];
		if (a->member_state[i] == URAID_MEMBER_SPARE && s >= 0 && a->members[i]->fd >= 0 &&
		    (!a->slot[s].m || (a->slot[s].m == a->members[i] &&
				       a->slot[s].state == URAID_MEMBER_REBUILDING)) &&
		    !(a->member_sb[i].feature_map & URAID_FEATURE_REPLACEMENT)) {
			pick = (int)i;
			slot = s;
			if (a->member_sb[i].feature_map & URAID_FEATURE_RECOVERY_OFFSET)
				from = a->member_sb[i].recovery_offset;
		}
	}
	for (unsigned s = 0; s < a->geom.raid_disks && slot < 0; s++)
		if (!slot_ok(a, s) && a->slot[s].state != URAID_MEMBER_REBUILDING)
			slot = (int)s;
	for (unsigned i = 0; i < a->nmembers && pick < 0 && slot >= 0; i++)
		if (a->member_state[i] == URAID_MEMBER_SPARE && a->member_pending_slot[i] < 0 &&
		    a->members[i]->fd >= 0 && a->member_sb[i].data_size >= a->geom.dev_sectors)
			pick = (int)i;
	if (pick < 0 || slot < 0)
		return -ENOENT;
	struct member *m = a->members[pick];
	struct uraid_sb *own = &a->member_sb[pick];
	/* a re-added member (0x80): only chunks the bitmap marks are rebuilt
	   (every level with background work: RAID 1, 4, 5, 6, 10) */
	rb->bitmap_guided = (own->feature_map & URAID_FEATURE_RECOVERY_BITMAP) && a->wib;
	if (!rb->bitmap_guided)
		own->feature_map &= ~(uint32_t)URAID_FEATURE_RECOVERY_BITMAP;
	from -= from % unit;
	a->member_pending_slot[pick] = slot;
	own->feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
	own->recovery_offset = from;
	if (a->slot[slot].m == NULL || a->slot[slot].state != URAID_MEMBER_IN_SYNC) {
		atomic_store(&a->slot[slot].rebuilt, from);
		a->slot[slot].dev_number = own->dev_number;
		a->slot[slot].state = URAID_MEMBER_REBUILDING;
		a->slot[slot].m = m;
		slot_changed(a, (unsigned)slot);
	}
	rb->slot = slot;
	rb->target = m;
	rb->from = from;
	ulog(array_log(a), URAID_LOG_NOTICE, "%s: rebuilding slot %d onto it, from member sector %llu%s",
		m->path, slot, (unsigned long long)from,
		rb->bitmap_guided ? ", where the bitmap marks writes" : "");
	meta_record_change(a);
	md_notify_change(a);
	return 0;
}

int md_recovery_begin(struct array *a, uint32_t unit, struct md_rebuild *rb)
{
	pthread_mutex_lock(&a->meta_lock);
	int rc = recovery_begin(a, unit, rb);
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

/* Member i, rebuilt or copied whole, holds slot s from now on (its 0x2, 0x80, 0x10 go). */
static void take_slot(struct array *a, unsigned i, int s)
{
	/* its PPL area emptied before it is in sync (md's ppl_modify_log) */
	ppl_member_joins(a, (unsigned)s, a->members[i]);
	a->member_state[i] = URAID_MEMBER_IN_SYNC;
	a->member_slot[i] = s;
	a->member_pending_slot[i] = -1;
	a->member_sb[i].feature_map &= ~(uint32_t)(URAID_FEATURE_RECOVERY_OFFSET |
						   URAID_FEATURE_RECOVERY_BITMAP |
						   URAID_FEATURE_REPLACEMENT);
	a->member_sb[i].recovery_offset = 0;
	a->slot[s].m = a->members[i];
	slot_changed(a, (unsigned)s);
	a->slot[s].dev_number = a->member_sb[i].dev_number;
}

/* A write to the job's target failed: it fails (leaving its slot). meta_lock held. */
static void target_failed(struct array *a, unsigned i)
{
	md_member_fail(a, &(struct md_fail){ .cause = MD_FAIL_JOB_TARGET, .where = i });
}

/* The rebuild stopped (where recovery_offset says) or finished (the slot is in sync). */
void md_recovery_end(struct array *a, const struct md_rebuild *rb, uint64_t pos,
		     enum md_rebuild_end how)
{
	pthread_mutex_lock(&a->meta_lock);
	int i = member_index(a, rb->target);
	int s = rb->slot;

	/* failed meanwhile (uraid fail): detached already */
	if (i < 0 || a->member_state[i] == URAID_MEMBER_FAULTY)
		goto out;
	if (how == MD_REBUILD_TARGET_FAILED) {
		a->member_sb[i].recovery_offset = pos;
		target_failed(a, (unsigned)i);
		goto out;
	}
	if (how == MD_REBUILD_DONE) {
		take_slot(a, (unsigned)i, s);
		a->slot[s].state = URAID_MEMBER_IN_SYNC;
		slot_changed(a, (unsigned)s);
	} else {
		/*
		 * Stopped: the spare keeps its slot as REBUILDING, so that writes
		 * to the rows it holds (below `rebuilt`) keep reaching it until a
		 * rebuild goes on from recovery_offset (md keeps the rdev too).
		 */
		a->member_sb[i].recovery_offset = pos;
	}
	meta_recount_degraded(a);
	if (!(a->flags & URAID_ASSEMBLE_READONLY))
		meta_record_change(a);
out:
	md_notify_change(a);
	pthread_mutex_unlock(&a->meta_lock);
}

/* The spare waiting to replace an in-sync slot's member, or -1. meta_lock held. */
static int pending_replacement(const struct array *a)
{
	for (unsigned i = 0; i < a->nmembers; i++) {
		int s = a->member_pending_slot[i];
		if (a->member_state[i] == URAID_MEMBER_SPARE && s >= 0 && a->members[i]->fd >= 0 &&
		    (a->member_sb[i].feature_map & URAID_FEATURE_REPLACEMENT) && slot_ok(a, (unsigned)s))
			return (int)i;
	}
	return -1;
}

bool md_replace_waiting(struct array *a)
{
	pthread_mutex_lock(&a->meta_lock);
	bool repl = pending_replacement(a) >= 0;
	pthread_mutex_unlock(&a->meta_lock);
	return repl;
}

bool md_spare_waiting(struct array *a)
{
	bool spare = false;

	pthread_mutex_lock(&a->meta_lock);
	for (unsigned i = 0; i < a->nmembers && !spare; i++)
		spare = a->member_state[i] == URAID_MEMBER_SPARE && a->members[i]->fd >= 0 &&
			!(a->member_sb[i].feature_map & URAID_FEATURE_REPLACEMENT) &&
			a->member_sb[i].data_size >= a->geom.dev_sectors;
	pthread_mutex_unlock(&a->meta_lock);
	return spare;
}

/*
 * A resync or repair is about to rewrite redundancy on the slots' members
 * only: a replacement waiting with part of its copy made would keep the old
 * copy of what they rewrite, so its copy starts again from the beginning.
 * The superblocks say so before client writes stop reaching the rows it
 * held: after a crash in between, a restart must not take the old offset
 * for a copy that missed those writes.
 */
void md_replace_restart(struct array *a)
{
	bool any = false;

	pthread_mutex_lock(&a->meta_lock);
	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		struct member *r = atomic_load(&a->slot[s].repl);
		int i = r ? member_index(a, r) : -1;
		if (i < 0 || !atomic_load(&a->slot[s].repl_rebuilt))
			continue;
		a->member_sb[i].recovery_offset = 0;
		any = true;
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: its copy of slot %u starts again (redundancy is "
			"rewritten)", r->path, s);
	}
	if (any) {
		meta_record_change(a);
		for (unsigned s = 0; s < a->geom.raid_disks; s++)
			if (atomic_load(&a->slot[s].repl))
				atomic_store(&a->slot[s].repl_rebuilt, 0);
	}
	pthread_mutex_unlock(&a->meta_lock);
}

int md_replace_begin(struct array *a, uint32_t unit, uint64_t end, struct md_rebuild *rb)
{
	pthread_mutex_lock(&a->meta_lock);
	int i = pending_replacement(a);

	if (i < 0) {
		pthread_mutex_unlock(&a->meta_lock);
		return -ENOENT;
	}
	struct uraid_sb *own = &a->member_sb[i];
	int slot = a->member_pending_slot[i];
	uint64_t from = own->feature_map & URAID_FEATURE_RECOVERY_OFFSET ? own->recovery_offset : 0;
	from -= from % unit;
	if (from > end)
		from = end;
	own->feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
	own->recovery_offset = from;
	atomic_store(&a->slot[slot].repl_rebuilt, from);
	atomic_store(&a->slot[slot].repl, a->members[i]);
	rb->slot = slot;
	rb->target = a->members[i];
	rb->from = from;
	rb->bitmap_guided = false;
	ulog(array_log(a), URAID_LOG_NOTICE, "%s: replacing %s in slot %d, from member sector %llu",
		rb->target->path, a->slot[slot].m->path, slot, (unsigned long long)from);
	meta_record_change(a);
	md_notify_change(a);
	pthread_mutex_unlock(&a->meta_lock);
	return 0;
}

/*
 * The copy is over: the replacement takes the slot and the member it
 * replaced is faulty (md marks it so; `uraid remove` takes it out). Stopped:
 * the replacement stays attached (writes keep reaching the rows it holds)
 * with its recovery_offset; failed: it is faulty and the slot keeps its member.
 */
void md_replace_end(struct array *a, const struct md_rebuild *rb, uint64_t pos,
		    enum md_rebuild_end how)
{
	pthread_mutex_lock(&a->meta_lock);
	int i = member_index(a, rb->target);
	int s = rb->slot;

	if (i < 0 || a->member_state[i] == URAID_MEMBER_FAULTY)
		goto out;
	/* its member failed meanwhile and it became the slot's rebuild (RAID 4/5/6) */
	if (a->level->writes_skip_failed_slot && a->slot[s].m == rb->target)
		goto out;
	if (how == MD_REBUILD_DONE && atomic_load(&a->slot[s].repl) == rb->target) {
		struct member *old = a->slot[s].m;
		int o = member_index(a, old);
		/* the slot's member first: a writer that still sees the old one
		   also sees the replacement, and writes it too */
		take_slot(a, (unsigned)i, s);
		atomic_store(&a->slot[s].repl, NULL);
		/*
		 * The member replaced may have failed (or been removed) during the
		 * copy. RAID 1/10 kept writing the replacement's copied part anyway
		 * and copied the rest from the other mirrors, so it holds the slot
		 * whole (md moves such a replacement into the slot too). RAID 4/5/6
		 * skip a failed slot's writes, the replacement's with them: there
		 * the slot stays as it was.
		 */
		if (!a->level->writes_skip_failed_slot)
			a->slot[s].state = URAID_MEMBER_IN_SYNC;
		if (o >= 0) {
			a->member_state[o] = URAID_MEMBER_FAULTY;
			a->member_slot[o] = -1;
		}
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: replaced by %s in slot %d; it is faulty now "
			"(uraid remove takes it out)", old ? old->path : "?", rb->target->path, s);
	} else if (how == MD_REBUILD_TARGET_FAILED) {
		target_failed(a, (unsigned)i);
		goto out;
	} else {
		a->member_sb[i].recovery_offset = pos;
	}
	meta_recount_degraded(a);
	if (!(a->flags & URAID_ASSEMBLE_READONLY))
		meta_record_change(a);
out:
	md_notify_change(a);
	pthread_mutex_unlock(&a->meta_lock);
}

void md_rebuild_checkpoint(struct array *a, const struct member *target, uint64_t at)
{
	pthread_mutex_lock(&a->meta_lock);
	int i = member_index(a, target);
	if (i >= 0) {
		a->member_sb[i].recovery_offset = at;
		meta_write_all(a);
	}
	pthread_mutex_unlock(&a->meta_lock);
}

void md_attach_pending(struct array *a, uint32_t unit)
{
	pthread_mutex_lock(&a->meta_lock);
	for (unsigned i = 0; i < a->nmembers; i++) {
		int s = a->member_pending_slot[i];
		const struct uraid_sb *own = &a->member_sb[i];
		if (a->member_state[i] != URAID_MEMBER_SPARE || s < 0 || a->members[i]->fd < 0)
			continue;
		uint64_t from = own->feature_map & URAID_FEATURE_RECOVERY_OFFSET ? own->recovery_offset
										 : 0;
		from -= from % unit;   /* where the job will start */
		if ((own->feature_map & URAID_FEATURE_REPLACEMENT) && !a->slot[s].m) {
			/* the member it was replacing is gone: it is the slot's rebuild
			   now (md moves such a replacement into the slot too) */
			a->member_sb[i].feature_map &= ~(uint32_t)URAID_FEATURE_REPLACEMENT;
		}
		if (a->member_sb[i].feature_map & URAID_FEATURE_REPLACEMENT) {
			if (!slot_ok(a, (unsigned)s) || atomic_load(&a->slot[s].repl))
				continue;
			atomic_store(&a->slot[s].repl_rebuilt, from);
			atomic_store(&a->slot[s].repl, a->members[i]);
		} else if (!a->slot[s].m) {
			atomic_store(&a->slot[s].rebuilt, from);
			a->slot[s].dev_number = own->dev_number;
			a->slot[s].state = URAID_MEMBER_REBUILDING;
			a->slot[s].m = a->members[i];
			slot_changed(a, (unsigned)s);
		}
	}
	pthread_mutex_unlock(&a->meta_lock);
}
