// SPDX-License-Identifier: MIT
/*
 * Background work: the job, its progress, throttling and checkpoints. The
 * level does one unit at a time (sync_raid5.c, sync_mirror.c); this file
 * moves the position, sleeps between units when the rate asks for it, and
 * records the outcome (resync_offset for a resync).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/core/host.h"
#include "engine/jobs/auto_recover.h"
#include "engine/jobs/sync.h"
#include "engine/md/member_state.h"
#include "engine/md/reshape_state.h"
#include "engine/md/resync_state.h"
#include "engine/md/wib.h"

#define A(ua) ((struct array *)(ua))

#define SYNC_MIN_KIB_DEFAULT   1000u     /* md's speed_limit_min */
#define SYNC_MAX_KIB_DEFAULT   200000u   /* md's speed_limit_max */
#define SYNC_WINDOW_NS         (500u * 1000000u)   /* rate measured over this */
#define SYNC_MIN_MARGIN        32u       /* under load: 1/32 (3 %) over the minimum */
#define SYNC_BUSY_HOLD_NS      (500u * 1000000u)   /* busy for this long after client I/O */
#define SYNC_CHECKPOINT_NS     (3ull * 1000000000u) /* resync_offset written this often */
#define SYNC_RETRY_NS          (30ull * 1000000000u) /* a failed rebuild waits this long */
#define SYNC_MAX_NESTED        64u       /* units passed over in one go (sync_unit_done) */
#define SYNC_FROZEN_LOOK_NS    (2u * 1000000u)     /* a frozen array is looked at again after this */
#define SYNC_PAUSE_MAX_NS      (100u * 1000000u)   /* a throttled lane looks again after this */

const char *uraid_sync_kind_name(enum uraid_sync_kind k)
{
	switch (k) {
	case URAID_SYNC_RESYNC: return "resync";
	case URAID_SYNC_CHECK: return "check";
	case URAID_SYNC_REPAIR: return "repair";
	case URAID_SYNC_RECOVER: return "recovery";
	case URAID_SYNC_REPLACE: return "replace";
	case URAID_SYNC_RESHAPE: return "reshape";
	default: return "none";
	}
}

/* The level's background-job hooks; NULL: it has none (no redundancy). */
static const struct sync_level *level_of(const struct array *a)
{
	return a->level ? a->level->sync : NULL;
}

/* The hooks of a job of this kind: a reshape's own (jobs/reshape.c), else the level's. */
static const struct sync_level *hooks_of(const struct array *a, enum uraid_sync_kind kind)
{
	return kind == URAID_SYNC_RESHAPE && a->reshape ? &sync_reshape_level : level_of(a);
}

/*
 * A job's positions are member sectors (md's dev_sectors), but array sectors
 * for a RAID 10 resync, check or repair (md runs those over
 * resync_max_sectors, the array size, and keeps resync_offset in them; a
 * recovery or a replace walks the member sectors of its slot).
 */
static bool in_array_sectors(const struct array *a, enum uraid_sync_kind kind)
{
	return a->level->info.sync_in_array_sectors && kind != URAID_SYNC_RECOVER &&
	       kind != URAID_SYNC_REPLACE;
}

/* How a log line or a status names the unit of a job's positions. */
static const char *positions_name(const struct array *a, enum uraid_sync_kind kind)
{
	return in_array_sectors(a, kind) ? "of the array" : "per member";
}

/* Where a job's positions end. RAID 4/5/6 sizes are whole rows; a short
 * last unit is cut where it is handed out (lane_run). */
static uint64_t sync_span(const struct array *a, enum uraid_sync_kind kind)
{
	return in_array_sectors(a, kind) ? a->geom.array_sectors : a->geom.dev_sectors;
}

static uint32_t speed(const _Atomic uint32_t *v, uint32_t def)
{
	uint32_t x = atomic_load(v);
	return x ? x : def;
}

/* ---- the job's life ---- */

/*
 * After assembly: members the superblocks show part-way through a rebuild
 * or a replacement are attached to their slots again before any write
 * (md/member_state.c), so that the rows they already hold keep getting
 * every change; and the automatic start of jobs runs from the engine's tick.
 */
void sync_attach_pending(struct array *a)
{
	if (a->flags & URAID_ASSEMBLE_READONLY || !level_of(a))
		return;
	md_attach_pending(a, level_of(a)->unit_sectors(a));
	auto_recover_attach(a);
}


/*
 * Where a resync stands after job j: a completed resync, or a completed
 * repair (it rewrote every redundancy from the data: md sets recovery_cp
 * to MaxSector after either), leaves none needed; a resync stopped part-way
 * leaves its position. A resync stopped on request is held (not resumed by
 * auto_recover.c) until another job ends.
 */
