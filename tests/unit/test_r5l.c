/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/format/r5l.c, md's write journal meta block: field
 * offsets against <linux/raid/md_p.h>, the checksum seed against a bitwise
 * crc32c, encode/decode round trips, and one corrupt block per rule (each
 * must be refused with a reason).
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/raid/md_p.h>

#include "format/r5l.h"
#include "../support/check.h"

#define SEED 0x6433c509f00dull
#define LOG_SECTORS (1024ull * 8)   /* a 4 MiB ring */

/* Bitwise crc32c (Castagnoli, reflected 0x82f63b78), no final inversion. */
static uint32_t ref_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return crc;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_layout(void)
{
	CHECK(offsetof(struct r5l_meta_block, magic) == 0, "magic");
	CHECK(offsetof(struct r5l_meta_block, checksum) == 4, "checksum");
	CHECK(offsetof(struct r5l_meta_block, version) == 8, "version");
	CHECK(offsetof(struct r5l_meta_block, meta_size) == 12, "meta_size");
	CHECK(offsetof(struct r5l_meta_block, seq) == 16, "seq");
	CHECK(offsetof(struct r5l_meta_block, position) == 24, "position");
	CHECK(sizeof(struct r5l_meta_block) == URAID_R5L_META_HEADER, "header size");
	CHECK(sizeof(struct r5l_payload_data_parity) == 16, "data/parity header");
	CHECK(sizeof(struct r5l_payload_flush) == 8, "flush header");
	CHECK(URAID_R5L_MAGIC == R5LOG_MAGIC && URAID_R5L_VERSION == R5LOG_VERSION, "magic");
	CHECK((int)URAID_R5L_DATA == (int)R5LOG_PAYLOAD_DATA && (int)URAID_R5L_PARITY == (int)R5LOG_PAYLOAD_PARITY &&
	      (int)URAID_R5L_FLUSH == (int)R5LOG_PAYLOAD_FLUSH, "payload types");
}

static void test_checksums(uint64_t *rng)
{
	uint8_t uuid[16], page[URAID_R5L_BLOCK];

	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)rng_next(rng);
	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)rng_next(rng);
	uint32_t seed = uraid_r5l_seed(uuid);
	CHECK(seed == ref_crc32c(~0u, uuid, 16), "seed 0x%08x", seed);
	CHECK(uraid_r5l_page_csum(seed, page) == ref_crc32c(seed, page, sizeof(page)), "page csum");
}

/* A block as md writes one row of a RAID 5 x 4: 3 data pages, parity, a flush. */
static void build_block(uint8_t *b, uint32_t seed, uint64_t seq, uint64_t pos)
{
	uint32_t pc = 0x1234;
	uraid_r5l_meta_init(b, seq, pos);
	CHECK(uraid_r5l_meta_add_data(b, 0, 0xaaaa0000) == 0, "add data 0");
	CHECK(uraid_r5l_meta_add_data(b, 1024, 0xaaaa0001) == 0, "add data 1");
	CHECK(uraid_r5l_meta_add_data(b, 2048, 0xaaaa0002) == 0, "add data 2");
	CHECK(uraid_r5l_meta_add_parity(b, 0, &pc, 1) == 0, "add parity");
	CHECK(uraid_r5l_meta_add_flush(b, 4096) == 0, "add flush");
	uraid_r5l_meta_seal(b, seed);
}

