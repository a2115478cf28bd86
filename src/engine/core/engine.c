// SPDX-License-Identifier: MIT
/*
 * The engine: its reactors, the threads that run them when asked to (and
 * then the metadata worker, md/meta_worker.c, which writes superblocks and
 * bitmap pages off the reactors), and the housekeeping that marks idle
 * arrays clean.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "engine/core/array.h"
#include "engine/core/host.h"
#include "engine/md/meta_worker.h"

#define ENGINE_RING_ENTRIES 256
#define ENGINE_POOL_CACHE (256u << 20)    /* per reactor, bytes of idle buffers kept */
#define ENGINE_THREAD_TICK_MS 20
#define ENGINE_TICK_NS (5u * 1000000u)     /* idle checks: often enough for 20 ms delays */

uint64_t engine_now_ns(void)
{
	return uraid_now_ns();
}

static void *reactor_thread(void *arg)
{
	struct engine_reactor *er = arg;
	char name[16];

	snprintf(name, sizeof(name), "uraid-r%u", er->r.index);
	pthread_setname_np(pthread_self(), name);
	reactor_claim(&er->r);
	/* the tick is the metadata worker's: it writes superblocks */
	while (!atomic_load(&er->stop))
		reactor_poll(&er->r, ENGINE_THREAD_TICK_MS);
	/* let what is still queued finish before the ring goes away */
	while (er->r.in_flight || er->r.overflow_head || er->r.deferred_head)
		reactor_poll(&er->r, ENGINE_THREAD_TICK_MS);
	return NULL;
}

/* Wakes a reactor thread so that it sees its stop flag. */
static void wake_noop(struct reactor *r, struct reactor_msg *m)
{
	(void)r;
	(void)m;
}

static void stop_threads(struct uraid_engine *e, unsigned started)
{
	for (unsigned i = 0; i < started; i++) {
		struct engine_reactor *er = &e->reactors[i];
		atomic_store(&er->stop, true);
		/* embedded: a thread that stops before running it leaks nothing */
		er->wake_msg.fn = wake_noop;
		reactor_post(&er->r, &er->wake_msg);
		pthread_join(er->thread, NULL);
	}
}

int uraid_engine_create(const struct uraid_engine_opts *o, struct uraid_engine **out)
{
	struct uraid_engine_opts def = { 0 };
	if (!o)
		o = &def;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = o->reactors ? o->reactors : (unsigned)(cpus > 0 ? cpus : 1);
	unsigned entries = o->ring_entries ? o->ring_entries : ENGINE_RING_ENTRIES;

	struct uraid_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->reactors = calloc(n, sizeof(*e->reactors));
	if (!e->reactors) {
		free(e);
		return -ENOMEM;
	}
	e->flags = o->flags;
	e->log = (struct ulog){ .fn = o->log, .opaque = o->log_opaque };
	e->changed = o->changed;
	e->changed_opaque = o->changed_opaque;
	pthread_mutex_init(&e->lock, NULL);
	int rc = 0;
	unsigned i;
	for (i = 0; i < n; i++) {
		struct engine_reactor *er = &e->reactors[i];
		er->e = e;
		bufpool_init(&er->pool, ENGINE_POOL_CACHE);
		rc = (o->flags & URAID_ENGINE_THREADS) ? reactor_init_owned(&er->r, i, entries)
						       : reactor_init(&er->r, i, entries);
		if (rc) {
			bufpool_fini(&er->pool);
			break;
		}
	}
	e->nreactors = i;
	if (!rc && (o->flags & URAID_ENGINE_THREADS)) {
		for (i = 0; i < n; i++) {
			rc = -pthread_create(&e->reactors[i].thread, NULL, reactor_thread,
					     &e->reactors[i]);
			if (rc)
				break;
		}
		if (rc)
			stop_threads(e, i);
		else if ((rc = meta_worker_start(e, &e->worker)))
			stop_threads(e, n);
	}
	if (rc) {
		e->flags &= ~URAID_ENGINE_THREADS;
		uraid_engine_destroy(e);
		return rc;
	}
	*out = e;
	return 0;
}

static void free_lists(struct engine_reactor *er)
{
	while (er->free_reqs) {
		struct array_req *rq = er->free_reqs;
		er->free_reqs = rq->next;
		free(rq);
	}
	mio_free_lists(er);
}

void uraid_engine_destroy(struct uraid_engine *e)
{
	if (!e)
		return;
	if (e->flags & URAID_ENGINE_THREADS) {
		meta_worker_stop(e->worker);    /* posts to the reactors: stopped first */
		stop_threads(e, e->nreactors);
	}
	for (unsigned i = 0; i < e->nreactors; i++) {
		struct engine_reactor *er = &e->reactors[i];
		reactor_fini(&er->r);
		free_lists(er);
		bufpool_fini(&er->pool);
	}
	pthread_mutex_destroy(&e->lock);
	free(e->reactors);
	free(e);
}

unsigned uraid_engine_reactors(const struct uraid_engine *e)
{
	return e->nreactors;
}

int uraid_engine_poll(struct uraid_engine *e, unsigned reactor, int timeout_ms)
{
	return uraid_engine_poll_ns(e, reactor, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000);
}

int uraid_engine_poll_ns(struct uraid_engine *e, unsigned reactor, int64_t timeout_ns)
{
	if (reactor >= e->nreactors)
		return -EINVAL;
	int n = reactor_poll_ns(&e->reactors[reactor].r, timeout_ns);
	if (reactor == 0 && !e->worker)
		engine_tick(e);
	return n;
}

void engine_tick(struct uraid_engine *e)
{
	uint64_t now = engine_now_ns();

	/* a caller-driven reactor 0 polls once per batch of I/O: keep the lock off that path */
	if (now < e->next_tick_ns)
		return;
	e->next_tick_ns = now + ENGINE_TICK_NS;
	pthread_mutex_lock(&e->lock);
	/* the hooks each array registered at assembly (array_tick_add): idle
	   clean marking, md's bitmap daemon, background jobs that start alone */
	for (struct array *a = e->arrays; a; a = a->next)
		for (unsigned i = 0, n = atomic_load_explicit(&a->nticks, memory_order_acquire);
		     i < n; i++)
			a->ticks[i](a, now);
	pthread_mutex_unlock(&e->lock);
}

struct reactor *engine_reactor(struct uraid_engine *e, unsigned i)
{
	return &e->reactors[i].r;
}

struct bufpool *engine_bufpool(struct uraid_engine *e, unsigned i)
{
	return &e->reactors[i].pool;
}

const struct ulog *engine_log(const struct uraid_engine *e)
{
	return &e->log;
}
