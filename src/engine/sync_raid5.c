// SPDX-License-Identifier: MIT
/*
 * Background work on RAID 4/5/6, one stripe row per unit: take the row's
 * stripe lock (foreground writes to the row wait), read every member's
 * chunk of it, compute P (and Q) from the data, compare with what is on
 * disk; a check counts the 4 KiB pages that differ (md's mismatch_cnt, in
 * sectors), a repair or resync writes the parity back where it differs. A
 * recovery reads the row's other chunks instead, rebuilds the missing one and
 * writes it to the new member; a replace copies the old member's chunk.
 *
 * A row is split into parts (byte ranges of every chunk, whole 4 KiB
 * pages), one per reactor, which read, compute and write at the same time:
 * on fast members the work is the copies and the parity, which one thread
 * alone would do in turn. The unit ends, on the job's reactor, when the
 * last part does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "common/errmsg.h"
#include "engine/host.h"
#include "engine/raid5_priv.h"
#include "engine/sync.h"
#include "engine/wib.h"

#define PAGE_SECTORS 8u         /* md compares and counts in 4 KiB pages */

#define R5_MAX_PARTS 4u            /* a row's chunk is worked on in this many parts at most */

struct r5_sync;

/*
 * One part of the row: a byte range of every member's chunk, worked on by
 * one reactor (reads, parity, writes), so that the copies of a row run on
 * several threads at once. The unit holds the row's lock for all of them.
 */
struct r5_part {
	struct r5_sync *s;
	struct reactor *r;
	unsigned ridx;
	size_t off, len;                /* in each member's chunk of the row */
	struct member_io mio[URAID_MAX_MEMBERS];
	unsigned outstanding;
	int io_error;
	bool target_failed;             /* a write to the member being rebuilt failed */
	uint8_t rewrite_failed;         /* repair, resync: bit 0 P's rewrite failed, bit 1 Q's */
	bool gate_held;
	bool have[URAID_MAX_MEMBERS];   /* recovery: the slot's range was read */
	void (*go)(struct r5_part *p);
	void (*after_io)(struct r5_part *p);
	void *blocks[URAID_MAX_MEMBERS + 2];
	struct reactor_msg msg;
	int res;
};

struct r5_sync {
	struct sync_job *job;
	struct stripe_lk lk;
	struct uraid_stripe st;
	unsigned n, npar, nsyn;
	size_t len;                     /* bytes of one member's chunk of the row */
	uint8_t *slot_buf[URAID_MAX_MEMBERS];
	uint8_t *p_new, *q_new;
	uint8_t *zero;
	struct r5_part part[R5_MAX_PARTS];
	unsigned nparts;
	_Atomic unsigned parts_left;
	struct reactor_msg parts_done_msg;
};

static uint32_t r5_unit_sectors(const struct array *a)
{
	return a->geom.chunk_sectors;
}

static int r5_can_run(const struct array *a, enum uraid_sync_kind kind, char *err,
		      size_t errlen)
{
	unsigned deg = atomic_load(&a->degraded);
	unsigned npar = a->geom.level == URAID_LEVEL_6 ? 2 : 1;
	if (kind == URAID_SYNC_REPLACE)
		return 0;       /* copies from the member it replaces; rebuilds where that fails */
	if (kind == URAID_SYNC_RECOVER)
		return deg == 0 ? uraid_errf(err, errlen, -EINVAL, "no slot is missing")
		       : deg > npar ? uraid_errf(err, errlen, -EIO, "%u slots are missing: too "
						 "many to rebuild from", deg) : 0;
	if (deg)
		return uraid_errf(err, errlen, -EINVAL, "the array is degraded (%u slot%s "
				  "missing): there is no redundancy to compare", deg,
				  deg > 1 ? "s" : "");
	return 0;
}

static void r5_job_fini(struct sync_job *j)
{
	struct r5_sync *s = j->priv;

	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++)
		free(s->slot_buf[i]);
	free(s->p_new);
	free(s->q_new);
	free(s->zero);
	free(s);
	j->priv = NULL;
}

static void part_start(struct reactor *r, struct reactor_msg *m);
static void parts_done(struct reactor *r, struct reactor_msg *m);

