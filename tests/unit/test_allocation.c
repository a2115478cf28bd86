// SPDX-License-Identifier: MIT
/*
 * The array's allocation (uraid_array_allocation, NBD's base:allocation):
 *  - the range mapping it relies on, per level: from an array sector, every
 *    place uraid_geom_map names stays contiguous on its member for
 *    uraid_geom_chunk_left sectors (sampled, every level and RAID 10 layout);
 *  - on sparse member files (ext4 /tmp, 4 KiB aligned writes, so a member
 *    block is written whole or not at all), after writes of seeded random
 *    ranges, the extents are exactly: holes (HOLE|ZERO) outside what was
 *    written, data inside, on every level;
 *  - a member being rebuilt (state set by hand), then failed: RAID 1 keeps
 *    reporting holes (the other copy), RAID 4/5 reports data wherever the
 *    data chunk was on that member (it would come from parity);
 *  - a fresh array is one hole found in one lookup (what a lookup learns
 *    of a member's holes answers the later chunks on it);
 *  - members on a file system whose lseek is not trusted (seek_trusted,
 *    from member_open's list) report data everywhere, holes or not;
 *  - max 1 gives one extent (a prefix), bad ranges are -EINVAL;
 *  - uraid_array_allocation_submit: of 8 lookups submitted at once, one is
 *    with the worker (here: run at once, the engine being caller-driven)
 *    and 7 wait in the array's queue; polling the reactor answers all 8 in
 *    order, each as the synchronous call does.
 *
 *   test_allocation [SEED]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "engine/core/array.h"       /* the assembled geometry */
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 4
#define CHUNK_KIB 64u
#define MEMBER_MIB 6u
#define BLK 4096u

