/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/format superblock code: on-disk layout against
 * <linux/raid/md_p.h>, encode/decode round trips, the checksum against an
 * independent computation, and one crafted bad superblock per validation
 * rule for each of 1.0 / 1.1 / 1.2.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/raid/md_p.h>

#include "uraid/superblock.h"
#include "format/sb_disk.h"
#include "../support/format_fixture.h"
#include "../support/check.h"

#define SEED 0x5eedf00d2024ull
#define DEV_SECTORS (64ull * 2048)   /* 64 MiB member */

/* ---- layout ---------------------------------------------------------- */

static void test_offsets(void)
{
#define OFF(f) CHECK(offsetof(struct sb1_disk, f) == offsetof(struct mdp_superblock_1, f), \
		     "offset of " #f ": %zu vs md_p.h %zu", offsetof(struct sb1_disk, f), \
		     offsetof(struct mdp_superblock_1, f))
#define SZ(f) CHECK(sizeof(((struct sb1_disk *)0)->f) == sizeof(((struct mdp_superblock_1 *)0)->f), \
		    "size of " #f)
	OFF(magic); OFF(major_version); OFF(feature_map); OFF(pad0);
	OFF(set_uuid); OFF(set_name); OFF(ctime); OFF(level); OFF(layout);
	OFF(size); OFF(chunksize); OFF(raid_disks); OFF(bitmap_offset);
	OFF(new_level); OFF(reshape_position); OFF(delta_disks); OFF(new_layout);
	OFF(new_chunk); OFF(new_offset); OFF(data_offset); OFF(data_size);
	OFF(super_offset); OFF(recovery_offset); OFF(dev_number);
	OFF(cnt_corrected_read); OFF(device_uuid); OFF(devflags); OFF(bblog_shift);
	OFF(bblog_size); OFF(bblog_offset); OFF(utime); OFF(events);
	OFF(resync_offset); OFF(sb_csum); OFF(max_dev); OFF(pad3); OFF(dev_roles);
	SZ(magic); SZ(major_version); SZ(feature_map); SZ(pad0);
	SZ(set_uuid); SZ(set_name); SZ(ctime); SZ(level); SZ(layout);
	SZ(size); SZ(chunksize); SZ(raid_disks); SZ(bitmap_offset);
	SZ(new_level); SZ(reshape_position); SZ(delta_disks); SZ(new_layout);
	SZ(new_chunk); SZ(new_offset); SZ(data_offset); SZ(data_size);
	SZ(super_offset); SZ(recovery_offset); SZ(dev_number);
	SZ(cnt_corrected_read); SZ(device_uuid); SZ(devflags); SZ(bblog_shift);
	SZ(bblog_size); SZ(bblog_offset); SZ(utime); SZ(events);
	SZ(resync_offset); SZ(sb_csum); SZ(max_dev); SZ(pad3);
	/* the ppl union shares bitmap_offset's bytes */
	CHECK(offsetof(struct mdp_superblock_1, ppl.offset) == 96, "ppl.offset");
	CHECK(offsetof(struct mdp_superblock_1, ppl.size) == 98, "ppl.size");
	CHECK(sizeof(struct sb1_disk) == sizeof(struct mdp_superblock_1),
	      "sizeof %zu vs %zu", sizeof(struct sb1_disk), sizeof(struct mdp_superblock_1));
	CHECK(URAID_SB_MAGIC == MD_SB_MAGIC, "magic");
	CHECK(URAID_FEATURE_RAID0_LAYOUT == MD_FEATURE_RAID0_LAYOUT, "feature bit");
	CHECK(URAID_FEATURE_ALL == MD_FEATURE_ALL, "feature_all 0x%x vs 0x%x",
	      URAID_FEATURE_ALL, (unsigned)MD_FEATURE_ALL);
	CHECK(URAID_ROLE_SPARE == MD_DISK_ROLE_SPARE && URAID_ROLE_FAULTY == MD_DISK_ROLE_FAULTY &&
	      URAID_ROLE_JOURNAL == MD_DISK_ROLE_JOURNAL && URAID_ROLE_MAX == MD_DISK_ROLE_MAX,
	      "role constants");
#undef OFF
#undef SZ
}

