/* SPDX-License-Identifier: MIT */
/*
 * The engine's inside: engine and per-reactor context, the assembled array,
 * the request that one uraid_io becomes, and the per-level ops table (in the
 * manner of SPDK's raid module: a descriptor plus hooks; the request is cut
 * centrally and each piece handed to the level).
 *
 * Files (engine/): core/engine.c (engine, reactors, threads, tick hooks), md/assemble.c
 * (members -> array, md's rules), md/meta.c (superblock updates), md/meta_worker.c
 * (the thread that writes them, off the reactors), md/member_state.c (member
 * failures and roles, meta_lock), core/array.c (submit, split, complete, status),
 * core/latency.c (the request latency histogram),
 * level/ (one descriptor per level, level.h and registry.c; their I/O in
 * single_io.c for linear and RAID 0, mirror_io.c for RAID 1 and 10, raid5*.c for
 * RAID 4/5/6), jobs/ (background work: sync.c runs it, sync_raid5.c and
 * sync_mirror.c do the levels' steps, auto_recover.c starts jobs by itself).
 * docs/architecture.md draws the whole.
 */
#ifndef URAID_ENGINE_ARRAY_H
#define URAID_ENGINE_ARRAY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uraid/bitmap.h>
#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/superblock.h>

#include "common/log.h"
#include "io/bufpool.h"
#include "io/member.h"
#include "io/reactor.h"
#include "engine/core/latency.h"
#include "engine/level/level.h"
#include "engine/md/meta_worker.h"
#include "engine/md/wib.h"

struct array;
struct array_req;
struct parity_log;
struct readahead;
struct reshape_state;
struct wib;

/* ---- engine ---- */

struct mpiece;
struct mgroup;

/* What a reactor's thread owns besides the ring: pools, free requests. */
struct engine_reactor {
	struct reactor r;
	struct uraid_engine *e;
	struct bufpool pool;
	struct array_req *free_reqs;    /* reused request structures */
	struct mpiece *free_mpieces;    /* reused member-I/O pieces (mio.c) */
	struct mgroup *free_mgroups;
	pthread_t thread;               /* URAID_ENGINE_THREADS only */
	_Atomic bool stop;
	struct reactor_msg wake_msg;    /* wakes the thread to see stop */
};

struct uraid_engine {
	unsigned nreactors;
	uint32_t flags;
	struct engine_reactor *reactors;
	pthread_mutex_t lock;           /* the arrays list */
	struct array *arrays;
	uint64_t next_tick_ns;          /* the tick's thread only */
	struct ulog log;                /* every message of the engine, its arrays and server */
	/* uraid_engine_opts.changed: a member's state or a job changed */
	void (*changed)(void *opaque);
	void *changed_opaque;
	/* URAID_ENGINE_THREADS: the thread that writes metadata and runs the
	   tick, so that reactors never block on either (md/meta_worker.c) */
	struct meta_worker *worker;
};

/*
 * Housekeeping at most every few ms: each open array's tick hooks
 * (array_tick_add), under the engine's lock; on the metadata worker, or after
 * polls of reactor 0 when the caller drives the reactors.
 */
void engine_tick(struct uraid_engine *e);
/* One of an array's housekeeping hooks (idle clean marking, the bitmap
 * daemon, the automatic start of background jobs): now_ns is engine_now_ns. */
typedef void array_tick_fn(struct array *a, uint64_t now_ns);
#define ARRAY_TICKS_MAX 6
uint64_t engine_now_ns(void);
/* Free the reactor's cached member-I/O pieces (mio.c). */
void mio_free_lists(struct engine_reactor *er);

/* ---- the array ---- */

/* Counted by the reactor that runs the request; summed by whoever asks. */
struct array_counters {
	_Atomic uint64_t in_flight;
	_Atomic uint64_t writes_in_flight;
	_Atomic uint64_t last_write_ns;     /* for idle clean marking */
	_Atomic uint64_t started;           /* requests begun (written by its reactor only) */
	/* requests past the cache at the level, by the parity of the range
	   hold's epoch they began in (core/freeze.c array_hold_range) */
	_Atomic uint64_t level_in_flight[2];
	struct latency_counts latency;      /* requests completed (latency.h) */
} __attribute__((aligned(64)));

