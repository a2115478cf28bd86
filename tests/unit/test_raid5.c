/* SPDX-License-Identifier: MIT */
/*
 * test_raid5: the RAID 4/5/6 data path (src/engine/level/raid5*.c) on its
 * own, with the engine around it replaced by fakes: members are memory,
 * member I/O completes later in a random order, reactor_post queues, the
 * buffer pool is malloc. Parts:
 *
 * 1. the write planner over every piece shape of several geometries, healthy
 *    and with every loss the level survives, against a brute-force count;
 * 2. row locks: FIFO hand-over on one thread, then mutual exclusion with
 *    8 threads, each its own reactor, contending on a few rows;
 * 3. a model: seeded random concurrent (non-overlapping) reads, writes,
 *    write-zeroes and discards of 1 sector to several rows against an
 *    in-memory reference, for RAID 4, every RAID 5 and RAID 6 layout, 3 to 7
 *    members, chunks of 4 KiB, 8 KiB and 2 MiB (more than a unit); healthy,
 *    with members lost before the run, lost by write errors during it, and
 *    with read errors (repaired from redundancy); finally every row's
 *    parity is checked, and the whole array read back with every further
 *    loss the level survives. Some requests continue the previous one on
 *    the same reactor, so rows are gathered and held as in a stream; every
 *    other array has a stripe cache of 2 heads, so pieces wait for them;
 * 4. gathering: sequential 128 KiB writes covering whole rows are written
 *    with no member read (healthy and degraded, RAID 4/5/6), also when the
 *    stream's requests alternate between the reactors; requests that
 *    straddle rows are merged per row; overlapping pieces of one group (the
 *    last one wins) and FUA for the whole group; a hold that times out, one
 *    that ends when the reactor goes idle, one that another reactor's write
 *    joins, one that ends when another reactor queues a write-zeroes;
 * 5. the stripe cache's pool resized under load: shrunk while heads are in
 *    use, grown while more come back; every head of the new size usable.
 *
 * Usage: test_raid5 [SEED]. Exit 0 pass, 1 fail. Environment: R5_DEBUG=1
 * checks parity after every round and prints the round's requests, read
 * errors and member I/O at the first mismatch; R5_NO_READ_ERRORS=1.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "engine/core/array.h"
#include "engine/md/member_state.h"
#include "engine/level/raid5_priv.h"
#include "../support/check.h"

static uint64_t seed = 1, rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rng() % n : 0;
}

static uint8_t *abuf(uint64_t bytes)
{
	return aligned_alloc(4096, (bytes + 4095) & ~(uint64_t)4095);
}

/* ---- fakes of the engine around the level ---- */

#define MAXQ 65536
#define NREACT 2

static struct member_io *ioq[MAXQ];
static unsigned ioq_reactor[MAXQ];     /* the reactor that issued each */
static unsigned nioq;
/*
 * The reactor whose thread the harness plays at the moment (it runs them
 * all on one): set while a request is submitted, a message of its inbox
 * runs or an I/O it issued completes; -1 outside parts 3 and 4. A piece
 * must complete, and a pool buffer come and go, on its request's reactor.
 */
static int cur_reactor = -1;

struct inbox {
	pthread_mutex_t lock;
	struct reactor_msg *head, *tail;
};
static struct inbox inbox[16];

static struct member members[URAID_MAX_MEMBERS];
static uint8_t *mem[URAID_MAX_MEMBERS];
static uint8_t *bad[URAID_MAX_MEMBERS];
static char dbg_log[1 << 16];
static size_t dbg_len;
static uint8_t dbg_bad[URAID_MAX_MEMBERS][4096 * 2];      /* per sector: reads fail */
static bool wfail[URAID_MAX_MEMBERS];        /* writes fail */
static uint64_t mem_sectors;
static unsigned n_fail_calls, n_corrected, n_fail_refused;
static long bufs_out;
static unsigned max_fail;
static unsigned long n_reads, n_writes, n_dsync_writes;

void member_submit(struct reactor *r, struct member_io *mio)
{
	if (mio->kind == MEMBER_READ)
		n_reads++;
	if (mio->kind == MEMBER_WRITE) {
		n_writes++;
		if (mio->rw_flags & RWF_DSYNC)
			n_dsync_writes++;
	}
	if (nioq == MAXQ) {
		fprintf(stderr, "fake queue full\n");
		exit(1);
	}
	ioq_reactor[nioq] = r->index;
	ioq[nioq++] = mio;
}

void reactor_post(struct reactor *r, struct reactor_msg *m)
{
	struct inbox *b = &inbox[r->index];

	pthread_mutex_lock(&b->lock);
	atomic_store(&m->next, NULL);
	if (b->tail)
		atomic_store(&b->tail->next, m);
	else
		b->head = m;
	b->tail = m;
	pthread_mutex_unlock(&b->lock);
}

static struct reactor_msg *inbox_pop(unsigned i)
{
	struct inbox *b = &inbox[i];
	struct reactor_msg *m;

	pthread_mutex_lock(&b->lock);
	m = b->head;
	if (m) {
		b->head = atomic_load(&m->next);
		if (!b->head)
			b->tail = NULL;
	}
	pthread_mutex_unlock(&b->lock);
	if (m && cur_reactor >= 0)
		cur_reactor = (int)i;   /* its message runs on reactor i */
	return m;
}

static void on_reactor_of(const struct bufpool *p, const char *what);

void *bufpool_get(struct bufpool *p, size_t len)
{
	on_reactor_of(p, "pool buffer taken");
	bufs_out++;
	return aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
}

void bufpool_put(struct bufpool *p, void *buf, size_t len)
{
	on_reactor_of(p, "pool buffer put back");
	bufs_out--;
	free(buf);
}

static void array_req_done(struct array_req *rq);

void array_piece_done(struct array_req *rq, int res)
{
	if (cur_reactor >= 0)
		CHECK(rq->er->r.index == (unsigned)cur_reactor, "a piece of a request of reactor "
		      "%u completed on reactor %d", rq->er->r.index, cur_reactor);
	if (res < 0 && rq->result == 0)
		rq->result = res;
	if (--rq->pending == 0)
		array_req_done(rq);
}

bool md_fail_slot(struct array *a, unsigned slot, int err)
{
	unsigned nf = 0;

	n_fail_calls++;
	a->slot[slot].state = URAID_MEMBER_FAULTY;
	for (unsigned s = 0; s < a->geom.raid_disks; s++)
		nf += !slot_ok(a, s);
	if (nf > max_fail)
		n_fail_refused++;
	return nf <= max_fail;
}

void md_read_corrected(struct array *a, unsigned slot)
{
	n_corrected++;
}

/* No replacement runs in these tests: a write to one would be a bug. */
void md_fail_replacement(struct array *a, unsigned slot, int err)
{
	(void)a;
	(void)slot;
	(void)err;
	n_fail_refused++;
}

/* The metadata worker's part, as the engine parks it: recorded now, the
 * piece resumes from a later message on its reactor. */
struct parked_fail {
	struct reactor_msg msg;
	void (*resume)(void *arg, bool survives);
	void *arg;
	bool survives;
};

