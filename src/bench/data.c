// SPDX-License-Identifier: MIT
/* Write data: random, zeroes or fio's --buffer_pattern (see data.h). */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "common/errmsg.h"
#include "bench/data.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int bench_parse_pattern(const char *s, uint8_t *pat, unsigned *len, char *err, size_t errlen)
{
	size_t n = strlen(s);

	*len = 0;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		size_t digits = n - 2;
		if (!digits || digits % 2)
			return uraid_errf(err, errlen, -EINVAL, "--buffer_pattern=%s: an even "
					  "number of hex digits after 0x", s);
		if (digits / 2 > BENCH_MAX_PATTERN)
			return uraid_errf(err, errlen, -EINVAL, "--buffer_pattern: at most %d bytes",
					  BENCH_MAX_PATTERN);
		for (size_t i = 0; i < digits / 2; i++) {
			int hi = hex_digit(s[2 + 2 * i]), lo = hex_digit(s[3 + 2 * i]);
			if (hi < 0 || lo < 0)
				return uraid_errf(err, errlen, -EINVAL, "--buffer_pattern=%s: '%c%c' is "
						  "not a hex byte", s, s[2 + 2 * i], s[3 + 2 * i]);
			pat[i] = (uint8_t)(hi << 4 | lo);
		}
		*len = (unsigned)(digits / 2);
		return 0;
	}
	if (n >= 3 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
		if (n - 2 > BENCH_MAX_PATTERN)
			return uraid_errf(err, errlen, -EINVAL, "--buffer_pattern: at most %d bytes",
					  BENCH_MAX_PATTERN);
		memcpy(pat, s + 1, n - 2);
		*len = (unsigned)(n - 2);
		return 0;
	}
	return uraid_errf(err, errlen, -EINVAL, "--buffer_pattern=%s: want 0x and hex bytes "
			  "(0xdeadbeef) or a quoted string (\"abc\")", s);
}

void bench_fill_data(void *buf, size_t len, const struct bench_workload *w, uint64_t seed)
{
	uint8_t *b = buf;

	if (w->data == BENCH_DATA_ZERO) {
		memset(b, 0, len);
		return;
	}
	if (w->data == BENCH_DATA_PATTERN && w->pattern_len) {
		/* from the buffer's start, as fio: every write starts with the pattern's first byte */
		size_t done = len < w->pattern_len ? len : w->pattern_len;
		memcpy(b, w->pattern, done);
		while (done < len) {            /* doubling copies */
			size_t n = done < len - done ? done : len - done;
			memcpy(b + done, b, n);
			done += n;
		}
		return;
	}
	/* random, incompressible (xorshift64) */
	uint64_t s = seed | 1;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		memcpy(b + i, &s, 8);
	}
	for (; i < len; i++)
		b[i] = (uint8_t)(s >> (8 * (i % 8)));
}
