// SPDX-License-Identifier: MIT
/*
 * The write-back cache's hazards, each checked on data: what the array
 * reads and what the member files hold (read directly, through the layout),
 * on a RAID 5 of four members in /tmp (io_uring with O_DIRECT: member writes
 * complete later, as on drives, so destages are really in flight while the
 * next requests arrive), and on a RAID 10 of four, where no row lock
 * orders two writes to the same sectors: only the cache does.
 *
 * - flush: after FLUSH returns, every write acknowledged before it is on the
 *   members (the member files hold it);
 * - a page rewritten while its destage is in flight stays dirty: the last
 *   version reaches the members;
 * - writes beyond the cache's room wait in order: an overlapping later
 *   write is never overtaken by an earlier one;
 * - FUA writes and WRITE_ZEROES / DISCARD over dirty data whose destage is
 *   in flight: the members end with the later operation's bytes;
 * - reads overlay dirty sectors on what the members hold;
 * - the switch to write-through and close destage everything;
 * - a sequential stream of large writes that end inside stripe rows is
 *   cached and destaged as whole rows (no member read).
 *
 *   test_wcache [SEED]
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

#define N 4
#define MEMBER_BYTES (8ull << 20)
#define MAX_OPS 1200

struct t {
	char dir[64];
	char paths[N][96];
	struct uraid_engine *e;
	struct uraid_array *a;
	uint64_t size;
	struct uraid_geom g;
	uint64_t data_offset[N];
	int fds[N];
	uint64_t seed;
};

static int assemble(struct t *t, uint32_t policy, uint64_t cache_bytes)
{
	const char *p[N];
	char err[256];
	for (unsigned i = 0; i < N; i++)
		p[i] = t->paths[i];
	struct uraid_assemble_opts ao = { .paths = p, .npaths = N, .write_cache = policy,
					  .cache_bytes = cache_bytes };
	int rc = uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err));
	if (rc)
		fprintf(stderr, "assemble: %s\n", err);
	return rc;
}

static int setup(struct t *t, const char *level, uint64_t cache_bytes)
{
	snprintf(t->dir, sizeof(t->dir), "/tmp/uraid-wcache.%d", getpid());
	mkdir(t->dir, 0700);
	const char *devs[N];
	for (unsigned i = 0; i < N; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		if (fixture_make_file(t->paths[i], MEMBER_BYTES))
			return -1;
		devs[i] = t->paths[i];
	}
	if (fixture_create_array("test_wcache", level, NULL, N, 64, 2, devs))
		return -1;
	struct uraid_engine_opts eo = { .reactors = 1 };
	if (uraid_engine_create(&eo, &t->e))
		return -1;
	if (assemble(t, URAID_WRITE_BACK, cache_bytes))
		return -1;
	t->size = uraid_array_size(t->a);

	/* the layout, to read the members directly */
	struct uraid_probe *p = malloc(sizeof(*p));
	uint64_t member_sectors[N] = { 0 };
	struct uraid_sb sb;
	for (unsigned i = 0; i < N; i++) {
		t->fds[i] = open(t->paths[i], O_RDONLY);
		uraid_probe_fd(t->fds[i], p);
		sb = p->loc[p->chosen].sb;
		unsigned role = uraid_sb_role(&sb);
		if (role < N) {
			member_sectors[role] = sb.data_size;
			t->data_offset[role] = sb.data_offset;
		}
	}
	free(p);
	/* fds by slot: the roles are the creation order here */
	char why[200];
	struct uraid_geom_params gp = { .level = sb.level, .layout = sb.layout,
		.raid_disks = sb.raid_disks, .chunk_sectors = sb.chunksize, .dev_sectors = sb.size,
		.member_sectors = member_sectors };
	return uraid_geom_init(&t->g, &gp, why, sizeof(why)) ? -1 : 0;
}

static void teardown(struct t *t)
{
	if (t->a)
		uraid_array_close(t->a);
	if (t->e)
		uraid_engine_destroy(t->e);
	for (unsigned i = 0; i < N; i++) {
		close(t->fds[i]);
		unlink(t->paths[i]);
	}
	rmdir(t->dir);
}