static void parked_fail_resume(struct reactor *r, struct reactor_msg *m)
{
	struct parked_fail *f = (struct parked_fail *)m;

	(void)r;
	f->resume(f->arg, f->survives);
	free(f);
}

static void park_fail(struct reactor *r, bool survives, void (*resume)(void *arg, bool survives),
		      void *arg)
{
	struct parked_fail *f = calloc(1, sizeof(*f));

	if (!f) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	f->msg.fn = parked_fail_resume;
	f->resume = resume;
	f->arg = arg;
	f->survives = survives;
	reactor_post(r, &f->msg);
}

void md_fail_slot_parked(struct array *a, struct reactor *r, unsigned slot, int err,
			 void (*resume)(void *arg, bool survives), void *arg)
{
	park_fail(r, md_fail_slot(a, slot, err), resume, arg);
}

void md_fail_replacement_parked(struct array *a, struct reactor *r, unsigned slot, int err,
				void (*resume)(void *arg, bool survives), void *arg)
{
	md_fail_replacement(a, slot, err);
	park_fail(r, true, resume, arg);
}

/* Run one queued member I/O against memory, chosen at random. */
static bool run_one_io(void)
{
	struct member_io *mio;
	unsigned i, s;
	int res = 0;

	if (!nioq)
		return false;
	i = (unsigned)below(nioq);
	mio = ioq[i];
	if (cur_reactor >= 0)
		cur_reactor = (int)ioq_reactor[i];
	--nioq;
	ioq[i] = ioq[nioq];
	ioq_reactor[i] = ioq_reactor[nioq];
	s = (unsigned)(mio->m - members);
	if (mio->sector + mio->len / 512 > mem_sectors || mio->len % 512 || !mio->len) {
		fprintf(stderr, "member I/O out of range: slot %u sector %" PRIu64 " len %u\n", s,
			mio->sector, mio->len);
		exit(1);
	}
	switch (mio->kind) {
	case MEMBER_READ:
		for (uint64_t x = 0; x < mio->len / 512; x++)
			if (bad[s][mio->sector + x])
				res = -EIO;
		if (!res)
			memcpy(mio->buf, mem[s] + mio->sector * 512, mio->len);
		break;
	case MEMBER_WRITE:
		if (wfail[s]) {
			res = -EIO;
			break;
		}
		memcpy(mem[s] + mio->sector * 512, mio->buf, mio->len);
		memset(bad[s] + mio->sector, 0, mio->len / 512);
		break;
	case MEMBER_DISCARD:
		memset(mem[s] + mio->sector * 512, 0, mio->len);
		memset(bad[s] + mio->sector, 0, mio->len / 512);
		break;
	default:
		break;
	}
	if (getenv("R5_DEBUG") && mio->sector < 8)
		dbg_len += snprintf(dbg_log + dbg_len, sizeof(dbg_log) - dbg_len,
				    "io kind %d slot %u sector %" PRIu64 " len %u res %d\n", mio->kind, s,
				    mio->sector, mio->len / 512, res);
	if (dbg_len > sizeof(dbg_log) - 200)
		dbg_len = 0;
	mio->done(mio, res);
	return true;
}

static void run_all(void)
{
	for (;;) {
		struct reactor_msg *m = NULL;
		unsigned r = (unsigned)below(NREACT);

		if (below(3) == 0)
			for (unsigned k = 0; k < NREACT && !m; k++)
				m = inbox_pop((r + k) % NREACT);
		if (m) {
			m->fn(NULL, m);
			continue;
		}
		if (run_one_io())
			continue;
		for (unsigned k = 0; k < NREACT && !m; k++)
			m = inbox_pop(k);
		if (!m)
			return;
		m->fn(NULL, m);
	}
}

/* ---- 1. planner ---- */

static void test_planner(void)
{
	unsigned cases = 0;

	for (unsigned npar = 1; npar <= 2; npar++) {
		for (unsigned d = 1; d <= 7; d++) {
			unsigned nd = 1u << d;

			for (unsigned wm = 1; wm < nd; wm++) {
				/* losses: none, each data, P, Q, and pairs for RAID 6 */
				for (unsigned lm = 0; lm < (1u << (d + npar)); lm++) {
					uint8_t wr[8], lo[8];
					unsigned nl = (unsigned)__builtin_popcount(lm);
					unsigned nw = 0, nu = 0, wl = 0, ul = 0, pl;
					struct r5_plan_in in;
					struct r5_plan pl_out;
					int rc;

					if (nl > npar + 1)
						continue;
					for (unsigned k = 0; k < d; k++) {
						wr[k] = (wm >> k) & 1;
						lo[k] = (lm >> k) & 1;
						nw += wr[k];
						nu += !wr[k];
						wl += wr[k] && lo[k];
						ul += !wr[k] && lo[k];
					}
					in = (struct r5_plan_in){ d, npar, wr, lo, (lm >> d) & 1,
								  npar == 2 && ((lm >> (d + 1)) & 1),
								  (lm >> d) & 1,
								  npar == 2 && ((lm >> (d + 1)) & 1), false,
								  NULL, false, false };
					pl = npar - ((lm >> d) & 1) - (npar == 2 && ((lm >> (d + 1)) & 1));
					rc = r5_plan_write(&in, &pl_out);
					cases++;
					if (pl == 0) {
						CHECK(rc == 0 && pl_out.mode == R5_DIRECT && pl_out.reads == 0,
						      "no parity: d %u w %x lost %x", d, wm, lm);
						continue;
					}
					if (nl > npar) {
						CHECK(rc == -EIO, "d %u npar %u w %x lost %x", d, npar, wm, lm);
						continue;
					}
					CHECK(rc == 0, "d %u npar %u w %x lost %x", d, npar, wm, lm);
					/* brute force: the cheapest feasible way */
					unsigned best = ~0u;
					if (ul == 0)
						best = nu;
					if (wl == 0 && nw + pl < best)
						best = nw + pl;
					if (best == ~0u) {
						CHECK(pl_out.mode == R5_FULL, "d %u w %x lost %x", d, wm, lm);
						CHECK(pl_out.reads == d + npar - nl - pl_out.skip_q,
						      "full reads d %u w %x lost %x", d, wm, lm);
						continue;
					}
					CHECK(pl_out.reads == best, "d %u npar %u w %x lost %x: %u reads, best %u",
					      d, npar, wm, lm, pl_out.reads, best);
					if (nu == 0 && ul == 0)
						CHECK(pl_out.mode == R5_RCW && pl_out.reads == 0,
						      "full row d %u lost %x", d, lm);
					if (pl_out.mode == R5_RCW)
						CHECK(ul == 0, "rcw with lost untouched");
					if (pl_out.mode == R5_RMW)
						CHECK(wl == 0, "rmw with lost written");
					/* a read error forces FULL */
					in.force_full = true;
					rc = r5_plan_write(&in, &pl_out);
					CHECK(rc == 0 && pl_out.mode == R5_FULL, "force_full");
					/* P unreadable but writable: FULL, not DIRECT */
					if (nl < npar && !in.p_lost) {
						in.p_lost = true;
						rc = r5_plan_write(&in, &pl_out);
						CHECK(rc == 0 && pl_out.mode == R5_FULL &&
						      pl_out.reads == d + npar - nl - 1 - pl_out.skip_q,
						      "bad P: d %u w %x lost %x", d, wm, lm);
					}
				}
			}
		}
	}
	printf("planner: %u cases\n", cases);
}

