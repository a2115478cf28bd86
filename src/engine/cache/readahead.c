// SPDX-License-Identifier: MIT
/*
 * Read-ahead for sequential read streams.
 *
 * Detection. A read that starts exactly where an earlier one ended
 * continues a candidate (RA_CANDS slots of them per reactor, so random
 * reads only ever churn these small tables); the RA_CONFIRM-th contiguous
 * read makes the candidate a stream, which takes one of
 * URAID_READ_AHEAD_STREAMS windows (a free one, else the least recently
 * used one with no prefetch in flight). Streams come from any connection
 * and any reactor: the stream table is the array's, under one mutex
 * (ra->lock), held for table steps only. A read belongs to a stream when it
 * starts within a window behind the stream's front or a few request lengths
 * past it, which lets the requests of a client with several in flight
 * arrive out of order.
 *
 * A random read must cost next to nothing, on every reactor at once: it
 * takes no lock, writes nothing another reactor writes, and looks at a
 * fixed number of places. Each reactor keeps candidates of its own, in
 * slots by a hash of where their next read would start: only its thread
 * writes them, the others read them (atomics), so a stream whose reads
 * come on several reactors (a client's connections) is still seen: a read
 * that continues another reactor's candidate makes one of its own, one
 * step further. Whether a read is near a stream is first asked of a copy of
 * each stream's front kept in struct readahead (atomics, written under the
 * lock, read without it). Only a read near a stream, or one that confirms
 * a candidate, takes the lock.
 *
 * Prefetch. A window is a ring of nseg buffers of one unit each: the
 * level's largest piece (a stripe row on RAID 4/5/6, a chunk elsewhere:
 * level_ops.piece_sectors), or a chunk when the window cannot hold two
 * rows, or half the window when it cannot hold two chunks either. Unit
 * k of the array goes to buffer k % nseg. A stream's prefetches run ahead
 * of its front until the window is full; a buffer is reused once the
 * stream's reads have passed it. Prefetches are reads of the array's own
 * through the normal path (array_submit_internal: pieces, the level), so a
 * degraded array reads ahead from parity or the other copy as a client
 * read would. They are issued on the reactor after the reader's (when the
 * engine has a thread per reactor: prefetch_reactor), off the thread a
 * reader at QD 1 waits for. All buffers are allocated when the window is set (at
 * assembly, or by uraid_array_set_read_ahead): none on the I/O path.
 *
 * Streams whose reads are longer than half the window are tracked but not
 * read ahead: a window cannot hold such a read and the one after it.
 *
 * Serving. A read wholly covered by one stream's buffers is copied from
 * them: the buffers are pinned under the lock and copied outside it. A
 * caller that takes lent bytes (URAID_IO_LEND: the NBD server, which sends
 * them) gets a pointer into the buffer instead, which stays pinned until it
 * is given back: one 128 KiB copy fewer on the reactor, whose time a
 * sequential reader at QD 1 waits for. If a
 * buffer it needs is still being read, the request waits on that buffer
 * and looks again when it lands (on its own reactor). A read covered only
 * in part goes to the members whole: simpler, and a sequential reader
 * whose reads straddle the window's front is rare once the window runs
 * ahead.
 *
 * Never stale. Every write-type request calls ra_invalidate when it starts
 * and again when it has reached the members, before it is acknowledged:
 * valid buffers over the range are emptied, and buffers in flight get a
 * new generation, so the prefetch's data is dropped when it lands (it may
 * have read the members before the write did). The second call is what
 * closes the gap of a prefetch issued while the write was under way.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/cache/readahead.h"
#include "engine/core/array.h"

#define RA_CANDS 32             /* candidates per reactor: slots, a power of two */
#define RA_CONFIRM 3            /* contiguous reads after the first that make a stream */
#define RA_PROTECT (4 * RA_CANDS) /* a continued candidate is kept this many reads */
#define RA_AHEAD_REQS 4         /* a read may start this many of its lengths past the front */
#define RA_ALIGN 4096u
#define RA_FILL_MAX 64          /* prefetches one read may start */
#define RA_DEFAULT_MIN (256u << 10)
#define RA_DEFAULT_MAX (8u << 20)

enum { SEG_EMPTY, SEG_INFLIGHT, SEG_VALID };

struct ra_set;

/* One buffer of a window: one unit of the array, or part of one. */
struct ra_seg {
	struct uraid_io io;             /* its prefetch, while in flight */
	struct ra_set *set;
	unsigned reactor;               /* where its prefetch was issued */
	uint8_t *buf;                   /* unit bytes */
	uint64_t off;                   /* array bytes it holds (INFLIGHT, VALID) */
	uint32_t len;
	uint32_t gen;                   /* a new one each time its data is dropped */
	uint32_t issued_gen;            /* gen when its prefetch was issued */
	uint8_t state;                  /* SEG_* */
	bool used;                      /* a byte of it was served */
	unsigned pins;                  /* reads copying from it outside the lock */
	struct array_req *waiters;      /* reads waiting for it to land (rq->next) */
};

