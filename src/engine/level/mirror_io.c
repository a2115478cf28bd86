// SPDX-License-Identifier: MIT
/*
 * The request path of RAID 1 and RAID 10 (descriptors: raid1.c, raid10.c):
 * every array sector has copies (all slots for RAID 1; near/far/offset
 * copies for RAID 10, from the geometry). A piece never
 * crosses a chunk, so each copy of it is one member I/O.
 *
 * Reads go to one in-sync copy, chosen by a hash of the 64 KiB window, so
 * that random reads spread over the mirrors while a window stays on one. A read
 * error tries the next copy; once good data is in hand it is written back to
 * the copies that failed (md's read-error correction), and a failed rewrite
 * fails that member. Writes go to every in-sync copy; a failed copy fails its
 * member, and the write succeeds while one copy holds it.
 *
 * A slot being rebuilt (sync_mirror.c) takes writes to the part already
 * rebuilt and serves reads from it; the rest is the rebuild's to copy. A slot
 * being replaced (uraid replace) is read from its own member only, and its
 * writes go to the replacement as well where the copy has been made (below
 * repl_rebuilt); the replacement's result does not decide the write's, as
 * md counts only in-sync members. Writes are kept apart from the background
 * unit running at the time (mirror.h), so a write and the copy of the same
 * sectors never interleave: a write that started before the unit published
 * its window has ended before the unit reads, and one that comes after waits
 * until the unit has moved repl_rebuilt (or rebuilt) past what it copied.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/core/mio.h"
#include "engine/level/mirror.h"
#include "engine/md/member_state.h"
#include "engine/md/reshape_state.h"

#define BALANCE_WINDOW_SECTORS 128
#define EXCL_NONE 2          /* mgroup.excl: no exclusion counter held */

enum { MOP_WRITE, MOP_DISCARD, MOP_ZEROES };

/* Writes in flight on one reactor, by the parity of the generation they saw. */
struct mirror_cnt {
	_Atomic uint64_t n[2];
} __attribute__((aligned(64)));

/*
 * The exclusion (mirror.h). A writer counts itself under the current
 * generation's parity and then looks at the window; the unit publishes the
 * window and then moves the generation on and waits for the old parity's
 * count to fall to 0, twice (both parities, as SRCU does: a writer that read
 * the generation long ago may count under either). All sequentially
 * consistent, so either the writer sees the window, or the unit sees the
 * writer's count and waits for it. Writers that come after the flip count
 * under the other parity, so the wait always ends.
 */
struct mirror_priv {
	_Atomic uint64_t win_lo, win_hi;    /* win_hi 0: no window */
	_Atomic uint64_t gen;
	struct mirror_cnt *cnt;             /* one per reactor */
	unsigned nreactors;
	pthread_mutex_t mu;                 /* window changes and the parked list */
	struct mgroup *parked;
	/* the job's reactor only */
	unsigned drain_phase;
	unsigned drain_idx;
	/* a spare whose write failed while it held a slot (mirror.h) */
	struct member *_Atomic rebuild_bad;
};

static int mirror_init(struct array *a)
{
	struct mirror_priv *mp = calloc(1, sizeof(*mp));

	if (!mp)
		return -ENOMEM;
	mp->nreactors = a->e->nreactors;
	mp->cnt = aligned_alloc(64, mp->nreactors * sizeof(*mp->cnt));
	if (!mp->cnt) {
		free(mp);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < mp->nreactors; i++) {
		atomic_init(&mp->cnt[i].n[0], 0);
		atomic_init(&mp->cnt[i].n[1], 0);
	}
	pthread_mutex_init(&mp->mu, NULL);
	a->level_priv = mp;
	return 0;
}

static void mirror_fini(struct array *a)
{
	struct mirror_priv *mp = a->level_priv;

	if (!mp)
		return;
	pthread_mutex_destroy(&mp->mu);
	free(mp->cnt);
	free(mp);
	a->level_priv = NULL;
}

static bool window_overlaps(struct mirror_priv *mp, uint64_t sector, uint32_t nsect)
{
	uint64_t hi = atomic_load(&mp->win_hi);
	if (!hi)
		return false;
	/*
	 * lo read after hi: the pair can be torn only when the unit that owned
	 * hi closed meanwhile (its I/O is over) and the next one published lo;
	 * that next unit has not drained yet, and counts this writer.
	 */
	return sector < hi && atomic_load(&mp->win_lo) < sector + nsect;
}

