/* SPDX-License-Identifier: MIT */
/*
 * Level and layout names in mdadm's words: what `mdadm --level/--layout`
 * accept (mdadm maps.c pers/r5layout/r6layout/r0layout, util.c
 * parse_layout_10) and what `mdadm --examine` prints on its Layout line
 * (map_num, util.c print_r10_layout); defaults and validity.
 */
#include <errno.h>
#include <string.h>

#include "../support/geom_test.h"

static void level_ok(const char *name, int want)
{
	int lv = 12345;

	GT_CHECK(uraid_level_parse(name, &lv) == 0 && lv == want, "level \"%s\" -> %d, want %d",
		 name, lv, want);
}

static void level_bad(const char *name)
{
	int lv;

	GT_CHECK(uraid_level_parse(name, &lv) == -EINVAL, "level \"%s\" must be rejected",
		 name ? name : "(null)");
}

static void layout_ok(int level, const char *name, uint32_t want)
{
	uint32_t l = 0xdeadbeef;

	GT_CHECK(uraid_layout_parse(level, name, &l) == 0 && l == want,
		 "level %d layout \"%s\" -> 0x%x, want 0x%x", level, name, l, want);
}

static void layout_bad(int level, const char *name)
{
	uint32_t l;

	GT_CHECK(uraid_layout_parse(level, name, &l) == -EINVAL,
		 "level %d layout \"%s\" must be rejected", level, name);
}

static void name_is(int level, uint32_t layout, const char *want)
{
	char buf[64];
	const char *got = uraid_layout_name(level, layout, buf, sizeof(buf));

	if (!want)
		GT_CHECK(got == NULL, "level %d layout 0x%x: name \"%s\", want none", level, layout,
			 got);
	else
		GT_CHECK(got && !strcmp(got, want), "level %d layout 0x%x: name \"%s\", want \"%s\"",
			 level, layout, got ? got : "(null)", want);
}

static void test_levels(void)
{
	static const struct { const char *name; int level; } ok[] = {
		{ "linear", -1 }, { "raid0", 0 }, { "0", 0 }, { "stripe", 0 }, { "raid1", 1 },
		{ "1", 1 }, { "mirror", 1 }, { "raid4", 4 }, { "4", 4 }, { "raid5", 5 }, { "5", 5 },
		{ "raid6", 6 }, { "6", 6 }, { "raid10", 10 }, { "10", 10 },
	};
	static const char *const bad[] = {
		"", "2", "raid2", "3", "7", "-1", "RAID5", "raid 5", "5 ", "multipath", "faulty",
		"container", "raid", "11", "05",
	};

	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		level_ok(ok[i].name, ok[i].level);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		level_bad(bad[i]);
	level_bad(NULL);
	GT_CHECK(!strcmp(uraid_level_name(-1), "linear") && !strcmp(uraid_level_name(0), "raid0") &&
		 !strcmp(uraid_level_name(1), "raid1") && !strcmp(uraid_level_name(4), "raid4") &&
		 !strcmp(uraid_level_name(5), "raid5") && !strcmp(uraid_level_name(6), "raid6") &&
		 !strcmp(uraid_level_name(10), "raid10"), "level names");
	GT_CHECK(uraid_level_name(2) == NULL && uraid_level_name(-5) == NULL, "unknown level names");
}

