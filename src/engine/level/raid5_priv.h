/* SPDX-License-Identifier: MIT */
/*
 * RAID 4/5/6 inside the engine: what its files share with each other and
 * with the tests (tests/unit/test_raid5*.c) and the RAID 4/5/6 background
 * jobs (jobs/sync_raid5.c, which takes rows in priv->locks).
 *
 *   raid5.c          the level: level_raid5_ops, init/fini, piece size;
 *                    the map of how a write flows through the files below
 *   raid5_write.c    the write path (writes, write-zeroes, discards)
 *   raid5_read.c     the read path (healthy, degraded, read repair)
 *   raid5_gather.c   which writes go together: gathering and row holds
 *   raid5_plan.c     how a unit is written: RCW, RMW, FULL or DIRECT
 *   raid5_piece.c    one piece's life: free lists, row lock, member I/O,
 *                    unit buffers, rebuild, completion (its group's too)
 *   raid5_rowlock.c  the row-lock table (generic, raid5_rowlock.h)
 *   raid5_heads.c    the stripe cache: the bounded pool of stripe heads
 *
 * Each section below names the file that defines it.
 */
#ifndef URAID_ENGINE_RAID5_PRIV_H
#define URAID_ENGINE_RAID5_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/core/array.h"
#include "engine/level/raid5_rowlock.h"
#include "engine/md/reshape_state.h"
#include "io/reactor.h"

/* ---- the write planner (raid5_plan.c) ---- */

/*
 * How one unit of a stripe row (the same sector range in every chunk) is
 * written:
 * DIRECT  no live parity: write the live data chunks, nothing else;
 * RCW     reconstruct-write: read the untouched data, compute P/Q afresh;
 * RMW     read-modify-write: read old data of the written chunks and old
 *         P/Q, update P/Q by the difference;
 * FULL    read every readable block, rebuild the lost ones, compute P/Q
 *         afresh (two lost data chunks on RAID 6, or after a read error,
 *         whose block is then rewritten).
 */
enum r5_mode { R5_DIRECT, R5_RCW, R5_RMW, R5_FULL };

struct r5_plan_in {
	unsigned data_disks;
	unsigned npar;                  /* 1 (RAID 4/5) or 2 (RAID 6) */
	const uint8_t *written;         /* [data_disks]: 1 if the unit writes it */
	const uint8_t *lost;            /* [data_disks]: 1 if it cannot be read */
	bool p_lost, q_lost;            /* cannot be read (q_* ignored when npar == 1) */
	bool p_dead, q_dead;            /* cannot be written either (member gone) */
	bool force_full;                /* a read error happened: FULL */
	/* [data_disks] or NULL: the old block is in the stripe cache (no read) */
	const uint8_t *cached;
	bool p_cached, q_cached;
};

struct r5_plan {
	enum r5_mode mode;
	unsigned reads;                 /* member reads the mode needs */
	bool skip_q;                    /* FULL: Q is not read but recomputed */
};

/*
 * Choose the mode with the fewest reads: RCW when the untouched data are all
 * readable and it needs no more reads than RMW (so a full row needs none),
 * else RMW when the written chunks are readable, else FULL; DIRECT when no
 * parity can be written. Returns 0, or -EIO when more blocks are lost than
 * the parity covers.
 */
int r5_plan_write(const struct r5_plan_in *in, struct r5_plan *out);

/* ---- units (cut by raid5_read.c and raid5_write.c) ---- */

/* Largest unit in sectors (parity buffers; the zero block covers it). */
#define R5_SEG_SECTORS 2048u
/*
 * Units up to this size (small random writes) use the pages of the piece's
 * stripe head (raid5_heads.c), one per slot, rather than the reactor's
 * pool: a pool put writes its free-list link into a buffer that another
 * CPU's io-wq worker has just filled or read, a cache miss on every buffer
 * of every write. It is also md's page: a head is 4 KiB per member.
 */
#define R5_KEEP_BYTES 4096u

/* ---- gathering (raid5_gather.c) ---- */

