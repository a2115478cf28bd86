// SPDX-License-Identifier: MIT
/*
 * The life of a resync that is needed (an array assembled dirty), in-process
 * with the engine's threads, on a RAID 5 of 4 members created dirty (zeroed
 * member files, resync_offset 0):
 *
 * 1. A member fails under the resync and a spare is rebuilt: the resync then
 *    goes on by itself from its checkpoint and completes (md resumes one
 *    while recovery_cp < MaxSector), and the array closes clean.
 * 2. Without clients, the resync's checkpoints reach the superblocks while
 *    it runs (resync_offset on disk moves), so a kill keeps the progress.
 * 3. A resync stopped on request does not start again by itself; the end of
 *    another job (a check) resumes it.
 * 4. A completed repair leaves no resync needed (md sets recovery_cp to
 *    MaxSector), and the array closes clean.
 * 5. Throttling limits: a minimum above the maximum in effect is refused
 *    (-EINVAL), either given alone or both at once.
 *
 * No timing is asserted: waits are for states, with a generous deadline.
 *
 *   test_sync_resume
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "../support/array_fixture.h"
#include "../support/check.h"

#define MIB (1u << 20)
#define N 4
#define MEMBER_MIB 16u
#define SLOW_KIB 2000u          /* a resync of 16 MiB members takes seconds at this */
#define DEADLINE_MS 120000

struct t {
	char name[64];
	char dir[64];
	char paths[N][96];
	char spare[96];
	struct uraid_engine *e;
	struct uraid_array *a;
};

/* resync_offset in member 0's superblock on disk; UINT64_MAX - 1 if unreadable. */
static uint64_t disk_resync_offset(struct t *t)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	uint64_t off = UINT64_MAX - 1;
	int fd = open(t->paths[0], O_RDONLY);

	if (fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0)
		off = p->loc[p->chosen].sb.resync_offset;
	if (fd >= 0)
		close(fd);
	free(p);
	return off;
}

/* A page of nonzero bytes in the middle: members that are not all zeroes
 * make the array dirty at creation (zeroed ones are consistent already). */
static int junk(const char *path, unsigned i)
{
	uint8_t page[4096];
	int fd = open(path, O_WRONLY);

	memset(page, 0x5a + 3 * (int)i, sizeof(page));   /* parity wrong there */
	int rc = fd >= 0 && pwrite(fd, page, sizeof(page), (off_t)MEMBER_MIB * MIB / 2) ==
		 (ssize_t)sizeof(page) ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

static int setup(struct t *t, const char *name)
{
	const char *p[N];

	snprintf(t->name, sizeof(t->name), "%s", name);
	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-syncres.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], MEMBER_MIB * MIB) || junk(t->paths[i], i))
			return -1;
	}
	snprintf(t->spare, sizeof(t->spare), "%s/spare.img", t->dir);
	if (fixture_make_file(t->spare, MEMBER_MIB * MIB))
		return -1;
	/* dirty: no --assume-clean, so resync_offset 0 and a resync needed */
	struct uraid_create_opts o = {
		.level = URAID_LEVEL_5, .raid_disks = N, .chunk_kib = 64, .minor = 2,
		.bitmap = URAID_BITMAP_NONE, .paths = p, .npaths = N, .homehost = "<none>",
	};
	char err[256];
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", t->name, err);
		return -1;
	}
	if (disk_resync_offset(t) != 0) {
		fprintf(stderr, "%s: created clean\n", t->name);
		return -1;
	}
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (uraid_engine_create(&eo, &t->e))
		return -1;
	struct uraid_assemble_opts ao = { .paths = p, .npaths = N, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err))) {
		fprintf(stderr, "%s: assemble: %s\n", t->name, err);
		return -1;
	}
	return 0;
}

static void teardown(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
	if (t->e)
		uraid_engine_destroy(t->e);
	t->e = NULL;
}

static struct uraid_sync_status sync_status(struct t *t)
{
	struct uraid_sync_status st;
	uraid_array_sync_status(t->a, &st);
	return st;
}

static bool resync_needed(struct t *t)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	bool r = uraid_array_status(t->a, as) == 0 && as->resync_needed;
	free(as);
	return r;
}

