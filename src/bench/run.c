// SPDX-License-Identifier: MIT
/*
 * A bench run: check the request, refuse to write to targets the bench did
 * not create unless told to, set up workers (slots and aligned buffers
 * allocated here, before the clock starts), run them, and merge their
 * statistics with the CPU time of the measured window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <uraid/geom.h>

#include "common/errmsg.h"
#include "bench/data.h"
#include "bench/svg.h"
#include "bench/trace.h"
#include "bench/verify.h"
#include "bench/worker.h"

static int check_workload(const struct bench_workload *w, const struct bench_targets *t,
			  char *err, size_t errlen)
{
	if (w->trace) {
		if (w->flags & BENCH_VERIFY)
			return uraid_errf(err, errlen, -EINVAL, "--verify does not apply to a "
					  "replayed trace");
		if (w->rate_iops)
			return uraid_errf(err, errlen, -EINVAL, "a rate does not apply to a "
					  "replayed trace");
		if (!w->trace->nops)
			return uraid_errf(err, errlen, -EINVAL, "the trace has no read or write");
	} else {
		if (!w->nlines || w->nlines > BENCH_MAX_LINES)
			return uraid_errf(err, errlen, -EINVAL, "between 1 and %d access lines",
					  BENCH_MAX_LINES);
		unsigned sum = 0;
		for (unsigned i = 0; i < w->nlines; i++) {
			const struct bench_access *l = &w->line[i];
			if (!l->bytes || l->bytes % 512 || l->bytes > BENCH_MAX_BS)
				return uraid_errf(err, errlen, -EINVAL, "block size %u is not a "
						  "multiple of 512 between 512 and 16M", l->bytes);
			if (l->read_pct > 100 || l->random_pct > 100 || l->weight > 100)
				return uraid_errf(err, errlen, -EINVAL, "percentages are 0..100");
			if (l->align % 512)
				return uraid_errf(err, errlen, -EINVAL, "alignment %u is not a "
						  "multiple of 512", l->align);
			sum += w->nlines == 1 ? 100 : l->weight;
		}
		if (sum != 100)
			return uraid_errf(err, errlen, -EINVAL, "the access lines' percentages add "
					  "up to %u, not 100", sum);
		if (!(w->runtime_s > 0))
			return uraid_errf(err, errlen, -EINVAL, "runtime must be positive");
	}
	if (w->data == BENCH_DATA_PATTERN && (!w->pattern_len || w->pattern_len > BENCH_MAX_PATTERN))
		return uraid_errf(err, errlen, -EINVAL, "the data pattern is 1 to %d bytes",
				  BENCH_MAX_PATTERN);
	if (w->align % 512)
		return uraid_errf(err, errlen, -EINVAL, "alignment %u is not a multiple of 512",
				  w->align);
	if (w->offset % 512)
		return uraid_errf(err, errlen, -EINVAL, "offset is not a multiple of 512");
	if (!w->iodepth || w->iodepth > 4096)
		return uraid_errf(err, errlen, -EINVAL, "iodepth is 1..4096");
	/* !(x <= max) also catches NaN; the times become integer ns below */
	if (w->runtime_s < 0 || w->ramp_s < 0 || !(w->runtime_s <= BENCH_MAX_SECONDS) ||
	    !(w->ramp_s <= BENCH_MAX_SECONDS))
		return uraid_errf(err, errlen, -EINVAL, "times are 0 to %.0f seconds",
				  BENCH_MAX_SECONDS);
	if (!t->npaths || t->npaths > BENCH_MAX_TARGETS)
		return uraid_errf(err, errlen, -EINVAL, "between 1 and %d targets",
				  BENCH_MAX_TARGETS);
	unsigned nuri = 0;
	for (unsigned i = 0; i < t->npaths; i++)
		nuri += bench_is_nbd_uri(t->paths[i]);
	if (nuri && t->kind == BENCH_ARRAY)
		return uraid_errf(err, errlen, -EINVAL, "--array takes files or block devices, "
				  "not NBD URIs");
	if (nuri && nuri != t->npaths)
		return uraid_errf(err, errlen, -EINVAL, "give NBD URIs or files and devices, "
				  "not both in one run");
	if (w->workers > BENCH_MAX_WORKERS)
		return uraid_errf(err, errlen, -EINVAL, "at most %d workers", BENCH_MAX_WORKERS);
	return 0;
}

