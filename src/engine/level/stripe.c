/* SPDX-License-Identifier: MIT */
/*
 * Stripe locks for RAID 4/5/6: writes, degraded reads and read repairs of
 * one stripe row never overlap in time, across reactors, without a global
 * lock. A hash table of buckets, each a short-held mutex over a short list of held
 * rows; every held row carries a FIFO of waiters, and release hands the row
 * to the first waiter and wakes it on its own reactor (reactor_post), so
 * the waiter's work continues where its request lives. Entries are embedded
 * in the callers' state: nothing is allocated per lock.
 *
 * Also the state of one RAID 4/5/6 piece (one stripe row of one request):
 * per-reactor free lists, unit buffers, member I/O, rebuild, and the write
 * planner; raid5.c drives them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "engine/level/raid5_priv.h"
#include "engine/md/member_state.h"

int stripe_table_init(struct stripe_table *t, unsigned nbuckets)
{
	unsigned n = 1;

	while (n < nbuckets && n < (1u << 24))
		n <<= 1;
	pthread_mutexattr_t attr;

	t->b = aligned_alloc(64, (size_t)n * sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	/* adaptive: spins briefly, then sleeps (a preempted holder costs no timeslices) */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	for (unsigned i = 0; i < n; i++) {
		pthread_mutex_init(&t->b[i].lock, &attr);
		t->b[i].held = NULL;
	}
	pthread_mutexattr_destroy(&attr);
	t->mask = n - 1;
	return 0;
}

void stripe_table_fini(struct stripe_table *t)
{
	if (!t->b)
		return;
	for (unsigned i = 0; i <= t->mask; i++)
		pthread_mutex_destroy(&t->b[i].lock);
	free(t->b);
	t->b = NULL;
}

static struct stripe_bucket *bucket_of(struct stripe_table *t, uint64_t stripe)
{
	/* Fibonacci hashing: neighbouring rows land in different buckets */
	uint64_t h = stripe * 0x9e3779b97f4a7c15ULL;

	return &t->b[(h >> 32) & t->mask];
}

bool stripe_lock(struct stripe_table *t, struct stripe_lk *lk, uint64_t stripe,
		 struct reactor *r)
{
	struct stripe_bucket *b = bucket_of(t, stripe);
	struct stripe_lk *h;