static void resync_end(struct sync_job *j, bool complete)
{
	uint32_t how = 0;

	if (complete && (j->kind == URAID_SYNC_RESYNC ||
			 (j->kind == URAID_SYNC_REPAIR && !j->partial)))
		how |= MD_RESYNC_WHOLE;
	else if (j->kind == URAID_SYNC_RESYNC)
		how |= MD_RESYNC_AT_POS;
	if (j->kind == URAID_SYNC_RESYNC && !complete && j->result == -ECANCELED)
		how |= MD_RESYNC_HELD;
	md_resync_end(j->a, how, j->pos);
}

/*
 * The outcome into sync_last and, for a resync or a repair, into the
 * superblocks; on the metadata worker (job_finish hands it over). j may be
 * freed (sync_reap) once finished is set.
 */
static int job_end(struct meta_call *c)
{
	struct sync_job *j = (struct sync_job *)((char *)c - offsetof(struct sync_job, end_call));
	struct array *a = j->a;
	bool complete = j->result == 0 && j->pos >= j->end;

	/* the target's role first (md/member_state.c), then resync_offset */
	if (j->kind == URAID_SYNC_RECOVER || j->kind == URAID_SYNC_REPLACE) {
		struct md_rebuild rb = { .slot = j->target_slot, .target = j->target };
		enum md_rebuild_end how = complete ? MD_REBUILD_DONE
					: j->io_error && j->target_failed ? MD_REBUILD_TARGET_FAILED
					: MD_REBUILD_STOPPED;
		if (j->kind == URAID_SYNC_RECOVER)
			md_recovery_end(a, &rb, j->pos, how);
		else
			md_replace_end(a, &rb, j->pos, how);
	}
	resync_end(j, complete);

	/*
	 * A rebuild or a resync that failed is not retried at once (engine_tick
	 * would loop). Not when a member failed under the resync: the rebuild
	 * that follows must not wait, and the resync cannot run before it ends.
	 */
	if (!complete && j->result != -ECANCELED &&
	    (j->kind == URAID_SYNC_RECOVER || j->kind == URAID_SYNC_RESHAPE ||
	     (j->kind == URAID_SYNC_RESYNC && !atomic_load(&a->degraded))))
		atomic_store(&a->sync_retry_ns, engine_now_ns() + SYNC_RETRY_NS);
	pthread_mutex_lock(&a->sync_lock);
	struct uraid_sync_status *st = &a->sync_last;
	st->kind = j->kind;
	st->running = false;
	st->result = complete ? 0 : j->result ? j->result : -ECANCELED;
	st->done_bytes = atomic_load(&j->done_sectors) * 512;
	st->skipped_bytes = atomic_load(&j->skipped_sectors) * 512;
	st->total_bytes = j->end * 512;
	st->rate_bytes_s = 0;
	st->mismatch_sectors = atomic_load(&j->mismatch_sectors);
	st->array_positions = in_array_sectors(a, j->kind);
	pthread_mutex_unlock(&a->sync_lock);

	if (j->kind == URAID_SYNC_CHECK || j->kind == URAID_SYNC_REPAIR)
		ulog(array_log(a), URAID_LOG_NOTICE, "%s %s: %llu of %llu MiB %s, mismatch_cnt %llu",
			uraid_sync_kind_name(j->kind), complete ? "done" : st->result == -ECANCELED
			? "stopped" : "failed", (unsigned long long)(st->done_bytes >> 20),
			(unsigned long long)(st->total_bytes >> 20), positions_name(a, j->kind),
			(unsigned long long)st->mismatch_sectors);
	else
		ulog(array_log(a), URAID_LOG_NOTICE, "%s %s: %llu of %llu MiB %s", uraid_sync_kind_name(j->kind),
			complete ? "done" : st->result == -ECANCELED ? "stopped" : "failed",
			(unsigned long long)(st->done_bytes >> 20),
			(unsigned long long)(st->total_bytes >> 20), positions_name(a, j->kind));
	if (j->lv->job_fini)
		j->lv->job_fini(j);
	atomic_store(&j->finished, true);
	md_notify_change(a);    /* j is not touched after finished */
	return 0;
}

/* ---- the lanes: units handed out in order, committed in order ---- */

static struct sync_unit *unit_at(struct sync_job *j, uint64_t pos)
{
	return &j->win[(pos / j->unit) % SYNC_WINDOW];
}

static void lane_run(struct sync_lane *l);

static void lane_timer_done(struct io_op *op, int res)
{
	struct sync_lane *l = (struct sync_lane *)((char *)op - offsetof(struct sync_lane, timer_op));
	(void)res;
	lane_run(l);
}

static void lane_msg(struct reactor *r, struct reactor_msg *m)
{
	struct sync_lane *l = (struct sync_lane *)((char *)m - offsetof(struct sync_lane, msg));
	(void)r;
	lane_run(l);
}

