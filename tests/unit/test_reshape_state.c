// SPDX-License-Identifier: MIT
/*
 * The reshape state built from superblocks (md/reshape_state.c), with
 * crafted superblocks, no I/O:
 *
 * 1. The step of every restripe is a position assembly takes (md's rule:
 *    a multiple of the larger chunk times the new data disks), RAID 5
 *    4 -> 5 with 128 -> 64 KiB chunks included (rows of 768 and 512
 *    sectors, rule 1024).
 * 2. A forward reshape whose new data offset would make the job overwrite
 *    old data still live is refused: new_offset positive, zero, smaller
 *    than a step per member; the distance uraid's own start gives, and
 *    md's for 3 -> 4 (512 KiB chunks, -3072), are taken, at position 0,
 *    mid-way and inside an old row.
 * 3. Other fields: delta_disks leaving too few members, fewer members forwards, a
 *    position off md's boundary or past the end are refused; a position
 *    at the end is taken (the job then only finishes).
 *
 * 4. Backwards (feature 0x20): the start (top) as md's raid5_size, the
 *    distance every step left needs (mdadm's choice taken, one sector
 *    less refused), positions at, inside and off steps, above the top,
 *    a new offset down or in place, the member count's direction (more
 *    always forwards, fewer always backwards, with or without 0x20, which
 *    md writes only for the same count), RAID 5 5 -> 4.
 * 5. The start's choice of the new offset stays between the distance and
 *    the room, where mdadm's middle of a small room falls short of it.
 * 6. RAID 10 (md's raid10 fields: positions in array sectors): near=2
 *    4 -> 6 with mdadm's offsets (2048 -> 1920) taken at 0, mid-way and on
 *    a 4 KiB boundary inside a chunk; the pieces the job may write from a
 *    checkpoint (md's reshape_request rule: one new row from 0, then
 *    growing: 384, 768, 1536 sectors); a distance below md's (one chunk,
 *    two for offset=2) refused; far layouts, a change of the number of
 *    copies and a position off 4 KiB refused; backwards (fewer members,
 *    or 0x20 at the same count: the data offset up by mdadm's least move)
 *    taken at the top, mid-way and at 0, refused above the top, half a
 *    chunk apart or with the new offset below; the pieces from the top
 *    down to 0 never stand still (near=2 6 -> 4 and 5 -> 4, near=3 5 -> 3
 *    with 32K -> 64K, offset=2 5 -> 4, chunk changes both ways).
 *
 * No randomness: the cases are fixed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>
#include <uraid/superblock.h>

#include "engine/md/reshape_state.h"
#include "../support/check.h"

#define MEMBER_SECTORS (64u * 2048)     /* 64 MiB */

struct crafted {
	struct uraid_sb sb;                     /* the array's fields */
	struct uraid_sb own[URAID_MAX_MEMBERS]; /* each slot's data_offset / new_offset */
	const struct uraid_sb *slot_sb[URAID_MAX_MEMBERS];
	uint64_t member_sectors[URAID_MAX_MEMBERS];
};

/* RAID 5 (level) from `from` to `to` members, chunks in sectors, data at
 * 4096, new_offset `delta` on every member, position pos. */
static void craft(struct crafted *c, int level, unsigned from, unsigned to, uint32_t chunk,
		  uint32_t new_chunk, int32_t delta, uint64_t pos)
{
	memset(c, 0, sizeof(*c));
	c->sb.feature_map = URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_NEW_OFFSET;
	c->sb.level = level;
	c->sb.layout = 2;       /* left-symmetric (RAID 6: the same word) */
	c->sb.new_level = (uint32_t)level;
	c->sb.new_layout = 2;
	c->sb.chunksize = chunk;
	c->sb.new_chunk = new_chunk;
	c->sb.raid_disks = to;
	c->sb.delta_disks = (int32_t)to - (int32_t)from;
	c->sb.size = 40000u / chunk * chunk;
	c->sb.reshape_position = pos;
	for (unsigned s = 0; s < (from > to ? from : to); s++) {
		c->own[s] = c->sb;
		c->own[s].data_offset = 4096;
		c->own[s].new_offset = delta;
		c->slot_sb[s] = &c->own[s];
		c->member_sectors[s] = MEMBER_SECTORS;
	}
}