	lk->stripe = stripe;
	lk->r = r;
	lk->next = NULL;
	__atomic_store_n(&lk->wait_head, NULL, __ATOMIC_RELAXED);
	lk->wait_tail = NULL;
	pthread_mutex_lock(&b->lock);
	for (h = b->held; h; h = h->next)
		if (h->stripe == stripe)
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

void stripe_unlock(struct stripe_table *t, struct stripe_lk *lk)
{
	struct stripe_bucket *b = bucket_of(t, lk->stripe);
	struct stripe_lk **pp, *w;

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

struct stripe_lk *stripe_take_waiters(struct stripe_table *t, struct stripe_lk *lk,
				      bool (*take)(struct stripe_lk *w, void *arg), void *arg,
				      bool *more)
{
	struct stripe_bucket *b = bucket_of(t, lk->stripe);
	struct stripe_lk *first = NULL, **tail = &first, *w;

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

/* ---- the write planner ---- */

int r5_plan_write(const struct r5_plan_in *in, struct r5_plan *out)
{
	unsigned d = in->data_disks, nw = 0, nu = 0, nw_lost = 0, nu_lost = 0;
	bool q_lost = in->npar < 2 || in->q_lost;
	unsigned par_live = !in->p_lost + (in->npar == 2 && !in->q_lost);
	unsigned par_writable = !in->p_dead + (in->npar == 2 && !in->q_dead);
	unsigned nlost = in->p_lost + (in->npar == 2 && in->q_lost);

	for (unsigned k = 0; k < d; k++) {
		if (in->written[k]) {
			nw++;
			nw_lost += in->lost[k] ? 1 : 0;
		} else {
			nu++;
			nu_lost += in->lost[k] ? 1 : 0;
		}
	}
	nlost += nw_lost + nu_lost;
	out->skip_q = false;
	if (par_writable == 0) {
		out->mode = R5_DIRECT;
		out->reads = 0;
		return 0;
	}
	if (nlost > in->npar)
		return -EIO;
	if (!in->force_full) {
		bool rcw_ok = nu_lost == 0, rmw_ok = nw_lost == 0;
		unsigned rcw = nu, rmw = nw + par_live;

		if (rcw_ok && (!rmw_ok || rcw <= rmw)) {
			out->mode = R5_RCW;
			out->reads = rcw;
			return 0;
		}
		if (rmw_ok) {
			out->mode = R5_RMW;
			out->reads = rmw;
			return 0;
		}
	}
	out->mode = R5_FULL;
	out->skip_q = in->npar == 2 && !q_lost && nlost < 2;
	out->reads = d + in->npar - nlost - out->skip_q;
	return 0;
}

/* ---- piece state ---- */

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

static struct r5_piece *piece_alloc(unsigned n)
{
	size_t off = align8(sizeof(struct r5_piece));
	size_t o_sio = off;
	size_t o_sbuf = (off += align8(n * sizeof(struct r5_sio)));
	size_t o_keep = (off += align8(n * sizeof(uint8_t *)));
	size_t o_blocks = (off += align8(n * sizeof(uint8_t *)));
	size_t o_didx = (off += align8((n + 2) * sizeof(void *)));
	size_t o_sflag = (off += align8(n * sizeof(int16_t)));
	size_t o_wr = (off += align8(n));
	size_t o_dl = (off += align8(n));
	size_t o_src = (off += align8(n));
	uint8_t *p = calloc(1, off + n * sizeof(uint8_t *));
	struct r5_piece *pc = (struct r5_piece *)p;

	if (!p)
		return NULL;
	pc->sio = (struct r5_sio *)(p + o_sio);
	pc->sbuf = (uint8_t **)(p + o_sbuf);
	pc->keep = (uint8_t **)(p + o_keep);
	pc->blocks = (void **)(p + o_blocks);
	pc->didx = (int16_t *)(p + o_didx);
	pc->sflag = p + o_sflag;
	pc->wr = p + o_wr;
	pc->dl = p + o_dl;
	pc->src = (uint8_t **)(p + o_src);
	return pc;
}

struct r5_cache *r5_cache_of(const struct r5_piece *pc)
{
	return pc->cache;
}

struct r5_piece *r5_piece_get(struct array_req *rq)
{
	struct r5_priv *priv = rq->a->level_priv;
	struct r5_cache *c = &priv->cache[rq->er->r.index % priv->nreactors];
	struct r5_piece *pc = c->free;

	c->r = &rq->er->r;
	if (pc)
		c->free = pc->next;
	else
		pc = piece_alloc(rq->a->geom.raid_disks);
	if (pc) {
		pc->priv = priv;
		pc->cache = c;
	}
	return pc;
}

void r5_piece_free(struct r5_piece *pc, unsigned n)
{
	for (unsigned s = 0; s < n; s++)
		free(pc->keep[s]);      /* posix_memalign'd by the pool: free() takes them */
	free(pc);
}

static void piece_put(struct r5_piece *pc)
{
	struct r5_cache *c = r5_cache_of(pc);

	pc->next = c->free;
	c->free = pc;
}

void r5_bufs_put(struct r5_piece *pc)
{
	/* SF_HAVE is only ever set on a slot with a buffer (direct reads clear theirs) */
	if (!pc->nbufs)
		return;
	pc->nbufs = 0;
	for (unsigned s = 0; s < pc->n; s++) {
		if (pc->sbuf[s]) {
			if (pc->sbuf[s] != pc->keep[s])
				req_buf_put(pc->rq, pc->sbuf[s], pc->ulen);
			pc->sbuf[s] = NULL;
		}
		pc->sflag[s] &= (uint8_t)~SF_HAVE;
	}
}

/* Set up pc for a piece; 0 or -EIO/-EINVAL. */
int r5_piece_setup(struct r5_piece *pc, struct array_req *rq, int op, uint64_t sector,
		       uint32_t nsect, uint8_t *buf)
{
	struct array *a = rq->a;
	const struct uraid_geom *g = &a->geom;
	uint64_t rowlen = (uint64_t)g->data_disks * g->chunk_sectors;
	uint64_t stripe = sector / rowlen;

	pc->rq = rq;
	pc->a = a;
	pc->op = op;
	pc->buf = buf;
	pc->C = g->chunk_sectors;
	pc->d = g->data_disks;
	pc->n = g->raid_disks;
	pc->npar = g->level == URAID_LEVEL_6 ? 2 : 1;
	pc->r0 = (uint32_t)(sector % rowlen);
	pc->r1 = pc->r0 + nsect;
	pc->mbase = stripe * pc->C;
	pc->rw_flags = (rq->io && (rq->io->flags & URAID_IO_FUA)) ? RWF_DSYNC : 0;
	pc->result = 0;
	pc->outstanding = 0;
	pc->new_bad = false;
	pc->locked = false;
	pc->seq = false;
	pc->held = false;
	pc->gnext = NULL;
	pc->gtail = pc;
	pc->gcount = 1;
	pc->hnext = NULL;
	pc->ulen = 0;
	memset(pc->sflag, 0, pc->n);
	memset(pc->sbuf, 0, pc->n * sizeof(*pc->sbuf));
	pc->nbufs = 0;
	if (pc->r1 > rowlen || nsect == 0)
		return -EINVAL;
	if (uraid_geom_stripe(g, stripe, &pc->st) < 0)
		return -EINVAL;
	pc->nsyn = pc->npar == 2 ? pc->st.syndrome_slots : pc->d;
	for (unsigned s = 0; s < pc->n; s++)
		pc->didx[s] = -3;
	for (unsigned k = 0; k < pc->d; k++)
		pc->didx[pc->st.data_slot[k]] = (int16_t)k;
	pc->didx[pc->st.p_slot] = -1;
	if (pc->npar == 2)
		pc->didx[pc->st.q_slot] = -2;
	return 0;
}

/* On its own reactor: a piece that a leader of another reactor wrote in its group. */
static void gathered_done(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *g = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, lk.msg));
	struct array_req *grq = g->rq;
	int res = g->result;

	(void)r;
	piece_put(g);
	array_piece_done(grq, res);
}

void r5_piece_finish(struct r5_piece *pc, int res)
{
	struct array_req *rq = pc->rq;
	struct engine_reactor *er = rq->er;     /* rq may be gone once done */
	struct r5_piece *g = pc->gnext;

	if (res < 0 && pc->result == 0)
		pc->result = res;
	res = pc->result;
	r5_bufs_put(pc);
	for (unsigned s = 0; s < pc->n; s++)
		if (pc->sflag[s] & SF_CORRECTED)
			md_read_corrected(pc->a, s);
	if (pc->locked) {
		pc->locked = false;
		stripe_unlock(&pc->priv->locks, &pc->lk);
	}
	pc->gnext = NULL;
	piece_put(pc);
	array_piece_done(rq, res);
	/* the pieces written with it: not reused before they are put, each on
	   its own reactor (its free list, its request); the lock's message is
	   free, as a gathered piece is never granted the row */
	while (g) {
		struct r5_piece *next = g->gnext;
		struct array_req *grq = g->rq;

		g->gnext = NULL;
		if (grq->er != er) {
			g->result = res;
			g->lk.msg.fn = gathered_done;
			reactor_post(&grq->er->r, &g->lk.msg);
		} else {
			piece_put(g);
			array_piece_done(grq, res);
		}
		g = next;
	}
}

static void lock_granted(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *pc = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, lk.msg));

	pc->locked = true;
	pc->after_lock(pc);
}

