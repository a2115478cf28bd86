// SPDX-License-Identifier: MIT
/*
 * Freezing an array (engine/core/freeze.h), in-process with the engine's
 * threads, on a RAID 5 of 4 members in /dev/shm:
 *
 * 1. Frozen under a running check: no request and no unit is in flight;
 *    writes and reads submitted on both reactors while frozen do not
 *    complete until the thaw, then do, with the right data; the check goes
 *    on and finds no mismatch.
 * 2. A geometry switch under freeze (chunk 64 KiB -> 32 KiB; nothing is
 *    moved, the array's old content is lost as on an empty array): writes
 *    parked meanwhile run under the new geometry and read back, the whole
 *    array written after it reads back, and the members hold the data
 *    where the new geometry says.
 * 3. A switch to a level without an engine is refused and leaves the
 *    geometry as it was; a second freeze while frozen is -EBUSY.
 * 4. A range hold (a reshape step's): requests outside it complete while
 *    it stands, those inside only after it ends, all with the right data.
 * 5. Closed while frozen with requests parked: every one is answered, with
 *    the right data, before the close returns.
 *
 * The seed is printed; no timing is asserted (the frozen requests are looked
 * at after a pause, and must not have completed whatever its length).
 *
 *   test_freeze [seed]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/jobs/sync.h"
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define N 4
#define MEMBER_MIB 8u
#define BLOCK (64u * 1024)
#define NOPS 48
#define DEADLINE_S 120

struct t {
	uint64_t seed;
	char dir[64];
	char paths[N][96];
	struct uraid_engine *e;
	struct uraid_array *ua;
	struct array *a;
	uint64_t size;
	uint8_t *shadow;
};

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int setup(struct t *t)
{
	const char *p[N];
	char err[256];

	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-freeze.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], MEMBER_MIB * MIB))
			return -1;
	}
	if (fixture_create_array("freeze", "raid5", NULL, N, 64, 2, p))
		return -1;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (uraid_engine_create(&eo, &t->e))
		return -1;
	struct uraid_assemble_opts ao = { .paths = p, .npaths = N, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t->e, &ao, &t->ua, err, sizeof(err))) {
		fprintf(stderr, "assemble: %s\n", err);
		return -1;
	}
	t->a = (struct array *)t->ua;
	t->size = uraid_array_size(t->ua);
	t->shadow = malloc(t->size);
	return t->shadow ? 0 : -1;
}

static void teardown(struct t *t)
{
	if (t->ua)
		CHECK(uraid_array_close(t->ua) == 0, "close");
	if (t->e)
		uraid_engine_destroy(t->e);
	for (unsigned i = 0; i < N; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
	free(t->shadow);
}

/* The whole array from the shadow, then read back. */
static void fill_and_verify(struct t *t, const char *when)
{
	rng_fill(&t->seed, t->shadow, t->size);
	CHECK(uraid_array_pwrite(t->ua, t->shadow, t->size, 0, 0) == 0, "%s: fill", when);
	uint8_t *back = malloc(t->size);
	CHECK(back && uraid_array_pread(t->ua, back, t->size, 0) == 0, "%s: read back", when);
	CHECK(back && memcmp(back, t->shadow, t->size) == 0, "%s: data differs", when);
	free(back);
}

/*
 * While frozen: NOPS requests on both reactors, writes to even blocks and
 * reads of odd ones (no two touch the same block); none completes before
 * the thaw. `between` runs while they are parked (a geometry switch).
 */
