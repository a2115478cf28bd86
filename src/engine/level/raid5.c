/* SPDX-License-Identifier: MIT */
/*
 * RAID 4/5/6 data path (levels 4, 5 and 6 with every md layout; the
 * geometry says where P, Q and each data chunk of a row live).
 *
 * The array core cuts requests so that a piece never crosses a stripe row.
 * A piece is worked on in units: a sector range [x,y) within the chunk,
 * the same range in every chunk of the row, cut so that within a unit each
 * data chunk is either written over the whole range or not at all (at most
 * three bands per row), and at most R5_SEG_SECTORS long. Per unit the
 * planner picks the mode with the fewest reads (raid5_priv.h).
 *
 * Reads of live chunks go straight to the member with no lock. Writes,
 * reads that need a rebuild (lost member, read error) and discards hold the
 * row's stripe lock (stripe.c) from the first read to the last write, so
 * once a write completes P and Q on disk match the data.
 *
 * Writes are gathered: the write that holds a row takes in the writes
 * queued behind it, from any reactor, and writes their union as one (a
 * group; a full row needs no read), and a write continuing a sequential
 * stream may hold its row, for a bounded time, for the rest of the stream
 * (raid5_priv.h, "Gathering"). Every piece of a group completes, on its own
 * reactor, when the group's write does.
 *
 * Per-piece state comes from a free list per reactor (allocated on first
 * need, reused after), buffers from the reactor's pool.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uraid/parity.h>

#include "engine/core/array.h"
#include "engine/level/raid5_priv.h"

#define STRIPE_BUCKETS 4096

/* ---- degraded and repaired reads ---- */

static void recon_unit(struct r5_piece *pc);

static void recon_next(struct r5_piece *pc)
{
	r5_bufs_put(pc);
	if (pc->result < 0 || pc->next_x >= pc->end_x) {
		r5_piece_finish(pc, 0);
		return;
	}
	pc->ux = pc->next_x;
	pc->uy = pc->end_x - pc->ux > R5_SEG_SECTORS ? pc->ux + R5_SEG_SECTORS : pc->end_x;
	pc->ulen = (pc->uy - pc->ux) * 512;
	pc->next_x = pc->uy;
	recon_unit(pc);
}

static void recon_written(struct r5_piece *pc)
{
	recon_next(pc);
}

static void recon_read_done(struct r5_piece *pc)
{
	if (pc->new_bad) {
		recon_unit(pc);         /* plan again with the new loss */
		return;
	}
	if (r5_rebuild(pc) < 0) {
		r5_piece_finish(pc, -EIO);
		return;
	}
	/* hand the rebuilt chunks to the reader */
	for (unsigned k = 0; k < pc->d; k++) {
		unsigned s = pc->st.data_slot[k];
		uint32_t cs, ce;

		if (!(pc->sflag[s] & SF_WANT) || !r5_chunk_range(pc, k, &cs, &ce))
			continue;
		if (cs < pc->ux)
			cs = pc->ux;
		if (ce > pc->uy)
			ce = pc->uy;
		if (cs >= ce)
			continue;
		memcpy(pc->buf + (size_t)(k * pc->C + cs - pc->r0) * 512,
		       pc->sbuf[s] + (size_t)(cs - pc->ux) * 512, (size_t)(ce - cs) * 512);
	}
	/* rewrite what failed to read, as md does */
	pc->after_io = recon_written;
	for (unsigned s = 0; s < pc->n; s++)
		if ((pc->sflag[s] & SF_BAD) && r5_live(pc, s))
			r5_submit(pc, s, MEMBER_WRITE, pc->sbuf[s], pc->mbase + pc->ux, pc->ulen);
	if (pc->outstanding == 0)
		recon_written(pc);
}

