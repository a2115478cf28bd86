/* SPDX-License-Identifier: MIT */
/*
 * md superblock version 1.0 / 1.1 / 1.2: decode, validate, encode.
 * Facts: reference/md-format.md §1 (layout as <linux/raid/md_p.h>
 * struct mdp_superblock_1, checksum §1.4, acceptance checks §1.14).
 *
 * Pure functions over byte buffers; callers do the I/O.
 */
#ifndef URAID_SUPERBLOCK_H
#define URAID_SUPERBLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define URAID_SB_MAGIC        0xa92b4efcu
#define URAID_SB_BYTES        4096      /* the kernel reads 4 KiB at sb_start */
#define URAID_SB_FIXED_BYTES  256
#define URAID_SB_MAX_DEV      1920      /* (4096 - 256) / 2 */
#define URAID_MAX_SECTOR      UINT64_MAX /* resync_offset of a clean array */

/* feature_map bits (§1.5) */
#define URAID_FEATURE_BITMAP_OFFSET     0x1u
#define URAID_FEATURE_RECOVERY_OFFSET   0x2u
#define URAID_FEATURE_RESHAPE_ACTIVE    0x4u
#define URAID_FEATURE_BAD_BLOCKS        0x8u
#define URAID_FEATURE_REPLACEMENT       0x10u
#define URAID_FEATURE_RESHAPE_BACKWARDS 0x20u
#define URAID_FEATURE_NEW_OFFSET        0x40u
#define URAID_FEATURE_RECOVERY_BITMAP   0x80u
#define URAID_FEATURE_CLUSTERED         0x100u
#define URAID_FEATURE_JOURNAL           0x200u
#define URAID_FEATURE_PPL               0x400u
#define URAID_FEATURE_MULTIPLE_PPLS     0x800u
#define URAID_FEATURE_RAID0_LAYOUT      0x1000u
#define URAID_FEATURE_ALL               0x1fffu

/* dev_roles[] values (§1.6) */
#define URAID_ROLE_SPARE    0xffffu
#define URAID_ROLE_FAULTY   0xfffeu
#define URAID_ROLE_JOURNAL  0xfffdu
#define URAID_ROLE_MAX      0xff00u

/* devflags */
#define URAID_DEVFLAG_WRITEMOSTLY 0x1u
#define URAID_DEVFLAG_FAILFAST    0x2u

/* The decoded superblock, host byte order, every field of mdp_superblock_1. */
struct uraid_sb {
	uint32_t magic;
	uint32_t major_version;
	uint32_t feature_map;
	uint32_t pad0;
	uint8_t set_uuid[16];
	char set_name[33];          /* 32 bytes on disk, all written back; NUL-terminated here */
	uint64_t ctime;
	int32_t level;
	uint32_t layout;
	uint64_t size;              /* sectors used per member */
	uint32_t chunksize;         /* sectors */
	uint32_t raid_disks;
	int32_t bitmap_offset;      /* sectors relative to sb_start */
	uint32_t new_level;
	uint64_t reshape_position;
	int32_t delta_disks;
	uint32_t new_layout;
	uint32_t new_chunk;
	int32_t new_offset;
	uint64_t data_offset;
	uint64_t data_size;
	uint64_t super_offset;
	uint64_t recovery_offset;
	uint32_t dev_number;
	uint32_t cnt_corrected_read;
	uint8_t device_uuid[16];
	uint8_t devflags;
	uint8_t bblog_shift;
	uint16_t bblog_size;
	int32_t bblog_offset;
	uint64_t utime;
	uint64_t events;
	uint64_t resync_offset;
	uint32_t sb_csum;           /* as found on disk (decode) */
	uint32_t max_dev;
	uint8_t pad3[32];
	uint16_t dev_roles[URAID_SB_MAX_DEV];
};

/*
 * Minor version 0/1/2 -> superblock sector on a member of dev_sectors (§1.2).
 * UINT64_MAX for any other minor, or for 1.0 on a member under 16 sectors.
 */
uint64_t uraid_sb_location(unsigned minor, uint64_t dev_sectors);

/*
 * md's checksum (§1.4) of an encoded superblock (URAID_SB_BYTES), with sb_csum
 * taken as 0. A max_dev above URAID_SB_MAX_DEV is clamped to it.
 */
uint32_t uraid_sb_checksum(const void *buf);

/* Bytes mdadm writes for a superblock with max_dev roles: ROUND_UP(256+2*max_dev, 512). */
size_t uraid_sb_write_bytes(uint32_t max_dev);

/*
 * Decode the 4 KiB read at the superblock location. No validation beyond what
 * decoding needs: returns -ENOENT when the magic is absent (no md
 * superblock), -EINVAL if max_dev is too large to decode, else 0.
 */
int uraid_sb_decode(const void *buf, struct uraid_sb *sb);

