// SPDX-License-Identifier: MIT
/*
 * The planner's models against cases computed by hand: member I/Os per
 * client I/O (RAID 5 small write = 4, RAID 6 = 6, reconstruct-write on
 * narrow rows), where reads land (RAID 10 spreads them over every member),
 * full-stripe writes (N/(N-1) bytes per byte), capacity and efficiency,
 * queueing on a flat drive, the reliability arithmetic, and the drive
 * model's parsers (good and bad input). Deterministic: no seed is used.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../support/check.h"
#include "plan/drive.h"
#include "plan/model.h"
#include "plan/reliability.h"
#include "plan/search.h"

#define GIB (1ull << 30)
#define NEAR(a, b, rel) (fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)) + 1e-12)

static struct plan_shape *shape(int level, const char *layout, unsigned n, uint32_t chunk,
				uint64_t bytes)
{
	static struct plan_shape s;
	uint64_t mb[64];
	char err[200];
	struct plan_candidate c = { .level = level, .members = n, .chunk_bytes = chunk,
				    .layout = uraid_layout_default(level) };
	if (layout && uraid_layout_parse(level, layout, &c.layout))
		return NULL;
	for (unsigned i = 0; i < n; i++)
		mb[i] = bytes;
	if (plan_shape_init(&s, &c, mb, err, sizeof(err))) {
		fprintf(stderr, "shape %d x%u: %s\n", level, n, err);
		return NULL;
	}
	return &s;
}

static void test_member_io(void)
{
	struct plan_member_io io;
	struct plan_shape *s;

	/* RAID 5, 4 members: a 4 KiB write costs 2 reads either way (its chunk and
	   the parity, or the row's 2 other chunks): on the tie the engine
	   reconstructs, reading the 2 other chunks, and writes data and parity */
	s = shape(5, NULL, 4, 64 << 10, GIB);
	CHECK(s, "raid5 x4");
	plan_member_io(s, 4096, false, false, &io);
	CHECK(io.reads == 2 && io.writes == 2 && !io.rmw, "raid5 x4 small write: %g reads %g "
	      "writes, rmw %d", io.reads, io.writes, io.rmw);
	CHECK(io.phases == 2, "raid5 reads then writes: %u phases", io.phases);
	/* RAID 5, 3 members: the other chunk of the row is one read (reconstruct) */
	s = shape(5, NULL, 3, 64 << 10, GIB);
	plan_member_io(s, 4096, false, false, &io);
	CHECK(io.reads == 1 && io.writes == 2 && !io.rmw, "raid5 x3: %g+%g", io.reads, io.writes);
	/* RAID 6, 8 members: read-modify-write, 3 reads and 3 writes */
	s = shape(6, NULL, 8, 64 << 10, GIB);
	plan_member_io(s, 4096, false, false, &io);
	CHECK(io.reads == 3 && io.writes == 3 && io.rmw, "raid6 x8: %g+%g", io.reads, io.writes);
	s = shape(6, NULL, 6, 64 << 10, GIB);
	plan_member_io(s, 4096, false, false, &io);
	CHECK(io.reads + io.writes == 6, "raid6 x6: %g", io.reads + io.writes);
	/* a whole row written: no reads */
	s = shape(5, NULL, 5, 64 << 10, GIB);
	plan_member_io(s, 256 << 10, false, false, &io);
	CHECK(io.reads == 0 && io.writes == 5, "raid5 x5 full row: %g+%g", io.reads, io.writes);
	/* reads: one member I/O, any level */
	plan_member_io(s, 4096, true, false, &io);
	CHECK(io.reads == 1 && io.writes == 0, "raid5 read: %g", io.reads);
	/* RAID 1: a write on every member; RAID 0 one */
	s = shape(1, NULL, 3, 0, GIB);
	plan_member_io(s, 4096, false, false, &io);
	CHECK(io.writes == 3 && io.reads == 0, "raid1 x3 write: %g", io.writes);
	s = shape(0, NULL, 4, 64 << 10, GIB);
	plan_member_io(s, 4096, false, false, &io);
	CHECK(io.writes == 1, "raid0 write: %g", io.writes);
	/* an I/O over two chunks is two member I/Os */
	plan_member_io(s, 128 << 10, true, false, &io);
	CHECK(io.reads == 2, "raid0 128K read on 64K chunks: %g", io.reads);
}