struct ra_stream {
	bool live;                      /* holds the window */
	uint64_t next;                  /* the stream's front: where its next read should start */
	uint64_t pf_next;               /* prefetches issued up to here */
	uint64_t stamp;                 /* last use, for replacement */
	uint64_t req_len;               /* its reads' length: the largest seen in order */
	struct ra_seg *seg;             /* nseg of them, a ring by unit number */
};

/* A candidate, in the slot of its next read's hash. Written by its
 * reactor only, read by all (a torn pair only misjudges one read). */
struct ra_cand {
	_Atomic uint64_t next;          /* end of its last read; 0: unused */
	_Atomic uint64_t meta;          /* contiguous reads after the first (low 8
					   bits), the largest of its reads (above) */
	uint64_t stamp;                 /* its reactor's only */
};

/* One reactor's candidates; lines of their own so that the reactors do not
 * write to one line. */
struct ra_cands {
	uint64_t stamp;                 /* its reads not near a stream */
	uint32_t set_gen;               /* ra->set_gen they were noted under */
	struct ra_cand cand[RA_CANDS];
} __attribute__((aligned(64)));

/* The windows of one read-ahead size; replaced whole when the size changes. */
struct ra_set {
	struct readahead *ra;
	uint64_t window, unit;          /* bytes */
	unsigned nseg;
	unsigned inflight;              /* its prefetches in flight */
	unsigned pinned;                /* pins of its buffers (reads copying, bytes lent) */
	bool retired;                   /* replaced: freed when both reach 0 */
	struct ra_set *next_retired;
	uint8_t *mem;
	struct ra_stream stream[URAID_READ_AHEAD_STREAMS];
	struct ra_seg segs[];
};

struct readahead {
	struct array *a;
	bool prefetch_memory;           /* read ahead of in-memory members too (tests) */
	pthread_mutex_t lock;
	_Atomic(struct ra_set *) set;   /* NULL: off (read without the lock as a hint) */
	/* buffers of the current set that are not empty (valid or in flight),
	   changed under lock, read without it: 0 lets a write skip the lock */
	_Atomic unsigned nonempty;
	struct ra_set *retired;         /* replaced sets with prefetches in flight */
	uint64_t stamp;
	/* each stream's front and read length (0: no stream), copied from the
	   current set's streams under the lock, read without it: a read far
	   from all of them is no stream's (stream_near) */
	_Atomic uint64_t hint_next[URAID_READ_AHEAD_STREAMS];
	_Atomic uint64_t hint_req[URAID_READ_AHEAD_STREAMS];
	_Atomic uint64_t hint_window;
	_Atomic uint32_t set_gen;       /* a new one with each set: candidates start over */
	unsigned ncands;                /* reactors */
	bool pf_other;                  /* prefetches on the next reactor (prefetch_reactor) */
	struct ra_cands *cands;         /* one per reactor */
	/* counters (under lock) */
	uint64_t prefetched, served, served_reads, wasted;
	uint64_t waited;                /* reads queued on a prefetch in flight */
	uint64_t invalidated;           /* read ahead (or in flight), dropped by a write */
};

static struct readahead *RA(struct array *a) { return a->ra; }

/* After a change of stream i of the current set s (lock held). */
static void hint_sync(struct readahead *ra, const struct ra_set *s, unsigned i)
{
	const struct ra_stream *st = &s->stream[i];
	atomic_store_explicit(&ra->hint_req[i], st->req_len, memory_order_relaxed);
	atomic_store_explicit(&ra->hint_next[i], st->live ? st->next : 0, memory_order_relaxed);
}

/* ---- sizes ---- */

/* The level's largest piece, in bytes: a stripe row or a chunk. */
static uint64_t level_unit(const struct array *a)
{
	uint64_t s = a->ops->piece_sectors(a, 0);
	if (s > a->geom.array_sectors)
		s = a->geom.array_sectors;
	return s * 512;
}

/*
 * Four units. A unit's buffer is reused only once the stream has left it:
 * the prefetch of unit k + n (n units in the window) is issued when the
 * stream leaves unit k, and has the stream's reads of the n - 1 units in
 * between to land in (three units here, one with two). It is the members' latency
 * under load that must fit in there: loop devices, whose kernel workers
 * copy a prefetch when the scheduler lets them, on 2 CPUs at a load of
 * 8-10 (RAID 5 x4, chunk 512 KiB, 128 KiB reads at QD 1 through NBD):
 * with two rows 0.8-1.2 % of the reads found their row still in flight
 * and waited for the whole of it, with four 0.1-0.3 %; the stream's
 * throughput followed (medians of 3 interleaved runs 511 and 944 MiB/s;
 * read-ahead off 284).
 */
