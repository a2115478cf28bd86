/* SPDX-License-Identifier: MIT */
#include "parity_ref.h"

/* Multiply by x: shift left, reduce by x^8 = x^4+x^3+x^2+1 (0x1d). */
static uint8_t parity_ref_gf_mul2(uint8_t a)
{
	return (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1d : 0));
}

uint8_t parity_ref_gf_mul(uint8_t a, uint8_t b)
{
	uint8_t r = 0;

	while (b) {
		if (b & 1)
			r ^= a;
		a = parity_ref_gf_mul2(a);
		b >>= 1;
	}
	return r;
}

uint8_t parity_ref_gf_pow2(unsigned j)
{
	uint8_t r = 1;

	while (j--)
		r = parity_ref_gf_mul2(r);
	return r;
}

uint8_t parity_ref_gf_inv(uint8_t a)
{
	for (unsigned b = 1; b < 256; b++)
		if (parity_ref_gf_mul(a, (uint8_t)b) == 1)
			return (uint8_t)b;
	return 0;
}

void parity_ref_gen(unsigned nslots, size_t len, const uint8_t *const *data, uint8_t *p,
		    uint8_t *q)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t pv = 0, qv = 0, c = 1;	/* c = 2^j */

		for (unsigned j = 0; j < nslots; j++) {
			pv ^= data[j][i];
			qv ^= parity_ref_gf_mul(c, data[j][i]);
			c = parity_ref_gf_mul2(c);
		}
		if (p)
			p[i] = pv;
		if (q)
			q[i] = qv;
	}
}
