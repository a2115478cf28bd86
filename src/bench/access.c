// SPDX-License-Identifier: MIT
/*
 * Iometer access specifications as text: one line is
 * "SIZE,READ%,RANDOM%[,ALIGN][/WEIGHT]", e.g. "4k,67,100,4k/60"; several
 * lines (repeated --access options or a file, one per line) make the
 * workload, each I/O first picking a line by weight.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "bench/bench.h"
#include "bench/parse.h"

static int parse_pct(const char *s, const char *end, uint32_t *out)
{
	char *e;
	if (s == end || !isdigit((unsigned char)*s))
		return -EINVAL;
	unsigned long v = strtoul(s, &e, 10);
	if (e != end || v > 100)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int bench_parse_access(const char *s, struct bench_access *line, bool *has_weight,
		       char *err, size_t errlen)
{
	const char *end = s + strlen(s);
	const char *slash = strchr(s, '/');
	const char *fields_end = slash ? slash : end;
	const char *f[4], *fe[4];
	unsigned n = 0;

	memset(line, 0, sizeof(*line));
	for (const char *p = s; n < 4;) {
		const char *comma = memchr(p, ',', (size_t)(fields_end - p));
		f[n] = p;
		fe[n] = comma ? comma : fields_end;
		n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (n < 3 || fe[n - 1] != fields_end)
		return uraid_errf(err, errlen, -EINVAL, "access line '%s': want SIZE,READ%%,"
				  "RANDOM%%[,ALIGN][/WEIGHT]", s);
	if (bench_parse_xfer(f[0], fe[0], &line->bytes) || line->bytes % 512 ||
	    line->bytes > BENCH_MAX_BS)
		return uraid_errf(err, errlen, -EINVAL, "access line '%s': transfer size is not a "
				  "multiple of 512 up to 16M", s);
	if (parse_pct(f[1], fe[1], &line->read_pct) || parse_pct(f[2], fe[2], &line->random_pct))
		return uraid_errf(err, errlen, -EINVAL, "access line '%s': %% read and %% random "
				  "are 0..100", s);
	if (n == 4 && (bench_parse_xfer(f[3], fe[3], &line->align) || line->align % 512))
		return uraid_errf(err, errlen, -EINVAL, "access line '%s': alignment is not a "
				  "multiple of 512", s);
	*has_weight = false;
	if (slash) {
		if (parse_pct(slash + 1, end, &line->weight))
			return uraid_errf(err, errlen, -EINVAL, "access line '%s': weight is a "
					  "percentage 0..100", s);
		*has_weight = true;
	}
	return 0;
}

int bench_load_access_file(const char *path, struct bench_access *line, bool *has_weight,
			   unsigned *nlines, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char buf[256], why[200];
	unsigned lineno = 0, first = *nlines;
	int rc = 0;

	if (!f)
		return uraid_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	while (!rc && fgets(buf, sizeof(buf), f)) {
		lineno++;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		/* strip blanks anywhere: "4k, 67, 100" reads as "4k,67,100" */
		char *o = buf;
		for (char *p = buf; *p; p++)
			if (!isspace((unsigned char)*p))
				*o++ = *p;
		*o = 0;
		if (!*buf)
			continue;
		if (*nlines == BENCH_MAX_LINES)
			rc = uraid_errf(err, errlen, -EINVAL, "%s:%u: at most %d access lines", path,
					lineno, BENCH_MAX_LINES);
		else if (bench_parse_access(buf, &line[*nlines], &has_weight[*nlines], why,
					    sizeof(why)))
			rc = uraid_errf(err, errlen, -EINVAL, "%s:%u: %s", path, lineno, why);
		else
			(*nlines)++;
	}
	if (!rc && ferror(f))
		rc = uraid_errf(err, errlen, -EIO, "%s: read error", path);
	/* an empty file would leave the default workload in place, silently */
	if (!rc && *nlines == first)
		rc = uraid_errf(err, errlen, -EINVAL, "%s: no access line in it", path);
	fclose(f);
	return rc;
}

int bench_access_finish(struct bench_access *line, const bool *has_weight, unsigned *nlines,
			char *err, size_t errlen)
{
	unsigned n = *nlines, given = 0, unweighted = 0;

	for (unsigned i = 0; i < n; i++) {
		if (has_weight[i])
			given += line[i].weight;
		else
			unweighted++;
	}
	if (given > 100 || (!unweighted && given != 100))
		return uraid_errf(err, errlen, -EINVAL, "percentages add up to %u, not 100", given);
	/* lines without a weight share what is left, the first ones taking the rest */
	unsigned left = 100 - given, k = 0;
	for (unsigned i = 0; i < n; i++) {
		if (has_weight[i])
			continue;
		line[i].weight = left / unweighted + (k < left % unweighted ? 1 : 0);
		k++;
	}
	/* a 0 % line is never chosen: drop it */
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++)
		if (line[i].weight)
			line[m++] = line[i];
	if (!m)
		return uraid_errf(err, errlen, -EINVAL, "every percentage is 0");
	*nlines = m;
	return 0;
}