/*
 * Gathering (raid5_gather.c): a write piece that holds its row takes the
 * write pieces queued behind it, of any reactor, into one write of their
 * union (a group: the leader plus R5_GATHER_MAX - 1 more at most), so a row
 * that a sequential stream covers in several pieces is written whole with
 * no reads; the pieces of other reactors complete on their own. A leader
 * that continues a sequential stream (where a recent write of any reactor
 * ended) and does not reach its row's end may hold the row, unstarted, for
 * the rest of the stream: until the group reaches the row's end, a waiter
 * it cannot take queues, R5_HOLD_NS pass, or its reactor has no RAID 4/5/6
 * member I/O of the array left in flight (looked at two trips through the
 * reactor's inbox later, so that the submitter can add to the stream
 * first). A partial write that starts a row without continuing a stream (a
 * stream's first, maybe), or continues one while the array's member I/O is
 * in flight on other reactors only, holds only those two trips.
 */
#define R5_GATHER_MAX 128u
#define R5_HOLD_NS 5000000ull
#define R5_SEQ_STREAMS 4

/* ---- the stripe cache (raid5_heads.c) ---- */

/*
 * One stripe head: a 4 KiB page per member (md's stripe_head), the unit
 * buffers of a small unit. A piece holds one while its row is in work.
 *
 * A head whose piece wrote a 4 KiB unit (a 4 KiB-aligned sector range of
 * its row in every chunk: md's stripe) keeps that unit's pages once the
 * piece is done, as md's stripe cache keeps an inactive stripe: it is then
 * "kept", found by (key, x) in the pool's hash, idle on its LRU list, and
 * the first head taken when no clean one is free. mem[s] is the member
 * whose content page s is (NULL: the page holds nothing) and gen[s] the
 * slot's generation (array_slot.gen) when it was; a page counts only while
 * both are still the slot's and the slot is usable (r5_head_page_counts):
 * the generation, bumped on every change of the slot's member or state,
 * so that a member struct freed and another allocated at its address
 * cannot pass for it.
 */
struct r5_head {
	struct r5_head *next;           /* free or spare list */
	uint8_t *pages;                 /* slot s: pages + s * R5_KEEP_BYTES */
	struct member **mem;            /* [n]: whose content each page is */
	uint32_t *gen;                  /* [n]: the slot's generation then */
	/* kept: the unit's row key (r5_row_key) and within-chunk sector */
	uint64_t key;
	uint32_t x;
	bool kept;
	struct r5_head *hnext;          /* hash chain */
	struct r5_head *lprev, *lnext;  /* LRU list of kept heads, oldest first */
};

/* Slot s's page of head h. */
static inline uint8_t *r5_head_page(const struct r5_head *h, unsigned s)
{
	return h->pages + (size_t)s * R5_KEEP_BYTES;
}

/*
 * Page s of h holds slot s's content as on its member now (have), or
 * nothing. gen is the slot's generation read (slot_gen) before the
 * caller looked whether the slot is usable: a change after that look
 * bumps it past what the page records.
 */
static inline uint32_t slot_gen(const struct array *a, unsigned s)
{
	return atomic_load_explicit(&a->slot[s].gen, memory_order_acquire);
}

static inline void r5_head_page_set(struct r5_head *h, const struct array *a, unsigned s,
				    uint32_t gen, bool have)
{
	h->mem[s] = have ? atomic_load_explicit(&a->slot[s].m, memory_order_relaxed) : NULL;
	h->gen[s] = gen;
}

/* Page s of h still holds slot s's content: the same member, and the slot
 * unchanged since (the caller also asks whether it is usable in the row). */
static inline bool r5_head_page_counts(const struct r5_head *h, const struct array *a,
				       unsigned s)
{
	return h->mem[s] && h->gen[s] == slot_gen(a, s) &&
	       h->mem[s] == atomic_load_explicit(&a->slot[s].m, memory_order_relaxed);
}

/* Heads allocated together (one resize's growth): freed at fini. */
struct r5_head_slab {
	struct r5_head_slab *next;
	struct r5_head *heads;
	uint8_t *pages;                 /* mapped: bytes long */
	struct member **mem;            /* the heads' mem arrays */
	uint32_t *gen;                  /* the heads' gen arrays */
	size_t bytes;
};

/* A piece waiting for a head: msg runs on r once w->head is set. */
struct r5_head_wait {
	struct r5_head_wait *next;
	struct r5_head *head;
	struct reactor *r;
	struct reactor_msg msg;
};

