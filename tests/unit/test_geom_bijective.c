/* SPDX-License-Identifier: MIT */
/*
 * Every layout is a bijection: each array sector has the level's number of
 * copies at distinct (member, sector) places inside the used area, each used
 * place reverse-maps to its array sector (or to P/Q of its stripe row), and
 * forward(reverse(x)) = x. Checked for linear, RAID 0 (equal and unequal
 * members, both zone layouts, non-power-of-two chunks), RAID 1, RAID 4, RAID
 * 5 (all layouts), RAID 6 (all 14 layouts) and RAID 10 (near/far/offset
 * copies 1..4, far sets), 1..16 members, chunks 4 KiB .. 1 MiB.
 *
 * Within a chunk every level maps offset o to offset o, so for chunks above
 * 16 sectors only offsets 0, 1, C/2 and C-1 of each chunk are visited (on
 * both sides, so the counts still have to match exactly).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../support/geom_test.h"

static struct uraid_geom geo;
static struct uraid_stripe st;
static long geometries;

struct bits {
	uint8_t *b;
	uint64_t per_slot;
};

static bool bit_get(const struct bits *m, uint32_t slot, uint64_t s)
{
	uint64_t i;

	if (s >= m->per_slot)
		return false;
	i = slot * m->per_slot + s;
	return m->b[i / 8] & (1u << (i % 8));
}

static void bit_set(struct bits *m, uint32_t slot, uint64_t s)
{
	uint64_t i = slot * m->per_slot + s;

	m->b[i / 8] |= (uint8_t)(1u << (i % 8));
}

static unsigned expected_copies(const struct uraid_geom *g)
{
	if (g->level == URAID_LEVEL_1)
		return g->raid_disks;
	if (g->level == URAID_LEVEL_10)
		return g->near_copies * g->far_copies;
	return 1;
}

/* Offsets inside a chunk (unit) that are visited. */
static unsigned offsets(uint32_t unit, uint32_t *o)
{
	if (unit <= 16) {
		for (uint32_t i = 0; i < unit; i++)
			o[i] = i;
		return unit;
	}
	o[0] = 0;
	o[1] = 1;
	o[2] = unit / 2;
	o[3] = unit - 1;
	return 4;
}

static bool is_r456(const struct uraid_geom *g)
{
	return g->level == 4 || g->level == 5 || g->level == 6;
}

/* The roles of each stripe row: P, Q and data slots are a permutation. */
static void check_rows(const char *d)
{
	uint64_t rows = geo.dev_sectors / geo.chunk_sectors;
	uint32_t n = geo.raid_disks;
	bool ddf = geo.level == 6 && geo.layout >= 8 && geo.layout <= 10;

	for (uint64_t r = 0; r < rows; r++) {
		uint8_t seen[URAID_MAX_MEMBERS] = { 0 }, coef[URAID_MAX_MEMBERS] = { 0 };
		bool ok = true;

		if (uraid_geom_stripe(&geo, r, &st)) {
			GT_CHECK(0, "%s: stripe(%" PRIu64 ") failed", d, r);
			return;
		}
		ok &= st.p_slot >= 0 && st.p_slot < (int32_t)n && !seen[st.p_slot]++;
		if (geo.level == 6)
			ok &= st.q_slot >= 0 && st.q_slot < (int32_t)n && !seen[st.q_slot]++;
		else
			ok &= st.q_slot == -1;
		for (uint32_t k = 0; k < st.data_disks; k++)
			ok &= st.data_slot[k] < n && !seen[st.data_slot[k]]++;
		ok &= st.data_disks + 1 + (geo.level == 6) == n;
		GT_CHECK(ok, "%s: row %" PRIu64 " roles are not a permutation", d, r);
		/* Q coefficients: distinct, 0..m-1, -1 for P/Q unless DDF. */
		for (uint32_t i = 0; i < n && geo.level == 6; i++) {
			int32_t c = st.syndrome_of_slot[i];
			bool pq = (int32_t)i == st.p_slot || (int32_t)i == st.q_slot;

			if (ddf) {
				GT_CHECK(c == (int32_t)i, "%s row %" PRIu64 ": DDF slot %u coef %d", d, r, i, c);
			} else if (pq) {
				GT_CHECK(c == -1, "%s row %" PRIu64 ": P/Q slot %u coef %d", d, r, i, c);
			} else {
				GT_CHECK(c >= 0 && c < (int32_t)st.data_disks && !coef[c]++,
					 "%s row %" PRIu64 ": slot %u coef %d repeated/out of range", d, r, i, c);
			}
		}
		if (geo.level == 6)
			GT_CHECK(st.syndrome_slots == (ddf ? n : st.data_disks),
				 "%s: syndrome_slots %u", d, st.syndrome_slots);
	}
	GT_CHECK(uraid_geom_stripe(&geo, rows, &st) == -EINVAL, "%s: stripe past the end", d);
}

