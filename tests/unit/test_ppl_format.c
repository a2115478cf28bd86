/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for src/format/ppl.c: md's PPL header at fixed byte offsets
 * (reserved 0xff, signature at 512, generation at 520, count at 528,
 * checksum at 532, entries of 24 bytes from 536), the signature and
 * checksums against md's crc32c, round trips, and corrupt headers (a flipped
 * byte anywhere, wrong signature, counts and sizes out of range) refused
 * with the right error, fuzz style with a fixed seed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "uraid/ppl.h"
#include "../support/format_fixture.h"
#include "../support/check.h"

#define SEED 0x9917a5ee0ddull

static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24); }

static void random_header(uint64_t *rng, struct uraid_ppl_header *h, uint32_t sig)
{
	memset(h, 0, sizeof(*h));
	h->signature = sig;
	h->generation = format_rng_next(rng);
	h->entries_count = (uint32_t)(format_rng_next(rng) % (URAID_PPL_MAX_ENTRIES + 1));
	for (uint32_t i = 0; i < h->entries_count; i++) {
		struct uraid_ppl_entry *e = &h->entries[i];
		uint32_t pp = (uint32_t)(format_rng_next(rng) % 3) * 4096u;   /* 0, 4K, 8K */

		e->data_sector = format_rng_next(rng) >> 8;
		e->pp_size = pp;
		e->data_size = (pp ? pp : 4096u) * (uint32_t)(1 + format_rng_next(rng) % 4);
		e->parity_disk = (uint32_t)(format_rng_next(rng) % 8);
		e->checksum = (uint32_t)format_rng_next(rng);
	}
}

static void test_known_values(void)
{
	/* crc32c check value: ~crc32c(~0, "123456789") = 0xe3069283 */
	CHECK(uraid_ppl_pp_checksum("123456789", 9) == 0xe3069283u, "crc32c check value");
	uint8_t uuid[16];
	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)i;
	CHECK(uraid_ppl_signature(uuid) == ~uraid_ppl_crc32c(~0u, uuid, 16), "signature");
}

static void test_round_trip(uint64_t *rng)
{
	static uint8_t buf[URAID_PPL_HEADER_BYTES];
	static struct uraid_ppl_header a, b;
	char err[200];

	for (int iter = 0; iter < 500; iter++) {
		uint32_t sig = (uint32_t)format_rng_next(rng);

		random_header(rng, &a, sig);
		memset(buf, 0xee, sizeof(buf));
		CHECK(uraid_ppl_encode(&a, buf) == 0, "encode");
		for (unsigned i = 0; i < URAID_PPL_RESERVED_BYTES; i++)
			if (buf[i] != 0xff) {
				CHECK(0, "iter %d reserved byte %u is 0x%02x", iter, i, buf[i]);
				break;
			}
		CHECK(rd32(buf + 512) == sig, "signature at 512");
		CHECK(rd32(buf + 516) == 0, "padding at 516");
		CHECK(rd64(buf + 520) == a.generation, "generation at 520");
		CHECK(rd32(buf + 528) == a.entries_count, "count at 528");
		if (a.entries_count) {
			const uint8_t *e = buf + 536 + (a.entries_count - 1) * 24;
			const struct uraid_ppl_entry *x = &a.entries[a.entries_count - 1];

			CHECK(rd64(e) == x->data_sector && rd32(e + 8) == x->pp_size &&
			      rd32(e + 12) == x->data_size && rd32(e + 16) == x->parity_disk &&
			      rd32(e + 20) == x->checksum, "iter %d last entry's bytes", iter);
		}
		/* md's header checksum: ~crc32c(~0, page with the field 0) */
		uint32_t stored = rd32(buf + 532);
		wr32(buf + 532, 0);
		CHECK(stored == ~uraid_ppl_crc32c(~0u, buf, sizeof(buf)), "header checksum");
		wr32(buf + 532, stored);
		int rc = uraid_ppl_decode(buf, sig, UINT64_MAX, &b, err, sizeof(err));
		CHECK(rc == 0, "iter %d decode: %s", iter, err);
		b.checksum = a.checksum = 0;
		CHECK(!memcmp(&a, &b, sizeof(a)), "iter %d round trip differs", iter);
	}
}