/* Sleep on the lane's reactor (a timeout op), then go on; at most
 * SYNC_PAUSE_MAX_NS at a time, so that a stop is not kept waiting. */
static void lane_pause(struct sync_lane *l, uint64_t ns)
{
	if (ns > SYNC_PAUSE_MAX_NS)
		ns = SYNC_PAUSE_MAX_NS;
	l->timer_ts.tv_sec = (long long)(ns / 1000000000u);
	l->timer_ts.tv_nsec = (long long)(ns % 1000000000u);
	l->timer_op.cb = lane_timer_done;
	reactor_timeout(l->r, &l->timer_op, &l->timer_ts);
}

/*
 * Is a checkpoint due (the rebuilt or resynced part recorded every
 * SYNC_CHECKPOINT_NS)? Then j->checkpoint_at is the position to record and
 * the caller hands checkpoint_write to the metadata worker once the job's
 * lock is let go: superblock writes hold up neither the other lanes nor the
 * reactor. One at a time. Job's lock held.
 */
static bool checkpoint_due(struct sync_job *j, uint64_t now)
{
	if ((j->kind != URAID_SYNC_RESYNC && j->kind != URAID_SYNC_RECOVER &&
	     j->kind != URAID_SYNC_REPLACE) || j->checkpointing ||
	    now - j->last_checkpoint_ns < SYNC_CHECKPOINT_NS)
		return false;
	j->last_checkpoint_ns = now;
	j->checkpointing = true;
	j->checkpoint_at = j->pos;
	return true;
}

/*
 * On the metadata worker. The job does not end before it is over: the lane
 * that handed it over still counted as busy then, so job_end is handed over
 * after it, and the worker runs what it is given in order.
 */
static int checkpoint_write(struct meta_call *c)
{
	struct sync_job *j = (struct sync_job *)((char *)c - offsetof(struct sync_job, checkpoint));
	struct array *a = j->a;

	if (j->kind == URAID_SYNC_RESYNC) {
		/* on disk now if the array is not active there (an idle array's
		   progress survives a kill), else with the next clean marking */
		md_resync_checkpoint(a, j->checkpoint_at);
	} else {
		/* the rebuilt part survives a crash: recovery_offset now (md_do_sync);
		   a replacement's too (a crash that leaves the array dirty restarts
		   its copy anyway: the resync rewrites redundancy) */
		md_rebuild_checkpoint(a, j->target, j->checkpoint_at);
	}
	pthread_mutex_lock(&j->lock);
	j->checkpointing = false;
	pthread_mutex_unlock(&j->lock);
	return 0;
}

/*
 * Before a unit is handed out: how long to wait so that the rate of the
 * current window stays under the limit that applies (min while foreground
 * I/O is in flight, max when the array is idle). Job's lock held.
 */
static uint64_t throttle_ns(struct sync_job *j, uint64_t now)
{
	struct array *a = j->a;
	/*
	 * Busy: client I/O in flight at a unit boundary or begun since the
	 * last one, or either within the last SYNC_BUSY_HOLD_NS (a look at one
	 * instant misses a steady load whose requests spend most of their time
	 * outside the engine, as NBD's do). Turning busy starts a new window,
	 * so that what ran at the maximum is not paid back by one long pause
	 * at the minimum.
	 */
	uint64_t started = array_foreground_started(a);
	bool busy = array_foreground_in_flight(a) != 0 || started != j->fg_started;
	j->fg_started = started;
	if (busy)
		j->busy_until_ns = now + SYNC_BUSY_HOLD_NS;
	else
		busy = now < j->busy_until_ns;
	if (busy && !j->was_busy) {
		j->window_ns = now;
		j->window_bytes = 0;
	}
	j->was_busy = busy;
	uint64_t kib = busy ? speed(&a->sync_min_kib, SYNC_MIN_KIB_DEFAULT)
			    : speed(&a->sync_max_kib, SYNC_MAX_KIB_DEFAULT);
	/*
	 * The minimum is a floor: paced at exactly it, the rate measured over
	 * any stretch lands below it about half the time (units end a whole
	 * unit per lane at once). So it is aimed at SYNC_MIN_MARGIN above,
	 * as long as that stays under the maximum.
	 */
	if (busy) {
		uint64_t max = speed(&a->sync_max_kib, SYNC_MAX_KIB_DEFAULT);
		uint64_t aim = kib + kib / SYNC_MIN_MARGIN;
		kib = aim < max ? aim : (max > kib ? max : kib);
	}
	uint64_t elapsed = now - j->window_ns;

	if (elapsed >= SYNC_WINDOW_NS) {
		atomic_store(&j->rate_bps, elapsed ? j->window_bytes * 1000000000u / elapsed : 0);
		/* what went over the limit carries into the next window (units
		   are large against a low limit: a whole one per window would
		   run over it), what fell short does not */
		uint64_t allowed = elapsed > 10ull * 1000000000u ? UINT64_MAX
				   : kib * 1024 * (elapsed / 1000) / 1000000;
		j->window_bytes = j->window_bytes > allowed ? j->window_bytes - allowed : 0;
		j->window_ns = now;
		elapsed = 0;
	}
	uint64_t allowed_ns = j->window_bytes * 1000000000u / (kib * 1024);
	return allowed_ns > elapsed ? allowed_ns - elapsed : 0;
}

