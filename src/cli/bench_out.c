// SPDX-License-Identifier: MIT
/*
 * uraid bench output: the human table (one block for a single run, one row
 * per cell otherwise), JSON with unit-suffixed keys (docs/bench-json.md) and
 * CSV (one row per direction and per second of every cell).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <uraid/geom.h>

#include "bench/host.h"
#include "cli/bench_cli.h"
#include "cli/util.h"

/* ---- JSON ---- */

static void json_dir(struct json *j, const char *key, uint64_t ios, uint64_t bytes,
		     const struct hist *h, uint64_t ns)
{
	json_obj_open(j, key);
	json_u64(j, "ios", ios);
	json_u64(j, "bytes", bytes);
	json_u64(j, "iops", (uint64_t)(bench_per_s(ios, ns) + 0.5));
	json_u64(j, "bw_bytes_per_s", (uint64_t)(bench_per_s(bytes, ns) + 0.5));
	json_obj_open(j, "lat_ns");
	json_u64(j, "min", h->count ? h->min : 0);
	json_u64(j, "mean", hist_mean(h));
	for (size_t i = 0; i < BENCH_NPCT; i++)
		json_u64(j, bench_pct_keys[i], hist_percentile(h, bench_pcts[i]));
	json_u64(j, "max", h->max);
	json_obj_close(j);
	json_obj_close(j);
}

static void json_access(struct json *j, const struct bench_workload *w,
			const struct bench_result *r)
{
	json_arr_open(j, "access");
	for (unsigned i = 0; i < w->nlines; i++) {
		const struct bench_access *l = &w->line[i];
		json_obj_open(j, NULL);
		json_u64(j, "bs_bytes", l->bytes);
		json_u64(j, "pct", w->nlines > 1 ? l->weight : 100);
		json_u64(j, "read_pct", l->read_pct);
		json_u64(j, "random_pct", l->random_pct);
		json_u64(j, "align_bytes", l->align ? l->align : w->align ? w->align : l->bytes);
		if (r) {
			json_u64(j, "ios", r->bs_ios[i]);
			json_u64(j, "read_ios", r->line_reads[i]);
		}
		json_obj_close(j);
	}
	json_arr_close(j);
}

static void json_workload(struct json *j, const struct bench_cli *c, const struct bench_result *r)
{
	const struct bench_workload *w = &c->plan.wl;

	json_obj_open(j, "workload");
	json_str(j, "description", c->what);
	if (c->profile)
		json_str(j, "profile", c->profile);
	else if (!c->nacc && !c->replay_path)
		json_str(j, "rw", c->rw);
	if (!c->replay_path)
		json_access(j, w, r);
	json_u64(j, "iodepth", w->iodepth);
	/* several cells: the base workload's count, as resolved (0 would say "default") */
	json_u64(j, "numjobs", r ? r->workers : bench_workers(w, &c->plan.tg));
	json_u64(j, "ramp_ns", (uint64_t)(w->ramp_s * 1e9));
	json_u64(j, "runtime_ns", (uint64_t)(w->runtime_s * 1e9));
	json_u64(j, "rate_iops", w->rate_iops);
	json_u64(j, "seed", w->seed);
	json_bool(j, "verify", w->flags & BENCH_VERIFY);
	json_str(j, "data", w->data == BENCH_DATA_ZERO ? "zero" :
			    w->data == BENCH_DATA_PATTERN ? "pattern" : "random");
	if (w->data == BENCH_DATA_PATTERN) {
		char hex[2 + 2 * BENCH_MAX_PATTERN + 1] = "0x";
		for (unsigned i = 0; i < w->pattern_len; i++)
			snprintf(hex + 2 + 2 * i, 3, "%02x", w->pattern[i]);
		json_str(j, "buffer_pattern", hex);
	}
	json_obj_close(j);
}

static void json_series(struct json *j, const struct bench_result *r)
{
	json_arr_open(j, "series");
	for (unsigned k = 0; k < r->nseries; k++) {
		const struct bench_second *s = &r->series[k];
		uint64_t ios = s->ios[0] + s->ios[1];
		json_obj_open(j, NULL);
		json_u64(j, "t_s", k);
		json_u64(j, "duration_ns", s->dur_ns);
		json_u64(j, "read_ios", s->ios[0]);
		json_u64(j, "write_ios", s->ios[1]);
		json_u64(j, "iops", (uint64_t)(bench_per_s(ios, s->dur_ns) + 0.5));
		json_u64(j, "bw_bytes_per_s", (uint64_t)(bench_per_s(s->bytes[0] + s->bytes[1],
							       s->dur_ns) + 0.5));
		json_u64(j, "lat_mean_ns", ios ? s->lat_sum_ns / ios : 0);
		json_obj_close(j);
	}
	json_arr_close(j);
}

