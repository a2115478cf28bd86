/* SPDX-License-Identifier: MIT */
/*
 * Geometry against the worked tables of reference/md-format.md, transcribed
 * verbatim: §5.1 (RAID 5 left-symmetric and the sector 500 example), §5.2
 * and §7 (RAID 5, 4 members, all 6 layouts; RAID 6, 5 members, all 14
 * layouts with the Q coefficients), §3.5 (RAID 10 examples) and §3.1 (RAID 0
 * zones of 3, 5, 5 chunks, both zone layouts).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../support/geom_test.h"

static struct uraid_geom geo;   /* large; one is enough */

/*
 * A row of a table: space-separated cells "P", "Q", "D<n>" or "D<n>^<k>".
 * A cell "D^k" (the tables' shorthand for fixed layouts) means the next
 * data chunk in order.
 */
struct cell {
	char kind;        /* 'P', 'Q', 'D' */
	long chunk;       /* data chunk number */
	int coef;         /* Q coefficient exponent, -1 if not given */
};

static int parse_row(const char *text, long stripe, unsigned d, struct cell *c, unsigned max)
{
	unsigned n = 0, seen = 0;
	const char *s = text;

	while (*s && n < max) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		c[n].coef = -1;
		c[n].chunk = -1;
		c[n].kind = *s++;
		if (c[n].kind == 'D') {
			if (*s >= '0' && *s <= '9')
				c[n].chunk = strtol(s, (char **)&s, 10);
			else
				c[n].chunk = stripe * d + seen;
			seen++;
			if (*s == '^') {
				s++;
				c[n].coef = (int)strtol(s, (char **)&s, 10);
			}
		}
		n++;
	}
	return (int)n;
}

static void init_or_fail(const struct uraid_geom_params *p)
{
	char err[200], d[160];
	int rc = uraid_geom_init(&geo, p, err, sizeof(err));

	GT_CHECK(rc == 0, "init %s: %s", gt_desc(p, d, sizeof(d)), err);
	if (rc)
		exit(1);
}

/* Check one RAID 4/5/6 table of `rows` rows against the geometry. */
static void check_r456_table(int level, uint32_t layout, unsigned n, const char *const *rows,
			     unsigned nrows, uint32_t chunk, const char *name)
{
	struct uraid_geom_params p = {
		.level = level, .layout = layout, .raid_disks = n,
		.chunk_sectors = chunk, .dev_sectors = (uint64_t)nrows * chunk + 5,
	};
	unsigned d = n - (level == 6 ? 2 : 1);
	static struct uraid_stripe st;

	init_or_fail(&p);
	for (unsigned s = 0; s < nrows; s++) {
		struct cell c[16];
		int cnt = parse_row(rows[s], s, d, c, 16);

		GT_CHECK(cnt == (int)n, "%s row %u: transcription has %d cells", name, s, cnt);
		GT_CHECK(uraid_geom_stripe(&geo, s, &st) == 0, "%s stripe(%u)", name, s);
		for (unsigned dev = 0; dev < n && (int)dev < cnt; dev++) {
			uint32_t offs[2] = { 0, chunk - 1 };

			if (c[dev].kind == 'P')
				GT_CHECK(st.p_slot == (int32_t)dev, "%s chunk %u row %u: P on %d, table says %u",
					 name, chunk, s, st.p_slot, dev);
			if (c[dev].kind == 'Q')
				GT_CHECK(st.q_slot == (int32_t)dev, "%s chunk %u row %u: Q on %d, table says %u",
					 name, chunk, s, st.q_slot, dev);
			if (c[dev].kind == 'D') {
				uint32_t k = (uint32_t)(c[dev].chunk - (long)s * d);

				GT_CHECK(k < d && st.data_slot[k] == dev,
					 "%s chunk %u row %u: D%ld should be on %u", name, chunk, s,
					 c[dev].chunk, dev);
				if (c[dev].coef >= 0)
					GT_CHECK(st.syndrome_of_slot[dev] == c[dev].coef,
						 "%s row %u: D%ld on %u has Q coefficient g^%d, table says g^%d",
						 name, s, c[dev].chunk, dev, st.syndrome_of_slot[dev],
						 c[dev].coef);
			}
			for (int o = 0; o < 2; o++) {
				struct uraid_rloc r;
				struct uraid_loc l;
				uint64_t ms = (uint64_t)s * chunk + offs[o];

				GT_CHECK(uraid_geom_reverse(&geo, dev, ms, &r) == 0, "%s reverse", name);
				if (c[dev].kind == 'D') {
					uint64_t a = (uint64_t)c[dev].chunk * chunk + offs[o];

					GT_CHECK(r.kind == URAID_CHUNK_DATA && r.array_sector == a &&
						 r.stripe == s,
						 "%s chunk %u: reverse(%u, %" PRIu64 ") = kind %d sector %" PRIu64
						 ", want data %" PRIu64, name, chunk, dev, ms, r.kind,
						 r.array_sector, a);
					GT_CHECK(uraid_geom_map(&geo, a, &l, 1) == 1 && l.slot == dev &&
						 l.sector == ms,
						 "%s chunk %u: map(%" PRIu64 ") = (%u, %" PRIu64 "), want (%u, %"
						 PRIu64 ")", name, chunk, a, l.slot, l.sector, dev, ms);
				} else {
					enum uraid_chunk_kind want = c[dev].kind == 'P' ?
						URAID_CHUNK_P : URAID_CHUNK_Q;

					GT_CHECK(r.kind == want && r.stripe == s,
						 "%s: reverse(%u, %" PRIu64 ") kind %d, want %c", name, dev,
						 ms, r.kind, c[dev].kind);
				}
			}
		}
		if (level == 6) {
			bool ddf = layout >= 8 && layout <= 10;

			GT_CHECK(st.syndrome_slots == (ddf ? n : d), "%s: %u syndrome slots", name,
				 st.syndrome_slots);
		}
	}
}

