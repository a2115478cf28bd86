/* SPDX-License-Identifier: MIT */
/*
 * One read-only block of zeroes for the whole library: what member I/O
 * writes zeroes from where a file system cannot punch holes, and the P/Q
 * slots of DDF layouts in parity computations (uraid_parity_zero_block()
 * hands out this block). Page-aligned, as an O_DIRECT write source must be.
 */
#ifndef URAID_COMMON_ZERO_BLOCK_H
#define URAID_COMMON_ZERO_BLOCK_H

#include <stddef.h>

#define URAID_ZERO_BLOCK_BYTES ((size_t)1 << 20)

/* The zero block, 4096-byte aligned, if len <= URAID_ZERO_BLOCK_BYTES; else NULL. */
const void *uraid_zero_block(size_t len);

#endif
