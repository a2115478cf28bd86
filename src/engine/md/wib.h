/* SPDX-License-Identifier: MIT */
/*
 * The write-intent bitmap at run time (reference/md-format.md §2.5, md's
 * md-bitmap.c protocol): before a write reaches any member, the bits of the
 * bitmap chunks it touches are set on every member's copy; once no write has
 * touched a chunk for two sweeps (daemon_sleep apart) and the array is whole,
 * its bit is cleared again. After an unclean stop only chunks whose bit is
 * set need a resync, in uraid and in md alike.
 *
 * Per chunk one atomic word: the writes in flight, whether the bit is on
 * disk, whether the chunk still needs a resync, and its sweep age. A write
 * to a chunk whose bit is already on disk costs one compare-and-swap. The
 * first write to a clean chunk counts itself in the chunk and waits in its
 * reactor's batch (md/meta_worker.h): after the events at hand the reactor
 * hands every write that came to wait meanwhile to the metadata worker
 * (md's unplug), which sets their bits in memory and writes the pages,
 * under meta_lock and synchronously as the other metadata updates are; the
 * writes go on on their reactor. A burst of writes to new chunks costs one
 * bitmap write per reactor, and no reactor blocks on it.
 *
 * Positions are sectors of the bitmap's sync range: member sectors from
 * data_offset for RAID 1/4/5/6, array sectors for RAID 10 (§2.3).
 */
#ifndef URAID_ENGINE_WIB_H
#define URAID_ENGINE_WIB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/md/meta_worker.h"

struct array;

/* A write waiting for its bits to reach the members (in the caller's request). */
struct wib_waiter {
	struct meta_wait link;          /* in its reactor's batch */
	uint64_t first, end;            /* its chunks, [first, end) */
	uint64_t slow;                  /* from here on they were not on disk */
	/* on the write's reactor: 0, or -errno when no member took the bitmap */
	void (*resume)(struct wib_waiter *wt, int rc);
};

struct wib {
	uint32_t chunk_sectors;         /* sync-range sectors per bit */
	uint64_t nbits;
	uint64_t sync_size;             /* sectors covered */
	size_t area_bytes;              /* header + bits, whole 4 KiB pages */
	uint8_t *area;                  /* what the members hold, header first */
	_Atomic uint32_t *chunk;        /* per bit: see WIB_* in wib.c */
	uint8_t *page_dirty;            /* per 4 KiB page: written at the next flush */
	uint64_t next_sweep_ns;         /* engine_tick's thread only */
	_Atomic uint64_t bits_set;      /* on disk now (status) */
	_Atomic uint64_t flushes;       /* bitmap writes to the members (tests) */
	struct meta_batch *batch;       /* per reactor: the writes waiting */
	unsigned nbatch;
	struct wib *retired_next;       /* in array.wib_retired (grow_bitmap.c) */
};

/*
 * Set up a->wib from the bitmap of the first in-sync member after assembly:
 * the bits found set count as on disk, and as needing a resync when the
 * array was not clean (md_bitmap_init_from_disk). Nothing to do (0, a->wib
 * NULL) without a bitmap or with a stale one (md then treats every bit as
 * set; uraid leaves it so, and resyncs everything).
 */
int wib_init(struct array *a, char *err, size_t errlen);
void wib_free(struct array *a);

/* The sync range [lo, hi) that a write of array sectors [sector, sector+n) touches. */
void wib_range_of(const struct array *a, uint64_t sector, uint64_t n, uint64_t *lo,
		  uint64_t *hi);

/*
 * A write to the sync range [lo, hi) is about to be issued from reactor
 * `ridx`: 0 when every bit it needs is on disk already; WIB_WAIT when some
 * were not: they are set, and wt->resume runs on that reactor once the
 * bitmap is on the members (0), or could be written to none (-errno; the
 * write's counts are taken back then). wib_end_write when the write is over
 * (not after a resume with an error).
 */
#define WIB_WAIT 1
int wib_start_write(struct array *a, unsigned ridx, uint64_t lo, uint64_t hi,
		    struct wib_waiter *wt);
void wib_end_write(struct array *a, uint64_t lo, uint64_t hi);

/* Does a resync have to visit [lo, hi)? (a set bit there that a resync has not handled) */
bool wib_needs_resync(const struct array *a, uint64_t lo, uint64_t hi);
/* Is a bit of [lo, hi) set on disk? (what a re-added member missed) */
bool wib_any_set(const struct array *a, uint64_t lo, uint64_t hi);
/* The chunks of [lo, hi) whose bits are on disk need a resync (a range
 * added by a grow). */
void wib_mark_needed(struct array *a, uint64_t lo, uint64_t hi);
/* A resync got through [0, hi): its chunks are handled, their bits may clear. */
void wib_resync_done(struct array *a, uint64_t hi);

/* md's bitmap daemon, from engine_tick: age idle chunks, clear the old ones. */
void wib_sweep(struct array *a, uint64_t now_ns);

#endif