/* The whole round trip for one parameter set that must be valid. */
static void check_geom(const struct uraid_geom_params *p)
{
	char d[200], err[200];
	uint32_t n, unit, off[16];
	unsigned noff, copies;
	uint64_t maxdev = 0, na = 0, nd = 0, np = 0, nq = 0;
	struct uraid_loc loc[URAID_MAX_MEMBERS];
	struct bits m;
	int rc;

	gt_desc(p, d, sizeof(d));
	rc = uraid_geom_init(&geo, p, err, sizeof(err));
	GT_CHECK(rc == 0, "%s: init refused: %s", d, err);
	if (rc)
		return;
	geometries++;
	n = geo.raid_disks;
	unit = (geo.level == URAID_LEVEL_LINEAR || geo.level == 1) ? 1 : geo.chunk_sectors;
	noff = offsets(unit, off);
	copies = expected_copies(&geo);
	for (uint32_t i = 0; i < n; i++)
		if (geo.member_sectors[i] > maxdev)
			maxdev = geo.member_sectors[i];
	m.per_slot = maxdev;
	m.b = calloc((size_t)(n * maxdev / 8 + 1), 1);
	if (!m.b)
		abort();

	/* Forward: every visited array sector. */
	for (uint64_t base = 0; base < geo.array_sectors; base += unit) {
		for (unsigned o = 0; o < noff; o++) {
			uint64_t a = base + off[o], left;
			int cnt;

			if (a >= geo.array_sectors)
				continue;
			na++;
			cnt = uraid_geom_map(&geo, a, loc, URAID_MAX_MEMBERS);
			GT_CHECK(cnt == (int)copies, "%s: map(%" PRIu64 ") gave %d copies, want %u", d, a,
				 cnt, copies);
			if (cnt != (int)copies)
				continue;
			for (int i = 0; i < cnt; i++) {
				struct uraid_rloc r;
				uint32_t s = loc[i].slot;

				if (s >= n || loc[i].sector >= geo.member_sectors[s]) {
					GT_CHECK(0, "%s: map(%" PRIu64 ") copy %d at (%u, %" PRIu64
						 ") is outside the used area", d, a, i, s, loc[i].sector);
					continue;
				}
				GT_CHECK(!bit_get(&m, s, loc[i].sector),
					 "%s: (%u, %" PRIu64 ") is used twice (again by array %" PRIu64 ")",
					 d, s, loc[i].sector, a);
				bit_set(&m, s, loc[i].sector);
				for (int j = 0; j < i; j++)
					GT_CHECK(loc[j].slot != s, "%s: map(%" PRIu64 ") puts two copies on member %u",
						 d, a, s);
				GT_CHECK(uraid_geom_reverse(&geo, s, loc[i].sector, &r) == 0 &&
					 r.kind == URAID_CHUNK_DATA && r.array_sector == a &&
					 r.copy == (uint32_t)i,
					 "%s: reverse(map(%" PRIu64 ")[%d] = (%u, %" PRIu64 ")) = kind %d %" PRIu64
					 " copy %u", d, a, i, s, loc[i].sector, r.kind, r.array_sector, r.copy);
				if (is_r456(&geo)) {
					uint64_t row = loc[i].sector / geo.chunk_sectors;
					uint64_t k = a / geo.chunk_sectors % geo.data_disks;

					GT_CHECK(r.stripe == row && uraid_geom_stripe(&geo, row, &st) == 0 &&
						 st.data_slot[k] == s,
						 "%s: map(%" PRIu64 ") on %u disagrees with stripe(%" PRIu64 ")",
						 d, a, s, row);
				}
			}
			/* chunk_left: the rest of the extent is contiguous on each copy. */
			if (o != 0 && o != noff - 1)
				continue;
			left = uraid_geom_chunk_left(&geo, a);
			if (geo.level == URAID_LEVEL_LINEAR) {
				GT_CHECK(left >= 1 && left == geo.linear_start[loc[0].slot] +
					 geo.member_sectors[loc[0].slot] - a,
					 "%s: chunk_left(%" PRIu64 ") = %" PRIu64, d, a, left);
			} else if (geo.level == 1) {
				GT_CHECK(left == geo.array_sectors - a, "%s: chunk_left(%" PRIu64 ") = %" PRIu64,
					 d, a, left);
			} else {
				uint64_t want = unit - a % unit;

				if (want > geo.array_sectors - a)
					want = geo.array_sectors - a;
				GT_CHECK(left == want, "%s: chunk_left(%" PRIu64 ") = %" PRIu64 ", want %" PRIu64,
					 d, a, left, want);
			}
			if (left >= 1) {
				struct uraid_loc l2[URAID_MAX_MEMBERS];
				int c2 = uraid_geom_map(&geo, a + left - 1, l2, URAID_MAX_MEMBERS);
				bool same = c2 == cnt;

				for (int i = 0; same && i < cnt; i++)
					same = l2[i].slot == loc[i].slot &&
					       l2[i].sector == loc[i].sector + left - 1;
				GT_CHECK(same, "%s: %" PRIu64 "..+%" PRIu64 " is not one extent", d, a, left);
			}
		}
	}

	/* Reverse: every visited member sector, one chunk past the used size. */
	for (uint32_t s = 0; s < n; s++) {
		for (uint64_t base = 0; base < geo.member_sectors[s] + unit; base += unit) {
			for (unsigned o = 0; o < noff; o++) {
				uint64_t ms = base + off[o];
				struct uraid_rloc r;
				bool used = bit_get(&m, s, ms);

				if (uraid_geom_reverse(&geo, s, ms, &r)) {
					GT_CHECK(0, "%s: reverse(%u, %" PRIu64 ") failed", d, s, ms);
					continue;
				}
				if (r.kind == URAID_CHUNK_DATA) {
					int cnt = uraid_geom_map(&geo, r.array_sector, loc, URAID_MAX_MEMBERS);

					nd++;
					GT_CHECK(used && cnt > (int)r.copy && loc[r.copy].slot == s &&
						 loc[r.copy].sector == ms,
						 "%s: reverse(%u, %" PRIu64 ") = %" PRIu64 " copy %u, but map does not put it there",
						 d, s, ms, r.array_sector, r.copy);
				} else if (r.kind == URAID_CHUNK_P || r.kind == URAID_CHUNK_Q) {
					bool ok = is_r456(&geo) && !used && ms < geo.dev_sectors &&
						  r.stripe == ms / geo.chunk_sectors &&
						  uraid_geom_stripe(&geo, r.stripe, &st) == 0 &&
						  (r.kind == URAID_CHUNK_P ? st.p_slot : st.q_slot) == (int32_t)s;

					GT_CHECK(ok, "%s: reverse(%u, %" PRIu64 ") = %s is wrong", d, s, ms,
						 r.kind == URAID_CHUNK_P ? "P" : "Q");
					if (r.kind == URAID_CHUNK_P)
						np++;
					else
						nq++;
				} else {
					GT_CHECK(!used, "%s: reverse(%u, %" PRIu64 ") = unused, but map uses it",
						 d, s, ms);
				}
			}
		}
	}
	GT_CHECK(nd == na * copies, "%s: %" PRIu64 " data places reverse-map, %" PRIu64
		 " array sectors x %u copies were mapped", d, nd, na, copies);
	if (is_r456(&geo)) {
		uint64_t rows = geo.dev_sectors / geo.chunk_sectors;

		GT_CHECK(np == rows * noff && nq == (geo.level == 6 ? rows * noff : 0),
			 "%s: %" PRIu64 " P and %" PRIu64 " Q places for %" PRIu64 " rows", d, np, nq, rows);
		check_rows(d);
	}
	GT_CHECK(uraid_geom_array_sectors(&geo) == geo.array_sectors && geo.array_sectors > 0,
		 "%s: array size", d);
	GT_CHECK(uraid_geom_map(&geo, geo.array_sectors, loc, URAID_MAX_MEMBERS) == -EINVAL,
		 "%s: map past the end must fail", d);
	if (copies > 1)
		GT_CHECK(uraid_geom_map(&geo, 0, loc, copies - 1) == -ENOSPC,
			 "%s: map with room for %u of %u copies must fail", d, copies - 1, copies);
	{
		struct uraid_rloc r;

		GT_CHECK(uraid_geom_reverse(&geo, n, 0, &r) == -EINVAL, "%s: reverse of slot %u", d, n);
	}
	free(m.b);
}

