// SPDX-License-Identifier: MIT
/*
 * A bench worker: generates its I/O stream (access line, direction, target,
 * offset; or the next action of a trace) into preallocated slots, keeps
 * iodepth of them in flight (or follows the rate's or the trace's schedule),
 * and records each completion in its own statistics and time series. With
 * --verify it stamps writes, checks reads, and reads back what it wrote once
 * the run is over. Nothing here allocates or takes a lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "bench/trace.h"
#include "bench/verify.h"
#include "bench/worker.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Fill the next I/O of the access specification into s. */
static void gen_next(struct bench_worker *w, struct bench_slot *s)
{
	struct bench_choice c;

	bench_gen_choose(&w->gen, &c);
	s->line = c.line;
	s->len = c.len;
	s->write = c.write;
	s->flush = 0;

	unsigned ti = w->next_target;
	w->next_target = ti + 1 == w->ntargets ? 0 : ti + 1;
	s->target = w->targets[ti];
	s->tslot = (uint16_t)ti;

	uint64_t start = w->rstart[ti], len = w->rlen[ti];
	if (c.random) {
		s->offset = bench_gen_random_offset(&w->gen, &c, start, len);
	} else {
		uint64_t off = w->seq_next[ti];
		if (off + s->len > start + len)
			off = start;    /* wrap to the start of the range */
		s->offset = off;
	}
	w->seq_next[ti] = s->offset + s->len;
}

/* Replay: the next trace action into s. */
static void gen_trace(struct bench_worker *w, struct bench_slot *s,
		      const struct bench_trace_op *op)
{
	const struct bench_run *r = w->run;
	unsigned t = r->ntargets == 1 ? 0 : op->file;

	s->line = 0;
	s->len = op->len;
	s->write = op->op == BENCH_OP_WRITE;
	s->flush = op->op == BENCH_OP_SYNC;
	s->target = (uint16_t)t;
	s->tslot = 0;
	s->offset = r->range_start[t] + op->offset;
}

/* Does s overlap an I/O in flight? (--verify keeps a worker's I/Os apart.) */
static bool overlaps(const struct bench_worker *w, const struct bench_slot *s)
{
	unsigned qd = w->run->wl->iodepth;

	for (unsigned i = 0; i < qd; i++) {
		const struct bench_slot *o = &w->slots[i];
		if (o->busy && o->target == s->target && o->offset < s->offset + s->len &&
		    s->offset < o->offset + o->len)
			return true;
	}
	return false;
}

static void fail_msg(struct bench_worker *w, int rc, const char *fmt, const char *a,
		     const char *b)
{
	if (w->error)
		return;
	w->error = rc;
	snprintf(w->errmsg, sizeof(w->errmsg), fmt, a, b);
	atomic_store(&w->run->stop, true);
}

static const char *target_name(const struct bench_worker *w, const struct bench_slot *s)
{
	const struct bench_targets *tg = w->run->tg;
	return tg->kind == BENCH_RAW ? tg->paths[s->target] : "the array";
}

static void fail(struct bench_worker *w, int rc, const struct bench_slot *s)
{
	char what[96];

	if (s->flush)
		snprintf(what, sizeof(what), "sync");
	else
		snprintf(what, sizeof(what), "%s of %u bytes at offset %llu",
			 s->write ? "write" : "read", s->len, (unsigned long long)s->offset);
	char tail[160];
	snprintf(tail, sizeof(tail), "%s failed: %s", target_name(w, s), strerror(-rc));
	fail_msg(w, rc, "%s of %s", what, tail);
}

/* --verify work at completion: note what was written, check what was read. */
static int verify_done(struct bench_worker *w, struct bench_slot *s)
{
	struct bench_run *r = w->run;
	uint32_t unit = r->vunit;
	uint32_t *exp = r->vexp[s->target] + (s->offset - r->range_start[s->target]) / unit;

	if (s->write) {
		for (uint32_t i = 0; i < s->len / unit; i++)
			exp[i] = (uint32_t)s->seq;
		return 0;
	}
	char msg[240];
	int rc = bench_verify_check(s->rbuf, s->len, unit, s->offset, r->wl->seed, exp,
				    r->vstrict, &w->stats->verified_blocks, msg, sizeof(msg));
	if (rc)
		fail_msg(w, rc, "verify failed on %s at %s", target_name(w, s), msg);
	return rc;
}

