/* SPDX-License-Identifier: MIT */
/*
 * The RAID 4/5/6 stripe cache (md's stripe_cache_size): a bounded pool of
 * stripe heads, each one 4 KiB page per member, all allocated when the
 * size is set (at assembly, or by uraid_array_set_stripe_cache from a
 * control thread), none on the I/O path.
 *
 * Heads come in slabs (one per growth), kept until the array closes; a
 * smaller size gives the pages of the heads beyond it back to the system
 * (madvise) and keeps them as spares for a later growth.
 *
 * A piece takes a head before it asks for its row's lock (r5_piece_lock,
 * raid5_piece.c): writes, write-zeroes, discards and the reads that must
 * rebuild a chunk; healthy reads go straight to the members and take none,
 * as md's chunk-aligned reads bypass its cache. So at most `size` rows are
 * in work (held or queued for their lock) at once. A piece that finds no
 * free head waits here, in FIFO order, and resumes on its own reactor when
 * one comes back; a piece gathered into another's group gives its head
 * back at once (raid5_gather.c), the leader doing the work. It still took
 * one first: it can join a group only once it queues for the row, which
 * comes after the head, so with a small cache a leader holding its row
 * (R5_HOLD_NS) would make the next sequential writes wait for heads they
 * give back at once. So a held leader lets its row go at its reactor's
 * next event once requests wait for a head (keep_holding, raid5_gather.c),
 * and none starts a hold then. Skipping the head altogether would need
 * the gathering decision before the row lock, outside the row's order:
 * not done. The head's
 * pages are the unit buffers of small units (up to R5_KEEP_BYTES: the
 * old data and parity of a 4 KiB read-modify-write); larger units take
 * theirs from the reactor's buffer pool.
 *
 * Row data, as md's stripe cache keeps it: a head whose piece wrote a 4 KiB
 * unit of its row keeps the unit's pages when it comes back (r5_head_put_kept,
 * raid5_piece.c), idle but hashed by (row, sector); the next write of that
 * unit, holding the row, takes the pages over (r5_head_take_kept: the two
 * heads swap pages, no copy) and reads from the members only what they do
 * not hold. Kept heads are the last taken for new work (LRU, after the clean
 * ones), so the cache's memory is the heads' and nothing else. Whatever
 * writes members outside the write path forgets the rows it writes
 * (r5_heads_drop, under the row's lock: discards, sync_raid5.c's rewrites);
 * a reshape keeps nothing and a new geometry starts an empty pool.
 *
 * Shared by every reactor of the array: one mutex, held for a list step.
 * A write unit's look for its row's kept pages (r5_head_take_kept,
 * r5_heads_drop) takes it only when the row's count (hs->rowkept, by a
 * hash of the row) says the pool may keep some of the row, so that units
 * that keep nothing (wide or full-row writes) do not meet on it.
 * A holder of a head never waits for another one, and a holder of a row
 * never waits for a head, so a full cache only delays.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/level/raid5_priv.h"

/*
 * A slab of count heads of n pages each: one mapping for the pages
 * (thousands of 4096-aligned small allocations take glibc seconds),
 * populated now so that no page fault is left for the I/O path, and one
 * allocation for the heads, chained through ->next. NULL on ENOMEM.
 */
static struct r5_head_slab *slab_alloc(unsigned n, unsigned count)
{
	struct r5_head_slab *sl = calloc(1, sizeof(*sl));
	size_t bytes = (size_t)count * n * R5_KEEP_BYTES;

	if (!sl)
		return NULL;
	sl->bytes = bytes;
	sl->heads = calloc(count, sizeof(*sl->heads));
	sl->mem = calloc((size_t)count * n, sizeof(*sl->mem));
	sl->gen = calloc((size_t)count * n, sizeof(*sl->gen));
	sl->pages = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!sl->heads || !sl->mem || !sl->gen || sl->pages == MAP_FAILED) {
		free(sl->heads);
		free(sl->mem);
		free(sl->gen);
		if (sl->pages != MAP_FAILED)
			munmap(sl->pages, bytes);
		free(sl);
		return NULL;
	}
	for (unsigned i = 0; i < count; i++) {
		sl->heads[i].pages = sl->pages + (size_t)i * n * R5_KEEP_BYTES;
		sl->heads[i].mem = sl->mem + (size_t)i * n;
		sl->heads[i].gen = sl->gen + (size_t)i * n;
		sl->heads[i].next = i + 1 < count ? &sl->heads[i + 1] : NULL;
	}
	return sl;
}

