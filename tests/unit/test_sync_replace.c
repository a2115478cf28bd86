// SPDX-License-Identifier: MIT
/*
 * Background work meets a replacement (uraid replace, md's want_replacement,
 * feature 0x10) whose writes fail, on RAID 5, 6, 1 and 10 (n2), in-process
 * with the engine's threads. Slot 1 is the one replaced. Before each repair
 * some redundancy is corrupted on the member files (RAID 4/5/6: one parity
 * page in distinct rows; RAID 1/10: one page of the second copy in distinct
 * 64 KiB blocks), in the upper half of the array, so md's mismatch_cnt is
 * known exactly; client writes go to the lower half while the repair runs.
 *
 * 1. A replacement requested while a repair runs waits (one job at a time)
 *    and holds no rows yet; it vanishes and a flush fails it: it alone is
 *    failed, the repair goes on to its end with the expected mismatch_cnt,
 *    no replace starts, the old member keeps its slot in sync.
 * 2. The same with a replacement that fails every write: nothing of the
 *    repair or of the clients reaches it (no write error during the repair);
 *    afterwards its copy starts by itself, fails at its first write and
 *    stops, the replacement is failed, the old member keeps the slot.
 * 3. A copy stopped part-way, then a repair: the copy starts again, and the
 *    replacement's superblock on disk says so (recovery_offset 0) as soon as
 *    the repair has started, before client writes stop reaching it; the
 *    copy then completes and the replacement holds the slot with the data.
 * 4. After a replace has completed the new member holds the slot: a repair
 *    whose rewrite of that member fails fails the member (as any write error
 *    does, and as md_error does) and the array goes on degraded with its
 *    data; a spare then rebuilds it.
 * After each: a check finds 0 mismatches and the array reads back as written.
 *
 *   test_sync_replace [SEED [FILTER]]
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

#include "engine/core/array.h"       /* a fault on a member that holds no slot */
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 8
#define NEXTRA 5                /* new members: replacements and a spare */
#define NCORRUPT 8
#define SLOT 1                  /* the slot replaced */

struct config {
	const char *level;
	const char *layout;
	unsigned n;
	unsigned chunk_kib;
};

struct t {
	uint64_t seed, rs;
	char name[64];
	char dir[64];
	char paths[MAXM][96];       /* the slots' members, by slot */
	char extra[NEXTRA][96];
	char old[96];               /* slot 1's first member, once replaced */
	unsigned n;
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *ref;
	uint64_t size;
};

static int create(struct t *t, const struct config *c)
{
	const char *devs[MAXM];

	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-syncr.%d", getpid());
	mkdir(t->dir, 0700);
	t->n = c->n;
	for (unsigned i = 0; i < c->n; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		devs[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], 4 * MIB))
			return -1;
	}
	for (unsigned i = 0; i < NEXTRA; i++) {
		snprintf(t->extra[i], sizeof(t->extra[i]), "%s/x%u.img", t->dir, i);
		if (fixture_make_file(t->extra[i], 4 * MIB))
			return -1;
	}
	return fixture_create_array(t->name, c->level, c->layout, c->n, c->chunk_kib, 2, devs);
}

static void close_array(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
}

static bool open_array(struct t *t)
{
	const char *p[MAXM];
	char err[256];

	close_array(t);
	for (unsigned i = 0; i < t->n; i++)
		p[i] = t->paths[i];
	struct uraid_assemble_opts ao = { .paths = p, .npaths = t->n, .idle_clean_ms = 20 };
	int rc = uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err));
	CHECK(rc == 0, "%s: assemble: %s", t->name, err);
	return rc == 0;
}

/* The geometry and each slot's data offset, from the members' superblocks. */
static int read_geom(struct t *t, struct uraid_geom *g, uint64_t *data_offset)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	struct uraid_sb sb = { 0 };
	char why[200];

	for (unsigned i = 0; i < t->n; i++) {
		int fd = open(t->paths[i], O_RDONLY);
		int rc = fd >= 0 ? uraid_probe_fd(fd, p) : -1;
		if (fd >= 0)
			close(fd);
		if (rc || p->chosen < 0) {
			free(p);
			return -1;
		}
		sb = p->loc[p->chosen].sb;
		unsigned role = uraid_sb_role(&sb);
		if (role < MAXM)
			data_offset[role] = sb.data_offset;
	}
	free(p);
	struct uraid_geom_params gp = { .level = sb.level, .layout = sb.layout,
		.raid_disks = sb.raid_disks, .chunk_sectors = sb.chunksize, .dev_sectors = sb.size };
	return uraid_geom_init(g, &gp, why, sizeof(why));
}