/* One slot of the array. */
struct array_slot {
	/* m and state change under meta_lock (rarely) and are read by every
	   reactor without it: atomic, so a reader sees one or the other */
	struct member *_Atomic m;       /* NULL: missing or failed and closed */
	_Atomic(enum uraid_member_state) state;
	uint32_t dev_number;            /* index into dev_roles */
	/* REBUILDING: member sectors below this hold the slot's data (recovery) */
	_Atomic uint64_t rebuilt;
	/* md's replacement (feature 0x10): a member taking over from m while m
	   serves; writes go to both in the rows below repl_rebuilt (the copy
	   made so far), reads go to m. Set and cleared under meta_lock. */
	struct member *_Atomic repl;
	_Atomic uint64_t repl_rebuilt;
	/* bumped (slot_changed) after m or state changes: fail, remove, a
	   rebuild or replacement taking the slot, a reshape; a cache of the
	   slot's content (the RAID 4/5/6 stripe cache) counts a page only
	   while the generation it saw is still the slot's */
	_Atomic uint32_t gen;
};

#define SYNC_ENDED_KEPT 4        /* background jobs' outcomes kept besides the last */

struct array {
	struct uraid_engine *e;
	struct array *next;             /* in e->arrays */
	/* this array is a member of another (nested RAID, md/stack.c) */
	struct stack_lower *stack_lower;
	struct uraid_geom geom;
	uint32_t flags;                 /* URAID_ASSEMBLE_* */

	/* members: slots first, then spares and stale ones (kept for status) */
	struct array_slot slot[URAID_MAX_MEMBERS];
	unsigned nmembers;
	struct member *members[URAID_MAX_MEMBERS];
	enum uraid_member_state member_state[URAID_MAX_MEMBERS];
	/* members taken out with uraid_array_remove_member: their descriptors
	   point at /dev/null (see manage.c) and they are freed at close */
	struct member *retired[URAID_MAX_MEMBERS];
	unsigned nretired;
	int member_slot[URAID_MAX_MEMBERS];

	/*
	 * Allocation lookups (allocation.c): at most ALLOC_ON_WORKER of this
	 * array's are queued on the metadata worker at a time, so superblock
	 * and bitmap updates never wait behind many; the others wait here in
	 * FIFO order and are handed to the worker as earlier ones finish.
	 * alloc_lock guards the three, held for a list step only (reactors
	 * take it).
	 */
	pthread_mutex_t alloc_lock;
	unsigned alloc_running;
	struct uraid_alloc_query *alloc_wait_head, *alloc_wait_tail;

	/* the superblock as it will next be written (freshest member's) */
	pthread_mutex_t meta_lock;      /* state changes and superblock writes */
	struct uraid_sb sb;
	unsigned minor;                 /* 1.<minor> */
	bool has_bitmap;
	struct uraid_bitmap_sb bitmap;
	/*
	 * On disk not active (md's in_sync): resync_offset there is
	 * resync_checkpoint (MaxSector unless a resync is needed), and a write
	 * marks the array active (resync_offset 0) before it reaches a member.
	 */
	bool in_sync;
	bool resync_needed;             /* assembled dirty, and not resynced or repaired since */
	/*
	 * md's MD_JOURNAL_CLEAN (raid5_run, super_1_sync): the write journal
	 * was replayed at a clean start, so marking the array active keeps
	 * resync_offset MaxSector: after a crash the replay makes parity right
	 * and no resync runs. Not set when the start was dirty (the resync goes
	 * on, as md's) nor without the journal (read-only). Unlike md, uraid
	 * logs some writes as FLUSH only (not whole 4 KiB pages, a RAID 6
	 * missing a member: raid5_journal.c), which the replay cannot make
	 * whole: the first such write clears it for the rest of the run
	 * (array.c's gate: resync_offset 0 on disk before it goes on), so a
	 * crash under one still resyncs. Written under meta_lock, read by the
	 * reactors.
	 */
	_Atomic bool journal_clean;
	_Atomic bool journal_unclean_wanted;    /* such a write waits in the gate */
	/* a resync stopped on request is not resumed by itself until another
	   job ends or the array is assembled again (jobs/auto_recover.c) */
	bool resync_held;
	bool last_update_was_dirty;     /* md may step events back on clean */
	/* assemble.c/meta.c: each member's own superblock as last read or
	   written (its per-device fields, and its events for md's rule of
	   leaving spares alone on clean<->active transitions) */
	struct uraid_sb member_sb[URAID_MAX_MEMBERS];
	/* a SPARE that holds a slot in dev_roles (recovering: feature 0x2, or a
	   replacement: 0x10) keeps that role when superblocks are written; -1 */
	int member_pending_slot[URAID_MAX_MEMBERS];
	/* resync_offset written while not active: MaxSector when clean, else
	   where an interrupted resync stands (the value found at assembly) */
	uint64_t resync_checkpoint;
	/* the bitmap header's events were behind the superblocks': md treats
	   every bit as set; its events are not advanced until this is cleared */
	bool bitmap_stale;
	/* the bitmap's sync range is the array's (sync_size in the header is
	   made to match): bitmap_found_sync is what the header said at
	   assembly, and chunks past it count as dirty (wib_init);
	   bitmap_sectors is the bitmap's room on each member (4 KiB pages) */
	uint64_t bitmap_found_sync;
	uint64_t bitmap_sectors;
	/* the bitmap's bits at run time (wib.c); NULL without one */
	struct wib *wib;
	/* write gate (array.c): ACTIVE lets writes through; CLEAN and MARKING
	   park them in their reactor's gate batch until the metadata worker has
	   marked the array active (one batch per reactor) */
	_Atomic int wstate;
	struct meta_batch *gate;
	_Atomic unsigned degraded;
	unsigned idle_clean_ms;
	/* the stripe cache's size asked for (stripe heads; 0: the default); a
	   level without stripes keeps it and ignores it */
	_Atomic unsigned stripe_cache;
	pthread_mutex_t stripe_cache_lock;      /* one resize at a time */
	/* request counters, one cache line per reactor so reactors never share one */
	struct array_counters *counters;

