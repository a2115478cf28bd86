// SPDX-License-Identifier: MIT
/* fio's --bssplit: "SIZE/PCT:SIZE/PCT...", a missing PCT shares the rest. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "bench/bench.h"
#include "bench/parse.h"

int bench_parse_xfer(const char *s, const char *end, uint32_t *out)
{
	char *e;
	if (s == end || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno || e == s || e > end)
		return -EINVAL;
	if (e < end) {
		switch (tolower((unsigned char)*e)) {
		case 'k': v <<= 10; break;
		case 'm': v <<= 20; break;
		case 'g': v <<= 30; break;
		default: return -EINVAL;
		}
		e++;
		if (e < end && tolower((unsigned char)*e) == 'i')
			e++;
		if (e < end && tolower((unsigned char)*e) == 'b')
			e++;
	}
	if (e != end || v == 0 || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int bench_parse_bssplit(const char *s, struct bench_access *line, unsigned *nlines,
			char *err, size_t errlen)
{
	bool has_pct[BENCH_MAX_LINES];
	unsigned n = 0;
	const char *p = s;

	while (*p) {
		const char *colon = strchr(p, ':');
		const char *end = colon ? colon : p + strlen(p);
		const char *slash = memchr(p, '/', (size_t)(end - p));
		if (n == BENCH_MAX_LINES)
			return uraid_errf(err, errlen, -EINVAL, "--bssplit: at most %d entries",
					  BENCH_MAX_LINES);
		memset(&line[n], 0, sizeof(line[n]));
		if (bench_parse_xfer(p, slash ? slash : end, &line[n].bytes))
			return uraid_errf(err, errlen, -EINVAL, "--bssplit: bad block size in '%.*s'",
					  (int)(end - p), p);
		has_pct[n] = false;
		if (slash && slash + 1 < end) {
			char *e;
			unsigned long v = strtoul(slash + 1, &e, 10);
			if (e != end || v > 100 || !isdigit((unsigned char)slash[1]))
				return uraid_errf(err, errlen, -EINVAL, "--bssplit: bad percentage in "
						  "'%.*s'", (int)(end - p), p);
			line[n].weight = (uint32_t)v;
			has_pct[n] = true;
		}
		n++;
		p = colon ? colon + 1 : end;
	}
	if (!n)
		return uraid_errf(err, errlen, -EINVAL, "--bssplit is empty");
	char why[160];
	int rc = bench_access_finish(line, has_pct, &n, why, sizeof(why));
	if (rc)
		return uraid_errf(err, errlen, rc, "--bssplit: %s", why);
	*nlines = n;
	return 0;
}
