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
 * written, larger than half the ring) is preceded by FLUSH payloads for its
 * rows instead: md's recovery then drops what older blocks hold for them,
 * so a replay never writes older data over it (such a unit is as exposed to
 * the write hole as without a journal, and counted).
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
 * mutex never held across I/O; a log write is submitted on the reactor of
 * the unit that started it; each unit resumes on its own (reactor_post).
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
#define NUNITS 65536u           /* units in the log at once (pieces in flight) */
#define NBUCKETS 4096u          /* units by piece, for after_writes */

struct junit {
	struct junit *next;
	struct junit *hnext;            /* bucket chain */
	struct r5_piece *pc;
	parity_log_resume_fn *resume;
	struct reactor *r;
	struct reactor_msg msg;
	unsigned batch;                 /* index in b[] */
	bool full;                      /* logged with data and parity (else FLUSH) */
	uint64_t sectors;               /* its log space */
};

struct jbatch {
	uint64_t start;                 /* ring position of its first meta block */
	unsigned pending;               /* units whose member writes are not done */
	bool logged;
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
	struct junit *units, *free_units;
	struct junit *bucket[NBUCKETS];
	struct junit *wait_head, *wait_tail;
	struct junit *inflight;         /* the batch being logged */
	bool busy;                      /* a log write in work */
	bool ckpt_busy;
	uint64_t ckpt_tail;
	uint8_t *buf;
	size_t cap;                     /* bytes */
	struct member_io mio[2];
	unsigned mio_left;
	int mio_res;
	struct meta_call call;
	uint64_t unprotected;           /* units logged as FLUSH only */
	bool warned;                    /* a log write failed (said once) */
};

static struct reactor *piece_reactor(struct r5_piece *pc)
{
	return &pc->rq->er->r;
}

static unsigned bucket_of(const struct r5_piece *pc)
{
	return (unsigned)(((uintptr_t)pc >> 6) * 0x9e3779b1u >> 20) % NBUCKETS;
}

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
	   until the next checkpoint) and the next one always fit together */
	return unit_sectors(pc, true) <= j->ring / 4 &&
	       unit_sectors(pc, true) * 512 <= j->cap;
}

/* Encoding a batch into buf: the open meta block and where pages go. */
struct enc {
	struct jlog *j;
	uint8_t *meta;                  /* in buf */
	uint64_t meta_pos;
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
	e->meta_pos = uraid_r5l_ring_add(j->ring, j->head, e->off / 512);
	uraid_r5l_meta_init(e->meta, j->seq++, e->meta_pos);
	e->off += PG;
}

static void enc_page(struct enc *e, const void *src)
{
	memcpy(e->j->buf + e->off, src, PG);
	e->off += PG;
}