	/* what the level is and its hooks (level/level.h); set by assembly */
	const struct level *level;
	const struct level_ops *ops;    /* level->io once its init succeeded, else NULL */
	void *level_priv;               /* e.g. the stripe lock table */
	/* md's PPL or write journal around RAID 4/5/6 member writes
	   (level/parity_log.h); NULL when the array has neither */
	struct parity_log *plog;
	struct parity_log *plog_retired;        /* removed by grow, freed at close */
	/* tests only (tests/unit/test_grow_ppl_crash.c): called after each
	   write of grow_ppl.c's ordered steps, where a kill could land */
	void (*grow_ppl_hook)(void *arg, unsigned step);
	void *grow_ppl_hook_arg;
	/* tests only (tests/unit/test_reshape_last.c): called by the reshape
	   job after each piece of step [lo, hi) reached the superblocks
	   (position pos), the step's rows still held; `last`: the last step */
	void (*reshape_piece_hook)(void *arg, uint64_t lo, uint64_t hi, uint64_t pos, bool last);
	void *reshape_piece_hook_arg;

	/* background work (sync.c): the running job, the last one's end state */
	struct sync_job *_Atomic sync;
	pthread_mutex_t sync_lock;      /* starting, ending, sync_last */
	pthread_mutex_t sync_start_lock;   /* one start at a time (sync.c start) */
	struct uraid_sync_status sync_last;
	/* the jobs that ended before sync_last's, newest first (uraid_array_sync_job) */
	struct uraid_sync_status sync_ended[SYNC_ENDED_KEPT];
	uint64_t sync_jobs;             /* jobs started so far: the next one's number - 1 */
	_Atomic uint32_t sync_min_kib, sync_max_kib;
	unsigned sync_warned;           /* auto recovery complained once (engine_tick) */
	_Atomic uint64_t sync_retry_ns; /* no automatic rebuild before this time */
	/* a takeover applied in memory whose restripe has not started yet
	   (md/grow.c takeover_restripe): no job but the reshape starts, or a
	   rebuild of the new slot would write the bare takeover to the disks */
	_Atomic bool starts_held;

	/* md's array_size (uraid grow --array-size): the size exported, below
	   the geometry's; 0: the geometry's. In memory only, as md keeps it. */
	_Atomic uint64_t export_sectors;
	/* uraid grow's steps waiting for a job to end (md/grow.c), under
	   meta_lock; freed at close */
	struct grow_pending *grow_pending;
	/* the run-time bits uraid grow replaced or removed (a list through
	   wib.retired_next, newest first), kept until close: the tick may
	   still look at them (md/grow_bitmap.c) */
	struct wib *wib_retired;