static void test_spread(void)
{
	struct plan_member_io io;
	static const char *const layouts[] = { "n2", "f2", "o2" };
	for (unsigned l = 0; l < 3; l++) {
		for (unsigned n = 2; n <= 5; n++) {
			struct plan_shape *s = shape(10, layouts[l], n, 64 << 10, GIB);
			CHECK(s, "raid10 %s x%u", layouts[l], n);
			if (!s)
				continue;
			plan_member_io(s, 4096, true, false, &io);
			for (unsigned i = 0; i < n; i++)
				CHECK(NEAR(io.slot_reads[i], 1.0 / n, 1e-9), "raid10 %s x%u: member %u "
				      "gets %g of the reads, not 1/%u", layouts[l], n, i,
				      io.slot_reads[i], n);
			plan_member_io(s, 4096, false, false, &io);
			CHECK(NEAR(io.writes, 2, 1e-12), "raid10 %s write: %g", layouts[l], io.writes);
		}
	}
	/* RAID 4: no data on the parity member, every parity write there */
	struct plan_shape *s = shape(4, NULL, 4, 64 << 10, GIB);
	plan_member_io(s, 4096, true, false, &io);
	CHECK(io.slot_reads[3] == 0 && NEAR(io.slot_reads[0], 1.0 / 3, 1e-9),
	      "raid4 reads: %g %g", io.slot_reads[0], io.slot_reads[3]);
	/* RAID 5: parity rotates, so every member takes a quarter */
	s = shape(5, NULL, 4, 64 << 10, GIB);
	plan_member_io(s, 4096, false, false, &io);
	for (unsigned i = 0; i < 4; i++)
		CHECK(NEAR(io.slot_reads[i] + io.slot_writes[i], 1, 1e-9), "raid5 member %u: %g",
		      i, io.slot_reads[i] + io.slot_writes[i]);
}

static void test_full_stripe(void)
{
	struct plan_member_io io;
	for (unsigned n = 3; n <= 8; n++) {
		struct plan_shape *s = shape(5, NULL, n, 64 << 10, GIB);
		plan_member_io(s, 128 << 10, false, true, &io);
		CHECK(io.reads == 0, "raid5 x%u stream: %g reads", n, io.reads);
		CHECK(NEAR(io.write_bytes / (128 << 10), (double)n / (n - 1), 1e-12),
		      "raid5 x%u stream: %g bytes per byte, not %u/%u", n,
		      io.write_bytes / (128 << 10), n, n - 1);
	}
	struct plan_shape *s = shape(6, NULL, 6, 64 << 10, GIB);
	plan_member_io(s, 256 << 10, false, true, &io);
	CHECK(NEAR(io.write_bytes / (256 << 10), 1.5, 1e-12), "raid6 x6 stream: %g",
	      io.write_bytes / (256 << 10));
}

