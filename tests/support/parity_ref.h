/* SPDX-License-Identifier: MIT */
/*
 * Plain scalar reference for RAID 5/6 parity (md's GF(2^8), polynomial
 * 0x11d, generator 2), written from the definition and sharing no code or
 * tables with src/parity: byte at a time, multiply by shift-and-xor.
 */
#ifndef URAID_TEST_PARITY_REF_H
#define URAID_TEST_PARITY_REF_H

#include <stddef.h>
#include <stdint.h>

uint8_t parity_ref_gf_mul(uint8_t a, uint8_t b);
uint8_t parity_ref_gf_pow2(unsigned j);	/* 2^j by j doublings */
uint8_t parity_ref_gf_inv(uint8_t a);	/* by search; 0 for 0 */

/*
 * P = XOR of data[j], Q = sum over j of 2^j · data[j] (slot j), byte by
 * byte. Either output may be NULL.
 */
void parity_ref_gen(unsigned nslots, size_t len, const uint8_t *const *data, uint8_t *p,
		    uint8_t *q);

#endif