static const uint32_t pow2_chunks[] = { 8, 16, 32, 64, 128, 256, 512, 1024, 2048 };
#define NPOW2 (sizeof(pow2_chunks) / sizeof(pow2_chunks[0]))

static void test_linear(uint64_t *rng)
{
	static const uint32_t rounding[] = { 0, 8, 24 };
	uint64_t sizes[16];

	for (uint32_t n = 1; n <= 16; n++) {
		for (unsigned c = 0; c < 3; c++) {
			for (int rep = 0; rep < 3; rep++) {
				struct uraid_geom_params p = {
					.level = URAID_LEVEL_LINEAR, .raid_disks = n,
					.chunk_sectors = rounding[c], .member_sectors = sizes,
				};

				uint64_t big;

				for (uint32_t i = 0; i < n; i++)
					sizes[i] = gt_range(rng, 0, 4) ? gt_range(rng, 1, 300) : 0;
				big = gt_range(rng, 0, n - 1);  /* at least one non-empty */
				sizes[big] = gt_range(rng, 30, 300);
				check_geom(&p);
			}
		}
	}
}

static void test_raid0(uint64_t *rng)
{
	static const uint32_t odd_chunks[] = { 24, 40, 136, 1000 };
	uint64_t sizes[16];

	for (uint32_t n = 1; n <= 16; n++) {
		for (unsigned c = 0; c < NPOW2 + 4; c++) {
			uint32_t chunk = c < NPOW2 ? pow2_chunks[c] : odd_chunks[c - NPOW2];

			for (int var = 0; var < 3; var++) {
				struct uraid_geom_params p = {
					.level = 0, .raid_disks = n, .chunk_sectors = chunk,
					.member_sectors = sizes,
					/* var 0: equal sizes, no flag; 1, 2: unequal, each layout */
					.layout = var ? (uint32_t)var : 0, .raid0_layout_flag = var != 0,
				};
				uint64_t rows = gt_range(rng, 1, 5);

				for (uint32_t i = 0; i < n; i++) {
					uint64_t chunks = var ? gt_range(rng, 1, 6) : rows;

					sizes[i] = chunks * chunk + gt_range(rng, 0, chunk - 1);
				}
				check_geom(&p);
			}
		}
	}
}

