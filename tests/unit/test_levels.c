/* SPDX-License-Identifier: MIT */
/*
 * The levels' descriptors as seen from outside the engine (uraid/level.h):
 * every level geom names has one, under the same name; the facts agree with
 * the geometry (parity members are the failures RAID 4/5/6 survive); the
 * minimum member counts are md's and mdadm's; survival and the full stripe
 * are what md and the NBD export used before there were descriptors.
 */
#include <string.h>

#include <uraid/level.h>

#include "../support/geom_test.h"

static const int all[] = { URAID_LEVEL_LINEAR, URAID_LEVEL_0, URAID_LEVEL_1, URAID_LEVEL_4,
			   URAID_LEVEL_5, URAID_LEVEL_6, URAID_LEVEL_10 };
#define NLEVELS (sizeof(all) / sizeof(all[0]))

static void test_registry(void)
{
	for (unsigned i = 0; i < NLEVELS; i++) {
		const struct uraid_level_info *li = uraid_level_info(all[i]);
		GT_CHECK(li && li->level == all[i], "level %d has a descriptor", all[i]);
		if (!li)
			continue;
		GT_CHECK(!strcmp(li->name, uraid_level_name(all[i])), "level %d named %s, geom says %s",
			 all[i], li->name, uraid_level_name(all[i]));
		GT_CHECK(li->min_members >= 1 && li->create_min_members >= li->min_members,
			 "%s: minimums %u/%u", li->name, li->min_members, li->create_min_members);
		GT_CHECK(!li->whole_members || !li->redundant, "%s: whole members and redundant",
			 li->name);
		GT_CHECK(li->nreshape_to == 0, "%s: no reshape yet", li->name);
	}
	GT_CHECK(!uraid_level_info(2) && !uraid_level_info(3) && !uraid_level_info(-4),
		 "levels uraid does not run have none");
	/* mdadm without --force: 2 members, RAID 6 4 (uraid takes linear on 1) */
	GT_CHECK(uraid_level_info(URAID_LEVEL_0)->create_min_members == 2, "raid0 needs 2");
	GT_CHECK(uraid_level_info(URAID_LEVEL_6)->create_min_members == 4, "raid6 needs 4");
	GT_CHECK(uraid_level_info(URAID_LEVEL_LINEAR)->create_min_members == 1, "linear takes 1");
}

static void geom_of(struct uraid_geom *g, int level, uint32_t layout, unsigned n)
{
	uint64_t sizes[8] = { 8192, 8192, 8192, 8192, 8192, 8192, 8192, 8192 };
	struct uraid_geom_params p = {
		.level = level, .layout = layout, .raid_disks = n,
		.chunk_sectors = level == URAID_LEVEL_1 ? 0 : 128, .dev_sectors = 8192,
		.member_sectors = sizes,
	};
	char why[200];
	GT_CHECK(uraid_geom_init(g, &p, why, sizeof(why)) == 0, "geometry of %d: %s", level, why);
}

static void test_survival(void)
{
	static struct uraid_geom g;
	bool present[8] = { true, true, true, true, true, true, true, true };
	uint64_t bad;

	for (unsigned i = 0; i < NLEVELS; i++) {
		const struct uraid_level_info *li = uraid_level_info(all[i]);
		geom_of(&g, all[i], uraid_layout_default(all[i]), 4);
		GT_CHECK(uraid_level_survives(&g, present, &bad), "%s whole", li->name);
		if (li->parity_members)
			GT_CHECK(uraid_geom_max_failures(&g) == li->parity_members,
				 "%s: survives as many failures as it has parity", li->name);
		present[1] = false;
		GT_CHECK(uraid_level_survives(&g, present, &bad) == li->redundant,
			 "%s without slot 1", li->name);
		present[1] = true;
	}
	/* RAID 10 n2 on 4: slots 0 and 1 hold the same chunks; 0 and 2 do not */
	geom_of(&g, URAID_LEVEL_10, URAID_RAID10_DEFAULT, 4);
	present[0] = present[2] = false;
	GT_CHECK(uraid_level_survives(&g, present, &bad), "raid10 n2 without slots 0 and 2");
	present[2] = true;
	present[1] = false;
	GT_CHECK(!uraid_level_survives(&g, present, &bad) && bad == 0,
		 "raid10 n2 without slots 0 and 1: chunk 0 lost (%llu)", (unsigned long long)bad);
	/* RAID 6 without 3 of 4 */
	geom_of(&g, URAID_LEVEL_6, uraid_layout_default(URAID_LEVEL_6), 4);
	present[0] = present[1] = present[2] = false;
	GT_CHECK(!uraid_level_survives(&g, present, &bad) && bad == UINT64_MAX, "raid6 without 3");
}

static void test_full_stripe(void)
{
	const uint64_t c = 65536;
	struct { int level; uint64_t want; } t[] = {
		{ URAID_LEVEL_LINEAR, 0 }, { URAID_LEVEL_0, 4 * c }, { URAID_LEVEL_1, 0 },
		{ URAID_LEVEL_4, 3 * c }, { URAID_LEVEL_5, 3 * c }, { URAID_LEVEL_6, 2 * c },
		{ URAID_LEVEL_10, c },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t got = uraid_level_full_stripe(uraid_level_info(t[i].level), 4, c);
		GT_CHECK(got == t[i].want, "level %d on 4: full stripe %llu, want %llu", t[i].level,
			 (unsigned long long)got, (unsigned long long)t[i].want);
	}
	GT_CHECK(uraid_level_full_stripe(NULL, 4, c) == 0, "no level, no stripe");
}

int main(void)
{
	test_registry();
	test_survival();
	test_full_stripe();
	return gt_finish("test_levels");
}
