// SPDX-License-Identifier: MIT
/*
 * The metadata worker (see meta_worker.h for the interface).
 *
 * Why a thread of its own: md's metadata updates are synchronous. Every
 * update writes the bitmap header and then each member's superblock, or the
 * dirty bitmap pages, each followed by fdatasync (O_DSYNC semantics), in
 * md's order: bitmap header before superblocks, bitmap bits before the data
 * writes they cover, "active" on disk before any data write. On a real drive
 * that is milliseconds per member. Done on a reactor thread, as it was, the
 * first write after every idle spell (clean -> active), every write to a
 * clean bitmap chunk and every idle clean marking stalled every connection
 * of that reactor for that long, and a reactor that merely wanted meta_lock
 * (to set a bit in memory) waited for another thread's writes.
 *
 * The order is kept by waiting, not by the thread: a write that needs an
 * update does not reach a member until its batch comes back with 0; with an
 * error it fails as before. The reactor does the waiting by parking the
 * request (no thread blocks), and the worker is the only thread that blocks.
 * The io_uring of the reactor could carry the writes as well, but the
 * updates are sequences (header, then superblocks, then a repeat without a
 * member that failed) under meta_lock, which other threads (the control
 * socket, background jobs) also take around synchronous writes: a thread
 * keeps that code as it is and keeps meta_lock off the reactors.
 *
 * The worker also runs engine_tick (idle clean marking, bitmap sweeps,
 * automatic rebuilds), which writes superblocks and bitmap pages too; it
 * used to run on reactor 0.
 *
 * One worker per engine: updates are rare (per idle spell, per newly
 * dirtied bitmap chunk) and short next to the time between them, and the
 * tick walks every array anyway.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "common/log.h"
#include "engine/core/array.h"
#include "engine/core/host.h"
#include "engine/md/meta_worker.h"

/* How often the worker looks whether engine_tick's work is due (it decides). */
#define META_WORKER_WAKE_NS (5u * 1000000u)

struct meta_worker {
	struct uraid_engine *e;
	pthread_t thread;
	pthread_mutex_t mu;             /* the queue and stop; never held across I/O */
	pthread_cond_t cv;
	struct meta_job *head, *tail;
	bool stop;
};

