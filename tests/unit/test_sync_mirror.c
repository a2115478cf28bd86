// SPDX-License-Identifier: MIT
/*
 * Background work on RAID 1 and RAID 10 (src/engine/jobs/sync_mirror.c) with the
 * engine's threads, in-process, for RAID 1 (2 and 3 members) and RAID 10
 * (n2, f2, o2, and 4 KiB chunks where a unit spans many chunks):
 *
 * 1. copies are corrupted directly on the member files (one 4 KiB page in
 *    distinct 64 KiB blocks, never the first copy): check counts exactly the
 *    blocks' sectors per differing copy (md's mismatch_cnt) and changes
 *    nothing; a repair runs while seeded random writes go on (reads then
 *    checked only where no corruption can be seen): afterwards every copy is
 *    equal and the data is what was written (no repair copied old data over a
 *    newer write);
 * 2. the same with a resync;
 * 3. a member is failed and a new device added: the rebuild starts by
 *    itself and runs while random writes and reads go on, every read checked
 *    (the spare serves reads below its rebuilt point only); afterwards the
 *    copies are equal, including the spare's;
 * 4. a spare that stops taking writes half-way through its rebuild (writes of
 *    the rebuild and of clients fail) is failed, and every read stays right.
 *
 *   test_sync_mirror [SEED [FILTER]]
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
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAX_BATCH 8
#define NCORRUPT 12
#define MAXM 8

struct config {
	const char *level;
	const char *layout;
	unsigned n;
	unsigned chunk_kib;
	unsigned member_mib;
};

struct t {
	uint64_t seed, rs;
	char name[96];
	char dir[64];
	char paths[MAXM][96];       /* current members, by slot */
	char spare[96];
	unsigned n;
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *ref;
	uint8_t *known;             /* per sector: reads must match ref */
	uint64_t size;
};

static int assemble(struct t *t)
{
	const char *p[MAXM];
	char err[256];

	for (unsigned i = 0; i < t->n; i++)
		p[i] = t->paths[i];
	struct uraid_assemble_opts ao = { .paths = p, .npaths = t->n, .idle_clean_ms = 20 };
	int rc = uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s: assemble: %s\n", t->name, err);
	return rc;
}

static int create(struct t *t, const struct config *c)
{
	const char *devs[MAXM];

	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-syncm.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i <= c->n; i++) {
		char *path = i < c->n ? t->paths[i] : t->spare;
		snprintf(path, 96, "%s/m%u.img", t->dir, i);
		unlink(path);
		int fd = open(path, O_CREAT | O_RDWR, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)c->member_mib * MIB)) {
			perror(path);
			return -1;
		}
		close(fd);
		if (i < c->n)
			devs[i] = path;
	}
	t->n = c->n;
	return fixture_create_array(t->name, c->level, c->layout, c->n, c->chunk_kib, 2, devs);
}

/* The geometry and each slot's data offset, from the members' superblocks. */
static int read_geom(struct t *t, struct uraid_geom *g, uint64_t *data_offset)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	struct uraid_sb sb;
	char why[200];

	for (unsigned i = 0; i < t->n; i++) {
		int fd = open(t->paths[i], O_RDONLY);
		uraid_probe_fd(fd, p);
		close(fd);
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

/* Slot of each path (after a rebuild the spare holds the failed one's). */
static void sort_paths_by_role(struct t *t)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	char sorted[MAXM][96];

	for (unsigned i = 0; i < t->n; i++) {
		int fd = open(t->paths[i], O_RDONLY);
		uraid_probe_fd(fd, p);
		close(fd);
		unsigned role = uraid_sb_role(&p->loc[p->chosen].sb);
		if (role < t->n)
			memcpy(sorted[role], t->paths[i], 96);
	}
	memcpy(t->paths, sorted, sizeof(sorted[0]) * t->n);
	free(p);
}

