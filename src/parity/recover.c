/* SPDX-License-Identifier: MIT */
/*
 * Recovery of one or two lost blocks of a RAID 5/6 stripe (md's recov.c
 * cases, reference/md-format.md §4), in one pass over the survivors.
 *
 * Every lost block is a GF(2^8)-linear combination of the surviving blocks,
 * so each case below only works out the coefficients (a 1×k or 2×k matrix)
 * and hands them to ISA-L's ec_encode_data, which reads every survivor once
 * and writes the lost blocks directly: no scratch block, no byte loops.
 * Pure XOR cases go to xor_gen instead, which is cheaper still.
 *
 * Notation: D_j is data slot j (coefficient g^j in Q), m = nslots.
 *   P = sum D_j            Q = sum g^j D_j
 * data a + Q lost:  D_a = P + sum_{j!=a} D_j
 *                   Q   = g^a P + sum_{j!=a} (g^j + g^a) D_j
 * data a + P lost:  D_a = g^-a Q + sum_{j!=a} g^(j-a) D_j
 *                   P   = g^-a Q + sum_{j!=a} (1 + g^(j-a)) D_j
 * data a, b lost:   with s = (g^a + g^b)^-1, sums over j not in {a, b},
 *                   D_a = s (g^b P + Q + sum (g^b + g^j) D_j)
 *                   D_b = s (g^a P + Q + sum (g^a + g^j) D_j)
 *   (This is md's D_b = (g^(b-a)+1)^-1 dP + (g^a+g^b)^-1 dQ, D_a = D_b + dP,
 *   expanded so both come out of the same pass.)
 */
#include <errno.h>
#include <string.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "parity/parity_internal.h"

/* Most sources any case reads: m (every case reads exactly m blocks or fewer). */
#define MAX_SRC URAID_PARITY_MAX_SLOTS

/*
 * out[r] = sum_i coef[r*k + i] * src[i] for r < rows (rows is 1 or 2).
 * ISA-L's expanded tables take 32 bytes per coefficient: at most 16 KiB of
 * stack for 2 × 256.
 */
static int combine(size_t len, unsigned k, void *const *src, unsigned rows,
		   const uint8_t *coef, void *const *out)
{
	uint8_t tbls[2 * MAX_SRC * 32] __attribute__((aligned(64)));
	uint8_t *s[MAX_SRC + 1];
	uint8_t *o[2];
	int all_ones = rows == 1;

	for (unsigned i = 0; all_ones && i < k; i++)
		all_ones = coef[i] == 1;
	if (all_ones && k == 1) {
		memcpy(out[0], src[0], len);
		return 0;
	}
	if (!all_ones)
		ec_init_tables((int)k, (int)rows, (uint8_t *)(uintptr_t)coef, tbls);

	for (size_t off = 0; off < len; off += PARITY_STEP) {
		int step = (int)parity_step(len, off);

		for (unsigned i = 0; i < k; i++)
			s[i] = (uint8_t *)src[i] + off;
		for (unsigned r = 0; r < rows; r++)
			o[r] = (uint8_t *)out[r] + off;
		if (all_ones) {
			/* xor_gen: k sources, destination last. */
			s[k] = o[0];
			if (xor_gen((int)k + 1, step, (void **)s))
				return -EINVAL;
		} else {
			ec_encode_data(step, (int)k, (int)rows, tbls, s, o);
		}
	}
	parity_store_fence();
	return 0;
}

/* One data slot lost, P intact: D_a = P ^ the other data (RAID 5 rebuild). */
static int rebuild_data_from_p(unsigned m, size_t len, void *const *blocks, unsigned a)
{
	void *src[MAX_SRC];
	uint8_t coef[MAX_SRC];
	unsigned k = 0;

	for (unsigned j = 0; j < m; j++)
		if (j != a)
			src[k++] = blocks[j];
	src[k++] = blocks[URAID_PARITY_P(m)];
	memset(coef, 1, k);
	return combine(len, k, src, 1, coef, &blocks[a]);
}

/* Q lost, data intact: Q = sum g^j D_j, written without touching P. */
static int rebuild_q(unsigned m, size_t len, void *const *blocks)
{
	uint8_t coef[MAX_SRC];

	for (unsigned j = 0; j < m; j++)
		coef[j] = uraid_gf_exp2(j);
	return combine(len, m, blocks, 1, coef, &blocks[URAID_PARITY_Q(m)]);
}

