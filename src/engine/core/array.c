// SPDX-License-Identifier: MIT
/*
 * The array's request path: hand-over to the right reactor, the write gate
 * that has the array marked active before its first write (md's
 * clean/active; the metadata worker writes it while the writes wait),
 * cutting requests into pieces for the level, completion, and the
 * synchronous helpers; also assembly entry, status, close and fault
 * injection.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/errmsg.h"
#include "engine/cache/readahead.h"
#include "engine/core/array.h"
#include "engine/md/stack.h"
#include "engine/core/freeze.h"
#include "engine/md/grow.h"
#include "engine/md/grow_bitmap.h"
#include "engine/level/parity_log.h"
#include "engine/cache/wcache.h"
#include "engine/jobs/sync.h"
#include "engine/core/mio.h"
#include "engine/md/journal.h"
#include "engine/md/member_state.h"
#include "engine/md/ppl.h"
#include "engine/md/wib.h"

/* wstate values */
enum { WSTATE_ACTIVE, WSTATE_MARKING_CLEAN, WSTATE_CLEAN };

#define IDLE_CLEAN_MS_DEFAULT 200    /* md's safe_mode_delay */
#define BOUNCE_ALIGN 4096

/* What the engine keeps in uraid_io.priv while the request is handed over. */
struct io_priv {
	struct reactor_msg msg;
	struct array *a;
};
_Static_assert(sizeof(struct io_priv) <= sizeof(((struct uraid_io *)0)->priv),
	       "uraid_io.priv too small");

static inline struct array *A(struct uraid_array *ua) { return (struct array *)ua; }

/* ---- write gate ---- */

/*
 * Before a write reaches any member the superblocks must say "active"
 * (resync_offset 0), so that a crash leaves an array md will resync. The
 * writer counts itself first and then looks at the state; the idle cleaner
 * announces itself first and then looks at the count: one of them always
 * sees the other (sequentially consistent atomics).
 */
static uint64_t sum_in_flight(const struct array *a)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < a->e->nreactors; i++)
		n += atomic_load(&a->counters[i].in_flight);
	return n;
}

uint64_t array_foreground_in_flight(const struct array *a)
{
	return sum_in_flight(a);
}

uint64_t array_foreground_started(const struct array *a)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < a->e->nreactors; i++)
		n += atomic_load_explicit(&a->counters[i].started, memory_order_relaxed);
	return n;
}

static uint64_t sum_writes_in_flight(const struct array *a)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < a->e->nreactors; i++)
		n += atomic_load(&a->counters[i].writes_in_flight);
	return n;
}

static uint64_t last_write_ns(const struct array *a)
{
	uint64_t t = 0;
	for (unsigned i = 0; i < a->e->nreactors; i++) {
		uint64_t v = atomic_load(&a->counters[i].last_write_ns);
		t = v > t ? v : t;
	}
	return t;
}

/* Mark the array active on disk unless it is; meta_lock taken, superblocks
 * written (on the metadata worker). 0 or -errno. */