static uint64_t default_window(const struct array *a)
{
	uint64_t w = 4 * level_unit(a);
	if (w < RA_DEFAULT_MIN)
		w = RA_DEFAULT_MIN;
	if (w > RA_DEFAULT_MAX)
		w = RA_DEFAULT_MAX;
	return w;
}

/* Units of whole pieces (rows) when two fit in the window, else of whole
 * chunks, else half the window. */
static uint64_t unit_for(const struct array *a, uint64_t window)
{
	uint64_t u = level_unit(a), chunk = (uint64_t)a->geom.chunk_sectors * 512;
	if (u && 2 * u <= window)
		return u;
	if (chunk && chunk < u && 2 * chunk <= window)
		return chunk;
	u = window / 2 & ~(uint64_t)(RA_ALIGN - 1);
	return u ? u : RA_ALIGN;
}

static struct ra_set *set_new(struct readahead *ra, uint64_t window)
{
	uint64_t unit = unit_for(ra->a, window);
	unsigned nseg = window / unit < 2 ? 2 : (unsigned)(window / unit);
	unsigned n = URAID_READ_AHEAD_STREAMS * nseg;
	struct ra_set *s = calloc(1, sizeof(*s) + n * sizeof(struct ra_seg));
	if (!s)
		return NULL;
	s->mem = aligned_alloc(RA_ALIGN, (size_t)n * unit);
	if (!s->mem) {
		free(s);
		return NULL;
	}
	s->ra = ra;
	s->window = window;
	s->unit = unit;
	s->nseg = nseg;
	for (unsigned i = 0; i < n; i++) {
		s->segs[i].set = s;
		s->segs[i].buf = s->mem + (size_t)i * unit;
	}
	for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++)
		s->stream[i].seg = &s->segs[i * nseg];
	return s;
}

static void set_free(struct ra_set *s)
{
	if (s) {
		free(s->mem);
		free(s);
	}
}

/* ---- dropping data (lock held) ---- */

/* Every change of a buffer's state goes here: ra->nonempty follows the
 * current set's (a retired set's buffers no longer count). */
static void seg_state(struct readahead *ra, struct ra_seg *g, uint8_t state)
{
	if (!g->set->retired && (g->state == SEG_EMPTY) != (state == SEG_EMPTY)) {
		if (state == SEG_EMPTY)
			atomic_fetch_sub(&ra->nonempty, 1);
		else
			atomic_fetch_add(&ra->nonempty, 1);
	}
	g->state = state;
}

static void seg_drop(struct readahead *ra, struct ra_seg *g)
{
	if (g->state == SEG_VALID) {
		if (!g->used)
			ra->wasted += g->len;
		seg_state(ra, g, SEG_EMPTY);
	}
	/* in flight: dropped when it lands (prefetch_done compares generations) */
	g->gen++;
}

static void stream_drop(struct readahead *ra, struct ra_set *s, struct ra_stream *st)
{
	for (unsigned i = 0; i < s->nseg; i++)
		seg_drop(ra, &st->seg[i]);
}

void ra_invalidate(struct array *a, uint64_t offset, uint64_t length)
{
	struct readahead *ra = RA(a);
	/* Nothing read ahead nor in flight: no lock (every write passes here
	   twice). A prefetch made non-empty after this look was issued after
	   it, i.e. after the write reached the members (the second call) or
	   is dropped by that second call (the first). */
	if (!ra || !length || !atomic_load(&ra->nonempty))
		return;
	uint64_t end = offset + length;
	pthread_mutex_lock(&ra->lock);
	struct ra_set *s = atomic_load_explicit(&ra->set, memory_order_relaxed);
	for (unsigned i = 0; s && i < URAID_READ_AHEAD_STREAMS; i++) {
		struct ra_stream *st = &s->stream[i];
		if (!st->live)
			continue;
		/* its buffers that count (not dropped) hold bytes below pf_next
		   and within nseg + 1 units of it: skip streams elsewhere */
		uint64_t span = (uint64_t)(s->nseg + 1) * s->unit;
		uint64_t lo = st->pf_next > span ? st->pf_next - span : 0;
		if (offset >= st->pf_next || end <= lo)
			continue;
		for (unsigned k = 0; k < s->nseg; k++) {
			struct ra_seg *g = &st->seg[k];
			if (g->state == SEG_EMPTY || g->off >= end || offset >= g->off + g->len)
				continue;
			if (g->state == SEG_VALID || g->gen == g->issued_gen)
				ra->invalidated += g->len;
			seg_drop(ra, g);
		}
	}
	pthread_mutex_unlock(&ra->lock);
}

/* ---- streams (lock held) ---- */

/* A read belongs to a stream when it starts at most a window behind its
 * front, or past the front by at most RA_AHEAD_REQS of the stream's reads
 * (a client's reads arriving out of order) and is no longer than them: a
 * large random read that happens to land just ahead is no part of it. */
