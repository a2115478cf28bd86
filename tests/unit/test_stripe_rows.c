// SPDX-License-Identifier: MIT
/*
 * The stripe cache's row data (src/engine/level/raid5_heads.c): a stripe
 * head keeps the 4 KiB unit its write left on the members, and the next
 * write of that unit uses the kept pages instead of reading them. A kept
 * page must never be stale: every path that writes the members by other
 * means forgets it. Each case below first makes the cache keep a unit (a
 * 4 KiB write at the start of a row: RCW, every page kept), then changes
 * the members by one path, then writes the next data chunk's 4 KiB of the
 * same unit (which plans with the kept pages). A stale page would put a
 * wrong parity on the members: each case ends with md's check (0
 * mismatches), the array read back against the model, and again with a
 * member failed (the reads rebuilt from parity).
 *
 *   hit        the rewrite took the kept pages (hits counted), data right
 *   repair     a data block changed on its member file, then a repair
 *              (sync_raid5.c rewrites the parity)
 *   discard    a whole-row discard (members punched)
 *   subpage    a 512 B write into the unit (not kept: forgets it)
 *   wide       a 64 KiB write over the unit
 *   zeroes     write-zeroes of the whole row
 *   resync     as repair, by a resync
 *   rebuild    slot 1's member failed, a spare rebuilt onto it
 *              (sync_raid5.c writes the new member), written again
 *   replace    slot 1's member replaced by a spare (its copy, then the swap)
 *   re-add     slot 1's member failed and removed, other rows written,
 *              the member re-added (the bitmap's chunks only rebuilt: the
 *              kept rows are not), written again; then slot 0 failed
 *   reshape    grown to 5 members, then the old units' array offsets
 *              written (the rows moved under the kept pages)
 *
 * After a member change (rebuild, replace, re-add) the test also looks in
 * the pool: no kept page may count for the changed slot (its generation,
 * array_slot.gen, moved on), whatever the sync lanes dropped.
 *
 * Every case runs on RAID 5 and on RAID 6 (the Q page kept too), 4 members;
 * "hit" and "rebuild" also on a RAID 5 with a partial parity log (PPL).
 *
 *   test_stripe_rows [SEED]
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
#include "engine/level/raid5_priv.h"
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define PAGE 4096u
#define N 4u
#define CHUNK_KIB 16u
#define MEMBER_MIB 4u
#define DEADLINE_S 60

struct t {
	uint64_t seed, rs;
	const char *name;
	const char *level;              /* "5" or "6" */
	bool ppl, bitmap;
	unsigned npar;
	char dir[64];
	char paths[N + 1][96];
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *ref;
	uint64_t size, row_bytes, chunk_bytes;
};

static struct r5_heads *heads(struct t *t)
{
	return &((struct r5_priv *)((struct array *)t->a)->level_priv)->heads;
}

static uint64_t hits(struct t *t)
{
	struct r5_heads *hs = heads(t);
	uint64_t h;

	pthread_mutex_lock(&hs->mu);
	h = hs->hits;
	pthread_mutex_unlock(&hs->mu);
	return h;
}

/* Kept heads whose page for slot s still counts (the write path would use it). */
static unsigned kept_counting(struct t *t, unsigned s)
{
	struct r5_heads *hs = heads(t);
	unsigned n = 0;

	pthread_mutex_lock(&hs->mu);
	for (struct r5_head *h = hs->lru_head; h; h = h->lnext)
		n += r5_head_page_counts(h, (struct array *)t->a, s);
	pthread_mutex_unlock(&hs->mu);
	return n;
}

