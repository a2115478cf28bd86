// SPDX-License-Identifier: MIT
/*
 * The stripe cache (md's stripe_cache_size; src/engine/level/raid5_heads.c)
 * through the library's API, on a caller-driven engine so that what is in
 * flight at once is known: every request below is submitted before the
 * reactor runs any member I/O.
 *
 * 1. RAID 5 x 4 and RAID 6 x 5 at the smallest size (17): bursts of 96
 *    disjoint seeded writes (4 KiB to three rows); never more than 17 heads
 *    in use, writers waited and resumed, every write completed, and the
 *    array reads back as the model says.
 * 2. The same at the largest size (32768): no write waits, more than 17
 *    rows in work at once.
 * 3. Resized while writers wait (17 -> 40 -> 17): the waiters resume, the
 *    bound follows the new size (40 while the extra heads drain, then 17),
 *    every head comes back.
 * 4. Refusals: 16 and 32769 at assembly and at run time, nothing changed.
 * 5. RAID 1 keeps the value and ignores it (used false).
 *
 *   test_stripe_cache [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define BURST 96
#define MEMBER_BYTES (8u << 20)
#define CHUNK_KIB 16

struct rig {
	char dir[64];
	char paths[8][96];
	unsigned n;
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *ref;
	uint64_t size;
};

static int rig_create(struct rig *r, const char *level, unsigned n, unsigned chunk_kib)
{
	const char *p[8];

	snprintf(r->dir, sizeof(r->dir), "/tmp/uraid-sc-XXXXXX");
	if (!mkdtemp(r->dir)) {
		perror("mkdtemp");
		return -1;
	}
	r->n = n;
	for (unsigned i = 0; i < n; i++) {
		snprintf(r->paths[i], sizeof(r->paths[i]), "%s/m%u", r->dir, i);
		if (fixture_make_file(r->paths[i], MEMBER_BYTES))
			return -1;
		p[i] = r->paths[i];
	}
	if (fixture_create_array("test_stripe_cache", level, NULL, n, chunk_kib, 2, p))
		return -1;
	struct uraid_engine_opts eo = { .reactors = 1 };
	return uraid_engine_create(&eo, &r->e) ? -1 : 0;
}

static int rig_assemble(struct rig *r, unsigned stripe_cache, char *err, size_t errlen)
{
	const char *p[8];

	for (unsigned i = 0; i < r->n; i++)
		p[i] = r->paths[i];
	struct uraid_assemble_opts ao = { .paths = p, .npaths = r->n, .idle_clean_ms = 20,
					  .stripe_cache = stripe_cache };
	int rc = uraid_array_assemble(r->e, &ao, &r->a, err, errlen);
	if (rc == 0)
		r->size = uraid_array_size(r->a);
	return rc;
}

static void rig_destroy(struct rig *r)
{
	char cmd[128];

	if (r->e)
		uraid_engine_destroy(r->e);
	free(r->ref);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
	if (system(cmd)) {
		/* left behind: harmless */
	}
}

static struct uraid_stripe_cache_status sc(struct rig *r)
{
	struct uraid_stripe_cache_status st;

	uraid_array_stripe_cache(r->a, &st);
	return st;
}

static void poll_until_done(struct rig *r, struct op *ops, unsigned nops, unsigned bound)
{
	for (unsigned spins = 0; spins < 200000; spins++) {
		unsigned left = 0;

		for (unsigned i = 0; i < nops; i++)
			left += !__atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE);
		if (!left)
			return;
		uraid_engine_poll(r->e, 0, 1);
		struct uraid_stripe_cache_status st = sc(r);
		CHECK(st.in_use <= bound, "%u heads in use, the size allows %u", st.in_use, bound);
	}
	CHECK(0, "requests did not complete");
}

/* A burst of BURST disjoint writes, all submitted before any member I/O runs. */
static void burst(struct rig *r, uint64_t *rs, struct op *ops, uint8_t *bufs, unsigned bound)
{
	uint64_t row = (uint64_t)(r->n - (r->n > 4 ? 2 : 1)) * CHUNK_KIB * 1024;
	uint64_t slots = r->size / BURST;        /* each write in its own stretch */

	for (unsigned i = 0; i < BURST; i++) {
		struct op *o = &ops[i];
		uint64_t len = (1 + rng_next(rs) % (3 * row / 4096)) * 4096;

		if (len > slots)
			len = slots & ~4095ull;
		uint64_t off = i * slots + (rng_next(rs) % ((slots - len) / 4096 + 1)) * 4096;
		memset(o, 0, sizeof(*o));
		o->buf = bufs + (size_t)i * 3 * row;
		rng_fill(rs, o->buf, len);
		memcpy(r->ref + off, o->buf, len);
		o->io.op = URAID_IO_WRITE;
		o->io.offset = off;
		o->io.length = len;
		o->io.buf = o->buf;
		o->io.done = op_done;
		o->io.ctx = o;
		CHECK(uraid_array_submit(r->a, 0, &o->io) == 0, "submit");
	}
	poll_until_done(r, ops, BURST, bound);
	for (unsigned i = 0; i < BURST; i++)
		CHECK(ops[i].result == 0, "write %u: %s", i, strerror(-ops[i].result));
}