	/* the write-back cache (engine/cache/wcache.h): NULL until write-back is
	   first asked for; then it stays until close, policy in it */
	struct wcache *_Atomic wc;
	uint64_t wc_bytes;              /* uraid_assemble_opts.cache_bytes */
	pthread_mutex_t wc_set_lock;    /* uraid_array_set_write_cache, one at a time */
	/* the journal's mode (URAID_JOURNAL_*; under wc_set_lock) */
	uint32_t journal_mode;
	/* read-ahead of sequential streams (cache/readahead.c) */
	struct readahead *ra;

	/* a RAID 4/5/6 reshape in progress (md/reshape_state.h), NULL when
	   none; set and cleared while the array is frozen, its position moved
	   while the rows it passes are held (jobs/reshape.c) */
	struct reshape_state *reshape;

	/* freezing (core/freeze.c): FREEZE_*, and the requests parked
	   meanwhile, one list per reactor (allocated at the first freeze) */
	_Atomic int freeze_state;
	struct freeze_park *park;
	/* a range hold (core/freeze.c array_hold_range): requests reaching the
	   level inside array sectors [hold_lo, hold_hi) are parked (hold_hi 0:
	   none); hold_epoch counts holds, so that a hold can wait for the
	   requests that reached the level before it */
	_Atomic uint64_t hold_lo, hold_hi;
	_Atomic uint32_t hold_epoch;

	/* engine_tick's hooks, in the order registered (array_tick_add) */
	array_tick_fn *ticks[ARRAY_TICKS_MAX];
	/* atomic: a hook can be added from the control thread (uraid grow)
	   while the engine's tick walks them; the entry is stored first */
	_Atomic unsigned nticks;
};

/* ---- requests ---- */

/*
 * One uraid_io inside the engine. It lives on the reactor it was submitted
 * to; pieces (one per chunk or stripe) count down `pending`.
 */
struct array_req {
	struct array *a;
	struct engine_reactor *er;
	struct uraid_io *io;
	struct reactor_msg msg;         /* hand-over between reactors */
	struct array_req *next;         /* free list / waiting lists */
	struct meta_wait gate_wait;     /* waiting for the array to be marked active */
	struct wib_waiter wib_wait;     /* waiting for the bitmap (wib.h) */
	uint8_t *data;                  /* io->buf, or an aligned bounce buffer */
	bool bounced;
	int pending;                    /* pieces not yet completed (+1 while splitting) */
	uint64_t start_ns;              /* reached its reactor (the latency histogram) */
	int result;                     /* first error */
	/* the write-back cache's (wcache.c): what it marked, its waiting lists
	   and their message */
	uint8_t wc_marks;               /* WC_MARK_* */
	uint64_t wc_birth;              /* PINNED: pages born up to here are pinned */
	uint64_t wc_lo, wc_hi;          /* THROUGH: array sectors [lo, hi) */
	uint64_t wc_epoch;              /* a waiting flush's epoch */
	/* JROW: the first page of its stripe rows that may still be in the
	   journal (wcache.c rows_logged), and the first the destage may still
	   take first for it (wcache_destage.c jrow_first) */
	uint64_t wc_jnext, wc_jpick;
	struct array_req *wc_next, *wc_prev;
	struct reactor_msg wc_msg;
	struct io_op wc_op;             /* completed at the next poll, not inside submit */
	/* counted in its reactor's level_in_flight[hold_parity] */
	bool hold_counted;
	uint8_t hold_parity;
};

#define WC_MARK_PINNED  0x1u    /* a read from the members overlaid at its end */
#define WC_MARK_THROUGH 0x2u    /* written through; its range holds destages back */
#define WC_MARK_WAITING 0x4u    /* THROUGH, waiting for destages on its range */
#define WC_MARK_EPOCH   0x8u    /* a flush given its epoch while it waited for a slot */
#define WC_MARK_JBAR    0x10u   /* THROUGH, journal write-back: waits for a clean cache */
#define WC_MARK_JROW    0x20u   /* THROUGH with the journal: no caching in its stripe rows */
#define WC_MARK_JROWW   0x40u   /* JROW, waiting for their logged pages to be destaged */

/* For the cache (engine/cache/): go on past the cache (write gate, bitmap,
 * level), or end a request that never reached the level, on its reactor. */
void array_req_route(struct array_req *rq);
void array_req_end(struct array_req *rq, int res);
/* uraid_io.flags inside the engine: the array's own request (the write
 * cache's destage write, read-ahead's prefetch), not a client's; clients
 * cannot set it (uraid_array_submit refuses unknown flags) */
