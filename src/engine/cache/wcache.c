// SPDX-License-Identifier: MIT
/*
 * The write-back cache's pages and its request hooks (wcache.h says where
 * it sits). What each kind of request does here:
 *
 * - WRITE (write-back, not FUA, small enough; on RAID 4/5/6 also large
 *   ones that do not cover whole stripe rows only, see back_cacheable):
 *   copied into pages under the lock and acknowledged. A page keeps
 *   per-sector valid and dirty bits, a generation bumped by every change (a
 *   destage in flight that sees it changed leaves the page dirty) and the
 *   flush epoch it became dirty in. No room (no free page, no clean one to
 *   take): the write waits in FIFO order, and later writes wait behind it,
 *   so an overlapping later write never lands before an earlier one; the
 *   destage completion that frees room copies it in and completes it on
 *   its reactor.
 * - FUA, large writes (whole rows, or past the limits), writes in
 *   write-through or on an array that has failed, DISCARD, WRITE_ZEROES: go to
 *   the members ("through"). They wait for destages in flight on their
 *   range (an older copy must not land after them) and for member reads
 *   that will overlay pages of it, then go on. From arrival to completion
 *   no destage starts on their range (a newer copy must not land before
 *   them), and reads of it that would need the cached pages wait for them
 *   to end (they would pin pages it waits for). The range's cached sectors
 *   stay until the op has landed (till then they are the only copy of what
 *   was acknowledged before it): its success drops them; on failure the
 *   dirty ones stay dirty.
 * - READ: served from the pages when they hold every sector; else read from
 *   the members and overlaid with the pages at the end. The pages it
 *   overlaps are pinned meanwhile (not freed nor reused), so bytes destaged
 *   during the read still come from the page, never older member bytes.
 * - FLUSH: takes the current epoch and opens a new one (waiting for a free
 *   slot in the ring of epochs); it goes on to the members' flush once no
 *   page is dirty in its epoch or an older one, and fails when data of its
 *   epoch or an older one was lost (a destage the array could not write).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/adaptive_mutex.h"
#include "engine/cache/wcache.h"
#include "engine/core/array.h"
#include "engine/level/parity_log.h"

#define WC_BYPASS_BYTES (512u << 10)   /* the journal's mode: writes this large go through */
/*
 * Write-back without the journal takes large writes too (back_cacheable):
 * a sequential stream of writes that do not cover whole stripe rows (1 MiB
 * on three 512 KiB chunks) would otherwise write each row in two pieces,
 * each a read-modify-write or reconstruct-write; cached, the destage writes
 * its rows whole (wcache_destage.c). Up to this size, and an eighth of the
 * cache: larger ones go through (their whole rows need no gathering).
 */
#define WC_LARGE_MAX_BYTES (4u << 20)
/*
 * Journal write-back: the writes of a sequential stream this large go
 * through (jwb_stream). Smaller ones stay cached: a 4 KiB stream at QD 1
 * ran no faster through (26-44 MiB/s cached, 28-29 through, load ~7: its
 * acknowledgement after the log, not after a read-modify-write, and one
 * row wait in 16 writes), 16 KiB ones ran 1.5 x faster through at QD 1
 * and QD 8 with about half the server's CPU per MiB.
 */
#define WC_JSTREAM_MIN_BYTES (16u << 10)

enum { L_FREE, L_CLEAN, L_DIRTY };     /* list heads at pg[npages + L_*] */

static inline uint32_t head(const struct wcache *c, unsigned l) { return c->npages + l; }

static void list_del(struct wcache *c, uint32_t i)
{
	struct wc_page *p = &c->pg[i];
	c->pg[p->prev].next = p->next;
	c->pg[p->next].prev = p->prev;
}

/* page i in between the neighbours prev and next */
static void list_link(struct wcache *c, uint32_t i, uint32_t prev, uint32_t next)
{
	struct wc_page *p = &c->pg[i];
	p->prev = prev;
	p->next = next;
	c->pg[prev].next = i;
	c->pg[next].prev = i;
}

static void list_add_tail(struct wcache *c, unsigned l, uint32_t i)
{
	uint32_t h = head(c, l);
	list_link(c, i, c->pg[h].prev, h);
}

static void list_add_head(struct wcache *c, unsigned l, uint32_t i)
{
	uint32_t h = head(c, l);
	list_link(c, i, h, c->pg[h].next);
}

static inline uint32_t pidx(const struct wcache *c, const struct wc_page *p)
{
	return (uint32_t)(p - c->pg);
}

static inline uint8_t *page_data(const struct wcache *c, const struct wc_page *p)
{
	return c->data + (size_t)pidx(c, p) * WC_PAGE_BYTES;
}

static inline uint32_t hash_of(const struct wcache *c, uint64_t pgno)
{
	return (uint32_t)((pgno * 0x9e3779b97f4a7c15ull) >> 32) & c->hmask;
}

static struct wc_page *lookup(const struct wcache *c, uint64_t pgno)
{
	for (uint32_t i = c->bucket[hash_of(c, pgno)]; i; i = c->hnext[i - 1])
		if (c->hkey[i - 1] == pgno)
			return &c->pg[i - 1];
	return NULL;
}

struct wc_page *wc_lookup(const struct wcache *c, uint64_t pgno)
{
	return lookup(c, pgno);
}

static void hash_del(struct wcache *c, struct wc_page *p)
{
	uint32_t *pp = &c->bucket[hash_of(c, p->pgno)];
	uint32_t me = pidx(c, p) + 1;
	while (*pp != me)
		pp = &c->hnext[*pp - 1];
	*pp = c->hnext[me - 1];
}

static inline int popcount8(uint8_t v) { return __builtin_popcount(v); }

/* May page q be taken for a new pgno (clean, nobody uses it, not one of
 * the write's own pages [keep0, keep1))? */
static bool clean_takeable(const struct wc_page *q, uint64_t keep0, uint64_t keep1)
{
	return q->state == WC_PG_CLEAN && !q->pins && !q->inflight && !q->jlost &&
	       (q->pgno < keep0 || q->pgno >= keep1);
}

/*
 * A free or clean, unpinned page for pgno (its old contents dropped), not
 * one of pages [keep0, keep1) (the write's own); NULL: none. placed (a
 * large write's pages): the page at index pgno % npages when it is free or
 * can be taken, so that a stream's pages lie next to each other in memory
 * in offset order and its rows are destaged in place (wcache_destage.c
 * can_inplace), whatever order earlier destages freed them in.
 */