struct config {
	const char *level, *layout;
	unsigned n;
	int fail_slot;                  /* -1: none; else fail it and check again */
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Every copy of sector s stays contiguous for chunk_left sectors. */
static void check_mapping(const struct config *c, const struct uraid_geom *g, uint64_t *rs)
{
	struct uraid_loc a[URAID_MAX_MEMBERS], b[URAID_MAX_MEMBERS];

	for (unsigned k = 0; k < 300; k++) {
		uint64_t s = rnd(rs) % g->array_sectors;
		uint64_t left = uraid_geom_chunk_left(g, s);
		int n = uraid_geom_map(g, s, a, URAID_MAX_MEMBERS);
		CHECK(n > 0 && left > 0 && left <= g->array_sectors - s,
		      "raid%s %s: sector %" PRIu64 ": %d copies, %" PRIu64 " left", c->level,
		      c->layout ? c->layout : "", s, n, left);
		uint64_t probes[3] = { 1, left / 2, left - 1 };
		for (unsigned p = 0; p < 3 && n > 0; p++) {
			if (probes[p] == 0 || probes[p] >= left)
				continue;
			int m = uraid_geom_map(g, s + probes[p], b, URAID_MAX_MEMBERS);
			bool same = m == n;
			for (int i = 0; same && i < n; i++)
				same = b[i].slot == a[i].slot && b[i].sector == a[i].sector + probes[p];
			CHECK(same, "raid%s %s: sector %" PRIu64 " + %" PRIu64 " is not where the "
			      "run from %" PRIu64 " says", c->level, c->layout ? c->layout : "", s,
			      probes[p], s);
		}
	}
}

/* The extents of the whole array against written[] (one flag per BLK block). */
static void check_extents(const struct config *c, struct uraid_array *ua, const bool *hole,
			  uint64_t nblk, const char *when)
{
	struct uraid_extent ext[64];
	uint64_t at = 0, size = nblk * BLK;
	unsigned calls = 0;

	while (at < size && calls++ < 10000) {
		int n = uraid_array_allocation(ua, at, size - at, ext, 64);
		if (n <= 0) {
			CHECK(0, "raid%s %s: allocation at %" PRIu64 ": %d", c->level, when, at, n);
			return;
		}
		for (int i = 0; i < n; i++) {
			bool h = ext[i].flags == (URAID_EXTENT_HOLE | URAID_EXTENT_ZERO);
			CHECK(ext[i].length && ext[i].length % 512 == 0 &&
			      (h || ext[i].flags == 0) && (i == 0 || ext[i].flags != ext[i - 1].flags),
			      "raid%s %s: bad extent %" PRIu64 "+%" PRIu64 " flags %u", c->level, when,
			      at, ext[i].length, ext[i].flags);
			CHECK(at % BLK == 0 && ext[i].length % BLK == 0 && at + ext[i].length <= size,
			      "raid%s %s: extent %" PRIu64 "+%" PRIu64 " not on %u-byte blocks",
			      c->level, when, at, ext[i].length, BLK);
			for (uint64_t b = at / BLK; b < (at + ext[i].length) / BLK && b < nblk; b++) {
				if (hole[b] != h) {
					CHECK(0, "raid%s %s: block at %" PRIu64 " reported %s, expected %s",
					      c->level, when, b * BLK, h ? "hole" : "data",
					      hole[b] ? "hole" : "data");
					return;
				}
			}
			at += ext[i].length;
		}
	}
	CHECK(at == size, "raid%s %s: extents end at %" PRIu64 " of %" PRIu64, c->level, when,
	      at, size);
}

#define NASYNC 8
struct async_lookup {
	struct uraid_alloc_query q;
	struct uraid_extent ext[16];
	unsigned *order, index;
	int result, seq;
};

static void async_done(struct uraid_alloc_query *q, int result)
{
	struct async_lookup *l = q->ctx;

	l->result = result;
	l->seq = (int)(*l->order)++;
}

/* Two answers from the same offset say the same where both go (a lookup
 * out of time answers a prefix, so their lengths may differ). */
static bool extents_agree(const struct uraid_extent *x, int nx, const struct uraid_extent *y,
			  int ny)
{
	uint64_t xend = 0, yend = 0;
	int i = 0, j = 0;

	while (i < nx && j < ny) {
		uint64_t xe = xend + x[i].length, ye = yend + y[j].length;
		if (x[i].flags != y[j].flags)
			return false;
		if (xe <= ye) {
			xend = xe;
			i++;
		}
		if (ye <= xe) {
			yend = ye;
			j++;
		}
	}
	return true;
}

/* Lookups through the queue: the cap, the order, the answers. */
static void check_async(const struct config *c, struct uraid_engine *e, struct uraid_array *ua,
			uint64_t size)
{
	struct array *a = (struct array *)ua;
	struct async_lookup l[NASYNC];
	unsigned order = 0;

	for (unsigned i = 0; i < NASYNC; i++) {
		uint64_t off = size / NASYNC * i / 4096 * 4096;
		l[i] = (struct async_lookup){ .order = &order, .index = i, .result = -1, .seq = -1 };
		l[i].q = (struct uraid_alloc_query){ .offset = off, .length = size - off,
						     .extents = l[i].ext, .max_extents = 16,
						     .done = async_done, .ctx = &l[i] };
		CHECK(uraid_array_allocation_submit(ua, 0, &l[i].q) == 0, "raid%s: submit %u",
		      c->level, i);
	}
	/* the first with the worker (done, its answer posted to the reactor),
	   the others in the queue in the order given */
	pthread_mutex_lock(&a->alloc_lock);
	unsigned running = a->alloc_running;
	bool queued = a->alloc_wait_head == &l[1].q && a->alloc_wait_tail == &l[NASYNC - 1].q;
	pthread_mutex_unlock(&a->alloc_lock);
	CHECK(running == 1 && queued && order == 0, "raid%s: %u lookups with the worker "
	      "(expected 1), the rest %squeued, %u answered before a poll", c->level, running,
	      queued ? "" : "not ", order);
	for (unsigned k = 0; k < 1000 && order < NASYNC; k++)
		uraid_engine_poll(e, 0, 10);
	CHECK(a->alloc_running == 0 && !a->alloc_wait_head && !a->alloc_wait_tail,
	      "raid%s: the queue is not empty after the answers", c->level);
	for (unsigned i = 0; i < NASYNC; i++) {
		struct uraid_extent want[16];
		int n = uraid_array_allocation(ua, l[i].q.offset, l[i].q.length, want, 16);
		CHECK(l[i].result > 0 && n > 0 && l[i].seq == (int)i &&
		      extents_agree(want, n, l[i].ext, l[i].result), "raid%s: lookup %u answered "
		      "%d extents, as number %d, not as the synchronous call (%d)", c->level, i,
		      l[i].result, l[i].seq, n);
	}
}

/* What reads see without slot s: data where every place was on it. */
static void expect_without(struct array *a, const bool *hole, bool *out, uint64_t nblk,
			   unsigned s)
{
	struct uraid_loc l[URAID_MAX_MEMBERS];

	for (uint64_t b = 0; b < nblk; b++) {
		int n = uraid_geom_map(&a->geom, b * (BLK / 512), l, URAID_MAX_MEMBERS);
		bool other = false;
		for (int i = 0; i < n; i++)
			other |= l[i].slot != s;
		out[b] = hole[b] && other;
	}
}

static void run(const struct config *c, uint64_t seed)
{
	char paths[MAXM][96], dir[64], err[256];
	const char *devs[MAXM];
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;
	bool *hole = NULL;
	uint64_t rs = seed | 1;
	uint8_t *buf = NULL;

	snprintf(dir, sizeof(dir), "/tmp/uraid-alloc.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < c->n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		devs[i] = paths[i];
		if (fixture_make_file(paths[i], (uint64_t)MEMBER_MIB * MIB))
			goto out;
	}
	struct uraid_engine_opts eo = { .reactors = 1 };
	if (fixture_create_array(c->level, c->level, c->layout, c->n,
				 strcmp(c->level, "1") ? CHUNK_KIB : 0, 2, devs) ||
	    uraid_engine_create(&eo, &e)) {
		CHECK(0, "raid%s: setup", c->level);
		goto out;
	}
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = c->n };
	if (uraid_array_assemble(e, &ao, &ua, err, sizeof(err)) != 0) {
		CHECK(0, "raid%s: assemble: %s", c->level, err);
		goto out;
	}
	struct array *a = (struct array *)ua;
	check_mapping(c, &a->geom, &rs);