/* Buckets of the kept heads' hash (a power of two; chains stay short up
 * to a few thousand kept heads, and longer ones only cost a walk). */
#define R5_HASH_BUCKETS 4096u

static unsigned bucket(const struct r5_heads *hs, uint64_t key, uint32_t x)
{
	return (unsigned)(((key * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)x * 0xC2B2AE3D27D4EB4Full)) >> 40) &
	       hs->hash_mask;
}

/*
 * The keep gauge (hs->keep_score). Keeping a unit costs its write a 4 KiB
 * copy and two list steps under mu (about 1 us); it pays only when a later
 * write of the same unit finds it. Random writes over far more than the
 * cache holds find almost nothing: the gauge falls to 0 after
 * R5_KEEP_SCORE_MAX such looks, and from then on 1 unit in
 * R5_KEEP_SAMPLE is kept, so that a working set that fits shows hits
 * again; a hit rate above 1 / (R5_KEEP_GAIN + 1) of the looks holds it up.
 */
#define R5_KEEP_SCORE_MAX 1024u
#define R5_KEEP_GAIN 16u
#define R5_KEEP_SAMPLE 16u

static void keep_score_add(struct r5_heads *hs, bool hit)
{
	uint32_t v = __atomic_load_n(&hs->keep_score, __ATOMIC_RELAXED), nv;

	if (hit)
		nv = v + R5_KEEP_GAIN > R5_KEEP_SCORE_MAX ? R5_KEEP_SCORE_MAX : v + R5_KEEP_GAIN;
	else
		nv = v ? v - 1 : 0;
	if (nv != v)
		__atomic_store_n(&hs->keep_score, nv, __ATOMIC_RELAXED);
}

bool r5_heads_want_keep(struct r5_heads *hs, uint64_t key, uint32_t x, uint64_t now_ns)
{
	if (__atomic_load_n(&hs->keep_score, __ATOMIC_RELAXED))
		return true;
	/* the sample: a hash of the unit and of the clock's 16 ms period, so
	   that it moves over the units (a hot unit is in it now and then) */
	uint64_t h = (key * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)x * 0xC2B2AE3D27D4EB4Full) ^
		     ((now_ns >> 24) * 0x165667B19E3779F9ull);
	return (h >> 32) % R5_KEEP_SAMPLE == 0;
}

/* Buckets of the per-row kept counts (hs->rowkept), a power of two. */
#define R5_ROWKEPT 16384u

static uint32_t *rowkept_of(const struct r5_heads *hs, uint64_t key)
{
	return &hs->rowkept[(unsigned)((key * 0x9E3779B97F4A7C15ull) >> 50) & (R5_ROWKEPT - 1)];
}

/* Holding row key's lock: may the pool keep anything of the row? */
static bool row_may_keep(const struct r5_heads *hs, uint64_t key)
{
	return __atomic_load_n(rowkept_of(hs, key), __ATOMIC_RELAXED) != 0;
}

static struct r5_head *kept_find(struct r5_heads *hs, uint64_t key, uint32_t x)
{
	for (struct r5_head *h = hs->hash[bucket(hs, key, x)]; h; h = h->hnext)
		if (h->key == key && h->x == x)
			return h;
	return NULL;
}

