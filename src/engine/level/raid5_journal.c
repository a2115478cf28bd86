// SPDX-License-Identifier: MIT
/*
 * md's write journal at run time, write-through (md's default mode): the
 * parity-log hooks (parity_log.h) of a RAID 4/5/6 with a journal device.
 *
 * Before a unit's member writes, its rows go to the journal in md's format
 * (format/r5l.h): for each 4 KiB row of the unit a DATA payload per written
 * data chunk (the new page, at its array sector) and a PARITY payload (the
 * new P, and Q), after a meta block; the member writes wait until that log
 * write is durable (RWF_DSYNC, md's FUA). A unit that cannot be logged as
 * whole 4 KiB rows with parity (not 4 KiB aligned, parity member not
 * written; max_unit_sectors keeps aligned units within a quarter of the
 * ring) is preceded by FLUSH payloads for its rows instead, and its member
 * writes wait until a checkpoint has moved the tail to its batch: a replay
 * (md's, which writes a logged row out when newer data for it comes, or
 * uraid's) then finds no older logged row to write over it. Such a unit is
 * as exposed to the write hole as without a journal, and counted.
 *
 * A failed log write or checkpoint fails the journal, as md fails its
 * journal device: the units in the log fail (-EIO) and so does every later
 * write, so that none reaches the members unlogged.
 *
 * Order, as md keeps it: one log write in work at a time, with every unit
 * waiting meanwhile in it (a batch), so the seq chain on disk never has a
 * later block durable before an earlier one is; a batch's units go on to
 * their member writes only once it is durable.
 *
 * Space: the ring runs from the superblock's journal_tail to the head. When
 * more than a quarter is in use, or a batch does not fit, a checkpoint (on
 * the metadata worker) flushes the members and records a new journal_tail:
 * the start of the oldest batch whose member writes are not all done, or of
 * the newest batch when all are (replaying it again is harmless). Batches
 * wait for it when the ring is full.
 *
 * Write-back (md's r5c write-back, parity_log.h wb_*): the write-back cache
 * queues records, a cached write's whole pages as DATA payloads without
 * parity, logged in the same batches (records first); each completes its
 * write once durable. A record keeps its batch pending while cache pages
 * name it, so the tail (and a replay's start) stays at or before every
 * cached page not yet destaged; a replay writes such data-only rows with
 * their parity recomputed. A destage whose pages are all in records
 * (ARRAY_IO_JLOGGED) logs its rows' parity only (U_PONLY, md's rule for
 * R5_InJournal pages): the replay gathers a row across meta blocks, the
 * record's DATA then this PARITY. Records take at most an eighth of the ring and,
 * once write-back ran, the last 3/8 are for destages (internal writes),
 * which release the records; units whose parity member is gone are logged
 * data-only then, not FLUSH-gated (the gate would wait for the very records
 * their destage releases).
 *
 * Threads: the hooks run on the pieces' reactors, the state under one
 * mutex never held across I/O; a batch is taken off the wait list under it
 * and encoded without it (busy keeps other writers out of buf); a log write
 * is submitted on the reactor of the unit that started it (a large one to
 * a journal in memory encoded and written by the log writer's thread,
 * batch_write; by an io_uring worker if that thread could not start:
 * encode_batch);
 * each unit resumes on its own (reactor_post).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/adaptive_mutex.h"
#include "engine/level/parity_log.h"
#include "engine/level/raid5_journal.h"
#include "engine/level/raid5_priv.h"
#include "engine/md/meta_worker.h"
#include "format/r5l.h"

#define PG URAID_R5L_BLOCK
#define PGS URAID_R5L_BLOCK_SECTORS
#define ROOM (URAID_R5L_BLOCK - URAID_R5L_META_HEADER)
#define NBATCH 1024u            /* batches not yet done (ring of records) */
#define NREC 8192u              /* write-back records at most (ids 1..NREC) */
#define REC_IDX(id) ((id) & (NREC - 1))
/*
 * A batch at least this large, of units and records this large on average
 * (a sequential stream's full rows), written to a journal in memory goes
 * to the log writer's thread (batch_write; an io_uring worker without
 * it: encode_batch); many small ones (4 KiB random
 * writes at QD 32) stay inline: their worker round trips cost more than
 * the copy moved.
 */
#define JOFFLOAD_MIN (128u << 10)
#define JOFFLOAD_AVG (64u << 10)
#define DROOM 20u               /* meta bytes of one DATA page: payload header + csum */

/*
 * A unit in the log is its piece (r5_piece.log_*, parity_log.h): log_next
 * links the wait list and a batch's units, log_resume is set while the
 * piece is in the log (after_writes looks), and log_res holds, until the
 * unit resumes, (batch record << 2) | kind, kind U_FULL (whole rows with
 * parity), U_DONLY (whole rows, data only), U_PONLY (whole rows, parity
 * only) or 0 (FLUSH); a negative log_res
 * is the result a unit that failed resumes with.
 */
#define U_FULL 1
#define U_DONLY 2               /* whole rows, data only (parity member gone) */
#define U_PONLY 3               /* whole rows, parity only (data in earlier records) */
#define U_KIND 3
#define U_BATCH(pc) ((unsigned)(pc)->log_res >> 2)

/*
 * A write-back record (parity_log.h wb_add): a cached write's pages, logged
 * as DATA payloads of their array sectors. It keeps its batch pending while
 * cache pages name it (refs), until it is logged, and while its done
 * callback runs; ids are index | generation << 13 (index 0 unused).
 */
struct jrec {
	uint64_t sector;                /* array sector, 4 KiB aligned */
	const uint8_t *buf;             /* the request's bytes, until done */
	void (*done)(void *arg, uint32_t rec, int res);
	void *arg;
	uint32_t id;                    /* its id (index | generation << 13) */
	bool live;
	uint32_t npg, refs;
	uint32_t next;                  /* wait list, batch chain or free list (index) */
	unsigned batch;
	bool taken, logged, cb;
};

struct jbatch {
	uint64_t start;                 /* ring position of its first meta block */
	unsigned pending;               /* units whose member writes are not done */
	bool logged;
	/* it holds FLUSH-only units: they go to their member writes only once
	   the tail is at its start (nothing older in the log names their rows) */
	bool gated;
	struct r5_piece *held;          /* its logged units waiting for that */
};

