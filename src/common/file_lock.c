// SPDX-License-Identifier: MIT
/* flock of a member image file (file_lock.h). */
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/file_lock.h"

/*
 * A process killed a moment ago (kill -9 of a server, then restarted at
 * once) holds its files a little longer: its io_uring is torn down after
 * it has gone, with the I/O it had in flight. So a lock held elsewhere is
 * asked for again for this long before the answer is no.
 */
#define LOCK_WAIT_MS 3000
#define LOCK_POLL_MS 20

int uraid_file_lock(int fd, bool exclusive, const char *path, char *err, size_t errlen)
{
	int rc;

	for (unsigned waited = 0;; waited += LOCK_POLL_MS) {
		rc = flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB);
		if (rc == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK || waited >= LOCK_WAIT_MS)
			break;
		usleep(LOCK_POLL_MS * 1000);
	}
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

bool uraid_same_file(const struct stat *x, const struct stat *y)
{
	if (S_ISBLK(x->st_mode) || S_ISBLK(y->st_mode))
		return S_ISBLK(x->st_mode) && S_ISBLK(y->st_mode) && x->st_rdev == y->st_rdev;
	return x->st_dev == y->st_dev && x->st_ino == y->st_ino;
}