/* What the members hold for array bytes [off, off + len): the data chunks. */
static void member_read(struct t *t, uint8_t *buf, uint64_t len, uint64_t off)
{
	for (uint64_t s = 0; s < len / 512; s++) {
		struct uraid_loc loc[4];
		uraid_geom_map(&t->g, off / 512 + s, loc, 4);
		if (pread(t->fds[loc[0].slot], buf + s * 512, 512,
			  (off_t)((t->data_offset[loc[0].slot] + loc[0].sector) * 512)) != 512)
			memset(buf + s * 512, 0xee, 512);
	}
}

static bool members_hold(struct t *t, const uint8_t *want, uint64_t len, uint64_t off)
{
	uint8_t *got = malloc(len);
	member_read(t, got, len, off);
	bool same = !memcmp(got, want, len);
	free(got);
	return same;
}

/* Submit ops[0..n) together (the engine takes them in this order), wait for all. */
static void run_batch(struct t *t, struct op *ops, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ops[i].io.done = op_done;
		ops[i].io.ctx = &ops[i];
		ops[i].done = false;
		int rc = uraid_array_submit(t->a, 0, &ops[i].io);
		CHECK(rc == 0, "submit: %s", strerror(-rc));
		if (rc)
			ops[i].done = true;
	}
	for (;;) {
		bool all = true;
		for (unsigned i = 0; i < n; i++)
			all &= __atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE);
		if (all)
			break;
		uraid_engine_poll(t->e, 0, 1);
	}
	for (unsigned i = 0; i < n; i++)
		CHECK(ops[i].result == 0, "op %u (kind %d at %" PRIu64 "): %s", i, ops[i].io.op,
		      ops[i].io.offset, strerror(-ops[i].result));
}

static void set_op(struct op *o, enum uraid_io_op op, uint64_t off, uint64_t len, void *buf,
		   uint32_t flags)
{
	memset(o, 0, sizeof(*o));
	o->io.op = op;
	o->io.offset = off;
	o->io.length = len;
	o->io.buf = buf;
	o->io.flags = flags;
}

static void status(struct t *t, struct uraid_write_cache_status *w)
{
	struct uraid_array_status *st = malloc(sizeof(*st));
	uraid_array_status(t->a, st);
	*w = st->write_cache;
	free(st);
}

/* Writes acknowledged, then FLUSH: the member files hold them all. */
static void test_flush(struct t *t, uint64_t *rs)
{
	enum { W = 300 };
	uint8_t *data = aligned_alloc(4096, W * 4096ull);
	uint64_t off[W];
	struct op *ops = calloc(W + 1, sizeof(*ops));

	rng_fill(rs, data, W * 4096ull);
	for (unsigned i = 0; i < W; i++) {
		off[i] = (rng_next(rs) % (t->size / 4096)) * 4096;
		for (unsigned j = 0; j < i; j++)
			if (off[j] == off[i])
				off[i] = (off[i] + 4096 * 7) % t->size;
		set_op(&ops[i], URAID_IO_WRITE, off[i], 4096, data + i * 4096ull, 0);
	}
	run_batch(t, ops, W);
	struct uraid_write_cache_status w;
	status(t, &w);
	CHECK(w.writes_cached >= W, "flush: %" PRIu64 " of %u writes cached", w.writes_cached, W);
	int rc = uraid_array_flush(t->a);
	CHECK(rc == 0, "flush: %s", strerror(-rc));
	unsigned bad = 0;
	for (unsigned i = 0; i < W; i++) {
		/* a later duplicate offset holds the later data */
		unsigned last = i;
		for (unsigned j = i + 1; j < W; j++)
			if (off[j] == off[i])
				last = j;
		if (!members_hold(t, data + last * 4096ull, 4096, off[i]))
			bad++;
	}
	CHECK(bad == 0, "flush returned with %u of %u acknowledged writes not on the members",
	      bad, W);
	status(t, &w);
	CHECK(w.dirty_bytes == 0, "flush: %" PRIu64 " dirty bytes left with nothing written since",
	      w.dirty_bytes);
	free(ops);
	free(data);
}