static void test_capacity(void)
{
	struct { int level; unsigned n; uint64_t want; } t[] = {
		{ 0, 4, 4 * GIB }, { 1, 3, GIB }, { 4, 4, 3 * GIB }, { 5, 4, 3 * GIB },
		{ 6, 6, 4 * GIB }, { 10, 4, 2 * GIB },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct plan_shape *s = shape(t[i].level, NULL, t[i].n, t[i].level == 1 ? 0 : 64 << 10,
					     GIB);
		CHECK(s && s->usable_bytes == t[i].want, "level %d x%u: %llu usable, want %llu",
		      t[i].level, t[i].n, s ? (unsigned long long)s->usable_bytes : 0,
		      (unsigned long long)t[i].want);
	}
	/* efficiency counts the spare: RAID 5 of 4 and a spare is 3/5 */
	struct plan_drive d;
	char err[200];
	CHECK(!plan_drive_parse_sheet("read_iops=1000,write_iops=1000,read_mib_s=100,"
				      "write_mib_s=100,capacity=1G,price=50", &d, err, sizeof(err)),
	      "sheet: %s", err);
	struct plan_pool pool = { .n = 5 };
	for (unsigned i = 0; i < 5; i++)
		pool.drive[i] = &d;
	struct plan_need need = { .failures = 1, .rebuild_mib_s = 100, .years = 5 };
	struct plan_workload w = { .nlines = 1, .iodepth = 1, .numjobs = 1,
				   .line = { { .bytes = 4096, .weight = 100, .read_pct = 100,
					       .random_pct = 100 } } };
	struct plan_host h = { .cores = 1 };
	struct plan_candidate c = { .level = 5, .layout = uraid_layout_default(5), .members = 4,
				    .spares = 1, .chunk_bytes = 64 << 10 };
	struct plan_answer a;
	CHECK(!plan_evaluate(&pool, &need, &w, &h, &c, &a, err, sizeof(err)), "%s", err);
	CHECK(NEAR(a.efficiency, 0.6, 1e-9), "efficiency %g", a.efficiency);
	/* 250 for 3 GiB = 3.221 TB/1000: 250 / 3.221225472 per TB */
	CHECK(NEAR(a.cost_per_tb, 250 / (3.0 * GIB / 1e12), 1e-9), "cost %g", a.cost_per_tb);
	/* 1 GiB at 100 MiB/s: 10.24 s */
	CHECK(NEAR(a.rebuild_s, 10.24, 1e-9), "rebuild %g s", a.rebuild_s);

	/* the ranking: the fitting part first; each answer's IOPS at most 1/0.98
	   of any earlier one's (groups of equals within 2 % of their head);
	   within a group the cheaper first */
	struct plan_space sp = { .nlevels = 6, .level = { 0, 1, 4, 5, 6, 10 }, .nchunks = 2,
				 .chunk_bytes = { 64u << 10, 512u << 10 }, .max_spares = 1 };
	struct plan_answer *v = NULL;
	unsigned nv = 0, dropped = 0;
	char why[160];
	w.iodepth = 32;
	CHECK(!plan_search(&pool, &need, &w, &h, &sp, &v, &nv, &dropped, why, sizeof(why), err,
			   sizeof(err)) && nv > 10, "search: %u (%s)", nv, err);
	for (unsigned i = 1; v && i < nv; i++) {
		CHECK(v[i - 1].fits || !v[i].fits, "unfit %u before fit %u", i - 1, i);
		if (v[i].fits != v[i - 1].fits)
			continue;
		for (unsigned k = 0; k < i; k++)
			if (v[k].fits == v[i].fits)
				CHECK(v[i].perf.iops <= v[k].perf.iops / 0.98 * (1 + 1e-12),
				      "#%u %g IOPS after #%u %g", i, v[i].perf.iops, k, v[k].perf.iops);
		if (v[i].perf.iops > v[i - 1].perf.iops)      /* in one group: a tie-break */
			CHECK(v[i].cost_per_tb >= v[i - 1].cost_per_tb, "#%u cheaper than #%u in "
			      "its group", i, i - 1);
	}
	free(v);
}

