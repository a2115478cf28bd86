// SPDX-License-Identifier: MIT
/*
 * The journal's write-back mode against a crash, on a RAID 5 of four
 * members and a journal in /tmp (the engine with io_uring, one polled
 * reactor): requests run, then, with nothing in flight, the member files
 * and the journal are copied as a crash would leave them (the array stays
 * open: nothing is destaged for the copy), the copy's journal is replayed
 * (md's recovery, journal_replay) and every member row's parity must match
 * its data (the XOR of the four members is zero) with the acknowledged data
 * in place. Then the array is closed and the same holds for the originals.
 *
 * - a row with a cached page (in the log as data only) and a write of
 *   another chunk of that row that is not cached (512 KiB and more go
 *   through): the through write's parity must cover the cached page, or the
 *   replay writes the cached page and the stale parity (the write hole);
 * - the same with the cached write arriving while a destage of its row is
 *   in flight;
 * - a destage logs only the parity of its rows (md's rule: the cached
 *   pages' data is in the log already), and a replay of that log onto the
 *   members as they were before the writes puts data and parity there;
 * - the destage takes the page of the oldest record first (it holds the
 *   journal's tail);
 * - a log write that fails: the write fails, and its bytes are not read
 *   back (the cache keeps the bytes acknowledged before it, or nothing);
 *   the array still closes (the journal's writes are made to fail by
 *   putting /dev/full under its file descriptor);
 * - a sequential stream of 64 KiB writes goes through: on the members
 *   when acknowledged, no row waits, replacing older cached pages;
 * - a small journal under mixed cached and through writes on the same rows
 *   must not stall (a through write holding its row while it waits for log
 *   room that only the destage of that row frees): every batch must end
 *   within a watchdog's time.
 *
 *   test_journal_wb [SEED]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "engine/md/journal.h"
#include "format/r5l.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define N 4                     /* members; the journal is paths[N] */
#define MEMBER_BYTES (8ull << 20)
#define CHUNK_KIB 64
#define STRIPE (3ull * CHUNK_KIB * 1024)

struct t {
	char dir[64];
	char paths[N + 1][96];
	char snap[N + 1][112];
	struct uraid_engine *e;
	struct uraid_array *a;
	uint64_t size;
};

static int setup(struct t *t, uint64_t journal_bytes)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/journal-wb-unit.%d", getpid());
	mkdir(t->dir, 0700);
	const char *devs[N];
	for (unsigned i = 0; i <= N; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		snprintf(t->snap[i], sizeof(t->snap[i]), "%s/m%u.snap", t->dir, i);
		unlink(t->paths[i]);
		int fd = open(t->paths[i], O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)(i < N ? MEMBER_BYTES : journal_bytes)))
			return -1;
		close(fd);
		if (i < N)
			devs[i] = t->paths[i];
	}
	struct uraid_create_opts o = {
		.level = 5, .raid_disks = N, .chunk_kib = CHUNK_KIB, .minor = 2,
		.bitmap = URAID_BITMAP_NONE, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = devs, .npaths = N, .homehost = "<none>", .write_journal = t->paths[N],
	};
	char err[256];
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "create: %s\n", err);
		return -1;
	}
	struct uraid_engine_opts eo = { .reactors = 1 };
	if (uraid_engine_create(&eo, &t->e))
		return -1;
	const char *p[N + 1];
	for (unsigned i = 0; i <= N; i++)
		p[i] = t->paths[i];
	struct uraid_assemble_opts ao = { .paths = p, .npaths = N + 1,
					  .journal_mode = URAID_JOURNAL_WRITE_BACK };
	if (uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err))) {
		fprintf(stderr, "assemble: %s\n", err);
		return -1;
	}
	t->size = uraid_array_size(t->a);
	return 0;
}

static void teardown(struct t *t)
{
	if (t->a)
		uraid_array_close(t->a);
	if (t->e)
		uraid_engine_destroy(t->e);
	for (unsigned i = 0; i <= N; i++) {
		unlink(t->paths[i]);
		unlink(t->snap[i]);
	}
	rmdir(t->dir);
}

static void set_op(struct op *o, enum uraid_io_op op, uint64_t off, uint64_t len, void *buf)
{
	memset(o, 0, sizeof(*o));
	o->io.op = op;
	o->io.offset = off;
	o->io.length = len;
	o->io.buf = buf;
	o->io.done = op_done;
	o->io.ctx = o;
}

