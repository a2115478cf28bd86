// SPDX-License-Identifier: MIT
/*
 * Freeze and thaw of an array, and the switch of its geometry while frozen
 * (freeze.h). Parked requests wait in a list of their reactor's, touched by
 * that reactor's thread only; the thaw posts each reactor a message that
 * starts them again there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errmsg.h"
#include "engine/cache/wcache.h"
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/jobs/sync.h"

/* One reactor's parked requests. */
struct freeze_park {
	struct array *a;
	struct engine_reactor *er;
	struct uraid_io *head, *tail;   /* linked through the io's priv (link_set) */
	struct array_req *rq_head, *rq_tail;    /* a range hold's, through rq->next */
	struct reactor_msg msg;         /* the thaw's resume */
	_Atomic bool posted;            /* msg is in the reactor's inbox */
	/* ios parked here, not counted in in_flight: close waits for them too
	   (array_park_idle), counted up before in_flight drops and down after
	   the resumed one counts itself again */
	_Atomic uint64_t nparked;
} __attribute__((aligned(64)));

/* A parked io's link to the next one, kept in its priv (the engine's while
 * it waits here); copied in and out, as priv is an array of integers. */
static struct uraid_io *link_get(const struct uraid_io *io)
{
	struct uraid_io *next;
	memcpy(&next, io->priv, sizeof(next));
	return next;
}

static void link_set(struct uraid_io *io, struct uraid_io *next)
{
	memcpy(io->priv, &next, sizeof(next));
}

bool array_freeze_parks(struct array *a, struct engine_reactor *er, struct uraid_io *io)
{
	int st = atomic_load(&a->freeze_state);

	if (st == FREEZE_NONE)
		return false;
	/* the array's own requests (destages, prefetches) pass in the first
	   step: admitted client requests may wait for them (freeze.h) */
	if (st == FREEZE_CLIENTS && (io->flags & ARRAY_IO_INTERNAL))
		return false;
	struct freeze_park *p = &a->park[er->r.index];
	atomic_fetch_add(&p->nparked, 1);
	link_set(io, NULL);
	if (p->tail)
		link_set(p->tail, io);
	else
		p->head = io;
	p->tail = io;
	return true;
}

/* On the reactor: the thaw let them go (a freeze since parks them again). */
static void park_resume(struct reactor *r, struct reactor_msg *m)
{
	struct freeze_park *p = (struct freeze_park *)((char *)m - offsetof(struct freeze_park, msg));
	struct uraid_io *io = p->head;

	struct array_req *rq = p->rq_head;

	(void)r;
	atomic_store(&p->posted, false);
	p->head = p->tail = NULL;
	p->rq_head = p->rq_tail = NULL;
	while (io) {
		struct uraid_io *next = link_get(io);
		array_req_resume_parked(p->a, p->er, io);
		atomic_fetch_sub(&p->nparked, 1);
		io = next;
	}
	while (rq) {
		struct array_req *next = rq->next;
		array_req_to_level(rq);
		rq = next;
	}
}

bool array_hold_parks(struct array_req *rq)
{
	struct array *a = rq->a;
	const struct uraid_io *io = rq->io;
	/* hi first: it is set last and cleared first (array_hold_range) */
	uint64_t hi = atomic_load(&a->hold_hi);

	if (!hi || !io->length || io->op == URAID_IO_FLUSH)
		return false;
	uint64_t lo = atomic_load(&a->hold_lo);
	uint64_t first = io->offset >> 9, end = (io->offset + io->length + 511) >> 9;
	if (end <= lo || first >= hi)
		return false;
	struct freeze_park *p = &a->park[rq->er->r.index];
	rq->next = NULL;
	if (p->rq_tail)
		p->rq_tail->next = rq;
	else
		p->rq_head = rq;
	p->rq_tail = rq;
	return true;
}

int array_freeze_init(struct array *a)
{
	unsigned n = a->e->nreactors;

	if (a->park)
		return 0;
	struct freeze_park *p = aligned_alloc(64, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p, 0, n * sizeof(*p));
	for (unsigned i = 0; i < n; i++) {
		p[i].a = a;
		p[i].er = &a->e->reactors[i];
		p[i].msg.fn = park_resume;
	}
	a->park = p;
	return 0;
}

bool array_park_idle(const struct array *a)
{
	if (!a->park)
		return true;
	for (unsigned i = 0; i < a->e->nreactors; i++)
		if (atomic_load(&a->park[i].posted) || atomic_load(&a->park[i].nparked))
			return false;
	return true;
}

void array_freeze_free(struct array *a)
{
	free(a->park);
	a->park = NULL;
}

