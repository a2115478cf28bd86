/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the write journal's replay (src/engine/md/journal_replay.c)
 * on members and a log in memory: hand-made logs as md writes them (meta
 * blocks, DATA and PARITY pages, FLUSH), stale members, then the replay;
 * the members must hold the logged data with parity that matches (checked
 * with the scalar reference, not src/parity), rows not to replay must stay
 * as they were, and the new log start must be md's (seq + 10000 at the
 * first invalid block). A log of many rows over every window of the
 * replay's reads, wrapping the ring, must leave the same bytes written in
 * batches as one by one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>
#include "engine/md/journal.h"
#include "format/r5l.h"
#include "../support/check.h"
#include "../support/parity_ref.h"

#define SEED 0x10a9f00dull
#define PG 4096u
#define CHUNK 16u                 /* sectors: two 4 KiB rows per chunk */
#define DEV_SECTORS 256u
#define LOG_SECTORS (512u * 8)    /* a ring of 512 pages: 8 of the replay's read windows */

static uint64_t rng = SEED;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fill(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rnd();
}

/* ---- the array in memory ---- */

struct mem {
	struct uraid_geom g;
	uint8_t uuid[16];
	uint32_t seed;
	uint8_t *dev[8];            /* NULL: missing */
	uint8_t log[LOG_SECTORS * 512];
	unsigned member_writes;
	unsigned batches;           /* member_write_batch calls */
	bool no_batch;              /* the replay without member_write_batch */
	char notes[2000];
};

static int log_read(void *c, uint64_t s, void *buf, size_t len)
{
	struct mem *m = c;
	if (s * 512 + len > sizeof(m->log))
		return -EIO;
	memcpy(buf, m->log + s * 512, len);
	return 0;
}

static int log_write(void *c, uint64_t s, const void *buf, size_t len)
{
	struct mem *m = c;
	if (s * 512 + len > sizeof(m->log))
		return -EIO;
	memcpy(m->log + s * 512, buf, len);
	return 0;
}

static int no_flush(void *c) { (void)c; return 0; }

static int mem_read(void *c, unsigned slot, uint64_t s, void *buf, size_t len)
{
	struct mem *m = c;
	if (!m->dev[slot])
		return -ENODEV;
	if (s * 512 + len > DEV_SECTORS * 512ull)
		return -EIO;
	memcpy(buf, m->dev[slot] + s * 512, len);
	return 0;
}

static int mem_write(void *c, unsigned slot, uint64_t s, const void *buf, size_t len)
{
	struct mem *m = c;
	if (!m->dev[slot])
		return -ENODEV;
	if (s * 512 + len > DEV_SECTORS * 512ull)
		return -EIO;
	memcpy(m->dev[slot] + s * 512, buf, len);
	m->member_writes++;
	return 0;
}

/* The batch as journal_assemble's: its order checked (slot, then sector,
   each place once), a missing slot skipped. */
static int mem_write_batch(void *c, const struct journal_wr *w, size_t n, size_t *failed)
{
	struct mem *m = c;

	m->batches++;
	for (size_t i = 0; i < n; i++) {
		CHECK(i == 0 || w[i - 1].slot < w[i].slot ||
		      (w[i - 1].slot == w[i].slot && w[i - 1].sector < w[i].sector),
		      "batch write %zu in slot and sector order", i);
		int rc = mem_write(c, w[i].slot, w[i].sector, w[i].buf, w[i].len);
		if (rc && rc != -ENODEV) {
			*failed = i;
			return rc;
		}
	}
	return 0;
}

static void mem_note(void *c, const char *line)
{
	struct mem *m = c;
	size_t l = strlen(m->notes);
	snprintf(m->notes + l, sizeof(m->notes) - l, "%s\n", line);
}

static struct journal_io io_of(struct mem *m)
{
	return (struct journal_io){ .ctx = m, .log_read = log_read, .log_write = log_write,
				    .log_flush = no_flush, .member_read = mem_read,
				    .member_write = mem_write, .member_flush = no_flush,
				    .member_write_batch = m->no_batch ? NULL : mem_write_batch,
				    .note = mem_note };
}

