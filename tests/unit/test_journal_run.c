// SPDX-License-Identifier: MIT
/*
 * The write journal's run-time batches and checkpoints (level/raid5_journal.c),
 * driven by hand: the file is included with its member I/O, reactor posts,
 * metadata calls and superblock writes replaced by fakes that queue them, so
 * the test decides the order in which log writes complete, units resume,
 * member writes end and checkpoints run. Nothing is timed; no randomness.
 * (The log writer's thread, for a journal in memory, runs for real: its
 * writes are faked, and the test waits for its post.)
 */
#define member_submit fake_member_submit
#define reactor_post fake_reactor_post
#define member_write_sync fake_member_write_sync
#define member_write_sync_done fake_member_write_sync_done
#define meta_call_submit fake_meta_call_submit
#define meta_record_change fake_meta_record_change
#define raid5_journal_log_create test_journal_log_create
#include "engine/level/raid5_journal.c"

#include <stdio.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", \
	__FILE__, __LINE__, #c); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ---- the fakes ---- */

static struct member_io *ios[8];
static unsigned nios;
static struct reactor_msg *posts[64];
static unsigned nposts;
static struct meta_call *calls[4];
static unsigned ncalls;
static int record_rc;
static unsigned records;

void fake_member_submit(struct reactor *r, struct member_io *mio)
{
	mio->r = r;
	ios[nios++] = mio;
}

/* posts come from the log writer's thread too */
static pthread_mutex_t posts_mu = PTHREAD_MUTEX_INITIALIZER;

void fake_reactor_post(struct reactor *r, struct reactor_msg *m)
{
	(void)r;
	pthread_mutex_lock(&posts_mu);
	posts[nposts++] = m;
	pthread_mutex_unlock(&posts_mu);
}

/* The log writer's writes: recorded with the thread that did them; res is
   what they return (their length when 0). */
static struct member_io *sync_ios[8];
static unsigned nsync;
static pthread_t sync_thread;
static int sync_res;

int fake_member_write_sync(struct member_io *mio)
{
	sync_ios[nsync++] = mio;
	sync_thread = pthread_self();
	return sync_res ? sync_res : (int)mio->len;
}

void fake_member_write_sync_done(struct reactor *r, struct member_io *mio, int res)
{
	mio->r = r;
	mio->done(mio, res < 0 ? res : 0);
}

/* Wait (up to 10 s) for the log writer's post. */
static bool wait_post(void)
{
	for (int i = 0; i < 10000; i++) {
		pthread_mutex_lock(&posts_mu);
		unsigned n = nposts;
		pthread_mutex_unlock(&posts_mu);
		if (n)
			return true;
		usleep(1000);
	}
	return false;
}

void fake_meta_call_submit(struct uraid_engine *e, void *owner, struct meta_call *c,
			   struct reactor *r, int (*run)(struct meta_call *c),
			   void (*done)(struct meta_call *c, int rc))
{
	(void)e;
	c->job.owner = owner;
	c->r = r;
	c->run = run;
	c->done = done;
	calls[ncalls++] = c;
}

int fake_meta_record_change(struct array *a)
{
	(void)a;
	records++;
	return record_rc;
}

/* Complete the queued log writes (all, with res). */
static void log_writes_done(int res)
{
	unsigned n = nios;
	struct member_io *q[8];

	memcpy(q, ios, sizeof(q));
	nios = 0;
	for (unsigned i = 0; i < n; i++)
		q[i]->done(q[i], res);
}

/* Deliver the posted resumes. */
static void deliver(void)
{
	while (nposts) {
		struct reactor_msg *m = posts[0];
		memmove(posts, posts + 1, --nposts * sizeof(*posts));
		m->fn(NULL, m);
	}
}

/* Run the queued checkpoint (the metadata worker's part, then its reply). */
static bool run_checkpoint(void)
{
	if (!ncalls)
		return false;
	struct meta_call *c = calls[0];
	memmove(calls, calls + 1, --ncalls * sizeof(*calls));
	c->done(c, c->run(c));
	return true;
}

/* ---- an array of 4 members (RAID 5), a journal, pieces ---- */

#define NP 6
static struct array arr;
static struct member slots[4], jm;
static struct engine_reactor er;
static struct array_counters counters[1];
static struct array_req rq;
static struct r5_piece pcs[NP];
static uint8_t bufs[NP][4][4096] __attribute__((aligned(4096)));
static uint8_t *sbufs[NP][4], *srcs[NP][3];
static uint8_t wrs[NP][3], sflags[NP][4];
static int resumed[NP];         /* 0 not yet, 1 with 0, -errno */

