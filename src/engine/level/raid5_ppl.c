/* SPDX-License-Identifier: MIT */
/*
 * md's partial parity log at run time: the parity-log hooks of a RAID 5
 * array with a PPL (facts in uraid/ppl.h; kernel raid5-ppl.c).
 *
 * Before a unit's member writes, its partial parity (the XOR of the row's
 * data chunks the unit leaves alone, over the unit's range) is logged on the
 * row's parity member, in md's entry layout: one entry per unit covering the
 * consecutive data chunks from the first written to the last (a unit that
 * spans every data chunk logs no partial parity, as md's full-stripe
 * writes). The member writes wait until the log write (with RWF_DSYNC, md's
 * FUA) is done.
 *
 * One log per member, as md's ppl_log: at most one log write, with the
 * units it covers, is in work at a time; the next starts when every unit of
 * the previous has its member writes done and the members those writes
 * went to are flushed (md's ppl_do_flush): a member write done is only in a
 * cache, and the next log supersedes this one (md's recovery replays the
 * newest log only), so the rows this one covers must be durable first; the
 * newest log on a member then always covers every row that member's parity
 * may be torn in. Units that arrive meanwhile wait
 * and go into the next log write together, up to 148 entries and the
 * room: 128 KiB of partial parity written one after another through the
 * area when it holds two (MULTIPLE_PPLS), else the area less its header,
 * always at its start.
 *
 * Where the partial parity comes from: P as just computed for the unit
 * XOR the new data of the written chunks XOR the old data of unwritten
 * chunks between them (read because the write path plans such units FULL,
 * parity_log.span_reads); every mode of raid5_plan.c has those at hand.
 *
 * Not logged (md's ppl_write_stripe too): units whose parity member is not
 * written (degraded, DIRECT) or not in sync. A member logs only once its
 * area was emptied in this run (ml->ready): at assembly (md/ppl.c
 * ppl_attach), or when it takes its slot in sync after a rebuild or a
 * replacement (ppl_member_joins, as md's ppl_modify_log): a member added
 * since may hold stale logs of a higher generation, which a replay would
 * take for the newest.
 *
 * A log write that fails fails its member (md_error): the array goes on
 * degraded, the failed member's old logs are never replayed, and the units
 * write without it (their parity member is gone); when the array cannot
 * survive that, the units fail with -EIO. Never do unlogged writes follow a
 * still-valid older log. A member that left its slot or failed: the units
 * waiting for its log go on unlogged (their parity is not written either).
 *
 * Threads: the hooks run on the pieces' reactors; a member's log is under
 * its mutex, held for list steps and the header's build, never across I/O.
 * A log write and the flushes before the next are submitted on the reactor
 * of the unit that made them due and complete there; each unit resumes on
 * its own reactor (reactor_post).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <uraid/parity.h>
#include <uraid/ppl.h>

#include "engine/level/parity_log.h"
#include "engine/level/raid5_ppl.h"
#include "engine/level/raid5_priv.h"
#include "engine/md/member_state.h"
#include "engine/md/ppl.h"

#define HDR_SECTORS (URAID_PPL_HEADER_BYTES / 512u)

struct ppl_mlog {
	pthread_mutex_t mu;
	struct ppl_log *log;
	unsigned slot;
	uint64_t area_start, next;      /* absolute sectors: the area, the next log write */
	uint8_t *buf;                   /* header + partial parity, 4 KiB aligned */
	struct member_io mio;
	bool busy;                      /* a log write or its units' member writes in work */
	unsigned pending;               /* units of that log write not done */
	struct r5_piece *inflight;      /* those units (log_next) */
	struct r5_piece *wait_head, *wait_tail;
	uint64_t touched;               /* slots the in-flight units write (bit per slot) */
	unsigned flushing;              /* member flushes in work before the next log */
	struct member_io *fl;           /* one flush per slot */
	bool warned;
	/* the member whose area was emptied at assembly: only it is logged on
	   (a member added since may hold stale logs of a higher generation,
	   which a replay would take for the newest) */
	struct member *ready;
};

