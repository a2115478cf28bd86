// SPDX-License-Identifier: MIT
/*
 * Sequential streams spread over reactors, on a threaded engine, as a client
 * with several NBD connections sends them: NSTREAMS streams of 4 KiB writes
 * cover the array, write k of the run going to reactor k % NREACT, each new
 * write submitted from a completion callback; some are FUA. The RAID 4/5/6
 * path gathers writes queued behind a row's holder whatever their reactor
 * and completes each on its own (raid5_gather.c), so this runs those
 * paths under real concurrency. Per round: every write succeeds, the array
 * is closed at once (completions may still be winding down on the other
 * reactors), assembled again and read back against the pattern, and a check
 * finds no mismatch. RAID 6 rounds lose two members part-way and must go on.
 * The gathering counters are printed.
 *
 *   test_raid5_streams [SEED]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "engine/core/array.h"
#include "engine/level/raid5_priv.h"
#include "../support/array_fixture.h"
#include "../support/check.h"

#define NREACT 4
#define QD 16                   /* writes in flight per reactor */
#define BS 4096u
#define MEMBER_BYTES (8u << 20)
#define ROUNDS 3

struct run;

struct wslot {
	struct uraid_io io;
	struct run *run;
	unsigned reactor;
	uint8_t *buf;
};

struct run {
	struct uraid_array *a;
	uint64_t size, seed;
	_Atomic uint64_t next_off;      /* the streams' next write, over all of them */
	_Atomic unsigned active, errors, done;
	unsigned lose_after;            /* 0: no member lost */
	const int *lose;                /* slots that vanish then */
	unsigned nlose;
	struct wslot slot[NREACT][QD];
};

/* The pattern at off for this seed: every 8 bytes differ. */
static void pattern(uint8_t *b, uint64_t off, uint64_t seed)
{
	for (unsigned i = 0; i < BS; i += 8) {
		uint64_t v = (off + i) * 0x9e3779b97f4a7c15ULL ^ seed;
		memcpy(b + i, &v, 8);
	}
}

static void next_write(struct wslot *w);

static void write_done(struct uraid_io *io, int res)
{
	struct wslot *w = io->ctx;
	struct run *run = w->run;

	if (res)
		atomic_fetch_add(&run->errors, 1);
	if (atomic_fetch_add(&run->done, 1) + 1 == run->lose_after) {
		for (unsigned i = 0; i < run->nlose; i++) {
			struct uraid_fault f = { .kind = URAID_FAULT_VANISH,
						 .last_sector = UINT64_MAX };
			uraid_array_inject(run->a, (unsigned)run->lose[i], &f);
		}
	}
	next_write(w);
}

/* The next 4 KiB of the streams, from this slot's reactor (or the end). */
static void next_write(struct wslot *w)
{
	struct run *run = w->run;
	uint64_t off = atomic_fetch_add(&run->next_off, BS);

	if (off + BS > run->size) {
		atomic_fetch_sub(&run->active, 1);
		return;
	}
	pattern(w->buf, off, run->seed);
	memset(&w->io, 0, sizeof(w->io));
	w->io.op = URAID_IO_WRITE;
	w->io.flags = (off / BS) % 7 == 0 ? URAID_IO_FUA : 0;
	w->io.offset = off;
	w->io.length = BS;
	w->io.buf = w->buf;
	w->io.done = write_done;
	w->io.ctx = w;
	int rc = uraid_array_submit(run->a, w->reactor, &w->io);
	CHECK(rc == 0, "submit at %" PRIu64 ": %d", off, rc);
	if (rc)
		atomic_fetch_sub(&run->active, 1);
}

static struct r5_counters counters(struct uraid_array *ua)
{
	struct r5_priv *priv = ((struct array *)ua)->level_priv;
	struct r5_counters t = { 0 };

	for (unsigned i = 0; i < priv->nreactors; i++) {
		t.groups += priv->cache[i].cnt.groups;
		t.grouped += priv->cache[i].cnt.grouped;
		t.holds += priv->cache[i].cnt.holds;
	}
	return t;
}

/* Reads the members have served since assembly (a row written whole needs none). */
static uint64_t member_reads(struct uraid_array *a)
{
	struct uraid_array_status *st = malloc(sizeof(*st));
	uint64_t n = 0;

	uraid_array_status(a, st);
	for (unsigned i = 0; i < st->nmembers; i++)
		n += st->members[i].reads;
	free(st);
	return n;
}

static void verify(struct run *run, const char *name, unsigned round)
{
	uint8_t *got = aligned_alloc(4096, 1u << 20), *want = aligned_alloc(4096, BS);

	for (uint64_t off = 0; off < run->size; off += 1u << 20) {
		uint64_t n = run->size - off < (1u << 20) ? run->size - off : (1u << 20);
		int rc = uraid_array_pread(run->a, got, n, off);
		CHECK(rc == 0, "%s round %u: read at %" PRIu64 ": %d", name, round, off, rc);
		for (uint64_t x = 0; rc == 0 && x < n; x += BS) {
			pattern(want, off + x, run->seed);
			if (memcmp(want, got + x, BS)) {
				CHECK(0, "%s round %u seed %" PRIu64 ": 4 KiB at %" PRIu64
				      " differ from what was written", name, round, run->seed, off + x);
				break;
			}
		}
	}
	free(got);
	free(want);
}

