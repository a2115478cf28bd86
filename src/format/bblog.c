/* SPDX-License-Identifier: MIT */
/*
 * md bad-block log (reference/md-format.md §1.11): an array of little-endian
 * u64 entries, start in bits 63..10 and length in bits 9..0, both in units
 * of 2^bblog_shift sectors; the list ends at the first all-ones entry.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "uraid/bitmap.h"

#define BB_LEN_BITS 10
#define BB_LEN_MASK ((1u << BB_LEN_BITS) - 1)
#define BB_END      UINT64_MAX

void uraid_bblog_init(void *buf, size_t len)
{
	memset(buf, 0xff, len);   /* every entry "unused", as the kernel writes */
}

int uraid_bblog_decode(const void *buf, size_t len, unsigned shift,
		       struct uraid_bb *out, unsigned max)
{
	const uint8_t *p = buf;
	size_t i, n = len / 8;
	unsigned count = 0;
	uint64_t e;

	if (shift >= 64)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		memcpy(&e, p + 8 * i, 8);
		e = le64toh(e);
		if (e == BB_END)
			break;
		if ((e & BB_LEN_MASK) == 0)
			return -EINVAL;
		if (count < max) {
			out[count].start = (e >> BB_LEN_BITS) << shift;
			out[count].length = (uint32_t)((e & BB_LEN_MASK) << shift);
		}
		count++;
	}
	return (int)count;
}

/*
 * Returns the little-endian-ready host value (store with htole64). A length
 * of 0 or over 1023 units, or a start beyond 54 bits, cannot be expressed:
 * the result is then the all-ones end marker, so a bad entry can never be
 * written as a wrong but plausible one.
 */
uint64_t uraid_bblog_entry(uint64_t start, uint32_t length, unsigned shift)
{
	uint64_t s, l;

	if (shift >= 32)
		return BB_END;
	s = start >> shift;
	l = (uint64_t)length >> shift;
	if (l == 0 || l > BB_LEN_MASK || s >> (64 - BB_LEN_BITS))
		return BB_END;
	return (s << BB_LEN_BITS) | l;
}
