/* SPDX-License-Identifier: MIT */
/*
 * The RAID 4/5/6 write path (level_raid5_ops.write and .discard): writes,
 * write-zeroes and discards of one piece, from the hook to the last member
 * write. Read this file top to bottom to follow a write:
 *
 *   r5_write                   take a piece (raid5_piece.c), note the stream
 *                              (raid5_gather.c), queue for the row's lock
 *   write_start                the row is held: gather the writes queued
 *                              behind, maybe hold the row (raid5_gather.c)
 *   write_group -> write_next  the group, unit by unit (next_unit cuts them)
 *   unit_cache_begin           the stripe cache: take the unit's kept pages
 *                              (raid5_heads.c), or forget what a wider
 *                              unit overwrites
 *   write_unit                 plan the unit (raid5_plan.c), read what the
 *                              plan needs and the cache lacks (r5_read_slot)
 *   write_compute              P/Q (parity/), then the parity log's
 *                              before_writes (parity_log.h: PPL, journal)
 *   write_issue                the member writes (once the log is durable)
 *   write_written -> unit_cache_end: the head's pages now hold the unit
 *                              as written, kept by r5_piece_finish
 *                              -> write_next ... -> r5_piece_finish
 *                              (raid5_piece.c): the head kept, the row let
 *                              go, the group's pieces done
 *
 * Between steps the piece waits for its member I/O (r5_submit; the
 * completion calls pc->after_io) or for its row (pc->after_lock). The row
 * is held from the first read to the last write, so once a write completes
 * P and Q on disk match the data. A discard or write-zeroes of a whole row
 * punches every member (when punched members read back zeroes); other
 * write-zeroes take the write path with zeroes, other discards do nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <uraid/parity.h>

#include "engine/level/parity_log.h"
#include "engine/level/raid5_priv.h"

static void write_start(struct r5_piece *pc);
static void write_group(struct r5_piece *pc);
static void write_next(struct r5_piece *pc);
static bool next_unit(struct r5_piece *pc);
static void unit_cache_begin(struct r5_piece *pc);
static void unit_cache_end(struct r5_piece *pc);
static void write_unit(struct r5_piece *pc);
static void write_compute(struct r5_piece *pc);
static void write_logged(struct r5_piece *pc, int res);
static void write_issue(struct r5_piece *pc);
static void write_written(struct r5_piece *pc);
static void discard_start(struct r5_piece *pc);
static void discard_done(struct r5_piece *pc);

/* ---- writes ---- */

/* The hook: one piece of a write request, within one stripe row. */
void r5_write(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	struct r5_piece *pc = r5_piece_get(rq);
	int err;

	if (!pc) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	err = r5_piece_setup(pc, rq, OP_WRITE, sector, nsect, buf);
	if (err < 0) {
		r5_piece_finish(pc, err);
		return;
	}
	pc->seq = r5_stream_note(r5_cache_of(pc), sector, nsect);
	r5_piece_lock(pc, write_start);
}

/*
 * A write (or write-zeroes) piece holds its row. A write gathers the writes
 * queued behind it, of any reactor, and may hold the row for more of a
 * stream (raid5_gather.c: write_group then runs when the hold ends); then
 * the group is written.
 */
static void write_start(struct r5_piece *pc)
{
	if (pc->op == OP_WRITE && r5_gather_or_hold(pc, write_group))
		return;
	write_group(pc);
}

/* Write the group (the leader pc and what it gathered) unit by unit. */
static void write_group(struct r5_piece *pc)
{
	if (pc->gcount > 1) {
		struct r5_cache *c = r5_cache_of(pc);

		c->cnt.groups++;
		c->cnt.grouped += pc->gcount;
	}
	pc->next_x = 0;
	write_next(pc);
}

static void write_next(struct r5_piece *pc)
{
	r5_bufs_put(pc);
	if (pc->result < 0 || !next_unit(pc)) {
		r5_piece_finish(pc, 0);
		return;
	}
	unit_cache_begin(pc);
	write_unit(pc);
}

