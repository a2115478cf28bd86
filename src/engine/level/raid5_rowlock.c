/* SPDX-License-Identifier: MIT */
/*
 * Row locks (raid5_rowlock.h): a hash table of buckets, each a short-held
 * mutex over a short list of held rows; every held row carries a FIFO of
 * waiters, and release hands the row to the first waiter and wakes it on
 * its own reactor (reactor_post) through the callback its owner set, so the
 * waiter's work continues where its request lives. Knows nothing of RAID:
 * its users say what a row is.
 *
 * In a RAID 4/5/6 write (see raid5.c for the whole path) this is where
 * r5_piece_lock (raid5_piece.c) queues, where r5_gather_or_hold
 * (raid5_gather.c) takes queued writes, and where r5_piece_finish lets the
 * row go.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "common/adaptive_mutex.h"
#include "engine/level/raid5_rowlock.h"

struct rowlock_bucket {
	pthread_mutex_t lock;
	struct rowlock *held;
} __attribute__((aligned(64)));

int rowlock_table_init(struct rowlock_table *t, unsigned nbuckets)
{
	unsigned n = 1;

	while (n < nbuckets && n < (1u << 24))
		n <<= 1;
	t->b = aligned_alloc(64, (size_t)n * sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		uraid_mutex_init_adaptive(&t->b[i].lock);
		t->b[i].held = NULL;
	}
	t->mask = n - 1;
	return 0;
}

void rowlock_table_fini(struct rowlock_table *t)
{
	if (!t->b)
		return;
	for (unsigned i = 0; i <= t->mask; i++)
		pthread_mutex_destroy(&t->b[i].lock);
	free(t->b);
	t->b = NULL;
}

static struct rowlock_bucket *bucket_of(struct rowlock_table *t, uint64_t row)
{
	/* Fibonacci hashing: neighbouring rows land in different buckets */
	uint64_t h = row * 0x9e3779b97f4a7c15ULL;

	return &t->b[(h >> 32) & t->mask];
}

bool rowlock_acquire(struct rowlock_table *t, struct rowlock *lk, uint64_t row,
		     struct reactor *r)
{
	struct rowlock_bucket *b = bucket_of(t, row);
	struct rowlock *h;

	lk->row = row;
	lk->r = r;
	lk->next = NULL;
	__atomic_store_n(&lk->wait_head, NULL, __ATOMIC_RELAXED);
	lk->wait_tail = NULL;
	pthread_mutex_lock(&b->lock);
	for (h = b->held; h; h = h->next)
		if (h->row == row)
			break;
	if (!h) {
		lk->next = b->held;
		b->held = lk;
		pthread_mutex_unlock(&b->lock);
		return true;
	}
	if (h->wait_tail)
		h->wait_tail->next = lk;
	else
		__atomic_store_n(&h->wait_head, lk, __ATOMIC_RELAXED);
	h->wait_tail = lk;
	pthread_mutex_unlock(&b->lock);
	return false;
}

void rowlock_release(struct rowlock_table *t, struct rowlock *lk)
{
	struct rowlock_bucket *b = bucket_of(t, lk->row);
	struct rowlock **pp, *w;

	pthread_mutex_lock(&b->lock);
	for (pp = &b->held; *pp && *pp != lk; pp = &(*pp)->next)
		;
	/* lk must be held: *pp == lk */
	*pp = lk->next;
	w = lk->wait_head;
	if (w) {
		/* the first waiter holds the row now and inherits the queue */
		__atomic_store_n(&w->wait_head, w->next, __ATOMIC_RELAXED);
		w->wait_tail = w->next ? lk->wait_tail : NULL;
		w->next = b->held;
		b->held = w;
	}
	lk->next = NULL;
	__atomic_store_n(&lk->wait_head, NULL, __ATOMIC_RELAXED);
	lk->wait_tail = NULL;
	pthread_mutex_unlock(&b->lock);
	if (w)
		reactor_post(w->r, &w->msg);
}

struct rowlock *rowlock_take_waiters(struct rowlock_table *t, struct rowlock *lk,
				     bool (*take)(struct rowlock *w, void *arg), void *arg,
				     bool *more)
{
	struct rowlock_bucket *b = bucket_of(t, lk->row);
	struct rowlock *first = NULL, **tail = &first, *w;

	/*
	 * Most holders have no waiters: skip the bucket's mutex then. A waiter
	 * queueing at this very moment is not missed for good: it is granted
	 * the row in turn, or seen by the holder's next look.
	 */
	if (!__atomic_load_n(&lk->wait_head, __ATOMIC_RELAXED)) {
		*more = false;
		return NULL;
	}
	pthread_mutex_lock(&b->lock);
	while ((w = lk->wait_head) != NULL && take(w, arg)) {
		__atomic_store_n(&lk->wait_head, w->next, __ATOMIC_RELAXED);
		w->next = NULL;
		*tail = w;
		tail = &w->next;
	}
	if (!lk->wait_head)
		lk->wait_tail = NULL;
	*more = lk->wait_head != NULL;
	pthread_mutex_unlock(&b->lock);
	return first;
}