/* One part per reactor (up to R5_MAX_PARTS), each a whole number of 4 KiB pages. */
static void r5_parts_init(struct sync_job *j, struct r5_sync *s)
{
	struct array *a = j->a;
	unsigned np = a->e->nreactors < R5_MAX_PARTS ? a->e->nreactors : R5_MAX_PARTS;
	size_t pages = s->len / (PAGE_SECTORS * 512);

	if (np > pages)
		np = pages ? (unsigned)pages : 1;
	s->nparts = np;
	for (unsigned i = 0, first = 0; i < np; i++) {
		struct r5_part *p = &s->part[i];
		unsigned npages = (unsigned)(pages / np + (i < pages % np));
		p->s = s;
		p->ridx = (j->ridx + i) % a->e->nreactors;   /* the first on the job's reactor */
		p->r = engine_reactor(a->e, p->ridx);
		p->off = (size_t)first * PAGE_SECTORS * 512;
		p->len = i + 1 < np ? (size_t)npages * PAGE_SECTORS * 512 : s->len - p->off;
		p->msg.fn = part_start;
		first += npages;
	}
	s->parts_done_msg.fn = parts_done;
}

static int r5_job_init(struct sync_job *j)
{
	struct array *a = j->a;
	struct r5_sync *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	j->priv = s;
	s->job = j;
	s->n = a->geom.raid_disks;
	s->npar = a->geom.level == URAID_LEVEL_6 ? 2 : 1;
	s->len = (size_t)a->geom.chunk_sectors * 512;
	bool ok = posix_memalign((void **)&s->p_new, 4096, s->len) == 0 &&
		  posix_memalign((void **)&s->q_new, 4096, s->len) == 0 &&
		  posix_memalign((void **)&s->zero, 4096, s->len) == 0;
	for (unsigned i = 0; ok && i < s->n; i++)
		ok = posix_memalign((void **)&s->slot_buf[i], 4096, s->len) == 0;
	if (!ok) {
		r5_job_fini(j);
		return -ENOMEM;
	}
	memset(s->zero, 0, s->len);
	r5_parts_init(j, s);
	return 0;
}

/* The part's blocks in parity order: data by syndrome slot (zero blocks
 * between, DDF), then (for a recovery) P and Q. */
static void fill_blocks(struct r5_part *p)
{
	struct r5_sync *s = p->s;

	for (unsigned k = 0; k < s->nsyn; k++)
		p->blocks[k] = s->zero + p->off;
	for (unsigned k = 0; k < s->st.data_disks; k++) {
		unsigned slot = s->st.data_slot[k];
		unsigned at = s->npar == 2 ? (unsigned)s->st.syndrome_of_slot[slot] : k;
		p->blocks[at] = s->slot_buf[slot] + p->off;
	}
}

/*
 * 4 KiB pages where the parity computed (p, and q unless NULL) differs from
 * the parity read (p_disk, q_disk), counted in sectors; a page counts once
 * when both P and Q differ there, as md counts it.
 */
static uint64_t mismatched_sectors(const uint8_t *p, const uint8_t *p_disk, const uint8_t *q,
				   const uint8_t *q_disk, size_t len)
{
	uint64_t n = 0;
	for (size_t off = 0; off < len; off += PAGE_SECTORS * 512) {
		size_t l = len - off < PAGE_SECTORS * 512 ? len - off : PAGE_SECTORS * 512;
		if (memcmp(p + off, p_disk + off, l) || (q && memcmp(q + off, q_disk + off, l)))
			n += PAGE_SECTORS;
	}
	return n;
}

/* Do two ranges differ anywhere? */
static bool differ(const uint8_t *a, const uint8_t *b, size_t len)
{
	return memcmp(a, b, len) != 0;
}

/* The unit is over (on the job's reactor): release the row, go on. */
static void unit_end(struct sync_job *j, int res)
{
	struct r5_sync *s = j->priv;
	struct r5_priv *priv = j->a->level_priv;

	stripe_unlock(&priv->locks, &s->lk);
	if (res) {
		j->io_error = res;
		fprintf(stderr, "uraid: background work stopped at member sector %llu: %s\n",
			(unsigned long long)j->pos, strerror(-res));
	}
	sync_unit_done(j, res);
}