/* Every copy of every sector equal, and equal to ref; members read directly. */
static void check_copies(struct t *t, const char *when)
{
	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t off[MAXM] = { 0 };
	int fds[MAXM];
	struct uraid_loc loc[MAXM];
	uint8_t a[512], b[512];

	if (read_geom(t, g, off)) {
		CHECK(0, "%s: geometry", t->name);
		free(g);
		return;
	}
	for (unsigned i = 0; i < t->n; i++)
		fds[i] = open(t->paths[i], O_RDONLY);
	for (uint64_t s = 0; s < g->array_sectors; s += 3) {
		int c = uraid_geom_map(g, s, loc, MAXM);
		for (int k = 0; k < c; k++) {
			if (pread(fds[loc[k].slot], k ? b : a, 512,
				  (off_t)((off[loc[k].slot] + loc[k].sector) * 512)) != 512) {
				CHECK(0, "%s: read member", t->name);
				goto out;
			}
			if (k && memcmp(a, b, 512)) {
				CHECK(0, "%s seed %" PRIu64 " %s: copy %d of sector %" PRIu64
				      " differs from copy 0", t->name, t->seed, when, k, s);
				goto out;
			}
		}
		if (memcmp(a, t->ref + s * 512, 512)) {
			CHECK(0, "%s seed %" PRIu64 " %s: sector %" PRIu64 " is not what was written",
			      t->name, t->seed, when, s);
			goto out;
		}
	}
out:
	for (unsigned i = 0; i < t->n; i++)
		close(fds[i]);
	free(g);
}

/*
 * Corrupt one 4 KiB page of a non-first copy in NCORRUPT distinct compare
 * blocks (min(64 KiB, chunk) of array sectors); with three copies, some
 * blocks in two copies. Returns the mismatch_cnt md would report.
 */
static uint64_t corrupt(struct t *t)
{
	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t off[MAXM] = { 0 }, expect = 0, used[NCORRUPT];
	struct uraid_loc loc[MAXM];
	uint8_t junk[4096];

	read_geom(t, g, off);
	uint64_t block = g->level == 10 && g->chunk_sectors < 128 ? g->chunk_sectors : 128;
	uint64_t nblocks = g->array_sectors / block;
	for (unsigned i = 0; i < NCORRUPT; i++) {
		uint64_t bl;
		bool dup;
		do {
			bl = rng_next(&t->rs) % nblocks;
			dup = false;
			for (unsigned k = 0; k < i; k++)
				dup |= used[k] == bl;
		} while (dup);
		used[i] = bl;
		uint64_t s = bl * block + (rng_next(&t->rs) % (block / 8)) * 8;
		int c = uraid_geom_map(g, s, loc, MAXM);
		int ncopies = c > 2 && i % 2 ? 2 : 1;
		for (int k = 1; k <= ncopies; k++) {
			rng_fill(&t->rs, junk, sizeof(junk));
			int fd = open(t->paths[loc[k].slot], O_WRONLY);
			if (pwrite(fd, junk, sizeof(junk), (off_t)((off[loc[k].slot] + loc[k].sector) * 512))
			    != (ssize_t)sizeof(junk))
				CHECK(0, "%s: corrupt", t->name);
			close(fd);
			expect += block;
		}
		/* reads of it may meet the bad copy until the repair is past */
		memset(t->known + bl * block, 0, block);
	}
	free(g);
	return expect;
}

/* ---- foreground I/O ---- */

