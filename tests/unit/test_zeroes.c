// SPDX-License-Identifier: MIT
/*
 * WRITE_ZEROES on every level: the range reads back zeroes and nothing
 * around it changes. Where the members' file system punches holes, the
 * members lose blocks (holes, no data written); where it cannot (the
 * member's no_punch, as member_submit notes it after an EOPNOTSUPP, set
 * here by hand: tmpfs punches), the zeroes are written instead and no
 * block is freed. uraid_array_zeroes_fast (what NBD's FAST_ZERO asks)
 * answers true only where holes alone do the work: whole rows on RAID
 * 4/5/6, any range elsewhere, never once a member cannot punch, nor before
 * a file system not known to punch has punched once.
 *
 *   test_zeroes [SEED]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "engine/core/array.h"       /* a member's no_punch */
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 4
#define CHUNK_KIB 64u
#define MEMBER_MIB 8u

struct config {
	const char *level;
	unsigned n;
	unsigned data_disks;            /* 0: not a parity level */
};

struct t {
	const struct config *c;
	char paths[MAXM][96];
	struct uraid_array *a;
	uint8_t *ref;
	uint64_t size;
};

/* Blocks (512 B) allocated to the members' files. */
static uint64_t member_blocks(const struct t *t)
{
	uint64_t sum = 0;
	struct stat st;

	for (unsigned i = 0; i < t->c->n; i++)
		if (stat(t->paths[i], &st) == 0)
			sum += (uint64_t)st.st_blocks;
	return sum;
}

static void check_data(struct t *t, const char *when)
{
	uint8_t *buf = malloc(t->size);

	CHECK(buf && uraid_array_pread(t->a, buf, t->size, 0) == 0, "raid%s: read %s",
	      t->c->level, when);
	for (uint64_t at = 0; buf && at < t->size; at += 512) {
		if (memcmp(buf + at, t->ref + at, 512)) {
			CHECK(0, "raid%s %s: the array differs from what it should hold at %" PRIu64,
			      t->c->level, when, at);
			break;
		}
	}
	free(buf);
}

/* Zero [off, off + len) through the array and in the reference; blocks freed. */
static int64_t zero(struct t *t, uint64_t off, uint64_t len)
{
	uint64_t before = member_blocks(t);

	CHECK(uraid_array_write_zeroes(t->a, off, len) == 0, "raid%s: write_zeroes %" PRIu64
	      " +%" PRIu64, t->c->level, off, len);
	memset(t->ref + off, 0, len);
	return (int64_t)before - (int64_t)member_blocks(t);
}

static void run(const struct config *c, uint64_t seed)
{
	struct t t = { .c = c };
	const char *devs[MAXM];
	char dir[64], err[256];
	struct uraid_engine *e = NULL;
	uint64_t rs = seed;

	/* on a disk file system (O_DIRECT: the zeroes written must be aligned) */
	snprintf(dir, sizeof(dir), "/tmp/uraid-zeroes.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < c->n; i++) {
		snprintf(t.paths[i], sizeof(t.paths[i]), "%s/m%u.img", dir, i);
		devs[i] = t.paths[i];
		if (fixture_make_file(t.paths[i], (uint64_t)MEMBER_MIB * MIB))
			goto out;
	}
	struct uraid_engine_opts eo = { .reactors = 1 };
	if (fixture_create_array(c->level, c->level, NULL, c->n,
				 strcmp(c->level, "1") ? CHUNK_KIB : 0, 2, devs) ||
	    uraid_engine_create(&eo, &e)) {
		CHECK(0, "raid%s: setup", c->level);
		goto out;
	}
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = c->n };
	if (uraid_array_assemble(e, &ao, &t.a, err, sizeof(err)) != 0) {
		CHECK(0, "raid%s: assemble: %s", c->level, err);
		goto out;
	}
	t.size = uraid_array_size(t.a);
	t.ref = malloc(t.size);
	rng_fill(&rs, t.ref, t.size);
	CHECK(uraid_array_pwrite(t.a, t.ref, t.size, 0, 0) == 0, "raid%s: fill", c->level);

	/* a range of whole rows (RAID 4/5/6) or a misaligned one (the others) */
	uint64_t row = (uint64_t)(c->data_disks ? c->data_disks : 1) * CHUNK_KIB * 1024;
	uint64_t off = c->data_disks ? 2 * row : 2 * row + 4096, len = c->data_disks ? 2 * row
										   : 300 * 1024;
	CHECK(uraid_array_zeroes_fast(t.a, off, len), "raid%s: zeroing %" PRIu64 " +%" PRIu64
	      " is not taken as fast", c->level, off, len);
	if (c->data_disks)
		CHECK(!uraid_array_zeroes_fast(t.a, off + 4096, row),
		      "raid%s: a partial row is taken as fast to zero", c->level);
	int64_t freed = zero(&t, off, len);
	CHECK(freed > 0, "raid%s: zeroing freed %" PRId64 " blocks of the members (holes "
	      "expected)", c->level, freed);
	/* and a partial range (RAID 4/5/6: read-modify-write of its rows) */
	zero(&t, 5 * row + 8192, 64 * 1024);
	check_data(&t, "after zeroing with holes");

	/* a file system not known to punch: FAST_ZERO may not count on it, until
	   a punch has gone through */
	struct array *a = (struct array *)t.a;
	for (unsigned s = 0; s < c->n; s++)
		if (a->slot[s].m)
			atomic_store(&a->slot[s].m->punches, false);
	CHECK(!uraid_array_zeroes_fast(t.a, off, len), "raid%s: fast to zero on a file system "
	      "not known to punch", c->level);
	freed = zero(&t, 0, t.size);        /* every member punched */
	CHECK(freed > 0 && uraid_array_zeroes_fast(t.a, off, len), "raid%s: a punch that went "
	      "through (%" PRId64 " blocks freed) does not count", c->level, freed);
	rng_fill(&rs, t.ref, t.size);
	CHECK(uraid_array_pwrite(t.a, t.ref, t.size, 0, 0) == 0, "raid%s: fill again", c->level);

	/* members whose file system cannot punch: zeroes written, nothing freed */
	for (unsigned s = 0; s < c->n; s++)
		if (a->slot[s].m)
			atomic_store(&a->slot[s].m->no_punch, true);
	CHECK(!uraid_array_zeroes_fast(t.a, off, len), "raid%s: fast to zero without holes",
	      c->level);
	off = 8 * row + 4096;
	len = 2 * row + 12288;
	freed = zero(&t, off, len);
	if (!c->data_disks)
		CHECK(freed <= 0, "raid%s: %" PRId64 " blocks freed where no hole can be punched",
		      c->level, freed);
	check_data(&t, "after zeroing without holes");
	uraid_array_close(t.a);
	t.a = NULL;
	/* and from the members, assembled again */
	if (uraid_array_assemble(e, &ao, &t.a, err, sizeof(err)) == 0)
		check_data(&t, "assembled again");
	else
		CHECK(0, "raid%s: assemble again: %s", c->level, err);
out:
	if (t.a)
		uraid_array_close(t.a);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < c->n; i++)
		unlink(t.paths[i]);
	rmdir(dir);
	free(t.ref);
}

static const struct config configs[] = {
	{ "linear", 2, 0 }, { "0", 3, 0 }, { "1", 2, 0 }, { "10", 4, 0 }, { "5", 4, 3 }, { "6", 4, 2 },
};

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261130;

	printf("test_zeroes: seed %" PRIu64 " (rerun: %s %" PRIu64 ")\n", seed, argv[0], seed);
	for (unsigned i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		run(&configs[i], seed + i);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
