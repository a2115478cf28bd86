// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>


#include "common/zero_block.h"
#include "engine/core/mio.h"

struct mpiece *mpiece_get(struct array_req *rq)
{
	struct engine_reactor *er = rq->er;
	struct mpiece *p = er->free_mpieces;

	if (p)
		er->free_mpieces = p->next;
	else if (!(p = malloc(sizeof(*p))))
		return NULL;
	memset(p, 0, sizeof(*p));
	p->rq = rq;
	return p;
}

void mpiece_put(struct mpiece *p)
{
	struct engine_reactor *er = p->rq->er;
	p->next = er->free_mpieces;
	er->free_mpieces = p;
}

struct mgroup *mgroup_get(struct array_req *rq)
{
	struct engine_reactor *er = rq->er;
	struct mgroup *g = er->free_mgroups;

	if (g)
		er->free_mgroups = g->next;
	else if (!(g = malloc(sizeof(*g))))
		return NULL;
	memset(g, 0, sizeof(*g));
	g->rq = rq;
	return g;
}

void mgroup_put(struct mgroup *g)
{
	struct engine_reactor *er = g->rq->er;
	g->next = er->free_mgroups;
	er->free_mgroups = g;
}

void mio_free_lists(struct engine_reactor *er)
{
	while (er->free_mpieces) {
		struct mpiece *p = er->free_mpieces;
		er->free_mpieces = p->next;
		free(p);
	}
	while (er->free_mgroups) {
		struct mgroup *g = er->free_mgroups;
		er->free_mgroups = g->next;
		free(g);
	}
}

static void mpiece_member_done(struct member_io *mio, int res)
{
	struct mpiece *p = (struct mpiece *)mio;   /* mio is the first member */
	p->done(p, res);
}

static void mpiece_no_member(struct io_op *op, int res)
{
	struct mpiece *p = (struct mpiece *)op;   /* op opens member_io, which opens mpiece */
	p->done(p, res);
}

void mpiece_submit(struct mpiece *p, enum member_op kind, unsigned slot,
		   uint64_t member_sector, void *buf, uint32_t nsect, int rw_flags,
		   void (*done)(struct mpiece *p, int res))
{
	mpiece_submit_to(p, kind, slot, p->rq->a->slot[slot].m, member_sector, buf, nsect,
			 rw_flags, done);
}

void mpiece_submit_to(struct mpiece *p, enum member_op kind, unsigned slot, struct member *m,
		      uint64_t member_sector, void *buf, uint32_t nsect, int rw_flags,
		      void (*done)(struct mpiece *p, int res))
{
	p->slot = slot;
	p->member_sector = member_sector;
	p->nsect = nsect;
	p->done = done;
	memset(&p->mio, 0, sizeof(p->mio));
	p->mio.kind = kind;
	p->mio.buf = buf;
	p->mio.len = nsect * 512u;
	p->mio.sector = member_sector;
	p->mio.rw_flags = rw_flags;
	p->mio.m = m;
	p->mio.done = mpiece_member_done;
	if (!p->mio.m) {
		/* the slot lost its member since the caller looked: fail like a dead drive */
		p->mio.op.cb = mpiece_no_member;
		reactor_complete(&p->rq->er->r, &p->mio.op, -ENODEV);
		return;
	}
	member_submit(&p->rq->er->r, &p->mio);
}

int req_rw_flags(const struct array_req *rq)
{
	return (rq->io->flags & URAID_IO_FUA) ? RWF_DSYNC : 0;
}

void mio_clear_range(struct mgroup *g, unsigned slot, uint64_t sector, uint32_t nsect,
		     bool zeroes, void (*done)(struct mpiece *p, int res))
{
	mio_clear_range_on(g, slot, g->rq->a->slot[slot].m, sector, nsect, zeroes, done);
}

void mio_clear_range_on(struct mgroup *g, unsigned slot, struct member *m, uint64_t sector,
			uint32_t nsect, bool zeroes, void (*done)(struct mpiece *p, int res))
{
	/* A punched hole reads back zeroes (ZEROES writes them where the file
	   system cannot punch); a block device's discard may not. */
	bool write_zeroes = zeroes && m && m->blockdev;
	uint32_t step = write_zeroes ? (uint32_t)(URAID_ZERO_BLOCK_BYTES / 512) : nsect;

	for (uint32_t off = 0; off < nsect; off += step) {
		uint32_t n = nsect - off < step ? nsect - off : step;
		struct mpiece *p = mpiece_get(g->rq);
		if (!p) {
			g->result = -ENOMEM;
			return;
		}
		p->grp = g;
		g->pending++;
		if (write_zeroes)
			mpiece_submit_to(p, MEMBER_WRITE, slot, m, sector + off,
					 (void *)uraid_zero_block(n * 512u), n,
					 req_rw_flags(g->rq), done);
		else
			mpiece_submit_to(p, zeroes ? MEMBER_ZEROES : MEMBER_DISCARD, slot, m,
					 sector + off, NULL, n, req_rw_flags(g->rq), done);
	}
}

void mgroup_count(struct mgroup *g, int res)
{
	if (res == 0)
		g->good++;
	if (--g->pending == 0)
		g->done(g);
}

void clear_member_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	if (res == -EOPNOTSUPP && p->mio.kind == MEMBER_DISCARD)
		res = 0;   /* a device without discard: the hint is simply dropped */
	mpiece_put(p);
	if (res && !g->result)
		g->result = -EIO;
	mgroup_count(g, res);
}