static void submit(struct t *t, struct op *o)
{
	int rc = uraid_array_submit(t->a, 0, &o->io);
	CHECK(rc == 0, "submit: %s", strerror(-rc));
	if (rc)
		o->done = true;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Poll until ops[0..n) are done; false when the watchdog ran out first. */
static bool wait_ops(struct t *t, struct op *ops, unsigned n, double limit_s)
{
	double t0 = now_s();
	for (;;) {
		bool all = true;
		for (unsigned i = 0; i < n; i++)
			all &= __atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE);
		if (all)
			break;
		if (now_s() - t0 > limit_s)
			return false;
		uraid_engine_poll(t->e, 0, 1);
	}
	for (unsigned i = 0; i < n; i++)
		CHECK(ops[i].result == 0, "op %u (kind %d at %" PRIu64 " len %" PRIu64 "): %s", i,
		      ops[i].io.op, ops[i].io.offset, ops[i].io.length, strerror(-ops[i].result));
	return true;
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_RDWR | O_CREAT | O_TRUNC, 0600);
	static uint8_t buf[1 << 20];
	ssize_t n;
	int rc = in < 0 || out < 0 ? -1 : 0;
	while (!rc && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc;
}

/* ---- the replay of a copy, and its check ---- */

struct img {
	int fd[N + 1];
	uint64_t data_offset[N + 1];
	struct uraid_sb sb[N + 1];
	int slot_of[N];         /* slot -> index in fd[] */
	int jidx;
	struct uraid_geom g;
};

static int io_rw(int fd, uint64_t off, void *buf, size_t len, bool wr)
{
	ssize_t n = wr ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -EIO;
}

static int j_log_read(void *ctx, uint64_t s, void *buf, size_t len)
{
	struct img *m = ctx;
	return io_rw(m->fd[m->jidx], (m->data_offset[m->jidx] + s) * 512, buf, len, false);
}

static int j_log_write(void *ctx, uint64_t s, const void *buf, size_t len)
{
	struct img *m = ctx;
	return io_rw(m->fd[m->jidx], (m->data_offset[m->jidx] + s) * 512, (void *)buf, len, true);
}

static int j_flush(void *ctx)
{
	(void)ctx;
	return 0;
}

static int j_member_read(void *ctx, unsigned slot, uint64_t s, void *buf, size_t len)
{
	struct img *m = ctx;
	int i = m->slot_of[slot];
	return io_rw(m->fd[i], (m->data_offset[i] + s) * 512, buf, len, false);
}

static int j_member_write(void *ctx, unsigned slot, uint64_t s, const void *buf, size_t len)
{
	struct img *m = ctx;
	int i = m->slot_of[slot];
	return io_rw(m->fd[i], (m->data_offset[i] + s) * 512, (void *)buf, len, true);
}

static int img_open(struct img *m, char names[N + 1][112], bool wr)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	uint64_t member_sectors[N] = { 0 };
	memset(m, 0, sizeof(*m));
	m->jidx = -1;
	for (unsigned i = 0; i <= N; i++) {
		m->fd[i] = open(names[i], wr ? O_RDWR : O_RDONLY);
		if (m->fd[i] < 0 || uraid_probe_fd(m->fd[i], p) || p->chosen < 0)
			return -1;
		m->sb[i] = p->loc[p->chosen].sb;
		m->data_offset[i] = m->sb[i].data_offset;
		unsigned role = uraid_sb_role(&m->sb[i]);
		if (role < N) {
			m->slot_of[role] = (int)i;
			member_sectors[role] = m->sb[i].data_size;
		} else {
			m->jidx = (int)i;
		}
	}
	free(p);
	if (m->jidx < 0)
		return -1;
	const struct uraid_sb *sb = &m->sb[m->slot_of[0]];
	char why[200];
	struct uraid_geom_params gp = { .level = sb->level, .layout = sb->layout,
		.raid_disks = sb->raid_disks, .chunk_sectors = sb->chunksize, .dev_sectors = sb->size,
		.member_sectors = member_sectors };
	return uraid_geom_init(&m->g, &gp, why, sizeof(why)) ? -1 : 0;
}

static void img_close(struct img *m)
{
	for (unsigned i = 0; i <= N; i++)
		if (m->fd[i] >= 0)
			close(m->fd[i]);
}

/* Member rows whose XOR over the four members is not zero. */
static uint64_t bad_rows(struct img *m)
{
	static uint8_t b[N][65536], x[65536];
	uint64_t bad = 0;
	for (uint64_t s = 0; s < m->g.dev_sectors; s += 128) {
		memset(x, 0, sizeof(x));
		for (unsigned k = 0; k < N; k++) {
			int i = m->slot_of[k];
			if (io_rw(m->fd[i], (m->data_offset[i] + s) * 512, b[k], sizeof(b[k]), false))
				return UINT64_MAX;
			for (size_t j = 0; j < sizeof(x); j++)
				x[j] ^= b[k][j];
		}
		for (size_t r = 0; r < sizeof(x); r += 4096)
			for (size_t j = r; j < r + 4096; j++)
				if (x[j]) {
					bad++;
					break;
				}
	}
	return bad;
}