/* One batch of disjoint random writes (and reads, checked where known). */
static void io_batch(struct t *t, bool reads)
{
	struct op ops[MAX_BATCH];
	unsigned n = 0, batch = 1 + rng_next(&t->rs) % MAX_BATCH;
	uint64_t sectors = t->size / 512;

	memset(ops, 0, sizeof(ops));
	for (unsigned b = 0; b < batch; b++) {
		uint64_t len = 1 + rng_next(&t->rs) % (rng_next(&t->rs) % 4 ? 64 : 1024);
		uint64_t start = rng_next(&t->rs) % (sectors - len + 1);
		bool clash = false;
		for (unsigned i = 0; i < n; i++)
			clash |= start < ops[i].io.offset / 512 + ops[i].io.length / 512 &&
				 ops[i].io.offset / 512 < start + len;
		if (clash)
			continue;
		struct op *o = &ops[n++];
		o->io.op = reads && rng_next(&t->rs) % 2 ? URAID_IO_READ : URAID_IO_WRITE;
		o->io.offset = start * 512;
		o->io.length = len * 512;
		o->io.done = op_done;
		o->io.ctx = o;
		o->buf = aligned_alloc(4096, (len * 512 + 4095) & ~(uint64_t)4095);
		o->io.buf = o->buf;
		if (o->io.op == URAID_IO_WRITE)
			rng_fill(&t->rs, o->buf, len * 512);
		int rc = uraid_array_submit(t->a, (unsigned)(rng_next(&t->rs) % 2), &o->io);
		if (rc) {
			o->result = rc;
			o->done = true;
		}
	}
	for (unsigned i = 0; i < n; i++)
		while (!__atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE))
			usleep(20);
	for (unsigned i = 0; i < n; i++) {
		struct op *o = &ops[i];
		uint64_t first = o->io.offset / 512, cnt = o->io.length / 512;
		CHECK(o->result == 0, "%s: %s at %" PRIu64 "+%" PRIu64 ": %s", t->name,
		      o->io.op == URAID_IO_READ ? "read" : "write", first, cnt, strerror(-o->result));
		if (o->result == 0 && o->io.op == URAID_IO_WRITE) {
			memcpy(t->ref + o->io.offset, o->buf, o->io.length);
			memset(t->known + first, 1, cnt);
		} else if (o->result == 0) {
			for (uint64_t s = 0; s < cnt; s++) {
				if (t->known[first + s] &&
				    memcmp(o->buf + s * 512, t->ref + (first + s) * 512, 512)) {
					CHECK(0, "%s seed %" PRIu64 ": read of sector %" PRIu64
					      " differs from what was written", t->name, t->seed, first + s);
					break;
				}
			}
		}
		free(o->buf);
	}
}

/* Run kind (or wait for the running one when kind is NONE) with I/O going on; its status. */
static struct uraid_sync_status run_job(struct t *t, enum uraid_sync_kind kind, bool io, bool reads)
{
	struct uraid_sync_status st;
	char err[256];

	if (kind != URAID_SYNC_NONE) {
		int rc = uraid_array_sync_start(t->a, kind, err, sizeof(err));
		CHECK(rc == 0, "%s: %s: %s", t->name, uraid_sync_kind_name(kind), err);
	}
	for (int i = 0; i < 20000; i++) {
		if (io)
			io_batch(t, reads);
		else
			usleep(1000);
		uraid_array_sync_status(t->a, &st);
		if (!st.running && st.kind != URAID_SYNC_NONE)
			break;
	}
	CHECK(!st.running && st.result == 0, "%s: %s did not complete (%d)", t->name,
	      uraid_sync_kind_name(st.kind), st.result);
	return st;
}

static void close_array(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
}

static void open_array(struct t *t)
{
	close_array(t);
	if (assemble(t) == 0)
		uraid_array_sync_speed(t->a, 400000, 800000);   /* no throttling under load */
}