static struct wc_page *page_alloc(struct wcache *c, uint64_t pgno, uint64_t keep0,
				  uint64_t keep1, bool placed)
{
	uint32_t i = c->pg[head(c, L_FREE)].next;
	struct wc_page *q = placed ? &c->pg[pgno % c->npages] : NULL;
	if (q && q->state == WC_PG_FREE) {
		i = pidx(c, q);
		c->nfree--;
	} else if (q && clean_takeable(q, keep0, keep1)) {
		i = pidx(c, q);
		hash_del(c, q);
		c->nclean--;
	} else if (i != head(c, L_FREE)) {
		c->nfree--;
	} else {
		/* the page cleaned longest ago that nobody pins (FIFO, not LRU:
		   reads of a clean page do not move it) */
		for (i = c->pg[head(c, L_CLEAN)].next; i != head(c, L_CLEAN); i = c->pg[i].next)
			if (clean_takeable(&c->pg[i], keep0, keep1))
				break;
		if (i == head(c, L_CLEAN))
			return NULL;
		hash_del(c, &c->pg[i]);
		c->nclean--;
	}
	list_del(c, i);
	struct wc_page *p = &c->pg[i];
	p->pgno = pgno;
	p->birth = ++c->alloc_seq;
	p->valid = p->dirty = 0;
	p->gen++;
	p->pins = 0;
	p->inflight = p->redirtied = false;
	p->state = WC_PG_CLEAN;
	uint32_t b = hash_of(c, pgno);
	c->hkey[i] = pgno;
	c->hnext[i] = c->bucket[b];
	c->bucket[b] = i + 1;
	list_add_tail(c, L_CLEAN, i);
	c->nclean++;
	return p;
}

/*
 * The journal's write-back mode: a dirty page going in flight moves to the
 * dirty list's tail, and one its destage left dirty back to the head, among
 * the oldest records (lock held). The list's head is then the oldest record
 * not in flight, the one the destage wants next (wcache_destage.c
 * jwb_oldest), found in a step or two: not behind every page in flight (up
 * to 64 a call, each a cache miss: ~31 steps per cached write at 4 KiB QD 32).
 */
void wc_dirty_requeue(struct wcache *c, struct wc_page *p, bool to_head)
{
	uint32_t i = pidx(c, p);
	list_del(c, i);
	if (to_head)
		list_add_head(c, L_DIRTY, i);
	else
		list_add_tail(c, L_DIRTY, i);
}

void wc_page_free_if_empty(struct wcache *c, struct wc_page *p)
{
	if (p->valid || p->pins || p->inflight || p->jlost || p->state != WC_PG_CLEAN)
		return;
	uint32_t i = pidx(c, p);
	hash_del(c, p);
	list_del(c, i);
	c->nclean--;
	p->state = WC_PG_FREE;
	/* at the head: the page freed last is reused first (its memory is
	   still mapped and cached; see wc_drop_behind) */
	list_add_head(c, L_FREE, i);
	c->nfree++;
}

/*
 * Drop behind: a stream's pages (a destage written in place, whole pages
 * next to each other), clean now, are freed (last to first: the free list
 * is taken from its head), so that the cache does not fill with a stream's
 * clean pages: what is in the cache stays for the small writes and reads it
 * is good at, and the stream's next pages find theirs free (page_alloc's
 * placement). Pages a read pins stay. Lock held.
 */
void wc_drop_behind(struct wcache *c, const uint32_t *idx, uint32_t n)
{
	while (n--) {
		struct wc_page *p = &c->pg[idx[n]];
		if (p->state != WC_PG_CLEAN || p->pins || p->inflight || p->jlost)
			continue;
		p->valid = 0;
		p->gen++;
		wc_page_free_if_empty(c, p);
	}
}

void wc_epoch_advance(struct wcache *c)
{
	while (c->oldest_epoch < c->cur_epoch && !c->epoch_dirty[c->oldest_epoch % WC_EPOCHS])
		c->oldest_epoch++;
}

/* No page dirty in epoch e or before? */
static bool epoch_clean(struct wcache *c, uint64_t e)
{
	wc_epoch_advance(c);
	return c->oldest_epoch > e || (c->oldest_epoch == e && !c->epoch_dirty[e % WC_EPOCHS]);
}

static void page_set_dirty(struct wcache *c, struct wc_page *p, uint8_t mask)
{
	c->dirty_sectors += (uint64_t)popcount8(mask & ~p->dirty);
	p->valid |= mask;
	p->dirty |= mask;
	p->gen++;
	if (p->state != WC_PG_DIRTY) {
		uint32_t i = pidx(c, p);
		list_del(c, i);
		c->nclean--;
		list_add_tail(c, L_DIRTY, i);
		c->ndirty++;
		p->state = WC_PG_DIRTY;
		p->epoch = c->cur_epoch;
		c->epoch_dirty[p->epoch % WC_EPOCHS]++;
	} else if (p->inflight && !p->redirtied) {
		p->redirtied = true;
		p->redirty_epoch = c->cur_epoch;
	}
}

/* The page's bytes are on the members (or lost): the journal's records
   naming it may go (lock held). */
static void page_journal_release(struct wcache *c, struct wc_page *p)
{
	if (p->jref)
		c->jpl->ops->wb_put(c->jpl, p->jref);
	if (p->jold)
		c->jpl->ops->wb_put(c->jpl, p->jold);
	p->jref = p->jold = 0;
}

void wc_make_clean(struct wcache *c, struct wc_page *p)
{
	if (p->state != WC_PG_DIRTY)
		return;
	page_journal_release(c, p);
	c->dirty_sectors -= (uint64_t)popcount8(p->dirty);
	p->dirty = 0;
	p->redirtied = false;
	c->epoch_dirty[p->epoch % WC_EPOCHS]--;
	uint32_t i = pidx(c, p);
	list_del(c, i);
	c->ndirty--;
	list_add_tail(c, L_CLEAN, i);
	c->nclean++;
	p->state = WC_PG_CLEAN;
}

/* Sector mask of page pgno inside array sectors [lo, hi). */
static uint8_t range_mask(uint64_t pgno, uint64_t lo, uint64_t hi)
{
	uint64_t first = pgno * WC_PAGE_SECTORS, s0 = lo > first ? lo - first : 0;
	uint64_t s1 = hi < first + WC_PAGE_SECTORS ? hi - first : WC_PAGE_SECTORS;
	return (uint8_t)(((1u << s1) - 1) & ~((1u << s0) - 1));
}

/*
 * Call fn on every page holding part of sectors [lo, hi): by hash lookups
 * for a range shorter than the cache, else over the lists (a long discard).
 */
static void for_pages(struct wcache *c, uint64_t lo, uint64_t hi,
		      void (*fn)(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg),
		      void *arg)
{
	uint64_t p0 = lo / WC_PAGE_SECTORS, p1 = (hi + WC_PAGE_SECTORS - 1) / WC_PAGE_SECTORS;
	if (p1 - p0 <= (uint64_t)c->npages - c->nfree) {
		for (uint64_t n = p0; n < p1; n++) {
			struct wc_page *p = lookup(c, n);
			if (p)
				fn(c, p, range_mask(n, lo, hi), arg);
		}
		return;
	}
	for (unsigned l = L_CLEAN; l <= L_DIRTY; l++) {
		for (uint32_t i = c->pg[head(c, l)].next, nx; i != head(c, l); i = nx) {
			nx = c->pg[i].next;     /* fn may move the page */
			struct wc_page *p = &c->pg[i];
			if (p->pgno >= p0 && p->pgno < p1)
				fn(c, p, range_mask(p->pgno, lo, hi), arg);
		}
	}
}