/* ---- 2. row locks (raid5_rowlock.c) ---- */

struct lk_op {
	struct rowlock lk;
	unsigned id;
	bool granted;
};

static unsigned grant_order[16], ngrant;

static void lk_granted(struct reactor *r, struct reactor_msg *m)
{
	struct lk_op *op = (struct lk_op *)((char *)m - offsetof(struct lk_op, lk.msg));

	op->granted = true;
	grant_order[ngrant++] = op->id;
}

static void test_lock_fifo(void)
{
	struct rowlock_table t;
	struct reactor r[2] = { { .index = 0 }, { .index = 1 } };
	struct lk_op op[6];
	bool now;

	CHECK(rowlock_table_init(&t, 4) == 0, "init");
	for (unsigned i = 0; i < 6; i++) {
		op[i] = (struct lk_op){ .id = i };
		op[i].lk.msg.fn = lk_granted;
	}
	/* 0..3 on row 7, 4 on row 7 + 4 buckets (same bucket likely), 5 on row 8 */
	CHECK(rowlock_acquire(&t, &op[0].lk, 7, &r[0]), "first holder");
	for (unsigned i = 1; i < 4; i++)
		CHECK(!rowlock_acquire(&t, &op[i].lk, 7, &r[i & 1]), "queued %u", i);
	now = rowlock_acquire(&t, &op[4].lk, 11, &r[0]);
	CHECK(now, "other row, same bucket maybe: free");
	CHECK(rowlock_acquire(&t, &op[5].lk, 8, &r[1]), "other row free");
	ngrant = 0;
	for (unsigned i = 0; i < 4; i++) {
		struct reactor_msg *m;

		rowlock_release(&t, &op[i].lk);
		m = inbox_pop(0);
		if (!m)
			m = inbox_pop(1);
		if (i < 3) {
			CHECK(m != NULL, "a waiter is woken on release %u", i);
			if (m)
				m->fn(NULL, m);
			CHECK(ngrant == i + 1 && grant_order[i] == i + 1, "FIFO: %u", i);
		} else {
			CHECK(m == NULL, "nobody left");
		}
	}
	/* the row is free again */
	CHECK(rowlock_acquire(&t, &op[0].lk, 7, &r[0]), "free after the queue drained");
	rowlock_release(&t, &op[0].lk);
	rowlock_release(&t, &op[4].lk);
	rowlock_release(&t, &op[5].lk);
	rowlock_table_fini(&t);
}

#define LT_THREADS 8
#define LT_OPS 20000
#define LT_ROWS 3
#define LT_DEPTH 4

static struct rowlock_table lt_table;
static _Atomic int lt_holders[LT_ROWS];
static _Atomic long lt_total[LT_ROWS];
static _Atomic int lt_bad;

struct lt_op {
	struct rowlock lk;
	unsigned row;
	bool held;
};

static void lt_enter(struct lt_op *op)
{
	if (atomic_fetch_add(&lt_holders[op->row], 1) != 0)
		atomic_fetch_add(&lt_bad, 1);
	op->held = true;
}

static void lt_granted(struct reactor *r, struct reactor_msg *m)
{
	lt_enter((struct lt_op *)((char *)m - offsetof(struct lt_op, lk.msg)));
}

static void *lt_thread(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	struct reactor r = { .index = idx };
	struct lt_op ops[LT_DEPTH];
	unsigned done = 0, started = 0, waiting = 0;
	uint64_t x = idx * 7919 + seed;

	memset(ops, 0, sizeof(ops));
	for (unsigned i = 0; i < LT_DEPTH; i++)
		ops[i].row = LT_ROWS;           /* idle */
	while (done < LT_OPS) {
		struct reactor_msg *m;

		for (unsigned i = 0; i < LT_DEPTH; i++) {
			struct lt_op *op = &ops[i];

			if (op->held) {
				/* hold a moment, then leave */
				for (volatile int k = 0; k < (int)(x % 50); k++)
					;
				atomic_fetch_add(&lt_total[op->row], 1);
				if (atomic_fetch_sub(&lt_holders[op->row], 1) != 1)
					atomic_fetch_add(&lt_bad, 1);
				op->held = false;
				rowlock_release(&lt_table, &op->lk);
				op->row = LT_ROWS;      /* idle */
				done++;
			}
			if (op->row == LT_ROWS && started < LT_OPS) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				op->row = (unsigned)((x >> 33) % LT_ROWS);
				op->lk.msg.fn = lt_granted;
				started++;
				if (rowlock_acquire(&lt_table, &op->lk, op->row * 4096, &r))
					lt_enter(op);
				else
					waiting++;
			}
		}
		while ((m = inbox_pop(idx)) != NULL) {
			m->fn(&r, m);
			waiting--;
		}
		if (waiting == LT_DEPTH)
			sched_yield();
	}
	return NULL;
}

static void test_lock_threads(void)
{
	pthread_t th[LT_THREADS];
	long total = 0;

	CHECK(rowlock_table_init(&lt_table, 2048) == 0, "init");
	for (unsigned i = 0; i < LT_THREADS; i++)
		pthread_create(&th[i], NULL, lt_thread, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < LT_THREADS; i++)
		pthread_join(th[i], NULL);
	for (unsigned i = 0; i < LT_ROWS; i++)
		total += lt_total[i];
	CHECK(lt_bad == 0, "%d overlapping holders", (int)lt_bad);
	CHECK(total == (long)LT_THREADS * LT_OPS, "%ld of %ld done", total,
	      (long)LT_THREADS * LT_OPS);
	rowlock_table_fini(&lt_table);
	printf("locks: %ld lock/unlock by %d threads on %d rows\n", total, LT_THREADS, LT_ROWS);
}

/* ---- 3. the model ---- */

struct mreq {
	struct array_req rq;
	struct uraid_io io;
	int op;                 /* OP_* of raid5_priv.h */
	int reactor;            /* -1: any */
	bool fua;
	uint64_t off, len;      /* sectors */
	uint8_t *buf;
	bool done;
	int result;
};

static struct array *A;
static struct uraid_engine E;
static struct engine_reactor ER[NREACT];

static void on_reactor_of(const struct bufpool *p, const char *what)
{
	if (cur_reactor >= 0)
		CHECK(p == &ER[cur_reactor].pool, "%s on reactor %d, from the pool of reactor %d",
		      what, cur_reactor, (int)((const struct engine_reactor *)
					       ((const char *)p - offsetof(struct engine_reactor, pool)) - ER));
}
static uint8_t *ref;
static uint64_t asz, rowlen;
static unsigned nslots;
static unsigned long n_ops, n_runs;
static uint64_t fake_ns;