static void on_resume(struct r5_piece *pc, int res)
{
	resumed[pc - pcs] = res < 0 ? res : 1;
}

static struct jlog *setup(uint64_t ring)
{
	struct parity_log *pl;

	memset(&arr, 0, sizeof(arr));
	memset(pcs, 0, sizeof(pcs));
	memset(resumed, 0, sizeof(resumed));
	nios = nposts = ncalls = records = 0;
	record_rc = 0;
	pthread_mutex_init(&arr.meta_lock, NULL);
	arr.geom.raid_disks = 4;
	arr.counters = counters;
	for (unsigned s = 0; s < 4; s++) {
		slots[s].fd = -1;
		arr.slot[s].m = &slots[s];
		arr.slot[s].state = URAID_MEMBER_IN_SYNC;
	}
	jm.fd = -1;
	snprintf(jm.path, sizeof(jm.path), "journal");
	arr.members[0] = &jm;
	arr.member_state[0] = URAID_MEMBER_JOURNAL;
	arr.nmembers = 1;
	rq.er = &er;
	if (test_journal_log_create(&arr, 0, ring, 8, 100, 0, &pl))
		return NULL;
	arr.plog = pl;
	for (unsigned i = 0; i < NP; i++) {
		struct r5_piece *pc = &pcs[i];
		pc->a = &arr;
		pc->rq = &rq;
		pc->op = OP_WRITE;
		pc->n = 4;
		pc->d = 3;
		pc->npar = 1;
		pc->C = 128;
		pc->st.p_slot = 3;
		pc->st.q_slot = -1;
		pc->st.stripe = i;              /* one row each */
		pc->mbase = (uint64_t)i * 128;
		pc->ux = 0;
		pc->ulen = 4096;
		pc->plan.mode = R5_RMW;
		memset(wrs[i], 0, sizeof(wrs[i]));
		memset(sflags[i], 0, sizeof(sflags[i]));
		pc->wr = wrs[i];
		pc->sflag = sflags[i];
		pc->src = srcs[i];
		pc->sbuf = sbufs[i];
		pc->wr[0] = 1;
		pc->src[0] = bufs[i][0];
		for (unsigned s = 0; s < 4; s++)
			pc->sbuf[s] = bufs[i][s];
	}
	return (struct jlog *)pl;
}

static void teardown(struct jlog *j)
{
	jr_fini(&j->base);
	pthread_mutex_destroy(&arr.meta_lock);
}

static int before(struct jlog *j, unsigned i)
{
	return jr_before_writes(&j->base, &pcs[i], on_resume);
}

static void after(struct jlog *j, unsigned i)
{
	jr_after_writes(&j->base, &pcs[i], 0);
}

/*
 * Finding 1: b0 done and alone, b1 logged with its member writes running,
 * b2 built: the checkpoint may move the tail to b1's start, never past it.
 */
static void test_tail_not_past_running_batch(void)
{
	struct jlog *j = setup(4096);
	uint64_t b1_start;

	CHECK(before(j, 0) == 1, "u0 waits for the log");
	log_writes_done(0);
	deliver();
	CHECK(resumed[0] == 1, "u0 resumed after its log write");
	after(j, 0);                            /* b0 done */
	b1_start = j->head;
	CHECK(before(j, 1) == 1, "u1 logged");
	log_writes_done(0);
	deliver();
	CHECK(resumed[1] == 1, "u1 resumed: its member writes run");
	CHECK(before(j, 2) == 1, "u2 logged");  /* b2 built behind b1 */
	CHECK(nios == 1, "b2's log write in work");
	pthread_mutex_lock(&j->mu);
	uint64_t t = ckpt_target(j);
	pthread_mutex_unlock(&j->mu);
	CHECK(t == b1_start, "checkpoint target %" PRIu64 ", b1 starts at %" PRIu64, t, b1_start);
	/* a checkpoint now records b1's start */
	CHECK(ckpt_run(&j->call) == 0 && arr.member_sb[0].recovery_offset == b1_start,
	      "journal_tail %" PRIu64, arr.member_sb[0].recovery_offset);
	log_writes_done(0);
	deliver();
	after(j, 1);
	after(j, 2);
	pthread_mutex_lock(&j->mu);
	t = ckpt_target(j);
	pthread_mutex_unlock(&j->mu);
	CHECK(t == j->b[(j->b_first + j->b_count - 1) % NBATCH].start && t != b1_start,
	      "all done: the newest batch's start (%" PRIu64 ")", t);
	teardown(j);
}

