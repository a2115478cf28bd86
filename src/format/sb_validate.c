/* SPDX-License-Identifier: MIT */
/*
 * Acceptance checks for an md 1.x superblock (reference/md-format.md §1.14,
 * §1.5): what the kernel's super_1_load / super_1_validate / md_run and
 * mdadm's load_super1 refuse. The checks run in the kernel's order, so the
 * first failure reported is the most fundamental one (a bad magic is
 * reported as such, not as a checksum error).
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "uraid/superblock.h"
#include "format/sb_disk.h"
#include "common/errmsg.h"
/* Every refusal here is -EINVAL with its reason. */
#define fail(err, errlen, ...) uraid_errf(err, errlen, -EINVAL, __VA_ARGS__)

/* Smallest member mdadm handles (super1.c: "too small for md"). */
#define SB1_MIN_DEV_SECTORS 24
/* super_1_load: data_size < 10 is refused. */
#define SB1_MIN_DATA_SIZE 10
/* super_1_load reads the bad-block log into one page (4 KiB). */
#define SB1_MAX_BBLOG_SECTORS 8

static const char *minor_name(unsigned minor)
{
	static const char *const names[] = { "1.0", "1.1", "1.2" };
	return minor < 3 ? names[minor] : "1.?";
}

int uraid_sb_validate(const void *buf, unsigned minor, uint64_t dev_sectors,
		      char *err, size_t errlen)
{
	const struct sb1_disk *d = buf;
	struct uraid_sb sb;
	uint64_t sb_start, sb_end, avail, new_data_offset;
	uint32_t magic, major, max_dev, features, csum, unknown, ppl;
	uint16_t role;
	unsigned i;

	if (err && errlen)
		err[0] = '\0';

	/* Preconditions: without them there is no superblock location. */
	if (minor > 2)
		return fail(err, errlen, "minor version %u is not 0, 1 or 2", minor);
	if (dev_sectors < SB1_MIN_DEV_SECTORS)
		return fail(err, errlen,
			    "device size %" PRIu64 " sectors is below the md minimum of %d",
			    dev_sectors, SB1_MIN_DEV_SECTORS);
	sb_start = uraid_sb_location(minor, dev_sectors);

	/* super_1_load, first group: magic, major, max_dev, super_offset,
	 * unknown features. */
	magic = le32toh(d->magic);
	if (magic != URAID_SB_MAGIC)
		return fail(err, errlen, "magic 0x%08x found, 0x%08x expected",
			    magic, URAID_SB_MAGIC);
	major = le32toh(d->major_version);
	if (major != 1)
		return fail(err, errlen, "major_version %u found, 1 expected", major);
	max_dev = le32toh(d->max_dev);
	if (max_dev > URAID_SB_MAX_DEV)
		return fail(err, errlen, "max_dev %u exceeds the limit %u",
			    max_dev, URAID_SB_MAX_DEV);
	if (le64toh(d->super_offset) != sb_start)
		return fail(err, errlen,
			    "super_offset %" PRIu64 " does not match the %s location %" PRIu64,
			    (uint64_t)le64toh(d->super_offset), minor_name(minor), sb_start);
	features = le32toh(d->feature_map);
	unknown = features & ~URAID_FEATURE_ALL;
	if (unknown)
		return fail(err, errlen,
			    "feature_map 0x%x has unknown bits 0x%x (known 0x%x)",
			    features, unknown, URAID_FEATURE_ALL);

	csum = uraid_sb_checksum(buf);
	if (le32toh(d->sb_csum) != csum)
		return fail(err, errlen, "checksum 0x%08x found, 0x%08x computed",
			    le32toh(d->sb_csum), csum);

	/* From here on every field is trustworthy enough to decode. */
	if (uraid_sb_decode(buf, &sb) != 0)
		return fail(err, errlen, "superblock cannot be decoded");

	if (sb.data_size < SB1_MIN_DATA_SIZE)
		return fail(err, errlen, "data_size %" PRIu64 " is below the minimum %d",
			    sb.data_size, SB1_MIN_DATA_SIZE);
	/* Non-zero padding might be a feature this code does not know. */
	if (sb.pad0)
		return fail(err, errlen, "pad0 0x%x found, 0 expected", sb.pad0);
	for (i = 0; i < sizeof(sb.pad3); i++)
		if (sb.pad3[i])
			return fail(err, errlen, "pad3[%u] 0x%02x found, 0 expected",
				    i, sb.pad3[i]);

	/* 1.1/1.2: the data area must start after the superblock. */
	sb_end = sb_start + sb1_sectors(max_dev);
	if (minor != 0 && sb.data_offset < sb_end)
		return fail(err, errlen,
			    "data_offset %" PRIu64 " overlaps the superblock (data must start at >= %" PRIu64 ")",
			    sb.data_offset, sb_end);
	/* new_offset is honoured only with RESHAPE_ACTIVE and NEW_OFFSET. */
	new_data_offset = sb.data_offset;
	if ((features & URAID_FEATURE_RESHAPE_ACTIVE) &&
	    (features & URAID_FEATURE_NEW_OFFSET))
		new_data_offset += (uint64_t)(int64_t)sb.new_offset;
	if (minor != 0 && new_data_offset < sb_end)
		return fail(err, errlen,
			    "new data offset %" PRIu64 " (data_offset %" PRIu64 " + new_offset %" PRId32 ") overlaps the superblock (must be >= %" PRIu64 ")",
			    new_data_offset, sb.data_offset, sb.new_offset, sb_end);

	/* A non-empty bad-block log must be readable: at most one page and
	 * at a real offset. (Its entries are checked by uraid_bblog_decode.) */
	if (features & URAID_FEATURE_BAD_BLOCKS) {
		if (sb.bblog_size > SB1_MAX_BBLOG_SECTORS)
			return fail(err, errlen,
				    "bblog_size %u sectors exceeds the one-page limit %d",
				    sb.bblog_size, SB1_MAX_BBLOG_SECTORS);
		if (sb.bblog_offset == 0)
			return fail(err, errlen,
				    "bblog_offset 0 with feature BAD_BLOCKS (0x8) set");
	}

	if ((features & URAID_FEATURE_RAID0_LAYOUT) && sb.level != 0)
		return fail(err, errlen,
			    "feature RAID0_LAYOUT (0x1000) with level %" PRId32 ", level 0 expected",
			    sb.level);

	/* The data area must lie inside the device (1.1/1.2) or below the
	 * superblock (1.0). */
	if (minor != 0) {
		if (sb.data_offset > dev_sectors)
			return fail(err, errlen,
				    "data_offset %" PRIu64 " lies beyond the device end %" PRIu64,
				    sb.data_offset, dev_sectors);
		avail = dev_sectors - sb.data_offset;
	} else {
		avail = sb_start;
	}
	if (sb.data_size > avail)
		return fail(err, errlen,
			    "data_size %" PRIu64 " exceeds the %" PRIu64 " sectors available (%s)",
			    sb.data_size, avail,
			    minor ? "device size - data_offset" : "below the 1.0 superblock");

	/* super_1_validate: PPL excludes a bitmap and a journal, and the two
	 * PPL flavours exclude each other. */
	ppl = features & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS);
	if (ppl && (features & (URAID_FEATURE_BITMAP_OFFSET | URAID_FEATURE_JOURNAL)))
		return fail(err, errlen,
			    "feature_map 0x%x combines PPL (0x%x) with %s",
			    features, ppl,
			    (features & URAID_FEATURE_BITMAP_OFFSET) ?
			    "BITMAP_OFFSET (0x1)" : "JOURNAL (0x200)");
	if ((features & URAID_FEATURE_PPL) && (features & URAID_FEATURE_MULTIPLE_PPLS))
		return fail(err, errlen,
			    "feature_map 0x%x has both PPL (0x400) and MULTIPLE_PPLS (0x800)",
			    features);

	role = uraid_sb_role(&sb);
	if (role == URAID_ROLE_JOURNAL && !(features & URAID_FEATURE_JOURNAL))
		return fail(err, errlen,
			    "journal role 0x%04x for dev_number %u without feature JOURNAL (0x200)",
			    role, sb.dev_number);

	/* mdadm load_super1: the device must hold data_offset + size. */
	if (minor != 0 && role != URAID_ROLE_JOURNAL &&
	    sb.size > dev_sectors - sb.data_offset)
		return fail(err, errlen,
			    "device of %" PRIu64 " sectors is smaller than data_offset %" PRIu64 " + size %" PRIu64,
			    dev_sectors, sb.data_offset, sb.size);
	/* md_run: data below a 1.0 superblock must end at or before it (size 0
	 * means "not set" and is skipped as md does); data placed after it must
	 * not overlap it. */
	if (minor == 0 && sb.data_offset < sb_start && sb.size &&
	    sb.size > sb_start - sb.data_offset)
		return fail(err, errlen,
			    "data_offset %" PRIu64 " + size %" PRIu64 " runs past the 1.0 superblock at %" PRIu64,
			    sb.data_offset, sb.size, sb_start);
	if (minor == 0 && sb.data_offset >= sb_start && sb.data_offset < sb_end)
		return fail(err, errlen,
			    "data_offset %" PRIu64 " overlaps the 1.0 superblock (sectors %" PRIu64 "..%" PRIu64 ")",
			    sb.data_offset, sb_start, sb_end - 1);
	/* Every version: the data area lies inside the device. (The kernel
	 * checks a 1.0 member's data_size against sb_start only, so a
	 * data_offset far beyond the device end went through.) */
	if (sb.data_offset > dev_sectors || sb.data_size > dev_sectors - sb.data_offset)
		return fail(err, errlen,
			    "data_offset %" PRIu64 " + data_size %" PRIu64 " runs past the device "
			    "end (%" PRIu64 " sectors)", sb.data_offset, sb.data_size, dev_sectors);
	return 0;
}