static unsigned nkept(struct t *t)
{
	struct r5_heads *hs = heads(t);
	unsigned n;

	pthread_mutex_lock(&hs->mu);
	n = hs->nkept;
	pthread_mutex_unlock(&hs->mu);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wr(struct t *t, uint64_t off, uint64_t len)
{
	uint8_t *buf = aligned_alloc(PAGE, (len + PAGE - 1) / PAGE * PAGE);

	rng_fill(&t->rs, buf, (len + 7) / 8 * 8);
	CHECK(uraid_array_pwrite(t->a, buf, len, off, 0) == 0, "%s: write %" PRIu64 "+%" PRIu64,
	      t->name, off, len);
	memcpy(t->ref + off, buf, len);
	free(buf);
}

/* Wait for the job of `kind` to end; its status. */
static struct uraid_sync_status job_end(struct t *t, enum uraid_sync_kind kind)
{
	struct uraid_sync_status st;
	double deadline = now_s() + DEADLINE_S;

	do {
		usleep(1000);
		uraid_array_sync_status(t->a, &st);
	} while (!(st.kind == kind && !st.running) && now_s() < deadline);
	CHECK(st.kind == kind && !st.running, "%s: no %s ended in %d s", t->name,
	      uraid_sync_kind_name(kind), DEADLINE_S);
	return st;
}

static void check_data(struct t *t, const char *when)
{
	uint8_t *buf = aligned_alloc(PAGE, t->size);
	int rc = uraid_array_pread(t->a, buf, t->size, 0);

	if (rc || memcmp(buf, t->ref, t->size)) {
		uint64_t at = 0;

		while (!rc && at < t->size && buf[at] == t->ref[at])
			at++;
		CHECK(0, "%s seed %" PRIu64 " %s: the array's data differs at byte %" PRIu64
		      " (read %d)", t->name, t->seed, when, at, rc);
	}
	free(buf);
}

/* md's check over the array: 0 mismatches, or a kept page was stale. */
static void check_parity(struct t *t)
{
	char err[256];

	CHECK(uraid_array_sync_start(t->a, URAID_SYNC_CHECK, err, sizeof(err)) == 0,
	      "%s: check: %s", t->name, err);
	struct uraid_sync_status st = job_end(t, URAID_SYNC_CHECK);
	CHECK(st.result == 0 && st.mismatch_sectors == 0,
	      "%s seed %" PRIu64 ": check: result %d, %" PRIu64 " sectors mismatched (a stale "
	      "kept page made the parity)", t->name, t->seed, st.result, st.mismatch_sectors);
}

/*
 * Where the array's bytes [off, off+PAGE) lie on the member files: the
 * page holds a pattern no other page has (seeded random), found by a scan.
 */
static int find_on_members(struct t *t, uint64_t off, unsigned *member, uint64_t *at)
{
	uint64_t bytes = (uint64_t)MEMBER_MIB * MIB;
	uint8_t *buf = malloc(bytes);
	int found = -1;

	for (unsigned i = 0; i <= N && found < 0 && buf; i++) {
		int fd = open(t->paths[i], O_RDONLY);

		if (fd < 0 || pread(fd, buf, bytes, 0) != (ssize_t)bytes) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		close(fd);
		for (uint64_t p = 0; p + PAGE <= bytes; p += 512)
			if (!memcmp(buf + p, t->ref + off, PAGE)) {
				*member = i;
				*at = p;
				found = 0;
				break;
			}
	}
	free(buf);
	return found;
}

/* Keep the unit at row `row`'s start (chunk 0's first page): written, kept. */
static uint64_t keep_unit(struct t *t, uint64_t row)
{
	uint64_t off = row * t->row_bytes;

	wr(t, off, PAGE);
	return off;
}

/* The same unit's page in data chunk 1: planned with the kept pages. */
static void write_sibling(struct t *t, uint64_t unit_off)
{
	wr(t, unit_off + t->chunk_bytes, PAGE);
}

static int setup(struct t *t)
{
	const char *devs[N];
	char err[256];

	snprintf(t->dir, sizeof(t->dir), "/dev/shm/cache-rows-test.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i <= N; i++) {     /* the last one: a spare, added by some cases */
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		if (i < N)
			devs[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], (uint64_t)MEMBER_MIB * MIB))
			return -1;
	}
	struct uraid_create_opts co = {
		.raid_disks = N, .chunk_kib = CHUNK_KIB, .minor = 2,
		.bitmap = t->bitmap ? URAID_BITMAP_INTERNAL : URAID_BITMAP_NONE,
		.bitmap_chunk_kib = 64, .bitmap_delay_s = 1, .ppl = t->ppl, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = devs, .npaths = N, .homehost = "<none>",
	};
	struct uraid_engine_opts eo = { .reactors = 1, .flags = URAID_ENGINE_THREADS };
	if (uraid_level_parse(t->level, &co.level) || uraid_create(&co, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", t->name, err);
		return -1;
	}
	if (uraid_engine_create(&eo, &t->e))
		return -1;
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = N, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: assemble: %s\n", t->name, err);
		return -1;
	}
	uraid_array_sync_speed(t->a, 4000000, 4000000);
	t->size = uraid_array_size(t->a);
	t->chunk_bytes = CHUNK_KIB * 1024;
	t->row_bytes = (N - t->npar) * t->chunk_bytes;
	t->ref = malloc(t->size);
	rng_fill(&t->rs, t->ref, t->size);
	return uraid_array_pwrite(t->a, t->ref, t->size, 0, 0);
}

