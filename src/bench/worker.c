// SPDX-License-Identifier: MIT
/*
 * A bench worker: generates its I/O stream (block size, direction, target,
 * offset) into preallocated slots, keeps iodepth of them in flight (or
 * follows the rate's schedule), and records each completion in its own
 * statistics. Nothing here allocates or takes a lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "bench/worker.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill the next I/O of the stream into s. */
static void gen_next(struct bench_worker *w, struct bench_slot *s)
{
	const struct bench_run *r = w->run;
	const struct bench_workload *wl = r->wl;
	unsigned bi = 0;

	if (wl->nbs > 1) {
		uint32_t pick = (uint32_t)(rng_next(&w->rng) % r->bs_weight_total);
		while (bi + 1 < wl->nbs && pick >= wl->bs[bi].weight)
			pick -= wl->bs[bi++].weight;
	}
	s->bs_idx = (uint8_t)bi;
	s->len = wl->bs[bi].bytes;
	s->write = wl->read_pct >= 100 ? 0 : wl->read_pct == 0 ? 1
		   : rng_next(&w->rng) % 100 >= wl->read_pct;

	unsigned ti = w->next_target;
	w->next_target = ti + 1 == w->ntargets ? 0 : ti + 1;
	unsigned t = w->targets[ti];
	s->target = (uint16_t)t;

	uint64_t start = r->range_start[t], len = r->range_len[t];
	bool random = wl->random_pct >= 100 ? true : wl->random_pct == 0 ? false
		      : rng_next(&w->rng) % 100 < wl->random_pct;
	if (random) {
		uint64_t blocks = (len - s->len) / r->align + 1;
		s->offset = start + rng_next(&w->rng) % blocks * r->align;
	} else {
		uint64_t off = w->seq_next[ti];
		if (off + s->len > start + len)
			off = start;    /* wrap to the start of the range */
		s->offset = off;
	}
	w->seq_next[ti] = s->offset + s->len;
}

static void fail(struct bench_worker *w, int rc, const struct bench_slot *s)
{
	if (w->error)
		return;
	w->error = rc;
	const struct bench_targets *tg = w->run->tg;
	const char *name = tg->kind == BENCH_RAW ? tg->paths[s->target] : "the array";
	snprintf(w->errmsg, sizeof(w->errmsg), "%s of %u bytes at offset %llu of %s failed: %s",
		 s->write ? "write" : "read", s->len, (unsigned long long)s->offset, name,
		 strerror(-rc));
	atomic_store(&w->run->stop, true);
}

void bench_complete(struct bench_worker *w, struct bench_slot *s, int res)
{
	const struct bench_run *r = w->run;
	uint64_t now = bench_now_ns();

	w->in_flight--;
	s->next_free = w->free_head;
	w->free_head = (int)(s - w->slots);
	if (res < 0) {
		fail(w, res, s);
		return;
	}
	if (now < r->t_ramp_end || now > r->t_end)
		return;
	uint64_t lat = now > s->start_ns ? now - s->start_ns : 0;
	struct bench_result *st = w->stats;
	struct bench_dir *d = &st->dir[s->write];
	d->ios++;
	d->bytes += s->len;
	hist_record(&d->lat, lat);
	st->bs_ios[s->bs_idx]++;
}

/* Submit as many I/Os as slots (and, with a rate, the schedule) allow. */
static int fill(struct bench_worker *w, uint64_t now)
{
	while (w->free_head >= 0) {
		uint64_t start = now;
		if (w->interval_ns) {
			if (w->next_intended > now)
				break;
			start = w->next_intended;
			w->next_intended += w->interval_ns;
		}
		struct bench_slot *s = &w->slots[w->free_head];
		w->free_head = s->next_free;
		gen_next(w, s);
		s->start_ns = start;
		w->in_flight++;
		int rc = w->run->be->submit(w, s);
		if (rc < 0) {
			bench_complete(w, s, rc);
			return rc;
		}
	}
	return 0;
}

void *bench_worker_main(void *arg)
{
	struct bench_worker *w = arg;
	struct bench_run *r = w->run;

	w->next_intended = r->t0;
	if (w->interval_ns)
		prctl(PR_SET_TIMERSLACK, 1000UL);   /* wake within 1 us of the schedule */
	for (;;) {
		uint64_t now = bench_now_ns();
		bool stopping = now >= r->t_end || atomic_load_explicit(&r->stop,
									memory_order_relaxed);
		if (!stopping && fill(w, now) < 0)
			stopping = true;
		if (stopping && !w->in_flight)
			break;
		/* with a rate and a free slot, wake for the next intended start */
		int64_t timeout = -1;
		if (!stopping && w->interval_ns && w->free_head >= 0)
			timeout = w->next_intended > now ? (int64_t)(w->next_intended - now) : 0;
		int rc = r->be->wait(w, timeout);
		if (rc < 0) {
			if (!w->error) {
				w->error = rc;
				snprintf(w->errmsg, sizeof(w->errmsg),
					 "worker %u: waiting for I/O: %s", w->index, strerror(-rc));
			}
			atomic_store(&r->stop, true);
			break;
		}
	}
	return NULL;
}