static int build(struct crafted *c, struct reshape_state **rs, char *err, size_t errlen)
{
	err[0] = 0;
	return reshape_state_from_sb(&c->sb, c->slot_sb, c->member_sectors, rs, err, errlen);
}

static void expect(struct crafted *c, int want, const char *what)
{
	char err[256];
	struct reshape_state *rs = NULL;
	int rc = build(c, &rs, err, sizeof(err));

	printf("  %-58s rc %d%s%s\n", what, rc, err[0] ? ": " : "", err);
	CHECK(rc == want, "%s: rc %d, want %d (%s)", what, rc, want, err);
	CHECK(rc != 0 || rs != NULL, "%s: taken but no state", what);
	CHECK(rc == 0 || err[0], "%s: refused without a reason", what);
	free(rs);
}

static struct uraid_geom geom(int level, unsigned n, uint32_t chunk)
{
	struct uraid_geom g;
	char why[200];
	struct uraid_geom_params p = { .level = level, .layout = 2, .raid_disks = n,
				       .chunk_sectors = chunk, .dev_sectors = 40960 };
	if (uraid_geom_init(&g, &p, why, sizeof(why))) {
		fprintf(stderr, "geometry: %s\n", why);
		exit(1);
	}
	return g;
}

static void steps(void)
{
	static const struct { int level; unsigned from, to; uint32_t c, nc; } cases[] = {
		{ 5, 4, 5, 256, 128 }, { 5, 3, 4, 128, 128 }, { 5, 4, 5, 128, 256 },
		{ 6, 4, 5, 256, 128 }, { 5, 4, 4, 128, 64 }, { 5, 3, 6, 64, 1024 },
		{ 6, 5, 7, 128, 32 },
	};
	printf("steps:\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct uraid_geom o = geom(cases[i].level, cases[i].from, cases[i].c);
		struct uraid_geom n = geom(cases[i].level, cases[i].to, cases[i].nc);
		uint64_t step = reshape_step(&o, &n), align = reshape_align(&o, &n);
		uint64_t ro = (uint64_t)o.data_disks * o.chunk_sectors;
		uint64_t rn = (uint64_t)n.data_disks * n.chunk_sectors;
		printf("  RAID %d %u -> %u, chunk %u -> %u: step %llu (rows %llu, %llu; rule %llu)\n",
		       cases[i].level, cases[i].from, cases[i].to, cases[i].c, cases[i].nc,
		       (unsigned long long)step, (unsigned long long)ro, (unsigned long long)rn,
		       (unsigned long long)align);
		CHECK(step % ro == 0 && step % rn == 0, "step %llu not whole rows",
		      (unsigned long long)step);
		CHECK(step % align == 0, "step %llu is not a position md's rule takes (%llu)",
		      (unsigned long long)step, (unsigned long long)align);
	}
	/* the review's case: a checkpoint after one step must assemble */
	struct crafted c;
	struct uraid_geom o = geom(5, 4, 256), n = geom(5, 5, 128);
	uint64_t step = reshape_step(&o, &n);
	craft(&c, 5, 4, 5, 256, 128, -(int32_t)(step / o.data_disks), step);
	expect(&c, 0, "RAID 5 4->5 128K->64K checkpoint after one step");
}

