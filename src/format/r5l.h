/* SPDX-License-Identifier: MIT */
/*
 * md's write journal (raid5-cache) on-disk format: the log is a ring of
 * 4 KiB blocks on the journal device, counted in sectors from its
 * data_offset. A meta block (magic 0x6433c509, version 1, seq, its own
 * position) lists payloads; the pages they describe follow it in the ring:
 *   DATA   one 4 KiB page of array data, location = array sector;
 *   PARITY P (and Q for RAID 6) of one 4 KiB stripe row, location = member
 *          sector of that row, size = 8 or 16 sectors;
 *   FLUSH  a list of member sectors of rows whose log copies are stale
 *          (written to the members), no pages.
 * Every checksum is crc32c (no final inversion) seeded with
 * crc32c(~0, array uuid): the meta block's over its 4 KiB with the checksum
 * field zero, each page's over the page.
 *
 * Decoding checks every field before the caller may use it (magic, version,
 * checksum, position, seq, meta_size, each payload's type, size and extent
 * inside meta_size). Locations are the caller's to check against the array.
 */
#ifndef URAID_FORMAT_R5L_H
#define URAID_FORMAT_R5L_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define URAID_R5L_MAGIC         0x6433c509u
#define URAID_R5L_VERSION       1u
#define URAID_R5L_BLOCK         4096u
#define URAID_R5L_BLOCK_SECTORS 8u
#define URAID_R5L_META_HEADER   32u   /* bytes before the first payload */

enum uraid_r5l_payload_type {
	URAID_R5L_DATA = 0,
	URAID_R5L_PARITY = 1,
	URAID_R5L_FLUSH = 2,
};

/* The most payloads one meta block can hold (FLUSH headers are 8 bytes). */
#define URAID_R5L_MAX_PAYLOADS ((URAID_R5L_BLOCK - URAID_R5L_META_HEADER) / 8)

/* One payload as decoded. */
struct uraid_r5l_payload {
	uint16_t type;          /* enum uraid_r5l_payload_type */
	uint16_t flags;
	/* DATA / PARITY */
	uint64_t location;      /* DATA: array sector; PARITY: member sector */
	unsigned pages;         /* 4 KiB pages that follow in the log (1 or 2) */
	uint32_t checksum[2];   /* one per page */
	uint64_t log_sector;    /* where its first page is in the ring */
	/* FLUSH */
	unsigned nflush;        /* member sectors listed */
	uint32_t flush_offset;  /* byte offset of the first one in the block */
};

/* A decoded meta block. */
struct uraid_r5l_meta {
	uint64_t seq;
	uint64_t position;      /* sector in the ring */
	uint32_t meta_size;     /* bytes used in the block */
	unsigned npayloads;
	unsigned total_pages;   /* pages after the meta block */
	struct uraid_r5l_payload p[URAID_R5L_MAX_PAYLOADS];
};

/* crc32c(~0, uuid): the seed of every journal checksum of that array. */
uint32_t uraid_r5l_seed(const uint8_t uuid[16]);
/* A page's checksum as DATA/PARITY payloads store it. */
uint32_t uraid_r5l_page_csum(uint32_t seed, const void *page);

/*
 * Decode and check the meta block in buf (URAID_R5L_BLOCK bytes) expected at
 * ring position pos with sequence seq, in a ring of log_sectors sectors (a
 * multiple of 8). max_parity_pages is 1 for RAID 4/5, 2 for RAID 6.
 * Returns 0, or -EINVAL with the reason in err (nothing in out to trust).
 * The pages' own checksums are checked by the caller (it reads them).
 */
int uraid_r5l_meta_decode(const void *buf, uint32_t seed, uint64_t pos, uint64_t seq,
			  uint64_t log_sectors, unsigned max_parity_pages,
			  struct uraid_r5l_meta *out, char *err, size_t errlen);

/* The i-th member sector listed by a FLUSH payload (i < nflush). */
uint64_t uraid_r5l_flush_sector(const void *buf, const struct uraid_r5l_payload *p, unsigned i);

/* ---- encoding (the journal writer and tests) ---- */

/* An empty meta block at ring position pos with sequence seq. */
void uraid_r5l_meta_init(void *buf, uint64_t seq, uint64_t pos);
/* Append one payload; -ENOSPC when the block has no room left for it. */
int uraid_r5l_meta_add_data(void *buf, uint64_t array_sector, uint32_t csum);
int uraid_r5l_meta_add_parity(void *buf, uint64_t member_sector, const uint32_t *csum,
			      unsigned pages);
int uraid_r5l_meta_add_flush(void *buf, uint64_t member_sector);
/* Bytes of room left for payloads. */
uint32_t uraid_r5l_meta_room(const void *buf);
/* Fill in the checksum (last, after every payload). */
void uraid_r5l_meta_seal(void *buf, uint32_t seed);

/* Ring arithmetic on positions in sectors. */
static inline uint64_t uraid_r5l_ring_add(uint64_t log_sectors, uint64_t pos, uint64_t inc)
{
	pos += inc;
	if (pos >= log_sectors)
		pos -= log_sectors;
	return pos;
}

#endif