/* Do the members hold want at array bytes [off, off + len)? */
static bool img_holds(struct img *m, const uint8_t *want, uint64_t len, uint64_t off)
{
	uint8_t sec[512];
	for (uint64_t s = 0; s < len / 512; s++) {
		struct uraid_loc loc[4];
		uraid_geom_map(&m->g, off / 512 + s, loc, 4);
		int i = m->slot_of[loc[0].slot];
		if (io_rw(m->fd[i], (m->data_offset[i] + loc[0].sector) * 512, sec, 512, false) ||
		    memcmp(sec, want + s * 512, 512))
			return false;
	}
	return true;
}

struct expect {
	uint64_t off, len;
	const uint8_t *data;
};

/*
 * Copy the files now (as a crash leaves them), replay the copy's journal
 * and check its rows and the expected data; returns the mismatching rows.
 */
static uint64_t crash_check(struct t *t, const char *what, const struct expect *ex, unsigned nex)
{
	/* status before and after the copy: when they agree (nothing logged
	   or checkpointed meanwhile), its seq and bytes in use must be the
	   copy's log as its replay finds it, or behind it together (a log
	   write in flight, a destage's, may be in the copy before its
	   completion is seen); never ahead of it */
	struct uraid_array_status st0, st1;
	uraid_array_status(t->a, &st0);
	for (unsigned i = 0; i <= N; i++)
		CHECK(copy_file(t->paths[i], t->snap[i]) == 0, "%s: copy %s", what, t->paths[i]);
	uraid_array_status(t->a, &st1);
	struct img m;
	if (img_open(&m, t->snap, true)) {
		CHECK(0, "%s: the copy does not probe", what);
		img_close(&m);
		return UINT64_MAX;
	}
	struct journal_io io = { .ctx = &m, .log_read = j_log_read, .log_write = j_log_write,
				 .log_flush = j_flush, .member_read = j_member_read,
				 .member_write = j_member_write, .member_flush = j_flush };
	struct journal_replay_result r;
	char err[256];
	const struct uraid_sb *jsb = &m.sb[m.jidx];
	int rc = journal_replay(&m.g, jsb->set_uuid, jsb->data_size, jsb->recovery_offset, &io, &r,
				err, sizeof(err));
	CHECK(rc == 0, "%s: replay: %s", what, err);
	if (rc == 0 && !r.new_log && st0.journal_seq == st1.journal_seq &&
	    st0.journal_used_bytes == st1.journal_used_bytes) {
		uint64_t ring = jsb->data_size / 8 * 8;
		uint64_t used = (r.tail + ring - jsb->recovery_offset) % ring * 512;
		uint64_t lseq = r.next_seq - 10001;
		bool same = st0.journal_seq == lseq && st0.journal_used_bytes == used;
		CHECK(same || (st0.journal_seq < lseq && st0.journal_used_bytes < used),
		      "%s: status seq %" PRIu64 " and %" PRIu64 " bytes in use, the log %" PRIu64
		      " and %" PRIu64, what, st0.journal_seq, st0.journal_used_bytes, lseq, used);
		if (!same)
			printf("  %s: status behind the log by %" PRIu64 " meta blocks (a log write "
			       "in flight)\n", what, lseq - st0.journal_seq);
	} else {
		printf("  %s: status changed during the copy, not compared\n", what);
	}
	uint64_t bad = bad_rows(&m);
	printf("  %s: replay %u meta blocks, %u rows with parity, %u data-only; %" PRIu64
	       " rows with wrong parity\n", what, r.meta_blocks, r.data_parity_rows,
	       r.data_only_rows, bad);
	CHECK(bad == 0, "%s: %" PRIu64 " member rows with parity that does not match", what, bad);
	for (unsigned i = 0; i < nex; i++)
		CHECK(img_holds(&m, ex[i].data, ex[i].len, ex[i].off),
		      "%s: the data acknowledged at %" PRIu64 " is not on the members after the "
		      "replay", what, ex[i].off);
	img_close(&m);
	return bad;
}

/* Array stripe s, data chunk k, byte o in the chunk. */
static uint64_t at(uint64_t s, unsigned k, uint64_t o)
{
	return s * STRIPE + k * (CHUNK_KIB * 1024ull) + o;
}