/* ---- §5.1, §5.2, §7 ---------------------------------------------------- */

struct table {
	const char *name;
	uint32_t layout;
	const char *rows[5];
};

static const struct table r5_4[] = {
	{ "left-asymmetric (0)", 0, { "D0  D1  D2  P", "D3  D4  P   D5", "D6  P   D7  D8",
				      "P   D9  D10 D11", "D12 D13 D14 P" } },
	{ "right-asymmetric (1)", 1, { "P   D0  D1  D2", "D3  P   D4  D5", "D6  D7  P   D8",
				       "D9  D10 D11 P", "P   D12 D13 D14" } },
	{ "left-symmetric (2)", 2, { "D0  D1  D2  P", "D4  D5  P   D3", "D8  P   D6  D7",
				     "P   D9  D10 D11", "D12 D13 D14 P" } },
	{ "right-symmetric (3)", 3, { "P   D0  D1  D2", "D5  P   D3  D4", "D7  D8  P   D6",
				      "D9  D10 D11 P", "P   D12 D13 D14" } },
	/* "parity-first (4): P D D D every stripe; parity-last (5): D D D P every stripe." */
	{ "parity-first (4)", 4, { "P D D D", "P D D D", "P D D D", "P D D D", "P D D D" } },
	{ "parity-last (5)", 5, { "D D D P", "D D D P", "D D D P", "D D D P", "D D D P" } },
};

/* §5.1, as printed there (identical to left-symmetric above). */
static const char *const s51[] = {
	"D0  D1  D2  P", "D4  D5  P   D3", "D8  P   D6  D7", "P   D9  D10 D11", "D12 D13 D14 P",
};

/* §5.2 */
static const char *const s52[] = {
	"Q      D0^0  D1^1  D2^2  P",
	"D3^0   D4^1  D5^2  P     Q",
	"D7^1   D8^2  P     Q     D6^0",
	"D11^2  P     Q     D9^0  D10^1",
	"P      Q     D12^0 D13^1 D14^2",
};