static void test_location(void)
{
	CHECK(uraid_sb_location(2, DEV_SECTORS) == 8, "1.2");
	CHECK(uraid_sb_location(1, DEV_SECTORS) == 0, "1.1");
	CHECK(uraid_sb_location(0, DEV_SECTORS) == DEV_SECTORS - 16, "1.0 aligned");
	/* unaligned size: 8..12 KiB from the end, 4 KiB aligned */
	CHECK(uraid_sb_location(0, 1000005) == 999984, "1.0 unaligned: %" PRIu64,
	      uraid_sb_location(0, 1000005));
	CHECK(uraid_sb_location(0, 1000007) == 999984, "1.0 unaligned 2");
	CHECK(uraid_sb_location(0, 10) == UINT64_MAX, "1.0 tiny");
	CHECK(uraid_sb_location(3, DEV_SECTORS) == UINT64_MAX, "minor 3");
	CHECK(uraid_sb_write_bytes(128) == 512, "write bytes 128");
	CHECK(uraid_sb_write_bytes(129) == 1024, "write bytes 129");
	CHECK(uraid_sb_write_bytes(0) == 512, "write bytes 0");
	CHECK(uraid_sb_write_bytes(1920) == 4096, "write bytes 1920");
}

/* ---- checksum -------------------------------------------------------- */

/* Independent reference: byte-wise little-endian words, no struct. */
static uint32_t ref_csum(const uint8_t *b)
{
	uint32_t max_dev = b[220] | b[221] << 8 | b[222] << 16 | (uint32_t)b[223] << 24;
	uint64_t n = 256 + 2 * (uint64_t)max_dev, sum = 0, i;

	for (i = 0; i + 4 <= n; i += 4) {
		uint32_t w = b[i] | b[i + 1] << 8 | b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;
		if (i != 216)
			sum += w;
	}
	if (i < n)
		sum += b[i] | b[i + 1] << 8;
	return (uint32_t)(sum % 0x100000000ull + sum / 0x100000000ull);
}

static void test_checksum(uint64_t *rng)
{
	static const uint32_t max_devs[] = { 0, 1, 2, 3, 127, 128, 129, 384, 1919, 1920 };
	uint8_t buf[URAID_SB_BYTES];
	struct uraid_sb sb;
	unsigned k, i;

	for (k = 0; k < sizeof(max_devs) / sizeof(max_devs[0]); k++) {
		format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
		sb.max_dev = max_devs[k];
		/* large values so the 64-bit sum carries past 32 bits */
		for (i = 0; i < URAID_SB_MAX_DEV; i++)
			sb.dev_roles[i] = (uint16_t)format_rng_next(rng);
		sb.events = UINT64_MAX - 3;
		uraid_sb_encode(&sb, buf);
		CHECK(sb.sb_csum == ref_csum(buf), "max_dev %u: 0x%08x vs ref 0x%08x",
		      max_devs[k], sb.sb_csum, ref_csum(buf));
		CHECK(uraid_sb_checksum(buf) == sb.sb_csum, "recompute max_dev %u", max_devs[k]);
		CHECK(le32toh(((struct sb1_disk *)buf)->sb_csum) == sb.sb_csum, "stored csum");
		if (max_devs[k] & 1) {
			/* the trailing 16-bit word counts */
			uint32_t before = uraid_sb_checksum(buf);
			buf[256 + 2 * (max_devs[k] - 1)] ^= 1;
			CHECK(uraid_sb_checksum(buf) != before, "odd tail ignored, max_dev %u",
			      max_devs[k]);
			buf[256 + 2 * (max_devs[k] - 1)] ^= 1;
		}
		/* a byte beyond max_dev roles does not count */
		if (max_devs[k] < URAID_SB_MAX_DEV) {
			uint32_t before = uraid_sb_checksum(buf);
			buf[256 + 2 * max_devs[k]] ^= 0x5a;
			CHECK(uraid_sb_checksum(buf) == before, "byte past roles counted, max_dev %u",
			      max_devs[k]);
		}
	}

	/* Known vector: everything zero but magic, major, max_dev = 1. The
	 * words are 0xa92b4efc + 1 + 1 and the odd tail role 0xffff. */
	memset(&sb, 0, sizeof(sb));
	sb.magic = URAID_SB_MAGIC;
	sb.major_version = 1;
	sb.max_dev = 1;
	sb.dev_roles[0] = 0xffff;
	uraid_sb_encode(&sb, buf);
	CHECK(sb.sb_csum == 0xa92b4efcu + 1 + 1 + 0xffff, "known vector 0x%08x", sb.sb_csum);
	/* fold: sum = 2^32 + 5 -> 5 + 1 = 6 */
	memset(&sb, 0, sizeof(sb));
	sb.magic = 0xffffffffu;
	sb.major_version = 6;
	sb.max_dev = 0;
	uraid_sb_encode(&sb, buf);
	CHECK(sb.sb_csum == 6, "fold vector 0x%08x", sb.sb_csum);
}

