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

/* 4 KiB random at QD 32, one worker, on a `level` array of the first n
   members: the process's CPU time per client I/O (µs) and its CPU share
   (CPU time over the window's wall time). */
static int cpu_run(const struct plan_verify_opts *o, int level, unsigned n, bool rd,
		   double *cpu_us, double *share, char *err, size_t errlen)
{
	struct bench_workload w = {
		.nlines = 1, .workers = 1, .iodepth = 32, .runtime_s = o->runtime_s,
		.ramp_s = o->ramp_s, .seed = o->seed,
	};
	w.line[0] = (struct bench_access){ .bytes = 4096, .weight = 100,
					   .read_pct = rd ? 100 : 0, .random_pct = 100 };
	struct bench_targets t = {
		.kind = BENCH_ARRAY, .paths = o->paths, .npaths = n,
		.flags = BENCH_CREATE | (o->flags & BENCH_FORCE_WRITE), .level = level,
		.chunk_kib = level == URAID_LEVEL_LINEAR || level == 1 ? 0 : 64,
	};
	struct bench_result r;
	int rc = bench_run(&w, &t, &r, err, errlen);
	if (rc)
		return rc;
	uint64_t ios = bench_total_ios(&r), cpu = r.cpu_user_ns + r.cpu_sys_ns;
	if (ios && cpu_us)
		*cpu_us = (double)cpu / 1e3 / (double)ios;
	if (share && r.runtime_ns)
		*share = (double)cpu / (double)r.runtime_ns;
	bench_result_fini(&r);
	if (!ios || !cpu)
		return uraid_errf(err, errlen, -EIO, "%s: measured nothing (no I/O or no CPU time)",
				  o->paths[0]);
	return 0;
}

int plan_verify_host_costs(const struct plan_verify_opts *o, bool writes, struct plan_host *h,
			   struct plan_host_note *note, char *err, size_t errlen)
{
	double a_r, a_w, share_r, share_w;
	memset(note, 0, sizeof(*note));
	int rc = cpu_run(o, URAID_LEVEL_LINEAR, 1, true, &a_r, &share_r, err, errlen);
	if (!rc)
		rc = cpu_run(o, URAID_LEVEL_LINEAR, 1, false, &a_w, &share_w, err, errlen);
	if (rc)
		return rc;
	note->linear_read_us = a_r;
	note->linear_write_us = a_w;
	/* a one-member linear write = client + 1 member write; a two-member
	   RAID 1 write = client + 2 member writes: their difference is one
	   member write */
	double client = 0, m_w = a_w;
	if (o->npaths >= 2) {
		double b;
		if ((rc = cpu_run(o, 1, 2, false, &b, NULL, err, errlen)))
			return rc;
		note->raid1_write_us = b;
		if (b > a_w && b - a_w < a_w) {
			m_w = b - a_w;
			client = a_w - m_w;
		}
	}
	double m_r = a_r - client > 0 ? a_r - client : a_r;
	h->cpu_us_per_io = client;
	h->cpu_us_per_member_read = m_r;
	h->cpu_us_per_member_write = m_w;
	h->cpu_share = writes ? share_w : share_r;

	/* a 3-member RAID 5's 4 KiB write: what its client I/O, its member I/Os
	   (the model's count for that shape) and its XOR leave over is the
	   parity path's own work per write */
	h->cpu_us_per_parity_write = 0;
	if (o->npaths >= 3) {
		double c_us;
		if ((rc = cpu_run(o, 5, 3, false, &c_us, NULL, err, errlen)))
			return rc;
		note->raid5_write_us = c_us;
		struct plan_candidate c = { .level = 5, .layout = URAID_LEFT_SYMMETRIC,
					    .members = 3, .chunk_bytes = 64u << 10 };
		uint64_t sz[3] = { 1ull << 30, 1ull << 30, 1ull << 30 };
		struct plan_shape *sh = malloc(sizeof(*sh));
		struct plan_member_io *io = malloc(sizeof(*io));
		if (!sh || !io)
			rc = -ENOMEM;
		else
			rc = plan_shape_init(sh, &c, sz, err, errlen);
		if (!rc) {
			plan_member_io(sh, 4096, false, false, io);
			double rate = plan_host_parity_mib_s(h, sh->data_per_row, 1);
			double par = rate > 0 ? io->parity_src_bytes / (rate * 1048576.0) * 1e6 : 0;
			double extra = c_us - client - io->reads * m_r - io->writes * m_w - par;
			h->cpu_us_per_parity_write = extra > 0 ? extra : 0;
		}
		free(sh);
		free(io);
		if (rc)
			return rc;
	}
	return 0;
}

int plan_verify_share(const struct plan_verify_opts *o, bool writes, double *share,
		      char *err, size_t errlen)
{
	return cpu_run(o, URAID_LEVEL_LINEAR, 1, !writes, NULL, share, err, errlen);
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
		.level = a->c.level, .layout_given = true, .layout = a->c.layout,
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