/* P and Q of the row at member sector s, from the members (reference code). */
static void row_parity(struct mem *m, uint64_t s, uint8_t *p, uint8_t *q)
{
	struct uraid_stripe st;
	const uint8_t *data[16];
	static uint8_t zero[PG];

	uraid_geom_stripe(&m->g, s / CHUNK, &st);
	unsigned n = st.q_slot < 0 ? st.data_disks : st.syndrome_slots;
	for (unsigned k = 0; k < n; k++)
		data[k] = zero;
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++) {
		struct uraid_rloc rl;
		uraid_geom_reverse(&m->g, sl, s, &rl);
		if (rl.kind != URAID_CHUNK_DATA)
			continue;
		int idx = st.q_slot < 0 ? -1 : st.syndrome_of_slot[sl];
		if (st.q_slot < 0)
			for (unsigned k = 0; k < st.data_disks; k++)
				if (st.data_slot[k] == sl)
					idx = (int)k;
		data[idx] = m->dev[sl] + s * 512;
	}
	parity_ref_gen(n, PG, data, p, st.q_slot < 0 ? NULL : q);
}

static void make_array(struct mem *m, int level, unsigned disks)
{
	char err[200];
	struct uraid_geom_params gp = { .level = level, .layout = level == 6 ? 18 : 2,
					.raid_disks = disks, .chunk_sectors = CHUNK,
					.dev_sectors = DEV_SECTORS };
	memset(m, 0, sizeof(*m));
	if (uraid_geom_init(&m->g, &gp, err, sizeof(err)))
		fprintf(stderr, "geom: %s\n", err), exit(1);
	fill(m->uuid, 16);
	m->seed = uraid_r5l_seed(m->uuid);
	for (unsigned s = 0; s < disks; s++) {
		m->dev[s] = malloc(DEV_SECTORS * 512);
		fill(m->dev[s], DEV_SECTORS * 512);
	}
	/* consistent parity everywhere */
	for (uint64_t s = 0; s < DEV_SECTORS; s += 8) {
		struct uraid_stripe st;
		uint8_t p[PG], q[PG];
		uraid_geom_stripe(&m->g, s / CHUNK, &st);
		row_parity(m, s, p, q);
		memcpy(m->dev[st.p_slot] + s * 512, p, PG);
		if (st.q_slot >= 0)
			memcpy(m->dev[st.q_slot] + s * 512, q, PG);
	}
}

static void free_array(struct mem *m)
{
	for (unsigned s = 0; s < 8; s++)
		free(m->dev[s]);
}

static bool row_consistent(struct mem *m, uint64_t s)
{
	struct uraid_stripe st;
	uint8_t p[PG], q[PG];
	uraid_geom_stripe(&m->g, s / CHUNK, &st);
	row_parity(m, s, p, q);
	if (m->dev[st.p_slot] && memcmp(p, m->dev[st.p_slot] + s * 512, PG))
		return false;
	return st.q_slot < 0 || !m->dev[st.q_slot] || !memcmp(q, m->dev[st.q_slot] + s * 512, PG);
}

/* ---- writing a log as md does ---- */

struct lw {
	struct mem *m;
	uint8_t meta[PG];
	uint64_t pos, next;     /* meta block's position, next page's */
};

static void lw_begin(struct lw *w, struct mem *m, uint64_t seq, uint64_t pos)
{
	w->m = m;
	w->pos = pos;
	w->next = uraid_r5l_ring_add(LOG_SECTORS, pos, 8);
	uraid_r5l_meta_init(w->meta, seq, pos);
}

static void lw_page(struct lw *w, const uint8_t *page)
{
	memcpy(w->m->log + w->next * 512, page, PG);
	w->next = uraid_r5l_ring_add(LOG_SECTORS, w->next, 8);
}