static void put_junk(struct t *t, unsigned slot, uint64_t at)
{
	uint8_t junk[4096];

	rng_fill(&t->rs, junk, sizeof(junk));
	int fd = open(t->paths[slot], O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, junk, sizeof(junk), (off_t)at) == (ssize_t)sizeof(junk),
	      "%s: corrupt %s", t->name, t->paths[slot]);
	if (fd >= 0)
		close(fd);
}

/*
 * With the array closed: NCORRUPT pages of redundancy made wrong in the
 * upper half, each where a repair rewrites it (a parity page; a page of the
 * second copy, which a repair overwrites from the first); only on `slot`'s
 * member unless slot < 0. Returns the mismatch_cnt md reports for them.
 */
static uint64_t corrupt(struct t *t, int slot)
{
	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t off[MAXM] = { 0 }, used[NCORRUPT], expect = 0;

	if (read_geom(t, g, off)) {
		CHECK(0, "%s: geometry", t->name);
		free(g);
		return 0;
	}
	bool parity = g->level == 4 || g->level == 5 || g->level == 6;
	/* rows (RAID 4/5/6) or 64 KiB compare blocks (RAID 1/10, chunk 64 KiB) */
	uint64_t unit = parity ? g->chunk_sectors : 128;
	uint64_t nunits = parity ? g->dev_sectors / unit : g->array_sectors / unit;
	unsigned count = slot >= 0 ? NCORRUPT / 2 : NCORRUPT;   /* RAID 5: a quarter of the rows */
	for (unsigned i = 0; i < count; i++) {
		uint64_t u, page, at = 0;
		unsigned victim = 0, tries = 0;
		bool ok;
		do {
			u = nunits / 2 + rng_next(&t->rs) % (nunits - nunits / 2);
			page = rng_next(&t->rs) % (unit / 8);
			ok = true;
			for (unsigned k = 0; k < i; k++)
				ok &= used[k] != u;
			if (parity) {
				struct uraid_stripe st;
				uraid_geom_stripe(g, u, &st);
				/* RAID 6: P or Q, alternately (a page counts once either way) */
				victim = (unsigned)(st.q_slot >= 0 && (i % 2 || slot == st.q_slot)
						    ? st.q_slot : st.p_slot);
				at = u * unit + page * 8;
			} else {
				struct uraid_loc loc[MAXM];
				uraid_geom_map(g, u * unit + page * 8, loc, MAXM);
				victim = loc[1].slot;
				at = loc[1].sector;
			}
			if (slot >= 0 && victim != (unsigned)slot)
				ok = false;
		} while (!ok && ++tries < 100000);
		if (!ok) {
			CHECK(0, "%s: nowhere to corrupt", t->name);
			break;
		}
		used[i] = u;
		put_junk(t, victim, (off[victim] + at) * 512);
		expect += parity ? 8 : 128;
	}
	free(g);
	return expect;
}

/* A few random writes to the lower half (none in a corrupted part), into ref too. */
static void io_batch(struct t *t)
{
	uint64_t half = t->size / 2;
	unsigned n = 1 + rng_next(&t->rs) % 4;

	for (unsigned i = 0; i < n; i++) {
		uint64_t len = (1 + rng_next(&t->rs) % 16) * 4096;
		uint64_t off = rng_next(&t->rs) % ((half - len) / 4096) * 4096;
		uint8_t *buf = aligned_alloc(4096, len);
		rng_fill(&t->rs, buf, len);
		int rc = uraid_array_pwrite(t->a, buf, len, off, 0);
		CHECK(rc == 0, "%s seed %" PRIu64 ": write at %" PRIu64 ": %d", t->name, t->seed, off,
		      rc);
		memcpy(t->ref + off, buf, len);
		free(buf);
	}
}

/* Wait for the end of a job of `kind` (client writes meanwhile when io). */
static struct uraid_sync_status wait_job(struct t *t, enum uraid_sync_kind kind, bool io)
{
	struct uraid_sync_status st;