static void offsets(void)
{
	struct crafted c;
	struct uraid_geom o = geom(5, 3, 128), n = geom(5, 4, 128);
	uint64_t step = reshape_step(&o, &n);           /* 768 */
	int32_t own_start = -(int32_t)(step / o.data_disks);  /* uraid's start: 384 */

	printf("new data offsets (RAID 5 3 -> 4, 64 KiB, step %llu):\n", (unsigned long long)step);
	craft(&c, 5, 3, 4, 128, 128, own_start, 0);
	expect(&c, 0, "uraid's own distance, position 0");
	craft(&c, 5, 3, 4, 128, 128, own_start, 10 * step);
	expect(&c, 0, "uraid's own distance, mid-way");
	craft(&c, 5, 3, 4, 128, 128, own_start, 10 * step - 384);
	expect(&c, 0, "uraid's own distance, inside an old row (md's stop)");
	craft(&c, 5, 3, 4, 128, 128, 8, 0);
	expect(&c, -EINVAL, "new_offset +8 (forwards onto live old data)");
	craft(&c, 5, 3, 4, 128, 128, 8, 10 * step);
	expect(&c, -EINVAL, "new_offset +8, mid-way");
	craft(&c, 5, 3, 4, 128, 128, 0, 0);
	expect(&c, -EINVAL, "new_offset 0 (in place)");
	craft(&c, 5, 3, 4, 128, 128, -8, 0);
	expect(&c, -EINVAL, "new_offset -8 (less than a step per member)");
	craft(&c, 5, 3, 4, 128, 128, -(int32_t)(step / n.data_disks) + 1, 0);
	expect(&c, -EINVAL, "one sector short of a step per new member");
	/* delta 0: the same count, the step moves as much old as new */
	craft(&c, 5, 4, 4, 256, 128, -128, 0);
	expect(&c, -EINVAL, "chunk 128K->64K, new_offset -128 (a step is 256)");
	craft(&c, 5, 4, 4, 256, 128, -256, 0);
	expect(&c, 0, "chunk 128K->64K, new_offset -256");
	/* md's own 3 -> 4 with 512 KiB chunks (grow-facts.md) */
	craft(&c, 5, 3, 4, 1024, 1024, -3072, 24576);
	expect(&c, 0, "md's 3->4 512K at 24576, new_offset -3072");
	/* one slot short among good ones */
	craft(&c, 5, 3, 4, 128, 128, own_start, 0);
	c.own[1].new_offset = -16;
	expect(&c, -EINVAL, "one slot with new_offset -16");
	/* the added member has no old data: any fitting offset */
	craft(&c, 5, 3, 4, 128, 128, own_start, 0);
	c.own[3].new_offset = 100;
	expect(&c, 0, "the added slot's own new offset above");
}

static void fields(void)
{
	struct crafted c;
	struct uraid_geom o = geom(5, 3, 128), n = geom(5, 4, 128);
	uint64_t step = reshape_step(&o, &n);
	int32_t d = -(int32_t)(step / o.data_disks);

	printf("other fields:\n");
	craft(&c, 5, 3, 4, 128, 128, d, 0);
	c.sb.delta_disks = 3;
	expect(&c, -EINVAL, "delta_disks 3 of raid_disks 4 (1 old member)");
	craft(&c, 5, 3, 4, 128, 128, d, 0);
	c.sb.delta_disks = -1;
	c.sb.reshape_position = 3 * 384;
	expect(&c, -EINVAL, "delta_disks -1 (fewer members: backwards), the offset down");
	craft(&c, 5, 3, 4, 128, 128, d, 0);
	c.sb.delta_disks = -100000;
	expect(&c, -EINVAL, "delta_disks -100000");
	craft(&c, 5, 3, 4, 128, 128, d, 128);
	expect(&c, -EINVAL, "position 128 (not on a new row)");
	craft(&c, 5, 3, 4, 128, 128, d, 0);
	struct reshape_state *rs = NULL;
	char err[256];
	if (build(&c, &rs, err, sizeof(err)) == 0) {
		uint64_t end = rs->end;
		free(rs);
		craft(&c, 5, 3, 4, 128, 128, d, end);
		expect(&c, 0, "position at the end (only the finish is left)");
		craft(&c, 5, 3, 4, 128, 128, d, end + 384);
		expect(&c, -EINVAL, "position past the end");
	} else {
		CHECK(0, "the base case is refused: %s", err);
	}
}