/* Every stripe head came back and nothing waits for one (the heads' pages,
 * raid5_heads.c, are apart from the buffer pool that bufs_out counts). */
static void check_heads_back(const char *what)
{
	struct r5_priv *priv = A->level_priv;

	CHECK(priv->heads.in_use == 0 && !priv->heads.wait_head,
	      "%s: %u stripe heads left in use", what, priv->heads.in_use);
}

/* The level's clock in these tests: only the tests move it. */
static uint64_t fake_now(void)
{
	return fake_ns;
}

static void array_req_done(struct array_req *rq)
{
	struct mreq *m = (struct mreq *)((char *)rq - offsetof(struct mreq, rq));

	m->done = true;
	m->result = rq->result;
}

static void start(struct mreq *m)
{
	struct array_req *rq = &m->rq;
	const struct level_ops *ops = A->ops;

	memset(rq, 0, sizeof(*rq));
	rq->a = A;
	rq->er = &ER[m->reactor >= 0 ? (unsigned)m->reactor : below(NREACT)];
	cur_reactor = (int)rq->er->r.index;     /* submitted from its reactor's thread */
	rq->io = &m->io;
	m->io.flags = below(4) == 0 || m->fua ? URAID_IO_FUA : 0;
	rq->data = m->buf;
	rq->pending = 1;
	m->done = false;
	for (uint64_t s = m->off; s < m->off + m->len;) {
		uint64_t n = ops->piece_sectors(A, s);
		uint8_t *b = m->buf ? m->buf + (s - m->off) * 512 : NULL;

		if (n > m->off + m->len - s)
			n = m->off + m->len - s;
		rq->pending++;
		switch (m->op) {
		case OP_READ: ops->read(rq, s, (uint32_t)n, b); break;
		case OP_WRITE: ops->write(rq, s, (uint32_t)n, b); break;
		case OP_ZERO: ops->discard(rq, s, (uint32_t)n, true); break;
		default: ops->discard(rq, s, (uint32_t)n, false); break;
		}
		s += n;
	}
	array_piece_done(rq, 0);
}

static unsigned nfailed(void)
{
	unsigned nf = 0;

	for (unsigned s = 0; s < nslots; s++)
		nf += !slot_ok(A, s);
	return nf;
}

static bool model_tiny_heads;   /* part 3: every other array with 2 stripe heads */

static int setup(int level, uint32_t layout, unsigned n, uint32_t chunk, unsigned rows)
{
	struct uraid_geom_params p = { .level = level, .layout = layout, .raid_disks = n,
				       .chunk_sectors = chunk,
				       .dev_sectors = (uint64_t)rows * chunk };
	char err[200];

	A = calloc(1, sizeof(*A));
	A->counters = calloc(NREACT, sizeof(*A->counters));
	if (uraid_geom_init(&A->geom, &p, err, sizeof(err)) < 0) {
		free(A->counters);
		free(A);
		A = NULL;
		return -1;
	}
	E.nreactors = NREACT;
	E.reactors = ER;
	for (unsigned i = 0; i < NREACT; i++) {
		ER[i].r.index = i;
		ER[i].e = &E;
	}
	A->e = &E;
	nslots = n;
	mem_sectors = (uint64_t)rows * chunk;
	for (unsigned s = 0; s < n; s++) {
		mem[s] = abuf(mem_sectors * 512);       /* parity wants 32-byte alignment */
		memset(mem[s], 0, mem_sectors * 512);
		bad[s] = calloc(mem_sectors, 1);
		wfail[s] = false;
		A->slot[s].m = &members[s];
		A->slot[s].state = URAID_MEMBER_IN_SYNC;
	}
	max_fail = level == 6 ? 2 : 1;
	asz = A->geom.array_sectors;
	rowlen = (uint64_t)A->geom.data_disks * chunk;
	ref = calloc(asz, 512);
	A->ops = &level_raid5_ops;
	CHECK(A->ops->init(A) == 0, "init");
	/* every other array with a stripe cache of 2 heads (below what the API
	   allows: the fewest that still lets rows be worked on side by side),
	   so that pieces wait for heads between gathering, holds and random
	   completions; the smallest the API allows, 17, is rarely reached here */
	static unsigned setups;
	if (model_tiny_heads && setups++ % 2)
		CHECK(r5_heads_resize(&((struct r5_priv *)A->level_priv)->heads, 2) == 0, "2 heads");
	((struct r5_priv *)A->level_priv)->now = fake_now;
	fake_ns = 0;
	return 0;
}

static struct r5_counters total_cnt;
static uint64_t head_waits;     /* pieces that waited for a stripe head */
static unsigned head_peak;

/* The gathering counters of the array, summed over reactors. */
static struct r5_counters gcount(void)
{
	struct r5_priv *priv = A->level_priv;
	struct r5_counters t = { 0 };

	for (unsigned i = 0; i < priv->nreactors; i++) {
		const struct r5_counters *c = &priv->cache[i].cnt;

		t.groups += c->groups;
		t.grouped += c->grouped;
		t.holds += c->holds;
		t.hold_timeouts += c->hold_timeouts;
		t.hold_idle += c->hold_idle;
	}
	return t;
}

static void teardown(void)
{
	cur_reactor = -1;
	struct r5_counters c = gcount();
	struct r5_priv *priv = A->level_priv;

	for (unsigned i = 0; i < priv->nreactors; i++) {
		CHECK(priv->cache[i].held == NULL && priv->cache[i].mio_out == 0,
		      "reactor %u: holds or member I/O left", i);
		CHECK(atomic_load(&A->counters[i].in_flight) == 0 && !priv->cache[i].idle_posted,
		      "reactor %u: the array is kept open", i);
	}
	total_cnt.groups += c.groups;
	total_cnt.grouped += c.grouped;
	total_cnt.holds += c.holds;
	total_cnt.hold_timeouts += c.hold_timeouts;
	total_cnt.hold_idle += c.hold_idle;
	head_waits += priv->heads.waits;
	head_peak = priv->heads.peak > head_peak ? priv->heads.peak : head_peak;
	CHECK(priv->heads.peak <= priv->heads.size, "%u stripe heads in use at once, %u allowed",
	      priv->heads.peak, priv->heads.size);
	check_heads_back("teardown");
	A->ops->fini(A);
	for (unsigned s = 0; s < nslots; s++) {
		free(mem[s]);
		free(bad[s]);
	}
	free(ref);
	free(A->counters);
	free(A);
}

static void fill(uint8_t *b, uint64_t bytes)
{
	for (uint64_t i = 0; i < bytes; i += 8) {
		uint64_t v = rng();

		memcpy(b + i, &v, 8);
	}
}

static const char *ctx;


/* Read the whole array and compare with ref. */
static void verify_all(const char *what)
{
	struct mreq m = { .op = OP_READ, .reactor = -1, .off = 0, .len = asz };

	m.buf = abuf(asz * 512);
	start(&m);
	run_all();
	CHECK(m.done && m.result == 0, "%s %s: read all: %d", ctx, what, m.result);
	if (m.done && m.result == 0) {
		for (uint64_t s = 0; s < asz; s++)
			if (memcmp(m.buf + s * 512, ref + s * 512, 512)) {
				CHECK(0, "%s %s: sector %" PRIu64 " differs", ctx, what, s);
				break;
			}
	}
	free(m.buf);
}