struct jlog {
	struct parity_log base;
	pthread_mutex_t mu;
	struct member *m;               /* the journal */
	uint32_t seed;
	uint64_t ring;                  /* sectors */
	uint64_t head, seq;             /* the next meta block */
	uint64_t tail;                  /* journal_tail on disk */
	/* the log as written: the end of the last batch whose log write is
	   done, and the seq after it (status; head and seq run ahead of it
	   while a batch is being written, seq only once it is encoded) */
	uint64_t lhead, lseq;
	struct jbatch b[NBATCH];
	unsigned b_first, b_count;
	struct r5_piece *wait_head, *wait_tail;
	struct r5_piece *inflight;      /* the batch being logged */
	unsigned inflight_b;            /* its record */
	bool busy;                      /* a log write in work */
	bool ckpt_busy;
	bool failed;                    /* a log write or checkpoint failed: writes fail */
	uint64_t ckpt_tail;
	/*
	 * A batch is written gathered: its meta blocks are built in buf (at
	 * their offset in the batch), its pages are written from where they
	 * are (the unit's buffers, the record's bytes), not copied: iov lists
	 * them in log order, miov holds each log write's share of it (cut at
	 * the ring's end and at IOV_MAX). A page that cannot be written from
	 * where it is (an O_DIRECT journal and a buffer not 4 KiB aligned, a
	 * journal on another array) is copied into buf at its offset.
	 */
	uint8_t *buf;
	size_t cap;                     /* bytes */
	struct iovec *iov, *miov;
	unsigned niov, iov_cap;
	bool gather;                    /* pages may be written from where they are */
	bool gather_now;                /* and this batch's are */
	bool offload;                   /* this batch is written by the log writer */
	/*
	 * The log writer (a journal in memory): a thread that encodes a large
	 * batch (its checksums) and writes it (member_write_sync), then posts
	 * the result to the reactor that took the batch (wmsg), where the log
	 * writes complete as member_submit's would. job: a batch handed to it
	 * (under mu); stop: jr_fini's. See batch_write.
	 */
	pthread_t wthread;
	bool wthread_on;
	pthread_cond_t wcv;
	bool wjob, wstop;
	uint64_t whead, wseq;           /* the job: its first meta block */
	struct r5_piece *wunits;
	uint32_t wrecs;
	uint64_t wlen;
	struct reactor *wr;
	unsigned wn;                    /* log writes of the batch written */
	int *wres;                      /* their results (mio_cap) */
	struct reactor_msg wmsg;
	struct member_io *mio;
	unsigned mio_cap;
	unsigned mio_left;
	int mio_res;
	struct meta_call call;
	uint64_t unprotected;           /* units logged as FLUSH only */
	/* write-back records (index 1..NREC-1) */
	struct jrec *rec;
	uint32_t rec_free;              /* free list (index) */
	uint32_t rwait_head, rwait_tail;        /* waiting to be logged (index) */
	uint32_t rinflight;             /* the batch being logged (index chain) */
	uint64_t rwait_sectors;         /* ring sectors the waiting records need */
	uint64_t rec_live;              /* records not freed */
	uint64_t rec_sectors;           /* their ring sectors */
	bool wb_used;                   /* a record was ever added: degraded units log data */
};

static uint64_t ring_dist(const struct jlog *j, uint64_t from, uint64_t to)
{
	return to >= from ? to - from : to + j->ring - from;
}

/* Rows of 4 KiB the unit covers (member sectors, 4 KiB aligned). */
static void unit_rows(const struct r5_piece *pc, uint64_t *first, unsigned *n)
{
	uint64_t s0 = pc->mbase + pc->ux, s1 = s0 + pc->ulen / 512;

	*first = s0 / PGS * PGS;
	*n = (unsigned)((s1 + PGS - 1) / PGS * PGS - *first) / PGS;
}

static unsigned written_data(const struct r5_piece *pc)
{
	unsigned nw = 0;
	for (unsigned k = 0; k < pc->d; k++)
		nw += pc->wr[k] != 0;
	return nw;
}

/* Log sectors the unit takes as full rows (data only with U_DONLY), or as
   FLUSH payloads (kind 0). */
static uint64_t unit_sectors(const struct r5_piece *pc, int kind)
{
	uint64_t first;
	unsigned rows;

	unit_rows(pc, &first, &rows);
	if (!kind) {
		unsigned per = ROOM / 16;
		return (uint64_t)((rows + per - 1) / per) * PGS;
	}
	unsigned nw = kind == U_PONLY ? 0 : written_data(pc);
	unsigned npar = kind == U_DONLY ? 0 : pc->npar;
	unsigned rowbytes = nw * DROOM + (npar ? 16 + 4 * npar : 0);
	unsigned per = ROOM / rowbytes;
	unsigned metas = (rows + per - 1) / per;
	return ((uint64_t)rows * (nw + npar) + metas) * PGS;
}

/* Log sectors of a write-back record of npg pages (its own meta blocks). */
static uint64_t rec_sectors(uint32_t npg)
{
	unsigned per = ROOM / DROOM;
	return ((uint64_t)npg + (npg + per - 1) / per) * PGS;
}

/* How the unit is logged: U_FULL, U_DONLY, U_PONLY or 0 (FLUSH). */
static int unit_kind(const struct jlog *j, const struct r5_piece *pc, bool wb_used)
{
	unsigned ps = pc->st.p_slot;
	int qs = pc->st.q_slot, kind = U_FULL;

	if (pc->ux % PGS || pc->ulen % PG || !written_data(pc))
		return 0;
	if (pc->plan.mode == R5_DIRECT || (pc->sflag[ps] & SF_DEAD) || !r5_live(pc, ps) ||
	    (pc->npar == 2 && ((pc->sflag[qs] & SF_DEAD) || !r5_live(pc, (unsigned)qs))))
		kind = U_DONLY;
	/*
	 * Data only, without its parity (a parity member is gone): a replay
	 * writes the data and recomputes parity, as for md's write-back rows.
	 * Only once the write-back cache has logged records: FLUSH's gate
	 * (the tail at the unit's batch) would wait for records that the
	 * destage of this very unit releases; write-through keeps FLUSH.
	 */
	if (kind == U_DONLY && !wb_used)
		return 0;
	/*
	 * A destage of the write-back cache whose pages are all in the log
	 * (ARRAY_IO_JLOGGED: each one's newest bytes in a record that stays
	 * until this unit's member writes are done, and the only logged page
	 * of its 4 KiB row, wcache.c): only the parity, as md logs a stripe
	 * whose data pages are R5_InJournal. A replay (md's, ours) gathers a
	 * row's pages across meta blocks: the record's DATA, then this
	 * PARITY, is a row with data and parity. take_batch logs it whole
	 * (U_FULL) when its record could still be behind it in the log.
	 */
	if (kind == U_FULL && pc->rq && pc->rq->io && (pc->rq->io->flags & ARRAY_IO_JLOGGED))
		kind = U_PONLY;
	/* a batch is at most a quarter of the ring: the newest batch (kept
	   until the next checkpoint) and the next one always fit together
	   (max_unit_sectors keeps whole-page units within it) */
	if (unit_sectors(pc, kind) > j->ring / 4 || unit_sectors(pc, kind) * 512 > j->cap)
		return 0;
	return kind;
}

