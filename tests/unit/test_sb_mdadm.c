/* SPDX-License-Identifier: MIT */
/*
 * Referee check of src/format against Debian's mdadm: superblocks, bitmaps
 * and bad-block logs are encoded into 64 MiB sparse member images under
 * /tmp and read back with `mdadm --examine`, `--examine-badblocks` and
 * `--examine-bitmap`. mdadm needs no md driver for these. Exits 77 (skip)
 * when mdadm is not installed.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uraid/superblock.h"
#include "uraid/bitmap.h"
#include "../support/format_fixture.h"
#include "../support/check.h"
#include "../support/run_cmd.h"

#define DEV_SECTORS (64ull * 2048)

static const char *mdadm;
static char dir[64];

static void expect(const char *out, const char *what, const char *want)
{
	CHECK(strstr(out, want) != NULL, "%s: mdadm output lacks \"%s\"", what, want);
}

static int write_at(const char *path, const void *buf, size_t len, uint64_t sector)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = pwrite(fd, buf, len, (off_t)(sector * 512));
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

static int make_image(const char *path, uint64_t sectors)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(sectors * 512)) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* Superblock (+ bitmap, + empty or given bad-block log) written like mdadm. */
static void write_member(const char *path, const struct uraid_sb *sb_in,
			 const struct uraid_bitmap_sb *bm, const uint64_t *bb, unsigned nbb)
{
	uint8_t buf[URAID_SB_BYTES], area[4096], log[4096];
	struct uraid_sb sb = *sb_in;
	unsigned i;

	CHECK(make_image(path, DEV_SECTORS) == 0, "create %s", path);
	uraid_sb_encode(&sb, buf);
	CHECK(write_at(path, buf, uraid_sb_write_bytes(sb.max_dev), sb.super_offset) == 0,
	      "write sb");
	if (bm) {
		memset(area, 0xff, sizeof(area));       /* mdadm: all dirty at create */
		uraid_bitmap_encode(bm, area);
		CHECK(write_at(path, area, sizeof(area),
			       sb.super_offset + (uint64_t)(int64_t)sb.bitmap_offset) == 0,
		      "write bitmap");
	}
	if (sb.bblog_size) {
		uraid_bblog_init(log, sizeof(log));
		for (i = 0; i < nbb; i++) {
			uint64_t le = htole64(bb[i]);
			memcpy(log + 8 * i, &le, 8);
		}
		CHECK(write_at(path, log, sizeof(log),
			       sb.super_offset + (uint64_t)(int64_t)sb.bblog_offset) == 0,
		      "write bblog");
	}
}

static void test_examine(unsigned minor, uint32_t max_dev)
{
	char path[128], cmd[300], want[160], what[64];
	struct uraid_sb sb;
	struct uraid_bitmap_sb bm;
	char *out;

	snprintf(what, sizeof(what), "1.%u max_dev %u", minor, max_dev);
	snprintf(path, sizeof(path), "%s/member-1.%u-%u.img", dir, minor, max_dev);
	format_good_sb(minor, DEV_SECTORS, max_dev, 1, &sb, &bm);
	write_member(path, &sb, &bm, NULL, 0);
	{
		uint8_t buf[URAID_SB_BYTES];
		uraid_sb_encode(&sb, buf);   /* to learn sb.sb_csum */
	}

	snprintf(cmd, sizeof(cmd), "%s --examine %s 2>&1", mdadm, path);
	out = test_run_cmd(cmd);
	printf("--- %s\n%s", what, out);
	snprintf(want, sizeof(want), "Checksum : %08x - correct", sb.sb_csum);
	expect(out, what, want);
	snprintf(want, sizeof(want), "Version : 1.%u\n", minor);
	expect(out, what, want);
	expect(out, what, "Magic : a92b4efc");
	expect(out, what, "Feature Map : 0x1\n");
	expect(out, what, "Array UUID : 11223344:55667788:99aabbcc:ddeef001");
	expect(out, what, "Device UUID : deadbeef:01234567:89abcdef:fedcba98");
	expect(out, what, "Name : testhost:fixture");
	expect(out, what, "Raid Level : raid5");
	expect(out, what, "Raid Devices : 4");
	expect(out, what, "State : clean");
	expect(out, what, "Events : 0\n");
	expect(out, what, "Layout : left-symmetric");
	expect(out, what, "Chunk Size : 512K");
	expect(out, what, "Device Role : Active device 1");
	expect(out, what, "Array State : AAAA ");
	snprintf(want, sizeof(want), "Avail Dev Size : %" PRIu64 " sectors", sb.data_size);
	expect(out, what, want);
	snprintf(want, sizeof(want), "Super Offset : %" PRIu64 " sectors", sb.super_offset);
	expect(out, what, want);
	snprintf(want, sizeof(want), "Internal Bitmap : %d sectors from superblock", sb.bitmap_offset);
	expect(out, what, want);
	snprintf(want, sizeof(want), "Bad Block Log : 512 entries available at offset %d sectors",
		 sb.bblog_offset);
	expect(out, what, want);
	if (minor)
		expect(out, what, "Data Offset : 2048 sectors");
	free(out);

	/* A corrupted field: mdadm names the checksum we compute as expected. */
	sb.ctime ^= 1;
	{
		uint8_t buf[URAID_SB_BYTES];
		uint32_t stale = sb.sb_csum;
		uraid_sb_encode(&sb, buf);
		memcpy(buf + 216, &(uint32_t){ htole32(stale) }, 4);
		CHECK(write_at(path, buf, uraid_sb_write_bytes(sb.max_dev), sb.super_offset) == 0, "rewrite");
		out = test_run_cmd(cmd);
		snprintf(want, sizeof(want), "Checksum : %08x - expected %08x", stale, sb.sb_csum);
		expect(out, what, want);
		free(out);
	}
	unlink(path);
}