/* ---- creation ---- */

#define WC_HUGE_BYTES (2u << 20)        /* a transparent huge page (x86-64) */

/*
 * Zeroed memory for the pages' bytes and their table, in transparent huge
 * pages where the system gives them (madvise mode): every cached write and
 * destage touches a page of each at random, and each miss in the TLB there
 * is a page walk (in a guest, a long one; with page-table isolation the
 * TLB is emptied at every system call, a few per write). Freed with free().
 */
static void *huge_zalloc(size_t bytes)
{
	/* below half a huge page, 4 KiB aligned (the pages' bytes are written
	   to members from where they are) */
	bool huge = bytes >= WC_HUGE_BYTES / 2;
	size_t align = huge ? WC_HUGE_BYTES : WC_PAGE_BYTES;
	size_t len = (bytes + align - 1) / align * align;
	void *m = aligned_alloc(align, len);
	if (!m)
		return NULL;
	if (huge)
		(void)madvise(m, len, MADV_HUGEPAGE);   /* a hint: without it, 4 KiB pages */
	/* the memory is touched now, not on the first writes */
	memset(m, 0, len);
	return m;
}

int wcache_create(struct array *a, uint64_t bytes, uint32_t policy, struct wcache **out)
{
	if (!bytes)
		bytes = WC_DEFAULT_BYTES;
	if (bytes < WC_MIN_BYTES || bytes > WC_MAX_BYTES)
		return -EINVAL;
	struct wcache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->a = a;
	c->npages = (uint32_t)(bytes / WC_PAGE_BYTES);
	c->bytes = (uint64_t)c->npages * WC_PAGE_BYTES;
	uint32_t nb = 1;
	while (nb < c->npages * 2u)
		nb <<= 1;
	c->hmask = nb - 1;
	c->data = huge_zalloc(c->bytes);
	c->pg = huge_zalloc((c->npages + 3u) * sizeof(*c->pg));
	c->bucket = calloc(nb, sizeof(*c->bucket));
	c->hkey = calloc(c->npages, sizeof(*c->hkey));
	c->hnext = calloc(c->npages, sizeof(*c->hnext));
	c->slots = calloc(WC_DESTAGE_SLOTS, sizeof(*c->slots));
	c->sweep = calloc(c->npages, sizeof(*c->sweep));
	c->running = calloc(a->e->nreactors, sizeof(*c->running));
	if (!c->data || !c->pg || !c->bucket || !c->hkey || !c->hnext || !c->slots || !c->sweep || !c->running) {
		wcache_destroy(c);
		return -ENOMEM;
	}
	uraid_mutex_init_adaptive(&c->lock);
	for (unsigned l = 0; l < 3; l++) {
		c->pg[head(c, l)].next = c->pg[head(c, l)].prev = head(c, l);
	}
	for (uint32_t i = 0; i < c->npages; i++)
		list_add_tail(c, L_FREE, i);
	c->nfree = c->npages;
	c->high_water = c->npages / 4 * 3;
	c->low_water = c->npages / 2;
	c->cur_epoch = c->oldest_epoch = 1;
	for (unsigned i = 0; i < WC_DESTAGE_SLOTS; i++) {
		c->slots[i].c = c;
		c->slots[i].next_free = c->free_slots;
		c->free_slots = &c->slots[i];
	}
	atomic_store(&c->policy, policy);
	*out = c;
	return 0;
}

void wcache_destroy(struct wcache *c)
{
	if (!c)
		return;
	if (c->pg)
		pthread_mutex_destroy(&c->lock);
	free(c->data);
	free(c->pg);
	free(c->bucket);
	free(c->hkey);
	free(c->hnext);
	free(c->slots);
	free(c->sweep);
	free(c->running);
	free(c);
}

/* ---- waking what waits ---- */

void wc_post(struct array_req *rq, void (*fn)(struct reactor *r, struct reactor_msg *m))
{
	rq->wc_msg.fn = fn;
	reactor_post(&rq->er->r, &rq->wc_msg);
}

static struct array_req *rq_of_msg(struct reactor_msg *m)
{
	return (struct array_req *)((char *)m - offsetof(struct array_req, wc_msg));
}

static void resume_route(struct reactor *r, struct reactor_msg *m)
{
	(void)r;
	array_req_route(rq_of_msg(m));
}

static void resume_end_ok(struct reactor *r, struct reactor_msg *m)
{
	(void)r;
	array_req_end(rq_of_msg(m), 0);
}

static void resume_end_eio(struct reactor *r, struct reactor_msg *m)
{
	(void)r;
	array_req_end(rq_of_msg(m), -EIO);
}

/* A request that waited (a read behind an op written through) starts over. */
static void resume_retake(struct reactor *r, struct reactor_msg *m)
{
	(void)r;
	struct array_req *rq = rq_of_msg(m);
	struct wcache *c = atomic_load_explicit(&rq->a->wc, memory_order_acquire);
	if (!wcache_take(c, rq))
		array_req_route(rq);
}

/* Does a flush of epoch e cover data that was lost? */
static bool flush_fails(const struct wcache *c, uint64_t e)
{
	return c->lost_epoch && e >= c->lost_epoch;
}

static void end_deferred(struct io_op *op, int res)
{
	array_req_end((struct array_req *)((char *)op - offsetof(struct array_req, wc_op)), res);
}

/* A request the cache answered ends at its reactor's next poll: callers of
 * uraid_array_submit never see done() run inside it. */
static void end_later(struct array_req *rq, int res)
{
	rq->wc_op.cb = end_deferred;
	reactor_complete(&rq->er->r, &rq->wc_op, res);
}

/* Pages a write of [lo, hi) needs that it does not hold yet. */
static uint32_t pages_missing(const struct wcache *c, uint64_t lo, uint64_t hi)
{
	uint32_t n = 0;
	for (uint64_t pg = lo / WC_PAGE_SECTORS; pg * WC_PAGE_SECTORS < hi; pg++)
		if (!lookup(c, pg))
			n++;
	return n;
}

static void resume_end_ok(struct reactor *r, struct reactor_msg *m);
static void resume_end_eio(struct reactor *r, struct reactor_msg *m);

/*
 * Destage work that rq found needed (nothing held). The journal's
 * write-back mode hands it to another reactor (wc_kick_away): its
 * completions go on there, and the writer's reactor only logs and
 * acknowledges. Else it starts here, as the cache always did.
 */
static void destage_from(struct wcache *c, struct array_req *rq)
{
	if (__atomic_load_n(&c->jwb, __ATOMIC_RELAXED))
		wc_kick_away(c, rq->er);
	else
		wc_destage_run(c, rq->er);
}

/*
 * Journal write-back: rq's record is durable in the journal (res 0) or the
 * journal failed. Pages it rewrote let their older record go now, and the
 * write completes (md acknowledges a write-back write once in the log).
 */