/* Wait a little: drive the reactors when no thread of the engine's does. */
static void freeze_step(struct array *a)
{
	if (a->e->flags & URAID_ENGINE_THREADS) {
		struct timespec ts = { 0, 200000 };
		nanosleep(&ts, NULL);
	} else {
		for (unsigned i = 0; i < a->e->nreactors; i++)
			uraid_engine_poll(a->e, i, 1);
	}
}

static int freeze(struct array *a, bool wait_jobs)
{
	if (!a->park)
		return -ENOMEM;         /* array_freeze_init failed at assembly */
	int expect = FREEZE_NONE;
	if (!atomic_compare_exchange_strong(&a->freeze_state, &expect, FREEZE_CLIENTS))
		return -EBUSY;
	/* what the cache holds goes to the members under the old geometry;
	   a lost destage leaves dirty pages that are written after the thaw */
	struct wcache *wc = atomic_load(&a->wc);
	if (wc)
		(void)wcache_drain(wc);
	/* the clients' requests admitted before end (with what they wait for) */
	while (array_foreground_in_flight(a))
		freeze_step(a);
	atomic_store(&a->freeze_state, FREEZE_ALL);
	while (array_foreground_in_flight(a) || (wait_jobs && sync_units_in_progress(a)))
		freeze_step(a);
	return 0;
}

int array_freeze(struct array *a)
{
	return freeze(a, true);
}

int array_freeze_for_job(struct array *a)
{
	return freeze(a, false);
}

/* Each reactor starts its parked requests again (park_resume). */
static void park_post_resume(struct array *a)
{
	for (unsigned i = 0; i < a->e->nreactors; i++) {
		struct freeze_park *p = &a->park[i];
		bool was = false;
		/* a message still queued from an earlier thaw resumes these too */
		if (atomic_compare_exchange_strong(&p->posted, &was, true))
			reactor_post(&p->er->r, &p->msg);
	}
}

void array_thaw(struct array *a)
{
	atomic_store(&a->freeze_state, FREEZE_NONE);
	park_post_resume(a);
}

static uint64_t level_in_flight(const struct array *a, unsigned parity)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < a->e->nreactors; i++)
		n += atomic_load(&a->counters[i].level_in_flight[parity]);
	return n;
}

/*
 * The range goes in before the epoch flips: a request that counts itself
 * under the new epoch (array_req_to_level) then sees the range; one under
 * the old epoch is waited for here. Only requests at the level are waited
 * for, never one waiting in the write cache (which may wait for a destage
 * this hold parks).
 */
int array_hold_range(struct array *a, uint64_t lo, uint64_t hi)
{
	if (!a->park)
		return -ENOMEM;
	if (lo >= hi)
		return -EINVAL;
	atomic_store(&a->hold_lo, lo);
	atomic_store(&a->hold_hi, hi);
	unsigned before = atomic_fetch_add(&a->hold_epoch, 1) & 1;
	while (level_in_flight(a, before))
		freeze_step(a);
	return 0;
}

void array_release_range(struct array *a)
{
	atomic_store(&a->hold_hi, 0);
	park_post_resume(a);
}

int array_switch_geometry(struct array *a, const struct uraid_geom *g, char *err, size_t errlen)
{
	const struct level *lv = level_find(g->level);
	const struct level *old_level = a->level;
	const struct level_ops *old_ops = a->ops;

	if (!lv || !lv->io)
		return uraid_errf(err, errlen, -EINVAL, "level %d has no engine here", g->level);
	/* the geometry is large (RAID 0 zone tables): off the stack */
	struct uraid_geom *old = malloc(sizeof(*old));
	if (!old)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	*old = a->geom;
	if (old_ops && old_ops->fini)
		old_ops->fini(a);
	a->geom = *g;
	a->level = lv;
	a->ops = lv->io;
	int rc = lv->io->init ? lv->io->init(a) : 0;
	if (rc == 0) {
		free(old);
		return 0;
	}
	a->geom = *old;
	free(old);
	a->level = old_level;
	a->ops = old_ops;
	int rc2 = old_ops && old_ops->init ? old_ops->init(a) : 0;
	if (rc2) {
		/* the old level's state cannot come back either (out of memory):
		   the array keeps its old ops but requests would find no state */
		return uraid_errf(err, errlen, rc2, "cannot set up %s (%s), nor %s again (%s)",
				  lv->io->name, strerror(-rc), old_ops->name, strerror(-rc2));
	}
	return uraid_errf(err, errlen, rc, "cannot set up %s: %s; the geometry is unchanged",
			  lv->io->name, strerror(-rc));
}