/*
 * Rewrites while destages run: each round writes version v of a few pages,
 * then asks for a flush together with version v+1 of the same pages (the
 * flush's destage carries v while v+1 lands in the page). The last version
 * must reach the members, and reads always return the last one written.
 */
static void test_rewrite_during_destage(struct t *t, uint64_t *rs)
{
	enum { P = 8, ROUNDS = 40 };
	uint8_t *v = aligned_alloc(4096, 2 * P * 4096);
	uint8_t *rd = aligned_alloc(4096, P * 4096);
	uint64_t base = (rng_next(rs) % (t->size / 4096 - P)) * 4096;
	struct op ops[2 * P + 1];

	for (unsigned r = 0; r < ROUNDS; r++) {
		rng_fill(rs, v, 2 * P * 4096);
		for (unsigned i = 0; i < P; i++)
			set_op(&ops[i], URAID_IO_WRITE, base + i * 4096ull, 4096, v + i * 4096, 0);
		run_batch(t, ops, P);
		set_op(&ops[0], URAID_IO_FLUSH, 0, 0, NULL, 0);
		for (unsigned i = 0; i < P; i++)
			set_op(&ops[1 + i], URAID_IO_WRITE, base + i * 4096ull, 4096,
			       v + (P + i) * 4096, 0);
		run_batch(t, ops, P + 1);
		int rc = uraid_array_pread(t->a, rd, P * 4096, base);
		CHECK(rc == 0 && !memcmp(rd, v + P * 4096, P * 4096),
		      "rewrite round %u: the array does not read the last version", r);
	}
	int rc = uraid_array_flush(t->a);
	CHECK(rc == 0 && members_hold(t, v + P * 4096, P * 4096, base),
	      "rewrite: after the flush the members do not hold the last version");
	free(v);
	free(rd);
}

/*
 * More writes at once than the cache holds (1 MiB: 256 pages): the later
 * ones wait for room, in order; then a second pass over every third page
 * with other bytes, submitted in the same burst. The second pass wins.
 */
static void test_full_cache_order(struct t *t, uint64_t *rs)
{
	enum { W = 600, W2 = W / 3 };
	uint8_t *a = aligned_alloc(4096, W * 4096ull), *b = aligned_alloc(4096, W2 * 4096ull);
	struct op *ops = calloc(W + W2, sizeof(*ops));
	uint64_t base = 0;

	rng_fill(rs, a, W * 4096ull);
	rng_fill(rs, b, W2 * 4096ull);
	for (unsigned i = 0; i < W; i++)
		set_op(&ops[i], URAID_IO_WRITE, base + i * 8192ull, 4096, a + i * 4096ull, 0);
	for (unsigned i = 0; i < W2; i++)
		set_op(&ops[W + i], URAID_IO_WRITE, base + i * 3 * 8192ull, 4096, b + i * 4096ull, 0);
	struct uraid_write_cache_status w0, w;
	status(t, &w0);
	run_batch(t, ops, W + W2);
	status(t, &w);
	CHECK(w.write_waits > w0.write_waits, "full cache: no write waited for room (%" PRIu64 ")",
	      w.write_waits - w0.write_waits);
	uint8_t *rd = aligned_alloc(4096, 4096);
	unsigned bad = 0;
	for (unsigned i = 0; i < W; i++) {
		const uint8_t *want = i % 3 == 0 ? b + (i / 3) * 4096ull : a + i * 4096ull;
		if (uraid_array_pread(t->a, rd, 4096, base + i * 8192ull) || memcmp(rd, want, 4096))
			bad++;
	}
	CHECK(bad == 0, "full cache: %u pages read back other than the last write", bad);
	CHECK(uraid_array_flush(t->a) == 0, "full cache: flush failed");
	bad = 0;
	for (unsigned i = 0; i < W; i++) {
		const uint8_t *want = i % 3 == 0 ? b + (i / 3) * 4096ull : a + i * 4096ull;
		if (!members_hold(t, want, 4096, base + i * 8192ull))
			bad++;
	}
	CHECK(bad == 0, "full cache: %u pages on the members other than the last write", bad);
	free(rd);
	free(ops);
	free(a);
	free(b);
}