/* Every row's P (and Q) against its data, all members present. */
static void check_parity(void)
{
	struct uraid_stripe st;
	unsigned bytes = A->geom.chunk_sectors * 512;
	bool six = A->geom.level == 6;
	void *data[URAID_MAX_MEMBERS];
	uint8_t *p = abuf(bytes), *q = abuf(bytes), *z = abuf(bytes);

	memset(z, 0, bytes);

	for (uint64_t r = 0; r < mem_sectors / A->geom.chunk_sectors; r++) {
		uint64_t off = r * bytes;
		unsigned ns;

		uraid_geom_stripe(&A->geom, r, &st);
		ns = six ? st.syndrome_slots : st.data_disks;
		for (unsigned j = 0; j < ns; j++)
			data[j] = z;
		for (unsigned k = 0; k < st.data_disks; k++)
			data[six ? (unsigned)st.syndrome_of_slot[st.data_slot[k]] : k] =
				mem[st.data_slot[k]] + off;
		if (six) {
			CHECK(uraid_parity_gen_pq(ns, bytes, data, p, q) == 0, "gen_pq");
			CHECK(!memcmp(p, mem[st.p_slot] + off, bytes), "%s: row %" PRIu64 " P", ctx, r);
			CHECK(!memcmp(q, mem[st.q_slot] + off, bytes), "%s: row %" PRIu64 " Q", ctx, r);
		} else {
			CHECK(uraid_parity_gen_p(ns, bytes, data, p) == 0, "gen_p");
			CHECK(!memcmp(p, mem[st.p_slot] + off, bytes), "%s: row %" PRIu64 " P", ctx, r);
		}
	}
	free(p);
	free(q);
	free(z);
}

static bool overlaps(const struct mreq *ms, unsigned n, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (off < ms[i].off + ms[i].len && ms[i].off < off + len)
			return true;
	return false;
}

enum { SC_HEALTHY, SC_PREFAIL, SC_MIDFAIL };

static void run_model(int scenario, unsigned rounds)
{
	struct mreq ms[8];
	unsigned pending_wfail = 0;

	if (scenario == SC_PREFAIL) {
		unsigned k = 1 + (unsigned)below(max_fail);

		while (nfailed() < k) {
			unsigned s = (unsigned)below(nslots);

			if (below(2))
				A->slot[s].state = URAID_MEMBER_FAULTY;
			else
				A->slot[s].m = NULL;    /* missing */
		}
	}
	for (unsigned round = 0; round < rounds; round++) {
		unsigned nb = 1 + (unsigned)below(8);

		for (unsigned s = 0; s < nslots; s++) {
			memset(bad[s], 0, mem_sectors);
			memset(dbg_bad[s], 0, sizeof(dbg_bad[s]));
		}
		dbg_len = 0;
		if (scenario == SC_MIDFAIL && round == rounds / 3 && nfailed() + pending_wfail < max_fail) {
			unsigned s = (unsigned)below(nslots);

			if (!wfail[s] && slot_ok(A, s)) {
				wfail[s] = true;
				pending_wfail++;
			}
		}
		for (unsigned s = 0; s < nslots; s++)
			if (wfail[s] && !slot_ok(A, s)) {
				wfail[s] = false;
				pending_wfail--;
			}
		/* read errors where redundancy covers them */
		if (nfailed() + pending_wfail < max_fail && below(3) == 0 && !getenv("R5_NO_READ_ERRORS")) {
			unsigned s = (unsigned)below(nslots);
			uint64_t x = below(mem_sectors), l = 1 + below(2 * A->geom.chunk_sectors);

			if (x + l > mem_sectors)
				l = mem_sectors - x;
			memset(bad[s] + x, 1, l);
			if (mem_sectors <= sizeof(dbg_bad[0]))
				memcpy(dbg_bad[s], bad[s], mem_sectors);
		}
		for (unsigned i = 0; i < nb; i++) {
			struct mreq *m = &ms[i];
			uint64_t len, off;
			unsigned kind = (unsigned)below(10), tries = 0;

			do {
				if (++tries > 100)
					break;
				switch (below(4)) {
				case 0: len = 1 + below(16); break;
				case 1: len = 1 + below(A->geom.chunk_sectors); break;
				case 2: len = rowlen * (1 + below(2)); break;
				default: len = 1 + below(2 * rowlen + 8); break;
				}
				if (len > asz)
					len = asz;
				off = below(asz - len + 1);
				if (below(3) == 0)
					off -= off % (below(2) ? rowlen : A->geom.chunk_sectors);
				/* continue the previous request: a stream */
				if (i > 0 && below(3) == 0 && ms[i - 1].off + ms[i - 1].len + len <= asz)
					off = ms[i - 1].off + ms[i - 1].len;
			} while (overlaps(ms, i, off, len));
			if (tries > 100) {
				nb = i;
				break;
			}
			memset(m, 0, sizeof(*m));
			m->off = off;
			m->len = len;
			m->reactor = -1;
			if (i > 0 && off == ms[i - 1].off + ms[i - 1].len && below(4)) {
				if (ms[i - 1].reactor < 0)
					ms[i - 1].reactor = (int)below(NREACT);
				m->reactor = ms[i - 1].reactor;
			}
			m->op = kind < 4 ? OP_READ : kind < 8 ? OP_WRITE : kind < 9 ? OP_ZERO : OP_DISCARD;
			if (m->op == OP_READ || m->op == OP_WRITE) {
				m->buf = abuf(len * 512);
				if (m->op == OP_WRITE) {
					fill(m->buf, len * 512);
					memcpy(ref + off * 512, m->buf, len * 512);
				} else {
					memset(m->buf, 0xa5, len * 512);
				}
			} else if (m->op == OP_ZERO) {
				memset(ref + off * 512, 0, len * 512);
			} else {
				for (uint64_t r = (off + rowlen - 1) / rowlen; (r + 1) * rowlen <= off + len; r++)
					memset(ref + r * rowlen * 512, 0, rowlen * 512);
			}
		}
		for (unsigned i = 0; i < nb; i++)
			start(&ms[i]);
		run_all();
		for (unsigned i = 0; i < nb; i++) {
			struct mreq *m = &ms[i];

			n_ops++;
			CHECK(m->done, "%s: op %d not done", ctx, m->op);
			CHECK(m->result == 0, "%s round %u: op %d off %" PRIu64 " len %" PRIu64 ": %d",
			      ctx, round, m->op, m->off, m->len, m->result);
			if (m->op == OP_READ && m->done && m->result == 0 &&
			    memcmp(m->buf, ref + m->off * 512, m->len * 512))
				CHECK(0, "%s round %u: read off %" PRIu64 " len %" PRIu64 " differs", ctx,
				      round, m->off, m->len);
			free(m->buf);
		}
		if (getenv("R5_DEBUG") && nfailed() == 0) {
			int f0 = failures;

			check_parity();
			if (failures != f0) {
				for (unsigned i = 0; i < nb; i++)
					fprintf(stderr, "round %u op %d off %" PRIu64 " len %" PRIu64 "\n",
						round, ms[i].op, ms[i].off, ms[i].len);
				for (unsigned s = 0; s < nslots; s++)
					for (uint64_t x = 0; x < sizeof(dbg_bad[s]); x++)
						if (dbg_bad[s][x])
							fprintf(stderr, "bad slot %u sector %" PRIu64 "\n", s, x);
				fputs(dbg_log, stderr);
				exit(1);
			}
		}
		CHECK(nioq == 0, "queue drained");
		CHECK(n_fail_refused == 0, "%s: md_fail_slot refused", ctx);
		if (failures > 20)
			return;
	}
	for (unsigned s = 0; s < nslots; s++) {
		memset(bad[s], 0, mem_sectors);
		wfail[s] = false;
	}
	if (nfailed() == 0)
		check_parity();
	verify_all("as is");
	/* every further loss the level survives */
	for (unsigned s = 0; s < nslots && nfailed() < max_fail; s++) {
		if (!slot_ok(A, s))
			continue;
		A->slot[s].state = URAID_MEMBER_FAULTY;
		verify_all("one more lost");
		for (unsigned t = s + 1; t < nslots && nfailed() < max_fail; t++) {
			if (!slot_ok(A, t))
				continue;
			A->slot[t].state = URAID_MEMBER_FAULTY;
			verify_all("two more lost");
			A->slot[t].state = URAID_MEMBER_IN_SYNC;
		}
		A->slot[s].state = URAID_MEMBER_IN_SYNC;
	}
	CHECK(bufs_out == 0, "%s: %ld buffers not returned", ctx, bufs_out);
	check_heads_back(ctx);
}