static void recon_unit(struct r5_piece *pc)
{
	unsigned nlost = 0;
	bool skip_q;

	pc->new_bad = false;
	r5_snap_live(pc);
	for (unsigned s = 0; s < pc->n; s++)
		if (r5_lost(pc, s))
			nlost++;
	if (nlost > pc->npar) {
		r5_piece_finish(pc, -EIO);
		return;
	}
	skip_q = pc->npar == 2 && nlost < 2 && !r5_lost(pc, (unsigned)pc->st.q_slot);
	for (unsigned s = 0; s < pc->n; s++) {
		if (!r5_need_buf(pc, s)) {
			r5_piece_finish(pc, -ENOMEM);
			return;
		}
	}
	pc->after_io = recon_read_done;
	for (unsigned s = 0; s < pc->n; s++) {
		if (r5_lost(pc, s))
			continue;
		if (skip_q && (int)s == pc->st.q_slot)
			continue;
		r5_read_slot(pc, s);
	}
	if (pc->outstanding == 0)
		recon_read_done(pc);
}

static void recon_start(struct r5_piece *pc)
{
	recon_next(pc);
}

static void read_direct_done(struct r5_piece *pc)
{
	uint32_t lo = UINT32_MAX, hi = 0;

	for (unsigned k = 0; k < pc->d; k++) {
		unsigned s = pc->st.data_slot[k];
		uint32_t cs, ce;

		/* the direct reads went to the caller's buffer, not to sbuf */
		pc->sflag[s] &= (uint8_t)~SF_HAVE;
		if (pc->sflag[s] & SF_BAD)
			pc->sflag[s] |= SF_WANT;
		if (!(pc->sflag[s] & SF_WANT) || !r5_chunk_range(pc, k, &cs, &ce))
			continue;
		lo = cs < lo ? cs : lo;
		hi = ce > hi ? ce : hi;
	}
	if (lo >= hi) {
		r5_piece_finish(pc, 0);
		return;
	}
	pc->next_x = lo;
	pc->end_x = hi;
	r5_piece_lock(pc, recon_start);
}

static void r5_read(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	struct r5_piece *pc = r5_piece_get(rq);
	int err;

	if (!pc) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	err = r5_piece_setup(pc, rq, OP_READ, sector, nsect, buf);
	if (err < 0) {
		r5_piece_finish(pc, err);
		return;
	}
	pc->after_io = read_direct_done;
	for (unsigned k = 0; k < pc->d; k++) {
		unsigned s = pc->st.data_slot[k];
		uint32_t cs, ce;

		if (!r5_chunk_range(pc, k, &cs, &ce))
			continue;
		if (!r5_live(pc, s)) {
			pc->sflag[s] |= SF_WANT;
			continue;
		}
		r5_submit(pc, s, MEMBER_READ, buf + (size_t)(k * pc->C + cs - pc->r0) * 512,
		       pc->mbase + cs, (ce - cs) * 512);
	}
	/* a failed direct read marks its slot bad; rebuild those chunks too */
	if (pc->outstanding == 0)
		read_direct_done(pc);
}

/* ---- writes ---- */

static void write_unit(struct r5_piece *pc);

/*
 * The next unit of the group's bands; false when done. Units are cut where
 * any piece of the group starts or ends within the chunk, so over a unit
 * every piece writes each data chunk whole or not at all; where pieces
 * overlap, the last queued wins (on one reactor the one submitted last;
 * writes in flight together on two reactors have no order to keep).
 */