/* craft, backwards (feature 0x20): the new offset above the old one. */
static void craft_back(struct crafted *c, unsigned from, unsigned to, uint32_t chunk,
		       uint32_t new_chunk, int32_t delta, uint64_t pos)
{
	craft(c, 5, from, to, chunk, new_chunk, delta, pos);
	c->sb.feature_map |= URAID_FEATURE_RESHAPE_BACKWARDS;
}

static uint64_t top_of(struct crafted *c)
{
	struct reshape_state *rs = NULL;
	char err[256];
	uint64_t top = 0;
	if (build(c, &rs, err, sizeof(err)) == 0)
		top = rs->top;
	CHECK(rs && rs->backwards, "backwards base case refused: %s", err);
	free(rs);
	return top;
}

static void backwards(void)
{
	struct crafted c;

	printf("backwards (feature 0x20):\n");
	/* RAID 5 4 -> 4, chunk 512K -> 64K (md's backwards case): step 3072,
	   mdadm's least distance 3072 / 3 = 1024 */
	craft_back(&c, 4, 4, 1024, 128, 1024, 0);
	uint64_t top = top_of(&c);
	CHECK(top == 40000u / 1024 * 1024 * 3, "top %llu, want size rounded to 512K times 3",
	      (unsigned long long)top);
	craft_back(&c, 4, 4, 1024, 128, 1024, top);
	expect(&c, 0, "chunk 512K->64K, new_offset +1024, at the top");
	craft_back(&c, 4, 4, 1024, 128, 1023, top);
	expect(&c, -EINVAL, "new_offset +1023 (one short of a step per member)");
	craft_back(&c, 4, 4, 1024, 128, 1024, top - 384);
	expect(&c, -EINVAL, "one 64K row below the top (md's rule: 512K rows)");
	craft_back(&c, 4, 4, 1024, 128, 1024, 3072 * 5);
	expect(&c, 0, "+1024, mid-way");
	craft_back(&c, 4, 4, 1024, 128, 1024, 0);
	expect(&c, 0, "+1024, at 0 (all moved: only the finish is left)");
	craft_back(&c, 4, 4, 1024, 128, 1024, top + 3072);
	expect(&c, -EINVAL, "a position above the top");
	craft_back(&c, 4, 4, 1024, 128, 1024, 1000);
	expect(&c, -EINVAL, "a position off md's boundary");
	craft_back(&c, 4, 4, 1024, 128, -1024, top);
	expect(&c, -EINVAL, "new_offset -1024 (down, but backwards)");
	craft_back(&c, 4, 4, 1024, 128, 0, top);
	expect(&c, -EINVAL, "new_offset 0 (in place)");
	craft_back(&c, 4, 4, 1024, 128, 1 << 20, top);
	expect(&c, -EINVAL, "new_offset past the member's end");
	/* a member count: more only forwards, fewer only backwards (md) */
	craft_back(&c, 3, 4, 128, 128, 1024, 0);
	expect(&c, -EINVAL, "0x20 with more members (md: forwards), the offset up");
	craft(&c, 5, 5, 4, 128, 128, -1024, 1536 * 3);
	expect(&c, -EINVAL, "fewer members, the new offset down (md: always backwards)");
	/* RAID 5 5 -> 4, 64K: rows 512 and 384, step 1536, mdadm's +384 */
	craft_back(&c, 5, 4, 128, 128, 384, 0);
	top = top_of(&c);
	CHECK(top == 40000u / 128 * 128 * 3, "5 -> 4: top %llu, want the new size",
	      (unsigned long long)top);
	craft_back(&c, 5, 4, 128, 128, 384, top);
	expect(&c, 0, "5->4, new_offset +384 (mdadm's), at the top");
	craft(&c, 5, 5, 4, 128, 128, 384, top);
	expect(&c, 0, "5->4 without 0x20 (as md writes it: delta_disks says it)");
	struct reshape_state *rs = NULL;
	char err[256];
	CHECK(build(&c, &rs, err, sizeof(err)) == 0 && rs->backwards,
	      "5->4 without 0x20 not taken as backwards: %s", err);
	free(rs);
	craft_back(&c, 5, 4, 128, 128, 383, top);
	expect(&c, -EINVAL, "5->4, new_offset +383");
	craft_back(&c, 5, 4, 128, 128, 384, 1536 * 3 + 384);
	expect(&c, 0, "5->4, +384, inside a step");
	craft_back(&c, 5, 4, 128, 128, 384, top);
	c.slot_sb[4] = NULL;
	expect(&c, 0, "5->4, the slot going away missing (degraded old geometry)");
}