struct ppl_log {
	struct parity_log base;
	uint32_t signature;
	bool multi;
	uint64_t area_sectors;
	uint32_t entry_space;           /* bytes of partial parity per log write */
	_Atomic uint64_t seq;           /* generation of the last log write */
	unsigned n;
	struct ppl_mlog m[];
};

static struct reactor *piece_reactor(struct r5_piece *pc)
{
	return r5_piece_reactor(pc);
}

/* The unit's first and last written data index; false when none. */
static bool written_span(const struct r5_piece *pc, unsigned *first, unsigned *last)
{
	bool any = false;

	for (unsigned k = 0; k < pc->d; k++)
		if (pc->wr[k]) {
			if (!any)
				*first = k;
			*last = k;
			any = true;
		}
	return any;
}

static void xor_into(uint8_t *dst, const uint8_t *src, size_t len)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < len / 8; i++)
		d[i] ^= s[i];
}

/* Bytes of partial parity the unit logs (0: it spans every data chunk). */
static uint32_t unit_pp_bytes(const struct r5_piece *pc)
{
	unsigned first = 0, last = 0;

	written_span(pc, &first, &last);
	return first == 0 && last == pc->d - 1 ? 0 : pc->ulen;
}

/* Entry e and its partial parity at pp (unit_pp_bytes of room) for pc. */
static void unit_entry(struct r5_piece *pc, struct uraid_ppl_entry *e, uint8_t *pp)
{
	unsigned first = 0, last = 0, ps = pc->st.p_slot;
	uint64_t row_start = pc->st.stripe * pc->d * pc->C;

	written_span(pc, &first, &last);
	e->data_sector = row_start + (uint64_t)first * pc->C + pc->ux;
	e->data_size = (last - first + 1) * pc->ulen;
	e->parity_disk = ps;
	e->pp_size = unit_pp_bytes(pc);
	if (!e->pp_size) {
		e->checksum = uraid_ppl_pp_checksum(pp, 0);
		return;
	}
	/* pp = P ^ the span's new data (written) or old data (gaps), through
	   the parity library's XOR; its alignment refused (new data straight
	   from a request's buffer): word by word */
	void *src[64];          /* ppl_attach runs PPL on 64 members at most */
	unsigned n = 0;
	src[n++] = pc->sbuf[ps];
	for (unsigned k = first; k <= last; k++)
		src[n++] = pc->wr[k] ? r5_new_data(pc, k) : pc->sbuf[pc->st.data_slot[k]];
	if (uraid_parity_gen_p(n, pc->ulen, src, pp) < 0) {
		memcpy(pp, src[0], pc->ulen);
		for (unsigned i = 1; i < n; i++)
			xor_into(pp, src[i], pc->ulen);
	}
	e->checksum = uraid_ppl_pp_checksum(pp, e->pp_size);
}

static void log_written(struct member_io *mio, int res);

/*
 * With ml->mu held and ml not busy: put the waiting units into one log write
 * (as many as fit) and prepare it; the caller submits ml->mio unlocked.
 */
static void build_io(struct ppl_mlog *ml, struct member *m)
{
	struct ppl_log *log = ml->log;
	struct r5_piece **tail = &ml->inflight;
	uint32_t pp_used = 0, count = 0;
	struct uraid_ppl_entry entries[URAID_PPL_MAX_ENTRIES];

	ml->inflight = NULL;
	while (ml->wait_head && count < URAID_PPL_MAX_ENTRIES) {
		struct r5_piece *pc = ml->wait_head;
		uint32_t pp = unit_pp_bytes(pc);

		if (pp_used + pp > log->entry_space)
			break;
		unit_entry(pc, &entries[count], ml->buf + URAID_PPL_HEADER_BYTES + pp_used);
		pp_used += pp;
		ml->touched |= 1ull << pc->st.p_slot;
		for (unsigned k = 0; k < pc->d; k++)
			if (pc->wr[k])
				ml->touched |= 1ull << pc->st.data_slot[k];
		count++;
		ml->wait_head = pc->log_next;
		if (!ml->wait_head)
			ml->wait_tail = NULL;
		pc->log_next = NULL;
		*tail = pc;
		tail = &pc->log_next;
	}
	ml->busy = true;
	ml->pending = count;

	struct uraid_ppl_header hdr;
	hdr.signature = log->signature;
	hdr.generation = atomic_fetch_add(&log->seq, 1) + 1;
	hdr.entries_count = count;
	memcpy(hdr.entries, entries, count * sizeof(entries[0]));
	uraid_ppl_encode(&hdr, ml->buf);

	uint64_t len = HDR_SECTORS + pp_used / 512, at = ml->area_start;
	if (log->multi) {
		if (ml->area_start + log->area_sectors - ml->next < len)
			ml->next = ml->area_start;      /* wrap: md rewinds likewise */
		at = ml->next;
		ml->next += len;
	}
	memset(&ml->mio, 0, sizeof(ml->mio));
	ml->mio.kind = MEMBER_WRITE;
	ml->mio.m = m;
	ml->mio.meta = true;
	ml->mio.buf = ml->buf;
	ml->mio.len = (uint32_t)(len * 512);
	ml->mio.sector = at;
	ml->mio.rw_flags = RWF_DSYNC;          /* md writes its logs FUA */
	ml->mio.done = log_written;
	ml->mio.ctx = ml;
}

