/* SPDX-License-Identifier: MIT */
/*
 * uraid parity: RAID 5 P (XOR) and RAID 6 P+Q (GF(2^8), polynomial 0x11d,
 * generator 2) generation, verification and recovery of one or two lost
 * blocks, computed with ISA-L.
 *
 * Blocks are given in syndrome-slot order (reference/md-format.md §4): slot j
 * has Q coefficient g^j. The geometry (uraid_geom_stripe) says which member
 * is which slot; for DDF layouts the slots of P and Q are passed as zero
 * blocks (uraid_parity_zero_block()).
 *
 * Limits: len is a multiple of 32 bytes and > 0; every buffer is 32-byte
 * aligned (64-byte alignment is faster); 1 <= nslots <= 256. A buffer that is
 * written must not overlap any other; read-only inputs may alias each other
 * (the zero block in several slots). Functions return 0 or -EINVAL for
 * arguments outside those limits.
 *
 * g has order 255, so with 256 slots slot 255 has the same Q coefficient as
 * slot 0 (g^255 = g^0): P and Q are still well defined, but losing both of
 * those two data slots is unrecoverable (uraid_parity_recover says -EINVAL).
 */
#ifndef URAID_PARITY_H
#define URAID_PARITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define URAID_PARITY_ALIGN 32
#define URAID_PARITY_MAX_SLOTS 256

/* P = XOR of data[0..nslots-1]. One slot copies it (2-member RAID 5 mirrors). */
int uraid_parity_gen_p(unsigned nslots, size_t len, void *const *data, void *p);

/* P and Q over data[0..nslots-1] (slot j has coefficient g^j). */
int uraid_parity_gen_pq(unsigned nslots, size_t len, void *const *data,
			void *p, void *q);

/* 0 if P matches the data, 1 if not (a mismatch), -EINVAL on bad arguments. */
int uraid_parity_check_p(unsigned nslots, size_t len, void *const *data,
			 const void *p);
/* 0 if P and Q both match, 1 if either does not, -EINVAL on bad arguments. */
int uraid_parity_check_pq(unsigned nslots, size_t len, void *const *data,
			  const void *p, const void *q);

/*
 * Block indices for recovery: 0..nslots-1 are data slots, then P, then Q.
 */
#define URAID_PARITY_P(nslots) (nslots)
#define URAID_PARITY_Q(nslots) ((nslots) + 1)

/*
 * Rebuild the lost blocks of one stripe in place. blocks has nslots+1
 * entries (RAID 5: data..., P) or nslots+2 (RAID 6: data..., P, Q), all
 * allocated; the lost ones (lost[0..nlost-1], distinct indices) are
 * overwritten with their content, the others are read only.
 * RAID 5 (has_q == 0): nlost <= 1. RAID 6 (has_q != 0): nlost <= 2, any pair:
 * data+data, data+P, data+Q, P+Q; lost may list a pair in either order.
 * nlost == 0 does nothing. A lost block must not be the zero block.
 */
int uraid_parity_recover(unsigned nslots, int has_q, size_t len, void *const *blocks,
			 unsigned nlost, const unsigned *lost);

/* A read-only zero block of at least len bytes, 4096-byte aligned (a source
 * for O_DIRECT writes of zeroes); NULL if len > 1 MiB. */
const void *uraid_parity_zero_block(size_t len);

/* GF(2^8) helpers (exposed for tests and the engine's read-modify-write). */
uint8_t uraid_gf_mul(uint8_t a, uint8_t b);
uint8_t uraid_gf_inv(uint8_t a);      /* 0 has no inverse: returns 0 */
uint8_t uraid_gf_exp2(unsigned j);     /* g^j, g = 2 */

/*
 * Read-modify-write helpers: given old and new content of data slot j,
 * update P (and Q) in place: P ^= old ^ new; Q ^= g^j (old ^ new).
 * slot < URAID_PARITY_MAX_SLOTS; same length and alignment rules as above.
 */
int uraid_parity_update_p(size_t len, const void *old_data, const void *new_data, void *p);
int uraid_parity_update_pq(unsigned slot, size_t len, const void *old_data,
			   const void *new_data, void *p, void *q);

#ifdef __cplusplus
}
#endif
#endif