unsigned bench_workers(const struct bench_workload *w, const struct bench_targets *t)
{
	if (w->trace)
		return 1;
	if (w->workers)
		return w->workers;
	return t->kind == BENCH_RAW ? t->npaths : 1;
}

bool bench_workload_writes(const struct bench_workload *w)
{
	if (w->trace)
		return w->trace->bytes[1] > 0;
	for (unsigned i = 0; i < w->nlines; i++)
		if (w->line[i].read_pct < 100)
			return true;
	return false;
}

int bench_check_write_permission(const struct bench_workload *w, const struct bench_targets *t,
				 char *err, size_t errlen)
{
	bool writes = bench_workload_writes(w) ||
		      (t->kind == BENCH_ARRAY && (t->flags & BENCH_CREATE));
	struct stat st;

	if (!writes || (t->flags & BENCH_FORCE_WRITE))
		return 0;
	for (unsigned i = 0; i < t->npaths; i++) {
		if (bench_is_nbd_uri(t->paths[i]))
			return uraid_errf(err, errlen, -EPERM, "%s: writing to the export destroys "
					  "its data; add --force-write", t->paths[i]);
		if (!stat(t->paths[i], &st))
			return uraid_errf(err, errlen, -EPERM, "%s exists and was not created by this "
					  "run: writing to it destroys its data; add --force-write",
					  t->paths[i]);
	}
	return 0;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Block sizes, the offset grid and the alignment of workers' parts. */
static int set_constants(struct bench_run *r, char *err, size_t errlen)
{
	const struct bench_workload *wl = r->wl;
	uint64_t grid = 0, lcm = 512;

	r->min_bs = UINT32_MAX;
	if (wl->trace) {
		r->max_bs = r->min_bs = wl->trace->max_len ? wl->trace->max_len : 512;
		r->grid = 512;
		r->part_align = 512;
		return 0;
	}
	for (unsigned i = 0; i < wl->nlines; i++) {
		const struct bench_access *l = &wl->line[i];
		uint32_t align = l->align ? l->align : wl->align ? wl->align : l->bytes;
		if (l->bytes > r->max_bs)
			r->max_bs = l->bytes;
		if (l->bytes < r->min_bs)
			r->min_bs = l->bytes;
		grid = gcd64(gcd64(grid, l->bytes), align);
		lcm = lcm / gcd64(lcm, align) * align;
		if (lcm > (1ull << 30))
			return uraid_errf(err, errlen, -EINVAL, "the alignments have no common "
					  "multiple below 1 GiB");
	}
	r->grid = (uint32_t)grid;
	r->part_align = lcm;
	return 0;
}

int bench_set_range(struct bench_run *r, unsigned i, uint64_t bytes, const char *name,
		    char *err, size_t errlen)
{
	const struct bench_workload *wl = r->wl;

	if (!bytes)
		return uraid_errf(err, errlen, -EINVAL, "%s is empty (0 bytes)", name);
	if (wl->offset >= bytes)
		return uraid_errf(err, errlen, -EINVAL, "%s: --offset is past its end", name);
	uint64_t len = bytes - wl->offset;
	if (wl->size && wl->size < len)
		len = wl->size;
	len -= len % r->grid;
	if (len < r->max_bs)
		return uraid_errf(err, errlen, -EINVAL,
				  "%s: the range used (%llu bytes) is smaller than a block", name,
				  (unsigned long long)len);
	r->range_start[i] = wl->offset;
	r->range_len[i] = len;
	return 0;
}

/* Trace actions must fit their targets, and O_DIRECT needs 512-byte multiples. */
static int check_trace_fits(struct bench_run *r, char *err, size_t errlen)
{
	const struct bench_trace *t = r->wl->trace;
	bool direct = !(r->tg->flags & BENCH_BUFFERED);

	if (r->ntargets != 1 && r->ntargets != t->nfiles)
		return uraid_errf(err, errlen, -EINVAL, "the trace uses %u files: give one DEVICE "
				  "for all or one per file, not %u", t->nfiles, r->ntargets);
	for (size_t i = 0; i < t->nops; i++) {
		const struct bench_trace_op *op = &t->ops[i];
		unsigned tg = r->ntargets == 1 ? 0 : op->file;
		if (op->op == BENCH_OP_SYNC)
			continue;
		if (direct && (op->offset % 512 || op->len % 512))
			return uraid_errf(err, errlen, -EINVAL, "trace line %u: offset %llu or length "
					  "%u is not a multiple of 512 (needed by O_DIRECT; try "
					  "--direct=0)", op->lineno, (unsigned long long)op->offset,
					  op->len);
		if (op->offset + op->len > r->range_len[tg])
			return uraid_errf(err, errlen, -EINVAL, "trace line %u: %u bytes at offset "
					  "%llu end past the %llu bytes used of the target",
					  op->lineno, op->len, (unsigned long long)op->offset,
					  (unsigned long long)r->range_len[tg]);
	}
	return 0;
}

/* --verify: the unit, and a table of the last write's sequence number per unit. */
static int verify_setup(struct bench_run *r, char *err, size_t errlen)
{
	if (!(r->wl->flags & BENCH_VERIFY))
		return 0;
	r->vunit = (uint32_t)gcd64(r->grid, BENCH_VERIFY_MAX_UNIT);
	r->vstrict = !bench_workload_writes(r->wl);
	for (unsigned t = 0; t < r->ntargets; t++) {
		uint64_t units = r->range_len[t] / r->vunit;
		if (units > (1ull << 28))
			return uraid_errf(err, errlen, -E2BIG, "--verify keeps 4 bytes per %u-byte "
					  "block: %llu blocks is too many; use --size", r->vunit,
					  (unsigned long long)units);
		if (!(r->vexp[t] = calloc(units, sizeof(uint32_t))))
			return uraid_errf(err, errlen, -ENOMEM, "--verify: cannot allocate its "
					  "table of %llu blocks", (unsigned long long)units);
	}
	return 0;
}

static uint64_t rng_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Seconds of time series a worker keeps: the window, or an hour for an
 * open-ended replay or a run that ends after its passes (a precondition's
 * fill: its runtime is only a cap, a day).
 */
static unsigned series_len(const struct bench_workload *wl)
{
	double s = wl->runtime_s > 0 ? wl->runtime_s : 3600;
	if (wl->passes && s > 3600)
		s = 3600;
	return (unsigned)s + 2;
}

/*
 * The ranges a worker uses: one target each while workers >= targets (else
 * targets dealt round robin). Workers sharing a target use all of it, their
 * sequential streams starting spread over it; with --verify each gets its
 * own part, so that no two workers write the same block.
 */
static int worker_ranges(struct bench_run *r, struct bench_worker *w, unsigned index,
			 char *err, size_t errlen)
{
	unsigned nw = r->nworkers, nt = r->ntargets;

	if (nw >= nt) {
		w->ntargets = 1;
		w->targets[0] = (uint16_t)(index % nt);
	} else {
		for (unsigned t = index; t < nt; t += nw)
			w->targets[w->ntargets++] = (uint16_t)t;
	}
	unsigned sharing = nw > nt ? (nw + nt - 1 - index % nt) / nt : 1;
	unsigned rank = nw > nt ? index / nt : 0;
	for (unsigned i = 0; i < w->ntargets; i++) {
		unsigned t = w->targets[i];
		uint64_t part = r->range_len[t] / sharing;
		part -= part % r->part_align;
		w->rstart[i] = r->range_start[t];
		w->rlen[i] = r->range_len[t];
		if (r->vunit && sharing > 1) {
			if (part < r->max_bs)
				return uraid_errf(err, errlen, -EINVAL, "--verify gives each of %u "
						  "workers its own part of the range: too small",
						  sharing);
			w->rstart[i] += part * rank;
			w->rlen[i] = rank + 1 == sharing ? r->range_len[t] - part * rank : part;
			w->seq_next[i] = w->rstart[i];
			w->issue_limit += (uint64_t)r->wl->passes * w->rlen[i];
			continue;
		}
		if (r->wl->passes)      /* its share of the passes over the whole range */
			w->issue_limit += r->wl->passes * (r->range_len[t] / sharing);
		uint64_t off = part * rank;
		if (off + r->max_bs > r->range_len[t])
			off = 0;
		w->seq_next[i] = r->range_start[t] + off;
	}
	return 0;
}

static int worker_setup(struct bench_run *r, struct bench_worker *w, unsigned index,
			char *err, size_t errlen)
{
	const struct bench_workload *wl = r->wl;
	unsigned qd = wl->iodepth;
	uint64_t seed = rng_mix(wl->seed + 0x9e3779b97f4a7c15ull * (index + 1));

	w->run = r;
	w->index = index;
	if (!wl->trace)
		bench_gen_init(&w->gen, wl->line, wl->nlines, wl->align, seed);
	w->stats = calloc(1, sizeof(*w->stats));
	w->slots = calloc(qd, sizeof(*w->slots));
	w->nseries = series_len(wl);
	w->series = calloc(w->nseries, sizeof(*w->series));
	size_t bytes = (size_t)qd * 2 * r->max_bs;
	w->bufs_bytes = bytes;
	if (!w->stats || !w->slots || !w->series || posix_memalign(&w->bufs, 4096, bytes))
		return uraid_errf(err, errlen, -ENOMEM, "worker %u: cannot allocate %zu MiB of "
				  "buffers", index, bytes >> 20);
	hist_init(&w->stats->dir[0].lat);
	hist_init(&w->stats->dir[1].lat);
	if (bench_lat_log_init(&w->lat_log, wl->lat_log_max))
		return uraid_errf(err, errlen, -ENOMEM, "worker %u: cannot map a latency log of "
				  "%" PRIu64 " samples", index, wl->lat_log_max);

	/* the read halves are filled too, so that every page is touched before the clock starts */
	memset(w->bufs, 0, bytes);
	for (unsigned i = 0; i < qd; i++) {
		struct bench_slot *sl = &w->slots[i];
		sl->w = w;
		sl->wbuf = (char *)w->bufs + (size_t)2 * i * r->max_bs;
		sl->rbuf = (char *)sl->wbuf + r->max_bs;
		sl->next_free = i + 1 < qd ? (int)i + 1 : -1;
		bench_fill_data(sl->wbuf, r->max_bs, wl, rng_mix(seed + i));
	}
	w->free_head = 0;

	int rc = worker_ranges(r, w, index, err, errlen);
	if (rc)
		return rc;
	if (wl->rate_iops) {
		w->interval_ns = 1000000000ull * r->nworkers / wl->rate_iops;
		if (!w->interval_ns)
			w->interval_ns = 1;
	}
	if (r->nbd)
		return bench_nbd_worker_init(w, err, errlen);
	if (r->be == &bench_raw_backend)
		return bench_raw_worker_init(w, err, errlen);
	return 0;
}

static void worker_free(struct bench_worker *w)
{
	bench_raw_worker_fini(w);
	bench_nbd_worker_fini(w);
	free(w->bufs);
	free(w->slots);
	free(w->stats);
	free(w->series);
	bench_lat_log_fini(&w->lat_log);
}

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000;
}

