/* SPDX-License-Identifier: MIT */
/*
 * On-disk layout of the md version-1 superblock and the bitmap header
 * (reference/md-format.md §1.3, §2.2). Private to src/format/.
 *
 * Every field is a fixed-width little-endian integer; convert with
 * le*toh/htole* from <endian.h>. The layout equals <linux/raid/md_p.h>
 * struct mdp_superblock_1 (the unit test compares offsetof of every field).
 */
#ifndef URAID_FORMAT_SB_DISK_H
#define URAID_FORMAT_SB_DISK_H

#include <stddef.h>
#include <stdint.h>

struct sb1_disk {
	/* constant array information: bytes 0..127 */
	uint32_t magic;
	uint32_t major_version;
	uint32_t feature_map;
	uint32_t pad0;
	uint8_t set_uuid[16];
	char set_name[32];
	uint64_t ctime;
	uint32_t level;
	uint32_t layout;
	uint64_t size;
	uint32_t chunksize;
	uint32_t raid_disks;
	uint32_t bitmap_offset;     /* s32; or ppl.offset (s16) + ppl.size (u16) */
	uint32_t new_level;
	uint64_t reshape_position;
	uint32_t delta_disks;
	uint32_t new_layout;
	uint32_t new_chunk;
	uint32_t new_offset;
	/* constant device information: bytes 128..191 */
	uint64_t data_offset;
	uint64_t data_size;
	uint64_t super_offset;
	uint64_t recovery_offset;   /* or journal_tail */
	uint32_t dev_number;
	uint32_t cnt_corrected_read;
	uint8_t device_uuid[16];
	uint8_t devflags;
	uint8_t bblog_shift;
	uint16_t bblog_size;
	uint32_t bblog_offset;
	/* array state information: bytes 192..255 */
	uint64_t utime;
	uint64_t events;
	uint64_t resync_offset;
	uint32_t sb_csum;
	uint32_t max_dev;
	uint8_t pad3[32];
	uint16_t dev_roles[];
} __attribute__((packed));

_Static_assert(offsetof(struct sb1_disk, set_uuid) == 16, "sb1 set_uuid");
_Static_assert(offsetof(struct sb1_disk, ctime) == 64, "sb1 ctime");
_Static_assert(offsetof(struct sb1_disk, bitmap_offset) == 96, "sb1 bitmap_offset");
_Static_assert(offsetof(struct sb1_disk, new_offset) == 124, "sb1 new_offset");
_Static_assert(offsetof(struct sb1_disk, data_offset) == 128, "sb1 data_offset");
_Static_assert(offsetof(struct sb1_disk, dev_number) == 160, "sb1 dev_number");
_Static_assert(offsetof(struct sb1_disk, devflags) == 184, "sb1 devflags");
_Static_assert(offsetof(struct sb1_disk, bblog_offset) == 188, "sb1 bblog_offset");
_Static_assert(offsetof(struct sb1_disk, utime) == 192, "sb1 utime");
_Static_assert(offsetof(struct sb1_disk, sb_csum) == 216, "sb1 sb_csum");
_Static_assert(offsetof(struct sb1_disk, max_dev) == 220, "sb1 max_dev");
_Static_assert(offsetof(struct sb1_disk, pad3) == 224, "sb1 pad3");
_Static_assert(offsetof(struct sb1_disk, dev_roles) == 256, "sb1 dev_roles");
_Static_assert(sizeof(struct sb1_disk) == 256, "sb1 fixed part is 256 bytes");

/* bitmap_super_t (md-bitmap.h) */
struct bitmap_sb_disk {
	uint32_t magic;
	uint32_t version;
	uint8_t uuid[16];
	uint64_t events;
	uint64_t events_cleared;
	uint64_t sync_size;
	uint32_t state;
	uint32_t chunksize;
	uint32_t daemon_sleep;
	uint32_t write_behind;
	uint32_t sectors_reserved;
	uint32_t nodes;
	uint8_t cluster_name[64];
	uint8_t pad[120];
} __attribute__((packed));

_Static_assert(offsetof(struct bitmap_sb_disk, events) == 24, "bitmap events");
_Static_assert(offsetof(struct bitmap_sb_disk, sync_size) == 40, "bitmap sync_size");
_Static_assert(offsetof(struct bitmap_sb_disk, state) == 48, "bitmap state");
_Static_assert(offsetof(struct bitmap_sb_disk, chunksize) == 52, "bitmap chunksize");
_Static_assert(offsetof(struct bitmap_sb_disk, sectors_reserved) == 64, "bitmap reserved");
_Static_assert(offsetof(struct bitmap_sb_disk, cluster_name) == 72, "bitmap cluster_name");
_Static_assert(offsetof(struct bitmap_sb_disk, pad) == 136, "bitmap pad");
_Static_assert(sizeof(struct bitmap_sb_disk) == 256, "bitmap header is 256 bytes");

/* Superblock sectors the kernel treats as metadata: 256 + 2*max_dev rounded
 * up to 512 bytes (mdadm's write size; the kernel rounds to the logical
 * block size, which is 512 for the members uraid validates against). */
static inline uint64_t sb1_sectors(uint32_t max_dev)
{
	return ((uint64_t)256 + 2 * (uint64_t)max_dev + 511) / 512;
}

#endif