/*
 * The start's choice of the new offset (reshape_choose_offset, mdadm's
 * choose_offset) with room between the distance and twice it: mdadm's
 * middle can fall short of the distance (its low bits stop at 1 MiB), and
 * the state the start then builds would refuse its own reshape. RAID 5
 * 4 -> 4, chunk 2M -> 1M (step 12288, distance 4096 per member), data at
 * 4096, room after exactly 4096: the middle is 6144 (+2048); the answer
 * must be 8192 (+4096), which the state takes.
 */
static void choice(void)
{
	struct crafted c;
	static const struct { uint64_t lo, hi, min, max; } cases[] = {
		{ 4096, 8192, 8192, 8192 },     /* backwards, room = distance 4096 */
		{ 4096, 8193, 8192, 8193 },     /* one more */
		{ 2048, 5121, 5120, 5121 },     /* the review's: distance 3072, room 3073 */
		{ 4096, 8192, 4096, 4096 },     /* forwards, room before = distance 4096 */
		{ 2048, 6143, 2048, 3071 },     /* forwards, distance 3072, room 4095 */
		{ 2048, 4096, 3072, 4096 },     /* distance 1024: mdadm's own answer kept */
	};

	printf("choice of the new offset:\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t got = reshape_choose_offset(cases[i].lo, cases[i].hi, cases[i].min,
						     cases[i].max);
		printf("  lo %llu hi %llu inside [%llu, %llu]: %llu\n",
		       (unsigned long long)cases[i].lo, (unsigned long long)cases[i].hi,
		       (unsigned long long)cases[i].min, (unsigned long long)cases[i].max,
		       (unsigned long long)got);
		CHECK(got >= cases[i].min && got <= cases[i].max, "choice %llu outside [%llu, %llu]",
		      (unsigned long long)got, (unsigned long long)cases[i].min,
		      (unsigned long long)cases[i].max);
	}
	CHECK(reshape_choose_offset(2048, 4096, 3072, 4096) == 4096,
	      "mdadm's choice inside the bounds changed");
	uint64_t no = reshape_choose_offset(4096, 8192, 8192, 8192);
	craft_back(&c, 4, 4, 4096, 2048, (int32_t)(no - 4096), 0);
	uint64_t top = top_of(&c);
	craft_back(&c, 4, 4, 4096, 2048, (int32_t)(no - 4096), top);
	expect(&c, 0, "chunk 2M->1M, the start's choice with room = distance");
	craft_back(&c, 4, 4, 4096, 2048, 2048, top);
	expect(&c, -EINVAL, "chunk 2M->1M, mdadm's middle (+2048)");
}

/* RAID 10 from `from` to `to` members, layouts, 64 KiB chunks, data at 2048,
 * new_offset `delta` on every member, position pos. */
static void craft10(struct crafted *c, unsigned from, unsigned to, uint32_t layout,
		    uint32_t new_layout, int32_t delta, uint64_t pos)
{
	craft(c, 10, from, to, 128, 128, delta, pos);
	c->sb.layout = layout;
	c->sb.new_layout = new_layout;
	for (unsigned s = 0; s < (from > to ? from : to); s++) {
		c->own[s].layout = layout;
		c->own[s].new_layout = new_layout;
		c->own[s].data_offset = 2048;
	}
}

/*
 * Backwards RAID 10 pieces: from the top the first one reaches down to the
 * new chunk whose copies lie above the old row of the top's last copy
 * (near=2 6 -> 4, one chunk apart: old row 207 ends at 26624, new row 207
 * is chunk 414: 52992), and from each checkpoint the walk goes on to 0
 * without standing still, for md's least distance in each layout.
 */