	for (int i = 0; i < 20000; i++) {
		uraid_array_sync_status(t->a, &st);
		if (st.kind == kind && !st.running)
			break;
		if (io)
			io_batch(t);
		else
			usleep(1000);
	}
	CHECK(st.kind == kind && !st.running, "%s: no %s ended (last: %s, running %d)", t->name,
	      uraid_sync_kind_name(kind), uraid_sync_kind_name(st.kind), st.running);
	return st;
}

/*
 * Up to 5 s, until the status shows a job of `kind` (NONE: any), running
 * with some work done when `progress`.
 */
static void wait_seen(struct t *t, enum uraid_sync_kind kind, bool progress)
{
	struct uraid_sync_status st;

	for (int i = 0; i < 5000; i++) {
		uraid_array_sync_status(t->a, &st);
		if ((kind == URAID_SYNC_NONE || st.kind == kind) &&
		    (!progress || (st.running && st.done_bytes > 0)))
			return;
		usleep(1000);
	}
}

/* A repair, slow, until it has done some of its work. */
static void start_slow_repair(struct t *t)
{
	char err[256];

	uraid_array_sync_speed(t->a, 1000, 1000);
	int rc = uraid_array_sync_start(t->a, URAID_SYNC_REPAIR, err, sizeof(err));
	CHECK(rc == 0, "%s: repair: %s", t->name, err);
	wait_seen(t, URAID_SYNC_NONE, true);
}

/* State, slot and write errors of the member at path; false if not a member. */
static bool member(struct t *t, const char *path, struct uraid_member_status *ms)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	int i = uraid_array_find_member(t->a, path);
	bool ok = i >= 0 && uraid_array_status(t->a, as) == 0 && (unsigned)i < as->nmembers;

	if (ok)
		*ms = as->members[i];
	free(as);
	return ok;
}

static unsigned degraded(struct t *t)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	unsigned d = uraid_array_status(t->a, as) == 0 ? as->degraded : 99;
	free(as);
	return d;
}

/* The member at path (any state) fails its I/O from now on, as `kind` says. */
static void fault(struct t *t, const char *path, enum uraid_fault_kind kind)
{
	struct array *a = (struct array *)t->a;
	int i = uraid_array_find_member(t->a, path);
	struct uraid_fault f = { .kind = kind, .last_sector = UINT64_MAX };

	CHECK(i >= 0, "%s: %s is not a member", t->name, path);
	if (i >= 0)
		member_set_fault(a->members[i], &f);
}

static void check_data(struct t *t, const char *when)
{
	uint8_t *buf = aligned_alloc(4096, MIB);

	for (uint64_t off = 0; off < t->size; off += MIB) {
		uint64_t len = t->size - off < MIB ? t->size - off : MIB;
		int rc = uraid_array_pread(t->a, buf, len, off);
		if (rc || memcmp(buf, t->ref + off, len)) {
			CHECK(0, "%s seed %" PRIu64 " %s: array data differs in [%" PRIu64 ", +1 MiB) "
			      "(read %d)", t->name, t->seed, when, off, rc);
			break;
		}
	}
	free(buf);
}

static void check_clean(struct t *t, const char *when)
{
	char err[256];

	uraid_array_sync_speed(t->a, 400000, 800000);
	int rc = uraid_array_sync_start(t->a, URAID_SYNC_CHECK, err, sizeof(err));
	CHECK(rc == 0, "%s %s: check: %s", t->name, when, err);
	struct uraid_sync_status st = wait_job(t, URAID_SYNC_CHECK, false);
	CHECK(st.result == 0 && st.mismatch_sectors == 0, "%s seed %" PRIu64 " %s: check: "
	      "result %d, mismatch_cnt %" PRIu64 " (0 expected)", t->name, t->seed, when,
	      st.result, st.mismatch_sectors);
}

/* A repair, a replacement asked for meanwhile that fails (VANISH: by a flush;
 * WRITE: by its own copy once the repair is over). */
