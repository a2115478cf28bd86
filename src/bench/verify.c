// SPDX-License-Identifier: MIT
/* --verify: block headers with crc32c (ISA-L's crc32_iscsi), see verify.h. */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <isa-l/crc.h>

#include "bench/verify.h"

uint32_t bench_verify_crc(const void *unit_buf, uint32_t unit)
{
	static const uint8_t zero[4];
	const uint8_t *p = unit_buf;
	/* the crc field (bytes 4..7) counts as zero: crc over [0,4), 4 zeroes, [8,unit) */
	uint32_t c = crc32_iscsi((unsigned char *)p, 4, 0xffffffffu);
	c = crc32_iscsi((unsigned char *)zero, 4, c);
	return crc32_iscsi((unsigned char *)p + 8, (int)(unit - 8), c);
}

void bench_verify_stamp(void *buf, uint32_t len, uint32_t unit, uint64_t offset,
			uint64_t seq, uint64_t seed)
{
	for (uint32_t o = 0; o < len; o += unit) {
		uint8_t *u = (uint8_t *)buf + o;
		struct bench_vhdr h = {
			.magic = htole32(BENCH_VERIFY_MAGIC),
			.offset = htole64(offset + o),
			.seq = htole64(seq),
			.seed = htole64(seed),
			.unit = htole32(unit),
		};
		memcpy(u, &h, sizeof(h));
		uint32_t crc = htole32(bench_verify_crc(u, unit));
		memcpy(u + 4, &crc, 4);
	}
}

int bench_verify_check(const void *buf, uint32_t len, uint32_t unit, uint64_t offset,
		       uint64_t seed, const uint32_t *expect, bool strict, uint64_t *checked,
		       char *msg, size_t msglen)
{
	for (uint32_t o = 0, i = 0; o < len; o += unit, i++) {
		const uint8_t *u = (const uint8_t *)buf + o;
		uint64_t at = offset + o;
		uint32_t want_seq = expect ? expect[i] : 0;
		struct bench_vhdr h;

		if (!want_seq && !strict)
			continue;       /* not written by this run: nothing known to check */
		memcpy(&h, u, sizeof(h));
		uint32_t magic = le32toh(h.magic);
		if (magic != BENCH_VERIFY_MAGIC) {
			snprintf(msg, msglen, "offset %" PRIu64 ": expected a block header (magic "
				 "0x%08x), found 0x%08x%s", at, BENCH_VERIFY_MAGIC, magic,
				 want_seq ? "" : " (was it written with --verify?)");
			return -EILSEQ;
		}
		if (le32toh(h.unit) != unit) {
			snprintf(msg, msglen, "offset %" PRIu64 ": expected a header of a %u-byte "
				 "block, found one of %u bytes (check with the block sizes that "
				 "wrote it)", at, unit, le32toh(h.unit));
			return -EILSEQ;
		}
		uint32_t stored = le32toh(h.crc), computed = bench_verify_crc(u, unit);
		if (stored != computed) {
			snprintf(msg, msglen, "offset %" PRIu64 ": crc32c of the %u-byte block: "
				 "expected 0x%08x (stored in its header), found 0x%08x", at, unit,
				 stored, computed);
			return -EILSEQ;
		}
		if (le64toh(h.offset) != at) {
			snprintf(msg, msglen, "offset %" PRIu64 ": expected the block written for "
				 "offset %" PRIu64 ", found the one for offset %" PRIu64, at, at,
				 (uint64_t)le64toh(h.offset));
			return -EILSEQ;
		}
		if (le64toh(h.seed) != seed) {
			snprintf(msg, msglen, "offset %" PRIu64 ": expected seed %" PRIu64 ", found "
				 "seed %" PRIu64 " (written by another run)", at, seed,
				 (uint64_t)le64toh(h.seed));
			return -EILSEQ;
		}
		if (want_seq && (uint32_t)le64toh(h.seq) != want_seq) {
			snprintf(msg, msglen, "offset %" PRIu64 ": expected the write with sequence "
				 "number %u, found %" PRIu64 " (a lost or stale write)", at, want_seq,
				 (uint64_t)le64toh(h.seq));
			return -EILSEQ;
		}
		(*checked)++;
	}
	return 0;
}
