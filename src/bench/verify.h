/* SPDX-License-Identifier: MIT */
/*
 * --verify: every written block (a "unit" of the I/O grid, 512 B..4 KiB)
 * starts with a header naming its offset, the write's sequence number and
 * the run's seed, and the header carries the crc32c of the whole unit
 * (computed with the crc field zero). Reads check each unit they bring back
 * against the header and, where this run wrote the unit, against the
 * sequence number of its last write (a lost or misplaced write shows as an
 * old sequence number or a foreign offset).
 */
#ifndef URAID_BENCH_VERIFY_H
#define URAID_BENCH_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_VERIFY_MAGIC    0x42565255u  /* "URVB" little-endian */
#define BENCH_VERIFY_MAX_UNIT 4096u

/* The header at the start of every unit; little-endian on disk. */
struct bench_vhdr {
	uint32_t magic;
	uint32_t crc;               /* crc32c of the unit with this field zero */
	uint64_t offset;            /* byte offset of the unit in its target */
	uint64_t seq;               /* the writer's sequence number (>= 1) */
	uint64_t seed;              /* of the run that wrote it */
	uint32_t unit;              /* bytes the crc covers */
	uint32_t pad;               /* zero */
};
_Static_assert(sizeof(struct bench_vhdr) == 40, "verify header is 40 bytes");

/* Stamp every unit of buf (len a multiple of unit), written at offset. */
void bench_verify_stamp(void *buf, uint32_t len, uint32_t unit, uint64_t offset,
			uint64_t seq, uint64_t seed);

/*
 * Check buf read from offset. expect holds, per unit, the low 32 bits of the
 * sequence number of the last write of this run (0: not written by this
 * run), or is NULL. A unit the run did not write is not checked (earlier
 * runs may have used other units), unless strict: then it must carry a
 * header of this unit size and seed. Returns 0, or -EILSEQ with "offset N: what was expected, what was
 * found" in msg. *checked counts the units checked.
 */
int bench_verify_check(const void *buf, uint32_t len, uint32_t unit, uint64_t offset,
		       uint64_t seed, const uint32_t *expect, bool strict, uint64_t *checked,
		       char *msg, size_t msglen);

/* The crc32c of a unit as the header stores it (crc field taken as zero). */
uint32_t bench_verify_crc(const void *unit_buf, uint32_t unit);

#endif