/*
 * What uraid_sb_validate refuses, mdadm refuses too (load_super1): a wrong
 * super_offset. (mdadm --examine sets ignore_hw_compat, which skips its
 * "device not large enough" check, so that one cannot be refereed here.)
 */
static void test_refused(void)
{
	char path[128], cmd[300], err[200];
	uint8_t buf[URAID_SB_BYTES];
	struct uraid_sb sb;
	char *out;
	int k;

	snprintf(path, sizeof(path), "%s/member-bad.img", dir);
	snprintf(cmd, sizeof(cmd), "%s --examine --metadata=1.2 %s 2>&1", mdadm, path);
	for (k = 0; k < 2; k++) {
		format_good_sb(2, DEV_SECTORS, 0, 0, &sb, NULL);
		write_member(path, &sb, NULL, NULL, 0);
		if (k == 1)
			sb.super_offset = 0;    /* still written at sector 8 */
		uraid_sb_encode(&sb, buf);
		CHECK(write_at(path, buf, URAID_SB_BYTES, 8) == 0, "write");
		int ours = uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
		out = test_run_cmd(cmd);
		int theirs = strstr(out, "Magic : a92b4efc") != NULL;
		printf("--- refused case %d: uraid %d '%s'; mdadm: %s", k, ours, err, out);
		CHECK((ours == 0) == theirs, "case %d: uraid rc %d (%s) but mdadm %s", k,
		      ours, err, theirs ? "accepts" : "refuses");
		free(out);
	}
	unlink(path);
}

static void test_badblocks(void)
{
	char path[128], cmd[300], want[160];
	struct uraid_sb sb;
	uint64_t bb[3];
	char *out;

	snprintf(path, sizeof(path), "%s/member-bb.img", dir);
	format_good_sb(2, DEV_SECTORS, 0, 0, &sb, NULL);
	sb.feature_map |= URAID_FEATURE_BAD_BLOCKS;
	bb[0] = uraid_bblog_entry(1000, 8, 0);
	bb[1] = uraid_bblog_entry(4096, 512, 0);
	bb[2] = uraid_bblog_entry(70000, 1023, 0);
	write_member(path, &sb, NULL, bb, 3);

	snprintf(cmd, sizeof(cmd), "%s --examine-badblocks %s 2>&1", mdadm, path);
	out = test_run_cmd(cmd);
	printf("--- bad blocks\n%s", out);
	expect(out, "bblog", "1000 for 8 sectors");
	expect(out, "bblog", "4096 for 512 sectors");
	expect(out, "bblog", "70000 for 1023 sectors");
	free(out);

	/* shift 3: units of 8 sectors */
	sb.bblog_shift = 3;
	bb[0] = uraid_bblog_entry(800, 16, 3);
	write_member(path, &sb, NULL, bb, 1);
	out = test_run_cmd(cmd);
	printf("--- bad blocks shift 3\n%s", out);
	snprintf(want, sizeof(want), "800 for 16 sectors");
	expect(out, "bblog shift 3", want);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s --examine %s 2>&1", mdadm, path);
	out = test_run_cmd(cmd);
	expect(out, "bblog examine", "Feature Map : 0x8");
	expect(out, "bblog examine", "Bad Block Log : 512 entries available at offset 16 sectors - bad blocks present.");
	free(out);
	unlink(path);
}