static bool next_unit(struct r5_piece *pc)
{
	uint32_t x = pc->next_x, C = pc->C;

	/* a lone piece within one chunk (a small write): one band, one chunk */
	if (!pc->gnext && pc->r0 / C == (pc->r1 - 1) / C) {
		uint32_t k0 = pc->r0 / C, a = pc->r0 - k0 * C, b = pc->r1 - k0 * C;

		if (x < a)
			x = a;
		if (x >= b) {
			pc->next_x = C;
			return false;
		}
		for (unsigned k = 0; k < pc->d; k++) {
			pc->wr[k] = k == k0;
			pc->src[k] = NULL;
		}
		pc->src[k0] = pc->buf ? pc->buf + (size_t)(x - a) * 512 : NULL;
		pc->ux = x;
		pc->uy = b - x > R5_SEG_SECTORS ? x + R5_SEG_SECTORS : b;
		pc->ulen = (pc->uy - pc->ux) * 512;
		pc->next_x = pc->uy;
		return true;
	}
	while (x < C) {
		uint32_t be = C;
		bool any = false;

		for (const struct r5_piece *g = pc; g; g = g->gnext) {
			uint32_t a = g->r0 % C, b = (g->r1 - 1) % C + 1;

			if (a > x && a < be)
				be = a;
			if (b > x && b < be)
				be = b;
		}
		for (unsigned k = 0; k < pc->d; k++) {
			const struct r5_piece *w = NULL;

			for (const struct r5_piece *g = pc; g; g = g->gnext)
				if (g->r0 <= k * C + x && k * C + be <= g->r1)
					w = g;
			pc->wr[k] = w != NULL;
			pc->src[k] = w && w->buf ? w->buf + (size_t)(k * C + x - w->r0) * 512 : NULL;
			any |= pc->wr[k];
		}
		if (!any) {
			x = be;
			continue;
		}
		pc->ux = x;
		pc->uy = be - x > R5_SEG_SECTORS ? x + R5_SEG_SECTORS : be;
		pc->ulen = (pc->uy - pc->ux) * 512;
		pc->next_x = pc->uy;
		return true;
	}
	pc->next_x = x;
	return false;
}

static void write_next(struct r5_piece *pc)
{
	r5_bufs_put(pc);
	if (pc->result < 0 || !next_unit(pc)) {
		r5_piece_finish(pc, 0);
		return;
	}
	write_unit(pc);
}

static void write_written(struct r5_piece *pc)
{
	write_next(pc);
}

static void write_compute(struct r5_piece *pc)
{
	unsigned ps = pc->st.p_slot;
	int qs = pc->st.q_slot;
	/* RMW: Q was read (so is updated) iff the unit's view had it usable */
	bool q_live = pc->npar == 2 && (pc->sflag[qs] & SF_HAVE);

	if (pc->new_bad) {
		write_unit(pc);         /* plan again: FULL, the read error is repaired */
		return;
	}
	switch (pc->plan.mode) {
	case R5_DIRECT:
		break;
	case R5_FULL:
		if (r5_rebuild(pc) < 0) {
			r5_piece_finish(pc, -EIO);
			return;
		}
		/* P/Q afresh from the old untouched and the new data */
		__attribute__((fallthrough));
	case R5_RCW:
		r5_fill_blocks(pc, true);
		if (pc->npar == 2)
			uraid_parity_gen_pq(pc->nsyn, pc->ulen, pc->blocks, pc->sbuf[ps],
					    pc->sbuf[qs]);
		else
			uraid_parity_gen_p(pc->nsyn, pc->ulen, pc->blocks, pc->sbuf[ps]);
		break;
	case R5_RMW:
		if (!(pc->sflag[ps] & SF_HAVE))
			memset(pc->sbuf[ps], 0, pc->ulen);      /* P lost: scratch */
		for (unsigned k = 0; k < pc->d; k++) {
			unsigned s = pc->st.data_slot[k];

			if (!pc->wr[k])
				continue;
			if (q_live)
				uraid_parity_update_pq((unsigned)pc->st.syndrome_of_slot[s], pc->ulen,
						       pc->sbuf[s], r5_new_data(pc, k), pc->sbuf[ps],
						       pc->sbuf[qs]);
			else
				uraid_parity_update_p(pc->ulen, pc->sbuf[s], r5_new_data(pc, k),
						      pc->sbuf[ps]);
		}
		break;
	}
	/* write phase */
	pc->after_io = write_written;
	for (unsigned s = 0; s < pc->n; s++) {
		int k = pc->didx[s];
		void *src;

		/* out of the unit's view: not planned for; failed since: skipped */
		if ((pc->sflag[s] & SF_DEAD) || !r5_live(pc, s))
			continue;
		if (k >= 0 && pc->wr[k])
			src = r5_new_data(pc, (unsigned)k);
		else if (k < 0 && pc->plan.mode != R5_DIRECT)
			src = pc->sbuf[s];
		else if (k >= 0 && (pc->sflag[s] & SF_BAD) && pc->plan.mode == R5_FULL)
			src = pc->sbuf[s];      /* repair a block that failed to read */
		else
			continue;
		r5_submit(pc, s, MEMBER_WRITE, src, pc->mbase + pc->ux, pc->ulen);
	}
	if (pc->outstanding == 0)
		write_written(pc);
}