/* Finding 2: a failed log write fails its units and every later write. */
static void test_log_write_failure(void)
{
	struct jlog *j = setup(4096);

	CHECK(before(j, 0) == 1, "u0 logged");
	CHECK(before(j, 1) == 1, "u1 waits behind");
	log_writes_done(-EIO);
	deliver();
	CHECK(resumed[0] == -EIO, "u0 fails (%d), not written unlogged", resumed[0]);
	CHECK(resumed[1] == -EIO, "u1 fails (%d)", resumed[1]);
	CHECK(nios == 0, "no further log write");
	CHECK(before(j, 2) == -EIO, "a later write fails at once");
	after(j, 0);                            /* not in the log any more: ignored */
	teardown(j);
}

/*
 * Finding 3: a unit logged as FLUSH only (not 4 KiB aligned) goes to its
 * member writes only once the tail is at its batch (the older batch that
 * logged other rows done and checkpointed past).
 */
static void test_flush_only_waits_for_tail(void)
{
	struct jlog *j = setup(4096);

	CHECK(before(j, 0) == 1, "u0 logged whole");
	log_writes_done(0);
	deliver();
	CHECK(resumed[0] == 1, "u0 resumed");
	pcs[1].ux = 1;                          /* not 4 KiB aligned: FLUSH only */
	pcs[1].ulen = 512;
	uint64_t b1_start = j->head;
	CHECK(before(j, 1) == 1, "u1 logged as FLUSH");
	CHECK(j->unprotected == 1, "counted");
	log_writes_done(0);
	deliver();
	CHECK(resumed[1] == 0, "u1 held while u0's member writes run");
	after(j, 0);                            /* b0 done: a checkpoint to b1 */
	deliver();
	CHECK(resumed[1] == 0, "u1 still held before the checkpoint");
	CHECK(run_checkpoint(), "a checkpoint was asked for");
	CHECK(atomic_load(&counters[0].in_flight) == 0, "checkpoint counted out");
	CHECK(arr.member_sb[0].recovery_offset == b1_start && j->tail == b1_start,
	      "tail %" PRIu64 " at u1's batch %" PRIu64, j->tail, b1_start);
	deliver();
	CHECK(resumed[1] == 1, "u1 goes once nothing older is in the log");
	after(j, 1);
	teardown(j);
}

/* Finding 6: a failed checkpoint fails the waiting writes (no spinning). */
static void test_checkpoint_failure(void)
{
	struct jlog *j = setup(4096);

	CHECK(before(j, 0) == 1, "u0 logged");
	log_writes_done(0);
	deliver();
	pcs[1].ux = 1;
	pcs[1].ulen = 512;
	CHECK(before(j, 1) == 1, "u1 FLUSH only");
	log_writes_done(0);
	after(j, 0);
	record_rc = -EIO;
	CHECK(run_checkpoint(), "checkpoint asked for");
	deliver();
	CHECK(resumed[1] == -EIO, "held unit fails (%d)", resumed[1]);
	CHECK(ncalls == 0, "no checkpoint retried");
	CHECK(before(j, 2) == -EIO, "later writes fail");
	teardown(j);
}

/* max_unit_sectors: whole-page units up to a quarter of the ring are logged whole. */
/* A large unit's pages: 32 rows of 3 data pages and P, 129 pages in the log. */
static uint8_t big[4][128 << 10] __attribute__((aligned(4096)));

/* pcs[0] made a unit of big's pages (a 1 MiB sequential stream's full rows). */
static void big_unit(void)
{
	struct r5_piece *pc = &pcs[0];

	pc->ulen = 128 << 10;
	for (unsigned k = 0; k < 3; k++) {
		pc->wr[k] = 1;
		pc->src[k] = big[k];
	}
	for (unsigned s = 0; s < 4; s++)
		pc->sbuf[s] = big[s];
}

/* Whether any of mio's buffers is one of big's pages (a gathered write). */
static bool gathered_from_big(const struct member_io *mio)
{
	bool gathered = false;
	for (unsigned i = 0; mio->iov && i < mio->iovcnt; i++)
		gathered |= mio->iov[i].iov_base == (void *)big[1];
	return gathered;
}