static void parked_requests(struct t *t, const char *when, void (*between)(struct t *t))
{
	struct op ops[NOPS];
	uint64_t nblocks = t->size / BLOCK;

	CHECK(array_freeze(t->a) == 0, "%s: freeze", when);
	CHECK(array_foreground_in_flight(t->a) == 0, "%s: requests in flight while frozen", when);
	CHECK(!sync_units_in_progress(t->a), "%s: a unit in flight while frozen", when);
	CHECK(array_freeze(t->a) == -EBUSY, "%s: a second freeze", when);
	for (unsigned i = 0; i < NOPS; i++) {
		struct op *o = &ops[i];
		bool write = i % 2 == 0;
		uint64_t blk = (rng_next(&t->seed) % (nblocks / 2)) * 2 + (write ? 0 : 1);
		memset(o, 0, sizeof(*o));
		o->buf = aligned_alloc(4096, BLOCK);
		if (write) {
			/* the same block may be drawn twice: distinct blocks only
			   (looked at again after each move: one pass let a moved
			   block land on one already passed) */
			for (bool dup = true; dup;) {
				dup = false;
				for (unsigned k = 0; k < i; k += 2)
					if (ops[k].io.offset == blk * BLOCK) {
						blk = (blk + 2) % (nblocks & ~1ull);
						dup = true;
					}
			}
			rng_fill(&t->seed, o->buf, BLOCK);
			memcpy(t->shadow + blk * BLOCK, o->buf, BLOCK);
		}
		o->io = (struct uraid_io){ .op = write ? URAID_IO_WRITE : URAID_IO_READ,
					   .offset = blk * BLOCK, .length = BLOCK, .buf = o->buf,
					   .done = op_done, .ctx = o };
		CHECK(uraid_array_submit(t->ua, i % 2 ? 1 : 0, &o->io) == 0, "%s: submit", when);
	}
	pause_ms(50);
	unsigned early = 0;
	for (unsigned i = 0; i < NOPS; i++)
		early += __atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE);
	CHECK(early == 0, "%s: %u requests completed while frozen", when, early);
	if (between)
		between(t);
	array_thaw(t->a);
	for (unsigned i = 0; i < NOPS; i++) {
		time_t until = time(NULL) + DEADLINE_S;
		while (!__atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE) && time(NULL) < until)
			pause_ms(1);
		CHECK(ops[i].done && ops[i].result == 0, "%s: request %u: done %d result %d", when,
		      i, ops[i].done, ops[i].result);
	}
	if (between) {
		/* the old data is not where the new geometry looks (nothing was
		   moved): only what the parked writes wrote reads back */
		uint8_t *back = aligned_alloc(4096, BLOCK);
		for (unsigned i = 0; i < NOPS; i += 2) {
			CHECK(uraid_array_pread(t->ua, back, BLOCK, ops[i].io.offset) == 0 &&
			      memcmp(back, ops[i].buf, BLOCK) == 0,
			      "%s: write at %" PRIu64 " does not read back", when, ops[i].io.offset);
		}
		free(back);
		for (unsigned i = 0; i < NOPS; i++)
			free(ops[i].buf);
		return;
	}
	/* reads: what the shadow held (writes and reads touch distinct blocks) */
	for (unsigned i = 1; i < NOPS; i += 2)
		CHECK(memcmp(ops[i].buf, t->shadow + ops[i].io.offset, BLOCK) == 0,
		      "%s: read at %" PRIu64 " differs", when, ops[i].io.offset);
	for (unsigned i = 0; i < NOPS; i++)
		free(ops[i].buf);
	uint8_t *back = malloc(t->size);
	CHECK(back && uraid_array_pread(t->ua, back, t->size, 0) == 0, "%s: read all", when);
	CHECK(back && memcmp(back, t->shadow, t->size) == 0, "%s: array differs from shadow", when);
	free(back);
}

static void wait_job(struct t *t, struct uraid_sync_status *st)
{
	time_t until = time(NULL) + DEADLINE_S;
	do {
		pause_ms(5);
		uraid_array_sync_status(t->ua, st);
	} while (st->running && time(NULL) < until);
}

/* 1: a check runs slowly under the freeze. */
static void test_under_check(struct t *t)
{
	char err[256];
	struct uraid_sync_status st;

	fill_and_verify(t, "before");
	uraid_array_sync_speed(t->ua, 4000, 4000);
	CHECK(uraid_array_sync_start(t->ua, URAID_SYNC_CHECK, err, sizeof(err)) == 0, "check: %s", err);
	pause_ms(30);
	parked_requests(t, "under a check", NULL);
	uraid_array_sync_speed(t->ua, 0, 0);
	wait_job(t, &st);
	CHECK(!st.running && st.result == 0 && st.mismatch_sectors == 0,
	      "check after thaw: running %d result %d mismatches %" PRIu64, st.running, st.result,
	      st.mismatch_sectors);
}

