/* SPDX-License-Identifier: MIT */
/*
 * Background work on an array (md's sync thread): resync (redundancy
 * recomputed from data after an unclean stop), check (count mismatches, as
 * md's mismatch_cnt), repair (rewrite redundancy where it does not match) and
 * recovery (rebuild a missing slot onto a spare, recovery_offset on disk).
 * One job per array at a time, run unit by unit (a stripe row for RAID
 * 4/5/6), interleaved with foreground I/O: each unit takes the row's stripe
 * lock (RAID 4/5/6) so that no write changes it meanwhile. A level may run
 * several units at once, each in a lane of its own (RAID 4/5/6: one lane per
 * reactor); units then end in any order, and the job's position (what
 * recovery_offset and resync_offset record) moves over them in order.
 *
 * Throttling as md's speed_limit_min/max: while foreground I/O is in flight
 * the job holds to the minimum rate; when the array is idle it goes up to
 * the maximum. Positions are member sectors from data_offset (md's
 * resync_offset and curr_resync are in the same unit).
 */
#ifndef URAID_ENGINE_SYNC_H
#define URAID_ENGINE_SYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uraid/engine.h>

#include "engine/core/array.h"
#include "io/member.h"
#include "io/reactor.h"

struct array;
struct sync_job;

#define SYNC_MAX_LANES 8u       /* units of one job in progress at once, at most */
#define SYNC_WINDOW    16u      /* units from the job's position to the next one handed out */

/* A unit handed to the level: [pos, pos + n) in the job's positions. */
struct sync_unit {
	uint64_t pos;
	uint32_t n;
	unsigned slot;                  /* its place in the window: the level's per-unit state */
	unsigned lane;                  /* the lane that runs it */
	/* set by the level before sync_unit_done */
	bool skipped;                   /* passed over (clean in the bitmap): no I/O */
	bool target_failed;             /* the error was a write to the member being rebuilt */
	/* sync.c's, under the job's lock */
	bool to_level;                  /* handed to the level (not passed over by sync.c) */
	bool done;
	int res;
};

/* A lane: runs one unit at a time on its reactor. */
struct sync_lane {
	struct sync_job *j;
	unsigned idx, ridx;
	struct reactor *r;
	bool busy;                      /* a unit or a pause in progress (job's lock) */
	unsigned nested;                /* units passed over since the reactor's loop */
	struct io_op timer_op;
	struct __kernel_timespec timer_ts;
	struct reactor_msg msg;
};

/* The level's part: runs units; calls sync_unit_done when each is over. */
struct sync_level {
	/* sectors of one unit (per member) */
	uint32_t (*unit_sectors)(const struct array *a);
	/* 0, or -errno with a reason when the level cannot run this kind now */
	int (*can_run)(const struct array *a, enum uraid_sync_kind kind, char *err, size_t errlen);
	/* lanes wanted (NULL: one); called before job_init */
	unsigned (*lanes)(const struct sync_job *j);
	/* run unit u, on the reactor of lane u->lane */
	void (*unit)(struct sync_job *j, struct sync_unit *u);
	/*
	 * NULL, or: unit u is over and the job's position passes it (committed,
	 * in order: a rebuild's point moves over it here, and the unit lets
	 * writes in), or the job ended before it could (not committed: an error
	 * or a stop below it). Called once per unit handed out, under the job's
	 * lock, on any reactor.
	 */
	void (*unit_release)(struct sync_job *j, struct sync_unit *u, bool committed);
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
	struct reactor *r;              /* lane 0's reactor */
	unsigned ridx;
	/* pos: every unit below it is over (a level with one lane may read it as
	   its unit's position); end: where the job ends. Member sectors. */
	uint64_t pos, end;
	uint32_t unit;                  /* sectors per unit */
	int result;
	/* the lanes and the units handed out, [pos, next) */
	pthread_mutex_t lock;
	uint64_t next;
	struct sync_unit win[SYNC_WINDOW];
	struct sync_lane lane[SYNC_MAX_LANES];
	unsigned nlanes, lanes_busy;
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
	uint64_t last_checkpoint_ns;
	bool checkpointing;             /* a checkpoint is with the metadata worker */
	uint64_t checkpoint_at;         /* the position it records */
	struct meta_call checkpoint;    /* the checkpoint's write, on the worker */
	struct meta_call end_call;      /* job_end, on the worker after any checkpoint */
	int io_error;                   /* the first unit's error (0: none) */
	unsigned degraded_at_start;     /* more later: a member failed during the job */
	bool partial;                   /* a check or repair of a range, not the whole */
	/* recovery: the slot rebuilt and the spare it goes onto */
	int target_slot;
	struct member *target;
	bool target_failed;             /* the error was a write to the target */
	bool bitmap_guided;             /* re-add: only chunks with bits set are rebuilt */
	void *priv;                     /* the level's per-job state */
};

