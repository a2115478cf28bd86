/* SPDX-License-Identifier: MIT */
/*
 * Array sizes against reference/md-format.md §3.6 (hand-computed cases, then
 * the formulas over random geometries), RAID 10's derived member size and far
 * stride (calc_sectors), max_failures, and validation: every invalid level,
 * member count, layout, chunk and size is refused with a one-line reason.
 */
#include <errno.h>
#include <string.h>

#include "../support/geom_test.h"

static struct uraid_geom geo;

static void size_case(const struct uraid_geom_params *p, uint64_t want_array,
		      uint64_t want_dev, uint64_t want_stride)
{
	char err[200], d[200];
	int rc = uraid_geom_init(&geo, p, err, sizeof(err));

	gt_desc(p, d, sizeof(d));
	GT_CHECK(rc == 0, "%s: init refused: %s", d, err);
	if (rc)
		return;
	GT_CHECK(uraid_geom_array_sectors(&geo) == want_array,
		 "%s: array %" PRIu64 " sectors, want %" PRIu64, d, geo.array_sectors, want_array);
	if (want_dev)
		GT_CHECK(geo.dev_sectors == want_dev, "%s: dev_sectors %" PRIu64 ", want %" PRIu64,
			 d, geo.dev_sectors, want_dev);
	if (want_stride)
		GT_CHECK(geo.far_stride == want_stride, "%s: far stride %" PRIu64 ", want %" PRIu64,
			 d, geo.far_stride, want_stride);
}

#define P(...) (&(struct uraid_geom_params){ __VA_ARGS__ })

static void test_hand_sizes(void)
{
	uint64_t r0[3] = { 1000, 2000, 3001 }, lin[3] = { 100, 0, 333 };

	/* RAID 0: sum of members rounded down to the chunk (any chunk). */
	size_case(P(.level = 0, .raid_disks = 3, .chunk_sectors = 128, .member_sectors = r0,
		    .layout = 1, .raid0_layout_flag = true), 896 + 1920 + 2944, 2944, 0);
	size_case(P(.level = 0, .raid_disks = 3, .chunk_sectors = 24, .member_sectors = r0,
		    .layout = 2, .raid0_layout_flag = true), 984 + 1992 + 3000, 0, 0);
	/* linear: plain sum, or rounded with a rounding chunk. */
	size_case(P(.level = -1, .raid_disks = 3, .member_sectors = lin), 433, 0, 0);
	size_case(P(.level = -1, .raid_disks = 3, .chunk_sectors = 64, .member_sectors = lin),
		  64 + 320, 0, 0);
	/* RAID 1: the member size itself. */
	size_case(P(.level = 1, .raid_disks = 3, .dev_sectors = 12345), 12345, 12345, 0);
	/* RAID 4/5/6: (size rounded down to chunk) x data members. */
	size_case(P(.level = 4, .raid_disks = 4, .chunk_sectors = 128, .dev_sectors = 1000),
		  896 * 3, 896, 0);
	size_case(P(.level = 5, .layout = 2, .raid_disks = 4, .chunk_sectors = 128,
		    .dev_sectors = 1000), 896 * 3, 896, 0);
	size_case(P(.level = 5, .layout = 0, .raid_disks = 2, .chunk_sectors = 8,
		    .dev_sectors = 17), 16, 16, 0);
	size_case(P(.level = 6, .layout = 2, .raid_disks = 6, .chunk_sectors = 1024,
		    .dev_sectors = 100000), 99328 * 4, 99328, 0);
	/* RAID 10 (calc_sectors): array, used member size, stride. */
	size_case(P(.level = 10, .layout = 0x102, .raid_disks = 2, .chunk_sectors = 128,
		    .dev_sectors = 1000), 7 * 128, 7 * 128, 0);
	size_case(P(.level = 10, .layout = 0x102, .raid_disks = 3, .chunk_sectors = 128,
		    .dev_sectors = 1000), 10 * 128, 7 * 128, 0);
	size_case(P(.level = 10, .layout = 0x201, .raid_disks = 3, .chunk_sectors = 128,
		    .dev_sectors = 1000), 9 * 128, 6 * 128, 3 * 128);
	size_case(P(.level = 10, .layout = 0x301, .raid_disks = 5, .chunk_sectors = 64,
		    .dev_sectors = 1000), 25 * 64, 15 * 64, 5 * 64);
	size_case(P(.level = 10, .layout = 0x10201, .raid_disks = 3, .chunk_sectors = 128,
		    .dev_sectors = 1000), 9 * 128, 6 * 128, 128);
	size_case(P(.level = 10, .layout = 0x202, .raid_disks = 5, .chunk_sectors = 64,
		    .dev_sectors = 1000), 17 * 64, 14 * 64, 7 * 64);
	size_case(P(.level = 10, .layout = 0x40201, .raid_disks = 5, .chunk_sectors = 8,
		    .dev_sectors = 64), 20 * 8, 8 * 8, 4 * 8);
}

