// SPDX-License-Identifier: MIT
/*
 * RAID 4/5/6 background work runs several rows at once, one lane per
 * reactor, and the rows end in any order; the job's position (the rebuilt
 * point) moves over them in order. A row that ends before the one below it
 * must stay locked until the point passes it: let go earlier, a client
 * write to it would find it above the point and skip the new member, which
 * would then hold stale data there.
 *
 * Each case rebuilds (or replaces) slot 1 on an engine with 4 reactors,
 * rows of 4 KiB chunks and no throttle, while client threads write pages
 * in the rows just above the rebuilt point, where the lanes are at work.
 * Afterwards: a check finds 0 mismatches, the data reads back as written,
 * and again with another slot failed (read through the new member).
 * Two cases end the job early, leaving rows that are over but not passed
 * yet to be let go without moving the rebuilt point over them: a stop
 * part-way (the rebuild then starts again by itself and completes), and a
 * new member whose writes fail in the middle rows (it is failed, the array
 * goes on degraded with its data).
 *
 *   test_sync_lanes [SEED [FILTER]]
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "engine/core/array.h"       /* a fault on the new member */
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 8
#define PAGE 4096u
#define MEMBER_MIB 24u
#define CHUNK_KIB 4u
#define NWRITERS 3
#define AHEAD_ROWS 40u          /* writes land this many rows above the rebuilt point, at most */
#define DEADLINE_S 120          /* for a job to end */

enum ending {
	END_COMPLETE,                   /* the job runs to its end */
	END_STOPPED,                    /* stopped part-way, then started again by itself */
	END_TARGET_FAILS,               /* the new member's writes fail in the middle rows */
};

static const char *const ending_name[] = { "", " stopped", " new member fails" };

struct config {
	const char *level;
	unsigned n;
	enum uraid_sync_kind kind;      /* RECOVER: onto a spare; REPLACE: slot 1 replaced */
	enum ending ending;
};

struct t {
	uint64_t seed;
	char name[64];
	char dir[64];
	char paths[MAXM + 1][96];       /* the members by slot, then the new one */
	unsigned n, data_disks;
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *ref;
	uint64_t size, row_bytes;
	_Atomic bool stop;
	_Atomic uint64_t frontier_row;  /* the rebuilt point, in rows */
};

struct writer {
	struct t *t;
	unsigned id;
	uint64_t rs;
	uint64_t writes, errors;
};

/*
 * Pages owned by this writer (page number % NWRITERS == id), so that the
 * reference holds what the last write of each page put there.
 */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct t *t = w->t;
	uint8_t *buf = aligned_alloc(PAGE, PAGE);
	uint64_t pages = t->size / PAGE, span = AHEAD_ROWS * t->row_bytes / PAGE;

	while (!atomic_load(&t->stop)) {
		uint64_t first = atomic_load(&t->frontier_row) * t->row_bytes / PAGE;
		uint64_t page = first + rng_next(&w->rs) % span;
		page += (NWRITERS + w->id - page % NWRITERS) % NWRITERS;
		if (page >= pages)
			continue;
		rng_fill(&w->rs, buf, PAGE);
		if (uraid_array_pwrite(t->a, buf, PAGE, page * PAGE, 0) != 0) {
			w->errors++;
			continue;
		}
		memcpy(t->ref + page * PAGE, buf, PAGE);
		w->writes++;
	}
	free(buf);
	return NULL;
}

static struct uraid_sync_status status(struct t *t)
{
	struct uraid_sync_status st;
	uraid_array_sync_status(t->a, &st);
	return st;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Keep the writers' target on the point of the job of `kind` until it ends
 * (until it is past `stop_at` bytes per member, if that is not 0); the last
 * status seen.
 */
static struct uraid_sync_status follow(struct t *t, enum uraid_sync_kind kind, uint64_t stop_at)
{
	struct uraid_sync_status st = status(t);
	uint64_t chunk = CHUNK_KIB * 1024;
	double deadline = now_s() + DEADLINE_S;