static void check_clean(struct run *run, const char *name, unsigned round)
{
	struct uraid_sync_status st;
	char err[256];

	uraid_array_sync_speed(run->a, 1000000, 1000000);
	int rc = uraid_array_sync_start(run->a, URAID_SYNC_CHECK, err, sizeof(err));
	CHECK(rc == 0, "%s round %u: check: %s", name, round, err);
	for (int i = 0; rc == 0 && i < 20000; i++) {
		uraid_array_sync_status(run->a, &st);
		if (st.kind == URAID_SYNC_CHECK && !st.running)
			break;
		usleep(1000);
	}
	CHECK(rc || (st.result == 0 && st.mismatch_sectors == 0), "%s round %u: check: result %d, "
	      "mismatch_cnt %" PRIu64, name, round, st.result, st.mismatch_sectors);
}

static void run_level(struct uraid_engine *e, const char *level, unsigned n, const int *lose,
		      unsigned nlose, uint64_t seed)
{
	char dir[64], paths[8][96], name[64], err[256];
	const char *devs[8];
	struct run *run = calloc(1, sizeof(*run));

	snprintf(name, sizeof(name), "raid%s n=%u%s", level, n, nlose ? " losing members" : "");
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-streams.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u", dir, i);
		int fd = open(paths[i], O_CREAT | O_RDWR | O_TRUNC, 0600);
		CHECK(fd >= 0 && ftruncate(fd, MEMBER_BYTES) == 0, "%s: %s", name, paths[i]);
		if (fd >= 0)
			close(fd);
		devs[i] = paths[i];
	}
	CHECK(fixture_create_array(name, level, NULL, n, 16, 2, devs) == 0, "%s: create", name);
	for (unsigned round = 0; round < ROUNDS && !failures; round++) {
		struct uraid_assemble_opts ao = { .paths = devs, .npaths = n, .idle_clean_ms = 20,
						  .flags = URAID_ASSEMBLE_FORCE };
		if (uraid_array_assemble(e, &ao, &run->a, err, sizeof(err))) {
			CHECK(0, "%s round %u: assemble: %s", name, round, err);
			break;
		}
		run->size = uraid_array_size(run->a);
		run->seed = seed + round;
		run->lose = lose;
		run->nlose = nlose;
		run->lose_after = nlose && round == ROUNDS - 1 ? (unsigned)(run->size / BS / 3) : 0;
		atomic_store(&run->next_off, 0);
		atomic_store(&run->errors, 0);
		atomic_store(&run->done, 0);
		atomic_store(&run->active, NREACT * QD);
		for (unsigned q = 0; q < QD; q++) {
			for (unsigned r = 0; r < NREACT; r++) {
				struct wslot *w = &run->slot[r][q];
				w->run = run;
				w->reactor = r;
				if (!w->buf)
					w->buf = aligned_alloc(4096, BS);
				next_write(w);     /* write k of the first batch on reactor k % NREACT */
			}
		}
		for (int i = 0; atomic_load(&run->active) && i < 600000; i++)
			usleep(100);
		CHECK(atomic_load(&run->active) == 0, "%s round %u: %u writers never finished",
		      name, round, atomic_load(&run->active));
		struct r5_counters c = counters(run->a);
		printf("%s round %u: %" PRIu64 " writes, %" PRIu64 " of them in %" PRIu64 " groups, "
		       "%" PRIu64 " holds, %" PRIu64 " member reads\n", name, round, run->size / BS,
		       c.grouped, c.groups, c.holds, member_reads(run->a));
		CHECK(atomic_load(&run->errors) == 0, "%s round %u seed %" PRIu64 ": %u writes failed",
		      name, round, run->seed, atomic_load(&run->errors));
		uraid_array_close(run->a);   /* at once: the drain is part of the test */
		if (uraid_array_assemble(e, &ao, &run->a, err, sizeof(err))) {
			CHECK(0, "%s round %u: assemble again: %s", name, round, err);
			break;
		}
		if (run->lose_after) {
			struct uraid_array_status *st = malloc(sizeof(*st));
			uraid_array_status(run->a, st);
			CHECK(st->degraded == nlose, "%s round %u: %u members missing, %u expected",
			      name, round, st->degraded, nlose);
			free(st);
		}
		verify(run, name, round);
		if (!run->lose_after)
			check_clean(run, name, round);
		uraid_array_close(run->a);
	}
	for (unsigned i = 0; i < n; i++)
		unlink(paths[i]);
	rmdir(dir);
	for (unsigned r = 0; r < NREACT; r++)
		for (unsigned q = 0; q < QD; q++)
			free(run->slot[r][q].buf);
	free(run);
	printf("%s %s\n", failures ? "FAIL" : "ok  ", name);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261130;
	struct uraid_engine_opts eo = { .reactors = NREACT, .flags = URAID_ENGINE_THREADS };
	struct uraid_engine *e;
	static const int lose6[2] = { 1, 3 };

	printf("test_raid5_streams: seed %" PRIu64 " (rerun: %s %" PRIu64 "), %u reactors\n", seed,
	       argv[0], seed, NREACT);
	if (uraid_engine_create(&eo, &e)) {
		printf("engine: cannot create\n");
		return 1;
	}
	run_level(e, "4", 4, NULL, 0, seed);
	run_level(e, "5", 4, NULL, 0, seed + 100);
	run_level(e, "6", 5, NULL, 0, seed + 200);
	run_level(e, "6", 6, lose6, 2, seed + 300);
	uraid_engine_destroy(e);
	printf("%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
