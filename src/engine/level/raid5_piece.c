/* SPDX-License-Identifier: MIT */
/*
 * One RAID 4/5/6 piece's life (a stripe row's worth of one request): taken
 * from its reactor's free list and set up, queued for its row's lock
 * (raid5_rowlock.c), its member I/O issued and completed, its unit buffers,
 * the rebuild of blocks it could not read, and its completion, with the
 * pieces gathered into its group. The read and write paths
 * (raid5_read.c, raid5_write.c) drive it through continuations
 * (after_lock, after_io); it never calls up into them, nor into
 * gathering, whose watcher (r5_cache.watch) it only calls while set.
 *
 * In a write (raid5.c draws the whole path): r5_piece_get and
 * r5_piece_setup, r5_piece_lock, then per unit r5_need_buf, r5_read_slot /
 * r5_submit and r5_fill_blocks (the completions come back to the write
 * path's after_io), and r5_piece_finish at the end.
 *
 * Per-piece state comes from a free list per reactor (allocated on first
 * need, reused after); the rows in work are bounded by the stripe cache
 * (raid5_heads.c: a head per piece that takes a row lock, its 4 KiB pages
 * the buffers of small units), larger units' buffers come from the
 * reactor's pool.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "engine/level/raid5_priv.h"
#include "engine/md/reshape_state.h"
#include "engine/md/member_state.h"

/* ---- free lists ---- */

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

static struct r5_piece *piece_alloc(unsigned n)
{
	size_t off = align8(sizeof(struct r5_piece));
	size_t o_sio = off;
	size_t o_sbuf = (off += align8(n * sizeof(struct r5_sio)));
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
	pc->blocks = (void **)(p + o_blocks);
	pc->didx = (int16_t *)(p + o_didx);
	pc->sflag = p + o_sflag;
	pc->wr = p + o_wr;
	pc->dl = p + o_dl;
	pc->src = (uint8_t **)(p + o_src);
	return pc;
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

static void piece_put(struct r5_piece *pc)
{
	struct r5_cache *c = r5_cache_of(pc);

	pc->next = c->free;
	c->free = pc;
}

void r5_pieces_free_all(struct r5_priv *priv)
{
	for (unsigned i = 0; i < priv->nreactors; i++) {
		while (priv->cache[i].free) {
			struct r5_piece *pc = priv->cache[i].free;

			priv->cache[i].free = pc->next;
			free(pc);       /* one allocation (piece_alloc); its buffers are the heads' and the pool's */
		}
	}
}

/* ---- setup ---- */

/* Set up pc for a piece; 0 or -EIO/-EINVAL. */
int r5_piece_setup(struct r5_piece *pc, struct array_req *rq, int op, uint64_t sector,
		   uint32_t nsect, uint8_t *buf)
{
	struct array *a = rq->a;
	const struct uraid_geom *g = &a->geom;
	/* a reshape: the geometry that holds the piece, and its data offsets */
	pc->shift = NULL;
	pc->reshape_new = false;
	if (a->reshape) {
		g = reshape_geom_at(a->reshape, sector, &pc->shift);
		pc->reshape_new = g == &a->reshape->g[RESHAPE_NEW];
	}
	uint64_t rowlen = (uint64_t)g->data_disks * g->chunk_sectors;
	uint64_t stripe = sector / rowlen;

	pc->rq = rq;
	pc->a = a;
	pc->op = op;
	pc->buf = buf;
	pc->C = g->chunk_sectors;
	pc->d = g->data_disks;
	pc->n = g->raid_disks;
	pc->npar = g->raid_disks - g->data_disks;   /* P, or P and Q */
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
	pc->hw.head = NULL;
	pc->keep = false;
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

/* ---- the row lock ---- */

static void lock_granted(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *pc = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, lk.msg));

	pc->locked = true;
	pc->after_lock(pc);
}

static void piece_lock_row(struct r5_piece *pc);

/* Back on the piece's reactor with a stripe head: now the row. */
static void head_granted(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *pc = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, hw.msg));

	(void)r;
	piece_lock_row(pc);
}

/*
 * A stripe head first (raid5_heads.c: the stripe cache bounds the rows in
 * work; wait for one when none is free), then the row's lock, then next
 * (at once, or on this reactor later).
 */
void r5_piece_lock(struct r5_piece *pc, void (*next)(struct r5_piece *pc))
{
	pc->after_lock = next;
	if (!pc->hw.head) {
		pc->hw.r = &pc->rq->er->r;
		pc->hw.msg.fn = head_granted;
		if (!r5_head_get(&pc->priv->heads, &pc->hw))
			return;         /* head_granted goes on */
	}
	piece_lock_row(pc);
}

static void piece_lock_row(struct r5_piece *pc)
{
	void (*next)(struct r5_piece *pc) = pc->after_lock;

	pc->lk.msg.fn = lock_granted;   /* also what marks a piece's waiter */
	if (rowlock_acquire(&pc->priv->locks, &pc->lk, r5_row_key(pc), &pc->rq->er->r)) {
		pc->locked = true;
		next(pc);
		return;
	}
	/* queued: a leader holding the row may take it in. One of this reactor
	   looks now; one of another reactor at its next look (member I/O done
	   there, its idle message, or its hold's time limit) */
	struct r5_cache *c = r5_cache_of(pc);

	if (c->watch)
		c->watch(c, R5_EV_QUEUED);
}