static struct ra_stream *stream_match(struct ra_set *s, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++) {
		struct ra_stream *st = &s->stream[i];
		if (!st->live || off + s->window < st->next)
			continue;
		if (off <= st->next ||
		    (len <= st->req_len && off <= st->next + RA_AHEAD_REQS * st->req_len))
			return &s->stream[i];
	}
	return NULL;
}

/* A window for a new stream: a free one, else the least recently used
 * one with nothing in flight or pinned. NULL: all busy. */
static struct ra_stream *stream_take(struct readahead *ra, struct ra_set *s)
{
	struct ra_stream *best = NULL;
	for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++) {
		struct ra_stream *st = &s->stream[i];
		if (!st->live)
			return st;
		bool busy = false;
		for (unsigned k = 0; k < s->nseg && !busy; k++)
			busy = st->seg[k].state == SEG_INFLIGHT || st->seg[k].pins;
		if (!busy && (!best || st->stamp < best->stamp))
			best = st;
	}
	if (best)
		stream_drop(ra, s, best);
	return best;
}

/* Is a read at [off, off + len) near a stream (as stream_match would find
 * it), by the copies of the fronts? No lock: a copy a moment old only
 * sends a read to the lock, or one to the members. */
static bool stream_near(struct readahead *ra, uint64_t off, uint64_t len)
{
	uint64_t window = atomic_load_explicit(&ra->hint_window, memory_order_relaxed);
	for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++) {
		uint64_t next = atomic_load_explicit(&ra->hint_next[i], memory_order_relaxed);
		if (!next || off + window < next)
			continue;
		uint64_t req = atomic_load_explicit(&ra->hint_req[i], memory_order_relaxed);
		if (off <= next || (len <= req && off <= next + RA_AHEAD_REQS * req))
			return true;
	}
	return false;
}

static unsigned cand_slot(uint64_t pos)
{
	return (unsigned)(((pos >> 9) * 0x9E3779B97F4A7C15ull) >> 58) & (RA_CANDS - 1);
}

/*
 * A read no stream claims, on reactor ri (its thread, no lock): does it
 * continue a candidate of any reactor's (the one whose next read starts at
 * off, in slot cand_slot(off) of each table)? Then this reactor notes the
 * candidate one read further (its own slot for end; its old one is
 * emptied when it was its own), else a new candidate. Returns the
 * candidate when the read confirms a stream (the caller empties it once
 * the stream has a window; till then the next read confirms it again).
 *
 * A continued candidate is protected for RA_PROTECT of the reactor's
 * reads: a new one whose slot it holds is not noted, so that random reads
 * in between do not push out a stream in the making (the bound keeps
 * random reads that continued each other by chance from piling up into
 * streams on a small array).
 */
static struct ra_cand *cand_note(struct readahead *ra, unsigned ri, uint64_t off, uint64_t end)
{
	struct ra_cands *t = &ra->cands[ri];
	uint32_t gen = atomic_load_explicit(&ra->set_gen, memory_order_relaxed);
	if (t->set_gen != gen) {
		for (unsigned i = 0; i < RA_CANDS; i++)
			atomic_store_explicit(&t->cand[i].next, 0, memory_order_relaxed);
		t->set_gen = gen;
	}
	t->stamp++;
	unsigned seq = 0;
	uint64_t req_len = end - off;
	unsigned so = cand_slot(off);
	for (unsigned k = 0; k < ra->ncands; k++) {
		unsigned j = (ri + k) % ra->ncands;
		struct ra_cand *c = &ra->cands[j].cand[so];
		if (atomic_load_explicit(&c->next, memory_order_relaxed) != off)
			continue;
		uint64_t meta = atomic_load_explicit(&c->meta, memory_order_relaxed);
		seq = (unsigned)(meta & 0xff) + 1;
		if (meta >> 8 > req_len)
			req_len = meta >> 8;
		if (j == ri)
			atomic_store_explicit(&c->next, 0, memory_order_relaxed);
		break;
	}
	struct ra_cand *c = &t->cand[cand_slot(end)];
	if (!seq && atomic_load_explicit(&c->next, memory_order_relaxed) &&
	    (atomic_load_explicit(&c->meta, memory_order_relaxed) & 0xff) &&
	    t->stamp - c->stamp < RA_PROTECT)
		return NULL;    /* a stream in the making holds the slot */
	if (seq > RA_CONFIRM)
		seq = RA_CONFIRM;
	atomic_store_explicit(&c->meta, req_len << 8 | seq, memory_order_relaxed);
	atomic_store_explicit(&c->next, end, memory_order_relaxed);
	c->stamp = t->stamp;
	return seq >= RA_CONFIRM ? c : NULL;
}

/* A confirmed candidate becomes a stream (lock held); NULL: every window
 * is busy. */
