// SPDX-License-Identifier: MIT
/*
 * The request latency histogram: which bucket a time goes in (the bounds
 * inclusive, as Prometheus' "le"), the reactor's once-per-poll clock that
 * times requests, the sum over reactors, and requests of
 * each kind counted once on the reactor that ran them (a caller-driven
 * engine of two reactors, driven from this thread).
 *
 *   test_latency [SEED]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/engine.h>

#include "engine/core/array.h"       /* the per-reactor counters */
#include "engine/core/latency.h"
#include "io/reactor.h"
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)

static void test_buckets(void)
{
	static const struct { uint64_t ns; unsigned b; } cases[] = {
		{ 0, 0 }, { 1, 0 }, { 999, 0 }, { 1000, 0 }, { 1001, 1 }, { 2000, 1 },
		{ 2001, 2 }, { 4000, 2 }, { 4001, 3 }, { 1000000, 10 }, { 1024000, 10 },
		{ 1024001, 11 }, { 67108864000ull, 26 }, { 67108864001ull, 27 },
		{ UINT64_MAX, URAID_LATENCY_BUCKETS - 1 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned b = uraid_latency_bucket(cases[i].ns);
		CHECK(b == cases[i].b, "%" PRIu64 " ns: bucket %u, expected %u", cases[i].ns, b,
		      cases[i].b);
	}
	/* every bound falls in its own bucket, one ns more in the next */
	for (unsigned b = 0; b + 1 < URAID_LATENCY_BUCKETS; b++) {
		uint64_t le = uraid_latency_bucket_le_ns(b);
		CHECK(uraid_latency_bucket(le) == b, "bound of %u", b);
		CHECK(uraid_latency_bucket(le + 1) == b + 1, "bound of %u + 1 ns", b);
		CHECK(b == 0 || le == 2 * uraid_latency_bucket_le_ns(b - 1), "bounds double at %u",
		      b);
	}
	CHECK(uraid_latency_bucket_le_ns(URAID_LATENCY_BUCKETS - 1) == UINT64_MAX, "last: +Inf");
	CHECK(!strcmp(uraid_latency_kind_name(URAID_LATENCY_WRITE), "write"), "kind name");
}

/* latency_note on three reactors' copies, then the sum. */
static void test_sum(uint64_t seed)
{
	static struct latency_counts lc[3];
	uint64_t want[URAID_LATENCY_KINDS][URAID_LATENCY_BUCKETS] = { { 0 } };
	uint64_t want_sum[URAID_LATENCY_KINDS] = { 0 };
	uint64_t s = seed;

	for (unsigned i = 0; i < 3000; i++) {
		unsigned r = (unsigned)(rng_next(&s) % 3);
		unsigned k = (unsigned)(rng_next(&s) % URAID_LATENCY_KINDS);
		uint64_t ns = rng_next(&s) >> (rng_next(&s) % 64);
		ns %= 100000000000ull;
		latency_note(&lc[r], k, ns);
		want[k][uraid_latency_bucket(ns)]++;
		want_sum[k] += ns;
	}
	const struct latency_counts *per[3] = { &lc[0], &lc[1], &lc[2] };
	struct uraid_latency_hist h;
	memset(&h, 0, sizeof(h));
	latency_sum(per, 3, &h);
	CHECK(!memcmp(h.count, want, sizeof(want)), "summed buckets differ");
	CHECK(!memcmp(h.sum_ns, want_sum, sizeof(want_sum)), "summed times differ");
}

/* ---- the reactor's poll clock (reactor_now_ns) ---- */

struct clock_seen {
	struct io_op op;
	struct reactor *r;
	bool in_poll;
	uint64_t seen, poll_ns;
	unsigned runs;
};

static void clock_cb(struct io_op *op, int res)
{
	struct clock_seen *c = (struct clock_seen *)op;
	(void)res;
	c->in_poll = c->r->in_poll;
	c->seen = reactor_now_ns(c->r);
	c->poll_ns = c->r->now_ns;
	c->runs++;
}

/* Callbacks see the time the poll read (no clock read of their own, the
 * same for every callback of a poll); outside a poll it is the clock. */
static void test_poll_clock(void)
{
	struct reactor r;
	struct clock_seen a = { .op.cb = clock_cb, .r = &r }, b = { .op.cb = clock_cb, .r = &r };

	if (reactor_init(&r, 0, 64)) {
		CHECK(0, "reactor_init");
		return;
	}
	reactor_complete(&r, &a.op, 0);
	reactor_complete(&r, &b.op, 0);
	uint64_t before = uraid_now_ns();
	reactor_poll(&r, 0);
	uint64_t after = uraid_now_ns();
	CHECK(a.runs == 1 && b.runs == 1, "callbacks ran %u, %u times", a.runs, b.runs);
	CHECK(a.in_poll && b.in_poll, "callbacks run inside the poll");
	CHECK(a.seen == a.poll_ns && b.seen == a.poll_ns, "both callbacks see the poll's time");
	CHECK(a.seen >= before && a.seen <= after, "the poll's time is read during the poll");
	CHECK(!r.in_poll, "not in a poll after it");
	uint64_t outside = reactor_now_ns(&r);
	CHECK(outside >= after, "outside a poll: the clock, not the last poll's time");
	reactor_fini(&r);
}

static uint64_t total(const struct uraid_latency_hist *h, enum uraid_latency_kind k)
{
	uint64_t n = 0;
	for (unsigned b = 0; b < URAID_LATENCY_BUCKETS; b++)
		n += h->count[k][b];
	return n;
}

static void run_op(struct uraid_engine *e, struct uraid_array *a, unsigned reactor,
		   enum uraid_io_op op, uint8_t *buf, uint64_t off)
{
	struct op o = { .buf = buf };
	o.io = (struct uraid_io){ .op = op, .offset = off,
				  .length = op == URAID_IO_FLUSH ? 0 : 4096, .buf = buf,
				  .done = op_done, .ctx = &o };
	int rc = uraid_array_submit(a, reactor, &o.io);
	CHECK(rc == 0, "submit on reactor %u: %d", reactor, rc);
	while (rc == 0 && !__atomic_load_n(&o.done, __ATOMIC_ACQUIRE))
		uraid_engine_poll(e, reactor, 10);
	CHECK(o.result == 0, "op %d on reactor %u: %d", (int)op, reactor, o.result);
}

/* Requests through a RAID 1 on two reactors: each counted once, on its own. */
static void test_array(uint64_t seed)
{
	char dir[64], paths[2][96] = { "", "" }, err[256];
	const char *devs[2] = { paths[0], paths[1] };
	struct uraid_engine *e = NULL;
	struct uraid_array *a = NULL;
	uint8_t *buf = aligned_alloc(4096, 4096);
	uint64_t s = seed;

	snprintf(dir, sizeof(dir), "/tmp/uraid-latency.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < 2; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		if (fixture_make_file(paths[i], 8ull * MIB))
			goto out;
	}
	struct uraid_engine_opts eo = { .reactors = 2 };
	if (!buf || fixture_create_array("latency", "1", NULL, 2, 0, 2, devs) ||
	    uraid_engine_create(&eo, &e)) {
		CHECK(0, "setup");
		goto out;
	}
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = 2 };
	if (uraid_array_assemble(e, &ao, &a, err, sizeof(err)) != 0) {
		CHECK(0, "assemble: %s", err);
		goto out;
	}
	struct uraid_latency_hist h;
	uraid_array_latency(a, &h);
	for (unsigned k = 0; k < URAID_LATENCY_KINDS; k++)
		CHECK(total(&h, k) == 0 && h.sum_ns[k] == 0, "kind %u counted before any request",
		      k);
	/* reactor 0: 5 writes, 3 reads, 1 flush; reactor 1: 2 writes, 4 reads */
	unsigned writes[2] = { 5, 2 }, reads[2] = { 3, 4 };
	for (unsigned r = 0; r < 2; r++) {
		for (unsigned i = 0; i < writes[r]; i++) {
			rng_fill(&s, buf, 4096);
			run_op(e, a, r, URAID_IO_WRITE, buf, (rng_next(&s) % 1024) * 4096);
		}
		for (unsigned i = 0; i < reads[r]; i++)
			run_op(e, a, r, URAID_IO_READ, buf, (rng_next(&s) % 1024) * 4096);
	}
	run_op(e, a, 0, URAID_IO_FLUSH, NULL, 0);
	uraid_array_latency(a, &h);
	CHECK(total(&h, URAID_LATENCY_WRITE) == 7, "writes: %" PRIu64,
	      total(&h, URAID_LATENCY_WRITE));
	CHECK(total(&h, URAID_LATENCY_READ) == 7, "reads: %" PRIu64,
	      total(&h, URAID_LATENCY_READ));
	CHECK(total(&h, URAID_LATENCY_OTHER) == 1, "others: %" PRIu64,
	      total(&h, URAID_LATENCY_OTHER));
	CHECK(h.sum_ns[URAID_LATENCY_WRITE] > 0 && h.sum_ns[URAID_LATENCY_READ] > 0,
	      "times summed");
	/* each reactor's copy holds its own requests */
	struct array *ia = (struct array *)a;
	for (unsigned r = 0; r < 2; r++) {
		uint64_t n = 0;
		for (unsigned b = 0; b < URAID_LATENCY_BUCKETS; b++)
			n += ia->counters[r].latency.count[URAID_LATENCY_READ][b];
		CHECK(n == reads[r], "reactor %u counted %" PRIu64 " reads, ran %u", r, n, reads[r]);
	}
out:
	if (a)
		uraid_array_close(a);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < 2; i++)
		unlink(paths[i]);
	rmdir(dir);
	free(buf);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;

	printf("test_latency: seed %" PRIu64 " (rerun: %s %" PRIu64 ")\n", seed, argv[0], seed);
	test_buckets();
	test_poll_clock();
	test_sum(seed);
	test_array(seed);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
