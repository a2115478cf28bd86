/* SPDX-License-Identifier: MIT */
/*
 * Which RAID 4/5/6 writes go together: gathering and row holds
 * (raid5_priv.h, "Gathering", says when and why). A write piece that holds
 * its row takes in the writes queued behind it, of any reactor
 * (rowlock_take_waiters), and is written with them as one group; a leader
 * that continues a sequential stream may hold its row, unstarted and for a
 * bounded time, for the rest of the stream. Owns the gathering fields of
 * struct r5_cache (the held leaders, the stream ends, the idle message,
 * the counters) and of struct r5_piece (seq, held, the group).
 *
 * In a write (raid5.c draws the whole path): r5_write (raid5_write.c)
 * notes the stream (r5_stream_note); once the row is held, write_start
 * asks r5_gather_or_hold. A leader held here is looked at again when the
 * piece layer reports an event on its reactor (r5_cache.watch: member I/O
 * done, a piece queued), by the idle message, or at the time limit, and
 * is let go through the continuation write_start gave (after_hold).
 */
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/clock.h"
#include "engine/level/raid5_priv.h"

struct take_arg {
	unsigned room;
};

/*
 * Under the bucket mutex: a plain write, while there is room. Writes of
 * other reactors too: a stream that a client spreads over connections (the
 * kernel's NBD client with several) reaches the array on several reactors.
 */
static bool take_write(struct rowlock *w, void *arg)
{
	struct take_arg *ta = arg;
	struct r5_piece *pc;

	if (!ta->room || !(pc = r5_piece_of_waiter(w)) || pc->op != OP_WRITE)
		return false;
	ta->room--;
	return true;
}

/*
 * The leader (holding the row, not started) takes in the writes queued
 * first behind it. Returns true when other waiters remain.
 */
static bool gather(struct r5_piece *ld)
{
	struct take_arg ta = { R5_GATHER_MAX - ld->gcount };
	struct rowlock *w;
	bool more;

	w = rowlock_take_waiters(&ld->priv->locks, &ld->lk, take_write, &ta, &more);
	while (w) {
		struct rowlock *next = w->next;
		struct r5_piece *pc = r5_piece_of_waiter(w);

		pc->gnext = NULL;
		/* the leader does the work: its stripe head serves the group */
		if (pc->hw.head) {
			r5_head_put(&ld->priv->heads, pc->hw.head);
			pc->hw.head = NULL;
		}
		ld->gtail->gnext = pc;
		ld->gtail = pc;
		ld->gcount++;
		ld->rw_flags |= pc->rw_flags;   /* FUA for one is FUA for the row */
		w = next;
	}
	return more;
}

/*
 * Has the group reached its row's end? A stream writes upwards: what comes
 * next goes to the next row, so holding longer would gain nothing.
 */
static bool group_done(const struct r5_piece *ld)
{
	for (const struct r5_piece *g = ld; g; g = g->gnext)
		if (g->r1 >= ld->C * ld->d)
			return true;
	return false;
}

/* Why the holds are looked at. */
enum hold_why {
	HOLD_START,     /* may the leader hold at all? */
	HOLD_EVENT,     /* member I/O completed, a piece queued */
	HOLD_HOP,       /* the idle message's second hop: the submitter has polled */
	HOLD_IDLE,      /* that, and no member I/O of the array in flight here */
};

/* Member I/O of the array (of any request) in flight on a reactor other than c's? */
static bool others_busy(const struct r5_cache *c)
{
	const struct r5_priv *priv = c->priv;

	for (unsigned k = 0; k < priv->nreactors; k++)
		if (&priv->cache[k] != c && __atomic_load_n(&priv->cache[k].mio_out, __ATOMIC_RELAXED))
			return true;
	return false;
}

/*
 * Should the leader ld (gathered, not started) go on holding its row? A
 * leader continuing a stream holds while member I/O is in flight here (more
 * of the stream comes as it completes); one that starts a row without
 * continuing a stream (maybe a stream's first), or that continues a stream
 * while the array has member I/O in flight on other reactors only (maybe
 * the stream's, from a client on several connections), holds until the
 * current batch of its own reactor is in (short_hold): writes of other
 * reactors already queued behind it are taken then.
 */
static bool keep_holding(struct r5_piece *ld, bool more, enum hold_why why, uint64_t now)
{
	struct r5_cache *c = r5_cache_of(ld);

	if (more || ld->gcount >= R5_GATHER_MAX || group_done(ld))
		return false;
	/* requests wait for a stripe head (raid5_heads.c) while this one
	   keeps its own on an unstarted row: the row goes now, the cache's
	   bound must not turn into the hold's wait. A hint read without the
	   pool's lock: a waiter queued after it is seen at the next event or
	   the time limit. */
	if (__atomic_load_n(&ld->priv->heads.wait_head, __ATOMIC_RELAXED))
		return false;
	if (why == HOLD_START) {
		if (ld->seq && c->mio_out > 0) {
			ld->short_hold = false;
			return true;
		}
		ld->short_hold = ld->r0 == 0 || (ld->seq && others_busy(c));
		return ld->short_hold;
	}
	if (why == HOLD_IDLE || (why == HOLD_HOP && ld->short_hold)) {
		c->cnt.hold_idle++;
		return false;
	}
	if (now - ld->hold_t0 >= ld->priv->hold_ns) {
		c->cnt.hold_timeouts++;
		return false;
	}
	return true;
}