/*
 * Every acceptance check of §1.14 (kernel super_1_load and mdadm
 * load_super1), for a superblock found at the location of `minor` on a member
 * of dev_sectors: magic, major, max_dev, super_offset, feature bits and their
 * combinations, checksum (computed over buf), data_size, pad0/pad3, data
 * offset beyond the superblock, data area inside the device, and the RAID 0
 * layout flag. Returns 0, or -EINVAL with one line in err naming the check and
 * the values found and expected.
 */
int uraid_sb_validate(const void *buf, unsigned minor, uint64_t dev_sectors,
		      char *err, size_t errlen);

/*
 * A member's own areas, in sectors from the start of the device ([start,
 * start + len); len 0: the member has none). What uraid may ever read or
 * write on a member of an assembled array (see io/member.h's wall).
 */
struct uraid_sb_areas {
	uint64_t sb_start, sb_len;          /* the superblock and the room up to 4 KiB after it */
	uint64_t bitmap_start, bitmap_len;  /* the write-intent bitmap, whole 4 KiB pages */
	uint64_t bblog_start, bblog_len;    /* the bad-block log */
	uint64_t ppl_start, ppl_len;        /* the partial parity log (PPL) */
	uint64_t data_start, data_len;      /* the part of the data area the array uses */
};

/* What the array (not the member's own superblock) says of a member's areas. */
struct uraid_sb_area_params {
	uint64_t dev_sectors;       /* the member's size */
	unsigned minor;             /* metadata 1.<minor> */
	bool bitmap;                /* an internal bitmap at bitmap_offset */
	int32_t bitmap_offset;      /* the array's, relative to this member's superblock */
	uint64_t bitmap_sectors;    /* from the array's sync range and bitmap chunk */
	uint64_t data_used;         /* data sectors the array uses on this member */
	bool ppl;                   /* a partial parity log (feature 0x400/0x800) */
	int32_t ppl_offset;         /* its ppl.offset (uraid_sb_ppl_offset) */
	uint64_t ppl_sectors;       /* its ppl.size */
};

/*
 * PPL (feature 0x400 or 0x800) keeps ppl.offset (signed 16 bits, sectors
 * from the superblock) and ppl.size (16 bits, sectors) where bitmap_offset
 * is: offset in the low half of the little-endian word, size in the high.
 */
static inline int32_t uraid_sb_ppl_offset(const struct uraid_sb *sb)
{
	return (int16_t)(uint16_t)((uint32_t)sb->bitmap_offset & 0xffffu);
}

static inline uint32_t uraid_sb_ppl_size(const struct uraid_sb *sb)
{
	return (uint32_t)sb->bitmap_offset >> 16;
}

static inline void uraid_sb_set_ppl(struct uraid_sb *sb, int16_t offset, uint16_t size)
{
	sb->bitmap_offset = (int32_t)((uint32_t)(uint16_t)offset | (uint32_t)size << 16);
}

/*
 * Check a member's superblock (already accepted by uraid_sb_validate) against
 * its device and the array, as md does at run time and more: the data area
 * (data_offset, data_size, the part used) lies inside the device; the bitmap
 * and the bad-block log lie wholly in the metadata space (1.1/1.2: between
 * the superblock and data_offset; 1.0: between the data's end and the
 * superblock, or after it) and none of superblock, bitmap, log and data
 * overlap. 0 and the areas in out, or -EINVAL with one line in err naming the
 * field, its value and the bound.
 */
int uraid_sb_check_areas(const struct uraid_sb *sb, const struct uraid_sb_area_params *p,
			 struct uraid_sb_areas *out, char *err, size_t errlen);

/*
 * Encode sb into buf (URAID_SB_BYTES, zero-filled first), computing the
 * checksum; sb->sb_csum is ignored and the written value returned in it.
 * Roles beyond max_dev are left zero (they are outside the superblock).
 */
void uraid_sb_encode(struct uraid_sb *sb, void *buf);

/* Role of this member: dev_roles[dev_number], or URAID_ROLE_SPARE if out of range. */
uint16_t uraid_sb_role(const struct uraid_sb *sb);

/* md's text form of a UUID: "xxxxxxxx:xxxxxxxx:xxxxxxxx:xxxxxxxx" (len >= 36). */
const char *uraid_uuid_text(const uint8_t *uuid, char *buf, size_t len);
/* A UUID from text: 32 hex digits, with any ':', '-', '.' or ' ' between
 * them (md's, mdadm's and RFC 4122's spellings); 0 or -EINVAL. */
int uraid_uuid_parse(const char *text, uint8_t uuid[16]);

/* ctime/utime: low 40 bits are seconds (§1.3). */
static inline uint64_t uraid_sb_seconds(uint64_t t) { return t & 0xffffffffffull; }

#ifdef __cplusplus
}
#endif
#endif