static void resume_msg(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *pc = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, log_msg));

	(void)r;
	pc->log_resume(pc, pc->log_res);
}

/* Resume units from head (log_next chain) with res on their reactors. The
   chain is read before each unit is let go: once resumed, a unit may finish
   and its piece be reused elsewhere. */
static void resume_chain(struct r5_piece *pc, int res, void (*fn)(struct reactor *, struct reactor_msg *))
{
	struct r5_piece *next;

	for (; pc; pc = next) {
		next = pc->log_next;
		pc->log_res = res;
		pc->log_msg.fn = fn;
		reactor_post(piece_reactor(pc), &pc->log_msg);
	}
}

/* A unit let go without its log: after_writes will not count it. */
static void resume_unlogged_msg(struct reactor *r, struct reactor_msg *m)
{
	struct r5_piece *pc = (struct r5_piece *)((char *)m - offsetof(struct r5_piece, log_msg));
	parity_log_resume_fn *fn = pc->log_resume;

	(void)r;
	pc->log_resume = NULL;
	fn(pc, pc->log_res);
}

/*
 * With ml->mu held and ml not busy: the next log write when units wait and
 * the slot still holds the member whose area this log owns (true: submit
 * ml->mio unlocked); else the waiting units go on unlogged (*unlogged: the
 * chain to resume unlocked with resume_unlogged_msg).
 */
static bool next_log(struct ppl_mlog *ml, struct r5_piece **unlogged)
{
	struct array *a = ml->log->base.a;
	struct member *m = a->slot[ml->slot].m;

	*unlogged = NULL;
	if (!ml->wait_head)
		return false;
	if (m && m == ml->ready && slot_ok(a, ml->slot)) {
		build_io(ml, m);
		return true;
	}
	*unlogged = ml->wait_head;
	ml->wait_head = ml->wait_tail = NULL;
	return false;
}

/* The log is idle again (flushes done): start what waits. Unlocked. */
static void log_idle(struct ppl_mlog *ml, struct reactor *r)
{
	struct r5_piece *unlogged;
	bool start;

	pthread_mutex_lock(&ml->mu);
	ml->busy = false;
	start = next_log(ml, &unlogged);
	pthread_mutex_unlock(&ml->mu);
	if (start)
		member_submit(r, &ml->mio);
	resume_chain(unlogged, 0, resume_unlogged_msg);
}

static void flush_step(struct ppl_mlog *ml, struct reactor *r)
{
	bool idle;

	pthread_mutex_lock(&ml->mu);
	idle = --ml->flushing == 0;
	pthread_mutex_unlock(&ml->mu);
	if (idle)
		log_idle(ml, r);
}

static void flush_failure_recorded(void *arg, bool survives)
{
	struct member_io *mio = arg;

	(void)survives;         /* the member is failed: its rows are degraded, not torn */
	flush_step(mio->ctx, mio->r);
}

static void flush_done(struct member_io *mio, int res)
{
	struct ppl_mlog *ml = mio->ctx;

	if (res < 0) {
		/* md_error on the member: what it may have lost is then
		   redundancy the array no longer counts on */
		md_fail_slot_parked(ml->log->base.a, mio->r, (unsigned)(mio - ml->fl), res,
				    flush_failure_recorded, mio);
		return;
	}
	flush_step(ml, mio->r);
}