static void hold_check(struct r5_cache *c, enum hold_why why)
{
	if (c->in_poll) {
		c->repoll = true;
		return;
	}
	r5_pin(c);              /* a group that fails at once completes requests */
	c->in_poll = true;
	do {
		uint64_t now = c->priv->now();
		struct r5_piece **pp = &c->held, *go = NULL, **gt = &go, *g;

		c->repoll = false;
		/* first decide (no callbacks run), then start what goes */
		while ((g = *pp) != NULL) {
			bool more = gather(g);

			if (keep_holding(g, more, why, now)) {
				pp = &g->hnext;
				continue;
			}
			*pp = g->hnext;
			g->hnext = NULL;
			*gt = g;
			gt = &g->hnext;
		}
		if (!c->held)
			c->watch = NULL;        /* the piece layer need not tell us more */
		why = HOLD_EVENT;
		while ((g = go) != NULL) {
			go = g->hnext;
			g->hnext = NULL;
			g->held = false;
			g->after_hold(g);
		}
	} while (c->repoll);
	c->in_poll = false;
	r5_unpin(c);
}

static void hold_poll(struct r5_cache *c)
{
	hold_check(c, HOLD_EVENT);
}

/* Two hops through the reactor's inbox: the submitter polls in between. */
static void idle_msg_fn(struct reactor *r, struct reactor_msg *m)
{
	struct r5_cache *c = (struct r5_cache *)((char *)m - offsetof(struct r5_cache, idle_msg));

	if (c->idle_hops++ == 0 && c->held) {
		reactor_post(c->r, &c->idle_msg);
		return;
	}
	c->idle_posted = false;
	if (c->held)
		hold_check(c, c->mio_out == 0 ? HOLD_IDLE : HOLD_HOP);
	r5_unpin(c);            /* the array stayed open for this message */
}

static void hold_idle(struct r5_cache *c)
{
	if (c->idle_posted || !c->r)
		return;
	c->idle_posted = true;
	c->idle_hops = 0;
	r5_pin(c);
	reactor_post(c->r, &c->idle_msg);
}

/* The piece layer's events, while this reactor holds leaders (c->watch). */
static void hold_watch(struct r5_cache *c, enum r5_event ev)
{
	/* the last member I/O here done: nothing else would look at the holds */
	if (ev == R5_EV_IO_DONE && c->mio_out == 0)
		hold_idle(c);
	else
		hold_poll(c);
}

/*
 * A write piece holds its row: it gathers the writes queued behind it, of
 * any reactor; a leader continuing a stream may hold the row for the rest
 * of it (raid5_priv.h); then the group is written (by go).
 */
bool r5_gather_or_hold(struct r5_piece *ld, void (*go)(struct r5_piece *ld))
{
	bool more = gather(ld);
	struct r5_cache *c;

	if (!keep_holding(ld, more, HOLD_START, 0))
		return false;
	c = r5_cache_of(ld);
	ld->after_hold = go;
	ld->hold_t0 = ld->priv->now();
	ld->held = true;
	ld->hnext = c->held;
	c->held = ld;
	c->watch = hold_watch;
	c->cnt.holds++;
	if (ld->short_hold || c->mio_out == 0)
		hold_idle(c);           /* nothing else would look at it */
	return true;
}

/*
 * Does a write of [sector, sector+nsect) continue where a recent write
 * ended, on this reactor or another (a client that spreads one stream over
 * several connections)? Then note where it ends, in c's own ring: each
 * reactor writes only its own, the others only read it (relaxed: a stale
 * look costs at most a missed hold).
 */
bool r5_stream_note(struct r5_cache *c, uint64_t sector, uint32_t nsect)
{
	struct r5_priv *priv = c->priv;
	unsigned own = R5_SEQ_STREAMS;
	bool seq = false;

	/* this reactor's ring first: its stream then goes on in the same slot */
	for (unsigned n = 0, k = (unsigned)(c - priv->cache); n < priv->nreactors && !seq;
	     n++, k = (k + 1) % priv->nreactors) {
		struct r5_cache *o = &priv->cache[k];

		for (unsigned i = 0; i < R5_SEQ_STREAMS; i++) {
			if (__atomic_load_n(&o->ends[i], __ATOMIC_RELAXED) != sector)
				continue;
			seq = true;
			if (o == c)
				own = i;
			break;
		}
	}
	if (own == R5_SEQ_STREAMS)
		own = c->ends_next++ % R5_SEQ_STREAMS;
	__atomic_store_n(&c->ends[own], sector + nsect, __ATOMIC_RELAXED);
	return seq;
}

/* Set up the gathering state of every reactor's cache (zeroed before). */
void r5_gather_init(struct r5_priv *priv)
{
	for (unsigned i = 0; i < priv->nreactors; i++) {
		priv->cache[i].idle_msg.fn = idle_msg_fn;
		for (unsigned j = 0; j < R5_SEQ_STREAMS; j++)
			priv->cache[i].ends[j] = UINT64_MAX;
	}
	priv->hold_ns = R5_HOLD_NS;
	priv->now = uraid_now_ns;
}