/*
 * Sleep until the absolute monotonic time t, until a worker fails, or (when
 * until_done) until every worker has finished its workload; call the tick
 * hook every 100 ms.
 */
static void sleep_until(struct bench_run *r, uint64_t t, bool until_done,
			const struct bench_hooks *hk)
{
	for (;;) {
		uint64_t now = bench_now_ns();
		if (now >= t || atomic_load(&r->stop))
			return;
		if (until_done && atomic_load(&r->main_done) == r->nworkers)
			return;
		if (hk && hk->tick)
			hk->tick(hk->arg, now > r->t0 ? now - r->t0 : 0, r->t_end - r->t0);
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
	res->range_bytes_total = 0;
	for (unsigned i = 0; i < r->ntargets; i++)
		res->range_bytes_total += r->range_len[i];
	if (r->nbd) {
		snprintf(res->target_desc, sizeof(res->target_desc), "%u NBD export%s",
			 t->npaths, t->npaths == 1 ? "" : "s");
		return;
	}
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
	if (st->chunk_bytes && n > 0 && (size_t)n < sizeof(res->target_desc)) {
		char chunk[32];

		svg_format(chunk, sizeof(chunk), SVG_UNIT_BYTES, st->chunk_bytes, 0);
		n += snprintf(res->target_desc + n, sizeof(res->target_desc) - (size_t)n,
			      ", chunk %s", chunk);
	}
	if (st->degraded && n > 0 && (size_t)n < sizeof(res->target_desc))
		snprintf(res->target_desc + n, sizeof(res->target_desc) - (size_t)n,
			 ", degraded (%u missing)", st->degraded);
	res->degraded = st->degraded;
	free(st);
}

/* Add the workers' statistics and time series into res. */
static int merge(struct bench_run *r, struct bench_result *res, uint64_t window_end,
		 char *err, size_t errlen)
{
	res->runtime_ns = window_end > r->t_ramp_end ? window_end - r->t_ramp_end : 0;
	res->nseries = (unsigned)((res->runtime_ns + 999999999ull) / 1000000000ull);
	if (res->nseries > r->workers[0].nseries)
		res->nseries = r->workers[0].nseries;
	if (res->nseries && !(res->series = calloc(res->nseries, sizeof(*res->series))))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < r->nworkers; i++) {
		struct bench_worker *w = &r->workers[i];
		for (unsigned d = 0; d < 2; d++) {
			res->dir[d].ios += w->stats->dir[d].ios;
			res->dir[d].bytes += w->stats->dir[d].bytes;
			hist_merge(&res->dir[d].lat, &w->stats->dir[d].lat);
			hist_merge(&res->lat, &w->stats->dir[d].lat);
		}
		for (unsigned b = 0; b < BENCH_MAX_LINES; b++) {
			res->bs_ios[b] += w->stats->bs_ios[b];
			res->line_reads[b] += w->stats->line_reads[b];
		}
		res->busy_ns += w->stats->busy_ns;
		res->verified_blocks += w->stats->verified_blocks;
		for (unsigned k = 0; k < res->nseries; k++) {
			struct bench_second *o = &res->series[k];
			const struct bench_second *p = &w->series[k];
			for (unsigned d = 0; d < 2; d++) {
				o->ios[d] += p->ios[d];
				o->bytes[d] += p->bytes[d];
			}
			o->lat_sum_ns += p->lat_sum_ns;
		}
	}
	/* the samples move to the result (bench_result_fini unmaps them) */
	if (r->wl->lat_log_max) {
		if (!(res->lat_logs = calloc(r->nworkers, sizeof(*res->lat_logs))))
			return uraid_errf(err, errlen, -ENOMEM, "out of memory");
		res->nlat_logs = r->nworkers;
		for (unsigned i = 0; i < r->nworkers; i++) {
			res->lat_logs[i] = r->workers[i].lat_log;
			memset(&r->workers[i].lat_log, 0, sizeof(r->workers[i].lat_log));
		}
	}
	for (unsigned k = 0; k < res->nseries; k++) {
		uint64_t from = (uint64_t)k * 1000000000ull;
		uint64_t left = res->runtime_ns - from;
		res->series[k].dur_ns = left < 1000000000ull ? left : 1000000000ull;
	}
	return 0;
}

