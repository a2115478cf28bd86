/* SPDX-License-Identifier: MIT */
/*
 * RAID 4/5/6 as a level of the engine (levels 4, 5 and 6 with every md
 * layout; the geometry says where P, Q and each data chunk of a row live):
 * level_raid5_ops, the level's state (struct r5_priv: the row locks, the
 * per-reactor caches, the zero block) and the piece size.
 *
 * The array core (core/array.c) cuts requests so that a piece never crosses
 * a stripe row and calls the hooks below once per piece. A piece is worked
 * on in units: a sector range [x,y) within the chunk, the same range in
 * every chunk of the row, cut so that within a unit each data chunk is
 * either written over the whole range or not at all (at most three bands
 * per row), and at most R5_SEG_SECTORS long.
 *
 * The files (raid5_priv.h lists what each exports):
 *   raid5_write.c    writes, write-zeroes, discards: the write path
 *   raid5_read.c     reads: straight from the members, or rebuilt
 *   raid5_gather.c   which writes go together (gathering, row holds)
 *   raid5_plan.c     per unit, RCW, RMW, FULL or DIRECT: the fewest reads
 *   raid5_piece.c    a piece's life: free lists, row lock, member I/O,
 *                    unit buffers, rebuild, completion
 *   raid5_rowlock.c  the row-lock table, generic (raid5_rowlock.h)
 *
 * One RAID 5 write, from the hook to completion:
 *   1. raid5_write.c  r5_write: a piece (r5_piece_get/_setup), the stream
 *      noted (r5_stream_note), the row's lock asked for (r5_piece_lock;
 *      raid5_rowlock.c queues it if another piece holds the row).
 *   2. raid5_write.c  write_start, with the row held: r5_gather_or_hold
 *      (raid5_gather.c) takes the writes queued behind into the group, or
 *      holds the row for more of a stream and later calls write_group.
 *   3. raid5_write.c  write_group, then per unit: next_unit, write_unit
 *      (r5_plan_write in raid5_plan.c picks the mode; the reads it needs go
 *      out through raid5_piece.c), write_compute (P/Q, then the writes).
 *      Member completions come back through pc->after_io.
 *   4. raid5_piece.c  r5_piece_finish: buffers back, the row let go (the
 *      next waiter resumes on its reactor), the piece and every piece of
 *      its group completed on their own reactors (array_piece_done).
 * Reads of live chunks go straight to the member with no lock; reads that
 * need a rebuild hold the row as writes do (raid5_read.c).
 *
 * Per-piece state comes from a free list per reactor (allocated on first
 * need, reused after); the rows in work are bounded by the stripe cache
 * (raid5_heads.c: a head per piece that takes a row lock, its 4 KiB pages
 * the buffers of small units), larger units' buffers come from the
 * reactor's pool.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/array.h"
#include "engine/level/raid5_priv.h"
#include "engine/md/reshape_state.h"

#define ROWLOCK_BUCKETS 4096

static uint64_t r5_piece_sectors(const struct array *a, uint64_t sector)
{
	const struct uraid_geom *g = &a->geom;
	const uint64_t *shift;

	/* during a reshape, the row of the geometry that holds the sector. The
	   position is a boundary of new rows only: forwards the new rows lie
	   below it and an old row it cuts is served from it on, so no piece
	   straddles it; backwards the old rows lie below it, and md's position
	   (a multiple of the larger chunk times the new data disks) often cuts
	   one: a piece below it ends at it, the rest of that old row being in
	   the new geometry already */
	uint64_t pos = UINT64_MAX;
	if (a->reshape) {
		g = reshape_geom_at(a->reshape, sector, &shift);
		if (a->reshape->backwards)
			pos = __atomic_load_n(&a->reshape->position, __ATOMIC_ACQUIRE);
	}
	uint64_t rowlen = (uint64_t)g->data_disks * g->chunk_sectors;
	uint64_t n = rowlen - sector % rowlen;

	/* (the position moves only while the job holds the rows of its step,
	   whole old rows below it: a second look that finds it moved cuts at
	   most at a boundary the piece keeps either way) */
	if (sector < pos && pos - sector < n)
		n = pos - sector;
	return n;
}

static void r5_fini(struct array *a)
{
	struct r5_priv *priv = a->level_priv;

	if (!priv)
		return;
	r5_pieces_free_all(priv);
	r5_heads_fini(&priv->heads);
	free(priv->cache);
	free(priv->zero);
	rowlock_table_fini(&priv->locks);
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
	if (!priv->cache || !priv->zero || rowlock_table_init(&priv->locks, ROWLOCK_BUCKETS) < 0) {
		free(priv->cache);
		free(priv->zero);
		free(priv);
		return -ENOMEM;
	}
	if (r5_heads_init(&priv->heads, a->geom.raid_disks,
			  a->stripe_cache ? a->stripe_cache : URAID_STRIPE_CACHE_DEFAULT) < 0) {
		rowlock_table_fini(&priv->locks);
		free(priv->cache);
		free(priv->zero);
		free(priv);
		return -ENOMEM;
	}
	memset(priv->zero, 0, R5_SEG_SECTORS * 512);
	memset(priv->cache, 0, sizeof(*priv->cache) * nr);
	for (unsigned i = 0; i < nr; i++)
		priv->cache[i].priv = priv;
	priv->a = a;
	r5_gather_init(priv);
	a->level_priv = priv;
	return 0;
}

/* The stripe cache's size (uraid_array_set_stripe_cache; range checked there). */
static int r5_stripe_cache_set(struct array *a, unsigned size)
{
	struct r5_priv *priv = a->level_priv;

	return r5_heads_resize(&priv->heads, size);
}

static void r5_stripe_cache_get(struct array *a, struct uraid_stripe_cache_status *st)
{
	struct r5_priv *priv = a->level_priv;
	unsigned size, in_use, peak;
	uint64_t waits;

	r5_heads_stats(&priv->heads, &size, &in_use, &peak, &waits);
	st->used = true;
	st->size = size;
	st->in_use = in_use;
	st->peak = peak;
	st->waits = waits;
	st->memory_bytes = (uint64_t)size * R5_KEEP_BYTES * a->geom.raid_disks;
	pthread_mutex_lock(&priv->heads.mu);
	st->kept = priv->heads.nkept;
	st->hits = priv->heads.hits;
	st->misses = __atomic_load_n(&priv->heads.misses, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&priv->heads.mu);
}

/* A healthy read within one data chunk is that chunk's member's read (as
 * r5_read's direct branch does it). */
static bool r5_direct_map(const struct array *a, uint64_t sector, uint32_t nsect, unsigned *slot,
			  uint64_t *msector)
{
	struct uraid_loc loc;

	if (a->reshape || uraid_geom_chunk_left(&a->geom, sector) < nsect ||
	    uraid_geom_map(&a->geom, sector, &loc, 1) != 1 || !slot_ok(a, loc.slot))
		return false;
	*slot = loc.slot;
	*msector = loc.sector;
	return true;
}

const struct level_ops level_raid5_ops = {
	.name = "raid456",
	.init = r5_init,
	.fini = r5_fini,
	.read = r5_read,
	.write = r5_write,
	.discard = r5_discard,
	.piece_sectors = r5_piece_sectors,
	.stripe_cache_set = r5_stripe_cache_set,
	.stripe_cache_get = r5_stripe_cache_get,
	.direct_map = r5_direct_map,
};

