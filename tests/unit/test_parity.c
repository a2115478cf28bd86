/* SPDX-License-Identifier: MIT */
/*
 * test_parity: src/parity against the scalar reference in
 * tests/support/parity_ref.c.
 *
 * For RAID 5 (2..16 members) and RAID 6 (3..16 members, md-native and
 * DDF-style with zero blocks in the P/Q slots), every length in 32..1024
 * step 32 plus 4096 and 65536: generation equals the reference, check
 * accepts it and rejects single flipped bits, every single and double
 * failure is rebuilt exactly (survivors untouched, no write outside a
 * block), and read-modify-write equals regeneration. GF helpers are
 * compared with the reference over their whole domain.
 *
 * Usage: test_parity [SEED]   (the seed is printed at start and on failure)
 * Exit 0 pass, 1 fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "../support/parity_ref.h"

#define MAX_BLOCKS (URAID_PARITY_MAX_SLOTS + 2)
#define GUARD 64		/* canary bytes before and after each block */
#define CANARY 0xEE

static uint64_t seed;
static uint64_t rng_state;
static unsigned long n_cases, n_failed;

static uint64_t rng_next(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rng_below(unsigned n)
{
	return (unsigned)(rng_next() % n);
}

static void rng_fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rng_next();

		memcpy(buf + i, &v, len - i < 8 ? len - i : 8);
	}
}

#define FAIL(...)                                                                   \
	do {                                                                        \
		n_failed++;                                                         \
		fprintf(stderr, "FAIL (seed %" PRIu64 ") %s:%d: ", seed, __func__, \
			__LINE__);                                                  \
		fprintf(stderr, __VA_ARGS__);                                       \
		fputc('\n', stderr);                                                \
	} while (0)

/*
 * A stripe under test: nblocks buffers of len bytes with canaries around
 * them. Odd blocks sit at 32 mod 64 to exercise the minimum alignment.
 */
struct stripe {
	unsigned nslots;	/* data slots */
	unsigned nblocks;	/* nslots + 1 (P) or + 2 (P, Q) */
	size_t len;
	uint8_t *raw[MAX_BLOCKS];
	uint8_t *blk[MAX_BLOCKS];	/* what the API sees (zero block for DDF P/Q slots) */
	uint8_t *orig[MAX_BLOCKS];	/* expected content of each block */
	int is_zero[MAX_BLOCKS];	/* slot is the shared zero block */
};

static uint8_t *alloc_block(size_t len, unsigned i, uint8_t **raw)
{
	size_t off = GUARD + (i & 1 ? 32 : 0);
	size_t size = (off + len + GUARD + 63) / 64 * 64;	/* aligned_alloc wants a multiple */
	uint8_t *r = aligned_alloc(64, size);

	if (!r) {
		perror("aligned_alloc");
		exit(1);
	}
	memset(r, CANARY, size);
	*raw = r;
	return r + off;
}

static int guards_ok(const struct stripe *s)
{
	for (unsigned i = 0; i < s->nblocks; i++) {
		if (s->is_zero[i])
			continue;
		for (size_t k = 1; k <= GUARD; k++)
			if (s->blk[i][-(ptrdiff_t)k] != CANARY || s->blk[i][s->len + k - 1] != CANARY)
				return 0;
	}
	return 1;
}

/* Data random (zero slots excepted); orig[] = reference P/Q of that data. */
static void stripe_init(struct stripe *s, unsigned nslots, int has_q, size_t len,
			int zero_a, int zero_b)
{
	memset(s, 0, sizeof(*s));
	s->nslots = nslots;
	s->nblocks = nslots + (has_q ? 2 : 1);
	s->len = len;
	for (unsigned i = 0; i < s->nblocks; i++) {
		s->orig[i] = malloc(len);
		if (!s->orig[i]) {
			perror("malloc");
			exit(1);
		}
		if ((int)i == zero_a || (int)i == zero_b) {
			s->is_zero[i] = 1;
			s->blk[i] = (uint8_t *)uraid_parity_zero_block(len);
			memset(s->orig[i], 0, len);
			continue;
		}
		s->blk[i] = alloc_block(len, i, &s->raw[i]);
		if (i < nslots)
			rng_fill(s->orig[i], len);
	}
	parity_ref_gen(nslots, len, (const uint8_t *const *)s->orig, s->orig[nslots],
		       has_q ? s->orig[nslots + 1] : NULL);
}