static void encode_unit(struct enc *e, struct junit *u)
{
	struct r5_piece *pc = u->pc;
	uint64_t first;
	unsigned rows;

	unit_rows(pc, &first, &rows);
	if (!u->full) {
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

/* With j->mu held: where a checkpoint now would move the tail. */
static uint64_t ckpt_target(const struct jlog *j)
{
	if (!j->b_count)
		return j->tail;
	const struct jbatch *b = &j->b[j->b_first];
	if (!b->pending && b->logged)
		return j->b[(j->b_first + j->b_count - 1) % NBATCH].start;
	return b->start;
}

/*
 * With j->mu held and no log write in work: the waiting units that fit (in
 * buf and in the ring) become one batch, encoded in buf. Returns true when
 * the caller must submit j->mio (unlocked); false when nothing fits (a
 * checkpoint is wanted) or nothing waits.
 */
static bool build_batch(struct jlog *j, bool *want_ckpt)
{
	struct enc e = { .j = j };
	struct junit **tail = &j->inflight;
	uint64_t used = ring_dist(j, j->tail, j->head);

	*want_ckpt = false;
	if (!j->wait_head || j->b_count == NBATCH)
		return false;
	j->inflight = NULL;
	unsigned bi = (j->b_first + j->b_count) % NBATCH;
	while (j->wait_head) {
		struct junit *u = j->wait_head;
		/* keep one block free: the head never reaches the tail */
		if (e.off + u->sectors * 512 > j->cap ||
		    (e.off && e.off / 512 + u->sectors > j->ring / 4) ||
		    used + e.off / 512 + u->sectors + PGS >= j->ring)
			break;
		encode_unit(&e, u);
		u->batch = bi;
		j->wait_head = u->next;
		if (!j->wait_head)
			j->wait_tail = NULL;
		u->next = NULL;
		*tail = u;
		tail = &u->next;
	}
	if (!j->inflight) {
		*want_ckpt = true;
		return false;
	}
	struct jbatch *b = &j->b[bi];
	b->start = j->head;
	b->pending = 0;
	b->logged = false;
	for (struct junit *u = j->inflight; u; u = u->next)
		b->pending++;
	j->b_count++;

	/* one write, or two where the batch wraps the ring's end */
	uint64_t len = e.off / 512, first = j->ring - j->head < len ? j->ring - j->head : len;
	uint64_t at = j->head;
	j->mio_left = 0;
	j->mio_res = 0;
	for (uint64_t done = 0; done < len;) {
		uint64_t n = done ? len - done : first;
		struct member_io *mio = &j->mio[j->mio_left++];
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
	j->head = uraid_r5l_ring_add(j->ring, j->head, len);
	j->busy = true;
	if (ring_dist(j, j->tail, j->head) > j->ring / 4)
		*want_ckpt = true;
	return true;
}

/* With nothing held: start the next batch if one is due (on reactor r). */
static void try_start(struct jlog *j, struct reactor *r)
{
	bool submit = false, ckpt = false;
	unsigned n = 0;

	pthread_mutex_lock(&j->mu);
	if (!j->busy)
		submit = build_batch(j, &ckpt);
	n = submit ? j->mio_left : 0;
	if (ckpt && (j->ckpt_busy || ckpt_target(j) == j->tail))
		ckpt = false;
	if (ckpt)
		j->ckpt_busy = true;
	pthread_mutex_unlock(&j->mu);
	for (unsigned i = 0; i < n; i++)
		member_submit(r, &j->mio[i]);
	if (ckpt)
		ckpt_start(j, r);
}

static void resume_msg(struct reactor *r, struct reactor_msg *m)
{
	struct junit *u = (struct junit *)((char *)m - offsetof(struct junit, msg));
	(void)r;
	u->resume(u->pc, 0);
}

static void log_written(struct member_io *mio, int res)
{
	struct jlog *j = mio->ctx;
	struct reactor *r = mio->r;
	struct junit *u, *next;

	pthread_mutex_lock(&j->mu);
	if (res < 0 && !j->mio_res)
		j->mio_res = res;
	if (--j->mio_left) {
		pthread_mutex_unlock(&j->mu);
		return;
	}
	/* md fails the journal device (and writes no more); here its units go
	   on unprotected, said once */
	if (j->mio_res && !j->warned) {
		j->warned = true;
		ulog(array_log(j->base.a), URAID_LOG_ERR, "write journal %s: log write failed (%s): "
		     "rows are written unprotected", j->m->path, strerror(-j->mio_res));
	}
	u = j->inflight;
	j->inflight = NULL;
	j->b[u->batch].logged = true;
	j->busy = false;
	pthread_mutex_unlock(&j->mu);
	/* the next batch first: once the last unit is let go the array may close */
	try_start(j, r);
	/* the chain is read before each unit may finish and its piece be reused */
	for (; u; u = next) {
		next = u->next;
		u->msg.fn = resume_msg;
		reactor_post(u->r, &u->msg);
	}
}

static int jr_before_writes(struct parity_log *pl, struct r5_piece *pc,
			    parity_log_resume_fn *resume)
{
	struct jlog *j = (struct jlog *)pl;
	struct junit *u;

	if (pc->op != OP_WRITE && pc->op != OP_ZERO)
		return 0;
	pthread_mutex_lock(&j->mu);
	u = j->free_units;
	if (u)
		j->free_units = u->next;
	pthread_mutex_unlock(&j->mu);
	if (!u)
		return -EAGAIN;
	u->pc = pc;
	u->resume = resume;
	u->r = piece_reactor(pc);
	u->full = unit_full(j, pc);
	u->sectors = unit_sectors(pc, u->full);
	u->next = NULL;
	pthread_mutex_lock(&j->mu);
	if (!u->full)
		j->unprotected++;
	unsigned h = bucket_of(pc);
	u->hnext = j->bucket[h];
	j->bucket[h] = u;
	if (j->wait_tail)
		j->wait_tail->next = u;
	else
		j->wait_head = u;
	j->wait_tail = u;
	pthread_mutex_unlock(&j->mu);
	try_start(j, piece_reactor(pc));
	return 1;
}

static void jr_after_writes(struct parity_log *pl, struct r5_piece *pc, int res)
{
	struct jlog *j = (struct jlog *)pl;
	struct junit *u, **up;
	bool more;

	(void)res;
	if (pc->op != OP_WRITE && pc->op != OP_ZERO)
		return;
	pthread_mutex_lock(&j->mu);
	/* the unit of pc, by its piece */
	for (up = &j->bucket[bucket_of(pc)]; *up && (*up)->pc != pc; up = &(*up)->hnext)
		;
	u = *up;
	if (u) {
		*up = u->hnext;
		struct jbatch *b = &j->b[u->batch];
		b->pending--;
		/* batches done from the oldest on are forgotten; the tail moves at
		   the next checkpoint */
		while (j->b_count > 1 && !j->b[j->b_first].pending && j->b[j->b_first].logged) {
			j->b_first = (j->b_first + 1) % NBATCH;
			j->b_count--;
		}
		u->pc = NULL;
		u->resume = NULL;
		u->next = j->free_units;
		j->free_units = u;
	}
	more = j->wait_head && !j->busy;
	pthread_mutex_unlock(&j->mu);
	if (more)       /* units waiting for a batch record or for room */
		try_start(j, piece_reactor(pc));
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
	/* the member writes done so far durable before the log lets them go */
	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		struct member *m = a->slot[s].m;
		if (m && m->fd >= 0 && fdatasync(m->fd) < 0 && !rc)
			rc = -errno;
	}
	if (rc)
		return rc;
	pthread_mutex_lock(&a->meta_lock);
	/* members[] may have been compacted since: find the journal again */
	rc = -ENODEV;
	for (unsigned i = 0; i < a->nmembers; i++)
		if (a->members[i] == j->m && a->member_state[i] == URAID_MEMBER_JOURNAL) {
			a->member_sb[i].recovery_offset = new_tail;
			rc = meta_record_change(a);
			break;
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

	pthread_mutex_lock(&j->mu);
	if (!rc)
		j->tail = j->ckpt_tail;
	j->ckpt_busy = false;
	pthread_mutex_unlock(&j->mu);
	if (rc)
		ulog(array_log(j->base.a), URAID_LOG_ERR, "write journal %s: checkpoint failed (%s)",
		     j->m->path, strerror(-rc));
	try_start(j, c->r);
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
	meta_call_submit(j->base.a->e, &j->call, r, ckpt_run, ckpt_done);
}

static void jr_fini(struct parity_log *pl)
{
	struct jlog *j = (struct jlog *)pl;

	if (j->unprotected)
		ulog(array_log(pl->a), URAID_LOG_NOTICE, "write journal %s: %" PRIu64 " writes were "
		     "not whole 4 KiB rows with their parity: logged as FLUSH only (not protected "
		     "from the write hole)", j->m->path, j->unprotected);
	pthread_mutex_destroy(&j->mu);
	free(j->units);
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
	/* the largest unit as whole rows: every slot written, one meta per row */
	unsigned rows = R5_SEG_SECTORS / PGS;
	j->cap = (size_t)rows * (a->geom.raid_disks + 1) * PG;
	j->buf = aligned_alloc(4096, j->cap);
	j->units = calloc(NUNITS, sizeof(*j->units));
	if (!j->buf || !j->units) {
		jr_fini(&j->base);
		return -ENOMEM;
	}
	for (unsigned i = NUNITS; i--;) {
		j->units[i].next = j->free_units;
		j->free_units = &j->units[i];
	}
	*out = &j->base;
	return 0;
}