/*
 * Under the row's bucket mutex (rowlock_take_waiters): msg.fn was set
 * before the waiter queued. The rows of sync_raid5.c's units and of tests
 * have callbacks of their own.
 */
struct r5_piece *r5_piece_of_waiter(struct rowlock *w)
{
	if (w->msg.fn != lock_granted)
		return NULL;
	return (struct r5_piece *)((char *)w - offsetof(struct r5_piece, lk));
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
	io->mio.meta = false;
	io->mio.buf = buf;
	io->mio.len = bytes;
	io->mio.sector = pc->shift ? sector + pc->shift[s] : sector;
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
	 * completes, md_replace_end (md/member_state.c) makes the replacement the slot's
	 * member first and only then clears `repl`, outside any row lock. A
	 * writer that took the member first could take the old one, issue its
	 * write there (done inline on memory members, which takes a while), and
	 * then find `repl` cleared: the change would reach neither the
	 * replacement nor the slot's member from then on. Looked at in this
	 * order, a writer that finds `repl` cleared (acquire) also finds the new
	 * member in the slot, and one that finds it set writes it anyway (twice,
	 * when it also finds it as the slot's member: the same data). mirror_io.c
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

/*
 * A member I/O of the piece is over; for a failed write, the failure is on
 * disk already (sio_done) and `survives` says whether the level goes on.
 */
static void sio_finish(struct r5_sio *io, int res, bool survives)
{
	struct member_io *mio = &io->mio;
	struct r5_piece *pc = io->pc;
	struct r5_cache *c = r5_cache_of(pc);
	unsigned s = io->slot;

	/* gathering holds leaders here: it hears of this completion */
	bool watched = c->watch != NULL;

	r5_mio_out_add(c, -1);
	if (watched)
		r5_pin(c);              /* pc's request may be the array's last */
	if (io->repl) {
		/* the replacement was failed (sio_done): the replace stops */
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
		else if (!survives && pc->op != OP_READ && pc->result == 0)
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
	if (watched) {
		if (c->watch)
			c->watch(c, R5_EV_IO_DONE);
		r5_unpin(c);
	}
}

/* Back on the piece's reactor with the failure recorded. */
static void sio_failure_recorded(void *arg, bool survives)
{
	struct r5_sio *io = arg;

	sio_finish(io, io->fail_res, survives);
}

static void sio_done(struct member_io *mio, int res)
{
	struct r5_sio *io = (struct r5_sio *)mio;
	struct r5_piece *pc = io->pc;

	/*
	 * A failed write (or any I/O of a replacement) fails the member, as md
	 * does, before the piece hears of it: the piece waits, still counting
	 * this I/O, while the metadata worker records the failure.
	 */
	if (res < 0 && (io->repl || (mio->kind != MEMBER_READ && mio->kind != MEMBER_DISCARD))) {
		io->fail_res = res;
		if (io->repl)
			md_fail_replacement_parked(pc->a, &pc->rq->er->r, io->slot, res,
						   sio_failure_recorded, io);
		else
			md_fail_slot_parked(pc->a, &pc->rq->er->r, io->slot, res,
					    sio_failure_recorded, io);
		return;
	}
	sio_finish(io, res, true);
}

/* ---- units: ranges, buffers, rebuild ---- */

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
	if (pc->ulen <= R5_KEEP_BYTES && pc->hw.head) {
		pc->sbuf[s] = r5_head_page(pc->hw.head, s);
	} else {
		pc->sbuf[s] = req_buf(pc->rq, pc->ulen);
	}
	pc->nbufs += pc->sbuf[s] != NULL;
	return pc->sbuf[s] != NULL;
}

void r5_bufs_put(struct r5_piece *pc)
{
	/* SF_HAVE is only ever set on a slot with a buffer (direct reads clear theirs) */
	if (!pc->nbufs)
		return;
	pc->nbufs = 0;
	for (unsigned s = 0; s < pc->n; s++) {
		if (pc->sbuf[s]) {
			if (!pc->hw.head || pc->sbuf[s] != r5_head_page(pc->hw.head, s))
				req_buf_put(pc->rq, pc->sbuf[s], pc->ulen);
			pc->sbuf[s] = NULL;
		}
		pc->sflag[s] &= (uint8_t)~SF_HAVE;
	}
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

/* ---- completion ---- */

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
	/* the row's unit stays in the head's pages: kept before the row is
	   let go, so that the next holder of the row finds it (and a later
	   write, taking the row after, replaces it rather than being replaced) */
	if (pc->keep && pc->hw.head && res == 0) {
		r5_head_put_kept(&pc->priv->heads, pc->hw.head, r5_row_key(pc), pc->keep_x);
		pc->hw.head = NULL;
	}
	pc->keep = false;
	if (pc->locked) {
		pc->locked = false;
		rowlock_release(&pc->priv->locks, &pc->lk);
	}
	if (pc->hw.head) {
		r5_head_put(&pc->priv->heads, pc->hw.head);
		pc->hw.head = NULL;
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