/*
 * The job's position moves over the units that are over, in order: a unit
 * that ends before one below it waits (its row stays locked) until that one
 * is over too. Job's lock held.
 */
static void commit_units(struct sync_job *j)
{
	while (j->pos < j->next) {
		struct sync_unit *u = unit_at(j, j->pos);
		if (!u->done || u->res)
			break;
		if (u->to_level && j->lv->unit_release)
			j->lv->unit_release(j, u, true);
		j->pos += u->n;
		atomic_fetch_add(&j->done_sectors, u->n);
		if (u->skipped)
			atomic_fetch_add(&j->skipped_sectors, u->n);
	}
}

/*
 * A resync of an array with a write-intent bitmap visits only the units
 * whose bitmap chunks were written while the array was active (md's
 * sync_request skips chunks without NEEDED). Is the unit at pos (n
 * sectors) one to pass over?
 */
static bool unit_clean(struct sync_job *j, uint64_t pos, uint64_t n)
{
	struct array *a = j->a;
	uint64_t lo = pos, hi = pos + n;

	if (j->kind != URAID_SYNC_RESYNC || !a->wib)
		return false;
	if (j->lv->bitmap_range)
		j->lv->bitmap_range(a, pos, n, &lo, &hi);
	return !wib_needs_resync(a, lo, hi);
}

/* Clean units while no unit is in progress below them: passed over at once
 * (skipped units count as done). Job's lock held. */
static void skip_clean_units(struct sync_job *j)
{
	while (j->pos == j->next && j->next < j->end) {
		uint64_t n = j->pos + j->unit > j->end ? j->end - j->pos : j->unit;
		if (!unit_clean(j, j->pos, n))
			return;
		j->pos += n;
		j->next = j->pos;
		atomic_fetch_add(&j->done_sectors, n);
		atomic_fetch_add(&j->skipped_sectors, n);
	}
}

/*
 * The member a rebuild or a replace fills left that role (it failed, or a
 * replacement became its slot's member being rebuilt: md/member_state.c
 * changes the slot, and a job of the new kind goes on from there).
 */
static bool target_gone(const struct sync_job *j)
{
	const struct array_slot *sl;

	if (j->kind != URAID_SYNC_RECOVER && j->kind != URAID_SYNC_REPLACE)
		return false;
	sl = &j->a->slot[j->target_slot];
	return j->kind == URAID_SYNC_REPLACE ? atomic_load(&sl->repl) != j->target
					      : atomic_load(&sl->m) != j->target;
}

/* No more units are handed out: a stop, an error, or the end. Job's lock held. */
static bool job_stopping(struct sync_job *j)
{
	if (!atomic_load(&j->cancel) && target_gone(j))
		atomic_store(&j->cancel, true);
	if (atomic_load(&j->cancel) && !j->result)
		j->result = -ECANCELED;
	return j->result || j->next >= j->end;
}

/*
 * The last lane has stopped: units handed out but not committed (above an
 * error or a stop) are released, and the job ends. No lane runs any more,
 * so the job's lock is not needed.
 */
static void job_finish(struct sync_job *j)
{
	bool reported = false;

	for (uint64_t p = j->pos; p < j->next;) {
		struct sync_unit *u = unit_at(j, p);
		if (u->done && u->res && !reported) {
			/* the lowest unit that failed: where the job's position stays;
			   a unit that met a member failed meanwhile (uraid fail, or a
			   write error elsewhere) ends with -EIO, which says less */
			bool lost = atomic_load(&j->a->degraded) > j->degraded_at_start;
			ulog(array_log(j->a), URAID_LOG_ERR, "%s stopped at %s sector %llu: %s",
				uraid_sync_kind_name(j->kind),
				in_array_sectors(j->a, j->kind) ? "array" : "member",
				(unsigned long long)u->pos,
				lost ? "a member failed, the array is degraded" : strerror(-u->res));
			reported = true;
		}
		if (u->to_level && j->lv->unit_release)
			j->lv->unit_release(j, u, false);
		p += u->n;
	}
	/* the superblocks' part, and sync_last, on the worker (job_end) */
	meta_call_submit(j->a->e, j->a, &j->end_call, NULL, job_end, NULL);
}