static int run_workers(struct bench_run *r, const struct bench_hooks *hk,
		       struct bench_result *res, char *err, size_t errlen)
{
	const struct bench_workload *wl = r->wl;
	struct rusage u0, u1;
	int rc = 0;

	/* time to start every thread before the common start */
	r->t0 = bench_now_ns() + 2000000 + 100000ull * r->nworkers;
	r->t_ramp_end = r->t0 + (uint64_t)(wl->ramp_s * 1e9);
	/* a replay without a runtime runs to the end of its trace */
	r->t_end = wl->runtime_s > 0 ? r->t_ramp_end + (uint64_t)(wl->runtime_s * 1e9)
				     : UINT64_MAX / 2;
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
	sleep_until(r, r->t_ramp_end, false, hk);
	getrusage(RUSAGE_SELF, &u0);
	sleep_until(r, r->t_end, wl->trace != NULL || wl->passes, hk);
	getrusage(RUSAGE_SELF, &u1);
	for (unsigned i = 0; i < r->nworkers; i++)
		if (r->workers[i].started)
			pthread_join(r->workers[i].thread, NULL);
	if (rc)
		return rc;
	uint64_t window_end = r->t_end;
	for (unsigned i = 0; i < r->nworkers; i++) {
		struct bench_worker *w = &r->workers[i];
		if (w->error)
			return uraid_errf(err, errlen, w->error, "%s", w->errmsg);
	}
	if (wl->trace || wl->passes) {  /* the window ends when the last I/O completed */
		window_end = 0;
		for (unsigned i = 0; i < r->nworkers; i++)
			if (r->workers[i].main_end_ns > window_end)
				window_end = r->workers[i].main_end_ns;
		if (window_end > r->t_end)
			window_end = r->t_end;
		if (wl->trace)
			res->replay_skipped = wl->trace->skipped;
	}
	rc = merge(r, res, window_end, err, errlen);
	if (rc)
		return rc;
	res->cpu_user_ns = tv_ns(u1.ru_utime) - tv_ns(u0.ru_utime);
	res->cpu_sys_ns = tv_ns(u1.ru_stime) - tv_ns(u0.ru_stime);
	res->workers = r->nworkers;
	res->iodepth = wl->iodepth;
	describe(r, res);
	return 0;
}

