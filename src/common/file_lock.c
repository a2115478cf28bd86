// SPDX-License-Identifier: MIT
/* flock of a member image file (file_lock.h). */
#include <errno.h>
#include <string.h>
#include <sys/file.h>

#include "common/errmsg.h"
#include "common/file_lock.h"

int uraid_file_lock(int fd, bool exclusive, const char *path, char *err, size_t errlen)
{
	int rc;

	do {
		rc = flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB);
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return 0;
	if (errno == EWOULDBLOCK)
		return uraid_errf(err, errlen, -EBUSY,
				  "%s is in use by another uraid (an array served from it, or being "
				  "created or benchmarked on it; 'uraid status' lists the served ones)",
				  path);
	/* a file system without flock (some network ones): no lock, as before */
	if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL)
		return 0;
	rc = -errno;
	return uraid_errf(err, errlen, rc, "%s: flock: %s", path, strerror(-rc));
}
