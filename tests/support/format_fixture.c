/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "format_fixture.h"

uint64_t format_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void format_good_sb(unsigned minor, uint64_t dev_sectors, uint32_t max_dev,
		    int with_bitmap, struct uraid_sb *sb, struct uraid_bitmap_sb *bm)
{
	static const uint8_t set_uuid[16] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xf0, 0x01 };
	static const uint8_t dev_uuid[16] = {
		0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67,
		0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98 };
	const uint32_t chunk = 1024;              /* sectors: 512 KiB */
	uint64_t sb_start = uraid_sb_location(minor, dev_sectors);
	uint32_t bm_chunk = 64u << 20, i;
	uint64_t bm_sectors = 0;

	memset(sb, 0, sizeof(*sb));
	sb->magic = URAID_SB_MAGIC;
	sb->major_version = 1;
	memcpy(sb->set_uuid, set_uuid, 16);
	strcpy(sb->set_name, "testhost:fixture");
	sb->ctime = 1700000000;
	sb->utime = 1700000000;
	sb->level = 5;
	sb->layout = 2;
	sb->chunksize = chunk;
	sb->raid_disks = 4;
	sb->super_offset = sb_start;
	sb->dev_number = 1;
	memcpy(sb->device_uuid, dev_uuid, 16);
	sb->events = 0;
	sb->resync_offset = URAID_MAX_SECTOR;
	sb->max_dev = max_dev ? max_dev : 128;
	for (i = 0; i < URAID_SB_MAX_DEV; i++)
		sb->dev_roles[i] = i < 4 && i < sb->max_dev ? (uint16_t)i : URAID_ROLE_SPARE;

	if (minor == 0) {
		/* data at 0; below the superblock: bblog (8), bitmap above it */
		sb->data_offset = 0;
		sb->bblog_offset = -8;
		sb->bblog_size = 8;
		if (with_bitmap)
			bm_sectors = 8;   /* fixture sizes stay under one 4 KiB page */
		sb->data_size = sb_start - 8 - bm_sectors;
		if (with_bitmap)
			sb->bitmap_offset = -(int32_t)(bm_sectors + 8);
	} else {
		sb->data_offset = 2048;
		sb->data_size = dev_sectors - 2048;
		if (with_bitmap) {
			bm_sectors = 8;
			sb->bitmap_offset = 8;
		}
		/* bblog right after the bitmap, or at +16 without one */
		sb->bblog_offset = with_bitmap ? (int32_t)(8 + bm_sectors) : 16;
		sb->bblog_size = 8;
	}
	sb->size = sb->data_size / chunk * chunk;
	if (with_bitmap)
		sb->feature_map |= URAID_FEATURE_BITMAP_OFFSET;

	if (bm) {
		memset(bm, 0, sizeof(*bm));
		bm->magic = URAID_BITMAP_MAGIC;
		bm->version = URAID_BITMAP_VERSION;
		memcpy(bm->uuid, set_uuid, 16);
		bm->sync_size = sb->size;
		bm->chunksize = bm_chunk;
		bm->daemon_sleep = 5;
	}
}