/* The measured part of one run (top level of a single run, or one cell). */
static void json_result(struct json *j, const struct bench_cli *c, const struct bench_result *r)
{
	json_obj_open(j, "target");
	json_str(j, "kind", r->ntargets && strstr(r->target_desc, "JBOD") ? "raw" :
			    r->ntargets && strstr(r->target_desc, "NBD export") ? "nbd" : "array");
	json_str(j, "description", r->target_desc);
	json_u64(j, "range_bytes", r->target_bytes);
	json_u64(j, "degraded", r->degraded);
	json_obj_close(j);
	json_u64(j, "numjobs", r->workers);
	json_u64(j, "iodepth", r->iodepth);
	json_u64(j, "runtime_ns", r->runtime_ns);
	json_dir(j, "read", r->dir[0].ios, r->dir[0].bytes, &r->dir[0].lat, r->runtime_ns);
	json_dir(j, "write", r->dir[1].ios, r->dir[1].bytes, &r->dir[1].lat, r->runtime_ns);
	json_dir(j, "total", bench_total_ios(r), bench_total_bytes(r), &r->lat, r->runtime_ns);
	if (r->drain_ns) {
		/* the flush after the window: what a write-back cache owed */
		json_obj_open(j, "drain");
		json_u64(j, "ns", r->drain_ns);
		json_u64(j, "iops_with_drain", (uint64_t)(bench_per_s(bench_total_ios(r),
								       r->runtime_ns + r->drain_ns) + 0.5));
		json_obj_close(j);
	}
	json_obj_open(j, "cpu");
	json_u64(j, "user_ns", r->cpu_user_ns);
	json_u64(j, "sys_ns", r->cpu_sys_ns);
	json_obj_close(j);
	if (c->plan.wl.flags & BENCH_VERIFY) {
		json_obj_open(j, "verify");
		json_u64(j, "blocks_checked", r->verified_blocks);
		json_obj_close(j);
	}
	if (c->replay_path) {
		json_obj_open(j, "replay");
		json_u64(j, "busy_ns", r->busy_ns);
		json_u64(j, "busy_bw_bytes_per_s", (uint64_t)(bench_per_s(bench_total_bytes(r), r->busy_ns) +
							     0.5));
		json_u64(j, "busy_iops", (uint64_t)(bench_per_s(bench_total_ios(r), r->busy_ns) + 0.5));
		json_u64(j, "skipped_actions", r->replay_skipped);
		json_obj_close(j);
	}
	json_series(j, r);
}

/* What preconditioning did before a measured run (SNIA PTS). */
static void json_precondition(struct json *j, const struct bench_precond *pc)
{
	json_obj_open(j, "precondition");
	json_bool(j, "done", pc->done);
	json_u64(j, "fill_bs_bytes", BENCH_PRECOND_BS);
	json_u64(j, "fill_range_bytes", pc->fill_range_bytes);
	json_u64(j, "fill_targets", pc->fill_targets);
	json_u64(j, "fill_bytes", pc->fill_bytes);
	json_u64(j, "fill_ns", pc->fill_ns);
	json_u64(j, "rounds", pc->rounds);
	json_bool(j, "steady_reached", pc->reached);
	json_u64(j, "window_mean_iops", (uint64_t)(pc->ss.avg + 0.5));
	json_u64(j, "steady_ns", pc->steady_ns);
	json_obj_close(j);
}

