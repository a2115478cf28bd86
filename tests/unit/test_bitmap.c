/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/format bitmap and bad-block log code: header round
 * trip, bit addressing (bit i at byte 256 + i/8, LSB first), bit and byte
 * counts, mdadm's default chunk choice, header validation, bad-block log
 * entries.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uraid/bitmap.h"
#include "format/sb_disk.h"
#include "../support/format_fixture.h"
#include "../support/check.h"

#define SEED 0xb17b17b17ull

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void test_header(uint64_t *rng)
{
	uint8_t buf[512];
	struct uraid_bitmap_sb a, b;
	int iter, i;

	for (iter = 0; iter < 1000; iter++) {
		memset(&a, 0, sizeof(a));
		a.magic = URAID_BITMAP_MAGIC;
		a.version = (uint32_t)format_rng_next(rng);
		for (i = 0; i < 16; i++)
			a.uuid[i] = (uint8_t)format_rng_next(rng);
		a.events = format_rng_next(rng);
		a.events_cleared = format_rng_next(rng);
		a.sync_size = format_rng_next(rng);
		a.state = (uint32_t)format_rng_next(rng);
		a.chunksize = (uint32_t)format_rng_next(rng);
		a.daemon_sleep = (uint32_t)format_rng_next(rng);
		a.write_behind = (uint32_t)format_rng_next(rng);
		a.sectors_reserved = (uint32_t)format_rng_next(rng);
		a.nodes = (uint32_t)format_rng_next(rng);
		int n = (int)(format_rng_next(rng) % 65);
		for (i = 0; i < n; i++)
			a.cluster_name[i] = (char)('a' + format_rng_next(rng) % 26);
		memset(buf, 0xee, sizeof(buf));
		uraid_bitmap_encode(&a, buf);
		CHECK(uraid_bitmap_decode(buf, &b) == 0, "decode");
		CHECK(!memcmp(&a, &b, sizeof(a)), "iter %d round trip differs", iter);
		/* fixed positions, independent of the struct (md-format.md §2.2) */
		CHECK(rd32(buf) == 0x6d746962 && !memcmp(buf, "bitm", 4), "magic bytes");
		CHECK(rd32(buf + 4) == a.version, "version at 4");
		CHECK(!memcmp(buf + 8, a.uuid, 16), "uuid at 8");
		CHECK(rd64(buf + 24) == a.events, "events at 24");
		CHECK(rd64(buf + 32) == a.events_cleared, "events_cleared at 32");
		CHECK(rd64(buf + 40) == a.sync_size, "sync_size at 40");
		CHECK(rd32(buf + 48) == a.state, "state at 48");
		CHECK(rd32(buf + 52) == a.chunksize, "chunksize at 52");
		CHECK(rd32(buf + 56) == a.daemon_sleep, "daemon_sleep at 56");
		CHECK(rd32(buf + 60) == a.write_behind, "write_behind at 60");
		CHECK(rd32(buf + 64) == a.sectors_reserved, "sectors_reserved at 64");
		CHECK(rd32(buf + 68) == a.nodes, "nodes at 68");
		CHECK(!strncmp((char *)buf + 72, a.cluster_name, 64), "cluster_name at 72");
		for (i = 136; i < 256; i++)
			CHECK(buf[i] == 0, "pad byte %d", i);
		CHECK(buf[256] == 0xee, "encode wrote past 256 bytes");
	}
	memset(buf, 0, sizeof(buf));
	CHECK(uraid_bitmap_decode(buf, &b) == -ENOENT, "no magic");
}