/*
 * Dirty pages, a flush that starts their destage, and in the same burst a
 * FUA write, a WRITE_ZEROES and a DISCARD over them: each later operation's
 * bytes end on the members (the FUA write's at once, before any flush), and
 * an older copy destaged late never overwrites them.
 */
static void test_through_ops(struct t *t, uint64_t *rs)
{
	enum { P = 16, ROUNDS = 20 };
	uint8_t *old = aligned_alloc(4096, P * 4096), *fua = aligned_alloc(4096, P * 4096);
	uint8_t *zero = calloc(1, P * 4096), *rd = aligned_alloc(4096, P * 4096);
	struct op ops[P + 2];

	for (unsigned r = 0; r < ROUNDS; r++) {
		uint64_t base = (rng_next(rs) % (t->size / 4096 - P)) * 4096;
		unsigned kind = r % 3;       /* FUA write, zeroes, discard */
		rng_fill(rs, old, P * 4096);
		rng_fill(rs, fua, P * 4096);
		for (unsigned i = 0; i < P; i++)
			set_op(&ops[i], URAID_IO_WRITE, base + i * 4096ull, 4096, old + i * 4096, 0);
		run_batch(t, ops, P);
		memset(zero, 0, P * 4096);
		set_op(&ops[0], URAID_IO_FLUSH, 0, 0, NULL, 0);
		/* over the middle of the pages, cutting the first and last in half */
		uint64_t off = base + 2048, len = P * 4096ull - 4096;
		if (kind == 0)
			set_op(&ops[1], URAID_IO_WRITE, off, len, fua + 2048, URAID_IO_FUA);
		else
			set_op(&ops[1], kind == 1 ? URAID_IO_WRITE_ZEROES : URAID_IO_DISCARD, off, len,
			       NULL, 0);
		run_batch(t, ops, 2);
		const uint8_t *mid = kind == 0 ? fua + 2048 : zero;
		if (kind == 0)
			CHECK(members_hold(t, mid, len, off),
			      "round %u: a completed FUA write is not on the members", r);
		/* more time for any late destage, then look again */
		for (int i = 0; i < 20; i++)
			uraid_engine_poll(t->e, 0, 2);
		CHECK(uraid_array_flush(t->a) == 0, "round %u: flush failed", r);
		if (kind == 2) {
			/* a discarded range may read as anything, but as the members
			   hold it: the cache keeps no copy of the older bytes */
			member_read(t, zero, len, off);
			mid = zero;
		}
		CHECK(members_hold(t, mid, len, off),
		      "round %u (%s): the members hold older bytes than the last operation", r,
		      kind == 0 ? "FUA" : kind == 1 ? "zeroes" : "discard");
		CHECK(members_hold(t, old, 2048, base) &&
		      members_hold(t, old + P * 4096 - 2048, 2048, base + P * 4096 - 2048),
		      "round %u: the dirty halves outside the range were lost", r);
		int rc = uraid_array_pread(t->a, rd, P * 4096, base);
		CHECK(rc == 0 && !memcmp(rd + 2048, mid, len) && !memcmp(rd, old, 2048),
		      "round %u: the array reads other bytes than the last operation's", r);
	}
	free(old);
	free(fua);
	free(zero);
	free(rd);
}

/* Sectors of a page dirty in the cache, the rest on the members: a read of
 * the page returns both, overlaid. */
static void test_read_overlay(struct t *t, uint64_t *rs)
{
	uint8_t *under = aligned_alloc(4096, 16384), *over = aligned_alloc(4096, 4096);
	uint8_t *rd = aligned_alloc(4096, 16384), *want = malloc(16384);
	uint64_t base = (rng_next(rs) % (t->size / 16384)) * 16384;

	rng_fill(rs, under, 16384);
	rng_fill(rs, over, 4096);
	CHECK(uraid_array_pwrite(t->a, under, 16384, base, URAID_IO_FUA) == 0, "overlay: FUA write");
	/* sectors 1-2 of the second page, and 7 of the third: dirty in the cache */
	CHECK(uraid_array_pwrite(t->a, over, 1024, base + 4096 + 512, 0) == 0, "overlay: write");
	CHECK(uraid_array_pwrite(t->a, over + 1024, 512, base + 8192 + 3584, 0) == 0,
	      "overlay: write");
	memcpy(want, under, 16384);
	memcpy(want + 4096 + 512, over, 1024);
	memcpy(want + 8192 + 3584, over + 1024, 512);
	int rc = uraid_array_pread(t->a, rd, 16384, base);
	CHECK(rc == 0 && !memcmp(rd, want, 16384), "overlay: read differs from the writes");
	CHECK(uraid_array_flush(t->a) == 0 && members_hold(t, want, 16384, base),
	      "overlay: members after the flush");
	free(under);
	free(over);
	free(rd);
	free(want);
}