static void test_raid56_names(void)
{
	static const struct { const char *name; uint32_t layout; } r5[] = {
		{ "left-asymmetric", 0 }, { "right-asymmetric", 1 }, { "left-symmetric", 2 },
		{ "right-symmetric", 3 }, { "default", 2 }, { "la", 0 }, { "ra", 1 }, { "ls", 2 },
		{ "rs", 3 }, { "parity-first", 4 }, { "parity-last", 5 },
		/* mdadm maps the DDF names to RAID 5 layouts with the same placement */
		{ "ddf-zero-restart", 1 }, { "ddf-N-restart", 0 }, { "ddf-N-continue", 2 },
	};
	static const struct { const char *name; uint32_t layout; } r6[] = {
		{ "left-asymmetric", 0 }, { "right-asymmetric", 1 }, { "left-symmetric", 2 },
		{ "right-symmetric", 3 }, { "default", 2 }, { "la", 0 }, { "ra", 1 }, { "ls", 2 },
		{ "rs", 3 }, { "parity-first", 4 }, { "parity-last", 5 },
		{ "ddf-zero-restart", 8 }, { "ddf-N-restart", 9 }, { "ddf-N-continue", 10 },
		{ "left-asymmetric-6", 16 }, { "right-asymmetric-6", 17 }, { "left-symmetric-6", 18 },
		{ "right-symmetric-6", 19 }, { "parity-first-6", 20 },
	};
	/* --examine's text for each RAID 6 layout number (first name in mdadm's table). */
	static const char *const r6_print[21] = {
		"left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric",
		"parity-first", "parity-last", NULL, NULL, "ddf-zero-restart", "ddf-N-restart",
		"ddf-N-continue", NULL, NULL, NULL, NULL, NULL, "left-asymmetric-6",
		"right-asymmetric-6", "left-symmetric-6", "right-symmetric-6", "parity-first-6",
	};

	for (unsigned i = 0; i < sizeof(r5) / sizeof(r5[0]); i++)
		layout_ok(5, r5[i].name, r5[i].layout);
	for (unsigned i = 0; i < sizeof(r6) / sizeof(r6[0]); i++)
		layout_ok(6, r6[i].name, r6[i].layout);
	layout_bad(5, "left-symmetric-6");
	layout_bad(5, "parity-first-6");
	layout_bad(5, "Left-Symmetric");
	layout_bad(5, "");
	layout_bad(5, "n2");
	layout_bad(6, "left");
	layout_bad(6, "2");

	for (uint32_t l = 0; l <= 25; l++) {
		name_is(5, l, l <= 5 ? r6_print[l] : "-unknown-");
		name_is(6, l, l <= 20 && r6_print[l] ? r6_print[l] : "-unknown-");
		GT_CHECK(uraid_layout_valid(5, l, 4) == (l <= 5), "valid(5, %u)", l);
		GT_CHECK(uraid_layout_valid(6, l, 5) == (l <= 20 && r6_print[l] != NULL), "valid(6, %u)", l);
		/* every printed RAID 5/6 name parses back to its number */
		if (l <= 20 && r6_print[l]) {
			layout_ok(6, r6_print[l], l);
			if (l <= 5)
				layout_ok(5, r6_print[l], l);
		}
	}
	name_is(5, 0xffffffffu, "-unknown-");
}

static void test_raid10_names(void)
{
	layout_ok(10, "n2", 0x102);
	layout_ok(10, "f2", 0x201);
	layout_ok(10, "o2", 0x10201);
	layout_ok(10, "n3", 0x103);
	layout_ok(10, "f4", 0x401);
	layout_ok(10, "o3", 0x10301);
	layout_ok(10, "n1", 0x101);   /* parses; uraid_layout_valid rejects it */
	layout_ok(10, "n255", 0x1ff);
	layout_ok(10, "f255", 0xff01);
	layout_ok(10, "n02", 0x102);
	layout_bad(10, "n0");
	layout_bad(10, "n256");
	layout_bad(10, "x2");
	layout_bad(10, "N2");
	layout_bad(10, "n");
	layout_bad(10, "n2x");
	layout_bad(10, "n 2");
	layout_bad(10, "n+2");
	layout_bad(10, "n-2");
	layout_bad(10, "");
	layout_bad(10, "near=2");
	layout_bad(10, "default");

	/* print_r10_layout, without the space it puts after "Layout :" */
	name_is(10, 0x102, "near=2");
	name_is(10, 0x103, "near=3");
	name_is(10, 0x201, "far=2");
	name_is(10, 0x10201, "offset=2");
	name_is(10, 0x202, "near=2, far=2");
	name_is(10, 0x10202, "near=2, offset=2");
	name_is(10, 0x40201, "far=2");
	name_is(10, 0x101, "NO REDUNDANCY");
	name_is(10, 0x10101, "NO REDUNDANCY");
	{
		char small[6];

		GT_CHECK(uraid_layout_name(10, 0x202, small, sizeof(small)) == small &&
			 !strcmp(small, "near="), "RAID 10 name truncated to the buffer: \"%s\"", small);
		GT_CHECK(uraid_layout_name(10, 0x202, NULL, 0) == NULL, "no buffer");
	}

	GT_CHECK(uraid_layout_valid(10, 0x102, 2), "n2 on 2");
	GT_CHECK(!uraid_layout_valid(10, 0x102, 1), "n2 on 1");
	GT_CHECK(!uraid_layout_valid(10, 0x103, 2), "n3 on 2");
	GT_CHECK(!uraid_layout_valid(10, 0x101, 4), "n1 on 4");
	GT_CHECK(uraid_layout_valid(10, 0x201, 3), "f2 on 3");
	GT_CHECK(uraid_layout_valid(10, 0x40201, 5), "f2 + far sets on 5");
	GT_CHECK(!uraid_layout_valid(10, 0x20201, 5), "f2 + broken far sets on 5");
	GT_CHECK(!uraid_layout_valid(10, 0x80102, 4), "n2 + bit 19");
	GT_CHECK(!uraid_layout_valid(10, 0x10202, 5), "n2o2 on 5");
	GT_CHECK(uraid_layout_valid(10, 0x10202, 4), "n2o2 on 4");
}