static void teardown(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	if (t->e)
		uraid_engine_destroy(t->e);
	for (unsigned i = 0; i <= N; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
	free(t->ref);
}

/* A data page of each unit changed on its member file (the members change
 * under the array), so that a parity rewrite by `kind` changes the parity. */
static void change_under(struct t *t, const uint64_t *unit)
{
	for (unsigned i = 0; i < 4; i++) {
		unsigned m;
		uint64_t at;
		uint8_t g[PAGE];

		if (find_on_members(t, unit[i], &m, &at)) {
			CHECK(0, "%s: page %" PRIu64 " not found on the members", t->name, unit[i]);
			continue;
		}
		rng_fill(&t->rs, g, PAGE);
		int fd = open(t->paths[m], O_WRONLY);
		CHECK(fd >= 0 && pwrite(fd, g, PAGE, (off_t)at) == PAGE && fsync(fd) == 0,
		      "%s: rewrite member %u", t->name, m);
		if (fd >= 0)
			close(fd);
		memcpy(t->ref + unit[i], g, PAGE);
	}
}

static void sync_run(struct t *t, enum uraid_sync_kind kind)
{
	char err[256];

	CHECK(uraid_array_sync_start(t->a, kind, err, sizeof(err)) == 0, "%s: %s: %s", t->name,
	      uraid_sync_kind_name(kind), err);
	struct uraid_sync_status st = job_end(t, kind);
	CHECK(st.result == 0, "%s: %s ended with %d", t->name, uraid_sync_kind_name(kind),
	      st.result);
}

/* Slot 1's member changed: no kept page may count for it any more. */
static void slot_forgotten(struct t *t, const char *when)
{
	unsigned n = kept_counting(t, 1);

	CHECK(n == 0, "%s seed %" PRIu64 ": %s, %u kept heads still count their page of slot 1 "
	      "(%u kept)", t->name, t->seed, when, n, nkept(t));
}

static void run_case(const char *name, const char *level, bool ppl, uint64_t seed)
{
	struct t t = { .seed = seed, .rs = seed, .level = level, .ppl = ppl,
		       .npar = !strcmp(level, "6") ? 2 : 1, .bitmap = !strcmp(name, "re-add") };
	char err[256], label[64];

	snprintf(label, sizeof(label), "%s, RAID %s%s", name, level, ppl ? " with PPL" : "");
	t.name = label;
	printf("%s (seed %" PRIu64 ")\n", label, seed);
	if (setup(&t)) {
		CHECK(0, "%s: setup", label);
		teardown(&t);
		return;
	}
	uint64_t rows[4] = { 3, 17, 40, 41 };
	uint64_t unit[4];

	for (unsigned i = 0; i < 4; i++)
		unit[i] = keep_unit(&t, rows[i]);
	uint64_t h0 = hits(&t);

	CHECK(kept_counting(&t, 1) == 4, "%s: %u kept heads count their page of slot 1 after "
	      "the first writes, 4 expected", label, kept_counting(&t, 1));
	if (!strcmp(name, "hit")) {
		for (unsigned i = 0; i < 4; i++) {
			wr(&t, unit[i], PAGE);          /* the same page again */
			write_sibling(&t, unit[i]);
		}
		CHECK(hits(&t) >= h0 + 8, "%s: %" PRIu64 " writes of kept units took the kept pages, "
		      "8 expected", label, hits(&t) - h0);
	} else if (!strcmp(name, "repair")) {
		change_under(&t, unit);
		sync_run(&t, URAID_SYNC_REPAIR);
	} else if (!strcmp(name, "resync")) {
		change_under(&t, unit);
		sync_run(&t, URAID_SYNC_RESYNC);
	} else if (!strcmp(name, "discard")) {
		for (unsigned i = 0; i < 4; i++) {
			CHECK(uraid_array_discard(t.a, unit[i], t.row_bytes) == 0, "%s: discard", label);
			memset(t.ref + unit[i], 0, t.row_bytes);
		}
	} else if (!strcmp(name, "zeroes")) {
		for (unsigned i = 0; i < 4; i++) {
			CHECK(uraid_array_write_zeroes(t.a, unit[i], t.row_bytes) == 0, "%s: zeroes",
			      label);
			memset(t.ref + unit[i], 0, t.row_bytes);
		}
	} else if (!strcmp(name, "subpage")) {
		for (unsigned i = 0; i < 4; i++)
			wr(&t, unit[i] + 1024, 512);
	} else if (!strcmp(name, "wide")) {
		for (unsigned i = 0; i < 4; i++)
			wr(&t, unit[i], 64 * 1024 < t.row_bytes ? 64 * 1024 : t.row_bytes);
	} else if (!strcmp(name, "rebuild")) {
		CHECK(uraid_array_fail_member(t.a, 1, 0, err, sizeof(err)) == 0, "%s: fail: %s",
		      label, err);
		slot_forgotten(&t, "slot 1 failed");
		CHECK(uraid_array_add_member(t.a, t.paths[N], 0, err, sizeof(err)) >= 0,
		      "%s: add: %s", label, err);
		struct uraid_sync_status st = job_end(&t, URAID_SYNC_RECOVER);
		CHECK(st.result == 0, "%s: recovery ended with %d", label, st.result);
		slot_forgotten(&t, "slot 1 rebuilt onto a spare");
		for (unsigned i = 0; i < 4; i++)
			wr(&t, unit[i], PAGE);
	} else if (!strcmp(name, "replace")) {
		CHECK(uraid_array_replace_member(t.a, 1, t.paths[N], 0, err, sizeof(err)) == 0,
		      "%s: replace: %s", label, err);
		struct uraid_sync_status st = job_end(&t, URAID_SYNC_REPLACE);
		CHECK(st.result == 0, "%s: replacement ended with %d", label, st.result);
		slot_forgotten(&t, "slot 1's member replaced");
	} else if (!strcmp(name, "re-add")) {
		/* the bitmap's bits of the filling writes cleared (two sweeps of
		   1 s, wib.c), so that the re-add rebuilds only what comes next */
		usleep(3500 * 1000);
		CHECK(uraid_array_fail_member(t.a, 1, 0, err, sizeof(err)) == 0, "%s: fail: %s",
		      label, err);
		CHECK(uraid_array_remove_member(t.a, 1, err, sizeof(err)) == 0, "%s: remove: %s",
		      label, err);
		/* rows far from the kept ones (other bitmap chunks: 64 KiB of member) */
		for (uint64_t r = 100; r < 104; r++)
			wr(&t, r * t.row_bytes + PAGE, 2 * PAGE);
		int rc = uraid_array_add_member(t.a, t.paths[1], 0, err, sizeof(err));
		CHECK(rc == URAID_ADD_READDED, "%s: re-add: %d %s", label, rc, rc < 0 ? err : "");
		struct uraid_sync_status st = job_end(&t, URAID_SYNC_RECOVER);
		CHECK(st.result == 0, "%s: recovery ended with %d", label, st.result);
		/* the kept rows were not rebuilt (the bitmap does not mark them):
		   their heads are still kept, and only the generation tells */
		CHECK(nkept(&t) >= 4, "%s: %u heads kept after the re-add, the 4 rows' expected "
		      "(was the recovery guided by the bitmap?)", label, nkept(&t));
		slot_forgotten(&t, "slot 1's member re-added");
	} else if (!strcmp(name, "reshape")) {
		struct uraid_reshape r = { .new_level = t.npar == 2 ? 6 : 5, .new_raid_disks = N + 1,
					   .new_chunk_sectors = CHUNK_KIB * 2 };
		struct uraid_array_status as;

		uraid_array_status(t.a, &as);
		r.new_layout = as.layout;
		CHECK(uraid_array_add_member(t.a, t.paths[N], 0, err, sizeof(err)) == 0,
		      "%s: add: %s", label, err);
		CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == 0,
		      "%s: reshape: %s", label, err);
		struct uraid_sync_status st = job_end(&t, URAID_SYNC_RESHAPE);
		CHECK(st.result == 0, "%s: reshape ended with %d", label, st.result);
		uint64_t size = uraid_array_size(t.a);
		uint8_t *ref = realloc(t.ref, size);

		CHECK(ref && size >= t.size, "%s: %" PRIu64 " bytes after the reshape", label, size);
		if (ref) {
			/* the new space is read back as whatever it holds: taken as it is */
			if (size > t.size)
				CHECK(uraid_array_pread(t.a, ref + t.size, size - t.size, t.size) == 0,
				      "%s: read the new space", label);
			t.ref = ref;
			t.size = size;
		}
	}
	for (unsigned i = 0; i < 4; i++)
		write_sibling(&t, unit[i]);
	check_data(&t, "after the writes");
	check_parity(&t);
	CHECK(uraid_array_fail_member(t.a, 0, 0, err, sizeof(err)) == 0, "%s: fail slot 0: %s",
	      label, err);
	check_data(&t, "with slot 0 failed");
	teardown(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 19;
	static const char *const cases[] = { "hit", "repair", "resync", "discard", "zeroes",
					     "subpage", "wide", "rebuild", "replace", "re-add",
					     "reshape" };
	unsigned k = 0;

	printf("test_stripe_rows: seed %" PRIu64 "\n", seed);
	for (unsigned l = 0; l < 2; l++)
		for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			run_case(cases[i], l ? "6" : "5", false, seed + k++);
	run_case("hit", "5", true, seed + k++);
	run_case("rebuild", "5", true, seed + k++);
	return failures ? 1 : 0;
}
