// SPDX-License-Identifier: MIT
/*
 * Write data: fio's --buffer_pattern parses hex (bytes in the order written)
 * and quoted strings, and refuses odd digits, non-hex, bare words and more
 * than BENCH_MAX_PATTERN bytes; buffers are zeroes, the pattern repeated from
 * their start (lengths that do and do not divide the buffer), or random data
 * that does not repeat; a stamped --verify block over a pattern checks clean
 * and keeps the pattern after its header.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench/data.h"
#include "bench/verify.h"
#include "../support/check.h"

static void check_parse(void)
{
	struct bench_workload w;
	char err[200], big[2 * BENCH_MAX_PATTERN + 8];
	unsigned n;

	memset(&w, 0, sizeof(w));
	CHECK(!bench_parse_pattern("0xdeadBEEF", w.pattern, &n, err, sizeof(err)) && n == 4 &&
	      !memcmp(w.pattern, "\xde\xad\xbe\xef", 4), "0xdeadBEEF: %s", err);
	CHECK(!bench_parse_pattern("\"abc\"", w.pattern, &n, err, sizeof(err)) && n == 3 &&
	      !memcmp(w.pattern, "abc", 3), "\"abc\": %s", err);
	CHECK(!bench_parse_pattern("'x y'", w.pattern, &n, err, sizeof(err)) && n == 3 &&
	      !memcmp(w.pattern, "x y", 3), "'x y': %s", err);
	const char *bad[] = { "0x", "0xabc", "0xzz", "abc", "\"\"", "\"abc", "12", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(bench_parse_pattern(bad[i], w.pattern, &n, err, sizeof(err)) == -EINVAL,
		      "'%s' accepted", bad[i]);
	strcpy(big, "0x");
	for (unsigned i = 0; i < BENCH_MAX_PATTERN; i++)
		strcat(big, "5a");
	CHECK(!bench_parse_pattern(big, w.pattern, &n, err, sizeof(err)) && n == BENCH_MAX_PATTERN,
	      "%d bytes: %s", BENCH_MAX_PATTERN, err);
	strcat(big, "5a");
	CHECK(bench_parse_pattern(big, w.pattern, &n, err, sizeof(err)) == -EINVAL,
	      "%d bytes accepted", BENCH_MAX_PATTERN + 1);
}

static void check_fill(void)
{
	static struct bench_workload w;
	static uint8_t buf[65536 + 7];
	char err[200];

	memset(&w, 0, sizeof(w));
	w.data = BENCH_DATA_ZERO;
	memset(buf, 0xff, sizeof(buf));
	bench_fill_data(buf, sizeof(buf), &w, 1);
	size_t nz = 0;
	for (size_t i = 0; i < sizeof(buf); i++)
		nz += buf[i] != 0;
	CHECK(!nz, "zero: %zu bytes not 0", nz);

	const char *pats[] = { "0x5a", "0xdeadbeef", "\"abc\"", "\"0123456789abcdefg\"" };
	for (size_t p = 0; p < sizeof(pats) / sizeof(pats[0]); p++) {
		CHECK(!bench_parse_pattern(pats[p], w.pattern, &w.pattern_len, err, sizeof(err)),
		      "%s: %s", pats[p], err);
		w.data = BENCH_DATA_PATTERN;
		for (size_t len = 1; len <= sizeof(buf); len = len * 3 + 1) {
			memset(buf, 0, sizeof(buf));
			bench_fill_data(buf, len, &w, 1);
			size_t bad = 0;
			for (size_t i = 0; i < len; i++)
				bad += buf[i] != w.pattern[i % w.pattern_len];
			CHECK(!bad && buf[len] == 0, "%s over %zu bytes: %zu wrong (or past the end)",
			      pats[p], len, bad);
		}
	}

	w.data = BENCH_DATA_RANDOM;
	bench_fill_data(buf, 65536, &w, 7);
	uint64_t a, b;
	memcpy(&a, buf, 8);
	size_t same = 0;
	for (size_t i = 8; i + 8 <= 65536; i += 8) {
		memcpy(&b, buf + i, 8);
		same += a == b;
	}
	CHECK(same == 0, "random data repeats its first word %zu times", same);
}

/* --verify over a pattern: the header and crc are right, the pattern follows the header */
static void check_verify(void)
{
	static struct bench_workload w;
	static uint8_t buf[8192];
	uint32_t exp[2] = { 3, 3 };
	uint64_t n = 0;
	char msg[240], err[200];

	memset(&w, 0, sizeof(w));
	CHECK(!bench_parse_pattern("0xc0ffee", w.pattern, &w.pattern_len, err, sizeof(err)),
	      "%s", err);
	w.data = BENCH_DATA_PATTERN;
	bench_fill_data(buf, sizeof(buf), &w, 1);
	bench_verify_stamp(buf, sizeof(buf), 4096, 1 << 20, 3, 42);
	CHECK(!bench_verify_check(buf, sizeof(buf), 4096, 1 << 20, 42, exp, true, &n, msg,
				  sizeof(msg)) && n == 2, "stamped pattern: %s", msg);
	size_t bad = 0;
	for (size_t u = 0; u < sizeof(buf); u += 4096)
		for (size_t i = u + sizeof(struct bench_vhdr); i < u + 4096; i++)
			bad += buf[i] != w.pattern[i % 3];
	CHECK(!bad, "%zu bytes after the headers are not the pattern", bad);
}

int main(void)
{
	check_parse();
	check_fill();
	check_verify();
	return failures ? 1 : 0;
}