static void repair_with_waiting_replacement(struct t *t, unsigned x, enum uraid_fault_kind kind)
{
	const char *what = kind == URAID_FAULT_VANISH ? "replacement vanished" :
			   "replacement fails writes";
	struct uraid_member_status ms;
	struct uraid_sync_status st;
	char err[256];

	close_array(t);
	uint64_t expect = corrupt(t, -1);
	if (!open_array(t))
		return;
	start_slow_repair(t);
	int old = uraid_array_find_member(t->a, t->paths[SLOT]);
	int rc = uraid_array_replace_member(t->a, (unsigned)old, t->extra[x], 0, err, sizeof(err));
	CHECK(rc == 0, "%s %s: replace: %s", t->name, what, err);
	CHECK(member(t, t->extra[x], &ms) && ms.state == URAID_MEMBER_REBUILDING && ms.replacing &&
	      ms.slot == SLOT, "%s %s: not waiting as slot %d's replacement", t->name, what, SLOT);
	fault(t, t->extra[x], kind);
	for (int i = 0; i < 10; i++)
		io_batch(t);
	CHECK(uraid_array_flush(t->a) == 0, "%s %s: flush", t->name, what);
	uraid_array_sync_status(t->a, &st);
	CHECK(st.running && st.kind == URAID_SYNC_REPAIR, "%s %s: the repair was over too soon for "
	      "the test", t->name, what);
	CHECK(member(t, t->extra[x], &ms), "%s: member", t->name);
	if (kind == URAID_FAULT_VANISH) {
		CHECK(ms.state == URAID_MEMBER_FAULTY, "%s %s: the replacement is not faulty (%d)",
		      t->name, what, ms.state);
	} else {
		/* it holds no row yet: neither the repair nor a client wrote to it */
		CHECK(ms.state == URAID_MEMBER_REBUILDING && ms.replacing && ms.writes == 0 &&
		      ms.write_errors == 0, "%s %s: during the repair: state %d, %" PRIu64 " writes, "
		      "%" PRIu64 " write errors", t->name, what, ms.state, ms.writes, ms.write_errors);
	}
	/* the engine starts no job by itself until the repair's outcome is read
	   (the replacement's copy would follow at once and end as quickly) */
	atomic_store(&((struct array *)t->a)->sync_retry_ns, UINT64_MAX);
	uraid_array_sync_speed(t->a, 400000, 800000);
	st = wait_job(t, URAID_SYNC_REPAIR, true);
	CHECK(st.result == 0 && st.mismatch_sectors == expect, "%s seed %" PRIu64 " %s: repair: "
	      "result %d, mismatch_cnt %" PRIu64 " (%" PRIu64 " expected)", t->name, t->seed, what,
	      st.result, st.mismatch_sectors, expect);
	atomic_store(&((struct array *)t->a)->sync_retry_ns, 0);
	if (kind == URAID_FAULT_VANISH) {
		usleep(50000);
		uraid_array_sync_status(t->a, &st);
		CHECK(st.kind == URAID_SYNC_REPAIR, "%s %s: a %s ran after the repair", t->name, what,
		      uraid_sync_kind_name(st.kind));
	} else {
		CHECK(member(t, t->extra[x], &ms) && ms.state == URAID_MEMBER_REBUILDING &&
		      ms.replacing && ms.writes == 0 && ms.write_errors == 0, "%s %s: after the "
		      "repair: state %d, %" PRIu64 " writes, %" PRIu64 " write errors", t->name, what,
		      ms.state, ms.writes, ms.write_errors);
		st = wait_job(t, URAID_SYNC_REPLACE, false);
		CHECK(st.result != 0, "%s %s: the copy onto it did not fail", t->name, what);
		CHECK(member(t, t->extra[x], &ms) && ms.state == URAID_MEMBER_FAULTY &&
		      ms.write_errors > 0, "%s %s: after its copy: state %d, %" PRIu64 " write errors",
		      t->name, what, ms.state, ms.write_errors);
	}
	CHECK(member(t, t->paths[SLOT], &ms) && ms.state == URAID_MEMBER_IN_SYNC && ms.slot == SLOT,
	      "%s %s: the old member is not in sync in slot %d", t->name, what, SLOT);
	CHECK(degraded(t) == 0, "%s %s: degraded", t->name, what);
	check_clean(t, what);
	check_data(t, what);
}

/* recovery_offset in path's superblock on disk (1.2: at 4 KiB); UINT64_MAX: unreadable. */
static uint64_t disk_recovery_offset(const char *path)
{
	uint8_t *buf = aligned_alloc(4096, URAID_SB_BYTES);
	struct uraid_sb sb;
	uint64_t off = UINT64_MAX;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && pread(fd, buf, URAID_SB_BYTES, 4096) == URAID_SB_BYTES &&
	    uraid_sb_decode(buf, &sb) == 0)
		off = sb.recovery_offset;
	if (fd >= 0)
		close(fd);
	free(buf);
	return off;
}

