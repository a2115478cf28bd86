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
 * Per-piece state comes from a free list per reactor (allocated on first
 * need, reused after), buffers from the reactor's pool.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "engine/array.h"
#include "engine/raid5_priv.h"

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
	for (unsigned s = 0; s < pc->n; s++)
		if (!r5_live(pc, s) || (pc->sflag[s] & SF_BAD))
			nlost++;
	if (nlost > pc->npar) {
		r5_piece_finish(pc, -EIO);
		return;
	}
	skip_q = pc->npar == 2 && nlost < 2 && r5_live(pc, pc->st.q_slot) &&
		 !(pc->sflag[pc->st.q_slot] & SF_BAD);
	for (unsigned s = 0; s < pc->n; s++) {
		if (!r5_need_buf(pc, s)) {
			r5_piece_finish(pc, -ENOMEM);
			return;
		}
	}
	pc->after_io = recon_read_done;
	for (unsigned s = 0; s < pc->n; s++) {
		if (!r5_live(pc, s) || (pc->sflag[s] & SF_BAD))
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

/* The next unit of the row's bands (cut points in pc->cut); false when done. */
static bool next_unit(struct r5_piece *pc)
{
	uint32_t x = pc->next_x;

	while (x < pc->C) {
		uint32_t be = pc->C;
		bool any = false;

		for (unsigned i = 0; i < pc->ncut; i++)
			if (pc->cut[i] > x && pc->cut[i] < be)
				be = pc->cut[i];
		for (unsigned k = 0; k < pc->d; k++) {
			pc->wr[k] = r5_writes_range(pc, k, x, be);
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
	bool q_live = pc->npar == 2 && r5_live(pc, qs) ;

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

		if (!r5_live(pc, s))
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
	for (unsigned k = 0; k < pc->d; k++) {
		unsigned s = pc->st.data_slot[k];

		pc->dl[k] = !r5_live(pc, s) || (pc->sflag[s] & SF_BAD);
	}
	for (unsigned s = 0; s < pc->n; s++)
		bad |= (pc->sflag[s] & SF_BAD) != 0;
	in.data_disks = pc->d;
	in.npar = pc->npar;
	in.written = pc->wr;
	in.lost = pc->dl;
	in.p_lost = !r5_live(pc, ps) || (pc->sflag[ps] & SF_BAD);
	in.q_lost = pc->npar == 2 && (!r5_live(pc, qs) || (pc->sflag[qs] & SF_BAD));
	in.p_dead = !r5_live(pc, ps);
	in.q_dead = pc->npar == 2 && !r5_live(pc, qs);
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

		if (!r5_live(pc, s) || (pc->sflag[s] & SF_BAD))
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

static void write_start(struct r5_piece *pc)
{
	uint32_t a = pc->r0 % pc->C, b = (pc->r1 - 1) % pc->C + 1;

	pc->ncut = 0;
	pc->cut[pc->ncut++] = a;
	pc->cut[pc->ncut++] = b;
	pc->next_x = 0;
	write_next(pc);
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
			free(pc);
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