static void lw_data(struct lw *w, uint64_t array_sector, const uint8_t *page)
{
	CHECK(uraid_r5l_meta_add_data(w->meta, array_sector,
				      uraid_r5l_page_csum(w->m->seed, page)) == 0, "add data");
	lw_page(w, page);
}

static void lw_parity(struct lw *w, uint64_t member_sector, const uint8_t *p, const uint8_t *q)
{
	uint32_t c[2] = { uraid_r5l_page_csum(w->m->seed, p), q ? uraid_r5l_page_csum(w->m->seed, q) : 0 };
	CHECK(uraid_r5l_meta_add_parity(w->meta, member_sector, c, q ? 2 : 1) == 0, "add parity");
	lw_page(w, p);
	if (q)
		lw_page(w, q);
}

/* Seal and write the meta block; returns where the next one goes. */
static uint64_t lw_end(struct lw *w)
{
	uraid_r5l_meta_seal(w->meta, w->m->seed);
	memcpy(w->m->log + w->pos * 512, w->meta, PG);
	return w->next;
}

/*
 * Log new contents for the row at member sector s: new random data for the
 * data slots in mask (bit = slot), with parity unless data_only. The new
 * pages are kept in want[] (per slot) and the members are left stale.
 */
static void log_row(struct lw *w, uint64_t s, unsigned mask, bool data_only,
		    uint8_t want[][PG])
{
	struct mem *m = w->m;
	struct uraid_stripe st;
	uint8_t *saved[8];
	uint8_t p[PG], q[PG];

	uraid_geom_stripe(&m->g, s / CHUNK, &st);
	/* compute the new parity on a copy of the row */
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++) {
		saved[sl] = m->dev[sl];
		m->dev[sl] = malloc(DEV_SECTORS * 512);
		if (saved[sl])
			memcpy(m->dev[sl], saved[sl], DEV_SECTORS * 512);
		memcpy(want[sl], m->dev[sl] + s * 512, PG);
	}
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++) {
		struct uraid_rloc rl;
		if (!(mask >> sl & 1))
			continue;
		uraid_geom_reverse(&m->g, sl, s, &rl);
		CHECK(rl.kind == URAID_CHUNK_DATA, "slot %u is data", sl);
		fill(want[sl], PG);
		memcpy(m->dev[sl] + s * 512, want[sl], PG);
		lw_data(w, rl.array_sector, want[sl]);
	}
	row_parity(m, s, p, q);
	memcpy(want[st.p_slot], p, PG);
	if (st.q_slot >= 0)
		memcpy(want[st.q_slot], q, PG);
	if (!data_only)
		lw_parity(w, s, p, st.q_slot >= 0 ? q : NULL);
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++) {
		free(m->dev[sl]);
		m->dev[sl] = saved[sl];
	}
}

static bool row_is(struct mem *m, uint64_t s, uint8_t want[][PG])
{
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++)
		if (m->dev[sl] && memcmp(m->dev[sl] + s * 512, want[sl], PG))
			return false;
	return true;
}

static void snapshot_row(struct mem *m, uint64_t s, uint8_t out[][PG])
{
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++)
		if (m->dev[sl])
			memcpy(out[sl], m->dev[sl] + s * 512, PG);
}

static int replay(struct mem *m, uint64_t tail, struct journal_replay_result *r, char *err)
{
	struct journal_io io = io_of(m);
	err[0] = 0;
	m->notes[0] = 0;
	return journal_replay(&m->g, m->uuid, LOG_SECTORS, tail, &io, r, err, 200);
}

static bool empty_meta_at(struct mem *m, uint64_t pos, uint64_t seq)
{
	static struct uraid_r5l_meta meta;
	char err[200];
	return uraid_r5l_meta_decode(m->log + pos * 512, m->seed, pos, seq, LOG_SECTORS,
				     m->g.level == 6 ? 2 : 1, &meta, err, sizeof(err)) == 0 &&
	       meta.npayloads == 0;
}

/* ---- the cases ---- */

static uint8_t wa[8][PG], wb[8][PG], old[8][PG];

