/* SPDX-License-Identifier: MIT */
/* Shared between the member source files; not for the engine. */
#ifndef URAID_IO_MEMBER_INTERNAL_H
#define URAID_IO_MEMBER_INTERNAL_H

#include "io/member.h"

/*
 * The injected fault's verdict on one I/O of `kind` (MEMBER_*) covering
 * sectors [sector, sector + nsect) relative to the data offset: 0 (go ahead),
 * -EIO or -ENODEV. Draws from fault_rng when the fault has a rate.
 * nsect 0 means metadata I/O outside the data area: only VANISH applies.
 */
int member_fault_check(struct member *m, enum member_op kind, uint64_t sector, uint64_t nsect);

/* Is [sector, sector + nsect) (absolute sectors) inside one of the member's
 * metadata areas? (member_wall.c) */
bool member_in_meta(const struct member *m, uint64_t sector, uint64_t nsect);

#endif
