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
	if (looks_ranged && stat(spec, &st) == 0 && (size_t)(at - spec) < sizeof(r->path)) {
		/* a file named like a range next to the file it would be a range of:
		   either reading could be meant, so neither is taken */
		char base[sizeof(r->path)];
		memcpy(base, spec, (size_t)(at - spec));
		base[at - spec] = '\0';
		if (stat(base, &st) == 0)
			return uraid_errf(err, errlen, -EINVAL, "%s names both a file and a range "
					  "of %s: rename the file", spec, base);
	}
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

/* The same wait as file_lock's: a server killed a moment ago still holds its
 * locks until its io_uring is torn down. */
#define RANGE_LOCK_WAIT_MS 3000
#define RANGE_LOCK_POLL_MS 20

/* An OFD lock on [start, start + len) bytes (len 0: to the end), asked again
 * for a while when held: 0, -EBUSY (held), 0 when the file system has no
 * locks, or another -errno. */
static int ofd_lock(int fd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };

	for (unsigned waited = 0;; waited += RANGE_LOCK_POLL_MS) {
		if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EACCES)
			break;
		if (waited >= RANGE_LOCK_WAIT_MS)
			return -EBUSY;
		usleep(RANGE_LOCK_POLL_MS * 1000);
	}
	/* a file system without locks (some network ones): none, as file_lock does */
	if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL)
		return 0;
	return -errno;
}

int uraid_range_path_lock(int fd, const struct uraid_range_path *r, bool exclusive,
			  char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (rc = uraid_file_lock(fd, false, r->path, err, errlen)) < 0)
		return rc;
	rc = ofd_lock(fd, exclusive ? F_WRLCK : F_RDLCK, (off_t)(r->start * 512),
		      (off_t)(r->sectors * 512));
	if (rc == -EBUSY)
		return uraid_errf(err, errlen, -EBUSY, "%s@%" PRIu64 "+%" PRIu64 " is in use by "
				  "another uraid (a volume served or being created from it)",
				  r->path, r->start, r->sectors);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: range lock: %s", r->path, strerror(-rc));
	return 0;
}

int uraid_block_whole_lock(int fd, const char *path, char *err, size_t errlen)
{
	int rc = ofd_lock(fd, F_WRLCK, 0, 0);
	if (rc == -EBUSY)
		return uraid_errf(err, errlen, -EBUSY, "%s: a range of it is in use by another "
				  "uraid (a volume of a pool served from it)", path);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: lock: %s", path, strerror(-rc));
	return 0;
}
