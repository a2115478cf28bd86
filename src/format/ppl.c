/* SPDX-License-Identifier: MIT */
/*
 * md's PPL header and entries: encode, decode, checks (uraid/ppl.h has the
 * facts). Every number decoded here came from a disk: it is checked before
 * the caller may use it as a size or an offset.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <isa-l/crc.h>

#include "uraid/ppl.h"
#include "common/errmsg.h"

/* byte offsets in the 4 KiB header */
#define OFF_SIGNATURE   512u
#define OFF_PADDING     516u
#define OFF_GENERATION  520u
#define OFF_COUNT       528u
#define OFF_CHECKSUM    532u
#define OFF_ENTRIES     536u

_Static_assert(OFF_ENTRIES + URAID_PPL_MAX_ENTRIES * URAID_PPL_ENTRY_BYTES <= URAID_PPL_HEADER_BYTES,
	       "entries fit the header");
_Static_assert(OFF_ENTRIES + (URAID_PPL_MAX_ENTRIES + 1) * URAID_PPL_ENTRY_BYTES >
	       URAID_PPL_HEADER_BYTES, "md's PPL_HDR_MAX_ENTRIES");

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

uint32_t uraid_ppl_crc32c(uint32_t seed, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* ISA-L takes an int length: feed it in pieces */
	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;

		seed = crc32_iscsi((unsigned char *)p, (int)n, seed);
		p += n;
		len -= n;
	}
	return seed;
}

uint32_t uraid_ppl_signature(const uint8_t uuid[16])
{
	return ~uraid_ppl_crc32c(~0u, uuid, 16);
}

uint32_t uraid_ppl_pp_checksum(const void *pp, size_t len)
{
	return ~uraid_ppl_crc32c(~0u, pp, len);
}

int uraid_ppl_encode(const struct uraid_ppl_header *h, void *buf)
{
	uint8_t *b = buf;

	if (h->entries_count > URAID_PPL_MAX_ENTRIES)
		return -EINVAL;
	memset(b, 0, URAID_PPL_HEADER_BYTES);
	memset(b, 0xff, URAID_PPL_RESERVED_BYTES);
	put32(b + OFF_SIGNATURE, h->signature);
	put64(b + OFF_GENERATION, h->generation);
	put32(b + OFF_COUNT, h->entries_count);
	for (uint32_t i = 0; i < h->entries_count; i++) {
		uint8_t *e = b + OFF_ENTRIES + i * URAID_PPL_ENTRY_BYTES;

		put64(e, h->entries[i].data_sector);
		put32(e + 8, h->entries[i].pp_size);
		put32(e + 12, h->entries[i].data_size);
		put32(e + 16, h->entries[i].parity_disk);
		put32(e + 20, h->entries[i].checksum);
	}
	/* checksum over the page with its own field zero */
	put32(b + OFF_CHECKSUM, ~uraid_ppl_crc32c(~0u, b, URAID_PPL_HEADER_BYTES));
	return 0;
}

uint64_t uraid_ppl_pp_total(const struct uraid_ppl_header *h)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < h->entries_count && i < URAID_PPL_MAX_ENTRIES; i++)
		t += h->entries[i].pp_size;
	return t;
}

int uraid_ppl_decode(const void *buf, uint32_t signature, uint64_t pp_room,
		     struct uraid_ppl_header *h, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	uint8_t page[URAID_PPL_HEADER_BYTES];
	uint32_t stored, crc;
	uint64_t total = 0;

	if (err && errlen)
		err[0] = '\0';
	memset(h, 0, sizeof(*h));
	memcpy(page, b, sizeof(page));
	stored = get32(page + OFF_CHECKSUM);
	put32(page + OFF_CHECKSUM, 0);
	crc = ~uraid_ppl_crc32c(~0u, page, sizeof(page));
	if (crc != stored)
		return uraid_errf(err, errlen, -EBADMSG,
				  "PPL header checksum 0x%08x, computed 0x%08x", stored, crc);
	h->checksum = stored;
	h->signature = get32(b + OFF_SIGNATURE);
	if (h->signature != signature)
		return uraid_errf(err, errlen, -ESTALE,
				  "PPL header signature 0x%08x, the array's is 0x%08x",
				  h->signature, signature);
	h->generation = get64(b + OFF_GENERATION);
	h->entries_count = get32(b + OFF_COUNT);
	if (h->entries_count > URAID_PPL_MAX_ENTRIES) {
		uint32_t n = h->entries_count;

		h->entries_count = 0;
		return uraid_errf(err, errlen, -EINVAL, "PPL header with %" PRIu32
				  " entries, at most %u fit", n, URAID_PPL_MAX_ENTRIES);
	}
	for (uint32_t i = 0; i < h->entries_count; i++) {
		const uint8_t *p = b + OFF_ENTRIES + i * URAID_PPL_ENTRY_BYTES;
		struct uraid_ppl_entry *e = &h->entries[i];

		e->data_sector = get64(p);
		e->pp_size = get32(p + 8);
		e->data_size = get32(p + 12);
		e->parity_disk = get32(p + 16);
		e->checksum = get32(p + 20);
		if (e->pp_size % 512 || e->data_size % 512 || e->data_size == 0 ||
		    e->pp_size > e->data_size || (e->pp_size && e->data_size % e->pp_size)) {
			h->entries_count = 0;
			return uraid_errf(err, errlen, -EINVAL,
					  "PPL entry %" PRIu32 ": pp_size %" PRIu32 ", data_size %"
					  PRIu32 " (not whole sectors, or not a whole number of "
					  "chunks' worth)", i, e->pp_size, e->data_size);
		}
		total += e->pp_size;
	}
	if (total > pp_room) {
		h->entries_count = 0;
		return uraid_errf(err, errlen, -EINVAL,
				  "PPL entries hold %" PRIu64 " bytes of partial parity, the area "
				  "has room for %" PRIu64, total, pp_room);
	}
	return 0;
}
