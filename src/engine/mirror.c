// SPDX-License-Identifier: MIT
/*
 * RAID 1 and RAID 10: every array sector has copies (all slots for RAID 1;
 * near/far/offset copies for RAID 10, from the geometry). A piece never
 * crosses a chunk, so each copy of it is one member I/O.
 *
 * Reads go to one in-sync copy, chosen by a hash of the 64 KiB window, so
 * that random reads spread over the mirrors while a window stays on one. A read
 * error tries the next copy; once good data is in hand it is written back to
 * the copies that failed (md's read-error correction), and a failed rewrite
 * fails that member. Writes go to every in-sync copy; a failed copy fails its
 * member, and the write succeeds while one copy holds it.
 */
#include <errno.h>

#include "engine/mio.h"

#define BALANCE_WINDOW_SECTORS 128

static uint64_t mirror_piece_sectors(const struct array *a, uint64_t sector)
{
	return uraid_geom_chunk_left(&a->geom, sector);
}

/* The copies of the piece at g->sector; n or -errno. */
static int copies_of(const struct array *a, uint64_t sector, struct uraid_loc *locs)
{
	return uraid_geom_map(&a->geom, sector, locs, URAID_MAX_MEMBERS);
}

static void group_finish(struct mgroup *g, int res)
{
	struct array_req *rq = g->rq;
	mgroup_put(g);
	array_piece_done(rq, res);
}

/* ---- writes ---- */

static void write_copy_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	struct array *a = g->rq->a;
	unsigned slot = p->slot;

	mpiece_put(p);
	if (res)
		array_fail_slot(a, slot, res);
	mgroup_count(g, res);
}

static void write_group_done(struct mgroup *g)
{
	/* the hold taken while issuing counted as one good I/O */
	group_finish(g, g->result ? g->result : g->good > 1 ? 0 : -EIO);
}

/*
 * A group for changing every copy of the piece at `sector`, held open while
 * its member I/Os are issued (release with mgroup_count(g, 0)); NULL when
 * the piece was completed with an error instead.
 */
static struct mgroup *copies_group(struct array_req *rq, uint64_t sector,
				   struct uraid_loc *locs, int *n)
{
	*n = copies_of(rq->a, sector, locs);
	struct mgroup *g = *n > 0 ? mgroup_get(rq) : NULL;

	if (!g) {
		array_piece_done(rq, *n > 0 ? -ENOMEM : -EIO);
		return NULL;
	}
	g->done = write_group_done;
	g->pending = 1;
	return g;
}

static void mirror_write(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	struct uraid_loc locs[URAID_MAX_MEMBERS];
	int n;
	struct mgroup *g = copies_group(rq, sector, locs, &n);

	if (!g)
		return;
	for (int c = 0; c < n; c++) {
		if (!slot_ok(rq->a, locs[c].slot))
			continue;
		struct mpiece *p = mpiece_get(rq);
		if (!p) {
			g->result = -ENOMEM;
			break;
		}
		p->grp = g;
		g->pending++;
		mpiece_submit(p, MEMBER_WRITE, locs[c].slot, locs[c].sector, buf, nsect,
			      req_rw_flags(rq), write_copy_done);
	}
	mgroup_count(g, 0);
}

/* ---- reads ---- */

static void read_try(struct mgroup *g);

static void rewrite_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	struct array *a = g->rq->a;

	if (res)
		array_fail_slot(a, p->slot, res);
	else
		array_read_corrected(a, p->slot);
	mpiece_put(p);
	mgroup_count(g, 0);   /* the read itself succeeded either way */
}

static void rewrite_group_done(struct mgroup *g)
{
	group_finish(g, 0);
}

