// SPDX-License-Identifier: MIT
/* The library's read-only zero block (zero_block.h). */
#include <stdint.h>

#include "common/zero_block.h"

static const uint8_t zero_block[URAID_ZERO_BLOCK_BYTES] __attribute__((aligned(4096)));

const void *uraid_zero_block(size_t len)
{
	return len <= URAID_ZERO_BLOCK_BYTES ? zero_block : NULL;
}
