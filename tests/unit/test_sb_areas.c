// SPDX-License-Identifier: MIT
/*
 * uraid_sb_check_areas (src/format/sb_areas.c): a member's superblock,
 * bitmap, bad-block log and data against the device and each other, for
 * 1.0, 1.1 and 1.2 members shaped as mdadm writes them, then each field
 * moved where an attacker would put it: every refusal names the field.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "uraid/superblock.h"
#include "../support/check.h"
#include "../support/format_fixture.h"

#define DEV (64ull * 2048)      /* 64 MiB */

struct member_case {
	struct uraid_sb sb;
	struct uraid_sb_area_params p;
};

/* A good member of the given minor, with a bitmap of 8 sectors. */
static void good(unsigned minor, struct member_case *c)
{
	static struct uraid_sb sb;   /* large: static */

	format_good_sb(minor, DEV, 0, 1, &sb, NULL);
	c->sb = sb;
	c->p = (struct uraid_sb_area_params){
		.dev_sectors = DEV, .minor = minor, .bitmap = true,
		.bitmap_offset = sb.bitmap_offset, .bitmap_sectors = 8, .data_used = sb.size,
	};
}

/* Refused, the line holding `what`; or accepted when what is NULL. */
static void expect(const char *label, struct member_case *c, const char *what)
{
	struct uraid_sb_areas ar;
	char err[400];
	int rc = uraid_sb_check_areas(&c->sb, &c->p, &ar, err, sizeof(err));

	if (!what) {
		CHECK(rc == 0, "%s: refused: %s", label, err);
		return;
	}
	CHECK(rc == -EINVAL, "%s: accepted (rc %d)", label, rc);
	CHECK(strstr(err, what) != NULL, "%s: '%s' does not say '%s'", label, err, what);
	CHECK(strchr(err, '\n') == NULL, "%s: more than one line", label);
	printf("  %s: %s\n", label, err);
}

static void test_good(void)
{
	for (unsigned minor = 0; minor < 3; minor++) {
		struct member_case c;
		struct uraid_sb_areas ar;
		char err[400];

		good(minor, &c);
		CHECK(uraid_sb_check_areas(&c.sb, &c.p, &ar, err, sizeof(err)) == 0,
		      "1.%u: %s", minor, err);
		CHECK(ar.sb_start == c.sb.super_offset && ar.sb_len >= 1 && ar.sb_len <= 8,
		      "1.%u: superblock %" PRIu64 "+%" PRIu64, minor, ar.sb_start, ar.sb_len);
		CHECK(ar.bitmap_start == c.sb.super_offset + (uint64_t)(int64_t)c.sb.bitmap_offset &&
		      ar.bitmap_len == 8, "1.%u: bitmap %" PRIu64 "+%" PRIu64, minor,
		      ar.bitmap_start, ar.bitmap_len);
		CHECK(ar.bblog_start == c.sb.super_offset + (uint64_t)(int64_t)c.sb.bblog_offset &&
		      ar.bblog_len == 8, "1.%u: log %" PRIu64 "+%" PRIu64, minor, ar.bblog_start,
		      ar.bblog_len);
		CHECK(ar.data_start == c.sb.data_offset && ar.data_len == c.sb.size,
		      "1.%u: data %" PRIu64 "+%" PRIu64, minor, ar.data_start, ar.data_len);
		/* the superblock's room stops where the next area starts */
		CHECK(minor == 0 || ar.sb_start + ar.sb_len <= ar.bitmap_start,
		      "1.%u: superblock room runs into the bitmap", minor);
	}
}

static void test_refusals(void)
{
	struct member_case c;

	/* 1.2: bitmap and log between the superblock and data_offset */
	good(2, &c); c.p.bitmap_offset = 2048;
	expect("1.2 bitmap in the data", &c, "runs into the data at data_offset 2048");
	good(2, &c); c.p.bitmap_offset = 2040 - 8;
	expect("1.2 bitmap ending at data_offset", &c, NULL);
	good(2, &c); c.p.bitmap_offset = 2040 - 7;
	expect("1.2 bitmap one sector into the data", &c, "runs into the data");
	good(2, &c); c.p.bitmap_offset = -4;
	expect("1.2 bitmap over the superblock", &c, "overlaps the superblock");
	good(2, &c); c.p.bitmap_offset = -8;
	expect("1.2 bitmap before the superblock", &c, "lies before the superblock");
	good(2, &c); c.p.bitmap_offset = -9;
	expect("1.2 bitmap before the device start", &c, "before the device start");
	good(2, &c); c.p.bitmap_offset = 8; c.p.bitmap_sectors = 4096;
	expect("1.2 bitmap too large for its room", &c, "runs into the data");
	good(2, &c); c.p.bitmap_offset = INT32_MAX;
	expect("1.2 bitmap past the device end", &c, "runs past the device end");
	good(2, &c); c.p.bitmap_sectors = 0;
	expect("bitmap of 0 sectors", &c, "0 sectors");
	good(2, &c); c.sb.bblog_offset = 8;
	expect("1.2 log over the bitmap", &c, "overlaps the bad-block log");
	good(2, &c); c.sb.bblog_offset = 2044;
	expect("1.2 log into the data", &c, "bad-block log");
	good(2, &c); c.sb.bblog_size = 16;
	expect("1.2 log of two pages", &c, "bblog_size 16");
	good(2, &c); c.sb.bblog_size = 0; c.sb.bblog_offset = 4000;
	expect("1.2 log of size 0 is no log", &c, NULL);
	good(2, &c); c.sb.data_offset = 1ull << 31;
	expect("1.2 data_offset past the end", &c, "data_offset 2147483648");
	good(2, &c); c.sb.data_size = DEV;
	expect("1.2 data_size past the end", &c, "runs past the device end");
	good(2, &c); c.p.data_used = c.sb.data_size + 1;
	expect("more used than data_size", &c, "more than its data_size");
	good(2, &c); c.sb.data_offset = 8; c.sb.data_size = 64; c.p.data_used = 64;
	expect("1.2 data over the superblock", &c, "overlaps the superblock");

	/* 1.0: data, then bitmap and log, then the superblock */
	good(0, &c); c.p.data_used = c.sb.data_size + 8; c.sb.data_size += 8;
	expect("1.0 data into the bitmap", &c, "runs into the data");
	good(0, &c); c.p.bitmap_offset = -4;
	expect("1.0 bitmap over the superblock", &c, "overlaps the superblock");
	good(0, &c); c.p.bitmap_offset = 8;
	expect("1.0 bitmap after the superblock (md's DATA METADATA BITMAP)", &c, NULL);
	good(0, &c); c.p.bitmap_offset = 16;
	expect("1.0 bitmap after the superblock past the end", &c, "runs past the device end");
	good(0, &c); c.sb.data_offset = 1ull << 31;
	expect("1.0 data_offset 2^31", &c, "data_offset 2147483648");
	good(0, &c); c.sb.bblog_offset = -12;
	expect("1.0 log into the bitmap", &c, "overlaps the bad-block log");
	good(0, &c); c.sb.super_offset = DEV;
	expect("super_offset at the device end", &c, "super_offset");

	/* 1.1: superblock at 0 */
	good(1, &c); c.p.bitmap_offset = 0;
	expect("1.1 bitmap at the superblock", &c, "overlaps the superblock");
	good(1, &c); c.p.bitmap = false;
	expect("1.1 without a bitmap", &c, NULL);
}

int main(void)
{
	printf("test_sb_areas (no randomness)\n");
	test_good();
	test_refusals();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("sb_areas: ok\n");
	return 0;
}