static const struct table r6_5[] = {
	{ "left-asymmetric (0)", 0, { "Q     D0^0  D1^1  D2^2  P", "D3^0  D4^1  D5^2  P     Q",
				      "D6^1  D7^2  P     Q     D8^0", "D9^2  P     Q     D10^0 D11^1",
				      "P     Q     D12^0 D13^1 D14^2" } },
	{ "right-asymmetric (1)", 1, { "P     Q     D0^0  D1^1  D2^2", "D3^2  P     Q     D4^0  D5^1",
				       "D6^1  D7^2  P     Q     D8^0", "D9^0  D10^1 D11^2 P     Q",
				       "Q     D12^0 D13^1 D14^2 P" } },
	{ "left-symmetric (2)", 2, { "Q     D0^0  D1^1  D2^2  P", "D3^0  D4^1  D5^2  P     Q",
				     "D7^1  D8^2  P     Q     D6^0", "D11^2 P     Q     D9^0  D10^1",
				     "P     Q     D12^0 D13^1 D14^2" } },
	{ "right-symmetric (3)", 3, { "P     Q     D0^0  D1^1  D2^2", "D5^2  P     Q     D3^0  D4^1",
				      "D7^1  D8^2  P     Q     D6^0", "D9^0  D10^1 D11^2 P     Q",
				      "Q     D12^0 D13^1 D14^2 P" } },
	/* "parity-first (4): P Q D^0 D^1 D^2      parity-last (5): D^0 D^1 D^2 P Q" */
	{ "parity-first (4)", 4, { "P Q D^0 D^1 D^2", "P Q D^0 D^1 D^2", "P Q D^0 D^1 D^2",
				   "P Q D^0 D^1 D^2", "P Q D^0 D^1 D^2" } },
	{ "parity-last (5)", 5, { "D^0 D^1 D^2 P Q", "D^0 D^1 D^2 P Q", "D^0 D^1 D^2 P Q",
				  "D^0 D^1 D^2 P Q", "D^0 D^1 D^2 P Q" } },
	{ "ddf-zero-restart (8)", 8, { "P     Q     D0^2  D1^3  D2^4", "D3^0  P     Q     D4^3  D5^4",
				       "D6^0  D7^1  P     Q     D8^4", "D9^0  D10^1 D11^2 P     Q",
				       "Q     D12^1 D13^2 D14^3 P" } },
	{ "ddf-N-restart (9)", 9, { "D0^0  D1^1  D2^2  P     Q", "D3^0  D4^1  P     Q     D5^4",
				    "D6^0  P     Q     D7^3  D8^4", "P     Q     D9^2  D10^3 D11^4",
				    "Q     D12^1 D13^2 D14^3 P" } },
	{ "ddf-N-continue (10)", 10, { "D0^0  D1^1  D2^2  Q     P", "D4^0  D5^1  Q     P     D3^4",
				       "D8^0  Q     P     D6^3  D7^4", "Q     P     D9^2  D10^3 D11^4",
				       "P     D12^1 D13^2 D14^3 Q" } },
	{ "left-asymmetric-6 (16)", 16, { "D0^0  D1^1  D2^2  P     Q", "D3^0  D4^1  P     D5^2  Q",
					  "D6^0  P     D7^1  D8^2  Q", "P     D9^0  D10^1 D11^2 Q",
					  "D12^0 D13^1 D14^2 P     Q" } },
	{ "right-asymmetric-6 (17)", 17, { "P     D0^0  D1^1  D2^2  Q", "D3^0  P     D4^1  D5^2  Q",
					   "D6^0  D7^1  P     D8^2  Q", "D9^0  D10^1 D11^2 P     Q",
					   "P     D12^0 D13^1 D14^2 Q" } },
	{ "left-symmetric-6 (18)", 18, { "D0^0  D1^1  D2^2  P     Q", "D4^0  D5^1  P     D3^2  Q",
					 "D8^0  P     D6^1  D7^2  Q", "P     D9^0  D10^1 D11^2 Q",
					 "D12^0 D13^1 D14^2 P     Q" } },
	{ "right-symmetric-6 (19)", 19, { "P     D0^0  D1^1  D2^2  Q", "D5^0  P     D3^1  D4^2  Q",
					  "D7^0  D8^1  P     D6^2  Q", "D9^0  D10^1 D11^2 P     Q",
					  "P     D12^0 D13^1 D14^2 Q" } },
	/* "parity-first-6 (20): P D^0 D^1 D^2 Q every stripe" */
	{ "parity-first-6 (20)", 20, { "P D^0 D^1 D^2 Q", "P D^0 D^1 D^2 Q", "P D^0 D^1 D^2 Q",
				       "P D^0 D^1 D^2 Q", "P D^0 D^1 D^2 Q" } },
};