static void json_cell_keys(struct json *j, const struct bench_cli *c,
			   const struct bench_cell *cl)
{
	json_str(j, "label", cl->label);
	if (cl->qd)
		json_u64(j, "cell_iodepth", cl->qd);
	if (cl->threads)
		json_u64(j, "cell_numjobs", cl->threads);
	if (cl->bs)
		json_u64(j, "cell_bs_bytes", cl->bs);
	if (cl->read_pct >= 0)
		json_u64(j, "cell_read_pct", (uint64_t)cl->read_pct);
	if (cl->compare) {
		/* the configuration: one key per --compare axis that applies, as labelled */
		const struct bench_compare *cmp = &c->plan.cmp;
		json_obj_open(j, "config");
		for (unsigned a = 0; a < cmp->naxes; a++)
			if (!(cl->cmp_unused & (1u << a)))
				json_str(j, cmp->axis[a].key->name, cmp->axis[a].val[cl->cmp[a]].text);
		json_obj_close(j);
	}
	if (cl->drives) {
		json_u64(j, "cell_drives", cl->drives);
		json_str(j, "cell_config", cl->jbod ? "jbod" : "array");
	}
}

void bench_print_json(FILE *f, const struct bench_cli *c, const struct bench_outcome *o)
{
	struct json j;
	struct bench_host h;
	char when[32];

	bench_host_read(&h);
	json_begin(&j, f);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);      /* docs/json.md */
	json_str(&j, "timestamp", bench_utc_iso8601(o->started, when, sizeof(when)));
	json_obj_open(&j, "host");
	json_str(&j, "hostname", h.hostname);
	json_str(&j, "kernel", h.kernel);
	json_str(&j, "cpu_model", h.cpu_model);
	json_u64(&j, "cores", h.cores);
	json_obj_close(&j);
	json_str(&j, "kind", bench_run_kind_name(o->kind));
	json_workload(&j, c, o->cells ? NULL : &o->res[0]);
	json_arr_open(&j, "paths");
	for (unsigned i = 0; i < c->plan.tg.npaths; i++)
		json_str(&j, NULL, c->plan.tg.paths[i]);
	json_arr_close(&j);
	if (o->pre && o->kind != BENCH_RUN_COMPARE)
		json_precondition(&j, &o->pre[0]);
	if (!o->cells) {
		json_result(&j, c, &o->res[0]);
	} else {
		json_arr_open(&j, "cells");
		for (unsigned i = 0; i < o->ncells; i++) {
			json_obj_open(&j, NULL);
			json_cell_keys(&j, c, &o->cells[i]);
			if (o->pre && o->kind == BENCH_RUN_COMPARE && o->pre[i].done)
				json_precondition(&j, &o->pre[i]);
			if (o->cells[i].skip[0])
				json_str(&j, "skipped", o->cells[i].skip);
			else if (bench_cell_measured(o, i))
				json_result(&j, c, &o->res[i]);
			json_obj_close(&j);
		}
		json_arr_close(&j);
	}
	if (o->has_rating) {
		json_obj_open(&j, "xbit_rating");
		json_u64(&j, "iops", (uint64_t)(o->rating + 0.5));
		json_bool(&j, "complete", o->rating_complete);
		json_obj_close(&j);
	}
	if (o->kind == BENCH_RUN_STEADY) {
		json_obj_open(&j, "steady_state");
		json_bool(&j, "reached", o->ss_reached);
		json_u64(&j, "rounds", o->ss_rounds);
		json_u64(&j, "window_rounds", BENCH_SS_WINDOW);
		json_u64(&j, "window_mean_iops", (uint64_t)(o->ss.avg + 0.5));
		json_u64(&j, "window_range_iops", (uint64_t)(o->ss.range + 0.5));
		json_i64(&j, "window_slope_iops_per_round", (int64_t)(o->ss.slope +
								      (o->ss.slope < 0 ? -0.5 : 0.5)));
		json_u64(&j, "range_limit_pct", BENCH_SS_RANGE_PCT);
		json_u64(&j, "slope_limit_pct", BENCH_SS_SLOPE_PCT);
		json_obj_close(&j);
	}
	json_obj_close(&j);
	json_end(&j);
}

/* ---- human ---- */

static void human_row(FILE *f, const char *name, uint64_t ios, uint64_t bytes,
		      const struct hist *h, uint64_t ns)
{
	fprintf(f, "%-6s %10.0f %10.2f %9.1f %9.1f", name, bench_per_s(ios, ns),
		bench_per_s(bytes, ns) / (1 << 20), h->count ? h->min / 1e3 : 0.0, hist_mean(h) / 1e3);
	for (size_t i = 0; i < BENCH_NPCT; i++)
		fprintf(f, " %9.1f", hist_percentile(h, bench_pcts[i]) / 1e3);
	fprintf(f, " %9.1f\n", h->max / 1e3);
}

