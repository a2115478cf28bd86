// SPDX-License-Identifier: MIT
/*
 * Destaging the write-back cache: dirty pages go to the members as ordinary
 * write requests of the array (array_submit_internal: the write gate marks
 * the array active, the bitmap bits go to disk, then the level), so md's
 * order (active and bitmap before data) holds for them as for any write.
 *
 * Which pages: a sweep in offset order (the dirty pages not in flight,
 * sorted when the previous sweep is used up), contiguous pages gathered into
 * one write of up to 4 MiB (the core cuts it at stripe rows: whole rows go
 * as full-stripe writes). On RAID 4/5/6 a write ends at a row's end when
 * the next row would not fit whole, and, unless something waits for the
 * destage to finish (a flush, the drain, the idle tick), a run that ends
 * inside a row leaves that last row for a later sweep: a sequential stream
 * is still writing it, and destaged now it would be a read-modify-write
 * and written again later (row_cut). A page's bytes are copied
 * into the write's buffer under the lock, with its generation: if the page
 * changes meanwhile it stays dirty and goes again.
 *
 * When: while a flush waits, a write waits for room, dirty pages are above
 * the high-water mark (until back under the low one), the writes have been
 * quiet for a while (the tick), the array closes or goes write-through.
 * Destage writes run on the reactor that found them needed; up to
 * WC_DESTAGE_SLOTS at a time, each completion starting the next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/cache/wcache.h"
#include "engine/core/array.h"
#include "engine/level/parity_log.h"

#define WC_IDLE_NS (50ull * 1000000)     /* writes quiet this long: destage all */

bool wc_want_destage(const struct wcache *c)
{
	return c->ndirty && !c->backoff && (atomic_load(&c->draining) || c->flush_wait || c->epoch_head || c->space_head ||
			     c->pressure || c->idle_kick || c->row_ready || c->jbar || c->jpress || c->jrow_wait ||
			     atomic_load_explicit(&c->policy, memory_order_relaxed) != URAID_WRITE_BACK);
}

static int sweep_cmp(const void *x, const void *y)
{
	const struct wc_sweep_ent *a = x, *b = y;
	return a->pgno < b->pgno ? -1 : a->pgno > b->pgno;
}

/* The dirty pages not in flight, in offset order (lock held). */
static void sweep_rebuild(struct wcache *c)
{
	uint32_t h = c->npages + 2, n = 0;      /* the dirty list's head */
	for (uint32_t i = c->pg[h].next; i != h; i = c->pg[i].next)
		if (!c->pg[i].inflight)
			c->sweep[n++] = (struct wc_sweep_ent){ .pgno = c->pg[i].pgno, .idx = i };
	qsort(c->sweep, n, sizeof(*c->sweep), sweep_cmp);
	c->sweep_n = n;
	c->sweep_pos = 0;
}

/* The sectors of page p one destage write takes: the whole page when all of
 * it is valid, else the valid run around its first dirty sector. */
static uint8_t page_run(const struct wc_page *p, unsigned *lo, unsigned *hi)
{
	if (p->valid == 0xff) {
		*lo = 0;
		*hi = WC_PAGE_SECTORS;
		return 0xff;
	}
	unsigned s = (unsigned)__builtin_ctz(p->dirty), e = s + 1;
	while (s > 0 && (p->valid & (1u << (s - 1))))
		s--;
	while (e < WC_PAGE_SECTORS && (p->valid & (1u << e)))
		e++;
	*lo = s;
	*hi = e;
	return (uint8_t)(((1u << e) - 1) & ~((1u << s) - 1));
}

static void destage_done(struct uraid_io *io, int res);

/*
 * Journal write-back: an op written through waits until no page of its
 * stripe rows is in the log and not on the members (WC_MARK_JROWW). Those
 * pages go first, not when the sweep comes to them (after the rest of the
 * cache: a writer waiting milliseconds). One of them, dirty and not in
 * flight, or NULL (lock held). Rows of ops longer than a few stripe rows
 * are left to the sweep.
 *
 * Each op's rows are looked at once, from t->wc_jpick on (set at its
 * arrival, wcache.c take_through): no page of them is logged after it
 * arrived, so the pages passed (not logged, or taken: in flight now) need
 * no second look. A page whose destage is retried (ENOMEM) is left to the
 * sweep and jwb_oldest; one held by another op written through is looked
 * at again.
 */