/* Lanes that stopped for want of room in the window go on. Job's lock held. */
static void wake_idle_lanes(struct sync_job *j, const struct sync_lane *self)
{
	if (job_stopping(j))
		return;
	for (unsigned i = 0; i < j->nlanes; i++) {
		struct sync_lane *l = &j->lane[i];
		if (l == self || l->busy)
			continue;
		l->busy = true;
		j->lanes_busy++;
		reactor_post(l->r, &l->msg);
	}
}

/* The lane's next unit, a pause (throttle), or its stop; on its reactor. */
static void lane_run(struct sync_lane *l)
{
	struct sync_job *j = l->j;
	struct sync_unit *u;

	pthread_mutex_lock(&j->lock);
	for (;;) {
		skip_clean_units(j);
		if (job_stopping(j) || j->next - j->pos >= (uint64_t)SYNC_WINDOW * j->unit) {
			/* stopped; or the window is full, and a commit wakes it */
			l->busy = false;
			bool last = --j->lanes_busy == 0;
			pthread_mutex_unlock(&j->lock);
			if (last)
				job_finish(j);
			return;
		}
		u = unit_at(j, j->next);
		memset(u, 0, sizeof(*u));
		u->pos = j->next;
		u->n = j->next + j->unit > j->end ? (uint32_t)(j->end - j->next) : j->unit;
		u->slot = (unsigned)(u - j->win);
		u->lane = l->idx;
		if (!unit_clean(j, u->pos, u->n))
			break;
		/* clean, above a unit in progress: over already, committed in turn */
		u->done = u->skipped = true;
		j->next += u->n;
	}
	uint64_t wait = throttle_ns(j, engine_now_ns());
	/* a freeze (core/freeze.h) holds new units; those under way end */
	if (!wait && array_frozen(j->a))
		wait = SYNC_FROZEN_LOOK_NS;
	if (wait) {
		pthread_mutex_unlock(&j->lock);
		lane_pause(l, wait);
		return;
	}
	u->to_level = true;
	j->next += u->n;
	/* counted as it is handed out: the other lanes see it at once (counted
	   as it ended, every lane went at the same moment, one unit each) */
	j->window_bytes += (uint64_t)u->n * 512;
	pthread_mutex_unlock(&j->lock);
	j->lv->unit(j, u);
}

/* On the unit's reactor: the array was marked active (0), or could not be. */
static void gate_resumed(struct array_gate_wait *w, int rc)
{
	struct sync_gate *g = (struct sync_gate *)((char *)w - offsetof(struct sync_gate, wait));

	g->held = rc == 0;
	g->go(g, rc);
}

void sync_gate_enter(struct sync_job *j, unsigned ridx, struct sync_gate *g,
		     void (*go)(struct sync_gate *g, int rc))
{
	g->j = j;
	g->go = go;
	g->held = false;
	/* not for a resync, whose rewrites lie above the resync_offset on disk:
	   a crash redoes them (md_do_sync's writes do not mark the array dirty
	   either) */
	if (j->kind == URAID_SYNC_RESYNC) {
		go(g, 0);
		return;
	}
	if (array_gate_enter(j->a, ridx, &g->wait, gate_resumed)) {
		g->held = true;
		go(g, 0);
	}
}

void sync_gate_leave(struct sync_job *j, unsigned ridx, bool *held)
{
	if (*held)
		array_gate_leave(j->a, ridx);
	*held = false;
}

void sync_unit_done(struct sync_job *j, struct sync_unit *u, int res)
{
	struct sync_lane *l = &j->lane[u->lane];

	/* u's slot may be handed out again once the lock is let go */
	bool skipped = u->skipped;

	pthread_mutex_lock(&j->lock);
	u->done = true;
	u->res = res;
	if (res) {
		/* an error outranks a stop; a failed write to the new member, in
		   any unit, fails it (md_recovery_end, md_replace_end) */
		if (!j->result || j->result == -ECANCELED)
			j->result = res;
		if (!j->io_error)
			j->io_error = res;
		j->target_failed |= u->target_failed;
	}
	if (skipped) {
		/* what the level passed over cost no I/O */
		uint64_t b = (uint64_t)u->n * 512;
		j->window_bytes -= b < j->window_bytes ? b : j->window_bytes;
	}
	commit_units(j);
	bool due = checkpoint_due(j, engine_now_ns());
	wake_idle_lanes(j, l);
	pthread_mutex_unlock(&j->lock);
	if (due)
		meta_call_submit(j->a->e, j->a, &j->checkpoint, NULL, checkpoint_write, NULL);
	/*
	 * A unit the level passed over ends inside the call that began it, so
	 * going straight on nests one call deeper per unit: after a run of
	 * them the next one starts from the reactor's loop instead.
	 */
	l->nested = skipped ? l->nested + 1 : 0;
	if (l->nested >= SYNC_MAX_NESTED) {
		l->nested = 0;
		reactor_post(l->r, &l->msg);
	} else {
		lane_run(l);
	}
}

