// SPDX-License-Identifier: MIT
/*
 * Background work on RAID 1 and RAID 10 (md's raid1/raid10 sync_request),
 * one unit of 256 KiB at a time, cut into pieces that stay inside a chunk:
 *
 * - resync, check, repair: read every in-sync copy of the piece and compare
 *   each with the first that read well, in 64 KiB blocks; check adds the
 *   block's sectors to mismatch_sectors for each copy that differs (md's
 *   mismatch_cnt counts its resync blocks, 64 KiB or the chunk if smaller,
 *   the same way); repair and resync write the first copy over the ones that
 *   differ. A copy that cannot be read is rewritten from the good one, in
 *   every kind (md's read-error correction), unless the array is read-only.
 * - recovery: read each piece from an in-sync copy and write it to the
 *   spare; the slot's rebuilt point moves on before the unit lets writes in.
 *   A re-added member (bitmap_guided) gets only the units whose bitmap
 *   chunks are set; the others are passed over.
 * - replace: the same onto the slot's replacement, read from the member it
 *   replaces (the same member sectors of the same slot), or from another
 *   in-sync copy where that read fails or the member has failed; the
 *   slot's repl_rebuilt moves on before the unit lets writes in.
 *
 * Positions (what resync_offset and recovery_offset hold, as md keeps them):
 * RAID 1 member sectors, which are array sectors; RAID 10 resync, check and
 * repair array sectors (md runs them over resync_max_sectors, the array size,
 * and compares resync_offset with it); RAID 10 recovery and replace member
 * sectors of the slot being rebuilt (md's recovery runs over dev_sectors). The
 * write-intent bitmap counts array sectors for RAID 10 too, so only a
 * recovery needs mapping there (bitmap_range).
 *
 * Each unit keeps foreground writes out of the array sectors it covers for
 * its duration (mirror.h): otherwise a repair could copy old data over a
 * write that landed on one copy, or a rebuild miss a write above its point.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/cache/readahead.h"
#include "engine/core/array.h"
#include "engine/level/mirror.h"
#include "engine/md/member_state.h"
#include "engine/jobs/sync.h"
#include "engine/md/wib.h"

#define UNIT_SECTORS 512u      /* 256 KiB per member I/O at most */
#define BLOCK_SECTORS 128u     /* md's RESYNC_BLOCK_SIZE: the unit of mismatch_cnt */
#define DRAIN_POLL_NS 20000    /* between looks at the writes the unit waits for */

struct ms;

/* One member I/O of a unit. */
struct ms_io {
	struct member_io mio;
	struct ms *s;
	int res;
	unsigned slot;
	uint64_t sector;
	bool write;                     /* compare: this copy is to be rewritten */
	bool fix;                       /* ... because it could not be read */
};

/* A piece: one chunk's share of the unit (the whole unit for RAID 1). */
struct ms_piece {
	uint64_t asec;                  /* array sector where it starts */
	uint64_t tsec;                  /* recovery: member sector on the spare */
	uint32_t n;                     /* sectors; 0: the layout stores nothing there */
	unsigned ncopies;               /* compare: copies read, io[p * copies ...] */
	unsigned next;                  /* recovery: the copy to try next as source */
	bool have;                      /* recovery: read from a source */
	bool tried_own;                 /* replace: the replaced member was read (or is gone) */
};

struct ms {
	struct sync_job *job;
	struct sync_unit *u;            /* the unit in progress */
	unsigned copies;                /* copies of an array sector */
	uint32_t piece_max;             /* sectors */
	unsigned npieces_max;
	size_t piece_bytes;
	struct ms_piece *pc;
	unsigned npc;
	struct ms_io *io;               /* piece p's copies at p * copies */
	uint8_t *bufs;                  /* piece_bytes per io entry */
	uint32_t n;                     /* sectors of the current unit */
	unsigned outstanding;
	int err;
	void (*after)(struct ms *s);
	bool window_open;
	unsigned fail_at;               /* repaired_walk: the io entry to look at next */
	int fail_err;
	struct sync_gate gate;          /* a repair's rewrites pass the write gate */
	struct io_op timer_op;
	struct __kernel_timespec ts;
};

