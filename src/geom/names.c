/* SPDX-License-Identifier: MIT */
/*
 * Level and layout names in mdadm's words: the names `mdadm --level` and
 * `--layout` accept (mdadm maps.c: pers, r5layout, r6layout, r0layout;
 * util.c parse_layout_10) and the text `mdadm --examine` prints on its
 * "Layout :" line (map_num of those tables, util.c print_r10_layout).
 */
#include <stdlib.h>
#include <string.h>

#include "geom/geom_internal.h"

struct name_map {
	const char *name;
	int num;
};

/* mdadm's `pers` table, minus the personalities uraid does not run. */
static const struct name_map levels[] = {
	{ "linear", URAID_LEVEL_LINEAR },
	{ "raid0", 0 }, { "0", 0 }, { "stripe", 0 },
	{ "raid1", 1 }, { "1", 1 }, { "mirror", 1 },
	{ "raid4", 4 }, { "4", 4 },
	{ "raid5", 5 }, { "5", 5 },
	{ "raid6", 6 }, { "6", 6 },
	{ "raid10", 10 }, { "10", 10 },
	{ NULL, 0 }
};

/*
 * r5layout: the first name of each number is what --examine prints. The
 * DDF names are accepted for RAID 5 too and give the RAID 5 layout with the
 * same placement, as mdadm does.
 */
static const struct name_map r5layout[] = {
	{ "left-asymmetric", URAID_LEFT_ASYMMETRIC },
	{ "right-asymmetric", URAID_RIGHT_ASYMMETRIC },
	{ "left-symmetric", URAID_LEFT_SYMMETRIC },
	{ "right-symmetric", URAID_RIGHT_SYMMETRIC },
	{ "default", URAID_LEFT_SYMMETRIC },
	{ "la", URAID_LEFT_ASYMMETRIC },
	{ "ra", URAID_RIGHT_ASYMMETRIC },
	{ "ls", URAID_LEFT_SYMMETRIC },
	{ "rs", URAID_RIGHT_SYMMETRIC },
	{ "parity-first", URAID_PARITY_FIRST },
	{ "parity-last", URAID_PARITY_LAST },
	{ "ddf-zero-restart", URAID_RIGHT_ASYMMETRIC },
	{ "ddf-N-restart", URAID_LEFT_ASYMMETRIC },
	{ "ddf-N-continue", URAID_LEFT_SYMMETRIC },
	{ NULL, 0 }
};

static const struct name_map r6layout[] = {
	{ "left-asymmetric", URAID_LEFT_ASYMMETRIC },
	{ "right-asymmetric", URAID_RIGHT_ASYMMETRIC },
	{ "left-symmetric", URAID_LEFT_SYMMETRIC },
	{ "right-symmetric", URAID_RIGHT_SYMMETRIC },
	{ "default", URAID_LEFT_SYMMETRIC },
	{ "la", URAID_LEFT_ASYMMETRIC },
	{ "ra", URAID_RIGHT_ASYMMETRIC },
	{ "ls", URAID_LEFT_SYMMETRIC },
	{ "rs", URAID_RIGHT_SYMMETRIC },
	{ "parity-first", URAID_PARITY_FIRST },
	{ "parity-last", URAID_PARITY_LAST },
	{ "ddf-zero-restart", URAID_ROTATING_ZERO_RESTART },
	{ "ddf-N-restart", URAID_ROTATING_N_RESTART },
	{ "ddf-N-continue", URAID_ROTATING_N_CONTINUE },
	{ "left-asymmetric-6", URAID_LEFT_ASYMMETRIC_6 },
	{ "right-asymmetric-6", URAID_RIGHT_ASYMMETRIC_6 },
	{ "left-symmetric-6", URAID_LEFT_SYMMETRIC_6 },
	{ "right-symmetric-6", URAID_RIGHT_SYMMETRIC_6 },
	{ "parity-first-6", URAID_PARITY_FIRST_6 },
	{ NULL, 0 }
};

/* r0layout; 0 ("dangerous") is mdadm's word for "no layout recorded". */
static const struct name_map r0layout[] = {
	{ "original", URAID_RAID0_ORIG },
	{ "alternate", URAID_RAID0_ALT_MULTIZONE },
	{ "1", URAID_RAID0_ORIG },
	{ "2", URAID_RAID0_ALT_MULTIZONE },
	{ "dangerous", 0 },
	{ NULL, 0 }
};

/* RAID 1, 4 and linear have no layout; mdadm rejects --layout for them. */
static const struct name_map no_layout[] = {
	{ "default", 0 },
	{ NULL, 0 }
};

/* RAID 4 always keeps parity on the last member; md ignores the word. */
static const struct name_map r4layout[] = {
	{ "default", 0 },
	{ "parity-last", 0 },
	{ NULL, 0 }
};