/* A cached page, then a 512 KiB write (through) over another chunk of its row. */
static void test_through_beside_cached(uint64_t *rs)
{
	struct t t;
	CHECK(setup(&t, 8ull << 20) == 0, "setup");
	if (!t.a) {
		teardown(&t);
		return;
	}
	uint8_t *a = aligned_alloc(4096, 4096), *big = aligned_alloc(4096, 512 << 10);
	rng_fill(rs, a, 4096);
	rng_fill(rs, big, 512 << 10);
	struct op ops[2];
	/* stripe 2: chunk 0 and 1 from the big write, chunk 2 (row 0) cached */
	set_op(&ops[0], URAID_IO_WRITE, at(2, 2, 0), 4096, a);
	submit(&t, &ops[0]);
	CHECK(wait_ops(&t, ops, 1, 20), "the cached write did not end");
	struct uraid_array_status st;
	uraid_array_status(t.a, &st);
	CHECK(st.write_cache.writes_cached >= 1, "the 4 KiB write was not cached");
	set_op(&ops[1], URAID_IO_WRITE, 0, 512 << 10, big);
	submit(&t, &ops[1]);
	CHECK(wait_ops(&t, ops + 1, 1, 20), "the through write did not end");
	uraid_array_status(t.a, &st);
	CHECK(st.journal_row_waits >= 1, "the through write's wait for the cached page of its "
	      "row is not counted (%" PRIu64 ")", st.journal_row_waits);
	/* one 512-byte write: the whole cache goes out first, counted */
	CHECK(uraid_array_pwrite(t.a, big + 512, 512, 512, 0) == 0, "the 512-byte write");
	uraid_array_status(t.a, &st);
	CHECK(st.journal_partial_waits == 1, "the 512-byte write's wait is not counted (%" PRIu64
	      ")", st.journal_partial_waits);
	struct expect ex[2] = { { at(2, 2, 0), 4096, a }, { 0, 512 << 10, big } };
	crash_check(&t, "cached page beside a 512 KiB write", ex, 2);
	teardown(&t);
	free(a);
	free(big);
}

/*
 * Many rounds of 4 KiB writes (cached) and 512 KiB..1 MiB writes (through)
 * on the same few stripes, submitted together: each round must end (the
 * watchdog), and the copy after each replays to matching parity.
 */
static void test_mixed_rows(uint64_t *rs, uint64_t journal_bytes, unsigned rounds)
{
	enum { SMALL = 24, BIG = 3 };
	struct t t;
	CHECK(setup(&t, journal_bytes) == 0, "setup");
	if (!t.a) {
		teardown(&t);
		return;
	}
	uint64_t span = 24 * STRIPE;            /* the stripes the writes share */
	uint8_t *small = aligned_alloc(4096, SMALL * 4096ull);
	uint8_t *big = aligned_alloc(4096, BIG * (1ull << 20));
	struct op ops[SMALL + BIG];
	char what[96];
	int before = failures;
	for (unsigned r = 0; r < rounds && failures == before; r++) {
		rng_fill(rs, small, SMALL * 4096ull);
		rng_fill(rs, big, BIG * (1ull << 20));
		uint64_t boff[BIG], blen[BIG], soff[SMALL];
		for (unsigned i = 0; i < BIG; i++) {
			blen[i] = (128 + rng_next(rs) % 129) * 4096;   /* 512 KiB .. 1 MiB */
			boff[i] = (rng_next(rs) % ((span - blen[i]) / 4096)) * 4096;
		}
		for (unsigned i = 0; i < SMALL; i++) {
			/* distinct pages, none under a big write (its data would be
			   the later or the earlier one: either is right, not checked) */
			for (;;) {
				soff[i] = (rng_next(rs) % (span / 4096)) * 4096;
				bool clash = false;
				for (unsigned j = 0; j < i; j++)
					clash |= soff[j] == soff[i];
				for (unsigned j = 0; j < BIG; j++)
					clash |= soff[i] >= boff[j] && soff[i] < boff[j] + blen[j];
				if (!clash)
					break;
			}
		}
		/* the big ones must not overlap each other either */
		for (unsigned i = 1; i < BIG; i++)
			for (unsigned j = 0; j < i; j++)
				if (boff[i] < boff[j] + blen[j] && boff[j] < boff[i] + blen[i])
					blen[i] = 0;
		unsigned n = 0;
		struct expect ex[SMALL + BIG];
		/* the big writes in between the small ones */
		for (unsigned i = 0; i < SMALL; i++) {
			set_op(&ops[n], URAID_IO_WRITE, soff[i], 4096, small + i * 4096ull);
			ex[n] = (struct expect){ soff[i], 4096, small + i * 4096ull };
			submit(&t, &ops[n++]);
			unsigned b = i / 8;
			if (i % 8 == 3 && blen[b]) {
				set_op(&ops[n], URAID_IO_WRITE, boff[b], blen[b], big + b * (1ull << 20));
				ex[n] = (struct expect){ boff[b], blen[b], big + b * (1ull << 20) };
				submit(&t, &ops[n++]);
			}
		}
		bool ended = wait_ops(&t, ops, n, 30);
		CHECK(ended, "round %u: %u writes did not all end within 30 s (stalled)", r, n);
		if (!ended) {
			/* the array cannot close with writes stuck: leave it */
			t.a = NULL;
			break;
		}
		snprintf(what, sizeof(what), "journal %" PRIu64 " KiB, round %u", journal_bytes >> 10,
			 r);
		crash_check(&t, what, ex, n);
	}
	teardown(&t);
	free(small);
	free(big);
}