/* Good data is in g->buf: write it over the copies that failed to read. */
static void rewrite_bad(struct mgroup *g)
{
	struct array *a = g->rq->a;
	struct uraid_loc locs[URAID_MAX_MEMBERS];
	int n = copies_of(a, g->sector, locs);

	g->done = rewrite_group_done;
	g->pending = 1;
	for (unsigned b = 0; b < g->nbad; b++) {
		for (int c = 0; c < n; c++) {
			if (locs[c].slot != g->bad_slot[b] || !slot_ok(a, locs[c].slot))
				continue;
			struct mpiece *p = mpiece_get(g->rq);
			if (!p)
				break;
			p->grp = g;
			g->pending++;
			mpiece_submit(p, MEMBER_WRITE, locs[c].slot, locs[c].sector, g->buf,
				      g->nsect, 0, rewrite_done);
		}
	}
	mgroup_count(g, 0);
}

static void read_copy_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	unsigned slot = p->slot;

	mpiece_put(p);
	if (res == 0) {
		if (g->nbad)
			rewrite_bad(g);
		else
			group_finish(g, 0);
		return;
	}
	if (g->nbad < MGROUP_MAX_BAD)
		g->bad_slot[g->nbad++] = (uint16_t)slot;
	g->next_copy++;
	read_try(g);
}

/* Read from the next usable copy, starting at the balanced choice. */
static void read_try(struct mgroup *g)
{
	struct array *a = g->rq->a;
	struct uraid_loc locs[URAID_MAX_MEMBERS];
	int n = copies_of(a, g->sector, locs);

	for (; n > 0 && g->next_copy < (unsigned)n; g->next_copy++) {
		const struct uraid_loc *l = &locs[(g->ncopies + g->next_copy) % (unsigned)n];
		if (!slot_ok(a, l->slot))
			continue;
		struct mpiece *p = mpiece_get(g->rq);
		if (!p) {
			group_finish(g, -ENOMEM);
			return;
		}
		p->grp = g;
		mpiece_submit(p, MEMBER_READ, l->slot, l->sector, g->buf, g->nsect, 0,
			      read_copy_done);
		return;
	}
	group_finish(g, -EIO);
}

static void mirror_read(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	const struct uraid_geom *geo = &rq->a->geom;
	unsigned copies = geo->level == URAID_LEVEL_1 ? geo->raid_disks
						     : geo->near_copies * geo->far_copies;
	struct mgroup *g = mgroup_get(rq);

	if (!g) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	g->sector = sector;
	g->nsect = nsect;
	g->buf = buf;
	/*
	 * ncopies holds the balanced first copy; next_copy counts attempts. The
	 * window number is hashed, not taken modulo: with RAID 10 the copy order
	 * repeats with the chunk, and a plain modulo can keep whole members idle.
	 */
	uint64_t window = sector / BALANCE_WINDOW_SECTORS;
	g->ncopies = (unsigned)((window * 0x9e3779b97f4a7c15ull) >> 40) % (copies ? copies : 1);
	read_try(g);
}

/* ---- discard and write-zeroes ---- */

/* A copy that cannot be cleared is failed like one that cannot be written. */
static void clear_copy_done(struct mpiece *p, int res)
{
	if (res == -EOPNOTSUPP && p->mio.kind == MEMBER_DISCARD)
		res = 0;   /* a device without discard: the hint is simply dropped */
	write_copy_done(p, res);
}

static void mirror_discard(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes)
{
	struct uraid_loc locs[URAID_MAX_MEMBERS];
	int n;
	struct mgroup *g = copies_group(rq, sector, locs, &n);

	if (!g)
		return;
	for (int c = 0; c < n; c++)
		if (slot_ok(rq->a, locs[c].slot))
			mio_clear_range(g, locs[c].slot, locs[c].sector, nsect, zeroes,
					clear_copy_done);
	mgroup_count(g, 0);
}

const struct level_ops level_raid1_ops = {
	.name = "raid1",
	.read = mirror_read,
	.write = mirror_write,
	.discard = mirror_discard,
	.piece_sectors = mirror_piece_sectors,
};

const struct level_ops level_raid10_ops = {
	.name = "raid10",
	.read = mirror_read,
	.write = mirror_write,
	.discard = mirror_discard,
	.piece_sectors = mirror_piece_sectors,
};
