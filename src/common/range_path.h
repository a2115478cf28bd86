/* SPDX-License-Identifier: MIT */
/*
 * A member given as a range of a file or block device: "PATH@START+LENGTH",
 * both in 512-byte sectors. A pool's partition on an image file has no
 * device node without loop devices or partx, so its volumes name their
 * members this way (docs/pools.md). A path that exists as written is taken
 * as the file, whatever its name holds, unless the file it would be a range
 * of exists too: then it is refused (either could be meant).
 */
#ifndef URAID_COMMON_RANGE_PATH_H
#define URAID_COMMON_RANGE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uraid_range_path {
	char path[256];             /* the file or device itself */
	bool ranged;                /* false: the whole of path */
	uint64_t start, sectors;    /* the range, when ranged */
};

/* Split spec into path and range. 0, or -EINVAL / -ENAMETOOLONG with the
 * reason in err (a range of 0 sectors, or one whose end overflows). */
int uraid_range_path_parse(const char *spec, struct uraid_range_path *r, char *err,
			   size_t errlen);

/* Does the range fit in a device of dev_sectors? 0, or -EINVAL + err. */
int uraid_range_path_check(const struct uraid_range_path *r, uint64_t dev_sectors, char *err,
			   size_t errlen);

/*
 * Claim the range of an open file or device: a shared flock on the whole
 * file (a whole-file user, which takes it exclusive, is kept off) and an
 * open-file-description lock on the range's bytes (write lock when
 * exclusive), so that volumes of one pool are served side by side, in one
 * process or several, and one range only once. A lock held is asked for
 * again for 3 s (as file_lock: a server killed a moment ago). 0 or -EBUSY + err.
 */
int uraid_range_path_lock(int fd, const struct uraid_range_path *r, bool exclusive,
			  char *err, size_t errlen);

/*
 * A whole block device opened by uraid (O_EXCL) also takes a write lock on
 * all its bytes: the kernel's claim does not keep off a range of it opened
 * without O_EXCL, the range lock does. 0 or -EBUSY + err.
 */
int uraid_block_whole_lock(int fd, const char *path, char *err, size_t errlen);

#endif