static void test_data_and_parity(int level, unsigned disks, uint64_t tail, bool no_batch)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	uint64_t a = 32, b = 72;   /* two rows */

	make_array(m, level, disks);
	m->no_batch = no_batch;
	struct uraid_stripe st;
	uraid_geom_stripe(&m->g, a / CHUNK, &st);
	unsigned full = 0;
	for (unsigned k = 0; k < st.data_disks; k++)
		full |= 1u << st.data_slot[k];
	uraid_geom_stripe(&m->g, b / CHUNK, &st);
	unsigned one = 1u << st.data_slot[1];

	lw_begin(&w, m, 500, tail);
	log_row(&w, a, full, false, wa);
	uint64_t next = lw_end(&w);
	lw_begin(&w, m, 501, next);
	log_row(&w, b, one, false, wb);
	next = lw_end(&w);
	CHECK(!row_is(m, a, wa) && !row_is(m, b, wb), "members stale before the replay");

	int rc = replay(m, tail, &r, err);
	CHECK(rc == 0, "raid%d replay: %s", level, err);
	CHECK(no_batch ? m->batches == 0 : m->batches > 0, "raid%d: %u batches", level, m->batches);
	CHECK(row_is(m, a, wa), "raid%d full row replayed", level);
	CHECK(row_is(m, b, wb), "raid%d one-page row replayed", level);
	CHECK(row_consistent(m, a) && row_consistent(m, b), "parity consistent");
	CHECK(r.meta_blocks == 2 && r.data_parity_rows == 2 && r.data_only_rows == 0 &&
	      !r.new_log, "counts %u %u %u", r.meta_blocks, r.data_parity_rows, r.data_only_rows);
	CHECK(r.tail == next && r.next_seq == 502 + 10000 + 1 &&
	      r.log_start == uraid_r5l_ring_add(LOG_SECTORS, next, 8),
	      "tail %" PRIu64 " (want %" PRIu64 ") seq %" PRIu64, r.tail, next, r.next_seq);
	CHECK(empty_meta_at(m, next, 502 + 10000), "md's restart block at the tail");
	printf("  raid%d x %u from tail %" PRIu64 ": %s", level, disks, tail, m->notes);

	/* a second start finds the clean log: nothing to write */
	unsigned writes = m->member_writes;
	rc = replay(m, r.tail, &r, err);
	CHECK(rc == 0 && r.meta_blocks == 1 && r.data_parity_rows == 0 &&
	      m->member_writes == writes && r.tail == uraid_r5l_ring_add(LOG_SECTORS, next, 8),
	      "second replay: rc %d blocks %u: %s", rc, r.meta_blocks, err);
	free_array(m);
	free(m);
}

static void test_flush_and_bad_page(void)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	uint64_t a = 0, b = 40, c = 88;

	make_array(m, 5, 4);
	snapshot_row(m, a, old);
	lw_begin(&w, m, 7, 16);
	log_row(&w, a, 1u << 1, false, wa);
	uint64_t next = lw_end(&w);
	lw_begin(&w, m, 8, next);
	CHECK(uraid_r5l_meta_add_flush(w.meta, a) == 0, "flush");
	log_row(&w, b, 1u << 2, false, wb);
	next = lw_end(&w);
	/* a third block whose data page is corrupt after sealing */
	uint64_t third = next;
	lw_begin(&w, m, 9, third);
	static uint8_t wc[8][PG];
	log_row(&w, c, 1u << 0, false, wc);
	lw_end(&w);
	m->log[(third + 8) * 512 + 100] ^= 1;
	uint8_t oldc[8][PG];
	snapshot_row(m, c, oldc);

	int rc = replay(m, 16, &r, err);
	CHECK(rc == 0, "replay: %s", err);
	CHECK(row_is(m, a, old), "row flushed in the log is not written again");
	CHECK(row_is(m, b, wb), "row after the flush replayed");
	CHECK(row_is(m, c, oldc), "row of the corrupt block not written");
	CHECK(r.bad_meta == 1 && r.meta_blocks == 3, "bad %u blocks %u", r.bad_meta, r.meta_blocks);
	/* md goes on 8 sectors past the dropped block, finds its page: the end */
	CHECK(r.tail == third + 8, "tail %" PRIu64 " want %" PRIu64, r.tail, third + 8);
	CHECK(strstr(m->notes, "does not match its checksum") != NULL, "note: %s", m->notes);
	printf("  flush and corrupt page: %s", m->notes);
	free_array(m);
	free(m);
}

