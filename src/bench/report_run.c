// SPDX-License-Identifier: MIT
/*
 * The report of a run (report_run.h) as one self-contained HTML file
 * (report.h): what was run where (host, date, kernel, version, command,
 * targets, workload), the key figures (each direction's too for a mixed
 * run), the workload as run and the results tables (report_run_tables.c) and
 * the charts that fit it (report_run_charts.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <uraid/geom.h>

#include "bench/report_run.h"
#include "common/errmsg.h"

/* Append s to buf (of len) with a separator, keeping it NUL-terminated; "..." when full. */
static void append(char *buf, size_t len, const char *sep, const char *s)
{
	size_t used = strlen(buf);

	if (used + strlen(sep) + strlen(s) + 4 >= len) {
		if (used + 4 < len && strcmp(buf + (used > 3 ? used - 3 : 0), "..."))
			strcat(buf, "...");
		return;
	}
	if (used)
		strcat(buf, sep);
	strcat(buf, s);
}

static const char *kind_words(const struct bench_runplan *p, const struct bench_outcome *o,
			      char *buf, size_t len)
{
	const struct bench_axes *ax = &p->axes;

	if (p->kind == BENCH_RUN_STEADY)
		snprintf(buf, len, "steady state (SNIA PTS): %s after %u rounds of %.3g s",
			 o->ss_reached ? "reached" : "not reached", o->ss_rounds, p->wl.runtime_s);
	else if (p->kind == BENCH_RUN_REPLAY)
		snprintf(buf, len, "replay of a fio iolog");
	else if (p->kind == BENCH_RUN_COMPARE)
		snprintf(buf, len, "a comparison of %u configurations, %.3g s each%s", o->ncells,
			 p->wl.runtime_s, p->wl.ramp_s > 0 ? " after its ramp" : "");
	else if (!o->cells)
		snprintf(buf, len, "a single run");
	else
		snprintf(buf, len, "a sweep of %u cells (%s), %.3g s each%s", o->ncells,
			 ax->matrix ? "block size × read/write mix" : ax->nbs && ax->nrwmix ?
			 "block size × read share" : ax->nbs ? "block size" : ax->nrwmix ?
			 "read share" : ax->ndrives ?
			 "drive count, the level against JBOD" : ax->nqd && ax->nthreads ?
			 "threads × queue depth" : ax->nqd ? "queue depth" : "threads",
			 p->wl.runtime_s, p->wl.ramp_s > 0 ? " after its ramp" : "");
	return buf;
}

/*
 * What one preconditioning did: "fill 2.00 x 16 MiB in 3.2 s; 7 rounds in
 * 0.7 s, steady state reached".
 */
static const char *precond_words(const struct bench_precond *pc, char *buf, size_t len)
{
	char range[32];

	svg_format(range, sizeof(range), SVG_UNIT_BYTES, (double)pc->fill_range_bytes, 0);
	snprintf(buf, len, "fill %.2f × %s%s in %.1f s; %u round%s of the workload in %.1f s, "
		 "steady state %s", pc->fill_range_bytes ? (double)pc->fill_bytes /
		 (double)pc->fill_range_bytes : 0, range, pc->fill_targets > 1 ?
		 " (the raw targets together)" : "", pc->fill_ns / 1e9, pc->rounds,
		 pc->rounds == 1 ? "" : "s", pc->steady_ns / 1e9,
		 pc->reached ? "reached" : "NOT reached");
	return buf;
}

/* A line per preconditioning: once (a run, a sweep), or per configuration. */
static int add_preconditions(struct bench_report *r, const struct bench_runplan *p,
			     const struct bench_outcome *o, char *err, size_t errlen)
{
	char key[96], words[256];
	int rc = 0;

	if (p->kind != BENCH_RUN_COMPARE)
		return o->pre[0].done ? bench_report_add_info(r, "preconditioned",
			precond_words(&o->pre[0], words, sizeof(words)), err, errlen) : 0;
	for (unsigned i = 0; !rc && i < o->ncells; i++) {
		if (!o->pre[i].done)
			continue;
		snprintf(key, sizeof(key), "preconditioned %s", o->cells[i].label);
		rc = bench_report_add_info(r, key, precond_words(&o->pre[i], words, sizeof(words)),
					   err, errlen);
	}
	return rc;
}

