// SPDX-License-Identifier: MIT
/*
 * A pool's arithmetic (src/pool/capacity.c): shapes per resiliency,
 * placement on the drives with the most free space, the partition size a
 * volume size needs, and the sizes against uraid create's own plan (a dry
 * run on image files of the partition's size). Then the check the issue
 * asks for: six 447 GiB SSDs in one pool against what Storage Spaces and
 * the md figures of ../shared/reference/workloads.md §1 show; uraid's are a
 * little smaller or a little larger, by md's data offset (129 MiB per
 * member on drives this size), the pool's 2 MiB head (GPT and label) and
 * 1 MiB tail (backup GPT), and the chunk rounding; docs/pools.md explains.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/nested.h>

#include "pool/capacity.h"
#include "pool/gpt.h"
#include "pool/pool.h"
#include "../support/check.h"

#define GIB (2048ull * 1024)     /* sectors */
#define MIB 2048ull

static void test_shapes(void)
{
	struct pool_shape s;
	char err[200];

	CHECK(pool_shape_of(POOL_MIRROR, 2, 0, &s, err, sizeof(err)) == 0 && s.level == 1 &&
	      s.chunk_sectors == 0, "mirror on 2: RAID 1");
	CHECK(pool_shape_of(POOL_MIRROR, 5, 0, &s, err, sizeof(err)) == 0 && s.level == 10 &&
	      s.layout == 0x102, "mirror on 5: RAID 10 n2");
	CHECK(pool_shape_of(POOL_THREE_WAY_MIRROR, 3, 0, &s, err, sizeof(err)) == 0 && s.level == 1,
	      "three-way on 3: RAID 1");
	CHECK(pool_shape_of(POOL_THREE_WAY_MIRROR, 6, 64, &s, err, sizeof(err)) == 0 &&
	      s.level == 10 && s.layout == 0x103 && s.chunk_sectors == 128, "three-way on 6: n3");
	CHECK(pool_shape_of(POOL_DUAL_PARITY, 3, 0, &s, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "at least 4"), "dual parity on 3 refused: %s", err);
	CHECK(pool_shape_of(POOL_PARITY, 2, 0, &s, err, sizeof(err)) == -EINVAL, "parity on 2");
	CHECK(pool_shape_of(POOL_SIMPLE, 1, 0, &s, err, sizeof(err)) == -EINVAL,
	      "simple on 1: md's RAID 0 needs 2");
	CHECK(pool_shape_of_level(4, 4, 0, &s, err, sizeof(err)) == -EINVAL, "RAID 4 refused");
	CHECK(pool_shape_nested(5, 6, 2, 0, &s, err, sizeof(err)) == 0 && s.level == 5 &&
	      s.drives == 6 && s.groups == 2 && s.layout == URAID_LEFT_SYMMETRIC, "RAID 50 on 6");
	CHECK(pool_shape_nested(5, 7, 2, 0, &s, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "equal size"), "RAID 50: 7 drives in 2 groups refused: %s", err);
	CHECK(pool_shape_nested(6, 6, 2, 0, &s, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "at least 4"), "RAID 60: 3 per group refused: %s", err);
	CHECK(pool_shape_nested(5, 4, 2, 0, &s, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "group needs at least 3") && strstr(err, "2 per group"),
	      "RAID 50: 2 per group refused (md takes a 2-member RAID 5): %s", err);
	CHECK(pool_shape_nested(6, 8, 2, 0, &s, err, sizeof(err)) == 0 && s.groups == 2 &&
	      s.drives == 8, "RAID 60 on 8: 4 per group");
	CHECK(pool_shape_nested(1, 6, 2, 0, &s, err, sizeof(err)) == -EINVAL, "RAID 10 groups");
	CHECK(pool_shape_nested(5, 6, 1, 0, &s, err, sizeof(err)) == -EINVAL, "one group");
	enum pool_resiliency r;
	CHECK(pool_resiliency_parse("two-way-mirror", &r) == 0 && r == POOL_MIRROR, "alias");
	CHECK(pool_resiliency_parse("raid5", &r) == -EINVAL, "unknown word");
}