/* The largest unit: the buffers', or less when the parity log says so. */
static inline uint32_t unit_max(const struct r5_piece *pc)
{
	const struct parity_log *pl = pc->a->plog;

	return pl && pl->max_unit_sectors && pl->max_unit_sectors < R5_SEG_SECTORS ?
	       pl->max_unit_sectors : R5_SEG_SECTORS;
}

/*
 * Does the unit write data chunks with unwritten ones between them (a
 * gathered group)? A PPL entry covers consecutive chunks (md's rule), so the
 * log needs the old content of those between: the unit reads every block.
 */
static bool written_gap(const struct r5_piece *pc)
{
	unsigned first = pc->d, last = 0;

	for (unsigned k = 0; k < pc->d; k++)
		if (pc->wr[k]) {
			if (first == pc->d)
				first = k;
			last = k;
		}
	if (first == pc->d || (first == 0 && last == pc->d - 1))
		return false;   /* none, or the whole row's span: no partial parity */
	for (unsigned k = first; k <= last; k++)
		if (!pc->wr[k])
			return true;
	return false;
}

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
		pc->uy = b - x > unit_max(pc) ? x + unit_max(pc) : b;
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
		pc->uy = be - x > unit_max(pc) ? x + unit_max(pc) : be;
		pc->ulen = (pc->uy - pc->ux) * 512;
		pc->next_x = pc->uy;
		return true;
	}
	pc->next_x = x;
	return false;
}

/* ---- the stripe cache's row data (raid5_heads.c) ---- */

/*
 * A unit the stripe cache keeps: md's stripe, 4 KiB of the row aligned in
 * every chunk, in the head's pages. Not during a reshape (rows move under
 * it; the new geometry starts an empty pool).
 */
static bool unit_keepable(const struct r5_piece *pc)
{
	return pc->hw.head && !pc->shift && !pc->a->reshape && pc->ulen == R5_KEEP_BYTES &&
	       pc->ux % (R5_KEEP_BYTES / 512) == 0;
}

/*
 * Before the unit's plan, holding the row: a keepable unit takes what the
 * cache kept of it (SF_CACHED on the slots whose page holds the content of
 * the slot's member, still usable); another unit makes the cache forget
 * what it overwrites. Either way nothing kept of the unit stays behind in
 * the pool while the piece changes the members.
 */
static void unit_cache_begin(struct r5_piece *pc)
{
	struct r5_heads *hs = &pc->priv->heads;
	struct r5_head *h = pc->hw.head;

	pc->keep = false;       /* the head's pages are this unit's from now on */
	for (unsigned s = 0; s < pc->n; s++)
		pc->sflag[s] &= (uint8_t)~SF_CACHED;
	if (!unit_keepable(pc)) {
		r5_heads_drop(hs, r5_row_key(pc), pc->ux, pc->uy);
		return;
	}
	if (!r5_head_take_kept(hs, h, r5_row_key(pc), pc->ux))
		return;
	for (unsigned s = 0; s < pc->n; s++)
		if (r5_head_page_counts(h, pc->a, s) && r5_live(pc, s))
			pc->sflag[s] |= SF_CACHED;
}

/*
 * The unit is on the members: its head's pages are made what the members
 * now hold (the new data copied over the old; parity is in its page
 * already), page by page where that is known, and the piece keeps them
 * (r5_piece_finish) unless a later unit of its group needs the head.
 */
static void unit_cache_end(struct r5_piece *pc)
{
	struct r5_head *h = pc->hw.head;

	if (!unit_keepable(pc) || pc->result < 0 || pc->plan.mode == R5_DIRECT)
		return;
	/* keeping must pay: not while writes of kept units are rare */
	if (!r5_heads_want_keep(&pc->priv->heads, r5_row_key(pc), pc->ux,
				reactor_now_ns(r5_piece_reactor(pc))))
		return;
	for (unsigned s = 0; s < pc->n; s++)
		if (pc->sflag[s] & SF_BAD)
			return;         /* a read error: the members were repaired, keep none */
	for (unsigned s = 0; s < pc->n; s++) {
		int k = pc->didx[s];
		uint8_t *page = r5_head_page(h, s);
		uint32_t gen = slot_gen(pc->a, s);      /* before the look at the slot */
		bool have;

		if ((pc->sflag[s] & SF_DEAD) || !r5_live(pc, s)) {
			r5_head_page_set(h, pc->a, s, gen, false);
			continue;
		}
		if (k >= 0 && pc->wr[k]) {
			memcpy(page, r5_new_data(pc, (unsigned)k), R5_KEEP_BYTES);
			have = true;
		} else if (k < 0) {
			have = pc->sbuf[s] == page;     /* P or Q, computed and written */
		} else {
			/* untouched data: read into the page, or kept there unread */
			have = pc->sbuf[s] == page ? (pc->sflag[s] & SF_HAVE) != 0
						   : (pc->sflag[s] & SF_CACHED) != 0;
		}
		r5_head_page_set(h, pc->a, s, gen, have);
	}
	pc->keep = true;
	pc->keep_x = pc->ux;
}