static struct wc_page *jrow_first(struct wcache *c)
{
	uint64_t ss = (uint64_t)c->a->geom.data_disks * c->a->geom.chunk_sectors;

	if (!c->jrow_wait || !ss)
		return NULL;
	for (struct array_req *t = c->through_list; t; t = t->wc_next) {
		if (!(t->wc_marks & WC_MARK_JROWW))
			continue;
		uint64_t lo = t->wc_lo / ss * ss, hi = (t->wc_hi + ss - 1) / ss * ss;
		if (hi - lo > 4 * ss)
			continue;
		bool passed = true;     /* every page before pg needs no second look */
		for (uint64_t pg = t->wc_jpick; pg * WC_PAGE_SECTORS < hi; pg++) {
			struct wc_page *p = wc_lookup(c, pg);
			bool later = p && p->state == WC_PG_DIRTY && p->jref && !p->inflight;
			if (later && wc_destage_blocked(c, pg * WC_PAGE_SECTORS,
							(pg + 1) * WC_PAGE_SECTORS)) {
				passed = false;
				continue;
			}
			if (passed)
				t->wc_jpick = pg + 1;
			if (later)
				return p;
		}
	}
	return NULL;
}

/*
 * Journal write-back: the dirty page holding the oldest record (the head of
 * the dirty list, kept in record order by absorb_j, the pages in flight at
 * its tail: wc_dirty_requeue), not in flight nor held by an op written
 * through, or NULL (lock held). Its record holds the
 * journal's oldest pending batch, so the tail (and the batches behind it)
 * moves on only once it is destaged: taken first, not when the offset
 * sweep comes to it (the log's 1024 batches could run out meanwhile, each
 * destage and each write's record taking one). A few entries are looked
 * at; past them the sweep goes on.
 */
static struct wc_page *jwb_oldest(struct wcache *c)
{
	uint32_t h = c->npages + 2;     /* the dirty list's head */
	unsigned n = 0;

	if (!c->jwb)
		return NULL;
	for (uint32_t i = c->pg[h].next; i != h && n < 64; i = c->pg[i].next, n++) {
		struct wc_page *p = &c->pg[i];
		if (!p->jref)
			return NULL;    /* dirty before the journal: no record to free */
		if (p->inflight || p->valid != 0xff ||
		    wc_destage_blocked(c, p->pgno * WC_PAGE_SECTORS, (p->pgno + 1) * WC_PAGE_SECTORS))
			continue;
		return p;
	}
	return NULL;
}

/* Pages in a stripe row of the array (RAID 4/5/6 without the journal's
 * write-back mode, whose destages this leaves as they were); 0: none. */
static uint64_t row_pages(const struct wcache *c)
{
	uint64_t ss = (uint64_t)c->a->geom.data_disks * c->a->geom.chunk_sectors;

	if (c->jwb || !ss || ss % WC_PAGE_SECTORS)
		return 0;
	return ss / WC_PAGE_SECTORS;
}

/* Does something wait for every dirty page (no row left for later)? */
static bool destage_urgent(const struct wcache *c)
{
	return atomic_load(&c->draining) || c->flush_wait || c->epoch_head || c->idle_kick ||
	       atomic_load_explicit(&c->policy, memory_order_relaxed) != URAID_WRITE_BACK;
}

/*
 * The run of pages [0, *n) from sector start to *next, the sweep's run
 * ended there (not cut at the size limit). If it ends inside a row and
 * holds a row's end before, it ends there instead, and the pages of the
 * last row wait for a later sweep: a stream writing that row completes it
 * meanwhile, and the row goes whole. A run from a row's start to inside
 * it (a stream's front, alone) waits whole while other destages are in
 * flight (their completions look again: the cache never stalls on it).
 * Returns false when the run waits whole (lock held).
 */