static void test_data_only(void)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	uint64_t a = 24;

	make_array(m, 5, 4);
	struct uraid_stripe st;
	uraid_geom_stripe(&m->g, a / CHUNK, &st);
	unsigned full = 0;
	for (unsigned k = 0; k < st.data_disks; k++)
		full |= 1u << st.data_slot[k];
	/* generation 1 with parity, then generation 2 (one page) data only */
	lw_begin(&w, m, 40, 0);
	log_row(&w, a, full, false, wa);
	uint64_t next = lw_end(&w);
	/* generation 2 is computed on top of generation 1 */
	for (unsigned sl = 0; sl < 4; sl++)
		memcpy(old[sl], m->dev[sl] + a * 512, PG), memcpy(m->dev[sl] + a * 512, wa[sl], PG);
	lw_begin(&w, m, 41, next);
	log_row(&w, a, 1u << st.data_slot[0], true, wb);
	lw_end(&w);
	for (unsigned sl = 0; sl < 4; sl++)
		memcpy(m->dev[sl] + a * 512, old[sl], PG);

	int rc = replay(m, 0, &r, err);
	CHECK(rc == 0, "replay: %s", err);
	CHECK(row_is(m, a, wb), "generation 2 over generation 1, parity recomputed");
	CHECK(row_consistent(m, a), "consistent");
	/* generation 1 and 2 merged into one row, its parity recomputed */
	CHECK(r.data_parity_rows == 0 && r.data_only_rows == 1, "rows %u %u", r.data_parity_rows,
	      r.data_only_rows);

	/* the row's parity member missing: the data still goes to the members */
	make_array(m, 5, 4);
	lw_begin(&w, m, 40, 0);
	log_row(&w, a, 1u << st.data_slot[0], true, wb);
	lw_end(&w);
	free(m->dev[st.p_slot]);
	m->dev[st.p_slot] = NULL;
	rc = replay(m, 0, &r, err);
	CHECK(rc == 0 && row_is(m, a, wb) && r.data_only_rows == 1,
	      "data-only row, parity member missing: %d %s", rc, err);

	/* a data member missing (not written): its content rebuilt from the old
	   parity for the new parity, which then matches wb (holding its old
	   content) on every present slot */
	make_array(m, 5, 4);
	lw_begin(&w, m, 40, 0);
	log_row(&w, a, 1u << st.data_slot[0], true, wb);
	lw_end(&w);
	free(m->dev[st.data_slot[1]]);
	m->dev[st.data_slot[1]] = NULL;
	rc = replay(m, 0, &r, err);
	CHECK(rc == 0 && row_is(m, a, wb) && r.data_only_rows == 1,
	      "degraded data-only, other data member missing: %d %s", rc, err);
	/* the written data member missing: the new parity holds its data */
	make_array(m, 5, 4);
	lw_begin(&w, m, 40, 0);
	log_row(&w, a, 1u << st.data_slot[0], true, wb);
	lw_end(&w);
	free(m->dev[st.data_slot[0]]);
	m->dev[st.data_slot[0]] = NULL;
	rc = replay(m, 0, &r, err);
	CHECK(rc == 0 && row_is(m, a, wb) && r.data_only_rows == 1,
	      "degraded data-only, its data member missing: %d %s", rc, err);
	/* a data member and the parity member missing (RAID 6): refused, said */
	make_array(m, 6, 5);
	struct uraid_stripe st6;
	uraid_geom_stripe(&m->g, a / CHUNK, &st6);
	lw_begin(&w, m, 40, 0);
	log_row(&w, a, 1u << st6.data_slot[0], true, wb);
	lw_end(&w);
	free(m->dev[st6.data_slot[1]]);
	m->dev[st6.data_slot[1]] = NULL;
	free(m->dev[st6.p_slot]);
	m->dev[st6.p_slot] = NULL;
	rc = replay(m, 0, &r, err);
	CHECK(rc == -EIO && strstr(err, "missing"), "degraded data-only: %d %s", rc, err);
	printf("  refused: %s\n", err);
	free_array(m);
	free(m);
}

