/* SPDX-License-Identifier: MIT */
/*
 * The members' state machine (md's rdev states and roles): every change of
 * a member's state or role goes through here, under the array's meta_lock,
 * which this file owns (functions that take it say so; the others want it
 * held). A member fails for one of a few causes, with one set of rules:
 * md's last-copy rule, a replacement taking over a slot whose member
 * failed, the degraded count, and the change recorded in every superblock
 * (events+1, role 0xfffe, bitmap header first: meta.c).
 *
 * The background jobs (jobs/sync.c) ask for the role changes of a rebuild
 * (a spare takes a missing slot: recovery) and of a replacement (a spare
 * copies an in-sync member, then takes its slot) at their start, at their
 * checkpoints and at their end; the state lives here, the runner there.
 *
 *   spare --md_recovery_begin--> rebuilding (pending slot, 0x2)
 *         --md_recovery_end(done)--> in sync
 *   spare --uraid replace--> replacement (pending slot, 0x10)
 *         --md_replace_end(done)--> in sync; the member replaced: faulty
 *   in sync / spare --fail (I/O error, request, metadata)--> faulty
 *   faulty --uraid remove--> gone (manage.c)
 */
#ifndef URAID_ENGINE_MD_MEMBER_STATE_H
#define URAID_ENGINE_MD_MEMBER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct array;
struct reactor;
struct member;
struct uraid_sb;

/* Why a member fails; `where` in struct md_fail says which one. */
enum md_fail_cause {
	MD_FAIL_IO,             /* an I/O error on the member of slot `where` */
	MD_FAIL_REPLACEMENT,    /* a write error on the replacement of slot `where` */
	MD_FAIL_REQUEST,        /* uraid fail (mdadm --fail) of member index `where` */
	MD_FAIL_METADATA,       /* a superblock or bitmap write to member index `where` */
	MD_FAIL_JOB_TARGET,     /* a write to the member a rebuild or a replace fills
				   (member index `where`) */
};

struct md_fail {
	enum md_fail_cause cause;
	unsigned where;         /* a slot (IO, REPLACEMENT) or a member index */
	int err;                /* -errno of the failed I/O (IO, REPLACEMENT, METADATA) */
	const char *what;       /* METADATA: which write ("superblock", "bitmap") */
	uint32_t flags;         /* REQUEST: URAID_FAIL_FORCE */
	char *msg;              /* REQUEST: one line saying why it was refused */
	size_t msglen;
};

/*
 * Fail a member, as md_error does. meta_lock held. 0: failed, or nothing
 * to fail (failed already); -EBUSY: refused (the last working copy of a
 * linear, RAID 0/1/10 slot, or without URAID_FAIL_FORCE on request, a failure the
 * array would not survive); -EINVAL: not a member that can fail (request);
 * on request also the superblock update's error. A METADATA failure is not
 * recorded here: the superblock update that failed repeats itself.
 */
int md_member_fail(struct array *a, const struct md_fail *f);

/*
 * I/O error on the member of `slot` (a level's completion): takes
 * meta_lock. True when the array survives (redundancy covered the I/O),
 * false when the level cannot go on (EIO).
 */
bool md_fail_slot(struct array *a, unsigned slot, int err);
/*
 * md_fail_slot / md_fail_replacement for a completion on reactor r that
 * must not go on before the superblocks record the failure (md blocks the
 * request until then), without blocking r: the failure is recorded on the
 * metadata worker and resume(arg, survives) runs on r from a later poll
 * (for a replacement, survives is true). The I/O's owner stays unfinished
 * meanwhile (close drains it). An engine without a worker (caller-driven),
 * or out of memory: recorded here and now, resume called at once.
 */
void md_fail_slot_parked(struct array *a, struct reactor *r, unsigned slot, int err,
			 void (*resume)(void *arg, bool survives), void *arg);
void md_fail_replacement_parked(struct array *a, struct reactor *r, unsigned slot, int err,
				void (*resume)(void *arg, bool survives), void *arg);