static bool row_cut(const struct wcache *c, const struct wc_destage *d, uint32_t *n,
		    uint64_t start, uint64_t *next)
{
	uint64_t rowp = row_pages(c), rs = rowp * WC_PAGE_SECTORS;

	if (!rowp || *next % rs == 0 || destage_urgent(c))
		return true;
	uint64_t cut = *next / rs * rs;
	if (cut <= start)       /* inside one row (random writes; a stream's front) */
		return !(start == cut && c->destages_in_flight);
	while (*n && c->pg[d->page[*n - 1]].pgno * WC_PAGE_SECTORS >= cut)
		(*n)--;
	*next = cut;
	return true;
}

/*
 * May the destage write read the run's bytes in place, with no copy? Whole
 * pages, next to each other in the cache's memory (a stream's pages are:
 * a large write's page goes at index pgno % npages where it can, wcache.c
 * page_alloc), not in the journal's write-back mode. Until it
 * completes, a write to one of them waits (absorb_j), as for room.
 */
static bool can_inplace(const struct wcache *c, const struct wc_destage *d, const unsigned *lo,
			const unsigned *hi)
{
	/* a whole row at least: a stream's (small writes' pages next to each
	   other are copied as before, so a rewrite of one never waits for the
	   member write, and they stay cached for reads: no drop-behind) */
	uint64_t rowp = row_pages(c);
	if (c->jwb || d->npages < 2 || !rowp || d->npages < rowp)
		return false;
	for (uint32_t i = 0; i < d->npages; i++)
		if (d->page[i] != d->page[0] + i || lo[i] || hi[i] != WC_PAGE_SECTORS)
			return false;
	return true;
}

/* One destage write from the sweep, its pages marked and copied (lock held); NULL: none. */
static struct wc_destage *build_one(struct wcache *c, struct engine_reactor *er)
{
	if (!c->free_slots || c->destage_bytes >= WC_DESTAGE_INFLIGHT_BYTES)
		return NULL;
	bool rebuilt = c->sweep_pos >= c->sweep_n;
	if (rebuilt)
		sweep_rebuild(c);
	struct wc_destage *d = c->free_slots;
	uint64_t start = 0, next = 0;
	unsigned lo[WC_DESTAGE_MAX_PAGES], hi[WC_DESTAGE_MAX_PAGES];
	d->npages = 0;

