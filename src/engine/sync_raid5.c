// SPDX-License-Identifier: MIT
/*
 * Background work on RAID 4/5/6, one stripe row per unit: take the row's
 * stripe lock (foreground writes to the row wait), read every member's
 * chunk of it, compute P (and Q) from the data, compare with what is on
 * disk; a check counts the 4 KiB pages that differ (md's mismatch_cnt, in
 * sectors), a repair or resync writes the parity back where it differs. A
 * recovery reads the row's other chunks instead, rebuilds the missing one and
 * writes it to the new member.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "common/errmsg.h"
#include "engine/raid5_priv.h"
#include "engine/sync.h"
#include "engine/wib.h"

#define PAGE_SECTORS 8u         /* md compares and counts in 4 KiB pages */

struct r5_sync {
	struct sync_job *job;
	struct stripe_lk lk;
	struct uraid_stripe st;
	unsigned n, npar, nsyn;
	size_t len;                     /* bytes of one member's chunk of the row */
	uint8_t *slot_buf[URAID_MAX_MEMBERS];
	uint8_t *p_new, *q_new;
	uint8_t *zero;
	void *blocks[URAID_MAX_MEMBERS + 2];
	bool gate_held;
	bool have[URAID_MAX_MEMBERS];   /* recovery: the slot's chunk was read */
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
	return 0;
}

/* The blocks in parity order: data by syndrome slot (zero blocks between, DDF), P, Q. */
static void fill_blocks(struct r5_sync *s)
{
	s->nsyn = s->npar == 2 ? s->st.syndrome_slots : s->st.data_disks;
	for (unsigned k = 0; k < s->nsyn; k++)
		s->blocks[k] = s->zero;
	for (unsigned k = 0; k < s->st.data_disks; k++) {
		unsigned slot = s->st.data_slot[k];
		unsigned at = s->npar == 2 ? (unsigned)s->st.syndrome_of_slot[slot] : k;
		s->blocks[at] = s->slot_buf[slot];
	}
}

/* 4 KiB pages where a and b differ, counted in sectors. */
static uint64_t mismatched_sectors(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t n = 0;
	for (size_t off = 0; off < len; off += PAGE_SECTORS * 512) {
		size_t l = len - off < PAGE_SECTORS * 512 ? len - off : PAGE_SECTORS * 512;
		if (memcmp(a + off, b + off, l))
			n += PAGE_SECTORS;
	}
	return n;
}

static void unit_end(struct sync_job *j, int res)
{
	struct r5_sync *s = j->priv;
	struct r5_priv *priv = j->a->level_priv;

	if (s->gate_held) {
		array_gate_leave(j->a, j->ridx);
		s->gate_held = false;
	}
	stripe_unlock(&priv->locks, &s->lk);
	if (res)
		fprintf(stderr, "uraid: background work stopped at member sector %llu: %s\n",
			(unsigned long long)j->pos, strerror(-res));
	sync_unit_done(j, res);
}

static void writes_done(struct sync_job *j)
{
	unit_end(j, j->io_error);
}