static void test_raid456_tables(void)
{
	/* The tables are chunk-size independent; try the smallest and 64 KiB. */
	static const uint32_t chunks[] = { 8, 128, 1024 };
	char name[80];

	for (unsigned ci = 0; ci < 3; ci++) {
		uint32_t c = chunks[ci];

		for (unsigned i = 0; i < sizeof(r5_4) / sizeof(r5_4[0]); i++) {
			snprintf(name, sizeof(name), "RAID5 4-dev %s", r5_4[i].name);
			check_r456_table(5, r5_4[i].layout, 4, r5_4[i].rows, 5, c, name);
		}
		for (unsigned i = 0; i < sizeof(r6_5) / sizeof(r6_5[0]); i++) {
			snprintf(name, sizeof(name), "RAID6 5-dev %s", r6_5[i].name);
			check_r456_table(6, r6_5[i].layout, 5, r6_5[i].rows, 5, c, name);
		}
		check_r456_table(5, 2, 4, s51, 5, c, "§5.1 RAID5 4-dev left-symmetric");
		check_r456_table(6, 2, 5, s52, 5, c, "§5.2 RAID6 5-dev default");
		/* RAID 4: parity on the last member whatever the layout word. */
		check_r456_table(4, 0, 4, r5_4[5].rows, 5, c, "RAID4 4-dev (layout 0)");
		check_r456_table(4, 5, 4, r5_4[5].rows, 5, c, "RAID4 4-dev (layout 5)");
	}
}

/* §5.1: "array sector 500: chunk 3, off 116, stripe 1, k 0, p = 2, disk 3,
 * member sector data_offset + 128 + 116". */
static void test_sector_500(void)
{
	struct uraid_geom_params p = {
		.level = 5, .layout = URAID_LEFT_SYMMETRIC, .raid_disks = 4,
		.chunk_sectors = 128, .dev_sectors = 1 << 20,
	};
	struct uraid_loc l;
	struct uraid_rloc r;
	struct uraid_stripe st;

	init_or_fail(&p);
	GT_CHECK(uraid_geom_map(&geo, 500, &l, 1) == 1 && l.slot == 3 && l.sector == 128 + 116,
		 "§5.1 sector 500 -> (%u, %" PRIu64 "), want (3, 244)", l.slot, l.sector);
	GT_CHECK(uraid_geom_stripe(&geo, 1, &st) == 0 && st.p_slot == 2 && st.q_slot == -1 &&
		 st.data_slot[0] == 3, "§5.1 stripe 1: P %d, D3 on %u", st.p_slot, st.data_slot[0]);
	GT_CHECK(uraid_geom_reverse(&geo, 3, 244, &r) == 0 && r.kind == URAID_CHUNK_DATA &&
		 r.array_sector == 500 && r.stripe == 1, "§5.1 reverse(3, 244) = %" PRIu64,
		 r.array_sector);
	GT_CHECK(uraid_geom_chunk_left(&geo, 500) == 12, "§5.1 chunk_left(500) = %" PRIu64,
		 uraid_geom_chunk_left(&geo, 500));
}

/* ---- §3.5 RAID 10 examples (chunk units) -------------------------------- */

struct r10_example {
	const char *name;
	uint32_t layout, disks, dev_chunks;
	unsigned nrows;
	struct { unsigned row; int chunk[8]; } rows[4];
};