/* Encoding a batch into buf: the open meta block and where pages go. */
struct enc {
	struct jlog *j;
	uint64_t head, seq;             /* the batch's first meta block */
	uint8_t *meta;                  /* in buf */
	size_t off;                     /* bytes used in buf */
};

static void enc_seal(struct enc *e)
{
	if (e->meta) {
		uraid_r5l_meta_seal(e->meta, e->j->seed);
		e->meta = NULL;
	}
}

/* The next PG bytes of the batch come from src (coalesced with the last). */
static void enc_iov(struct jlog *j, const void *src)
{
	struct iovec *last = j->niov ? &j->iov[j->niov - 1] : NULL;

	if (last && (const uint8_t *)last->iov_base + last->iov_len == (const uint8_t *)src) {
		last->iov_len += PG;
		return;
	}
	j->iov[j->niov++] = (struct iovec){ .iov_base = (void *)src, .iov_len = PG };
}

static void enc_open(struct enc *e)
{
	struct jlog *j = e->j;
	enc_seal(e);
	e->meta = j->buf + e->off;
	uraid_r5l_meta_init(e->meta, e->seq++, uraid_r5l_ring_add(j->ring, e->head, e->off / 512));
	enc_iov(j, e->meta);
	e->off += PG;
}

static void enc_page(struct enc *e, const void *src)
{
	struct jlog *j = e->j;

	if (!j->gather_now || (j->m->direct && (uintptr_t)src % PG)) {
		memcpy(j->buf + e->off, src, PG);
		src = j->buf + e->off;
	}
	enc_iov(j, src);
	e->off += PG;
}

static void encode_unit(struct enc *e, struct r5_piece *pc, int kind)
{
	uint64_t first;
	unsigned rows;

	unit_rows(pc, &first, &rows);
	if (!kind) {
		for (unsigned r = 0; r < rows; r++) {
			if (!e->meta || uraid_r5l_meta_room(e->meta) < 16)
				enc_open(e);
			uraid_r5l_meta_add_flush(e->meta, first + (uint64_t)r * PGS);
		}
		enc_seal(e);    /* each unit starts its own meta block */
		return;
	}
	unsigned nw = kind == U_PONLY ? 0 : written_data(pc), ps = pc->st.p_slot;
	unsigned rowbytes = nw * DROOM + (kind == U_DONLY ? 0 : 16 + 4 * pc->npar);
	uint64_t row_start = pc->st.stripe * pc->d * pc->C;
	for (unsigned r = 0; r < rows; r++) {
		size_t in = (size_t)r * PG;
		uint32_t c[2];

		if (!e->meta || uraid_r5l_meta_room(e->meta) < rowbytes)
			enc_open(e);
		for (unsigned k = 0; k < pc->d && kind != U_PONLY; k++) {
			if (!pc->wr[k])
				continue;
			const uint8_t *src = (const uint8_t *)r5_new_data(pc, k) + in;
			uraid_r5l_meta_add_data(e->meta, row_start + (uint64_t)k * pc->C + pc->ux +
						(uint64_t)r * PGS, uraid_r5l_page_csum(e->j->seed, src));
			enc_page(e, src);
		}
		if (kind == U_DONLY)
			continue;
		c[0] = uraid_r5l_page_csum(e->j->seed, pc->sbuf[ps] + in);
		if (pc->npar == 2)
			c[1] = uraid_r5l_page_csum(e->j->seed, pc->sbuf[pc->st.q_slot] + in);
		uraid_r5l_meta_add_parity(e->meta, pc->mbase + pc->ux + (uint64_t)r * PGS, c, pc->npar);
		enc_page(e, pc->sbuf[ps] + in);
		if (pc->npar == 2)
			enc_page(e, pc->sbuf[pc->st.q_slot] + in);
	}
	enc_seal(e);
}

static void encode_rec(struct enc *e, const struct jrec *r)
{
	for (uint32_t i = 0; i < r->npg; i++) {
		const uint8_t *src = r->buf + (size_t)i * PG;
		if (!e->meta || uraid_r5l_meta_room(e->meta) < DROOM)
			enc_open(e);
		uraid_r5l_meta_add_data(e->meta, r->sector + (uint64_t)i * PGS,
					uraid_r5l_page_csum(e->j->seed, src));
		enc_page(e, src);
	}
	enc_seal(e);    /* each record starts its own meta block */
}

static void log_written(struct member_io *mio, int res);
static void try_start(struct jlog *j, struct reactor *r);
static void ckpt_start(struct jlog *j, struct reactor *r);

static bool batch_done(const struct jbatch *b)
{
	return b->logged && !b->pending;
}

/*
 * With j->mu held: where a checkpoint now would move the tail: the start of
 * the oldest batch not logged or with member writes not done (everything
 * before it is on the members), or, when every batch is done, the newest
 * batch's start (the tail must name a valid meta block; replaying that
 * batch again is harmless).
 */
static uint64_t ckpt_target(const struct jlog *j)
{
	if (!j->b_count)
		return j->tail;
	for (unsigned i = 0; i < j->b_count; i++) {
		const struct jbatch *b = &j->b[(j->b_first + i) % NBATCH];
		if (!batch_done(b))
			return b->start;
	}
	return j->b[(j->b_first + j->b_count - 1) % NBATCH].start;
}

/* With j->mu held: forget the done batches from the oldest on (the newest is
   kept: it may be the next tail). */
static void pop_done(struct jlog *j)
{
	while (j->b_count > 1 && batch_done(&j->b[j->b_first])) {
		j->b_first = (j->b_first + 1) % NBATCH;
		j->b_count--;
	}
}

static void resume_msg(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *pc = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, log_msg));
	parity_log_resume_fn *fn = pc->log_resume;
	int res = pc->log_res < 0 ? pc->log_res : 0;

	(void)r;
	if (res < 0)
		pc->log_resume = NULL;  /* failed: after_writes does not come */
	fn(pc, res);
}

/* Resume a chain of units (nothing held); res < 0 fails them. The chain is
   read before each unit may finish and its piece be reused. */
