// SPDX-License-Identifier: MIT
/*
 * The write-intent bitmap at run time: see wib.h for the protocol. The
 * area in memory changes and is written only under meta_lock (bitmap pages
 * here, the header in meta.c), so it and the members' copies agree whenever
 * the lock is free. The data path never takes the lock: a write whose bits
 * are not on disk counts itself in their chunks and leaves the setting and
 * writing of the bits to the metadata worker.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/array.h"
#include "engine/md/member_state.h"
#include "engine/md/meta_worker.h"
#include "engine/md/wib.h"
#include "common/errmsg.h"

/* The per-chunk word. */
#define WIB_COUNT     0x00ffffffu   /* writes in flight to the chunk */
#define WIB_ONDISK    (1u << 24)    /* the bit is set on every member's copy */
#define WIB_NEEDED    (1u << 25)    /* set at assembly of a dirty array: resync it */
#define WIB_AGE_SHIFT 26            /* idle sweeps seen since the last write */
#define WIB_AGE       (3u << WIB_AGE_SHIFT)
#define WIB_PAGE      4096u

static int batch_update(struct meta_batch *b, struct meta_wait *list);
static void batch_resume(struct meta_batch *b, struct meta_wait *l, int rc);

static inline struct wib_waiter *waiter_of(struct meta_wait *l)
{
	return (struct wib_waiter *)((char *)l - offsetof(struct wib_waiter, link));
}

static int64_t area_sector(const struct array *a, unsigned i)
{
	return (int64_t)a->member_sb[i].super_offset + a->sb.bitmap_offset;
}

/* Is area's header laid out as a->bitmap (chunk, range as found)? */
static bool bits_agree(const struct array *a, const uint8_t *area)
{
	struct uraid_bitmap_sb on;

	return uraid_bitmap_decode(area, &on) == 0 && on.chunksize == a->bitmap.chunksize &&
	       on.sync_size == a->bitmap_found_sync;
}

/* The member in the next in-sync slot after member i's (wrapping), -1: none. */
static int next_in_sync(const struct array *a, int i)
{
	int s0 = a->member_slot[i];
	unsigned n = a->geom.raid_disks;

	for (unsigned k = 1; s0 >= 0 && k <= n; k++) {
		unsigned s = ((unsigned)s0 + k) % n;
		if (!slot_ok(a, s))
			continue;
		for (unsigned j = 0; j < a->nmembers; j++)
			if (a->members[j] == a->slot[s].m)
				return (int)j;
	}
	return -1;
}