static void test_corrupt(uint64_t *rng)
{
	static uint8_t buf[URAID_PPL_HEADER_BYTES], bad[URAID_PPL_HEADER_BYTES];
	static struct uraid_ppl_header a, b;
	char err[200];
	uint32_t sig = 0x12345678;

	for (int iter = 0; iter < 2000; iter++) {
		random_header(rng, &a, sig);
		uraid_ppl_encode(&a, buf);
		memcpy(bad, buf, sizeof(bad));
		unsigned at = (unsigned)(format_rng_next(rng) % sizeof(bad));
		bad[at] ^= (uint8_t)(1 + format_rng_next(rng) % 255);
		/* any flipped byte breaks the checksum */
		CHECK(uraid_ppl_decode(bad, sig, UINT64_MAX, &b, err, sizeof(err)) == -EBADMSG,
		      "iter %d byte %u flipped: not refused", iter, at);
		CHECK(b.entries_count == 0, "refused header keeps no entries");
	}
	/* another array's header */
	random_header(rng, &a, sig);
	uraid_ppl_encode(&a, buf);
	CHECK(uraid_ppl_decode(buf, sig + 1, UINT64_MAX, &b, err, sizeof(err)) == -ESTALE,
	      "signature");
	CHECK(strstr(err, "signature") != NULL, "message names it: %s", err);
	/* an all-zero area (never written) */
	memset(buf, 0, sizeof(buf));
	CHECK(uraid_ppl_decode(buf, sig, UINT64_MAX, &b, err, sizeof(err)) == -EBADMSG, "zeroes");

	/* fields with a valid checksum but values out of range (a crafted disk) */
	struct { uint32_t count, pp, data; uint64_t room; int want; } cases[] = {
		{ URAID_PPL_MAX_ENTRIES + 1, 4096, 4096, UINT64_MAX, -EINVAL },
		{ 0xffffffffu, 4096, 4096, UINT64_MAX, -EINVAL },
		{ 1, 100, 4096, UINT64_MAX, -EINVAL },          /* not a sector multiple */
		{ 1, 8192, 4096, UINT64_MAX, -EINVAL },         /* pp over data */
		{ 1, 4096, 0, UINT64_MAX, -EINVAL },            /* no data */
		{ 1, 4096, 12288 + 512, UINT64_MAX, -EINVAL },  /* not whole chunks' worth */
		{ 2, 65536, 65536, 65536, -EINVAL },            /* more pp than the room */
		{ 2, 65536, 131072, 131072, 0 },
		{ 1, 0, 4096 * 3, 0, 0 },                       /* full row: no pp */
	};
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		random_header(rng, &a, sig);
		a.entries_count = cases[c].count > URAID_PPL_MAX_ENTRIES ? 1 : cases[c].count;
		for (uint32_t i = 0; i < a.entries_count; i++) {
			a.entries[i].pp_size = cases[c].pp;
			a.entries[i].data_size = cases[c].data;
		}
		uraid_ppl_encode(&a, buf);
		if (cases[c].count > URAID_PPL_MAX_ENTRIES) {
			wr32(buf + 528, cases[c].count);
			wr32(buf + 532, 0);
			wr32(buf + 532, ~uraid_ppl_crc32c(~0u, buf, sizeof(buf)));
		}
		int rc = uraid_ppl_decode(buf, sig, cases[c].room, &b, err, sizeof(err));
		CHECK(rc == cases[c].want, "case %u: %d, want %d (%s)", c, rc, cases[c].want, err);
		if (rc)
			CHECK(b.entries_count == 0 && err[0], "case %u: refused with a message", c);
	}
	/* encode refuses what does not fit */
	a.entries_count = URAID_PPL_MAX_ENTRIES + 1;
	CHECK(uraid_ppl_encode(&a, buf) == -EINVAL, "encode too many");
}

int main(void)
{
	uint64_t rng = SEED;

	printf("test_ppl_format: seed 0x%016llx\n", (unsigned long long)SEED);
	test_known_values();
	test_round_trip(&rng);
	test_corrupt(&rng);
	if (failures) {
		printf("test_ppl_format: %d failure(s), seed 0x%016llx\n", failures,
		       (unsigned long long)SEED);
		return 1;
	}
	printf("test_ppl_format: all passed\n");
	return 0;
}