	struct wc_page *first = jrow_first(c);
	if (first) {            /* alone (the sweep takes it again: in flight, skipped) */
		lo[0] = 0;
		d->mask[0] = page_run(first, &lo[0], &hi[0]);
		d->page[0] = (uint32_t)(first - c->pg);
		d->npages = 1;
		start = first->pgno * WC_PAGE_SECTORS + lo[0];
		next = first->pgno * WC_PAGE_SECTORS + hi[0];
	} else if ((first = jwb_oldest(c))) {
		/* the oldest record's page, and the whole dirty pages after it */
		for (struct wc_page *p = first; p && d->npages < WC_DESTAGE_JWB_PAGES;
		     p = wc_lookup(c, p->pgno + 1)) {
			if (p != first && (p->state != WC_PG_DIRTY || p->inflight || p->valid != 0xff ||
					   !p->jref || wc_destage_blocked(c, p->pgno * WC_PAGE_SECTORS,
									   (p->pgno + 1) * WC_PAGE_SECTORS)))
				break;
			lo[d->npages] = 0;
			hi[d->npages] = WC_PAGE_SECTORS;
			d->mask[d->npages] = 0xff;
			d->page[d->npages] = (uint32_t)(p - c->pg);
			d->npages++;
		}
		start = first->pgno * WC_PAGE_SECTORS;
		next = start + (uint64_t)d->npages * WC_PAGE_SECTORS;
	}
	uint64_t rowp = row_pages(c);
	uint32_t maxp = c->jwb ? WC_DESTAGE_JWB_PAGES : WC_DESTAGE_MAX_PAGES;
	bool run_ended;                 /* false: cut at the size limit or a row's end */
again:
	run_ended = true;
	while (!first && c->sweep_pos < c->sweep_n) {
		if (d->npages >= maxp) {
			run_ended = false;
			break;
		}
		const struct wc_sweep_ent *ent = &c->sweep[c->sweep_pos];
		struct wc_page *p = &c->pg[ent->idx];
		if (p->pgno != ent->pgno || p->state != WC_PG_DIRTY || p->inflight) {
			c->sweep_pos++;          /* cleaned, dropped or reused since the sort */
			continue;
		}
		unsigned l, h;
		uint8_t mask = page_run(p, &l, &h);
		uint64_t s0 = p->pgno * WC_PAGE_SECTORS + l, s1 = p->pgno * WC_PAGE_SECTORS + h;
		if (d->npages && s0 != next)
			break;
		if (wc_destage_blocked(c, s0, s1)) {
			/* a written-through op holds the range: the next sweep retries */
			if (d->npages)
				break;
			c->sweep_pos++;
			continue;
		}
		if (!d->npages)
			start = s0;
		lo[d->npages] = l;
		hi[d->npages] = h;
		d->page[d->npages] = ent->idx;
		d->mask[d->npages] = mask;
		d->npages++;
		next = s1;
		c->sweep_pos++;
		if (h != WC_PAGE_SECTORS)
			break;              /* the run ends inside this page */
		/* a row's end, and the next row would not fit whole */
		if (rowp && (p->pgno + 1) % rowp == 0 && maxp - d->npages < rowp) {
			run_ended = false;
			break;
		}
	}
	if (run_ended && d->npages && !first && !row_cut(c, d, &d->npages, start, &next)) {
		d->npages = 0;          /* that run waits: the next one */
		goto again;
	}
	if (!d->npages && c->sweep_pos >= c->sweep_n && !rebuilt && !first) {
		/* pages dirtied since the sort (a row just completed) */
		sweep_rebuild(c);
		rebuilt = true;
		goto again;
	}
	if (!d->npages) {
		/* the sweep is used up: the rows completed are out (or going) */
		if (c->sweep_pos >= c->sweep_n)
			c->row_ready = false;
		return NULL;
	}
	size_t len = (size_t)(next - start) * 512;
	d->inplace = can_inplace(c, d, lo, hi);
	d->buf = d->inplace ? c->data + (size_t)d->page[0] * WC_PAGE_BYTES
			    : bufpool_get(&er->pool, len);
	if (!d->buf)
		return NULL;            /* out of memory: the pages stay dirty, retried later */
	c->free_slots = d->next_free;
	size_t at = 0;
	/* every page whole and in the journal (a record, kept until this
	   write is done: wb_put at wc_make_clean): the journal logs parity only */
	bool jlogged = c->jwb;
	for (uint32_t i = 0; i < d->npages; i++) {
		struct wc_page *p = &c->pg[d->page[i]];
		size_t n = (size_t)(hi[i] - lo[i]) * 512;
		jlogged = jlogged && p->jref && d->mask[i] == 0xff;
		if (!d->inplace)
			memcpy(d->buf + at, c->data + (size_t)d->page[i] * WC_PAGE_BYTES + lo[i] * 512,
			       n);
		at += n;
		p->inplace = d->inplace;
		p->inflight = true;
		if (c->jwb)
			wc_dirty_requeue(c, p, false);
		p->redirtied = false;
		d->gen[i] = p->gen;
		d->dirty0[i] = p->dirty;
	}
	d->er = er;
	memset(&d->io, 0, sizeof(d->io));
	d->io.op = URAID_IO_WRITE;
	d->io.flags = jlogged ? ARRAY_IO_JLOGGED : 0;
	d->io.offset = start * 512;
	d->io.length = len;
	d->io.buf = d->buf;
	d->io.done = destage_done;
	d->io.ctx = d;
	c->destages_in_flight++;
	c->destage_bytes += len;
	return d;
}