static void resume_chain(struct r5_piece *pc, int res)
{
	struct r5_piece *next;

	for (; pc; pc = next) {
		next = pc->log_next;
		pc->log_next = NULL;
		if (res < 0)
			pc->log_res = res;
		pc->log_msg.fn = resume_msg;
		reactor_post(r5_piece_reactor(pc), &pc->log_msg);
	}
}

/*
 * With j->mu held: the journal failed (a log write or a checkpoint), as md
 * fails its journal device: no more logging, so no write may go on
 * unlogged (a later replay would write older rows over it). The waiting
 * and held units are taken out to be failed (-EIO) by the caller.
 */
static struct r5_piece *fail_journal(struct jlog *j)
{
	struct r5_piece *out = NULL, **tail = &out;

	j->failed = true;
	/* waiting records: logged as failed; their done() comes from the caller */
	*tail = j->wait_head;
	while (*tail)
		tail = &(*tail)->log_next;
	j->wait_head = j->wait_tail = NULL;
	for (unsigned i = 0; i < j->b_count; i++) {
		struct jbatch *b = &j->b[(j->b_first + i) % NBATCH];
		for (struct r5_piece *pc = b->held; pc; pc = pc->log_next)
			b->pending--;
		*tail = b->held;
		while (*tail)
			tail = &(*tail)->log_next;
		b->held = NULL;
	}
	return out;
}

/*
 * With j->mu held: the oldest gated batch's units may go once everything
 * older is done and the tail is at its start; returns them (to resume), or
 * asks for the checkpoint that gets the tail there.
 */
static struct r5_piece *release_gated(struct jlog *j, bool *want_ckpt)
{
	pop_done(j);
	if (!j->b_count)
		return NULL;
	struct jbatch *b = &j->b[j->b_first];
	if (!b->gated || !b->logged || !b->held)
		return NULL;
	if (j->tail != b->start) {
		*want_ckpt = true;
		return NULL;
	}
	struct r5_piece *out = b->held;
	b->held = NULL;
	return out;
}

/*
 * With j->mu held and no log write in work: the waiting units that fit (in
 * buf and in the ring) are taken off the wait list as one batch, its ring
 * space and record reserved. Returns the batch's units (the caller encodes
 * and submits them unlocked; busy keeps other writers out), or NULL when
 * nothing fits (a checkpoint is wanted) or nothing waits.
 */
static struct r5_piece *take_batch(struct jlog *j, struct enc *e, uint64_t *len, bool *want_ckpt,
				   uint32_t *rchain)
{
	struct r5_piece *first = NULL, **tail = &first;
	uint64_t used = ring_dist(j, j->tail, j->head), n = 0;
	bool gated = false;

	uint32_t rfirst = 0, rlast = 0;
	unsigned nrec = 0;

	*rchain = 0;
	if (j->failed || (!j->wait_head && !j->rwait_head))
		return NULL;
	if (j->b_count == NBATCH) {
		*want_ckpt = true;
		return NULL;
	}
	unsigned bi = (j->b_first + j->b_count) % NBATCH;
	/*
	 * Write-back records, then units; their order in the log does not
	 * matter: a cached page is never written while a destage of it is in
	 * flight (wcache.c), so a record logged after a destage unit of its
	 * page holds the bytes that unit carries or newer ones.
	 */
	while (j->rwait_head) {
		struct jrec *rc = &j->rec[j->rwait_head];
		uint64_t us = rec_sectors(rc->npg);
		if ((n + us) * 512 > j->cap || (n && n + us > j->ring / 4) ||
		    used + n + us + PGS >= j->ring)
			break;
		n += us;
		nrec++;
		j->rwait_sectors -= us;
		rc->taken = true;
		rc->batch = bi;
		uint32_t ri = j->rwait_head;
		j->rwait_head = rc->next;
		if (!j->rwait_head)
			j->rwait_tail = 0;
		rc->next = 0;
		if (rlast)
			j->rec[rlast].next = ri;
		else
			rfirst = ri;
		rlast = ri;
	}
	/*
	 * Once write-back records may hold the tail, the last 3/8 of the ring
	 * is the destages' (internal writes): they release the records, so
	 * they must always find room (records take at most an eighth of the
	 * ring: destaging all they hold, parity and meta blocks included, fits
	 * in that room); other units wait for a checkpoint (units of
	 * different rows: their order in the log does not matter). A unit
	 * waiting here holds its stripe row, so it must not be a row whose
	 * destage frees the room: the cache lets no write through on a row
	 * with pages logged and not destaged (wcache.c, rows_logged).
	 */
	uint64_t reserve = j->wb_used ? j->ring / 8 * 3 : 0;
	struct r5_piece *prev = NULL;
	for (struct r5_piece *pc = j->wait_head, *nx; pc; pc = nx) {
		int kind = pc->log_res & U_KIND;
		/* records left waiting (this batch is full) may hold its data:
		   the parity must not come before them in the log */
		if (kind == U_PONLY && j->rwait_head)
			kind = U_FULL;
		uint64_t us = unit_sectors(pc, kind);
		nx = pc->log_next;
		/* keep one block free: the head never reaches the tail */
		if ((n + us) * 512 > j->cap || (n && n + us > j->ring / 4) ||
		    used + n + us + PGS >= j->ring)
			break;
		if (reserve && !(pc->rq->io->flags & ARRAY_IO_INTERNAL) &&
		    used + n + us + PGS + reserve >= j->ring) {
			*want_ckpt = true;
			prev = pc;
			continue;
		}
		n += us;
		gated |= !kind;
		pc->log_res = (int)(bi << 2 | (unsigned)kind);
		if (prev)
			prev->log_next = nx;
		else
			j->wait_head = nx;
		if (j->wait_tail == pc)
			j->wait_tail = prev;
		pc->log_next = NULL;
		*tail = pc;
		tail = &pc->log_next;
	}
	if (!first && !rfirst) {
		*want_ckpt = true;
		return NULL;
	}
	struct jbatch *b = &j->b[bi];
	*b = (struct jbatch){ .start = j->head, .gated = gated };
	for (struct r5_piece *pc = first; pc; pc = pc->log_next)
		b->pending++;
	b->pending += nrec;
	*rchain = rfirst;
	j->rinflight = rfirst;
	j->b_count++;
	*e = (struct enc){ .j = j, .head = j->head, .seq = j->seq };
	*len = n;
	j->head = uraid_r5l_ring_add(j->ring, j->head, n);
	j->inflight = first;
	j->inflight_b = bi;
	j->busy = true;
	if (ring_dist(j, j->tail, j->head) > j->ring / 4)
		*want_ckpt = true;
	return first;
}