static void raid10_back(void)
{
	static const struct {
		const char *what;
		unsigned from, to;
		uint32_t layout, chunk, new_chunk;
		int32_t delta;
		bool flag;
	} cases[] = {
		{ "near=2 6 -> 4", 6, 4, 0x102, 128, 128, 128, false },
		{ "near=2 5 -> 4", 5, 4, 0x102, 128, 128, 128, false },
		{ "near=3 5 -> 3, 32K -> 64K", 5, 3, 0x103, 64, 128, 128, false },
		{ "offset=2 5 -> 4", 5, 4, 0x10201, 128, 128, 256, false },
		{ "near=2 4, 64K -> 32K, 0x20", 4, 4, 0x102, 128, 64, 128, true },
		{ "near=2 4, 32K -> 64K, 0x20", 4, 4, 0x102, 64, 128, 128, true },
	};
	char err[256];

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct crafted c;
		struct reshape_state *rs = NULL;
		craft10(&c, cases[i].from, cases[i].to, cases[i].layout, cases[i].layout,
			cases[i].delta, 0);
		c.sb.chunksize = cases[i].chunk;
		c.sb.new_chunk = cases[i].new_chunk;
		if (cases[i].flag)
			c.sb.feature_map |= URAID_FEATURE_RESHAPE_BACKWARDS;
		if (build(&c, &rs, err, sizeof(err))) {
			CHECK(0, "%s: %s", cases[i].what, err);
			continue;
		}
		uint64_t pos = rs->top, first = 0;
		unsigned pieces = 0;
		CHECK(rs->backwards && rs->top == rs->end, "%s: backwards %d, top %llu, end %llu",
		      cases[i].what, rs->backwards, (unsigned long long)rs->top,
		      (unsigned long long)rs->end);
		while (pos > 0 && pieces < 100000) {
			uint64_t s = reshape_copies_safe_start(rs, pos, 0);
			if (s == pos)
				break;
			CHECK(s % 8 == 0, "%s: a piece starts at %llu, not on 4 KiB", cases[i].what,
			      (unsigned long long)s);
			if (!pieces)
				first = s;
			pos = s;
			pieces++;
		}
		printf("  %s: from the top %llu, first piece down to %llu, 0 in %u pieces\n",
		       cases[i].what, (unsigned long long)rs->top, (unsigned long long)first, pieces);
		CHECK(pos == 0, "%s: the walk stood still at %llu", cases[i].what,
		      (unsigned long long)pos);
		if (i == 0)
			CHECK(first == 52992, "%s: the first piece down to %llu, want 52992",
			      cases[i].what, (unsigned long long)first);
		/* a limit inside a chunk holds */
		CHECK(reshape_copies_safe_start(rs, rs->top, rs->top - 100) == rs->top - 100,
		      "%s: a limit inside a chunk", cases[i].what);
		free(rs);
	}
}

