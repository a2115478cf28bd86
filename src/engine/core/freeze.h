/* SPDX-License-Identifier: MIT */
/*
 * Freezing an array: no request reaches the level and no background unit
 * runs while the geometry or the level changes under it (a reshape's start
 * and end, grow's takeovers). Requests that arrive meanwhile are parked on
 * their reactor, without blocking it, and go on after the thaw under the
 * geometry then in place.
 *
 * It goes in two steps. First only the clients' requests are held: the
 * array's own (the write-back cache's destages, read-ahead's prefetches)
 * still pass, so a client request admitted before, which may wait for one
 * of them (a read for a prefetch under way, a flush or a write for the
 * cache's room), ends; the cache is drained and the step waits until no
 * request is in flight. Then everything is held, and the freeze waits
 * until no request (an internal one that slipped in between) and no
 * background unit is in flight.
 */
#ifndef URAID_ENGINE_FREEZE_H
#define URAID_ENGINE_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/geom.h>
#include <uraid/engine.h>

struct array;
struct engine_reactor;

/* a->freeze_state */
enum {
	FREEZE_NONE,            /* requests go on */
	FREEZE_CLIENTS,         /* clients parked; the array's own requests pass */
	FREEZE_ALL,             /* every new request parked */
};

/* Hold the array's new requests (clients', the write cache's destages,
 * read-ahead's prefetches; background jobs pause at a unit boundary) and
 * wait until none is in flight. Not on a reactor thread; drives the
 * reactors itself on a caller-driven engine (as close's drain does).
 * One freeze at a time per array. 0 or -errno. */
int array_freeze(struct array *a);
/* The same from the running background job's own thread, whose unit is
 * in progress (the reshape's step): requests only, no wait for units. */
int array_freeze_for_job(struct array *a);
/* Let the held requests go on, under whatever geometry is now in place. */
void array_thaw(struct array *a);
/*
 * A hold of array sectors [lo, hi) only (a reshape's step moving those
 * rows), from a thread that is not a reactor: requests that reach the
 * level (past the write cache and read-ahead) and touch the range are
 * parked, all others go on; returns once no request that reached the level
 * before the hold is still there. Not with a freeze; one hold at a time.
 * Requests answered by the write cache or read-ahead are not held: their
 * copies stay right, as the rows' data does not change, only its place.
 * 0 or -errno.
 */
int array_hold_range(struct array *a, uint64_t lo, uint64_t hi);
/* End the hold: the parked requests go on (by the geometry then in place). */
void array_release_range(struct array *a);
/* For array_req_to_level, on rq's reactor, rq counted in its reactor's
 * level_in_flight: true when rq was parked by a range hold. */
struct array_req;
bool array_hold_parks(struct array_req *rq);

/* Frozen, meta_lock held: switch a->geom (and a->level/a->ops when the
 * level changes) to g: the old level's fini, the new one's init; on
 * failure the old geometry and level are back, -errno + one line in err. */
int array_switch_geometry(struct array *a, const struct uraid_geom *g,
			  char *err, size_t errlen);

/*
 * For the request path (core/array.c req_start), on er's thread, with the
 * request already counted in er's in_flight: true when io was parked (the
 * caller uncounts it and returns), false when it goes on. The count comes
 * first so that a freeze that has set its state and then sees no request
 * in flight cannot miss one that went on.
 */
bool array_freeze_parks(struct array *a, struct engine_reactor *er, struct uraid_io *io);
/* Background jobs (jobs/sync.c): may a new unit be handed out now? */
static inline bool array_frozen(const struct array *a);
/* The parked requests' lists, one per reactor: allocated at assembly
 * (before any request or freeze can race on them), freed at close
 * (array_free). 0 or -ENOMEM. */
int array_freeze_init(struct array *a);
void array_freeze_free(struct array *a);

/* No request parked and no resume message queued: close's drain waits for
 * this as well as in_flight 0 (look at it first) before freeing the array. */
bool array_park_idle(const struct array *a);

#include "engine/core/array.h"

static inline bool array_frozen(const struct array *a)
{
	return atomic_load(&a->freeze_state) != FREEZE_NONE;
}

#endif