/* Encode the batch taken (unlocked, busy held) and fill the log write(s):
   one, or two where the batch wraps the ring's end. */
static unsigned encode_batch(struct jlog *j, struct enc *e, struct r5_piece *units,
			     uint32_t recs, uint64_t len, bool offload)
{
	j->niov = 0;
	/*
	 * Pages are written from where they are (gathered) only to a journal
	 * in memory, by a write done at once (inline, up to
	 * MEMBER_INLINE_MAX) or by the log writer's thread: none of them
	 * changes before the log write is done (the batch's units wait for it
	 * with their rows held, a record's bytes are its request's until its
	 * done(), called after it). Any other log write (a journal file or
	 * device, through io_uring) takes them copied into buf, as before the
	 * log writer: with the units' own pages read by an io_uring worker,
	 * test-journal.sh once found acknowledged writes lost after a kill
	 * (commit 6a96c7b; cause not found), so that stays off.
	 *
	 * A large batch (big: JOFFLOAD_*) for a journal in memory is written
	 * off the reactor (offload, by the log writer), not inline: a client's requests
	 * all run on its connection's reactor, and that one thread copying
	 * every page a second time (the log write, as large as the member
	 * writes) held a 1 MiB sequential stream at about 0.65 x its speed
	 * without a journal; the worker copies on another CPU meanwhile,
	 * beside the reactor's member writes of the batch before and its next
	 * requests. The log writer's thread (batch_write) takes the
	 * checksums too, the reactor's largest journal cost after the copy.
	 * Where that thread could not be started, a large batch is written as
	 * a file journal's is: copied into buf, through io_uring.
	 * An A/B of 1 MiB sequential writes at QD 8 (load 10-15): the
	 * reactor's CPU per MiB 642 (main) -> 446 us, the server's 823 ->
	 * 742, one post per batch back to the reactor (encoding on the next
	 * reactor was tried: its cross-thread wake-up of each unit's resume
	 * cost more than the checksums moved). A small batch is written
	 * inline: a wake-up would cost a QD 1 write more than the copy.
	 */
	j->offload = offload && j->m->in_memory;
	j->gather_now = j->gather && j->m->in_memory &&
			(len * 512 <= MEMBER_INLINE_MAX || (j->offload && j->wthread_on));
	for (uint32_t ri = recs; ri; ri = j->rec[ri].next)
		encode_rec(e, &j->rec[ri]);
	for (struct r5_piece *pc = units; pc; pc = pc->log_next)
		encode_unit(e, pc, pc->log_res & U_KIND);
	/* e->off / 512 == len: unit_sectors counts what encode_unit writes */
	size_t seg = (size_t)(j->ring - e->head < len ? j->ring - e->head : len) * 512;
	size_t done = 0;
	unsigned nio = 0, nm = 0;
	struct member_io *mio = NULL;

	j->mio_res = 0;
	for (unsigned i = 0; i < j->niov; i++) {
		uint8_t *base = j->iov[i].iov_base;
		size_t left = j->iov[i].iov_len;
		while (left) {
			if (!seg) {     /* the ring's end: the rest from its start */
				seg = len * 512 - done;
				mio = NULL;
			}
			if (!mio || mio->iovcnt == IOV_MAX) {
				mio = &j->mio[nio++];
				memset(mio, 0, sizeof(*mio));
				mio->kind = MEMBER_WRITE;
				mio->m = j->m;
				mio->iov = &j->miov[nm];
				mio->sector = uraid_r5l_ring_add(j->ring, e->head, done / 512);
				mio->rw_flags = RWF_DSYNC;      /* md writes its log FUA */
				mio->done = log_written;
				mio->ctx = j;
			}
			size_t n = left < seg ? left : seg;
			j->miov[nm++] = (struct iovec){ .iov_base = base, .iov_len = n };
			mio->iovcnt++;
			mio->len += (uint32_t)n;
			base += n;
			left -= n;
			seg -= n;
			done += n;
		}
	}
	/* one buffer: a plain write (a journal on another array takes no
	   iovecs; the log writer's stays gathered: member_write_sync takes
	   only those) */
	for (unsigned i = 0; i < nio; i++)
		if (j->mio[i].iovcnt == 1 && !j->offload) {
			j->mio[i].buf = j->mio[i].iov[0].iov_base;
			j->mio[i].iov = NULL;
			j->mio[i].iovcnt = 0;
		}
	return nio;
}

/* On the reactor the batch was taken on: the log writer's results, as
   completions of the batch's log writes (log_written). */
static void wthread_done(struct reactor *r, struct reactor_msg *m)
{
	struct jlog *j = (struct jlog *)((char *)m - offsetof(struct jlog, wmsg));
	unsigned n = j->wn;

	/* the last one may start the next batch (and hand it to the writer,
	   which then fills wres and mio again): nothing of them is read after */
	for (unsigned i = 0; i < n; i++) {
		int res = j->wres[i];
		member_write_sync_done(r, &j->mio[i], res);
	}
}