static void write_resume(struct reactor *r, struct reactor_msg *m);

/*
 * Before a write group's member I/O: true when it may go on (holding a
 * counter), false when it was parked behind the window (write_resume
 * issues it later on the same reactor).
 */
static bool excl_enter(struct mgroup *g)
{
	struct mirror_priv *mp = g->rq->a->level_priv;
	struct mirror_cnt *c = &mp->cnt[g->rq->er->r.index];

	for (;;) {
		unsigned idx = (unsigned)(atomic_load(&mp->gen) & 1);
		atomic_fetch_add(&c->n[idx], 1);
		if (!window_overlaps(mp, g->sector, g->nsect)) {
			g->excl = (uint8_t)idx;
			return true;
		}
		/* not counted while parked: the unit waits for counted writes only */
		atomic_fetch_sub(&c->n[idx], 1);
		pthread_mutex_lock(&mp->mu);
		bool park = window_overlaps(mp, g->sector, g->nsect);
		if (park) {
			g->next = mp->parked;
			mp->parked = g;
		}
		pthread_mutex_unlock(&mp->mu);
		if (park)
			return false;
	}
}

static void excl_leave(struct mgroup *g)
{
	struct mirror_priv *mp = g->rq->a->level_priv;

	if (g->excl != EXCL_NONE)
		atomic_fetch_sub(&mp->cnt[g->rq->er->r.index].n[g->excl], 1);
	g->excl = EXCL_NONE;
}

void mirror_window_open(struct array *a, uint64_t lo, uint64_t hi)
{
	struct mirror_priv *mp = a->level_priv;

	pthread_mutex_lock(&mp->mu);
	atomic_store(&mp->win_lo, lo);
	atomic_store(&mp->win_hi, hi);
	pthread_mutex_unlock(&mp->mu);
	mp->drain_phase = 0;
	mp->drain_idx = (unsigned)(atomic_fetch_add(&mp->gen, 1) & 1);
}

bool mirror_window_drained(struct array *a)
{
	struct mirror_priv *mp = a->level_priv;

	while (mp->drain_phase < 2) {
		for (unsigned i = 0; i < mp->nreactors; i++)
			if (atomic_load(&mp->cnt[i].n[mp->drain_idx]))
				return false;
		if (++mp->drain_phase < 2)
			mp->drain_idx = (unsigned)(atomic_fetch_add(&mp->gen, 1) & 1);
	}
	return true;
}

void mirror_window_close(struct array *a)
{
	struct mirror_priv *mp = a->level_priv;

	pthread_mutex_lock(&mp->mu);
	atomic_store(&mp->win_hi, 0);
	struct mgroup *g = mp->parked;
	mp->parked = NULL;
	pthread_mutex_unlock(&mp->mu);
	while (g) {
		struct mgroup *next = g->next;   /* g may run (and be reused) at once */
		g->msg.fn = write_resume;
		reactor_post(&g->rq->er->r, &g->msg);
		g = next;
	}
}

bool mirror_rebuild_write_failed(struct array *a, const struct member *m)
{
	struct mirror_priv *mp = a->level_priv;

	return m && atomic_load(&mp->rebuild_bad) == m;
}

/* A copy reads right: in sync, or on a slot being rebuilt and below its rebuilt point. */
static bool copy_readable(const struct array *a, const struct uraid_loc *l, uint32_t nsect)
{
	if (slot_ok(a, l->slot))
		return true;
	struct mirror_priv *mp = a->level_priv;
	return slot_ok_at(a, l->slot, l->sector + nsect - 1) &&
	       a->slot[l->slot].m != atomic_load(&mp->rebuild_bad);
}

/*
 * A copy takes writes: in sync, or being rebuilt with part of the piece
 * below the rebuilt point (the whole piece then: the rebuild copies the same
 * data over the rest later, after this write is over).
 */
static bool copy_writable(const struct array *a, const struct uraid_loc *l)
{
	return slot_ok_at(a, l->slot, l->sector);
}