/* Take the row's lock, then run next (at once, or on this reactor later). */
void r5_piece_lock(struct r5_piece *pc, void (*next)(struct r5_piece *pc))
{
	pc->after_lock = next;
	pc->lk.msg.fn = lock_granted;
	pc->lk.is_piece = true;
	if (stripe_lock(&pc->priv->locks, &pc->lk, pc->mbase / pc->C, &pc->rq->er->r)) {
		pc->locked = true;
		next(pc);
		return;
	}
	/* queued: a leader holding the row may take it in. One of this reactor
	   looks now; one of another reactor at its next look (member I/O done
	   there, its idle message, or its hold's time limit) */
	struct r5_cache *c = r5_cache_of(pc);

	if (c->held)
		r5_hold_poll(c);
}

/* ---- member I/O ---- */

static void sio_done(struct member_io *mio, int res);

static void sio_issue(struct r5_piece *pc, struct r5_sio *io, unsigned s, struct member *m,
		      enum member_op kind, void *buf, uint64_t sector, uint32_t bytes)
{
	io->pc = pc;
	io->slot = s;
	memset(&io->mio.op, 0, sizeof(io->mio.op));
	io->mio.kind = kind;
	io->mio.buf = buf;
	io->mio.len = bytes;
	io->mio.sector = sector;
	io->mio.rw_flags = kind == MEMBER_WRITE ? pc->rw_flags : 0;
	io->mio.m = m;
	io->mio.done = sio_done;
	io->mio.done_bytes = 0;
	pc->outstanding++;
	r5_mio_out_add(r5_cache_of(pc), 1);
	member_submit(&pc->rq->er->r, &io->mio);
}

