// SPDX-License-Identifier: MIT
/*
 * Predicted against measured: the candidates built on real members and run
 * through bench_run (the benchmark's library, in this process).
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errmsg.h"
#include "plan/verify.h"

static int run_member(const struct plan_verify_opts *o, uint32_t bytes, unsigned read_pct,
		   unsigned random_pct, unsigned qd, struct bench_result *res, char *err,
		   size_t errlen)
{
	struct bench_workload w = {
		.nlines = 1, .workers = 1, .iodepth = qd, .runtime_s = o->runtime_s,
		.ramp_s = o->ramp_s, .seed = o->seed,
	};
	w.line[0] = (struct bench_access){ .bytes = bytes, .weight = 100, .read_pct = read_pct,
					   .random_pct = random_pct };
	/* one member as the engine drives it: a linear array of that member alone
	   (its member I/O path, and the engine's own work per request, which a
	   raw file would not show) */
	struct bench_targets t = {
		.kind = BENCH_ARRAY, .paths = o->paths, .npaths = 1,
		.flags = BENCH_CREATE | (o->flags & BENCH_FORCE_WRITE),
		.level = URAID_LEVEL_LINEAR,
	};
	return bench_run(&w, &t, res, err, errlen);
}

int plan_verify_characterise(const struct plan_verify_opts *o, struct plan_drive *d,
			     char *err, size_t errlen)
{
	static const unsigned qds[] = { 1, 4, 16, 32 };
	struct stat st;
	memset(d, 0, sizeof(*d));
	d->afr = d->ure = d->price = -1;
	d->measured = true;
	snprintf(d->name, sizeof(d->name), "quick: %s", o->paths[0]);
	if (stat(o->paths[0], &st))
		return uraid_errf(err, errlen, -errno, "%s: %s", o->paths[0], strerror(errno));
	d->capacity_bytes = (uint64_t)st.st_size;
	for (int rd = 1; rd >= 0; rd--) {
		struct plan_curve *c = rd ? &d->rand_read : &d->rand_write;
		for (unsigned i = 0; i < sizeof(qds) / sizeof(qds[0]); i++) {
			struct bench_result r;
			int rc = run_member(o, 4096, rd ? 100 : 0, 100, qds[i], &r, err, errlen);
			if (rc)
				return rc;
			struct plan_curve_pt *p = &c->pt[c->n++];
			p->qd = qds[i];
			p->iops = bench_iops(&r);
			p->mean_us = hist_mean(&r.lat) / 1e3;
			p->p99_us = hist_percentile(&r.lat, 99) / 1e3;
			bench_result_fini(&r);
			if (p->iops <= 0 || p->mean_us <= 0)
				return uraid_errf(err, errlen, -EIO, "%s: the characterisation measured "
						  "nothing at QD %u", o->paths[0], qds[i]);
		}
		struct bench_result r;
		int rc = run_member(o, 1u << 20, rd ? 100 : 0, 0, 4, &r, err, errlen);
		if (rc)
			return rc;
		*(rd ? &d->seq_read_mib_s : &d->seq_write_mib_s) = bench_mib_s(&r);
		bench_result_fini(&r);
	}
	return 0;
}

int plan_verify_one(const struct plan_verify_opts *o, const struct plan_workload *w,
		    const struct plan_answer *a, struct plan_measured *m, char *err, size_t errlen)
{
	if (a->c.members > o->npaths)
		return uraid_errf(err, errlen, -EINVAL, "%u members needed to verify it, %u given",
				  a->c.members, o->npaths);
	unsigned workers = w->numjobs ? w->numjobs : 1;
	unsigned qd = plan_workload_qd(w, a->c.members);
	/* the planner predicts qd outstanding: run exactly that */
	if (qd % workers)
		return uraid_errf(err, errlen, -EINVAL, "%u outstanding I/Os do not divide among "
				  "%u jobs", qd, workers);
	struct bench_workload bw = {
		.nlines = w->nlines, .workers = workers,
		.iodepth = qd / workers,
		.runtime_s = o->runtime_s, .ramp_s = o->ramp_s, .seed = o->seed,
	};
	memcpy(bw.line, w->line, sizeof(bw.line));
	struct bench_targets t = {
		.kind = BENCH_ARRAY, .paths = o->paths, .npaths = a->c.members,
		.flags = BENCH_CREATE | (o->flags & BENCH_FORCE_WRITE),
		.level = a->c.level, .layout = a->c.layout,
		/* a level without layouts refuses one (RAID 1) */
		.layout_given = uraid_level_info(a->c.level) &&
				uraid_level_info(a->c.level)->has_layouts,
		.chunk_kib = a->c.chunk_bytes / 1024,
	};
	struct bench_result r;
	int rc = bench_run(&bw, &t, &r, err, errlen);
	if (rc)
		return rc;
	m->iops = bench_iops(&r);
	m->mib_s = bench_mib_s(&r);
	m->mean_us = hist_mean(&r.lat) / 1e3;
	m->p99_us = hist_percentile(&r.lat, 99) / 1e3;
	uint64_t ios = bench_total_ios(&r);
	m->cpu_us = ios ? (double)(r.cpu_user_ns + r.cpu_sys_ns) / 1e3 / (double)ios : 0;
	bench_result_fini(&r);
	return 0;
}