static struct ra_stream *stream_new(struct readahead *ra, struct ra_set *s, uint64_t end,
				    uint64_t req_len)
{
	struct ra_stream *st = stream_take(ra, s);
	if (!st)
		return NULL;
	st->live = true;
	st->next = end;
	st->pf_next = end;
	st->req_len = req_len;
	return st;
}

/*
 * Are all the members the array reads from copied inline by the reactor
 * (tmpfs, ramfs: member_io.c)? Then there is no member latency to hide:
 * reading ahead would only add a second copy on the reactor's thread
 * (measured on RAID 5 x4, 128 KiB sequential reads at QD 1 through NBD:
 * 0.63 x without read-ahead with the prefetches issued before the read,
 * still 0.79 x with the read served first).
 */
static bool members_in_memory(const struct array *a)
{
	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		struct member *m = atomic_load_explicit(&a->slot[s].m, memory_order_relaxed);
		if (m && !m->in_memory)
			return false;
	}
	return true;
}

/*
 * Issue prefetches ahead of the stream until its window is full: up to
 * the read's end plus the window. Marks them in flight and returns them
 * in out (issued after the lock is let go).
 */
static unsigned stream_fill(struct readahead *ra, struct ra_set *s, struct ra_stream *st,
			    uint64_t off, uint64_t end, struct ra_seg **out)
{
	uint64_t size = ra->a->geom.array_sectors * 512;
	uint64_t limit = end + s->window;
	unsigned n = 0;

	if (st->pf_next < off) {
		/* the reader jumped past what was read ahead: start again from it */
		stream_drop(ra, s, st);
		st->pf_next = end;
	}
	while (st->pf_next < limit && st->pf_next < size && n < RA_FILL_MAX) {
		uint64_t u = st->pf_next / s->unit;
		struct ra_seg *g = &st->seg[u % s->nseg];
		if (g->state == SEG_INFLIGHT || g->pins)
			break;
		if (g->state == SEG_VALID && g->off + g->len > off)
			break;          /* still ahead of the reader, or under it */
		if (g->state == SEG_VALID && !g->used)
			ra->wasted += g->len;
		uint64_t stop = (u + 1) * s->unit;
		if (stop > size)
			stop = size;
		g->off = st->pf_next;
		g->len = (uint32_t)(stop - g->off);
		g->gen++;
		g->issued_gen = g->gen;
		seg_state(ra, g, SEG_INFLIGHT);
		g->used = false;
		s->inflight++;
		ra->prefetched += g->len;
		st->pf_next = stop;
		out[n++] = g;
	}
	return n;
}

/* ---- serving (lock held) ---- */

enum { RA_MISS, RA_WAIT, RA_SERVE };

/* The buffer of st holding byte pos, or NULL. */
static struct ra_seg *seg_at(struct ra_set *s, struct ra_stream *st, uint64_t pos)
{
	struct ra_seg *g = &st->seg[pos / s->unit % s->nseg];
	if (g->state == SEG_EMPTY || pos < g->off || pos >= g->off + g->len)
		return NULL;
	if (g->state == SEG_INFLIGHT && g->gen != g->issued_gen)
		return NULL;    /* dropped: its data will not be kept */
	return g;
}

/* Is [off, end) wholly in st's buffers? RA_SERVE with them pinned, RA_WAIT
 * with rq queued on one in flight, RA_MISS. */
static int stream_serve(struct readahead *ra, struct ra_set *s, struct ra_stream *st,
			struct array_req *rq, uint64_t off, uint64_t end)
{
	struct ra_seg *wait = NULL;
	for (uint64_t pos = off; pos < end;) {
		struct ra_seg *g = seg_at(s, st, pos);
		if (!g)
			return RA_MISS;
		if (g->state == SEG_INFLIGHT && !wait)
			wait = g;
		pos = g->off + g->len;
	}
	if (wait) {
		rq->next = wait->waiters;
		wait->waiters = rq;
		ra->waited++;
		return RA_WAIT;
	}
	for (uint64_t pos = off; pos < end;) {
		struct ra_seg *g = seg_at(s, st, pos);
		g->pins++;
		s->pinned++;
		g->used = true;
		pos = g->off + g->len;
	}
	ra->served += end - off;
	ra->served_reads++;
	return RA_SERVE;
}

/* A retired set with nothing in flight nor pinned leaves ra->retired
 * (lock held); true: the caller frees it once the lock is let go. */
static bool set_done(struct readahead *ra, struct ra_set *s)
{
	if (!s->retired || s->inflight || s->pinned)
		return false;
	for (struct ra_set **pp = &ra->retired; *pp; pp = &(*pp)->next_retired)
		if (*pp == s) {
			*pp = s->next_retired;
			break;
		}
	return true;
}

/* Lock held: one pin of g gone; true: free its set. */
static bool seg_unpin(struct readahead *ra, struct ra_seg *g)
{
	g->pins--;
	g->set->pinned--;
	return set_done(ra, g->set);
}

