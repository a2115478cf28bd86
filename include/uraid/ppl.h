/* SPDX-License-Identifier: MIT */
/*
 * md's partial parity log (PPL, RAID 5): the on-disk header and entries.
 * Facts (kernel drivers/md/raid5-ppl.c, include/uapi/linux/raid/md_p.h,
 * Documentation/driver-api/md/raid5-ppl.rst; mdadm super1.c):
 *
 *  - Each member has a PPL area at ppl.offset (signed, sectors from the
 *    superblock) of ppl.size sectors (the superblock's bitmap_offset word:
 *    offset in its low 16 bits, size in its high 16 bits). mdadm makes it
 *    1 MiB, 8 sectors after a 1.1/1.2 superblock, or 2048 + 8 sectors
 *    before a 1.0 one.
 *  - A log write is a 4 KiB header followed by the partial parity of its
 *    entries, in entry order. The header: 512 bytes of 0xff, signature
 *    (~crc32c(~0, array uuid)), 4 bytes of zero, generation, entries_count,
 *    checksum (~crc32c(~0, the 4 KiB with the checksum field 0)), then
 *    entries of 24 bytes: data_sector (array sector, in 512-byte blocks for
 *    md's own metadata), pp_size, data_size (bytes), parity_disk (slot),
 *    checksum (~crc32c(~0, the entry's partial parity)). All little endian.
 *  - An entry covers the same within-chunk range of data_size / pp_size
 *    consecutive data chunks of one stripe row from data_sector (pp_size 0:
 *    every data chunk, data_size / data disks bytes each). The partial
 *    parity is the XOR of the row's other data chunks over that range, so
 *    parity = XOR(current data of the chunks) ^ partial parity.
 *  - With an area of at least 2 x (128 KiB + 4 KiB) md writes its logs one
 *    after another through the area (MULTIPLE_PPLS, feature 0x800), each at
 *    most 128 KiB of partial parity, wrapping to the start; recovery walks
 *    the headers from the area's start while they are valid and their
 *    generation grows, and uses the newest.
 *
 * Pure functions over buffers; callers do the I/O.
 */
#ifndef URAID_PPL_H
#define URAID_PPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define URAID_PPL_HEADER_BYTES   4096u
#define URAID_PPL_RESERVED_BYTES 512u
#define URAID_PPL_ENTRY_BYTES    24u
/* (4096 - 512 - 24) / 24: what fits after the header's fixed fields */
#define URAID_PPL_MAX_ENTRIES    148u
/* partial parity per log write with MULTIPLE_PPLS (PPL_SPACE_SIZE) */
#define URAID_PPL_SPACE_BYTES    (128u * 1024u)
/* mdadm's area (MULTIPLE_PPL_AREA_SIZE_SUPER1), sectors */
#define URAID_PPL_AREA_SECTORS   2048u

struct uraid_ppl_entry {
	uint64_t data_sector;           /* array sector of the first modified data */
	uint32_t pp_size;               /* bytes of partial parity (0: full row) */
	uint32_t data_size;             /* bytes of data modified */
	uint32_t parity_disk;           /* slot of the row's parity */
	uint32_t checksum;              /* ~crc32c(~0, partial parity) */
};

struct uraid_ppl_header {
	uint32_t signature;
	uint64_t generation;
	uint32_t entries_count;
	uint32_t checksum;              /* as found (decode) */
	struct uraid_ppl_entry entries[URAID_PPL_MAX_ENTRIES];
};

/* md's crc32c as the PPL uses it: crc32c(seed, buf), no final inversion. */
uint32_t uraid_ppl_crc32c(uint32_t seed, const void *buf, size_t len);

/* The header signature of an array: ~crc32c(~0, set_uuid). */
uint32_t uraid_ppl_signature(const uint8_t uuid[16]);

/* Checksum of one entry's partial parity: ~crc32c(~0, pp). */
uint32_t uraid_ppl_pp_checksum(const void *pp, size_t len);

/*
 * Encode h into 4 KiB at buf (0xff reserved bytes, entries past
 * entries_count zero) with its checksum computed. Returns 0, or -EINVAL when
 * entries_count exceeds URAID_PPL_MAX_ENTRIES (nothing written).
 */
int uraid_ppl_encode(const struct uraid_ppl_header *h, void *buf);

/* The sum of the entries' pp_size in bytes (decoded headers only). */
uint64_t uraid_ppl_pp_total(const struct uraid_ppl_header *h);

/*
 * Decode and check the 4 KiB at buf for an array of this signature:
 * checksum (-EBADMSG), signature (-ESTALE: another array's or never written),
 * entries_count (-EINVAL), each entry's sizes (pp_size and data_size
 * multiples of 512, pp_size <= data_size, data_size a multiple of pp_size
 * when pp_size is not 0; -EINVAL) and their sum within pp_room bytes (the
 * area's room after the header; -EINVAL). Returns 0 with h filled, or the
 * error with one line in err.
 */
int uraid_ppl_decode(const void *buf, uint32_t signature, uint64_t pp_room,
		     struct uraid_ppl_header *h, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