	while (!(st.kind == kind && !st.running) && now_s() < deadline) {
		if (st.kind == kind && st.running) {
			atomic_store(&t->frontier_row, st.done_bytes / chunk);
			if (stop_at && st.done_bytes >= stop_at)
				return st;
		}
		usleep(50);
		st = status(t);
	}
	CHECK(st.kind == kind && !st.running, "%s: no %s ended in %d s", t->name,
	      uraid_sync_kind_name(kind), DEADLINE_S);
	return st;
}

static void check_data(struct t *t, const char *when)
{
	uint8_t *buf = aligned_alloc(PAGE, MIB);

	for (uint64_t off = 0; off < t->size; off += MIB) {
		uint64_t len = t->size - off < MIB ? t->size - off : MIB;
		int rc = uraid_array_pread(t->a, buf, len, off);
		if (rc || memcmp(buf, t->ref + off, len)) {
			uint64_t at = off;
			while (!rc && at < off + len && !memcmp(buf + (at - off), t->ref + at, PAGE))
				at += PAGE;
			CHECK(0, "%s seed %" PRIu64 " %s: the array's data differs at %" PRIu64
			      " (row %" PRIu64 ", read %d)", t->name, t->seed, when, at,
			      at / t->row_bytes, rc);
			break;
		}
	}
	free(buf);
}

static void check_clean(struct t *t)
{
	char err[256];
	int rc = uraid_array_sync_start(t->a, URAID_SYNC_CHECK, err, sizeof(err));

	CHECK(rc == 0, "%s: check: %s", t->name, err);
	struct uraid_sync_status st = follow(t, URAID_SYNC_CHECK, 0);
	CHECK(st.result == 0 && st.mismatch_sectors == 0, "%s seed %" PRIu64 ": check after "
	      "the %s: result %d, mismatch_cnt %" PRIu64 " (0 expected: the new member missed "
	      "writes)", t->name, t->seed, t->name, st.result, st.mismatch_sectors);
}

/* Slot 1 gets a new member (rebuilt or copied) while the writers run. */
static void run_job(struct t *t, const struct config *c)
{
	char err[256];
	int rc;

	/* slow at first, so that the fault is in place before the rows it covers */
	uraid_array_sync_speed(t->a, 1000, 1000);
	if (c->kind == URAID_SYNC_RECOVER) {
		rc = uraid_array_fail_member(t->a, 1, 0, err, sizeof(err));
		CHECK(rc == 0, "%s: fail slot 1: %s", t->name, err);
		rc = uraid_array_add_member(t->a, t->paths[t->n], 0, err, sizeof(err));
	} else {
		rc = uraid_array_replace_member(t->a, 1, t->paths[t->n], 0, err, sizeof(err));
	}
	CHECK(rc >= 0, "%s: start: %s", t->name, err);
	if (c->ending == END_TARGET_FAILS) {
		struct array *a = (struct array *)t->a;
		int i = uraid_array_find_member(t->a, t->paths[t->n]);
		uint64_t member_sectors = (uint64_t)MEMBER_MIB * MIB / 512;
		struct uraid_fault f = { .kind = URAID_FAULT_WRITE, .first_sector = member_sectors * 2 / 5,
					 .last_sector = member_sectors * 3 / 5 };
		CHECK(i >= 0, "%s: the new member is not found", t->name);
		if (i >= 0)
			member_set_fault(a->members[i], &f);
	}
	uraid_array_sync_speed(t->a, 4000000, 4000000);  /* no throttle */

	struct writer w[NWRITERS];
	pthread_t th[NWRITERS];
	for (unsigned i = 0; i < NWRITERS; i++) {
		w[i] = (struct writer){ .t = t, .id = i, .rs = t->seed * 31 + i };
		pthread_create(&th[i], NULL, writer_main, &w[i]);
	}
	struct uraid_sync_status st;
	if (c->ending == END_STOPPED) {
		st = follow(t, c->kind, (uint64_t)MEMBER_MIB * MIB / 2);
		CHECK(uraid_array_sync_cancel(t->a) == 0, "%s: stop the %s", t->name,
		      uraid_sync_kind_name(c->kind));
		/* it ends stopped, then starts again from its recovery_offset */
		double deadline = now_s() + DEADLINE_S;
		do {
			usleep(100);
			st = status(t);
		} while (!(st.kind == c->kind && st.running == false && st.result == 0) &&
			 now_s() < deadline);
	}
	st = follow(t, c->kind, 0);
	atomic_store(&t->stop, true);
	uint64_t writes = 0, errors = 0;
	for (unsigned i = 0; i < NWRITERS; i++) {
		pthread_join(th[i], NULL);
		writes += w[i].writes;
		errors += w[i].errors;
	}
	printf("%s: %" PRIu64 " client writes during the %s (%" PRIu64 " MiB per member)\n",
	       t->name, writes, uraid_sync_kind_name(c->kind), st.done_bytes >> 20);
	if (c->ending == END_TARGET_FAILS)
		CHECK(st.result == -EIO, "%s: the %s ended with %d (-EIO expected: the new member's "
		      "writes fail)", t->name, uraid_sync_kind_name(c->kind), st.result);
	else
		CHECK(st.result == 0, "%s: the %s ended with %d", t->name,
		      uraid_sync_kind_name(c->kind), st.result);
	CHECK(errors == 0, "%s: %" PRIu64 " client writes failed", t->name, errors);
	CHECK(writes > 0, "%s: no client write ran during the job", t->name);
}

static void run_config(const struct config *c, uint64_t seed)
{
	struct t t = { .seed = seed };
	const char *devs[MAXM];
	char err[256];
	uint64_t rs = seed;

	snprintf(t.name, sizeof(t.name), "raid%s n=%u %s%s", c->level, c->n,
		 uraid_sync_kind_name(c->kind), ending_name[c->ending]);
	snprintf(t.dir, sizeof(t.dir), "/dev/shm/uraid-lanes.%d", getpid());
	mkdir(t.dir, 0700);
	t.n = c->n;
	t.data_disks = c->n - (strcmp(c->level, "6") ? 1 : 2);
	t.row_bytes = (uint64_t)t.data_disks * CHUNK_KIB * 1024;
	for (unsigned i = 0; i <= c->n; i++) {
		snprintf(t.paths[i], sizeof(t.paths[i]), "%s/m%u.img", t.dir, i);
		if (i < c->n)
			devs[i] = t.paths[i];
		if (fixture_make_file(t.paths[i], (uint64_t)MEMBER_MIB * MIB))
			goto out;
	}
	struct uraid_engine_opts eo = { .reactors = 4, .flags = URAID_ENGINE_THREADS };
	if (fixture_create_array(t.name, c->level, NULL, c->n, CHUNK_KIB, 2, devs) ||
	    uraid_engine_create(&eo, &t.e)) {
		CHECK(0, "%s: setup", t.name);
		goto out;
	}
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = c->n, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t.e, &ao, &t.a, err, sizeof(err)) != 0) {
		CHECK(0, "%s: assemble: %s", t.name, err);
		goto out;
	}
	uraid_array_sync_speed(t.a, 4000000, 4000000);  /* no throttle */
	t.size = uraid_array_size(t.a);
	t.ref = malloc(t.size);
	rng_fill(&rs, t.ref, t.size);
	CHECK(uraid_array_pwrite(t.a, t.ref, t.size, 0, 0) == 0, "%s: fill", t.name);

	run_job(&t, c);
	if (c->ending == END_TARGET_FAILS) {
		struct uraid_array_status *as = malloc(sizeof(*as));
		int i = uraid_array_find_member(t.a, t.paths[c->n]);
		bool ok = i >= 0 && uraid_array_status(t.a, as) == 0;
		CHECK(ok && as->members[i].state == URAID_MEMBER_FAULTY && as->degraded == 1,
		      "%s: the new member's state is %d and %u slots are missing (faulty, %d, and 1 "
		      "expected)", t.name, ok ? (int)as->members[i].state : -1, ok ? as->degraded : 0,
		      (int)URAID_MEMBER_FAULTY);
		free(as);
		check_data(&t, "degraded, the new member failed");
		goto out;
	}
	check_clean(&t);
	check_data(&t, "after the job");
	/* the new member's data read, or used to rebuild another slot's */
	CHECK(uraid_array_fail_member(t.a, 0, 0, err, sizeof(err)) == 0, "%s: fail slot 0: %s",
	      t.name, err);
	check_data(&t, "with slot 0 failed");