/* Does the job walk the member sectors of one slot (recovery, replace)? */
static bool by_member(const struct sync_job *j)
{
	return j->kind == URAID_SYNC_RECOVER || j->kind == URAID_SYNC_REPLACE;
}

/*
 * The target holds the slot's data below `to` (member sectors): writes to
 * those sectors go to it from now on. Called while the unit's window keeps
 * writes out (or for sectors that store nothing), so no write to them has
 * decided without the target and none is in flight.
 */
static void advance(struct sync_job *j, uint64_t to)
{
	struct array_slot *sl = &j->a->slot[j->target_slot];

	if (j->kind == URAID_SYNC_REPLACE)
		atomic_store_explicit(&sl->repl_rebuilt, to, memory_order_release);
	else
		atomic_store_explicit(&sl->rebuilt, to, memory_order_release);
}

static uint8_t *buf_of(struct ms *s, unsigned i)
{
	return s->bufs + (size_t)i * s->piece_bytes;
}

static uint32_t m_unit_sectors(const struct array *a)
{
	(void)a;
	return UNIT_SECTORS;
}

static int m_can_run(const struct array *a, enum uraid_sync_kind kind, char *err, size_t errlen)
{
	unsigned deg = atomic_load(&a->degraded), ok = 0;

	if (kind == URAID_SYNC_REPLACE)
		return 0;       /* copies from the member it replaces, or another copy */
	if (kind == URAID_SYNC_RECOVER)
		return deg ? 0 : uraid_errf(err, errlen, -EINVAL, "no slot is missing");
	for (unsigned s = 0; s < a->geom.raid_disks; s++)
		ok += slot_ok(a, s);
	/* degraded with two copies left or more: the pieces that still have two are compared */
	if (ok < 2)
		return uraid_errf(err, errlen, -EINVAL, "only one copy is working: there is "
				  "nothing to compare");
	return 0;
}

static void m_job_fini(struct sync_job *j)
{
	struct ms *s = j->priv;

	if (!s)
		return;
	free(s->pc);
	free(s->io);
	free(s->bufs);
	free(s);
	j->priv = NULL;
}

static int m_job_init(struct sync_job *j)
{
	const struct uraid_geom *g = &j->a->geom;
	struct ms *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	j->priv = s;
	s->job = j;
	s->copies = uraid_geom_copies(g);
	s->piece_max = j->unit;
	if (g->chunk_sectors && g->chunk_sectors < j->unit)     /* RAID 1 has no chunks */
		s->piece_max = g->chunk_sectors;
	/* units start on a multiple of the unit: whole pieces, one spare for safety */
	s->npieces_max = j->unit / s->piece_max + (s->piece_max < j->unit);
	s->piece_bytes = (size_t)s->piece_max * 512;
	size_t nio = (size_t)s->npieces_max * s->copies;
	s->pc = calloc(s->npieces_max, sizeof(*s->pc));
	s->io = calloc(nio, sizeof(*s->io));
	if (!s->pc || !s->io || posix_memalign((void **)&s->bufs, 4096, nio * s->piece_bytes)) {
		s->bufs = NULL;
		m_job_fini(j);
		return -ENOMEM;
	}
	return 0;
}

/* ---- member I/O ---- */

static void io_done(struct member_io *mio, int res)
{
	struct ms_io *e = (struct ms_io *)mio;   /* mio opens the entry */
	struct ms *s = e->s;

	e->res = res;
	if (--s->outstanding == 0)
		s->after(s);
}

/* Issue entry i (counted in s->outstanding); a slot without a member fails it at once. */
static void io_submit(struct ms *s, unsigned i, enum member_op kind, struct member *m,
		      void *buf, uint64_t sector, uint32_t nsect)
{
	struct ms_io *e = &s->io[i];

	memset(&e->mio, 0, sizeof(e->mio));
	e->s = s;
	e->sector = sector;
	e->res = 0;
	if (!m) {
		e->res = -ENODEV;
		return;
	}
	e->mio.kind = kind;
	e->mio.meta = false;
	e->mio.buf = buf;
	e->mio.len = nsect * 512;
	e->mio.sector = sector;
	e->mio.m = m;
	e->mio.done = io_done;
	s->outstanding++;
	member_submit(s->job->r, &e->mio);
}

