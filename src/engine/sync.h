/* SPDX-License-Identifier: MIT */
/*
 * Background work on an array (md's sync thread): resync (redundancy
 * recomputed from data after an unclean stop), check (count mismatches, as
 * md's mismatch_cnt), repair (rewrite redundancy where it does not match) and
 * recovery (rebuild a missing slot onto a spare, recovery_offset on disk).
 * One job per array at a time, run unit by unit (a stripe row for RAID
 * 4/5/6) on one reactor, interleaved
 * with foreground I/O: each unit takes the row's stripe lock (RAID 4/5/6)
 * so that no write changes it meanwhile.
 *
 * Throttling as md's speed_limit_min/max: while foreground I/O is in flight
 * the job holds to the minimum rate; when the array is idle it goes up to
 * the maximum. Positions are member sectors from data_offset (md's
 * resync_offset and curr_resync are in the same unit).
 */
#ifndef URAID_ENGINE_SYNC_H
#define URAID_ENGINE_SYNC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uraid/engine.h>

#include "io/member.h"
#include "io/reactor.h"

struct array;
struct sync_job;

/* The level's part: one unit at job->pos; calls sync_unit_done when over. */
struct sync_level {
	/* sectors of one unit (per member) */
	uint32_t (*unit_sectors)(const struct array *a);
	/* 0, or -errno with a reason when the level cannot run this kind now */
	int (*can_run)(const struct array *a, enum uraid_sync_kind kind, char *err, size_t errlen);
	void (*unit)(struct sync_job *j);
	/* per-job state: allocated at start, freed at the end */
	int (*job_init)(struct sync_job *j);
	void (*job_fini)(struct sync_job *j);
	/* the write-intent bitmap's sync range covered by units at [pos, pos+n)
	 * (member sectors for RAID 1/4/5/6, array sectors for RAID 10, §2.3);
	 * NULL: the same numbers */
	void (*bitmap_range)(const struct array *a, uint64_t pos, uint64_t n, uint64_t *lo,
			     uint64_t *hi);
};

struct sync_job {
	struct array *a;
	const struct sync_level *lv;
	enum uraid_sync_kind kind;
	struct reactor *r;
	unsigned ridx;
	uint64_t pos, end;              /* member sectors */
	uint32_t unit;                  /* sectors per unit */
	int result;
	_Atomic bool cancel;
	_Atomic bool finished;
	/* progress, read by status from any thread */
	_Atomic uint64_t done_sectors;
	_Atomic uint64_t skipped_sectors;  /* resync: clean by the bitmap, not visited */
	_Atomic uint64_t mismatch_sectors;
	_Atomic uint64_t rate_bps;
	/* throttling */
	uint64_t t_start_ns, window_ns, window_bytes;
	uint64_t busy_until_ns;         /* clients count as busy until then */
	uint64_t fg_started;            /* array_foreground_started at the last look */
	bool was_busy;
	struct io_op timer_op;
	struct __kernel_timespec timer_ts;
	uint64_t last_checkpoint_ns;
	/* messages to the job's reactor */
	struct reactor_msg start_msg;
	int io_error;                   /* the unit's error, set by the level (0: none) */
	/* recovery: the slot rebuilt and the spare it goes onto */
	int target_slot;
	struct member *target;
	bool target_failed;             /* the error was a write to the target */
	bool bitmap_guided;             /* re-add: only chunks with bits set are rebuilt */
	bool unit_skipped;              /* the level passed over this unit (bitmap) */
	unsigned nested;                /* units passed over since the reactor's loop */
	void *priv;                     /* the level's per-job state */
};

/* The levels' hooks (sync_raid5.c, sync_mirror.c: RAID 1 and 10). */
extern const struct sync_level sync_raid5_level;
extern const struct sync_level sync_mirror_level;

/* Called by the level when the unit at j->pos is over (res 0 or -errno). */
void sync_unit_done(struct sync_job *j, int res);

/*
 * The member of a slot with a replacement failed (RAID 4/5/6, whose writes
 * skip a failed slot): the replacement becomes the slot's member being
 * rebuilt, from where its copy got, and a rebuild from the others finishes
 * it. Call after marking the slot faulty; meta_lock held.
 */
void sync_replacement_takes_over(struct array *a, unsigned slot);
/* Member m left (failed): a job rebuilding onto it stops. meta_lock held. */
void sync_target_gone(struct array *a, const struct member *m);
/* Members part-way through a rebuild or a replacement back on their slots
 * (after assembly, before any write). */
void sync_attach_pending(struct array *a);
/* Start a recovery when a slot is missing and a spare is there, or a
 * replacement that waits (engine_tick). */
void sync_auto_recover(struct array *a);
/* Cancel the running job and wait until it has stopped (close). */
void sync_stop_wait(struct array *a);

#endif