static void *worker_main(void *arg)
{
	struct meta_worker *w = arg;

	pthread_setname_np(pthread_self(), "uraid-meta");
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct meta_job *j = w->head;
		if (j) {
			w->head = j->next;
			if (!w->head)
				w->tail = NULL;
		}
		pthread_mutex_unlock(&w->mu);
		if (j)
			j->run(j);
		engine_tick(w->e);      /* returns at once unless due */
		pthread_mutex_lock(&w->mu);
		if (!w->head && !w->stop) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += META_WORKER_WAKE_NS;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int meta_worker_start(struct uraid_engine *e, struct meta_worker **out)
{
	struct meta_worker *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (!w)
		return -ENOMEM;
	w->e = e;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	int rc = -pthread_create(&w->thread, NULL, worker_main, w);
	if (rc) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void meta_worker_stop(struct meta_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

/* A wait this long in meta_worker_help is logged (then once a minute). */
#define META_HELP_WARN_NS (5ull * 1000000000u)
#define META_HELP_REWARN_NS (60ull * 1000000000u)

void meta_worker_help(struct uraid_engine *e, void *owner, _Atomic bool *done)
{
	struct meta_worker *w = e->worker;
	bool mine = w && pthread_equal(pthread_self(), w->thread);
	struct timespec nap = { 0, 100000 };
	uint64_t start = engine_now_ns(), warn = start + META_HELP_WARN_NS;

	while (!atomic_load(done)) {
		struct meta_job *j = NULL;
		if (mine) {
			/* every job of the lower array: batches and calls alike
			   (meta_worker.h says which a request of it may wait for) */
			pthread_mutex_lock(&w->mu);
			for (struct meta_job **pp = &w->head, *prev = NULL; *pp;
			     prev = *pp, pp = &(*pp)->next) {
				if ((*pp)->owner != owner)
					continue;
				j = *pp;
				*pp = j->next;
				if (w->tail == j)
					w->tail = prev;
				break;
			}
			pthread_mutex_unlock(&w->mu);
		}
		if (j) {
			j->run(j);
			continue;
		}
		nanosleep(&nap, NULL);
		uint64_t now = engine_now_ns();
		if (now >= warn) {
			ulog(engine_log(e), URAID_LOG_WARNING, "a nested array's metadata I/O has "
			     "waited %llu s for the array below it (%s)",
			     (unsigned long long)((now - start) / 1000000000u),
			     mine ? "on the metadata worker" : "off the metadata worker");
			warn = now + META_HELP_REWARN_NS;
		}
	}
}

/* To the worker; without one (caller-driven engine), run here and now. */
static void worker_submit(struct uraid_engine *e, struct meta_job *j)
{
	struct meta_worker *w = e->worker;

	if (!w) {
		j->run(j);
		return;
	}
	j->next = NULL;
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* ---- batches ---- */

/* On the worker: the update, then back to the reactor. b is not touched
 * after the post (the reply may end the last request of a closing array). */
static void batch_run(struct meta_job *j)
{
	struct meta_batch *b = (struct meta_batch *)((char *)j - offsetof(struct meta_batch, job));

	b->rc = b->update(b, b->sent);
	reactor_post(b->r, &b->reply);
}

/* On r, after the events that queued the waiters: one update for all of them. */
static void batch_kick(struct reactor *r, struct reactor_msg *m)
{
	struct meta_batch *b = (struct meta_batch *)((char *)m - offsetof(struct meta_batch, kick));

	(void)r;
	b->sent = b->head;
	b->head = b->tail = NULL;
	b->job.run = batch_run;
	worker_submit(b->e, &b->job);
}

/*
 * On r: the update is done. The batch is settled before any waiter resumes:
 * resuming the last one may end the array's last request, and a closing
 * array is freed then. Waiters that came meanwhile get an update of their own.
 */
static void batch_reply(struct reactor *r, struct reactor_msg *m)
{
	struct meta_batch *b = (struct meta_batch *)((char *)m - offsetof(struct meta_batch, reply));
	struct meta_wait *list = b->sent;
	meta_resume_fn resume = b->resume;
	int rc = b->rc;

	b->sent = NULL;
	if (b->head)
		reactor_post(r, &b->kick);      /* busy stays true */
	else
		b->busy = false;
	while (list) {
		struct meta_wait *wt = list;
		list = wt->next;                /* wt may be reused once resumed */
		resume(b, wt, rc);
	}
}

void meta_batch_init(struct meta_batch *b, struct uraid_engine *e, struct reactor *r,
		     void *owner, meta_update_fn update, meta_resume_fn resume)
{
	*b = (struct meta_batch){ .e = e, .r = r, .owner = owner, .update = update,
				  .resume = resume };
	b->job.owner = owner;
	b->kick.fn = batch_kick;
	b->reply.fn = batch_reply;
}

void meta_batch_wait(struct meta_batch *b, struct meta_wait *wt)
{
	wt->next = NULL;
	if (b->tail)
		b->tail->next = wt;
	else
		b->head = wt;
	b->tail = wt;
	if (!b->busy) {
		b->busy = true;
		reactor_post(b->r, &b->kick);
	}
}

/* ---- single calls ---- */

/* On the worker: c may be freed by run when no reply is asked for. */
static void call_run(struct meta_job *j)
{
	struct meta_call *c = (struct meta_call *)((char *)j - offsetof(struct meta_call, job));
	struct reactor *r = c->r;

	int rc = c->run(c);
	if (r) {
		c->rc = rc;
		reactor_post(r, &c->reply);
	}
}

static void call_reply(struct reactor *r, struct reactor_msg *m)
{
	struct meta_call *c = (struct meta_call *)((char *)m - offsetof(struct meta_call, reply));

	(void)r;
	c->done(c, c->rc);
}

void meta_call_submit(struct uraid_engine *e, void *owner, struct meta_call *c,
		      struct reactor *r, int (*run)(struct meta_call *c),
		      void (*done)(struct meta_call *c, int rc))
{
	c->job.owner = owner;
	c->e = e;
	c->r = done ? r : NULL;
	c->run = run;
	c->done = done;
	c->rc = 0;
	c->reply.fn = call_reply;
	c->job.run = call_run;
	worker_submit(e, &c->job);
}