static void journal_logged(void *arg, uint32_t rec, int res)
{
	struct array_req *rq = arg;
	struct wcache *c = atomic_load_explicit(&rq->a->wc, memory_order_acquire);
	uint64_t p0 = rq->io->offset / WC_PAGE_BYTES, p1 = p0 + rq->io->length / WC_PAGE_BYTES;

	pthread_mutex_lock(&c->lock);
	for (uint64_t n = p0; n < p1; n++) {
		struct wc_page *p = lookup(c, n);
		if (!p || p->jref != rec)
			continue;       /* a newer write holds it: its own record decides */
		if (res) {
			/*
			 * The journal failed: the write fails, and its bytes (copied
			 * in before the log write) must not be read nor destaged.
			 * Bytes acknowledged before it (an older record) were only
			 * here and in that journal: the page stays, unreadable, and
			 * the flushes of its epoch fail.
			 */
			bool acked = p->jold && p->state == WC_PG_DIRTY;
			if (acked && (!c->lost_epoch || p->epoch < c->lost_epoch))
				c->lost_epoch = p->epoch;
			wc_make_clean(c, p);
			p->valid = 0;
			p->gen++;
			if (acked && !p->jlost) {
				p->jlost = true;
				c->njlost++;
			}
			wc_page_free_if_empty(c, p);
		} else if (p->jold) {
			c->jpl->ops->wb_put(c->jpl, p->jold);
			p->jold = 0;
		}
	}
	if (res)
		wc_after_change(c);
	pthread_mutex_unlock(&c->lock);
	/* on the request's own reactor (the log write was started there): a
	   deferred completion, not a message (an eventfd write and read per
	   acknowledgement) */
	if (reactor_is_current(&rq->er->r))
		end_later(rq, res);
	else
		wc_post(rq, res ? resume_end_eio : resume_end_ok);
}

/*
 * The journal and stripe rows. A unit of the RAID 4/5/6 write path logs the
 * new data of its 4 KiB rows with their parity, computed from what the
 * members hold for the row's other chunks; a replay (md's or ours) writes a
 * row's data and parity as logged. A page of such a row in the log as data
 * only (cached, not yet on the members) would then be replayed beside a
 * parity that does not cover it: the write hole. md never logs such a row
 * (its stripe head holds every cached page of the row, and the parity
 * covers them all); here a row never has a logged cached page and a unit
 * of another of its chunks at once:
 *  - a write is cached only if no other page of its 4 KiB rows is logged
 *    (cached) or being destaged, it holds one page per row, and no op
 *    written through is on its stripe rows (journal_can_cache);
 *  - an op written through waits until no page of its stripe rows is in the
 *    log and not on the members (the write path holds a whole stripe row
 *    from its first read to its last write, and a write waiting there for
 *    log room must not hold a row whose destage frees that room); its
 *    range lets destages pass meanwhile (wc_destage_blocked), the cache is
 *    destaged (jrow_wait);
 *  - so a destage carries the only logged page of each 4 KiB row it writes.
 */
static uint64_t stripe_sectors(const struct wcache *c)
{
	return (uint64_t)c->a->geom.data_disks * c->a->geom.chunk_sectors;
}

/* [*lo, *hi) widened to whole stripe rows. */
static void stripe_span(const struct wcache *c, uint64_t *lo, uint64_t *hi)
{
	uint64_t ss = stripe_sectors(c);
	if (!ss)
		return;
	*lo = *lo / ss * ss;
	*hi = (*hi + ss - 1) / ss * ss;
}

static void find_logged(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	(void)c;
	(void)mask;
	if (p->jref)
		*(bool *)arg = true;
}

/*
 * Is a page of the stripe rows of op t (written through, WC_MARK_JROW) in
 * the journal and not yet on the members (dirty or being destaged: it
 * names a record)? Asked when t arrives and then at every change while it
 * waits (wc_after_change: each destage's completion). No page of those rows
 * is logged after t arrived (journal_can_cache), so a page found not logged
 * stays so: t->wc_jnext, the first page that may still be, moves past them,
 * and each question is a lookup or two, not one per page of the rows (48 on
 * a RAID 5 x4 of 64 KiB chunks). A long range (longer than the cache
 * holds) is looked at over the cache's lists instead, from that page on.
 */
static bool rows_logged(struct wcache *c, struct array_req *t)
{
	uint64_t lo = t->wc_lo, hi = t->wc_hi;
	stripe_span(c, &lo, &hi);
	uint64_t p1 = (hi + WC_PAGE_SECTORS - 1) / WC_PAGE_SECTORS;
	if (p1 - t->wc_jnext > (uint64_t)c->npages - c->nfree) {
		bool any = false;
		for_pages(c, t->wc_jnext * WC_PAGE_SECTORS, hi, find_logged, &any);
		return any;
	}
	for (; t->wc_jnext < p1; t->wc_jnext++) {
		const struct wc_page *p = lookup(c, t->wc_jnext);
		if (p && p->jref)
			return true;
	}
	return false;
}

/* Can the journal's write-back mode cache this write (lock held)? Whole
 * 4 KiB pages (md logs pages), an array not degraded (md leaves write-back
 * then), no destage in flight on it (its log record must not come before
 * that destage's: a replay would write the older bytes last), no op
 * waiting for a clean cache. */
static bool journal_can_cache(struct wcache *c, const struct uraid_io *io)
{
	uint64_t lo = io->offset / 512, hi = lo + io->length / 512;

	if (io->offset % WC_PAGE_BYTES || io->length % WC_PAGE_BYTES || c->jbar ||
	    atomic_load(&c->a->degraded))
		return false;
	/* the rows of a unit written through or being destaged: no page of
	   theirs in the log beside it (see rows_logged) */
	for (const struct array_req *t = c->through_list; t; t = t->wc_next) {
		uint64_t tlo = t->wc_lo, thi = t->wc_hi;
		stripe_span(c, &tlo, &thi);
		if (lo < thi && tlo < hi)
			return false;
	}
	uint64_t ss = stripe_sectors(c), chunk = c->a->geom.chunk_sectors;
	for (uint64_t s = lo; s < hi; s += WC_PAGE_SECTORS) {
		const struct wc_page *p = lookup(c, s / WC_PAGE_SECTORS);
		if (p && p->inflight)
			return false;
		if (!ss)
			continue;
		/* the other pages of its 4 KiB row: none logged, none in flight,
		   none in this write (two pages of a row could be destaged apart) */
		uint64_t base = s / ss * ss, o = (s - base) % chunk;
		for (uint64_t q = base + o; q < base + ss; q += chunk) {
			if (q == s)
				continue;
			if (q >= lo && q < hi)
				return false;
			p = lookup(c, q / WC_PAGE_SECTORS);
			if (p && (p->jref || p->inflight))
				return false;
		}
	}
	return true;
}