/*
 * The part of a busy stretch [from, to] inside the measured window: the busy
 * time divides the bytes moved in the window, so time in the ramp (or after
 * the end) must not count either.
 */
static uint64_t busy_in_window(const struct bench_run *r, uint64_t from, uint64_t to)
{
	if (from < r->t_ramp_end)
		from = r->t_ramp_end;
	if (to > r->t_end)
		to = r->t_end;
	return to > from ? to - from : 0;
}

void bench_complete(struct bench_worker *w, struct bench_slot *s, int res)
{
	bench_complete_at(w, s, res, bench_now_ns());
}

void bench_complete_at(struct bench_worker *w, struct bench_slot *s, int res, uint64_t now)
{
	const struct bench_run *r = w->run;

	w->in_flight--;
	s->busy = 0;
	s->next_free = w->free_head;
	w->free_head = (int)(s - w->slots);
	if (!w->in_flight && !s->readback)
		w->stats->busy_ns += busy_in_window(r, w->busy_since, now);
	if (res < 0) {
		fail(w, res, s);
		return;
	}
	if (r->vunit && !s->flush && verify_done(w, s))
		return;
	if (s->readback || s->flush || now < r->t_ramp_end || now > r->t_end)
		return;
	uint64_t lat = now > s->start_ns ? now - s->start_ns : 0;
	struct bench_result *st = w->stats;
	struct bench_dir *d = &st->dir[s->write];
	d->ios++;
	d->bytes += s->len;
	hist_record(&d->lat, lat);
	if (w->lat_log.cap)
		bench_lat_log_add(&w->lat_log, lat, (now - r->t_ramp_end) / 1000000u, s->len,
				  s->write);
	st->bs_ios[s->line]++;
	st->line_reads[s->line] += !s->write;
	uint64_t sec = (now - r->t_ramp_end) / 1000000000ull;
	if (sec < w->nseries) {
		struct bench_second *p = &w->series[sec];
		p->ios[s->write]++;
		p->bytes[s->write] += s->len;
		p->lat_sum_ns += lat;
	}
}

static int submit(struct bench_worker *w, struct bench_slot *s, uint64_t start)
{
	struct bench_run *r = w->run;

	s->start_ns = start;
	s->busy = 1;
	if (!w->in_flight++)
		w->busy_since = start;
	if (r->vunit && s->write) {
		if (!(uint32_t)++w->wseq)       /* 0 in the table means "not written" */
			++w->wseq;
		s->seq = w->wseq;
		bench_verify_stamp(s->wbuf, s->len, r->vunit, s->offset, s->seq, r->wl->seed);
	}
	int rc = r->be->submit(w, s);
	if (rc < 0)
		bench_complete(w, s, rc);
	return rc;
}

/* Return a slot taken from the free list without submitting it. */
static void unget_slot(struct bench_worker *w, struct bench_slot *s)
{
	s->next_free = w->free_head;
	w->free_head = (int)(s - w->slots);
}