/* Start a batch: the hold keeps `after` from running before every I/O is out. */
static void batch_begin(struct ms *s, void (*after)(struct ms *s))
{
	s->after = after;
	s->outstanding = 1;
}

static void batch_end(struct ms *s)
{
	if (--s->outstanding == 0)
		s->after(s);
}

/* ---- the unit ---- */

static void unit_end(struct ms *s, int res)
{
	struct sync_job *j = s->job;

	sync_gate_leave(j, j->ridx, &s->gate.held);
	if (s->window_open) {
		mirror_window_close(j->a);
		s->window_open = false;
	}
	sync_unit_done(j, s->u, res);
}

/* Sectors of the blocks (md's resync blocks, aligned on positions) where a and b differ. */
static uint64_t differing(const uint8_t *a, const uint8_t *b, uint64_t pos, uint32_t n)
{
	uint64_t count = 0;

	for (uint32_t off = 0; off < n;) {
		uint32_t len = BLOCK_SECTORS - (uint32_t)((pos + off) % BLOCK_SECTORS);
		if (len > n - off)
			len = n - off;
		if (memcmp(a + (size_t)off * 512, b + (size_t)off * 512, (size_t)len * 512))
			count += len;
		off += len;
	}
	return count;
}

/* -- resync, check, repair -- */

/*
 * The rewrites of the unit from io entry s->fail_at on: a copy that takes
 * no writes is failed, and the job stops as md's does. Each failure is
 * recorded by the metadata worker, one at a time; the walk goes on from
 * the next entry when it is.
 */
static void repaired_walk(void *arg, bool survives)
{
	struct ms *s = arg;
	struct array *a = s->job->a;

	(void)survives;
	for (unsigned i = s->fail_at; i < s->npc * s->copies; i++) {
		unsigned p = i / s->copies, k = i % s->copies;
		struct ms_io *e = &s->io[i];
		if (k >= s->pc[p].ncopies || !e->write)
			continue;
		if (e->res) {
			s->fail_err = -EIO;
			s->fail_at = i + 1;
			md_fail_slot_parked(a, s->job->r, e->slot, e->res, repaired_walk, s);
			return;
		}
		if (e->fix)
			md_read_corrected(a, e->slot);
	}
	unit_end(s, s->fail_err);
}

/*
 * A rewrite changes what a read of the copies it writes returns: read-ahead
 * drops what it holds of the unit's pieces when the rewrite is issued, and
 * again when it is done (a prefetch may have read a copy while it ran), as
 * for a client's write (cache/readahead.h).
 */
static void drop_read_ahead(struct ms *s)
{
	for (unsigned p = 0; p < s->npc; p++)
		if (s->pc[p].n)
			ra_invalidate(s->job->a, s->pc[p].asec * 512, (uint64_t)s->pc[p].n * 512);
}

static void repaired(struct ms *s)
{
	drop_read_ahead(s);
	s->fail_at = 0;
	s->fail_err = 0;
	repaired_walk(s, true);
}

static void rewrite_copies(struct sync_gate *g, int rc);

static void compared(struct ms *s)
{
	struct sync_job *j = s->job;
	struct array *a = j->a;
	bool may_write = !(a->flags & URAID_ASSEMBLE_READONLY), writes = false;
	uint64_t mism = 0;

	for (unsigned p = 0; p < s->npc; p++) {
		struct ms_piece *pc = &s->pc[p];
		struct ms_io *io = &s->io[p * s->copies];
		unsigned prim = 0;
		while (prim < pc->ncopies && io[prim].res)
			prim++;
		if (pc->ncopies && prim == pc->ncopies) {
			unit_end(s, io[0].res);         /* no copy of it could be read */
			return;
		}
		for (unsigned k = prim + 1; k < pc->ncopies; k++) {
			io[k].fix = io[k].res != 0;
			io[k].write = io[k].fix && may_write;
			if (io[k].fix)
				continue;
			uint64_t d = differing(buf_of(s, p * s->copies + prim),
					       buf_of(s, p * s->copies + k), pc->asec, pc->n);
			mism += d;
			io[k].write = d && j->kind != URAID_SYNC_CHECK;
		}
		for (unsigned k = 0; k <= prim && k < pc->ncopies; k++)
			io[k].write = io[k].fix = false;
		for (unsigned k = prim + 1; k < pc->ncopies; k++)
			writes |= io[k].write;
	}
	if (j->kind != URAID_SYNC_RESYNC)
		atomic_fetch_add(&j->mismatch_sectors, mism);
	if (!writes) {
		unit_end(s, 0);
		return;
	}
	sync_gate_enter(j, j->ridx, &s->gate, rewrite_copies);
}