int wib_init(struct array *a, char *err, size_t errlen)
{
	struct wib *w;
	int from = -1;

	a->wib = NULL;
	/* read-only arrays load the bits too (status); they never write them */
	if (!a->has_bitmap || a->bitmap_stale || !a->level->info.redundant)
		return 0;
	/* every in-sync member holds the same bits; md reads the first one's */
	for (unsigned s = 0; s < a->geom.raid_disks && from < 0; s++)
		for (unsigned i = 0; i < a->nmembers; i++)
			if (slot_ok(a, s) && a->members[i] == a->slot[s].m) {
				from = (int)i;
				break;
			}
	if (from < 0)
		return 0;
	int first = from;
	if (!(w = calloc(1, sizeof(*w))))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory for the bitmap");
	w->chunk_sectors = a->bitmap.chunksize / 512;
	w->sync_size = a->bitmap.sync_size;
	w->nbits = uraid_bitmap_bits(w->sync_size, a->bitmap.chunksize);
	w->area_bytes = uraid_bitmap_disk_sectors(w->sync_size, a->bitmap.chunksize) * 512;
	w->chunk = calloc(w->nbits ? w->nbits : 1, sizeof(*w->chunk));
	w->page_dirty = calloc(w->area_bytes / WIB_PAGE + 1, 1);
	if (posix_memalign((void **)&w->area, WIB_PAGE, w->area_bytes))
		w->area = NULL;
	w->nbatch = a->e->nreactors;
	w->batch = aligned_alloc(64, w->nbatch * sizeof(*w->batch));
	for (unsigned i = 0; w->batch && i < w->nbatch; i++)
		meta_batch_init(&w->batch[i], a->e, &a->e->reactors[i].r, a, batch_update,
				batch_resume);
	a->wib = w;
	if (!w->chunk || !w->page_dirty || !w->area || !w->batch) {
		wib_free(a);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory for the bitmap");
	}
	int64_t at = area_sector(a, (unsigned)from);
	int rc = at < 0 ? -EINVAL
			: member_pread_sync(a->members[from], w->area, w->area_bytes, (uint64_t)at);
	if (rc) {
		uraid_errf(err, errlen, rc, "%s: cannot read the write-intent bitmap: %s",
			   a->members[from]->path, strerror(-rc));
		wib_free(a);
		return rc;
	}
	/*
	 * The bits are read as the header taken (at assembly, the freshest
	 * member's) lays them out. A crash in the middle of a bitmap resize
	 * (grow --size: one member after another) can leave members whose
	 * headers differ in chunk or range: bits read under another chunk would
	 * mark the wrong chunks. The first in-sync member whose header agrees
	 * gives them; when none does, every bit counts as dirty (stale).
	 */
	while (!bits_agree(a, w->area)) {
		from = next_in_sync(a, from);
		if (from == first || from < 0 ||
		    (at = area_sector(a, (unsigned)from)) < 0 ||
		    member_pread_sync(a->members[from], w->area, w->area_bytes, (uint64_t)at)) {
			ulog(array_log(a), URAID_LOG_WARNING, "%s: no member in sync holds a bitmap "
			     "laid out as the header taken (%u KiB chunks, %" PRIu64 " sectors): every "
			     "bit counts as dirty", a->sb.set_name, a->bitmap.chunksize / 1024,
			     a->bitmap_found_sync);
			wib_free(a);
			a->bitmap_stale = true;
			return 0;
		}
	}
	if (from != first)
		ulog(array_log(a), URAID_LOG_WARNING, "%s: %s holds a bitmap laid out otherwise than "
		     "the header taken (a resize cut short?): the bits of %s are used",
		     a->sb.set_name, a->members[first]->path, a->members[from]->path);
	/*
	 * md_bitmap_init_from_disk: set bits of a dirty array need a resync from
	 * resync_offset on (from 0 when degraded, where no checkpoint holds).
	 */
	uint64_t start = atomic_load(&a->degraded) ? 0 : a->resync_checkpoint;
	uint64_t set = 0;
	/* chunks the header's sync_size did not cover were never tracked:
	   dirty (assemble.c made the range the array's) */
	uint64_t tracked = uraid_bitmap_bits(a->bitmap_found_sync, a->bitmap.chunksize);
	for (uint64_t c = 0; c < w->nbits; c++) {
		if (c >= tracked && !uraid_bitmap_test(w->area, c)) {
			uraid_bitmap_set(w->area, c);
			w->page_dirty[(URAID_BITMAP_HEADER_BYTES + c / 8) / WIB_PAGE] = 1;
		}
		if (!uraid_bitmap_test(w->area, c))
			continue;
		uint32_t v = WIB_ONDISK;
		if (a->resync_needed && (c + 1) * w->chunk_sectors > start)
			v |= WIB_NEEDED;
		atomic_store_explicit(&w->chunk[c], v, memory_order_relaxed);
		set++;
	}
	atomic_store(&w->bits_set, set);
	/* md's bitmap daemon runs from the engine's tick while the array is open */
	return array_tick_add(a, wib_sweep);
}

void wib_free(struct array *a)
{
	struct wib *w = a->wib;

	if (!w)
		return;
	free(w->area);
	free(w->batch);
	free((void *)w->chunk);
	free(w->page_dirty);
	free(w);
	a->wib = NULL;
}

