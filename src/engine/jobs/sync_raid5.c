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
 * Several rows are worked on at once, one per lane (one lane per reactor):
 * on fast members the work is the copies and the parity, which one thread
 * alone would do in turn, and on devices the rows' reads overlap. Each row
 * stays locked until the job's position passes it (sync.c commits units in
 * order): a rebuilt row counts for the new member before anyone else gets
 * it, even when it ends before the row below it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "common/errmsg.h"
#include "engine/core/host.h"
#include "engine/level/raid5_priv.h"
#include "engine/md/member_state.h"
#include "engine/jobs/sync.h"
#include "engine/md/wib.h"

#define PAGE_SECTORS 8u         /* md compares and counts in 4 KiB pages */
#define R5_LANE_BYTES_MAX (256u << 20)  /* buffers of all lanes together, at most */

struct r5_sync;

/* One lane: a row at a time (reads, parity, writes) on its reactor. */
struct r5_lane {
	struct r5_sync *s;
	struct sync_unit *u;            /* the row in progress */
	struct reactor *r;
	unsigned ridx;
	struct uraid_stripe st;
	unsigned nsyn;
	uint8_t *slot_buf[URAID_MAX_MEMBERS];
	uint8_t *p_new, *q_new;
	struct member_io mio[URAID_MAX_MEMBERS];
	unsigned outstanding;
	int io_error;
	uint8_t rewrite_failed;         /* repair, resync: bit 0 P's rewrite failed, bit 1 Q's */
	struct sync_gate gate;          /* parity rewrites pass the write gate */
	bool rewrite_p, rewrite_q;      /* ... and rewrite these */
	bool have[URAID_MAX_MEMBERS];   /* recovery: the slot's chunk was read */
	void (*after_io)(struct r5_lane *l);
	void *blocks[URAID_MAX_MEMBERS + 2];
};

/* A row's lock, per unit of the window: held from the unit's start to its release. */
struct r5_row {
	struct rowlock lk;
	struct r5_lane *lane;
	bool locked;
};

struct r5_sync {
	struct sync_job *job;
	unsigned n, npar;
	size_t len;                     /* bytes of one member's chunk of the row */
	uint8_t *zero;
	struct r5_row row[SYNC_WINDOW];
	struct r5_lane lane[SYNC_MAX_LANES];
};

static uint32_t r5_unit_sectors(const struct array *a)
{
	return a->geom.chunk_sectors;
}

static int r5_can_run(const struct array *a, enum uraid_sync_kind kind, char *err,
		      size_t errlen)
{
	unsigned deg = atomic_load(&a->degraded);
	unsigned npar = a->level->info.parity_members;
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
	for (unsigned k = 0; k < j->nlanes; k++) {
		struct r5_lane *l = &s->lane[k];
		for (unsigned i = 0; i < s->n; i++)
			free(l->slot_buf[i]);
		free(l->p_new);
		free(l->q_new);
	}
	free(s->zero);
	free(s);
	j->priv = NULL;
}

/* Bytes of buffers one lane needs: every member's chunk, and new P and Q. */
static size_t lane_bytes(const struct array *a)
{
	return (size_t)(a->geom.raid_disks + 2) * a->geom.chunk_sectors * 512;
}

/* One lane per reactor, as long as the buffers stay within R5_LANE_BYTES_MAX. */
static unsigned r5_lanes(const struct sync_job *j)
{
	size_t fit = R5_LANE_BYTES_MAX / lane_bytes(j->a);
	unsigned n = j->a->e->nreactors;

	return n < fit ? n : fit ? (unsigned)fit : 1;
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
	s->npar = a->level->info.parity_members;
	s->len = (size_t)a->geom.chunk_sectors * 512;
	bool ok = posix_memalign((void **)&s->zero, 4096, s->len) == 0;
	for (unsigned k = 0; ok && k < j->nlanes; k++) {
		struct r5_lane *l = &s->lane[k];
		l->s = s;
		l->ridx = j->lane[k].ridx;
		l->r = j->lane[k].r;
		ok = posix_memalign((void **)&l->p_new, 4096, s->len) == 0 &&
		     posix_memalign((void **)&l->q_new, 4096, s->len) == 0;
		for (unsigned i = 0; ok && i < s->n; i++)
			ok = posix_memalign((void **)&l->slot_buf[i], 4096, s->len) == 0;
	}
	if (!ok) {
		r5_job_fini(j);
		return -ENOMEM;
	}
	memset(s->zero, 0, s->len);
	return 0;
}