static void test_queueing(void)
{
	/* a flat drive: 10000 IOPS at any queue depth, so 100 µs per I/O alone */
	struct plan_drive d;
	char err[200];
	CHECK(!plan_drive_parse_sheet("read_iops=10000,write_iops=10000,read_mib_s=1000,"
				      "write_mib_s=1000,capacity=1G", &d, err, sizeof(err)), "%s", err);
	const struct plan_drive *slot[4] = { &d, &d, &d, &d };
	struct plan_workload w = { .nlines = 1, .iodepth = 4, .numjobs = 1,
				   .line = { { .bytes = 4096, .weight = 100, .read_pct = 100,
					       .random_pct = 100 } } };
	struct plan_host h = { .cores = 1 };
	struct plan_perf p;
	struct plan_shape *s = shape(0, NULL, 4, 64 << 10, GIB);
	CHECK(!plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.iops, 40000, 1e-9) && NEAR(p.mean_us, 100, 1e-9), "raid0 x4 QD4 read: "
	      "%g IOPS %g us, want 40000 and 100", p.iops, p.mean_us);
	/* RAID 5 writes: 4 member I/Os each, so a quarter of it */
	w.line[0].read_pct = 0;
	s = shape(5, NULL, 4, 64 << 10, GIB);
	CHECK(!plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.iops, 10000, 1e-9), "raid5 x4 QD4 write: %g IOPS, want 10000", p.iops);
	CHECK(NEAR(p.member_ios, 4, 1e-12), "raid5 member I/Os %g", p.member_ios);
	/* the host: 10 µs per member I/O on one core caps RAID 5 writes at 25000 */
	struct plan_drive fast;
	CHECK(!plan_drive_parse_sheet("read_iops=1e8,write_iops=1e8,read_mib_s=1e6,"
				      "write_mib_s=1e6,capacity=1G", &fast, err, sizeof(err)), "%s", err);
	const struct plan_drive *fslot[4] = { &fast, &fast, &fast, &fast };
	h.cpu_us_per_member_write = h.cpu_us_per_member_read = 10;
	CHECK(!plan_predict(s, fslot, &w, &h, &p), "predict");
	CHECK(NEAR(p.iops, 25000, 1e-9) && !strcmp(p.bound, "host CPU"), "host-bound raid5: "
	      "%g IOPS (%s), want 25000", p.iops, p.bound);

	/* every CPU term in CPU time, one share factor: 5 µs per client I/O,
	   10 per member I/O (4 of them), 30 per parity write, the XOR of a
	   reconstruct-write (3 chunks of 4 KiB, 12288 bytes, at the XOR rate
	   for 3 data chunks, 3000 MiB/s: 3.90625 µs) and half a CPU: by hand
	   5 + 40 + 30 + 3.90625 = 78.90625 µs, 0.5e6 / that IOPS */
	h.cpu_us_per_io = 5;
	h.cpu_us_per_parity_write = 30;
	h.cpu_share = 0.5;
	h.parity_rate[0][3] = 3000;     /* XOR, 3 data chunks */
	h.parity_rate[1][3] = 1e-9;     /* P+Q must not be used for RAID 5 */
	h.parity_rate[0][4] = 1e-9;     /* nor another data count */
	CHECK(!plan_predict(s, fslot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 78.90625, 1e-9) && NEAR(p.iops, 0.5e6 / 78.90625, 1e-9),
	      "raid5 cpu %g us (want 78.90625), %g IOPS", p.cpu_us, p.iops);
	/* RAID 0 writes pay no parity work: 5 + 10 */
	struct plan_shape *s0 = shape(0, NULL, 4, 64 << 10, GIB);
	CHECK(!plan_predict(s0, fslot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 15, 1e-9), "raid0 cpu %g us, want 15", p.cpu_us);
	/* reads on RAID 5 pay no parity work either */
	w.line[0].read_pct = 100;
	s = shape(5, NULL, 4, 64 << 10, GIB);
	CHECK(!plan_predict(s, fslot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 15, 1e-9), "raid5 read cpu %g us, want 15", p.cpu_us);
	/* an unmeasured data count between two measured: linear in d */
	struct plan_host t = { 0 };
	t.parity_rate[1][4] = 100;
	t.parity_rate[1][8] = 300;
	CHECK(NEAR(plan_host_parity_mib_s(&t, 6, 2), 200, 1e-9) &&
	      plan_host_parity_mib_s(&t, 6, 1) == 0, "interpolated P+Q %g",
	      plan_host_parity_mib_s(&t, 6, 2));
}