int bench_run_hooked(const struct bench_workload *wl, const struct bench_targets *tg,
		     const struct bench_hooks *hooks, struct bench_result *res,
		     char *err, size_t errlen)
{
	bool created[BENCH_MAX_TARGETS];
	int rc;

	memset(res, 0, sizeof(*res));
	hist_init(&res->lat);
	hist_init(&res->dir[0].lat);
	hist_init(&res->dir[1].lat);
	if ((rc = check_workload(wl, tg, err, errlen)) ||
	    (rc = bench_check_write_permission(wl, tg, err, errlen)) ||
	    (rc = bench_prepare_paths(tg, tg->kind == BENCH_RAW, created, err, errlen)))
		return rc;

	struct bench_run *r = calloc(1, sizeof(*r));
	if (!r)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	r->wl = wl;
	r->tg = tg;
	r->nbd = tg->kind == BENCH_RAW && bench_is_nbd_uri(tg->paths[0]);
	r->be = r->nbd ? &bench_nbd_backend
		: tg->kind != BENCH_RAW ? &bench_array_backend
		/* one I/O at a time: a plain call is the lightest (target_raw_sync.c) */
		: wl->iodepth == 1 && !(tg->flags & BENCH_URING) ? &bench_raw_sync_backend
								 : &bench_raw_backend;
	r->nworkers = bench_workers(wl, tg);
	atomic_init(&r->stop, false);
	atomic_init(&r->main_done, 0);
	rc = set_constants(r, err, errlen);
	if (!rc)
		rc = r->nbd ? bench_nbd_open(r, err, errlen)
		     : tg->kind == BENCH_RAW ? bench_raw_open(r, err, errlen)
					     : bench_array_open(r, err, errlen);
	if (!rc && wl->trace)
		rc = check_trace_fits(r, err, errlen);
	if (!rc)
		rc = verify_setup(r, err, errlen);
	if (!rc && !(r->workers = calloc(r->nworkers, sizeof(*r->workers))))
		rc = uraid_errf(err, errlen, -ENOMEM, "out of memory");
	for (unsigned i = 0; !rc && i < r->nworkers; i++)
		rc = worker_setup(r, &r->workers[i], i, err, errlen);
	if (!rc)
		rc = run_workers(r, hooks, res, err, errlen);
	/* one worker: this thread may drive reactor 0 (run_sync) now that the
	   worker is gone; with several, other reactors would be left undriven */
	if (!rc && tg->kind == BENCH_ARRAY && r->array && r->nworkers == 1) {
		uint64_t t0 = bench_now_ns();
		int frc = uraid_array_flush(r->array);

		res->drain_ns = bench_now_ns() - t0;
		if (frc)
			rc = uraid_errf(err, errlen, frc, "the flush after the run failed: %s",
					strerror(-frc));
	}
	if (rc)
		bench_result_fini(res);
	for (unsigned i = 0; r->workers && i < r->nworkers; i++)
		worker_free(&r->workers[i]);
	free(r->workers);
	for (unsigned t = 0; t < BENCH_MAX_TARGETS; t++)
		free(r->vexp[t]);
	/* NBD: each worker closed its own connections (worker_free) */
	if (tg->kind == BENCH_ARRAY)
		bench_array_close(r);
	else if (!r->nbd)
		bench_raw_close(r);
	free(r);
	return rc;
}

int bench_run(const struct bench_workload *wl, const struct bench_targets *tg,
	      struct bench_result *res, char *err, size_t errlen)
{
	return bench_run_hooked(wl, tg, NULL, res, err, errlen);
}

void bench_result_fini(struct bench_result *res)
{
	free(res->series);
	res->series = NULL;
	res->nseries = 0;
	for (unsigned i = 0; i < res->nlat_logs; i++)
		bench_lat_log_fini(&res->lat_logs[i]);
	free(res->lat_logs);
	res->lat_logs = NULL;
	res->nlat_logs = 0;
}