static void test_raid1(uint64_t *rng)
{
	for (uint32_t n = 1; n <= 16; n++) {
		struct uraid_geom_params p = {
			.level = 1, .raid_disks = n, .dev_sectors = gt_range(rng, 1, 64),
		};

		check_geom(&p);
	}
}

static void test_raid456(uint64_t *rng)
{
	static const uint32_t r6[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20 };

	for (unsigned c = 0; c < NPOW2; c++) {
		uint32_t chunk = pow2_chunks[c];

		for (uint32_t n = 2; n <= 16; n++) {
			/* 2n rows: every rotation twice, plus a partial chunk to drop. */
			uint64_t dev = 2 * n * (uint64_t)chunk + gt_range(rng, 0, chunk - 1);
			struct uraid_geom_params p = {
				.raid_disks = n, .chunk_sectors = chunk, .dev_sectors = dev,
			};

			p.level = 4;
			p.layout = 0;
			check_geom(&p);
			p.level = 5;
			for (uint32_t l = 0; l <= 5; l++) {
				p.layout = l;
				check_geom(&p);
			}
			if (n < 4)
				continue;
			p.level = 6;
			for (unsigned l = 0; l < sizeof(r6) / sizeof(r6[0]); l++) {
				p.layout = r6[l];
				check_geom(&p);
			}
		}
	}
}

