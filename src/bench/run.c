// SPDX-License-Identifier: MIT
/*
 * A bench run: check the request, refuse to write to targets the bench did
 * not create unless told to, set up workers (slots and aligned buffers
 * allocated here, before the clock starts), run them, and merge their
 * statistics with the CPU time of the measured window.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <uraid/geom.h>

#include "common/errmsg.h"
#include "bench/worker.h"

static int check_workload(const struct bench_workload *w, const struct bench_targets *t,
			  char *err, size_t errlen)
{
	if (!w->nbs || w->nbs > BENCH_MAX_SPLIT)
		return uraid_errf(err, errlen, -EINVAL, "between 1 and %d block sizes",
				  BENCH_MAX_SPLIT);
	for (unsigned i = 0; i < w->nbs; i++) {
		if (!w->bs[i].bytes || w->bs[i].bytes % 512 || w->bs[i].bytes > BENCH_MAX_BS)
			return uraid_errf(err, errlen, -EINVAL, "block size %u is not a multiple "
					  "of 512 between 512 and 16M", w->bs[i].bytes);
		if (!w->bs[i].weight && w->nbs > 1)
			return uraid_errf(err, errlen, -EINVAL, "a bssplit weight is 0");
	}
	if (w->read_pct > 100 || w->random_pct > 100)
		return uraid_errf(err, errlen, -EINVAL, "percentages are 0..100");
	if (w->align % 512)
		return uraid_errf(err, errlen, -EINVAL, "alignment %u is not a multiple of 512",
				  w->align);
	if (w->offset % 512)
		return uraid_errf(err, errlen, -EINVAL, "offset is not a multiple of 512");
	if (!w->iodepth || w->iodepth > 4096)
		return uraid_errf(err, errlen, -EINVAL, "iodepth is 1..4096");
	if (!(w->runtime_s > 0) || w->ramp_s < 0)
		return uraid_errf(err, errlen, -EINVAL, "runtime must be positive");
	if (!t->npaths || t->npaths > BENCH_MAX_TARGETS)
		return uraid_errf(err, errlen, -EINVAL, "between 1 and %d targets",
				  BENCH_MAX_TARGETS);
	if (w->workers > BENCH_MAX_WORKERS)
		return uraid_errf(err, errlen, -EINVAL, "at most %d workers", BENCH_MAX_WORKERS);
	return 0;
}

/* Writing destroys data: only to paths the bench creates, unless forced. */
static int check_write_permission(const struct bench_workload *w, const struct bench_targets *t,
				  char *err, size_t errlen)
{
	bool writes = w->read_pct < 100 || (t->kind == BENCH_ARRAY && (t->flags & BENCH_CREATE));
	struct stat st;

	if (!writes || (t->flags & BENCH_FORCE_WRITE))
		return 0;
	for (unsigned i = 0; i < t->npaths; i++)
		if (!stat(t->paths[i], &st))
			return uraid_errf(err, errlen, -EPERM, "%s exists and was not created by this "
					  "run: writing to it destroys its data; add --force-write",
					  t->paths[i]);
	return 0;
}

