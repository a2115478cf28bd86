/* SPDX-License-Identifier: MIT */
/*
 * The write-back cache of one array (a disk's volatile write cache): it sits
 * between the request core and the levels. Writes are copied into 4 KiB
 * pages and acknowledged; the pages are destaged later as ordinary write
 * requests (write gate, bitmap bits, level), gathered in offset order. Reads
 * are served from the pages when they cover them, else read from the
 * members and overlaid with the pages (pinned meanwhile). FLUSH waits until
 * everything written before it is destaged, then flushes the members.
 *
 * Files: wcache.c (pages, the request hooks: write, read, flush, the ops
 * written through), wcache_destage.c (choosing, issuing and completing
 * destage writes; the kick, the tick and the drain).
 *
 * Locking: one mutex per cache (`lock`) guards every field below unless
 * said otherwise; it is held for lookups and copies, never across I/O or a
 * callback into the request core. Memory is allocated at creation only.
 */
#ifndef URAID_ENGINE_WCACHE_H
#define URAID_ENGINE_WCACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uraid/engine.h>

#include "io/reactor.h"

struct array;
struct parity_log;
struct array_req;
struct engine_reactor;

#define WC_PAGE_BYTES 4096u
#define WC_PAGE_SECTORS 8u
#define WC_EPOCHS 1024u              /* flush epochs tracked at once (a ring) */
#define WC_DESTAGE_SLOTS 64u         /* destage writes in flight at most */
#define WC_DESTAGE_MAX_PAGES 1024u   /* one destage write: at most 4 MiB (whole rows) */
#define WC_DESTAGE_JWB_PAGES 256u    /* the journal's write-back mode: 1 MiB */
/* destage bytes in flight at most (the reactors' buffer pools keep 256 MiB
   each: 64 slots of 4 MiB would outgrow them, every buffer then mapped
   and faulted in anew) */
#define WC_DESTAGE_INFLIGHT_BYTES (16u << 20)
#define WC_JWB_TRICKLE 4u            /* journal write-back: see jwb_narrow */
#define WC_JSTREAMS 8u               /* journal write-back: streams told apart (jwb_stream) */
#define WC_DEFAULT_BYTES (64ull << 20)
#define WC_MIN_BYTES (1ull << 20)
#define WC_MAX_BYTES (64ull << 30)

enum wc_page_state { WC_PG_FREE, WC_PG_CLEAN, WC_PG_DIRTY };

struct wc_page {
	uint64_t pgno;               /* array offset / 4096 */
	uint64_t birth;              /* allocation sequence (a read's pins, wcache.c) */
	uint64_t epoch;              /* DIRTY: counted in epoch_dirty[epoch % WC_EPOCHS] */
	uint64_t redirty_epoch;      /* first write after the destage snapshot */
	uint32_t prev, next;         /* free, clean (FIFO by cleaning) or dirty list */
	uint32_t gen;                /* bumped by every change of its bytes or bits */
	uint32_t pins;               /* member reads in flight that will overlay it */
	uint8_t valid, dirty;        /* per 512-byte sector */
	uint8_t state;               /* enum wc_page_state */
	bool inflight;               /* a destage write carries it */
	/* that write reads its bytes in place (no copy, wcache_destage.c
	   build_one): they must not change until it completes */
	bool inplace;
	/* journal write-back (wcache_set_journal): the record in the journal
	   holding its bytes (parity_log.h wb_add), and the older one it keeps
	   until jref is logged; 0: none */
	uint32_t jref, jold;
	bool redirtied;              /* written since that destage's snapshot */
	/* the journal failed while a write to it was being logged, and bytes
	   acknowledged before were only here and in that journal: kept (never
	   reused), reads of it fail (-EIO) */
	bool jlost;
};

/* One destage write: the pages it carries and their generation at the copy. */
struct wc_destage {
	struct wcache *c;
	struct uraid_io io;
	struct engine_reactor *er;
	uint8_t *buf;                /* from the reactor's pool, or the pages themselves (inplace) */
	bool inplace;
	uint32_t npages;
	uint32_t page[WC_DESTAGE_MAX_PAGES];
	uint32_t gen[WC_DESTAGE_MAX_PAGES];
	uint8_t mask[WC_DESTAGE_MAX_PAGES];      /* sectors carried */
	uint8_t dirty0[WC_DESTAGE_MAX_PAGES];    /* sectors dirty at the copy */
	struct wc_destage *next_free;
};