	uint64_t size = uraid_array_size(ua), nblk = size / BLK;
	hole = malloc(nblk * sizeof(*hole));
	buf = malloc(256 * 1024);
	if (!hole || !buf)
		goto out;
	for (uint64_t b = 0; b < nblk; b++)
		hole[b] = true;
	check_extents(c, ua, hole, nblk, "fresh");
	/* a hole is found once per member, not once per chunk: one lookup
	   covers the whole fresh array */
	struct uraid_extent all[4];
	int na = uraid_array_allocation(ua, 0, size, all, 4);
	CHECK(na == 1 && all[0].length == size && all[0].flags != 0, "raid%s: a fresh array "
	      "in one lookup: %d extents, the first %" PRIu64 " of %" PRIu64 " bytes", c->level,
	      na, na > 0 ? all[0].length : 0, size);

	/* seeded ranges of 1..64 blocks, none at all in the last quarter */
	for (unsigned k = 0; k < 12; k++) {
		uint64_t len = 1 + rnd(&rs) % 64, b0 = rnd(&rs) % (nblk * 3 / 4 - len);
		memset(buf, 0x5a ^ k, len * BLK);
		CHECK(uraid_array_pwrite(ua, buf, len * BLK, b0 * BLK, 0) == 0,
		      "raid%s: write %" PRIu64 "+%" PRIu64, c->level, b0 * BLK, len * BLK);
		for (uint64_t b = b0; b < b0 + len; b++)
			hole[b] = false;
	}
	check_extents(c, ua, hole, nblk, "after writes");

	/* members whose file system's lseek is not trusted: data everywhere */
	bool *data = calloc(nblk, sizeof(*data));
	if (!data)
		goto out;
	for (unsigned i = 0; i < c->n; i++)
		CHECK(a->slot[i].m->seek_trusted, "raid%s: member %u on /tmp (ext4, tmpfs) is not "
		      "seek_trusted", c->level, i);
	for (unsigned i = 0; i < c->n; i++)
		a->slot[i].m->seek_trusted = false;
	check_extents(c, ua, data, nblk, "untrusted seek");
	for (unsigned i = 0; i < c->n; i++)
		a->slot[i].m->seek_trusted = true;
	free(data);
	check_async(c, e, ua, size);

	/* one extent when only one is asked for, no further than the first run */
	struct uraid_extent one[2];
	uint64_t b1 = 0;
	while (b1 < nblk && hole[b1] == hole[0])
		b1++;
	CHECK(uraid_array_allocation(ua, 0, size, one, 1) == 1 && one[0].length <= b1 * BLK &&
	      (one[0].flags != 0) == hole[0], "raid%s: max 1: %" PRIu64 " bytes flags %u, first "
	      "run %" PRIu64, c->level, one[0].length, one[0].flags, b1 * BLK);
	CHECK(uraid_array_allocation(ua, 0, 0, one, 1) == -EINVAL &&
	      uraid_array_allocation(ua, 100, 512, one, 1) == -EINVAL &&
	      uraid_array_allocation(ua, size - 512, 1024, one, 1) == -EINVAL &&
	      uraid_array_allocation(ua, size, 512, one, 1) == -EINVAL &&
	      uraid_array_allocation(ua, 0, 512, one, 0) == -EINVAL,
	      "raid%s: bad ranges are not refused", c->level);