/*
 * A resync running (the engine starts one for a dirty array by itself;
 * started here if not, for a test that must fail on its own assertion) and
 * past its start.
 */
static bool resync_running(struct t *t)
{
	char err[256];

	uraid_array_sync_speed(t->a, 0, SLOW_KIB);
	int rc = uraid_array_sync_start(t->a, URAID_SYNC_RESYNC, err, sizeof(err));
	CHECK(rc == 0 || rc == -EBUSY, "%s: resync: %s", t->name, err);
	for (int ms = 0; ms < DEADLINE_MS; ms += 10) {
		struct uraid_sync_status st = sync_status(t);
		if (st.running && st.kind == URAID_SYNC_RESYNC && st.done_bytes > 0)
			return true;
		usleep(10000);
	}
	CHECK(0, "%s: no resync running", t->name);
	return false;
}

/* Until nothing runs and no resync is needed, or the deadline. */
static bool wait_resynced(struct t *t)
{
	for (int ms = 0; ms < DEADLINE_MS; ms += 10) {
		struct uraid_sync_status st = sync_status(t);
		if (!st.running && !resync_needed(t))
			return true;
		usleep(10000);
	}
	return false;
}

static bool wait_idle(struct t *t)
{
	for (int ms = 0; ms < DEADLINE_MS; ms += 10) {
		if (!sync_status(t).running)
			return true;
		usleep(10000);
	}
	return false;
}

static void closes_clean(struct t *t)
{
	CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
	uint64_t off = disk_resync_offset(t);
	CHECK(off == UINT64_MAX, "%s: closed with resync_offset %" PRIu64 ", not MaxSector",
	      t->name, off);
}

static void case_rebuild_then_resume(void)
{
	struct t t = { 0 };
	char err[256];

	if (setup(&t, "member fails under the resync") || !resync_running(&t))
		goto out;
	CHECK(uraid_array_add_member(t.a, t.spare, 0, err, sizeof(err)) == 0, "%s: add: %s",
	      t.name, err);
	int idx = uraid_array_find_member(t.a, t.paths[1]);
	CHECK(idx >= 0 && uraid_array_fail_member(t.a, (unsigned)idx, 0, err, sizeof(err)) == 0,
	      "%s: fail: %s", t.name, err);
	uraid_array_sync_speed(t.a, 0, 400000);
	CHECK(wait_resynced(&t), "%s: after the rebuild the resync did not go on to its end "
	      "(resync needed: %d)", t.name, resync_needed(&t));
	struct uraid_array_status *as = malloc(sizeof(*as));
	CHECK(uraid_array_status(t.a, as) == 0 && as->degraded == 0,
	      "%s: the spare was not rebuilt", t.name);
	free(as);
	closes_clean(&t);
out:
	teardown(&t);
}

static void case_checkpoint_on_disk(void)
{
	struct t t = { 0 };

	if (setup(&t, "checkpoint on disk") || !resync_running(&t))
		goto out;
	uint64_t before = disk_resync_offset(&t), off = before;
	bool running = true;
	/* a checkpoint is taken every few seconds; the resync takes longer */
	while (running && (off == before || off == UINT64_MAX - 1)) {
		usleep(20000);
		off = disk_resync_offset(&t);
		running = sync_status(&t).running;
	}
	CHECK(off != before && off > 0 && off < UINT64_MAX - 1, "%s: resync_offset on disk "
	      "stayed %" PRIu64 " while the resync ran (now %" PRIu64 ")", t.name, before, off);
	struct uraid_sync_status st = sync_status(&t);
	CHECK(off <= st.done_bytes / 512, "%s: resync_offset on disk %" PRIu64 " beyond the "
	      "resync (%" PRIu64 " sectors done)", t.name, off, st.done_bytes / 512);
out:
	teardown(&t);
}