/* The pool (one per array, shared by its reactors under mu). */
struct r5_heads {
	pthread_mutex_t mu;
	struct r5_head *free;           /* clean heads (keep nothing) */
	/* kept heads (r5_head): idle, hashed by (key, x), oldest first */
	struct r5_head *lru_head, *lru_tail;
	struct r5_head **hash;
	unsigned hash_mask;
	unsigned nkept;                 /* read unlocked by r5_heads_drop */
	/*
	 * Kept heads per row, by a hash of the row key (R5_ROWKEPT buckets;
	 * rows sharing a bucket add up): changed under mu, read without it by
	 * a holder of the row's lock, who then skips the mutex when its row
	 * keeps nothing. Its row's keeps were made by earlier holders of the
	 * lock (ordered by it); other rows only add to the count, and an
	 * eviction only takes away a head that is gone: a 0 seen is true.
	 */
	uint32_t *rowkept;
	uint64_t hits, keeps, drops;
	uint64_t misses;                /* added to without mu (atomic) */
	/*
	 * Whether keeping pays (r5_heads_want_keep): a gauge read and written
	 * without mu (relaxed; a lost update only nudges it). A look that
	 * finds nothing lowers it by one, a hit raises it by R5_KEEP_GAIN;
	 * while it is 0 only a sample of the units is kept, enough to see
	 * hits come back. Written only when it changes: at 0 (random writes
	 * over more than the cache holds) the reactors only read it.
	 */
	uint32_t keep_score;
	/* heads beyond the size after a shrink: pages given back to the
	   system (madvise), kept for the next growth */
	struct r5_head *spare;
	struct r5_head_slab *slabs;
	unsigned n;                     /* pages per head: the members */
	unsigned size;                  /* at most this many in use */
	unsigned allocated;             /* free + in use (above size while shrinking) */
	unsigned spares;
	unsigned in_use, peak;          /* peak: since assembly or the last resize */
	uint64_t waits;                 /* pieces that found none free */
	struct r5_head_wait *wait_head, *wait_tail;
	/* faults in a grown head's pages, outside mu (r5_heads_populate;
	   tests put one around it that gives heads back meanwhile) */
	void (*populate)(struct r5_heads *hs, uint8_t *pages, size_t bytes);
};

/* size heads of n pages; 0 or -ENOMEM. */
int r5_heads_init(struct r5_heads *hs, unsigned pages_per_head, unsigned size);
/* Fault pages in now (MADV_POPULATE_WRITE, else a write per page). */
void r5_heads_populate(struct r5_heads *hs, uint8_t *pages, size_t bytes);
/* Every head must have come back. */
void r5_heads_fini(struct r5_heads *hs);
/* New size: more heads allocated now (any thread but a reactor's; 0 or
 * -ENOMEM, nothing changed); fewer: the pages of the heads beyond it are
 * given back to the system, of those in use as they come back. */
int r5_heads_resize(struct r5_heads *hs, unsigned size);
/* true: w->head is set. false: w is queued; w->msg.fn (set before) runs on
 * w->r once w->head is set. */
bool r5_head_get(struct r5_heads *hs, struct r5_head_wait *w);
/* Give a head back (any reactor); the first waiter gets it. */
void r5_head_put(struct r5_heads *hs, struct r5_head *h);
void r5_heads_stats(struct r5_heads *hs, unsigned *size, unsigned *in_use, unsigned *peak,
		    uint64_t *waits);
/*
 * Row data (the caller holds the row's lock, so no other piece of the row
 * keeps or takes a head meanwhile):
 * r5_head_take_kept  the head kept for (key, x), if any, hands its pages
 *                    to h (h's pages go to it, and it becomes clean);
 *                    true: h->mem tells which pages hold content
 * r5_head_put_kept   give h back keeping its pages for (key, x); another
 *                    head kept for them is made clean
 * r5_heads_drop      forget what is kept of row key over within-chunk
 *                    sectors [x0, x1): members written by other means
 * r5_heads_drop_all  forget everything kept
 */
bool r5_head_take_kept(struct r5_heads *hs, struct r5_head *h, uint64_t key, uint32_t x);
void r5_head_put_kept(struct r5_heads *hs, struct r5_head *h, uint64_t key, uint32_t x);
void r5_heads_drop(struct r5_heads *hs, uint64_t key, uint32_t x0, uint32_t x1);
void r5_heads_drop_all(struct r5_heads *hs);
/* Should a written unit (key, x) be kept? now_ns: the reactor's clock,
 * which turns the sample over. */
bool r5_heads_want_keep(struct r5_heads *hs, uint64_t key, uint32_t x, uint64_t now_ns);

/* ---- one piece (raid5_piece.c): a stripe row's worth of one request ---- */