/*
 * md's rule for a destage (raid5-cache, R5_InJournal): a cached page's bytes
 * are in the log once, as its record's DATA; its destage logs only the
 * row's parity. NPG cached pages in distinct rows, the array closed (its
 * cache destaged): the
 * log from the first tail holds exactly NPG DATA payloads at their sectors
 * (the old rule logged each page again beside the parity: 2 x NPG) and a
 * PARITY for each row. Then a crash after every log write and before any
 * member write (the members as they were before the writes, the log as it
 * is now, replayed from the first tail): the replay gathers each record's
 * DATA and the later PARITY into one row, and its data and parity must be
 * on the members.
 */
static void test_destage_parity_only(uint64_t *rs)
{
	enum { NPG = 16 };
	struct t t;
	CHECK(setup(&t, 8ull << 20) == 0, "setup");
	if (!t.a) {
		teardown(&t);
		return;
	}
	/* the members before the writes, and the log's first tail */
	for (unsigned i = 0; i <= N; i++)
		CHECK(copy_file(t.paths[i], t.snap[i]) == 0, "parity only: copy %s", t.paths[i]);
	struct img m;
	uint64_t tail0 = 0;
	if (img_open(&m, t.snap, false) == 0)
		tail0 = m.sb[m.jidx].recovery_offset;
	else
		CHECK(0, "parity only: the copy does not probe");
	img_close(&m);
	uint8_t *v = aligned_alloc(4096, NPG * 4096ull);
	struct expect ex[NPG];
	rng_fill(rs, v, NPG * 4096ull);
	for (unsigned i = 0; i < NPG; i++) {
		/* stripe 1 + i, chunk i % 3, row i: one page per row */
		ex[i] = (struct expect){ at(1 + i, i % 3, (uint64_t)i * 4096), 4096, v + i * 4096ull };
		CHECK(uraid_array_pwrite(t.a, ex[i].data, 4096, ex[i].off, 0) == 0,
		      "parity only: write %u", i);
	}
	struct uraid_array_status st;
	uraid_array_status(t.a, &st);
	CHECK(st.write_cache.writes_cached == NPG, "parity only: %" PRIu64 " of %d writes cached",
	      st.write_cache.writes_cached, NPG);
	/* a flush is done once the log is (md's write-back): close destages */
	uraid_array_close(t.a);
	t.a = NULL;
	CHECK(copy_file(t.paths[N], t.snap[N]) == 0, "parity only: copy the journal");
	if (img_open(&m, t.snap, true)) {
		CHECK(0, "parity only: the copy does not probe");
		img_close(&m);
		teardown(&t);
		free(v);
		return;
	}
	/* the meta blocks from the first tail, along the seq chain */
	const struct uraid_sb *jsb = &m.sb[m.jidx];
	uint32_t seed = uraid_r5l_seed(jsb->set_uuid);
	uint64_t ring = jsb->data_size, pos = tail0, seq = 0;
	unsigned data[NPG] = { 0 }, other = 0, parity = 0, blocks = 0;
	static struct uraid_r5l_meta meta;
	uint8_t *blk = aligned_alloc(4096, 4096);
	for (;;) {
		char why[200];
		if (io_rw(m.fd[m.jidx], (m.data_offset[m.jidx] + pos) * 512, blk, 4096, false))
			break;
		if (!blocks)
			memcpy(&seq, blk + 16, 8);      /* the first one's own seq (le) */
		if (uraid_r5l_meta_decode(blk, seed, pos, seq, ring, 1, &meta, why, sizeof(why)))
			break;
		for (unsigned k = 0; k < meta.npayloads; k++) {
			const struct uraid_r5l_payload *pl = &meta.p[k];
			if (pl->type == URAID_R5L_PARITY) {
				parity++;
				continue;
			}
			if (pl->type != URAID_R5L_DATA)
				continue;
			bool ours = false;
			for (unsigned i = 0; i < NPG; i++)
				if (pl->location == ex[i].off / 512) {
					data[i]++;
					ours = true;
				}
			other += !ours;
		}
		blocks++;
		pos = uraid_r5l_ring_add(ring, pos, URAID_R5L_BLOCK_SECTORS * (1 + (uint64_t)meta.total_pages));
		seq++;
	}
	free(blk);
	unsigned twice = 0, missing = 0;
	for (unsigned i = 0; i < NPG; i++) {
		twice += data[i] > 1;
		missing += data[i] == 0;
	}
	printf("  parity only: %u meta blocks from the first tail, %u PARITY, pages logged "
	       "twice %u, missing %u, other DATA %u\n", blocks, parity, twice, missing, other);
	CHECK(missing == 0, "parity only: %u cached pages are not in the log", missing);
	CHECK(twice == 0, "parity only: %u cached pages logged again at their destage "
	      "(md logs only the parity of pages already in the journal)", twice);
	CHECK(parity >= NPG, "parity only: %u PARITY payloads for %d destaged rows", parity, NPG);
	/* the crash: members before the writes, the whole log replayed */
	struct journal_io io = { .ctx = &m, .log_read = j_log_read, .log_write = j_log_write,
				 .log_flush = j_flush, .member_read = j_member_read,
				 .member_write = j_member_write, .member_flush = j_flush };
	struct journal_replay_result r;
	char err[256];
	int rc = journal_replay(&m.g, jsb->set_uuid, jsb->data_size, tail0, &io, &r, err,
				sizeof(err));
	CHECK(rc == 0, "parity only: replay: %s", err);
	uint64_t bad = bad_rows(&m);
	printf("  parity only, crash before the member writes: replay %u meta blocks, %u rows "
	       "with parity, %u data-only; %" PRIu64 " rows with wrong parity\n", r.meta_blocks,
	       r.data_parity_rows, r.data_only_rows, bad);
	CHECK(r.data_parity_rows == NPG && r.data_only_rows == 0,
	      "parity only: the replay did not find each record's data with its later parity");
	CHECK(bad == 0, "parity only: %" PRIu64 " member rows with parity that does not match", bad);
	for (unsigned i = 0; i < NPG; i++)
		CHECK(img_holds(&m, ex[i].data, ex[i].len, ex[i].off),
		      "parity only: page %u is not on the members after the replay", i);
	img_close(&m);
	teardown(&t);
	free(v);
}