/*
 * Journal write-back, destaging only because the log or the cache runs low
 * (no flush, writer or op waits for it): at most WC_JWB_TRICKLE destage
 * writes in flight. The reactor doing them then gets to its polls often:
 * a writer's log write waits for the one in work, which completes at the
 * next poll of the reactor that issued it. Few pages are in flight too (a
 * write to one, or to its 4 KiB row, is not cached). Full width again when
 * the log's batches could run out before every dirty page is destaged
 * (each narrow destage may be a log write of its own, and the oldest
 * pending batch, a record's, is freed only by its page's destage).
 * Lock held.
 */
static bool jwb_narrow(const struct wcache *c)
{
	if (!c->jwb || !c->jpl->ops->wb_batches_free || c->destages_in_flight < WC_JWB_TRICKLE)
		return false;
	if (atomic_load(&c->draining) || c->flush_wait || c->epoch_head || c->space_head ||
	    c->jbar || c->jrow_wait ||
	    atomic_load_explicit(&c->policy, memory_order_relaxed) != URAID_WRITE_BACK)
		return false;
	return c->jpl->ops->wb_batches_free(c->jpl) > 2 * c->ndirty + 64;
}

void wc_destage_run(struct wcache *c, struct engine_reactor *er)
{
	unsigned r = er->r.index;

	/* a destage completing inline (tmpfs members) is picked up by this loop */
	if (c->running[r])
		return;
	c->running[r] = true;
	for (;;) {
		pthread_mutex_lock(&c->lock);
		struct wc_destage *d = wc_want_destage(c) && !jwb_narrow(c) ? build_one(c, er) : NULL;
		pthread_mutex_unlock(&c->lock);
		if (!d)
			break;
		array_submit_internal(c->a, er, &d->io);
	}
	c->running[r] = false;
}

/* The level could not write page p (the array cannot survive): its bytes
 * are gone. Neither dirty nor valid any more (a read must not return what
 * no member holds); the flushes of its epoch and later will fail. */
static void page_lost(struct wcache *c, struct wc_page *p)
{
	if (p->state == WC_PG_DIRTY && (!c->lost_epoch || p->epoch < c->lost_epoch))
		c->lost_epoch = p->epoch;
	wc_make_clean(c, p);
	p->valid = 0;
	p->gen++;
}

static void destage_done(struct uraid_io *io, int res)
{
	struct wc_destage *d = io->ctx;
	struct wcache *c = d->c;
	struct engine_reactor *er = d->er;
	/* no request memory, a queue full: nothing was lost, try again later */
	bool transient = res == -ENOMEM || res == -EAGAIN;

	atomic_fetch_add(&c->busy, 1);
	pthread_mutex_lock(&c->lock);
	for (uint32_t i = 0; i < d->npages; i++) {
		struct wc_page *p = &c->pg[d->page[i]];
		p->inflight = false;
		p->inplace = false;
		if (transient) {
			/* stays dirty, in its epoch */
		} else if (res) {
			page_lost(c, p);
		} else if (p->gen == d->gen[i]) {
			uint8_t left = p->dirty & (uint8_t)~d->mask[i];
			c->dirty_sectors -= (uint64_t)__builtin_popcount(p->dirty & d->mask[i]);
			p->dirty = left;
			if (!left)
				wc_make_clean(c, p);
		} else if (p->state == WC_PG_DIRTY && p->redirtied &&
			   !(d->dirty0[i] & (uint8_t)~d->mask[i])) {
			/* everything dirty at the copy is on the members; what is
			   left is as old as the first write after the copy. (A run
			   the destage did not carry keeps the page in its epoch.) */
			c->epoch_dirty[p->epoch % WC_EPOCHS]--;
			p->epoch = p->redirty_epoch;
			c->epoch_dirty[p->epoch % WC_EPOCHS]++;
		}
		p->redirtied = false;
		if (c->jwb && p->state == WC_PG_DIRTY)
			wc_dirty_requeue(c, p, true);   /* among the oldest again */
		wc_page_free_if_empty(c, p);
	}
	if (!res && d->inplace)
		wc_drop_behind(c, d->page, d->npages);
	if (transient) {
		c->backoff = true;
	} else if (res) {
		c->st.destage_errors++;
	} else {
		c->st.destage_writes++;
		c->st.destaged_bytes += io->length;
	}
	if (!d->inplace)
		bufpool_put(&er->pool, d->buf, io->length);
	d->next_free = c->free_slots;
	c->free_slots = d;
	c->destages_in_flight--;
	c->destage_bytes -= io->length;
	wc_epoch_advance(c);
	wc_after_change(c);
	struct parity_log *jpl = c->jpl;
	pthread_mutex_unlock(&c->lock);
	/* the journal's records this destage let go: its tail may move on
	   and units waiting for room go (a checkpoint) */
	if (jpl)
		jpl->ops->wb_kick(jpl, &er->r);
	wc_destage_run(c, er);
	atomic_fetch_sub(&c->busy, 1);
}