/*
 * Journal write-back: does the write of [lo, hi) continue a sequential
 * stream (start where one of the last writes ended)? Notes its end either
 * way (lock held). Such a write goes through, as in write-through: its
 * data and parity in one log record, then its member writes (one
 * read-modify-write of a partial row at most, rows whole where the RAID 5
 * path gathers the stream's writes, raid5_gather.c). Cached,
 * a stream fills its stripe rows chunk after chunk, and a 4 KiB row may
 * hold only one logged page (see journal_can_cache): the next chunk's
 * write went through anyway, after waiting for the destage of the
 * previous chunk's pages (a read-modify-write of a partial row), and
 * itself a read-modify-write. A 64 KiB sequential stream at QD 8 on a
 * RAID 5 x4 (64 KiB chunks) so ran at about half of write-through's speed,
 * with one row wait per write (A/B, 5 interleaved rounds, load 7.5-8.6:
 * 233 -> 440 MiB/s median, server CPU 3193 -> 1400 us per MiB). md
 * caches such a stream and writes its full stripes out early (STRIPE_R5C_FULL_STRIPE); its stripe head holds
 * every cached page of a row, which the log's one-page-per-row rule here
 * does not allow.
 */
static bool jwb_stream(struct wcache *c, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < WC_JSTREAMS && lo; i++)        /* (0: no end yet) */
		if (c->jstream[i] == lo) {
			c->jstream[i] = hi;
			return true;
		}
	c->jstream[c->jstream_next++ % WC_JSTREAMS] = hi;
	return false;
}

/*
 * Did the write of [lo, hi) complete a stripe row: a row whose last page it
 * wrote has every page dirty and whole, none in flight (lock held)? Asked
 * for large writes only (a stream of them completes a row with most of its
 * writes; small random writes that fill a row in the end keep it cached),
 * not in the journal's write-back mode (row_pages, wcache_destage.c, leaves
 * it out too). Destaged at once, the row is read back from the CPU's
 * caches, not from memory, and with wc_drop_behind the stream goes round a
 * few MiB of the cache, not all of it.
 */
static bool row_done(const struct wcache *c, uint64_t lo, uint64_t hi)
{
	uint64_t rs = stripe_sectors(c);

	if (c->jwb || !rs || rs % WC_PAGE_SECTORS)
		return false;
	/* the rows whose last sector the write holds */
	for (uint64_t end = (lo / rs + 1) * rs; end <= hi; end += rs) {
		bool full = true;
		for (uint64_t pg = (end - rs) / WC_PAGE_SECTORS; full && pg < end / WC_PAGE_SECTORS;
		     pg++) {
			const struct wc_page *p = lookup(c, pg);
			full = p && p->state == WC_PG_DIRTY && p->dirty == 0xff && !p->inflight;
		}
		if (full)
			return true;
	}
	return false;
}

/* Free the pages of [lo, hi) allocated after seq0, still empty (a write
 * that could not be taken after all; lock held). */
static void undo_alloc(struct wcache *c, uint64_t lo, uint64_t hi, uint64_t seq0)
{
	for (uint64_t pg = lo / WC_PAGE_SECTORS; pg * WC_PAGE_SECTORS < hi; pg++) {
		struct wc_page *p = lookup(c, pg);
		if (p && p->birth > seq0)
			wc_page_free_if_empty(c, p);
	}
}

/*
 * Copy a write into the pages (lock held); false, nothing changed, when
 * there is no room. Room is checked first: a write is all in or not at all.
 * With the journal's write-back mode, the write is also queued in the
 * journal (its completion waits for it: *logged set); no room there:
 * false, nothing changed.
 */
static bool absorb_j(struct wcache *c, struct array_req *rq, bool *logged)
{
	const struct uraid_io *io = rq->io;
	uint64_t lo = io->offset / 512, hi = lo + io->length / 512;
	uint32_t need = pages_missing(c, lo, hi);

	if (need > c->nfree + c->nclean)
		return false;
	/* a destage write reading a page in place: it must not change under
	   it; the write waits for room meanwhile (its completion wakes it) */
	if (need < (hi + WC_PAGE_SECTORS - 1) / WC_PAGE_SECTORS - lo / WC_PAGE_SECTORS)
		for (uint64_t pg = lo / WC_PAGE_SECTORS; pg * WC_PAGE_SECTORS < hi; pg++) {
			const struct wc_page *p = lookup(c, pg);
			if (p && p->inplace)
				return false;
		}
	/* pinned or in-flight clean pages cannot be taken: allocate first, undo
	   on failure (the pages born after seq0 are this write's) */
	uint64_t seq0 = c->alloc_seq;
	bool hit = need == 0;
	for (uint64_t pg = lo / WC_PAGE_SECTORS; pg * WC_PAGE_SECTORS < hi; pg++) {
		if (lookup(c, pg))
			continue;
		struct wc_page *p = page_alloc(c, pg, lo / WC_PAGE_SECTORS,
					       (hi + WC_PAGE_SECTORS - 1) / WC_PAGE_SECTORS,
					       io->length >= WC_BYPASS_BYTES);
		if (!p) {
			undo_alloc(c, lo, hi, seq0);
			return false;
		}
	}
	uint32_t rec = 0;
	if (logged) {
		rec = c->jpl->ops->wb_add(c->jpl, lo, (uint32_t)(io->length / WC_PAGE_BYTES), io->buf,
					  journal_logged, rq);
		if (!rec) {
			undo_alloc(c, lo, hi, seq0);
			c->jwb_through++;
			c->jpress = true;       /* the log is full of cached pages: destage */
			return false;
		}
		*logged = true;
		/* md flushes cached stripes when its log runs low: so here
		   (asked only while not destaging for it already: the journal's
		   lock once less per write) */
		if (!c->jpress && c->jpl->ops->wb_pressure(c->jpl))
			c->jpress = true;
	}
	for (uint64_t pg = lo / WC_PAGE_SECTORS; pg * WC_PAGE_SECTORS < hi; pg++) {
		struct wc_page *p = lookup(c, pg);
		uint8_t m = range_mask(pg, lo, hi);
		if (rec) {
			/* a page names its newest record, and keeps the one before
			   until that is logged (jold set means jref is not logged
			   yet: a record in between, never acknowledged, may go) */
			if (p->jref && p->jold)
				c->jpl->ops->wb_put(c->jpl, p->jref);
			else if (p->jref)
				p->jold = p->jref;
			p->jref = rec;
		}
		if ((p->dirty & m) != m)
			hit = false;
		uint64_t first = pg * WC_PAGE_SECTORS;
		if (m == 0xff)
			memcpy(page_data(c, p), (const uint8_t *)io->buf + (first - lo) * 512,
			       WC_PAGE_BYTES);
		else
			for (unsigned s = 0; s < WC_PAGE_SECTORS; s++)
				if (m & (1u << s))
					memcpy(page_data(c, p) + s * 512,
					       (const uint8_t *)io->buf + (first + s - lo) * 512, 512);
		page_set_dirty(c, p, m);
		if (rec) {
			/* the dirty list in record order (the pages in flight
			   apart, at its tail: wc_dirty_requeue): its head names the
			   oldest record a page holds, which the destage takes first
			   (it holds the journal's tail, wcache_destage.c jwb_oldest) */
			wc_dirty_requeue(c, p, false);
		}
	}
	c->st.writes_cached++;
	if (hit)
		c->st.write_hits++;
	if (c->ndirty > c->high_water)
		c->pressure = true;
	c->idle_kick = false;
	if (!rec && io->length >= WC_BYPASS_BYTES && row_done(c, lo, hi))
		c->row_ready = true;
	return true;
}

