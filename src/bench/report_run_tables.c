// SPDX-License-Identifier: MIT
/*
 * The tables of a run's report (report_run.h): the workload as it was run
 * (its access specification line by line, workers, queue depth, runtime,
 * range, what a sweep changes) and the results of every cell (or of each
 * direction of a single run) with the process's CPU time, plus reads and
 * writes apart when a run mixes them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/report_run.h"

static void size_str(char *buf, size_t len, double bytes)
{
	svg_format(buf, len, SVG_UNIT_BYTES, bytes, 0);
}

/* "1, 2, 4, 8" of a sweep axis, "..." when long. */
static void list_u(char *buf, size_t len, const unsigned *v, unsigned n)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < n && used + 16 < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? ", " : "", v[i]);
	if (i < n)
		snprintf(buf + used, len - used, ", ...");
}

static int pair(struct bench_report *r, const char *k, const char *v, char *err, size_t errlen)
{
	const char *row[2] = { k, v };

	return bench_report_add_row(r, row, err, errlen);
}

/* The profile named in what ("profile database, ..."): its description, or NULL. */
static const char *profile_desc(const char *what)
{
	char name[64];
	const struct bench_profile *p;
	size_t n;

	if (!what || strncmp(what, "profile ", 8))
		return NULL;
	n = strcspn(what + 8, ",");
	if (n >= sizeof(name))
		return NULL;
	memcpy(name, what + 8, n);
	name[n] = '\0';
	p = bench_profile_find(name);
	return p ? p->desc : NULL;
}

int bench_report_add_workload(struct bench_report *r, const struct bench_runplan *p,
			      const struct bench_outcome *o, const char *what, char *err,
			      size_t errlen)
{
	static const char *const khdr[2] = { "setting", "value" };
	static const char *const ahdr[6] = { "line", "share of I/Os", "block size", "reads",
					     "random", "alignment" };
	const struct bench_result *first = &o->res[0];
	const struct bench_workload *w = &p->wl;
	const struct bench_axes *ax = &p->axes;
	const char *desc = profile_desc(what);
	char v[240], sw[160];
	int rc;

	for (unsigned i = 0; i < o->ncells; i++)
		if (bench_cell_charted(o, i)) {
			first = &o->res[i];
			break;
		}
	rc = bench_report_add_heading(r, "Workload", err, errlen);
#define TRY(call) do { if (!rc) rc = (call); } while (0)
	TRY(bench_report_add_table(r, "What each worker does", 2, khdr, err, errlen));
	TRY(pair(r, "workload", what, err, errlen));
	if (desc)
		TRY(pair(r, "profile", desc, err, errlen));
	snprintf(v, sizeof(v), "%u", first->workers ? first->workers : w->workers);
	if (ax->nthreads) {
		list_u(sw, sizeof(sw), ax->threads, ax->nthreads);
		snprintf(v, sizeof(v), "swept: %s", sw);
	}
	TRY(pair(r, "workers", v, err, errlen));
	snprintf(v, sizeof(v), "%u per worker", first->iodepth ? first->iodepth : w->iodepth);
	if (ax->nqd) {
		list_u(sw, sizeof(sw), ax->qd, ax->nqd);
		snprintf(v, sizeof(v), "swept: %s (per worker)", sw);
	}
	TRY(pair(r, "queue depth", v, err, errlen));
	if (p->kind == BENCH_RUN_REPLAY && w->runtime_s > 0)
		snprintf(v, sizeof(v), "the trace's length (at most %.3g s)", w->runtime_s);
	else if (p->kind == BENCH_RUN_REPLAY)
		snprintf(v, sizeof(v), "the trace's length");
	else if (w->ramp_s > 0)
		snprintf(v, sizeof(v), "%.3g s measured after a %.3g s ramp", w->runtime_s,
			 w->ramp_s);
	else
		snprintf(v, sizeof(v), "%.3g s measured, no ramp", w->runtime_s);
	if (o->cells && p->kind == BENCH_RUN_SWEEP)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), ", per cell");
	if (p->kind == BENCH_RUN_STEADY)
		snprintf(v + strlen(v), sizeof(v) - strlen(v), ", per round");
	TRY(pair(r, "runtime", v, err, errlen));
	if (first->target_bytes) {
		size_str(sw, sizeof(sw), (double)first->target_bytes);
		snprintf(v, sizeof(v), "%s of each target", sw);
		if (w->offset) {
			size_str(sw, sizeof(sw), (double)w->offset);
			snprintf(v + strlen(v), sizeof(v) - strlen(v), ", from %s", sw);
		}
		TRY(pair(r, "range", v, err, errlen));
	}
	if (w->rate_iops) {
		snprintf(v, sizeof(v), "%llu IOPS, all workers together (latency from each I/O's "
			 "intended start)", (unsigned long long)w->rate_iops);
		TRY(pair(r, "rate limit", v, err, errlen));
	}
	TRY(pair(r, "I/O", (p->tg.flags & BENCH_BUFFERED) ? "through the page cache" :
		 "O_DIRECT (no page cache)", err, errlen));
	if (rc || p->kind == BENCH_RUN_REPLAY)
		return rc;              /* a trace has no access specification */
	TRY(bench_report_add_table(r, ax->matrix ? "Access specification (the matrix sweeps block "
				   "size and reads)" : "Access specification", 6, ahdr, err,
				   errlen));
	for (unsigned i = 0; i < w->nlines && !rc; i++) {
		const struct bench_access *l = &w->line[i];
		char n[16], share[16], bs[96], rd[64], rnd[16], al[32];
		const char *row[6] = { n, share, bs, rd, rnd, al };
		uint32_t align = l->align ? l->align : w->align ? w->align : l->bytes;

		snprintf(n, sizeof(n), "%u", i + 1);
		snprintf(share, sizeof(share), "%u %%", w->nlines > 1 ? l->weight : 100);
		size_str(bs, sizeof(bs), l->bytes);
		snprintf(rd, sizeof(rd), "%u %%", l->read_pct);
		if (ax->matrix) {
			char a[32], b[32];

			size_str(a, sizeof(a), bench_matrix_bs[0]);
			size_str(b, sizeof(b), bench_matrix_bs[BENCH_MATRIX_NBS - 1]);
			snprintf(bs, sizeof(bs), "swept: %s … %s", a, b);
			snprintf(rd, sizeof(rd), "swept: %u … %u %%", bench_matrix_read_pct[0],
				 bench_matrix_read_pct[BENCH_MATRIX_NMIX - 1]);
			snprintf(al, sizeof(al), "the block size");
		} else {
			size_str(al, sizeof(al), align);
		}
		snprintf(rnd, sizeof(rnd), "%u %%", l->random_pct);
		rc = bench_report_add_row(r, row, err, errlen);
	}