static void test_place(void)
{
	uint64_t freeb[5] = { 100, 300, 200, 300, 50 };
	unsigned pick[5];

	CHECK(pool_place(freeb, 5, 3, pick) == 200 && pick[0] == 1 && pick[1] == 3 &&
	      pick[2] == 2, "the three with most room, ties to the lower index");
	CHECK(pool_place(freeb, 5, 5, pick) == 50, "all five: the smallest");
	CHECK(pool_place(freeb, 5, 6, pick) == 0, "more than there are");
}

/* pool_volume_sectors agrees with uraid create's plan (dry run) for partitions of `part`. */
static void against_create(const struct pool_shape *s, uint64_t part)
{
	char paths[8][64], err[300];
	const char *pp[8];
	struct uraid_create_result res;

	for (unsigned i = 0; i < s->drives; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/tmp/uraid-test-cap-%d-%u", (int)getpid(), i);
		int fd = open(paths[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && ftruncate(fd, (off_t)(part * 512)) == 0, "image");
		close(fd);
		pp[i] = paths[i];
	}
	struct uraid_create_opts o = {
		.level = s->level, .layout_given = s->level >= 5, .layout = s->layout,
		.raid_disks = s->drives, .chunk_kib = s->chunk_sectors / 2, .minor = 2,
		.flags = URAID_CREATE_DRY_RUN, .paths = pp, .npaths = s->drives,
	};
	int rc = uraid_create(&o, &res, err, sizeof(err));
	CHECK(rc == 0, "dry run: %s", err);
	uint64_t mine = pool_volume_sectors(s, part);
	CHECK(rc || res.array_sectors == mine, "level %d x%u, partitions of %llu: create says %llu, "
	      "the pool %llu", s->level, s->drives, (unsigned long long)part,
	      (unsigned long long)res.array_sectors, (unsigned long long)mine);
	for (unsigned i = 0; i < s->drives; i++)
		unlink(paths[i]);
}

/* A RAID 50/60 shape's size agrees with uraid_nested_create's plan (dry run). */
static void against_nested(const struct pool_shape *s, uint64_t part)
{
	char paths[12][64], err[600];
	const char *pp[12];
	struct uraid_nested_result *res = malloc(sizeof(*res));

	for (unsigned i = 0; i < s->drives; i++) {
		snprintf(paths[i], sizeof(paths[i]), "/tmp/uraid-test-cap-%d-%u", (int)getpid(), i);
		int fd = open(paths[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd >= 0 && ftruncate(fd, (off_t)(part * 512)) == 0, "image");
		close(fd);
		pp[i] = paths[i];
	}
	struct uraid_create_opts o = {
		.level = s->level, .layout_given = true, .layout = s->layout,
		.raid_disks = s->drives / s->groups, .chunk_kib = s->chunk_sectors / 2, .minor = 2,
		.name = "cap", .flags = URAID_CREATE_DRY_RUN, .paths = pp, .npaths = s->drives,
	};
	int rc = res ? uraid_nested_create(&o, s->groups, res, err, sizeof(err)) : -ENOMEM;
	CHECK(rc == 0, "nested dry run: %s", err);
	uint64_t mine = pool_volume_sectors(s, part);
	CHECK(rc || res->outer.array_sectors == mine, "RAID %d0 x%u in %u groups, partitions of "
	      "%llu: create says %llu, the pool %llu", s->level, s->drives, s->groups,
	      (unsigned long long)part, (unsigned long long)(rc ? 0 : res->outer.array_sectors),
	      (unsigned long long)mine);
	for (unsigned i = 0; i < s->drives; i++)
		unlink(paths[i]);
	free(res);
}

static void test_nested_sizes(void)
{
	struct pool_shape s;
	static const struct { int level; unsigned n, g; } cases[] = {
		{ 5, 6, 2 }, { 5, 9, 3 }, { 6, 8, 2 },
	};
	static const uint64_t parts[] = { 100 * MIB, 777 * MIB, 3 * GIB + 5 * MIB };

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (unsigned k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
			CHECK(pool_shape_nested(cases[i].level, cases[i].n, cases[i].g, 0, &s, NULL,
						0) == 0, "shape");
			against_nested(&s, parts[k]);
			uint64_t want = pool_volume_sectors(&s, parts[k]) - 1000;
			uint64_t part = pool_part_sectors_for(&s, want);
			CHECK(part % MIB == 0 && pool_volume_sectors(&s, part) >= want,
			      "RAID %d0 x%u: %llu sectors need a partition of %llu", cases[i].level,
			      cases[i].n, (unsigned long long)want, (unsigned long long)part);
		}
}

static void test_sizes(void)
{
	struct pool_shape s;
	static const struct { enum pool_resiliency r; unsigned n; } cases[] = {
		{ POOL_SIMPLE, 3 }, { POOL_MIRROR, 2 }, { POOL_MIRROR, 4 },
		{ POOL_THREE_WAY_MIRROR, 5 }, { POOL_PARITY, 4 }, { POOL_DUAL_PARITY, 5 },
	};
	static const uint64_t parts[] = { 100 * MIB, 777 * MIB, 3 * GIB + 5 * MIB };

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (unsigned k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
			pool_shape_of(cases[i].r, cases[i].n, 0, &s, NULL, 0);
			against_create(&s, parts[k]);
			/* the partition for a size holds it, and one MiB less does not */
			uint64_t want = pool_volume_sectors(&s, parts[k]) - 1000;
			uint64_t part = pool_part_sectors_for(&s, want);
			CHECK(part % MIB == 0 && pool_volume_sectors(&s, part) >= want &&
			      pool_volume_sectors(&s, part - MIB) < want,
			      "%s x%u: %llu sectors need a partition of %llu",
			      pool_resiliency_name(cases[i].r), cases[i].n, (unsigned long long)want,
			      (unsigned long long)part);
		}
}

/* The usable extent of a pool drive of `sectors`: after the label, up to the last whole MiB. */
static uint64_t drive_extent(uint64_t sectors)
{
	struct gpt *g = malloc(sizeof(*g));
	uint8_t guid[16] = { 7 };
	struct gpt_extent e[4];
	char err[200];

	gpt_init(g, sectors, guid, err, sizeof(err));
	memcpy(g->part[0].type, pool_type_label, 16);
	g->part[0].first = POOL_LABEL_FIRST;
	g->part[0].last = POOL_LABEL_FIRST + POOL_LABEL_SECTORS - 1;
	unsigned n = gpt_free_extents(g, e, 4);
	free(g);
	return n == 1 ? e[0].sectors : 0;
}

static void test_storage_spaces(void)
{
	const uint64_t drive = 447 * GIB;
	uint64_t ext = drive_extent(drive);
	struct pool_shape s;

	CHECK(ext == drive - 3 * MIB, "a 447 GiB drive gives %llu sectors to volumes",
	      (unsigned long long)ext);
	/* the figures of workloads.md §1 as Windows prints them: "TB" and "GB" are TiB and GiB */
	static const struct {
		enum pool_resiliency r;
		unsigned drives;
		double figure_gib;
		const char *what;
	} cases[] = {
		{ POOL_SIMPLE, 6, 2.61 * 1024, "simple 2.61 TB" },
		{ POOL_MIRROR, 6, 1.29 * 1024, "6-drive 2-way mirror 1.29 TB" },
		{ POOL_THREE_WAY_MIRROR, 6, 886, "6-drive 3-way mirror 886 GB" },
		{ POOL_PARITY, 3, 888, "3-drive parity 888 GB" },
		{ POOL_PARITY, 6, 2.2 * 1024, "RAID 5 x 6 2.2 TB (md; Storage Spaces' own 6-drive "
					      "parity, 1.73 TB, has 3 columns)" },
		{ POOL_MIRROR, 4, 894, "RAID 10 x 4 894 GB" },
		{ POOL_MIRROR, 2, 447, "RAID 1 x 2 447 GB" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pool_shape_of(cases[i].r, cases[i].drives, 0, &s, NULL, 0);
		double got = (double)pool_volume_sectors(&s, ext) / GIB;
		double ideal_data = s.level == 0 ? 6 : s.level == 5 ? cases[i].drives - 1
			: s.level == 6 ? cases[i].drives - 2 : s.level == 1 ? 1
			: (double)cases[i].drives / (s.layout & 0xff);
		double ideal = 447.0 * ideal_data;
		double lost = ideal - got;
		printf("  %-22s on %u drives: uraid %8.2f GiB, figure %8.2f GiB (%+.2f %%), "
		       "%.2f GiB below the raw %g GiB\n", pool_resiliency_name(cases[i].r),
		       cases[i].drives, got, cases[i].figure_gib,
		       100.0 * (got - cases[i].figure_gib) / cases[i].figure_gib, lost, ideal);
		/* within 2 % of the figure; below the raw capacity by md's offset and the
		   pool's head and tail (132 MiB per data member) plus a chunk per member */
		CHECK(got > cases[i].figure_gib * 0.98 && got < cases[i].figure_gib * 1.02,
		      "%s: uraid's %.2f GiB is not within 2 %% of %.2f", cases[i].what, got,
		      cases[i].figure_gib);
		CHECK(lost > 0 && lost <= ideal_data * (132.0 + 0.5) / 1024 + 1e-9,
		      "%s: %.3f GiB lost, more than md's offset and the pool's head explain",
		      cases[i].what, lost);
	}
}

/* --size=max at md's 64 GiB step: the partition chosen gives a volume at
 * least as large as every whole-MiB partition that fits, around the step. */
static void test_max_at_step(void)
{
	struct pool_shape s;
	char err[200];
	const uint64_t gib64 = 64ull << 21;     /* sectors */

	CHECK(pool_shape_of(POOL_SIMPLE, 2, 0, &s, err, sizeof(err)) == 0, "shape: %s", err);
	for (int64_t d = -2; d <= 2; d++) {
		uint64_t room = gib64 + (uint64_t)(d * 2048), vol;
		uint64_t part = pool_max_part(&s, room, &vol);
		CHECK(part <= room && part % 2048 == 0 && vol == pool_volume_sectors(&s, part),
		      "room 64 GiB %+lld MiB: part %llu", (long long)d, (unsigned long long)part);
		for (uint64_t p = room / 2048 * 2048; p + 8 * 2048 > room; p -= 2048)
			CHECK(pool_volume_sectors(&s, p) <= vol, "room 64 GiB %+lld MiB: a partition "
			      "of %llu MiB holds more (%llu > %llu)", (long long)d,
			      (unsigned long long)p / 2048,
			      (unsigned long long)pool_volume_sectors(&s, p),
			      (unsigned long long)vol);
		printf("room 64 GiB %+lld MiB: partition %llu MiB, volume %llu MiB\n", (long long)d,
		       (unsigned long long)part / 2048, (unsigned long long)vol / 2048);
	}
	/* the step is real: 1 MiB past it the largest partition is not the best */
	CHECK(pool_volume_sectors(&s, gib64) < pool_volume_sectors(&s, gib64 - 2048) ||
	      pool_volume_sectors(&s, gib64 + 2048) < pool_volume_sectors(&s, gib64),
	      "no step at 64 GiB: the test proves nothing");
}

int main(void)
{
	test_shapes();
	test_place();
	test_sizes();
	test_nested_sizes();
	test_storage_spaces();
	test_max_at_step();
	if (failures)
		printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