/* The log writer's thread: one batch at a time, until jr_fini stops it. */
static void *wthread_main(void *arg)
{
	struct jlog *j = arg;

	pthread_mutex_lock(&j->mu);
	for (;;) {
		while (!j->wjob && !j->wstop)
			pthread_cond_wait(&j->wcv, &j->mu);
		if (j->wstop)
			break;
		struct enc e = { .j = j, .head = j->whead, .seq = j->wseq };
		struct r5_piece *units = j->wunits;
		uint32_t recs = j->wrecs;
		uint64_t len = j->wlen;
		struct reactor *r = j->wr;
		j->wjob = false;
		pthread_mutex_unlock(&j->mu);
		/* gathered (offload keeps the iovecs), written here and now */
		unsigned n = encode_batch(j, &e, units, recs, len, true);
		for (unsigned i = 0; i < n; i++)
			j->wres[i] = member_write_sync(&j->mio[i]);
		pthread_mutex_lock(&j->mu);
		j->seq = e.seq;
		j->mio_left = n;
		j->wn = n;
		pthread_mutex_unlock(&j->mu);
		reactor_post(r, &j->wmsg);
		pthread_mutex_lock(&j->mu);
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* Encode the batch taken (busy held) and submit its log write(s) on r
   (offload: a large batch; to a journal in memory it goes to the log
   writer's thread, checksums and copy; else, or with no such thread, here). */
static void batch_write(struct jlog *j, struct enc *e, struct r5_piece *units, uint32_t recs,
			uint64_t len, struct reactor *r, bool offload)
{
	if (offload && j->wthread_on) {
		pthread_mutex_lock(&j->mu);
		j->whead = e->head;
		j->wseq = e->seq;
		j->wunits = units;
		j->wrecs = recs;
		j->wlen = len;
		j->wr = r;
		j->wjob = true;
		pthread_cond_signal(&j->wcv);
		pthread_mutex_unlock(&j->mu);
		return;
	}
	unsigned n = encode_batch(j, e, units, recs, len, false);

	pthread_mutex_lock(&j->mu);
	j->seq = e->seq;
	j->mio_left = n;
	pthread_mutex_unlock(&j->mu);
	for (unsigned i = 0; i < n; i++)
		member_submit(r, &j->mio[i]);
}

/* With nothing held: start the next batch if one is due (on reactor r). */
static void try_start(struct jlog *j, struct reactor *r)
{
	struct r5_piece *units = NULL, *go = NULL;
	bool ckpt = false;
	struct enc e;
	uint64_t len = 0;
	uint32_t recs = 0;
	bool big = false;

	pthread_mutex_lock(&j->mu);
	if (!j->busy) {
		units = take_batch(j, &e, &len, &ckpt, &recs);
		if (units || recs) {
			unsigned n = j->b[j->inflight_b].pending;
			big = len * 512 >= JOFFLOAD_MIN && n && len * 512 / n >= JOFFLOAD_AVG;
		}
	}
	if (!j->failed)
		go = release_gated(j, &ckpt);
	if (ckpt && (j->failed || j->ckpt_busy || ckpt_target(j) == j->tail))
		ckpt = false;
	if (ckpt)
		j->ckpt_busy = true;
	pthread_mutex_unlock(&j->mu);
	resume_chain(go, 0);
	if (units || recs)
		batch_write(j, &e, units, recs, len, r, big);
	if (ckpt)
		ckpt_start(j, r);
}

/* With j->mu held: free record index ri if nothing holds it any more; its
   batch has one unit fewer pending. */
static void rec_maybe_free(struct jlog *j, uint32_t ri)
{
	struct jrec *rc = &j->rec[ri];

	if (rc->refs || !rc->logged || rc->cb || !rc->live)
		return;
	if (rc->taken && !j->failed) {
		j->b[rc->batch].pending--;
		pop_done(j);
	}
	rc->live = false;
	rc->buf = NULL;
	j->rec_sectors -= rec_sectors(rc->npg);
	rc->next = j->rec_free;
	j->rec_free = ri;
	j->rec_live--;
}

/*
 * Tell a chain of records (marked cb, nothing held) their result, then let
 * them go. Counted in flight meanwhile: a done() may end the last request
 * of the array, and close must not free j under the loop.
 */
static void rec_done_chain(struct jlog *j, uint32_t ri, int res, struct reactor *r)
{
	if (!ri)
		return;
	atomic_fetch_add(&j->base.a->counters[0].in_flight, 1);
	while (ri) {
		struct jrec *rc = &j->rec[ri];
		uint32_t next = rc->next;
		rc->done(rc->arg, rc->id, res);
		pthread_mutex_lock(&j->mu);
		rc->cb = false;
		rc->next = 0;
		rec_maybe_free(j, ri);
		pthread_mutex_unlock(&j->mu);
		ri = next;
	}
	/* records they let go (older copies of their pages): room, a checkpoint */
	if (!res)
		try_start(j, r);
	atomic_fetch_sub(&j->base.a->counters[0].in_flight, 1);
}

/* With j->mu held: mark a chain of records logged (their done() is due). */
static void rec_mark_logged(struct jlog *j, uint32_t ri)
{
	for (; ri; ri = j->rec[ri].next) {
		j->rec[ri].logged = true;
		j->rec[ri].cb = true;
	}
}

/* With j->mu held, the journal failed: the waiting records as one chain. */
static uint32_t rec_take_waiting(struct jlog *j)
{
	uint32_t ri = j->rwait_head;

	j->rwait_head = j->rwait_tail = 0;
	j->rwait_sectors = 0;
	rec_mark_logged(j, ri);
	return ri;
}

static void log_written(struct member_io *mio, int res)
{
	struct jlog *j = mio->ctx;
	struct reactor *r = mio->r;
	struct r5_piece *u, *failed = NULL;
	uint32_t recs, rfailed = 0;
	bool bad;
	int err;

	pthread_mutex_lock(&j->mu);
	if (res < 0 && !j->mio_res)
		j->mio_res = res;
	if (--j->mio_left) {
		pthread_mutex_unlock(&j->mu);
		return;
	}
	err = j->mio_res;
	u = j->inflight;
	j->inflight = NULL;
	recs = j->rinflight;
	j->rinflight = 0;
	rec_mark_logged(j, recs);
	struct jbatch *b = &j->b[j->inflight_b];
	b->logged = true;
	j->busy = false;
	bad = err || j->failed;
	if (!bad) {
		/* busy kept the next batch out: head and seq end this one */
		j->lhead = j->head;
		j->lseq = j->seq;
	}
	if (bad) {
		/* md fails the journal and the writes (log_failed): none goes on
		   unlogged; the batch's units fail, and every later one */
		bool first = !j->failed;
		b->pending = 0;
		failed = fail_journal(j);
		rfailed = rec_take_waiting(j);
		if (first)
			ulog(array_log(j->base.a), URAID_LOG_ERR, "write journal %s: log write "
			     "failed (%s): writes to the array fail from now on (stop it, fix "
			     "or replace the journal, assemble again)", j->m->path,
			     strerror(-(err ? err : EIO)));
	} else if (b->gated) {
		b->held = u;    /* released once the tail reaches b->start */
		u = NULL;
	}
	pthread_mutex_unlock(&j->mu);
	if (bad) {
		resume_chain(u, -EIO);
		resume_chain(failed, -EIO);
		rec_done_chain(j, recs, -EIO, r);
		rec_done_chain(j, rfailed, -EIO, r);
		return;
	}
	/*
	 * The batch's units go on to their member writes and its records'
	 * writes complete first (posted: those of other reactors go on now,
	 * beside the next log write, and an acknowledgement does not wait for
	 * it), then the next batch (rec_done_chain starts it). Counted in
	 * flight meanwhile: once the last unit is let go the array may close,
	 * and j must outlive try_start.
	 */
	atomic_fetch_add(&j->base.a->counters[0].in_flight, 1);
	resume_chain(u, 0);
	if (recs)
		rec_done_chain(j, recs, 0, r);
	else
		try_start(j, r);
	atomic_fetch_sub(&j->base.a->counters[0].in_flight, 1);
}

/* ---- write-back records (parity_log.h wb_add) ---- */

static uint32_t jr_wb_add(struct parity_log *pl, uint64_t sector, uint32_t npg, const void *buf,
			  void (*done)(void *arg, uint32_t rec, int res), void *arg)
{
	struct jlog *j = (struct jlog *)pl;
	uint64_t us = rec_sectors(npg);
	uint32_t id = 0;

	pthread_mutex_lock(&j->mu);
	/*
	 * md reserves journal space for what its cache holds and flushes
	 * stripes when the log runs low: here live records take at most an
	 * eighth of the ring, the ring in use at most half when one is added
	 * (the last 3/8 are for the destages' own log writes, which release
	 * them: take_batch), and records at most half the batch ring.
	 */
	if (!j->failed && j->rec_free && sector % PGS == 0 && us * 512 <= j->cap &&
	    j->rec_sectors + us <= j->ring / 8 && j->b_count < NBATCH / 2 &&
	    ring_dist(j, j->tail, j->head) + j->rwait_sectors + us <= j->ring / 2) {
		uint32_t ri = j->rec_free;
		struct jrec *rc = &j->rec[ri];
		j->rec_free = rc->next;
		id = ((rc->id & ~(NREC - 1)) + NREC) | ri;
		if (!(id & ~(NREC - 1)))
			id = NREC | ri;   /* the generation wrapped: never 0 */
		*rc = (struct jrec){ .sector = sector, .buf = buf, .done = done, .arg = arg,
				     .id = id, .live = true, .npg = npg, .refs = npg };
		if (j->rwait_tail)
			j->rec[j->rwait_tail].next = ri;
		else
			j->rwait_head = ri;
		j->rwait_tail = ri;
		j->rwait_sectors += us;
		j->rec_live++;
		j->rec_sectors += us;
		j->wb_used = true;
	}
	pthread_mutex_unlock(&j->mu);
	return id;
}

static void jr_wb_put(struct parity_log *pl, uint32_t id)
{
	struct jlog *j = (struct jlog *)pl;
	uint32_t ri = REC_IDX(id);

	if (!id)
		return;
	pthread_mutex_lock(&j->mu);
	struct jrec *rc = &j->rec[ri];
	if (rc->live && rc->id == id && rc->refs) {
		rc->refs--;
		rec_maybe_free(j, ri);
	}
	pthread_mutex_unlock(&j->mu);
}

static bool jr_wb_pressure(struct parity_log *pl)
{
	struct jlog *j = (struct jlog *)pl;

	pthread_mutex_lock(&j->mu);
	bool low = ring_dist(j, j->tail, j->head) + j->rwait_sectors > j->ring / 4 ||
		   j->rec_sectors > j->ring / 16;
	pthread_mutex_unlock(&j->mu);
	return low;
}

static uint32_t jr_wb_batches_free(struct parity_log *pl)
{
	struct jlog *j = (struct jlog *)pl;

	pthread_mutex_lock(&j->mu);
	uint32_t n = j->failed ? 0 : NBATCH - j->b_count;
	pthread_mutex_unlock(&j->mu);
	return n;
}

static void jr_wb_kick(struct parity_log *pl, struct reactor *r)
{
	try_start((struct jlog *)pl, r);
}

static void jr_wb_status(struct parity_log *pl, uint64_t *ring, uint64_t *used, uint64_t *seq,
			 uint64_t *held)
{
	struct jlog *j = (struct jlog *)pl;

	pthread_mutex_lock(&j->mu);
	/* what is in the log, not what a batch being written will add (its
	   seq is known only once encoded, by the log writer's thread) */
	*ring = j->ring;
	*used = ring_dist(j, j->tail, j->lhead);
	*seq = j->lseq;
	*held = j->rec_live;
	pthread_mutex_unlock(&j->mu);
}

static int jr_before_writes(struct parity_log *pl, struct r5_piece *pc,
			    parity_log_resume_fn *resume)
{
	struct jlog *j = (struct jlog *)pl;
	int kind;

	pc->log_resume = NULL;          /* not in the log (after_writes looks) */
	if (pc->op != OP_WRITE && pc->op != OP_ZERO)
		return 0;
	pthread_mutex_lock(&j->mu);
	bool wb_used = j->wb_used;
	pthread_mutex_unlock(&j->mu);
	kind = unit_kind(j, pc, wb_used);
	pc->log_resume = resume;
	pc->log_next = NULL;
	pc->log_res = kind;
	pthread_mutex_lock(&j->mu);
	if (j->failed) {
		pthread_mutex_unlock(&j->mu);
		pc->log_resume = NULL;
		return -EIO;
	}
	if (!kind)
		j->unprotected++;
	if (j->wait_tail)
		j->wait_tail->log_next = pc;
	else
		j->wait_head = pc;
	j->wait_tail = pc;
	pthread_mutex_unlock(&j->mu);
	try_start(j, r5_piece_reactor(pc));
	return 1;
}

static void jr_after_writes(struct parity_log *pl, struct r5_piece *pc, int res)
{
	struct jlog *j = (struct jlog *)pl;
	bool more;

	(void)res;
	if (!pc->log_resume)
		return;
	pc->log_resume = NULL;
	pthread_mutex_lock(&j->mu);
	if (!j->failed) {
		j->b[U_BATCH(pc)].pending--;
		/* batches done from the oldest on are forgotten; the tail moves at
		   the next checkpoint */
		pop_done(j);
	}
	more = !j->failed && ((j->wait_head && !j->busy) ||
			      (j->b_count && j->b[j->b_first].held));
	pthread_mutex_unlock(&j->mu);
	if (more)       /* units waiting for a batch record, for room, or gated */
		try_start(j, r5_piece_reactor(pc));
}

/* ---- checkpoints (on the metadata worker) ---- */

static int ckpt_run(struct meta_call *c)
{
	struct jlog *j = (struct jlog *)((char *)c - offsetof(struct jlog, call));
	struct array *a = j->base.a;
	uint64_t new_tail;
	int rc = 0;

	/* what the tail may move to now: the oldest batch not done, or the newest */
	pthread_mutex_lock(&j->mu);
	new_tail = ckpt_target(j);
	pthread_mutex_unlock(&j->mu);
	if (new_tail == j->tail)
		return 0;
	/* the member writes done so far durable before the log lets them go:
	   the slots' members and their replacements (whose writes the rows
	   also hold), as start_flush does; meta_lock keeps them in place */
	pthread_mutex_lock(&a->meta_lock);
	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		struct member *m = a->slot[s].m;
		struct member *repl = atomic_load(&a->slot[s].repl);
		if (m && m->fd >= 0 && fdatasync(m->fd) < 0 && !rc)
			rc = -errno;
		if (repl && repl->fd >= 0 && fdatasync(repl->fd) < 0 && !rc)
			rc = -errno;
	}
	/* members[] may have been compacted since: find the journal again */
	if (!rc) {
		rc = -ENODEV;
		for (unsigned i = 0; i < a->nmembers; i++)
			if (a->members[i] == j->m && a->member_state[i] == URAID_MEMBER_JOURNAL) {
				a->member_sb[i].recovery_offset = new_tail;
				rc = meta_record_change(a);
				break;
			}
	}
	pthread_mutex_unlock(&a->meta_lock);
	if (!rc) {
		pthread_mutex_lock(&j->mu);
		j->ckpt_tail = new_tail;
		pthread_mutex_unlock(&j->mu);
	}
	return rc;
}

static void ckpt_done(struct meta_call *c, int rc)
{
	struct jlog *j = (struct jlog *)((char *)c - offsetof(struct jlog, call));
	struct r5_piece *failed = NULL;

	pthread_mutex_lock(&j->mu);
	if (!rc)
		j->tail = j->ckpt_tail;
	else if (!j->failed)
		failed = fail_journal(j);       /* else it would retry (and spin) forever */
	j->ckpt_busy = false;
	pthread_mutex_unlock(&j->mu);
	if (rc) {
		ulog(array_log(j->base.a), URAID_LOG_ERR, "write journal %s: checkpoint failed "
		     "(%s): writes to the array fail from now on", j->m->path, strerror(-rc));
		resume_chain(failed, -EIO);
	} else {
		try_start(j, c->r);
	}
	/* the last access: close may free j once this is counted out */
	atomic_fetch_sub(&j->base.a->counters[0].in_flight, 1);
}

static void ckpt_start(struct jlog *j, struct reactor *r)
{
	pthread_mutex_lock(&j->mu);
	j->ckpt_tail = j->tail;
	pthread_mutex_unlock(&j->mu);
	/* counted in flight, so that close waits for it (it uses j) */
	atomic_fetch_add(&j->base.a->counters[0].in_flight, 1);
	meta_call_submit(j->base.a->e, j->base.a, &j->call, r, ckpt_run, ckpt_done);
}

static void jr_fini(struct parity_log *pl)
{
	struct jlog *j = (struct jlog *)pl;

	if (j->unprotected)
		ulog(array_log(pl->a), URAID_LOG_NOTICE, "write journal %s: %" PRIu64 " writes were "
		     "not whole 4 KiB rows with their parity: logged as FLUSH only, each after "
		     "a checkpoint past the older log", j->m->path, j->unprotected);
	if (j->wthread_on) {
		pthread_mutex_lock(&j->mu);
		j->wstop = true;
		pthread_cond_signal(&j->wcv);
		pthread_mutex_unlock(&j->mu);
		pthread_join(j->wthread, NULL);
	}
	pthread_cond_destroy(&j->wcv);
	pthread_mutex_destroy(&j->mu);
	free(j->wres);
	free(j->rec);
	free(j->buf);
	free(j->iov);
	free(j->miov);
	free(j->mio);
	free(j);
}

static const struct parity_log_ops journal_ops = {
	.name = "journal",
	.before_writes = jr_before_writes,
	.after_writes = jr_after_writes,
	.flush = NULL,          /* log writes are durable when done (RWF_DSYNC) */
	.fini = jr_fini,
	.wb_add = jr_wb_add,
	.wb_put = jr_wb_put,
	.wb_kick = jr_wb_kick,
	.wb_pressure = jr_wb_pressure,
	.wb_batches_free = jr_wb_batches_free,
	.wb_status = jr_wb_status,
};

int raid5_journal_log_create(struct array *a, unsigned jidx, uint64_t ring, uint64_t head,
			     uint64_t seq, uint64_t tail, struct parity_log **out)
{
	struct jlog *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->base.ops = &journal_ops;
	j->base.a = a;
	uraid_mutex_init_adaptive(&j->mu);
	pthread_cond_init(&j->wcv, NULL);
	j->wmsg.fn = wthread_done;
	j->m = a->members[jidx];
	j->seed = uraid_r5l_seed(a->sb.set_uuid);
	j->ring = ring;
	j->head = head;
	j->seq = seq;
	j->tail = tail;
	j->lhead = head;
	j->lseq = seq;
	/* the largest unit: a quarter of the ring as whole rows of every slot
	   and one meta block per row (so whole-page units are logged whole, not
	   as FLUSH), at most the write path's own; span_reads stays false (the
	   journal logs the new data, not the old) */
	uint64_t maxu = ring / 4 / (a->geom.raid_disks + 1) / PGS * PGS;
	if (maxu > R5_SEG_SECTORS)
		maxu = R5_SEG_SECTORS;
	if (maxu < PGS)
		maxu = PGS;
	j->base.max_unit_sectors = (uint32_t)maxu;
	j->base.span_reads = false;
	/* a unit not 4 KiB aligned covers one more row */
	j->cap = (size_t)(maxu / PGS + 1) * (a->geom.raid_disks + 1) * PG;
	j->buf = aligned_alloc(4096, j->cap);
	/* a batch is at most cap / PG pages, each its own iovec at worst; a
	   log write at most IOV_MAX of them, and one more cut at the ring's end */
	j->iov_cap = (unsigned)(j->cap / PG) + 1;
	j->mio_cap = j->iov_cap / IOV_MAX + 3;
	j->iov = calloc(j->iov_cap, sizeof(*j->iov));
	j->miov = calloc((size_t)j->iov_cap + j->mio_cap, sizeof(*j->miov));
	j->mio = calloc(j->mio_cap, sizeof(*j->mio));
	j->gather = !j->m->stack;
	j->rec = calloc(NREC, sizeof(*j->rec));
	for (uint32_t i = NREC - 1; j->rec && i >= 1; i--) {
		j->rec[i].next = j->rec_free;
		j->rec[i].id = i;
		j->rec_free = i;
	}
	j->wres = calloc(j->mio_cap, sizeof(*j->wres));
	if (!j->buf || !j->rec || !j->iov || !j->miov || !j->mio || !j->wres) {
		jr_fini(&j->base);
		return -ENOMEM;
	}
	/* the log writer, for a journal in memory (batch_write); without it
	   (no thread) large batches are copied and written on the reactor */
	if (j->gather && j->m->in_memory && !pthread_create(&j->wthread, NULL, wthread_main, j)) {
		pthread_setname_np(j->wthread, "uraid-jlog");
		j->wthread_on = true;
	}
	*out = &j->base;
	return 0;
}
