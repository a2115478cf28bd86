// SPDX-License-Identifier: MIT
/*
 * The request path of linear and RAID 0 (descriptors: linear.c, raid0.c):
 * every array sector lives in one place, so a piece (which
 * never crosses a chunk or a member's end) is one member I/O. There is no
 * redundancy: a member error is the request's error, and, as md's raid0 and
 * linear do, the member is not failed in the superblocks.
 */
#include <errno.h>

#include "engine/core/mio.h"

static uint64_t single_piece_sectors(const struct array *a, uint64_t sector)
{
	return uraid_geom_chunk_left(&a->geom, sector);
}

static void single_done(struct mpiece *p, int res)
{
	struct array_req *rq = p->rq;
	mpiece_put(p);
	array_piece_done(rq, res ? -EIO : 0);
}

static void single_rw(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf,
		      enum member_op kind)
{
	struct array *a = rq->a;
	struct uraid_loc loc;

	if (uraid_geom_map(&a->geom, sector, &loc, 1) != 1 || !slot_ok(a, loc.slot)) {
		array_piece_done(rq, -EIO);
		return;
	}
	struct mpiece *p = mpiece_get(rq);
	if (!p) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	mpiece_submit(p, kind, loc.slot, loc.sector, buf, nsect,
		      kind == MEMBER_WRITE ? req_rw_flags(rq) : 0, single_done);
}

static void single_read(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	single_rw(rq, sector, nsect, buf, MEMBER_READ);
}

static void single_write(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	single_rw(rq, sector, nsect, buf, MEMBER_WRITE);
}

static void clear_done(struct mgroup *g)
{
	struct array_req *rq = g->rq;
	int res = g->result;
	mgroup_put(g);
	array_piece_done(rq, res);
}

static void single_discard(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes)
{
	struct array *a = rq->a;
	struct uraid_loc loc;
	struct mgroup *g;

	if (uraid_geom_map(&a->geom, sector, &loc, 1) != 1 || !slot_ok(a, loc.slot)) {
		array_piece_done(rq, -EIO);
		return;
	}
	if (!(g = mgroup_get(rq))) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	g->done = clear_done;
	g->pending = 1;     /* held while issuing */
	mio_clear_range(g, loc.slot, loc.sector, nsect, zeroes, clear_member_done);
	mgroup_count(g, 0);
}

const struct level_ops level_linear_ops = {
	.name = "linear",
	.read = single_read,
	.write = single_write,
	.discard = single_discard,
	.piece_sectors = single_piece_sectors,
};

const struct level_ops level_raid0_ops = {
	.name = "raid0",
	.read = single_read,
	.write = single_write,
	.discard = single_discard,
	.piece_sectors = single_piece_sectors,
};