static int gate_mark_active(struct array *a)
{
	int rc = 0;

	pthread_mutex_lock(&a->meta_lock);
	if (atomic_load(&a->journal_unclean_wanted) && atomic_load(&a->journal_clean))
		rc = meta_journal_unclean(a);
	if (!rc && atomic_load(&a->wstate) != WSTATE_ACTIVE) {
		if (a->in_sync)
			rc = meta_mark_active(a);
		if (rc == 0)
			atomic_store(&a->wstate, WSTATE_ACTIVE);
	}
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

/*
 * With a clean journal (a->journal_clean): a write the journal does not log
 * whole, so that a crash under it needs a resync (raid5_journal.c's FLUSH
 * units: not whole 4 KiB pages, not a plain write; a RAID 6 missing a
 * member, where P or Q can be written without the other). Conservative:
 * it may also count writes the journal would log whole.
 */
static bool journal_unprotected(struct array *a, const struct uraid_io *io)
{
	if (!atomic_load_explicit(&a->journal_clean, memory_order_relaxed))
		return false;
	return io->op != URAID_IO_WRITE || io->offset % 4096 || io->length % 4096 ||
	       (a->level->info.parity_members > 1 && atomic_load(&a->degraded));
}

/*
 * A writer counts itself, then looks: true when the array is active and
 * the write may go on; false when it must wait for gate_mark_active (it
 * stays counted, so the idle cleaner leaves the array active meanwhile).
 */
static bool gate_enter_fast(struct array *a, struct array_counters *c)
{
	atomic_fetch_add(&c->writes_in_flight, 1);
	return atomic_load(&a->wstate) == WSTATE_ACTIVE;
}

/* A write that waited and will not go on after all: uncounted (no stamp). */
static void gate_enter_failed(struct array_counters *c)
{
	atomic_fetch_sub(&c->writes_in_flight, 1);
}

/* The gate batch's update, on the metadata worker: every waiter of the
 * batch counted itself before it was queued. */
static int gate_update(struct meta_batch *b, struct meta_wait *list)
{
	(void)list;
	return gate_mark_active(b->owner);
}

/*
 * The idle cleaner looks at last_write_ns only when no write is in flight,
 * so it is the time the reactor's count last fell to 0: stamped by the
 * write that takes it there, with the reactor's poll time (no clock read of
 * its own; at most one poll batch old). Only the reactor's own thread changes its count,
 * so the load is exact; the stamp is stored before the count falls, so a
 * cleaner that sees 0 sees the stamp too.
 */
static void gate_leave_write(struct array *a, unsigned reactor)
{
	struct array_counters *c = &a->counters[reactor];

	if (atomic_load_explicit(&c->writes_in_flight, memory_order_relaxed) == 1)
		atomic_store_explicit(&c->last_write_ns, reactor_now_ns(&a->e->reactors[reactor].r),
				      memory_order_relaxed);
	atomic_fetch_sub(&c->writes_in_flight, 1);
}

/* On the metadata worker: the marking a background write waits for. */
static int gate_call_run(struct meta_call *c)
{
	struct array_gate_wait *w = (struct array_gate_wait *)((char *)c -
				    offsetof(struct array_gate_wait, call));
	return gate_mark_active(w->a);
}

/* Back on the waiter's reactor. */
static void gate_call_done(struct meta_call *c, int rc)
{
	struct array_gate_wait *w = (struct array_gate_wait *)((char *)c -
				    offsetof(struct array_gate_wait, call));
	if (rc)
		gate_enter_failed(&w->a->counters[w->reactor]);
	w->resume(w, rc);
}

/*
 * Background writes (recovery, replacement, repair) enter here from their
 * lane's reactor. One that must wait parks its unit with the worker (the
 * unit goes on from gate_call_done), as requests park in the gate batch:
 * the reactor makes no superblock write and does not wait for meta_lock.
 */
bool array_gate_enter(struct array *a, unsigned reactor, struct array_gate_wait *w,
		      void (*resume)(struct array_gate_wait *w, int rc))
{
	struct array_counters *c = &a->counters[reactor];

	if (gate_enter_fast(a, c))
		return true;
	w->a = a;
	w->reactor = reactor;
	w->resume = resume;
	meta_call_submit(a->e, a, &w->call, &a->e->reactors[reactor].r, gate_call_run,
			 gate_call_done);
	return false;
}

void array_gate_leave(struct array *a, unsigned reactor)
{
	gate_leave_write(a, reactor);
}

void array_idle_check(struct array *a, uint64_t now_ns)
{
	if ((a->flags & URAID_ASSEMBLE_READONLY) ||
	    atomic_load(&a->wstate) != WSTATE_ACTIVE || sum_writes_in_flight(a))
		return;
	uint64_t last = last_write_ns(a);
	if (now_ns > last && now_ns - last < (uint64_t)a->idle_clean_ms * 1000000u)
		return;
	int expect = WSTATE_ACTIVE;
	if (!atomic_compare_exchange_strong(&a->wstate, &expect, WSTATE_MARKING_CLEAN))
		return;
	if (sum_writes_in_flight(a)) {
		expect = WSTATE_MARKING_CLEAN;
		atomic_compare_exchange_strong(&a->wstate, &expect, WSTATE_ACTIVE);
		return;
	}
	pthread_mutex_lock(&a->meta_lock);
	if (atomic_load(&a->wstate) == WSTATE_MARKING_CLEAN) {
		/* not between a takeover and its restripe's start (md/grow.c
		   takeover_restripe: the two reach the disks in one update) */
		bool held = atomic_load(&a->starts_held);
		/* a failed superblock write leaves the array active: safe either way */
		bool ok = !held && (a->in_sync || meta_mark_clean(a) == 0);
		atomic_store(&a->wstate, ok ? WSTATE_CLEAN : WSTATE_ACTIVE);
	}
	pthread_mutex_unlock(&a->meta_lock);
}

/* ---- requests ---- */

static struct array_req *req_get(struct engine_reactor *er)
{
	struct array_req *rq = er->free_reqs;
	if (rq)
		er->free_reqs = rq->next;
	else if (!(rq = malloc(sizeof(*rq))))
		return NULL;
	memset(rq, 0, sizeof(*rq));
	rq->er = er;
	return rq;
}

static void req_put(struct array_req *rq)
{
	rq->next = rq->er->free_reqs;
	rq->er->free_reqs = rq;
}

static bool is_write_op(enum uraid_io_op op)
{
	return op == URAID_IO_WRITE || op == URAID_IO_DISCARD || op == URAID_IO_WRITE_ZEROES;
}

/* The bitmap's sync range of a write request; false when there is nothing to mark. */
static bool req_wib_range(const struct array_req *rq, uint64_t *lo, uint64_t *hi)
{
	const struct uraid_io *io = rq->io;

	if (!rq->a->wib || !is_write_op(io->op) || io->length < 512)
		return false;
	wib_range_of(rq->a, io->offset / 512, io->length / 512, lo, hi);
	return true;
}

/* The request's time into its reactor's histogram. Both ends are the
 * reactor's poll time (reactor_now_ns), not clock reads of their own: a
 * request that starts and ends in one poll batch counts 0 (the first
 * bucket), so the resolution is one poll batch. */
static void req_count_latency(const struct array_req *rq, struct array_counters *c)
{
	enum uraid_io_op op = rq->io->op;
	if (rq->io->flags & ARRAY_IO_INTERNAL)
		return;         /* a prefetch or a destage is no client's request */
	enum uraid_latency_kind k = op == URAID_IO_READ ? URAID_LATENCY_READ
				    : op == URAID_IO_WRITE ? URAID_LATENCY_WRITE
							   : URAID_LATENCY_OTHER;
	uint64_t end = reactor_now_ns(&rq->er->r);
	latency_note(&c->latency, k, end > rq->start_ns ? end - rq->start_ns : 0);
}

/*
 * The request leaves the array: in_flight drops and io->done runs. A
 * client's done may free or resubmit its io, so it runs last. An internal
 * request's done (ARRAY_IO_INTERNAL: read-ahead's prefetch_done, the write
 * cache's destage_done) works on the array's own state, so it runs BEFORE
 * in_flight drops: otherwise drain() at close could see 0 and free the
 * array (ra_fini, wcache_destroy) while a reactor is still inside that done.
 */
static void req_complete(struct array_req *rq, struct array_counters *c, int res)
{
	struct uraid_io *io = rq->io;
	bool internal = io->flags & ARRAY_IO_INTERNAL;

	req_count_latency(rq, c);
	if (rq->hold_counted)
		atomic_fetch_sub(&c->level_in_flight[rq->hold_parity], 1);
	req_put(rq);
	if (internal) {
		io->done(io, res);
		atomic_fetch_sub(&c->in_flight, 1);
		return;
	}
	atomic_fetch_sub(&c->in_flight, 1);
	io->done(io, res);
}

static void req_finish(struct array_req *rq)
{
	struct uraid_io *io = rq->io;
	struct array *a = rq->a;

	/* read-ahead: a prefetch issued while the write ran may hold old data.
	   Before the write cache drops the range (a written-through request
	   over dirty cached data): from then on a read finds no cached page
	   and would be answered from read-ahead */
	if (is_write_op(io->op))
		ra_invalidate(a, io->offset, io->length);
	if (rq->wc_marks)
		wcache_req_end(atomic_load(&a->wc), rq, rq->result == 0);
	if (rq->bounced) {
		if (io->op == URAID_IO_READ && rq->result == 0)
			memcpy(io->buf, rq->data, io->length);
		if (io->length <= (16u << 20))
			req_buf_put(rq, rq->data, io->length);
		else
			free(rq->data);
	}
	struct array_counters *c = &a->counters[rq->er->r.index];
	uint64_t lo, hi;
	if (req_wib_range(rq, &lo, &hi))
		wib_end_write(a, lo, hi);
	if (is_write_op(io->op))
		gate_leave_write(a, rq->er->r.index);
	req_complete(rq, c, rq->result);
}

void array_piece_done(struct array_req *rq, int res)
{
	if (res && !rq->result)
		rq->result = res;
	if (--rq->pending == 0)
		req_finish(rq);
}

/*
 * FLUSH: fdatasync every member that holds data. A member that cannot flush
 * is failed like one that cannot write; the flush succeeds while the level
 * survives without it.
 */
static void flush_member_failed(void *arg, bool survives)
{
	array_piece_done(arg, survives ? 0 : -EIO);
}

static void flush_member_done(struct mpiece *p, int res)
{
	struct array_req *rq = p->rq;
	unsigned slot = p->slot;

	mpiece_put(p);
	if (res) {
		md_fail_slot_parked(rq->a, &rq->er->r, slot, res, flush_member_failed, rq);
		return;
	}
	array_piece_done(rq, 0);
}

static void flush_extra_failed(void *arg, bool survives)
{
	(void)survives;
	array_piece_done(arg, 0);
}

/* A member being rebuilt or a replacement: its failure is not the flush's. */
static void flush_extra_done(struct mpiece *p, int res)
{
	struct array_req *rq = p->rq;
	unsigned slot = p->slot;
	bool repl = p->mio.m && p->mio.m == atomic_load(&rq->a->slot[slot].repl);

	mpiece_put(p);
	if (res && repl) {
		md_fail_replacement_parked(rq->a, &rq->er->r, slot, res, flush_extra_failed, rq);
		return;
	}
	array_piece_done(rq, 0);
}

static int flush_one(struct array_req *rq, unsigned s, struct member *m,
		     void (*done)(struct mpiece *p, int res))
{
	struct mpiece *p = mpiece_get(rq);
	if (!p)
		return -ENOMEM;
	rq->pending++;
	mpiece_submit_to(p, MEMBER_FLUSH, s, m, 0, NULL, 0, 0, done);
	return 0;
}

/*
 * Members being rebuilt and replacements hold acknowledged writes in the
 * part they have: they are flushed too, so that what their recovery_offset
 * claims survives a crash.
 */
static void flush_log_done(void *arg, int res)
{
	array_piece_done(arg, res);
}

static void start_flush(struct array_req *rq)
{
	struct array *a = rq->a;

	/* the parity log's part (a journal's device), alongside the members' */
	if (a->plog && a->plog->ops->flush) {
		int rc;

		rq->pending++;
		rc = a->plog->ops->flush(a->plog, flush_log_done, rq);
		if (rc <= 0)
			array_piece_done(rq, rc);
	}

	for (unsigned s = 0; s < a->geom.raid_disks && !rq->result; s++) {
		struct member *extra = atomic_load(&a->slot[s].repl);
		int rc = 0;
		if (slot_ok(a, s))
			rc = flush_one(rq, s, a->slot[s].m, flush_member_done);
		else if (a->slot[s].m && a->slot[s].state == URAID_MEMBER_REBUILDING)
			rc = flush_one(rq, s, a->slot[s].m, flush_extra_done);
		if (!rc && extra)
			rc = flush_one(rq, s, extra, flush_extra_done);
		if (rc)
			rq->result = rc;
	}
}

/* Cut the request into pieces the level handles whole. */
static void start_pieces(struct array_req *rq)
{
	struct array *a = rq->a;
	struct uraid_io *io = rq->io;
	uint64_t sector = io->offset / 512, left = io->length / 512;
	uint8_t *buf = rq->data;

	while (left) {
		uint64_t n = a->ops->piece_sectors(a, sector);
		if (n > left)
			n = left;
		if (n > UINT32_MAX / 512)
			n = UINT32_MAX / 512 & ~7ull;
		rq->pending++;
		switch (io->op) {
		case URAID_IO_READ:
			a->ops->read(rq, sector, (uint32_t)n, buf);
			break;
		case URAID_IO_WRITE:
			a->ops->write(rq, sector, (uint32_t)n, buf);
			break;
		default:
			a->ops->discard(rq, sector, (uint32_t)n, io->op == URAID_IO_WRITE_ZEROES);
			break;
		}
		sector += n;
		left -= n;
		if (buf)
			buf += n * 512;
	}
}

static void req_issue(struct array_req *rq);

/* A request that ends before it reaches the level (its error, or ENOMEM). */
static void req_end_early(struct array_req *rq, int rc)
{
	if (rq->wc_marks)
		wcache_req_end(atomic_load(&rq->a->wc), rq, false);
	req_complete(rq, &rq->a->counters[rq->er->r.index], rc);
}

/* The request's bits are on disk (or could not be written): it goes on. */
static void req_wib_resume(struct wib_waiter *wt, int rc)
{
	struct array_req *rq = (struct array_req *)((char *)wt - offsetof(struct array_req, wib_wait));

	if (rc) {
		gate_leave_write(rq->a, rq->er->r.index);
		req_end_early(rq, rc);
		return;
	}
	req_issue(rq);
}

/* A write past the gate (the array active on disk): its bitmap bits, then the level. */
static void req_write_passed_gate(struct array_req *rq)
{
	uint64_t lo, hi;

	/* the bitmap's bits are on disk before any member sees the write */
	if (req_wib_range(rq, &lo, &hi)) {
		rq->wib_wait.resume = req_wib_resume;
		int rc = wib_start_write(rq->a, rq->er->r.index, lo, hi, &rq->wib_wait);
		if (rc == WIB_WAIT)
			return;
		if (rc) {
			gate_leave_write(rq->a, rq->er->r.index);
			req_end_early(rq, rc);
			return;
		}
	}
	req_issue(rq);
}

/* On the request's reactor: the array was marked active (0), or could not be. */
static void req_gate_resume(struct meta_batch *b, struct meta_wait *wt, int rc)
{
	struct array_req *rq = (struct array_req *)((char *)wt - offsetof(struct array_req, gate_wait));

	(void)b;
	if (rc) {
		gate_enter_failed(&rq->a->counters[rq->er->r.index]);
		req_end_early(rq, rc);
		return;
	}
	req_write_passed_gate(rq);
}

/* Past the cache: reads and flushes to the level, writes through the gate. */
void array_req_route(struct array_req *rq)
{
	struct array *a = rq->a;
	struct engine_reactor *er = rq->er;
	struct uraid_io *io = rq->io;

	if (!is_write_op(io->op)) {
		req_issue(rq);
	} else {
		struct array_counters *c = &a->counters[er->r.index];
		struct meta_batch *gate = &a->gate[er->r.index];
		/* counted either way (the idle cleaner leaves the array active) */
		bool active = gate_enter_fast(a, c);
		if (journal_unprotected(a, io)) {
			/* the gate's update writes resync_offset 0 first */
			atomic_store(&a->journal_unclean_wanted, true);
			active = false;
		}
		if (active && meta_batch_idle(gate))
			req_write_passed_gate(rq);
		else
			/* "active" on disk first: the metadata worker writes it, the
			   request waits here without holding up the reactor; behind
			   earlier writes that wait, even when it is active already */
			meta_batch_wait(gate, &rq->gate_wait);
	}
}

void array_req_end(struct array_req *rq, int res)
{
	req_end_early(rq, res);
}

/* Runs on the request's reactor. */
static void req_start(struct array *a, struct engine_reactor *er, struct uraid_io *io)
{
	/* the array's own request (a destage write, a prefetch): not cached again */
	bool internal = io->flags & ARRAY_IO_INTERNAL;
	struct array_counters *c = &a->counters[er->r.index];
	/* counted before the look at the freeze (freeze.h says why) */
	atomic_fetch_add(&c->in_flight, 1);
	if (array_freeze_parks(a, er, io)) {
		atomic_fetch_sub(&c->in_flight, 1);
		return;
	}
	struct array_req *rq = req_get(er);
	if (!rq) {
		atomic_fetch_sub(&c->in_flight, 1);
		io->done(io, -ENOMEM);
		return;
	}
	rq->a = a;
	rq->io = io;
	rq->pending = 1;   /* held while splitting */
	rq->start_ns = reactor_now_ns(&er->r);
	atomic_store_explicit(&c->started, atomic_load_explicit(&c->started, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	/* read-ahead: no prefetched copy of the range outlives the write's start */
	if (is_write_op(io->op))
		ra_invalidate(a, io->offset, io->length);

	/* the write-back cache may answer it, hold it or mark it */
	struct wcache *wc = atomic_load_explicit(&a->wc, memory_order_acquire);
	if (wc && !internal && wcache_take(wc, rq))
		return;
	array_req_route(rq);
}

void array_req_resume_parked(struct array *a, struct engine_reactor *er, struct uraid_io *io)
{
	req_start(a, er, io);
}

/* array_submit_internal's hop to another reactor: started there, then the
 * count that held the array open meanwhile is let go (req_start has its own). */
static void handover_internal(struct reactor *r, struct reactor_msg *m)
{
	struct io_priv *ip = (struct io_priv *)m;
	struct uraid_io *io = (struct uraid_io *)((char *)ip - offsetof(struct uraid_io, priv));
	struct array *a = ip->a;
	req_start(a, &a->e->reactors[r->index], io);
	atomic_fetch_sub(&a->counters[r->index].in_flight, 1);
}

void array_submit_internal(struct array *a, struct engine_reactor *er, struct uraid_io *io)
{
	io->flags |= ARRAY_IO_INTERNAL;
	if (reactor_is_current(&er->r)) {
		req_start(a, er, io);
		return;
	}
	struct io_priv *ip = (struct io_priv *)io->priv;
	memset(ip, 0, sizeof(*ip));
	ip->a = a;
	ip->msg.fn = handover_internal;
	/* counted from now: close (drain) must not free the array while the
	   message waits in er's inbox */
	atomic_fetch_add(&a->counters[er->r.index].in_flight, 1);
	reactor_post(&er->r, &ip->msg);
}

/* The request's member I/O (its bits on disk), or read-ahead's answer. */
static void req_issue(struct array_req *rq)
{
	/* read-ahead answers the read, or has it wait for a prefetch (cache/readahead.h) */
	/* (not one the write cache overlays at its end: that overlay is on
	   rq->data, which read-ahead's answer does not set up) */
	if (rq->io->op == URAID_IO_READ && !(rq->io->flags & ARRAY_IO_INTERNAL) &&
	    !rq->wc_marks && ra_read(rq))
		return;
	array_req_to_level(rq);
}

/* The request's member I/O: bounce buffer, pieces. */
void array_req_to_level(struct array_req *rq)
{
	struct uraid_io *io = rq->io;
	struct array_counters *c = &rq->a->counters[rq->er->r.index];

	/* counted under the hold epoch it saw twice (a hold that flips it
	   meanwhile may not have seen this count, so count again under the
	   new one), then past the hold's range (freeze.h says why) */
	uint32_t epoch;
	for (;;) {
		epoch = atomic_load(&rq->a->hold_epoch);
		atomic_fetch_add(&c->level_in_flight[epoch & 1], 1);
		if (atomic_load(&rq->a->hold_epoch) == epoch)
			break;
		atomic_fetch_sub(&c->level_in_flight[epoch & 1], 1);
	}
	if (array_hold_parks(rq)) {
		atomic_fetch_sub(&c->level_in_flight[epoch & 1], 1);
		return;
	}
	rq->hold_counted = true;
	rq->hold_parity = (uint8_t)(epoch & 1);

	if (io->op == URAID_IO_READ || io->op == URAID_IO_WRITE) {
		rq->data = io->buf;
		if (((uintptr_t)io->buf & (BOUNCE_ALIGN - 1)) && io->length) {
			/* unaligned caller buffer: O_DIRECT needs an aligned one */
			rq->data = io->length <= (16u << 20) ? req_buf(rq, io->length)
							      : aligned_alloc(BOUNCE_ALIGN, (io->length + BOUNCE_ALIGN - 1) & ~(uint64_t)(BOUNCE_ALIGN - 1));
			if (!rq->data) {
				rq->data = io->buf;
				array_piece_done(rq, -ENOMEM);
				return;
			}
			rq->bounced = true;
			if (io->op == URAID_IO_WRITE)
				memcpy(rq->data, io->buf, io->length);
		}
	}
	if (io->op == URAID_IO_FLUSH)
		start_flush(rq);
	else
		start_pieces(rq);
	array_piece_done(rq, 0);
}

static void handover(struct reactor *r, struct reactor_msg *m)
{
	struct io_priv *ip = (struct io_priv *)m;
	struct uraid_io *io = (struct uraid_io *)((char *)ip - offsetof(struct uraid_io, priv));
	struct array *a = ip->a;
	req_start(a, &a->e->reactors[r->index], io);
}

int uraid_array_submit(struct uraid_array *ua, unsigned reactor, struct uraid_io *io)
{
	struct array *a = A(ua);
	uint64_t size = array_export_sectors(a) * 512;

	if (reactor >= a->e->nreactors || !io || !io->done)
		return -EINVAL;
	if (io->op > URAID_IO_WRITE_ZEROES)
		return -EINVAL;
	if (io->flags & ~(URAID_IO_FUA | URAID_IO_LEND))
		return -EINVAL;         /* unknown, or the engine's own (ARRAY_IO_INTERNAL) */
	io->lend.data = NULL;
	if (io->op != URAID_IO_FLUSH &&
	    ((io->offset | io->length) % 512 || io->offset > size || io->length > size - io->offset))
		return -EINVAL;
	if ((io->op == URAID_IO_READ || io->op == URAID_IO_WRITE) && io->length && !io->buf)
		return -EINVAL;
	if (is_write_op(io->op) && (a->flags & URAID_ASSEMBLE_READONLY))
		return -EROFS;

	struct engine_reactor *er = &a->e->reactors[reactor];
	if (reactor_is_current(&er->r)) {
		req_start(a, er, io);
		return 0;
	}
	struct io_priv *ip = (struct io_priv *)io->priv;
	memset(ip, 0, sizeof(*ip));
	ip->a = a;
	ip->msg.fn = handover;
	reactor_post(&er->r, &ip->msg);
	return 0;
}

/* ---- synchronous helpers ---- */

struct sync_wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	int res;
};

static void sync_done(struct uraid_io *io, int res)
{
	struct sync_wait *w = io->ctx;
	pthread_mutex_lock(&w->mu);
	w->res = res;
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

static int run_sync(struct array *a, struct uraid_io *io)
{
	struct sync_wait w = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	io->done = sync_done;
	io->ctx = &w;
	int rc = uraid_array_submit((struct uraid_array *)a, 0, io);
	if (rc)
		return rc;
	if (a->e->flags & URAID_ENGINE_THREADS) {
		pthread_mutex_lock(&w.mu);
		while (!w.done)
			pthread_cond_wait(&w.cv, &w.mu);
		pthread_mutex_unlock(&w.mu);
	} else {
		/* caller-driven: this thread drives reactor 0 until the request is done */
		while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE))
			uraid_engine_poll(a->e, 0, -1);
	}
	return w.res;
}

int uraid_array_pread(struct uraid_array *ua, void *buf, uint64_t len, uint64_t off)
{
	struct uraid_io io = { .op = URAID_IO_READ, .offset = off, .length = len, .buf = buf };
	return run_sync(A(ua), &io);
}

int uraid_array_pwrite(struct uraid_array *ua, const void *buf, uint64_t len, uint64_t off,
		       uint32_t flags)
{
	struct uraid_io io = { .op = URAID_IO_WRITE, .flags = flags, .offset = off,
			       .length = len, .buf = (void *)buf };
	return run_sync(A(ua), &io);
}

int uraid_array_flush(struct uraid_array *ua)
{
	struct uraid_io io = { .op = URAID_IO_FLUSH };
	return run_sync(A(ua), &io);
}

int uraid_array_discard(struct uraid_array *ua, uint64_t off, uint64_t len)
{
	struct uraid_io io = { .op = URAID_IO_DISCARD, .offset = off, .length = len };
	return run_sync(A(ua), &io);
}

int uraid_array_write_zeroes(struct uraid_array *ua, uint64_t off, uint64_t len)
{
	struct uraid_io io = { .op = URAID_IO_WRITE_ZEROES, .offset = off, .length = len };
	return run_sync(A(ua), &io);
}

/* A member zeroed by punching holes (mio_clear_range_on, member_submit
 * ZEROES), as far as is known before trying. */
static bool punches(const struct member *m)
{
	return !m || (!m->blockdev && atomic_load(&m->punches) && !atomic_load(&m->no_punch));
}

bool uraid_array_zeroes_fast(struct uraid_array *ua, uint64_t off, uint64_t len)
{
	struct array *a = A(ua);
	const struct uraid_geom *g = &a->geom;

	if (a->level->info.zeroes_whole_rows) {
		/* a partial row is read, and its parity computed and written */
		uint64_t row = (uint64_t)g->data_disks * g->chunk_sectors * 512;
		if (off % row || len % row)
			return false;
	}
	for (unsigned s = 0; s < g->raid_disks; s++)
		if (!punches(atomic_load(&a->slot[s].m)) || !punches(atomic_load(&a->slot[s].repl)))
			return false;
	return true;
}

/* ---- lifecycle ---- */

int array_tick_add(struct array *a, array_tick_fn *fn)
{
	/* once each: a bitmap added again while served (uraid grow) asks twice */
	unsigned n = atomic_load_explicit(&a->nticks, memory_order_relaxed);

	for (unsigned i = 0; i < n; i++)
		if (a->ticks[i] == fn)
			return 0;
	if (n >= ARRAY_TICKS_MAX)
		return -ENOSPC;
	/* the hook first, then the count (release): the tick that sees the
	   count sees the hook (one adder at a time: assembly or the control
	   thread) */
	a->ticks[n] = fn;
	atomic_store_explicit(&a->nticks, n + 1, memory_order_release);
	return 0;
}

static void array_free(struct array *a)
{
	array_freeze_free(a);
	grow_pending_drop(a);   /* logs the commands that finish a grow left waiting */
	free(a->reshape);       /* one left in mid-reshape: on disk, it goes on next time */
	ra_fini(a);
	if (a->ops && a->ops->fini)
		a->ops->fini(a);
	if (a->plog)
		a->plog->ops->fini(a->plog);     /* after the level: no unit in it */
	while (a->plog_retired) {
		struct parity_log *pl = a->plog_retired;
		a->plog_retired = pl->retired_next;
		pl->ops->fini(pl);
	}
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (a->members[i]) {
			member_close(a->members[i]);
			free(a->members[i]);
		}
	}
	for (unsigned i = 0; i < a->nretired; i++) {
		member_close(a->retired[i]);
		free(a->retired[i]);
	}
	wib_free(a);
	grow_bitmap_free(a);
	stack_lower_free(a);
	if (atomic_load(&a->wc))
		wcache_destroy(atomic_load(&a->wc));
	pthread_mutex_destroy(&a->wc_set_lock);
	free(a->gate);
	pthread_mutex_destroy(&a->alloc_lock);
	pthread_mutex_destroy(&a->stripe_cache_lock);
	pthread_mutex_destroy(&a->meta_lock);
	pthread_mutex_destroy(&a->sync_lock);
	pthread_mutex_destroy(&a->sync_start_lock);
	free(a->counters);
	free(a);
}