/*
 * During a RAID 10 reshape (md/reshape_state.h) a piece lies in the
 * geometry of its side of the position, and one below the position ends
 * at it (md's position may cut a chunk of either geometry). The position
 * moves only while the job holds the rows around it, so a piece keeps its
 * side for its whole life.
 */
static uint64_t mirror_piece_sectors(const struct array *a, uint64_t sector)
{
	if (!a->reshape)
		return uraid_geom_chunk_left(&a->geom, sector);
	const uint64_t *shift;
	const struct uraid_geom *g = reshape_geom_at(a->reshape, sector, &shift);
	uint64_t pos = __atomic_load_n(&a->reshape->position, __ATOMIC_ACQUIRE);
	uint64_t n = uraid_geom_chunk_left(g, sector);
	if (sector < pos && pos - sector < n)
		n = pos - sector;
	return n;
}

/* The copies of the piece at g->sector, their member sectors from the
 * data offset the member I/O adds (a reshape's shift included); n or -errno. */
static int copies_of(const struct array *a, uint64_t sector, struct uraid_loc *locs)
{
	if (!a->reshape)
		return uraid_geom_map(&a->geom, sector, locs, URAID_MAX_MEMBERS);
	const uint64_t *shift;
	const struct uraid_geom *g = reshape_geom_at(a->reshape, sector, &shift);
	int n = uraid_geom_map(g, sector, locs, URAID_MAX_MEMBERS);
	for (int k = 0; k < n; k++)
		locs[k].sector += shift[locs[k].slot];
	return n;
}

static void group_finish(struct mgroup *g, int res)
{
	struct array_req *rq = g->rq;
	mgroup_put(g);
	array_piece_done(rq, res);
}

/* ---- writes ---- */

/* The failed copy's member is recorded faulty (md/member_state.c): the
 * group counts it as not written, and its verdict follows from the copies
 * that were. */
static void write_copy_failed(void *arg, bool survives)
{
	(void)survives;
	mgroup_count(arg, -EIO);
}

static void write_copy_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	struct array *a = g->rq->a;
	unsigned slot = p->slot;
	struct member *m = p->mio.m;

	mpiece_put(p);
	if (res) {
		/* the rebuilt part of a spare now misses this write: no more reads from
		   it, and its rebuild fails it (sync_mirror.c) */
		if (m && a->slot[slot].state == URAID_MEMBER_REBUILDING && a->slot[slot].m == m) {
			struct mirror_priv *mp = a->level_priv;
			atomic_store(&mp->rebuild_bad, m);
		}
		md_fail_slot_parked(a, &g->rq->er->r, slot, res, write_copy_failed, g);
		return;
	}
	mgroup_count(g, res);
}

/*
 * A write (or clear) of a replacement is over. It counts as one I/O of the
 * group but not as a good copy: the replacement is not in sync yet, and a
 * write that reached only it has not reached the array. A failure fails the
 * replacement (the replace stops), never the slot.
 */
static void repl_copy_counted(void *arg, bool survives)
{
	struct mgroup *g = arg;

	(void)survives;
	if (--g->pending == 0)
		g->done(g);
}

static void repl_copy_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	struct array *a = g->rq->a;
	unsigned slot = p->slot;
	struct member *m = p->mio.m;

	if (res == -EOPNOTSUPP && p->mio.kind == MEMBER_DISCARD)
		res = 0;
	mpiece_put(p);
	/* only if m is still the replacement: a later one has nothing to do with it */
	if (res && atomic_load(&a->slot[slot].repl) == m) {
		md_fail_replacement_parked(a, &g->rq->er->r, slot, res, repl_copy_counted, g);
		return;
	}
	repl_copy_counted(g, true);
}

static void write_group_done(struct mgroup *g)
{
	excl_leave(g);
	/* the hold taken while issuing counted as one good I/O */
	group_finish(g, g->result ? g->result : g->good > 1 ? 0 : -EIO);
}

/* A copy that cannot be cleared is failed like one that cannot be written. */
static void clear_copy_done(struct mpiece *p, int res)
{
	if (res == -EOPNOTSUPP && p->mio.kind == MEMBER_DISCARD)
		res = 0;   /* a device without discard: the hint is simply dropped */
	write_copy_done(p, res);
}

/* Write, discard or zero the group's piece on one copy: slot's member (m
 * NULL) or its replacement m; counted in g->pending. */
