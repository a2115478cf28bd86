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
 * Threads: the hooks run on the pieces' reactors, the state under one
 * mutex never held across I/O; a batch is taken off the wait list under it
 * and encoded without it (busy keeps other writers out of buf); a log write
 * is submitted on the reactor of the unit that started it; each unit
 * resumes on its own (reactor_post).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/level/parity_log.h"
#include "engine/level/raid5_journal.h"
#include "engine/level/raid5_priv.h"
#include "engine/md/meta_worker.h"
#include "format/r5l.h"

#define PG URAID_R5L_BLOCK
#define PGS URAID_R5L_BLOCK_SECTORS
#define ROOM (URAID_R5L_BLOCK - URAID_R5L_META_HEADER)
#define NBATCH 64u              /* batches not yet done (ring of records) */

/*
 * A unit in the log is its piece (r5_piece.log_*, parity_log.h): log_next
 * links the wait list and a batch's units, log_resume is set while the
 * piece is in the log (after_writes looks), and log_res holds, until the
 * unit resumes, (batch record << 1) | full, full meaning logged as whole
 * rows with parity (else FLUSH); a negative log_res is the result a unit
 * that failed resumes with.
 */
#define U_FULL 1
#define U_BATCH(pc) ((unsigned)(pc)->log_res >> 1)

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
	struct jbatch b[NBATCH];
	unsigned b_first, b_count;
	struct r5_piece *wait_head, *wait_tail;
	struct r5_piece *inflight;      /* the batch being logged */
	bool busy;                      /* a log write in work */
	bool ckpt_busy;
	bool failed;                    /* a log write or checkpoint failed: writes fail */
	uint64_t ckpt_tail;
	uint8_t *buf;
	size_t cap;                     /* bytes */
	struct member_io mio[2];
	unsigned mio_left;
	int mio_res;
	struct meta_call call;
	uint64_t unprotected;           /* units logged as FLUSH only */
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

/* Log sectors the unit takes as full rows, or as FLUSH payloads. */
static uint64_t unit_sectors(const struct r5_piece *pc, bool full)
{
	uint64_t first;
	unsigned rows;

	unit_rows(pc, &first, &rows);
	if (!full) {
		unsigned per = ROOM / 16;
		return (uint64_t)((rows + per - 1) / per) * PGS;
	}
	unsigned nw = written_data(pc);
	unsigned rowbytes = nw * 20 + 16 + 4 * pc->npar;
	unsigned per = ROOM / rowbytes;
	unsigned metas = (rows + per - 1) / per;
	return ((uint64_t)rows * (nw + pc->npar) + metas) * PGS;
}

