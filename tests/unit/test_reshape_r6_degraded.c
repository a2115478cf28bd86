// SPDX-License-Identifier: MIT
/*
 * A RAID 6 restriped while P and one data member are missing. The layout is
 * parity-last (md's ALGORITHM_PARITY_N: P on slot n-2 and Q on slot n-1 in
 * every row), so that without those two members every old row has its data
 * chunk rebuilt from Q alone (raid6 "data + P" recovery), and every new row
 * is written without them.
 *
 * A. RAID 6 of 5 grown to 6 (+1 member, forwards) under a writer that
 *    checks every read against a shadow copy: part-way, the P member
 *    (slot 3) and data member 0 are failed; the reshape finishes degraded 2
 *    with the data whole.
 * B. RAID 6 of 5, chunk 64K -> 32K at the same count, stopped part-way
 *    (closed) and assembled without the P member and data member 1 (as md
 *    leaves a reshape it ran degraded); the restripe goes on by itself,
 *    under the writer, and finishes degraded 2.
 * Then, in both: two spares are added, the two slots rebuilt (the new
 * geometry), every byte equals the shadow, a check finds 0 mismatches,
 * and the array assembles again with the same bytes.
 *
 *   test_reshape_r6_degraded [seed]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define NFILES 8                /* 5 members, 1 added by the grow, 2 spares */
#define MEMBER_MIB 12u
#define DEADLINE_S 180
#define IO_MAX (64u * 1024)

struct t {
	uint64_t seed;
	const char *name;
	char dir[64];
	char paths[NFILES][96];
	const char *p[NFILES];
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;
	_Atomic bool stop;
	pthread_mutex_t mu;     /* the shadow: the writer against the final reads */
};

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int assemble(struct t *t, const char *const *paths, unsigned n)
{
	char err[300];
	struct uraid_assemble_opts ao = { .paths = paths, .npaths = n, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err))) {
		CHECK(0, "%s: assemble: %s", t->name, err);
		t->a = NULL;
		return -1;
	}
	return 0;
}

static int setup(struct t *t, const char *name)
{
	t->name = name;
	pthread_mutex_init(&t->mu, NULL);
	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-r6-degraded.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i < NFILES; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		t->p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], MEMBER_MIB * MIB))
			return -1;
	}
	if (fixture_create_array(name, "raid6", "parity-last", 5, 64, 2, t->p))
		return -1;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (uraid_engine_create(&eo, &t->e) || assemble(t, t->p, 5))
		return -1;
	t->size = uraid_array_size(t->a);
	t->shadow = aligned_alloc(4096, t->size);
	if (!t->shadow)
		return -1;
	uint64_t s = t->seed;
	rng_fill(&s, t->shadow, t->size);
	return uraid_array_pwrite(t->a, t->shadow, t->size, 0, 0);
}