void wib_range_of(const struct array *a, uint64_t sector, uint64_t n, uint64_t *lo,
		  uint64_t *hi)
{
	const struct uraid_geom *g = &a->geom;

	/* RAID 1: member sectors are array sectors; RAID 10 counts the array's */
	if (!a->level->info.parity_members) {
		*lo = sector;
		*hi = sector + n;
		return;
	}
	/* RAID 4/5/6: stripe row r is member sectors [r*C, (r+1)*C) on every member */
	uint64_t c = g->chunk_sectors, row = c * g->data_disks;
	uint64_t first = sector / row, last = (sector + n - 1) / row;
	if (first == last) {
		uint64_t o = sector % row;
		if (o / c == (o + n - 1) / c) {
			/* within one data chunk: the same offsets in data and parity */
			*lo = first * c + o % c;
			*hi = *lo + n;
			return;
		}
	}
	*lo = first * c;
	*hi = (last + 1) * c;
}

static void bit_range(const struct wib *w, uint64_t lo, uint64_t hi, uint64_t *first,
		      uint64_t *end)
{
	*first = lo / w->chunk_sectors;
	*end = hi ? (hi - 1) / w->chunk_sectors + 1 : 0;
	if (*end > w->nbits)
		*end = w->nbits;
}

/* The array's bitmap and the chunks [first, end) that [lo, hi) touches;
 * NULL when the array has no bitmap (and no chunks: first = end = 0). */
static struct wib *chunks_of(const struct array *a, uint64_t lo, uint64_t hi, uint64_t *first,
			     uint64_t *end)
{
	struct wib *w = a->wib;

	*first = *end = 0;
	if (w)
		bit_range(w, lo, hi, first, end);
	return w;
}

/*
 * Write the dirty pages to every member that carries the bitmap, a run of
 * pages at a time. A member that cannot take them is failed, as md does on a
 * bitmap write error. 0 when at least one member holds them. meta_lock held.
 */
static int flush_pages(struct array *a)
{
	struct wib *w = a->wib;
	size_t npages = w->area_bytes / WIB_PAGE;
	unsigned written = 0, failed = 0;

	/* page 0 holds the header, which meta.c rewrites (events) on its own */
	if (w->page_dirty[0])
		uraid_bitmap_encode(&a->bitmap, w->area);

	for (unsigned i = 0; i < a->nmembers; i++) {
		if (!meta_bitmap_target(a, i))
			continue;
		int64_t at = area_sector(a, i);
		int rc = at < 0 ? -EINVAL : 0;
		for (size_t p = 0; p < npages && !rc; p++) {
			if (!w->page_dirty[p])
				continue;
			size_t q = p;
			while (q < npages && w->page_dirty[q])
				q++;
			rc = member_pwrite_sync(a->members[i], w->area + p * WIB_PAGE,
						(q - p) * WIB_PAGE, (uint64_t)at + p * (WIB_PAGE / 512));
			p = q;
		}
		if (rc) {
			md_fail_metadata(a, i, rc, "bitmap");
			failed++;
		} else {
			written++;
		}
	}
	memset(w->page_dirty, 0, npages);
	atomic_fetch_add(&w->flushes, 1);
	if (failed)
		meta_record_change(a);
	return written ? 0 : -EIO;
}

static void mark_page(struct wib *w, uint64_t bit)
{
	w->page_dirty[(URAID_BITMAP_HEADER_BYTES + bit / 8) / WIB_PAGE] = 1;
}

/* One more write in the chunk if its bit is on disk (which also makes it young again). */
static bool enter_fast(struct wib *w, uint64_t c)
{
	uint32_t v = atomic_load_explicit(&w->chunk[c], memory_order_acquire);
	while (v & WIB_ONDISK)
		if (atomic_compare_exchange_weak(&w->chunk[c], &v, (v + 1) & ~WIB_AGE))
			return true;
	return false;
}