/* what a piece does */
enum { OP_READ, OP_WRITE, OP_ZERO, OP_DISCARD };

/* per-slot flags of a piece */
enum {
	SF_BAD = 0x01,          /* a read failed: lost for reading, still written */
	SF_HAVE = 0x02,         /* sbuf holds the unit's old content */
	SF_WANT = 0x04,         /* read piece: this data chunk needs a rebuild */
	SF_CORRECTED = 0x08,    /* rewritten after a read error */
	SF_DEAD = 0x10,         /* not usable in this unit: r5_snap_live's view */
	SF_CACHED = 0x20,       /* the head's page holds the slot's content (stripe cache) */
};

struct r5_piece;

struct r5_sio {
	struct member_io mio;
	struct r5_piece *pc;
	uint32_t slot;
	bool repl;                      /* to the slot's replacement */
	int fail_res;                   /* its error, while the failure is recorded */
};

struct r5_piece {
	struct r5_piece *next;          /* free list */
	struct array_req *rq;
	struct array *a;
	struct r5_priv *priv;
	struct r5_cache *cache;         /* of rq's reactor (looked at on every member I/O) */
	int op;
	uint8_t *buf;
	uint64_t mbase;                 /* member sector of the row */
	/* during a reshape: per slot, sectors its geometry's data lies above
	   the member's data_offset (md/reshape_state.h); NULL otherwise */
	const uint64_t *shift;
	bool reshape_new;               /* in the new geometry: its rows are other rows */
	uint32_t r0, r1;                /* row-relative sectors of the piece */
	uint32_t C, d, n, npar, nsyn;
	int rw_flags;
	int result;
	unsigned outstanding;
	bool new_bad;                   /* a read of this round failed */
	bool locked;
	/* gathering (raid5_gather.c) */
	bool seq;                       /* a write continuing a stream (of any reactor) */
	bool held;                      /* leader holding its row for more of the stream */
	bool short_hold;                /* only until the submitter's batch is in */
	struct rowlock lk;
	/* group: the pieces written with this one (the leader), in queue order */
	struct r5_piece *gnext, *gtail;
	unsigned gcount;
	struct r5_piece *hnext;         /* the reactor's held leaders */
	uint64_t hold_t0;
	/* continuations: where the piece's owner goes on */
	void (*after_lock)(struct r5_piece *pc);        /* the row is held */
	void (*after_io)(struct r5_piece *pc);          /* a round of member I/O is done */
	void (*after_hold)(struct r5_piece *pc);        /* a held leader is let go */
	/* the unit being worked on */
	uint32_t ux, uy, ulen;          /* within-chunk sectors, bytes */
	uint32_t next_x, end_x;
	struct r5_plan plan;
	/* per slot / per data index, sized at allocation */
	int16_t *didx;                  /* slot -> data index; -1 P, -2 Q */
	uint8_t *sflag;                 /* slot -> SF_* */
	uint8_t **sbuf;                 /* slot -> pool buffer of ulen, or NULL */
	struct r5_head_wait hw;         /* its stripe head (hw.head), or waiting for one */
	/* the head's pages hold the row's unit (key, x) as on the members
	   after the piece's last unit: kept by r5_piece_finish */
	bool keep;
	uint32_t keep_x;
	unsigned nbufs;                 /* slots with an sbuf (0: r5_bufs_put has nothing to do) */
	uint8_t *wr, *dl;               /* data index -> written, lost */
	uint8_t **src;                  /* data index -> new data over the unit (writes) */
	void **blocks;                  /* nsyn + 2 */
	struct r5_sio *sio;             /* slot -> member I/O */
	struct r5_sio rsio;             /* the write to a slot's replacement (one slot at a time) */
	struct uraid_stripe st;
	/* the parity log's (parity_log.h), while the unit waits in it */
	struct r5_piece *log_next;
	void (*log_resume)(struct r5_piece *pc, int res);
	int log_res;
	struct reactor_msg log_msg;
};

struct r5_counters {
	uint64_t groups;                /* writes of more than one piece */
	uint64_t grouped;               /* pieces written in such groups */
	uint64_t holds, hold_timeouts, hold_idle;
};

/* What the piece layer tells the watcher of a reactor (r5_cache.watch). */
enum r5_event {
	R5_EV_IO_DONE,          /* a member I/O of a piece completed here */
	R5_EV_QUEUED,           /* a piece of this reactor queued for a row */
};

