// SPDX-License-Identifier: MIT
/*
 * md's write journal meta block (see r5l.h): checksums, decoding with every
 * field checked, and encoding. Layout of the block (little endian):
 *   0 magic u32, 4 checksum u32, 8 version u8, 9 pad u8, 10 pad u16,
 *   12 meta_size u32, 16 seq u64, 24 position u64, 32 payloads...
 * DATA/PARITY payload: type u16, flags u16, size u32 (sectors),
 *   location u64, then one u32 checksum per 4 KiB page (20 + 4n bytes).
 * FLUSH payload: type u16, flags u16, size u32 (bytes), then size/8 u64
 *   member sectors.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <isa-l/crc.h>

#include "common/errmsg.h"
#include "format/r5l.h"

#define OFF_MAGIC     0
#define OFF_CSUM      4
#define OFF_VERSION   8
#define OFF_META_SIZE 12
#define OFF_SEQ       16
#define OFF_POSITION  24
#define DP_HEADER     16u   /* type, flags, size, location */
#define FLUSH_HEADER  8u    /* type, flags, size */

static uint16_t get16(const uint8_t *b, size_t off)
{
	uint16_t v;
	memcpy(&v, b + off, 2);
	return le16toh(v);
}

static uint32_t get32(const uint8_t *b, size_t off)
{
	uint32_t v;
	memcpy(&v, b + off, 4);
	return le32toh(v);
}

static uint64_t get64(const uint8_t *b, size_t off)
{
	uint64_t v;
	memcpy(&v, b + off, 8);
	return le64toh(v);
}

static void put16(uint8_t *b, size_t off, uint16_t v)
{
	v = htole16(v);
	memcpy(b + off, &v, 2);
}

static void put32(uint8_t *b, size_t off, uint32_t v)
{
	v = htole32(v);
	memcpy(b + off, &v, 4);
}

static void put64(uint8_t *b, size_t off, uint64_t v)
{
	v = htole64(v);
	memcpy(b + off, &v, 8);
}

uint32_t uraid_r5l_seed(const uint8_t uuid[16])
{
	/* ISA-L's crc32_iscsi is the kernel's crc32c_le: seeded, no final xor */
	return crc32_iscsi((unsigned char *)uuid, 16, 0xffffffffu);
}

uint32_t uraid_r5l_page_csum(uint32_t seed, const void *page)
{
	return crc32_iscsi((unsigned char *)page, URAID_R5L_BLOCK, seed);
}

/* The block's checksum with its checksum field taken as zero. */
static uint32_t meta_csum(uint32_t seed, const uint8_t *b)
{
	static const uint8_t zero[4];
	uint32_t c = crc32_iscsi((unsigned char *)b, OFF_CSUM, seed);
	c = crc32_iscsi((unsigned char *)zero, 4, c);
	return crc32_iscsi((unsigned char *)b + OFF_CSUM + 4,
			   URAID_R5L_BLOCK - OFF_CSUM - 4, c);
}

