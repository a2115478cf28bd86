// SPDX-License-Identifier: MIT
/* Whole-buffer pread/pwrite (full_io.h). */
#include <errno.h>
#include <unistd.h>

#include "common/full_io.h"

int uraid_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n, off += (uint64_t)n, len -= (size_t)n;
	}
	return 0;
}

int uraid_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n, off += (uint64_t)n, len -= (size_t)n;
	}
	return 0;
}