#define ARRAY_IO_INTERNAL 0x80000000u
/* with it, a write cache destage whose every page is whole and named by a
 * logged write-journal record that stays in the log until this write is
 * done (wcache_destage.c): the journal logs only the rows' parity (md's
 * R5_InJournal pages), a replay takes the data from the earlier records */
#define ARRAY_IO_JLOGGED 0x40000000u

/* Start the array's own request on er (it sets ARRAY_IO_INTERNAL): at once
 * from er's thread, else posted to er (which must be polled: its own thread,
 * URAID_ENGINE_THREADS), counted in er's in_flight meanwhile. The request
 * path of a client's, but not cached again,
 * not offered to read-ahead, not in the latency histogram, and its done
 * runs on er before the array's in_flight drops (so close waits for it). */
void array_submit_internal(struct array *a, struct engine_reactor *er, struct uraid_io *io);
/* A request parked by a freeze (core/freeze.c), started again on er's thread. */
void array_req_resume_parked(struct array *a, struct engine_reactor *er, struct uraid_io *io);
/* A client read that read-ahead did not answer after all: on to the level
 * (past a range hold, core/freeze.h, which may park it there). */
void array_req_to_level(struct array_req *rq);

/* Called by a level when one of its pieces of rq is done (res 0 or -errno). */
void array_piece_done(struct array_req *rq, int res);

/* Mark the array clean when writes have been quiet long enough (a tick hook). */
void array_idle_check(struct array *a, uint64_t now_ns);
/*
 * Run fn on every engine tick while the array is open. Called during
 * assembly, before the array joins its engine's list (engine_tick does not
 * see it yet); the hooks go when it leaves the list at close. 0, or -ENOSPC.
 */
int array_tick_add(struct array *a, array_tick_fn *fn);

/* ---- levels ---- */

/*
 * A level's hooks. The array cuts each request into pieces that do not
 * cross a chunk (linear, 0, 1, 10) or a stripe row (4, 5, 6), takes one
 * pending count per piece, and calls submit for each; the level issues
 * member I/O on rq->er->r and calls array_piece_done(rq, res) exactly once
 * per piece. `sector` and `nsect` are array sectors; `buf` points to the
 * piece's bytes in rq->data.
 */
struct level_ops {
	const char *name;
	int (*init)(struct array *a);               /* level_priv; may be NULL */
	void (*fini)(struct array *a);
	void (*read)(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf);
	void (*write)(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf);
	/* DISCARD and WRITE_ZEROES of one piece (zeroes: buf is NULL) */
	void (*discard)(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes);
	/* the largest piece: a chunk, or a stripe row of data */
	uint64_t (*piece_sectors)(const struct array *a, uint64_t sector);
	/* the stripe cache (RAID 4/5/6; NULL: the level has none): resize it
	   (0 or -ENOMEM, nothing changed), and its state (used set) */
	int (*stripe_cache_set)(struct array *a, unsigned size);
	void (*stripe_cache_get)(struct array *a, struct uraid_stripe_cache_status *st);
	/* the one member place a read of [sector, sector + nsect) is read
	   from and nothing else, while nothing is in its way (a lost slot);
	   false: the level's read must do more (NULL: never) */
	bool (*direct_map)(const struct array *a, uint64_t sector, uint32_t nsect, unsigned *slot,
			   uint64_t *msector);
};

/*
 * A read sent straight to one member (core/direct_read.c; md/stack.c's
 * fast path): on er's thread, true when the level reads array sectors
 * [sector, sector + nsect) from one member and nothing is in the way (no
 * freeze, reshape, parity log, write cache; read-ahead is passed by); the member and its
 * sector then in *m and *msector, the read counted in er's in_flight, and
 * the caller issues it and calls array_direct_read_end once it is done
 * (with the reactor's time at the start: latency). False: nothing counted,
 * the request path takes it. A failed member read goes the request path too.
 */
bool array_direct_read_begin(struct array *a, struct engine_reactor *er, uint64_t sector,
			     uint32_t nsect, struct member **m, uint64_t *msector);
void array_direct_read_end(struct array *a, struct engine_reactor *er, uint64_t start_ns);

extern const struct level_ops level_linear_ops, level_raid0_ops, level_raid1_ops,
	level_raid10_ops, level_raid5_ops;

/* ---- shared helpers for levels ---- */

