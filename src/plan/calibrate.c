// SPDX-License-Identifier: MIT
/*
 * The host's CPU costs, measured at plan time on the MEMBERs
 * (docs/planner.md, "--verify"): 4 KiB random I/O at QD 32 by one worker
 * through the engine, in the process's CPU time per client I/O (user +
 * system: the benchmark's worker, the engine's reactor and the kernel's
 * io-wq threads that do the member files' I/O for them).
 *
 * - linear over k members (k = 1, 2, 3, 4, 6, 8, ... up to the members
 *   given): a client I/O and one member I/O with k member files in use
 *   (the same request path as RAID 0: engine/level/single_io.c);
 * - RAID 0 over 2 members, 4 KiB chunk, 8 KiB I/O: a client I/O and two
 *   member I/Os on the same 2 files; less linear x2 it is one member I/O,
 *   and linear x2 less that is the client's own work;
 * - each level family of the candidates (RAID 0, 1, 4, 5, 6, each RAID 10
 *   layout) on its smallest array: what it costs beyond the client's own
 *   work, the model's member I/Os for that shape and its parity arithmetic
 *   is the family's own work, charged to its candidates of any size.
 * Nothing here looks at the candidates' own measurements.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "plan/verify.h"

struct run_spec {
	int level;
	uint32_t layout;
	bool layout_given;
	unsigned n;                 /* members */
	uint32_t chunk_kib;         /* 0: the level's default */
	uint32_t bytes;             /* client I/O size */
	bool rd;
};

/* One run: the process's CPU time per client I/O (µs) and its CPU share
   (CPU time over the window's wall time). */