/* Under mu: h leaves the hash and the LRU list; it keeps nothing now. */
static void kept_unlink(struct r5_heads *hs, struct r5_head *h)
{
	struct r5_head **pp = &hs->hash[bucket(hs, h->key, h->x)];

	while (*pp != h)
		pp = &(*pp)->hnext;
	*pp = h->hnext;
	h->hnext = NULL;
	if (h->lprev)
		h->lprev->lnext = h->lnext;
	else
		hs->lru_head = h->lnext;
	if (h->lnext)
		h->lnext->lprev = h->lprev;
	else
		hs->lru_tail = h->lprev;
	h->lprev = h->lnext = NULL;
	h->kept = false;
	__atomic_store_n(&hs->nkept, hs->nkept - 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(rowkept_of(hs, h->key), 1, __ATOMIC_RELAXED);
}

/* Under mu: a kept head forgotten and made clean (on the free list). */
static void kept_drop(struct r5_heads *hs, struct r5_head *h)
{
	kept_unlink(hs, h);
	h->next = hs->free;
	hs->free = h;
	hs->drops++;
}

/* Under mu: a head for new work: a clean one, else the oldest kept one. */
static struct r5_head *take_idle(struct r5_heads *hs)
{
	struct r5_head *h = hs->free;

	if (h) {
		hs->free = h->next;
	} else if ((h = hs->lru_head) != NULL) {
		kept_unlink(hs, h);
	} else {
		return NULL;
	}
	h->next = NULL;
	return h;
}

static bool have_idle(const struct r5_heads *hs)
{
	return hs->free || hs->lru_head;
}

/* A head beyond the size: its pages go back to the system, it waits as a spare. */
static void head_retire(struct r5_heads *hs, struct r5_head *h)
{
	madvise(h->pages, (size_t)hs->n * R5_KEEP_BYTES, MADV_DONTNEED);
	h->next = hs->spare;
	hs->spare = h;
	hs->spares++;
	hs->allocated--;
}

/*
 * Fault pages in now, on the control thread, so that the I/O path takes no
 * page fault on them: MADV_POPULATE_WRITE where the headers and the kernel
 * have it (Linux 5.14), else a write to every page.
 */
void r5_heads_populate(struct r5_heads *hs, uint8_t *pages, size_t bytes)
{
	(void)hs;
#ifdef MADV_POPULATE_WRITE
	if (madvise(pages, bytes, MADV_POPULATE_WRITE) == 0)
		return;
#endif
	for (size_t o = 0; o < bytes; o += R5_KEEP_BYTES)
		((volatile uint8_t *)pages)[o] = 0;
}

int r5_heads_init(struct r5_heads *hs, unsigned pages_per_head, unsigned size)
{
	memset(hs, 0, sizeof(*hs));
	hs->n = pages_per_head;
	hs->populate = r5_heads_populate;
	hs->hash_mask = R5_HASH_BUCKETS - 1;
	hs->keep_score = R5_KEEP_SCORE_MAX;  /* keep until looks say it does not pay */
	hs->hash = calloc(R5_HASH_BUCKETS, sizeof(*hs->hash));
	hs->rowkept = calloc(R5_ROWKEPT, sizeof(*hs->rowkept));
	if (!hs->hash || !hs->rowkept || pthread_mutex_init(&hs->mu, NULL)) {
		free(hs->hash);
		free(hs->rowkept);
		return -ENOMEM;
	}
	if (size) {
		struct r5_head_slab *sl = slab_alloc(pages_per_head, size);

		if (!sl) {
			free(hs->hash);
			free(hs->rowkept);
			pthread_mutex_destroy(&hs->mu);
			return -ENOMEM;
		}
		hs->slabs = sl;
		hs->free = sl->heads;
	}
	hs->size = hs->allocated = size;
	return 0;
}

void r5_heads_fini(struct r5_heads *hs)
{
	while (hs->slabs) {
		struct r5_head_slab *sl = hs->slabs;

		hs->slabs = sl->next;
		munmap(sl->pages, sl->bytes);
		free(sl->heads);
		free(sl->mem);
		free(sl->gen);
		free(sl);
	}
	free(hs->hash);
	free(hs->rowkept);
	pthread_mutex_destroy(&hs->mu);
}

/* Under hs->mu: hand free heads to the waiters, first come first served;
 * returns the waiters served (chained through ->next) to wake outside. */
static struct r5_head_wait *serve_waiters(struct r5_heads *hs)
{
	struct r5_head_wait *served = NULL, **tail = &served;

	while (hs->wait_head && have_idle(hs) && hs->in_use < hs->size) {
		struct r5_head_wait *w = hs->wait_head;

		hs->wait_head = w->next;
		if (!hs->wait_head)
			hs->wait_tail = NULL;
		w->head = take_idle(hs);
		if (++hs->in_use > hs->peak)
			hs->peak = hs->in_use;
		w->next = NULL;
		*tail = w;
		tail = &w->next;
	}
	return served;
}

static void wake(struct r5_head_wait *w)
{
	while (w) {
		struct r5_head_wait *next = w->next;

		reactor_post(w->r, &w->msg);
		w = next;
	}
}

int r5_heads_resize(struct r5_heads *hs, unsigned size)
{
	struct r5_head_slab *sl = NULL;
	struct r5_head_wait *served;

	/* resizes come one at a time (the control thread); reactors only take
	   and give heads, so the count read here holds until the lock below */
	pthread_mutex_lock(&hs->mu);
	unsigned have = hs->allocated + hs->spares;
	pthread_mutex_unlock(&hs->mu);
	if (size > have && !(sl = slab_alloc(hs->n, size - have)))
		return -ENOMEM;
	pthread_mutex_lock(&hs->mu);
	if (sl) {
		sl->next = hs->slabs;
		hs->slabs = sl;
		for (unsigned i = 0; i < size - have; i++) {
			sl->heads[i].next = hs->spare;
			hs->spare = &sl->heads[i];
			hs->spares++;
		}
	}
	/* The new size first: a head given back while the lock is dropped
	   below must be kept if the new size wants it, not retired against
	   the old one (nothing would top the cache up again after). */
	hs->size = size;
	/* grow from the spares: taken out, their pages (given back at a
	   shrink) populated again outside the lock, then made free; while
	   out, allocated + nback <= size, so r5_head_put retires nothing */
	struct r5_head *back = NULL;
	unsigned nback = 0;

	while (hs->allocated + nback < size && hs->spare) {
		struct r5_head *h = hs->spare;

		hs->spare = h->next;
		hs->spares--;
		h->next = back;
		back = h;
		nback++;
	}
	if (back) {
		pthread_mutex_unlock(&hs->mu);
		for (struct r5_head *h = back; h; h = h->next)
			hs->populate(hs, h->pages, (size_t)hs->n * R5_KEEP_BYTES);
		pthread_mutex_lock(&hs->mu);
		while (back) {
			struct r5_head *h = back;

			back = h->next;
			h->next = hs->free;
			hs->free = h;
			hs->allocated++;
		}
	}
	/* shrink: idle heads go now (clean ones first), heads in use when
	   they come back */
	while (hs->allocated > size && have_idle(hs))
		head_retire(hs, take_idle(hs));
	hs->peak = hs->in_use;
	served = serve_waiters(hs);
	pthread_mutex_unlock(&hs->mu);
	wake(served);
	return 0;
}

bool r5_head_get(struct r5_heads *hs, struct r5_head_wait *w)
{
	bool got = false;

	pthread_mutex_lock(&hs->mu);
	if (!hs->wait_head && have_idle(hs) && hs->in_use < hs->size) {
		w->head = take_idle(hs);
		if (++hs->in_use > hs->peak)
			hs->peak = hs->in_use;
		got = true;
	} else {
		w->head = NULL;
		w->next = NULL;
		if (hs->wait_tail)
			hs->wait_tail->next = w;
		else
			hs->wait_head = w;
		hs->wait_tail = w;
		hs->waits++;
	}
	pthread_mutex_unlock(&hs->mu);
	return got;
}

void r5_head_put(struct r5_heads *hs, struct r5_head *h)
{
	struct r5_head_wait *served;

	pthread_mutex_lock(&hs->mu);
	hs->in_use--;
	if (hs->allocated > hs->size) {
		head_retire(hs, h);     /* the cache was made smaller */
	} else {
		h->next = hs->free;
		hs->free = h;
	}
	served = serve_waiters(hs);
	pthread_mutex_unlock(&hs->mu);
	wake(served);
}

void r5_head_put_kept(struct r5_heads *hs, struct r5_head *h, uint64_t key, uint32_t x)
{
	struct r5_head_wait *served;
	struct r5_head *old;

	pthread_mutex_lock(&hs->mu);
	hs->in_use--;
	if ((old = kept_find(hs, key, x)) != NULL)
		kept_drop(hs, old);     /* not expected: the row's holder took it */
	if (hs->allocated > hs->size) {
		head_retire(hs, h);
	} else {
		h->key = key;
		h->x = x;
		h->kept = true;
		h->next = NULL;
		h->hnext = hs->hash[bucket(hs, key, x)];
		hs->hash[bucket(hs, key, x)] = h;
		h->lnext = NULL;
		h->lprev = hs->lru_tail;
		if (hs->lru_tail)
			hs->lru_tail->lnext = h;
		else
			hs->lru_head = h;
		hs->lru_tail = h;
		__atomic_store_n(&hs->nkept, hs->nkept + 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(rowkept_of(hs, key), 1, __ATOMIC_RELAXED);
		hs->keeps++;
	}
	served = serve_waiters(hs);
	pthread_mutex_unlock(&hs->mu);
	wake(served);
}

bool r5_head_take_kept(struct r5_heads *hs, struct r5_head *h, uint64_t key, uint32_t x)
{
	struct r5_head *k;

	/* the caller holds the row: nothing kept of it, no mutex */
	if (!row_may_keep(hs, key)) {
		__atomic_fetch_add(&hs->misses, 1, __ATOMIC_RELAXED);
		keep_score_add(hs, false);
		return false;
	}
	pthread_mutex_lock(&hs->mu);
	k = kept_find(hs, key, x);
	if (!k) {
		__atomic_fetch_add(&hs->misses, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&hs->mu);
		keep_score_add(hs, false);
		return false;
	}
	/* h takes k's pages and k h's: k is clean from now on */
	uint8_t *pages = h->pages;
	struct member **mem = h->mem;
	uint32_t *gen = h->gen;

	h->pages = k->pages;
	h->mem = k->mem;
	h->gen = k->gen;
	k->pages = pages;
	k->mem = mem;
	k->gen = gen;
	kept_drop(hs, k);
	hs->drops--;            /* taken over, not dropped */
	hs->hits++;
	pthread_mutex_unlock(&hs->mu);
	keep_score_add(hs, true);
	return true;
}

void r5_heads_drop(struct r5_heads *hs, uint64_t key, uint32_t x0, uint32_t x1)
{
	/* the row's keeps were made by holders of its lock, which the caller
	   holds now: an unlocked look sees them (the lock orders it) */
	if (!__atomic_load_n(&hs->nkept, __ATOMIC_RELAXED) || !row_may_keep(hs, key))
		return;
	x0 &= ~(uint32_t)(R5_KEEP_BYTES / 512 - 1);
	pthread_mutex_lock(&hs->mu);
	/* both walks stop once the row's bucket counts none (nothing of the
	   row is left then) */
	const uint32_t *left = rowkept_of(hs, key);

	if ((x1 - x0) / (R5_KEEP_BYTES / 512) > hs->nkept) {
		/* a wide range (a row): walking the kept heads is shorter */
		for (struct r5_head *h = hs->lru_head, *nx; h && *left; h = nx) {
			nx = h->lnext;
			if (h->key == key && h->x >= x0 && h->x < x1)
				kept_drop(hs, h);
		}
	} else {
		for (uint32_t x = x0; x < x1 && *left; x += R5_KEEP_BYTES / 512) {
			struct r5_head *h = kept_find(hs, key, x);

			if (h)
				kept_drop(hs, h);
		}
	}
	pthread_mutex_unlock(&hs->mu);
}

void r5_heads_drop_all(struct r5_heads *hs)
{
	pthread_mutex_lock(&hs->mu);
	while (hs->lru_head)
		kept_drop(hs, hs->lru_head);
	pthread_mutex_unlock(&hs->mu);
}

void r5_heads_stats(struct r5_heads *hs, unsigned *size, unsigned *in_use, unsigned *peak,
		    uint64_t *waits)
{
	pthread_mutex_lock(&hs->mu);
	*size = hs->size;
	*in_use = hs->in_use;
	*peak = hs->peak;
	*waits = hs->waits;
	pthread_mutex_unlock(&hs->mu);
}
