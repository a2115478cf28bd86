/* SPDX-License-Identifier: MIT */
/*
 * RAID 5 P and RAID 6 P+Q: generation, verification and read-modify-write
 * updates over blocks in syndrome-slot order, computed with ISA-L.
 *
 * ISA-L's pq_gen/pq_check evaluate Q Horner-style from the last source down
 * to source 0 (q = q*g ^ src[j]), so source j gets coefficient g^j, exactly
 * md's slot order (lib/raid6 gen_syndrome does the same): the data pointers
 * are passed through in slot order, not reversed. test_parity checks this
 * against a scalar reference.
 *
 * What ISA-L does not cover is handled here: one data slot (xor_gen needs
 * two sources, pq_gen/pq_check need two data vectors), lengths beyond int,
 * and in-place updates of P and Q.
 */
#include <errno.h>
#include <string.h>

#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>

#include "common/zero_block.h"
#include "parity/parity_internal.h"

/* Read-only zeros for the P/Q positions of DDF layouts (see parity.h): the
 * library's one zero block, which member I/O also writes zeroes from. */
const void *uraid_parity_zero_block(size_t len)
{
	return uraid_zero_block(len);
}

int parity_check_args(unsigned nslots, size_t len, void *const *data)
{
	if (nslots < 1 || nslots > URAID_PARITY_MAX_SLOTS || !parity_len_ok(len) || !data)
		return -EINVAL;
	for (unsigned j = 0; j < nslots; j++)
		if (!parity_buf_ok(data[j]))
			return -EINVAL;
	return 0;
}

/* v[0..nslots-1] = data[j] + off: the ISA-L pointer array for one step. */
static void set_sources(void **v, unsigned nslots, void *const *data, size_t off)
{
	for (unsigned j = 0; j < nslots; j++)
		v[j] = (uint8_t *)data[j] + off;
}

int uraid_parity_gen_p(unsigned nslots, size_t len, void *const *data, void *p)
{
	void *v[PARITY_MAX_VECTS];
	int rc = parity_check_args(nslots, len, data);

	if (rc)
		return rc;
	if (!parity_buf_ok(p))
		return -EINVAL;
	if (nslots == 1) {
		/* 2-member RAID 5: P is a copy of the only data block. */
		memcpy(p, data[0], len);
		return 0;
	}
	for (size_t off = 0; off < len; off += PARITY_STEP) {
		set_sources(v, nslots, data, off);
		v[nslots] = (uint8_t *)p + off;
		if (xor_gen((int)nslots + 1, (int)parity_step(len, off), v))
			return -EINVAL;
	}
	parity_store_fence();
	return 0;
}

int uraid_parity_gen_pq(unsigned nslots, size_t len, void *const *data, void *p, void *q)
{
	void *v[PARITY_MAX_VECTS];
	int rc = parity_check_args(nslots, len, data);

	if (rc)
		return rc;
	if (!parity_buf_ok(p) || !parity_buf_ok(q))
		return -EINVAL;
	if (nslots == 1) {
		/* P = D0 and Q = g^0 * D0 = D0. */
		memcpy(p, data[0], len);
		memcpy(q, data[0], len);
		return 0;
	}
	for (size_t off = 0; off < len; off += PARITY_STEP) {
		set_sources(v, nslots, data, off);
		v[nslots] = (uint8_t *)p + off;
		v[nslots + 1] = (uint8_t *)q + off;
		if (pq_gen((int)nslots + 2, (int)parity_step(len, off), v))
			return -EINVAL;
	}
	parity_store_fence();
	return 0;
}

int uraid_parity_check_p(unsigned nslots, size_t len, void *const *data, const void *p)
{
	void *v[PARITY_MAX_VECTS];
	int rc = parity_check_args(nslots, len, data);

	if (rc)
		return rc;
	if (!parity_buf_ok(p))
		return -EINVAL;
	if (nslots == 1)
		return memcmp(p, data[0], len) != 0;
	for (size_t off = 0; off < len; off += PARITY_STEP) {
		set_sources(v, nslots, data, off);
		/* xor_check only reads; it wants every vector XORing to zero. */
		v[nslots] = (uint8_t *)(uintptr_t)p + off;
		if (xor_check((int)nslots + 1, (int)parity_step(len, off), v))
			return 1;
	}
	return 0;
}

int uraid_parity_check_pq(unsigned nslots, size_t len, void *const *data, const void *p,
			  const void *q)
{
	void *v[PARITY_MAX_VECTS];
	int rc = parity_check_args(nslots, len, data);

	if (rc)
		return rc;
	if (!parity_buf_ok(p) || !parity_buf_ok(q))
		return -EINVAL;
	if (nslots == 1)
		return memcmp(p, data[0], len) != 0 || memcmp(q, data[0], len) != 0;
	for (size_t off = 0; off < len; off += PARITY_STEP) {
		set_sources(v, nslots, data, off);
		v[nslots] = (uint8_t *)(uintptr_t)p + off;
		v[nslots + 1] = (uint8_t *)(uintptr_t)q + off;
		/* Arguments were checked above, so non-zero means a mismatch. */
		if (pq_check((int)nslots + 2, (int)parity_step(len, off), v))
			return 1;
	}
	return 0;
}

int uraid_parity_update_p(size_t len, const void *old_data, const void *new_data, void *p)
{
	void *v[4];

	if (!parity_len_ok(len) || !parity_buf_ok(old_data) || !parity_buf_ok(new_data) ||
	    !parity_buf_ok(p))
		return -EINVAL;
	for (size_t off = 0; off < len; off += PARITY_STEP) {
		/*
		 * P' = old ^ new ^ P, written over P. Every ISA-L xor kernel
		 * reads all sources at a position before storing the result
		 * there, so the destination may be one of the sources.
		 */
		v[0] = (uint8_t *)(uintptr_t)old_data + off;
		v[1] = (uint8_t *)(uintptr_t)new_data + off;
		v[2] = (uint8_t *)p + off;
		v[3] = (uint8_t *)p + off;
		if (xor_gen(4, (int)parity_step(len, off), v))
			return -EINVAL;
	}
	parity_store_fence();
	return 0;
}

int uraid_parity_update_pq(unsigned slot, size_t len, const void *old_data,
			   const void *new_data, void *p, void *q)
{
	/* Coefficients of one source for two outputs: P (1) and Q (g^slot). */
	uint8_t coef[2] = { 1, uraid_gf_exp2(slot) };
	uint8_t tbls[2 * 32];
	uint8_t *out[2];

	if (slot >= URAID_PARITY_MAX_SLOTS || !parity_len_ok(len) || !parity_buf_ok(old_data) ||
	    !parity_buf_ok(new_data) || !parity_buf_ok(p) || !parity_buf_ok(q))
		return -EINVAL;
	ec_init_tables(1, 2, coef, tbls);
	/*
	 * The update is linear: P ^= old ^ new and Q ^= g^j·old ^ g^j·new.
	 * Two multiply-accumulate passes (old, then new) update P and Q
	 * together without a scratch buffer for old ^ new.
	 */
	for (size_t off = 0; off < len; off += PARITY_STEP) {
		int step = (int)parity_step(len, off);

		out[0] = (uint8_t *)p + off;
		out[1] = (uint8_t *)q + off;
		ec_encode_data_update(step, 1, 2, 0, tbls, (uint8_t *)(uintptr_t)old_data + off,
				      out);
		ec_encode_data_update(step, 1, 2, 0, tbls, (uint8_t *)(uintptr_t)new_data + off,
				      out);
	}
	parity_store_fence();
	return 0;
}