/*
 * The destage takes the page holding the journal's oldest record first: that
 * record keeps the oldest batch pending, and so the tail and every batch
 * after it (with the offset sweep, a page near the array's end waited for a
 * whole pass while new records and destages used up the log's batches).
 * A page near the end is written first, then pages at lower offsets until
 * a destage write has completed: the first one must have carried it (its
 * bytes on the member files, read raw, no replay).
 */
static void test_oldest_first(uint64_t *rs)
{
	enum { MAXW = 400 };
	struct t t;
	CHECK(setup(&t, 3ull << 20) == 0, "setup");
	if (!t.a) {
		teardown(&t);
		return;
	}
	uint8_t *v = aligned_alloc(4096, (MAXW + 1) * 4096ull);
	rng_fill(rs, v, (MAXW + 1) * 4096ull);
	uint64_t last = (t.size / STRIPE - 1) * STRIPE;     /* the last whole stripe */
	struct expect old = { last + 4096, 4096, v };
	CHECK(uraid_array_pwrite(t.a, old.data, 4096, old.off, 0) == 0, "oldest first: first write");
	struct uraid_array_status st;
	unsigned n = 0;
	for (; n < MAXW; n++) {
		uraid_array_status(t.a, &st);
		if (st.write_cache.destage_writes)
			break;
		/* stripe 1 + n, chunk n % 3, row n % 16: one page per row */
		uint64_t off = at(1 + n, n % 3, (uint64_t)(n % 16) * 4096);
		CHECK(uraid_array_pwrite(t.a, v + (n + 1) * 4096ull, 4096, off, 0) == 0,
		      "oldest first: write %u", n);
	}
	printf("  oldest first: %u writes after the first, %" PRIu64 " cached, %" PRIu64
	       " destage writes done\n", n, st.write_cache.writes_cached,
	       st.write_cache.destage_writes);
	CHECK(st.write_cache.destage_writes >= 1, "oldest first: nothing destaged after %u writes", n);
	for (unsigned i = 0; i < N; i++)
		CHECK(copy_file(t.paths[i], t.snap[i]) == 0, "oldest first: copy %s", t.paths[i]);
	CHECK(copy_file(t.paths[N], t.snap[N]) == 0, "oldest first: copy the journal");
	struct img m;
	if (img_open(&m, t.snap, false) == 0)
		CHECK(img_holds(&m, old.data, old.len, old.off),
		      "oldest first: the first destage did not carry the page of the oldest record");
	else
		CHECK(0, "oldest first: the copy does not probe");
	img_close(&m);
	teardown(&t);
	free(v);
}