static int add_description(struct bench_report *r, const struct bench_runplan *p,
			   const struct bench_outcome *o, const struct bench_run_about *about,
			   char *err, size_t errlen)
{
	const struct bench_result *first = &o->res[0];
	char host[320], date[96], kernel[400], cmd[1024] = "", tg[1024] = "", wl[400], run[200];
	struct utsname u;
	struct tm tm;
	int rc = 0;

	for (unsigned i = 0; i < o->ncells; i++)
		if (bench_cell_charted(o, i)) {
			first = &o->res[i];
			break;
		}
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	snprintf(host, sizeof(host), "%s (%ld CPUs online)", u.nodename[0] ? u.nodename : "?",
		 sysconf(_SC_NPROCESSORS_ONLN));
	gmtime_r(&o->started, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	snprintf(date + strlen(date), sizeof(date) - strlen(date), ", %.1f s in all",
		 o->wall_ns / 1e9);
	snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	for (int i = 0; i < about->argc; i++) {
		char q[512];
		const char *a = i ? about->argv[i] : "uraid bench";

		/* quoted as a shell would need it, so the line can be pasted */
		if (i && strpbrk(a, " \t\"$`\\*?;&|<>()[]{}~#!") && !strchr(a, '\''))
			snprintf(q, sizeof(q), "'%s'", a);
		else
			snprintf(q, sizeof(q), "%s", a);
		append(cmd, sizeof(cmd), " ", q);
	}
	for (unsigned i = 0; i < p->tg.npaths; i++)
		append(tg, sizeof(tg), ", ", p->tg.paths[i]);
	if (p->kind == BENCH_RUN_COMPARE)
		snprintf(tg + strlen(tg), sizeof(tg) - strlen(tg), ": each configuration an array "
			 "created anew on them, driven in process");
	else if (p->axes.ndrives)
		snprintf(tg + strlen(tg), sizeof(tg) - strlen(tg), ": %s on the first N of them, "
			 "each against the JBOD of the same N", uraid_level_name(p->tg.level) ?
			 uraid_level_name(p->tg.level) : "the array");
	else
		snprintf(tg + strlen(tg), sizeof(tg) - strlen(tg), ": %s%s", first->target_desc,
			 p->tg.kind == BENCH_ARRAY ? ", driven in process" : "");
	snprintf(wl, sizeof(wl), "%s; %u worker%s × QD %u%s; %s%s; seed %llu%s%s", about->what,
		 first->workers, first->workers == 1 ? "" : "s", first->iodepth,
		 p->kind == BENCH_RUN_SWEEP ? " (as in the first cell)" : "",
		 (p->tg.flags & BENCH_BUFFERED) ? "page cache" : "O_DIRECT",
		 p->wl.rate_iops ? ", rate-limited" : "", (unsigned long long)p->wl.seed,
		 (p->wl.flags & BENCH_VERIFY) ? "; every block verified" : "",
		 p->wl.ramp_s > 0 ? "; ramp before measuring" : "");
#define TRY(call) do { if (!rc) rc = (call); } while (0)
	TRY(bench_report_add_info(r, "host", host, err, errlen));
	TRY(bench_report_add_info(r, "date", date, err, errlen));
	TRY(bench_report_add_info(r, "kernel", kernel, err, errlen));
	TRY(bench_report_add_info(r, "uraid", about->version, err, errlen));
	TRY(bench_report_add_info(r, "command", cmd, err, errlen));
	TRY(bench_report_add_info(r, "targets", tg, err, errlen));
	TRY(bench_report_add_info(r, "workload", wl, err, errlen));
	TRY(bench_report_add_info(r, "run", kind_words(p, o, run, sizeof(run)), err, errlen));
	if (o->pre)
		TRY(bench_report_add_info(r, "precondition", "SNIA PTS: a sequential fill of twice "
					  "the range in 128 KiB writes, then the workload in rounds "
					  "until steady, before each measured configuration (or once "
					  "before the run)", err, errlen));
	if (o->pre)
		TRY(add_preconditions(r, p, o, err, errlen));
#undef TRY
	return rc;
}

/* The cell with the highest (or lowest) value of f; -1 when none ran. */
static int best_cell(const struct bench_outcome *o, double (*f)(const struct bench_result *),
		     bool lowest)
{
	int best = -1;

	for (unsigned i = 0; i < o->ncells; i++) {
		if (!bench_cell_charted(o, i) || !bench_total_ios(&o->res[i]))
			continue;
		double v = f(&o->res[i]);
		if (best < 0 || (lowest ? v < f(&o->res[best]) : v > f(&o->res[best])))
			best = (int)i;
	}
	return best;
}

static double f_iops(const struct bench_result *r) { return bench_iops(r); }
static double f_mib(const struct bench_result *r) { return bench_mib_s(r); }
static double f_mean(const struct bench_result *r) { return (double)hist_mean(&r->lat); }

static int figures_cells(struct bench_report *r, const struct bench_runplan *p,
			 const struct bench_outcome *o, char *err, size_t errlen)
{
	char label[200];
	int i, rc = 0;

	if ((i = best_cell(o, f_iops, false)) >= 0) {
		snprintf(label, sizeof(label), "highest IOPS (%s)", o->cells[i].label);
		rc = bench_report_add_figure(r, label, f_iops(&o->res[i]), SVG_UNIT_SI, "IOPS", err,
					     errlen);
	}
	if (!rc && (i = best_cell(o, f_mib, false)) >= 0) {
		snprintf(label, sizeof(label), "highest MiB/s (%s)", o->cells[i].label);
		rc = bench_report_add_figure(r, label, f_mib(&o->res[i]), SVG_UNIT_PLAIN, "MiB/s",
					     err, errlen);
	}
	if (!rc && (i = best_cell(o, f_mean, true)) >= 0) {
		snprintf(label, sizeof(label), "lowest mean latency (%s)", o->cells[i].label);
		rc = bench_report_add_figure(r, label, f_mean(&o->res[i]), SVG_UNIT_NS, NULL, err,
					     errlen);
	}
	if (!rc && o->has_rating)
		rc = bench_report_add_figure(r, o->rating_complete ? "X-bit rating Σ IOPS(QD)/QD, "
					     "QD 1..32" : "X-bit rating (not every QD 1..32 run)",
					     o->rating, SVG_UNIT_SI, NULL, err, errlen);
	/* drives: the largest array against the JBOD of the same drives */
	for (int k = (int)o->ncells - 1; !rc && p->axes.ndrives && k > 0; k--) {
		if (o->cells[k].jbod || !bench_cell_charted(o, (unsigned)k) ||
		    !bench_cell_charted(o, (unsigned)k - 1) || !bench_total_ios(&o->res[k - 1]))
			continue;
		snprintf(label, sizeof(label), "%s against %s, IOPS", o->cells[k].label,
			 o->cells[k - 1].label);
		rc = bench_report_add_figure(r, label, f_iops(&o->res[k]) / f_iops(&o->res[k - 1]),
					     SVG_UNIT_PLAIN, "× JBOD", err, errlen);
		break;
	}
	if (!rc && p->kind == BENCH_RUN_STEADY)
		rc = bench_report_add_figure(r, o->ss_reached ? "steady state, mean of the last 5 "
					     "rounds" : "last 5 rounds (steady state not reached)",
					     o->ss.avg, SVG_UNIT_SI, "IOPS", err, errlen);
	return rc;
}

static int figures_single(struct bench_report *r, const struct bench_runplan *p,
			  const struct bench_result *res, char *err, size_t errlen)
{
	int rc = 0;

#define TRY(call) do { if (!rc) rc = (call); } while (0)
	TRY(bench_report_add_figure(r, "IOPS (reads and writes)", f_iops(res), SVG_UNIT_SI,
				    "IOPS", err, errlen));
	TRY(bench_report_add_figure(r, "throughput", f_mib(res), SVG_UNIT_PLAIN, "MiB/s", err,
				    errlen));
	TRY(bench_report_add_figure(r, "mean latency", f_mean(res), SVG_UNIT_NS, NULL, err,
				    errlen));
	/* a mixed run: each direction on its own too */
	for (unsigned d = 0; d < 2 && res->dir[0].ios && res->dir[1].ios; d++) {
		const char *dn = d ? "write" : "read";
		char l[64];

		snprintf(l, sizeof(l), "%s IOPS", dn);
		TRY(bench_report_add_figure(r, l, bench_per_s(res->dir[d].ios, res->runtime_ns),
					    SVG_UNIT_SI, "IOPS", err, errlen));
		snprintf(l, sizeof(l), "%s throughput", dn);
		TRY(bench_report_add_figure(r, l, bench_per_s(res->dir[d].bytes, res->runtime_ns) /
					    (1 << 20), SVG_UNIT_PLAIN, "MiB/s", err, errlen));
		snprintf(l, sizeof(l), "%s mean latency", dn);
		TRY(bench_report_add_figure(r, l, (double)hist_mean(&res->dir[d].lat), SVG_UNIT_NS,
					    NULL, err, errlen));
	}
	TRY(bench_report_add_figure(r, "99th percentile latency",
				    (double)hist_percentile(&res->lat, bench_pcts[BENCH_PCT_P99]),
				    SVG_UNIT_NS, NULL, err, errlen));
	TRY(bench_report_add_figure(r, "99.9th percentile latency",
				    (double)hist_percentile(&res->lat, bench_pcts[BENCH_PCT_P99_9]),
				    SVG_UNIT_NS, NULL, err, errlen));
	TRY(bench_report_add_figure(r, "CPU, user + system, of one CPU",
				    bench_pct_of(res->cpu_user_ns + res->cpu_sys_ns,
						 res->runtime_ns), SVG_UNIT_PLAIN, "%", err, errlen));
	if (p->kind == BENCH_RUN_REPLAY)
		TRY(bench_report_add_figure(r, "busy-time rate (≥ 1 I/O outstanding)",
					    bench_per_s(bench_total_bytes(res), res->busy_ns) / (1 << 20),
					    SVG_UNIT_PLAIN, "MiB/s", err, errlen));
	if (p->wl.flags & BENCH_VERIFY)
		TRY(bench_report_add_figure(r, "blocks verified, no mismatch",
					    (double)res->verified_blocks, SVG_UNIT_PLAIN, NULL, err,
					    errlen));
#undef TRY
	return rc;
}

int bench_report_run_write(const struct bench_runplan *p, const struct bench_outcome *o,
			   const struct bench_run_about *about, const char *path, char *err,
			   size_t errlen)
{
	struct bench_report *r;
	char title[160];
	int rc;

	snprintf(title, sizeof(title), "uraid bench: %s", about->what);
	rc = bench_report_new(&r, title, err, errlen);
	if (rc)
		return rc;
	rc = add_description(r, p, o, about, err, errlen);
	if (!rc)
		rc = o->cells ? figures_cells(r, p, o, err, errlen)
			      : figures_single(r, p, &o->res[0], err, errlen);
	if (!rc)
		rc = bench_report_add_workload(r, p, o, about->what, err, errlen);
	if (!rc)
		rc = bench_report_add_compare_charts(r, p, o, about->what, err, errlen);
	if (!rc)
		rc = bench_report_add_run_charts(r, p, o, about->what, err, errlen);
	if (!rc)
		rc = bench_report_add_results(r, o, err, errlen);
	if (!rc)
		rc = bench_report_write_html(r, path, err, errlen);
	bench_report_free(r);
	return rc;
}