static void verify(struct rig *r, const char *what)
{
	uint8_t *got = aligned_alloc(4096, r->size);

	CHECK(got && uraid_array_pread(r->a, got, r->size, 0) == 0, "%s: read back", what);
	if (got && memcmp(got, r->ref, r->size)) {
		uint64_t at = 0;
		while (got[at] == r->ref[at])
			at++;
		CHECK(0, "%s: byte %" PRIu64 " differs from what was written", what, at);
	}
	free(got);
}

static void run_level(const char *level, unsigned n, uint64_t seed)
{
	struct rig r = { 0 };
	char err[256];
	uint64_t rs = seed;

	if (rig_create(&r, level, n, CHUNK_KIB)) {
		CHECK(0, "raid%s: set up", level);
		rig_destroy(&r);
		return;
	}
	r.ref = calloc(1, (size_t)n * MEMBER_BYTES);
	struct op *ops = calloc(BURST, sizeof(*ops));
	uint64_t row = (uint64_t)(n - (n > 4 ? 2 : 1)) * CHUNK_KIB * 1024;
	uint8_t *bufs = aligned_alloc(4096, BURST * 3 * row);

	/* 1. the smallest */
	CHECK(rig_assemble(&r, URAID_STRIPE_CACHE_MIN, err, sizeof(err)) == 0, "assemble: %s",
	      err);
	verify(&r, "before");   /* assume-clean arrays of zeroes */
	for (unsigned round = 0; round < 4; round++)
		burst(&r, &rs, ops, bufs, URAID_STRIPE_CACHE_MIN);
	struct uraid_stripe_cache_status st = sc(&r);
	printf("raid%s x%u size %u: peak %u, waits %" PRIu64 ", memory %" PRIu64 " bytes\n",
	       level, n, st.size, st.peak, st.waits, st.memory_bytes);
	CHECK(st.used && st.size == URAID_STRIPE_CACHE_MIN, "raid%s: size %u", level, st.size);
	CHECK(st.peak <= URAID_STRIPE_CACHE_MIN, "raid%s: peak %u over the size", level, st.peak);
	CHECK(st.waits > 0, "raid%s: %u writes in flight and none waited", level, BURST);
	CHECK(st.in_use == 0, "raid%s: %u heads not given back", level, st.in_use);
	CHECK(st.memory_bytes == (uint64_t)URAID_STRIPE_CACHE_MIN * 4096 * n,
	      "raid%s: memory %" PRIu64, level, st.memory_bytes);
	verify(&r, "smallest size");

	/* 3. resized while writers wait */
	rng_fill(&rs, bufs, 4096);
	for (unsigned i = 0; i < BURST; i++) {
		memset(&ops[i], 0, sizeof(ops[i]));
		ops[i].buf = bufs + (size_t)i * 3 * row;
		rng_fill(&rs, ops[i].buf, 4096);
		uint64_t off = (uint64_t)i * (r.size / BURST);
		memcpy(r.ref + off, ops[i].buf, 4096);
		ops[i].io = (struct uraid_io){ .op = URAID_IO_WRITE, .offset = off, .length = 4096,
					       .buf = ops[i].buf, .done = op_done, .ctx = &ops[i] };
		CHECK(uraid_array_submit(r.a, 0, &ops[i].io) == 0, "submit");
	}
	/* past the write gate (the array was marked clean while idle) */
	for (unsigned i = 0; i < 1000 && sc(&r).in_use == 0; i++)
		uraid_engine_poll(r.e, 0, 0);
	st = sc(&r);
	CHECK(st.in_use > 0 && st.in_use <= URAID_STRIPE_CACHE_MIN, "%u heads in use", st.in_use);
	CHECK(uraid_array_set_stripe_cache(r.a, 40) == 0, "grow to 40");
	st = sc(&r);
	CHECK(st.in_use <= 40 && st.size == 40, "grown: %u in use of %u", st.in_use, st.size);
	CHECK(uraid_array_set_stripe_cache(r.a, URAID_STRIPE_CACHE_MIN) == 0, "shrink to 17");
	/* the 40 in use drain to 17 as they come back, never more taken */
	poll_until_done(&r, ops, BURST, 40);
	st = sc(&r);
	CHECK(st.size == URAID_STRIPE_CACHE_MIN && st.in_use == 0 && st.peak <= 40,
	      "after the resize: size %u, in use %u, peak %u", st.size, st.in_use, st.peak);
	burst(&r, &rs, ops, bufs, URAID_STRIPE_CACHE_MIN);
	verify(&r, "after resizing");

	/* 4. refusals change nothing */
	CHECK(uraid_array_set_stripe_cache(r.a, URAID_STRIPE_CACHE_MIN - 1) == -EINVAL, "16");
	CHECK(uraid_array_set_stripe_cache(r.a, URAID_STRIPE_CACHE_MAX + 1) == -EINVAL, "32769");
	/* the memory bound: half of physical memory (not reachable here with
	   a few members; its value is what the man page says) */
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	CHECK(pages > 0 && page > 0 &&
	      uraid_stripe_cache_memory_limit() == (uint64_t)pages * (uint64_t)page / 2,
	      "memory limit %" PRIu64 " is not half of %ld pages of %ld",
	      uraid_stripe_cache_memory_limit(), pages, page);
	CHECK(sc(&r).size == URAID_STRIPE_CACHE_MIN, "size changed by a refusal");
	CHECK(uraid_array_close(r.a) == 0, "close");
	CHECK(rig_assemble(&r, URAID_STRIPE_CACHE_MIN - 1, err, sizeof(err)) == -EINVAL,
	      "assembly with 16");
	CHECK(strstr(err, "17..32768") != NULL, "the refusal names the range: %s", err);

	/* 2. the largest */
	CHECK(rig_assemble(&r, URAID_STRIPE_CACHE_MAX, err, sizeof(err)) == 0, "assemble: %s",
	      err);
	verify(&r, "reassembled");
	for (unsigned round = 0; round < 4; round++)
		burst(&r, &rs, ops, bufs, URAID_STRIPE_CACHE_MAX);
	st = sc(&r);
	printf("raid%s x%u size %u: peak %u, waits %" PRIu64 "\n", level, n, st.size, st.peak,
	       st.waits);
	CHECK(st.waits == 0 && st.peak > URAID_STRIPE_CACHE_MIN,
	      "raid%s largest: waits %" PRIu64 ", peak %u", level, st.waits, st.peak);
	verify(&r, "largest size");
	CHECK(uraid_array_close(r.a) == 0, "close");
	free(ops);
	free(bufs);
	rig_destroy(&r);
}