out:
	if (t.a)
		CHECK(uraid_array_close(t.a) == 0, "%s: close", t.name);
	if (t.e)
		uraid_engine_destroy(t.e);
	for (unsigned i = 0; i <= c->n; i++)
		unlink(t.paths[i]);
	rmdir(t.dir);
	free(t.ref);
}

static const struct config configs[] = {
	{ "5", 4, URAID_SYNC_RECOVER, END_COMPLETE },
	{ "6", 5, URAID_SYNC_RECOVER, END_COMPLETE },
	{ "4", 4, URAID_SYNC_RECOVER, END_COMPLETE },
	{ "5", 4, URAID_SYNC_REPLACE, END_COMPLETE },
	{ "6", 5, URAID_SYNC_REPLACE, END_COMPLETE },
	{ "5", 4, URAID_SYNC_RECOVER, END_STOPPED },
	{ "6", 5, URAID_SYNC_RECOVER, END_TARGET_FAILS },
};


int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261130;
	const char *filter = argc > 2 ? argv[2] : NULL;

	printf("test_sync_lanes: seed %" PRIu64 " (rerun: %s %" PRIu64 " [FILTER])\n", seed,
	       argv[0], seed);
	fflush(stdout);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		const struct config *c = &configs[i];
		char label[64];
		snprintf(label, sizeof(label), "raid%s n=%u %s%s", c->level, c->n,
			 uraid_sync_kind_name(c->kind), ending_name[c->ending]);
		if (filter && !strstr(label, filter))
			continue;
		run_config(c, seed + i);
	}
	printf("test_sync_lanes: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
