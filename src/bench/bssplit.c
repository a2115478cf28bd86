// SPDX-License-Identifier: MIT
/* fio's --bssplit: "SIZE/PCT:SIZE/PCT...", a missing PCT shares the rest. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "bench/bench.h"

static int parse_bs(const char *s, const char *end, uint32_t *out)
{
	char *e;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno || e == s)
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

int bench_parse_bssplit(const char *s, struct bench_workload *w, char *err, size_t errlen)
{
	unsigned n = 0, given = 0, unweighted = 0;
	bool has_pct[BENCH_MAX_SPLIT];
	const char *p = s;

	while (*p) {
		const char *colon = strchr(p, ':');
		const char *end = colon ? colon : p + strlen(p);
		const char *slash = memchr(p, '/', (size_t)(end - p));
		if (n == BENCH_MAX_SPLIT)
			return uraid_errf(err, errlen, -EINVAL, "--bssplit: at most %d entries",
					  BENCH_MAX_SPLIT);
		if (parse_bs(p, slash ? slash : end, &w->bs[n].bytes))
			return uraid_errf(err, errlen, -EINVAL, "--bssplit: bad block size in '%.*s'",
					  (int)(end - p), p);
		w->bs[n].weight = 0;
		if (slash && slash + 1 < end) {
			char *e;
			unsigned long v = strtoul(slash + 1, &e, 10);
			if (e != end || v > 100)
				return uraid_errf(err, errlen, -EINVAL, "--bssplit: bad percentage in "
						  "'%.*s'", (int)(end - p), p);
			w->bs[n].weight = (uint32_t)v;
			given += (unsigned)v;
			has_pct[n] = true;
		} else {
			has_pct[n] = false;
			unweighted++;
		}
		n++;
		p = colon ? colon + 1 : end;
	}
	if (!n)
		return uraid_errf(err, errlen, -EINVAL, "--bssplit is empty");
	if (given > 100 || (!unweighted && given != 100))
		return uraid_errf(err, errlen, -EINVAL, "--bssplit: percentages add up to %u, not "
				  "100", given);
	/* entries without a percentage share what is left, the first ones taking the rest */
	unsigned left = 100 - given, k = 0;
	for (unsigned i = 0; i < n; i++) {
		if (has_pct[i])
			continue;
		w->bs[i].weight = left / unweighted + (k < left % unweighted ? 1 : 0);
		k++;
	}
	/* a 0 % entry is never chosen: drop it */
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++)
		if (w->bs[i].weight)
			w->bs[m++] = w->bs[i];
	if (!m)
		return uraid_errf(err, errlen, -EINVAL, "--bssplit: every percentage is 0");
	w->nbs = m;
	return 0;
}