/*
 * Per reactor (and array): changed by that reactor's thread only; others
 * read mio_out and ends (relaxed atomics). The free list, the reactor and
 * mio_out are the piece layer's (raid5_piece.c); the rest is gathering's
 * (raid5_gather.c).
 */
struct r5_cache {
	struct r5_piece *free;
	struct r5_priv *priv;
	struct reactor *r;              /* set by the first piece */
	/*
	 * Called by the piece layer on its events while non-NULL (one load per
	 * member I/O otherwise). raid5_gather.c sets it while it holds leaders
	 * here, so the piece layer never calls up into gathering.
	 */
	void (*watch)(struct r5_cache *c, enum r5_event ev);
	struct r5_piece *held;          /* leaders holding their rows */
	unsigned mio_out;               /* member I/O of the array in flight here
					   (others read it: r5_mio_out_add) */
	unsigned ends_next;
	bool in_poll, repoll;           /* hold checks are not reentered */
	bool idle_posted;               /* idle_msg is queued */
	unsigned idle_hops;
	struct reactor_msg idle_msg;
	struct r5_counters cnt;         /* for tests and tuning */
	/* where recent write pieces of this reactor ended; other reactors read
	   them too, so they have a cache line of their own */
	uint64_t ends[R5_SEQ_STREAMS] __attribute__((aligned(64)));
} __attribute__((aligned(64)));

/* The level's state (raid5.c makes and frees it). */
struct r5_priv {
	struct array *a;
	struct rowlock_table locks;     /* rows of pieces and of sync_raid5.c's units */
	struct r5_heads heads;          /* the stripe cache (raid5_heads.c) */
	void *zero;                     /* R5_SEG_SECTORS of zeroes, read only */
	unsigned nreactors;
	struct r5_cache *cache;
	uint64_t hold_ns;               /* R5_HOLD_NS; tests change it */
	uint64_t (*now)(void);          /* monotonic ns; tests replace it */
};

/* The reactor's state of pc (free list, member I/O count, holds). */
/* The piece's reactor: where the parity log resumes it (reactor_post) and
   where its hooks run (parity_log.h). */
static inline struct reactor *r5_piece_reactor(const struct r5_piece *pc)
{
	return &pc->rq->er->r;
}

static inline struct r5_cache *r5_cache_of(const struct r5_piece *pc)
{
	return pc->cache;
}

/* Only c's reactor changes c->mio_out; others read it (relaxed, no lock). */
static inline void r5_mio_out_add(struct r5_cache *c, int d)
{
	__atomic_store_n(&c->mio_out, c->mio_out + (unsigned)d, __ATOMIC_RELAXED);
}

/*
 * Once a request completes, its submitter may close the array from another
 * thread: code that looks at c after completing pieces keeps the array open
 * meanwhile with r5_pin/r5_unpin (counted as in flight, which close drains);
 * r5_unpin is its last access.
 */
static inline void r5_pin(struct r5_cache *c)
{
	atomic_fetch_add(&c->priv->a->counters[c - c->priv->cache].in_flight, 1);
}

static inline void r5_unpin(struct r5_cache *c)
{
	atomic_fetch_sub(&c->priv->a->counters[c - c->priv->cache].in_flight, 1);
}

static inline bool r5_live(const struct r5_piece *pc, unsigned s)
{
	/* in a reshape's old geometry, a slot whose old content is not in
	   sync (a parity gap's old parity slot, md/reshape_state.h) is missing */
	if (pc->shift && !pc->reshape_new && pc->a->reshape->old_unsynced[s])
		return false;
	return slot_ok_at(pc->a, s, pc->mbase);
}

/*
 * Look once, per unit, at which slots are usable (SF_DEAD on the others);
 * the unit's plan, its reads and its parity math then use that one view.
 * Another reactor may fail a member at any moment: a plan made with one
 * view and reads issued with a later one would leave a planned read
 * unissued and its stale buffer in the parity (a wrong P/Q that a rebuild
 * later turns into wrong data). Reading a slot that fails after the look is
 * sound: the piece holds its row, so no write has skipped that member here,
 * and a member that really went away fails the read (SF_BAD).
 */
static inline void r5_snap_live(struct r5_piece *pc)
{
	for (unsigned s = 0; s < pc->n; s++) {
		if (r5_live(pc, s))
			pc->sflag[s] &= (uint8_t)~SF_DEAD;
		else
			pc->sflag[s] |= SF_DEAD;
	}
}