static void set_row(struct mem *m, uint64_t s, uint8_t rows[][PG])
{
	for (unsigned sl = 0; sl < m->g.raid_disks; sl++)
		if (m->dev[sl])
			memcpy(m->dev[sl] + s * 512, rows[sl], PG);
}

/*
 * One row written three times (write-through: each on the members before
 * the next): A logged with parity, B logged with parity on top of A, then
 * C not logged, only a FLUSH for the row (a unit the run-time journal could
 * not log whole). The replay must leave C: the rows are merged, never
 * written out when newer data for them comes (A over C was the bug). And
 * with the members still holding the row before A, A and B merge into B's
 * row (B's parity covers A's data): one row written, low_row at it.
 */
static void test_superseded_rows(void)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	uint64_t a = 32;
	static uint8_t wc[8][PG];

	make_array(m, 5, 4);
	struct uraid_stripe st;
	uraid_geom_stripe(&m->g, a / CHUNK, &st);
	snapshot_row(m, a, old);
	lw_begin(&w, m, 50, 0);
	log_row(&w, a, 1u << st.data_slot[0], false, wa);
	uint64_t next = lw_end(&w);
	set_row(m, a, wa);
	lw_begin(&w, m, 51, next);
	log_row(&w, a, 1u << st.data_slot[1], false, wb);
	next = lw_end(&w);
	set_row(m, a, wb);
	/* C: new data on slot 0 and the parity, on the members, not logged */
	fill(m->dev[st.data_slot[0]] + a * 512, PG);
	uint8_t p[PG], q[PG];
	row_parity(m, a, p, q);
	memcpy(m->dev[st.p_slot] + a * 512, p, PG);
	snapshot_row(m, a, wc);
	lw_begin(&w, m, 52, next);
	CHECK(uraid_r5l_meta_add_flush(w.meta, a) == 0, "flush");
	lw_end(&w);
	int rc = replay(m, 0, &r, err);
	CHECK(rc == 0, "replay: %s", err);
	CHECK(row_is(m, a, wc), "the unlogged newer row C is left as it is (not A over it)");
	CHECK(row_consistent(m, a), "consistent");
	CHECK(r.data_parity_rows == 0 && r.low_row == UINT64_MAX, "rows %u low %" PRIu64,
	      r.data_parity_rows, r.low_row);

	/* A and B logged, members stale (before A): B's row, A's data with it */
	make_array(m, 5, 4);
	snapshot_row(m, a, old);
	lw_begin(&w, m, 50, 0);
	log_row(&w, a, 1u << st.data_slot[0], false, wa);
	next = lw_end(&w);
	set_row(m, a, wa);
	lw_begin(&w, m, 51, next);
	log_row(&w, a, 1u << st.data_slot[1], false, wb);
	lw_end(&w);
	set_row(m, a, old);
	rc = replay(m, 0, &r, err);
	CHECK(rc == 0, "replay: %s", err);
	CHECK(row_is(m, a, wb), "A and B merged into B's row");
	CHECK(memcmp(m->dev[st.data_slot[0]] + a * 512, wa[st.data_slot[0]], PG) == 0,
	      "A's data there");
	CHECK(r.data_parity_rows == 1 && r.low_row == a, "rows %u low %" PRIu64,
	      r.data_parity_rows, r.low_row);
	free_array(m);
	free(m);
}