static int decode_payloads(const uint8_t *b, uint64_t pos, uint64_t log_sectors,
			   unsigned max_parity_pages, struct uraid_r5l_meta *out,
			   char *err, size_t errlen)
{
	uint32_t off = URAID_R5L_META_HEADER;
	uint64_t page_at = uraid_r5l_ring_add(log_sectors, pos, URAID_R5L_BLOCK_SECTORS);
	/* the meta block and its pages must fit in the ring with room to spare */
	uint64_t ring_pages = log_sectors / URAID_R5L_BLOCK_SECTORS;

	while (off < out->meta_size) {
		struct uraid_r5l_payload *p;
		uint16_t type;
		uint32_t size;

		if (out->npayloads == URAID_R5L_MAX_PAYLOADS)
			return uraid_errf(err, errlen, -EINVAL, "more than %u payloads",
					  URAID_R5L_MAX_PAYLOADS);
		if (out->meta_size - off < FLUSH_HEADER)
			return uraid_errf(err, errlen, -EINVAL,
					  "payload at byte %u cut by meta_size %u", off, out->meta_size);
		p = &out->p[out->npayloads];
		memset(p, 0, sizeof(*p));
		type = get16(b, off);
		p->type = type;
		p->flags = get16(b, off + 2);
		size = get32(b, off + 4);
		if (type == URAID_R5L_FLUSH) {
			if (size % 8 || size > out->meta_size - off - FLUSH_HEADER)
				return uraid_errf(err, errlen, -EINVAL,
						  "FLUSH payload at byte %u: size %" PRIu32
						  " bytes is not a whole list inside meta_size %u",
						  off, size, out->meta_size);
			p->nflush = size / 8;
			p->flush_offset = off + FLUSH_HEADER;
			off += FLUSH_HEADER + size;
			out->npayloads++;
			continue;
		}
		if (type != URAID_R5L_DATA && type != URAID_R5L_PARITY)
			return uraid_errf(err, errlen, -EINVAL,
					  "payload at byte %u: unknown type %u", off, type);
		if (size % URAID_R5L_BLOCK_SECTORS)
			return uraid_errf(err, errlen, -EINVAL,
					  "payload at byte %u: size %" PRIu32
					  " sectors is not whole 4 KiB pages", off, size);
		p->pages = size / URAID_R5L_BLOCK_SECTORS;
		if (type == URAID_R5L_DATA ? p->pages != 1 : p->pages != max_parity_pages)
			return uraid_errf(err, errlen, -EINVAL,
					  "%s payload at byte %u: %u pages where this level logs %u",
					  type == URAID_R5L_DATA ? "DATA" : "PARITY", off, p->pages,
					  type == URAID_R5L_DATA ? 1 : max_parity_pages);
		if (out->meta_size - off < DP_HEADER + 4 * p->pages)
			return uraid_errf(err, errlen, -EINVAL,
					  "payload at byte %u cut by meta_size %u", off, out->meta_size);
		p->location = get64(b, off + 8);
		if (p->location % URAID_R5L_BLOCK_SECTORS)
			return uraid_errf(err, errlen, -EINVAL,
					  "payload at byte %u: location %" PRIu64
					  " is not on a 4 KiB boundary", off, p->location);
		for (unsigned i = 0; i < p->pages; i++)
			p->checksum[i] = get32(b, off + DP_HEADER + 4 * i);
		p->log_sector = page_at;
		out->total_pages += p->pages;
		if ((uint64_t)out->total_pages + 1 >= ring_pages)
			return uraid_errf(err, errlen, -EINVAL,
					  "meta block with %u pages does not fit a ring of %" PRIu64
					  " pages", out->total_pages, ring_pages);
		page_at = uraid_r5l_ring_add(log_sectors, page_at,
					     (uint64_t)p->pages * URAID_R5L_BLOCK_SECTORS);
		off += DP_HEADER + 4 * p->pages;
		out->npayloads++;
	}
	return 0;
}

int uraid_r5l_meta_decode(const void *buf, uint32_t seed, uint64_t pos, uint64_t seq,
			  uint64_t log_sectors, unsigned max_parity_pages,
			  struct uraid_r5l_meta *out, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	uint32_t magic = get32(b, OFF_MAGIC), stored = get32(b, OFF_CSUM), computed;

	out->npayloads = 0;
	out->total_pages = 0;
	if (log_sectors < 2 * URAID_R5L_BLOCK_SECTORS || log_sectors % URAID_R5L_BLOCK_SECTORS)
		return uraid_errf(err, errlen, -EINVAL, "log of %" PRIu64 " sectors", log_sectors);
	if (max_parity_pages < 1 || max_parity_pages > 2)
		return uraid_errf(err, errlen, -EINVAL, "%u parity pages", max_parity_pages);
	if (magic != URAID_R5L_MAGIC)
		return uraid_errf(err, errlen, -EINVAL, "magic 0x%08" PRIx32 ", not 0x%08x",
				  magic, URAID_R5L_MAGIC);
	if (b[OFF_VERSION] != URAID_R5L_VERSION)
		return uraid_errf(err, errlen, -EINVAL, "version %u, not %u", b[OFF_VERSION],
				  URAID_R5L_VERSION);
	computed = meta_csum(seed, b);
	if (stored != computed)
		return uraid_errf(err, errlen, -EINVAL,
				  "checksum 0x%08" PRIx32 ", computed 0x%08" PRIx32, stored, computed);
	out->seq = get64(b, OFF_SEQ);
	out->position = get64(b, OFF_POSITION);
	out->meta_size = get32(b, OFF_META_SIZE);
	if (out->position != pos)
		return uraid_errf(err, errlen, -EINVAL, "position %" PRIu64 ", read at %" PRIu64,
				  out->position, pos);
	if (out->seq != seq)
		return uraid_errf(err, errlen, -EINVAL, "seq %" PRIu64 ", expected %" PRIu64,
				  out->seq, seq);
	if (out->meta_size < URAID_R5L_META_HEADER || out->meta_size > URAID_R5L_BLOCK)
		return uraid_errf(err, errlen, -EINVAL, "meta_size %" PRIu32, out->meta_size);
	return decode_payloads(b, pos, log_sectors, max_parity_pages, out, err, errlen);
}