static const struct name_map *find_name(const struct name_map *m, const char *name)
{
	for (; m->name; m++)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

static const char *find_num(const struct name_map *m, int num)
{
	for (; m->name; m++)
		if (m->num == num)
			return m->name;
	return NULL;
}

int uraid_level_parse(const char *name, int *level)
{
	const struct name_map *m = name ? find_name(levels, name) : NULL;

	if (!m)
		return -EINVAL;
	*level = m->num;
	return 0;
}

const char *uraid_level_name(int level)
{
	return find_num(levels, level);
}

/* "n2", "f3", "o2": a letter then copies 1..255 in decimal digits only. */
static int parse_raid10(const char *name, uint32_t *layout)
{
	unsigned long copies;
	char *end;

	if ((name[0] != 'n' && name[0] != 'f' && name[0] != 'o') ||
	    name[1] < '0' || name[1] > '9')
		return -EINVAL;
	copies = strtoul(name + 1, &end, 10);
	if (*end || copies < 1 || copies > 255)
		return -EINVAL;
	if (name[0] == 'n')
		*layout = 0x100u + (uint32_t)copies;
	else if (name[0] == 'f')
		*layout = ((uint32_t)copies << 8) + 1;
	else
		*layout = URAID_RAID10_OFFSET + ((uint32_t)copies << 8) + 1;
	return 0;
}

static const struct name_map *layout_table(int level)
{
	switch (level) {
	case URAID_LEVEL_0:
		return r0layout;
	case URAID_LEVEL_4:
		return r4layout;
	case URAID_LEVEL_5:
		return r5layout;
	case URAID_LEVEL_6:
		return r6layout;
	case URAID_LEVEL_LINEAR:
	case URAID_LEVEL_1:
		return no_layout;
	default:
		return NULL;
	}
}

int uraid_layout_parse(int level, const char *name, uint32_t *layout)
{
	const struct name_map *t, *m;

	if (!name)
		return -EINVAL;
	if (level == URAID_LEVEL_10)
		return parse_raid10(name, layout);
	t = layout_table(level);
	m = t ? find_name(t, name) : NULL;
	if (!m)
		return -EINVAL;
	*layout = (uint32_t)m->num;
	return 0;
}

static const char *put(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", s);
	return buf;
}

const char *uraid_layout_name(int level, uint32_t layout, char *buf, size_t len)
{
	const struct name_map *t = NULL;
	const char *s;

	if (!buf || !len)
		return NULL;
	switch (level) {
	case URAID_LEVEL_0:     /* printed only when feature 0x1000 is set */
		t = r0layout;
		break;
	case URAID_LEVEL_5:
		t = r5layout;
		break;
	case URAID_LEVEL_6:
		t = r6layout;
		break;
	case URAID_LEVEL_10: {
		/*
		 * print_r10_layout: " near=N" unless N is 1, then
		 * "[,] far=F" / "offset=F" unless F is 1, "NO REDUNDANCY" for
		 * n1f1. mdadm prints it straight after "Layout :", so its
		 * leading space is left out here. Far-set bits are not shown.
		 */
		uint32_t nc = URAID_RAID10_NEAR(layout), fc = URAID_RAID10_FAR(layout);
		const char *sep = "";
		size_t used = 0;

		buf[0] = '\0';
		if (nc != 1) {
			used += (size_t)snprintf(buf, len, "near=%u", nc);
			sep = ", ";
		}
		if (fc != 1 && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s=%u", sep,
						 layout & URAID_RAID10_OFFSET ? "offset" : "far",
						 fc);
		if (nc * fc == 1 && used < len)
			snprintf(buf + used, len - used, "NO REDUNDANCY");
		return buf;
	}
	default:
		/*
		 * linear, RAID 1, RAID 4: mdadm prints no Layout line. buf
		 * still gets a description for callers that use it anyway.
		 */
		put(buf, len, level == URAID_LEVEL_4 ? "parity-last" : "");
		return NULL;
	}
	s = find_num(t, (int)layout);
	return put(buf, len, s ? s : "-unknown-");
}

uint32_t uraid_layout_default(int level)
{
	switch (level) {
	case URAID_LEVEL_0:
		return URAID_RAID0_ORIG;
	case URAID_LEVEL_5:
	case URAID_LEVEL_6:
		return URAID_LEFT_SYMMETRIC;
	case URAID_LEVEL_10:
		return URAID_RAID10_DEFAULT;
	default:
		return 0;
	}
}

bool uraid_layout_valid(int level, uint32_t layout, uint32_t raid_disks)
{
	switch (level) {
	case URAID_LEVEL_LINEAR:
	case URAID_LEVEL_1:
	case URAID_LEVEL_4:
		return true;    /* md ignores the layout word */
	case URAID_LEVEL_0:
		/* The zone layouts md can map; 0 means "not recorded". */
		return layout == URAID_RAID0_ORIG || layout == URAID_RAID0_ALT_MULTIZONE;
	case URAID_LEVEL_5:
	case URAID_LEVEL_6:
		return geom_r56_layout_ok(level, layout);
	case URAID_LEVEL_10:
		return geom_r10_check(layout, raid_disks, NULL, 0) == 0;
	default:
		return false;
	}
}