static void test_reliability(void)
{
	char err[200];
	struct plan_rel_out o;
	struct plan_rel_in in = { .afr = 0.02, .ure = 1e-15, .window_h = 10, .years = 5,
				  .member_used_bytes = 1000000000000ull };
	/* RAID 5 x4, by hand: lambda = -ln 0.98 = 0.0202027 a year; one given
	   member fails in 10 h with p = 1 - exp(-lambda 10/8766) = 2.30464e-5;
	   the 3 survivors hold 2.4e13 bits, an error among them 1 - exp(-0.024)
	   = 0.0237143; loss per first failure 0.0237143 + 0.9762857 x 3p =
	   0.0237818; 4 lambda times that = 1.92183e-3 a year; over 5 years
	   1 - exp(-5 x 1.92183e-3) = 9.5631e-3 */
	struct plan_candidate c = { .level = 5, .layout = uraid_layout_default(5), .members = 4,
				    .chunk_bytes = 64 << 10 };
	CHECK(!plan_reliability(&c, &in, &o, err, sizeof(err)), "%s", err);
	CHECK(NEAR(o.loss_per_year, 1.92183e-3, 1e-4), "raid5 loss/year %g", o.loss_per_year);
	CHECK(NEAR(o.loss_prob, 9.5631e-3, 1e-4), "raid5 loss over 5 years %g", o.loss_prob);
	/* RAID 0 x2: any failure; 1 - 0.98^10 = 0.182927 */
	c = (struct plan_candidate){ .level = 0, .layout = uraid_layout_default(0), .members = 2,
				     .chunk_bytes = 64 << 10 };
	CHECK(!plan_reliability(&c, &in, &o, err, sizeof(err)), "%s", err);
	CHECK(NEAR(o.loss_prob, 0.182927, 1e-5), "raid0 loss %g", o.loss_prob);
	double raid5_with_ure = o.loss_per_year;
	/* RAID 10 n2 x4: a second failure is fatal only on the partner, so
	   without read errors it is a third of RAID 5 x4's second-failure term
	   (to first order: RAID 10 also counts a third failure after a second
	   one it survived) */
	in.ure = 0;
	struct plan_rel_out o5, o10;
	c = (struct plan_candidate){ .level = 5, .layout = uraid_layout_default(5), .members = 4,
				     .chunk_bytes = 64 << 10 };
	CHECK(!plan_reliability(&c, &in, &o5, err, sizeof(err)), "%s", err);
	c.level = 10;
	c.layout = URAID_RAID10_DEFAULT;
	CHECK(!plan_reliability(&c, &in, &o10, err, sizeof(err)), "%s", err);
	CHECK(NEAR(o10.loss_per_year * 3, o5.loss_per_year, 1e-3), "raid10 %g x3 vs raid5 %g",
	      o10.loss_per_year, o5.loss_per_year);
	/* RAID 6 survives a read error during a single rebuild */
	in.ure = 1e-15;
	c = (struct plan_candidate){ .level = 6, .layout = uraid_layout_default(6), .members = 4,
				     .chunk_bytes = 64 << 10 };
	CHECK(!plan_reliability(&c, &in, &o, err, sizeof(err)), "%s", err);
	CHECK(o.loss_per_year < raid5_with_ure / 100, "raid6 %g vs raid5 %g",
	      o.loss_per_year, raid5_with_ure);
}