static int cpu_run(const struct plan_verify_opts *o, const struct run_spec *sp, double *cpu_us,
		   double *share, char *err, size_t errlen)
{
	struct bench_workload w = {
		.nlines = 1, .workers = 1, .iodepth = 32, .runtime_s = o->runtime_s,
		.ramp_s = o->ramp_s, .seed = o->seed,
	};
	w.line[0] = (struct bench_access){ .bytes = sp->bytes, .weight = 100,
					   .read_pct = sp->rd ? 100 : 0, .random_pct = 100 };
	struct bench_targets t = {
		.kind = BENCH_ARRAY, .paths = o->paths, .npaths = sp->n,
		.flags = BENCH_CREATE | (o->flags & BENCH_FORCE_WRITE), .level = sp->level,
		.layout_given = sp->layout_given, .layout = sp->layout, .chunk_kib = sp->chunk_kib,
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * The base points (linear x1 and the RAID 0 x2 split) carry every other
 * figure: the client's own work is their difference, and each member point
 * is read against it. One run of them taken while the load moved skews the
 * whole model (a linear x1 read once came out at 3.59 against 2.74 us in
 * the runs before and after it), so they are the median of CAL_BASE_RUNS.
 */
#define CAL_BASE_RUNS 3

static int cpu_run_median(const struct plan_verify_opts *o, const struct run_spec *sp,
			  double *cpu_us, double *share, char *err, size_t errlen)
{
	double us[CAL_BASE_RUNS], sh[CAL_BASE_RUNS];
	for (int i = 0; i < CAL_BASE_RUNS; i++) {
		int rc = cpu_run(o, sp, &us[i], &sh[i], err, errlen);
		if (rc)
			return rc;
	}
	qsort(us, CAL_BASE_RUNS, sizeof(us[0]), cmp_double);
	qsort(sh, CAL_BASE_RUNS, sizeof(sh[0]), cmp_double);
	*cpu_us = us[CAL_BASE_RUNS / 2];
	if (share)
		*share = sh[CAL_BASE_RUNS / 2];
	return 0;
}

__attribute__((format(printf, 3, 4)))
static void note_add(struct plan_host_note *n, double us, const char *fmt, ...)
{
	if (n->nruns >= PLAN_NOTE_MAX_RUNS)
		return;
	struct plan_host_run *r = &n->run[n->nruns++];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->name, sizeof(r->name), fmt, ap);
	va_end(ap);
	r->us = us;
}

static const char *dir_name(int d)
{
	return d == 0 ? "read" : "write";
}

/* The member counts measured: 1 and 2, then as the parity table's counts. */
static const unsigned counts[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 };

#define CAL_QD 32       /* the client's outstanding I/Os in every run */

/*
 * The family (level, layout) on its array of m members: its own work per
 * client read and write (the directions in want[]) into h->own[h->nown++]:
 * the run's CPU per client I/O less what the model charges for that array
 * and workload without it (client, member I/Os at their queue depths,
 * parity arithmetic).
 */
static int calibrate_family(const struct plan_verify_opts *o, struct plan_host *h,
			    const struct uraid_level_info *info, uint32_t layout, unsigned m,
			    const bool want[2], const struct plan_drive *drive,
			    struct plan_host_note *note, char *err, size_t errlen)
{
	bool chunked = info->chunk == URAID_CHUNK_STRIPE;
	struct plan_candidate c = { .level = info->level, .layout = layout, .members = m,
				    .chunk_bytes = chunked ? 64u << 10 : 0 };
	uint64_t sz[PLAN_MAX_POOL];
	const struct plan_drive *slot[PLAN_MAX_POOL];
	for (unsigned i = 0; i < m; i++) {
		sz[i] = 1ull << 30;     /* the model's CPU terms do not depend on the size */
		slot[i] = drive;
	}
	struct plan_shape *sh = malloc(sizeof(*sh));
	int rc = sh ? plan_shape_init(sh, &c, sz, err, errlen) : -ENOMEM;
	char lay[24] = "";
	if (info->has_layouts) {
		lay[0] = '_';
		uraid_layout_name(info->level, layout, lay + 1, sizeof(lay) - 1);
	}
	struct plan_host_own ow = { .level = info->level, .layout = layout, .members = m };
	for (int d = 0; d < 2 && !rc; d++) {
		if (!want[d])
			continue;
		bool rd = d == 0;
		struct run_spec r = { .level = info->level, .layout = layout,
				      .layout_given = info->has_layouts,
				      .n = m, .chunk_kib = chunked ? 64 : 0, .bytes = 4096, .rd = rd };
		double f;
		if ((rc = cpu_run(o, &r, &f, NULL, err, errlen)))
			break;
		note_add(note, f, "%s%s_x%u_%s", info->name, lay, m, dir_name(d));
		struct plan_workload w = { .nlines = 1, .iodepth = CAL_QD, .numjobs = 1 };
		w.line[0] = (struct bench_access){ .bytes = 4096, .weight = 100,
						   .read_pct = rd ? 100 : 0, .random_pct = 100 };
		struct plan_perf p;
		if ((rc = plan_predict(sh, slot, &w, h, &p)))
			break;
		if (rd) {
			ow.has_read = true;
			ow.read_us = f - p.cpu_us;
		} else {
			ow.has_write = true;
			ow.write_us = f - p.cpu_us;
		}
	}
	free(sh);
	if (!rc)
		h->own[h->nown++] = ow;
	return rc;
}

int plan_verify_host_costs(const struct plan_verify_opts *o, bool reads, bool writes,
			   const struct plan_space *sp, struct plan_host *h,
			   struct plan_host_note *note, char *err, size_t errlen)
{
	/* member reads are measured always: a parity level's write reads */
	bool want[2] = { true, writes }, fam[2] = { reads, writes };
	unsigned maxn = o->npaths < PLAN_HOST_MAX_N - 1 ? o->npaths : PLAN_HOST_MAX_N - 1;
	if (sp->max_members && sp->max_members < maxn)
		maxn = sp->max_members;
	double a[2][PLAN_HOST_MAX_N] = { { 0 } }, share[2][PLAN_HOST_MAX_N] = { { 0 } };
	double big[2] = { 0, 0 }, split[2] = { 0, 0 };
	int rc = 0;
	memset(note, 0, sizeof(*note));

	/* linear over k members: a client I/O and a member I/O with 32 / k
	   outstanding on each member; 64 KiB on one member: the copy's share */
	for (int d = 0; d < 2 && !rc; d++) {
		for (unsigned i = 0; want[d] && i < sizeof(counts) / sizeof(counts[0]); i++) {
			unsigned k = counts[i];
			/* 2 members whenever there are 2 (their share for RAID 1 / 0 x2) */
			if (k > o->npaths || (k > maxn && k != 2))
				break;
			struct run_spec r = { .level = URAID_LEVEL_LINEAR, .n = k, .bytes = 4096,
					      .rd = d == 0 };
			rc = k == 1 ? cpu_run_median(o, &r, &a[d][k], &share[d][k], err, errlen)
				    : cpu_run(o, &r, &a[d][k], &share[d][k], err, errlen);
			if (rc)
				break;
			note_add(note, a[d][k], "linear_x%u_%s", k, dir_name(d));
		}
		struct run_spec r = { .level = URAID_LEVEL_LINEAR, .n = 1, .bytes = 64u << 10,
				      .rd = d == 0 };
		if (!rc && want[d] && !(rc = cpu_run(o, &r, &big[d], NULL, err, errlen)))
			note_add(note, big[d], "linear_x1_64k_%s", dir_name(d));
	}
	if (rc)
		return rc;

	/* the split: RAID 0 x2 with a 4 KiB chunk turns an 8 KiB client I/O
	   into two 4 KiB member I/Os, 32 outstanding on each member as on
	   linear x1: one member I/O more than linear x1 */
	double client[2] = { 0, 0 };
	note->split = o->npaths >= 2;
	for (int d = 0; d < 2 && o->npaths >= 2; d++) {
		if (!want[d])
			continue;
		struct run_spec r = { .level = 0, .n = 2, .chunk_kib = 4, .bytes = 8192,
				      .rd = d == 0 };
		if ((rc = cpu_run_median(o, &r, &split[d], NULL, err, errlen)))
			return rc;
		note_add(note, split[d], "raid0_x2_4k_chunk_8k_io_%s", dir_name(d));
		double m32 = split[d] - a[d][1];
		client[d] = a[d][1] - m32;
		/* not made when a member I/O would cost nothing or more than the
		   whole (the load moved between the runs) */
		note->split = note->split && m32 > 0 && client[d] > 0;
		for (unsigned k = 1; k < PLAN_HOST_MAX_N && note->split; k++)
			note->split = !(a[d][k] > 0) || a[d][k] > client[d];
	}
	if (!note->split)
		client[0] = client[1] = 0;
	h->cpu_us_per_io = client[0];
	h->cpu_us_per_io_write = writes ? client[1] : 0;

	/* member I/O by its queue depth: linear x k has 32 / k on each member
	   (points by rising depth: the largest count first) */
	memset(h->cpu_share_at, 0, sizeof(h->cpu_share_at));
	int main_dir = writes ? 1 : 0;
	for (int d = 0; d < 2; d++) {
		h->nmember_pts[d] = 0;
		h->cpu_us_per_member_kib[d] = 0;
		for (unsigned k = PLAN_HOST_MAX_N - 1; k >= 1; k--) {
			if (!(a[d][k] > 0) || h->nmember_pts[d] == PLAN_HOST_MAX_PTS)
				continue;
			struct plan_host_pt *p = &h->member_pt[d][h->nmember_pts[d]++];
			p->qd = (double)CAL_QD / k;
			p->us = a[d][k] - client[d];
		}
		/* 60 KiB more through the same one member at the same depth */
		if (big[d] > a[d][1])
			h->cpu_us_per_member_kib[d] = (big[d] - a[d][1]) / 60;
	}
	for (unsigned k = 1; k < PLAN_HOST_MAX_N; k++)
		h->cpu_share_at[k] = share[main_dir][k];
	h->cpu_us_per_member_read = a[0][1] - client[0];
	h->cpu_us_per_member_write = writes ? a[1][1] - client[1] : 0;
	h->cpu_share = share[main_dir][1];

	/* each family of the candidates on its smallest array, charged what
	   the model gives it so far (no parity-path figure: its own is measured) */
	struct plan_drive *drive = calloc(1, sizeof(*drive));
	if (!drive)
		return -ENOMEM;
	if ((rc = plan_drive_parse_sheet("read_iops=1e6,write_iops=1e6,read_mib_s=1e5,"
					 "write_mib_s=1e5,capacity=1G", drive, err, errlen))) {
		free(drive);
		return rc;
	}
	h->nown = 0;
	h->cpu_us_per_parity_write = 0;
	for (unsigned li = 0; li < sp->nlevels && !rc; li++) {
		const struct uraid_level_info *info = uraid_level_info(sp->level[li]);
		if (!info || info->level == URAID_LEVEL_LINEAR)
			continue;
		/* a parity level from 2 data chunks a row: its write path proper
		   (RAID 5 of 2 members writes like a mirror) */
		unsigned lo = info->create_min_members;
		if (info->parity_members && lo < info->parity_members + 2)
			lo = info->parity_members + 2;
		for (unsigned m = lo; m <= maxn && !rc; m++) {
			uint32_t lay[8];
			unsigned nl = plan_layouts_of(info->level, m, lay);
			for (unsigned l = 0; l < nl && !rc; l++)
				if (!plan_host_own_of(h, info->level, lay[l]) &&
				    h->nown < PLAN_HOST_MAX_OWN)
					rc = calibrate_family(o, h, info, lay[l], m, fam, drive, note,
							      err, errlen);
		}
	}
	free(drive);
	/* the parity path's work per write as before: RAID 5's own, for a
	   parity family not calibrated */
	const struct plan_host_own *r5 = plan_host_own_of(h, 5, uraid_layout_default(5));
	if (!rc && r5 && r5->has_write)
		h->cpu_us_per_parity_write = r5->write_us > 0 ? r5->write_us : 0;
	return rc;
}

int plan_verify_share(const struct plan_verify_opts *o, bool writes, unsigned members,
		      double *share, char *err, size_t errlen)
{
	struct run_spec r = { .level = URAID_LEVEL_LINEAR, .n = members ? members : 1,
			      .bytes = 4096, .rd = !writes };
	if (r.n > o->npaths)
		r.n = o->npaths;
	return cpu_run(o, &r, NULL, share, err, errlen);
}