static void run_config(const struct config *c, uint64_t seed)
{
	struct t t = { .seed = seed, .rs = seed };
	char err[256];
	unsigned victim = 0, victim2;
	int idx;
	struct uraid_array_status *as;

	snprintf(t.name, sizeof(t.name), "raid%s %s n=%u chunk=%uK", c->level,
		 c->layout ? c->layout : "", c->n, c->chunk_kib);
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (create(&t, c) || uraid_engine_create(&eo, &t.e)) {
		CHECK(0, "%s: setup", t.name);
		return;
	}
	if (assemble(&t)) {
		CHECK(0, "%s: assemble", t.name);
		uraid_engine_destroy(t.e);
		return;
	}
	t.size = uraid_array_size(t.a);
	t.ref = malloc(t.size);
	t.known = malloc(t.size / 512);
	rng_fill(&t.rs, t.ref, t.size);
	CHECK(uraid_array_pwrite(t.a, t.ref, t.size, 0, 0) == 0, "%s: fill", t.name);
	memset(t.known, 1, t.size / 512);

	/* 1. check counts, repair under writes */
	close_array(&t);
	uint64_t expect = corrupt(&t);
	open_array(&t);
	if (!t.a)
		goto out;
	struct uraid_sync_status st = run_job(&t, URAID_SYNC_CHECK, false, false);
	CHECK(st.mismatch_sectors == expect, "%s seed %" PRIu64 ": check counted %" PRIu64
	      " mismatched sectors, %" PRIu64 " expected", t.name, seed, st.mismatch_sectors, expect);
	st = run_job(&t, URAID_SYNC_CHECK, false, false);
	CHECK(st.mismatch_sectors == expect, "%s: a second check counted %" PRIu64 " (check wrote?)",
	      t.name, st.mismatch_sectors);
	run_job(&t, URAID_SYNC_REPAIR, true, true);
	memset(t.known, 1, t.size / 512);
	run_job(&t, URAID_SYNC_REPAIR, true, true);      /* twice: more overlap with writes */
	st = run_job(&t, URAID_SYNC_CHECK, false, false);
	CHECK(st.mismatch_sectors == 0, "%s seed %" PRIu64 ": check after repair counted %" PRIu64,
	      t.name, seed, st.mismatch_sectors);
	close_array(&t);
	check_copies(&t, "after repair");

	/* 2. resync under writes */
	corrupt(&t);
	open_array(&t);
	if (!t.a)
		goto out;
	run_job(&t, URAID_SYNC_RESYNC, true, true);
	memset(t.known, 1, t.size / 512);
	st = run_job(&t, URAID_SYNC_CHECK, false, false);
	CHECK(st.mismatch_sectors == 0, "%s: check after resync counted %" PRIu64, t.name,
	      st.mismatch_sectors);
	close_array(&t);
	check_copies(&t, "after resync");

	/* 3. a member fails, a spare comes, the rebuild runs under reads and writes */
	open_array(&t);
	if (!t.a)
		goto out;
	victim = (unsigned)(seed % c->n);
	idx = uraid_array_find_member(t.a, t.paths[victim]);
	CHECK(idx >= 0 && uraid_array_fail_member(t.a, (unsigned)idx, 0, err, sizeof(err)) == 0,
	      "%s: fail member: %s", t.name, err);
	for (int i = 0; i < 20; i++)
		io_batch(&t, true);                      /* degraded writes */
	CHECK(uraid_array_add_member(t.a, t.spare, 0, err, sizeof(err)) == 0, "%s: add: %s",
	      t.name, err);
	for (int i = 0; i < 2000; i++) {
		uraid_array_sync_status(t.a, &st);
		if (st.kind == URAID_SYNC_RECOVER)
			break;
		usleep(1000);
	}
	CHECK(st.kind == URAID_SYNC_RECOVER, "%s: no rebuild started", t.name);
	st = run_job(&t, URAID_SYNC_NONE, true, true);
	as = malloc(sizeof(*as));
	uraid_array_status(t.a, as);
	CHECK(as->degraded == 0, "%s: degraded after the rebuild", t.name);
	free(as);
	st = run_job(&t, URAID_SYNC_CHECK, false, false);
	CHECK(st.mismatch_sectors == 0, "%s: check after the rebuild counted %" PRIu64, t.name,
	      st.mismatch_sectors);
	close_array(&t);
	memcpy(t.paths[victim], t.spare, sizeof(t.spare));
	sort_paths_by_role(&t);
	check_copies(&t, "after the rebuild");

	/* 4. a spare that stops taking writes during its rebuild is failed; reads stay right */
	open_array(&t);
	if (!t.a)
		goto out;
	victim2 = (victim + 1) % c->n;
	idx = uraid_array_find_member(t.a, t.paths[victim2]);
	CHECK(idx >= 0 && uraid_array_fail_member(t.a, (unsigned)idx, 0, err, sizeof(err)) == 0,
	      "%s: fail member: %s", t.name, err);
	snprintf(t.spare, sizeof(t.spare), "%s/bad.img", t.dir);
	int fd = open(t.spare, O_CREAT | O_RDWR | O_TRUNC, 0600);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)c->member_mib * MIB) == 0, "%s: spare", t.name);
	close(fd);
	uraid_array_sync_speed(t.a, 1000, 1000);     /* slow: the fault comes mid-way */
	CHECK(uraid_array_add_member(t.a, t.spare, 0, err, sizeof(err)) == 0, "%s: add: %s",
	      t.name, err);
	for (int i = 0; i < 2000; i++) {
		uraid_array_sync_status(t.a, &st);
		if (st.kind == URAID_SYNC_RECOVER && st.done_bytes > 0)
			break;
		usleep(1000);
	}
	struct uraid_fault wf = { .kind = URAID_FAULT_WRITE, .last_sector = UINT64_MAX };
	CHECK(uraid_array_inject(t.a, victim2, &wf) == 0, "%s: inject", t.name);
	for (int i = 0; i < 3000; i++) {
		io_batch(&t, true);                      /* every read checked */
		uraid_array_sync_status(t.a, &st);
		if (!st.running && i > 50)
			break;
	}
	CHECK(!st.running && st.kind == URAID_SYNC_RECOVER && st.result != 0,
	      "%s: the rebuild onto a spare that fails writes did not fail (%d)", t.name, st.result);
	as = malloc(sizeof(*as));
	uraid_array_status(t.a, as);
	CHECK(as->degraded == 1, "%s: degraded %u after the spare failed", t.name, as->degraded);
	free(as);
	for (uint64_t off = 0; off < t.size; off += 1 << 20) {   /* everything, from the copies left */
		uint64_t len = t.size - off < (1 << 20) ? t.size - off : 1 << 20;
		uint8_t *buf = aligned_alloc(4096, 1 << 20);
		CHECK(uraid_array_pread(t.a, buf, len, off) == 0 && !memcmp(buf, t.ref + off, len),
		      "%s seed %" PRIu64 ": data differs at %" PRIu64 " after the spare failed",
		      t.name, seed, off);
		free(buf);
	}
	close_array(&t);
	unlink(t.spare);
out:
	close_array(&t);
	uraid_engine_destroy(t.e);
	for (unsigned i = 0; i < c->n; i++)
		unlink(t.paths[i]);
	char old[128];
	snprintf(old, sizeof(old), "%s/m%u.img", t.dir, victim);
	unlink(old);
	rmdir(t.dir);
	free(t.ref);
	free(t.known);
}

static const struct config configs[] = {
	{ "1", NULL, 2, 0, 4 },
	{ "1", NULL, 3, 0, 4 },
	{ "10", "n2", 4, 64, 4 },
	{ "10", "f2", 4, 64, 4 },
	{ "10", "o2", 4, 64, 4 },
	{ "10", "f2", 5, 4, 3 },
	{ "10", "n3", 3, 16, 3 },
};

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261130;
	const char *filter = argc > 2 ? argv[2] : NULL;

	printf("test_sync_mirror: seed %" PRIu64 " (rerun: %s %" PRIu64 " [FILTER])\n", seed,
	       argv[0], seed);
	fflush(stdout);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		const struct config *c = &configs[i];
		char label[64];
		snprintf(label, sizeof(label), "raid%s %s n=%u", c->level, c->layout ? c->layout : "",
			 c->n);
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