/* Past the write gate (rc 0): the copies that differ get the first good one's data. */
static void rewrite_copies(struct sync_gate *g, int rc)
{
	struct ms *s = (struct ms *)((char *)g - offsetof(struct ms, gate));
	struct array *a = s->job->a;

	if (rc) {
		unit_end(s, rc);
		return;
	}
	drop_read_ahead(s);
	batch_begin(s, repaired);
	for (unsigned p = 0; p < s->npc; p++) {
		struct ms_piece *pc = &s->pc[p];
		unsigned base = p * s->copies, prim = 0;
		while (prim < pc->ncopies && s->io[base + prim].res)
			prim++;
		for (unsigned k = prim + 1; k < pc->ncopies; k++) {
			struct ms_io *e = &s->io[base + k];
			if (e->write)
				io_submit(s, base + k, MEMBER_WRITE, a->slot[e->slot].m,
					  buf_of(s, base + prim), e->sector, pc->n);
		}
	}
	batch_end(s);
}

static void compare_read(struct ms *s)
{
	struct array *a = s->job->a;
	struct uraid_loc locs[URAID_MAX_MEMBERS];

	batch_begin(s, compared);
	for (unsigned p = 0; p < s->npc; p++) {
		struct ms_piece *pc = &s->pc[p];
		int n = pc->n ? uraid_geom_map(&a->geom, pc->asec, locs, URAID_MAX_MEMBERS) : 0;
		unsigned ok = 0;
		for (int c = 0; c < n; c++)
			ok += slot_ok(a, locs[c].slot);
		pc->ncopies = 0;
		if (ok < 2)
			continue;                   /* one copy left: nothing to compare */
		for (int c = 0; c < n; c++) {
			if (!slot_ok(a, locs[c].slot))
				continue;
			unsigned i = p * s->copies + pc->ncopies++;
			s->io[i].slot = locs[c].slot;
			s->io[i].write = s->io[i].fix = false;
			io_submit(s, i, MEMBER_READ, a->slot[locs[c].slot].m, buf_of(s, i),
				  locs[c].sector, pc->n);
		}
	}
	batch_end(s);
}

/* -- recovery -- */

/* The spare cannot take writes: the job ends and sync.c fails it. */
static void target_failed(struct ms *s, int res)
{
	s->u->target_failed = true;
	unit_end(s, res);
}

static void recover_written(struct ms *s)
{
	struct sync_job *j = s->job;
	struct array *a = j->a;

	for (unsigned p = 0; p < s->npc; p++) {
		struct ms_io *e = &s->io[p * s->copies];
		if (s->pc[p].n && e->res) {
			target_failed(s, e->res);
			return;
		}
	}
	/* a foreground write missed the spare's rebuilt part: it cannot be trusted */
	if (j->kind == URAID_SYNC_RECOVER && mirror_rebuild_write_failed(a, j->target)) {
		target_failed(s, -EIO);
		return;
	}
	/* the unit counts for the spare before writes to it are let in */
	advance(j, j->pos + s->n);
	unit_end(s, 0);
}

static void recover_read(struct ms *s);

static void recover_got(struct ms *s)
{
	struct sync_job *j = s->job;
	bool all = true;

	for (unsigned p = 0; p < s->npc; p++) {
		struct ms_piece *pc = &s->pc[p];
		if (pc->n && !pc->have) {
			pc->have = s->io[p * s->copies].res == 0;
			all &= pc->have;
		}
	}
	if (s->err) {
		unit_end(s, s->err);
		return;
	}
	if (!all) {
		recover_read(s);                /* the next copy of what failed */
		return;
	}
	batch_begin(s, recover_written);
	for (unsigned p = 0; p < s->npc; p++)
		if (s->pc[p].n)
			io_submit(s, p * s->copies, MEMBER_WRITE, j->target, buf_of(s, p * s->copies),
				  s->pc[p].tsec, s->pc[p].n);
	batch_end(s);
}

