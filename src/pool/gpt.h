/* SPDX-License-Identifier: MIT */
/*
 * The GUID partition table as the UEFI specification lays it out, for
 * 512-byte sectors: a protective MBR at LBA 0, the primary header at LBA 1
 * and its 128 entries of 128 bytes at LBA 2..33, the backup entries in the
 * 32 sectors before the last one and the backup header in the last sector.
 * Headers and entries carry a CRC32 (IEEE 802.3, as zlib's crc32). Every
 * field read from a disk is checked before it is used; a table this code
 * cannot vouch for is refused, never rewritten (the caller decides, with
 * --force).
 *
 * GUIDs are kept as their 16 bytes on disk (the first three fields little
 * endian, as the specification stores them); gpt_guid_text prints them in
 * the usual text form.
 */
#ifndef URAID_POOL_GPT_H
#define URAID_POOL_GPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPT_ENTRIES          128u
#define GPT_ENTRY_BYTES      128u
#define GPT_ENTRY_SECTORS    (GPT_ENTRIES * GPT_ENTRY_BYTES / 512)   /* 32 */
#define GPT_HEADER_BYTES     92u
#define GPT_NAME_CHARS       36u     /* UTF-16 code units in an entry's name */
#define GPT_ALIGN_SECTORS    2048u   /* 1 MiB: where partitions start */
/* the smallest device that holds both tables and one aligned MiB */
#define GPT_MIN_SECTORS      (2u * GPT_ALIGN_SECTORS + 1 + GPT_ENTRY_SECTORS)

struct gpt_part {
	uint8_t type[16];           /* all zero: the entry is unused */
	uint8_t guid[16];           /* unique partition GUID */
	uint64_t first, last;       /* LBAs, inclusive */
	uint64_t attrs;
	char name[GPT_NAME_CHARS * 3 + 1];  /* ASCII ('?' for any other character read) */
	/* the name's UTF-16LE bytes as read: written back as they were while
	   name is still what was read from them (another tool's non-ASCII names
	   survive uraid's changes to other entries) */
	uint8_t raw_name[GPT_NAME_CHARS * 2];
	char raw_as_read[GPT_NAME_CHARS + 1];
};

struct gpt {
	uint64_t dev_sectors;       /* the device's size: the backup header is at the end */
	uint8_t disk_guid[16];
	uint64_t first_usable, last_usable;
	struct gpt_part part[GPT_ENTRIES];
};

/* What gpt_read found in each copy. */
struct gpt_read_info {
	bool primary_ok, backup_ok;
	char primary_why[160], backup_why[160];   /* why a copy was refused */
	bool protective_mbr;        /* LBA 0 is a protective MBR (type 0xEE) */
	bool mbr_partitions;        /* LBA 0 is an MBR with other partitions (not a GPT disk) */
	/* the drive has grown: the primary header puts the backup at the old
	   last sector (grown_from - 1), where a sound backup was found; the
	   table read is that of a grown_from-sector drive (g->dev_sectors), and
	   is written so until gpt_move_backup moves the backup to the new end */
	bool grown;
	uint64_t grown_from;
};

/* crc32 as zlib's crc32(0, buf, len). */
uint32_t gpt_crc32(const void *buf, size_t len);

/* Text form of an on-disk GUID ("c4667a33-60e5-446a-85d3-32d64c31e516"), and back. */
void gpt_guid_text(const uint8_t guid[16], char out[37]);
int gpt_guid_parse(const char *text, uint8_t guid[16]);
bool gpt_guid_zero(const uint8_t guid[16]);
/* A random (version 4) GUID from getrandom. 0 or -errno. */
int gpt_guid_random(uint8_t guid[16]);

/* An empty table for a device of dev_sectors (>= GPT_MIN_SECTORS). */
int gpt_init(struct gpt *g, uint64_t dev_sectors, const uint8_t disk_guid[16], char *err,
	     size_t errlen);

/*
 * Encode the table: primary is 34 sectors (MBR, header, entries: written at
 * LBA 0), backup 33 sectors (entries, header: written at dev_sectors - 33).
 * The table must pass gpt_check (-EINVAL + err otherwise).
 */
#define GPT_PRIMARY_BYTES ((2 + GPT_ENTRY_SECTORS) * 512)
#define GPT_BACKUP_BYTES  ((1 + GPT_ENTRY_SECTORS) * 512)
int gpt_encode(const struct gpt *g, uint8_t *primary, uint8_t *backup, char *err,
	       size_t errlen);

/*
 * Decode both copies from what a device of dev_sectors holds: primary (its
 * first 34 sectors) and backup (its last 33). 0 when at least one copy is
 * valid (the primary preferred; info says which were refused and why),
 * -ENOENT when neither header has the signature (no GPT: info tells an MBR
 * table apart), -EINVAL when both are damaged or the table is one this
 * code does not handle (entries other than 128 of 128 bytes, 4 KiB
 * sectors), the reason in err.
 */
int gpt_decode(const uint8_t *primary, const uint8_t *backup, uint64_t dev_sectors,
	       struct gpt *g, struct gpt_read_info *info, char *err, size_t errlen);

/* The table's own consistency: usable range, entries inside it, no two
 * overlapping. 0 or -EINVAL + err. */
int gpt_check(const struct gpt *g, char *err, size_t errlen);

/* Read and decode the table of the first dev_sectors of fd (the whole file
 * or device); the same answers as gpt_decode, -EIO when unreadable. */
int gpt_read(int fd, uint64_t dev_sectors, struct gpt *g, struct gpt_read_info *info,
	     char *err, size_t errlen);
/*
 * A grown drive (info.grown): the table made that of a dev_sectors drive,
 * its backup at the new end and the usable space up to it, as sgdisk -e
 * does; write it with gpt_write. 0, or -EINVAL + err when dev_sectors is
 * not larger.
 */
int gpt_move_backup(struct gpt *g, uint64_t dev_sectors, char *err, size_t errlen);
/* Write both copies (backup first, then primary) and fdatasync. 0 or -errno + err. */
int gpt_write(int fd, const struct gpt *g, char *err, size_t errlen);

/* The free extents between used partitions, 1 MiB aligned, largest first
 * not required: in LBA order. Returns the count (at most max). */
struct gpt_extent {
	uint64_t first, sectors;
};
unsigned gpt_free_extents(const struct gpt *g, struct gpt_extent *out, unsigned max);
/* The first unused entry, or -ENOSPC. */
int gpt_free_entry(const struct gpt *g);

#endif
