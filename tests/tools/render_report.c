// SPDX-License-Identifier: MIT
/*
 * Writes a sample `uraid bench` HTML report from fixed synthetic data, with
 * every chart the report offers, for tests/cli/test-bench-report.sh:
 *
 *   render_report PATH
 *
 * The numbers only look plausible (saturating curves, a RAID 5 write
 * penalty); what matters is that they are fixed, so the test knows which
 * series and how many points each chart must carry.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/report.h"

#define NQD   9                     /* 1 .. 256 */
#define NDRV  8
#define NBS   8
#define NMIX  7
#define NCFG  3
#define TS_SHORT 120
#define TS_LONG  2700               /* averaged down to 900 points by the report */

static const char *const cfg_name[NCFG] = {
	"raid0, 4 members", "raid5, 4 members", "raid10, 4 members",
};
static const double peak[NCFG] = { 310e3, 240e3, 280e3 };     /* 4 KiB random read IOPS */

struct data {
	double qd[NQD], iops[NCFG][NQD], mean[NCFG][NQD], p99[NCFG][NQD];
	double drives[NDRV], scale[NCFG][NDRV], jbod[NDRV];
	double bs[NBS], bs_mib[NCFG][NBS];
	double read_pct[NMIX], m_iops[NBS * NMIX], m_mib[NBS * NMIX];
	double ts_x[TS_LONG], ts_iops[NCFG][TS_LONG], ts_lat[NCFG][TS_LONG];
	double rb_iops[TS_LONG];
};

static void fill(struct data *d)
{
	static const double bs[NBS] = { 512, 4096, 8192, 16384, 32768, 65536, 131072, 1048576 };
	static const double mix[NMIX] = { 100, 95, 65, 50, 35, 5, 0 };

	for (int i = 0; i < NQD; i++)
		d->qd[i] = 1 << i;
	for (int c = 0; c < NCFG; c++) {
		for (int i = 0; i < NQD; i++) {
			double q = d->qd[i] * 2;        /* two workers */

			d->iops[c][i] = peak[c] * (1 - exp(-q / (12.0 + 6 * c)));
			d->mean[c][i] = q / d->iops[c][i] * 1e9;
			d->p99[c][i] = d->mean[c][i] * (2.2 + 0.3 * c) + 40e3 * c;
		}
		for (int i = 0; i < NDRV; i++) {
			double n = i + 1;

			d->scale[c][i] = c == 1 && n < 3 ? NAN :       /* RAID 5 needs 3 drives */
				fmin(n * 76e3 * (c == 2 ? 0.9 : 1) * (c == 1 ? (n - 1) / n : 1), 370e3);
		}
		for (int i = 0; i < NBS; i++)
			d->bs_mib[c][i] = fmin(bs[i] * peak[c] * 0.7 / 1048576,
					       1600 - 250 * c) * (1 - 0.15 * exp(-bs[i] / 65536));
	}
	for (int i = 0; i < NDRV; i++) {
		d->drives[i] = i + 1;
		d->jbod[i] = fmin((i + 1) * 77e3, 460e3);
	}
	for (int i = 0; i < NBS; i++)
		d->bs[i] = bs[i];
	for (int j = 0; j < NMIX; j++)
		d->read_pct[j] = mix[j];
	for (int i = 0; i < NBS; i++) {
		for (int j = 0; j < NMIX; j++) {
			double w = (100 - mix[j]) / 100, base = 240e3 / (1 + bs[i] / 16384);

			/* writes cost four I/Os on RAID 5 */
			d->m_iops[i * NMIX + j] = base / (1 - w + 4 * w);
			d->m_mib[i * NMIX + j] = d->m_iops[i * NMIX + j] * bs[i] / 1048576;
		}
	}
	for (int t = 0; t < TS_LONG; t++) {
		d->ts_x[t] = t + 1;
		for (int c = 0; c < NCFG; c++) {
			double warm = 1 + 0.35 * exp(-t / 12.0);  /* fresh drives start fast */

			d->ts_iops[c][t] = peak[c] * 0.8 * warm * (1 + 0.03 * sin(t * 0.7 + c));
			d->ts_lat[c][t] = 64 / d->ts_iops[c][t] * 1e9;
		}
		/* a rebuild from second 600 to 2100 takes its share of the drives */
		d->rb_iops[t] = 180e3 * (t >= 600 && t < 2100 ? 0.55 : 1) *
				(1 + 0.04 * sin(t * 0.011));
	}
}