static void test_bits(void)
{
	uint8_t area[URAID_BITMAP_HEADER_BYTES + 64];
	uint64_t i;

	memset(area, 0, sizeof(area));
	uraid_bitmap_set(area, 0);
	CHECK(area[256] == 0x01, "bit 0 -> byte 256 LSB: 0x%02x", area[256]);
	uraid_bitmap_set(area, 7);
	CHECK(area[256] == 0x81, "bit 7 -> byte 256 MSB");
	uraid_bitmap_set(area, 9);
	CHECK(area[257] == 0x02, "bit 9 -> byte 257 bit 1");
	uraid_bitmap_set(area, 8 * 63 + 5);
	CHECK(area[256 + 63] == 0x20, "bit 509");
	CHECK(uraid_bitmap_test(area, 9) && !uraid_bitmap_test(area, 10), "test");
	CHECK(uraid_bitmap_count(area, 512) == 4, "count all");
	CHECK(uraid_bitmap_count(area, 8) == 2, "count 8");
	CHECK(uraid_bitmap_count(area, 7) == 1, "count 7 excludes bit 7");
	CHECK(uraid_bitmap_count(area, 10) == 3, "count 10");
	CHECK(uraid_bitmap_count(area, 0) == 0, "count 0");
	uraid_bitmap_clear(area, 7);
	CHECK(area[256] == 0x01 && uraid_bitmap_count(area, 512) == 3, "clear");
	for (i = 0; i < 16; i++)
		CHECK(area[i] == 0, "header untouched");
	/* §2.3 example: 9 chunks, 0xff 0x03 -> 9 dirty; 0xff 0x02 -> 8 dirty */
	area[256] = 0xff; area[257] = 0x03;
	CHECK(uraid_bitmap_count(area, 9) == 9, "9 of 9");
	area[257] = 0x02;
	CHECK(uraid_bitmap_count(area, 9) == 8, "8 of 9");

	CHECK(uraid_bitmap_bit_of(255, 131072) == 0, "bit_of 255");
	CHECK(uraid_bitmap_bit_of(256, 131072) == 1, "bit_of 256");
	CHECK(uraid_bitmap_bit_of(1000, 4096) == 125, "bit_of 1000/8");

	CHECK(uraid_bitmap_bits(129024, 64u << 20) == 1, "bits 63M/64M");
	CHECK(uraid_bitmap_bytes(129024, 64u << 20) == 257, "bytes 63M/64M");
	CHECK(uraid_bitmap_bits(2048, 4096) == 256, "bits exact");
	CHECK(uraid_bitmap_bytes(2048, 4096) == 288, "bytes exact");
	CHECK(uraid_bitmap_bits(2049, 4096) == 257, "bits round up");
	CHECK(uraid_bitmap_bytes(2049, 4096) == 289, "bytes round up");
	CHECK(uraid_bitmap_bits(0, 4096) == 0, "bits 0");
	CHECK(uraid_bitmap_bits(1, 512) == 1, "bits 1 sector");
	/* 16 TiB of sectors with 64 MiB chunks: no 64-bit overflow trouble */
	CHECK(uraid_bitmap_bits(16ull << 31, 64u << 20) == 262144, "bits 16 TiB");
	CHECK(uraid_bitmap_bits(UINT64_MAX / 512 * 512, 1u << 31) == (UINT64_MAX / 512 * 512) / (1u << 22) + 1,
	      "bits huge");
}

static void test_default_chunk(void)
{
	const uint64_t TiB = 1ull << 31;   /* in sectors */
	const uint32_t MiB = 1u << 20;

	/* small arrays: 4 KiB would fit, 64 MiB floor */
	CHECK(uraid_bitmap_default_chunk(129024, 8) == 64 * MiB, "64M member");
	CHECK(uraid_bitmap_default_chunk(0, 8) == 64 * MiB, "empty");
	/* 10 TiB, 128 KiB room: minimum 16 MiB -> 64 MiB */
	CHECK(uraid_bitmap_default_chunk(10 * TiB, 256) == 64 * MiB, "10 TiB");
	/* 100 TiB, 128 KiB room: 64 MiB gives 1638401 bits > 1046528 -> 128 MiB */
	CHECK(uraid_bitmap_default_chunk(100 * TiB, 256) == 128 * MiB, "100 TiB: %u",
	      uraid_bitmap_default_chunk(100 * TiB, 256));
	/* room above 128 KiB is capped when no chunk is given */
	CHECK(uraid_bitmap_default_chunk(100 * TiB, 4096) == 128 * MiB, "room cap");
	/* 4 KiB room (max_bits 30720): 1 TiB -> 64 MiB, 2 TiB -> 128 MiB */
	CHECK(uraid_bitmap_default_chunk(TiB, 8) == 64 * MiB, "1 TiB small room");
	CHECK(uraid_bitmap_default_chunk(2 * TiB, 8) == 128 * MiB, "2 TiB small room");
	/* exact fit: size*512/chunk + 1 == max_bits at 128 MiB */
	CHECK(uraid_bitmap_default_chunk(30719ull * 262144, 8) == 128 * MiB, "exact fit");
	CHECK(uraid_bitmap_default_chunk(30720ull * 262144, 8) == 256 * MiB, "one over");
	/* no room */
	CHECK(uraid_bitmap_default_chunk(TiB, 1) == 0, "room 1");
	CHECK(uraid_bitmap_default_chunk(TiB, 0) == 0, "room 0");
	/* beyond a 32-bit chunk */
	CHECK(uraid_bitmap_default_chunk(UINT64_MAX / 1024, 2) == 0, "overflow");
	/* the result is always a power of two >= 64 MiB */
	for (uint64_t s = 1; s < (1ull << 50); s = s * 3 + 7) {
		uint32_t c = uraid_bitmap_default_chunk(s, 256);
		if (!c)
			continue;
		CHECK(c >= 64 * MiB && !(c & (c - 1)), "size %" PRIu64 " chunk %u", s, c);
		CHECK(s * 512 / c + 1 <= (256 * 512 - 256) * 8, "size %" PRIu64 " fits", s);
	}
}