#undef TRY
	return rc;
}

static void fmt_us(char *buf, size_t len, const struct hist *h, double pct)
{
	if (!h->count)
		snprintf(buf, len, "–");
	else if (pct < 0)
		snprintf(buf, len, "%.1f", hist_mean(h) / 1e3);
	else
		snprintf(buf, len, "%.1f", hist_percentile(h, pct) / 1e3);
}

#define NCOL 8

/* One row: name, IOPS, MiB/s, mean, p99, p99.9, max (µs), CPU % (cpu_pct < 0: "–"). */
static int row_of(struct bench_report *r, const char *name, uint64_t ios, uint64_t bytes,
		  const struct hist *h, uint64_t ns, double cpu_pct, char *err, size_t errlen)
{
	char v[NCOL - 1][32];
	const char *row[NCOL] = { name, v[0], v[1], v[2], v[3], v[4], v[5], v[6] };

	snprintf(v[0], sizeof(v[0]), "%.0f", bench_per_s(ios, ns));
	snprintf(v[1], sizeof(v[1]), "%.2f", bench_per_s(bytes, ns) / (1 << 20));
	fmt_us(v[2], sizeof(v[2]), h, -1);
	fmt_us(v[3], sizeof(v[3]), h, bench_pcts[BENCH_PCT_P99]);
	fmt_us(v[4], sizeof(v[4]), h, bench_pcts[BENCH_PCT_P99_9]);
	if (h->count)
		snprintf(v[5], sizeof(v[5]), "%.1f", h->max / 1e3);
	else
		snprintf(v[5], sizeof(v[5]), "–");
	if (cpu_pct >= 0)
		snprintf(v[6], sizeof(v[6]), "%.1f", cpu_pct);
	else
		snprintf(v[6], sizeof(v[6]), "–");
	return bench_report_add_row(r, row, err, errlen);
}