/* Put /dev/full under every descriptor of path: its writes fail (ENOSPC). */
static int break_file(const char *path)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0, full = open("/dev/full", O_RDWR);
	char link[300], got[256];
	while (d && full >= 0 && (de = readdir(d))) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		ssize_t l = readlink(link, got, sizeof(got) - 1);
		if (l <= 0)
			continue;
		got[l] = 0;
		if (!strcmp(got, path) && dup2(full, atoi(de->d_name)) >= 0)
			n++;
	}
	if (d)
		closedir(d);
	if (full >= 0)
		close(full);
	return n;
}

static void test_log_write_fails(uint64_t *rs)
{
	struct t t;
	CHECK(setup(&t, 9ull << 20) == 0, "setup");
	if (!t.a) {
		teardown(&t);
		return;
	}
	uint8_t *v = aligned_alloc(4096, 3 * 4096);
	rng_fill(rs, v, 3 * 4096);
	uint64_t off = at(5, 1, 8192);
	CHECK(uraid_array_pwrite(t.a, v, 4096, off, 0) == 0, "log failure: the first write");
	char real[PATH_MAX];
	CHECK(realpath(t.paths[N], real) != NULL, "realpath");
	CHECK(break_file(real) > 0, "log failure: no descriptor of the journal found");
	int w = uraid_array_pwrite(t.a, v + 4096, 4096, off, 0);
	CHECK(w != 0, "log failure: a write acknowledged though its log write failed");
	memset(v + 8192, 0, 4096);
	int r = uraid_array_pread(t.a, v + 8192, 4096, off);
	CHECK(r != 0 || memcmp(v + 8192, v + 4096, 4096),
	      "log failure: the failed write's bytes are read back");
	CHECK(r != 0 || !memcmp(v + 8192, v, 4096),
	      "log failure: the bytes acknowledged before are not read back");
	/* close must end: a watchdog */
	alarm(60);
	uraid_array_close(t.a);
	alarm(0);
	t.a = NULL;
	teardown(&t);
	free(v);
}

/*
 * Sequential writes of whole chunks (64 KiB, 8 in flight) in write-back
 * mode: a stream goes through, as in write-through (wcache.c jwb_stream),
 * not cached chunk by chunk (each next chunk's write waited for the
 * destage of the one before, a read-modify-write). Its data and parity
 * must be on the members when its writes complete (no FLUSH, no idle
 * tick: nothing left dirty, the member rows right without a replay), no
 * row wait but on the stream's first stripe row, and a replay of the log right.
 * Then 4 KiB writes cached on some stripes and a stream over them: the
 * stream's bytes replace the cached ones, for reads and in a replay.
 */