/*
 * Read each piece not yet in hand from its next in-sync copy. A replace
 * tries the member being replaced first (the slot's own copy, at the same
 * member sectors as on the replacement), then the other copies as a
 * recovery does: md reads the old device, which may be worn but is usually
 * readable, and keeps the others' load low.
 */
static void recover_read(struct ms *s)
{
	struct sync_job *j = s->job;
	struct array *a = j->a;
	struct uraid_loc locs[URAID_MAX_MEMBERS];

	batch_begin(s, recover_got);
	for (unsigned p = 0; p < s->npc && !s->err; p++) {
		struct ms_piece *pc = &s->pc[p];
		if (!pc->n || pc->have)
			continue;
		if (j->kind == URAID_SYNC_REPLACE && !pc->tried_own) {
			pc->tried_own = true;
			unsigned t = (unsigned)j->target_slot;
			if (slot_ok(a, t)) {
				unsigned i = p * s->copies;
				s->io[i].slot = t;
				io_submit(s, i, MEMBER_READ, a->slot[t].m, buf_of(s, i), pc->tsec,
					  pc->n);
				continue;
			}
		}
		int n = uraid_geom_map(&a->geom, pc->asec, locs, URAID_MAX_MEMBERS);
		while (pc->next < (unsigned)(n > 0 ? n : 0) &&
		       ((int)locs[pc->next].slot == j->target_slot || !slot_ok(a, locs[pc->next].slot)))
			pc->next++;
		if (n <= 0 || pc->next >= (unsigned)n) {
			ulog(array_log(a), URAID_LOG_ERR, "recovery: no readable copy of array sector %llu",
				(unsigned long long)pc->asec);
			s->err = -EIO;
			break;
		}
		unsigned i = p * s->copies;
		s->io[i].slot = locs[pc->next].slot;
		io_submit(s, i, MEMBER_READ, a->slot[locs[pc->next].slot].m, buf_of(s, i),
			  locs[pc->next].sector, pc->n);
		pc->next++;
	}
	batch_end(s);
}

/* -- the unit's start: pieces, window, drain -- */

static void drained(struct ms *s);
static void m_bitmap_range(const struct array *a, uint64_t pos, uint64_t n, uint64_t *lo,
			   uint64_t *hi);

/*
 * Re-add: is the unit clean in the bitmap? Then it is passed over (true).
 * Asked once the window is drained, as the RAID 5 rebuild asks under the
 * row lock: a write sets its bits before it reaches the exclusion, so any
 * write to these sectors since the member left either shows in the bitmap
 * now or comes after the window closes, when `rebuilt` has passed the unit
 * and the write goes to the member too. (Bits do not clear while a slot is
 * missing: the bitmap holds every write since the member left.)
 */
static bool unit_clean(struct ms *s)
{
	struct sync_job *j = s->job;
	uint64_t lo, hi;

	m_bitmap_range(j->a, j->pos, s->n, &lo, &hi);
	if (hi > lo && wib_any_set(j->a, lo, hi))
		return false;
	advance(j, j->pos + s->n);
	s->u->skipped = true;
	unit_end(s, 0);
	return true;
}

static void drain_timer(struct io_op *op, int res)
{
	struct ms *s = (struct ms *)((char *)op - offsetof(struct ms, timer_op));
	(void)res;
	drained(s);
}

/* Go on once the writes that may overlap the window are over; look again later if not. */
static void drained(struct ms *s)
{
	if (!mirror_window_drained(s->job->a)) {
		s->ts.tv_sec = 0;
		s->ts.tv_nsec = DRAIN_POLL_NS;
		s->timer_op.cb = drain_timer;
		reactor_timeout(s->job->r, &s->timer_op, &s->ts);
		return;
	}
	if (s->job->kind == URAID_SYNC_RECOVER && s->job->bitmap_guided && unit_clean(s))
		return;
	if (by_member(s->job))
		recover_read(s);
	else
		compare_read(s);
}

