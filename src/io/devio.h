/* SPDX-License-Identifier: MIT */
/* Whole-buffer positional I/O on member file descriptors (retrying short transfers). */
#ifndef URAID_IO_DEVIO_H
#define URAID_IO_DEVIO_H

#include <stddef.h>
#include <stdint.h>

/* 0, -errno, or -EIO on a short read at the end of the device. */
int uraid_pread_full(int fd, void *buf, size_t len, uint64_t off);
int uraid_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif
