// SPDX-License-Identifier: MIT
/* Members given as a range of a file or device (range_path.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/file_lock.h"
#include "common/range_path.h"

/* A run of decimal digits at *p as a number (no sign, no overflow); advances *p. */
static bool parse_decimal(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return true;
}

int uraid_range_path_parse(const char *spec, struct uraid_range_path *r, char *err,
			   size_t errlen)
{
	struct stat st;
	const char *at = strrchr(spec, '@');
	uint64_t start, len;

	memset(r, 0, sizeof(*r));
	const char *p = at ? at + 1 : NULL;
	bool looks_ranged = p && parse_decimal(&p, &start) && *p++ == '+' &&
			    parse_decimal(&p, &len) && *p == '\0';
	if (!looks_ranged || stat(spec, &st) == 0) {
		if (strlen(spec) >= sizeof(r->path))
			return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", spec);
		snprintf(r->path, sizeof(r->path), "%s", spec);
		return 0;
	}
	if ((size_t)(at - spec) >= sizeof(r->path))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", spec);
	/* in bytes it must fit an off_t */
	if (len == 0 || len > INT64_MAX / 512 || start > INT64_MAX / 512 - len)
		return uraid_errf(err, errlen, -EINVAL, "%s: a range is PATH@START+LENGTH in "
				  "512-byte sectors, LENGTH at least 1", spec);
	memcpy(r->path, spec, (size_t)(at - spec));
	r->path[at - spec] = '\0';
	r->ranged = true;
	r->start = start;
	r->sectors = len;
	return 0;
}

int uraid_range_path_check(const struct uraid_range_path *r, uint64_t dev_sectors, char *err,
			   size_t errlen)
{
	if (!r->ranged || (r->start <= dev_sectors && r->sectors <= dev_sectors - r->start))
		return 0;
	return uraid_errf(err, errlen, -EINVAL, "%s@%" PRIu64 "+%" PRIu64 ": the range ends past "
			  "the end of %s (%" PRIu64 " sectors)", r->path, r->start, r->sectors,
			  r->path, dev_sectors);
}

int uraid_range_path_lock(int fd, const struct uraid_range_path *r, bool exclusive,
			  char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (rc = uraid_file_lock(fd, false, r->path, err, errlen)) < 0)
		return rc;
	struct flock fl = {
		.l_type = exclusive ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET,
		.l_start = (off_t)(r->start * 512), .l_len = (off_t)(r->sectors * 512),
	};
	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	if (errno == EAGAIN || errno == EACCES)
		return uraid_errf(err, errlen, -EBUSY, "%s@%" PRIu64 "+%" PRIu64 " is in use by "
				  "another uraid (a volume served or being created from it)",
				  r->path, r->start, r->sectors);
	/* a file system without locks (some network ones): none, as file_lock does */
	if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL)
		return 0;
	rc = -errno;
	return uraid_errf(err, errlen, rc, "%s: range lock: %s", r->path, strerror(-rc));
}
