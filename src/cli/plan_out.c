// SPDX-License-Identifier: MIT
/*
 * uraid plan's output: the ranked table, the JSON document (docs/json.md,
 * "plan") and the HTML report (the bench report's sections and charts).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "cli/plan_cli.h"
#include "cli/util.h"

const char *plan_cand_name(const struct plan_answer *a, char *buf, size_t len)
{
	const struct uraid_level_info *info = uraid_level_info(a->c.level);
	char chunk[16] = "";
	if (a->c.chunk_bytes)
		snprintf(chunk, sizeof(chunk), " %uK", a->c.chunk_bytes / 1024);
	char sp[16] = "";
	if (a->c.spares)
		snprintf(sp, sizeof(sp), "+%u", a->c.spares);
	snprintf(buf, len, "%s%s%s x%u%s%s", info ? info->name : "?", a->layout_name[0] ? " " : "",
		 a->layout_name, a->c.members, sp, chunk);
	return buf;
}

static double err_pct(double predicted, double measured)
{
	return measured > 0 ? 100 * (predicted - measured) / measured : NAN;
}

static const char *human_s(double s, char *buf, size_t len)
{
	if (!isfinite(s))
		snprintf(buf, len, "-");
	else if (s < 120)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
	return buf;
}

/* The host's CPU costs measured now: client, member I/O by member count,
   each family's own work (docs/planner.md, --verify). */
static void describe_host(FILE *f, const struct plan_host *h)
{
	fprintf(f, "host CPU measured now (us): client I/O %.2f read, %.2f write; a 4 KiB "
		"member I/O by its member's queue:", plan_host_client_us(h, true),
		plan_host_client_us(h, false));
	for (int d = 0; d < 2; d++)
		for (unsigned i = 0; i < h->nmember_pts[d]; i++)
			fprintf(f, "%s %s %.2f at %.3g", i ? "," : d ? ";" : "", d ? "write" : "read",
				h->member_pt[d][i].us, h->member_pt[d][i].qd);
	fprintf(f, "; per KiB more %.3f/%.3f; CPU share %.2f\n", h->cpu_us_per_member_kib[0],
		h->cpu_us_per_member_kib[1], h->cpu_share);
	for (unsigned i = 0; i < h->nown; i++) {
		const struct plan_host_own *o = &h->own[i];
		const struct uraid_level_info *info = uraid_level_info(o->level);
		char lay[24] = "";
		if (info && info->has_layouts)
			uraid_layout_name(o->level, o->layout, lay, sizeof(lay));
		fprintf(f, "%s %s%s%s x%u own work (us):", i ? "," : "  ",
			info ? info->name : "?", *lay ? " " : "", lay, o->members);
		if (o->has_read)
			fprintf(f, " read %.2f", o->read_us);
		if (o->has_write)
			fprintf(f, " write %.2f", o->write_us);
	}
	if (h->nown)
		fputc('\n', f);
}

static void describe(FILE *f, const struct plan_run *r)
{
	const struct plan_workload *w = &r->wl;
	char b[32];
	fprintf(f, "workload: %s, %u outstanding I/O%s\n", w->name, plan_workload_qd(w, 1),
		w->qd_per_drive ? " per member" : " in all");
	fprintf(f, "drives: %u (%s):", r->pool.n, r->drive_source);
	for (unsigned i = 0; i < r->nmodels; i++)
		fprintf(f, "%s %u x %s %s", i ? "," : "", r->model_count[i], r->models[i].name,
			cli_bytes(r->models[i].capacity_bytes, b, sizeof(b)));
	fprintf(f, "\nneed: %s usable, %u failure%s, %.1f years; rebuild at most %.0f MiB/s; "
		"host: %u core%s, parity (d=4) XOR %.0f, P+Q %.0f MiB/s per CPU%s\n",
		r->need.capacity_bytes ? cli_bytes(r->need.capacity_bytes, b, sizeof(b)) : "any",
		r->need.failures, r->need.failures == 1 ? "" : "s", r->need.years, r->need.rebuild_mib_s,
		r->host.cores, r->host.cores == 1 ? "" : "s", plan_host_parity_mib_s(&r->host, 4, 1),
		plan_host_parity_mib_s(&r->host, 4, 2), r->parity_measured ? " (measured now)" : "");
	if (r->host_measured)
		describe_host(f, &r->host);
}