/* A dirty page as the destage sweep sees it (sorted by pgno). */
struct wc_sweep_ent {
	uint64_t pgno;
	uint32_t idx;
};

struct wcache {
	struct array *a;
	pthread_mutex_t lock;
	_Atomic uint32_t policy;     /* URAID_WRITE_BACK or URAID_WRITE_THROUGH */
	uint64_t bytes;
	uint32_t npages;
	uint8_t *data;               /* npages * 4096 */
	struct wc_page *pg;          /* npages + 3 (the list heads) */
	uint32_t *bucket;            /* hash: index + 1 */
	/*
	 * The hash chains apart from the pages (per page index: its pgno
	 * while hashed, the next in its chain as index + 1, 0 = end): a lookup
	 * reads 12 bytes a step that stay in the CPU's caches, not a 72-byte
	 * page of a table larger than them. A 4 KiB write of the journal's
	 * write-back mode looks up its page and the others of its 4 KiB row
	 * (wcache.c journal_can_cache), most of them not cached, each step a
	 * miss on the page table before.
	 */
	uint64_t *hkey;
	uint32_t *hnext;
	uint32_t hmask;
	uint32_t nfree, nclean, ndirty;
	uint64_t dirty_sectors;
	uint64_t alloc_seq;
	uint32_t high_water, low_water;   /* dirty pages */
	bool pressure;               /* above high water until back under low */
	bool idle_kick;              /* the tick saw writes quiet: destage all */
	/* a write completed a stripe row (every page dirty, whole): destage
	   now, while its bytes are still in the CPU's caches (wc_row_done) */
	bool row_ready;
	_Atomic bool draining;       /* close or the switch to through: destage all */
	uint64_t last_write_ns;      /* engine_now_ns of the last cached write (tick) */

	/* flush epochs: a flush waits until no page dirty in its epoch or before */
	uint64_t cur_epoch, oldest_epoch;
	uint32_t epoch_dirty[WC_EPOCHS];
	/* the oldest epoch holding data lost (a destage the array could not
	   write): every flush of that epoch or later fails; 0: none */
	uint64_t lost_epoch;
	bool backoff;                /* a destage hit -ENOMEM/-EAGAIN: retry at the tick */

	/* requests waiting (array_req lists through wc_next) */
	struct array_req *space_head, *space_tail;   /* writes: no room (FIFO) */
	struct array_req *flush_wait;                /* flushes: older dirty data */
	struct array_req *epoch_head, *epoch_tail;   /* flushes: no free epoch (FIFO) */
	/* reads overlapping an op written through that is in flight: they
	   wait for it to end (they would otherwise pin pages it waits for) */
	struct array_req *read_wait;
	/* ops written through, in flight (wc_prev/wc_next); WC_MARK_WAITING:
	   still waiting for destages in flight on their range */
	struct array_req *through_list;

	/* destage */
	struct wc_destage *slots, *free_slots;
	uint32_t destages_in_flight;
	uint64_t destage_bytes;      /* their length */
	struct wc_sweep_ent *sweep;
	uint32_t sweep_n, sweep_pos;
	bool *running;               /* per reactor, its thread only: in wcache_destage_run */
	_Atomic bool kick_posted;
	struct reactor_msg kick_msg;
	/* destage_done and kick_msg running (they use the cache after the
	   request that brought them is counted done): the drain waits for 0 */
	_Atomic uint32_t busy;

	struct uraid_write_cache_status st;   /* counters (policy, sizes filled at status) */

	/*
	 * The journal's write-back mode (md's r5c write-back): jpl is the
	 * array's journal (kept once set: pages may name its records), jwb
	 * says cached writes are logged before they complete. jbar: ops
	 * written through that its FLUSH-only logging would make wait for
	 * every older record (not whole 4 KiB pages): while one is in the
	 * cache, no write is cached and everything is destaged.
	 */
	struct parity_log *jpl;
	bool jwb;
	uint32_t jbar;
	bool jpress;                 /* the journal runs low: destage everything */
	uint64_t jwb_through;        /* writes the journal had no room for: through */
	/*
	 * Ops written through waiting until no page of their stripe rows is
	 * in the log and not yet on the members (WC_MARK_JROW, take_through):
	 * while one waits, everything is destaged.
	 */
	uint32_t jrow_wait;
	uint32_t njlost;             /* pages with jlost */
	uint64_t jbar_waits, jrow_waits;     /* for status (wcache_journal_counts) */
	/* the ends (sectors) of the last writes' streams, journal write-back
	   (wcache.c jwb_stream): a write that continues one goes through */
	uint64_t jstream[WC_JSTREAMS];
	unsigned jstream_next;
};