static void case_cancel_holds(void)
{
	struct t t = { 0 };
	char err[256];

	if (setup(&t, "stopped on request") || !resync_running(&t))
		goto out;
	CHECK(uraid_array_sync_cancel(t.a) == 0, "%s: cancel", t.name);
	CHECK(wait_idle(&t), "%s: the resync did not stop", t.name);
	usleep(300000);         /* many engine ticks: none may start it again */
	struct uraid_sync_status st = sync_status(&t);
	CHECK(!st.running && st.kind == URAID_SYNC_RESYNC && st.result == -ECANCELED,
	      "%s: a stopped resync started again by itself (%s, running %d)", t.name,
	      uraid_sync_kind_name(st.kind), st.running);
	CHECK(resync_needed(&t), "%s: a stopped resync counts as done", t.name);
	uraid_array_sync_speed(t.a, 0, 400000);
	int rc = uraid_array_sync_start(t.a, URAID_SYNC_CHECK, err, sizeof(err));
	CHECK(rc == 0, "%s: check: %s", t.name, err);
	CHECK(wait_resynced(&t), "%s: after a check the resync did not go on to its end", t.name);
	st = sync_status(&t);
	CHECK(st.kind == URAID_SYNC_RESYNC && st.result == 0, "%s: last job %s result %d",
	      t.name, uraid_sync_kind_name(st.kind), st.result);
	closes_clean(&t);
out:
	teardown(&t);
}

static void case_repair_clears(void)
{
	struct t t = { 0 };
	char err[256];

	if (setup(&t, "repair") || !resync_running(&t))
		goto out;
	uraid_array_sync_cancel(t.a);
	CHECK(wait_idle(&t), "%s: the resync did not stop", t.name);
	uraid_array_sync_speed(t.a, 0, 400000);
	int rc = uraid_array_sync_start(t.a, URAID_SYNC_REPAIR, err, sizeof(err));
	CHECK(rc == 0, "%s: repair: %s", t.name, err);
	CHECK(wait_idle(&t), "%s: the repair did not end", t.name);
	struct uraid_sync_status st = sync_status(&t);
	CHECK(st.kind == URAID_SYNC_REPAIR && st.result == 0, "%s: last job %s result %d",
	      t.name, uraid_sync_kind_name(st.kind), st.result);
	CHECK(!resync_needed(&t), "%s: a completed repair left a resync needed", t.name);
	closes_clean(&t);
out:
	teardown(&t);
}

static void case_speed_limits(void)
{
	struct t t = { 0 };

	if (setup(&t, "speed limits"))
		goto out;
	uraid_array_sync_cancel(t.a);
	CHECK(uraid_array_sync_speed(t.a, 300000, 0) == -EINVAL,
	      "%s: a minimum above the default maximum accepted", t.name);
	CHECK(uraid_array_sync_speed(t.a, 0, 500) == -EINVAL,
	      "%s: a maximum below the default minimum accepted", t.name);
	CHECK(uraid_array_sync_speed(t.a, 5000, 100) == -EINVAL,
	      "%s: min 5000 with max 100 accepted", t.name);
	CHECK(uraid_array_sync_speed(t.a, 0, 5000) == 0, "%s: max 5000 refused", t.name);
	CHECK(uraid_array_sync_speed(t.a, 300000, 0) == -EINVAL,
	      "%s: a minimum above the maximum set (5000) accepted", t.name);
	CHECK(uraid_array_sync_speed(t.a, 5000, 0) == 0, "%s: min = max refused", t.name);
	CHECK(uraid_array_sync_speed(t.a, 400000, 500000) == 0,
	      "%s: both raised at once refused", t.name);
	struct uraid_sync_status st = sync_status(&t);
	CHECK(st.min_kib_s == 400000 && st.max_kib_s == 500000, "%s: limits %u..%u", t.name,
	      st.min_kib_s, st.max_kib_s);
out:
	teardown(&t);
}

int main(void)
{
	case_rebuild_then_resume();
	case_checkpoint_on_disk();
	case_cancel_holds();
	case_repair_clears();
	case_speed_limits();
	char dir[64];
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-syncres.%d", getpid());
	for (unsigned i = 0; i < N; i++) {
		char p[96];
		snprintf(p, sizeof(p), "%s/m%u.img", dir, i);
		unlink(p);
	}
	char p[96];
	snprintf(p, sizeof(p), "%s/spare.img", dir);
	unlink(p);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	else
		printf("test_sync_resume: all passed\n");
	return failures ? 1 : 0;
}
