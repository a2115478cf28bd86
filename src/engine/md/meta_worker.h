/* SPDX-License-Identifier: MIT */
/*
 * The metadata worker: the engine's one thread that writes superblocks and
 * bitmap pages, so that no reactor thread ever makes a blocking system call
 * or waits for meta_lock while it is held across one. See meta_worker.c for
 * why and how.
 *
 * A write that needs a metadata update first (the first after an idle spell
 * marks the array active; the first to a clean bitmap chunk sets its bit)
 * waits in a meta_batch of its own reactor. The reactor hands the batch to
 * the worker once per poll round; the worker runs the batch's update under
 * meta_lock and posts the batch back; every waiter resumes on its reactor
 * with the update's result. Waiters that arrive while an update is under
 * way wait for the next one, so each waiter's update starts after it came.
 */
#ifndef URAID_ENGINE_META_WORKER_H
#define URAID_ENGINE_META_WORKER_H

#include <stdbool.h>

#include "io/reactor.h"

struct uraid_engine;
struct meta_worker;

/* Embedded in whatever waits (a request, a bitmap waiter). */
struct meta_wait {
	struct meta_wait *next;
};

/* A job for the worker (internal to meta_worker.c; embedded in the batch). */
struct meta_job {
	void (*run)(struct meta_job *j);
	struct meta_job *next;
	void *owner;                    /* the array whose work it is (meta_worker_help) */
};

struct meta_batch;
/* On the worker (or, caller-driven, on the reactor's thread): the update
 * that every waiter in `list` needs. May take meta_lock and write. 0 or -errno. */
typedef int (*meta_update_fn)(struct meta_batch *b, struct meta_wait *list);
/* On the batch's reactor: one waiter goes on with the update's result. */
typedef void (*meta_resume_fn)(struct meta_batch *b, struct meta_wait *wt, int rc);

/* One reactor's writes waiting for one kind of update of one array. */
struct meta_batch {
	struct uraid_engine *e;
	struct reactor *r;
	void *owner;                    /* the array */
	meta_update_fn update;
	meta_resume_fn resume;
	struct meta_wait *head, *tail;  /* r's thread only: waiting for the next update */
	struct meta_wait *sent;         /* the worker's from kick to reply */
	bool busy;                      /* r's thread only: a kick or an update is under way */
	int rc;                         /* the update's result, for the reply */
	struct reactor_msg kick;        /* posted to r: hand the waiters to the worker */
	struct reactor_msg reply;       /* posted to r by the worker: resume them */
	struct meta_job job;
} __attribute__((aligned(64)));

void meta_batch_init(struct meta_batch *b, struct uraid_engine *e, struct reactor *r,
		     void *owner, meta_update_fn update, meta_resume_fn resume);
/*
 * On b->r's thread: is nothing of this reactor waiting for b or under way
 * in it? A write that could go on at once must still wait behind earlier
 * writes of its reactor that wait (the worker sets the state they wait for
 * before they resume): writes of one reactor reach the level in the order
 * they came, so that of two overlapping ones the later wins, as md's does.
 */
static inline bool meta_batch_idle(const struct meta_batch *b)
{
	return !b->busy && !b->head;
}

/* On b->r's thread: wt waits for b's next update; resumed from a later poll. */
void meta_batch_wait(struct meta_batch *b, struct meta_wait *wt);

/*
 * One piece of metadata work that is not a batch: a background job's
 * checkpoint, its end, its wait for the write gate. run goes to the worker
 * (FIFO: work handed over earlier runs first); with a reactor r, done(c, rc)
 * then runs on r from a later poll, else nothing more touches c after run
 * returns (run may free it). The caller keeps c alive until then.
 */
struct meta_call {
	struct meta_job job;
	struct uraid_engine *e;
	struct reactor *r;
	int (*run)(struct meta_call *c);
	void (*done)(struct meta_call *c, int rc);
	int rc;
	struct reactor_msg reply;
};
/* run (and then done on r, if r) as above, as work of the array `owner`
 * (void *: io-free code passes its struct array); without a worker (a caller-driven
 * engine) run goes on the calling thread at once, done still from r's poll. */
void meta_call_submit(struct uraid_engine *e, void *owner, struct meta_call *c,
		      struct reactor *r, int (*run)(struct meta_call *c),
		      void (*done)(struct meta_call *c, int rc));

/*
 * The worker of an engine that runs its own threads (URAID_ENGINE_THREADS):
 * it runs handed-over updates and, every few ms, engine_tick. 0 or -errno.
 * An engine driven by its caller has none (it starts no thread): updates run
 * on the thread that hands them over, and the tick on reactor 0's polls.
 */
int meta_worker_start(struct uraid_engine *e, struct meta_worker **out);
/*
 * Wait until *done is true (set by another thread). On the worker itself
 * (a nested array's metadata write, engine/md/stack.c, waits for a request
 * of the array below it, `owner`) run every job queued for `owner`
 * meanwhile, out of turn but in their own order, so that the worker never
 * waits on itself. The lower array's request may wait for any of them:
 *  - its batches: marking it active (array.c gate), bitmap bits (wib.c);
 *  - its meta_calls: the record of a member failed in a completion
 *    (member_state.c fail_parked, from raid5/mirror/sync paths), a write
 *    gate wait (array.c gate_call), an allocation lookup (allocation.c),
 *    sync checkpoints and ends, journal checkpoints.
 * None of the lower array's jobs waits for the upper array, so running
 * them here ends. On any other thread merely wait. Polls every 100 us
 * (rare: superblock writes of a nested array); says so in the log when the
 * wait passes a few seconds, and again every minute.
 */
void meta_worker_help(struct uraid_engine *e, void *owner, _Atomic bool *done);
/* Arrays are closed: nothing is queued any more. */
void meta_worker_stop(struct meta_worker *w);

#endif