/*
 * On the metadata worker: one bitmap write for a reactor's waiting writes.
 * Their bits not on disk yet are set in memory and their pages marked here
 * (a flush for another batch may have taken pages already: page_dirty is
 * cleared even when it failed); a bit that a successful flush wrote is on
 * disk already and needs nothing more. meta_lock is taken here.
 */
static int batch_update(struct meta_batch *b, struct meta_wait *list)
{
	struct array *a = b->owner;
	struct wib *w = a->wib;
	bool any = false;
	int rc = 0;

	pthread_mutex_lock(&a->meta_lock);
	for (struct meta_wait *l = list; l; l = l->next) {
		struct wib_waiter *wt = waiter_of(l);
		for (uint64_t c = wt->slow; c < wt->end; c++)
			if (!(atomic_load(&w->chunk[c]) & WIB_ONDISK)) {
				uraid_bitmap_set(w->area, c);
				mark_page(w, c);
				any = true;
			}
	}
	if (any)
		rc = flush_pages(a);
	for (struct meta_wait *l = list; l && rc == 0; l = l->next) {
		struct wib_waiter *wt = waiter_of(l);
		for (uint64_t c = wt->slow; c < wt->end; c++)
			if (!(atomic_fetch_or(&w->chunk[c], WIB_ONDISK) & WIB_ONDISK))
				atomic_fetch_add(&w->bits_set, 1);
	}
	pthread_mutex_unlock(&a->meta_lock);
	if (rc)
		ulog(array_log(a), URAID_LOG_ERR, "%s: the write-intent bitmap could be written to no member",
			a->sb.set_name);
	return rc;
}

/* On the write's reactor: its bits are on disk (0), or it gives its counts back. */
static void batch_resume(struct meta_batch *b, struct meta_wait *l, int rc)
{
	struct wib_waiter *wt = waiter_of(l);

	if (rc) {
		struct wib *w = ((struct array *)b->owner)->wib;
		for (uint64_t c = wt->first; c < wt->end; c++)
			atomic_fetch_sub(&w->chunk[c], 1);
	}
	wt->resume(wt, rc);
}

int wib_start_write(struct array *a, unsigned ridx, uint64_t lo, uint64_t hi,
		    struct wib_waiter *wt)
{
	uint64_t first, end, c;
	struct wib *w = chunks_of(a, lo, hi, &first, &end);

	if (!w)
		return 0;
	for (c = first; c < end; c++)
		if (!enter_fast(w, c))
			break;
	/* all on disk, and no earlier write of this reactor waits for its
	   bits (meta_batch_idle: it would be overtaken) */
	if (c == end && meta_batch_idle(&w->batch[ridx]))
		return 0;

	/*
	 * Some bit is not on disk (or an earlier write waits): count the write
	 * in each chunk not counted yet and wait for the batch's update, which
	 * sets the bits and writes them. ONDISK
	 * only once the page is on the members, so that writers on other
	 * reactors wait for it too (in their own batch). A count keeps the
	 * sweep from clearing the chunk meanwhile.
	 */
	wt->first = first;
	wt->slow = c;
	wt->end = end;
	for (; c < end; c++)
		if (!enter_fast(w, c))
			atomic_fetch_add(&w->chunk[c], 1);
	meta_batch_wait(&w->batch[ridx], &wt->link);
	return WIB_WAIT;
}

void wib_end_write(struct array *a, uint64_t lo, uint64_t hi)
{
	uint64_t first, end;
	struct wib *w = chunks_of(a, lo, hi, &first, &end);

	for (uint64_t c = first; c < end; c++)
		atomic_fetch_sub_explicit(&w->chunk[c], 1, memory_order_release);
}

/* Does a chunk of [lo, hi) have one of the bits in mask? (no bitmap: every chunk does) */
static bool any_chunk_has(const struct array *a, uint64_t lo, uint64_t hi, uint32_t mask)
{
	uint64_t first, end;
	const struct wib *w = chunks_of(a, lo, hi, &first, &end);

	if (!w)
		return true;
	for (uint64_t c = first; c < end; c++)
		if (atomic_load_explicit(&w->chunk[c], memory_order_acquire) & mask)
			return true;
	return false;
}

