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
	struct reactor_msg msg;         /* the thaw's resume */
	_Atomic bool posted;            /* msg is in the reactor's inbox */
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
	/* the write cache's destages finish its drain in the first step */
	if (st == FREEZE_CLIENTS && (io->flags & ARRAY_IO_INTERNAL) && io->op != URAID_IO_READ)
		return false;
	struct freeze_park *p = &a->park[er->r.index];
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

	(void)r;
	atomic_store(&p->posted, false);
	p->head = p->tail = NULL;
	while (io) {
		struct uraid_io *next = link_get(io);
		array_req_resume_parked(p->a, p->er, io);
		io = next;
	}
}

static int park_alloc(struct array *a)
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
	int rc = park_alloc(a);
	if (rc)
		return rc;
	int expect = FREEZE_NONE;
	if (!atomic_compare_exchange_strong(&a->freeze_state, &expect, FREEZE_CLIENTS))
		return -EBUSY;
	/* what the cache holds goes to the members under the old geometry;
	   a lost destage leaves dirty pages that are written after the thaw */
	struct wcache *wc = atomic_load(&a->wc);
	if (wc)
		(void)wcache_drain(wc);
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

void array_thaw(struct array *a)
{
	atomic_store(&a->freeze_state, FREEZE_NONE);
	for (unsigned i = 0; i < a->e->nreactors; i++) {
		struct freeze_park *p = &a->park[i];
		bool was = false;
		/* a message still queued from an earlier thaw resumes these too */
		if (atomic_compare_exchange_strong(&p->posted, &was, true))
			reactor_post(&p->er->r, &p->msg);
	}
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