static void run_mirror(void)
{
	struct rig r = { 0 };
	char err[256];

	if (rig_create(&r, "1", 2, 0)) {
		CHECK(0, "raid1: set up");
		rig_destroy(&r);
		return;
	}
	CHECK(rig_assemble(&r, 1000, err, sizeof(err)) == 0, "raid1: assemble: %s", err);
	struct uraid_stripe_cache_status st = sc(&r);
	CHECK(!st.used && st.size == 1000 && st.memory_bytes == 0,
	      "raid1: used %d size %u memory %" PRIu64, st.used, st.size, st.memory_bytes);
	CHECK(uraid_array_set_stripe_cache(r.a, 17) == 0 && sc(&r).size == 17, "raid1: set");
	CHECK(uraid_array_set_stripe_cache(r.a, 16) == -EINVAL && sc(&r).size == 17,
	      "raid1: refused");
	struct uraid_array_status *as = malloc(sizeof(*as));
	CHECK(as && uraid_array_status(r.a, as) == 0 && !as->stripe_cache.used &&
	      as->stripe_cache.size == 17, "raid1: in the status");
	free(as);
	CHECK(uraid_array_close(r.a) == 0, "close");
	rig_destroy(&r);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;

	printf("test_stripe_cache: seed %" PRIu64 " (rerun: %s %" PRIu64 ")\n", seed, argv[0],
	       seed);
	run_level("5", 4, seed);
	run_level("6", 5, seed + 1);
	run_mirror();
	if (failures) {
		printf("test_stripe_cache: %d failures (seed %" PRIu64 ")\n", failures, seed);
		return 1;
	}
	printf("test_stripe_cache: all passed\n");
	return 0;
}