void plan_print_table(FILE *f, const struct plan_run *r)
{
	describe(f, r);
	bool priced = false;
	for (unsigned i = 0; i < r->nans; i++)
		priced = priced || r->ans[i].cost_known;
	fprintf(f, "\n%-3s %-28s %10s %5s %10s %9s %9s %9s %-8s %8s %9s", "#", "candidate",
		"usable", "eff", "IOPS", "MiB/s", "mean_us", "p99_us", "bound", "rebuild",
		"loss");
	if (priced)
		fprintf(f, " %9s", "cost/TB");
	if (r->verified)
		fprintf(f, " %10s %10s %6s %8s %8s %9s %7s", "now_IOPS", "meas_IOPS", "ratio",
			"cpu_us", "meas_cpu", "meas_mean", "err");
	fprintf(f, "  why\n");
	unsigned rows = r->top > r->verified ? r->top : r->verified;
	for (unsigned i = 0; i < r->nans && i < rows; i++) {
		const struct plan_answer *a = &r->ans[i];
		char name[80], cap[32], rb[32], loss[16];
		plan_cand_name(a, name, sizeof(name));
		cli_bytes(a->usable_bytes, cap, sizeof(cap));
		if (a->loss_known)
			snprintf(loss, sizeof(loss), "%.2g%%", 100 * a->loss_prob);
		else
			snprintf(loss, sizeof(loss), "-");
		fprintf(f, "%-3u %-28s %10s %4.0f%% %10.0f %9.1f %9.1f %9.1f %-8s %8s %9s", i + 1,
			name, cap, 100 * a->efficiency, a->perf.iops, a->perf.mib_s, a->perf.mean_us,
			a->perf.p99_us, a->perf.bound, a->rebuild_s ? human_s(a->rebuild_s, rb,
			sizeof(rb)) : "-", loss);
		if (priced) {
			if (a->cost_known)
				fprintf(f, " %9.1f", a->cost_per_tb);
			else
				fprintf(f, " %9s", "-");
		}
		if (r->verified) {
			if (a->verified)
				fprintf(f, " %10.0f %10.0f %6.2f %8.2f %8.2f %9.1f %+6.1f%%",
					a->now_iops, a->m_iops, a->ratio, a->perf.cpu_us,
					a->m_cpu_us, a->m_mean_us,
					err_pct(a->perf.mean_us, a->m_mean_us));
			else
				fprintf(f, " %10s %10s %6s %8s %8s %9s %7s", "-", "-", "", "-", "-",
					"-", "");
		}
		fprintf(f, "  %s\n", a->reason);
	}
	if (r->nans > rows)
		fprintf(f, "(%u more: --top=N shows them, --json has all)\n", r->nans - rows);
}