/* URAID_IO_LEND's give_back: the bytes lent from a buffer are sent. */
static void ra_give_back(struct uraid_lend *l)
{
	struct ra_seg *g = l->tok[0];
	struct ra_set *s = g->set;
	struct readahead *ra = s->ra;

	l->data = NULL;
	pthread_mutex_lock(&ra->lock);
	bool free_set = seg_unpin(ra, g);
	pthread_mutex_unlock(&ra->lock);
	if (free_set)
		set_free(s);
}

/*
 * Answer rq from st's buffers pinned for it (outside the lock): lent when
 * its caller takes that and the bytes lie in one buffer (no copy: the
 * buffer stays pinned until given back), else copied and unpinned.
 */
static void serve_out(struct readahead *ra, struct ra_set *s, struct ra_stream *st,
		      struct array_req *rq, uint64_t off, uint64_t end)
{
	struct uraid_io *io = rq->io;
	struct ra_seg *g = &st->seg[off / s->unit % s->nseg];
	bool free_set = false;

	if ((io->flags & URAID_IO_LEND) && end <= g->off + g->len) {
		io->lend.data = g->buf + (off - g->off);
		io->lend.give_back = ra_give_back;
		io->lend.tok[0] = g;
		array_piece_done(rq, 0);
		return;
	}
	for (uint64_t pos = off; pos < end;) {
		g = &st->seg[pos / s->unit % s->nseg];
		uint64_t stop = g->off + g->len < end ? g->off + g->len : end;
		memcpy((uint8_t *)io->buf + (pos - off), g->buf + (pos - g->off), stop - pos);
		pos = stop;
	}
	pthread_mutex_lock(&ra->lock);
	for (uint64_t pos = off; pos < end;) {
		g = &st->seg[pos / s->unit % s->nseg];
		pos = g->off + g->len;
		free_set |= seg_unpin(ra, g);
	}
	pthread_mutex_unlock(&ra->lock);
	if (free_set)
		set_free(s);
	array_piece_done(rq, 0);
}

/* ---- the request path ---- */

static void prefetch_done(struct uraid_io *io, int res);

/*
 * The reactor a reader's prefetches are issued on: the next one after the
 * reader's, when there is one with a thread of its own. A sequential reader
 * at QD 1 waits for its reactor's every step; on that thread the
 * prefetches' submission (pinning the buffers' pages for direct I/O) and
 * their completions (up to one wake-up per member read) are in its way,
 * on another they overlap with it. Measured (loop members, 2 CPUs at a
 * load of 11-12, RAID 5 x4, 128 KiB reads at QD 1 through NBD, 5
 * interleaved rounds): 987 MiB/s median against 398 with the prefetches
 * on the reader's reactor, the server's CPU per GiB 340 ms against 525.
 * A reader waiting for one comes back to its own reactor (prefetch_done).
 */
static unsigned prefetch_reactor(const struct readahead *ra, unsigned reader)
{
	return ra->pf_other ? (reader + 1) % ra->ncands : reader;
}

static void issue(struct array *a, struct ra_seg **segs, unsigned n, unsigned reactor)
{
	for (unsigned i = 0; i < n; i++) {
		struct ra_seg *g = segs[i];
		memset(&g->io, 0, sizeof(g->io));
		g->io.op = URAID_IO_READ;
		g->io.offset = g->off;
		g->io.length = g->len;
		g->io.buf = g->buf;
		g->io.done = prefetch_done;
		g->io.ctx = g;
		g->reactor = reactor;
		array_submit_internal(a, &a->e->reactors[reactor], &g->io);
	}
}

/* Which stream serves rq: the one whose buffers hold its first byte. */
static struct ra_stream *stream_holding(struct ra_set *s, uint64_t off)
{
	for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++)
		if (s->stream[i].live && seg_at(s, &s->stream[i], off))
			return &s->stream[i];
	return NULL;
}

/* Look for rq's bytes again (first look done, or woken by a landing).
 * true: served or waiting; false: rq goes to the level. */
static bool try_serve(struct readahead *ra, struct array_req *rq)
{
	uint64_t off = rq->io->offset, end = off + rq->io->length;

	pthread_mutex_lock(&ra->lock);
	struct ra_set *s = atomic_load_explicit(&ra->set, memory_order_relaxed);
	struct ra_stream *st = s ? stream_holding(s, off) : NULL;
	int r = st ? stream_serve(ra, s, st, rq, off, end) : RA_MISS;
	pthread_mutex_unlock(&ra->lock);
	if (r == RA_SERVE)
		serve_out(ra, s, st, rq, off, end);
	return r != RA_MISS;
}

static void retry_msg(struct reactor *r, struct reactor_msg *m)
{
	struct array_req *rq = (struct array_req *)((char *)m - offsetof(struct array_req, msg));
	(void)r;
	if (!try_serve(RA(rq->a), rq))
		array_req_to_level(rq);
}