/*
 * Is any member another array of this engine (the RAID 0 of a nested
 * RAID 50/60, md/stack.c)? Its I/O goes only through member_submit and
 * the member_*_sync calls: code that reads or writes members' descriptors
 * directly (reshape, grow's size probe) refuses such an array.
 */
static inline bool array_has_stacked_member(const struct array *a)
{
	for (unsigned i = 0; i < a->nmembers; i++)
		if (a->members[i] && a->members[i]->stack)
			return true;
	return false;
}

/* Is the slot's member usable for I/O? */
/* Slot s's member or state was changed (after the stores; meta_lock held). */
static inline void slot_changed(struct array *a, unsigned s)
{
	atomic_fetch_add_explicit(&a->slot[s].gen, 1, memory_order_release);
}

static inline bool slot_ok(const struct array *a, unsigned slot)
{
	return a->slot[slot].m && a->slot[slot].state == URAID_MEMBER_IN_SYNC;
}

/*
 * Usable for the stripe row that starts at member sector `row_sector`: in
 * sync, or being rebuilt and already past that row. The rebuild holds a row's
 * lock while it writes it and moves `rebuilt` on before it lets go, so a
 * request holding the row sees one answer for its whole life (RAID 4/5/6).
 */
static inline bool slot_ok_at(const struct array *a, unsigned slot, uint64_t row_sector)
{
	if (slot_ok(a, slot))
		return true;
	return a->slot[slot].m && a->slot[slot].state == URAID_MEMBER_REBUILDING &&
	       row_sector < atomic_load_explicit(&a->slot[slot].rebuilt, memory_order_acquire);
}

/* The replacement of the slot, if it holds the row at `row_sector` (RAID 4/5/6;
 * for RAID 1/10 the member sector where a piece starts on that slot). */
static inline struct member *slot_repl_at(const struct array *a, unsigned slot,
					  uint64_t row_sector)
{
	struct member *r = atomic_load_explicit(&a->slot[slot].repl, memory_order_acquire);
	if (r && row_sector < atomic_load_explicit(&a->slot[slot].repl_rebuilt, memory_order_acquire))
		return r;
	return NULL;
}

/* Member failures and corrected reads: md/member_state.h (md_fail_slot, ...). */

/* Where the array's messages go: its engine's log (stderr for an array
 * built without an engine, as unit tests do). */
/* The size clients see: md's array_size when set, else the geometry's. */
static inline uint64_t array_export_sectors(const struct array *a)
{
	uint64_t e = atomic_load(&a->export_sectors);
	return e && e < a->geom.array_sectors ? e : a->geom.array_sectors;
}

static inline const struct ulog *array_log(const struct array *a)
{
	return a->e ? &a->e->log : NULL;
}

/* Per-reactor buffers for levels (parity, read-modify-write). */
static inline void *req_buf(struct array_req *rq, size_t len)
{
	return bufpool_get(&rq->er->pool, len);
}
static inline void req_buf_put(struct array_req *rq, void *buf, size_t len)
{
	bufpool_put(&rq->er->pool, buf, len);
}

/* ---- the stripe cache (stripe_cache.c) ---- */

/* Within URAID_STRIPE_CACHE_MIN..MAX? */
bool array_stripe_cache_valid(unsigned size);
/* size x 4 KiB x members within uraid_stripe_cache_memory_limit()? */
bool array_stripe_cache_fits(unsigned size, unsigned members);
/* Its state, from the level (RAID 4/5/6) or the value kept (others). */
void array_stripe_cache_status(struct array *a, struct uraid_stripe_cache_status *st);

/* ---- assembly and metadata (assemble.c, meta.c) ---- */

/* Open and validate members, fill a (geometry, slots, sb); 0 or -errno + err. */
int assemble_members(struct array *a, const struct uraid_assemble_opts *o,
		     char *err, size_t errlen);

/*
 * Write the array's superblock (a->sb with per-member fields) to every live
 * member, bitmap header first, synchronously and with O_DSYNC semantics.
 * Called with meta_lock held.
 */
int meta_write_all(struct array *a);
/* clean -> active before the first write (resync_offset 0, events+1; MaxSector
   with a clean journal). Called with meta_lock held. */
int meta_mark_active(struct array *a);
/* A write the journal cannot log whole: journal_clean cleared and, when the
   array is active on disk, resync_offset 0 written (events+1). meta_lock held. */
int meta_journal_unclean(struct array *a);
/*
 * active -> clean after idle and on close: resync_offset = resync_checkpoint
 * (MaxSector unless a resync is needed), events back by one when the last update
 * was the matching clean->active one (md's can_decrease_events), else +1.
 * Called with meta_lock held.
 */