/*
 * A copy stopped part-way, then a repair: the copy starts again from the
 * beginning, and the replacement's superblock says so before the repair
 * starts (client writes to the rows it held stop reaching it: after a crash
 * a restart must not take the old offset). Then the copy runs to its end and
 * the replacement holds the slot with the data.
 */
static void repair_restarts_copy(struct t *t)
{
	const char *what = "repair after a copy stopped part-way";
	struct array *ia = (struct array *)t->a;
	struct uraid_member_status ms;
	struct uraid_sync_status st;
	char err[256];

	atomic_store(&ia->sync_retry_ns, UINT64_MAX);   /* no job starts by itself */
	uraid_array_sync_speed(t->a, 1000, 1000);
	int old = uraid_array_find_member(t->a, t->paths[SLOT]);
	int rc = uraid_array_replace_member(t->a, (unsigned)old, t->extra[4], 0, err, sizeof(err));
	CHECK(rc == 0, "%s %s: replace: %s", t->name, what, err);
	wait_seen(t, URAID_SYNC_REPLACE, true);
	uraid_array_sync_cancel(t->a);
	st = wait_job(t, URAID_SYNC_REPLACE, false);
	uint64_t before = disk_recovery_offset(t->extra[4]);
	CHECK(before > 0 && before != UINT64_MAX, "%s %s: the stopped copy left offset %" PRIu64
	      " on disk", t->name, what, before);
	rc = uraid_array_sync_start(t->a, URAID_SYNC_REPAIR, err, sizeof(err));
	CHECK(rc == 0, "%s %s: repair: %s", t->name, what, err);
	uint64_t after = disk_recovery_offset(t->extra[4]);
	CHECK(after == 0, "%s %s: the copy starts again, but the replacement's superblock still "
	      "says %" PRIu64 " (was %" PRIu64 ")", t->name, what, after, before);
	uraid_array_sync_speed(t->a, 400000, 800000);
	st = wait_job(t, URAID_SYNC_REPAIR, true);
	CHECK(st.result == 0, "%s %s: repair: %d", t->name, what, st.result);
	atomic_store(&ia->sync_retry_ns, 0);
	wait_seen(t, URAID_SYNC_REPLACE, false);
	st = wait_job(t, URAID_SYNC_REPLACE, true);
	CHECK(st.result == 0 && member(t, t->extra[4], &ms) && ms.state == URAID_MEMBER_IN_SYNC &&
	      ms.slot == SLOT, "%s %s: the copy did not complete (%d)", t->name, what, st.result);
	old = uraid_array_find_member(t->a, t->paths[SLOT]);
	CHECK(old >= 0 && uraid_array_remove_member(t->a, (unsigned)old, err, sizeof(err)) == 0,
	      "%s %s: remove the replaced member: %s", t->name, what, err);
	unlink(t->paths[SLOT]);
	memcpy(t->paths[SLOT], t->extra[4], sizeof(t->paths[SLOT]));
	check_clean(t, what);
	check_data(t, what);
}