static void write_unit(struct r5_piece *pc)
{
	struct r5_plan_in in;
	unsigned ps = pc->st.p_slot;
	int qs = pc->st.q_slot;
	bool bad = false;

	pc->new_bad = false;
	r5_snap_live(pc);
	for (unsigned k = 0; k < pc->d; k++)
		pc->dl[k] = r5_lost(pc, pc->st.data_slot[k]);
	for (unsigned s = 0; s < pc->n; s++)
		bad |= (pc->sflag[s] & SF_BAD) != 0;
	in.data_disks = pc->d;
	in.npar = pc->npar;
	in.written = pc->wr;
	in.lost = pc->dl;
	in.p_lost = r5_lost(pc, ps);
	in.q_lost = pc->npar == 2 && r5_lost(pc, (unsigned)qs);
	in.p_dead = (pc->sflag[ps] & SF_DEAD) != 0;
	in.q_dead = pc->npar == 2 && (pc->sflag[qs] & SF_DEAD);
	in.force_full = bad;
	if (r5_plan_write(&in, &pc->plan) < 0) {
		r5_piece_finish(pc, -EIO);
		return;
	}
	/* buffers: parity always (unless DIRECT), old data as the mode needs */
	for (unsigned s = 0; s < pc->n; s++) {
		int k = pc->didx[s];
		bool need;

		switch (pc->plan.mode) {
		case R5_DIRECT: need = false; break;
		case R5_RCW: need = k < 0 || !pc->wr[k]; break;
		case R5_RMW: need = k < 0 || pc->wr[k]; break;
		default: need = true; break;
		}
		if (need && !r5_need_buf(pc, s)) {
			r5_piece_finish(pc, -ENOMEM);
			return;
		}
	}
	pc->after_io = write_compute;
	for (unsigned s = 0; s < pc->n; s++) {
		int k = pc->didx[s];
		bool rd;

		if (r5_lost(pc, s))
			continue;
		switch (pc->plan.mode) {
		case R5_DIRECT: rd = false; break;
		case R5_RCW: rd = k >= 0 && !pc->wr[k]; break;
		case R5_RMW: rd = k < 0 || pc->wr[k]; break;
		default: rd = !(pc->plan.skip_q && k == -2); break;
		}
		if (rd)
			r5_read_slot(pc, s);
	}
	if (pc->outstanding == 0)
		write_compute(pc);
}

/* Write the group (the leader pc and what it gathered) unit by unit. */
static void write_go(struct r5_piece *pc)
{
	if (pc->gcount > 1) {
		struct r5_cache *c = r5_cache_of(pc);

		c->cnt.groups++;
		c->cnt.grouped += pc->gcount;
	}
	pc->next_x = 0;
	write_next(pc);
}

/* ---- gathering ---- */

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct r5_piece *piece_of_lk(struct stripe_lk *lk)
{
	return (struct r5_piece *)((char *)lk - offsetof(struct r5_piece, lk));
}

struct take_arg {
	unsigned room;
};

/*
 * Under the bucket mutex: a plain write, while there is room. Writes of
 * other reactors too: a stream that a client spreads over connections (the
 * kernel's NBD client with several) reaches the array on several reactors.
 */