static void test_model(void)
{
	static const uint32_t l5[] = { 0, 1, 2, 3, 4, 5 };
	static const uint32_t l6[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20 };
	static const uint32_t chunks[] = { 8, 16 };
	char name[160];
	unsigned corrected0 = n_corrected;

	for (int level = 4; level <= 6; level++) {
		const uint32_t *ls = level == 6 ? l6 : l5;
		unsigned nl = level == 4 ? 1 : level == 5 ? 6 : 14;

		for (unsigned li = 0; li < nl; li++)
			for (unsigned n = level == 6 ? 4 : 3; n <= (level == 6 ? 7u : 6u); n++)
				for (unsigned ci = 0; ci < 2; ci++)
					for (int sc = 0; sc < 3; sc++) {
						model_tiny_heads = true;
						int rc_setup = setup(level, ls[li], n, chunks[ci], 8);
						model_tiny_heads = false;
						if (rc_setup < 0) {
							CHECK(0, "geometry %d/%u/%u", level, ls[li], n);
							continue;
						}
						snprintf(name, sizeof(name), "raid%d layout %u n %u chunk %u sc %d",
							 level, ls[li], n, chunks[ci], sc);
						ctx = name;
						n_fail_refused = 0;
						run_model(sc, 30);
						n_runs++;
						teardown();
						if (failures > 20)
							return;
					}
	}
	/* chunks larger than a unit */
	for (int level = 5; level <= 6; level++)
		for (int sc = 0; sc < 3; sc++) {
			if (setup(level, level == 6 ? 10 : 2, level == 6 ? 5 : 4, 4096, 2) < 0) {
				CHECK(0, "big geometry");
				continue;
			}
			snprintf(name, sizeof(name), "raid%d big chunk sc %d", level, sc);
			ctx = name;
			n_fail_refused = 0;
			run_model(sc, 12);
			n_runs++;
			teardown();
		}
	printf("model: %lu runs, %lu requests, %u members failed by write errors, %u reads corrected\n",
	       n_runs, n_ops, n_fail_calls, n_corrected - corrected0);
	printf("model: %lu groups of %lu pieces, %lu holds (%lu ended idle)\n",
	       (unsigned long)total_cnt.groups, (unsigned long)total_cnt.grouped,
	       (unsigned long)total_cnt.holds, (unsigned long)total_cnt.hold_idle);
	printf("model: %" PRIu64 " waits for a stripe head, at most %u in use\n", head_waits,
	       head_peak);
	CHECK(head_waits > 0, "waits for stripe heads were exercised");
	CHECK(total_cnt.groups > 0 && total_cnt.holds > 0, "gathering was exercised");
	CHECK(n_fail_calls > 0, "write errors were exercised");
	CHECK(n_corrected > corrected0, "read errors were exercised");
}

/* ---- 4. gathering ---- */

/* Fill m as a write of [off, off+len) on reactor r, and apply it to ref. */
static void gw(struct mreq *m, uint64_t off, uint64_t len, int r, bool fua)
{
	memset(m, 0, sizeof(*m));
	m->op = OP_WRITE;
	m->off = off;
	m->len = len;
	m->reactor = r;
	m->fua = fua;
	m->buf = abuf(len * 512);
	fill(m->buf, len * 512);
	memcpy(ref + off * 512, m->buf, len * 512);
}

static void gw_check(struct mreq *ms, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		CHECK(ms[i].done && ms[i].result == 0, "%s: write %u: done %d result %d", ctx, i,
		      ms[i].done, ms[i].result);
		free(ms[i].buf);
	}
	CHECK(nioq == 0, "%s: queue drained", ctx);
}

static struct r5_cache *cache0(void)
{
	return &((struct r5_priv *)A->level_priv)->cache[0];
}

/*
 * A stream of writes of bs sectors over rows [0, rows), on reactor 0 or on
 * the nreact reactors in turn, all submitted before any member I/O
 * completes (as with a queue depth of the whole stream): every row is
 * written whole, with no read.
 */
static void gather_stream(int level, unsigned n, unsigned lost, uint32_t chunk, unsigned rows,
			  uint64_t bs, unsigned nreact)
{
	static struct mreq ms[256];
	char name[160];
	unsigned nreq;
	struct r5_counters c;

	if (setup(level, level == 6 ? 10 : 2, n, chunk, rows) < 0) {
		CHECK(0, "geometry");
		return;
	}
	snprintf(name, sizeof(name), "stream raid%d n %u lost %u chunk %u bs %" PRIu64 " reactors %u",
		 level, n, lost, chunk, bs, nreact);
	ctx = name;
	for (unsigned i = 0; i < lost; i++)
		A->slot[(1 + 2 * i) % n].m = NULL;
	nreq = (unsigned)(rows * rowlen / bs);
	CHECK(nreq <= 256 && nreq * bs == rows * rowlen, "%s: shape", ctx);
	n_reads = 0;
	for (unsigned i = 0; i < nreq; i++)
		gw(&ms[i], i * bs, bs, (int)(i % nreact), false);
	for (unsigned i = 0; i < nreq; i++)
		start(&ms[i]);
	run_all();
	gw_check(ms, nreq);
	c = gcount();
	CHECK(n_reads == 0, "%s: %lu member reads", ctx, n_reads);
	CHECK(c.groups == rows && c.grouped == rows * (rowlen / bs),
	      "%s: %" PRIu64 " groups of %" PRIu64 " pieces", ctx, c.groups, c.grouped);
	CHECK(c.hold_timeouts == 0, "%s: %" PRIu64 " holds timed out", ctx, c.hold_timeouts);
	if (!lost)
		check_parity();
	verify_all("stream");
	teardown();
}

