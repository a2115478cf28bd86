/* SPDX-License-Identifier: MIT */
/* Shared between the member source files; not for the engine. */
#ifndef URAID_IO_MEMBER_INTERNAL_H
#define URAID_IO_MEMBER_INTERNAL_H

#include "io/member.h"

/* member_fault_check: in member.h (the reshape job's blocking I/O uses it too) */

/* Is [sector, sector + nsect) (absolute sectors) inside one of the member's
 * metadata areas? (member_wall.c) */
bool member_in_meta(const struct member *m, uint64_t sector, uint64_t nsect);

/* A gathered write's iovecs past the n bytes written (a short transfer):
 * mio->iov and iovcnt advanced, the first one left cut in place. */
void member_iov_advance(struct member_io *mio, size_t n);

#endif