static void stripe_free(struct stripe *s)
{
	for (unsigned i = 0; i < s->nblocks; i++) {
		free(s->raw[i]);
		free(s->orig[i]);
	}
}

/* Restore every real block to its expected content. */
static void stripe_reset(struct stripe *s)
{
	for (unsigned i = 0; i < s->nblocks; i++)
		if (!s->is_zero[i])
			memcpy(s->blk[i], s->orig[i], s->len);
}

/* Index of the first block that differs from orig, or -1. */
static int stripe_diff(const struct stripe *s)
{
	for (unsigned i = 0; i < s->nblocks; i++)
		if (memcmp(s->blk[i], s->orig[i], s->len))
			return (int)i;
	return -1;
}

static const char *kind(int has_q, int ddf)
{
	return !has_q ? "raid5" : ddf ? "raid6-ddf" : "raid6";
}

/* Generation into garbage-filled P (and Q) must give the reference. */
static void test_gen(struct stripe *s, int has_q, int ddf)
{
	unsigned p = URAID_PARITY_P(s->nslots), q = URAID_PARITY_Q(s->nslots);
	int rc, d;

	stripe_reset(s);
	rng_fill(s->blk[p], s->len);
	if (has_q)
		rng_fill(s->blk[q], s->len);
	n_cases++;
	rc = has_q ? uraid_parity_gen_pq(s->nslots, s->len, (void *const *)s->blk, s->blk[p],
					 s->blk[q])
		   : uraid_parity_gen_p(s->nslots, s->len, (void *const *)s->blk, s->blk[p]);
	d = stripe_diff(s);
	if (rc || d >= 0 || !guards_ok(s))
		FAIL("%s gen nslots=%u len=%zu: rc=%d, first wrong block %d, guards %s",
		     kind(has_q, ddf), s->nslots, s->len, rc, d, guards_ok(s) ? "ok" : "BROKEN");

	n_cases++;
	stripe_reset(s);
	rc = has_q ? uraid_parity_check_pq(s->nslots, s->len, (void *const *)s->blk, s->blk[p],
					   s->blk[q])
		   : uraid_parity_check_p(s->nslots, s->len, (void *const *)s->blk, s->blk[p]);
	if (rc != 0)
		FAIL("%s check of good stripe nslots=%u len=%zu: rc=%d", kind(has_q, ddf),
		     s->nslots, s->len, rc);
}

/* One flipped bit in any real block must make check report a mismatch. */
static void test_check_flip(struct stripe *s, int has_q, int ddf, int exhaustive)
{
	unsigned p = URAID_PARITY_P(s->nslots), q = URAID_PARITY_Q(s->nslots);

	stripe_reset(s);
	for (unsigned b = 0; b < s->nblocks; b++) {
		size_t nbits = exhaustive ? s->len * 8 : 10;

		if (s->is_zero[b])
			continue;
		for (size_t t = 0; t < nbits; t++) {
			size_t byte;
			unsigned bit;
			int rc;

			if (exhaustive) {
				byte = t / 8;
				bit = t % 8;
			} else {
				/* first byte, last byte, then random places; every bit index */
				byte = t == 0 ? 0 : t == 1 ? s->len - 1 : rng_below((unsigned)s->len);
				bit = t < 8 ? (unsigned)t : rng_below(8);
			}
			s->blk[b][byte] ^= (uint8_t)(1u << bit);
			n_cases++;
			rc = has_q ? uraid_parity_check_pq(s->nslots, s->len, (void *const *)s->blk,
							   s->blk[p], s->blk[q])
				   : uraid_parity_check_p(s->nslots, s->len, (void *const *)s->blk,
							  s->blk[p]);
			s->blk[b][byte] ^= (uint8_t)(1u << bit);
			if (rc != 1) {
				FAIL("%s check missed flip nslots=%u len=%zu block=%u byte=%zu bit=%u: rc=%d",
				     kind(has_q, ddf), s->nslots, s->len, b, byte, bit, rc);
				return;
			}
		}
	}
}