/* The lanes the level asks for, lane 0 on the job's reactor, the others on the next ones. */
static void lanes_init(struct sync_job *j)
{
	struct uraid_engine *e = j->a->e;
	unsigned n = j->lv->lanes ? j->lv->lanes(j) : 1;

	pthread_mutex_init(&j->lock, NULL);
	j->nlanes = n < 1 ? 1 : n > SYNC_MAX_LANES ? SYNC_MAX_LANES : n;
	j->lanes_busy = j->nlanes;
	j->next = j->pos;
	for (unsigned i = 0; i < j->nlanes; i++) {
		struct sync_lane *l = &j->lane[i];
		l->j = j;
		l->idx = i;
		l->ridx = (j->ridx + i) % e->nreactors;
		l->r = engine_reactor(e, l->ridx);
		l->busy = true;
		l->msg.fn = lane_msg;
	}
}

static void job_free(struct sync_job *j)
{
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/* The job that ended is freed by whoever looks next (status, start, stop). */
void sync_reap(struct array *a)
{
	/* under sync_lock: status and cancel look at the job under it */
	pthread_mutex_lock(&a->sync_lock);
	struct sync_job *j = atomic_load(&a->sync);
	if (j && atomic_load(&j->finished)) {
		atomic_store(&a->sync, NULL);
		job_free(j);
	}
	pthread_mutex_unlock(&a->sync_lock);
}

int sync_refuse_if_running(struct array *a, char *err, size_t errlen)
{
	sync_reap(a);
	pthread_mutex_lock(&a->sync_lock);
	struct sync_job *running = atomic_load(&a->sync);
	enum uraid_sync_kind busy = running ? running->kind : URAID_SYNC_NONE;
	pthread_mutex_unlock(&a->sync_lock);
	if (running)
		return uraid_errf(err, errlen, -EBUSY, "a %s is running; stop it first",
				  uraid_sync_kind_name(busy));
	return 0;
}

static int start_one(struct array *a, enum uraid_sync_kind kind, uint64_t from, uint64_t to,
		     char *err, size_t errlen);

/*
 * One start at a time: auto_recover.c (a rebuild or a replacement that waits)
 * and the control socket (check, repair, replace) may both try at once, and
 * each must see the other's job.
 */
/* A job over positions [from, to) (to 0: to the end), from rounded down to a unit. */
int sync_start(struct array *a, enum uraid_sync_kind kind, uint64_t from, uint64_t to,
		 char *err, size_t errlen)
{
	pthread_mutex_lock(&a->sync_start_lock);
	int rc = start_one(a, kind, from, to, err, errlen);
	pthread_mutex_unlock(&a->sync_start_lock);
	return rc;
}

static int start_one(struct array *a, enum uraid_sync_kind kind, uint64_t from, uint64_t to,
		     char *err, size_t errlen)
{
	const struct sync_level *lv = hooks_of(a, kind);

	if (a->reshape && kind != URAID_SYNC_RESHAPE)
		return uraid_errf(err, errlen, -EBUSY, "a reshape is in progress: no %s until it "
				  "ends", uraid_sync_kind_name(kind));
	if (atomic_load(&a->starts_held) && kind != URAID_SYNC_RESHAPE)
		return uraid_errf(err, errlen, -EBUSY, "a grow is changing the level: no %s until "
				  "its restripe starts", uraid_sync_kind_name(kind));
	if (!lv)
		return uraid_errf(err, errlen, -EINVAL, "%s has no redundancy to %s",
				  uraid_level_name(a->geom.level), uraid_sync_kind_name(kind));
	if (!(a->e->flags & URAID_ENGINE_THREADS))
		return uraid_errf(err, errlen, -EINVAL, "background work needs an engine that "
				  "runs its own threads");
	if ((kind != URAID_SYNC_CHECK) && (a->flags & URAID_ASSEMBLE_READONLY))
		return uraid_errf(err, errlen, -EROFS, "the array is read-only: only a check "
				  "can run");
	int rc = lv->can_run(a, kind, err, errlen);
	if (rc)
		return rc;
	if ((rc = sync_refuse_if_running(a, err, errlen)))
		return rc;
	struct sync_job *j = calloc(1, sizeof(*j));
	if (!j)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	j->a = a;
	j->lv = lv;
	j->kind = kind;
	j->ridx = a->e->nreactors - 1;    /* the last reactor: the first takes accepts */
	j->r = engine_reactor(a->e, j->ridx);
	j->unit = lv->unit_sectors(a);
	j->end = sync_span(a, kind);
	j->pos = from - from % j->unit;
	if (j->pos > j->end)
		j->pos = j->end;
	/* a check or repair of a range (uraid_array_sync_start_range) */
	j->partial = to && (j->pos > 0 || to < j->end);
	if (to && to < j->end)
		j->end = to;
	/* the members' side of the work, before it starts (md/member_state.c) */
	struct md_rebuild rb = { .slot = -1 };
	rc = kind == URAID_SYNC_RECOVER ? md_recovery_begin(a, j->unit, &rb)
	   : kind == URAID_SYNC_REPLACE ? md_replace_begin(a, j->unit, j->end, &rb) : 0;
	if (kind == URAID_SYNC_RESYNC || kind == URAID_SYNC_REPAIR)
		md_replace_restart(a);
	if (!rc && (kind == URAID_SYNC_RECOVER || kind == URAID_SYNC_REPLACE)) {
		j->target_slot = rb.slot;
		j->target = rb.target;
		j->bitmap_guided = rb.bitmap_guided;
		j->pos = rb.from;
	}
	if (rc) {
		free(j);
		return uraid_errf(err, errlen, rc, kind == URAID_SYNC_RECOVER
				  ? "nothing to rebuild: no missing slot, or no spare large enough"
				  : "nothing to replace");
	}
	atomic_store(&j->done_sectors, j->pos);
	j->degraded_at_start = atomic_load(&a->degraded);
	j->window_ns = j->t_start_ns = j->last_checkpoint_ns = engine_now_ns();
	j->fg_started = array_foreground_started(a);
	lanes_init(j);
	if (lv->job_init && (rc = lv->job_init(j)) != 0) {
		job_free(j);
		return uraid_errf(err, errlen, rc, "cannot set up the %s: %s", uraid_sync_kind_name(kind),
				  strerror(-rc));
	}
	pthread_mutex_lock(&a->sync_lock);
	if (a->sync_last.job) {
		memmove(&a->sync_ended[1], &a->sync_ended[0],
			(SYNC_ENDED_KEPT - 1) * sizeof(a->sync_ended[0]));
		a->sync_ended[0] = a->sync_last;
	}
	memset(&a->sync_last, 0, sizeof(a->sync_last));
	a->sync_last.kind = kind;
	a->sync_last.job = ++a->sync_jobs;
	a->sync_last.running = true;
	pthread_mutex_unlock(&a->sync_lock);
	atomic_store(&a->sync, j);
	md_notify_change(a);
	ulog(array_log(a), URAID_LOG_INFO, "%s started at %llu of %llu MiB %s", uraid_sync_kind_name(kind),
		(unsigned long long)(j->pos >> 11), (unsigned long long)(j->end >> 11),
		positions_name(a, kind));
	/* j may be over (and freed by reap) once its last lane has run */
	unsigned nlanes = j->nlanes;
	for (unsigned i = 0; i < nlanes; i++)
		reactor_post(j->lane[i].r, &j->lane[i].msg);
	return 0;
}

/* Where a resync starts: the checkpoint of one that is needed, else 0. */
uint64_t sync_resync_from(struct array *a)
{
	return md_resync_from(a, sync_span(a, URAID_SYNC_RESYNC));
}

int uraid_array_sync_start(struct uraid_array *ua, enum uraid_sync_kind kind, char *err,
			   size_t errlen)
{
	struct array *a = A(ua);

	if (kind != URAID_SYNC_RESYNC && kind != URAID_SYNC_CHECK && kind != URAID_SYNC_REPAIR &&
	    kind != URAID_SYNC_REPLACE)
		return uraid_errf(err, errlen, -EINVAL, "unknown kind of background work");
	return sync_start(a, kind, kind == URAID_SYNC_RESYNC ? sync_resync_from(a) : 0, 0, err, errlen);
}

/*
 * The positions of array bytes [off, off + len): RAID 4/5/6 the member
 * sectors of the rows that hold them, RAID 1 the same sectors, RAID 10 (a
 * check walks array sectors) the same too.
 */
static void range_positions(const struct array *a, uint64_t off, uint64_t len, uint64_t *from,
			    uint64_t *to)
{
	const struct uraid_geom *g = &a->geom;
	uint64_t lo = off / 512, hi = (off + len + 511) / 512;

	if (a->level->info.parity_members) {
		uint64_t row = (uint64_t)g->data_disks * g->chunk_sectors;
		lo = lo / row * g->chunk_sectors;
		hi = (hi + row - 1) / row * g->chunk_sectors;
	}
	*from = lo;
	*to = hi;
}

int uraid_array_sync_start_range(struct uraid_array *ua, enum uraid_sync_kind kind,
				 uint64_t offset, uint64_t length, char *err, size_t errlen)
{
	struct array *a = A(ua);
	uint64_t size = a->geom.array_sectors * 512, from, to;

	if (kind != URAID_SYNC_CHECK && kind != URAID_SYNC_REPAIR)
		return uraid_errf(err, errlen, -EINVAL, "only a check or a repair runs over a range");
	if (offset >= size)
		return uraid_errf(err, errlen, -EINVAL, "the range starts at byte %llu, at or past "
				  "the array's end (%llu bytes)", (unsigned long long)offset,
				  (unsigned long long)size);
	if (!length || length > size - offset)
		length = size - offset;
	range_positions(a, offset, length, &from, &to);
	return sync_start(a, kind, from, to, err, errlen);
}

int uraid_array_sync_cancel(struct uraid_array *ua)
{
	struct array *a = A(ua);
	int rc = -ENOENT;

	pthread_mutex_lock(&a->sync_lock);
	struct sync_job *j = atomic_load(&a->sync);
	if (j && !atomic_load(&j->finished)) {
		atomic_store(&j->cancel, true);
		rc = 0;
	}
	pthread_mutex_unlock(&a->sync_lock);
	return rc;
}

bool sync_units_in_progress(struct array *a)
{
	bool busy = false;

	/* under sync_lock: the job is not freed meanwhile (sync_reap) */
	pthread_mutex_lock(&a->sync_lock);
	struct sync_job *j = atomic_load(&a->sync);
	if (j && !atomic_load(&j->finished)) {
		pthread_mutex_lock(&j->lock);
		busy = j->next != j->pos;
		pthread_mutex_unlock(&j->lock);
	}
	pthread_mutex_unlock(&a->sync_lock);
	return busy;
}

void sync_stop_wait(struct array *a)
{
	struct sync_job *j = atomic_load(&a->sync);

	if (!j)
		return;
	atomic_store(&j->cancel, true);
	while (!atomic_load(&j->finished)) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	sync_reap(a);
}

int uraid_array_sync_status(struct uraid_array *ua, struct uraid_sync_status *st)
{
	struct array *a = A(ua);
	uint64_t reshape_at = 0;

	/* the reshape's state goes at its end under meta_lock (jobs/reshape.c) */
	pthread_mutex_lock(&a->meta_lock);
	if (a->reshape)
		reshape_at = a->reshape->position * 512;
	pthread_mutex_unlock(&a->meta_lock);
	pthread_mutex_lock(&a->sync_lock);
	*st = a->sync_last;
	st->reshape_position_bytes = reshape_at;
	struct sync_job *j = atomic_load(&a->sync);
	if (j && !atomic_load(&j->finished)) {
		st->running = true;
		st->kind = j->kind;
		st->done_bytes = atomic_load(&j->done_sectors) * 512;
		st->skipped_bytes = atomic_load(&j->skipped_sectors) * 512;
		st->total_bytes = j->end * 512;
		st->rate_bytes_s = atomic_load(&j->rate_bps);
		st->mismatch_sectors = atomic_load(&j->mismatch_sectors);
		st->array_positions = in_array_sectors(a, j->kind);
	}
	pthread_mutex_unlock(&a->sync_lock);
	st->min_kib_s = speed(&a->sync_min_kib, SYNC_MIN_KIB_DEFAULT);
	st->max_kib_s = speed(&a->sync_max_kib, SYNC_MAX_KIB_DEFAULT);
	return 0;
}

int uraid_array_sync_job(struct uraid_array *ua, uint64_t job, struct uraid_sync_status *st)
{
	struct array *a = A(ua);
	int rc = -ENOENT;

	uraid_array_sync_status(ua, st);
	if (job && st->job == job)
		return 0;
	pthread_mutex_lock(&a->sync_lock);
	for (unsigned i = 0; i < SYNC_ENDED_KEPT && rc; i++) {
		if (job && a->sync_ended[i].job == job) {
			*st = a->sync_ended[i];
			rc = 0;
		}
	}
	pthread_mutex_unlock(&a->sync_lock);
	return rc;
}

int uraid_array_sync_speed(struct uraid_array *ua, uint32_t min_kib_s, uint32_t max_kib_s)
{
	struct array *a = A(ua);
	int rc = 0;

	/* the limit not given stays as it is (or its default): the pair must hold */
	pthread_mutex_lock(&a->sync_lock);
	uint32_t lo = min_kib_s ? min_kib_s : speed(&a->sync_min_kib, SYNC_MIN_KIB_DEFAULT);
	uint32_t hi = max_kib_s ? max_kib_s : speed(&a->sync_max_kib, SYNC_MAX_KIB_DEFAULT);
	if (lo > hi) {
		rc = -EINVAL;
	} else {
		atomic_store(&a->sync_min_kib, lo);
		atomic_store(&a->sync_max_kib, hi);
	}
	pthread_mutex_unlock(&a->sync_lock);
	return rc;
}