static uint64_t rng_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int worker_setup(struct bench_run *r, struct bench_worker *w, unsigned index,
			char *err, size_t errlen)
{
	const struct bench_workload *wl = r->wl;
	unsigned qd = wl->iodepth;

	w->run = r;
	w->index = index;
	w->rng = rng_mix(wl->seed + 0x9e3779b97f4a7c15ull * (index + 1));
	w->stats = calloc(1, sizeof(*w->stats));
	w->slots = calloc(qd, sizeof(*w->slots));
	size_t bytes = (size_t)qd * 2 * r->max_bs;
	if (!w->stats || !w->slots || posix_memalign(&w->bufs, 4096, bytes))
		return uraid_errf(err, errlen, -ENOMEM, "worker %u: cannot allocate %zu MiB of "
				  "buffers", index, bytes >> 20);
	hist_init(&w->stats->dir[0].lat);
	hist_init(&w->stats->dir[1].lat);

	/* random, incompressible write data; the read halves are zeroed too */
	uint64_t *p = w->bufs, s = w->rng | 1;
	for (size_t i = 0; i < bytes / 8; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = s;
	}
	for (unsigned i = 0; i < qd; i++) {
		struct bench_slot *sl = &w->slots[i];
		sl->w = w;
		sl->wbuf = (char *)w->bufs + (size_t)2 * i * r->max_bs;
		sl->rbuf = (char *)sl->wbuf + r->max_bs;
		sl->next_free = i + 1 < qd ? (int)i + 1 : -1;
	}
	w->free_head = 0;

	/* targets: one each while workers >= targets, else targets dealt round robin */
	unsigned nw = r->nworkers, nt = r->ntargets;
	if (nw >= nt) {
		w->ntargets = 1;
		w->targets[0] = (uint16_t)(index % nt);
	} else {
		for (unsigned t = index; t < nt; t += nw)
			w->targets[w->ntargets++] = (uint16_t)t;
	}
	/* sequential streams of workers sharing a target start spread over its range */
	unsigned sharing = nw > nt ? (nw + nt - 1 - index % nt) / nt : 1;
	unsigned rank = nw > nt ? index / nt : 0;
	for (unsigned i = 0; i < w->ntargets; i++) {
		unsigned t = w->targets[i];
		uint64_t part = r->range_len[t] / sharing * rank;
		part -= part % r->align;
		if (part + r->max_bs > r->range_len[t])
			part = 0;
		w->seq_start[i] = w->seq_next[i] = r->range_start[t] + part;
	}
	if (wl->rate_iops) {
		w->interval_ns = 1000000000ull * nw / wl->rate_iops;
		if (!w->interval_ns)
			w->interval_ns = 1;
	}
	if (r->tg->kind == BENCH_RAW)
		return bench_raw_worker_init(w, err, errlen);
	return 0;
}

static void worker_free(struct bench_worker *w)
{
	bench_raw_worker_fini(w);
	free(w->bufs);
	free(w->slots);
	free(w->stats);
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000;
}

/* Sleep until the absolute monotonic time t, or until a worker fails. */
static void sleep_until(struct bench_run *r, uint64_t t)
{
	for (;;) {
		uint64_t now = bench_now_ns();
		if (now >= t || atomic_load(&r->stop))
			return;
		uint64_t step = t - now < 100000000ull ? t - now : 100000000ull;
		struct timespec ts = { .tv_sec = (time_t)(step / 1000000000ull),
				       .tv_nsec = (long)(step % 1000000000ull) };
		nanosleep(&ts, NULL);
	}
}

static void describe(struct bench_run *r, struct bench_result *res)
{
	const struct bench_targets *t = r->tg;

	res->ntargets = r->ntargets;
	res->target_bytes = r->range_len[0];
	if (t->kind == BENCH_RAW) {
		snprintf(res->target_desc, sizeof(res->target_desc), "%u raw target%s (JBOD)",
			 t->npaths, t->npaths == 1 ? "" : "s");
		return;
	}
	struct uraid_array_status *st = calloc(1, sizeof(*st));
	if (!st || uraid_array_status(r->array, st)) {
		snprintf(res->target_desc, sizeof(res->target_desc), "array");
		free(st);
		return;
	}
	const char *lv = uraid_level_name(st->level);
	int n = snprintf(res->target_desc, sizeof(res->target_desc), "%s, %u members",
			 lv ? lv : "array", st->raid_disks);
	if (st->chunk_bytes && n > 0 && (size_t)n < sizeof(res->target_desc))
		n += snprintf(res->target_desc + n, sizeof(res->target_desc) - (size_t)n,
			      ", chunk %u KiB", st->chunk_bytes / 1024);
	if (st->degraded && n > 0 && (size_t)n < sizeof(res->target_desc))
		snprintf(res->target_desc + n, sizeof(res->target_desc) - (size_t)n,
			 ", degraded (%u missing)", st->degraded);
	res->degraded = st->degraded;
	free(st);
}