/* Rebuild one failure set; blocks other than the lost ones must be untouched. */
static void recover_one(struct stripe *s, int has_q, int ddf, unsigned nlost,
			const unsigned *lost)
{
	int rc, d;

	stripe_reset(s);
	for (unsigned i = 0; i < nlost; i++)
		memset(s->blk[lost[i]], 0xA5 ^ (int)i, s->len);
	n_cases++;
	rc = uraid_parity_recover(s->nslots, has_q, s->len, (void *const *)s->blk, nlost, lost);
	d = stripe_diff(s);
	if (rc || d >= 0 || !guards_ok(s))
		FAIL("%s recover nslots=%u len=%zu lost={%u,%d}: rc=%d, first wrong block %d, guards %s",
		     kind(has_q, ddf), s->nslots, s->len, lost[0], nlost > 1 ? (int)lost[1] : -1,
		     rc, d, guards_ok(s) ? "ok" : "BROKEN");
}

static void test_recover_all(struct stripe *s, int has_q, int ddf)
{
	for (unsigned a = 0; a < s->nblocks; a++) {
		if (s->is_zero[a])
			continue;
		recover_one(s, has_q, ddf, 1, (unsigned[]){ a });
		if (!has_q)
			continue;
		for (unsigned b = a + 1; b < s->nblocks; b++) {
			if (s->is_zero[b])
				continue;
			/* both orders of the lost list */
			recover_one(s, has_q, ddf, 2,
				    (a + b) & 1 ? (unsigned[]){ b, a } : (unsigned[]){ a, b });
		}
	}
}

/* Read-modify-write of one data slot must equal regeneration (and the reference). */
static void test_rmw(struct stripe *s, int has_q, int ddf)
{
	unsigned p = URAID_PARITY_P(s->nslots), q = URAID_PARITY_Q(s->nslots);
	unsigned j;
	uint8_t *newd, *raw;
	int rc, d;

	do
		j = rng_below(s->nslots);
	while (s->is_zero[j]);
	newd = alloc_block(s->len, 0, &raw);
	rng_fill(newd, s->len);
	stripe_reset(s);
	n_cases++;
	rc = has_q ? uraid_parity_update_pq(j, s->len, s->blk[j], newd, s->blk[p], s->blk[q])
		   : uraid_parity_update_p(s->len, s->blk[j], newd, s->blk[p]);
	/* expected: the reference over the new data */
	memcpy(s->orig[j], newd, s->len);
	memcpy(s->blk[j], newd, s->len);
	parity_ref_gen(s->nslots, s->len, (const uint8_t *const *)s->orig, s->orig[p],
		       has_q ? s->orig[q] : NULL);
	d = stripe_diff(s);
	if (rc || d >= 0 || !guards_ok(s))
		FAIL("%s rmw nslots=%u slot=%u len=%zu: rc=%d, first wrong block %d",
		     kind(has_q, ddf), s->nslots, j, s->len, rc, d);
	free(raw);
}

static void test_stripe(unsigned nslots, int has_q, int ddf, size_t len)
{
	struct stripe s;
	int za = -1, zb = -1;

	if (ddf) {
		/* DDF: slot = device; P and Q devices contribute zero blocks. */
		za = (int)rng_below(nslots);
		zb = (za + 1) % (int)nslots;
	}
	stripe_init(&s, nslots, has_q, len, za, zb);
	test_gen(&s, has_q, ddf);
	test_check_flip(&s, has_q, ddf, len <= 96 && nslots <= 8);
	test_recover_all(&s, has_q, ddf);
	test_rmw(&s, has_q, ddf);
	stripe_free(&s);
}