/* Switch to write-through: everything dirty is destaged first; and back. */
static void test_switch(struct t *t, uint64_t *rs)
{
	uint8_t *d = aligned_alloc(4096, 65536);
	uint64_t base = (rng_next(rs) % (t->size / 65536)) * 65536;
	rng_fill(rs, d, 65536);
	CHECK(uraid_array_pwrite(t->a, d, 65536, base, 0) == 0, "switch: write");
	CHECK(uraid_array_set_write_cache(t->a, URAID_WRITE_THROUGH) == 0, "switch: to through");
	struct uraid_write_cache_status w;
	status(t, &w);
	CHECK(w.policy == URAID_WRITE_THROUGH && w.dirty_bytes == 0,
	      "switch: %" PRIu64 " dirty bytes after the switch to through", w.dirty_bytes);
	CHECK(members_hold(t, d, 65536, base), "switch: members do not hold the data");
	/* nothing held once through (reads then skip the cache's lock) */
	CHECK(w.cached_bytes == 0, "switch: %" PRIu64 " bytes still cached after the switch to through",
	      w.cached_bytes);
	uint8_t *rd = aligned_alloc(4096, 65536);
	CHECK(uraid_array_pread(t->a, rd, 65536, base) == 0 && !memcmp(rd, d, 65536),
	      "switch: read after the switch to through");
	free(rd);
	CHECK(uraid_array_set_write_cache(t->a, URAID_WRITE_BACK) == 0, "switch: back");
	CHECK(uraid_array_set_write_cache(t->a, 7) == -EINVAL, "switch: bad policy accepted");
	free(d);
}

/* Close with dirty data and no flush: reassembled write-through, it reads back. */
static void test_close_drains(struct t *t, uint64_t *rs)
{
	uint8_t *d = aligned_alloc(4096, 65536), *rd = aligned_alloc(4096, 65536);
	uint64_t base = (rng_next(rs) % (t->size / 65536)) * 65536;
	rng_fill(rs, d, 65536);
	for (unsigned i = 0; i < 16; i++)
		CHECK(uraid_array_pwrite(t->a, d + i * 4096, 4096, base + i * 4096ull, 0) == 0,
		      "close: write");
	CHECK(uraid_array_close(t->a) == 0, "close failed");
	t->a = NULL;
	CHECK(members_hold(t, d, 65536, base), "close: members do not hold the cached writes");
	if (assemble(t, URAID_WRITE_THROUGH, 0) == 0) {
		CHECK(uraid_array_pread(t->a, rd, 65536, base) == 0 && !memcmp(rd, d, 65536),
		      "close: reassembled array reads other bytes");
		struct uraid_array_status *st = malloc(sizeof(*st));
		uraid_array_status(t->a, st);
		CHECK(st->clean, "close: the array was not left clean");
		free(st);
	}
	free(d);
	free(rd);
}

/* Close right after cached writes on an engine whose two reactors run in
 * their own threads: destage completions and the drain's kicks still run
 * on them while close frees the cache (a use after free under check-asan
 * if the drain does not wait for them); the members hold the writes. The
 * array is open again on the test's engine afterwards. */
