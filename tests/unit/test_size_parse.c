// SPDX-License-Identifier: MIT
/*
 * common/size_parse: the one parser of sizes the user types (--chunk, --bs,
 * --compare chunk=, --sweep bs=): suffixes B/K/M/G/T with optional "i" and
 * "B", a plain number in the default unit, a prefix that stops where a list
 * goes on, and refusals (no digits, a sign, an unknown suffix, overflow).
 *
 *   test_size_parse
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/size_parse.h"
#include "../support/check.h"

int main(void)
{
	static const struct { const char *s; uint64_t unit, want; } ok[] = {
		{ "4096", 1, 4096 }, { "64", 1024, 65536 }, { "4k", 1, 4096 }, { "4K", 1024, 4096 },
		{ "4KiB", 1, 4096 }, { "4KB", 1, 4096 }, { "4kib", 1, 4096 }, { "1M", 1, 1 << 20 },
		{ "1MiB", 1024, 1 << 20 }, { "2G", 1, 2ull << 30 }, { "1T", 1, 1ull << 40 },
		{ "512B", 1024, 512 }, { "512b", 1024, 512 },
	};
	static const struct { const char *s; uint64_t unit; } bad[] = {
		{ "", 1 }, { "k", 1 }, { "-4k", 1 }, { "+4", 1 }, { " 4", 1 }, { "4q", 1 },
		{ "4kx", 1 }, { "4BB", 1 }, { "18014398509481984k", 1 },
		{ "99999999999999999999", 1 }, { "4,8", 1 },
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 0;
		CHECK(!size_parse(ok[i].s, ok[i].unit, &v) && v == ok[i].want,
		      "'%s' (unit %" PRIu64 "): %" PRIu64, ok[i].s, ok[i].unit, v);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(size_parse(bad[i].s, bad[i].unit, &v) == -EINVAL, "'%s' accepted", bad[i].s);

	/* a prefix: the end is where the list goes on */
	const char *end = NULL;
	CHECK(!size_parse_prefix("4k,64KiB", 1, &v, &end) && v == 4096 && end && !strcmp(end, ",64KiB"),
	      "prefix 4k: %" PRIu64 " '%s'", v, end ? end : "");
	CHECK(!size_parse_prefix("512..1M", 1, &v, &end) && v == 512 && !strcmp(end, "..1M"),
	      "prefix 512: '%s'", end);
	CHECK(!size_parse_prefix("16KiB..", 1, &v, &end) && v == 16384 && !strcmp(end, ".."),
	      "prefix 16KiB: '%s'", end);
	if (failures)
		printf("%d failures\n", failures);
	else
		printf("ok: sizes with and without suffixes, prefixes, refusals\n");
	return failures ? 1 : 0;
}