/* The row's blocks in parity order: data by syndrome slot (zero blocks
 * between, DDF), then (for a recovery) P and Q. */
static void fill_blocks(struct r5_lane *l)
{
	struct r5_sync *s = l->s;

	for (unsigned k = 0; k < l->nsyn; k++)
		l->blocks[k] = s->zero;
	for (unsigned k = 0; k < l->st.data_disks; k++) {
		unsigned slot = l->st.data_slot[k];
		unsigned at = s->npar == 2 ? (unsigned)l->st.syndrome_of_slot[slot] : k;
		l->blocks[at] = l->slot_buf[slot];
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

/* The row's work is over; the row stays locked until sync.c releases it
 * (which also reports an error, once, where the job stopped). */
static void lane_end(struct r5_lane *l, int res)
{
	struct sync_job *j = l->s->job;
	struct sync_unit *u = l->u;

	sync_gate_leave(j, l->ridx, &l->gate.held);
	sync_unit_done(j, u, res);
}

/* Committed: the row counts as rebuilt for the new member before anyone
 * else gets it. Either way, the row is let go. */
static void r5_unit_release(struct sync_job *j, struct sync_unit *u, bool committed)
{
	struct r5_sync *s = j->priv;
	struct r5_row *row = &s->row[u->slot];
	struct array *a = j->a;

	if (committed && (j->kind == URAID_SYNC_RECOVER || j->kind == URAID_SYNC_REPLACE))
		atomic_store_explicit(j->kind == URAID_SYNC_REPLACE
				      ? &a->slot[j->target_slot].repl_rebuilt
				      : &a->slot[j->target_slot].rebuilt, u->pos + u->n,
				      memory_order_release);
	if (row->locked) {
		row->locked = false;
		rowlock_release(&((struct r5_priv *)a->level_priv)->locks, &row->lk);
	}
}

static void lane_io_done(struct member_io *mio, int res)
{
	struct r5_lane *l = mio->ctx;

	if (res && !l->io_error)
		l->io_error = res;
	if (res && mio->kind == MEMBER_WRITE) {
		if (mio->m == l->s->job->target)
			l->u->target_failed = true;
		else    /* a parity rewrite: I/O 0 is P's, 1 is Q's (check_reads_done) */
			l->rewrite_failed |= (uint8_t)(1u << (mio - l->mio));
	}
	if (--l->outstanding == 0)
		l->after_io(l);
}

/* Member I/O i of the lane: the row's chunk on m, in or from buf. */
static void lane_submit(struct r5_lane *l, unsigned i, enum member_op kind, struct member *m,
			uint8_t *buf)
{
	struct member_io *mio = &l->mio[i];
	struct r5_sync *s = l->s;

	if (!m) {
		/* the slot's member went away (uraid remove) since the row was looked at */
		if (!l->io_error)
			l->io_error = -ENODEV;
		return;
	}
	memset(mio, 0, sizeof(*mio));
	mio->kind = kind;
	mio->buf = buf;
	mio->len = (uint32_t)s->len;
	mio->sector = l->st.stripe * s->job->a->geom.chunk_sectors;
	mio->m = m;
	mio->done = lane_io_done;
	mio->ctx = l;
	l->outstanding++;
	member_submit(l->r, mio);
}

/* Run after_io once the I/O issued between hold and release is over. */
static void lane_hold(struct r5_lane *l, void (*after_io)(struct r5_lane *l))
{
	l->after_io = after_io;
	l->io_error = 0;
	l->outstanding = 1;
}

static void lane_release(struct r5_lane *l)
{
	if (--l->outstanding == 0)
		l->after_io(l);
}

static void writes_done(struct r5_lane *l)
{
	lane_end(l, l->io_error);
}

/*
 * The parity rewrite of a repair or resync is over. A member that could not
 * take it is failed, as a failed write fails its member everywhere else
 * (raid5_piece.c, the RAID 1/10 repair; md_error): left in sync, it would keep
 * the wrong parity and give wrong data back after another member's failure.
 * The job then stops at this row (md_error interrupts md's too).
 */
static void parity_fail_next(void *arg, bool survives)
{
	struct r5_lane *l = arg;
	struct array *a = l->s->job->a;

	/* one member at a time, each recorded by the metadata worker before the row ends */
	(void)survives;
	for (unsigned b = 0; b < 2; b++) {
		if (!(l->rewrite_failed & (1u << b)))
			continue;
		l->rewrite_failed &= (uint8_t)~(1u << b);
		md_fail_slot_parked(a, l->r, (unsigned)(b ? l->st.q_slot : l->st.p_slot),
				    l->io_error, parity_fail_next, l);
		return;
	}
	lane_end(l, l->io_error);
}

static void parity_written(struct r5_lane *l)
{
	parity_fail_next(l, true);
}

/* Check, repair, resync: parity from the data, compared with what is on disk. */
static void rewrite_parity(struct sync_gate *g, int rc);

static void check_reads_done(struct r5_lane *l)
{
	struct r5_sync *s = l->s;
	struct sync_job *j = s->job;

	if (l->io_error) {
		lane_end(l, l->io_error);
		return;
	}
	fill_blocks(l);
	if (s->npar == 2)
		uraid_parity_gen_pq(l->nsyn, s->len, l->blocks, l->p_new, l->q_new);
	else
		uraid_parity_gen_p(l->nsyn, s->len, l->blocks, l->p_new);
	const uint8_t *pd = l->slot_buf[l->st.p_slot];
	const uint8_t *qd = s->npar == 2 ? l->slot_buf[l->st.q_slot] : NULL;
	bool mp = differ(l->p_new, pd, s->len), mq = qd && differ(l->q_new, qd, s->len);
	if (j->kind != URAID_SYNC_RESYNC && (mp || mq))
		atomic_fetch_add(&j->mismatch_sectors,
				 mismatched_sectors(l->p_new, pd, qd ? l->q_new : NULL, qd, s->len));
	if (j->kind == URAID_SYNC_CHECK || (!mp && !mq)) {
		lane_end(l, 0);
		return;
	}
	l->rewrite_p = mp;
	l->rewrite_q = mq;
	sync_gate_enter(j, l->ridx, &l->gate, rewrite_parity);
}

/*
 * The row's members are about to be written outside the write path: the
 * stripe cache (level/raid5_heads.c) forgets what it kept of the row, under
 * the row's lock that the lane holds.
 */
static void lane_forget_kept(struct r5_lane *l)
{
	struct array *a = l->s->job->a;
	struct r5_priv *priv = a->level_priv;

	r5_heads_drop(&priv->heads, l->u->pos / a->geom.chunk_sectors, 0, a->geom.chunk_sectors);
}

/* Past the write gate (rc 0): the parity that differs is written. */
static void rewrite_parity(struct sync_gate *g, int rc)
{
	struct r5_lane *l = (struct r5_lane *)((char *)g - offsetof(struct r5_lane, gate));
	struct array *a = l->s->job->a;

	if (rc) {
		lane_end(l, rc);
		return;
	}
	l->rewrite_failed = 0;
	lane_forget_kept(l);
	lane_hold(l, parity_written);
	if (l->rewrite_p)
		lane_submit(l, 0, MEMBER_WRITE, a->slot[l->st.p_slot].m, l->p_new);
	if (l->rewrite_q)
		lane_submit(l, 1, MEMBER_WRITE, a->slot[l->st.q_slot].m, l->q_new);
	lane_release(l);
}

static void check_row(struct r5_lane *l)
{
	struct r5_sync *s = l->s;
	struct array *a = s->job->a;

	lane_hold(l, check_reads_done);
	for (unsigned slot = 0; slot < s->n; slot++)
		lane_submit(l, slot, MEMBER_READ, a->slot[slot].m, l->slot_buf[slot]);
	lane_release(l);
}

/* Index of a slot's block for uraid_parity_recover (data by syndrome slot, P, Q). */
static unsigned rec_index(const struct r5_lane *l, unsigned slot)
{
	if ((int)slot == l->st.p_slot)
		return l->nsyn;
	if ((int)slot == l->st.q_slot)
		return l->nsyn + 1;
	for (unsigned k = 0; k < l->st.data_disks; k++)
		if (l->st.data_slot[k] == slot)
			return l->s->npar == 2 ? (unsigned)l->st.syndrome_of_slot[slot] : k;
	return 0;
}

static void write_target(struct r5_lane *l)
{
	struct sync_job *j = l->s->job;

	lane_forget_kept(l);
	lane_hold(l, writes_done);
	lane_submit(l, 0, MEMBER_WRITE, j->target, l->slot_buf[j->target_slot]);
	lane_release(l);
}

static void recover_reads_done(struct r5_lane *l)
{
	struct r5_sync *s = l->s;
	unsigned lost[2], nlost = 0;

	if (l->io_error) {
		lane_end(l, l->io_error);
		return;
	}
	fill_blocks(l);
	l->blocks[l->nsyn] = l->slot_buf[l->st.p_slot];
	if (s->npar == 2)
		l->blocks[l->nsyn + 1] = l->slot_buf[l->st.q_slot];
	for (unsigned slot = 0; slot < s->n; slot++) {
		if (l->have[slot])
			continue;
		if (nlost == s->npar) {
			lane_end(l, -EIO);
			return;
		}
		lost[nlost++] = rec_index(l, slot);
	}
	if (uraid_parity_recover(l->nsyn, s->npar == 2, s->len, l->blocks, nlost, lost) < 0) {
		lane_end(l, -EIO);
		return;
	}
	write_target(l);
}

/* Recovery: read every other usable slot's chunk, rebuild the target's. */
static void recover_row(struct r5_lane *l)
{
	struct r5_sync *s = l->s;
	struct sync_job *j = s->job;
	struct array *a = j->a;

	lane_hold(l, recover_reads_done);
	for (unsigned slot = 0; slot < s->n; slot++) {
		l->have[slot] = (int)slot != j->target_slot && slot_ok(a, slot);
		if (l->have[slot])
			lane_submit(l, slot, MEMBER_READ, a->slot[slot].m, l->slot_buf[slot]);
	}
	lane_release(l);
}

/* Replace: the slot's member read well; its chunk goes to the replacement as it is. */
static void replace_read_done(struct r5_lane *l)
{
	if (l->io_error) {
		/* unreadable there: rebuild the chunk from the other members */
		recover_row(l);
		return;
	}
	write_target(l);
}

/* Replace: copy the chunk of the member being replaced (md reads the old device). */
static void replace_row(struct r5_lane *l)
{
	struct sync_job *j = l->s->job;
	unsigned t = (unsigned)j->target_slot;

	if (!slot_ok(j->a, t)) {
		recover_row(l);         /* the old member failed meanwhile */
		return;
	}
	lane_hold(l, replace_read_done);
	lane_submit(l, t, MEMBER_READ, j->a->slot[t].m, l->slot_buf[t]);
	lane_release(l);
}

static void row_locked(struct r5_lane *l)
{
	struct r5_sync *s = l->s;
	struct sync_job *j = s->job;
	struct array *a = j->a;

	if (j->kind == URAID_SYNC_REPLACE) {
		replace_row(l);
		return;
	}
	if (j->kind == URAID_SYNC_RECOVER) {
		uint64_t sector = l->st.stripe * a->geom.chunk_sectors;
		/*
		 * Under the row's lock: a write to the row has its bits on disk
		 * before it asks for the lock, so a clear row here was not written
		 * since the member left; once `rebuilt` passes it (at its
		 * release), writes go to it.
		 */
		if (j->bitmap_guided && !wib_any_set(a, sector, sector + a->geom.chunk_sectors)) {
			l->u->skipped = true;
			lane_end(l, 0);
			return;
		}
		recover_row(l);
		return;
	}
	for (unsigned slot = 0; slot < s->n; slot++) {
		if (!slot_ok(a, slot)) {
			lane_end(l, -EIO);      /* a member failed meanwhile: stop */
			return;
		}
	}
	check_row(l);
}

static void row_granted(struct reactor *r, struct reactor_msg *m)
{
	struct r5_row *row = (struct r5_row *)((char *)m - offsetof(struct r5_row, lk.msg));
	(void)r;
	row->locked = true;
	row_locked(row->lane);
}

/* On the lane's reactor: lock the unit's row, then work on it. */
static void r5_unit(struct sync_job *j, struct sync_unit *u)
{
	struct r5_sync *s = j->priv;
	struct r5_lane *l = &s->lane[u->lane];
	struct r5_row *row = &s->row[u->slot];
	struct array *a = j->a;
	struct r5_priv *priv = a->level_priv;
	uint64_t rowno = u->pos / a->geom.chunk_sectors;

	l->u = u;
	row->lane = l;
	row->locked = false;
	if (uraid_geom_stripe(&a->geom, rowno, &l->st) != 0) {
		lane_end(l, -EINVAL);
		return;
	}
	l->nsyn = s->npar == 2 ? l->st.syndrome_slots : l->st.data_disks;
	row->lk.msg.fn = row_granted;
	if (rowlock_acquire(&priv->locks, &row->lk, rowno, l->r)) {
		row->locked = true;
		row_locked(l);
	}
}

const struct sync_level sync_raid5_level = {
	.unit_sectors = r5_unit_sectors,
	.can_run = r5_can_run,
	.lanes = r5_lanes,
	.unit = r5_unit,
	.unit_release = r5_unit_release,
	.job_init = r5_job_init,
	.job_fini = r5_job_fini,
};