static void test_degraded_raid6(void)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	uint64_t a = 48;

	make_array(m, 6, 5);
	struct uraid_stripe st;
	uraid_geom_stripe(&m->g, a / CHUNK, &st);
	lw_begin(&w, m, 3, 8);
	log_row(&w, a, 1u << st.data_slot[0] | 1u << st.data_slot[2], false, wa);
	lw_end(&w);
	free(m->dev[st.data_slot[1]]);
	m->dev[st.data_slot[1]] = NULL;
	int rc = replay(m, 8, &r, err);
	CHECK(rc == 0 && row_is(m, a, wa), "degraded raid6 replay: %s", err);
	free_array(m);
	free(m);
}

static void test_refusals(void)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	uint8_t page[PG];

	make_array(m, 5, 4);
	/* no valid block at the tail: a new log, members untouched */
	{
		int rc = replay(m, 24, &r, err);
		CHECK(rc == 0 && r.new_log && r.tail == 0 && r.log_start == 8 &&
		      m->member_writes == 0, "new log: %s", err);
		CHECK(empty_meta_at(m, 0, r.next_seq - 1), "new log's block at 0");
	}
	/* a tail off 4 KiB is taken as 0 */
	lw_begin(&w, m, 1000, 0);
	lw_end(&w);
	int rc = replay(m, 3, &r, err);
	CHECK(rc == 0 && !r.new_log && r.meta_blocks == 1, "tail 3 read as 0: %s", err);
	/* DATA past the array's end */
	fill(page, PG);
	lw_begin(&w, m, 1, 0);
	lw_data(&w, m->g.array_sectors, page);
	lw_end(&w);
	rc = replay(m, 0, &r, err);
	CHECK(rc == -EINVAL && strstr(err, "past the array"), "data past the end: %d %s", rc, err);
	printf("  refused: %s\n", err);
	/* PARITY past the members' end */
	lw_begin(&w, m, 1, 0);
	lw_parity(&w, DEV_SECTORS, page, NULL);
	lw_end(&w);
	rc = replay(m, 0, &r, err);
	CHECK(rc == -EINVAL && strstr(err, "past the members"), "parity past the end: %d %s", rc, err);
	printf("  refused: %s\n", err);
	/* a journal of another array (other uuid): nothing valid, a new log */
	lw_begin(&w, m, 1, 0);
	lw_data(&w, 0, page);
	lw_end(&w);
	m->uuid[0] ^= 1;
	unsigned writes = m->member_writes;
	rc = replay(m, 0, &r, err);
	CHECK(rc == 0 && r.new_log && m->member_writes == writes, "other uuid: %s", err);
	free_array(m);
	free(m);
}

/*
 * Rows logged whole (RAID 5 x 4 and RAID 6 x 5), one meta block each, some
 * rows again later (the newest wins), until the ring is nearly full, from a
 * tail chosen at random so that the log wraps: the replay reads it over
 * several windows and writes it in several batches. The members must hold
 * each row's newest content with its parity, the others untouched, and be
 * the same bytes as a replay of the same log with member_write one by one.
 */
