/* SPDX-License-Identifier: MIT */
/*
 * md write-intent bitmap: header encode/decode/validate, bit counts and
 * mdadm's default chunk size (reference/md-format.md §2.2-§2.4).
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "uraid/bitmap.h"
#include "format/sb_disk.h"
#include "common/errmsg.h"
/* Every refusal here is -EINVAL with its reason. */
#define fail(err, errlen, ...) uraid_errf(err, errlen, -EINVAL, __VA_ARGS__)

#define BITMAP_VERSION_LO        3   /* host-endian bits (legacy) */
#define BITMAP_VERSION_CLUSTERED 5
#define BITMAP_COUNTER_MAX       16383  /* write_behind limit (14-bit counter) */

int uraid_bitmap_decode(const void *buf, struct uraid_bitmap_sb *bm)
{
	const struct bitmap_sb_disk *d = buf;

	memset(bm, 0, sizeof(*bm));
	if (le32toh(d->magic) != URAID_BITMAP_MAGIC)
		return -ENOENT;
	bm->magic = le32toh(d->magic);
	bm->version = le32toh(d->version);
	memcpy(bm->uuid, d->uuid, 16);
	bm->events = le64toh(d->events);
	bm->events_cleared = le64toh(d->events_cleared);
	bm->sync_size = le64toh(d->sync_size);
	bm->state = le32toh(d->state);
	bm->chunksize = le32toh(d->chunksize);
	bm->daemon_sleep = le32toh(d->daemon_sleep);
	bm->write_behind = le32toh(d->write_behind);
	bm->sectors_reserved = le32toh(d->sectors_reserved);
	bm->nodes = le32toh(d->nodes);
	memcpy(bm->cluster_name, d->cluster_name, 64);
	bm->cluster_name[64] = '\0';
	return 0;
}

void uraid_bitmap_encode(const struct uraid_bitmap_sb *bm, void *buf)
{
	struct bitmap_sb_disk *d = buf;

	memset(buf, 0, URAID_BITMAP_HEADER_BYTES);
	d->magic = htole32(bm->magic);
	d->version = htole32(bm->version);
	memcpy(d->uuid, bm->uuid, 16);
	d->events = htole64(bm->events);
	d->events_cleared = htole64(bm->events_cleared);
	d->sync_size = htole64(bm->sync_size);
	d->state = htole32(bm->state);
	d->chunksize = htole32(bm->chunksize);
	d->daemon_sleep = htole32(bm->daemon_sleep);
	d->write_behind = htole32(bm->write_behind);
	d->sectors_reserved = htole32(bm->sectors_reserved);
	d->nodes = htole32(bm->nodes);
	memcpy(d->cluster_name, bm->cluster_name, 64);
}

/* mdadm's spelling: four groups of 4 bytes in byte order, ':' between. */
static void format_uuid(const uint8_t *u, char out[40])
{
	int i, n = 0;

	for (i = 0; i < 16; i++)
		n += sprintf(out + n, "%s%02x", (i && !(i & 3)) ? ":" : "", u[i]);
}

/* The order follows the kernel's bitmap superblock read. */
int uraid_bitmap_validate(const struct uraid_bitmap_sb *bm, const uint8_t *set_uuid,
			  char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (bm->magic != URAID_BITMAP_MAGIC)
		return fail(err, errlen, "bitmap magic 0x%08x found, 0x%08x expected",
			    bm->magic, URAID_BITMAP_MAGIC);
	if (bm->version < BITMAP_VERSION_LO || bm->version > BITMAP_VERSION_CLUSTERED)
		return fail(err, errlen, "bitmap version %u found, %d..%d expected",
			    bm->version, BITMAP_VERSION_LO, BITMAP_VERSION_CLUSTERED);
	if (bm->chunksize < 512)
		return fail(err, errlen, "bitmap chunksize %u bytes is below the minimum 512",
			    bm->chunksize);
	if (bm->chunksize & (bm->chunksize - 1))
		return fail(err, errlen, "bitmap chunksize %u bytes is not a power of two",
			    bm->chunksize);
	if (bm->daemon_sleep == 0)
		return fail(err, errlen, "bitmap daemon_sleep 0 found, >= 1 second expected");
	if (bm->write_behind > BITMAP_COUNTER_MAX)
		return fail(err, errlen, "bitmap write_behind %u exceeds the limit %d",
			    bm->write_behind, BITMAP_COUNTER_MAX);
	if (set_uuid && memcmp(bm->uuid, set_uuid, 16) != 0) {
		char found[40], want[40];
		format_uuid(bm->uuid, found);
		format_uuid(set_uuid, want);
		return fail(err, errlen, "bitmap uuid %s differs from set_uuid %s", found, want);
	}
	return 0;
}

uint64_t uraid_bitmap_bits(uint64_t sync_size, uint32_t chunksize)
{
	unsigned __int128 bytes = (unsigned __int128)sync_size * 512;

	if (chunksize == 0)
		return 0;
	return (uint64_t)((bytes + chunksize - 1) / chunksize);
}

uint64_t uraid_bitmap_bytes(uint64_t sync_size, uint32_t chunksize)
{
	return URAID_BITMAP_HEADER_BYTES + (uraid_bitmap_bits(sync_size, chunksize) + 7) / 8;
}

uint64_t uraid_bitmap_count(const void *area, uint64_t nbits)
{
	const uint8_t *p = (const uint8_t *)area + URAID_BITMAP_HEADER_BYTES;
	uint64_t n = 0, i, full = nbits / 8;
	unsigned rest = (unsigned)(nbits % 8);

	for (i = 0; i < full; i++)
		n += (uint64_t)__builtin_popcount(p[i]);
	if (rest)
		n += (uint64_t)__builtin_popcount(p[full] & ((1u << rest) - 1));
	return n;
}

/*
 * mdadm add_internal_bitmap1 with no chunk requested. Units: room in
 * sectors, sync_size in sectors, chunk in bytes. The 128 KiB cap applies
 * because no chunk was given. mdadm counts one bit more than needed
 * (size*512/chunk + 1), which we keep so the choice matches exactly.
 */
uint32_t uraid_bitmap_min_chunk(uint64_t sync_size, uint64_t room_sectors)
{
	uint64_t max_bits, chunk = 4096;

	if (room_sectors <= 1)
		return 0;       /* mdadm: no room for a bitmap */
	max_bits = (room_sectors * 512 - URAID_BITMAP_HEADER_BYTES) * 8;
	/* Doubling the chunk while the bit count does not fit equals
	 * mdadm's halving of the count: floor((floor(x)+2)/2) = floor(x/2)+1. */
	while ((unsigned __int128)sync_size * 512 / chunk + 1 > max_bits) {
		chunk *= 2;
		if (chunk > (1ull << 31))
			return 0;   /* does not fit the 32-bit chunksize field */
	}
	return (uint32_t)chunk;
}

uint32_t uraid_bitmap_default_chunk(uint64_t sync_size, uint64_t room_sectors)
{
	const uint64_t default_chunk = 64ull << 20;
	/* without a requested chunk mdadm keeps the bitmap within 128 KiB */
	uint32_t chunk = uraid_bitmap_min_chunk(sync_size, room_sectors > 256 ? 256 : room_sectors);

	if (chunk == 0)
		return 0;
	return (uint32_t)(chunk > default_chunk ? chunk : default_chunk);
}

uint64_t uraid_bitmap_disk_sectors(uint64_t sync_size, uint32_t chunksize)
{
	return (uraid_bitmap_bytes(sync_size, chunksize) + 4095) / 4096 * 8;
}