/* ---- round trip ------------------------------------------------------ */

static void random_sb(uint64_t *rng, struct uraid_sb *sb)
{
	unsigned i, namelen;

	memset(sb, 0, sizeof(*sb));
#define R32 ((uint32_t)format_rng_next(rng))
#define R64 format_rng_next(rng)
	sb->magic = URAID_SB_MAGIC;
	sb->major_version = R32; sb->feature_map = R32; sb->pad0 = R32;
	for (i = 0; i < 16; i++) sb->set_uuid[i] = (uint8_t)R32;
	namelen = R32 % 33;
	for (i = 0; i < namelen; i++) sb->set_name[i] = (char)(' ' + R32 % 95);
	sb->ctime = R64; sb->level = (int32_t)R32; sb->layout = R32; sb->size = R64;
	sb->chunksize = R32; sb->raid_disks = R32; sb->bitmap_offset = (int32_t)R32;
	sb->new_level = R32; sb->reshape_position = R64; sb->delta_disks = (int32_t)R32;
	sb->new_layout = R32; sb->new_chunk = R32; sb->new_offset = (int32_t)R32;
	sb->data_offset = R64; sb->data_size = R64; sb->super_offset = R64;
	sb->recovery_offset = R64; sb->dev_number = R32; sb->cnt_corrected_read = R32;
	for (i = 0; i < 16; i++) sb->device_uuid[i] = (uint8_t)R32;
	sb->devflags = (uint8_t)R32; sb->bblog_shift = (uint8_t)R32;
	sb->bblog_size = (uint16_t)R32; sb->bblog_offset = (int32_t)R32;
	sb->utime = R64; sb->events = R64; sb->resync_offset = R64;
	sb->max_dev = R32 % (URAID_SB_MAX_DEV + 1);
	for (i = 0; i < 32; i++) sb->pad3[i] = (uint8_t)R32;
	for (i = 0; i < URAID_SB_MAX_DEV; i++)
		sb->dev_roles[i] = i < sb->max_dev ? (uint16_t)R32 : URAID_ROLE_SPARE;
#undef R32
#undef R64
}