static void test_stream_through(uint64_t *rs)
{
	enum { QD = 8, NW = 48, NSMALL = 6 };
	struct t t;
	CHECK(setup(&t, 8ull << 20) == 0, "setup");
	if (!t.a) {
		teardown(&t);
		return;
	}
	const uint64_t W = CHUNK_KIB * 1024ull;
	uint8_t *d = aligned_alloc(4096, NW * W), *small = aligned_alloc(4096, NSMALL * 4096ull);
	uint8_t *back = aligned_alloc(4096, NW * W);
	struct op ops[QD];
	struct uraid_array_status st;
	rng_fill(rs, d, NW * W);
	/* 48 chunks from stripe 1 on: 16 stripes, 8 writes in flight, in order */
	for (unsigned i = 0; i < NW; i += QD) {
		for (unsigned q = 0; q < QD; q++) {
			set_op(&ops[q], URAID_IO_WRITE, STRIPE + (i + q) * W, W, d + (i + q) * W);
			submit(&t, &ops[q]);
		}
		CHECK(wait_ops(&t, ops, QD, 20), "stream writes %u..%u did not end", i, i + QD - 1);
	}
	uraid_array_status(t.a, &st);
	printf("  stream: %" PRIu64 " writes cached, %" PRIu64 " through, %" PRIu64 " row waits, %"
	       PRIu64 " bytes dirty\n", st.write_cache.writes_cached, st.write_cache.writes_through,
	       st.journal_row_waits, st.write_cache.dirty_bytes);
	/* the first write (no stream yet) is cached: the stream's other
	   writes of its stripe row (chunks 1 and 2) wait for its destage */
	CHECK(st.journal_row_waits <= 2, "a 64 KiB stream waited for cached rows %" PRIu64
	      " times (its writes were cached chunk by chunk)", st.journal_row_waits);
	CHECK(st.write_cache.dirty_bytes == 0, "the stream left %" PRIu64 " bytes in the cache, "
	      "not on the members", st.write_cache.dirty_bytes);
	/* the members now, as they are (no replay): data and parity there */
	for (unsigned i = 0; i <= N; i++)
		CHECK(copy_file(t.paths[i], t.snap[i]) == 0, "copy %s", t.paths[i]);
	struct img m;
	if (img_open(&m, t.snap, false) == 0) {
		uint64_t bad = bad_rows(&m);
		CHECK(bad == 0, "stream: %" PRIu64 " member rows with wrong parity before any replay",
		      bad);
		CHECK(img_holds(&m, d, NW * W, STRIPE), "stream: its data is not on the members "
		      "when its writes have completed");
	} else {
		CHECK(0, "stream: the copy does not probe");
	}
	img_close(&m);
	struct expect ex[2] = { { STRIPE, NW * W, d } };
	crash_check(&t, "64 KiB stream", ex, 1);
	CHECK(uraid_array_pread(t.a, back, NW * W, STRIPE) == 0, "read the stream back");
	CHECK(memcmp(back, d, NW * W) == 0, "the stream does not read back byte for byte");

	/* cached 4 KiB pages in chunk 2 of stripes 20..25, then a stream over them */
	rng_fill(rs, small, NSMALL * 4096ull);
	for (unsigned i = 0; i < NSMALL; i++) {
		set_op(&ops[i], URAID_IO_WRITE, at(20 + i, 2, 4096), 4096, small + i * 4096ull);
		submit(&t, &ops[i]);
	}
	CHECK(wait_ops(&t, ops, NSMALL, 20), "the 4 KiB writes did not end");
	uraid_array_status(t.a, &st);
	uint64_t cached0 = st.write_cache.writes_cached;
	CHECK(st.write_cache.dirty_bytes > 0, "the 4 KiB writes were not cached");
	rng_fill(rs, d, NW * W);
	for (unsigned i = 0; i < 3 * NSMALL; i += QD / 2) {
		unsigned n = 3 * NSMALL - i < QD / 2 ? 3 * NSMALL - i : QD / 2;
		for (unsigned q = 0; q < n; q++) {
			set_op(&ops[q], URAID_IO_WRITE, 20 * STRIPE + (i + q) * W, W, d + (i + q) * W);
			submit(&t, &ops[q]);
		}
		CHECK(wait_ops(&t, ops, n, 20), "stream writes over cached pages did not end");
	}
	uraid_array_status(t.a, &st);
	CHECK(st.write_cache.writes_cached <= cached0 + 1, "the stream over cached pages was "
	      "cached (%" PRIu64 " writes)", st.write_cache.writes_cached - cached0);
	ex[0] = (struct expect){ 20 * STRIPE, 3 * NSMALL * W, d };
	crash_check(&t, "stream over cached pages", ex, 1);
	CHECK(uraid_array_pread(t.a, back, 3 * NSMALL * W, 20 * STRIPE) == 0, "read back");
	CHECK(memcmp(back, d, 3 * NSMALL * W) == 0, "the stream over cached pages does not "
	      "read back byte for byte (older cached bytes)");
	teardown(&t);
	free(d);
	free(small);
	free(back);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_journal_wb seed %" PRIu64 "\n", seed);
	uint64_t rs = seed;

	test_through_beside_cached(&rs);
	test_stream_through(&rs);
	test_destage_parity_only(&rs);
	test_oldest_first(&rs);
	test_log_write_fails(&rs);
	/* the journal device holds 1 MiB of metadata first (1.2): rings of
	   8, 2 and 1 MiB */
	test_mixed_rows(&rs, 9ull << 20, 4);
	test_mixed_rows(&rs, 3ull << 20, 4);
	test_mixed_rows(&rs, 2ull << 20, 4);
	printf("%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