void r5_submit(struct r5_piece *pc, unsigned s, enum member_op kind, void *buf,
	       uint64_t sector, uint32_t bytes)
{
	struct r5_sio *io = &pc->sio[s];
	/*
	 * A slot being replaced: the rows already copied get every change too
	 * (the piece holds the row, so the copy is not at this row meanwhile).
	 * The replacement is looked at before the slot's member: when the copy
	 * completes, replace_end (sync.c) makes the replacement the slot's
	 * member first and only then clears `repl`, outside any row lock. A
	 * writer that took the member first could take the old one, issue its
	 * write there (done inline on memory members, which takes a while), and
	 * then find `repl` cleared: the change would reach neither the
	 * replacement nor the slot's member from then on. Looked at in this
	 * order, a writer that finds `repl` cleared (acquire) also finds the new
	 * member in the slot, and one that finds it set writes it anyway (twice,
	 * when it also finds it as the slot's member: the same data). mirror.c
	 * (write_issue) looks in this order too.
	 */
	struct member *r = kind != MEMBER_READ ? slot_repl_at(pc->a, s, pc->mbase) : NULL;
	struct member *m = pc->a->slot[s].m;

	if (!m) {
		/* the slot was failed and closed since it was looked at */
		if (kind == MEMBER_READ) {
			pc->sflag[s] |= SF_BAD;
			pc->new_bad = true;
		}
		return;
	}
	io->repl = false;
	sio_issue(pc, io, s, m, kind, buf, sector, bytes);
	if (r) {
		pc->rsio.repl = true;
		sio_issue(pc, &pc->rsio, s, r, kind, buf, sector, bytes);
	}
}

static void sio_done(struct member_io *mio, int res)
{
	struct r5_sio *io = (struct r5_sio *)mio;
	struct r5_piece *pc = io->pc;
	struct r5_cache *c = r5_cache_of(pc);
	unsigned s = io->slot;

	bool holds = c->held != NULL;

	r5_mio_out_add(c, -1);
	if (holds)
		r5_pin(c);              /* pc's request may be the array's last */
	if (io->repl) {
		if (res < 0)
			md_fail_replacement(pc->a, s, res);
	} else if (mio->kind == MEMBER_READ) {
		if (res < 0) {
			pc->sflag[s] |= SF_BAD;
			pc->sflag[s] &= (uint8_t)~SF_HAVE;
			pc->new_bad = true;
		} else {
			pc->sflag[s] |= SF_HAVE;
		}
	} else if (res < 0) {
		/* a write (or discard) failed: the member goes, as md does */
		pc->sflag[s] &= (uint8_t)~SF_CORRECTED;
		if (mio->kind == MEMBER_DISCARD)
			pc->new_bad = true;
		else if (!md_fail_slot(pc->a, s, res) && pc->op != OP_READ &&
			 pc->result == 0)
			pc->result = -EIO;      /* a read's data is good all the same */
	} else if (pc->sflag[s] & SF_BAD) {
		pc->sflag[s] |= SF_CORRECTED;
	}
	if (--pc->outstanding == 0)
		pc->after_io(pc);
	/*
	 * pc may be gone. A hold made since by a callback has member I/O in
	 * flight or the idle message queued: it is looked at later.
	 */
	if (holds) {
		if (c->held) {
			if (c->mio_out == 0)
				r5_hold_idle(c);
			else
				r5_hold_poll(c);
		}
		r5_unpin(c);
	}
}