static void teardown(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	if (t->e)
		uraid_engine_destroy(t->e);
	for (unsigned i = 0; i < NFILES; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
	free(t->shadow);
	pthread_mutex_destroy(&t->mu);
}

static void verify(struct t *t, const char *when)
{
	uint8_t *back = aligned_alloc(4096, t->size);
	pthread_mutex_lock(&t->mu);
	CHECK(back && uraid_array_pread(t->a, back, t->size, 0) == 0, "%s: %s: read", t->name, when);
	if (back && memcmp(back, t->shadow, t->size)) {
		uint64_t at = 0;
		while (at < t->size && back[at] == t->shadow[at])
			at++;
		CHECK(0, "%s: %s: data differs from byte %" PRIu64, t->name, when, at);
	} else {
		printf("%s: %s: all %" PRIu64 " bytes as written\n", t->name, when, t->size);
	}
	pthread_mutex_unlock(&t->mu);
	free(back);
}

/* Random writes and reads, each read checked against the shadow. */
static void *writer(void *arg)
{
	struct t *t = arg;
	uint64_t s = t->seed ^ 0x5eed;
	uint8_t *buf = aligned_alloc(4096, IO_MAX), *back = aligned_alloc(4096, IO_MAX);
	unsigned bad = 0, writes = 0, reads = 0;

	while (!atomic_load(&t->stop) && !bad) {
		uint64_t len = (rng_next(&s) % (IO_MAX / 4096) + 1) * 4096;
		uint64_t off = rng_next(&s) % ((t->size - len) / 4096) * 4096;
		pthread_mutex_lock(&t->mu);
		if (rng_next(&s) % 3) {
			rng_fill(&s, buf, len);
			if (uraid_array_pwrite(t->a, buf, len, off, 0)) {
				CHECK(0, "%s: write of %" PRIu64 " bytes at %" PRIu64 " failed", t->name,
				      len, off);
				bad++;
			} else {
				memcpy(t->shadow + off, buf, len);
				writes++;
			}
		} else if (uraid_array_pread(t->a, back, len, off) ||
			   memcmp(back, t->shadow + off, len)) {
			CHECK(0, "%s: read of %" PRIu64 " bytes at %" PRIu64 " differs", t->name,
			      len, off);
			bad++;
		} else {
			reads++;
		}
		pthread_mutex_unlock(&t->mu);
		pause_ms(1);
	}
	printf("%s: writer: %u writes, %u reads checked\n", t->name, writes, reads);
	free(buf);
	free(back);
	return NULL;
}

/* Until no job runs (one ran, or none started), at most DEADLINE_S. */
static void wait_job(struct t *t, struct uraid_sync_status *st)
{
	time_t until = time(NULL) + DEADLINE_S;
	do {
		pause_ms(10);
		uraid_array_sync_status(t->a, st);
	} while ((st->running || st->kind == URAID_SYNC_NONE) && time(NULL) < until);
}

/* Until the reshape has moved at least a quarter of the array. */
static bool wait_quarter(struct t *t)
{
	struct uraid_sync_status st;
	time_t until = time(NULL) + DEADLINE_S;
	while (time(NULL) < until) {
		uraid_array_sync_status(t->a, &st);
		if (st.kind == URAID_SYNC_RESHAPE && st.running &&
		    st.reshape_position_bytes >= t->size / 4 &&
		    st.reshape_position_bytes <= t->size / 4 * 3)
			return true;
		if (st.kind == URAID_SYNC_RESHAPE && !st.running)
			return false;
		pause_ms(5);
	}
	return false;
}

static int member_of(struct t *t, unsigned file)
{
	return uraid_array_find_member(t->a, t->paths[file]);
}

/* Slots and states: degraded as expected, and which slots are missing. */
static void expect_missing(struct t *t, const char *when, unsigned want, const int *slots)
{
	struct uraid_array_status as;
	uraid_array_status(t->a, &as);
	CHECK(as.degraded == want, "%s: %s: degraded %u (want %u)", t->name, when, as.degraded,
	      want);
	for (unsigned k = 0; k < want; k++) {
		bool held = false;
		for (unsigned i = 0; i < as.nmembers; i++)
			held |= as.members[i].slot == slots[k] &&
				as.members[i].state == URAID_MEMBER_IN_SYNC;
		CHECK(!held, "%s: %s: slot %d held in sync (want missing)", t->name, when, slots[k]);
	}
}

/* The end of both runs: the two slots rebuilt onto spares, data, check, again. */
static void rebuild_and_check(struct t *t, unsigned raid_disks, unsigned chunk_kib)
{
	char err[256];
	struct uraid_sync_status st;
	struct uraid_array_status as;

	for (unsigned f = 6; f < 8; f++)
		CHECK(uraid_array_add_member(t->a, t->paths[f], 0, err, sizeof(err)) == 0,
		      "%s: add spare %u: %s", t->name, f, err);
	time_t until = time(NULL) + DEADLINE_S;
	do {
		pause_ms(20);
		uraid_array_status(t->a, &as);
		uraid_array_sync_status(t->a, &st);
	} while ((as.degraded || st.running) && time(NULL) < until);
	CHECK(as.degraded == 0 && as.raid_disks == raid_disks && as.chunk_bytes == chunk_kib * 1024 &&
	      as.layout == URAID_PARITY_LAST, "%s: rebuilt: degraded %u raid_disks %u chunk %u "
	      "KiB layout %u (want 0 %u %u 5)", t->name, as.degraded, as.raid_disks,
	      as.chunk_bytes / 1024, as.layout, raid_disks, chunk_kib);
	verify(t, "rebuilt");
	CHECK(uraid_array_sync_start(t->a, URAID_SYNC_CHECK, err, sizeof(err)) == 0,
	      "%s: check: %s", t->name, err);
	wait_job(t, &st);
	CHECK(st.kind == URAID_SYNC_CHECK && st.result == 0 && st.mismatch_sectors == 0,
	      "%s: check: result %d, %" PRIu64 " mismatched sectors", t->name, st.result,
	      st.mismatch_sectors);
	printf("%s: check after the rebuild: %" PRIu64 " mismatched sectors\n", t->name,
	       st.mismatch_sectors);
	CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
	/* the members now: those of the last update holding a slot (the ones
	   failed or left out still say their old role, at older events) */
	const char *now[NFILES];
	uint64_t events[NFILES] = { 0 }, newest = 0;
	bool role[NFILES] = { false };
	unsigned n = 0;
	for (unsigned i = 0; i < NFILES; i++) {
		struct uraid_probe *pr = malloc(sizeof(*pr));
		int fd = open(t->paths[i], O_RDONLY);
		if (pr && fd >= 0 && uraid_probe_fd(fd, pr) == 0 && pr->chosen >= 0) {
			const struct uraid_sb *sb = &pr->loc[pr->chosen].sb;
			role[i] = sb->dev_number < sb->max_dev &&
				  sb->dev_roles[sb->dev_number] < raid_disks;
			events[i] = sb->events;
			newest = events[i] > newest ? events[i] : newest;
		}
		if (fd >= 0)
			close(fd);
		free(pr);
	}
	for (unsigned i = 0; i < NFILES; i++)
		if (role[i] && events[i] == newest)
			now[n++] = t->paths[i];
	CHECK(n == raid_disks, "%s: %u members hold a slot on disk (want %u)", t->name, n,
	      raid_disks);
	if (assemble(t, now, n) == 0) {
		uraid_array_status(t->a, &as);
		CHECK(as.degraded == 0, "%s: assembled again: degraded %u", t->name, as.degraded);
		verify(t, "assembled again");
	}
}

/* A. 5 -> 6 members; P (slot 3) and data slot 0 fail part-way. */
static void run_fail_during(uint64_t seed)
{
	struct t t = { .seed = seed };
	char err[256];
	struct uraid_sync_status st;
	pthread_t w;
	const char *name = "raid6 parity-last 5->6, P and D0 fail mid-reshape";

	if (setup(&t, name) ||
	    uraid_array_add_member(t.a, t.paths[5], 0, err, sizeof(err))) {
		CHECK(0, "%s: setup", name);
		teardown(&t);
		return;
	}
	struct uraid_reshape r = { .new_level = 6, .new_layout = URAID_PARITY_LAST,
				   .new_raid_disks = 6, .new_chunk_sectors = 128 };
	uraid_array_sync_speed(t.a, 2000, 4000);
	pthread_create(&w, NULL, writer, &t);
	int rc = uraid_array_reshape_start(t.a, &r, err, sizeof(err));
	CHECK(rc == 0, "%s: reshape start: %s", name, err);
	bool mid = rc == 0 && wait_quarter(&t);
	CHECK(mid, "%s: the reshape did not stop by mid-way", name);
	uraid_array_sync_status(t.a, &st);
	printf("%s: failing P (member 3) and D0 (member 0) at byte %" PRIu64 " of %" PRIu64 "\n",
	       name, st.reshape_position_bytes, t.size);
	/* P first, then a data member: the old rows lose their P and one data
	   chunk each (rebuilt from Q), the new rows are written without them */
	int m3 = member_of(&t, 3);
	CHECK(m3 >= 0 && uraid_array_fail_member(t.a, (unsigned)m3, 0, err, sizeof(err)) == 0,
	      "%s: fail P: %s", name, err);
	int m0 = member_of(&t, 0);
	CHECK(m0 >= 0 && uraid_array_fail_member(t.a, (unsigned)m0, 0, err, sizeof(err)) == 0,
	      "%s: fail D0: %s", name, err);
	static const int gone[] = { 0, 3 };
	expect_missing(&t, "P and D0 failed", 2, gone);
	uraid_array_sync_speed(t.a, 20000, 200000);
	if (rc == 0)
		wait_job(&t, &st);
	CHECK(st.kind == URAID_SYNC_RESHAPE && !st.running && st.result == 0,
	      "%s: the reshape ended: kind %d running %d result %d", name, st.kind, st.running,
	      st.result);
	pause_ms(200);          /* the writer goes on in the new geometry */
	atomic_store(&t.stop, true);
	pthread_join(w, NULL);
	struct uraid_array_status as;
	uraid_array_status(t.a, &as);
	CHECK(as.raid_disks == 6 && as.size_bytes == t.size / 3 * 4, "%s: after: raid_disks %u, "
	      "size %" PRIu64 " (want 6, %" PRIu64 ")", name, as.raid_disks, as.size_bytes,
	      t.size / 3 * 4);
	expect_missing(&t, "reshape ended", 2, gone);
	verify(&t, "after the degraded reshape");
	/* remove the failed ones, so that the spares take their slots */
	for (unsigned f = 0; f < 4; f += 3) {
		int m = member_of(&t, f);
		CHECK(m >= 0 && uraid_array_remove_member(t.a, (unsigned)m, err, sizeof(err)) == 0,
		      "%s: remove member %u: %s", name, f, err);
	}
	rebuild_and_check(&t, 6, 64);
	teardown(&t);
}

/* B. chunk 64K -> 32K, stopped part-way, resumed without P (slot 3) and D1. */
static void run_assembled_without(uint64_t seed)
{
	struct t t = { .seed = seed };
	char err[256];
	struct uraid_sync_status st;
	pthread_t w;
	const char *name = "raid6 parity-last chunk 64K->32K, resumed without P and D1";

	if (setup(&t, name)) {
		CHECK(0, "%s: setup", name);
		teardown(&t);
		return;
	}
	struct uraid_reshape r = { .new_level = 6, .new_layout = URAID_PARITY_LAST,
				   .new_raid_disks = 5, .new_chunk_sectors = 64 };
	uraid_array_sync_speed(t.a, 2000, 4000);
	int rc = uraid_array_reshape_start(t.a, &r, err, sizeof(err));
	CHECK(rc == 0, "%s: reshape start: %s", name, err);
	bool mid = rc == 0 && wait_quarter(&t);
	CHECK(mid, "%s: the reshape did not stop by mid-way", name);
	CHECK(uraid_array_close(t.a) == 0, "%s: close mid-reshape", name);
	t.a = NULL;
	struct uraid_probe *pr = malloc(sizeof(*pr));
	int fd = open(t.paths[2], O_RDONLY);
	struct uraid_sb sb = { 0 };
	if (pr && fd >= 0 && uraid_probe_fd(fd, pr) == 0 && pr->chosen >= 0)
		sb = pr->loc[pr->chosen].sb;
	if (fd >= 0)
		close(fd);
	free(pr);
	CHECK((sb.feature_map & URAID_FEATURE_RESHAPE_ACTIVE) && sb.reshape_position > 0 &&
	      sb.new_chunk == 64, "%s: stopped mid-reshape (feature 0x%x, position %" PRIu64
	      ", new_chunk %u)", name, sb.feature_map, sb.reshape_position, sb.new_chunk);
	printf("%s: stopped at reshape_position %" PRIu64 " (%s); assembled without members 1 "
	       "(D1) and 3 (P)\n", name, sb.reshape_position,
	       sb.feature_map & URAID_FEATURE_RESHAPE_BACKWARDS ? "backwards" : "forwards");
	const char *kept[3] = { t.p[0], t.p[2], t.p[4] };
	if (assemble(&t, kept, 3)) {
		teardown(&t);
		return;
	}
	static const int gone[] = { 1, 3 };
	expect_missing(&t, "assembled mid-reshape", 2, gone);
	verify(&t, "assembled mid-reshape without P and D1");
	uraid_array_sync_speed(t.a, 20000, 200000);
	pthread_create(&w, NULL, writer, &t);
	wait_job(&t, &st);
	CHECK(st.kind == URAID_SYNC_RESHAPE && !st.running && st.result == 0,
	      "%s: the resumed reshape ended: kind %d running %d result %d", name, st.kind,
	      st.running, st.result);
	pause_ms(200);
	atomic_store(&t.stop, true);
	pthread_join(w, NULL);
	struct uraid_array_status as;
	uraid_array_status(t.a, &as);
	CHECK(as.chunk_bytes == 32 * 1024 && as.raid_disks == 5, "%s: after: chunk %u KiB, raid_disks %u",
	      name, as.chunk_bytes / 1024, as.raid_disks);
	expect_missing(&t, "reshape ended", 2, gone);
	verify(&t, "after the degraded reshape");
	rebuild_and_check(&t, 5, 32);
	teardown(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_reshape_r6_degraded seed %" PRIu64 "\n", seed);
	fflush(stdout);
	run_fail_during(seed);
	run_assembled_without(seed + 1);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