/* A write to the slot's replacement failed: it is failed and the replace
 * stops; the slot's own member goes on (md_error on the rrdev). Takes meta_lock. */
void md_fail_replacement(struct array *a, unsigned slot, int err);
/* A metadata write to member i failed (meta.c, wib.c). meta_lock held. */
void md_fail_metadata(struct array *a, unsigned i, int err, const char *what);
/* A read error was answered from redundancy and rewritten: counted as md
 * does (cnt_corrected_read, written at the next update). Lock-free. */
void md_read_corrected(struct array *a, unsigned slot);

/* ---- joining and leaving (manage.c, meta_lock held) ---- */

/* Member m joins as a spare with its own superblock sb: a new one
 * (pending_slot -1), or a re-added one waiting for its old slot. */
void md_member_add(struct array *a, struct member *m, const struct uraid_sb *sb,
		   int pending_slot);
/* Member idx (faulty, stale or a plain spare) leaves: its slot is empty,
 * the member kept for close (a->retired), the ones after it move down. */
void md_member_remove(struct array *a, unsigned idx);
/* md's want_replacement: spare idx holds slot s as its replacement, its
 * copy to be made from 0 (feature 0x10 and 0x2). */
void md_want_replacement(struct array *a, unsigned idx, int s);

/* ---- the roles the background jobs change (each takes meta_lock) ---- */

/* The slot a job fills and the member it fills it onto. */
struct md_rebuild {
	int slot;
	struct member *target;
	uint64_t from;          /* where the job starts (member sectors) */
	bool bitmap_guided;     /* re-add: only the chunks the bitmap marks */
};

/* How a rebuild or a replace ended. */
enum md_rebuild_end {
	MD_REBUILD_DONE,        /* the whole slot is on the target */
	MD_REBUILD_STOPPED,     /* stopped or failed elsewhere: it keeps its offset */
	MD_REBUILD_TARGET_FAILED,       /* a write to the target failed: it fails */
};

/*
 * A recovery starts: a spare already rebuilding a missing slot goes on
 * from its recovery_offset (rounded down to `unit`), else the first plain
 * spare takes the first missing slot. Recorded in the superblocks
 * (feature 0x2, recovery_offset). 0, or -ENOENT.
 */
int md_recovery_begin(struct array *a, uint32_t unit, struct md_rebuild *rb);
/* The recovery ended at member sector `pos`. */
void md_recovery_end(struct array *a, const struct md_rebuild *rb, uint64_t pos,
		     enum md_rebuild_end how);
/* A replacement's copy starts (or goes on from its recovery_offset, rounded
 * down to `unit`, at most `end`). 0, or -ENOENT when none waits. */
int md_replace_begin(struct array *a, uint32_t unit, uint64_t end, struct md_rebuild *rb);
/* The copy ended at `pos`: done, the replacement takes the slot and the
 * member it replaced is faulty. */
void md_replace_end(struct array *a, const struct md_rebuild *rb, uint64_t pos,
		    enum md_rebuild_end how);
/* A resync or a repair is about to rewrite redundancy: a replacement's
 * copy made so far starts again from 0. */
void md_replace_restart(struct array *a);
/* The rebuilt part survives a crash: the target's recovery_offset is `at`
 * in every superblock now (md_do_sync's checkpoint). */
void md_rebuild_checkpoint(struct array *a, const struct member *target, uint64_t at);
/* After assembly, before any write: members part-way through a rebuild or a
 * replacement back on their slots (positions rounded down to `unit`). */
void md_attach_pending(struct array *a, uint32_t unit);
/* Is a replacement waiting to copy its slot? Is a spare there for a rebuild? */
bool md_replace_waiting(struct array *a);
bool md_spare_waiting(struct array *a);

/*
 * Tell the engine's owner that a member's state or a background job
 * changed (uraid_engine_opts.changed): a cheap call that never blocks, made
 * after every change this file makes and at a job's start and end
 * (jobs/sync.c). Any lock may be held.
 */
void md_notify_change(struct array *a);

#endif