	if (c->fail_slot >= 0) {
		/* the slot being rebuilt (its state set by hand, rebuilt 0: the
		   member holds nothing of the slot yet): as if failed, reads of
		   its data come from elsewhere, so its holes count for nothing */
		struct array_slot *rs_slot = &a->slot[c->fail_slot];
		bool *rebuilding = malloc(nblk * sizeof(*rebuilding));
		if (!rebuilding)
			goto out;
		expect_without(a, hole, rebuilding, nblk, (unsigned)c->fail_slot);
		pthread_mutex_lock(&a->meta_lock);
		atomic_store(&rs_slot->rebuilt, 0);
		atomic_store(&rs_slot->state, URAID_MEMBER_REBUILDING);
		pthread_mutex_unlock(&a->meta_lock);
		check_extents(c, ua, rebuilding, nblk, "slot rebuilding");
		pthread_mutex_lock(&a->meta_lock);
		atomic_store(&rs_slot->state, URAID_MEMBER_IN_SYNC);
		pthread_mutex_unlock(&a->meta_lock);
		free(rebuilding);

		CHECK(uraid_array_fail_member(ua, (unsigned)c->fail_slot, 0, err, sizeof(err)) == 0,
		      "raid%s: fail slot %d: %s", c->level, c->fail_slot, err);
		/* data where the only readable place was on the failed member */
		expect_without(a, hole, hole, nblk, (unsigned)c->fail_slot);
		check_extents(c, ua, hole, nblk, "degraded");
	}
out:
	if (ua)
		uraid_array_close(ua);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < c->n; i++)
		unlink(paths[i]);
	rmdir(dir);
	free(hole);
	free(buf);
}

static const struct config configs[] = {
	{ "linear", NULL, 2, -1 }, { "0", NULL, 3, -1 }, { "1", NULL, 2, 1 },
	{ "10", "n2", 4, 2 }, { "10", "f2", 4, -1 }, { "10", "o2", 3, -1 },
	{ "5", "left-symmetric", 4, 1 }, { "5", "parity-first", 3, -1 }, { "4", NULL, 3, 0 },
	{ "6", NULL, 4, -1 },
};

/*
 * Does /tmp keep holes at BLK granularity, on a file system whose lseek
 * uraid trusts? A sparse file with BLK written at 2 * BLK must have its
 * first data there. NULL if so, else why not.
 */
static const char *tmp_keeps_holes(char *why, size_t len)
{
	char path[64], err[128] = "out of memory";
	uint8_t blk[BLK];
	struct member *m = NULL;
	off_t data = -1;
	int fd;

	snprintf(path, sizeof(path), "/tmp/uraid-alloc-probe.%d", getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		snprintf(why, len, "cannot create %s: %s", path, strerror(errno));
		return why;
	}
	memset(blk, 0x5a, sizeof(blk));
	if (pwrite(fd, blk, BLK, 2 * BLK) == BLK && fsync(fd) == 0)
		data = lseek(fd, 0, SEEK_DATA);
	close(fd);
	snprintf(why, len, "/tmp does not keep %u-byte holes (SEEK_DATA from 0 of a file with "
		 "%u bytes written at %u finds %jd)", BLK, BLK, 2 * BLK, (intmax_t)data);
	if (data == 2 * BLK) {
		why[0] = 0;
		m = member_new();
		if (!m || member_open(m, path, MEMBER_OPEN_BUFFERED, NULL, err, sizeof(err))) {
			snprintf(why, len, "cannot open the probe %s as a member: %s", path, err);
		} else if (!m->seek_trusted) {
			snprintf(why, len, "/tmp is on a file system whose lseek uraid does not "
				 "trust (only tmpfs, ext2/3/4, XFS, btrfs, F2FS)");
		}
		if (m)
			member_close(m);
		free(m);
	}
	unlink(path);
	return why[0] ? why : NULL;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;
	char why[256];

	if (tmp_keeps_holes(why, sizeof(why))) {
		printf("test_allocation: skipped: %s\n", why);
		return 77;
	}
	printf("test_allocation: seed %" PRIu64 " (rerun: %s %" PRIu64 ")\n", seed, argv[0], seed);
	for (unsigned i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		run(&configs[i], seed + i);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