/* On the reactor that issued it. */
static void prefetch_done(struct uraid_io *io, int res)
{
	struct ra_seg *g = io->ctx;
	struct ra_set *s = g->set;
	struct readahead *ra = s->ra;
	bool free_set = false;

	pthread_mutex_lock(&ra->lock);
	if (res || g->gen != g->issued_gen || s->retired) {
		if (!res && !s->retired)
			ra->wasted += g->len;
		seg_state(ra, g, SEG_EMPTY);
	} else {
		seg_state(ra, g, SEG_VALID);
	}
	struct array_req *w = g->waiters;
	g->waiters = NULL;
	s->inflight--;
	free_set = set_done(ra, s);
	pthread_mutex_unlock(&ra->lock);
	while (w) {
		struct array_req *rq = w;
		w = rq->next;
		rq->next = NULL;
		if (reactor_is_current(&rq->er->r)) {
			retry_msg(&rq->er->r, &rq->msg);
		} else {
			rq->msg.fn = retry_msg;
			reactor_post(&rq->er->r, &rq->msg);
		}
	}
	if (free_set)
		set_free(s);
}

bool ra_read(struct array_req *rq)
{
	struct readahead *ra = RA(rq->a);
	struct uraid_io *io = rq->io;

	if (!ra || !atomic_load_explicit(&ra->set, memory_order_relaxed) || !io->length)
		return false;
	/* nothing is read ahead of members in memory: no table, no lock (the
	   streams are not tracked then; status shows members_in_memory) */
	if (!ra->prefetch_memory && members_in_memory(rq->a))
		return false;
	uint64_t off = io->offset, end = off + io->length;
	struct ra_seg *out[RA_FILL_MAX];
	unsigned n = 0;
	int r = RA_MISS;

	/* a read far from every stream: this reactor's candidates, no lock */
	struct ra_cand *confirmed = NULL;
	unsigned ri = rq->er->r.index;
	if (!stream_near(ra, off, io->length)) {
		if (ri >= ra->ncands || !(confirmed = cand_note(ra, ri, off, end)))
			return false;
	}
	pthread_mutex_lock(&ra->lock);
	struct ra_set *s = atomic_load_explicit(&ra->set, memory_order_relaxed);
	if (!s) {
		pthread_mutex_unlock(&ra->lock);
		return false;
	}
	ra->stamp++;
	struct ra_stream *st = stream_match(s, off, io->length);
	if (st) {
		if (off <= st->next && io->length > st->req_len)
			st->req_len = io->length;
		if (end > st->next)
			st->next = end;
	} else if (confirmed) {
		st = stream_new(ra, s, end,
				atomic_load_explicit(&confirmed->meta, memory_order_relaxed) >> 8);
	}
	/* a stream now (its own, or one another reactor made meanwhile): the
	   candidate is done with (else the next read confirms it again) */
	if (st && confirmed)
		atomic_store_explicit(&confirmed->next, 0, memory_order_relaxed);
	if (st) {
		hint_sync(ra, s, (unsigned)(st - s->stream));
		st->stamp = ra->stamp;
		/* a read of more than half the window could not be served from
		   it, and what was read ahead of it would go unread */
		if (io->length <= s->window / 2)
			n = stream_fill(ra, s, st, off, end, out);
		r = stream_serve(ra, s, st, rq, off, end);
	}
	pthread_mutex_unlock(&ra->lock);

	if (!n) {
		if (r == RA_SERVE)
			serve_out(ra, s, st, rq, off, end);
		return r != RA_MISS;
	}
	/*
	 * The read that triggered the prefetches goes first (answered, or on
	 * to the level), then the prefetches: on members copied inline, or a
	 * queue that serves in order, a prefetch issued first would hold up
	 * the reply. The array is held open meanwhile with an in_flight count
	 * of its own: once rq is done, nothing else may keep close (drain)
	 * from freeing it before the prefetches are counted.
	 */
	struct array *a = rq->a;
	unsigned reactor = rq->er->r.index;
	struct array_counters *c = &a->counters[reactor];
	atomic_fetch_add(&c->in_flight, 1);
	if (r == RA_SERVE) {
		serve_out(ra, s, st, rq, off, end);
	} else if (r == RA_MISS) {
		array_req_to_level(rq);
	}
	issue(a, out, n, prefetch_reactor(ra, reactor));
	atomic_fetch_sub(&c->in_flight, 1);
	return true;
}

/* ---- set-up, the window, status ---- */