static void switch_to_32k(struct t *t)
{
	char err[256];
	struct uraid_geom *g = malloc(sizeof(*g));
	struct uraid_geom_params p = { .level = t->a->geom.level, .layout = t->a->geom.layout,
				       .raid_disks = t->a->geom.raid_disks, .chunk_sectors = 64,
				       .dev_sectors = t->a->geom.dev_sectors };

	CHECK(g && uraid_geom_init(g, &p, err, sizeof(err)) == 0, "geom: %s", err);
	pthread_mutex_lock(&t->a->meta_lock);
	/* refused: no engine for level 42, and nothing changed */
	struct uraid_geom *bad = malloc(sizeof(*bad));
	*bad = *g;
	bad->level = 42;
	CHECK(array_switch_geometry(t->a, bad, err, sizeof(err)) == -EINVAL, "level 42 taken");
	CHECK(t->a->geom.chunk_sectors == 128, "a refused switch changed the chunk");
	free(bad);
	CHECK(array_switch_geometry(t->a, g, err, sizeof(err)) == 0, "switch: %s", err);
	pthread_mutex_unlock(&t->a->meta_lock);
	free(g);
}

/* Member slot's bytes at array offset off, straight from its file. */
static int member_bytes(struct t *t, uint64_t off, uint8_t *out, size_t len)
{
	struct uraid_loc loc;
	if (uraid_geom_map(&t->a->geom, off / 512, &loc, 1) != 1)
		return -1;
	struct member *m = t->a->slot[loc.slot].m;
	int fd = open(t->paths[loc.slot], O_RDONLY);
	ssize_t n = fd >= 0 ? pread(fd, out, len, (off_t)((m->data_offset + loc.sector) * 512)) : -1;
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* 2: a chunk switch on an array whose data is rewritten after it. */
static void test_switch(struct t *t)
{
	struct uraid_array_status st;

	parked_requests(t, "chunk switch", switch_to_32k);
	uraid_array_status(t->ua, &st);
	CHECK(st.chunk_bytes == 32 * 1024, "chunk after switch: %u", st.chunk_bytes);
	fill_and_verify(t, "after switch");
	uint8_t got[4096];
	CHECK(uraid_array_flush(t->ua) == 0, "flush");
	/* an offset whose place differs between 64 KiB and 32 KiB chunks */
	uint64_t off = 40 * 1024;
	CHECK(member_bytes(t, off, got, sizeof(got)) == 0 &&
	      memcmp(got, t->shadow + off, sizeof(got)) == 0,
	      "the member does not hold array offset %" PRIu64 " where 32 KiB chunks put it", off);
}

static void wait_done(struct op *o, const char *what)
{
	time_t until = time(NULL) + DEADLINE_S;
	while (!__atomic_load_n(&o->done, __ATOMIC_ACQUIRE) && time(NULL) < until)
		pause_ms(1);
	CHECK(o->done && o->result == 0, "%s at %" PRIu64 ": done %d result %d", what,
	      o->io.offset, o->done, o->result);
}

/*
 * 4: a hold of the array's second quarter (a reshape step's rows): a read
 * and a write on each side of it complete while it stands; a read and a
 * write inside it do not complete until it ends, then do, right.
 */
static void test_range_hold(struct t *t)
{
	const char *when = "range hold";
	uint64_t q = t->size / 4;
	/* outside: below and above the range; inside: its first and last block */
	uint64_t out_off[4] = { 0, q - BLOCK, 2 * q, 3 * q + BLOCK };
	uint64_t in_off[2] = { q, 2 * q - BLOCK };
	struct op out[4], in[2];

	fill_and_verify(t, "before the range hold");
	CHECK(array_hold_range(t->a, q / 512, 2 * q / 512) == 0, "%s: hold", when);
	for (unsigned i = 0; i < 6; i++) {
		struct op *o = i < 4 ? &out[i] : &in[i - 4];
		uint64_t off = i < 4 ? out_off[i] : in_off[i - 4];
		bool write = i % 2 == 1;
		memset(o, 0, sizeof(*o));
		o->buf = aligned_alloc(4096, BLOCK);
		if (write) {
			rng_fill(&t->seed, o->buf, BLOCK);
			memcpy(t->shadow + off, o->buf, BLOCK);
		}
		o->io = (struct uraid_io){ .op = write ? URAID_IO_WRITE : URAID_IO_READ,
					   .offset = off, .length = BLOCK, .buf = o->buf,
					   .done = op_done, .ctx = o };
		CHECK(uraid_array_submit(t->ua, i % 2, &o->io) == 0, "%s: submit", when);
	}
	/* the ones outside end while the hold stands */
	for (unsigned i = 0; i < 4; i++)
		wait_done(&out[i], "outside the hold");
	unsigned early = 0;
	for (unsigned i = 0; i < 2; i++)
		early += __atomic_load_n(&in[i].done, __ATOMIC_ACQUIRE);
	CHECK(early == 0, "%s: %u requests inside it completed while held", when, early);
	array_release_range(t->a);
	for (unsigned i = 0; i < 2; i++)
		wait_done(&in[i], "inside the hold");
	CHECK(memcmp(out[0].buf, t->shadow + out_off[0], BLOCK) == 0, "%s: read below", when);
	CHECK(memcmp(out[2].buf, t->shadow + out_off[2], BLOCK) == 0, "%s: read above", when);
	CHECK(memcmp(in[0].buf, t->shadow + in_off[0], BLOCK) == 0, "%s: read inside", when);
	for (unsigned i = 0; i < 6; i++)
		free(i < 4 ? out[i].buf : in[i - 4].buf);
	uint8_t *back = malloc(t->size);
	CHECK(back && uraid_array_pread(t->ua, back, t->size, 0) == 0, "%s: read all", when);
	CHECK(back && memcmp(back, t->shadow, t->size) == 0, "%s: array differs from shadow", when);
	free(back);
}

/*
 * 5: the array closed while frozen, requests parked: close lets them go on
 * and answers every one (with the right data) before it frees the array.
 */
static void test_close_frozen(struct t *t)
{
	const char *when = "close while frozen";
	struct op ops[8];

	fill_and_verify(t, "before the close");
	CHECK(array_freeze(t->a) == 0, "%s: freeze", when);
	for (unsigned i = 0; i < 8; i++) {
		struct op *o = &ops[i];
		memset(o, 0, sizeof(*o));
		o->buf = aligned_alloc(4096, BLOCK);
		o->io = (struct uraid_io){ .op = URAID_IO_READ, .offset = i * BLOCK, .length = BLOCK,
					   .buf = o->buf, .done = op_done, .ctx = o };
		CHECK(uraid_array_submit(t->ua, i % 2, &o->io) == 0, "%s: submit", when);
	}
	pause_ms(20);
	CHECK(uraid_array_close(t->ua) == 0, "%s: close", when);
	t->ua = NULL;
	t->a = NULL;
	for (unsigned i = 0; i < 8; i++) {
		/* answered before close returned: no waiting here */
		CHECK(__atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE) && ops[i].result == 0,
		      "%s: request %u: done %d result %d", when, i, ops[i].done, ops[i].result);
		CHECK(!ops[i].done || memcmp(ops[i].buf, t->shadow + i * BLOCK, BLOCK) == 0,
		      "%s: read %u differs", when, i);
	}
	/* not freed: a request never answered may still be written into */
	for (unsigned i = 0; i < 8; i++)
		if (ops[i].done)
			free(ops[i].buf);
}

int main(int argc, char **argv)
{
	struct t t = { 0 };
	t.seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_freeze seed %" PRIu64 "\n", t.seed);
	if (setup(&t)) {
		teardown(&t);
		return 1;
	}
	test_under_check(&t);
	test_switch(&t);
	test_range_hold(&t);
	test_close_frozen(&t);
	teardown(&t);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