static void test_gf(void)
{
	uint8_t g = 1;

	for (unsigned a = 0; a < 256; a++) {
		for (unsigned b = 0; b < 256; b++) {
			n_cases++;
			if (uraid_gf_mul((uint8_t)a, (uint8_t)b) !=
			    parity_ref_gf_mul((uint8_t)a, (uint8_t)b)) {
				FAIL("gf_mul(%u,%u)", a, b);
				return;
			}
		}
		n_cases++;
		if (uraid_gf_inv((uint8_t)a) != parity_ref_gf_inv((uint8_t)a))
			FAIL("gf_inv(%u) = %u, want %u", a, uraid_gf_inv((uint8_t)a),
			     parity_ref_gf_inv((uint8_t)a));
		if (a && uraid_gf_mul((uint8_t)a, uraid_gf_inv((uint8_t)a)) != 1)
			FAIL("a * inv(a) != 1 for a=%u", a);
	}
	for (unsigned j = 0; j < 600; j++) {
		n_cases++;
		if (uraid_gf_exp2(j) != parity_ref_gf_pow2(j))
			FAIL("gf_exp2(%u) = %u, want %u", j, uraid_gf_exp2(j), parity_ref_gf_pow2(j));
	}
	/* g = 2 has order 255: g^j != 1 for 0 < j < 255, g^255 = 1 */
	for (unsigned j = 1; j <= 255; j++) {
		g = parity_ref_gf_mul(g, 2);
		n_cases++;
		if ((g == 1) != (j == 255))
			FAIL("order of 2: 2^%u = %u", j, g);
	}
	if (parity_ref_gf_pow2(8) != 0x1d)
		FAIL("reference 2^8 != 0x1d");
}