static void test_other_names(void)
{
	layout_ok(0, "original", 1);
	layout_ok(0, "alternate", 2);
	layout_ok(0, "1", 1);
	layout_ok(0, "2", 2);
	layout_ok(0, "dangerous", 0);
	layout_bad(0, "default");
	layout_bad(0, "left-symmetric");
	name_is(0, 1, "original");
	name_is(0, 2, "alternate");
	name_is(0, 0, "dangerous");
	name_is(0, 3, "-unknown-");
	GT_CHECK(uraid_layout_valid(0, 1, 3) && uraid_layout_valid(0, 2, 3) &&
		 !uraid_layout_valid(0, 0, 3) && !uraid_layout_valid(0, 3, 3), "RAID 0 validity");

	layout_ok(4, "parity-last", 0);
	layout_ok(4, "default", 0);
	layout_bad(4, "parity-first");
	layout_bad(4, "left-symmetric");
	layout_ok(1, "default", 0);
	layout_bad(1, "n2");
	layout_ok(-1, "default", 0);
	layout_bad(-1, "original");
	layout_bad(7, "default");
	layout_bad(5, NULL);
	name_is(1, 0, NULL);
	name_is(4, 0, NULL);
	name_is(4, 5, NULL);
	name_is(-1, 0, NULL);
	name_is(7, 0, NULL);
	{
		char buf[32] = "x";

		uraid_layout_name(4, 0, buf, sizeof(buf));
		GT_CHECK(!strcmp(buf, "parity-last"), "RAID 4 buf \"%s\"", buf);
		uraid_layout_name(1, 0, buf, sizeof(buf));
		GT_CHECK(!strcmp(buf, ""), "RAID 1 buf \"%s\"", buf);
	}
	GT_CHECK(uraid_layout_valid(4, 0, 3) && uraid_layout_valid(4, 5, 3) &&
		 uraid_layout_valid(1, 0, 2) && uraid_layout_valid(-1, 0, 2) &&
		 !uraid_layout_valid(7, 0, 3), "validity of levels without a layout");

	GT_CHECK(uraid_layout_default(5) == 2 && uraid_layout_default(6) == 2 &&
		 uraid_layout_default(10) == 0x102 && uraid_layout_default(0) == 1 &&
		 uraid_layout_default(1) == 0 && uraid_layout_default(4) == 0 &&
		 uraid_layout_default(-1) == 0, "defaults");
	for (int lv = -1; lv <= 10; lv++) {
		char buf[64];
		const char *n = uraid_layout_name(lv, uraid_layout_default(lv), buf, sizeof(buf));

		if (lv == 5 || lv == 6)
			GT_CHECK(n && !strcmp(n, "left-symmetric"), "default name of %d", lv);
		if (lv == 10)
			GT_CHECK(n && !strcmp(n, "near=2"), "default name of 10");
		if (lv == 0)
			GT_CHECK(n && !strcmp(n, "original"), "default name of 0");
	}
}

int main(void)
{
	test_levels();
	test_raid56_names();
	test_raid10_names();
	test_other_names();
	return gt_finish("test_geom_names");
}