bool wib_needs_resync(const struct array *a, uint64_t lo, uint64_t hi)
{
	return any_chunk_has(a, lo, hi, WIB_NEEDED);
}

/* A bit being set counts: its count is up before ONDISK is. */
bool wib_any_set(const struct array *a, uint64_t lo, uint64_t hi)
{
	return any_chunk_has(a, lo, hi, WIB_ONDISK | WIB_COUNT);
}

void wib_mark_needed(struct array *a, uint64_t lo, uint64_t hi)
{
	uint64_t first, end;
	struct wib *w = chunks_of(a, lo, hi, &first, &end);

	for (uint64_t c = first; c < end; c++)
		if (atomic_load(&w->chunk[c]) & WIB_ONDISK)
			atomic_fetch_or(&w->chunk[c], WIB_NEEDED);
}

void wib_resync_done(struct array *a, uint64_t hi)
{
	struct wib *w = a->wib;

	if (!w)
		return;
	uint64_t end = hi / w->chunk_sectors;
	if (hi >= w->sync_size)
		end = w->nbits;
	for (uint64_t c = 0; c < end && c < w->nbits; c++)
		atomic_fetch_and(&w->chunk[c], ~WIB_NEEDED);
}

/*
 * md's daemon: a chunk with no write in flight ages one step per sweep; on
 * the second it is cleared. Nothing is cleared while the array misses a
 * member (the bits are what a returning member needs) or still has to
 * resync. Writers that race with a clearing lose their compare-and-swap
 * and take the slow path: their bits are set again by an update that takes
 * this lock after the sweep has let it go.
 */
void wib_sweep(struct array *a, uint64_t now_ns)
{
	struct wib *w = a->wib;

	if (!w || now_ns < w->next_sweep_ns || (a->flags & URAID_ASSEMBLE_READONLY))
		return;
	uint32_t sleep_s = a->bitmap.daemon_sleep ? a->bitmap.daemon_sleep : 5;
	w->next_sweep_ns = now_ns + (uint64_t)sleep_s * 1000000000u;
	if (atomic_load(&a->degraded) || !atomic_load(&w->bits_set))
		return;
	pthread_mutex_lock(&a->meta_lock);
	if (a->wib != w) {
		/* removed meanwhile (uraid grow --bitmap=none): its bits are no
		   longer the array's, nor its pages on the members */
		pthread_mutex_unlock(&a->meta_lock);
		return;
	}
	/* a rebuild runs only while degraded: that check covers it */
	bool busy = a->resync_needed || atomic_load(&a->degraded);
	bool cleared = false;
	for (uint64_t c = 0; c < w->nbits && !busy; c++) {
		uint32_t v = atomic_load(&w->chunk[c]);
		if (!(v & WIB_ONDISK) || (v & (WIB_COUNT | WIB_NEEDED)))
			continue;
		if (!(v & WIB_AGE)) {
			atomic_compare_exchange_strong(&w->chunk[c], &v, v + (1u << WIB_AGE_SHIFT));
			continue;
		}
		if (!atomic_compare_exchange_strong(&w->chunk[c], &v, 0))
			continue;   /* a write came in */
		uraid_bitmap_clear(w->area, c);
		mark_page(w, c);
		atomic_fetch_sub(&w->bits_set, 1);
		cleared = true;
	}
	if (cleared) {
		/* bits were let go at these events: a member that left before them
		   cannot be caught up from the bitmap (md's events_cleared) */
		if (a->bitmap.events_cleared < a->sb.events) {
			a->bitmap.events_cleared = a->sb.events;
			w->page_dirty[0] = 1;
		}
		flush_pages(a);
	}
	pthread_mutex_unlock(&a->meta_lock);
}