static int rebuild_data_and_q(unsigned m, size_t len, void *const *blocks, unsigned a)
{
	void *src[MAX_SRC];
	uint8_t coef[2 * MAX_SRC];
	void *out[2] = { blocks[a], blocks[URAID_PARITY_Q(m)] };
	uint8_t ga = uraid_gf_exp2(a);
	unsigned k = 0;

	for (unsigned j = 0; j < m; j++)
		if (j != a)
			src[k++] = blocks[j];
	src[k++] = blocks[URAID_PARITY_P(m)];
	for (unsigned i = 0, j = 0; j < m; j++) {
		if (j == a)
			continue;
		coef[i] = 1;
		coef[k + i] = uraid_gf_exp2(j) ^ ga;
		i++;
	}
	coef[k - 1] = 1;
	coef[2 * k - 1] = ga;
	return combine(len, k, src, 2, coef, out);
}

static int rebuild_data_and_p(unsigned m, size_t len, void *const *blocks, unsigned a)
{
	void *src[MAX_SRC];
	uint8_t coef[2 * MAX_SRC];
	void *out[2] = { blocks[a], blocks[URAID_PARITY_P(m)] };
	uint8_t inv_ga = uraid_gf_inv(uraid_gf_exp2(a));
	unsigned k = 0;

	for (unsigned j = 0; j < m; j++)
		if (j != a)
			src[k++] = blocks[j];
	src[k++] = blocks[URAID_PARITY_Q(m)];
	for (unsigned i = 0, j = 0; j < m; j++) {
		if (j == a)
			continue;
		uint8_t c = uraid_gf_mul(uraid_gf_exp2(j), inv_ga);

		coef[i] = c;
		coef[k + i] = 1 ^ c;
		i++;
	}
	coef[k - 1] = inv_ga;
	coef[2 * k - 1] = inv_ga;
	return combine(len, k, src, 2, coef, out);
}

static int rebuild_two_data(unsigned m, size_t len, void *const *blocks, unsigned a,
			    unsigned b)
{
	void *src[MAX_SRC];
	uint8_t coef[2 * MAX_SRC];
	void *out[2] = { blocks[a], blocks[b] };
	uint8_t ga = uraid_gf_exp2(a), gb = uraid_gf_exp2(b);
	unsigned k = 0;

	/*
	 * g has order 255: with 256 slots, slots 0 and 255 share coefficient 1
	 * and Q cannot tell them apart, so that one pair is unrecoverable.
	 */
	if (ga == gb)
		return -EINVAL;
	uint8_t s = uraid_gf_inv(ga ^ gb);

	for (unsigned j = 0; j < m; j++)
		if (j != a && j != b)
			src[k++] = blocks[j];
	src[k++] = blocks[URAID_PARITY_P(m)];
	src[k++] = blocks[URAID_PARITY_Q(m)];
	for (unsigned i = 0, j = 0; j < m; j++) {
		if (j == a || j == b)
			continue;
		uint8_t gj = uraid_gf_exp2(j);

		coef[i] = uraid_gf_mul(s, gb ^ gj);
		coef[k + i] = uraid_gf_mul(s, ga ^ gj);
		i++;
	}
	coef[k - 2] = uraid_gf_mul(s, gb);
	coef[k - 1] = s;
	coef[2 * k - 2] = uraid_gf_mul(s, ga);
	coef[2 * k - 1] = s;
	return combine(len, k, src, 2, coef, out);
}

int uraid_parity_recover(unsigned nslots, int has_q, size_t len, void *const *blocks,
			 unsigned nlost, const unsigned *lost)
{
	unsigned m = nslots;
	unsigned nblocks = m + (has_q ? 2 : 1);
	unsigned a, b, p = URAID_PARITY_P(m), q = URAID_PARITY_Q(m);
	int rc = parity_check_args(nslots, len, blocks);

	if (rc)
		return rc;
	for (unsigned i = m; i < nblocks; i++)
		if (!parity_buf_ok(blocks[i]))
			return -EINVAL;
	if (nlost > (has_q ? 2u : 1u) || (nlost && !lost))
		return -EINVAL;
	for (unsigned i = 0; i < nlost; i++)
		if (lost[i] >= nblocks)
			return -EINVAL;
	if (nlost == 0)
		return 0;

	if (nlost == 1) {
		a = lost[0];
		if (a == p)
			return uraid_parity_gen_p(m, len, blocks, blocks[p]);
		if (a == q)
			return rebuild_q(m, len, blocks);
		return rebuild_data_from_p(m, len, blocks, a);
	}

	a = lost[0] < lost[1] ? lost[0] : lost[1];
	b = lost[0] < lost[1] ? lost[1] : lost[0];
	if (a == b)
		return -EINVAL;
	if (a == p)		/* then b == q: both syndromes, data intact */
		return uraid_parity_gen_pq(m, len, blocks, blocks[p], blocks[q]);
	if (b == q)
		return rebuild_data_and_q(m, len, blocks, a);
	if (b == p)
		return rebuild_data_and_p(m, len, blocks, a);
	return rebuild_two_data(m, len, blocks, a, b);
}