static void test_round_trip(uint64_t *rng)
{
	uint8_t buf[URAID_SB_BYTES], buf2[URAID_SB_BYTES];
	struct uraid_sb a, b;
	int iter, rc;

	for (iter = 0; iter < 2000; iter++) {
		random_sb(rng, &a);
		uraid_sb_encode(&a, buf);
		rc = uraid_sb_decode(buf, &b);
		CHECK(rc == 0, "iter %d decode rc %d", iter, rc);
#define EQ(f) CHECK(a.f == b.f, "iter %d field " #f, iter)
		EQ(magic); EQ(major_version); EQ(feature_map); EQ(pad0); EQ(ctime);
		EQ(level); EQ(layout); EQ(size); EQ(chunksize); EQ(raid_disks);
		EQ(bitmap_offset); EQ(new_level); EQ(reshape_position); EQ(delta_disks);
		EQ(new_layout); EQ(new_chunk); EQ(new_offset); EQ(data_offset);
		EQ(data_size); EQ(super_offset); EQ(recovery_offset); EQ(dev_number);
		EQ(cnt_corrected_read); EQ(devflags); EQ(bblog_shift); EQ(bblog_size);
		EQ(bblog_offset); EQ(utime); EQ(events); EQ(resync_offset); EQ(sb_csum);
		EQ(max_dev);
#undef EQ
		CHECK(!memcmp(a.set_uuid, b.set_uuid, 16), "iter %d set_uuid", iter);
		CHECK(!memcmp(a.device_uuid, b.device_uuid, 16), "iter %d device_uuid", iter);
		CHECK(!strcmp(a.set_name, b.set_name), "iter %d set_name '%s' vs '%s'",
		      iter, a.set_name, b.set_name);
		CHECK(!memcmp(a.pad3, b.pad3, 32), "iter %d pad3", iter);
		CHECK(!memcmp(a.dev_roles, b.dev_roles, sizeof(a.dev_roles)), "iter %d roles", iter);
		/* and back to identical bytes */
		uraid_sb_encode(&b, buf2);
		CHECK(!memcmp(buf, buf2, sizeof(buf)), "iter %d re-encode differs", iter);
	}

	/* a 32-byte name is not NUL-terminated on disk */
	format_good_sb(2, DEV_SECTORS, 0, 0, &a, NULL);
	memset(a.set_name, 'x', 32);
	a.set_name[32] = '\0';
	uraid_sb_encode(&a, buf);
	CHECK(buf[32 + 31] == 'x' && buf[64] == 0, "32-byte name");
	uraid_sb_decode(buf, &b);
	CHECK(strlen(b.set_name) == 32, "decoded name length %zu", strlen(b.set_name));

	/* decode errors */
	memset(buf, 0, sizeof(buf));
	CHECK(uraid_sb_decode(buf, &b) == -ENOENT, "no magic");
	a.max_dev = 1921;
	uraid_sb_encode(&a, buf);
	CHECK(uraid_sb_decode(buf, &b) == -EINVAL, "max_dev too large");

	/* role lookup */
	format_good_sb(2, DEV_SECTORS, 0, 0, &a, NULL);
	a.dev_number = 2;
	CHECK(uraid_sb_role(&a) == 2, "role 2");
	a.dev_number = 200;
	CHECK(uraid_sb_role(&a) == URAID_ROLE_SPARE, "dev_number beyond max_dev");
	CHECK(uraid_sb_seconds(0xabcdef0123456789ull) == 0x0123456789ull, "seconds");
}

/* ---- validation ------------------------------------------------------ */

enum mutate_how { ENC, RAW_CSUM_BREAK };

struct bad_case {
	const char *name;
	unsigned minors;                 /* bit m: applies to minor m */
	void (*mutate)(struct uraid_sb *sb, unsigned minor);
	const char *expect;              /* distinctive message substring */
	uint64_t dev_sectors;            /* 0 = DEV_SECTORS */
	unsigned minor_override;         /* 0 = none, else minor + 1 */
};

#define ALL 7u
#define M12 6u
#define M0  1u

static void m_magic(struct uraid_sb *s, unsigned m) { s->magic = 0x12345678; }
static void m_major(struct uraid_sb *s, unsigned m) { s->major_version = 2; }
static void m_maxdev(struct uraid_sb *s, unsigned m) { s->max_dev = 1921; }
static void m_superoff(struct uraid_sb *s, unsigned m) { s->super_offset = m == 2 ? 0 : 8; }
static void m_feature(struct uraid_sb *s, unsigned m) { s->feature_map |= 0x2000; }
static void m_datasize(struct uraid_sb *s, unsigned m) { s->data_size = 9; s->size = 0; }
static void m_pad0(struct uraid_sb *s, unsigned m) { s->pad0 = 1; }
static void m_pad3(struct uraid_sb *s, unsigned m) { s->pad3[31] = 0x40; }
static void m_dataoff_sb(struct uraid_sb *s, unsigned m)
{
	s->data_offset = s->super_offset;   /* data on top of the superblock */
}
static void m_newoff(struct uraid_sb *s, unsigned m)
{
	s->feature_map |= URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_NEW_OFFSET;
	s->new_offset = -(int32_t)s->data_offset;
}
static void m_bblog_big(struct uraid_sb *s, unsigned m)
{
	s->feature_map |= URAID_FEATURE_BAD_BLOCKS;
	s->bblog_size = 16;
}
static void m_bblog_zero(struct uraid_sb *s, unsigned m)
{
	s->feature_map |= URAID_FEATURE_BAD_BLOCKS;
	s->bblog_offset = 0;
}
static void m_raid0_layout(struct uraid_sb *s, unsigned m) { s->feature_map |= URAID_FEATURE_RAID0_LAYOUT; }
static void m_dataoff_end(struct uraid_sb *s, unsigned m) { s->data_offset = DEV_SECTORS + 8; }
static void m_datasize_big(struct uraid_sb *s, unsigned m)
{
	s->data_size = (m == 0 ? s->super_offset : DEV_SECTORS - s->data_offset) + 1;
}
static void m_ppl_bitmap(struct uraid_sb *s, unsigned m) { s->feature_map |= URAID_FEATURE_PPL; }
static void m_mppl_bitmap(struct uraid_sb *s, unsigned m) { s->feature_map |= URAID_FEATURE_MULTIPLE_PPLS; }
static void m_ppl_journal(struct uraid_sb *s, unsigned m)
{
	s->feature_map &= ~URAID_FEATURE_BITMAP_OFFSET;
	s->feature_map |= URAID_FEATURE_PPL | URAID_FEATURE_JOURNAL;
}
static void m_ppl_both(struct uraid_sb *s, unsigned m)
{
	s->feature_map &= ~URAID_FEATURE_BITMAP_OFFSET;
	s->feature_map |= URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS;
}
static void m_journal_role(struct uraid_sb *s, unsigned m) { s->dev_roles[s->dev_number] = URAID_ROLE_JOURNAL; }
static void m_size_big(struct uraid_sb *s, unsigned m) { s->size = s->data_size + 1024; }
static void m_size_10(struct uraid_sb *s, unsigned m) { s->size = s->super_offset + 1024; }
static void m_dataoff_10(struct uraid_sb *s, unsigned m) { s->data_offset = s->super_offset; s->size = 0; }
static void m_none(struct uraid_sb *s, unsigned m) { }