static int build(struct bench_report *r, const struct data *d, char *err, size_t len)
{
	struct bench_sweep qd[NCFG], scale[NCFG], bs[NCFG], ts[NCFG], rb;
	struct bench_sweep jbod = { .name = "JBOD (each drive alone)", .n = NDRV,
				    .x = d->drives, .iops = d->jbod };
	struct bench_latency lat[NCFG];
	struct bench_matrix m = { .name = "raid5, 4 members, chunk 512 KiB", .nbs = NBS,
				  .nmix = NMIX, .bs = d->bs, .read_pct = d->read_pct,
				  .iops = d->m_iops, .mib_s = d->m_mib };
	static const char *const corners[4] = { "4 KiB random read", "4 KiB random write",
						"128 KiB seq. read", "128 KiB seq. write" };
	static const double cv[NCFG][4] = { { 302e3, 262e3, 1710, 1580 },
					     { 236e3, 41e3, 1390, 1050 },
					     { 276e3, 128e3, 1220, 790 } };
	/* the phases of the rebuild run, as cells of a time series */
	static const struct svg_mark phases[4] = {
		{ .x = 1, .label = "before the rebuild" }, { .x = 600, .label = "rebuilding" },
		{ .x = 2100, .label = "after the rebuild" }, { .x = 2701 } };
	struct svg_series cs[NCFG];
	struct svg_chart corner = { .kind = SVG_BAR, .title = "4 KiB random, side by side",
				    .subtitle = "2 workers, QD 32 each", .y = { .label = "IOPS",
				    .unit = SVG_UNIT_SI }, .ncat = 2, .cat = corners,
				    .series = cs, .nseries = NCFG };
	static const char *const hdr[5] = { "configuration", "4K rand read", "4K rand write",
					    "128K seq read", "128K seq write" };
	int rc = 0;

	for (int c = 0; c < NCFG; c++) {
		qd[c] = (struct bench_sweep){ .name = cfg_name[c], .n = NQD, .x = d->qd,
					      .iops = d->iops[c], .lat_mean_ns = d->mean[c],
					      .lat_p99_ns = d->p99[c] };
		scale[c] = (struct bench_sweep){ .name = cfg_name[c], .n = NDRV, .x = d->drives,
						 .iops = d->scale[c] };
		scale[c].name = c == 0 ? "raid0" : c == 1 ? "raid5" : "raid10";
		bs[c] = (struct bench_sweep){ .name = cfg_name[c], .n = NBS, .x = d->bs,
					      .mib_s = d->bs_mib[c] };
		ts[c] = (struct bench_sweep){ .name = cfg_name[c], .n = TS_SHORT, .x = d->ts_x,
					      .iops = d->ts_iops[c], .lat_mean_ns = d->ts_lat[c] };
		lat[c].name = cfg_name[c];
		for (int k = 0; k < BENCH_NPCT; k++)
			lat[c].ns[k] = 62e3 * (1 + c * 0.4) * pow(1.9 + 0.25 * c, k);
		cs[c] = (struct svg_series){ .name = cfg_name[c], .n = 2, .y = cv[c], .color = c };
	}
	rb = (struct bench_sweep){ .name = "raid5, 4 members, rebuilding", .n = TS_LONG,
				   .x = d->ts_x, .iops = d->rb_iops };

#define TRY(call) do { if (!rc) rc = (call); } while (0)
	TRY(bench_report_add_info(r, "host", "testhost (2 CPUs, Debian 12)", err, len));
	TRY(bench_report_add_info(r, "date", "2024-05-04 12:00:00 UTC", err, len));
	TRY(bench_report_add_info(r, "targets", "4 image files on tmpfs, 1 GiB each", err, len));
	TRY(bench_report_add_info(r, "workload", "2 workers, direct I/O, 60 s + 5 s ramp", err, len));
	TRY(bench_report_add_info(r, "note", "escaping: <b>not bold</b> & \"quoted\"", err, len));
	TRY(bench_report_add_figure(r, "4 KiB random read, raid0, QD 32", 302e3, SVG_UNIT_SI,
				    "IOPS", err, len));
	TRY(bench_report_add_figure(r, "4 KiB random write, raid5, QD 32", 41e3, SVG_UNIT_SI,
				    "IOPS", err, len));
	TRY(bench_report_add_figure(r, "128 KiB sequential read, raid0", 1710, SVG_UNIT_PLAIN,
				    "MiB/s", err, len));
	TRY(bench_report_add_figure(r, "p99.999 latency, raid5, QD 1", 2.4e6, SVG_UNIT_NS, NULL,
				    err, len));
	TRY(bench_report_add_figure(r, "rating Σ IOPS(QD)/QD, raid0", 161e3, SVG_UNIT_SI, NULL,
				    err, len));

	TRY(bench_report_add_heading(r, "Queue depth", err, len));
	TRY(bench_report_add_qd(r, "4 KiB random read, 2 workers", qd, NCFG, err, len));
	TRY(bench_report_add_heading(r, "Scaling with drive count", err, len));
	TRY(bench_report_add_scaling(r, "4 KiB random read, 2 workers × QD 32", BENCH_IOPS,
				     scale, NCFG, &jbod, err, len));
	TRY(bench_report_add_heading(r, "Block size", err, len));
	TRY(bench_report_add_bs(r, "sequential read, QD 32", BENCH_MIBS, bs, NCFG, err, len));
	TRY(bench_report_add_heading(r, "Block size × read/write mix", err, len));
	TRY(bench_report_add_matrix(r, &m, err, len));
	TRY(bench_report_add_heading(r, "Latency", err, len));
	TRY(bench_report_add_percentiles(r, "4 KiB random read, QD 1", lat, NCFG, err, len));
	TRY(bench_report_add_heading(r, "Time series", err, len));
	TRY(bench_report_add_timeseries(r, "4 KiB random write, QD 32", BENCH_IOPS, ts, NCFG,
					err, len));
	TRY(bench_report_add_timeseries_cells(r, "4 KiB random read under rebuild", BENCH_IOPS,
					      &rb, 1, phases, 4, err, len));
	TRY(bench_report_add_heading(r, "Configurations side by side", err, len));
	TRY(bench_report_add_chart(r, &corner, NULL, err, len));
	TRY(bench_report_add_table(r, "Four corners", 5, hdr, err, len));
	for (int c = 0; c < NCFG && !rc; c++) {
		char v[4][32];
		const char *row[5] = { cfg_name[c], v[0], v[1], v[2], v[3] };

		for (int k = 0; k < 4; k++)
			snprintf(v[k], sizeof(v[k]), k < 2 ? "%.0f IOPS" : "%.0f MiB/s", cv[c][k]);
		rc = bench_report_add_row(r, row, err, len);
	}
#undef TRY
	return rc;
}

int main(int argc, char **argv)
{
	struct bench_report *r;
	struct data *d;
	char err[256];
	int rc;

	if (argc != 2) {
		fprintf(stderr, "usage: render_report PATH\n");
		return 2;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return 1;
	fill(d);
	rc = bench_report_new(&r, "uraid bench: sample report", err, sizeof(err));
	if (!rc) {
		rc = build(r, d, err, sizeof(err));
		if (!rc)
			rc = bench_report_write_html(r, argv[1], err, sizeof(err));
		bench_report_free(r);
	}
	free(d);
	if (rc) {
		fprintf(stderr, "render_report: %s\n", err);
		return 1;
	}
	return 0;
}