static int run_workers(struct bench_run *r, struct bench_result *res, char *err, size_t errlen)
{
	const struct bench_workload *wl = r->wl;
	struct rusage u0, u1;
	int rc = 0;

	r->t0 = bench_now_ns() + 1000000;
	r->t_ramp_end = r->t0 + (uint64_t)(wl->ramp_s * 1e9);
	r->t_end = r->t_ramp_end + (uint64_t)(wl->runtime_s * 1e9);
	for (unsigned i = 0; i < r->nworkers; i++) {
		struct bench_worker *w = &r->workers[i];
		rc = -pthread_create(&w->thread, NULL, bench_worker_main, w);
		if (rc) {
			atomic_store(&r->stop, true);
			uraid_errf(err, errlen, rc, "cannot start worker %u: %s", i, strerror(-rc));
			break;
		}
		w->started = true;
	}
	sleep_until(r, r->t_ramp_end);
	getrusage(RUSAGE_SELF, &u0);
	sleep_until(r, r->t_end);
	getrusage(RUSAGE_SELF, &u1);
	for (unsigned i = 0; i < r->nworkers; i++)
		if (r->workers[i].started)
			pthread_join(r->workers[i].thread, NULL);
	if (rc)
		return rc;
	for (unsigned i = 0; i < r->nworkers; i++) {
		struct bench_worker *w = &r->workers[i];
		if (w->error)
			return uraid_errf(err, errlen, w->error, "%s", w->errmsg);
		for (unsigned d = 0; d < 2; d++) {
			res->dir[d].ios += w->stats->dir[d].ios;
			res->dir[d].bytes += w->stats->dir[d].bytes;
			hist_merge(&res->dir[d].lat, &w->stats->dir[d].lat);
			hist_merge(&res->lat, &w->stats->dir[d].lat);
		}
		for (unsigned b = 0; b < BENCH_MAX_SPLIT; b++)
			res->bs_ios[b] += w->stats->bs_ios[b];
	}
	res->runtime_ns = r->t_end - r->t_ramp_end;
	res->cpu_user_ns = tv_ns(u1.ru_utime) - tv_ns(u0.ru_utime);
	res->cpu_sys_ns = tv_ns(u1.ru_stime) - tv_ns(u0.ru_stime);
	res->workers = r->nworkers;
	res->iodepth = wl->iodepth;
	describe(r, res);
	return 0;
}

int bench_run(const struct bench_workload *wl, const struct bench_targets *tg,
	      struct bench_result *res, char *err, size_t errlen)
{
	bool created[BENCH_MAX_TARGETS];
	int rc;

	if ((rc = check_workload(wl, tg, err, errlen)) ||
	    (rc = check_write_permission(wl, tg, err, errlen)) ||
	    (rc = bench_prepare_paths(tg, tg->kind == BENCH_RAW, created, err, errlen)))
		return rc;

	struct bench_run *r = calloc(1, sizeof(*r));
	if (!r)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	r->wl = wl;
	r->tg = tg;
	r->be = tg->kind == BENCH_RAW ? &bench_raw_backend : &bench_array_backend;
	r->nworkers = wl->workers ? wl->workers : tg->kind == BENCH_RAW ? tg->npaths : 1;
	r->min_bs = UINT32_MAX;
	for (unsigned i = 0; i < wl->nbs; i++) {
		if (wl->bs[i].bytes > r->max_bs)
			r->max_bs = wl->bs[i].bytes;
		if (wl->bs[i].bytes < r->min_bs)
			r->min_bs = wl->bs[i].bytes;
		r->bs_weight_total += wl->nbs > 1 ? wl->bs[i].weight : 1;
	}
	r->align = wl->align ? wl->align : r->min_bs;
	atomic_init(&r->stop, false);
	rc = tg->kind == BENCH_RAW ? bench_raw_open(r, err, errlen)
				   : bench_array_open(r, err, errlen);
	if (!rc && !(r->workers = calloc(r->nworkers, sizeof(*r->workers))))
		rc = uraid_errf(err, errlen, -ENOMEM, "out of memory");
	for (unsigned i = 0; !rc && i < r->nworkers; i++)
		rc = worker_setup(r, &r->workers[i], i, err, errlen);
	if (!rc) {
		memset(res, 0, sizeof(*res));
		hist_init(&res->lat);
		hist_init(&res->dir[0].lat);
		hist_init(&res->dir[1].lat);
		rc = run_workers(r, res, err, errlen);
	}
	for (unsigned i = 0; r->workers && i < r->nworkers; i++)
		worker_free(&r->workers[i]);
	free(r->workers);
	if (tg->kind == BENCH_RAW)
		bench_raw_close(r);
	else
		bench_array_close(r);
	free(r);
	return rc;
}