/* The replace completes; then a repair cannot rewrite the new member. */
static void repair_after_replace(struct t *t)
{
	struct uraid_member_status ms;
	struct uraid_sync_status st;
	char err[256];
	const char *what = "write error on the former replacement";

	uraid_array_sync_speed(t->a, 400000, 800000);
	int old = uraid_array_find_member(t->a, t->paths[SLOT]);
	int rc = uraid_array_replace_member(t->a, (unsigned)old, t->extra[2], 0, err, sizeof(err));
	CHECK(rc == 0, "%s: replace: %s", t->name, err);
	st = wait_job(t, URAID_SYNC_REPLACE, true);
	CHECK(st.result == 0 && member(t, t->extra[2], &ms) && ms.state == URAID_MEMBER_IN_SYNC &&
	      ms.slot == SLOT, "%s: the replace did not complete (%d)", t->name, st.result);
	old = uraid_array_find_member(t->a, t->paths[SLOT]);
	CHECK(old >= 0 && uraid_array_remove_member(t->a, (unsigned)old, err, sizeof(err)) == 0,
	      "%s: remove the replaced member: %s", t->name, err);
	memcpy(t->old, t->paths[SLOT], sizeof(t->old));
	memcpy(t->paths[SLOT], t->extra[2], sizeof(t->paths[SLOT]));
	close_array(t);
	corrupt(t, SLOT);
	if (!open_array(t))
		return;
	struct uraid_fault wf = { .kind = URAID_FAULT_WRITE, .last_sector = UINT64_MAX };
	CHECK(uraid_array_inject(t->a, SLOT, &wf) == 0, "%s: inject", t->name);
	uraid_array_sync_speed(t->a, 400000, 800000);
	rc = uraid_array_sync_start(t->a, URAID_SYNC_REPAIR, err, sizeof(err));
	CHECK(rc == 0, "%s: repair: %s", t->name, err);
	st = wait_job(t, URAID_SYNC_REPAIR, false);
	CHECK(st.result != 0, "%s %s: the repair went on without redundancy", t->name, what);
	CHECK(member(t, t->paths[SLOT], &ms) && ms.state == URAID_MEMBER_FAULTY && ms.write_errors,
	      "%s seed %" PRIu64 " %s: the member is not failed (state %d, %" PRIu64 " write "
	      "errors)", t->name, t->seed, what, ms.state, ms.write_errors);
	CHECK(degraded(t) == 1, "%s %s: degraded %u, 1 expected", t->name, what, degraded(t));
	check_data(t, "degraded after the failed rewrite");
	/* a spare: rebuilt by itself, the array whole again */
	CHECK(uraid_array_add_member(t->a, t->extra[3], 0, err, sizeof(err)) == 0, "%s: add: %s",
	      t->name, err);
	wait_seen(t, URAID_SYNC_RECOVER, false);
	st = wait_job(t, URAID_SYNC_RECOVER, true);
	CHECK(st.result == 0 && degraded(t) == 0, "%s: the rebuild onto a spare: %d, degraded %u",
	      t->name, st.result, degraded(t));
	check_clean(t, "after the rebuild");
	check_data(t, "after the rebuild");
}

static void run_config(const struct config *c, uint64_t seed)
{
	struct t t = { .seed = seed, .rs = seed };

	snprintf(t.name, sizeof(t.name), "raid%s%s%s n=%u", c->level, c->layout ? " " : "",
		 c->layout ? c->layout : "", c->n);
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (create(&t, c) || uraid_engine_create(&eo, &t.e)) {
		CHECK(0, "%s: setup", t.name);
		goto out;
	}
	if (!open_array(&t))
		goto out;
	t.size = uraid_array_size(t.a);
	t.ref = malloc(t.size);
	rng_fill(&t.rs, t.ref, t.size);
	CHECK(uraid_array_pwrite(t.a, t.ref, t.size, 0, 0) == 0, "%s: fill", t.name);

	repair_with_waiting_replacement(&t, 0, URAID_FAULT_VANISH);
	repair_with_waiting_replacement(&t, 1, URAID_FAULT_WRITE);
	if (t.a)
		repair_restarts_copy(&t);
	if (t.a)
		repair_after_replace(&t);
out:
	close_array(&t);
	if (t.e)
		uraid_engine_destroy(t.e);
	for (unsigned i = 0; i < t.n; i++)
		unlink(t.paths[i]);
	for (unsigned i = 0; i < NEXTRA; i++)
		unlink(t.extra[i]);
	if (t.old[0])
		unlink(t.old);
	rmdir(t.dir);
	free(t.ref);
}

static const struct config configs[] = {
	{ "5", NULL, 4, 64 },
	{ "6", NULL, 5, 64 },
	{ "1", NULL, 2, 0 },
	{ "10", "n2", 4, 64 },
};

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261201;
	const char *filter = argc > 2 ? argv[2] : NULL;

	printf("test_sync_replace: seed %" PRIu64 " (rerun: %s %" PRIu64 " [FILTER])\n", seed,
	       argv[0], seed);
	fflush(stdout);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		const struct config *c = &configs[i];
		char label[64];
		snprintf(label, sizeof(label), "raid%s%s%s n=%u", c->level, c->layout ? " " : "",
			 c->layout ? c->layout : "", c->n);
		if (filter && !strstr(label, filter))
			continue;
		int before = failures;
		run_config(c, seed + i * 1000);
		printf("%s %s\n", failures == before ? "ok  " : "FAIL", label);
		fflush(stdout);
	}
	printf("%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