static void test_round_trip(void)
{
	static uint8_t b[URAID_R5L_BLOCK];
	static struct uraid_r5l_meta m;
	char err[200] = "";
	uint32_t seed = 0x5eed;
	uint64_t pos = LOG_SECTORS - 16;   /* pages wrap around the ring's end */

	build_block(b, seed, 77, pos);
	/* the checksum as md computes it: over the block with the field zero */
	uint32_t stored = le32toh(((struct r5l_meta_block *)b)->checksum);
	((struct r5l_meta_block *)b)->checksum = 0;
	CHECK(stored == ref_crc32c(seed, b, sizeof(b)), "meta checksum");
	((struct r5l_meta_block *)b)->checksum = htole32(stored);

	int rc = uraid_r5l_meta_decode(b, seed, pos, 77, LOG_SECTORS, 1, &m, err, sizeof(err));
	CHECK(rc == 0, "decode: %s", err);
	CHECK(m.seq == 77 && m.position == pos, "seq/pos");
	CHECK(m.meta_size == 32 + 3 * 20 + 20 + 16, "meta_size %u", m.meta_size);
	CHECK(m.npayloads == 5 && m.total_pages == 4, "payloads %u pages %u", m.npayloads,
	      m.total_pages);
	CHECK(m.p[0].type == URAID_R5L_DATA && m.p[0].location == 0 && m.p[0].pages == 1 &&
	      m.p[0].checksum[0] == 0xaaaa0000 && m.p[0].log_sector == LOG_SECTORS - 8,
	      "payload 0 at %llu", (unsigned long long)m.p[0].log_sector);
	CHECK(m.p[1].location == 1024 && m.p[1].log_sector == 0, "payload 1 wraps to 0: %llu",
	      (unsigned long long)m.p[1].log_sector);
	CHECK(m.p[2].location == 2048 && m.p[2].log_sector == 8, "payload 2");
	CHECK(m.p[3].type == URAID_R5L_PARITY && m.p[3].checksum[0] == 0x1234 &&
	      m.p[3].log_sector == 16, "parity payload");
	CHECK(m.p[4].type == URAID_R5L_FLUSH && m.p[4].nflush == 1 &&
	      uraid_r5l_flush_sector(b, &m.p[4], 0) == 4096, "flush payload");

	/* RAID 6: parity has two pages */
	uint32_t pq[2] = { 1, 2 };
	uraid_r5l_meta_init(b, 5, 0);
	CHECK(uraid_r5l_meta_add_parity(b, 8, pq, 2) == 0, "pq");
	uraid_r5l_meta_seal(b, seed);
	rc = uraid_r5l_meta_decode(b, seed, 0, 5, LOG_SECTORS, 2, &m, err, sizeof(err));
	CHECK(rc == 0 && m.p[0].pages == 2 && m.p[0].checksum[1] == 2, "raid6 parity: %s", err);
	rc = uraid_r5l_meta_decode(b, seed, 0, 5, LOG_SECTORS, 1, &m, err, sizeof(err));
	CHECK(rc == -EINVAL, "two parity pages on RAID 5 refused");

	/* an empty block (md's checkpoint block) */
	uraid_r5l_meta_init(b, 9, 64);
	uraid_r5l_meta_seal(b, seed);
	rc = uraid_r5l_meta_decode(b, seed, 64, 9, LOG_SECTORS, 1, &m, err, sizeof(err));
	CHECK(rc == 0 && m.npayloads == 0 && m.total_pages == 0, "empty block: %s", err);

	/* room runs out */
	uraid_r5l_meta_init(b, 1, 0);
	unsigned n = 0;
	while (uraid_r5l_meta_add_data(b, 8ull * n, n) == 0)
		n++;
	CHECK(n == (URAID_R5L_BLOCK - 32) / 20, "%u data payloads fit", n);
}

/* Corrupt one thing, re-seal unless the checksum is the thing, expect -EINVAL. */
static void expect_refused(const char *what, void (*corrupt)(uint8_t *), bool reseal,
			   uint64_t pos, uint64_t seq)
{
	static uint8_t b[URAID_R5L_BLOCK];
	static struct uraid_r5l_meta m;
	char err[200] = "";

	build_block(b, 0x5eed, 77, 64);
	corrupt(b);
	if (reseal)
		uraid_r5l_meta_seal(b, 0x5eed);
	int rc = uraid_r5l_meta_decode(b, 0x5eed, pos, seq, LOG_SECTORS, 1, &m, err, sizeof(err));
	CHECK(rc == -EINVAL && err[0], "%s: rc %d", what, rc);
	printf("  refused %-28s %s\n", what, err);
}