/* Overlapping pieces in one group: the last submitted wins; one FUA makes the row FUA. */
static void gather_overlap(void)
{
	struct mreq ms[3];
	struct r5_counters c;

	setup(5, 2, 4, 16, 4);
	ctx = "overlap";
	n_reads = n_writes = n_dsync_writes = 0;
	gw(&ms[0], 0, 8, 0, false);             /* starts the row: a short hold */
	gw(&ms[1], 4, 16, 0, true);             /* not a continuation: gathered all the same */
	gw(&ms[2], 16, 32, 0, false);           /* overlaps the previous, reaches the row end */
	for (unsigned i = 0; i < 3; i++)
		start(&ms[i]);
	CHECK(cache0()->held == NULL, "%s: the row went when covered", ctx);
	run_all();
	gw_check(ms, 3);
	c = gcount();
	CHECK(c.groups == 1 && c.grouped == 3, "%s: %" PRIu64 " groups of %" PRIu64, ctx, c.groups,
	      c.grouped);
	CHECK(n_reads == 0, "%s: %lu reads", ctx, n_reads);
	/* units cut at 4 and 8 (where pieces start or end in a chunk): 3 x 4 writes */
	CHECK(n_writes == 12 && n_dsync_writes == 12, "%s: %lu writes, %lu with RWF_DSYNC", ctx,
	      n_writes, n_dsync_writes);
	check_parity();
	verify_all("overlap");
	teardown();
}

/* Requests of 2/3 of a row: each row is written by two requests, merged. */
static void gather_straddle(int level, unsigned n)
{
	static struct mreq ms[64];
	struct r5_counters c;
	unsigned nreq;
	uint64_t bs;

	setup(level, 2, n, 16, 12);
	ctx = "straddle";
	bs = rowlen * 2 / 3;
	nreq = (unsigned)(12 * rowlen / bs);
	n_reads = 0;
	for (unsigned i = 0; i < nreq; i++)
		gw(&ms[i], i * bs, bs, 0, i % 5 == 0);
	for (unsigned i = 0; i < nreq; i++)
		start(&ms[i]);
	run_all();
	gw_check(ms, nreq);
	c = gcount();
	CHECK(n_reads == 0, "%s raid%d: %lu reads", ctx, level, n_reads);
	CHECK(c.groups == 12 && c.grouped == 24, "%s: %" PRIu64 " groups of %" PRIu64, ctx,
	      c.groups, c.grouped);
	check_parity();
	verify_all("straddle");
	teardown();
}

/*
 * Holds that end: a full row keeps member I/O in flight on reactor 0 while
 * the next write, continuing it, holds the next row. how 0: the clock passes
 * the limit; 1: the reactor goes idle; 2: another reactor queues a write on
 * the row, which joins the group (the hold goes on, then ends idle); 3:
 * another reactor queues a write-zeroes on the row, which no group takes;
 * 4: with a stripe cache of 2 heads (both taken: the full row's and the
 * held one's), another reactor's write of a third row waits for a head,
 * and the hold ends at the next event rather than keep it waiting.
 */
static void gather_hold_end(int how)
{
	static const char *const names[] = { "hold timeout", "hold idle", "hold other reactor",
					     "hold other reactor's zeroes", "hold head waiter" };
	struct mreq ms[3];
	struct r5_counters c;
	struct r5_priv *priv;
	unsigned nm;

	setup(5, 2, 4, 16, 4);
	priv = A->level_priv;
	ctx = names[how];
	if (how == 4)
		CHECK(r5_heads_resize(&priv->heads, 2) == 0, "%s: 2 heads", ctx);
	gw(&ms[0], 0, rowlen, 0, false);
	gw(&ms[1], rowlen, 8, 0, false);
	start(&ms[0]);
	start(&ms[1]);
	nm = 2;
	CHECK(cache0()->held != NULL && cache0()->mio_out == 4, "%s: holds (%u I/O in flight)",
	      ctx, cache0()->mio_out);
	if (how == 0) {
		fake_ns += priv->hold_ns - 1;
		run_one_io();
		CHECK(cache0()->held != NULL, "%s: not yet", ctx);
		fake_ns += 1;
		run_one_io();
		CHECK(cache0()->held == NULL, "%s: the hold ended at the limit", ctx);
	} else if (how == 4) {
		gw(&ms[2], 2 * rowlen, 8, 1, false);
		start(&ms[2]);
		nm = 3;
		CHECK(priv->heads.wait_head != NULL && priv->heads.in_use == 2,
		      "%s: the third row's write waits for a head (%u in use)", ctx,
		      priv->heads.in_use);
		CHECK(cache0()->held != NULL, "%s: still held", ctx);
		run_one_io();           /* an event on reactor 0 */
		CHECK(cache0()->held == NULL, "%s: the hold ended for the head's waiter", ctx);
	} else if (how >= 2) {
		gw(&ms[2], rowlen + 8, 8, 1, false);
		if (how == 3) {
			ms[2].op = OP_ZERO;
			memset(ref + (rowlen + 8) * 512, 0, 8 * 512);
		}
		start(&ms[2]);
		nm = 3;
		CHECK(cache0()->held != NULL, "%s: still held", ctx);
		run_one_io();           /* an event on reactor 0 */
		if (how == 2)
			CHECK(cache0()->held != NULL && cache0()->held->gcount == 2,
			      "%s: the other reactor's write joined the held group", ctx);
		else
			CHECK(cache0()->held == NULL, "%s: the hold ended for the other reactor",
			      ctx);
	}
	run_all();
	gw_check(ms, nm);
	c = gcount();
	/* 4: the third row's write, once it has a head, starts its row with
	   a short hold of its own, which ends idle */
	CHECK(c.holds == 1u + (how == 4) && c.hold_timeouts == (how == 0) &&
	      c.hold_idle == (how == 1 || how == 2 || how == 4),
	      "%s: holds %" PRIu64 " timeouts %" PRIu64 " idle %" PRIu64, ctx, c.holds,
	      c.hold_timeouts, c.hold_idle);
	CHECK(c.groups == (how == 2) && c.grouped == (how == 2 ? 2u : 0u),
	      "%s: %" PRIu64 " groups of %" PRIu64, ctx, c.groups, c.grouped);
	check_parity();
	verify_all("hold");
	teardown();
}

/*
 * A stream that goes on on another reactor, mid-row: reactor 0 wrote
 * [40, 44) of row 0 (done) and has a read in flight; reactor 1 writes
 * [44, 46): it continues reactor 0's stream and, with no member I/O of its
 * own, holds the row briefly (short hold); reactor 0's [46, 48), continuing
 * it in turn, queues and joins the group, which reaches the row's end.
 */