/* Unusable in this unit: out of the view, or its read failed. */
static inline bool r5_lost(const struct r5_piece *pc, unsigned s)
{
	return (pc->sflag[s] & (SF_DEAD | SF_BAD)) != 0;
}

/* A piece from the reactor's free list (allocated on first need); NULL: ENOMEM. */
struct r5_piece *r5_piece_get(struct array_req *rq);
/* Free every reactor's free pieces (the level's fini; none may be in use). */
void r5_pieces_free_all(struct r5_priv *priv);
/* Fill pc for one piece of rq; 0 or -EINVAL. */
int r5_piece_setup(struct r5_piece *pc, struct array_req *rq, int op, uint64_t sector,
		   uint32_t nsect, uint8_t *buf);
/*
 * Take the row's lock, then run next (now, or later on this reactor).
 * While queued, the piece is a waiter that r5_piece_of_waiter recognises.
 */
void r5_piece_lock(struct r5_piece *pc, void (*next)(struct r5_piece *pc));
/* The piece that queued w through r5_piece_lock; NULL when w is another owner's. */
struct r5_piece *r5_piece_of_waiter(struct rowlock *w);
/*
 * Release buffers and the lock, count corrected reads, complete the piece
 * and the pieces of its group (each on its own reactor).
 */
void r5_piece_finish(struct r5_piece *pc, int res);
/*
 * Member I/O of slot s; pc->after_io runs when the last one of a round is
 * done. A failed read marks the slot SF_BAD and sets new_bad; a failed write
 * fails the member (md_fail_slot) and, if the array cannot go on, makes
 * the piece's result -EIO; a failed discard sets new_bad.
 */
void r5_submit(struct r5_piece *pc, unsigned s, enum member_op kind, void *buf,
	       uint64_t sector, uint32_t bytes);
/* Within-chunk range [*s,*e) of data chunk k the piece covers; false: none. */
bool r5_chunk_range(const struct r5_piece *pc, unsigned k, uint32_t *s, uint32_t *e);
/* Zeroes of at least a unit, 4096-aligned. */
void *r5_zero(struct r5_piece *pc);
/* New content of data chunk k over the current unit. */
void *r5_new_data(struct r5_piece *pc, unsigned k);
/* Get slot s's unit buffer; false when out of memory. */
bool r5_need_buf(struct r5_piece *pc, unsigned s);
/* Return the unit buffers, forget what they held. */
void r5_bufs_put(struct r5_piece *pc);
/* pc->blocks in recovery order: old data (new where written if use_new), P, Q. */
void r5_fill_blocks(struct r5_piece *pc, bool use_new);
/* Rebuild every block not read in this unit (at most npar); 0 or -EIO. */
int r5_rebuild(struct r5_piece *pc);
/* Read slot s's unit into its buffer unless it holds it already. */
void r5_read_slot(struct r5_piece *pc, unsigned s);

/* The row's key in the row-lock table: during a reshape, rows of the new
 * geometry are kept apart from the old one's (same numbers, other places),
 * so that neither gathering nor the lock mixes them. */
static inline uint64_t r5_row_key(const struct r5_piece *pc)
{
	return pc->mbase / pc->C | (pc->reshape_new ? 1ull << 62 : 0);
}

/* ---- gathering and holds: the functions (raid5_gather.c) ---- */

/* Set up the gathering state of priv's reactors (the level's init). */
void r5_gather_init(struct r5_priv *priv);
/*
 * Does a write of [sector, sector+nsect) continue where a recent write of
 * any reactor ended? Notes where it ends, for the next one.
 */
bool r5_stream_note(struct r5_cache *c, uint64_t sector, uint32_t nsect);
/*
 * For a write piece ld that holds its row, not started: take the writes
 * queued behind it into its group, then decide whether to hold the row for
 * more. Returns false when ld is to be written now; true when it is held:
 * go(ld) then runs later on this reactor, when the hold ends.
 */
bool r5_gather_or_hold(struct r5_piece *ld, void (*go)(struct r5_piece *ld));

/* ---- the paths (level_raid5_ops hooks) ---- */

/* raid5_read.c */
void r5_read(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf);
/* raid5_write.c */
void r5_write(struct array_req *rq, uint64_t sector, uint32_t nsect, uint8_t *buf);
void r5_discard(struct array_req *rq, uint64_t sector, uint32_t nsect, bool zeroes);

#endif