uint64_t uraid_r5l_flush_sector(const void *buf, const struct uraid_r5l_payload *p, unsigned i)
{
	return get64(buf, p->flush_offset + 8 * (size_t)i);
}

void uraid_r5l_meta_init(void *buf, uint64_t seq, uint64_t pos)
{
	uint8_t *b = buf;

	memset(b, 0, URAID_R5L_BLOCK);
	put32(b, OFF_MAGIC, URAID_R5L_MAGIC);
	b[OFF_VERSION] = URAID_R5L_VERSION;
	put32(b, OFF_META_SIZE, URAID_R5L_META_HEADER);
	put64(b, OFF_SEQ, seq);
	put64(b, OFF_POSITION, pos);
}

uint32_t uraid_r5l_meta_room(const void *buf)
{
	uint32_t used = get32(buf, OFF_META_SIZE);
	return used >= URAID_R5L_BLOCK ? 0 : URAID_R5L_BLOCK - used;
}

static int add_dp(void *buf, uint16_t type, uint64_t location, const uint32_t *csum,
		  unsigned pages)
{
	uint8_t *b = buf;
	uint32_t off = get32(b, OFF_META_SIZE);

	if (uraid_r5l_meta_room(b) < DP_HEADER + 4 * pages)
		return -ENOSPC;
	put16(b, off, type);
	put16(b, off + 2, 0);
	put32(b, off + 4, pages * URAID_R5L_BLOCK_SECTORS);
	put64(b, off + 8, location);
	for (unsigned i = 0; i < pages; i++)
		put32(b, off + DP_HEADER + 4 * i, csum[i]);
	put32(b, OFF_META_SIZE, off + DP_HEADER + 4 * pages);
	return 0;
}

int uraid_r5l_meta_add_data(void *buf, uint64_t array_sector, uint32_t csum)
{
	return add_dp(buf, URAID_R5L_DATA, array_sector, &csum, 1);
}

int uraid_r5l_meta_add_parity(void *buf, uint64_t member_sector, const uint32_t *csum,
			      unsigned pages)
{
	if (pages < 1 || pages > 2)
		return -EINVAL;
	return add_dp(buf, URAID_R5L_PARITY, member_sector, csum, pages);
}

int uraid_r5l_meta_add_flush(void *buf, uint64_t member_sector)
{
	uint8_t *b = buf;
	uint32_t off = get32(b, OFF_META_SIZE);

	if (uraid_r5l_meta_room(b) < FLUSH_HEADER + 8)
		return -ENOSPC;
	/* one row per FLUSH payload, as md writes them */
	put16(b, off, URAID_R5L_FLUSH);
	put16(b, off + 2, 0);
	put32(b, off + 4, 8);
	put64(b, off + FLUSH_HEADER, member_sector);
	put32(b, OFF_META_SIZE, off + FLUSH_HEADER + 8);
	return 0;
}

void uraid_r5l_meta_seal(void *buf, uint32_t seed)
{
	put32(buf, OFF_CSUM, meta_csum(seed, buf));
}