/* Every part is over: the row counts as rebuilt for the new member before
 * anyone else gets the row. */
static void parts_done(struct reactor *r, struct reactor_msg *m)
{
	struct r5_sync *s = (struct r5_sync *)((char *)m - offsetof(struct r5_sync, parts_done_msg));
	struct sync_job *j = s->job;
	struct array *a = j->a;
	int res = 0;

	(void)r;
	for (unsigned i = 0; i < s->nparts; i++) {
		if (!res)
			res = s->part[i].res;
		if (s->part[i].target_failed)
			j->target_failed = true;
	}
	if (!res && (j->kind == URAID_SYNC_RECOVER || j->kind == URAID_SYNC_REPLACE)) {
		uint64_t next = (s->st.stripe + 1) * a->geom.chunk_sectors;
		atomic_store_explicit(j->kind == URAID_SYNC_REPLACE
				      ? &a->slot[j->target_slot].repl_rebuilt
				      : &a->slot[j->target_slot].rebuilt, next, memory_order_release);
	}
	unit_end(j, res);
}

static void part_end(struct r5_part *p, int res)
{
	struct r5_sync *s = p->s;

	if (p->gate_held) {
		array_gate_leave(s->job->a, p->ridx);
		p->gate_held = false;
	}
	p->res = res;
	if (atomic_fetch_sub(&s->parts_left, 1) != 1)
		return;
	if (p == &s->part[0])   /* the part on the job's reactor: no hand-over needed */
		parts_done(s->job->r, &s->parts_done_msg);
	else
		reactor_post(s->job->r, &s->parts_done_msg);
}

static void part_io_done(struct member_io *mio, int res)
{
	struct r5_part *p = mio->ctx;

	if (res && !p->io_error)
		p->io_error = res;
	if (res && mio->kind == MEMBER_WRITE) {
		if (mio->m == p->s->job->target)
			p->target_failed = true;
		else    /* a parity rewrite: I/O 0 is P's, 1 is Q's (check_reads_done) */
			p->rewrite_failed |= (uint8_t)(1u << (mio - p->mio));
	}
	if (--p->outstanding == 0)
		p->after_io(p);
}

/* Member I/O i of the part: its range of the row's chunk on m, in or from buf. */
static void part_submit(struct r5_part *p, unsigned i, enum member_op kind, struct member *m,
			uint8_t *buf)
{
	struct member_io *mio = &p->mio[i];
	struct r5_sync *s = p->s;

	if (!m) {
		/* the slot's member went away (uraid remove) since the row was looked at */
		if (!p->io_error)
			p->io_error = -ENODEV;
		return;
	}
	memset(mio, 0, sizeof(*mio));
	mio->kind = kind;
	mio->buf = buf + p->off;
	mio->len = (uint32_t)p->len;
	mio->sector = s->st.stripe * s->job->a->geom.chunk_sectors + p->off / 512;
	mio->m = m;
	mio->done = part_io_done;
	mio->ctx = p;
	p->outstanding++;
	member_submit(p->r, mio);
}

/* Run after_io once the I/O issued between hold and release is over. */
static void part_hold(struct r5_part *p, void (*after_io)(struct r5_part *p))
{
	p->after_io = after_io;
	p->io_error = 0;
	p->outstanding = 1;
}

static void part_release(struct r5_part *p)
{
	if (--p->outstanding == 0)
		p->after_io(p);
}

static void part_writes_done(struct r5_part *p)
{
	part_end(p, p->io_error);
}

/*
 * The parity rewrite of a repair or resync is over. A member that could not
 * take it is failed, as a failed write fails its member everywhere else
 * (stripe.c, the RAID 1/10 repair; md_error): left in sync, it would keep
 * the wrong parity and give wrong data back after another member's failure.
 * The job then stops at this row (md_error interrupts md's too).
 */
static void parity_written(struct r5_part *p)
{
	struct r5_sync *s = p->s;
	struct array *a = s->job->a;

	if (p->rewrite_failed & 1u)
		array_fail_slot(a, (unsigned)s->st.p_slot, p->io_error);
	if (p->rewrite_failed & 2u)
		array_fail_slot(a, (unsigned)s->st.q_slot, p->io_error);
	part_end(p, p->io_error);
}