static bool take_write(struct stripe_lk *w, void *arg)
{
	struct take_arg *ta = arg;

	if (!ta->room || !w->is_piece || piece_of_lk(w)->op != OP_WRITE)
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
	struct stripe_lk *w;
	bool more;

	w = stripe_take_waiters(&ld->priv->locks, &ld->lk, take_write, &ta, &more);
	while (w) {
		struct stripe_lk *next = w->next;
		struct r5_piece *pc = piece_of_lk(w);

		pc->gnext = NULL;
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

void r5_pin(struct r5_cache *c)
{
	atomic_fetch_add(&c->priv->a->counters[c - c->priv->cache].in_flight, 1);
}

void r5_unpin(struct r5_cache *c)
{
	atomic_fetch_sub(&c->priv->a->counters[c - c->priv->cache].in_flight, 1);
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
		why = HOLD_EVENT;
		while ((g = go) != NULL) {
			go = g->hnext;
			g->hnext = NULL;
			g->held = false;
			write_go(g);
		}
	} while (c->repoll);
	c->in_poll = false;
	r5_unpin(c);
}

void r5_hold_poll(struct r5_cache *c)
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

void r5_hold_idle(struct r5_cache *c)
{
	if (c->idle_posted || !c->r)
		return;
	c->idle_posted = true;
	c->idle_hops = 0;
	r5_pin(c);
	reactor_post(c->r, &c->idle_msg);
}

/*
 * A write (or write-zeroes) piece holds its row. A write gathers the writes
 * queued behind it, of any reactor; a leader continuing a stream may hold
 * the row for the rest of it (raid5_priv.h); then the group is written.
 */
static void write_start(struct r5_piece *pc)
{
	if (pc->op == OP_WRITE) {
		bool more = gather(pc);

		if (keep_holding(pc, more, HOLD_START, 0)) {
			struct r5_cache *c = r5_cache_of(pc);

			pc->hold_t0 = pc->priv->now();
			pc->held = true;
			pc->hnext = c->held;
			c->held = pc;
			c->cnt.holds++;
			if (pc->short_hold || c->mio_out == 0)
				r5_hold_idle(c);        /* nothing else would look at it */
			return;
		}
	}
	write_go(pc);
}

/*
 * Does a write of [sector, sector+nsect) continue where a recent write
 * ended, on this reactor or another (a client that spreads one stream over
 * several connections)? Then note where it ends, in c's own ring: each
 * reactor writes only its own, the others only read it (relaxed: a stale
 * look costs at most a missed hold).
 */
static bool stream_note(struct r5_cache *c, uint64_t sector, uint32_t nsect)
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

static void r5_write_op(struct array_req *rq, int op, uint64_t sector, uint32_t nsect,
			uint8_t *buf)
{
	struct r5_piece *pc = r5_piece_get(rq);
	int err;

	if (!pc) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	err = r5_piece_setup(pc, rq, op, sector, nsect, buf);
	if (err < 0) {
		r5_piece_finish(pc, err);
		return;
	}
	if (op == OP_WRITE)
		pc->seq = stream_note(r5_cache_of(pc), sector, nsect);
	r5_piece_lock(pc, write_start);
}

static void r5_write(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	r5_write_op(rq, OP_WRITE, sector, nsect, buf);
}

/* ---- discard and write-zeroes ---- */

static void discard_done(struct r5_piece *pc)
{
	if (pc->new_bad) {
		/* a member could not punch: write the row's zeroes instead */
		pc->new_bad = false;
		pc->op = OP_ZERO;
		write_start(pc);
		return;
	}
	r5_piece_finish(pc, 0);
}

static void discard_start(struct r5_piece *pc)
{
	pc->after_io = discard_done;
	for (unsigned s = 0; s < pc->n; s++)
		if (r5_live(pc, s))
			r5_submit(pc, s, MEMBER_DISCARD, NULL, pc->mbase, pc->C * 512);
	if (pc->outstanding == 0)
		discard_done(pc);
}

static void r5_discard(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes)
{
	struct array *a = rq->a;
	uint64_t rowlen = (uint64_t)a->geom.data_disks * a->geom.chunk_sectors;
	bool whole = sector % rowlen == 0 && nsect == rowlen;
	struct r5_piece *pc;
	int err;

	/* members punched must read back zeroes: files do, devices may not */
	for (unsigned s = 0; whole && s < a->geom.raid_disks; s++)
		if (slot_ok(a, s) && a->slot[s].m->blockdev)
			whole = false;
	if (!whole && !zeroes) {
		array_piece_done(rq, 0);        /* partial rows are not discarded */
		return;
	}
	pc = r5_piece_get(rq);
	if (!pc) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	err = r5_piece_setup(pc, rq, whole ? OP_DISCARD : OP_ZERO, sector, nsect, NULL);
	if (err < 0) {
		r5_piece_finish(pc, err);
		return;
	}
	r5_piece_lock(pc, whole ? discard_start : write_start);
}

/* ---- ops ---- */

static uint64_t r5_piece_sectors(const struct array *a, uint64_t sector)
{
	uint64_t rowlen = (uint64_t)a->geom.data_disks * a->geom.chunk_sectors;

	return rowlen - sector % rowlen;
}

static void r5_fini(struct array *a)
{
	struct r5_priv *priv = a->level_priv;

	if (!priv)
		return;
	for (unsigned i = 0; i < priv->nreactors; i++) {
		while (priv->cache[i].free) {
			struct r5_piece *pc = priv->cache[i].free;

			priv->cache[i].free = pc->next;
			r5_piece_free(pc, a->geom.raid_disks);
		}
	}
	free(priv->cache);
	free(priv->zero);
	stripe_table_fini(&priv->locks);
	free(priv);
	a->level_priv = NULL;
}

static int r5_init(struct array *a)
{
	struct r5_priv *priv = calloc(1, sizeof(*priv));
	unsigned nr = a->e && a->e->nreactors ? a->e->nreactors : 1;

	if (!priv)
		return -ENOMEM;
	if ((uint64_t)a->geom.data_disks * a->geom.chunk_sectors > UINT32_MAX / 2 ||
	    a->geom.chunk_sectors == 0) {
		free(priv);
		return -EINVAL;
	}
	priv->nreactors = nr;
	priv->cache = aligned_alloc(64, sizeof(*priv->cache) * nr);
	priv->zero = aligned_alloc(4096, R5_SEG_SECTORS * 512);
	if (!priv->cache || !priv->zero || stripe_table_init(&priv->locks, STRIPE_BUCKETS) < 0) {
		free(priv->cache);
		free(priv->zero);
		free(priv);
		return -ENOMEM;
	}
	memset(priv->zero, 0, R5_SEG_SECTORS * 512);
	memset(priv->cache, 0, sizeof(*priv->cache) * nr);
	for (unsigned i = 0; i < nr; i++) {
		priv->cache[i].priv = priv;
		priv->cache[i].idle_msg.fn = idle_msg_fn;
		for (unsigned j = 0; j < R5_SEQ_STREAMS; j++)
			priv->cache[i].ends[j] = UINT64_MAX;
	}
	priv->a = a;
	priv->hold_ns = R5_HOLD_NS;
	priv->now = clock_ns;
	a->level_priv = priv;
	return 0;
}

static void r5_zero_or_discard(struct array_req *rq, uint64_t sector, uint32_t nsect,
			       bool zeroes)
{
	r5_discard(rq, sector, nsect, zeroes);
}

const struct level_ops level_raid5_ops = {
	.name = "raid456",
	.init = r5_init,
	.fini = r5_fini,
	.read = r5_read,
	.write = r5_write,
	.discard = r5_zero_or_discard,
	.piece_sectors = r5_piece_sectors,
};