static void human_single(FILE *f, const struct bench_cli *c, const struct bench_result *r)
{
	const struct bench_workload *w = &c->plan.wl;
	bool reads = r->dir[0].ios, writes = r->dir[1].ios;

	for (unsigned i = 0; i < w->nlines && !reads && !writes; i++) {
		reads |= w->line[i].read_pct > 0;
		writes |= w->line[i].read_pct < 100;
	}
	fprintf(f, "%s, %u worker%s x QD %u, %.1f s measured after %.1f s ramp\non %s\n", c->what,
		r->workers, r->workers == 1 ? "" : "s", r->iodepth, r->runtime_ns / 1e9,
		w->ramp_s, r->target_desc);
	fprintf(f, "%-6s %10s %10s  latency in µs:\n%-6s %10s %10s %9s %9s", "", "", "", "",
		"IOPS", "MiB/s", "min", "mean");
	for (size_t i = 0; i < BENCH_NPCT; i++)
		fprintf(f, " %9s", bench_pct_names[i]);
	fprintf(f, " %9s\n", "max");
	if (reads)
		human_row(f, "read", r->dir[0].ios, r->dir[0].bytes, &r->dir[0].lat, r->runtime_ns);
	if (writes)
		human_row(f, "write", r->dir[1].ios, r->dir[1].bytes, &r->dir[1].lat, r->runtime_ns);
	if (r->dir[0].ios && r->dir[1].ios)
		human_row(f, "total", bench_total_ios(r), bench_total_bytes(r), &r->lat, r->runtime_ns);
	if (r->drain_ns)
		fprintf(f, "drain: the flush after the window took %.3f s (the write-back cache "
			"destaged); %.0f IOPS with it counted\n", r->drain_ns / 1e9,
			bench_per_s(bench_total_ios(r), r->runtime_ns + r->drain_ns));
	fprintf(f, "CPU: user %.1f %%, system %.1f %% (of one CPU)\n",
		bench_pct_of(r->cpu_user_ns, r->runtime_ns),
		bench_pct_of(r->cpu_sys_ns, r->runtime_ns));
	if (w->flags & BENCH_VERIFY)
		fprintf(f, "verify: %" PRIu64 " blocks checked, no mismatch\n", r->verified_blocks);
	if (c->replay_path)
		fprintf(f, "replay: %.2f MiB/s over %.3f s busy (>= 1 I/O outstanding), %.0f IOPS; "
			"%" PRIu64 " trim actions skipped\n",
			bench_per_s(bench_total_bytes(r), r->busy_ns) / (1 << 20), r->busy_ns / 1e9,
			bench_per_s(bench_total_ios(r), r->busy_ns), r->replay_skipped);
}

static void human_cells(FILE *f, const struct bench_cli *c, const struct bench_outcome *o)
{
	fprintf(f, "%s (%s) on %u DEVICE%s\n", c->what, bench_run_kind_name(o->kind),
		c->plan.tg.npaths, c->plan.tg.npaths == 1 ? "" : "s");
	fprintf(f, "%-22s %10s %10s %9s %9s %9s %9s %7s\n", "cell", "IOPS", "MiB/s",
		"mean µs", "p99 µs", "p99.9 µs", "max µs", "CPU %");
	for (unsigned i = 0; i < o->ncells; i++) {
		const struct bench_cell *cl = &o->cells[i];
		const struct bench_result *r = &o->res[i];
		if (!bench_cell_measured(o, i)) {
			fprintf(f, "%-22s skipped: %s\n", cl->label, bench_cell_why_not(o, i));
			continue;
		}
		fprintf(f, "%-22s %10.0f %10.2f %9.1f %9.1f %9.1f %9.1f %7.1f", cl->label,
			bench_iops(r), bench_mib_s(r), hist_mean(&r->lat) / 1e3,
			hist_percentile(&r->lat, bench_pcts[BENCH_PCT_P99]) / 1e3,
			hist_percentile(&r->lat, bench_pcts[BENCH_PCT_P99_9]) / 1e3,
			r->lat.max / 1e3, bench_pct_of(r->cpu_user_ns + r->cpu_sys_ns, r->runtime_ns));
		/* an array cell of a drives sweep: its ratio to the JBOD of the same drives */
		if (cl->drives && !cl->jbod && i > 0 && bench_cell_measured(o, i - 1) &&
		    o->cells[i - 1].jbod) {
			double jb = bench_iops(&o->res[i - 1]);
			if (jb > 0)
				fprintf(f, "  %.2f x JBOD", bench_iops(r) / jb);
		}
		fputc('\n', f);
	}
	if (o->has_rating)
		fprintf(f, "X-bit rating (sum of IOPS(QD)/QD over QD 1..32): %.0f%s\n", o->rating,
			o->rating_complete ? "" : " (not every QD 1, 2, 4, 8, 16, 32 was measured)");
	if (o->kind == BENCH_RUN_STEADY)
		fprintf(f, "steady state %s after %u rounds: last %u rounds mean %.0f IOPS, range "
			"%.1f %% (limit %d %%), fitted change %.1f %% (limit %d %%)\n",
			o->ss_reached ? "reached" : "NOT reached", o->ss_rounds, BENCH_SS_WINDOW,
			o->ss.avg, o->ss.avg > 0 ? 100 * o->ss.range / o->ss.avg : 0,
			BENCH_SS_RANGE_PCT, o->ss.avg > 0 ? 100 * o->ss.excursion / o->ss.avg : 0,
			BENCH_SS_SLOPE_PCT);
}