/*
 * Every unit of the log write has its member writes done (ml->mu held):
 * flush the members they went to before the next log may supersede this
 * one. Returns the number of flushes to submit (ml->fl[] with bits in *mask).
 */
static unsigned plan_flushes(struct ppl_mlog *ml, uint64_t *mask)
{
	struct array *a = ml->log->base.a;
	unsigned n = 0;

	*mask = 0;
	for (unsigned s = 0; s < ml->log->n; s++) {
		struct member *m = a->slot[s].m;

		if (!(ml->touched & (1ull << s)) || !m || !slot_ok(a, s))
			continue;
		memset(&ml->fl[s], 0, sizeof(ml->fl[s]));
		ml->fl[s].kind = MEMBER_FLUSH;
		ml->fl[s].m = m;
		ml->fl[s].done = flush_done;
		ml->fl[s].ctx = ml;
		*mask |= 1ull << s;
		n++;
	}
	ml->touched = 0;
	ml->flushing = n;
	return n;
}

/* The units of a log write that failed on a member the array could not
   lose: they fail, after_writes will not see them. */
static void log_failed_units(struct ppl_mlog *ml, struct reactor *r)
{
	struct r5_piece *pc;

	pthread_mutex_lock(&ml->mu);
	pc = ml->inflight;
	ml->inflight = NULL;
	ml->pending = 0;
	ml->touched = 0;
	pthread_mutex_unlock(&ml->mu);
	resume_chain(pc, -EIO, resume_unlogged_msg);
	log_idle(ml, r);
}

static void log_failure_recorded(void *arg, bool survives)
{
	struct ppl_mlog *ml = arg;
	struct r5_piece *pc;

	if (!survives) {
		log_failed_units(ml, ml->mio.r);
		return;
	}
	/* the member is failed: its old logs are not replayed, the units
	   write without it */
	pthread_mutex_lock(&ml->mu);
	pc = ml->inflight;
	pthread_mutex_unlock(&ml->mu);
	resume_chain(pc, 0, resume_msg);
}

/* The log write is done (on the reactor that submitted it): its units go on. */
static void log_written(struct member_io *mio, int res)
{
	struct ppl_mlog *ml = mio->ctx;
	struct r5_piece *pc;

	pthread_mutex_lock(&ml->mu);
	pc = ml->inflight;
	if (res < 0) {
		/* md fails the member (md_error): an older log of it must not
		   be replayed over rows written after it without a log */
		ml->ready = NULL;
		if (!ml->warned) {
			ml->warned = true;
			ulog(array_log(ml->log->base.a), URAID_LOG_ERR, "PPL write on %s failed (%s): "
			     "the member is failed", mio->m->path, strerror(-res));
		}
	}
	pthread_mutex_unlock(&ml->mu);
	if (res < 0) {
		md_fail_slot_parked(ml->log->base.a, mio->r, ml->slot, res, log_failure_recorded, ml);
		return;
	}
	resume_chain(pc, 0, resume_msg);
}

static int ppl_before_writes(struct parity_log *pl, struct r5_piece *pc,
			     parity_log_resume_fn *resume)
{
	struct ppl_log *log = (struct ppl_log *)pl;
	unsigned ps = pc->st.p_slot, first, last;
	struct ppl_mlog *ml = &log->m[ps];
	bool start;

	pc->log_resume = NULL;          /* not in the log (after_writes looks) */
	if (pc->plan.mode == R5_DIRECT || (pc->sflag[ps] & SF_DEAD) || !slot_ok(pc->a, ps) ||
	    !written_span(pc, &first, &last))
		return 0;
	pc->log_resume = resume;
	pc->log_next = NULL;
	pthread_mutex_lock(&ml->mu);
	if (pc->a->slot[ps].m != ml->ready) {
		/* a member whose area this run did not empty: never logged on */
		pthread_mutex_unlock(&ml->mu);
		pc->log_resume = NULL;
		return 0;
	}
	if (ml->wait_tail)
		ml->wait_tail->log_next = pc;
	else
		ml->wait_head = pc;
	ml->wait_tail = pc;
	start = !ml->busy;
	if (start)
		build_io(ml, pc->a->slot[ps].m);
	pthread_mutex_unlock(&ml->mu);
	if (start)
		member_submit(piece_reactor(pc), &ml->mio);
	return 1;
}