static void test_parsers(void)
{
	struct plan_drive d;
	char err[200];
	static const char *const bad_sheets[] = {
		"read_iops=1000",                                   /* missing keys */
		"read_iops=x,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=1G",
		"read_iops=-5,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=1G",
		"read_iops=1,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=1G,colour=red",
		"read_iops=1,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=lots",
		"read_iops=1,write_iops=1,read_mib_s=1,write_mib_s=1,capacity=1G,afr=2",
		"read_iops=1,write_iops=1,read_mib_s=inf,write_mib_s=1,capacity=1G",
		"read_iops",
	};
	for (unsigned i = 0; i < sizeof(bad_sheets) / sizeof(bad_sheets[0]); i++)
		CHECK(plan_drive_parse_sheet(bad_sheets[i], &d, err, sizeof(err)) == -EINVAL,
		      "accepted %s", bad_sheets[i]);
	CHECK(!plan_drive_parse_sheet("read_iops=77000,write_iops=65500,read_mib_s=489,"
				      "write_mib_s=450,capacity=480GB,afr=0.44%,ure=1e-16,"
				      "read_lat_us=100", &d, err, sizeof(err)), "%s", err);
	CHECK(d.capacity_bytes == 480000000000ull && NEAR(d.afr, 0.0044, 1e-12), "sheet %llu %g",
	      (unsigned long long)d.capacity_bytes, d.afr);
	struct plan_drive_at at;
	plan_curve_at(&d.rand_read, 1, &at);
	CHECK(NEAR(at.iops, 10000, 1e-9) && NEAR(at.mean_us, 100, 1e-9), "qd1 %g %g", at.iops,
	      at.mean_us);
	plan_curve_at(&d.rand_read, 64, &at);
	CHECK(NEAR(at.iops, 77000, 1e-9), "qd64 %g", at.iops);

	const char *good =
		"{\"uraid_drive_model\": 1, \"name\": \"ssd\", \"path\": \"/dev/x\", "
		"\"capacity_bytes\": 1073741824, \"host\": \"h\", \"timestamp\": \"t\", "
		"\"runtime_s\": 1, \"random_read_4k\": [{\"qd\":1,\"iops\":1000,\"mean_us\":1000,"
		"\"p99_us\":2000},{\"qd\":4,\"iops\":3000,\"mean_us\":1333,\"p99_us\":3000}], "
		"\"random_write_4k\": [{\"qd\":1,\"iops\":500,\"mean_us\":2000,\"p99_us\":4000}], "
		"\"mixed_70_30_4k\": [], \"seq_read\": [{\"bs\":131072,\"mib_s\":100},"
		"{\"bs\":1048576,\"mib_s\":150}], \"seq_write\": [{\"bs\":131072,\"mib_s\":90}], "
		"\"afr\": null, \"ure\": 1e-15}";
	unsigned nd = 0;
	CHECK(!plan_drive_parse_json(good, strlen(good), &d, 1, &nd, err, sizeof(err)) && nd == 1,
	      "%s", err);
	CHECK(d.rand_read.n == 2 && d.seq_read_mib_s == 150 && d.afr < 0 && d.ure == 1e-15,
	      "json: %u points, %g MiB/s, afr %g", d.rand_read.n, d.seq_read_mib_s, d.afr);
	plan_curve_at(&d.rand_read, 2, &at);
	CHECK(NEAR(at.iops, 2000, 1e-9), "interpolated at qd 2: %g", at.iops);
	static const char *const bad_json[] = {
		"{\"uraid_drive_model\": 2}",
		"[1,2]",
		"{\"uraid_drive_model\": 1, \"capacity_bytes\": 1073741824, \"random_read_4k\": "
		"[{\"qd\":1,\"iops\":-1,\"mean_us\":1}]}",
		"{\"uraid_drive_model\": 1, \"capacity_bytes\": 1073741824, \"random_read_4k\": "
		"[{\"qd\":4,\"iops\":1,\"mean_us\":1},{\"qd\":2,\"iops\":1,\"mean_us\":1}]}",
		"{\"uraid_drive_model\": 1, \"capacity_bytes\": -1}",
		"{\"uraid_drive_model\": 1, \"capacity_bytes\": 1e300}",
		"{\"uraid_drive_model\": 1, \"capacity_bytes\": 1073741824, \"random_read_4k\": "
		"[{\"qd\":1,\"iops\":1,\"mean_us\":1}], \"random_write_4k\": [{\"qd\":1,\"iops\":1,"
		"\"mean_us\":1}], \"seq_read\": [{\"bs\":131072,\"mib_s\":1}], \"seq_write\": "
		"[{\"bs\":131072,\"mib_s\":1}], \"afr\": 7}",
		"{\"uraid_drive_model\": 1",
	};
	for (unsigned i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++)
		CHECK(plan_drive_parse_json(bad_json[i], strlen(bad_json[i]), &d, 1, &nd, err,
					    sizeof(err)) < 0 && nd == 0, "accepted json %u", i);

	/* bench --characterise of several devices: a list, one model per device */
	size_t gl = strlen(good);
	char *list = malloc(2 * gl + 8);
	struct plan_drive two[3];
	CHECK(list, "malloc");
	if (!list)
		return;
	snprintf(list, 2 * gl + 8, "[%s, %s]", good, good);
	memcpy(strstr(list + gl, "\"ssd\""), "\"hdd\"", 5);
	CHECK(!plan_drive_parse_json(list, strlen(list), two, 3, &nd, err, sizeof(err)) &&
	      nd == 2 && !strcmp(two[0].name, "ssd") && !strcmp(two[1].name, "hdd") &&
	      two[1].rand_read.n == 2, "list: %u models (%s)", nd, err);
	CHECK(plan_drive_parse_json(list, strlen(list), two, 1, &nd, err, sizeof(err)) < 0 &&
	      nd == 0, "a list longer than the room accepted");
	snprintf(list, 2 * gl + 8, "[%s, {\"uraid_drive_model\": 1}]", good);
	CHECK(plan_drive_parse_json(list, strlen(list), two, 3, &nd, err, sizeof(err)) < 0 &&
	      strstr(err, "[1]"), "a bad element not named: %s", err);
	CHECK(plan_drive_parse_json("[]", 2, two, 3, &nd, err, sizeof(err)) < 0, "empty list");
	free(list);
}