/* One line per preconditioning: the fill and the rounds, each with its duration. */
static void human_precondition(FILE *f, const char *who, const struct bench_precond *pc)
{
	char range[32];

	if (!pc->done)
		return;
	cli_bytes(pc->fill_range_bytes, range, sizeof(range));
	char targets[32] = "";
	if (pc->fill_targets > 1)
		snprintf(targets, sizeof(targets), " over %u targets", pc->fill_targets);
	fprintf(f, "precondition%s%s: sequential fill %.2f x %s%s in 128 KiB writes, %.1f s; "
		"workload %u round%s, %.1f s, steady state %s\n", who[0] ? " " : "", who,
		pc->fill_range_bytes ? (double)pc->fill_bytes / (double)pc->fill_range_bytes : 0,
		range, targets, pc->fill_ns / 1e9, pc->rounds, pc->rounds == 1 ? "" : "s",
		pc->steady_ns / 1e9, pc->reached ? "reached" : "NOT reached");
}

/* --compare: a row per configuration, the read/write split beside the totals. */
static void human_compare(FILE *f, const struct bench_cli *c, const struct bench_outcome *o)
{
	fprintf(f, "%s (compare) on %u DEVICE%s\n", c->what, c->plan.tg.npaths,
		c->plan.tg.npaths == 1 ? "" : "s");
	for (unsigned i = 0; o->pre && i < o->ncells; i++)
		human_precondition(f, o->cells[i].label, &o->pre[i]);
	fprintf(f, "%-28s %10s %9s %9s %9s %10s %10s %7s\n", "configuration", "IOPS", "MiB/s",
		"mean µs", "p99 µs", "read IOPS", "write IOPS", "CPU %");
	for (unsigned i = 0; i < o->ncells; i++) {
		const struct bench_cell *cl = &o->cells[i];
		const struct bench_result *r = &o->res[i];
		if (!bench_cell_measured(o, i)) {
			fprintf(f, "%-28s skipped: %s\n", cl->label, bench_cell_why_not(o, i));
			continue;
		}
		fprintf(f, "%-28s %10.0f %9.2f %9.1f %9.1f %10.0f %10.0f %7.1f\n", cl->label,
			bench_iops(r), bench_mib_s(r), hist_mean(&r->lat) / 1e3,
			hist_percentile(&r->lat, bench_pcts[BENCH_PCT_P99]) / 1e3,
			bench_per_s(r->dir[0].ios, r->runtime_ns),
			bench_per_s(r->dir[1].ios, r->runtime_ns),
			bench_pct_of(r->cpu_user_ns + r->cpu_sys_ns, r->runtime_ns));
	}
}

void bench_print_human(FILE *f, const struct bench_cli *c, const struct bench_outcome *o)
{
	if (o->kind == BENCH_RUN_COMPARE) {
		human_compare(f, c, o);
		return;
	}
	if (o->pre)
		human_precondition(f, "", &o->pre[0]);
	if (!o->cells)
		human_single(f, c, &o->res[0]);
	else
		human_cells(f, c, o);
}