static void write_unit(struct r5_piece *pc)
{
	struct r5_plan_in in;
	uint8_t cached[URAID_MAX_MEMBERS];
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
	in.force_full = bad || (pc->a->plog && pc->a->plog->span_reads && written_gap(pc));
	for (unsigned k = 0; k < pc->d; k++)
		cached[k] = (pc->sflag[pc->st.data_slot[k]] & SF_CACHED) != 0;
	in.cached = cached;
	in.p_cached = (pc->sflag[ps] & SF_CACHED) != 0;
	in.q_cached = pc->npar == 2 && (pc->sflag[qs] & SF_CACHED);
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
		/* a kept page is the slot's content: no read (the buffer of a
		   keepable unit is the head's page, unit_cache_begin) */
		if (need && (pc->sflag[s] & SF_CACHED) && !r5_lost(pc, s) &&
		    pc->sbuf[s] == r5_head_page(pc->hw.head, s))
			pc->sflag[s] |= SF_HAVE;
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
	/* the parity log (PPL, journal) first: a crash between the member
	   writes must find what makes the row's parity whole again */
	if (pc->a->plog) {
		struct parity_log *pl = pc->a->plog;
		int rc = pl->ops->before_writes(pl, pc, write_logged);

		if (rc < 0) {
			r5_piece_finish(pc, rc);
			return;
		}
		if (rc > 0)
			return;         /* write_logged runs once it is durable */
	}
	write_issue(pc);
}

/* The parity log's resume: its part of the unit is durable (or failed). */
static void write_logged(struct r5_piece *pc, int res)
{
	if (res < 0) {
		r5_piece_finish(pc, res);
		return;
	}
	write_issue(pc);
}

/* The unit's member writes: new data, P and Q, repairs of failed reads. */
static void write_issue(struct r5_piece *pc)
{
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

static void write_written(struct r5_piece *pc)
{
	if (pc->a->plog)
		pc->a->plog->ops->after_writes(pc->a->plog, pc, pc->result);
	unit_cache_end(pc);
	write_next(pc);
}

/* ---- discard and write-zeroes ---- */

/* The hook: discard (zeroes false) or write zeroes over one piece. */
void r5_discard(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes)
{
	struct array *a = rq->a;
	uint64_t rowlen = (uint64_t)a->geom.data_disks * a->geom.chunk_sectors;
	/* during a reshape rows differ on each side: zeroes are written
	   through the write path, discards of rows are left out */
	bool whole = sector % rowlen == 0 && nsect == rowlen && !a->reshape;
	struct r5_piece *pc;
	int err;

	/* a parity log (PPL) covers the write path only: a row punched member
	   by member is torn by a crash between the punches with nothing logged
	   to make it whole, so rows are not punched (discard is then a no-op,
	   write-zeroes writes them through the log) */
	if (a->plog)
		whole = false;
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

static void discard_start(struct r5_piece *pc)
{
	/* the punched row reads back zeroes: nothing kept of it holds */
	r5_heads_drop(&pc->priv->heads, r5_row_key(pc), 0, pc->C);
	pc->after_io = discard_done;
	for (unsigned s = 0; s < pc->n; s++)
		if (r5_live(pc, s))
			r5_submit(pc, s, MEMBER_DISCARD, NULL, pc->mbase, pc->C * 512);
	if (pc->outstanding == 0)
		discard_done(pc);
}

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