/* Arguments outside the header's limits give -EINVAL and touch nothing. */
static void test_args(void)
{
	struct stripe s;
	void *const *b;
	unsigned two[2] = { 0, 1 }, dup[2] = { 1, 1 }, far[1] = { 6 };

	stripe_init(&s, 4, 1, 64, -1, -1);
	stripe_reset(&s);
	b = (void *const *)s.blk;
#define EXPECT_EINVAL(call)                                      \
	do {                                                     \
		n_cases++;                                       \
		int rc_ = (call);                                \
		if (rc_ != -EINVAL)                              \
			FAIL("%s returned %d, want -EINVAL", #call, rc_); \
	} while (0)
	EXPECT_EINVAL(uraid_parity_gen_pq(4, 0, b, s.blk[4], s.blk[5]));
	EXPECT_EINVAL(uraid_parity_gen_pq(4, 48, b, s.blk[4], s.blk[5]));
	EXPECT_EINVAL(uraid_parity_gen_pq(0, 64, b, s.blk[4], s.blk[5]));
	EXPECT_EINVAL(uraid_parity_gen_pq(URAID_PARITY_MAX_SLOTS + 1, 64, b, s.blk[4], s.blk[5]));
	EXPECT_EINVAL(uraid_parity_gen_pq(4, 64, b, s.blk[4] + 16, s.blk[5]));
	EXPECT_EINVAL(uraid_parity_gen_p(4, 64, b, NULL));
	EXPECT_EINVAL(uraid_parity_check_p(4, 33, b, s.blk[4]));
	EXPECT_EINVAL(uraid_parity_check_pq(4, 64, b, s.blk[4], s.blk[5] + 8));
	EXPECT_EINVAL(uraid_parity_update_p(64, s.blk[0] + 1, s.blk[1], s.blk[4]));
	EXPECT_EINVAL(uraid_parity_update_pq(URAID_PARITY_MAX_SLOTS, 64, s.blk[0], s.blk[1],
					     s.blk[4], s.blk[5]));
	EXPECT_EINVAL(uraid_parity_recover(4, 0, 64, b, 2, two));	/* RAID 5: one loss */
	EXPECT_EINVAL(uraid_parity_recover(4, 1, 64, b, 3, (unsigned[]){ 0, 1, 2 }));
	EXPECT_EINVAL(uraid_parity_recover(4, 1, 64, b, 2, dup));
	EXPECT_EINVAL(uraid_parity_recover(4, 1, 64, b, 1, far));	/* 6 > Q */
	EXPECT_EINVAL(uraid_parity_recover(4, 0, 64, b, 1, (unsigned[]){ 5 }));	/* no Q */
	n_cases++;
	if (stripe_diff(&s) >= 0)
		FAIL("rejected call modified a block");
	n_cases++;
	if (uraid_parity_recover(4, 1, 64, b, 0, NULL) != 0 || stripe_diff(&s) >= 0)
		FAIL("recover with nothing lost");

	n_cases++;
	const uint8_t *z = uraid_parity_zero_block(1 << 20);

	if (!z || (uintptr_t)z % 64 || uraid_parity_zero_block((1 << 20) + 1) != NULL)
		FAIL("zero block: %p", (const void *)z);
	else
		for (size_t i = 0; i < (1 << 20); i++)
			if (z[i]) {
				FAIL("zero block byte %zu = %u", i, z[i]);
				break;
			}
	stripe_free(&s);
}

/*
 * 256 data slots: g^255 = g^0, so Q cannot separate slots 0 and 255; that
 * pair must be refused, every other pair (spot-checked) recovered.
 */
static void test_max_slots(void)
{
	struct stripe s;
	unsigned m = URAID_PARITY_MAX_SLOTS;
	unsigned pairs[][2] = { { 0, 254 }, { 1, 255 }, { 100, 200 }, { 0, 256 }, { 255, 257 },
				{ 256, 257 }, { 7, 256 } };

	stripe_init(&s, m, 1, 64, -1, -1);
	test_gen(&s, 1, 0);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		recover_one(&s, 1, 0, 2, pairs[i]);
	recover_one(&s, 1, 0, 1, (unsigned[]){ 255 });
	stripe_reset(&s);
	n_cases++;
	if (uraid_parity_recover(m, 1, 64, (void *const *)s.blk, 2, (unsigned[]){ 0, 255 }) !=
	    -EINVAL)
		FAIL("recover of slots 0 and 255 of 256 must be refused");
	test_rmw(&s, 1, 0);
	stripe_free(&s);
}

int main(int argc, char **argv)
{
	static const size_t extra_len[] = { 4096, 65536 };
	size_t lens[32 + 2];
	unsigned nlens = 0;

	seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5eed0fa17ULL;
	rng_state = seed;
	printf("test_parity: seed %" PRIu64 "\n", seed);

	for (size_t l = 32; l <= 1024; l += 32)
		lens[nlens++] = l;
	for (size_t i = 0; i < 2; i++)
		lens[nlens++] = extra_len[i];

	test_gf();
	test_args();
	for (unsigned li = 0; li < nlens; li++) {
		/* RAID 5: 2..16 members, nslots = n - 1 (2 members: a mirror) */
		for (unsigned n = 2; n <= 16; n++)
			test_stripe(n - 1, 0, 0, lens[li]);
		/* RAID 6: 4..16 members (nslots = n - 2), and nslots = 1 */
		for (unsigned n = 3; n <= 16; n++)
			test_stripe(n - 2, 1, 0, lens[li]);
		/* DDF-style RAID 6: nslots = n, P and Q slots are zero blocks */
		for (unsigned n = 4; n <= 16; n++)
			test_stripe(n, 1, 1, lens[li]);
	}
	test_max_slots();

	printf("test_parity: %lu cases, %lu failed%s\n", n_cases, n_failed,
	       n_failed ? "" : " - ok");
	if (n_failed)
		printf("test_parity: rerun with: test_parity %" PRIu64 "\n", seed);
	return n_failed ? 1 : 0;
}