static void test_many_windows(int level, unsigned disks)
{
	struct mem *m = calloc(1, sizeof(*m));
	static uint8_t want[DEV_SECTORS / 8][8][PG], pg[8][PG];
	bool logged[DEV_SECTORS / 8] = { false };
	uint8_t *before[8], *after[8], *log0 = malloc(sizeof(m->log));
	struct journal_replay_result r;
	struct lw w;
	char err[200];
	unsigned blocks = 0, batches;

	make_array(m, level, disks);
	uint64_t tail = rnd() % (LOG_SECTORS / 8) * 8, pos = tail, seq = rnd() >> 16;
	struct uraid_stripe st;
	uraid_geom_stripe(&m->g, 0, &st);
	uint64_t per = 1 + disks;       /* meta block, data and parity pages */
	while ((blocks + 2) * per * 8 < LOG_SECTORS) {
		uint64_t row = rnd() % (DEV_SECTORS / 8), s = row * 8;
		unsigned full = 0;
		uraid_geom_stripe(&m->g, s / CHUNK, &st);
		for (unsigned k = 0; k < st.data_disks; k++)
			full |= 1u << st.data_slot[k];
		lw_begin(&w, m, seq + blocks, pos);
		log_row(&w, s, full, false, pg);
		pos = lw_end(&w);
		memcpy(want[row], pg, sizeof(pg));
		logged[row] = true;
		blocks++;
	}
	for (unsigned sl = 0; sl < disks; sl++) {
		before[sl] = malloc(DEV_SECTORS * 512);
		after[sl] = malloc(DEV_SECTORS * 512);
		memcpy(before[sl], m->dev[sl], DEV_SECTORS * 512);
	}
	memcpy(log0, m->log, sizeof(m->log));

	int rc = replay(m, tail, &r, err);
	batches = m->batches;
	CHECK(rc == 0 && r.meta_blocks == blocks, "raid%d: replay of %u blocks: rc %d, %u blocks: %s",
	      level, blocks, rc, r.meta_blocks, err);
	CHECK(batches > 2, "raid%d: %u blocks written in %u batches (several windows)", level,
	      blocks, batches);
	unsigned rows = 0;
	for (uint64_t row = 0; row < DEV_SECTORS / 8; row++) {
		uint64_t s = row * 8;
		rows += logged[row];
		if (logged[row]) {
			CHECK(row_is(m, s, want[row]) && row_consistent(m, s),
			      "raid%d: row %" PRIu64 " holds its newest content", level, row);
			continue;
		}
		for (unsigned sl = 0; sl < disks; sl++)
			CHECK(!memcmp(m->dev[sl] + s * 512, before[sl] + s * 512, PG),
			      "raid%d: row %" PRIu64 " not logged, untouched", level, row);
	}
	CHECK(r.data_parity_rows == rows, "raid%d: %u rows written, %u logged", level,
	      r.data_parity_rows, rows);
	/* the same log and members, one write at a time */
	for (unsigned sl = 0; sl < disks; sl++) {
		memcpy(after[sl], m->dev[sl], DEV_SECTORS * 512);
		memcpy(m->dev[sl], before[sl], DEV_SECTORS * 512);
	}
	memcpy(m->log, log0, sizeof(m->log));
	m->no_batch = true;
	rc = replay(m, tail, &r, err);
	CHECK(rc == 0, "raid%d: second replay: %s", level, err);
	for (unsigned sl = 0; sl < disks; sl++)
		CHECK(!memcmp(after[sl], m->dev[sl], DEV_SECTORS * 512),
		      "raid%d: slot %u the same in batches and one by one", level, sl);
	printf("  raid%d x %u: %u blocks from log sector %" PRIu64 " (%s the ring's end), %u "
	       "rows, %u batches\n", level, disks, blocks, tail,
	       tail + blocks * per * 8 > LOG_SECTORS ? "over" : "not over", rows, batches);
	for (unsigned sl = 0; sl < disks; sl++) {
		free(before[sl]);
		free(after[sl]);
	}
	free(log0);
	free_array(m);
	free(m);
}

int main(void)
{
	printf("test_journal_replay: seed 0x%016llx\n", (unsigned long long)SEED);
	test_data_and_parity(5, 4, 8, false);
	test_data_and_parity(4, 4, 8, false);
	test_data_and_parity(6, 5, 8, false);
	test_data_and_parity(6, 5, 8, true);            /* member_write one by one */
	test_data_and_parity(5, 4, LOG_SECTORS - 16, false);   /* pages wrap around the ring */
	test_flush_and_bad_page();
	test_data_only();
	test_superseded_rows();
	test_degraded_raid6();
	test_refusals();
	test_many_windows(5, 4);
	test_many_windows(6, 5);
	if (failures) {
		fprintf(stderr, "test_journal_replay: %d failures (seed 0x%016llx)\n", failures,
			(unsigned long long)SEED);
		return 1;
	}
	printf("test_journal_replay: ok\n");
	return 0;
}