static void gather_cross_stream(void)
{
	struct mreq ms[3], rd;
	struct r5_counters c;
	struct r5_priv *priv;

	setup(5, 2, 4, 16, 4);
	priv = A->level_priv;
	ctx = "stream continued on another reactor";
	gw(&ms[0], 40, 4, 0, false);
	start(&ms[0]);
	run_all();
	memset(&rd, 0, sizeof(rd));
	rd.op = OP_READ;
	rd.off = 100;
	rd.len = 8;
	rd.reactor = 0;
	rd.buf = abuf(8 * 512);
	start(&rd);
	CHECK(priv->cache[0].mio_out > 0, "%s: a read in flight on reactor 0", ctx);
	gw(&ms[1], 44, 2, 1, false);
	start(&ms[1]);
	CHECK(priv->cache[1].held != NULL && priv->cache[1].held->seq,
	      "%s: reactor 1's write holds the row as a stream's", ctx);
	gw(&ms[2], 46, 2, 0, false);
	start(&ms[2]);
	run_all();
	gw_check(ms, 3);
	CHECK(rd.done && rd.result == 0 && !memcmp(rd.buf, ref + 100 * 512, 8 * 512),
	      "%s: the read", ctx);
	free(rd.buf);
	c = gcount();
	CHECK(c.holds == 1 && c.groups == 1 && c.grouped == 2, "%s: holds %" PRIu64 ", %" PRIu64
	      " groups of %" PRIu64, ctx, c.holds, c.groups, c.grouped);
	check_parity();
	verify_all("cross stream");
	teardown();
}

static void test_gather(void)
{
	/* 128 KiB writes, chunks of 512 KiB (as make bench), and smaller pieces */
	gather_stream(5, 4, 0, 1024, 4, 256, 1);
	gather_stream(4, 4, 0, 1024, 2, 256, 1);
	gather_stream(6, 6, 0, 1024, 2, 256, 1);
	gather_stream(5, 4, 1, 1024, 4, 256, 1);
	gather_stream(6, 6, 2, 1024, 2, 256, 1);
	gather_stream(5, 5, 0, 64, 4, 8, 1);    /* 32 pieces a row */
	gather_stream(5, 3, 0, 8, 16, 8, 1);    /* one chunk per piece */
	/* one stream, its requests spread over the reactors in turn (a client
	   with several connections): rows still written whole */
	gather_stream(5, 4, 0, 1024, 4, 256, NREACT);
	gather_stream(6, 6, 1, 1024, 2, 256, NREACT);
	gather_stream(5, 5, 0, 64, 4, 8, NREACT);
	gather_overlap();
	gather_straddle(5, 4);
	gather_straddle(6, 5);
	gather_hold_end(0);
	gather_hold_end(1);
	gather_hold_end(2);
	gather_hold_end(3);
	gather_hold_end(4);
	gather_cross_stream();
	printf("gathering: streams (on one reactor and spread over %u, also mid-row), overlaps, "
	       "straddling requests, holds ended or extended five ways\n", NREACT);
}

/*
 * 5. The stripe cache's pool (raid5_heads.c) resized under load: 100 heads
 *    in use; shrunk to 17 (40 come back and are retired: 60 allocated);
 *    grown to 80 while 43 more come back in the window where the resize
 *    populates the spares' pages outside the lock. Each must be kept for
 *    the new size, not retired against the old: allocated == size == 80
 *    after, and 80 heads can be taken at once.
 */
static struct r5_head *grow_held[100];
static unsigned grow_nheld, grow_put_in_window;

static void populate_and_put(struct r5_heads *hs, uint8_t *pages, size_t bytes)
{
	r5_heads_populate(hs, pages, bytes);
	while (grow_put_in_window && grow_nheld) {
		r5_head_put(hs, grow_held[--grow_nheld]);
		grow_put_in_window--;
	}
}

static unsigned list_len(const struct r5_head *h)
{
	unsigned k = 0;

	for (; h; h = h->next)
		k++;
	return k;
}

static void test_heads_resize(void)
{
	struct r5_heads hs;
	struct r5_head_wait w;

	printf("stripe heads: shrink under load, heads given back during a grow\n");
	CHECK(r5_heads_init(&hs, 4, 100) == 0, "init");
	hs.populate = populate_and_put;
	for (grow_nheld = 0; grow_nheld < 100; grow_nheld++) {
		CHECK(r5_head_get(&hs, &w), "head %u of 100 not free", grow_nheld);
		grow_held[grow_nheld] = w.head;
		memset(w.head->pages, 0xa5, 4 * R5_KEEP_BYTES);
	}
	CHECK(r5_heads_resize(&hs, 17) == 0, "shrink to 17");
	CHECK(hs.allocated == 100 && hs.size == 17, "shrink: allocated %u size %u",
	      hs.allocated, hs.size);
	for (unsigned i = 0; i < 40; i++)
		r5_head_put(&hs, grow_held[--grow_nheld]);
	CHECK(hs.allocated == 60 && hs.spares == 40 && hs.in_use == 60,
	      "after 40 back: allocated %u spares %u in use %u", hs.allocated, hs.spares, hs.in_use);
	grow_put_in_window = 43;
	CHECK(r5_heads_resize(&hs, 80) == 0, "grow to 80");
	CHECK(grow_put_in_window == 0, "the window gave %u heads too few back", grow_put_in_window);
	CHECK(hs.size == 80 && hs.allocated == 80, "grow: size %u allocated %u (status "
	      "would say 80)", hs.size, hs.allocated);
	CHECK(hs.in_use == 17 && list_len(hs.free) == 63 && hs.spares == 20,
	      "grow: in use %u free %u spares %u", hs.in_use, list_len(hs.free), hs.spares);
	/* all 80 usable at once; grown heads' pages writable */
	while (grow_nheld < 80 && hs.free) {
		CHECK(r5_head_get(&hs, &w), "head %u of 80 not free", grow_nheld);
		grow_held[grow_nheld++] = w.head;
		memset(w.head->pages, 0x5a, 4 * R5_KEEP_BYTES);
	}
	CHECK(grow_nheld == 80 && hs.in_use == 80, "only %u heads usable of 80", grow_nheld);
	while (grow_nheld)
		r5_head_put(&hs, grow_held[--grow_nheld]);
	CHECK(hs.in_use == 0 && hs.allocated == 80 && list_len(hs.free) == 80,
	      "all back: in use %u allocated %u free %u", hs.in_use, hs.allocated,
	      list_len(hs.free));
	r5_heads_fini(&hs);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seed = strtoull(argv[1], NULL, 0);
	rng_state = seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed %" PRIu64 "\n", seed);
	for (unsigned i = 0; i < 16; i++)
		pthread_mutex_init(&inbox[i].lock, NULL);
	test_planner();
	test_lock_fifo();
	test_lock_threads();
	test_model();
	test_gather();
	test_heads_resize();
	if (failures)
		printf("%d failures (seed %" PRIu64 ")\n", failures, seed);
	else
		printf("all passed\n");
	return failures ? 1 : 0;
}