/*
 * A batch of large units to a journal in memory whose log writer could not
 * be started (setup before the journal is in memory: none is) is written on
 * the reactor, one write, as a small unit's batch is: gathered from the
 * unit's pages while it is written at once (up to MEMBER_INLINE_MAX, as
 * here); a batch to a journal not in memory is copied into the batch's
 * buffer (through io_uring).
 */
static void test_big_batch_no_writer(void)
{
	struct jlog *j = setup(65536);

	CHECK(j && !j->wthread_on, "set up with no log writer");
	big_unit();
	jm.in_memory = true;
	CHECK(before(j, 0) == 1 && nios == 1 && nposts == 0,
	      "big batch, no log writer: submitted on the reactor (%u ios)", nios);
	CHECK(nios && ios[0]->len == 129u * 4096 && gathered_from_big(ios[0]),
	      "log write of %u bytes gathered from the unit's pages", nios ? ios[0]->len : 0);
	log_writes_done(0);
	deliver();
	CHECK(resumed[0] == 1, "big u0 resumed after its log write");
	after(j, 0);
	/* a small unit: inline */
	CHECK(before(j, 1) == 1 && nios == 1 && nposts == 0, "small batch inline");
	log_writes_done(0);
	deliver();
	after(j, 1);
	/* a journal not in memory */
	jm.in_memory = false;
	resumed[0] = 0;
	CHECK(before(j, 0) == 1 && nios == 1 && nposts == 0 && !gathered_from_big(ios[0]),
	      "journal not in memory: submitted on the reactor, copied");
	log_writes_done(0);
	deliver();
	after(j, 0);
	teardown(j);
}

/*
 * A journal in memory has a log writer: a batch of large units is
 * encoded and written by its thread (checksums and copy off the reactor),
 * gathered from the unit's pages, not submitted on the reactor; the
 * result comes back as a post, and the unit resumes from it. A failed
 * write there fails the journal: the unit resumes with -EIO. A small
 * batch stays inline on the reactor.
 */
static void test_log_writer(void)
{
	jm.in_memory = true;
	struct jlog *j = setup(65536);
	CHECK(j && j->wthread_on, "a journal in memory has a log writer");
	big_unit();
	nsync = 0;
	sync_res = 0;
	CHECK(before(j, 0) == 1 && nios == 0, "big batch: not submitted on the reactor (%u ios)",
	      nios);
	CHECK(wait_post(), "the log writer posts its result");
	CHECK(nsync == 1 && !pthread_equal(sync_thread, pthread_self()),
	      "written by the log writer's thread (%u writes)", nsync);
	CHECK(nsync && sync_ios[0]->len == 129u * 4096 && gathered_from_big(sync_ios[0]),
	      "log write of %u bytes gathered from the unit's pages", nsync ? sync_ios[0]->len : 0);
	CHECK(resumed[0] == 0, "u0 waits until the result is delivered");
	deliver();      /* the writer's post, then u0's resume */
	deliver();
	CHECK(resumed[0] == 1, "big u0 resumed after its log write");
	after(j, 0);
	/* a small unit: inline on the reactor */
	nsync = 0;
	CHECK(before(j, 1) == 1 && nios == 1 && nsync == 0, "small batch inline");
	log_writes_done(0);
	deliver();
	after(j, 1);
	/* the writer's write fails: the journal fails, u0 with it */
	resumed[0] = 0;
	sync_res = -EIO;
	CHECK(before(j, 0) == 1 && wait_post(), "big batch again, to the writer");
	deliver();
	deliver();
	CHECK(resumed[0] == -EIO && j->failed, "a failed log write there fails the journal "
	      "(u0 resumed with %d)", resumed[0]);
	sync_res = 0;
	teardown(j);
	jm.in_memory = false;
}

static void test_unit_cap(void)
{
	struct jlog *j = setup(16384);

	CHECK(j->base.max_unit_sectors == 16384 / 4 / 5 / 8 * 8, "max unit %u",
	      j->base.max_unit_sectors);
	CHECK(!j->base.span_reads, "no span reads");
	teardown(j);
}

int main(void)
{
	printf("test_journal_run: no randomness\n");
	test_tail_not_past_running_batch();
	test_log_write_failure();
	test_flush_only_waits_for_tail();
	test_checkpoint_failure();
	test_unit_cap();
	test_big_batch_no_writer();
	test_log_writer();
	if (failures) {
		fprintf(stderr, "test_journal_run: %d failures\n", failures);
		return 1;
	}
	printf("test_journal_run: ok\n");
	return 0;
}