static const struct bad_case bad_cases[] = {
	{ "minor 3", ALL, m_none, "minor version 3 is not 0, 1 or 2", 0, 4 },
	{ "tiny device", ALL, m_none, "device size 20 sectors is below the md minimum of 24", 20, 0 },
	{ "magic", ALL, m_magic, "magic 0x12345678 found, 0xa92b4efc expected", 0, 0 },
	{ "major", ALL, m_major, "major_version 2 found, 1 expected", 0, 0 },
	{ "max_dev", ALL, m_maxdev, "max_dev 1921 exceeds the limit 1920", 0, 0 },
	{ "super_offset", ALL, m_superoff, "does not match the 1.", 0, 0 },
	{ "unknown feature", ALL, m_feature, "has unknown bits 0x2000", 0, 0 },
	{ "checksum", ALL, NULL, "computed", 0, 0 },
	{ "data_size < 10", ALL, m_datasize, "data_size 9 is below the minimum 10", 0, 0 },
	{ "pad0", ALL, m_pad0, "pad0 0x1 found, 0 expected", 0, 0 },
	{ "pad3", ALL, m_pad3, "pad3[31] 0x40 found, 0 expected", 0, 0 },
	{ "data_offset in sb", M12, m_dataoff_sb, "overlaps the superblock (data must start at >=", 0, 0 },
	{ "new_offset in sb", M12, m_newoff, "new data offset", 0, 0 },
	{ "bblog too big", ALL, m_bblog_big, "bblog_size 16 sectors exceeds the one-page limit 8", 0, 0 },
	{ "bblog offset 0", ALL, m_bblog_zero, "bblog_offset 0 with feature BAD_BLOCKS", 0, 0 },
	{ "raid0 layout", ALL, m_raid0_layout, "RAID0_LAYOUT (0x1000) with level 5", 0, 0 },
	{ "data_offset past end", M12, m_dataoff_end, "lies beyond the device end", 0, 0 },
	{ "data_size too big", ALL, m_datasize_big, "sectors available", 0, 0 },
	{ "ppl+bitmap", ALL, m_ppl_bitmap, "combines PPL (0x400) with BITMAP_OFFSET", 0, 0 },
	{ "multiple ppls+bitmap", ALL, m_mppl_bitmap, "combines PPL (0x800) with BITMAP_OFFSET", 0, 0 },
	{ "ppl+journal", ALL, m_ppl_journal, "combines PPL (0x400) with JOURNAL", 0, 0 },
	{ "ppl+multiple", ALL, m_ppl_both, "both PPL (0x400) and MULTIPLE_PPLS (0x800)", 0, 0 },
	{ "journal role", ALL, m_journal_role, "journal role 0xfffd for dev_number 1 without feature JOURNAL", 0, 0 },
	{ "size > device", M12, m_size_big, "is smaller than data_offset 2048 + size", 0, 0 },
	{ "1.0 size past sb", M0, m_size_10, "runs past the 1.0 superblock", 0, 0 },
	{ "1.0 data in sb", M0, m_dataoff_10, "overlaps the 1.0 superblock", 0, 0 },
};