/* ---- CSV ---- */

static void csv_cell(FILE *f, const struct bench_compare *cmp, const struct bench_cell *cl)
{
	if (!cl) {
		fputs(",,,,,,,", f);       /* the 7 cell columns, empty */
		return;
	}
	fprintf(f, "%s,", cl->label);
	if (cl->qd)
		fprintf(f, "%u", cl->qd);
	fputc(',', f);
	if (cl->threads)
		fprintf(f, "%u", cl->threads);
	fputc(',', f);
	if (cl->bs)
		fprintf(f, "%u", cl->bs);
	fputc(',', f);
	if (cl->read_pct >= 0)
		fprintf(f, "%d", cl->read_pct);
	fputc(',', f);
	if (cl->drives)
		fprintf(f, "%u,%s", cl->drives, cl->jbod ? "jbod" : "array");
	else if (cl->compare) {
		char conf[160];
		bench_compare_config(cmp, cl, conf, sizeof(conf));
		fprintf(f, ",%s", conf);
	} else
		fputc(',', f);
	fputc(',', f);
}

/* One row of the window; cpu (the run's, on the total row) or NULL: its columns empty. */
static void csv_dir(FILE *f, const struct bench_compare *cmp, const struct bench_cell *cl, const char *row, uint64_t ios,
		    uint64_t bytes, const struct hist *h, uint64_t ns, const struct bench_result *cpu)
{
	csv_cell(f, cmp, cl);
	fprintf(f, "%s,,%" PRIu64 ",%" PRIu64 ",%.0f,%.0f,%" PRIu64 ",%" PRIu64, row, ns, ios,
		bench_per_s(ios, ns), bench_per_s(bytes, ns), h->count ? h->min : 0, hist_mean(h));
	for (size_t i = 0; i < BENCH_NPCT; i++)
		fprintf(f, ",%" PRIu64, hist_percentile(h, bench_pcts[i]));
	fprintf(f, ",%" PRIu64, h->max);
	if (cpu)
		fprintf(f, ",%" PRIu64 ",%" PRIu64 "\n", cpu->cpu_user_ns, cpu->cpu_sys_ns);
	else
		fputs(",,\n", f);
}

static void csv_result(FILE *f, const struct bench_compare *cmp, const struct bench_cell *cl,
		       const struct bench_result *r)
{
	csv_dir(f, cmp, cl, "read", r->dir[0].ios, r->dir[0].bytes, &r->dir[0].lat, r->runtime_ns, NULL);
	csv_dir(f, cmp, cl, "write", r->dir[1].ios, r->dir[1].bytes, &r->dir[1].lat, r->runtime_ns, NULL);
	/* CPU time is the process's, not a direction's: on the total row only */
	csv_dir(f, cmp, cl, "total", bench_total_ios(r), bench_total_bytes(r), &r->lat, r->runtime_ns, r);
	for (unsigned k = 0; k < r->nseries; k++) {
		const struct bench_second *s = &r->series[k];
		uint64_t ios = s->ios[0] + s->ios[1];
		csv_cell(f, cmp, cl);
		fprintf(f, "second,%u,%" PRIu64 ",%" PRIu64 ",%.0f,%.0f,,%" PRIu64 ",,,,,,,,,\n", k,
			s->dur_ns, ios, bench_per_s(ios, s->dur_ns),
			bench_per_s(s->bytes[0] + s->bytes[1], s->dur_ns), ios ? s->lat_sum_ns / ios : 0);
	}
}

void bench_print_csv(FILE *f, const struct bench_cli *c, const struct bench_outcome *o)
{
	fputs("cell,cell_iodepth,cell_numjobs,cell_bs_bytes,cell_read_pct,cell_drives,"
	      "cell_config,row,second,duration_ns,ios,iops,bw_bytes_per_s,lat_min_ns,"
	      "lat_mean_ns", f);
	for (size_t i = 0; i < BENCH_NPCT; i++)
		fprintf(f, ",lat_%s_ns", bench_pct_keys[i]);
	fputs(",lat_max_ns,cpu_user_ns,cpu_sys_ns\n", f);
	for (unsigned i = 0; i < o->ncells; i++) {
		if (!bench_cell_measured(o, i))
			continue;
		csv_result(f, &c->plan.cmp, o->cells ? &o->cells[i] : NULL, &o->res[i]);
	}
}