static bool unit_full(const struct jlog *j, const struct r5_piece *pc)
{
	unsigned ps = pc->st.p_slot;
	int qs = pc->st.q_slot;

	if (pc->plan.mode == R5_DIRECT || pc->ux % PGS || pc->ulen % PG || !written_data(pc))
		return false;
	if ((pc->sflag[ps] & SF_DEAD) || !r5_live(pc, ps))
		return false;
	if (pc->npar == 2 && ((pc->sflag[qs] & SF_DEAD) || !r5_live(pc, (unsigned)qs)))
		return false;
	/* a batch is at most a quarter of the ring: the newest batch (kept
	   until the next checkpoint) and the next one always fit together
	   (max_unit_sectors keeps whole-page units within it) */
	return unit_sectors(pc, true) <= j->ring / 4 &&
	       unit_sectors(pc, true) * 512 <= j->cap;
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

static void enc_open(struct enc *e)
{
	struct jlog *j = e->j;
	enc_seal(e);
	e->meta = j->buf + e->off;
	uraid_r5l_meta_init(e->meta, e->seq++, uraid_r5l_ring_add(j->ring, e->head, e->off / 512));
	e->off += PG;
}

static void enc_page(struct enc *e, const void *src)
{
	memcpy(e->j->buf + e->off, src, PG);
	e->off += PG;
}

static void encode_unit(struct enc *e, struct r5_piece *pc, bool full)
{
	uint64_t first;
	unsigned rows;

	unit_rows(pc, &first, &rows);
	if (!full) {
		for (unsigned r = 0; r < rows; r++) {
			if (!e->meta || uraid_r5l_meta_room(e->meta) < 16)
				enc_open(e);
			uraid_r5l_meta_add_flush(e->meta, first + (uint64_t)r * PGS);
		}
		enc_seal(e);    /* each unit starts its own meta block */
		return;
	}
	unsigned nw = written_data(pc), ps = pc->st.p_slot;
	unsigned rowbytes = nw * 20 + 16 + 4 * pc->npar;
	uint64_t row_start = pc->st.stripe * pc->d * pc->C;
	for (unsigned r = 0; r < rows; r++) {
		size_t in = (size_t)r * PG;
		uint32_t c[2];

		if (!e->meta || uraid_r5l_meta_room(e->meta) < rowbytes)
			enc_open(e);
		for (unsigned k = 0; k < pc->d; k++) {
			if (!pc->wr[k])
				continue;
			const uint8_t *src = (const uint8_t *)r5_new_data(pc, k) + in;
			uraid_r5l_meta_add_data(e->meta, row_start + (uint64_t)k * pc->C + pc->ux +
						(uint64_t)r * PGS, uraid_r5l_page_csum(e->j->seed, src));
			enc_page(e, src);
		}
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

static void log_written(struct member_io *mio, int res);
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
static struct r5_piece *take_batch(struct jlog *j, struct enc *e, uint64_t *len, bool *want_ckpt)
{
	struct r5_piece *first = NULL, **tail = &first;
	uint64_t used = ring_dist(j, j->tail, j->head), n = 0;
	bool gated = false;

	if (j->failed || !j->wait_head)
		return NULL;
	if (j->b_count == NBATCH) {
		*want_ckpt = true;
		return NULL;
	}
	unsigned bi = (j->b_first + j->b_count) % NBATCH;
	while (j->wait_head) {
		struct r5_piece *pc = j->wait_head;
		bool full = pc->log_res & U_FULL;
		uint64_t us = unit_sectors(pc, full);
		/* keep one block free: the head never reaches the tail */
		if ((n + us) * 512 > j->cap || (n && n + us > j->ring / 4) ||
		    used + n + us + PGS >= j->ring)
			break;
		n += us;
		gated |= !full;
		pc->log_res = (int)(bi << 1 | full);
		j->wait_head = pc->log_next;
		if (!j->wait_head)
			j->wait_tail = NULL;
		pc->log_next = NULL;
		*tail = pc;
		tail = &pc->log_next;
	}
	if (!first) {
		*want_ckpt = true;
		return NULL;
	}
	struct jbatch *b = &j->b[bi];
	*b = (struct jbatch){ .start = j->head, .gated = gated };
	for (struct r5_piece *pc = first; pc; pc = pc->log_next)
		b->pending++;
	j->b_count++;
	*e = (struct enc){ .j = j, .head = j->head, .seq = j->seq };
	*len = n;
	j->head = uraid_r5l_ring_add(j->ring, j->head, n);
	j->inflight = first;
	j->busy = true;
	if (ring_dist(j, j->tail, j->head) > j->ring / 4)
		*want_ckpt = true;
	return first;
}

/* Encode the batch taken (unlocked, busy held) and fill the log write(s):
   one, or two where the batch wraps the ring's end. */
static unsigned encode_batch(struct jlog *j, struct enc *e, struct r5_piece *units, uint64_t len)
{
	for (struct r5_piece *pc = units; pc; pc = pc->log_next)
		encode_unit(e, pc, pc->log_res & U_FULL);
	/* e->off / 512 == len: unit_sectors counts what encode_unit writes */
	uint64_t first = j->ring - e->head < len ? j->ring - e->head : len;
	uint64_t at = e->head;
	unsigned nio = 0;

	j->mio_res = 0;
	for (uint64_t done = 0; done < len;) {
		uint64_t n = done ? len - done : first;
		struct member_io *mio = &j->mio[nio++];
		memset(mio, 0, sizeof(*mio));
		mio->kind = MEMBER_WRITE;
		mio->m = j->m;
		mio->buf = j->buf + done * 512;
		mio->len = (uint32_t)(n * 512);
		mio->sector = at;
		mio->rw_flags = RWF_DSYNC;      /* md writes its log FUA */
		mio->done = log_written;
		mio->ctx = j;
		done += n;
		at = uraid_r5l_ring_add(j->ring, at, n);
	}
	return nio;
}

/* With nothing held: start the next batch if one is due (on reactor r). */
static void try_start(struct jlog *j, struct reactor *r)
{
	struct r5_piece *units = NULL, *go = NULL;
	bool ckpt = false;
	struct enc e;
	uint64_t len = 0;

	pthread_mutex_lock(&j->mu);
	if (!j->busy)
		units = take_batch(j, &e, &len, &ckpt);
	if (!j->failed)
		go = release_gated(j, &ckpt);
	if (ckpt && (j->failed || j->ckpt_busy || ckpt_target(j) == j->tail))
		ckpt = false;
	if (ckpt)
		j->ckpt_busy = true;
	pthread_mutex_unlock(&j->mu);
	resume_chain(go, 0);
	if (units) {
		unsigned n = encode_batch(j, &e, units, len);

		pthread_mutex_lock(&j->mu);
		j->seq = e.seq;
		j->mio_left = n;
		pthread_mutex_unlock(&j->mu);
		for (unsigned i = 0; i < n; i++)
			member_submit(r, &j->mio[i]);
	}
	if (ckpt)
		ckpt_start(j, r);
}

static void log_written(struct member_io *mio, int res)
{
	struct jlog *j = mio->ctx;
	struct reactor *r = mio->r;
	struct r5_piece *u, *failed = NULL;
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
	struct jbatch *b = &j->b[U_BATCH(u)];
	b->logged = true;
	j->busy = false;
	if (err || j->failed) {
		/* md fails the journal and the writes (log_failed): none goes on
		   unlogged; the batch's units fail, and every later one */
		bool first = !j->failed;
		b->pending = 0;
		failed = fail_journal(j);
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
	if (failed) {
		resume_chain(u, -EIO);
		resume_chain(failed, -EIO);
		return;
	}
	/* the next batch first: once the last unit is let go the array may close */
	try_start(j, r);
	resume_chain(u, 0);
}

static int jr_before_writes(struct parity_log *pl, struct r5_piece *pc,
			    parity_log_resume_fn *resume)
{
	struct jlog *j = (struct jlog *)pl;
	bool full;

	pc->log_resume = NULL;          /* not in the log (after_writes looks) */
	if (pc->op != OP_WRITE && pc->op != OP_ZERO)
		return 0;
	full = unit_full(j, pc);
	pc->log_resume = resume;
	pc->log_next = NULL;
	pc->log_res = full ? U_FULL : 0;
	pthread_mutex_lock(&j->mu);
	if (j->failed) {
		pthread_mutex_unlock(&j->mu);
		pc->log_resume = NULL;
		return -EIO;
	}
	if (!full)
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
	pthread_mutex_destroy(&j->mu);
	free(j->buf);
	free(j);
}

static const struct parity_log_ops journal_ops = {
	.name = "journal",
	.before_writes = jr_before_writes,
	.after_writes = jr_after_writes,
	.flush = NULL,          /* log writes are durable when done (RWF_DSYNC) */
	.fini = jr_fini,
};

int raid5_journal_log_create(struct array *a, unsigned jidx, uint64_t ring, uint64_t head,
			     uint64_t seq, uint64_t tail, struct parity_log **out)
{
	struct jlog *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->base.ops = &journal_ops;
	j->base.a = a;
	pthread_mutex_init(&j->mu, NULL);
	j->m = a->members[jidx];
	j->seed = uraid_r5l_seed(a->sb.set_uuid);
	j->ring = ring;
	j->head = head;
	j->seq = seq;
	j->tail = tail;
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
	if (!j->buf) {
		jr_fini(&j->base);
		return -ENOMEM;
	}
	*out = &j->base;
	return 0;
}