/* Check, repair, resync: parity from the data, compared with what is on disk. */
static void check_reads_done(struct r5_part *p)
{
	struct r5_sync *s = p->s;
	struct sync_job *j = s->job;
	struct array *a = j->a;
	uint8_t *pn = s->p_new + p->off, *qn = s->q_new + p->off;

	if (p->io_error) {
		part_end(p, p->io_error);
		return;
	}
	fill_blocks(p);
	if (s->npar == 2)
		uraid_parity_gen_pq(s->nsyn, p->len, p->blocks, pn, qn);
	else
		uraid_parity_gen_p(s->nsyn, p->len, p->blocks, pn);
	const uint8_t *pd = s->slot_buf[s->st.p_slot] + p->off;
	const uint8_t *qd = s->npar == 2 ? s->slot_buf[s->st.q_slot] + p->off : NULL;
	bool mp = differ(pn, pd, p->len), mq = qd && differ(qn, qd, p->len);
	if (j->kind != URAID_SYNC_RESYNC && (mp || mq))
		atomic_fetch_add(&j->mismatch_sectors,
				 mismatched_sectors(pn, pd, qd ? qn : NULL, qd, p->len));
	if (j->kind == URAID_SYNC_CHECK || (!mp && !mq)) {
		part_end(p, 0);
		return;
	}
	int rc = array_gate_enter(a, p->ridx);
	if (rc) {
		part_end(p, rc);
		return;
	}
	p->gate_held = true;
	part_hold(p, parity_written);
	if (mp)
		part_submit(p, 0, MEMBER_WRITE, a->slot[s->st.p_slot].m, s->p_new);
	if (mq)
		part_submit(p, 1, MEMBER_WRITE, a->slot[s->st.q_slot].m, s->q_new);
	part_release(p);
}

static void check_part(struct r5_part *p)
{
	struct r5_sync *s = p->s;
	struct array *a = s->job->a;

	part_hold(p, check_reads_done);
	for (unsigned slot = 0; slot < s->n; slot++)
		part_submit(p, slot, MEMBER_READ, a->slot[slot].m, s->slot_buf[slot]);
	part_release(p);
}

/* Index of a slot's block for uraid_parity_recover (data by syndrome slot, P, Q). */
static unsigned rec_index(const struct r5_sync *s, unsigned slot)
{
	if ((int)slot == s->st.p_slot)
		return s->nsyn;
	if ((int)slot == s->st.q_slot)
		return s->nsyn + 1;
	for (unsigned k = 0; k < s->st.data_disks; k++)
		if (s->st.data_slot[k] == slot)
			return s->npar == 2 ? (unsigned)s->st.syndrome_of_slot[slot] : k;
	return 0;
}

static void write_target(struct r5_part *p)
{
	struct sync_job *j = p->s->job;

	part_hold(p, part_writes_done);
	part_submit(p, 0, MEMBER_WRITE, j->target, p->s->slot_buf[j->target_slot]);
	part_release(p);
}

static void recover_reads_done(struct r5_part *p)
{
	struct r5_sync *s = p->s;
	unsigned lost[2], nlost = 0;

	if (p->io_error) {
		part_end(p, p->io_error);
		return;
	}
	fill_blocks(p);
	p->blocks[s->nsyn] = s->slot_buf[s->st.p_slot] + p->off;
	if (s->npar == 2)
		p->blocks[s->nsyn + 1] = s->slot_buf[s->st.q_slot] + p->off;
	for (unsigned slot = 0; slot < s->n; slot++) {
		if (p->have[slot])
			continue;
		if (nlost == s->npar) {
			part_end(p, -EIO);
			return;
		}
		lost[nlost++] = rec_index(s, slot);
	}
	if (uraid_parity_recover(s->nsyn, s->npar == 2, p->len, p->blocks, nlost, lost) < 0) {
		part_end(p, -EIO);
		return;
	}
	write_target(p);
}