/* Replay: submit the trace's actions that are due. */
static int fill_trace(struct bench_worker *w, uint64_t now, int64_t *timeout)
{
	struct bench_run *r = w->run;
	const struct bench_trace *t = r->wl->trace;
	bool timed = r->wl->flags & BENCH_REPLAY_TIMED;

	while (w->free_head >= 0 && w->trace_pos < t->nops) {
		const struct bench_trace_op *op = &t->ops[w->trace_pos];
		if (timed && r->t0 + op->t_ns > now) {
			*timeout = (int64_t)(r->t0 + op->t_ns - now);
			break;
		}
		struct bench_slot *s = &w->slots[w->free_head];
		w->free_head = s->next_free;
		w->trace_pos++;
		gen_trace(w, s, op);
		s->readback = 0;
		int rc = submit(w, s, now);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Submit as many I/Os as slots (and, with a rate, the schedule) allow. */
static int fill(struct bench_worker *w, uint64_t now)
{
	bool verify = w->run->vunit != 0;

	while (w->free_head >= 0) {
		uint64_t start = now;
		if (w->interval_ns && w->next_intended > now)
			break;
		if (w->issue_limit && w->issued >= w->issue_limit)
			break;
		struct bench_slot *s = &w->slots[w->free_head];
		w->free_head = s->next_free;
		gen_next(w, s);
		/* --verify: an I/O must not overlap one in flight (their order is undefined) */
		for (unsigned tries = 0; verify && overlaps(w, s); tries++) {
			if (tries == 8) {
				unget_slot(w, s);
				return 0;
			}
			gen_next(w, s);
		}
		if (w->interval_ns) {
			start = w->next_intended;
			w->next_intended += w->interval_ns;
		}
		s->readback = 0;
		w->issued += s->len;
		int rc = submit(w, s, start);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * --verify read-back: read every part of this worker's ranges in blocks of
 * up to max_bs (a multiple of the verify unit); false when all are issued.
 */
static int fill_readback(struct bench_worker *w, bool *more)
{
	const struct bench_run *r = w->run;
	uint32_t chunk = r->max_bs - r->max_bs % r->vunit;

	*more = true;
	while (w->free_head >= 0) {
		if (w->rb_tslot == w->ntargets) {
			*more = false;
			return 0;
		}
		unsigned ti = w->rb_tslot;
		uint64_t end = w->rstart[ti] + w->rlen[ti];
		if (w->rb_off + r->vunit > end) {
			w->rb_tslot++;
			if (w->rb_tslot < w->ntargets)
				w->rb_off = w->rstart[w->rb_tslot];
			continue;
		}
		struct bench_slot *s = &w->slots[w->free_head];
		w->free_head = s->next_free;
		s->target = w->targets[ti];
		s->tslot = (uint16_t)ti;
		s->offset = w->rb_off;
		s->len = (uint32_t)(end - w->rb_off < chunk ? (end - w->rb_off) / r->vunit * r->vunit
				    : chunk);
		s->write = 0;
		s->flush = 0;
		s->line = 0;
		s->readback = 1;
		w->rb_off += s->len;
		int rc = submit(w, s, bench_now_ns());
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int wait_error(struct bench_worker *w, int rc)
{
	if (!w->error) {
		w->error = rc;
		snprintf(w->errmsg, sizeof(w->errmsg), "worker %u: waiting for I/O: %s", w->index,
			 strerror(-rc));
	}
	atomic_store(&w->run->stop, true);
	return rc;
}

static void readback(struct bench_worker *w)
{
	struct bench_run *r = w->run;
	bool more = true;

	w->phase = BENCH_PHASE_READBACK;
	w->rb_tslot = 0;
	w->rb_off = w->rstart[0];
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		if (more && fill_readback(w, &more) < 0)
			break;
		if (!more && !w->in_flight)
			return;
		int rc = r->be->wait(w, -1);
		if (rc < 0) {
			wait_error(w, rc);
			break;
		}
	}
	while (w->in_flight)            /* stopped: drain */
		if (r->be->wait(w, -1) < 0)
			break;
}

void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	struct bench_run *r = w->run;
	bool replay = r->wl->trace != NULL;

	if (r->be->start) {
		int rc = r->be->start(w);
		if (rc < 0) {
			wait_error(w, rc);
			atomic_fetch_add(&r->main_done, 1);
			return NULL;
		}
	}
	w->next_intended = r->t0;
	if (w->interval_ns || replay)
		prctl(PR_SET_TIMERSLACK, 1000UL);   /* wake within 1 us of the schedule */
	/* all workers start together at t0 (a replay counts every action from there) */
	for (uint64_t now = bench_now_ns(); now < r->t0; now = bench_now_ns()) {
		struct timespec ts = { 0, (long)(r->t0 - now) };
		nanosleep(&ts, NULL);
	}
	for (;;) {
		uint64_t now = bench_now_ns();
		int64_t timeout = -1;
		bool stopping = now >= r->t_end || atomic_load_explicit(&r->stop,
									memory_order_relaxed);
		if (!stopping) {
			int rc = replay ? fill_trace(w, now, &timeout) : fill(w, now);
			if (rc < 0 || (replay && w->trace_pos == r->wl->trace->nops) ||
			    (w->issue_limit && w->issued >= w->issue_limit))
				stopping = true;
		}
		if (stopping && !w->in_flight)
			break;
		/* with a rate and a free slot, wake for the next intended start */
		if (!stopping && w->interval_ns && w->free_head >= 0)
			timeout = w->next_intended > now ? (int64_t)(w->next_intended - now) : 0;
		int rc = r->be->wait(w, timeout);
		if (rc < 0) {
			wait_error(w, rc);
			break;
		}
	}
	w->main_end_ns = bench_now_ns();
	atomic_fetch_add(&r->main_done, 1);
	if (r->vunit && !r->vstrict && w->wseq && !w->error &&
	    !atomic_load(&r->stop))
		readback(w);
	return NULL;
}