/*
 * mdadm -X reads a regular file as an external bitmap file (header at 0),
 * so the bitmap area is written to a file of its own.
 */
static void test_bitmap_file(void)
{
	char path[128], cmd[300], want[160];
	struct uraid_bitmap_sb bm;
	struct uraid_sb sb;
	uint8_t area[URAID_BITMAP_HEADER_BYTES + 512];
	uint64_t bits;
	char *out;

	snprintf(path, sizeof(path), "%s/bitmap.bin", dir);
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, &bm);

	/* as mdadm creates it: 64 MiB chunks, all dirty */
	memset(area, 0xff, sizeof(area));
	uraid_bitmap_encode(&bm, area);
	bits = uraid_bitmap_bits(bm.sync_size, bm.chunksize);
	CHECK(make_image(path, 0) == 0, "create");
	CHECK(write_at(path, area, (size_t)uraid_bitmap_bytes(bm.sync_size, bm.chunksize), 0) == 0,
	      "write");
	snprintf(cmd, sizeof(cmd), "%s --examine-bitmap %s 2>&1", mdadm, path);
	out = test_run_cmd(cmd);
	printf("--- bitmap 64M\n%s", out);
	expect(out, "bitmap", "Magic : 6d746962");
	expect(out, "bitmap", "Version : 4");
	expect(out, "bitmap", "UUID : 11223344:55667788:99aabbcc:ddeef001");
	expect(out, "bitmap", "Events : 0");
	expect(out, "bitmap", "Chunksize : 64 MB");
	expect(out, "bitmap", "Daemon : 5s flush period");
	expect(out, "bitmap", "Write Mode : Normal");
	snprintf(want, sizeof(want), "Sync Size : %" PRIu64 " ", bm.sync_size / 2);
	expect(out, "bitmap", want);
	snprintf(want, sizeof(want), "Bitmap : %" PRIu64 " bits (chunks), %" PRIu64 " dirty",
		 bits, bits);
	expect(out, "bitmap", want);
	free(out);

	/* 1 MiB chunks: 63 bits; set a few via the API, junk past the last bit */
	bm.chunksize = 1u << 20;
	bm.events = 7;
	bm.events_cleared = 6;
	bm.write_behind = 256;
	bm.state = URAID_BITMAP_STATE_STALE;
	memset(area, 0, sizeof(area));
	uraid_bitmap_encode(&bm, area);
	bits = uraid_bitmap_bits(bm.sync_size, bm.chunksize);
	CHECK(bits == 63, "bits %" PRIu64, bits);
	uraid_bitmap_set(area, 0);
	uraid_bitmap_set(area, 9);
	uraid_bitmap_set(area, 62);
	area[URAID_BITMAP_HEADER_BYTES + 7] |= 0x80;  /* bit 63: beyond the map */
	CHECK(uraid_bitmap_count(area, bits) == 3, "count %" PRIu64, uraid_bitmap_count(area, bits));
	CHECK(write_at(path, area, (size_t)uraid_bitmap_bytes(bm.sync_size, bm.chunksize), 0) == 0,
	      "write");
	out = test_run_cmd(cmd);
	printf("--- bitmap 1M\n%s", out);
	expect(out, "bitmap 1M", "Chunksize : 1 MB");
	expect(out, "bitmap 1M", "Events : 7");
	expect(out, "bitmap 1M", "Events Cleared : 6");
	expect(out, "bitmap 1M", "State : Out of date");
	expect(out, "bitmap 1M", "Write Mode : Allow write behind, max 256");
	expect(out, "bitmap 1M", "Bitmap : 63 bits (chunks), 3 dirty");
	free(out);
	unlink(path);
}

int main(void)
{
	static const char *const paths[] = { "/sbin/mdadm", "/usr/sbin/mdadm", "/usr/local/sbin/mdadm" };
	unsigned i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]) && !mdadm; i++)
		if (access(paths[i], X_OK) == 0)
			mdadm = paths[i];
	if (!mdadm) {
		printf("mdadm not installed\n");
		return 77;
	}
	strcpy(dir, "/tmp/uraid-format-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("test_sb_mdadm: using %s, images in %s\n", mdadm, dir);

	test_examine(2, 128);
	test_examine(2, 129);     /* odd: trailing 16-bit checksum word */
	test_examine(1, 1919);
	test_examine(0, 5);
	test_examine(0, 128);
	test_refused();
	test_badblocks();
	test_bitmap_file();

	rmdir(dir);
	if (failures) {
		printf("test_sb_mdadm: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_sb_mdadm: all passed\n");
	return 0;
}
