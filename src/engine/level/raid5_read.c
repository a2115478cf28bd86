/* SPDX-License-Identifier: MIT */
/*
 * The RAID 4/5/6 read path (level_raid5_ops.read).
 *
 * Healthy: each data chunk the piece covers is read straight into the
 * caller's buffer, with no row lock. Degraded: the chunks of a lost member,
 * and those whose read failed, are rebuilt under the row's lock (so no
 * write changes the row meanwhile) from every other block of the row, unit
 * by unit; a block that failed to read is rewritten with what was rebuilt,
 * as md does (a read repair).
 *
 * The piece's life (lock, member I/O, buffers, rebuild, completion) is
 * raid5_piece.c's; this file chains the steps through pc->after_io and the
 * lock's continuation. A write's path is drawn in raid5.c.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "engine/level/raid5_priv.h"

static void read_direct_done(struct r5_piece *pc);
static void recon_start(struct r5_piece *pc);
static void recon_next(struct r5_piece *pc);
static void recon_unit(struct r5_piece *pc);
static void recon_read_done(struct r5_piece *pc);
static void recon_written(struct r5_piece *pc);

/* ---- healthy: straight from the members ---- */

void r5_read(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
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

/* ---- degraded and repaired: rebuilt under the row lock, unit by unit ---- */

static void recon_start(struct r5_piece *pc)
{
	recon_next(pc);
}

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

static void recon_written(struct r5_piece *pc)
{
	recon_next(pc);
}