static const struct r10_example r10_ex[] = {
	{ "near2, 4 disks", 0x102, 4, 8, 2, { { 0, { 0, 0, 1, 1 } }, { 1, { 2, 2, 3, 3 } } } },
	{ "near2, 3 disks", 0x102, 3, 8, 3,
	  { { 0, { 0, 0, 1 } }, { 1, { 1, 2, 2 } }, { 2, { 3, 3, 4 } } } },
	{ "far2, 4 disks (dev 8 chunks)", 0x201, 4, 8, 4,
	  { { 0, { 0, 1, 2, 3 } }, { 1, { 4, 5, 6, 7 } }, { 4, { 3, 0, 1, 2 } },
	    { 5, { 7, 4, 5, 6 } } } },
	{ "offset2, 4 disks", 0x10201, 4, 8, 4,
	  { { 0, { 0, 1, 2, 3 } }, { 1, { 3, 0, 1, 2 } }, { 2, { 4, 5, 6, 7 } },
	    { 3, { 7, 4, 5, 6 } } } },
	{ "far2 + sets(0x40000), 5 disks", 0x40201, 5, 8, 2,
	  { { 0, { 0, 1, 2, 3, 4 } }, { 4, { 1, 0, 4, 2, 3 } } } },
};

static void test_raid10_examples(void)
{
	static const uint32_t chunks[] = { 8, 128 };

	for (unsigned ci = 0; ci < 2; ci++) {
		uint32_t c = chunks[ci];

		for (unsigned e = 0; e < sizeof(r10_ex) / sizeof(r10_ex[0]); e++) {
			const struct r10_example *x = &r10_ex[e];
			struct uraid_geom_params p = {
				.level = 10, .layout = x->layout, .raid_disks = x->disks,
				.chunk_sectors = c, .dev_sectors = (uint64_t)x->dev_chunks * c,
			};

			init_or_fail(&p);
			for (unsigned r = 0; r < x->nrows; r++) {
				for (unsigned dv = 0; dv < x->disks; dv++) {
					uint64_t ms = (uint64_t)x->rows[r].row * c + 3;
					uint64_t a = (uint64_t)x->rows[r].chunk[dv] * c + 3;
					struct uraid_rloc rl;
					struct uraid_loc l[8];
					int cnt, hit = -1;

					GT_CHECK(uraid_geom_reverse(&geo, dv, ms, &rl) == 0 &&
						 rl.kind == URAID_CHUNK_DATA && rl.array_sector == a,
						 "RAID10 %s chunk %u: row %u disk %u holds array %" PRIu64
						 " (kind %d), table says chunk %d", x->name, c, x->rows[r].row,
						 dv, rl.array_sector, rl.kind, x->rows[r].chunk[dv]);
					cnt = uraid_geom_map(&geo, a, l, 8);
					for (int i = 0; i < cnt; i++)
						if (l[i].slot == dv && l[i].sector == ms)
							hit = i;
					GT_CHECK(cnt == 2 && hit >= 0 && (uint32_t)hit == rl.copy,
						 "RAID10 %s chunk %u: map(chunk %d) misses row %u disk %u (copies %d, copy %d/%u)",
						 x->name, c, x->rows[r].chunk[dv], x->rows[r].row, dv, cnt, hit,
						 rl.copy);
				}
			}
		}
	}
}

/* ---- §3.1 RAID 0 zones, sizes 3, 5, 5 chunks ----------------------------- */