static void write_one(struct mgroup *g, unsigned slot, struct member *m, uint64_t sector,
		      void (*wdone)(struct mpiece *p, int res),
		      void (*cdone)(struct mpiece *p, int res))
{
	struct array_req *rq = g->rq;

	if (!m)
		m = rq->a->slot[slot].m;
	if (g->op != MOP_WRITE) {
		mio_clear_range_on(g, slot, m, sector, g->nsect, g->op == MOP_ZEROES, cdone);
		return;
	}
	struct mpiece *p = mpiece_get(rq);
	if (!p) {
		g->result = -ENOMEM;
		return;
	}
	p->grp = g;
	g->pending++;
	mpiece_submit_to(p, MEMBER_WRITE, slot, m, sector, g->buf, g->nsect, req_rw_flags(rq),
			 wdone);
}

/* Change every copy of the group's piece (past the exclusion). */
static void write_issue(struct mgroup *g)
{
	struct array_req *rq = g->rq;
	struct uraid_loc locs[URAID_MAX_MEMBERS];
	int n = copies_of(rq->a, g->sector, locs);

	g->done = write_group_done;
	g->pending = 1;
	if (n <= 0)
		g->result = -EIO;
	for (int c = 0; c < n && !g->result; c++) {
		/*
		 * The replacement holds this copy if the copy was made where the
		 * piece starts (as copy_writable: a piece reaching past that is
		 * copied again later, after this write is over). Looked at past
		 * the exclusion, so the unit copying here is not running.
		 */
		struct member *r = slot_repl_at(rq->a, locs[c].slot, locs[c].sector);
		if (copy_writable(rq->a, &locs[c]))
			write_one(g, locs[c].slot, NULL, locs[c].sector, write_copy_done,
				  clear_copy_done);
		if (r && !g->result)
			write_one(g, locs[c].slot, r, locs[c].sector, repl_copy_done,
				  repl_copy_done);
	}
	mgroup_count(g, 0);
}

static void write_resume(struct reactor *r, struct reactor_msg *m)
{
	struct mgroup *g = (struct mgroup *)((char *)m - offsetof(struct mgroup, msg));
	(void)r;
	if (excl_enter(g))
		write_issue(g);
}

static void write_start(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf,
			uint8_t op)
{
	struct mgroup *g = mgroup_get(rq);

	if (!g) {
		array_piece_done(rq, -ENOMEM);
		return;
	}
	g->sector = sector;
	g->nsect = nsect;
	g->buf = buf;
	g->op = op;
	g->excl = EXCL_NONE;
	if (excl_enter(g))
		write_issue(g);
}

static void mirror_write(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf)
{
	write_start(rq, sector, nsect, buf, MOP_WRITE);
}

/* ---- reads ---- */

static void read_try(struct mgroup *g);

static void rewrite_counted(void *arg, bool survives)
{
	(void)survives;
	mgroup_count(arg, 0);   /* the read itself succeeded either way */
}

static void rewrite_done(struct mpiece *p, int res)
{
	struct mgroup *g = p->grp;
	struct array *a = g->rq->a;

	unsigned slot = p->slot;

	mpiece_put(p);
	if (res) {
		md_fail_slot_parked(a, &g->rq->er->r, slot, res, rewrite_counted, g);
		return;
	}
	md_read_corrected(a, slot);
	mgroup_count(g, 0);
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
		if (!copy_readable(a, l, g->nsect))
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
	unsigned copies = uraid_geom_copies(geo);
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

static void mirror_discard(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes)
{
	write_start(rq, sector, nsect, NULL, zeroes ? MOP_ZEROES : MOP_DISCARD);
}

const struct level_ops level_raid1_ops = {
	.name = "raid1",
	.init = mirror_init,
	.fini = mirror_fini,
	.read = mirror_read,
	.write = mirror_write,
	.discard = mirror_discard,
	.piece_sectors = mirror_piece_sectors,
};

const struct level_ops level_raid10_ops = {
	.name = "raid10",
	.init = mirror_init,
	.fini = mirror_fini,
	.read = mirror_read,
	.write = mirror_write,
	.discard = mirror_discard,
	.piece_sectors = mirror_piece_sectors,
};