static void test_raid10(uint64_t *rng)
{
	unsigned combo = 0;
	long refused = 0;

	for (uint32_t n = 2; n <= 16; n++) {
		for (uint32_t nc = 1; nc <= 4; nc++) {
			for (uint32_t fc = 1; fc <= 4; fc++) {
				for (int mode = 0; mode < 4; mode++) {
					uint32_t layout = nc | fc << 8 | (mode & 1 ? URAID_RAID10_OFFSET : 0) |
							  (mode & 2 ? URAID_RAID10_FARSETS : 0);
					uint32_t chunk = pow2_chunks[combo++ % NPOW2];
					/* whole far sections, some extra rows, a partial chunk */
					uint64_t rows = fc * gt_range(rng, 1, 4);
					uint64_t extra_rows = gt_range(rng, 0, fc);
					uint64_t extra = gt_range(rng, 0, chunk - 1);
					struct uraid_geom_params p = {
						.level = 10, .layout = layout, .raid_disks = n,
						.chunk_sectors = chunk,
						.dev_sectors = (rows + extra_rows) * chunk + extra,
					};
					char err[200], d[200];
					bool valid = uraid_layout_valid(10, layout, n);
					bool expect = nc * fc >= 2 && nc * fc <= n &&
						      !((mode & 1) && nc > 1 && fc > 1 && n % nc) &&
						      !((mode & 2) && nc > 1 && fc > 1 && n % (nc * fc));

					GT_CHECK(valid == expect, "RAID10 layout 0x%x on %u: valid() says %d", layout,
						 n, valid);
					if (valid) {
						check_geom(&p);
					} else {
						refused++;
						err[0] = 0;
						GT_CHECK(uraid_geom_init(&geo, &p, err, sizeof(err)) == -EINVAL && err[0],
							 "%s: init must refuse", gt_desc(&p, d, sizeof(d)));
					}
				}
			}
		}
	}
	printf("RAID 10: %ld layout/member-count combinations correctly refused\n", refused);
}

int main(void)
{
	uint64_t rng;

	gt_seed = 0x6765306d5eedull;
	rng = gt_seed;
	test_linear(&rng);
	test_raid0(&rng);
	test_raid1(&rng);
	test_raid456(&rng);
	test_raid10(&rng);
	printf("%ld geometries checked\n", geometries);
	return gt_finish("test_geom_bijective");
}