/* §3.6 formulas over random geometries. */
static void test_formulas(uint64_t *rng)
{
	static const uint32_t r6[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20 };
	uint64_t ms[16];
	char err[200], d[200];

	for (int it = 0; it < 20000; it++) {
		uint32_t n = (uint32_t)gt_range(rng, 1, 16), chunk = 8u << gt_range(rng, 0, 8);
		struct uraid_geom_params p = {
			.raid_disks = n, .chunk_sectors = chunk, .member_sectors = ms,
			.dev_sectors = gt_range(rng, chunk, (uint64_t)chunk * 50),
		};
		uint64_t want = 0, want_dev = 0, want_stride = 0;

		switch (it % 6) {
		case 0: /* RAID 0, unequal, sometimes non-power-of-two chunk */
			if (it % 12 == 0)
				p.chunk_sectors = chunk = (uint32_t)gt_range(rng, 1, 3000);
			p.level = 0;
			p.layout = (uint32_t)gt_range(rng, 1, 2);
			p.raid0_layout_flag = true;
			for (uint32_t i = 0; i < n; i++) {
				ms[i] = gt_range(rng, chunk, (uint64_t)chunk * 40);
				want += ms[i] / chunk * chunk;
			}
			break;
		case 1:
			p.level = 1;
			p.chunk_sectors = 0;
			want = p.dev_sectors;
			break;
		case 2:
			if (n < 2)
				continue;
			p.level = (int)(it % 4 ? 5 : 4);
			p.layout = (uint32_t)gt_range(rng, 0, 5);
			want = p.dev_sectors / chunk * chunk * (n - 1);
			break;
		case 3:
			if (n < 4)
				continue;
			p.level = 6;
			p.layout = r6[gt_range(rng, 0, 13)];
			want = p.dev_sectors / chunk * chunk * (n - 2);
			break;
		case 4: { /* RAID 10, including far with odd member counts */
			uint32_t nc = (uint32_t)gt_range(rng, 1, 4), fc = (uint32_t)gt_range(rng, 1, 4);
			uint64_t ac;

			p.level = 10;
			p.layout = nc | fc << 8;
			if (gt_range(rng, 0, 1))
				p.layout |= URAID_RAID10_OFFSET;
			if (gt_range(rng, 0, 2) == 0)
				p.layout |= URAID_RAID10_FARSETS;
			if (!uraid_layout_valid(10, p.layout, n))
				continue;
			ac = p.dev_sectors / chunk / fc * n / nc;
			if (!ac)
				continue;
			want = ac * chunk;
			want_dev = (ac * nc * fc + n - 1) / n * chunk;
			want_stride = p.layout & URAID_RAID10_OFFSET ? chunk
								     : want_dev / chunk / fc * chunk;
			break;
		}
		default:
			p.level = URAID_LEVEL_LINEAR;
			p.chunk_sectors = chunk = (it / 6) % 2 ? 0 : chunk;
			for (uint32_t i = 0; i < n; i++) {
				ms[i] = gt_range(rng, 0, 100000);
				want += chunk ? ms[i] / chunk * chunk : ms[i];
			}
			if (!want)
				continue;
			break;
		}
		if (uraid_geom_init(&geo, &p, err, sizeof(err))) {
			GT_CHECK(0, "%s: init refused: %s", gt_desc(&p, d, sizeof(d)), err);
			continue;
		}
		GT_CHECK(geo.array_sectors == want, "%s: array %" PRIu64 ", §3.6 says %" PRIu64,
			 gt_desc(&p, d, sizeof(d)), geo.array_sectors, want);
		if (want_dev)
			GT_CHECK(geo.dev_sectors == want_dev && geo.far_stride == want_stride,
				 "%s: dev %" PRIu64 " stride %" PRIu64 ", want %" PRIu64 " %" PRIu64,
				 gt_desc(&p, d, sizeof(d)), geo.dev_sectors, geo.far_stride, want_dev,
				 want_stride);
	}
}

