/* SPDX-License-Identifier: MIT */
/*
 * Row locks (raid5_rowlock.c): at most one holder per row number at a time,
 * across reactors, with no global lock and nothing allocated per lock.
 *
 * Generic: the table knows row numbers, reactors and the callback each
 * owner registers, nothing of what a row is used for. Its users are the
 * RAID 4/5/6 I/O (raid5_piece.c takes a row for a piece; raid5_gather.c
 * takes write pieces out of a queue) and the RAID 4/5/6 background jobs
 * (jobs/sync_raid5.c), so that writes, degraded reads, read repairs and
 * resync/rebuild of one stripe row never overlap in time.
 */
#ifndef URAID_ENGINE_RAID5_ROWLOCK_H
#define URAID_ENGINE_RAID5_ROWLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "io/reactor.h"

/*
 * One holder of, or waiter for, one row. The owner embeds it in the state of
 * the operation that needs the row. While held, the entry is in its bucket's
 * list and carries the FIFO queue of its waiters; on release the first
 * waiter becomes the holder (hand-over, so no one can jump the queue) and
 * its msg is posted to its reactor: msg.fn is the owner's "granted"
 * callback, set before rowlock_acquire. Owners may tell their own waiters
 * from others' by msg.fn (raid5_piece.c does).
 */
struct rowlock {
	uint64_t row;
	struct rowlock *next;                   /* bucket list, or waiter queue */
	/* waiters, while held (wait_head also read without the mutex, atomically) */
	struct rowlock *wait_head, *wait_tail;
	struct reactor *r;                      /* where msg runs when granted */
	struct reactor_msg msg;                 /* msg.fn set by the owner */
};

struct rowlock_bucket;

struct rowlock_table {
	struct rowlock_bucket *b;
	uint32_t mask;                          /* buckets - 1 (a power of two) */
};

/* nbuckets is rounded up to a power of two. 0 or -ENOMEM. */
int rowlock_table_init(struct rowlock_table *t, unsigned nbuckets);
void rowlock_table_fini(struct rowlock_table *t);

/*
 * Take row for lk. Returns true when the lock is held on return (lk->msg is
 * not used); false when lk was queued: lk->msg.fn then runs on r (through
 * reactor_post) once lk holds the row. lk->msg.fn must be set before.
 */
bool rowlock_acquire(struct rowlock_table *t, struct rowlock *lk, uint64_t row,
		     struct reactor *r);
/* Release a held lk; hands the row to the first waiter, if any. */
void rowlock_release(struct rowlock_table *t, struct rowlock *lk);
/*
 * Remove from the queue of the held lk its first waiters, as long as
 * take(w, arg) says yes (called under the bucket's mutex: it may only read
 * what the waiter set before it queued). Returns them in FIFO order chained
 * through ->next (NULL: none); *more tells whether waiters are left. The
 * removed ones are never granted: the caller now owns them.
 */
struct rowlock *rowlock_take_waiters(struct rowlock_table *t, struct rowlock *lk,
				     bool (*take)(struct rowlock *w, void *arg), void *arg,
				     bool *more);

#endif