static void reads_done(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;

	if (j->io_error) {
		unit_end(j, j->io_error);
		return;
	}
	fill_blocks(s);
	if (s->npar == 2)
		uraid_parity_gen_pq(s->nsyn, s->len, s->blocks, s->p_new, s->q_new);
	else
		uraid_parity_gen_p(s->nsyn, s->len, s->blocks, s->p_new);
	uint64_t mp = mismatched_sectors(s->p_new, s->slot_buf[s->st.p_slot], s->len);
	uint64_t mq = s->npar == 2 ? mismatched_sectors(s->q_new, s->slot_buf[s->st.q_slot],
							  s->len) : 0;
	/* md counts a page once even when both P and Q differ there: take the larger */
	if (j->kind != URAID_SYNC_RESYNC)
		atomic_fetch_add(&j->mismatch_sectors, mp > mq ? mp : mq);
	if (j->kind == URAID_SYNC_CHECK || (mp == 0 && mq == 0)) {
		unit_end(j, 0);
		return;
	}
	int rc = array_gate_enter(a, j->ridx);
	if (rc) {
		unit_end(j, rc);
		return;
	}
	s->gate_held = true;
	j->after_io = writes_done;
	uint64_t sector = s->st.stripe * a->geom.chunk_sectors;
	uint32_t nsect = a->geom.chunk_sectors;
	if (mp)
		sync_submit(j, 0, MEMBER_WRITE, a->slot[s->st.p_slot].m, s->p_new, sector, nsect);
	if (mq)
		sync_submit(j, 1, MEMBER_WRITE, a->slot[s->st.q_slot].m, s->q_new, sector, nsect);
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

static void rebuilt_written(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;

	if (j->io_error) {
		j->target_failed = true;
		unit_end(j, j->io_error);
		return;
	}
	/* the row now counts for the new member, before anyone else gets the row */
	uint64_t next = (s->st.stripe + 1) * a->geom.chunk_sectors;
	if (j->kind == URAID_SYNC_REPLACE)
		atomic_store_explicit(&a->slot[j->target_slot].repl_rebuilt, next,
				      memory_order_release);
	else
		atomic_store_explicit(&a->slot[j->target_slot].rebuilt, next, memory_order_release);
	unit_end(j, 0);
}

static void recover_reads_done(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;
	unsigned lost[2], nlost = 0;

	if (j->io_error) {
		unit_end(j, j->io_error);
		return;
	}
	fill_blocks(s);
	s->blocks[s->nsyn] = s->slot_buf[s->st.p_slot];
	if (s->npar == 2)
		s->blocks[s->nsyn + 1] = s->slot_buf[s->st.q_slot];
	for (unsigned slot = 0; slot < s->n; slot++) {
		if (s->have[slot])
			continue;
		if (nlost == s->npar) {
			unit_end(j, -EIO);
			return;
		}
		lost[nlost++] = rec_index(s, slot);
	}
	if (uraid_parity_recover(s->nsyn, s->npar == 2, s->len, s->blocks, nlost, lost) < 0) {
		unit_end(j, -EIO);
		return;
	}
	j->after_io = rebuilt_written;
	sync_submit(j, 0, MEMBER_WRITE, j->target, s->slot_buf[j->target_slot],
		    s->st.stripe * a->geom.chunk_sectors, a->geom.chunk_sectors);
}

static void recover_row(struct sync_job *j);

/* Replace: the slot's member read well; its chunk goes to the replacement as it is. */
static void replace_read_done(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;

	if (j->io_error) {
		/* unreadable there: rebuild the chunk from the other members */
		j->io_error = 0;
		recover_row(j);
		return;
	}
	j->after_io = rebuilt_written;
	sync_submit(j, 0, MEMBER_WRITE, j->target, s->slot_buf[j->target_slot],
		    s->st.stripe * a->geom.chunk_sectors, a->geom.chunk_sectors);
}

/* Replace: copy the row's chunk of the member being replaced (md reads the old device). */
static void replace_row(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;
	unsigned t = (unsigned)j->target_slot;

	if (!slot_ok(a, t)) {
		recover_row(j);         /* the old member failed meanwhile */
		return;
	}
	j->after_io = replace_read_done;
	j->outstanding = 1;
	sync_submit(j, t, MEMBER_READ, a->slot[t].m, s->slot_buf[t],
		    s->st.stripe * a->geom.chunk_sectors, a->geom.chunk_sectors);
	if (--j->outstanding == 0)
		replace_read_done(j);
}

/* Recovery: read every other usable slot of the row, rebuild the target's chunk. */
static void recover_row(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;
	uint64_t sector = s->st.stripe * a->geom.chunk_sectors;

	j->after_io = recover_reads_done;
	j->outstanding = 1;             /* held while issuing */
	for (unsigned slot = 0; slot < s->n; slot++) {
		s->have[slot] = (int)slot != j->target_slot && slot_ok(a, slot);
		if (s->have[slot])
			sync_submit(j, slot, MEMBER_READ, a->slot[slot].m, s->slot_buf[slot], sector,
				    a->geom.chunk_sectors);
	}
	if (--j->outstanding == 0)
		recover_reads_done(j);
}

static void row_locked(struct sync_job *j)
{
	struct r5_sync *s = j->priv;
	struct array *a = j->a;

	if (j->kind == URAID_SYNC_REPLACE) {
		replace_row(j);
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
		recover_row(j);
		return;
	}
	for (unsigned slot = 0; slot < s->n; slot++) {
		if (!slot_ok(a, slot)) {
			unit_end(j, -EIO);      /* a member failed meanwhile: stop */
			return;
		}
	}
	j->after_io = reads_done;
	for (unsigned slot = 0; slot < s->n; slot++)
		sync_submit(j, slot, MEMBER_READ, a->slot[slot].m, s->slot_buf[slot],
			    s->st.stripe * a->geom.chunk_sectors, a->geom.chunk_sectors);
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
