/* SPDX-License-Identifier: MIT */
/* Internal helpers shared by the parity sources (not part of the public API). */
#ifndef URAID_PARITY_INTERNAL_H
#define URAID_PARITY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <uraid/parity.h>

/*
 * ISA-L takes lengths as int. Longer blocks are processed in steps of this
 * many bytes (a multiple of every vector width ISA-L uses).
 */
#define PARITY_STEP ((size_t)1 << 30)

/* Most vectors ISA-L ever sees in one call: 256 data slots + P + Q. */
#define PARITY_MAX_VECTS (URAID_PARITY_MAX_SLOTS + 2)

static inline size_t parity_step(size_t len, size_t off)
{
	return len - off < PARITY_STEP ? len - off : PARITY_STEP;
}

/* len > 0, a multiple of 32, and the buffer 32-byte aligned and non-NULL. */
static inline int parity_len_ok(size_t len)
{
	return len > 0 && len % URAID_PARITY_ALIGN == 0;
}

static inline int parity_buf_ok(const void *p)
{
	return p && (uintptr_t)p % URAID_PARITY_ALIGN == 0;
}

/*
 * Some ISA-L kernels (xor_gen_avx, pq_gen_avx/avx2) write with non-temporal
 * stores, which are weakly ordered on x86: make them globally visible before
 * the caller hands the buffer to another thread or to the kernel (io_uring).
 */
static inline void parity_store_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_sfence();
#endif
}

/* 0 if nslots, len and every data pointer are acceptable, else -EINVAL. */
int parity_check_args(unsigned nslots, size_t len, void *const *data);

#endif