static void test_close_threads(struct t *t, uint64_t *rs)
{
	enum { ROUNDS = 8, W = 48 };
	uint8_t *d = aligned_alloc(4096, W * 4096ull);
	struct uraid_engine *mine = t->e, *threads = NULL;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };

	if (t->a)
		uraid_array_close(t->a);
	t->a = NULL;
	CHECK(uraid_engine_create(&eo, &threads) == 0, "close threads: engine");
	t->e = threads;
	for (unsigned r = 0; threads && r < ROUNDS; r++) {
		if (assemble(t, URAID_WRITE_BACK, 1u << 20)) {
			CHECK(0, "close threads: assemble");
			break;
		}
		uint64_t base = (rng_next(rs) % (t->size / (W * 4096ull))) * (W * 4096ull);
		rng_fill(rs, d, W * 4096ull);
		for (unsigned i = 0; i < W; i++)
			CHECK(uraid_array_pwrite(t->a, d + i * 4096ull, 4096, base + i * 4096ull, 0) == 0,
			      "close threads: write");
		CHECK(uraid_array_close(t->a) == 0, "close threads: close failed");
		t->a = NULL;
		CHECK(members_hold(t, d, W * 4096ull, base),
		      "close threads round %u: members do not hold the cached writes", r);
	}
	if (threads)
		uraid_engine_destroy(threads);
	t->e = mine;
	CHECK(assemble(t, URAID_WRITE_BACK, 1u << 20) == 0, "close threads: assemble again");
	free(d);
}

/* A page with two dirty runs (sectors 0 and 4): a flush destages the first
   run while it is rewritten; the second run, written before the flush, must
   be on the members once the flush returns (the page's epoch must not move
   on while part of what was dirty at the copy was not carried). */
static void test_partial_epoch(struct t *t, uint64_t *rs)
{
	uint8_t *v = aligned_alloc(4096, 4096);   /* 3 sectors used */
	rng_fill(rs, v, 3 * 512);
	uint64_t base = 64 * 4096;
	struct op ops[3];
	set_op(&ops[0], URAID_IO_WRITE, base, 512, v, 0);
	set_op(&ops[1], URAID_IO_WRITE, base + 2048, 512, v + 512, 0);
	run_batch(t, ops, 2);
	set_op(&ops[0], URAID_IO_FLUSH, 0, 0, NULL, 0);
	set_op(&ops[1], URAID_IO_WRITE, base, 512, v + 1024, 0);
	run_batch(t, ops, 2);
	CHECK(members_hold(t, v + 512, 512, base + 2048),
	      "partial epoch: FLUSH returned, a sector written before it is not on the members");
	set_op(&ops[0], URAID_IO_FLUSH, 0, 0, NULL, 0);
	run_batch(t, ops, 1);
	CHECK(members_hold(t, v + 1024, 512, base), "partial epoch: the rewrite is not on the members");
	free(v);
}

/* W1 cached and acknowledged; then a large write T (written through) over
   it and a read R of the same page in one burst: R returns W1 or T, never
   the bytes from before W1 (the cached copy stays until T has landed). */
static void test_stale_read(struct t *t, uint64_t *rs)
{
	enum { TL = 1u << 20 };
	uint8_t *old = aligned_alloc(4096, 4096), *w1 = aligned_alloc(4096, 4096);
	uint8_t *tb = aligned_alloc(4096, TL), *rd = aligned_alloc(4096, 4096);
	unsigned stale = 0, mixed = 0;
	for (unsigned r = 0; r < 60; r++) {
		uint64_t base = (rng_next(rs) % (t->size / TL)) * TL;
		rng_fill(rs, old, 4096);
		rng_fill(rs, w1, 4096);
		rng_fill(rs, tb, TL);
		struct op ops[3];
		set_op(&ops[0], URAID_IO_WRITE, base + 8192, 4096, old, URAID_IO_FUA);
		run_batch(t, ops, 1);
		set_op(&ops[0], URAID_IO_WRITE, base + 8192, 4096, w1, 0);
		run_batch(t, ops, 1);
		set_op(&ops[0], URAID_IO_WRITE, base, TL, tb, 0);
		set_op(&ops[1], URAID_IO_READ, base + 8192, 4096, rd, 0);
		run_batch(t, ops, 2);
		if (!memcmp(rd, old, 4096))
			stale++;
		else if (memcmp(rd, w1, 4096) && memcmp(rd, tb + 8192, 4096))
			mixed++;
	}
	CHECK(stale == 0, "stale read: %u of 60 reads returned bytes older than an acknowledged write",
	      stale);
	CHECK(mixed == 0, "stale read: %u of 60 reads returned neither W1 nor T", mixed);
	free(old); free(w1); free(tb); free(rd);
}