static void test_validate(void)
{
	uint8_t buf[URAID_SB_BYTES];
	char err[256];
	struct uraid_sb sb;
	unsigned minor, k, vminor;
	int rc, bitmap;

	for (minor = 0; minor < 3; minor++) {
		for (bitmap = 0; bitmap < 2; bitmap++) {
			format_good_sb(minor, DEV_SECTORS, 0, bitmap, &sb, NULL);
			uraid_sb_encode(&sb, buf);
			rc = uraid_sb_validate(buf, minor, DEV_SECTORS, err, sizeof(err));
			CHECK(rc == 0, "good 1.%u bitmap %d rejected: %s", minor, bitmap, err);
			/* accepted with odd max_dev too */
			format_good_sb(minor, DEV_SECTORS, 5, bitmap, &sb, NULL);
			uraid_sb_encode(&sb, buf);
			rc = uraid_sb_validate(buf, minor, DEV_SECTORS, err, sizeof(err));
			CHECK(rc == 0, "good 1.%u odd max_dev rejected: %s", minor, err);
		}
		/* the right superblock at the wrong minor's location */
		for (vminor = 0; vminor < 3; vminor++) {
			if (vminor == minor)
				continue;
			format_good_sb(minor, DEV_SECTORS, 0, 1, &sb, NULL);
			uraid_sb_encode(&sb, buf);
			rc = uraid_sb_validate(buf, vminor, DEV_SECTORS, err, sizeof(err));
			CHECK(rc == -EINVAL && strstr(err, "super_offset"),
			      "1.%u sb validated as 1.%u: rc %d '%s'", minor, vminor, rc, err);
		}
		for (k = 0; k < sizeof(bad_cases) / sizeof(bad_cases[0]); k++) {
			const struct bad_case *c = &bad_cases[k];
			uint64_t dev = c->dev_sectors ? c->dev_sectors : DEV_SECTORS;

			if (!(c->minors & (1u << minor)))
				continue;
			format_good_sb(minor, DEV_SECTORS, 0, 1, &sb, NULL);
			if (c->mutate)
				c->mutate(&sb, minor);
			uraid_sb_encode(&sb, buf);
			if (!c->mutate)
				buf[100] ^= 0x10;   /* corrupt after the checksum */
			vminor = c->minor_override ? c->minor_override - 1 : minor;
			err[0] = '\0';
			rc = uraid_sb_validate(buf, vminor, dev, err, sizeof(err));
			CHECK(rc == -EINVAL, "1.%u %s: rc %d (%s)", minor, c->name, rc, err);
			CHECK(strstr(err, c->expect) != NULL, "1.%u %s: message '%s', want '%s'",
			      minor, c->name, err, c->expect);
			CHECK(strchr(err, '\n') == NULL, "1.%u %s: message has a newline", minor, c->name);
			if (failures == 0 && minor == 2)
				printf("  1.%u %-22s -> %s\n", minor, c->name, err);
		}
	}

	/* specific values in messages */
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.super_offset = 0;
	uraid_sb_encode(&sb, buf);
	uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(!strcmp(err, "super_offset 0 does not match the 1.2 location 8"), "msg '%s'", err);

	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	uraid_sb_encode(&sb, buf);
	{
		char want[128];
		uint32_t good = sb.sb_csum;
		((struct sb1_disk *)buf)->sb_csum = htole32(good + 1);
		snprintf(want, sizeof(want), "checksum 0x%08x found, 0x%08x computed", good + 1, good);
		uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
		CHECK(!strcmp(err, want), "msg '%s' want '%s'", err, want);
	}

	/* order: the most fundamental failure wins */
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.magic = 0;
	sb.pad0 = 7;
	uraid_sb_encode(&sb, buf);
	buf[100] ^= 1;
	uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(strstr(err, "magic 0x00000000 found"), "order magic: '%s'", err);
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.super_offset = 0;
	sb.pad0 = 7;
	uraid_sb_encode(&sb, buf);
	buf[100] ^= 1;
	uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(strstr(err, "super_offset 0"), "order super_offset: '%s'", err);
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.pad0 = 7;
	sb.data_size = 1;
	uraid_sb_encode(&sb, buf);
	buf[100] ^= 1;
	uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(strstr(err, "checksum"), "order checksum: '%s'", err);
	buf[100] ^= 1;
	uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(strstr(err, "data_size 1 is below"), "order data_size: '%s'", err);

	/* accepted edge cases */
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.data_offset = 9;                         /* right after a 1-sector sb */
	sb.data_size = DEV_SECTORS - 9;
	sb.size = sb.data_size;
	sb.feature_map = 0;
	sb.bblog_offset = 0;
	sb.bblog_size = 0;
	uraid_sb_encode(&sb, buf);
	rc = uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(rc == 0, "data_offset 9 on 1.2: %s", err);
	sb.max_dev = 129;                           /* now the sb takes 2 sectors */
	uraid_sb_encode(&sb, buf);
	rc = uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "data_offset 9 overlaps"), "max_dev 129: %s", err);

	format_good_sb(0, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.feature_map |= URAID_FEATURE_BAD_BLOCKS | URAID_FEATURE_RECOVERY_OFFSET;
	sb.recovery_offset = 4096;
	sb.data_size = sb.super_offset;             /* kernel: data_size <= sb_start */
	uraid_sb_encode(&sb, buf);
	rc = uraid_sb_validate(buf, 0, DEV_SECTORS, err, sizeof(err));
	CHECK(rc == 0, "1.0 edge: %s", err);

	format_good_sb(2, DEV_SECTORS, 0, 0, &sb, NULL);
	sb.level = 0;
	sb.feature_map |= URAID_FEATURE_RAID0_LAYOUT;
	sb.feature_map |= URAID_FEATURE_PPL;        /* no bitmap: allowed */
	uraid_sb_encode(&sb, buf);
	rc = uraid_sb_validate(buf, 2, DEV_SECTORS, err, sizeof(err));
	CHECK(rc == 0, "raid0 layout + ppl without bitmap: %s", err);

	/* NEW_OFFSET without RESHAPE_ACTIVE is ignored, as by the kernel */
	format_good_sb(1, DEV_SECTORS, 0, 0, &sb, NULL);
	sb.feature_map |= URAID_FEATURE_NEW_OFFSET;
	sb.new_offset = -2048;
	uraid_sb_encode(&sb, buf);
	rc = uraid_sb_validate(buf, 1, DEV_SECTORS, err, sizeof(err));
	CHECK(rc == 0, "new_offset without reshape: %s", err);
	sb.feature_map |= URAID_FEATURE_RESHAPE_ACTIVE;
	sb.new_offset = 1024;                       /* moving later is fine */
	uraid_sb_encode(&sb, buf);
	rc = uraid_sb_validate(buf, 1, DEV_SECTORS, err, sizeof(err));
	CHECK(rc == 0, "new_offset +1024: %s", err);

	/* NULL err buffer is allowed */
	format_good_sb(2, DEV_SECTORS, 0, 1, &sb, NULL);
	sb.pad0 = 1;
	uraid_sb_encode(&sb, buf);
	CHECK(uraid_sb_validate(buf, 2, DEV_SECTORS, NULL, 0) == -EINVAL, "NULL err");
	/* short err buffer truncates safely */
	CHECK(uraid_sb_validate(buf, 2, DEV_SECTORS, err, 5) == -EINVAL && strlen(err) == 4,
	      "short err '%s'", err);
}

int main(void)
{
	uint64_t rng = SEED;

	printf("test_superblock: seed 0x%016llx\n", (unsigned long long)SEED);
	test_offsets();
	test_location();
	test_checksum(&rng);
	test_round_trip(&rng);
	test_validate();
	if (failures) {
		printf("test_superblock: %d failure(s), seed 0x%016llx\n", failures,
		       (unsigned long long)SEED);
		return 1;
	}
	printf("test_superblock: all passed\n");
	return 0;
}