/*
 * May write-back (not the journal's mode) cache this write (lock held)?
 * Small ones, and the large ones (WC_LARGE_MAX_BYTES): not more than an
 * eighth of the cache, and not whole stripe rows only (written through,
 * they are full-stripe writes already, with no copy).
 */
static bool back_cacheable(const struct wcache *c, const struct uraid_io *io)
{
	if (io->length / WC_PAGE_BYTES + 2 > c->npages / 8)
		return false;
	if (io->length < WC_BYPASS_BYTES)
		return true;
	uint64_t row = stripe_sectors(c) * 512;
	/* a row wider than the largest write taken would never be completed
	   by one: those writes go through as before */
	if (io->length > WC_LARGE_MAX_BYTES || !row || row > WC_LARGE_MAX_BYTES)
		return false;
	return io->offset % row || io->length % row;
}

static bool absorb(struct wcache *c, struct array_req *rq)
{
	return absorb_j(c, rq, NULL);
}

/* Writes waiting for room, in order, as far as they fit now (lock held). */
static void wake_writers(struct wcache *c)
{
	while (c->space_head && absorb(c, c->space_head)) {
		struct array_req *rq = c->space_head;
		c->space_head = rq->wc_next;
		if (!c->space_head)
			c->space_tail = NULL;
		wc_post(rq, resume_end_ok);
	}
}

static void find_busy(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	(void)c;
	(void)mask;
	if (p->inflight || p->pins)
		*(bool *)arg = true;
}

/* Is a destage in flight on a page of the range, or a member read that will
 * overlay one (its bytes must stay until then)? */
static bool range_busy(struct wcache *c, uint64_t lo, uint64_t hi)
{
	bool any = false;
	for_pages(c, lo, hi, find_busy, &any);
	return any;
}

void wc_after_change(struct wcache *c)
{
	/* ops written through whose range is quiet now go on */
	for (struct array_req *t = c->through_list; t; t = t->wc_next) {
		if (!(t->wc_marks & WC_MARK_WAITING))
			continue;
		if (t->wc_marks & WC_MARK_JROWW) {
			if (rows_logged(c, t))
				continue;
			t->wc_marks &= (uint8_t)~WC_MARK_JROWW;
			c->jrow_wait--;
		}
		if (range_busy(c, t->wc_lo, t->wc_hi))
			continue;
		if ((t->wc_marks & WC_MARK_JBAR) && (c->ndirty || c->destages_in_flight))
			continue;
		t->wc_marks &= (uint8_t)~WC_MARK_WAITING;
		wc_post(t, resume_route);
	}
	wake_writers(c);
	/* flushes that found the ring of epochs full: in order, as slots free */
	wc_epoch_advance(c);
	while (c->epoch_head && c->cur_epoch + 1 - c->oldest_epoch < WC_EPOCHS) {
		struct array_req *rq = c->epoch_head;
		c->epoch_head = rq->wc_next;
		if (!c->epoch_head)
			c->epoch_tail = NULL;
		/* its epoch now, so that the next one waiting sees the slot taken */
		rq->wc_epoch = c->cur_epoch++;
		rq->wc_marks |= WC_MARK_EPOCH;
		wc_post(rq, resume_retake);
	}
	for (struct array_req **pp = &c->flush_wait; *pp;) {
		struct array_req *rq = *pp;
		if (!epoch_clean(c, rq->wc_epoch)) {
			pp = &rq->wc_next;
			continue;
		}
		*pp = rq->wc_next;
		wc_post(rq, flush_fails(c, rq->wc_epoch) ? resume_end_eio : resume_route);
	}
	if (c->pressure && c->ndirty <= c->low_water)
		c->pressure = false;
	if (c->jpress && !c->ndirty)
		c->jpress = false;
}

bool wc_range_blocked(const struct wcache *c, uint64_t lo, uint64_t hi)
{
	for (const struct array_req *t = c->through_list; t; t = t->wc_next)
		if (lo < t->wc_hi && t->wc_lo < hi)
			return true;
	return false;
}

bool wc_destage_blocked(const struct wcache *c, uint64_t lo, uint64_t hi)
{
	/* no write is cached on the stripe rows of an op waiting for its rows
	   (journal_can_cache; or nothing is cached at all): its range holds
	   only pages older than it, which may land before it */
	bool older = c->jwb || atomic_load_explicit(&c->policy, memory_order_relaxed) !=
		     URAID_WRITE_BACK;
	for (const struct array_req *t = c->through_list; t; t = t->wc_next)
		if (lo < t->wc_hi && t->wc_lo < hi && !(older && (t->wc_marks & WC_MARK_JROWW)))
			return true;
	return false;
}

/* ---- the request hooks ---- */

static void drop_sectors(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	(void)arg;
	if (!(p->valid & mask))
		return;
	uint8_t was = p->dirty;
	p->valid &= (uint8_t)~mask;
	p->dirty &= (uint8_t)~mask;
	p->gen++;
	if (p->state == WC_PG_DIRTY) {
		c->dirty_sectors -= (uint64_t)popcount8(was & mask);
		if (!p->dirty) {
			p->dirty = 0;
			/* counted dirty_sectors already; wc_make_clean counts 0 more */
			wc_make_clean(c, p);
		}
	}
	wc_page_free_if_empty(c, p);
}

/* An op written through failed: what the members hold in its range is not
 * known, the clean copies go; the dirty ones stay (they go again). */
static void drop_clean_sectors(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	(void)arg;
	if (!(p->valid & mask & (uint8_t)~p->dirty))
		return;
	p->valid &= (uint8_t)~(mask & (uint8_t)~p->dirty);
	p->gen++;
	wc_page_free_if_empty(c, p);
}