/* More flushes at once than the ring of epochs holds (1024), between writes:
   the flushes beyond it wait for a slot; all complete, and the members hold
   the write before them. */
static void test_epoch_ring(struct t *t, uint64_t *rs)
{
	enum { F = 1100 };
	uint8_t *v = aligned_alloc(4096, 8192);
	struct op *ops = calloc(F + 2, sizeof(*ops));
	rng_fill(rs, v, 8192);
	uint64_t off = (rng_next(rs) % (t->size / 4096)) * 4096;
	set_op(&ops[0], URAID_IO_WRITE, off, 4096, v, 0);
	for (unsigned i = 1; i <= F; i++)
		set_op(&ops[i], URAID_IO_FLUSH, 0, 0, NULL, 0);
	set_op(&ops[F + 1], URAID_IO_WRITE, off, 4096, v + 4096, 0);
	run_batch(t, ops, F + 2);
	set_op(&ops[0], URAID_IO_FLUSH, 0, 0, NULL, 0);
	run_batch(t, ops, 1);
	CHECK(members_hold(t, v + 4096, 4096, off), "epoch ring: the last write is not on the members");
	free(ops);
	free(v);
}

/* The array fails (2 of 4 RAID 5 members) with a cached write A: every flush
   after it fails (not only the first), A is not read back as if it were on
   the members, and later writes are not acknowledged from the cache. */
static void test_fatal(struct t *t, uint64_t *rs)
{
	uint8_t *v = aligned_alloc(4096, 8192), *rd = aligned_alloc(4096, 4096);
	rng_fill(rs, v, 8192);
	char err[200];
	CHECK(uraid_array_set_write_cache(t->a, URAID_WRITE_BACK) == 0, "fatal: set write-back");
	CHECK(uraid_array_pwrite(t->a, v, 4096, 40960, 0) == 0, "fatal: cached write A");
	CHECK(uraid_array_fail_member(t->a, 0, URAID_FAIL_FORCE, err, sizeof(err)) == 0,
	      "fatal: fail member 0: %s", err);
	CHECK(uraid_array_fail_member(t->a, 1, URAID_FAIL_FORCE, err, sizeof(err)) == 0,
	      "fatal: fail member 1: %s", err);
	for (unsigned i = 0; i < 4; i++) {
		int f = uraid_array_flush(t->a);
		CHECK(f != 0, "fatal round %u: FLUSH succeeded after A was lost", i);
		memset(rd, 0, 4096);
		int r = uraid_array_pread(t->a, rd, 4096, 40960);
		CHECK(r != 0 || memcmp(rd, v, 4096), "fatal round %u: A read back though it is on no member", i);
		int w = uraid_array_pwrite(t->a, v + 4096, 4096, 40960 * (i + 2), 0);
		CHECK(w != 0, "fatal round %u: a write acknowledged on a failed array", i);
	}
	free(v);
	free(rd);
}

/* Member reads so far, over every member (status). */
static uint64_t member_reads(struct t *t)
{
	struct uraid_array_status *st = malloc(sizeof(*st));
	uint64_t n = 0;
	uraid_array_status(t->a, st);
	for (unsigned i = 0; i < st->nmembers; i++)
		n += st->members[i].reads;
	free(st);
	return n;
}

/*
 * A sequential stream of 512 KiB writes, 8 in flight, on RAID 5 rows of
 * 3 x 64 KiB (each write ends inside a row), twice over 12 MiB with an
 * 8 MiB cache (destages run under pressure, writes wait for room): every
 * write is cached, and the destage writes whole rows only, so that no
 * member is read (a row written in two pieces is a read-modify-write or a
 * reconstruct-write). After a FLUSH the members hold the second pass, byte
 * by byte, and the array reads it back.
 */
