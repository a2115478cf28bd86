/* SPDX-License-Identifier: MIT */
/*
 * md superblock 1.x: location, checksum, decode, encode
 * (reference/md-format.md §1.2-§1.4). Validation is in sb_validate.c.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "uraid/superblock.h"
#include "format/sb_disk.h"

uint64_t uraid_sb_location(unsigned minor, uint64_t dev_sectors)
{
	switch (minor) {
	case 0:
		/* 8 KiB before the end, rounded down to 4 KiB */
		if (dev_sectors < 16)
			return UINT64_MAX;
		return (dev_sectors - 16) & ~(uint64_t)7;
	case 1:
		return 0;
	case 2:
		return 8;
	default:
		return UINT64_MAX;
	}
}

uint32_t uraid_sb_checksum(const void *buf)
{
	const uint8_t *p = buf;
	uint32_t max_dev, w32;
	uint16_t w16;
	uint64_t sum = 0;
	size_t n, i;

	memcpy(&max_dev, p + offsetof(struct sb1_disk, max_dev), 4);
	max_dev = le32toh(max_dev);
	/* The kernel rejects max_dev > 1920 before summing; clamp so a bad
	 * value cannot make us read past the 4 KiB buffer. */
	if (max_dev > URAID_SB_MAX_DEV)
		max_dev = URAID_SB_MAX_DEV;
	n = 256 + 2 * (size_t)max_dev;

	for (i = 0; i + 4 <= n; i += 4) {
		if (i == offsetof(struct sb1_disk, sb_csum))
			continue;       /* sb_csum counts as 0 */
		memcpy(&w32, p + i, 4);
		sum += le32toh(w32);
	}
	if (n - i == 2) {       /* odd max_dev: one trailing 16-bit word */
		memcpy(&w16, p + i, 2);
		sum += le16toh(w16);
	}
	/* one fold only, as md does */
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

size_t uraid_sb_write_bytes(uint32_t max_dev)
{
	return (size_t)sb1_sectors(max_dev) * 512;
}

int uraid_sb_decode(const void *buf, struct uraid_sb *sb)
{
	const struct sb1_disk *d = buf;
	uint32_t i;

	memset(sb, 0, sizeof(*sb));
	if (le32toh(d->magic) != URAID_SB_MAGIC)
		return -ENOENT;

	sb->magic = le32toh(d->magic);
	sb->major_version = le32toh(d->major_version);
	sb->feature_map = le32toh(d->feature_map);
	sb->pad0 = le32toh(d->pad0);
	memcpy(sb->set_uuid, d->set_uuid, 16);
	memcpy(sb->set_name, d->set_name, 32);
	sb->set_name[32] = '\0';
	sb->ctime = le64toh(d->ctime);
	sb->level = (int32_t)le32toh(d->level);
	sb->layout = le32toh(d->layout);
	sb->size = le64toh(d->size);
	sb->chunksize = le32toh(d->chunksize);
	sb->raid_disks = le32toh(d->raid_disks);
	sb->bitmap_offset = (int32_t)le32toh(d->bitmap_offset);
	sb->new_level = le32toh(d->new_level);
	sb->reshape_position = le64toh(d->reshape_position);
	sb->delta_disks = (int32_t)le32toh(d->delta_disks);
	sb->new_layout = le32toh(d->new_layout);
	sb->new_chunk = le32toh(d->new_chunk);
	sb->new_offset = (int32_t)le32toh(d->new_offset);
	sb->data_offset = le64toh(d->data_offset);
	sb->data_size = le64toh(d->data_size);
	sb->super_offset = le64toh(d->super_offset);
	sb->recovery_offset = le64toh(d->recovery_offset);
	sb->dev_number = le32toh(d->dev_number);
	sb->cnt_corrected_read = le32toh(d->cnt_corrected_read);
	memcpy(sb->device_uuid, d->device_uuid, 16);
	sb->devflags = d->devflags;
	sb->bblog_shift = d->bblog_shift;
	sb->bblog_size = le16toh(d->bblog_size);
	sb->bblog_offset = (int32_t)le32toh(d->bblog_offset);
	sb->utime = le64toh(d->utime);
	sb->events = le64toh(d->events);
	sb->resync_offset = le64toh(d->resync_offset);
	sb->sb_csum = le32toh(d->sb_csum);
	sb->max_dev = le32toh(d->max_dev);
	memcpy(sb->pad3, d->pad3, sizeof(sb->pad3));

	if (sb->max_dev > URAID_SB_MAX_DEV)
		return -EINVAL;
	for (i = 0; i < sb->max_dev; i++)
		sb->dev_roles[i] = le16toh(d->dev_roles[i]);
	/* Entries beyond max_dev are not part of the superblock: report them
	 * as spare so callers indexing by dev_number see md's view. */
	for (; i < URAID_SB_MAX_DEV; i++)
		sb->dev_roles[i] = URAID_ROLE_SPARE;
	return 0;
}

void uraid_sb_encode(struct uraid_sb *sb, void *buf)
{
	struct sb1_disk *d = buf;
	uint32_t i, nroles;

	memset(buf, 0, URAID_SB_BYTES);
	d->magic = htole32(sb->magic);
	d->major_version = htole32(sb->major_version);
	d->feature_map = htole32(sb->feature_map);
	d->pad0 = htole32(sb->pad0);
	memcpy(d->set_uuid, sb->set_uuid, 16);
	/* NUL-padded, not necessarily NUL-terminated on disk */
	memcpy(d->set_name, sb->set_name, 32);   /* all 32 bytes: md sums them */
	d->ctime = htole64(sb->ctime);
	d->level = htole32((uint32_t)sb->level);
	d->layout = htole32(sb->layout);
	d->size = htole64(sb->size);
	d->chunksize = htole32(sb->chunksize);
	d->raid_disks = htole32(sb->raid_disks);
	d->bitmap_offset = htole32((uint32_t)sb->bitmap_offset);
	d->new_level = htole32(sb->new_level);
	d->reshape_position = htole64(sb->reshape_position);
	d->delta_disks = htole32((uint32_t)sb->delta_disks);
	d->new_layout = htole32(sb->new_layout);
	d->new_chunk = htole32(sb->new_chunk);
	d->new_offset = htole32((uint32_t)sb->new_offset);
	d->data_offset = htole64(sb->data_offset);
	d->data_size = htole64(sb->data_size);
	d->super_offset = htole64(sb->super_offset);
	d->recovery_offset = htole64(sb->recovery_offset);
	d->dev_number = htole32(sb->dev_number);
	d->cnt_corrected_read = htole32(sb->cnt_corrected_read);
	memcpy(d->device_uuid, sb->device_uuid, 16);
	d->devflags = sb->devflags;
	d->bblog_shift = sb->bblog_shift;
	d->bblog_size = htole16(sb->bblog_size);
	d->bblog_offset = htole32((uint32_t)sb->bblog_offset);
	d->utime = htole64(sb->utime);
	d->events = htole64(sb->events);
	d->resync_offset = htole64(sb->resync_offset);
	d->max_dev = htole32(sb->max_dev);
	memcpy(d->pad3, sb->pad3, sizeof(d->pad3));

	/* max_dev is written as given (tests craft bad values); only the
	 * roles that fit in the 4 KiB buffer are stored. */
	nroles = sb->max_dev < URAID_SB_MAX_DEV ? sb->max_dev : URAID_SB_MAX_DEV;
	for (i = 0; i < nroles; i++)
		d->dev_roles[i] = htole16(sb->dev_roles[i]);

	sb->sb_csum = uraid_sb_checksum(buf);
	d->sb_csum = htole32(sb->sb_csum);
}

uint16_t uraid_sb_role(const struct uraid_sb *sb)
{
	if (sb->dev_number >= sb->max_dev || sb->dev_number >= URAID_SB_MAX_DEV)
		return URAID_ROLE_SPARE;
	return sb->dev_roles[sb->dev_number];
}

int uraid_uuid_parse(const char *text, uint8_t uuid[16])
{
	unsigned digits = 0;

	for (const char *c = text; *c; c++) {
		if (*c == ':' || *c == '-' || *c == '.' || *c == ' ')
			continue;
		int v = isdigit((unsigned char)*c) ? *c - '0'
			: isxdigit((unsigned char)*c) ? (tolower((unsigned char)*c) - 'a' + 10) : -1;
		if (v < 0 || digits == 32)
			return -EINVAL;
		uuid[digits / 2] = (uint8_t)(digits % 2 ? uuid[digits / 2] | v : v << 4);
		digits++;
	}
	return digits == 32 ? 0 : -EINVAL;
}

const char *uraid_uuid_text(const uint8_t *uuid, char *buf, size_t len)
{
	size_t o = 0;

	for (int i = 0; i < 16 && o + 3 < len; i++) {
		if (i && i % 4 == 0)
			buf[o++] = ':';
		o += (size_t)snprintf(buf + o, len - o, "%02x", uuid[i]);
	}
	if (len)
		buf[o < len ? o : len - 1] = 0;
	return buf;
}