static void raid10(void)
{
	struct crafted c;
	char err[256];

	printf("RAID 10\n");
	craft10(&c, 4, 6, 0x102, 0x102, -128, 0);
	expect(&c, 0, "near=2 4 -> 6, mdadm's -128, at 0");
	craft10(&c, 4, 6, 0x102, 0x102, -128, 4096);
	expect(&c, 0, "near=2 4 -> 6 at 4096");
	craft10(&c, 4, 6, 0x102, 0x102, -128, 4096 + 8);
	expect(&c, 0, "near=2 4 -> 6 at 4104 (inside a chunk, as md may stop)");
	craft10(&c, 4, 6, 0x102, 0x102, -128, 4096 + 4);
	expect(&c, -EINVAL, "a position off 4 KiB");
	craft10(&c, 4, 6, 0x102, 0x102, -64, 0);
	expect(&c, -EINVAL, "half a chunk apart (md refuses it too)");
	craft10(&c, 4, 5, 0x10201, 0x10201, -128, 0);
	expect(&c, -EINVAL, "offset=2 4 -> 5 one chunk apart (md needs two)");
	craft10(&c, 4, 5, 0x10201, 0x10201, -256, 0);
	expect(&c, 0, "offset=2 4 -> 5, mdadm's -256");
	craft10(&c, 4, 5, 0x201, 0x201, -256, 0);
	expect(&c, -EINVAL, "far=2");
	craft10(&c, 4, 6, 0x102, 0x103, -128, 0);
	expect(&c, -EINVAL, "near=2 -> near=3 (the number of copies)");
	/* backwards (md's: fewer members, or 0x20 at the same count), the
	   data offset up; the top is the new array (312 chunks per member:
	   624 chunks on 4 near=2 members, 79872 sectors) */
	craft10(&c, 6, 4, 0x102, 0x102, 128, 79872);
	expect(&c, 0, "near=2 6 -> 4, mdadm's +128, at the top");
	craft10(&c, 6, 4, 0x102, 0x102, 128, 40000);
	expect(&c, 0, "near=2 6 -> 4 mid-way (inside a chunk)");
	craft10(&c, 6, 4, 0x102, 0x102, 128, 0);
	expect(&c, 0, "near=2 6 -> 4 at 0 (all moved: only the finish)");
	craft10(&c, 6, 4, 0x102, 0x102, 128, 79872 + 8);
	expect(&c, -EINVAL, "near=2 6 -> 4 above the top");
	craft10(&c, 6, 4, 0x102, 0x102, 64, 79872);
	expect(&c, -EINVAL, "near=2 6 -> 4 half a chunk apart");
	craft10(&c, 6, 4, 0x102, 0x102, -128, 79872);
	expect(&c, -EINVAL, "near=2 6 -> 4 with the new offset below");
	craft10(&c, 4, 4, 0x102, 0x102, 128, 79872);
	c.sb.feature_map |= URAID_FEATURE_RESHAPE_BACKWARDS;
	c.sb.new_chunk = 64;
	expect(&c, 0, "the same count with 0x20, chunk 64K -> 32K, +128");
	craft10(&c, 5, 4, 0x10201, 0x10201, 128, 39936);
	expect(&c, -EINVAL, "offset=2 5 -> 4 one chunk apart (md needs two)");
	craft10(&c, 5, 4, 0x10201, 0x10201, 256, 39936);
	expect(&c, 0, "offset=2 5 -> 4, mdadm's +256, mid-way");

	/* the pieces from a checkpoint: near=2 4 -> 6, 64 KiB, one chunk apart */
	craft10(&c, 4, 6, 0x102, 0x102, -128, 0);
	struct reshape_state *rs = NULL;
	if (build(&c, &rs, err, sizeof(err)) == 0) {
		static const uint64_t from[] = { 0, 384, 768 }, want[] = { 384, 768, 1536 };
		CHECK(rs->copies && reshape_pos_div(rs) == 1 && rs->step == 8192,
		      "RAID 10 state: copies %d, pos_div %llu, step %llu", rs->copies,
		      (unsigned long long)reshape_pos_div(rs), (unsigned long long)rs->step);
		for (unsigned k = 0; k < 3; k++) {
			uint64_t e = reshape_copies_safe_end(rs, from[k], rs->end);
			printf("  safe end from %llu: %llu\n", (unsigned long long)from[k],
			       (unsigned long long)e);
			CHECK(e == want[k], "safe end from %llu: %llu, want %llu",
			      (unsigned long long)from[k], (unsigned long long)e,
			      (unsigned long long)want[k]);
		}
		CHECK(reshape_copies_safe_end(rs, 0, 100) == 100, "a limit inside a chunk");
		/* past the old array nothing old is live: up to the limit */
		uint64_t old_end = rs->g[RESHAPE_OLD].array_sectors;
		CHECK(reshape_copies_safe_end(rs, old_end, rs->end) == rs->end,
		      "past the old end: to the end");
	} else {
		CHECK(0, "RAID 10 state: %s", err);
	}
	free(rs);
	raid10_back();
}

int main(void)
{
	steps();
	offsets();
	fields();
	backwards();
	choice();
	raid10();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