int meta_mark_clean(struct array *a);
/*
 * While the array is not active on disk (in_sync): superblocks rewritten
 * when resync_offset there is not what resync_needed and resync_checkpoint
 * say now (a resync checkpoint, its end, a repair's end), as md's in_sync
 * superblock updates carry recovery_cp. Active: nothing to do, the next
 * clean marking writes it. 0 or -errno; meta_lock held.
 */
int meta_write_resync_offset(struct array *a);
/* A change of the member set (fail, remove): events+1 and every superblock
 * rewritten, as md_update_sb with MD_SB_CHANGE_DEVS. meta_lock held. */
int meta_record_change(struct array *a);
/* Does member i carry the bitmap (md writes it to every non-faulty member
 * that has a role, recovering ones too)? meta_lock held. */
bool meta_bitmap_target(const struct array *a, unsigned i);
/* Would meta_record_change write member i's superblock (attached, not
 * faulty)? meta_lock held. */
bool meta_sb_target(const struct array *a, unsigned i);
/* Member i's superblock alone, composed from a->sb as meta_record_change
 * would (events as a->sb has them, not bumped): for a change that must
 * reach the members in an order of its own (grow_ppl.c). Not failed on an
 * error: 0 or -errno, the caller decides. meta_lock held. */
int meta_write_one(struct array *a, unsigned i);
/* a->degraded from the slots' states, as md's raid5_calc_degraded counts
 * them: a slot a reshape fills (not In_sync in md until the end: RAID 5 ->
 * 6's Q slot, a parity gap's) counts as missing. meta_lock held. */
void meta_recount_degraded(struct array *a);
/* Slot s counts as in sync for the degraded count and the survival rule:
 * slot_ok and not a slot a reshape in progress fills. */
bool meta_slot_in_sync(const struct array *a, unsigned s);
/* Requests in flight on every reactor (background work yields to them). */
uint64_t array_foreground_in_flight(const struct array *a);
/* Client requests begun so far: background work compares two readings to
 * tell whether clients were active in between (a request can begin and end
 * between two looks at in_flight, e.g. a copy from a tmpfs member). */
uint64_t array_foreground_started(const struct array *a);
/* A background write waiting at the write gate (embedded in the job's unit). */
struct array_gate_wait {
	struct meta_call call;
	struct array *a;
	unsigned reactor;
	void (*resume)(struct array_gate_wait *w, int rc);
};
/*
 * Background writes pass the write gate as requests do (the array is marked
 * active first), counted on the given reactor, from that reactor's thread.
 * true: they may go on now. false: the marking is left to the metadata
 * worker and w->resume(w, rc) runs on the reactor later: rc 0, they are
 * counted and go on; -errno, they are not counted.
 */
bool array_gate_enter(struct array *a, unsigned reactor, struct array_gate_wait *w,
		      void (*resume)(struct array_gate_wait *w, int rc));
void array_gate_leave(struct array *a, unsigned reactor);
/*
 * Check member m's areas (its own superblock sb: data, bad-block log; the
 * array's bitmap) against its device and each other, and set its wall
 * (io/member.h) to them. 0, or -EINVAL with one line in err naming m.
 * (assemble.c; also for members added later)
 */
int array_member_areas(const struct array *a, struct member *m, const struct uraid_sb *sb,
		       bool slot_holder, char *err, size_t errlen);
/* The same in two halves, for a change that must be all or nothing (a
 * reshape's end, jobs/reshape.c): the check as if the array's level were lv,
 * the areas in *ar, nothing set; then the wall set from them. */
int array_member_areas_check(const struct array *a, const struct level *lv,
			     const struct member *m, const struct uraid_sb *sb, bool slot_holder,
			     struct uraid_sb_areas *ar, char *err, size_t errlen);
void array_member_set_areas(struct member *m, const struct uraid_sb_areas *ar);
/* The bitmap's sync range: per-member sectors (RAID 1/4/5/6), or the array's
 * where the level counts it so (RAID 10: sync_in_array_sectors). */
uint64_t array_bitmap_sync_sectors(const struct uraid_geom *g);
/* Can the level run with the slots that are IN_SYNC now (a slot a reshape
 * fills does not count: meta_slot_in_sync)? (assemble.c; md's rules) */
bool array_level_survives(const struct array *a);

#endif