/* Create the cache of a (bytes 0: the default); 0, -EINVAL (size out of
 * range) or -ENOMEM. Not yet attached (a->wc). */
int wcache_create(struct array *a, uint64_t bytes, uint32_t policy, struct wcache **out);
void wcache_destroy(struct wcache *c);

/*
 * The request hook, on the request's reactor, before the write gate: true
 * when the cache took the request (it completes or resumes it later through
 * array_req_route / array_req_end); false: it goes on as usual now.
 */
bool wcache_take(struct wcache *c, struct array_req *rq);
/* A request the cache marked ends (req_finish, or ended early): overlay
 * pinned pages onto a read's data; a written-through op that succeeded
 * drops its range's cached sectors (failed: the dirty ones stay). */
void wcache_req_end(struct wcache *c, struct array_req *rq, bool ok);

/* Every dirty page destaged (close, switch to through): any thread but a reactor's. */
int wcache_drain(struct wcache *c);
/* Free the clean pages nobody uses (after the switch to through: reads
 * then skip the cache's lock while it stays empty). */
void wcache_drop_clean(struct wcache *c);
/* Under the lock: a write deciding its path sees the old policy or the new
 * one, and the drain that follows a switch to through sees its writes. */
void wcache_set_policy(struct wcache *c, uint32_t policy);
void wcache_status(struct wcache *c, struct uraid_write_cache_status *st);
/* The journal's write-back mode on (pl: the journal) or off (pl NULL); off
 * only with nothing dirty (after a drain). Under the cache's lock. */
/* The journal write-back mode's waits and writes through (status). */
void wcache_journal_counts(struct wcache *c, uint64_t *partial_waits, uint64_t *row_waits,
			   uint64_t *full_through);
void wcache_set_journal(struct wcache *c, struct parity_log *pl);
/* The tick hook (array_tick_add). */
void wcache_tick(struct array *a, uint64_t now_ns);

/* ---- between wcache.c and wcache_destage.c (lock held where said) ---- */
void wc_destage_run(struct wcache *c, struct engine_reactor *er);
void wc_kick(struct wcache *c);
/*
 * The journal's write-back path (md acknowledges once the data is in the
 * log and destages later from raid5d): the destage runs on another reactor
 * than er, the one that serves the writer, so that its read-modify-writes
 * do not hold back the writer's next request (one reactor: er's, at its
 * next poll). From er's thread.
 */
void wc_kick_away(struct wcache *c, struct engine_reactor *er);
bool wc_want_destage(const struct wcache *c);     /* lock held */
void wc_after_change(struct wcache *c);           /* lock held: wake what can go on */
void wc_make_clean(struct wcache *c, struct wc_page *p);   /* lock held */
void wc_page_free_if_empty(struct wcache *c, struct wc_page *p);   /* lock held */
/* A dirty page to the dirty list's head or tail (lock held; wcache.c says why). */
void wc_dirty_requeue(struct wcache *c, struct wc_page *p, bool to_head);
void wc_drop_behind(struct wcache *c, const uint32_t *idx, uint32_t n);   /* lock held */
bool wc_range_blocked(const struct wcache *c, uint64_t lo, uint64_t hi);   /* lock held */
struct wc_page *wc_lookup(const struct wcache *c, uint64_t pgno);         /* lock held */
/* The same for a destage: ops still waiting for their stripe rows
   (WC_MARK_JROW) let it pass (lock held). */
bool wc_destage_blocked(const struct wcache *c, uint64_t lo, uint64_t hi);
void wc_epoch_advance(struct wcache *c);           /* lock held */
void wc_post(struct array_req *rq, void (*fn)(struct reactor *r, struct reactor_msg *m));

#endif