/*
 * The host's costs as --verify measures them: a member I/O's CPU by the
 * I/Os outstanding on its member (log-linear between measured depths, flat
 * beyond) and per KiB beyond 4 KiB, the client's write apart from its
 * read, each level family's own work, and the CPU share by members in use.
 * Every figure by hand; the workloads are 4 KiB random at QD 32 on 4
 * members unless said.
 */
static void test_host_costs(void)
{
	char err[200];
	struct plan_drive fast;
	CHECK(!plan_drive_parse_sheet("read_iops=1e8,write_iops=1e8,read_mib_s=1e6,"
				      "write_mib_s=1e6,capacity=1G", &fast, err, sizeof(err)), "%s", err);
	const struct plan_drive *slot[4] = { &fast, &fast, &fast, &fast };
	struct plan_host h = { .cores = 1, .cpu_us_per_io = 2, .cpu_us_per_io_write = 3,
			       .cpu_us_per_member_read = 100, .cpu_us_per_member_write = 100 };
	h.nmember_pts[0] = h.nmember_pts[1] = 2;
	h.member_pt[0][0] = (struct plan_host_pt){ 8, 2.5 };
	h.member_pt[0][1] = (struct plan_host_pt){ 32, 1 };
	h.member_pt[1][0] = (struct plan_host_pt){ 16, 4 };
	h.member_pt[1][1] = (struct plan_host_pt){ 32, 2 };
	/* reads at 16 outstanding: halfway in log2 from 8 to 32, 1.75; flat
	   below 8 and past 32; writes at 24: 4 - 2 x (log2 24 - 4) */
	CHECK(NEAR(plan_host_member_us(&h, true, 16, 4096), 1.75, 1e-12) &&
	      NEAR(plan_host_member_us(&h, true, 4, 4096), 2.5, 1e-12) &&
	      NEAR(plan_host_member_us(&h, true, 64, 4096), 1, 1e-12) &&
	      NEAR(plan_host_member_us(&h, false, 24, 4096), 4 - 2 * (log2(24) - 4), 1e-12),
	      "member us by depth: %g %g %g %g", plan_host_member_us(&h, true, 16, 4096),
	      plan_host_member_us(&h, true, 4, 4096), plan_host_member_us(&h, true, 64, 4096),
	      plan_host_member_us(&h, false, 24, 4096));
	/* nothing measured: the single figures; no write apart: the read's */
	struct plan_host g = { .cpu_us_per_io = 5, .cpu_us_per_member_write = 7 };
	CHECK(plan_host_member_us(&g, false, 3, 4096) == 7 && plan_host_client_us(&g, false) == 5 &&
	      plan_host_share(&g, 3) == 1, "unmeasured host figures");

	uint32_t n2;
	CHECK(!uraid_layout_parse(10, "n2", &n2), "n2");
	h.cpu_share = 0.9;
	h.cpu_share_at[4] = 0.5;
	h.nown = 2;
	h.own[0] = (struct plan_host_own){ .level = 10, .layout = n2, .members = 2,
					   .has_read = true, .has_write = true,
					   .read_us = 0.25, .write_us = 1.5 };
	h.own[1] = (struct plan_host_own){ .level = 5, .layout = uraid_layout_default(5),
					   .members = 3, .has_write = true, .write_us = 6 };
	h.cpu_us_per_parity_write = 1000;   /* not for a family with its own figure */
	h.parity_rate[0][3] = 3000;
	struct plan_workload w = { .nlines = 1, .iodepth = 32, .numjobs = 1,
				   .line = { { .bytes = 4096, .weight = 100, .read_pct = 0,
					       .random_pct = 100 } } };
	struct plan_perf p;
	/* RAID 10 n2 x4 write: 2 member writes, 32 x 2 / 4 = 16 outstanding on
	   each member (4 us each); client write 3, own 1.5: 12.5 us; the share
	   at 4 members, 0.5: 40000 IOPS */
	struct plan_shape *s = shape(10, "n2", 4, 64 << 10, GIB);
	CHECK(s && !plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 12.5, 1e-9) && NEAR(p.iops, 40000, 1e-9) &&
	      !strcmp(p.bound, "host CPU"), "raid10 n2 x4 write: %g us %g IOPS (%s), want 12.5 "
	      "and 40000", p.cpu_us, p.iops, p.bound);
	/* RAID 5 x4 write: 2 reads and 2 writes in 2 phases, 32 x 4 / 2 / 4 = 16
	   outstanding on each member (reads 1.75, writes 4); client 3, own 6,
	   the XOR of 3 chunks of 4 KiB at 3000 MiB/s (3.90625):
	   3 + 3.5 + 8 + 6 + 3.90625 = 24.40625 us */
	s = shape(5, NULL, 4, 64 << 10, GIB);
	CHECK(s && !plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 24.40625, 1e-9), "raid5 x4 write: %g us, want 24.40625", p.cpu_us);
	/* RAID 0 x4, no family figure and no parity: 8 outstanding per member
	   (writes flat below 16: 4), 3 + 4; at 8 KiB with 0.25 us per KiB of
	   member write beyond 4: 3 + 4 + 1 */
	s = shape(0, NULL, 4, 64 << 10, GIB);
	CHECK(s && !plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 7, 1e-9), "raid0 x4 write: %g us, want 7", p.cpu_us);
	h.cpu_us_per_member_kib[1] = 0.25;
	w.line[0].bytes = 8192;
	CHECK(!plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 8, 1e-9), "raid0 x4 8 KiB write: %g us, want 8", p.cpu_us);
	w.line[0].bytes = 4096;
	/* reads, 8 outstanding per member (2.5 each): RAID 10 n2 x4: client 2,
	   one member read, own 0.25: 4.75; RAID 5 x4 (its family measured
	   writes only): 2 + 2.5 */
	w.line[0].read_pct = 100;
	s = shape(10, "n2", 4, 64 << 10, GIB);
	CHECK(s && !plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 4.75, 1e-9), "raid10 n2 x4 read: %g us, want 4.75", p.cpu_us);
	s = shape(5, NULL, 4, 64 << 10, GIB);
	CHECK(s && !plan_predict(s, slot, &w, &h, &p), "predict");
	CHECK(NEAR(p.cpu_us, 4.5, 1e-9), "raid5 x4 read: %g us, want 4.5", p.cpu_us);
}

int main(void)
{
	test_member_io();
	test_spread();
	test_full_stripe();
	test_capacity();
	test_queueing();
	test_host_costs();
	test_reliability();
	test_parsers();
	if (failures)
		fprintf(stderr, "test_plan_model: %d failures\n", failures);
	else
		printf("test_plan_model: ok\n");
	return failures ? 1 : 0;
}