static void test_raid0_zones(void)
{
	uint32_t c = 16;
	/* Extra sectors that are not a whole chunk are ignored (rounded down). */
	uint64_t sizes[3] = { 3 * 16 + 7, 5 * 16, 5 * 16 + 15 };
	/* Member of chunks 9..12, per zone layout; rows 3, 3, 4, 4. */
	static const uint32_t orig[4] = { 2, 1, 2, 1 }, alt[4] = { 1, 2, 1, 2 };
	char err[200];

	for (int lay = 1; lay <= 2; lay++) {
		struct uraid_geom_params p = {
			.level = 0, .layout = (uint32_t)lay, .raid_disks = 3, .chunk_sectors = c,
			.member_sectors = sizes, .raid0_layout_flag = true,
		};

		init_or_fail(&p);
		GT_CHECK(geo.array_sectors == 13 * 16, "RAID0 3,5,5: array %" PRIu64 ", want %u",
			 geo.array_sectors, 13 * 16);
		GT_CHECK(geo.nr_zones == 2 && geo.zones[0].nb_dev == 3 && geo.zones[1].nb_dev == 2 &&
			 geo.zones[0].zone_end == 9 * 16 && geo.zones[1].dev_start == 3 * 16,
			 "RAID0 3,5,5: zones %u", geo.nr_zones);
		for (uint64_t ch = 0; ch < 13; ch++) {
			struct uraid_loc l;
			struct uraid_rloc r;
			uint32_t want_slot;
			uint64_t want_row;

			if (ch < 9) {   /* zone 0: round robin over all three */
				want_slot = (uint32_t)(ch % 3);
				want_row = ch / 3;
			} else {
				const uint32_t *tab = lay == 1 ? orig : alt;

				want_slot = tab[ch - 9];
				want_row = 3 + (ch - 9) / 2;
			}
			GT_CHECK(uraid_geom_map(&geo, ch * c + 5, &l, 1) == 1 && l.slot == want_slot &&
				 l.sector == want_row * c + 5,
				 "RAID0 3,5,5 layout %d: chunk %" PRIu64 " -> (%u, %" PRIu64
				 "), want member %u row %" PRIu64, lay, ch, l.slot, l.sector, want_slot,
				 want_row);
			GT_CHECK(uraid_geom_reverse(&geo, want_slot, want_row * c + 5, &r) == 0 &&
				 r.kind == URAID_CHUNK_DATA && r.array_sector == ch * c + 5,
				 "RAID0 3,5,5 layout %d: reverse(%u, row %" PRIu64 ") = %" PRIu64, lay,
				 want_slot, want_row, r.array_sector);
		}
	}
	/* Without feature 0x1000, or with a layout md does not know: refused. */
	{
		struct uraid_geom_params p = {
			.level = 0, .layout = 1, .raid_disks = 3, .chunk_sectors = c,
			.member_sectors = sizes,
		};

		err[0] = 0;
		GT_CHECK(uraid_geom_init(&geo, &p, err, sizeof(err)) == -EINVAL && err[0],
			 "RAID0 3,5,5 without feature 0x1000 must be refused");
		p.raid0_layout_flag = true;
		p.layout = 0;
		err[0] = 0;
		GT_CHECK(uraid_geom_init(&geo, &p, err, sizeof(err)) == -EINVAL && err[0],
			 "RAID0 3,5,5 with layout 0 must be refused");
		p.layout = 3;
		GT_CHECK(uraid_geom_init(&geo, &p, err, sizeof(err)) == -EINVAL,
			 "RAID0 3,5,5 with layout 3 must be refused");
	}
	/* 3,3,5: zone 1 has a single member, so no layout is needed. */
	{
		uint64_t s2[3] = { 3 * 16, 3 * 16, 5 * 16 };
		struct uraid_geom_params p = {
			.level = 0, .layout = 0, .raid_disks = 3, .chunk_sectors = c,
			.member_sectors = s2,
		};
		struct uraid_loc l;

		init_or_fail(&p);
		GT_CHECK(geo.array_sectors == 11 * 16 && geo.nr_zones == 2,
			 "RAID0 3,3,5: array %" PRIu64, geo.array_sectors);
		GT_CHECK(uraid_geom_map(&geo, 10 * 16, &l, 1) == 1 && l.slot == 2 && l.sector == 4 * 16,
			 "RAID0 3,3,5: chunk 10 -> (%u, %" PRIu64 ")", l.slot, l.sector);
	}
}

int main(void)
{
	test_raid456_tables();
	test_sector_500();
	test_raid10_examples();
	test_raid0_zones();
	return gt_finish("test_geom_tables");
}