/* Each parameter set here must be refused with a reason. */
static void refuse(const char *why, const struct uraid_geom_params *p)
{
	char err[200], d[200];
	int rc;

	memset(err, 0, sizeof(err));
	rc = uraid_geom_init(&geo, p, err, sizeof(err));
	GT_CHECK(rc == -EINVAL && err[0] && !strchr(err, '\n'),
		 "%s (%s): rc %d, reason \"%s\"", why, gt_desc(p, d, sizeof(d)), rc, err);
}

static void accept(const char *why, const struct uraid_geom_params *p)
{
	char err[200], d[200];

	GT_CHECK(uraid_geom_init(&geo, p, err, sizeof(err)) == 0, "%s (%s) refused: %s", why,
		 gt_desc(p, d, sizeof(d)), err);
}

static void test_validation(void)
{
	uint64_t ms[URAID_MAX_MEMBERS + 1];
	uint64_t zero[3] = { 0, 0, 0 }, small[3] = { 100, 7, 100 };
	char err[200];

	for (unsigned i = 0; i <= URAID_MAX_MEMBERS; i++)
		ms[i] = 1024;
	/* levels */
	refuse("level 2", P(.level = 2, .raid_disks = 3, .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("level 3", P(.level = 3, .raid_disks = 3, .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("level 7", P(.level = 7, .raid_disks = 3, .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("level -2", P(.level = -2, .raid_disks = 3, .member_sectors = ms));
	/* member counts */
	refuse("0 members", P(.level = 1, .raid_disks = 0, .dev_sectors = 1024));
	refuse("257 members", P(.level = 0, .raid_disks = 257, .chunk_sectors = 8, .member_sectors = ms));
	refuse("RAID 4 with 1", P(.level = 4, .raid_disks = 1, .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 5 with 1", P(.level = 5, .layout = 2, .raid_disks = 1, .chunk_sectors = 128,
				  .dev_sectors = 1024));
	refuse("RAID 6 with 3", P(.level = 6, .layout = 2, .raid_disks = 3, .chunk_sectors = 128,
				  .dev_sectors = 1024));
	refuse("RAID 10 n2 with 1", P(.level = 10, .layout = 0x102, .raid_disks = 1, .chunk_sectors = 128,
				      .dev_sectors = 1024));
	refuse("RAID 10 n3 with 2", P(.level = 10, .layout = 0x103, .raid_disks = 2, .chunk_sectors = 128,
				      .dev_sectors = 1024));
	refuse("RAID 10 n2f2 with 3", P(.level = 10, .layout = 0x202, .raid_disks = 3,
					.chunk_sectors = 128, .dev_sectors = 1024));
	/* layouts */
	for (uint32_t l = 6; l < 40; l++)
		if (l != 8 && l != 9 && l != 10 && !(l >= 16 && l <= 20))
			refuse("RAID 6 layout", P(.level = 6, .layout = l, .raid_disks = 5,
						  .chunk_sectors = 128, .dev_sectors = 1024));
	for (uint32_t l = 6; l < 40; l++)
		refuse("RAID 5 layout", P(.level = 5, .layout = l, .raid_disks = 5, .chunk_sectors = 128,
					  .dev_sectors = 1024));
	refuse("RAID 10 1 copy", P(.level = 10, .layout = 0x101, .raid_disks = 4, .chunk_sectors = 128,
				   .dev_sectors = 1024));
	refuse("RAID 10 0 copies", P(.level = 10, .layout = 0, .raid_disks = 4, .chunk_sectors = 128,
				     .dev_sectors = 1024));
	refuse("RAID 10 broken far sets", P(.level = 10, .layout = 0x20201, .raid_disks = 4,
					    .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 10 set mode 3", P(.level = 10, .layout = 0x60201, .raid_disks = 4,
				       .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 10 bit 19", P(.level = 10, .layout = 0x80102, .raid_disks = 4,
				   .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 10 bit 31", P(.level = 10, .layout = 0x80000102u, .raid_disks = 4,
				   .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 10 n2o2 on 5 (md maps it two-to-one)",
	       P(.level = 10, .layout = 0x10202, .raid_disks = 5, .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 10 n2f2+sets on 6 (md maps it two-to-one)",
	       P(.level = 10, .layout = 0x40202, .raid_disks = 6, .chunk_sectors = 128, .dev_sectors = 1024));
	refuse("RAID 6 DDF on 256", P(.level = 6, .layout = 10, .raid_disks = 256, .chunk_sectors = 128,
				      .dev_sectors = 1024));
	/* chunks */
	refuse("RAID 5 chunk 0", P(.level = 5, .layout = 2, .raid_disks = 4, .dev_sectors = 1024));
	refuse("RAID 5 chunk 2K", P(.level = 5, .layout = 2, .raid_disks = 4, .chunk_sectors = 4,
				    .dev_sectors = 1024));
	refuse("RAID 5 chunk 12K", P(.level = 5, .layout = 2, .raid_disks = 4, .chunk_sectors = 24,
				     .dev_sectors = 1024));
	refuse("RAID 4 chunk 6K", P(.level = 4, .raid_disks = 4, .chunk_sectors = 12, .dev_sectors = 1024));
	refuse("RAID 6 chunk 3K", P(.level = 6, .layout = 2, .raid_disks = 4, .chunk_sectors = 6,
				    .dev_sectors = 1024));
	refuse("RAID 10 chunk 2K", P(.level = 10, .layout = 0x102, .raid_disks = 4, .chunk_sectors = 4,
				     .dev_sectors = 1024));
	refuse("RAID 10 chunk 48K", P(.level = 10, .layout = 0x102, .raid_disks = 4, .chunk_sectors = 96,
				      .dev_sectors = 1024));
	refuse("RAID 0 chunk 0", P(.level = 0, .raid_disks = 3, .member_sectors = ms));
	refuse("RAID 1 chunk", P(.level = 1, .raid_disks = 2, .chunk_sectors = 128, .dev_sectors = 1024));
	/* sizes */
	refuse("RAID 1 size 0", P(.level = 1, .raid_disks = 2));
	refuse("RAID 5 below one chunk", P(.level = 5, .layout = 2, .raid_disks = 4,
					   .chunk_sectors = 128, .dev_sectors = 127));
	refuse("RAID 10 f2 one chunk", P(.level = 10, .layout = 0x201, .raid_disks = 4,
					 .chunk_sectors = 128, .dev_sectors = 255));
	refuse("RAID 0 member below one chunk", P(.level = 0, .raid_disks = 3, .chunk_sectors = 8,
						  .member_sectors = small, .layout = 1,
						  .raid0_layout_flag = true));
	refuse("RAID 0 no sizes", P(.level = 0, .raid_disks = 3, .chunk_sectors = 8));
	refuse("linear no sizes", P(.level = -1, .raid_disks = 3));
	refuse("linear all empty", P(.level = -1, .raid_disks = 3, .member_sectors = zero));
	/* feature 0x1000 belongs to RAID 0 only */
	refuse("RAID0_LAYOUT on RAID 5", P(.level = 5, .layout = 2, .raid_disks = 4,
					   .chunk_sectors = 128, .dev_sectors = 1024,
					   .raid0_layout_flag = true));
	/* NULL err buffer is fine */
	GT_CHECK(uraid_geom_init(&geo, P(.level = 2, .raid_disks = 3), NULL, 0) == -EINVAL,
		 "init with no err buffer");
	GT_CHECK(uraid_geom_init(&geo, P(.level = 2, .raid_disks = 3), err, 8) == -EINVAL &&
		 strlen(err) == 7, "init with a short err buffer truncates");

	/* edges md accepts */
	accept("RAID 5 with 2", P(.level = 5, .layout = 0, .raid_disks = 2, .chunk_sectors = 8,
				  .dev_sectors = 8));
	accept("RAID 6 with 4", P(.level = 6, .layout = 2, .raid_disks = 4, .chunk_sectors = 8,
				  .dev_sectors = 8));
	accept("RAID 1 with 1", P(.level = 1, .raid_disks = 1, .dev_sectors = 1));
	accept("RAID 0 with 1", P(.level = 0, .raid_disks = 1, .chunk_sectors = 8, .member_sectors = ms));
	accept("RAID 0 chunk of one sector", P(.level = 0, .raid_disks = 3, .chunk_sectors = 1,
					       .member_sectors = ms));
	accept("RAID 0 equal sizes without flag", P(.level = 0, .layout = 77, .raid_disks = 3,
						    .chunk_sectors = 128, .member_sectors = ms));
	accept("RAID 4 ignores its layout", P(.level = 4, .layout = 17, .raid_disks = 3,
					      .chunk_sectors = 128, .dev_sectors = 1024));
	accept("RAID 5 chunk 1 MiB", P(.level = 5, .layout = 2, .raid_disks = 3, .chunk_sectors = 2048,
				       .dev_sectors = 4096));
	accept("RAID 10 n2f2+sets on 8", P(.level = 10, .layout = 0x40202, .raid_disks = 8,
					   .chunk_sectors = 128, .dev_sectors = 1024));
	accept("RAID 10 n2o2 on 4", P(.level = 10, .layout = 0x10202, .raid_disks = 4,
				      .chunk_sectors = 128, .dev_sectors = 1024));
	accept("RAID 10 o2 on 3", P(.level = 10, .layout = 0x10201, .raid_disks = 3,
				    .chunk_sectors = 128, .dev_sectors = 1024));
	accept("RAID 10 f2 + sets on 5", P(.level = 10, .layout = 0x40201, .raid_disks = 5,
					   .chunk_sectors = 128, .dev_sectors = 1024));
	accept("RAID 10 n1o1f... (n1 f2) on 2", P(.level = 10, .layout = 0x201, .raid_disks = 2,
						  .chunk_sectors = 8, .dev_sectors = 16));
	accept("RAID 6 on 256", P(.level = 6, .layout = 2, .raid_disks = 256, .chunk_sectors = 8,
				  .dev_sectors = 16));
	accept("linear with empty members", P(.level = -1, .raid_disks = 3, .member_sectors = small));
}

static void test_max_failures(void)
{
	uint64_t ms[4] = { 64, 64, 64, 64 };
	struct {
		struct uraid_geom_params p;
		unsigned want;
	} c[] = {
		{ { .level = -1, .raid_disks = 4, .member_sectors = ms }, 0 },
		{ { .level = 0, .raid_disks = 4, .chunk_sectors = 8, .member_sectors = ms }, 0 },
		{ { .level = 1, .raid_disks = 4, .dev_sectors = 64 }, 3 },
		{ { .level = 4, .raid_disks = 4, .chunk_sectors = 8, .dev_sectors = 64 }, 1 },
		{ { .level = 5, .layout = 2, .raid_disks = 4, .chunk_sectors = 8, .dev_sectors = 64 }, 1 },
		{ { .level = 6, .layout = 2, .raid_disks = 4, .chunk_sectors = 8, .dev_sectors = 64 }, 2 },
		{ { .level = 10, .layout = 0x102, .raid_disks = 4, .chunk_sectors = 8, .dev_sectors = 64 }, 1 },
		{ { .level = 10, .layout = 0x103, .raid_disks = 4, .chunk_sectors = 8, .dev_sectors = 64 }, 2 },
		{ { .level = 10, .layout = 0x202, .raid_disks = 4, .chunk_sectors = 8, .dev_sectors = 64 }, 3 },
	};

	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char err[200], d[200];

		if (uraid_geom_init(&geo, &c[i].p, err, sizeof(err))) {
			GT_CHECK(0, "max_failures case %u: %s", i, err);
			continue;
		}
		GT_CHECK(uraid_geom_max_failures(&geo) == c[i].want, "%s: max_failures %u, want %u",
			 gt_desc(&c[i].p, d, sizeof(d)), uraid_geom_max_failures(&geo), c[i].want);
	}
}

int main(void)
{
	uint64_t rng;

	gt_seed = 0x5123e5ull;
	rng = gt_seed;
	test_hand_sizes();
	test_formulas(&rng);
	test_validation();
	test_max_failures();
	return gt_finish("test_geom_sizes");
}