int uraid_array_assemble(struct uraid_engine *e, const struct uraid_assemble_opts *o,
			 struct uraid_array **out, char *err, size_t errlen)
{
	struct array *a = calloc(1, sizeof(*a));
	if (!a)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	a->e = e;
	a->flags = o->flags;
	a->counters = aligned_alloc(64, e->nreactors * sizeof(*a->counters));
	if (!a->counters) {
		free(a);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	memset(a->counters, 0, e->nreactors * sizeof(*a->counters));
	a->gate = aligned_alloc(64, e->nreactors * sizeof(*a->gate));
	if (!a->gate) {
		free(a->counters);
		free(a);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	for (unsigned i = 0; i < e->nreactors; i++)
		meta_batch_init(&a->gate[i], e, &e->reactors[i].r, a, gate_update, req_gate_resume);
	a->idle_clean_ms = o->idle_clean_ms ? o->idle_clean_ms : IDLE_CLEAN_MS_DEFAULT;
	if (o->stripe_cache && !array_stripe_cache_valid(o->stripe_cache)) {
		array_free(a);
		return uraid_errf(err, errlen, -EINVAL, "stripe cache of %u stripe heads: give "
				  "%u..%u", o->stripe_cache, URAID_STRIPE_CACHE_MIN,
				  URAID_STRIPE_CACHE_MAX);
	}
	a->stripe_cache = o->stripe_cache ? o->stripe_cache : URAID_STRIPE_CACHE_DEFAULT;
	pthread_mutex_init(&a->alloc_lock, NULL);
	pthread_mutex_init(&a->stripe_cache_lock, NULL);
	pthread_mutex_init(&a->meta_lock, NULL);
	pthread_mutex_init(&a->sync_lock, NULL);
	pthread_mutex_init(&a->sync_start_lock, NULL);
	pthread_mutex_init(&a->wc_set_lock, NULL);
	if (array_freeze_init(a)) {
		array_free(a);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}

	if (o->write_cache > URAID_WRITE_BACK) {
		array_free(a);
		return uraid_errf(err, errlen, -EINVAL, "unknown write policy %u (0: through, 1: back)",
				  o->write_cache);
	}
	if (o->cache_bytes && (o->cache_bytes < WC_MIN_BYTES || o->cache_bytes > WC_MAX_BYTES)) {
		array_free(a);
		return uraid_errf(err, errlen, -EINVAL, "cache size %llu out of range (1 MiB .. 64 GiB)",
				  (unsigned long long)o->cache_bytes);
	}
	a->wc_bytes = o->cache_bytes;
	int rc = assemble_members(a, o, err, errlen);
	if (!rc)
		rc = journal_assemble(a, err, errlen);   /* md replays it at the start */
	if (rc) {
		array_free(a);
		return rc;
	}
	/* assembly found the level's descriptor (it refuses levels without one) */
	const struct level_ops *io = a->level->io;
	if (io->stripe_cache_set && !array_stripe_cache_fits(a->stripe_cache, a->geom.raid_disks)) {
		unsigned size = a->stripe_cache, members = a->geom.raid_disks;

		array_free(a);
		return uraid_errf(err, errlen, -E2BIG, "stripe cache of %u stripe heads needs "
				  "%" PRIu64 " MiB (4 KiB x %u members each), more than half of "
				  "this machine's memory (%" PRIu64 " MiB): give fewer", size,
				  (uint64_t)size * 4096u * members >> 20, members,
				  uraid_stripe_cache_memory_limit() >> 19);
	}
	if (io->init && (rc = io->init(a))) {
		array_free(a);
		return uraid_errf(err, errlen, rc, "cannot set up %s: %s", io->name, strerror(-rc));
	}
	a->ops = io;
	/* md replays its PPL before the array starts (md/ppl.c). One owner of
	   a->plog: assembly refuses a journal (0x200) with PPL (0x400/0x800),
	   so journal_assemble above or ppl_attach sets it, never both */
	if (a->plog && ppl_enabled(a)) {
		rc = uraid_errf(err, errlen, -EINVAL, "%s: a write journal and a partial parity "
				"log: md runs one or the other; not run", a->sb.set_name);
		array_free(a);
		return rc;
	}
	if ((rc = ppl_attach(a, err, errlen))) {
		array_free(a);
		return rc;
	}
	if ((rc = ra_init(a, o->read_ahead_bytes, err, errlen))) {
		array_free(a);
		return rc;
	}
	/* tick hooks in this order: clean marking, bitmap daemon (wib_init), jobs */
	array_tick_add(a, array_idle_check);
	if ((rc = wib_init(a, err, errlen))) {
		array_free(a);
		return rc;
	}
	sync_attach_pending(a);
	if (o->write_cache == URAID_WRITE_BACK && !(a->flags & URAID_ASSEMBLE_READONLY)) {
		struct wcache *wc;
		if ((rc = wcache_create(a, a->wc_bytes, URAID_WRITE_BACK, &wc))) {
			array_free(a);
			return uraid_errf(err, errlen, rc, "cannot allocate the write-back cache "
					  "of %llu bytes",
					  (unsigned long long)(a->wc_bytes ? a->wc_bytes : WC_DEFAULT_BYTES));
		}
		atomic_store(&a->wc, wc);
	}
	if ((rc = array_tick_add(a, wcache_tick))) {
		array_free(a);
		return uraid_errf(err, errlen, rc, "too many tick hooks");
	}
	if (o->journal_mode > URAID_JOURNAL_WRITE_BACK ||
	    (o->journal_mode == URAID_JOURNAL_WRITE_BACK && !(a->plog && a->plog->ops->wb_add))) {
		rc = uraid_errf(err, errlen, -EINVAL, "%s: --journal-mode=write-back needs a write "
				"journal (this array has %s)", a->sb.set_name,
				ppl_enabled(a) ? "a partial parity log" : "none");
		array_free(a);
		return rc;
	}
	if (o->journal_mode == URAID_JOURNAL_WRITE_BACK && !(a->flags & URAID_ASSEMBLE_READONLY) &&
	    (rc = uraid_array_set_journal_mode((struct uraid_array *)a, URAID_JOURNAL_WRITE_BACK))) {
		if (rc == -EBUSY) {
			/* md refuses write-back on a degraded array: served write-through */
			ulog(array_log(a), URAID_LOG_NOTICE, "%s: degraded: the journal stays "
			     "write-through (md refuses write-back then too)", a->sb.set_name);
			rc = 0;
		} else {
			uraid_errf(err, errlen, rc, "%s: cannot run the journal write-back: %s",
				   a->sb.set_name, strerror(-rc));
			array_free(a);
			return rc;
		}
	}
	atomic_store(&a->wstate, a->in_sync ? WSTATE_CLEAN : WSTATE_ACTIVE);
	for (unsigned i = 0; i < e->nreactors; i++)
		atomic_store(&a->counters[i].last_write_ns, engine_now_ns());

	pthread_mutex_lock(&e->lock);
	a->next = e->arrays;
	e->arrays = a;
	pthread_mutex_unlock(&e->lock);
	*out = (struct uraid_array *)a;
	return 0;
}

/* Let in-flight requests finish: drive the reactors ourselves when nobody else does. */
static void drain(struct array *a)
{
	/* parked first: a resumed request counts itself in in_flight before
	   it leaves the park's count */
	while (!array_park_idle(a) || sum_in_flight(a)) {
		if (a->e->flags & URAID_ENGINE_THREADS) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		} else {
			for (unsigned i = 0; i < a->e->nreactors; i++)
				uraid_engine_poll(a->e, i, 1);
		}
	}
}

int uraid_array_close(struct uraid_array *ua)
{
	struct array *a = A(ua);
	struct uraid_engine *e = a->e;
	int rc = 0;

	/* out of the engine's list first: engine_tick starts no rebuild from now on */
	pthread_mutex_lock(&e->lock);
	for (struct array **pp = &e->arrays; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	atomic_store(&a->nticks, 0);    /* its tick hooks go with it */
	pthread_mutex_unlock(&e->lock);
	sync_stop_wait(a);
	/* a freeze left standing at close (its owner is gone, or a bug):
	   its parked requests are answered, not dropped */
	if (array_frozen(a)) {
		ulog(array_log(a), URAID_LOG_WARNING, "closed while frozen: the held requests go on");
		array_thaw(a);
	}
	drain(a);
	/* what the cache holds reaches the members before the array is clean */
	struct wcache *wc = atomic_load(&a->wc);
	if (wc) {
		rc = wcache_drain(wc);
		drain(a);
	}

	if (!(a->flags & URAID_ASSEMBLE_READONLY)) {
		for (unsigned s = 0; s < a->geom.raid_disks; s++)
			if (slot_ok(a, s) && !rc)
				rc = member_flush_sync(a->slot[s].m);
		pthread_mutex_lock(&a->meta_lock);
		/* dirty arrays too: resync_offset records how far a resync got */
		int r2 = a->in_sync ? meta_write_resync_offset(a) : meta_mark_clean(a);
		if (!rc)
			rc = r2;
		pthread_mutex_unlock(&a->meta_lock);
	}
	array_free(a);
	return rc;
}

int uraid_array_set_write_cache(struct uraid_array *ua, uint32_t policy)
{
	struct array *a = A(ua);
	int rc = 0;

	if (policy > URAID_WRITE_BACK)
		return -EINVAL;
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return policy == URAID_WRITE_BACK ? -EROFS : 0;
	pthread_mutex_lock(&a->wc_set_lock);
	struct wcache *wc = atomic_load(&a->wc);
	if (a->journal_mode == URAID_JOURNAL_WRITE_BACK) {
		/* the journal's write-back holds the cache: its mode decides */
		pthread_mutex_unlock(&a->wc_set_lock);
		return policy == URAID_WRITE_BACK ? 0 : -EBUSY;
	}
	if (policy == URAID_WRITE_BACK) {
		if (!wc && (rc = wcache_create(a, a->wc_bytes, URAID_WRITE_BACK, &wc)) == 0)
			atomic_store_explicit(&a->wc, wc, memory_order_release);
		else if (wc)
			wcache_set_policy(wc, URAID_WRITE_BACK);
	} else if (wc) {
		/* writes from now on go through; what is dirty goes to the members */
		wcache_set_policy(wc, URAID_WRITE_THROUGH);
		rc = wcache_drain(wc);
		if (rc == 0)
			wcache_drop_clean(wc);
	}
	pthread_mutex_unlock(&a->wc_set_lock);
	return rc;
}

int uraid_array_set_journal_mode(struct uraid_array *ua, uint32_t mode)
{
	struct array *a = A(ua);
	int rc = 0;

	if (mode > URAID_JOURNAL_WRITE_BACK)
		return -EINVAL;
	if (!a->plog || !a->plog->ops->wb_add)
		return -ENODEV;
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return mode == URAID_JOURNAL_WRITE_BACK ? -EROFS : 0;
	pthread_mutex_lock(&a->wc_set_lock);
	struct wcache *wc = atomic_load(&a->wc);
	if (mode == a->journal_mode) {
		pthread_mutex_unlock(&a->wc_set_lock);
		return 0;
	}
	if (mode == URAID_JOURNAL_WRITE_BACK) {
		if (atomic_load(&a->degraded))
			rc = -EBUSY;
		else if (!wc && (rc = wcache_create(a, a->wc_bytes, URAID_WRITE_BACK, &wc)) == 0)
			atomic_store_explicit(&a->wc, wc, memory_order_release);
		if (!rc && (rc = wcache_drain(wc)) == 0) {
			/* volatile cached data (--write-cache=back) went out first:
			   from now on every cached page is in the journal */
			pthread_mutex_lock(&wc->lock);
			wcache_set_journal(wc, a->plog);
			pthread_mutex_unlock(&wc->lock);
			wcache_set_policy(wc, URAID_WRITE_BACK);
			a->journal_mode = mode;
		}
	} else {
		/* writes from now on go through the journal; what is cached goes
		   to the members (its records stay in the log until then) */
		pthread_mutex_lock(&wc->lock);
		wcache_set_journal(wc, NULL);
		pthread_mutex_unlock(&wc->lock);
		wcache_set_policy(wc, URAID_WRITE_THROUGH);
		a->journal_mode = mode;
		rc = wcache_drain(wc);
		if (rc == 0)
			wcache_drop_clean(wc);
	}
	pthread_mutex_unlock(&a->wc_set_lock);
	return rc;
}

/* ---- status and faults ---- */

uint64_t uraid_array_size(const struct uraid_array *ua)
{
	return array_export_sectors((const struct array *)ua) * 512;
}

int uraid_array_status(struct uraid_array *ua, struct uraid_array_status *st)
{
	struct array *a = A(ua);

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&a->meta_lock);
	memcpy(st->uuid, a->sb.set_uuid, 16);
	memcpy(st->name, a->sb.set_name, sizeof(st->name));
	st->level = a->geom.level;
	st->layout = a->geom.layout;
	st->raid_disks = a->geom.raid_disks;
	st->chunk_bytes = a->geom.chunk_sectors * 512;
	st->size_bytes = array_export_sectors(a) * 512;
	st->degraded = atomic_load(&a->degraded);
	st->clean = a->in_sync && !a->resync_needed;
	st->resync_needed = a->resync_needed;
	st->consistency_policy = ppl_enabled(a) ? "ppl" : a->plog ? a->plog->ops->name :
				 a->sb.feature_map & URAID_FEATURE_JOURNAL ? "journal" :
				 a->has_bitmap ? "bitmap" : a->level->info.redundant ? "resync" :
				 "none";
	if (a->has_bitmap) {
		st->bitmap_chunk_bytes = a->bitmap.chunksize;
		st->bitmap_bits = uraid_bitmap_bits(a->bitmap.sync_size, a->bitmap.chunksize);
		st->bitmap_stale = a->bitmap_stale;
		st->bitmap_events_cleared = a->bitmap.events_cleared;
		st->bitmap_dirty_bits = a->wib ? atomic_load(&a->wib->bits_set)
				      : a->bitmap_stale ? st->bitmap_bits : 0;
	}
	ra_status(a, &st->read_ahead);
	st->read_only = a->flags & URAID_ASSEMBLE_READONLY;
	array_stripe_cache_status(a, &st->stripe_cache);
	st->events = a->sb.events;
	st->in_flight = sum_in_flight(a);
	struct wcache *wc = atomic_load(&a->wc);
	if (wc)
		wcache_status(wc, &st->write_cache);
	if (a->plog && a->plog->ops->wb_status) {
		uint64_t ring, used;
		a->plog->ops->wb_status(a->plog, &ring, &used, &st->journal_seq,
					&st->journal_records);
		st->journal_ring_bytes = ring * 512;
		st->journal_used_bytes = used * 512;
		st->journal_mode = a->journal_mode;
		if (wc)
			wcache_journal_counts(wc, &st->journal_partial_waits,
					      &st->journal_row_waits, &st->journal_full_through);
	}
	st->nmembers = a->nmembers;
	for (unsigned i = 0; i < a->nmembers; i++) {
		struct uraid_member_status *ms = &st->members[i];
		struct member *m = a->members[i];
		ms->slot = a->member_slot[i];
		ms->state = a->member_state[i];
		/* a spare holding a slot whose rebuild runs */
		int ps = a->member_pending_slot[i];
		if (ms->state == URAID_MEMBER_SPARE && ps >= 0 && a->slot[ps].m == a->members[i] &&
		    a->slot[ps].state == URAID_MEMBER_REBUILDING) {
			ms->state = URAID_MEMBER_REBUILDING;
			ms->slot = ps;
		}
		/* in its slot, filled by a reshape (RAID 5 -> 6's Q member): not
		   In_sync in md until the end, "spare rebuilding" in mdadm
		   --detail; the monitor then moves no spare in for the count
		   of degraded it makes */
		if (ms->state == URAID_MEMBER_IN_SYNC && ms->slot >= 0 &&
		    ms->slot < URAID_MAX_MEMBERS && slot_ok(a, (unsigned)ms->slot) &&
		    !meta_slot_in_sync(a, (unsigned)ms->slot))
			ms->state = URAID_MEMBER_REBUILDING;
		if (ms->state == URAID_MEMBER_SPARE && ps >= 0 && m &&
		    atomic_load(&a->slot[ps].repl) == m) {
			ms->state = URAID_MEMBER_REBUILDING;
			ms->slot = ps;
			ms->replacing = true;
		}
		if (!m)
			continue;
		snprintf(ms->path, sizeof(ms->path), "%s", m->path);
		ms->direct = m->direct;
		struct member_totals t;
		member_counters(m, &t);
		ms->reads = t.reads;
		ms->writes = t.writes;
		ms->read_bytes = t.read_bytes;
		ms->write_bytes = t.write_bytes;
		ms->read_errors = atomic_load(&m->read_errors);
		ms->write_errors = atomic_load(&m->write_errors);
		ms->corrected_reads = atomic_load(&m->corrected_reads);
	}
	pthread_mutex_unlock(&a->meta_lock);
	return 0;
}

int uraid_array_latency(struct uraid_array *ua, struct uraid_latency_hist *h)
{
	struct array *a = A(ua);
	const struct latency_counts *per[a->e->nreactors];

	for (unsigned i = 0; i < a->e->nreactors; i++)
		per[i] = &a->counters[i].latency;
	memset(h, 0, sizeof(*h));
	latency_sum(per, a->e->nreactors, h);
	return 0;
}

int uraid_array_member_detached(struct uraid_array *ua, unsigned i)
{
	struct array *a = A(ua);
	struct stat st;
	char sys[64];
	int rc;

	pthread_mutex_lock(&a->meta_lock);
	struct member *m = i < a->nmembers ? a->members[i] : NULL;
	if (!m || m->fd < 0)
		rc = -ENOENT;
	else if (m->stack)
		rc = 0;         /* an array of this engine: it goes when it is closed */
	else if (fstat(m->fd, &st) != 0)
		rc = -errno;
	else if (S_ISBLK(st.st_mode)) {
		/* the kernel's entry for the device goes when its driver lets go */
		snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
		rc = access(sys, F_OK) != 0 && errno == ENOENT &&
		     access("/sys/dev/block", F_OK) == 0;      /* no sysfs: cannot tell */
	} else {
		rc = st.st_nlink == 0;
	}
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

int uraid_array_inject(struct uraid_array *ua, unsigned slot, const struct uraid_fault *f)
{
	struct array *a = A(ua);
	if (slot >= a->geom.raid_disks || !a->slot[slot].m)
		return -EINVAL;
	member_set_fault(a->slot[slot].m, f);
	return 0;
}
