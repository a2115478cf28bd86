/* SPDX-License-Identifier: MIT */
/*
 * Keeping two uraid processes off the same image file. A block device is
 * opened with O_EXCL, and the kernel refuses a second holder (as it does
 * for md's members); a regular file has nothing like it, so the open file
 * takes a flock: exclusive for whoever may write (an array served, an
 * array being created, a bench writing), shared for a read-only assembly.
 * A flock belongs to the open file description, so two opens of one file
 * in one process exclude each other too (one engine hosting two arrays).
 * The lock goes with the last close; a killed process holds none.
 */
#ifndef URAID_COMMON_FILE_LOCK_H
#define URAID_COMMON_FILE_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Lock fd (a regular file at path) without waiting: 0, or -EBUSY with the reason in err. */
int uraid_file_lock(int fd, bool exclusive, const char *path, char *err, size_t errlen);

/* The same block device or the same file, whatever the paths (claim it once). */
bool uraid_same_file(const struct stat *x, const struct stat *y);

#endif