/* Cut the unit into pieces inside chunks; recovery positions map back to the array. */
static int plan(struct ms *s)
{
	struct sync_job *j = s->job;
	const struct uraid_geom *g = &j->a->geom;
	uint64_t end = j->pos + s->n;

	s->npc = 0;
	for (uint64_t x = j->pos; x < end;) {
		uint64_t len = s->piece_max;
		if (g->chunk_sectors && len > g->chunk_sectors - x % g->chunk_sectors)
			len = g->chunk_sectors - x % g->chunk_sectors;
		if (len > end - x)
			len = end - x;
		if (s->npc == s->npieces_max)
			return -EINVAL;
		struct ms_piece *pc = &s->pc[s->npc++];
		memset(pc, 0, sizeof(*pc));
		pc->n = (uint32_t)len;
		pc->asec = pc->tsec = x;
		/* a recovery walks member sectors; where they are not the array's
		   (RAID 10, whose other jobs count array sectors) map them back */
		if (by_member(j) && j->a->level->info.sync_in_array_sectors) {
			struct uraid_rloc rl;
			if (uraid_geom_reverse(g, (uint32_t)j->target_slot, x, &rl))
				return -EINVAL;
			if (rl.kind == URAID_CHUNK_DATA)
				pc->asec = rl.array_sector;
			else
				pc->n = 0;              /* the unused tail of the last row */
		}
		x += len;
	}
	return 0;
}

/* One lane: the unit is at j->pos (the job's position is the unit's while it runs). */
static void m_unit(struct sync_job *j, struct sync_unit *u)
{
	struct ms *s = j->priv;
	uint64_t lo = UINT64_MAX, hi = 0;

	s->u = u;
	s->n = u->n;
	s->err = 0;
	s->window_open = s->gate.held = false;
	if (by_member(j) && (j->target_slot < 0 || !j->target)) {
		unit_end(s, -EINVAL);
		return;
	}
	if (j->kind == URAID_SYNC_RECOVER && mirror_rebuild_write_failed(j->a, j->target)) {
		target_failed(s, -EIO);
		return;
	}
	int rc = plan(s);
	if (rc) {
		unit_end(s, rc);
		return;
	}
	for (unsigned p = 0; p < s->npc; p++) {
		if (!s->pc[p].n)
			continue;
		lo = s->pc[p].asec < lo ? s->pc[p].asec : lo;
		hi = s->pc[p].asec + s->pc[p].n > hi ? s->pc[p].asec + s->pc[p].n : hi;
	}
	if (!hi) {
		/* nothing stored here: a recovery or a replace just moves on */
		if (by_member(j))
			advance(j, j->pos + s->n);
		unit_end(s, 0);
		return;
	}
	mirror_window_open(j->a, lo, hi);
	s->window_open = true;
	drained(s);
}

/*
 * The bitmap's sync range of units at [pos, pos+n): the same numbers, but
 * for a RAID 10 recovery or replace, whose positions are the target slot's
 * member sectors:
 * then the array sectors those hold (their envelope; md maps each one with
 * raid10_find_virt).
 */
static void m_bitmap_range(const struct array *a, uint64_t pos, uint64_t n, uint64_t *lo,
			   uint64_t *hi)
{
	const struct uraid_geom *g = &a->geom;
	struct sync_job *j = atomic_load(&a->sync);
	uint64_t c = g->chunk_sectors, l = UINT64_MAX, h = 0;

	*lo = pos;
	*hi = pos + n;
	if (!a->level->info.sync_in_array_sectors || !j || !by_member(j) || j->target_slot < 0)
		return;
	if (n / c > 4096) {
		*lo = 0;                        /* too long to map piece by piece: everything */
		*hi = g->array_sectors;
		return;
	}
	for (uint64_t x = pos; x < pos + n; x += c - x % c) {
		struct uraid_rloc rl;
		uint64_t len = c - x % c < pos + n - x ? c - x % c : pos + n - x;
		if (uraid_geom_reverse(g, (uint32_t)j->target_slot, x, &rl) ||
		    rl.kind != URAID_CHUNK_DATA)
			continue;
		l = rl.array_sector < l ? rl.array_sector : l;
		h = rl.array_sector + len > h ? rl.array_sector + len : h;
	}
	*lo = h ? l : 0;
	*hi = h;
}

const struct sync_level sync_mirror_level = {
	.unit_sectors = m_unit_sectors,
	.can_run = m_can_run,
	.unit = m_unit,
	.job_init = m_job_init,
	.job_fini = m_job_fini,
	.bitmap_range = m_bitmap_range,
};
