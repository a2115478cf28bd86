/* SPDX-License-Identifier: MIT */
/*
 * md internal write-intent bitmap (header and bit addressing) and the
 * bad-block log. Facts: reference/md-format.md §2 and §1.11.
 * Pure functions over byte buffers.
 */
#ifndef URAID_BITMAP_H
#define URAID_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define URAID_BITMAP_MAGIC        0x6d746962u  /* "bitm" */
#define URAID_BITMAP_HEADER_BYTES 256
#define URAID_BITMAP_VERSION      4            /* little-endian bit order */

#define URAID_BITMAP_STATE_STALE       0x2u
#define URAID_BITMAP_STATE_WRITE_ERROR 0x4u

struct uraid_bitmap_sb {
	uint32_t magic;
	uint32_t version;
	uint8_t uuid[16];
	uint64_t events;
	uint64_t events_cleared;
	uint64_t sync_size;        /* sectors covered */
	uint32_t state;
	uint32_t chunksize;        /* bytes per bit */
	uint32_t daemon_sleep;     /* seconds */
	uint32_t write_behind;
	uint32_t sectors_reserved;
	uint32_t nodes;
	char cluster_name[65];     /* 64 on disk, NUL-terminated here */
};

/* Decode the 256-byte header; -ENOENT if the magic is absent, else 0. */
int uraid_bitmap_decode(const void *buf, struct uraid_bitmap_sb *bm);

/*
 * Validate a decoded header as the kernel loads it (§2.2, §2.5): magic,
 * version 3..5, chunksize a power of two >= 512, daemon_sleep != 0,
 * write_behind <= 16383, uuid equal to set_uuid (when not NULL).
 * Returns 0 or -EINVAL with one line in err.
 */
int uraid_bitmap_validate(const struct uraid_bitmap_sb *bm, const uint8_t *set_uuid,
			  char *err, size_t errlen);

/* Encode the header into the first 256 bytes of buf (padding zeroed). */
void uraid_bitmap_encode(const struct uraid_bitmap_sb *bm, void *buf);

/* Bits: ceil(sync_size * 512 / chunksize). */
uint64_t uraid_bitmap_bits(uint64_t sync_size, uint32_t chunksize);
/* Bytes of header + bits: 256 + ceil(bits / 8). */
uint64_t uraid_bitmap_bytes(uint64_t sync_size, uint32_t chunksize);

/* Bit i of a bitmap area (header first): byte 256 + i/8, bit i%8 from the LSB. */
static inline bool uraid_bitmap_test(const void *area, uint64_t bit)
{
	return (((const uint8_t *)area)[URAID_BITMAP_HEADER_BYTES + bit / 8] >> (bit % 8)) & 1;
}
static inline void uraid_bitmap_set(void *area, uint64_t bit)
{
	((uint8_t *)area)[URAID_BITMAP_HEADER_BYTES + bit / 8] |= (uint8_t)(1u << (bit % 8));
}
static inline void uraid_bitmap_clear(void *area, uint64_t bit)
{
	((uint8_t *)area)[URAID_BITMAP_HEADER_BYTES + bit / 8] &= (uint8_t)~(1u << (bit % 8));
}
/* Count set bits among the first nbits. */
uint64_t uraid_bitmap_count(const void *area, uint64_t nbits);
/* Bit covering sync-range sector `sector`. */
static inline uint64_t uraid_bitmap_bit_of(uint64_t sector, uint32_t chunksize)
{
	return sector / (chunksize / 512);
}

/*
 * mdadm's choice of bitmap chunk (§2.4): smallest power of two >= 4096 whose
 * bit count fits in room_sectors (minus the header), and at least 64 MiB.
 * room_sectors is capped at 256 (128 KiB) as mdadm does when no chunk is
 * given. Returns 0 when room_sectors <= 1 (mdadm: no room for a bitmap) or
 * the chunk would exceed 2 GiB.
 */
uint32_t uraid_bitmap_default_chunk(uint64_t sync_size, uint64_t room_sectors);
/*
 * The smallest chunk whose bits fit in room_sectors (no cap, no 64 MiB
 * floor): mdadm refuses a requested chunk below it. 0 when nothing fits.
 */
uint32_t uraid_bitmap_min_chunk(uint64_t sync_size, uint64_t room_sectors);
/* Sectors the bitmap occupies on disk: header and bits rounded up to 4 KiB. */
uint64_t uraid_bitmap_disk_sectors(uint64_t sync_size, uint32_t chunksize);

/* ---- bad-block log (§1.11) ---- */
#define URAID_BBLOG_SECTORS 8    /* what mdadm reserves: 4 KiB, 512 entries */

struct uraid_bb {
	uint64_t start;    /* sectors */
	uint32_t length;   /* sectors */
};

/* An empty log: len bytes of 0xff. */
void uraid_bblog_init(void *buf, size_t len);
/*
 * Decode entries until the first all-ones word; shift is bblog_shift. Returns
 * the number of entries (at most max are stored in out), or -EINVAL for a
 * zero-length entry.
 */
int uraid_bblog_decode(const void *buf, size_t len, unsigned shift,
		       struct uraid_bb *out, unsigned max);
/*
 * Encode one entry (start and length in sectors, multiples of 1<<shift) as a
 * host-order value; store it with htole64. Returns UINT64_MAX (the end
 * marker) when the entry cannot be expressed: length 0 or over 1023 units,
 * start beyond 54 bits of units, or shift >= 32.
 */
uint64_t uraid_bblog_entry(uint64_t start, uint32_t length, unsigned shift);

#ifdef __cplusplus
}
#endif
#endif