static void c_none(uint8_t *b) { (void)b; }
static void c_magic(uint8_t *b) { b[0] ^= 1; }
static void c_version(uint8_t *b) { b[8] = 2; }
static void c_byte(uint8_t *b) { b[40] ^= 0x10; }
static void c_size_big(uint8_t *b) { uint32_t v = htole32(4100); memcpy(b + 12, &v, 4); }
static void c_size_small(uint8_t *b) { uint32_t v = htole32(16); memcpy(b + 12, &v, 4); }
static void c_type(uint8_t *b) { b[32] = 7; }
static void c_data_pages(uint8_t *b) { b[36] = 16; }
static void c_data_part(uint8_t *b) { b[36] = 4; }
static void c_location(uint8_t *b) { b[40] = 3; }
static void c_cut(uint8_t *b) { uint32_t v = htole32(32 + 10); memcpy(b + 12, &v, 4); }
static void c_flush_size(uint8_t *b) { b[32 + 80 + 4] = 12; }   /* flush payload's size */
static void c_flush_long(uint8_t *b) { b[32 + 80 + 4] = 64; }

static void test_corrupt(void)
{
	expect_refused("magic", c_magic, true, 64, 77);
	expect_refused("version", c_version, true, 64, 77);
	expect_refused("checksum", c_byte, false, 64, 77);
	expect_refused("position", c_none, false, 72, 77);
	expect_refused("seq", c_none, false, 64, 78);
	expect_refused("meta_size > 4096", c_size_big, true, 64, 77);
	expect_refused("meta_size < header", c_size_small, true, 64, 77);
	expect_refused("payload type", c_type, true, 64, 77);
	expect_refused("DATA of two pages", c_data_pages, true, 64, 77);
	expect_refused("DATA of half a page", c_data_part, true, 64, 77);
	expect_refused("location not 4 KiB", c_location, true, 64, 77);
	expect_refused("payload cut by meta_size", c_cut, true, 64, 77);
	expect_refused("FLUSH size not 8n", c_flush_size, true, 64, 77);
	expect_refused("FLUSH past meta_size", c_flush_long, true, 64, 77);

	/* a ring too small for the block's pages */
	static uint8_t b[URAID_R5L_BLOCK];
	static struct uraid_r5l_meta m;
	char err[200] = "";
	build_block(b, 1, 1, 0);
	CHECK(uraid_r5l_meta_decode(b, 1, 0, 1, 32, 1, &m, err, sizeof(err)) == -EINVAL,
	      "4 pages in a ring of 4");
	CHECK(uraid_r5l_meta_decode(b, 1, 0, 1, 48, 1, &m, err, sizeof(err)) == 0,
	      "4 pages in a ring of 6: %s", err);
}

/* Random bytes never decode and never crash (the checksum stops them). */
static void test_random(uint64_t *rng)
{
	static uint8_t b[URAID_R5L_BLOCK];
	static struct uraid_r5l_meta m;
	char err[200];
	int accepted = 0;

	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)rng_next(rng);
		accepted += uraid_r5l_meta_decode(b, 1, 0, 0, LOG_SECTORS, 2, &m, err, sizeof(err)) == 0;
		/* a valid header over random payload bytes: bounds must hold */
		uint32_t ms = (uint32_t)(rng_next(rng) % 4200);
		uraid_r5l_meta_init(b, 3, 8);
		uint32_t v = htole32(ms);
		memcpy(b + 12, &v, 4);
		for (size_t i = 32; i < sizeof(b); i++)
			b[i] = (uint8_t)(rng_next(rng) % 4);   /* small types and sizes */
		uraid_r5l_meta_seal(b, 1);
		if (uraid_r5l_meta_decode(b, 1, 8, 3, LOG_SECTORS, 2, &m, err, sizeof(err)) == 0) {
			CHECK(m.meta_size <= URAID_R5L_BLOCK, "meta_size bound");
			for (unsigned i = 0; i < m.npayloads; i++)
				if (m.p[i].type == URAID_R5L_FLUSH)
					CHECK(m.p[i].flush_offset + 8ull * m.p[i].nflush <= m.meta_size,
					      "flush list inside meta_size");
		}
	}
	CHECK(accepted == 0, "%d random blocks accepted", accepted);
}

int main(void)
{
	uint64_t rng = SEED;

	printf("test_r5l: seed 0x%016llx\n", (unsigned long long)SEED);
	test_layout();
	test_checksums(&rng);
	test_round_trip();
	test_corrupt();
	test_random(&rng);
	if (failures) {
		fprintf(stderr, "test_r5l: %d failures (seed 0x%016llx)\n", failures,
			(unsigned long long)SEED);
		return 1;
	}
	printf("test_r5l: ok\n");
	return 0;
}