static int ra_set_window(struct readahead *ra, uint64_t bytes)
{
	struct array *a = ra->a;
	struct ra_set *s = NULL;

	if (bytes == URAID_READ_AHEAD_DEFAULT)
		bytes = default_window(a);
	if (bytes > URAID_READ_AHEAD_MAX)
		return -EINVAL;
	bytes &= ~(uint64_t)(RA_ALIGN - 1);
	if (bytes >= 2 * RA_ALIGN) {    /* else (URAID_READ_AHEAD_OFF included): off */
		if (!(s = set_new(ra, bytes)))
			return -ENOMEM;
	}
	pthread_mutex_lock(&ra->lock);
	struct ra_set *old = atomic_load_explicit(&ra->set, memory_order_relaxed);
	atomic_store_explicit(&ra->set, s, memory_order_relaxed);
	/* no stream in the new set; the reactors' candidates start over */
	for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++) {
		atomic_store_explicit(&ra->hint_next[i], 0, memory_order_relaxed);
		atomic_store_explicit(&ra->hint_req[i], 0, memory_order_relaxed);
	}
	atomic_store_explicit(&ra->hint_window, s ? s->window : 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&ra->set_gen, 1, memory_order_relaxed);
	bool free_old = false;
	if (old)
		old->retired = true;    /* its buffers leave ra->nonempty now */
	atomic_store(&ra->nonempty, 0);
	if (old) {
		for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++)
			if (old->stream[i].live)
				stream_drop(ra, old, &old->stream[i]);
		/* buffers being copied from or lent (pinned), prefetches in
		   flight: freed by the last of them (set_done) */
		if (old->inflight || old->pinned) {
			old->next_retired = ra->retired;
			ra->retired = old;
		} else {
			free_old = true;
		}
	}
	pthread_mutex_unlock(&ra->lock);
	if (free_old)
		set_free(old);
	return 0;
}

int ra_init(struct array *a, uint64_t bytes, char *err, size_t errlen)
{
	struct readahead *ra = calloc(1, sizeof(*ra));
	if (!ra)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	ra->a = a;
	ra->ncands = a->e->nreactors ? a->e->nreactors : 1;
	/* a caller-driven engine may stop polling a reactor (uraid bench's
	   workers end one by one): a prefetch posted there would never start */
	ra->pf_other = ra->ncands > 1 && (a->e->flags & URAID_ENGINE_THREADS);
	ra->cands = aligned_alloc(_Alignof(struct ra_cands), ra->ncands * sizeof(struct ra_cands));
	if (!ra->cands) {
		free(ra);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	memset(ra->cands, 0, ra->ncands * sizeof(struct ra_cands));
	pthread_mutex_init(&ra->lock, NULL);
	a->ra = ra;
	int rc = ra_set_window(ra, bytes);
	if (rc == -EINVAL)
		return uraid_errf(err, errlen, rc, "read-ahead of %llu bytes is above the largest, %llu",
				  (unsigned long long)bytes,
				  (unsigned long long)URAID_READ_AHEAD_MAX);
	if (rc)
		return uraid_errf(err, errlen, rc, "cannot set aside read-ahead buffers: %s",
				  strerror(-rc));
	return 0;
}

/* Every byte lent has been given back: the caller gives them back before
 * it closes the array (the NBD server ends its connections first). */
void ra_fini(struct array *a)
{
	struct readahead *ra = RA(a);
	if (!ra)
		return;
	set_free(atomic_load_explicit(&ra->set, memory_order_relaxed));
	while (ra->retired) {
		struct ra_set *s = ra->retired;
		ra->retired = s->next_retired;
		set_free(s);
	}
	pthread_mutex_destroy(&ra->lock);
	free(ra->cands);
	free(ra);
	a->ra = NULL;
}

void ra_prefetch_memory(struct array *a, bool on)
{
	if (a->ra)
		a->ra->prefetch_memory = on;
}

int uraid_array_set_read_ahead(struct uraid_array *ua, uint64_t bytes)
{
	struct array *a = (struct array *)ua;
	if (!a->ra)
		return -EINVAL;
	return ra_set_window(a->ra, bytes);
}

void ra_status(struct array *a, struct uraid_read_ahead_status *st)
{
	struct readahead *ra = RA(a);
	memset(st, 0, sizeof(*st));
	if (!ra)
		return;
	pthread_mutex_lock(&ra->lock);
	struct ra_set *s = atomic_load_explicit(&ra->set, memory_order_relaxed);
	st->streams_max = URAID_READ_AHEAD_STREAMS;
	if (s) {
		st->window_bytes = s->window;
		st->unit_bytes = s->unit;
		st->memory_bytes = (uint64_t)URAID_READ_AHEAD_STREAMS * s->nseg * s->unit;
		for (unsigned i = 0; i < URAID_READ_AHEAD_STREAMS; i++)
			st->streams += s->stream[i].live;
	}
	st->members_in_memory = !ra->prefetch_memory && members_in_memory(a);
	st->prefetched_bytes = ra->prefetched;
	st->served_bytes = ra->served;
	st->served_reads = ra->served_reads;
	st->waited_reads = ra->waited;
	st->wasted_bytes = ra->wasted;
	st->invalidated_bytes = ra->invalidated;
	pthread_mutex_unlock(&ra->lock);
}