/* Recovery: read every other usable slot's range, rebuild the target's. */
static void recover_part(struct r5_part *p)
{
	struct r5_sync *s = p->s;
	struct sync_job *j = s->job;
	struct array *a = j->a;

	part_hold(p, recover_reads_done);
	for (unsigned slot = 0; slot < s->n; slot++) {
		p->have[slot] = (int)slot != j->target_slot && slot_ok(a, slot);
		if (p->have[slot])
			part_submit(p, slot, MEMBER_READ, a->slot[slot].m, s->slot_buf[slot]);
	}
	part_release(p);
}

/* Replace: the slot's member read well; its range goes to the replacement as it is. */
static void replace_read_done(struct r5_part *p)
{
	if (p->io_error) {
		/* unreadable there: rebuild the range from the other members */
		recover_part(p);
		return;
	}
	write_target(p);
}

/* Replace: copy the range of the member being replaced (md reads the old device). */
static void replace_part(struct r5_part *p)
{
	struct r5_sync *s = p->s;
	struct sync_job *j = s->job;
	unsigned t = (unsigned)j->target_slot;

	if (!slot_ok(j->a, t)) {
		recover_part(p);        /* the old member failed meanwhile */
		return;
	}
	part_hold(p, replace_read_done);
	part_submit(p, t, MEMBER_READ, j->a->slot[t].m, s->slot_buf[t]);
	part_release(p);
}

static void part_start(struct reactor *r, struct reactor_msg *m)
{
	struct r5_part *p = (struct r5_part *)((char *)m - offsetof(struct r5_part, msg));

	(void)r;
	p->go(p);
}

/* Every part of the row at once, each on its reactor (the first on this one). */
static void run_parts(struct r5_sync *s, void (*go)(struct r5_part *p))
{
	atomic_store(&s->parts_left, s->nparts);
	for (unsigned i = 0; i < s->nparts; i++) {
		struct r5_part *p = &s->part[i];
		p->go = go;
		p->res = 0;
		p->target_failed = false;
		p->rewrite_failed = 0;
		p->gate_held = false;
	}
	for (unsigned i = 1; i < s->nparts; i++)
		reactor_post(s->part[i].r, &s->part[i].msg);
	go(&s->part[0]);
}

static void row_locked(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;

	if (j->kind == URAID_SYNC_REPLACE) {
		run_parts(s, replace_part);
		return;
	}
	if (j->kind == URAID_SYNC_RECOVER) {
		uint64_t sector = s->st.stripe * a->geom.chunk_sectors;
		/*
		 * Under the row's lock: a write to the row has its bits on disk
		 * before it asks for the lock, so a clear row here was not written
		 * since the member left; once `rebuilt` passes it, writes go to it.
		 */
		if (j->bitmap_guided && !wib_any_set(a, sector, sector + a->geom.chunk_sectors)) {
			atomic_store_explicit(&a->slot[j->target_slot].rebuilt,
					      sector + a->geom.chunk_sectors, memory_order_release);
			j->unit_skipped = true;
			unit_end(j, 0);
			return;
		}
		run_parts(s, recover_part);
		return;
	}
	for (unsigned slot = 0; slot < s->n; slot++) {
		if (!slot_ok(a, slot)) {
			unit_end(j, -EIO);      /* a member failed meanwhile: stop */
			return;
		}
	}
	run_parts(s, check_part);
}

static void row_granted(struct reactor *r, struct reactor_msg *m)
{
	struct r5_sync *s = (struct r5_sync *)((char *)m - offsetof(struct r5_sync, lk.msg));
	(void)r;
	row_locked(s->job);
}

static void r5_unit(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;
	struct r5_priv *priv = a->level_priv;
	uint64_t row = j->pos / a->geom.chunk_sectors;

	if (uraid_geom_stripe(&a->geom, row, &s->st) != 0) {
		sync_unit_done(j, -EINVAL);
		return;
	}
	s->nsyn = s->npar == 2 ? s->st.syndrome_slots : s->st.data_disks;
	s->lk.msg.fn = row_granted;
	if (stripe_lock(&priv->locks, &s->lk, row, j->r))
		row_locked(j);
}

const struct sync_level sync_raid5_level = {
	.unit_sectors = r5_unit_sectors,
	.can_run = r5_can_run,
	.unit = r5_unit,
	.job_init = r5_job_init,
	.job_fini = r5_job_fini,
};