/* The levels' hooks (sync_raid5.c: RAID 4/5/6, sync_mirror.c: RAID 1 and 10),
 * named by their descriptors (level/level.h). */
extern const struct sync_level sync_raid5_level;
extern const struct sync_level sync_mirror_level;
/* A reshape's steps (reshape.c), whatever the level (RAID 4/5/6). */
extern const struct sync_level sync_reshape_level;
/*
 * A reshape's start in two parts (reshape_start.c), for grow's takeover
 * that leads to a restripe (md/grow.c): with the array already frozen by
 * the caller, who applied the takeover in memory only, everything up to
 * the superblocks (takeover and reshape fields in one update, so that a
 * kill -9 leaves either the old array or the reshape, never the takeover
 * alone); then, after the caller's thaw, the job. 0 or -errno.
 */
int reshape_start_frozen(struct array *a, const struct uraid_reshape *r, char *err,
			 size_t errlen);
int reshape_start_job(struct array *a, char *err, size_t errlen);

/* Called by the level when unit u is over (res 0 or -errno), on its lane's
 * reactor, as the last thing it does with the unit. */
void sync_unit_done(struct sync_job *j, struct sync_unit *u, int res);

/* A unit's pass through the write gate (embedded in the level's unit state). */
struct sync_gate {
	struct array_gate_wait wait;
	struct sync_job *j;
	void (*go)(struct sync_gate *g, int rc);
	bool held;                      /* sync_gate_leave is owed */
};
/*
 * Before a unit rewrites redundancy, on reactor ridx: the array is marked
 * active first, except under a resync. go(g, 0) (g->held) or go(g, -errno)
 * then runs on ridx: at once, or from a later poll when the marking is left
 * to the metadata worker. sync_gate_leave does nothing unless *held.
 */
void sync_gate_enter(struct sync_job *j, unsigned ridx, struct sync_gate *g,
		     void (*go)(struct sync_gate *g, int rc));
void sync_gate_leave(struct sync_job *j, unsigned ridx, bool *held);

/* After assembly, before any write: members part-way through a rebuild or
 * a replacement back on their slots, and the automatic start of jobs
 * (auto_recover.c) from the engine's tick, for an array that can be written. */
void sync_attach_pending(struct array *a);
/*
 * A job over positions [from, to) (to 0: to the end), from rounded down to
 * a unit; one start at a time. 0, or -errno with the reason in err
 * (-EBUSY: a job runs).
 */
int sync_start(struct array *a, enum uraid_sync_kind kind, uint64_t from, uint64_t to,
	       char *err, size_t errlen);
/* The job that ended is freed by whoever looks next (status, start, stop). */
void sync_reap(struct array *a);
/* -EBUSY with the running job's name in err while one runs (one that
 * ended is reaped first); else 0. */
int sync_refuse_if_running(struct array *a, char *err, size_t errlen);
/* Where a resync starts: the checkpoint of one that is needed, else 0. */
uint64_t sync_resync_from(struct array *a);
/* Units of the running job handed out and not yet over (a freeze waits
 * for none; lanes hand out no new one while the array is frozen). */
bool sync_units_in_progress(struct array *a);
/* Cancel the running job and wait until it has stopped (close). */
void sync_stop_wait(struct array *a);

#endif
