// SPDX-License-Identifier: MIT
/*
 * The reshape of a RAID 4/5/6 (md's restripe: member count, chunk, layout)
 * or of a RAID 10 (near and offset layouts: member count, chunk, layout),
 * a job of the runner (sync.c, kind URAID_SYNC_RESHAPE) with one lane.
 *
 * Each unit is one step of md/reshape_state.h (a whole number of rows of
 * both geometries). Its work runs on the job's own thread, because it
 * holds the step's rows (core/freeze.h) and does blocking member I/O: with
 * no request on those rows, it reads the step's array sectors in the old
 * geometry, writes them as rows of the new one (P and Q computed), makes them
 * durable, moves the position and writes it to the superblocks (events+1,
 * md's checkpoint), and only then lets requests go on. So a request never
 * sees the position move under it, and a write below the position always
 * lands where the superblocks say the new geometry is.
 *
 * Crash safety without a backup, as md's moving data offset gives it: the
 * new data area starts below the old one by a step's worth of rows per
 * member (forwards; mdadm's choice, reshape_start.c), so writing the
 * step that starts at position P never touches old data at or above P, the
 * part the superblocks on disk still point to. Backwards (md's feature
 * 0x20: fewer data members, or the same count with the room after the
 * data) the mirror image: the new area starts above the old one, the steps
 * run from md's top down to 0, and writing the step that ends at P never
 * touches old data below P. A kill at any moment leaves the step being
 * moved intact in the old place, and assembly goes on from the checkpoint.
 * A backwards job's positions count down from the top (backwards_vtop), so
 * that the runner hands its units out in order either way.
 *
 * The last step switches the array to the new geometry (superblocks without
 * the reshape bits, data_offset the new one, the new size; fewer members:
 * the slots that went away give their members back as spares), as md's
 * raid5_finish_reshape.
 *
 * RAID 10 (reshape_state.h, copies) has no parity: a step reads each chunk
 * from one in-sync copy of the old geometry and writes every copy of the
 * new one. Its unit is 4 MiB of the array, moved in as many pieces as the
 * distance between the data offsets allows (reshape_copies_safe_end, md's
 * reshape_request rule for a checkpoint): each piece is written, made
 * durable and checkpointed before the next, the unit's rows held all
 * along. Near the start of a grow the pieces are small (one new row when
 * the offsets are one chunk apart), then they grow with the position.
 * Backwards (fewer members, or the same count with the room after the
 * data) the pieces run down from the position (reshape_copies_safe_start).
 *
 * Not done (refused): starting on a degraded RAID 4/5/6 (but a parity-last
 * RAID 4/5 missing its parity member, or a -6 layout missing Q,
 * reshape_start.c; a degraded RAID 10 starts, as md's), arrays with a write-intent
 * bitmap. A member that fails during the reshape (the job's own I/O fails
 * it as a level's would) leaves the job going on degraded: old chunks of a
 * missing member are rebuilt from P (read_old), new rows skip it; the
 * rebuild onto a spare runs once the reshape is over.
 *
 * Each step holds only the requests that reach the level inside the rows
 * it moves (core/freeze.h array_hold_range), for the time of its copy,
 * fdatasync and superblock write; the others go on. The step is a whole
 * number of rows of both geometries, so a request outside it touches rows
 * of one geometry only, and the same one whichever side of the move it
 * reads the position. The last step moves the same way and checkpoints
 * the position at the end (every sector then in the new geometry, as md's
 * reshape_position before its finish); only then, its rows let go, is the
 * whole array frozen for the switch of the geometry and its superblock
 * write, not for the copy. A kill between the two leaves the position at
 * the end on disk, which assembly takes and only finishes (rs_job_init).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/parity.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/jobs/sync.h"
#include "engine/md/member_state.h"
#include "engine/md/reshape_state.h"

/* The job's state: its thread and the buffers of one step. */
struct reshape_job {
	struct sync_job *j;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct sync_unit *todo;         /* handed over by the lane, NULL when none */
	bool quit;
	bool thread_started;
	uint8_t *data;                  /* the step's array data */
	uint8_t *par[2];                /* P and Q of one new row's chunk */
	uint8_t *zero;                  /* one new chunk of zeroes (DDF syndrome gaps) */
	uint8_t *old_blocks;            /* an old row's chunks, P, Q: a degraded read */
	uint8_t *old_zero;              /* one old chunk of zeroes (DDF syndrome gaps) */
	void *blocks[URAID_PARITY_MAX_SLOTS];
	struct uraid_stripe st;
	/* the unit's end, back on the lane's reactor */
	struct reactor_msg done_msg;
	struct sync_unit *done_u;
	int done_res;
};

