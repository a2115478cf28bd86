// SPDX-License-Identifier: MIT
/* Sizes the user types (see size_parse.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "common/size_parse.h"

int size_parse_prefix(const char *s, uint64_t default_unit, uint64_t *bytes, const char **end)
{
	char *e;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno)
		return -EINVAL;
	uint64_t unit = default_unit;
	switch (toupper((unsigned char)*e)) {
	case 'B': unit = 1; break;
	case 'K': unit = 1ull << 10; break;
	case 'M': unit = 1ull << 20; break;
	case 'G': unit = 1ull << 30; break;
	case 'T': unit = 1ull << 40; break;
	default: goto done;     /* no suffix */
	}
	e++;
	/* accept "K", "KiB", "KB" (all binary, as mdadm) */
	if (*e == 'i' || *e == 'I')
		e++;
	if ((*e == 'B' || *e == 'b') && unit != 1)
		e++;
done:
	if (v > UINT64_MAX / unit)
		return -EINVAL;
	*bytes = v * unit;
	*end = e;
	return 0;
}

int size_parse(const char *s, uint64_t default_unit, uint64_t *bytes)
{
	const char *end;
	uint64_t v;

	if (size_parse_prefix(s, default_unit, &v, &end) || *end)
		return -EINVAL;
	*bytes = v;
	return 0;
}