static void ppl_after_writes(struct parity_log *pl, struct r5_piece *pc, int res)
{
	struct ppl_log *log = (struct ppl_log *)pl;
	struct ppl_mlog *ml = &log->m[pc->st.p_slot];
	struct reactor *r = piece_reactor(pc);
	unsigned nflush = 0;
	uint64_t mask = 0;
	bool done;

	(void)res;
	if (!pc->log_resume)
		return;         /* let through unlogged */
	pc->log_resume = NULL;
	pthread_mutex_lock(&ml->mu);
	done = --ml->pending == 0;
	if (done) {
		ml->inflight = NULL;
		nflush = plan_flushes(ml, &mask);
	}
	pthread_mutex_unlock(&ml->mu);
	if (!done)
		return;
	if (!nflush) {
		log_idle(ml, r);
		return;
	}
	/* pc is not used from here: it may be reused once we return */
	for (unsigned s = 0; s < log->n; s++)
		if (mask & (1ull << s))
			member_submit(r, &ml->fl[s]);
}

static void ppl_fini(struct parity_log *pl)
{
	struct ppl_log *log = (struct ppl_log *)pl;

	for (unsigned i = 0; i < log->n; i++) {
		pthread_mutex_destroy(&log->m[i].mu);
		free(log->m[i].buf);
		free(log->m[i].fl);
	}
	free(log);
}

static const struct parity_log_ops ppl_ops = {
	.name = "ppl",
	.before_writes = ppl_before_writes,
	.after_writes = ppl_after_writes,
	.flush = NULL,          /* the log is on the members: their flush covers it */
	.fini = ppl_fini,
};

void raid5_ppl_set_ready(struct parity_log *pl, unsigned s, struct member *m)
{
	struct ppl_log *log = (struct ppl_log *)pl;

	if (s >= log->n)
		return;
	pthread_mutex_lock(&log->m[s].mu);
	log->m[s].ready = m;
	log->m[s].next = log->m[s].area_start = ppl_member_area(pl->a, m);
	pthread_mutex_unlock(&log->m[s].mu);
}

int raid5_ppl_log_create(struct array *a, uint64_t area_sectors, uint32_t signature, bool multi,
			 struct parity_log **out)
{
	unsigned n = a->geom.raid_disks;
	struct ppl_log *log = calloc(1, sizeof(*log) + n * sizeof(log->m[0]));

	if (!log)
		return -ENOMEM;
	log->base.ops = &ppl_ops;
	log->base.a = a;
	log->base.span_reads = true;
	log->signature = signature;
	log->multi = multi;
	log->area_sectors = area_sectors;
	log->entry_space = multi ? URAID_PPL_SPACE_BYTES
				 : (uint32_t)((area_sectors - HDR_SECTORS) * 512);
	if (log->entry_space > R5_SEG_SECTORS * 512u)
		log->entry_space = R5_SEG_SECTORS * 512u;
	log->base.max_unit_sectors = log->entry_space / 512;
	log->n = n;
	for (unsigned s = 0; s < n; s++) {
		struct ppl_mlog *ml = &log->m[s];

		pthread_mutex_init(&ml->mu, NULL);
		ml->log = log;
		ml->slot = s;
		ml->buf = aligned_alloc(4096, URAID_PPL_HEADER_BYTES + log->entry_space);
		ml->fl = calloc(n, sizeof(*ml->fl));
		if (!ml->buf || !ml->fl) {
			log->n = s + 1;
			ppl_fini(&log->base);
			return -ENOMEM;
		}
		/* the area's place on this member: its superblock + its ppl.offset */
		ml->area_start = ppl_member_area(a, a->slot[s].m);
		ml->next = ml->area_start;
		ml->ready = slot_ok(a, s) ? a->slot[s].m : NULL;
	}
	*out = &log->base;
	return 0;
}