static const struct uraid_geom *geom_old(const struct reshape_state *rs)
{
	return &rs->g[RESHAPE_OLD];
}

static const struct uraid_geom *geom_new(const struct reshape_state *rs)
{
	return &rs->g[RESHAPE_NEW];
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pread(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf = (const uint8_t *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * The job's own member I/O, blocking, with the member's injected fault
 * applied; an error fails the member through the member state machine
 * (md_error), as the levels' completions do. 0, or the -errno (the member
 * is then failed or was already).
 */
static int member_rw(struct array *a, unsigned slot, bool write, void *buf, uint64_t sectors,
		     uint64_t abs_sector)
{
	struct member *m = a->slot[slot].m;
	int rc = member_fault_check(m, write ? MEMBER_WRITE : MEMBER_READ,
				    abs_sector - m->data_offset, sectors);
	if (!rc)
		/* base: where a range member (a pool's partition) starts */
		rc = write ? pwrite_all(m->fd, buf, sectors * 512, (m->base + abs_sector) * 512)
			   : pread_all(m->fd, buf, sectors * 512, (m->base + abs_sector) * 512);
	if (rc) {
		ulog(array_log(a), URAID_LOG_ERR, "reshape: %s of %s at sector %" PRIu64 " failed: %s",
		     write ? "write" : "read", m->path, abs_sector, strerror(-rc));
		(void)md_fail_slot(a, slot, rc);
	}
	return rc;
}

/*
 * A chunk piece of the old geometry whose member is missing or failed:
 * rebuilt from the rest of its row (md reshapes a degraded array too): by
 * P, or RAID 6 through Q as well when P's member is missing too (or its
 * slot's old content is not in sync: a parity gap's). -EIO when more are
 * missing than the level's parity covers.
 */
static int rebuild_old(struct reshape_job *rj, struct array *a, const struct reshape_state *rs,
		       uint64_t array_sector, const struct uraid_loc *loc, uint64_t n, uint8_t *at)
{
	const struct uraid_geom *g = geom_old(rs);
	uint64_t row = array_sector / ((uint64_t)g->data_disks * g->chunk_sectors);
	struct uraid_stripe *st = &rj->st;
	unsigned npar = g->raid_disks - g->data_disks;
	size_t len = n * 512, cbytes = (size_t)g->chunk_sectors * 512;
	void *blocks[URAID_PARITY_MAX_SLOTS + 2];
	unsigned lost[2], nlost = 0;
	int want = -1;

	if (uraid_geom_stripe(g, row, st) < 0 || st->p_slot < 0)
		return -EIO;
	unsigned nsyn = npar == 2 ? st->syndrome_slots : st->data_disks;
	if (nsyn > URAID_PARITY_MAX_SLOTS || nsyn + npar > g->raid_disks + 2)
		return -EIO;
	for (unsigned k = 0; k < nsyn + npar; k++)
		blocks[k] = NULL;
	for (unsigned s = 0; s < g->raid_disks; s++) {
		int idx = -1;
		if ((int)s == st->p_slot)
			idx = (int)nsyn;
		else if (npar == 2 && (int)s == st->q_slot)
			idx = (int)nsyn + 1;
		else if (npar == 2)
			idx = st->syndrome_of_slot[s];
		else
			for (unsigned d = 0; d < st->data_disks; d++)
				if (st->data_slot[d] == s)
					idx = (int)d;
		if (idx < 0 || (unsigned)idx >= nsyn + npar)
			continue;
		blocks[idx] = rj->old_blocks + (size_t)idx * cbytes;
		if (s == loc->slot)
			want = idx;
		bool bad = s == loc->slot || !slot_ok(a, s) || rs->old_unsynced[s] ||
			   member_rw(a, s, false, blocks[idx], n, rs->off[RESHAPE_OLD][s] + loc->sector);
		if (bad) {
			if (nlost == npar)
				return -EIO;    /* more missing than parity covers */
			lost[nlost++] = (unsigned)idx;
		}
	}
	/* syndrome places no data slot fills (DDF layouts) count as zeroes */
	for (unsigned k = 0; k < nsyn; k++)
		if (!blocks[k]) {
			memset(rj->old_zero, 0, len);
			blocks[k] = rj->old_zero;
		}
	if (want < 0 || uraid_parity_recover(nsyn, npar == 2, len, blocks, nlost, lost))
		return -EIO;
	memcpy(at, blocks[want], len);
	return 0;
}

/* Array sectors [from, from + len) of the old geometry into buf (zeroes
 * past its end: the room the new geometry adds). */
static int read_old(struct reshape_job *rj, struct array *a, const struct reshape_state *rs,
		    uint64_t from, uint64_t len, uint8_t *buf)
{
	const struct uraid_geom *g = geom_old(rs);

	for (uint64_t s = from; s < from + len;) {
		uint8_t *at = buf + (s - from) * 512;
		if (s >= g->array_sectors) {
			memset(at, 0, (from + len - s) * 512);
			break;
		}
		struct uraid_loc loc;
		if (uraid_geom_map(g, s, &loc, 1) != 1)
			return -EINVAL;
		uint64_t n = uraid_geom_chunk_left(g, s);
		if (n > from + len - s)
			n = from + len - s;
		if (n > g->array_sectors - s)
			n = g->array_sectors - s;
		int rc = -EIO;
		if (slot_ok(a, loc.slot))
			rc = member_rw(a, loc.slot, false, at, n,
				       rs->off[RESHAPE_OLD][loc.slot] + loc.sector);
		/* missing, or failed just now: from the rest of the row */
		if (rc && (rc = rebuild_old(rj, a, rs, s, &loc, n, at)))
			return rc;
		s += n;
	}
	return 0;
}

/* RAID 10: array sectors [from, from + len) of the old geometry into buf,
 * each piece from the first in-sync copy that reads (zeroes past its end). */
static int read_old_copies(struct array *a, const struct reshape_state *rs, uint64_t from,
			   uint64_t len, uint8_t *buf)
{
	const struct uraid_geom *g = geom_old(rs);

	for (uint64_t s = from; s < from + len;) {
		uint8_t *at = buf + (s - from) * 512;
		if (s >= g->array_sectors) {
			memset(at, 0, (from + len - s) * 512);
			break;
		}
		struct uraid_loc l[URAID_MAX_MEMBERS];
		int c = uraid_geom_map(g, s, l, URAID_MAX_MEMBERS);
		if (c <= 0)
			return -EINVAL;
		uint64_t n = uraid_geom_chunk_left(g, s);
		if (n > from + len - s)
			n = from + len - s;
		if (n > g->array_sectors - s)
			n = g->array_sectors - s;
		int rc = -EIO;  /* every copy missing, or failed now */
		for (int k = 0; k < c && rc; k++)
			if (slot_ok(a, l[k].slot))
				rc = member_rw(a, l[k].slot, false, at, n,
					       rs->off[RESHAPE_OLD][l[k].slot] + l[k].sector);
		if (rc)
			return rc;
		s += n;
	}
	return 0;
}

/* RAID 10: every copy of array sectors [from, from + len) in the new geometry. */
static int write_new_copies(struct array *a, const struct reshape_state *rs, uint64_t from,
			    uint64_t len, const uint8_t *buf)
{
	const struct uraid_geom *g = geom_new(rs);

	for (uint64_t s = from; s < from + len;) {
		struct uraid_loc l[URAID_MAX_MEMBERS];
		int c = uraid_geom_map(g, s, l, URAID_MAX_MEMBERS);
		if (c <= 0)
			return -EINVAL;
		uint64_t n = uraid_geom_chunk_left(g, s);
		if (n > from + len - s)
			n = from + len - s;
		for (int k = 0; k < c; k++) {
			if (!slot_ok(a, l[k].slot))
				continue;       /* missing or failed: that copy is lost */
			if (member_rw(a, l[k].slot, true, (void *)(buf + (s - from) * 512), n,
				      rs->off[RESHAPE_NEW][l[k].slot] + l[k].sector) &&
			    !array_level_survives(a))
				return -EIO;
		}
		s += n;
	}
	return 0;
}

/* Rows of the new geometry for array sectors [from, from + len) from buf. */
static int write_new(struct reshape_job *rj, struct array *a, const struct reshape_state *rs,
		     uint64_t from, uint64_t len, const uint8_t *buf)
{
	const struct uraid_geom *g = geom_new(rs);
	uint64_t C = g->chunk_sectors, rowlen = (uint64_t)g->data_disks * C;
	unsigned npar = g->raid_disks - g->data_disks;
	size_t bytes = C * 512;

	for (uint64_t row = from / rowlen; row < (from + len) / rowlen; row++) {
		struct uraid_stripe *st = &rj->st;
		if (uraid_geom_stripe(g, row, st) < 0)
			return -EINVAL;
		const uint8_t *rowbuf = buf + (row * rowlen - from) * 512;
		unsigned nsyn = npar == 2 ? st->syndrome_slots : st->data_disks;
		for (unsigned k = 0; k < nsyn; k++)
			rj->blocks[k] = rj->zero;
		for (unsigned k = 0; k < st->data_disks; k++) {
			unsigned slot = st->data_slot[k];
			unsigned at = npar == 2 ? (unsigned)st->syndrome_of_slot[slot] : k;
			rj->blocks[at] = (void *)(rowbuf + k * bytes);
		}
		int rc = npar == 2 ? uraid_parity_gen_pq(nsyn, bytes, rj->blocks, rj->par[0], rj->par[1])
				   : uraid_parity_gen_p(nsyn, bytes, rj->blocks, rj->par[0]);
		if (rc)
			return rc;
		for (unsigned s = 0; s < g->raid_disks; s++) {
			const void *src;
			if (s == (unsigned)st->p_slot)
				src = rj->par[0];
			else if (npar == 2 && s == (unsigned)st->q_slot)
				src = rj->par[1];
			else {
				int k = -1;
				for (unsigned d = 0; d < st->data_disks; d++)
					if (st->data_slot[d] == s)
						k = (int)d;
				if (k < 0)
					return -EINVAL;
				src = rowbuf + (size_t)k * bytes;
			}
			if (!slot_ok(a, s))
				continue;       /* missing or failed: the row is degraded */
			/* a failed write fails the member; the row stays whole
			   while the array survives it */
			if (member_rw(a, s, true, (void *)src, C, rs->off[RESHAPE_NEW][s] + row * C) &&
			    !array_level_survives(a))
				return -EIO;
		}
	}
	return 0;
}

/* What the members hold reaches their media before the checkpoint says so. */
static int sync_members(struct array *a)
{
	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		if (!slot_ok(a, s) || !fdatasync(a->slot[s].m->fd))
			continue;
		int rc = -errno;
		ulog(array_log(a), URAID_LOG_ERR, "reshape: flush of %s failed: %s",
		     a->slot[s].m->path, strerror(-rc));
		/* failed: the step stands on the others while the array survives */
		if (!md_fail_slot(a, s, rc))
			return rc;
	}
	return 0;
}

/* A member's superblock takes its new data offset (md's md_finish_reshape,
 * for every member: those that stay and those that become spares): a move
 * up (backwards) shrinks the data area by the move, else md finds it past
 * the end; a move down keeps data_size as before. */
static void take_new_offset(struct uraid_sb *own, uint64_t no, uint64_t used)
{
	if (no > own->data_offset) {
		uint64_t end = own->data_offset + own->data_size;
		if (end < no + used)
			end = no + used;
		own->data_size = end - no;
	}
	own->data_offset = no;
	own->new_offset = 0;
	own->feature_map &= ~URAID_FEATURE_NEW_OFFSET;
}

/* What a member becomes at a reshape's end, worked out before any of it is
 * done (reshape_finish). */
struct finish_member {
	enum { FIN_KEEP, FIN_SB, FIN_AREAS, FIN_DROP } what;
	int pending_slot;
	struct uraid_sb sb;
	struct uraid_sb_areas ar;
};

/* Member i's end of the reshape into *f (new geometry ng, level lv);
 * nothing of the array changes. 0, or -errno with the reason in err. */
static int finish_plan(const struct array *a, const struct reshape_state *rs,
		       const struct uraid_geom *ng, const struct level *lv, unsigned i,
		       struct finish_member *f, char *err, size_t errlen)
{
	int s = a->member_slot[i], ps = a->member_pending_slot[i];
	struct uraid_sb *own = &f->sb;

	*own = a->member_sb[i];
	f->what = FIN_KEEP;
	f->pending_slot = ps;
	if (a->members[i] && s >= 0 && (unsigned)s >= ng->raid_disks) {
		/* fewer members: the slots that went away leave their members
		   as spares (md's raid5_finish_reshape), their data offset moved
		   too (md_finish_reshape) */
		if ((own->feature_map & URAID_FEATURE_NEW_OFFSET) && own->new_offset > 0)
			take_new_offset(own, own->data_offset + (uint64_t)own->new_offset, a->sb.size);
		own->new_offset = 0;
		own->feature_map &= ~URAID_FEATURE_NEW_OFFSET;
		f->what = FIN_DROP;
		return array_member_areas_check(a, lv, a->members[i], own, true, &f->ar, err, errlen);
	}
	if (a->members[i] && a->member_state[i] == URAID_MEMBER_SPARE && ps >= 0) {
		/* a recovering member (RAID 10: md's raid10_start_reshape spare,
		   or a replacement) took no part in the reshape here: it takes
		   its new data offset as every member does (md_finish_reshape;
		   mdadm gave it one, and md's raid10_run counts it) and is
		   rebuilt whole there, from 0 (none of its new rows were
		   written); a slot that went away leaves it a spare */
		bool stays = (unsigned)ps < ng->raid_disks;
		if (!stays) {
			f->pending_slot = -1;
			own->feature_map &= ~URAID_FEATURE_RECOVERY_OFFSET;
		} else {
			own->feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
		}
		own->recovery_offset = 0;
		f->what = FIN_SB;
		if (!(own->feature_map & URAID_FEATURE_NEW_OFFSET) || !own->new_offset) {
			own->new_offset = 0;
			own->feature_map &= ~URAID_FEATURE_NEW_OFFSET;
			return 0;
		}
		struct uraid_sb moved = *own;
		char why[256];
		take_new_offset(&moved, own->data_offset + (uint64_t)(int64_t)own->new_offset,
				a->sb.size);
		if (array_member_areas_check(a, lv, a->members[i], &moved, stays, &f->ar, why,
					     sizeof(why)) == 0) {
			*own = moved;
			f->what = FIN_AREAS;
			return 0;
		}
		/* it holds no data the array needs: where it is (a superblock
		   without 0x4 is one md takes, each member with its own offset) */
		ulog(array_log(a), URAID_LOG_WARNING, "reshape: %s stays at data offset %" PRIu64
		     " (its new one does not fit: %s); it is rebuilt there",
		     a->members[i]->path, own->data_offset, why);
		own->new_offset = 0;
		own->feature_map &= ~URAID_FEATURE_NEW_OFFSET;
		return 0;
	}
	if (a->member_state[i] != URAID_MEMBER_IN_SYNC || s < 0 ||
	    (unsigned)s >= ng->raid_disks || !rs->off[RESHAPE_NEW][s])
		return 0;
	take_new_offset(own, rs->off[RESHAPE_NEW][s], a->sb.size);
	if (rs->old_unsynced[s]) {
		/* filled by the reshape (a Q or parity gap's member): in sync
		   from here on, as md takes it at the end */
		own->feature_map &= ~URAID_FEATURE_RECOVERY_OFFSET;
		own->recovery_offset = 0;
	}
	f->what = FIN_AREAS;
	return array_member_areas_check(a, lv, a->members[i], own, true, &f->ar, err, errlen);
}

/*
 * The last step is over: the array takes the new geometry (size included),
 * each member its new data offset, and the superblocks lose the reshape
 * fields (events+1), as md's raid5_finish_reshape and end_reshape.
 * All or nothing: every member's end is worked out and checked first, then
 * the geometry switched (which undoes itself when it fails), then the
 * rest done. Frozen, meta_lock held.
 */
static int reshape_finish(struct array *a, struct reshape_state *rs)
{
	char err[256];
	const struct uraid_geom *ng = geom_new(rs);
	const struct level *lv = level_find(ng->level);
	struct finish_member *fm = calloc(a->nmembers ? a->nmembers : 1, sizeof(*fm));
	int rc = fm ? 0 : -ENOMEM;

	if (rc == 0 && !lv)
		rc = uraid_errf(err, sizeof(err), -EINVAL, "level %d has no engine here", ng->level);
	else if (rc)
		snprintf(err, sizeof(err), "out of memory");
	for (unsigned i = 0; rc == 0 && i < a->nmembers; i++)
		rc = finish_plan(a, rs, ng, lv, i, &fm[i], err, sizeof(err));
	if (rc == 0 && (rc = array_switch_geometry(a, ng, err, sizeof(err))))
		ulog(array_log(a), URAID_LOG_ERR, "reshape: cannot take the new geometry: %s", err);
	else if (rc)
		ulog(array_log(a), URAID_LOG_ERR, "reshape: cannot end: %s; the array stays as it "
		     "was, mid-reshape", err);
	if (rc) {
		free(fm);
		return rc;
	}
	for (unsigned i = 0; i < a->nmembers; i++) {
		int s = a->member_slot[i];
		if (fm[i].what == FIN_KEEP)
			continue;
		a->member_sb[i] = fm[i].sb;
		a->member_pending_slot[i] = fm[i].pending_slot;
		if (fm[i].what != FIN_SB)
			array_member_set_areas(a->members[i], &fm[i].ar);
		if (fm[i].what == FIN_DROP) {
			a->member_state[i] = URAID_MEMBER_SPARE;
			a->member_slot[i] = -1;
			atomic_store(&a->slot[s].m, NULL);
			atomic_store(&a->slot[s].state, URAID_MEMBER_MISSING);
		}
	}
	free(fm);
	for (unsigned s = a->geom.raid_disks; s < geom_old(rs)->raid_disks; s++) {
		atomic_store(&a->slot[s].m, NULL);
		atomic_store(&a->slot[s].state, URAID_MEMBER_MISSING);
	}
	struct uraid_sb *sb = &a->sb;
	sb->level = geom_new(rs)->level;
	sb->layout = geom_new(rs)->layout;
	sb->chunksize = geom_new(rs)->chunk_sectors;
	sb->feature_map &= ~(URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_RESHAPE_BACKWARDS |
			     URAID_FEATURE_NEW_OFFSET);
	sb->delta_disks = 0;
	a->reshape = NULL;
	free(rs);
	/* after a->reshape goes: the slots it filled are in sync now */
	meta_recount_degraded(a);
	/* an error here means no member took the superblock: meta.c has
	   failed every one that refused it, so the array serves nothing more
	   in the new geometry while its disks still say mid-reshape */
	int wrc = meta_record_change(a);
	if (wrc)
		ulog(array_log(a), URAID_LOG_ERR, "reshape: the finished geometry reached no "
		     "member's superblock (%s): the array has failed", strerror(-wrc));
	return wrc;
}

/*
 * A backwards reshape's job positions: (vtop - array position) / dn, vtop
 * being its start rounded up to a whole step, so that every unit is one
 * step [vtop - (p + n) dn, vtop - p dn) on step boundaries of the array (a
 * whole number of rows of both geometries); the first one is cut at top.
 */
static uint64_t backwards_vtop(const struct reshape_state *rs)
{
	return (rs->top + rs->step - 1) / rs->step * rs->step;
}

/* Array sectors [from, from + len): read in the old geometry, written in
 * the new one, durable on the members. */
static int move(struct reshape_job *rj, struct array *a, const struct reshape_state *rs,
		uint64_t from, uint64_t len)
{
	int rc = rs->copies ? read_old_copies(a, rs, from, len, rj->data)
			    : read_old(rj, a, rs, from, len, rj->data);
	if (!rc)
		rc = rs->copies ? write_new_copies(a, rs, from, len, rj->data)
				: write_new(rj, a, rs, from, len, rj->data);
	if (!rc)
		rc = sync_members(a);
	return rc;
}

/*
 * The moved part reaches the superblocks: the position `moved` (events+1,
 * md's checkpoint), or on the last step the new geometry (rs is freed
 * then). Frees nothing and moves nothing when the write fails.
 */
static int checkpoint(struct array *a, struct reshape_state *rs, uint64_t moved, bool last)
{
	int rc;

	pthread_mutex_lock(&a->meta_lock);
	if (last) {
		rs->position = moved;
		rc = reshape_finish(a, rs);
	} else {
		a->sb.reshape_position = moved;
		rc = meta_record_change(a);
		/* on disk: requests go by the new position (those outside
		   the held rows find the same geometry either side of
		   it); if not, the old place still holds the step
		   (nothing was written to it meanwhile) and stays in use */
		if (!rc)
			reshape_set_position(rs, moved);
		else
			a->sb.reshape_position = rs->position;
	}
	pthread_mutex_unlock(&a->meta_lock);
	return rc;
}

/* One step, on the job's thread: see the top of the file. */
static int run_step(struct reshape_job *rj, struct sync_unit *u)
{
	struct array *a = rj->j->a;
	struct reshape_state *rs = a->reshape;
	uint64_t dn = reshape_pos_div(rs);
	uint64_t from, len;
	bool last;

	if (rs->backwards) {
		uint64_t hi = backwards_vtop(rs) - u->pos * dn;
		from = hi - (uint64_t)u->n * dn;
		/* the first step (at top, or after md stopped inside a step):
		   up to the position; empty when all was moved (position 0),
		   and then it only finishes */
		if (from <= rs->position && rs->position < hi)
			hi = rs->position;
		len = hi - from;
		last = from == 0;
	} else {
		from = u->pos * dn;
		len = (uint64_t)u->n * dn;
		/* the first step after md stopped inside a step: from the
		   position on (the runner rounds its start down to a whole step) */
		if (from < rs->position && rs->position <= from + len) {
			len -= rs->position - from;
			from = rs->position;
		}
		last = from + len >= rs->end;
	}
	/* every step holds only its rows while they move (the last one's are
	   empty when all was moved before: it only finishes) */
	int rc = len ? array_hold_range(a, from, from + len) : 0;
	if (rc)
		return rc;
	uint64_t expect = rs->backwards ? from + len : from;
	uint64_t fin = rs->backwards ? from : from + len;       /* the position at the end */
	if (expect != rs->position) {
		rc = -EINVAL;   /* the runner and the position disagree: a bug */
		ulog(array_log(a), URAID_LOG_ERR, "reshape: step at %" PRIu64 " but the position "
		     "is %" PRIu64, expect, rs->position);
	}
	if (!rc && rs->copies) {
		/* RAID 10: in pieces as far as the distance allows, each one
		   checkpointed before the next is written */
		uint64_t end = from + len;
		for (uint64_t p = rs->backwards ? end : from;
		     !rc && (rs->backwards ? p > from : p < end);) {
			/* forwards [p, e) above the position, backwards [e, p)
			   below it */
			uint64_t e = rs->backwards ? reshape_copies_safe_start(rs, p, from)
						   : reshape_copies_safe_end(rs, p, end);
			if (e == p) {
				rc = -ENOSPC;
				ulog(array_log(a), URAID_LOG_ERR, "reshape: the copies of array sector "
				     "%" PRIu64 " would overwrite live data (the data offsets are too "
				     "close)", p);
				break;
			}
			rc = rs->backwards ? move(rj, a, rs, e, p - e) : move(rj, a, rs, p, e - p);
			if (!rc)
				rc = checkpoint(a, rs, e, false);
			if (!rc && a->reshape_piece_hook)
				a->reshape_piece_hook(a->reshape_piece_hook_arg, from, end, e, last);
			p = e;
		}
	} else if (!rc && len) {
		rc = move(rj, a, rs, from, len);
		if (!rc)
			rc = checkpoint(a, rs, fin, false);
		if (!rc && a->reshape_piece_hook)
			a->reshape_piece_hook(a->reshape_piece_hook_arg, from, from + len, fin, last);
	}
	if (len)
		array_release_range(a);
	if (!rc && last) {
		/* all moved and on disk: the switch to the new geometry alone
		   is done frozen */
		rc = array_freeze_for_job(a);
		if (!rc) {
			rc = checkpoint(a, rs, fin, true);
			array_thaw(a);
		}
	}
	if (rc)
		ulog(array_log(a), URAID_LOG_ERR, "reshape: the step at array sector %" PRIu64
		     " failed: %s", from, strerror(-rc));
	return rc;
}

/* On the lane's reactor: the unit is over. */
static void step_done(struct reactor *r, struct reactor_msg *m)
{
	struct reshape_job *rj = (struct reshape_job *)((char *)m - offsetof(struct reshape_job, done_msg));
	(void)r;
	sync_unit_done(rj->j, rj->done_u, rj->done_res);
}

static void *reshape_thread(void *arg)
{
	struct reshape_job *rj = arg;

	pthread_mutex_lock(&rj->mu);
	for (;;) {
		while (!rj->todo && !rj->quit)
			pthread_cond_wait(&rj->cv, &rj->mu);
		if (rj->quit)
			break;
		struct sync_unit *u = rj->todo;
		rj->todo = NULL;
		pthread_mutex_unlock(&rj->mu);
		rj->done_res = run_step(rj, u);
		rj->done_u = u;
		rj->done_msg.fn = step_done;
		reactor_post(rj->j->lane[u->lane].r, &rj->done_msg);
		pthread_mutex_lock(&rj->mu);
	}
	pthread_mutex_unlock(&rj->mu);
	return NULL;
}

/* ---- the runner's hooks ---- */

static uint32_t rs_unit_sectors(const struct array *a)
{
	const struct reshape_state *rs = a->reshape;
	return rs ? (uint32_t)(rs->step / reshape_pos_div(rs)) : 1;
}

static int rs_can_run(const struct array *a, enum uraid_sync_kind kind, char *err, size_t errlen)
{
	if (kind != URAID_SYNC_RESHAPE || !a->reshape)
		return uraid_errf(err, errlen, -EINVAL, "no reshape is in progress");
	if (rs_unit_sectors(a) > UINT32_MAX / 2)
		return uraid_errf(err, errlen, -EINVAL, "the reshape's step is too large");
	return 0;
}

static void rs_unit(struct sync_job *j, struct sync_unit *u)
{
	struct reshape_job *rj = j->priv;

	pthread_mutex_lock(&rj->mu);
	rj->todo = u;
	pthread_cond_signal(&rj->cv);
	pthread_mutex_unlock(&rj->mu);
}

static void rs_job_fini(struct sync_job *j)
{
	struct reshape_job *rj = j->priv;

	if (!rj)
		return;
	if (rj->thread_started) {
		pthread_mutex_lock(&rj->mu);
		rj->quit = true;
		pthread_cond_signal(&rj->cv);
		pthread_mutex_unlock(&rj->mu);
		pthread_join(rj->thread, NULL);
	}
	pthread_mutex_destroy(&rj->mu);
	pthread_cond_destroy(&rj->cv);
	free(rj->data);
	free(rj->par[0]);
	free(rj->par[1]);
	free(rj->zero);
	free(rj->old_blocks);
	free(rj->old_zero);
	free(rj);
	j->priv = NULL;
}

static int rs_job_init(struct sync_job *j)
{
	const struct reshape_state *rs = j->a->reshape;
	struct reshape_job *rj = calloc(1, sizeof(*rj));

	if (!rj)
		return -ENOMEM;
	rj->j = j;
	if (rs->copies && j->unit) {
		/* RAID 10: positions are array sectors up to the new size (the
		   runner's span, which held the start, is the old one) */
		j->end = rs->end;
		j->pos = rs->position / j->unit * j->unit;
		if (j->pos > j->end)
			j->pos = j->end;
		j->next = j->pos;
		atomic_store(&j->done_sectors, j->pos);
	}
	if (rs->backwards && j->unit) {
		/* job positions count down from the top (backwards_vtop); the
		   runner's were computed forwards */
		uint64_t dn = reshape_pos_div(rs), vtop = backwards_vtop(rs);
		j->end = vtop / dn;
		j->pos = (vtop - rs->position) / dn / j->unit * j->unit;
		if (j->pos > j->end)
			j->pos = j->end;
		j->next = j->pos;
		atomic_store(&j->done_sectors, j->pos);
	}
	bool all_moved = rs->backwards ? rs->position == 0 : rs->position >= rs->end;
	/* the position at the end (all moved, not finished: a stop between the
	   last step and its superblocks, or md's): no unit would be left and
	   the reshape would stand for ever; one empty last step finishes it */
	if (all_moved && j->pos >= j->end && j->end && j->unit) {
		j->pos = (j->end - 1) / j->unit * j->unit;
		j->next = j->pos;
		atomic_store(&j->done_sectors, j->pos);
	}
	pthread_mutex_init(&rj->mu, NULL);
	pthread_cond_init(&rj->cv, NULL);
	j->priv = rj;
	size_t chunk = (size_t)geom_new(rs)->chunk_sectors * 512;
	rj->data = aligned_alloc(4096, rs->step * 512);
	rj->par[0] = aligned_alloc(4096, chunk);
	rj->par[1] = aligned_alloc(4096, chunk);
	rj->zero = aligned_alloc(4096, chunk);
	size_t ochunk = (size_t)geom_old(rs)->chunk_sectors * 512;
	rj->old_blocks = aligned_alloc(4096, (geom_old(rs)->raid_disks + 2) * ochunk);
	rj->old_zero = aligned_alloc(4096, ochunk);
	if (!rj->data || !rj->par[0] || !rj->par[1] || !rj->zero || !rj->old_blocks ||
	    !rj->old_zero) {
		rs_job_fini(j);
		return -ENOMEM;
	}
	memset(rj->zero, 0, chunk);
	if (pthread_create(&rj->thread, NULL, reshape_thread, rj)) {
		rs_job_fini(j);
		return -EAGAIN;
	}
	rj->thread_started = true;
	return 0;
}

const struct sync_level sync_reshape_level = {
	.unit_sectors = rs_unit_sectors,
	.can_run = rs_can_run,
	.unit = rs_unit,
	.job_init = rs_job_init,
	.job_fini = rs_job_fini,
};