static double cpu_pct(const struct bench_result *res)
{
	return bench_pct_of(res->cpu_user_ns + res->cpu_sys_ns, res->runtime_ns);
}

/* Did cell i (a measured one) both read and write? */
static bool mixed(const struct bench_outcome *o, unsigned i)
{
	return bench_cell_measured(o, i) && o->res[i].dir[0].ios && o->res[i].dir[1].ios;
}

/* Reads and writes of every cell side by side, when some cell did both. */
static int split_table(struct bench_report *r, const struct bench_outcome *o, char *err,
		       size_t errlen)
{
	static const char *const hdr[9] = { "cell", "read IOPS", "read MiB/s", "read mean µs",
					    "read p99 µs", "write IOPS", "write MiB/s",
					    "write mean µs", "write p99 µs" };
	bool any = false;
	int rc;

	for (unsigned i = 0; i < o->ncells; i++)
		any |= mixed(o, i);
	if (!any)
		return 0;
	rc = bench_report_add_table(r, "Reads and writes apart", 9, hdr, err, errlen);
	for (unsigned i = 0; i < o->ncells && !rc; i++) {
		const struct bench_result *res = &o->res[i];
		char v[8][32];
		const char *row[9] = { o->cells[i].label, v[0], v[1], v[2], v[3], v[4], v[5], v[6],
				       v[7] };

		if (!bench_cell_measured(o, i))
			continue;
		for (unsigned d = 0; d < 2; d++) {
			snprintf(v[4 * d], sizeof(v[0]), "%.0f",
				 bench_per_s(res->dir[d].ios, res->runtime_ns));
			snprintf(v[4 * d + 1], sizeof(v[0]), "%.2f",
				 bench_per_s(res->dir[d].bytes, res->runtime_ns) / (1 << 20));
			fmt_us(v[4 * d + 2], sizeof(v[0]), &res->dir[d].lat, -1);
			fmt_us(v[4 * d + 3], sizeof(v[0]), &res->dir[d].lat,
			       bench_pcts[BENCH_PCT_P99]);
		}
		rc = bench_report_add_row(r, row, err, errlen);
	}
	return rc;
}

int bench_report_add_results(struct bench_report *r, const struct bench_outcome *o, char *err,
			     size_t errlen)
{
	static const char *const hdr[NCOL] = { "cell", "IOPS", "MiB/s", "mean µs", "p99 µs",
					       "p99.9 µs", "max µs", "CPU %" };
	int rc = bench_report_add_heading(r, "Results", err, errlen);

	if (!rc)
		rc = bench_report_add_table(r, o->cells ? "Every cell (CPU: user + system time of "
					    "the process, % of one CPU)" : "Per direction (CPU: "
					    "user + system time of the process, % of one CPU)",
					    NCOL, hdr, err, errlen);
	if (!o->cells) {
		const struct bench_result *res = &o->res[0];

		/* CPU time is the process's: it belongs to the total, not to a direction */
		for (unsigned d = 0; d < 2 && !rc; d++)
			if (res->dir[d].ios)
				rc = row_of(r, d ? "write" : "read", res->dir[d].ios,
					    res->dir[d].bytes, &res->dir[d].lat, res->runtime_ns,
					    -1, err, errlen);
		if (!rc)
			rc = row_of(r, "total", bench_total_ios(res), bench_total_bytes(res),
				    &res->lat, res->runtime_ns, cpu_pct(res), err, errlen);
		return rc;
	}
	for (unsigned i = 0; i < o->ncells && !rc; i++) {
		const struct bench_cell *cl = &o->cells[i];

		if (!bench_cell_measured(o, i)) {
			char why[128];
			const char *row[NCOL] = { cl->label, why, "", "", "", "", "", "" };

			snprintf(why, sizeof(why), "skipped: %s", bench_cell_why_not(o, i));
			rc = bench_report_add_row(r, row, err, errlen);
			continue;
		}
		rc = row_of(r, cl->label, bench_total_ios(&o->res[i]),
			    bench_total_bytes(&o->res[i]), &o->res[i].lat, o->res[i].runtime_ns,
			    cpu_pct(&o->res[i]), err, errlen);
	}
	return rc ? rc : split_table(r, o, err, errlen);
}