static void test_seq_rows(struct t *t, uint64_t *rs)
{
	enum { WL = 512u << 10, SPAN = 12u << 20, PASSES = 2, QD = 8 };
	uint8_t *v = aligned_alloc(4096, SPAN), *rd = aligned_alloc(4096, SPAN);
	struct uraid_write_cache_status w0, w1;
	struct op ops[QD];

	CHECK(t->size >= SPAN, "seq rows: array of %" PRIu64 " bytes, under %u", t->size, SPAN);
	status(t, &w0);
	uint64_t r0 = member_reads(t);
	for (unsigned pass = 0; pass < PASSES; pass++) {
		rng_fill(rs, v, SPAN);
		for (uint64_t off = 0; off < SPAN; off += (uint64_t)WL * QD) {
			for (unsigned i = 0; i < QD; i++)
				set_op(&ops[i], URAID_IO_WRITE, off + (uint64_t)i * WL, WL,
				       v + off + (uint64_t)i * WL, 0);
			run_batch(t, ops, QD);
		}
	}
	CHECK(uraid_array_flush(t->a) == 0, "seq rows: flush");
	status(t, &w1);
	uint64_t n = SPAN / WL * PASSES, reads = member_reads(t) - r0;
	CHECK(w1.writes_cached - w0.writes_cached == n && w1.writes_through == w0.writes_through,
	      "seq rows: %" PRIu64 " of %" PRIu64 " writes of 512 KiB cached, %" PRIu64
	      " written through", w1.writes_cached - w0.writes_cached, n,
	      w1.writes_through - w0.writes_through);
	CHECK(reads == 0, "seq rows: %" PRIu64 " member reads: rows destaged in pieces", reads);
	CHECK(w1.dirty_bytes == 0, "seq rows: %" PRIu64 " bytes dirty after the flush", w1.dirty_bytes);
	CHECK(members_hold(t, v, SPAN, 0), "seq rows: the members do not hold the last pass");
	CHECK(uraid_array_pread(t->a, rd, SPAN, 0) == 0 && !memcmp(rd, v, SPAN),
	      "seq rows: the array does not read back the last pass");
	printf("  seq rows: %" PRIu64 " writes cached, %" PRIu64 " destage writes, %" PRIu64
	       " member reads\n", w1.writes_cached - w0.writes_cached,
	       w1.destage_writes - w0.destage_writes, reads);
	free(v);
	free(rd);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;
	uint64_t rs = seed;

	printf("test_wcache: seed %" PRIu64 " (rerun: %s %" PRIu64 ")\n", seed, argv[0], seed);
	fflush(stdout);
	/* RAID 5 (row locks order writes to a row) and RAID 10 (nothing but
	   the cache orders two writes to the same sectors) */
	static const char *const levels[] = { "5", "10" };
	for (unsigned l = 0; l < 2; l++) {
		struct t t = { .seed = seed };
		int before = failures;
		if (setup(&t, levels[l], 1u << 20)) {
			teardown(&t);
			fprintf(stderr, "test_wcache: setup failed\n");
			return 1;
		}
		test_stale_read(&t, &rs);
		test_partial_epoch(&t, &rs);
		test_epoch_ring(&t, &rs);
		test_flush(&t, &rs);
		test_rewrite_during_destage(&t, &rs);
		test_full_cache_order(&t, &rs);
		test_through_ops(&t, &rs);
		test_read_overlay(&t, &rs);
		test_switch(&t, &rs);
		test_close_drains(&t, &rs);
		test_close_threads(&t, &rs);
		if (l == 0)
			test_fatal(&t, &rs);   /* last: the array is lost after it */
		teardown(&t);
		printf("%s raid%s\n", failures == before ? "ok  " : "FAIL", levels[l]);
	}
	/* large sequential writes: a cache that takes them (an eighth of it) */
	struct t t = { .seed = seed };
	int before = failures;
	if (setup(&t, "5", 8u << 20)) {
		teardown(&t);
		fprintf(stderr, "test_wcache: setup failed\n");
		return 1;
	}
	test_seq_rows(&t, &rs);
	teardown(&t);
	printf("%s raid5 sequential 512 KiB writes, 8 MiB cache\n", failures == before ? "ok  " : "FAIL");
	printf("%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
