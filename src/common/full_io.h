/* SPDX-License-Identifier: MIT */
/*
 * Synchronous pread/pwrite of a whole buffer on any descriptor: the one loop
 * in uraid that continues short transfers and retries EINTR. Used for member
 * metadata (io/member_open.c), by the offline tools (setup/), for the files
 * the bench prepares and for the private files (private_file.c). The data
 * path does not come here: its I/O goes through the reactors (io/member_io.c).
 */
#ifndef URAID_COMMON_FULL_IO_H
#define URAID_COMMON_FULL_IO_H

#include <stddef.h>
#include <stdint.h>

/* 0, -errno, or -EIO when the transfer stops short (the end of the device
 * or file). */
int uraid_pread_full(int fd, void *buf, size_t len, uint64_t off);
int uraid_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);

#endif