/* FUA, large, through-policy writes, discards, zeroes: see the top. */
static bool take_through(struct wcache *c, struct array_req *rq)
{
	const struct uraid_io *io = rq->io;

	rq->wc_lo = io->offset / 512;
	rq->wc_hi = rq->wc_lo + io->length / 512;
	rq->wc_marks |= WC_MARK_THROUGH;
	rq->wc_prev = NULL;
	rq->wc_next = c->through_list;
	if (c->through_list)
		c->through_list->wc_prev = rq;
	c->through_list = rq;
	/*
	 * Journal write-back: an op the journal logs as FLUSH only (not whole
	 * 4 KiB pages) goes to the members once the log's tail is past every
	 * older record (raid5_journal.c): it waits for every cached page to
	 * be destaged, and no write is cached until it ends.
	 */
	if (c->jpl) {
		rq->wc_marks |= WC_MARK_JROW;   /* nothing cached on its rows from now on */
		uint64_t lo = rq->wc_lo, hi = rq->wc_hi;
		stripe_span(c, &lo, &hi);
		rq->wc_jnext = rq->wc_jpick = lo / WC_PAGE_SECTORS;
	}
	if (c->jwb && (io->op == URAID_IO_WRITE || io->op == URAID_IO_WRITE_ZEROES) &&
	    (io->offset % WC_PAGE_BYTES || io->length % WC_PAGE_BYTES)) {
		rq->wc_marks |= WC_MARK_JBAR;
		c->jbar++;
		c->jbar_waits++;
		if (c->ndirty || c->destages_in_flight) {
			rq->wc_marks |= WC_MARK_WAITING;
			return true;
		}
	}
	/* pages of its stripe rows in the journal: destaged first (see
	   rows_logged above) */
	if (c->jpl && rows_logged(c, rq)) {
		rq->wc_marks |= WC_MARK_WAITING | WC_MARK_JROWW;
		c->jrow_wait++;
		c->jrow_waits++;
		return true;
	}
	if (c->nfree == c->npages || !range_busy(c, rq->wc_lo, rq->wc_hi))
		return false;
	/*
	 * A destage in flight on the range (its older copy must land first),
	 * or a member read that will overlay pages of it (the op's drop of the
	 * range at its end could let that read return bytes older than what
	 * was acknowledged before it): wc_after_change lets the op go once
	 * both are done. Meanwhile no destage starts on the range and no read
	 * pins pages of it (take_read).
	 */
	rq->wc_marks |= WC_MARK_WAITING;
	return true;
}

struct read_walk {
	uint8_t *dst;          /* NULL: only look */
	uint64_t lo;
	uint64_t birth;        /* unpin pages born up to here */
	bool all;              /* every sector valid */
	uint32_t present;
};

static void read_look(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	struct read_walk *w = arg;
	(void)c;
	if ((p->valid & mask) != mask)
		w->all = false;
	if (p->valid & mask)
		w->present++;
}

static void read_copy(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	struct read_walk *w = arg;
	uint8_t m = p->valid & mask;
	uint64_t first = p->pgno * WC_PAGE_SECTORS;
	if (w->dst)
		for (unsigned s = 0; s < WC_PAGE_SECTORS; s++)
			if (m & (1u << s))
				memcpy(w->dst + (first + s - w->lo) * 512, page_data(c, p) + s * 512, 512);
}

static void read_pin(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	(void)c;
	(void)mask;
	(void)arg;
	p->pins++;
}

static void read_unpin(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	struct read_walk *w = arg;
	read_copy(c, p, mask, arg);
	if (p->birth <= w->birth && p->pins) {
		p->pins--;
		wc_page_free_if_empty(c, p);
	}
}

static void range_count_pages(struct wcache *c, uint64_t lo, uint64_t hi, struct read_walk *w)
{
	w->all = true;
	w->present = 0;
	for_pages(c, lo, hi, read_look, w);
	/* pages not in the cache at all: not all there */
	uint64_t pages = (hi + WC_PAGE_SECTORS - 1) / WC_PAGE_SECTORS - lo / WC_PAGE_SECTORS;
	if (w->present < pages)
		w->all = false;
}

static bool take_read(struct wcache *c, struct array_req *rq)
{
	struct uraid_io *io = rq->io;
	uint64_t lo = io->offset / 512, hi = lo + io->length / 512;
	struct read_walk w = { .lo = lo };

	if (!io->length || c->nfree == c->npages) {
		c->st.read_misses++;
		return false;
	}
	range_count_pages(c, lo, hi, &w);
	if (w.all) {
		w.dst = io->buf;
		for_pages(c, lo, hi, read_copy, &w);
		c->st.read_hits++;
		c->st.read_hit_bytes += io->length;
		return true;
	}
	if (w.present && wc_range_blocked(c, lo, hi)) {
		/* an op written through is in flight on the range: the read waits
		   for it (a pin here could hold it back forever, and the op's end
		   drops the pages this read would overlay) */
		rq->wc_next = c->read_wait;
		c->read_wait = rq;
		return true;
	}
	c->st.read_misses++;
	if (w.present) {
		for_pages(c, lo, hi, read_pin, &w);
		rq->wc_birth = c->alloc_seq;
		rq->wc_marks |= WC_MARK_PINNED;
	}
	return false;
}

static void find_jlost(struct wcache *c, struct wc_page *p, uint8_t mask, void *arg)
{
	(void)c;
	(void)mask;
	if (p->jlost)
		*(bool *)arg = true;
}

bool wcache_take(struct wcache *c, struct array_req *rq)
{
	struct uraid_io *io = rq->io;
	bool taken = false, run = false;

	/*
	 * A read with the policy through and no page in use has nothing to
	 * find here: no lock on that path. (A page can only come from a write
	 * cached after a switch to back, concurrent with this read: either
	 * order is right for it. Writes still take the lock: their range must
	 * hold destages back.)
	 */
	if (io->op == URAID_IO_READ &&
	    atomic_load_explicit(&c->policy, memory_order_relaxed) != URAID_WRITE_BACK &&
	    __atomic_load_n(&c->nfree, __ATOMIC_RELAXED) == c->npages)
		return false;
	pthread_mutex_lock(&c->lock);
	/* under the lock: the switch to through stores it under the lock too */
	bool back = atomic_load_explicit(&c->policy, memory_order_relaxed) == URAID_WRITE_BACK;
	switch (io->op) {
	case URAID_IO_READ:
		if (c->njlost) {
			bool lost = false;
			for_pages(c, io->offset / 512, (io->offset + io->length) / 512, find_jlost,
				  &lost);
			if (lost) {
				pthread_mutex_unlock(&c->lock);
				end_later(rq, -EIO);
				return true;
			}
		}
		taken = take_read(c, rq);
		bool waits = taken && c->read_wait == rq;
		pthread_mutex_unlock(&c->lock);
		if (taken && !waits)
			end_later(rq, 0);
		return taken;
	case URAID_IO_FLUSH:
		/* journal write-back: every write acknowledged is in the journal
		   already (md completes such a flush at once): on to the members */
		if (c->jwb && !(rq->wc_marks & WC_MARK_EPOCH) && !c->flush_wait && !c->epoch_head) {
			pthread_mutex_unlock(&c->lock);
			return false;
		}
		if (rq->wc_marks & WC_MARK_EPOCH) {
			/* it waited for a slot; wc_after_change gave it its epoch */
			rq->wc_marks &= (uint8_t)~WC_MARK_EPOCH;
		} else {
			wc_epoch_advance(c);
			if (c->epoch_head || c->cur_epoch + 1 - c->oldest_epoch >= WC_EPOCHS) {
				/* the ring is full: reusing the open epoch would make
				   this flush wait for writes after it too; it waits
				   for the oldest epoch to be clean instead */
				rq->wc_next = NULL;
				if (c->epoch_tail)
					c->epoch_tail->wc_next = rq;
				else
					c->epoch_head = rq;
				c->epoch_tail = rq;
				pthread_mutex_unlock(&c->lock);
				destage_from(c, rq);
				return true;
			}
			rq->wc_epoch = c->cur_epoch++;
		}
		if (epoch_clean(c, rq->wc_epoch)) {
			bool failed = flush_fails(c, rq->wc_epoch);
			pthread_mutex_unlock(&c->lock);
			if (failed)
				end_later(rq, -EIO);
			return failed;
		}
		rq->wc_next = c->flush_wait;
		c->flush_wait = rq;
		pthread_mutex_unlock(&c->lock);
		destage_from(c, rq);
		return true;
	case URAID_IO_WRITE:
		c->last_write_ns = reactor_now_ns(&rq->er->r);
		/* an array that has failed: the writes fail as without a cache */
		if (c->jwb) {
			/* journal write-back: FUA is met by the log write (durable);
			   no room in the cache or the log: written through */
			bool logged = false;
			bool stream = jwb_stream(c, io->offset / 512, (io->offset + io->length) / 512) &&
				      io->length >= WC_JSTREAM_MIN_BYTES;
			if (!stream && journal_can_cache(c, io) && io->length < WC_BYPASS_BYTES &&
			    io->length / WC_PAGE_BYTES + 2 <= c->npages / 8 &&
			    !c->space_head && absorb_j(c, rq, &logged)) {
				/* a destage to start: not here (see wc_kick_away), and
				   not while one runs (its completions go on) */
				run = (c->pressure || c->jpress) && !c->destages_in_flight;
				pthread_mutex_unlock(&c->lock);
				c->jpl->ops->wb_kick(c->jpl, &rq->er->r);
				if (run)
					wc_kick_away(c, rq->er);
				return true;
			}
			c->st.writes_through++;
			taken = take_through(c, rq);
			run = wc_want_destage(c);
			pthread_mutex_unlock(&c->lock);
			if (run)
				destage_from(c, rq);
			return taken;
		}
		if (back && !(io->flags & URAID_IO_FUA) && back_cacheable(c, io) &&
		    !(atomic_load(&c->a->degraded) && !array_level_survives(c->a))) {
			if (!c->space_head && absorb(c, rq)) {
				run = c->pressure || c->row_ready;
				pthread_mutex_unlock(&c->lock);
				end_later(rq, 0);
				/* on this reactor, as for small writes: a completed row's
				   bytes are still in this CPU's caches (destaged on
				   another reactor they measured ~20 % more CPU per MiB) */
				if (run)
					destage_from(c, rq);
				return true;
			}
			/* no room: in line behind the writes already waiting. Not
			   quiet any more (the destage runs for it anyway, and may
			   leave rows for the stream to complete) */
			c->st.write_waits++;
			c->idle_kick = false;
			rq->wc_next = NULL;
			if (c->space_tail)
				c->space_tail->wc_next = rq;
			else
				c->space_head = rq;
			c->space_tail = rq;
			pthread_mutex_unlock(&c->lock);
			destage_from(c, rq);
			return true;
		}
		/* written through */
		__attribute__((fallthrough));
	default:
		c->st.writes_through++;
		taken = take_through(c, rq);
		pthread_mutex_unlock(&c->lock);
		return taken;
	}
}

void wcache_req_end(struct wcache *c, struct array_req *rq, bool ok)
{
	struct uraid_io *io = rq->io;
	bool kick = false;

	pthread_mutex_lock(&c->lock);
	if (rq->wc_marks & WC_MARK_PINNED) {
		struct read_walk w = { .dst = ok ? rq->data : NULL, .lo = io->offset / 512,
				       .birth = rq->wc_birth };
		for_pages(c, w.lo, w.lo + io->length / 512, read_unpin, &w);
		/* an op written through may wait for these pins */
		wc_after_change(c);
	}
	if (rq->wc_marks & WC_MARK_JBAR)
		c->jbar--;
	if (rq->wc_marks & WC_MARK_JROWW)
		c->jrow_wait--;         /* (it ends only once let go: not expected) */
	if (rq->wc_marks & WC_MARK_THROUGH) {
		if (rq->wc_prev)
			rq->wc_prev->wc_next = rq->wc_next;
		else
			c->through_list = rq->wc_next;
		if (rq->wc_next)
			rq->wc_next->wc_prev = rq->wc_prev;
		/* landed: the cached sectors of the range are older than it */
		for_pages(c, rq->wc_lo, rq->wc_hi, ok ? drop_sectors : drop_clean_sectors, NULL);
		/* reads that waited for it: start over (another op may hold them) */
		for (struct array_req **pp = &c->read_wait; *pp;) {
			struct array_req *r = *pp;
			uint64_t lo = r->io->offset / 512, hi = lo + r->io->length / 512;
			if (wc_range_blocked(c, lo, hi)) {
				pp = &r->wc_next;
				continue;
			}
			*pp = r->wc_next;
			wc_post(r, resume_retake);
		}
		wc_after_change(c);
		kick = c->ndirty && wc_want_destage(c);
	}
	rq->wc_marks = 0;
	pthread_mutex_unlock(&c->lock);
	if (kick)
		destage_from(c, rq);
}

void wcache_drop_clean(struct wcache *c)
{
	pthread_mutex_lock(&c->lock);
	for (uint32_t i = c->pg[head(c, L_CLEAN)].next, nx; i != head(c, L_CLEAN); i = nx) {
		nx = c->pg[i].next;
		struct wc_page *p = &c->pg[i];
		if (p->pins || p->inflight)
			continue;
		p->valid = 0;
		p->gen++;
		wc_page_free_if_empty(c, p);
	}
	pthread_mutex_unlock(&c->lock);
}

void wcache_set_policy(struct wcache *c, uint32_t policy)
{
	pthread_mutex_lock(&c->lock);
	atomic_store(&c->policy, policy);
	pthread_mutex_unlock(&c->lock);
}

void wcache_set_journal(struct wcache *c, struct parity_log *pl)
{
	if (pl)
		c->jpl = pl;
	c->jwb = pl != NULL;
}

void wcache_journal_counts(struct wcache *c, uint64_t *partial_waits, uint64_t *row_waits,
			   uint64_t *full_through)
{
	pthread_mutex_lock(&c->lock);
	*partial_waits = c->jbar_waits;
	*row_waits = c->jrow_waits;
	*full_through = c->jwb_through;
	pthread_mutex_unlock(&c->lock);
}

void wcache_status(struct wcache *c, struct uraid_write_cache_status *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	st->policy = atomic_load(&c->policy);
	st->size_bytes = c->bytes;
	st->dirty_bytes = c->dirty_sectors * 512;
	st->cached_bytes = (uint64_t)(c->npages - c->nfree) * WC_PAGE_BYTES;
	pthread_mutex_unlock(&c->lock);
}