/* ---- kick, tick, drain ---- */

static void kick_msg(struct reactor *r, struct reactor_msg *m)
{
	struct wcache *c = (struct wcache *)((char *)m - offsetof(struct wcache, kick_msg));
	atomic_fetch_add(&c->busy, 1);       /* before kick_posted clears: the drain waits */
	atomic_store(&c->kick_posted, false);
	wc_destage_run(c, &c->a->e->reactors[r->index]);
	atomic_fetch_sub(&c->busy, 1);
}

static void kick_to(struct wcache *c, unsigned idx)
{
	if (atomic_exchange(&c->kick_posted, true))
		return;
	c->kick_msg.fn = kick_msg;
	reactor_post(&c->a->e->reactors[idx].r, &c->kick_msg);
}

/* Have reactor 0 look for destage work (from any thread). */
void wc_kick(struct wcache *c)
{
	kick_to(c, 0);
}

void wc_kick_away(struct wcache *c, struct engine_reactor *er)
{
	unsigned n = c->a->e->nreactors;
	kick_to(c, n > 1 ? (er->r.index + 1) % n : er->r.index);
}

void wcache_tick(struct array *a, uint64_t now_ns)
{
	struct wcache *c = atomic_load_explicit(&a->wc, memory_order_acquire);
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->backoff = false;
	/* writes waiting for room are not quiet: they wait for the destage
	   that runs for them anyway (idle, it would not leave rows to complete) */
	if (c->ndirty && !c->idle_kick && !c->space_head && now_ns > c->last_write_ns &&
	    now_ns - c->last_write_ns >= WC_IDLE_NS)
		c->idle_kick = true;
	if (!c->ndirty)
		c->idle_kick = false;
	bool kick = wc_want_destage(c) && c->destages_in_flight == 0;
	pthread_mutex_unlock(&c->lock);
	if (kick)
		wc_kick(c);
}

int wcache_drain(struct wcache *c)
{
	struct uraid_engine *e = c->a->e;

	atomic_store(&c->draining, true);
	for (;;) {
		pthread_mutex_lock(&c->lock);
		c->backoff = false;          /* no tick while closing: retry here */
		bool done = !c->ndirty && !c->destages_in_flight;
		pthread_mutex_unlock(&c->lock);
		/* nothing left that could still touch the cache (close frees it):
		   a destage completion or a kick still running or queued */
		done = done && !atomic_load(&c->busy) && !atomic_load(&c->kick_posted);
		if (done)
			break;
		wc_kick(c);
		if (e->flags & URAID_ENGINE_THREADS) {
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		} else {
			for (unsigned i = 0; i < e->nreactors; i++)
				uraid_engine_poll(e, i, 1);
		}
	}
	atomic_store(&c->draining, false);
	pthread_mutex_lock(&c->lock);
	int rc = c->lost_epoch ? -EIO : 0;
	pthread_mutex_unlock(&c->lock);
	return rc;
}