/* ---- units ---- */

/* Within-chunk range of data chunk k that the piece covers; false if none. */
bool r5_chunk_range(const struct r5_piece *pc, unsigned k, uint32_t *s, uint32_t *e)
{
	uint32_t lo = k * pc->C, hi = lo + pc->C;

	if (pc->r1 <= lo || pc->r0 >= hi)
		return false;
	*s = (pc->r0 > lo ? pc->r0 : lo) - lo;
	*e = (pc->r1 < hi ? pc->r1 : hi) - lo;
	return true;
}

/* Zeroes of the unit's length, aligned for O_DIRECT writes too. */
void *r5_zero(struct r5_piece *pc)
{
	return pc->priv->zero;
}

/* New content of data chunk k over the unit (next_unit chose the piece of the group). */
void *r5_new_data(struct r5_piece *pc, unsigned k)
{
	if (pc->op != OP_WRITE)
		return r5_zero(pc);
	return pc->src[k];
}

/* Allocate the unit buffer of slot s; false when out of memory. */
bool r5_need_buf(struct r5_piece *pc, unsigned s)
{
	if (pc->sbuf[s])
		return true;
	if (pc->ulen <= R5_KEEP_BYTES) {
		if (!pc->keep[s])
			pc->keep[s] = req_buf(pc->rq, R5_KEEP_BYTES);
		pc->sbuf[s] = pc->keep[s];
	} else {
		pc->sbuf[s] = req_buf(pc->rq, pc->ulen);
	}
	pc->nbufs += pc->sbuf[s] != NULL;
	return pc->sbuf[s] != NULL;
}

/* Recovery index of a slot's block; -1 when it is none (shouldn't happen). */
static int rec_index(const struct r5_piece *pc, unsigned s)
{
	int k = pc->didx[s];

	if (k == -1)
		return (int)URAID_PARITY_P(pc->nsyn);
	if (k == -2)
		return (int)URAID_PARITY_Q(pc->nsyn);
	if (k < 0)
		return -1;
	return pc->npar == 2 ? pc->st.syndrome_of_slot[s] : k;
}

/* Fill pc->blocks with the data blocks given (zero blocks elsewhere), P, Q. */
void r5_fill_blocks(struct r5_piece *pc, bool use_new)
{
	void *z = r5_zero(pc);

	for (unsigned j = 0; j < pc->nsyn; j++)
		pc->blocks[j] = z;
	for (unsigned k = 0; k < pc->d; k++) {
		unsigned s = pc->st.data_slot[k];

		pc->blocks[rec_index(pc, s)] =
			use_new && pc->wr[k] ? r5_new_data(pc, k) : (void *)pc->sbuf[s];
	}
	pc->blocks[pc->nsyn] = pc->sbuf[pc->st.p_slot];
	if (pc->npar == 2)
		pc->blocks[pc->nsyn + 1] = pc->sbuf[pc->st.q_slot];
}

/*
 * Rebuild the unit's blocks that were not read (lost, failed to read, or Q
 * left out) in the slot buffers; 0 or -EIO.
 */
int r5_rebuild(struct r5_piece *pc)
{
	unsigned lost[2], nlost = 0;

	for (unsigned s = 0; s < pc->n; s++) {
		if (!(pc->sflag[s] & SF_HAVE)) {
			if (nlost == pc->npar)
				return -EIO;
			lost[nlost++] = (unsigned)rec_index(pc, s);
		}
	}
	r5_fill_blocks(pc, false);
	if (uraid_parity_recover(pc->nsyn, pc->npar == 2, pc->ulen, pc->blocks, nlost, lost) < 0)
		return -EIO;
	return 0;
}

/* Read slot s over the unit into its buffer unless it is there already. */
void r5_read_slot(struct r5_piece *pc, unsigned s)
{
	if (pc->sflag[s] & SF_HAVE)
		return;
	r5_submit(pc, s, MEMBER_READ, pc->sbuf[s], pc->mbase + pc->ux, pc->ulen);
}