static void good_bm(struct uraid_bitmap_sb *bm)
{
	memset(bm, 0, sizeof(*bm));
	bm->magic = URAID_BITMAP_MAGIC;
	bm->version = 4;
	memset(bm->uuid, 0xab, 16);
	bm->sync_size = 1 << 20;
	bm->chunksize = 64u << 20;
	bm->daemon_sleep = 5;
}

static void test_validate(void)
{
	uint8_t uuid[16], other[16];
	struct uraid_bitmap_sb bm;
	char err[200];
	int rc;

	memset(uuid, 0xab, 16);
	memset(other, 0xab, 16);
	other[15] = 0;

	good_bm(&bm);
	CHECK(uraid_bitmap_validate(&bm, uuid, err, sizeof(err)) == 0, "good: %s", err);
	CHECK(uraid_bitmap_validate(&bm, NULL, err, sizeof(err)) == 0, "good no uuid: %s", err);
	bm.version = 3;
	CHECK(uraid_bitmap_validate(&bm, uuid, err, sizeof(err)) == 0, "v3: %s", err);
	bm.version = 5;
	CHECK(uraid_bitmap_validate(&bm, uuid, err, sizeof(err)) == 0, "v5: %s", err);
	good_bm(&bm);
	bm.chunksize = 512;
	bm.write_behind = 16383;
	CHECK(uraid_bitmap_validate(&bm, uuid, err, sizeof(err)) == 0, "edges: %s", err);

#define BAD(mut, want) do {                                                  \
	good_bm(&bm);                                                        \
	mut;                                                                 \
	err[0] = '\0';                                                       \
	rc = uraid_bitmap_validate(&bm, uuid, err, sizeof(err));             \
	CHECK(rc == -EINVAL && strstr(err, want), #mut ": rc %d '%s', want '%s'", rc, err, want); \
	printf("  %-28s -> %s\n", #mut, err);                                \
} while (0)
	BAD(bm.magic = 0x12345678, "bitmap magic 0x12345678 found, 0x6d746962 expected");
	BAD(bm.version = 2, "bitmap version 2 found, 3..5 expected");
	BAD(bm.version = 6, "bitmap version 6 found");
	BAD(bm.chunksize = 256, "chunksize 256 bytes is below the minimum 512");
	BAD(bm.chunksize = 0, "chunksize 0 bytes is below");
	BAD(bm.chunksize = 3u << 20, "chunksize 3145728 bytes is not a power of two");
	BAD(bm.daemon_sleep = 0, "daemon_sleep 0 found");
	BAD(bm.write_behind = 16384, "write_behind 16384 exceeds the limit 16383");
	BAD(memcpy(bm.uuid, other, 16), "bitmap uuid abababab:abababab:abababab:ababab00 differs from set_uuid abababab:abababab:abababab:abababab");
	/* order: magic before version */
	BAD((bm.magic = 0, bm.version = 9), "bitmap magic 0x00000000");
#undef BAD
}

static void test_bblog(uint64_t *rng)
{
	uint8_t log[4096];
	struct uraid_bb out[512], small[2];
	uint64_t starts[512], e;
	uint32_t lens[512];
	unsigned i, n, shift, iter;
	int rc;

	uraid_bblog_init(log, sizeof(log));
	for (i = 0; i < sizeof(log); i++)
		CHECK(log[i] == 0xff, "init byte %u", i);
	CHECK(uraid_bblog_decode(log, sizeof(log), 0, out, 512) == 0, "empty log");

	/* known vector: start 1000, 8 sectors -> 1000 << 10 | 8 */
	CHECK(uraid_bblog_entry(1000, 8, 0) == 0xfa008ull, "vector 0x%" PRIx64,
	      uraid_bblog_entry(1000, 8, 0));
	CHECK(uraid_bblog_entry(800, 16, 3) == (100ull << 10 | 2), "vector shift 3");

	for (iter = 0; iter < 200; iter++) {
		shift = (unsigned)(format_rng_next(rng) % 8);
		n = (unsigned)(format_rng_next(rng) % 513);
		uraid_bblog_init(log, sizeof(log));
		for (i = 0; i < n; i++) {
			starts[i] = (format_rng_next(rng) >> (10 + shift)) << shift;
			lens[i] = (uint32_t)(1 + format_rng_next(rng) % 1023) << shift;
			e = htole64(uraid_bblog_entry(starts[i], lens[i], shift));
			CHECK(le64toh(e) != UINT64_MAX, "entry %u representable", i);
			memcpy(log + 8 * i, &e, 8);
		}
		rc = uraid_bblog_decode(log, sizeof(log), shift, out, 512);
		CHECK(rc == (int)n, "iter %u: %d entries, want %u", iter, rc, n);
		for (i = 0; i < n && rc == (int)n; i++)
			CHECK(out[i].start == starts[i] && out[i].length == lens[i],
			      "iter %u entry %u: %" PRIu64 "+%u vs %" PRIu64 "+%u", iter, i,
			      out[i].start, out[i].length, starts[i], lens[i]);
		/* max smaller than the count: count returned, max stored */
		if (n >= 2) {
			rc = uraid_bblog_decode(log, sizeof(log), shift, small, 2);
			CHECK(rc == (int)n && small[1].start == starts[1], "max 2");
		}
	}

	/* list ends at the first all-ones entry */
	uraid_bblog_init(log, sizeof(log));
	e = htole64(uraid_bblog_entry(10, 1, 0));
	memcpy(log, &e, 8);
	memcpy(log + 16, &e, 8);
	CHECK(uraid_bblog_decode(log, sizeof(log), 0, out, 512) == 1, "stops at end marker");
	/* a zero-length entry is corrupt */
	e = htole64(10ull << 10);
	memcpy(log + 8, &e, 8);
	CHECK(uraid_bblog_decode(log, sizeof(log), 0, out, 512) == -EINVAL, "zero length");
	/* partial trailing entry ignored */
	uraid_bblog_init(log, sizeof(log));
	CHECK(uraid_bblog_decode(log, 7, 0, out, 512) == 0, "short buffer");

	/* unrepresentable entries give the end marker */
	CHECK(uraid_bblog_entry(0, 0, 0) == UINT64_MAX, "length 0");
	CHECK(uraid_bblog_entry(0, 1024, 0) == UINT64_MAX, "length 1024");
	CHECK(uraid_bblog_entry(0, 1023, 0) == 1023, "length 1023");
	CHECK(uraid_bblog_entry(0, 7, 3) == UINT64_MAX, "length under one unit");
	CHECK(uraid_bblog_entry(1ull << 54, 1, 0) == UINT64_MAX, "start 2^54");
	CHECK(uraid_bblog_entry((1ull << 54) - 1, 1, 0) == (((1ull << 54) - 1) << 10 | 1), "start max");
	CHECK(uraid_bblog_entry(0, 8, 32) == UINT64_MAX, "shift 32");
}

int main(void)
{
	uint64_t rng = SEED;

	printf("test_bitmap: seed 0x%016llx\n", (unsigned long long)SEED);
	test_header(&rng);
	test_bits();
	test_default_chunk();
	test_validate();
	test_bblog(&rng);
	if (failures) {
		printf("test_bitmap: %d failure(s), seed 0x%016llx\n", failures,
		       (unsigned long long)SEED);
		return 1;
	}
	printf("test_bitmap: all passed\n");
	return 0;
}