/* A number, or null when it is not finite. */
static void jnum(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

void plan_print_json(FILE *f, const struct plan_run *r)
{
	const struct plan_workload *w = &r->wl;
	fprintf(f, "{\n  \"version\": %d,\n  \"workload\": {\"name\": ", CLI_JSON_VERSION);
	cli_json_escape(f, w->name);
	fprintf(f, ", \"iodepth\": %u, \"numjobs\": %u, \"qd_per_drive\": %s, \"lines\": [",
		w->iodepth, w->numjobs, w->qd_per_drive ? "true" : "false");
	for (unsigned i = 0; i < w->nlines; i++)
		fprintf(f, "%s{\"bytes\": %u, \"weight\": %u, \"read_pct\": %u, \"random_pct\": %u}",
			i ? ", " : "", w->line[i].bytes, w->line[i].weight, w->line[i].read_pct,
			w->line[i].random_pct);
	fprintf(f, "]},\n  \"drives\": [");
	for (unsigned i = 0; i < r->nmodels; i++) {
		const struct plan_drive *d = &r->models[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		cli_json_escape(f, d->name);
		fprintf(f, ", \"count\": %u, \"measured\": %s, \"capacity_bytes\": %llu, "
			"\"seq_read_mib_s\": ", r->model_count[i], d->measured ? "true" : "false",
			(unsigned long long)d->capacity_bytes);
		jnum(f, d->seq_read_mib_s);
		fputs(", \"seq_write_mib_s\": ", f);
		jnum(f, d->seq_write_mib_s);
		fputs(", \"afr\": ", f);
		jnum(f, d->afr >= 0 ? d->afr : NAN);
		fputs(", \"ure\": ", f);
		jnum(f, d->ure >= 0 ? d->ure : NAN);
		fputs(", \"price\": ", f);
		jnum(f, d->price >= 0 ? d->price : NAN);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"need\": {\"capacity_bytes\": %llu, \"failures\": %u, "
		"\"rebuild_bytes_per_s\": ", (unsigned long long)r->need.capacity_bytes,
		r->need.failures);
	jnum(f, r->need.rebuild_mib_s * 1048576);
	fputs(", \"years\": ", f);
	jnum(f, r->need.years);
	fputs(", \"replace_s\": ", f);
	jnum(f, r->need.replace_hours * 3600);
	fputs(", \"min_iops\": ", f);
	jnum(f, r->need.min_iops ? r->need.min_iops : NAN);
	fprintf(f, "},\n  \"host\": {\"cores\": %u, \"cpu_ns_per_io\": ", r->host.cores);
	jnum(f, r->host.cpu_us_per_io * 1e3);
	fputs(", \"cpu_ns_per_member_read\": ", f);
	jnum(f, r->host.cpu_us_per_member_read * 1e3);
	fputs(", \"cpu_ns_per_member_write\": ", f);
	jnum(f, r->host.cpu_us_per_member_write * 1e3);
	fputs(", \"cpu_ns_per_parity_write\": ", f);
	jnum(f, r->host.cpu_us_per_parity_write * 1e3);
	fputs(", \"cpu_share\": ", f);
	jnum(f, r->host.cpu_share > 0 ? r->host.cpu_share : 1);
	fprintf(f, ", \"cpu_measured\": %s", r->host_measured ? "true" : "false");
	if (r->host_measured) {
		/* the runs the CPU figures come from (docs/planner.md, --verify) */
		const struct plan_host_note *n = &r->host_note;
		const struct plan_host *h = &r->host;
		fputs(", \"cpu_runs_ns_per_io\": {", f);
		for (unsigned i = 0; i < n->nruns; i++) {
			fprintf(f, "%s\"%s\": ", i ? ", " : "", n->run[i].name);
			jnum(f, n->run[i].us * 1e3);
		}
		fprintf(f, "}, \"cpu_split\": %s, \"cpu_ns_per_write_io\": ",
			n->split ? "true" : "false");
		jnum(f, plan_host_client_us(h, false) * 1e3);
		fputs(", \"cpu_member_by_qd\": [", f);
		for (int d = 0, c = 0; d < 2; d++)
			for (unsigned i = 0; i < h->nmember_pts[d]; i++) {
				fprintf(f, "%s{\"write\": %s, \"qd\": ", c++ ? ", " : "",
					d ? "true" : "false");
				jnum(f, h->member_pt[d][i].qd);
				fputs(", \"ns\": ", f);
				jnum(f, h->member_pt[d][i].us * 1e3);
				fputc('}', f);
			}
		fputs("], \"cpu_ns_per_member_kib\": [", f);
		jnum(f, h->cpu_us_per_member_kib[0] * 1e3);
		fputs(", ", f);
		jnum(f, h->cpu_us_per_member_kib[1] * 1e3);
		fputs("], \"cpu_share_by_members\": [", f);
		for (unsigned k = 1, c = 0; k < PLAN_HOST_MAX_N; k++) {
			if (!(h->cpu_share_at[k] > 0))
				continue;
			fprintf(f, "%s{\"members\": %u, \"cpu_share\": ", c++ ? ", " : "", k);
			jnum(f, h->cpu_share_at[k]);
			fputc('}', f);
		}
		fputs("], \"cpu_own\": [", f);
		for (unsigned i = 0; i < h->nown; i++) {
			const struct plan_host_own *o = &h->own[i];
			const struct uraid_level_info *info = uraid_level_info(o->level);
			char lay[24] = "";
			if (info && info->has_layouts)
				uraid_layout_name(o->level, o->layout, lay, sizeof(lay));
			fprintf(f, "%s{\"level\": \"%s\", \"layout\": ", i ? ", " : "",
				info ? info->name : "?");
			if (*lay)
				fprintf(f, "\"%s\"", lay);
			else
				fputs("null", f);
			fprintf(f, ", \"members\": %u, \"ns_per_read\": ", o->members);
			jnum(f, o->has_read ? o->read_us * 1e3 : NAN);
			fputs(", \"ns_per_write\": ", f);
			jnum(f, o->has_write ? o->write_us * 1e3 : NAN);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputs(", \"parity_bytes_per_s\": ", f);
	jnum(f, r->host.parity_mib_s > 0 ? r->host.parity_mib_s * 1048576 : NAN);
	fputs(", \"parity_rates\": [", f);
	for (unsigned d = 1, n = 0; d < PLAN_HOST_MAX_D; d++) {
		if (!(r->host.parity_rate[0][d] > 0 || r->host.parity_rate[1][d] > 0))
			continue;
		fprintf(f, "%s{\"data\": %u, \"xor_bytes_per_s\": ", n++ ? ", " : "", d);
		jnum(f, r->host.parity_rate[0][d] > 0 ? r->host.parity_rate[0][d] * 1048576 : NAN);
		fputs(", \"pq_bytes_per_s\": ", f);
		jnum(f, r->host.parity_rate[1][d] > 0 ? r->host.parity_rate[1][d] * 1048576 : NAN);
		fputc('}', f);
	}
	fprintf(f, "], \"parity_measured\": %s, \"link_bytes_per_s\": ",
		r->parity_measured ? "true" : "false");
	jnum(f, r->host.link_mib_s ? r->host.link_mib_s * 1048576 : NAN);
	fputs(", \"link_iops\": ", f);
	jnum(f, r->host.link_iops ? r->host.link_iops : NAN);
	fprintf(f, "},\n  \"candidates\": [");
	for (unsigned i = 0; i < r->nans; i++) {
		const struct plan_answer *a = &r->ans[i];
		const struct uraid_level_info *info = uraid_level_info(a->c.level);
		char name[80];
		fprintf(f, "%s\n    {\"rank\": %u, \"name\": ", i ? "," : "", i + 1);
		cli_json_escape(f, plan_cand_name(a, name, sizeof(name)));
		fprintf(f, ", \"level\": ");
		cli_json_escape(f, info ? info->name : "?");
		fputs(", \"layout\": ", f);
		if (a->layout_name[0])
			cli_json_escape(f, a->layout_name);
		else
			fputs("null", f);
		fprintf(f, ", \"members\": %u, \"spares\": %u, \"chunk_bytes\": ", a->c.members,
			a->c.spares);
		if (a->c.chunk_bytes)
			fprintf(f, "%u", a->c.chunk_bytes);
		else
			fputs("null", f);
		fprintf(f, ", \"usable_bytes\": %llu, \"efficiency\": ",
			(unsigned long long)a->usable_bytes);
		jnum(f, a->efficiency);
		fprintf(f, ", \"failures_survived\": %u, \"fits\": %s,\n     \"predicted\": "
			"{\"iops\": ", a->survives, a->fits ? "true" : "false");
		jnum(f, a->perf.iops);
		fputs(", \"bw_bytes_per_s\": ", f);
		jnum(f, a->perf.mib_s * 1048576);
		fputs(", \"lat_mean_ns\": ", f);
		jnum(f, a->perf.mean_us * 1e3);
		fputs(", \"lat_p99_ns\": ", f);
		jnum(f, a->perf.p99_us * 1e3);
		fputs(", \"member_ios_per_io\": ", f);
		jnum(f, a->perf.member_ios);
		fputs(", \"member_bytes_per_byte\": ", f);
		jnum(f, a->perf.member_bytes_per_byte);
		fputs(", \"member_qd\": ", f);
		jnum(f, a->perf.member_qd);
		fputs(", \"cpu_ns_per_io\": ", f);
		jnum(f, a->perf.cpu_us * 1e3);
		fputs(", \"bound\": ", f);
		cli_json_escape(f, a->perf.bound);
		fputs("},\n     \"rebuild_s\": ", f);
		jnum(f, a->rebuild_s ? a->rebuild_s : NAN);
		fputs(", \"loss_probability\": ", f);
		jnum(f, a->loss_known ? a->loss_prob : NAN);
		fputs(", \"loss_per_year\": ", f);
		jnum(f, a->loss_known ? a->loss_per_year : NAN);
		fputs(", \"cost_per_tb\": ", f);
		jnum(f, a->cost_known ? a->cost_per_tb : NAN);
		fputs(", \"reason\": ", f);
		cli_json_escape(f, a->reason);
		fputs(",\n     \"measured\": ", f);
		if (a->verified) {
			fputs("{\"iops\": ", f);
			jnum(f, a->m_iops);
			fputs(", \"bw_bytes_per_s\": ", f);
			jnum(f, a->m_mib_s * 1048576);
			fputs(", \"lat_mean_ns\": ", f);
			jnum(f, a->m_mean_us * 1e3);
			fputs(", \"lat_p99_ns\": ", f);
			jnum(f, a->m_p99_us * 1e3);
			fputs(", \"cpu_ns_per_io\": ", f);
			jnum(f, a->m_cpu_us * 1e3);
			fprintf(f, ", \"rounds\": %u, \"predicted_now_iops\": ", a->rounds);
			jnum(f, a->now_iops);
			fputs(", \"ratio\": ", f);
			jnum(f, a->ratio);
			fputs(", \"iops_error_pct\": ", f);
			jnum(f, err_pct(a->now_iops, a->m_iops));
			fputs(", \"lat_mean_error_pct\": ", f);
			jnum(f, err_pct(a->perf.mean_us, a->m_mean_us));
			fputc('}', f);
		} else {
			fputs("null", f);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
}

/* A bar chart of one measure over the first n candidates (predicted, and
   measured beside it when verified). */
static int bar_chart(struct bench_report *rep, const struct plan_run *r, unsigned n,
		     const char *title, const char *ylabel, enum svg_unit unit,
		     double (*pred)(const struct plan_answer *), double (*meas)(const struct plan_answer *),
		     const char *const *cat, char *err, size_t errlen)
{
	double *y = calloc(2 * (size_t)n, sizeof(double));
	if (!y)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		y[i] = pred(&r->ans[i]);
		y[n + i] = meas && r->ans[i].verified ? meas(&r->ans[i]) : NAN;
	}
	struct svg_series s[2] = {
		{ .name = "predicted", .n = n, .y = y, .color = -1 },
		{ .name = "measured", .n = n, .y = y + n, .color = -1 },
	};
	struct svg_chart c = {
		.kind = SVG_BAR, .title = title, .x = { .label = "candidate" },
		.y = { .label = ylabel, .scale = SVG_LINEAR, .unit = unit },
		.ncat = n, .cat = cat, .nseries = meas && r->verified ? 2 : 1, .series = s,
		.palette = SVG_PAL_CATEGORY,
	};
	int rc = bench_report_add_chart(rep, &c, NULL, err, errlen);
	free(y);
	return rc;
}

static double p_iops(const struct plan_answer *a) { return a->perf.iops; }
static double m_iops(const struct plan_answer *a) { return a->m_iops; }
static double p_mean(const struct plan_answer *a) { return a->perf.mean_us * 1e3; }
static double m_mean(const struct plan_answer *a) { return a->m_mean_us * 1e3; }
static double p_p99(const struct plan_answer *a) { return a->perf.p99_us * 1e3; }
static double m_p99(const struct plan_answer *a) { return a->m_p99_us * 1e3; }
static double p_loss(const struct plan_answer *a) { return a->loss_known ? 100 * a->loss_prob : NAN; }
static double p_cap(const struct plan_answer *a) { return (double)a->usable_bytes; }

/* The best-ranked candidate of each level side by side: the top rows are
   often variants of one level, and the question is also "which level". */
static int best_per_level(struct bench_report *rep, const struct plan_run *r, char *err,
			  size_t errlen)
{
	char names[PLAN_MAX_LEVELS * 2][80];
	const char *cat[PLAN_MAX_LEVELS * 2];
	double iops[PLAN_MAX_LEVELS * 2], lat[PLAN_MAX_LEVELS * 2];
	int seen[PLAN_MAX_LEVELS * 2];
	unsigned n = 0;
	for (unsigned i = 0; i < r->nans && n < PLAN_MAX_LEVELS * 2; i++) {
		bool dup = false;
		for (unsigned k = 0; k < n && !dup; k++)
			dup = seen[k] == r->ans[i].c.level;
		if (dup)
			continue;
		seen[n] = r->ans[i].c.level;
		cat[n] = plan_cand_name(&r->ans[i], names[n], sizeof(names[n]));
		iops[n] = r->ans[i].perf.iops;
		lat[n] = r->ans[i].perf.mean_us * 1e3;
		n++;
	}
	if (n < 2)
		return 0;
	struct svg_series s = { .name = "predicted IOPS", .n = n, .y = iops, .color = -1 };
	struct svg_chart c = {
		.kind = SVG_BAR, .title = "The best of each level", .subtitle = "IOPS",
		.x = { .label = "candidate" }, .y = { .label = "IOPS", .unit = SVG_UNIT_SI },
		.ncat = n, .cat = cat, .nseries = 1, .series = &s, .palette = SVG_PAL_CATEGORY,
	};
	int rc = bench_report_add_chart(rep, &c, NULL, err, errlen);
	struct svg_series sl = { .name = "predicted mean latency", .n = n, .y = lat, .color = -1 };
	c.subtitle = "mean latency";
	c.y = (struct svg_axis){ .label = "latency", .unit = SVG_UNIT_NS };
	c.series = &sl;
	return rc ? rc : bench_report_add_chart(rep, &c, NULL, err, errlen);
}

int plan_write_html(const struct plan_run *r, const char *path, char *err, size_t errlen)
{
	struct bench_report *rep;
	int rc = bench_report_new(&rep, "uraid plan", err, errlen);
	if (rc)
		return rc;
	unsigned n = r->nans < r->top ? r->nans : r->top;
	if (n > SVG_MAX_CATEGORIES)
		n = SVG_MAX_CATEGORIES;
	if (r->verified > n)
		n = r->verified;
	char (*names)[80] = calloc(n ? n : 1, sizeof(*names));
	const char **cat = calloc(n ? n : 1, sizeof(char *));
	char line[512], b[32];
	if (!names || !cat) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < n; i++)
		cat[i] = plan_cand_name(&r->ans[i], names[i], sizeof(names[i]));
	snprintf(line, sizeof(line), "%s, %u outstanding I/O%s", r->wl.name,
		 r->wl.iodepth * (r->wl.qd_per_drive ? 1 : r->wl.numjobs),
		 r->wl.qd_per_drive ? " per member" : " in all");
	rc = bench_report_add_info(rep, "workload", line, err, errlen);
	snprintf(line, sizeof(line), "%u (%s)", r->pool.n, r->drive_source);
	for (unsigned i = 0; !rc && i < r->nmodels; i++) {
		size_t l = strlen(line);
		snprintf(line + l, sizeof(line) - l, "%s %u x %s %s", i ? "," : ":",
			 r->model_count[i], r->models[i].name,
			 cli_bytes(r->models[i].capacity_bytes, b, sizeof(b)));
	}
	if (!rc)
		rc = bench_report_add_info(rep, "drives", line, err, errlen);
	snprintf(line, sizeof(line), "%s usable, survive %u failure%s, %.1f years, rebuild at "
		 "most %.0f MiB/s per member", r->need.capacity_bytes ?
		 cli_bytes(r->need.capacity_bytes, b, sizeof(b)) : "any",
		 r->need.failures, r->need.failures == 1 ? "" : "s", r->need.years,
		 r->need.rebuild_mib_s);
	if (!rc)
		rc = bench_report_add_info(rep, "need", line, err, errlen);
	snprintf(line, sizeof(line), "%u core%s; parity (4 data chunks) XOR %.0f, P+Q %.0f MiB/s "
		 "per CPU%s; model: docs/planner.md", r->host.cores, r->host.cores == 1 ? "" : "s",
		 plan_host_parity_mib_s(&r->host, 4, 1), plan_host_parity_mib_s(&r->host, 4, 2),
		 r->parity_measured ? " (measured at plan time)" : "");
	if (!rc)
		rc = bench_report_add_info(rep, "host", line, err, errlen);
	if (!rc && n)
		rc = bench_report_add_figure(rep, "best fit, predicted", r->ans[0].perf.iops,
					     SVG_UNIT_SI, "IOPS", err, errlen);
	if (!rc)
		rc = bench_report_add_heading(rep, r->verified ? "Predicted against measured" :
					      "Predicted", err, errlen);
	if (!rc && n)
		rc = bar_chart(rep, r, n, "IOPS", "IOPS", SVG_UNIT_SI, p_iops, m_iops, cat, err,
			       errlen);
	if (!rc && n)
		rc = bar_chart(rep, r, n, "Mean latency", "latency", SVG_UNIT_NS, p_mean, m_mean,
			       cat, err, errlen);
	if (!rc && n)
		rc = bar_chart(rep, r, n, "p99 latency", "latency", SVG_UNIT_NS, p_p99, m_p99,
			       cat, err, errlen);
	if (!rc)
		rc = best_per_level(rep, r, err, errlen);
	if (!rc && n)
		rc = bench_report_add_heading(rep, "Capacity and reliability", err, errlen);
	if (!rc && n)
		rc = bar_chart(rep, r, n, "Usable capacity", "usable", SVG_UNIT_BYTES, p_cap,
			       NULL, cat, err, errlen);
	if (!rc && n && r->ans[0].loss_known)
		rc = bar_chart(rep, r, n, "Chance of losing data over the service life", "%",
			       SVG_UNIT_PLAIN, p_loss, NULL, cat, err, errlen);
	static const char *const hdr[] = { "#", "candidate", "usable", "IOPS", "MiB/s",
		"mean µs", "p99 µs", "bound", "rebuild", "loss %", "measured IOPS",
		"error % (at its load)", "why" };
	if (!rc)
		rc = bench_report_add_table(rep, "Candidates, ranked", 13, hdr, err, errlen);
	for (unsigned i = 0; !rc && i < n; i++) {
		const struct plan_answer *a = &r->ans[i];
		char c[13][192];
		snprintf(c[0], 192, "%u", i + 1);
		snprintf(c[1], 192, "%s", cat[i]);
		cli_bytes(a->usable_bytes, c[2], 192);
		snprintf(c[3], 192, "%.0f", a->perf.iops);
		snprintf(c[4], 192, "%.1f", a->perf.mib_s);
		snprintf(c[5], 192, "%.1f", a->perf.mean_us);
		snprintf(c[6], 192, "%.1f", a->perf.p99_us);
		snprintf(c[7], 192, "%s", a->perf.bound);
		human_s(a->rebuild_s ? a->rebuild_s : NAN, c[8], 192);
		snprintf(c[9], 192, a->loss_known ? "%.2g" : "-", 100 * a->loss_prob);
		snprintf(c[10], 192, a->verified ? "%.0f" : "-", a->m_iops);
		snprintf(c[11], 192, a->verified ? "%+.1f" : "-", err_pct(a->now_iops, a->m_iops));
		snprintf(c[12], 192, "%s", a->reason);
		const char *cells[13];
		for (unsigned k = 0; k < 13; k++)
			cells[k] = c[k];
		rc = bench_report_add_row(rep, cells, err, errlen);
	}
	if (!rc)
		rc = bench_report_write_html(rep, path, err, errlen);
out:
	free(names);
	free(cat);
	bench_report_free(rep);
	return rc;
}
