// SPDX-License-Identifier: MIT
/*
 * Read-ahead never returns stale data (engine/cache/readahead.c).
 *
 * The attack: on a threaded engine with NREACT reactors, NREADERS
 * sequential readers (each its own length, each read going to the next
 * reactor, as a client with several connections sends them) and
 * NWRITERS writers of random WRITE, WRITE_ZEROES and DISCARD requests work
 * over the same small region, so that writes land in windows that were
 * read ahead and on prefetches still in flight. A few random readers go
 * along. Every 4 KiB block of every read is checked byte by byte against
 * a model: each write carries a version number written into every 8 bytes
 * of its blocks; a read must return, for each block, the write completed
 * last before the read was submitted or one started since (writes of one
 * block never overlap, so each block's versions are in order). Part-way
 * through, the read-ahead window is switched off and on again at run time,
 * and in one round a member of the RAID 5 vanishes (prefetches then go
 * through the degraded path).
 *
 * Also: random reads alone never prefetch; a write into data read ahead
 * is seen by the next read (sequential, one reactor, deterministic); the
 * read-ahead must have served reads at all (a test that read-ahead did
 * nothing would pass otherwise).
 *
 *   test_readahead [SEED]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "engine/cache/readahead.h"
#include "engine/core/array.h"
#include "../support/array_fixture.h"
#include "../support/check.h"

#define NREACT 3
#define NREADERS 4
#define NRANDOM 2
#define NWRITERS 3
#define BS 4096u
#define REGION (3u << 20)               /* the contested bytes, from 0 */
#define NBLK (REGION / BS)
#define HIST 64                         /* versions kept per block */
#define MEMBER_BYTES (16u << 20)
#define MAXREAD (256u << 10)

enum { K_DATA, K_ZERO, K_ANY };         /* what a version left in a block */

struct blk {
	uint64_t done;                  /* last version completed */
	uint64_t started;               /* last version started */
	bool busy;                      /* a write of it in flight */
	uint64_t hver[HIST];            /* history ring: version, kind */
	uint8_t hkind[HIST];
	unsigned hn;                    /* entries pushed */
};

struct agent;

struct run {
	struct uraid_array *a;
	uint64_t seed;
	const char *name;
	pthread_mutex_t mu;             /* the model */
	struct blk b[NBLK];
	uint64_t ver;
	_Atomic unsigned active;
	_Atomic uint64_t ops_left;
	_Atomic uint64_t reads_checked, blocks_checked, reads_lent;
	_Atomic unsigned lose_slot_at;  /* ops_left at which a member vanishes (0: never) */
	int lose_slot;
	struct agent *agents;
};

struct agent {
	struct uraid_io io;
	struct run *run;
	int kind;                       /* 0 sequential reader, 1 random reader, 2 writer */
	unsigned id, k;                 /* k: requests sent */
	uint64_t rng;
	uint64_t cursor, len;           /* readers */
	uint64_t minv[MAXREAD / BS];    /* per block at submit: last version done */
	uint64_t wver;                  /* writers: this write's version */
	uint8_t *buf;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t word(uint64_t blk, uint64_t ver, unsigned i, uint64_t seed)
{
	return (blk << 40 ^ ver << 10 ^ i) * 0x9e3779b97f4a7c15ULL ^ seed;
}

static void fill_block(uint8_t *p, uint64_t blk, uint64_t ver, uint64_t seed)
{
	for (unsigned i = 0; i < BS / 8; i++) {
		uint64_t v = word(blk, ver, i, seed);
		memcpy(p + 8 * i, &v, 8);
	}
	memcpy(p, &ver, 8);             /* the first word names the version */
}

/* Does block p hold what version entry h of blk left? */
static bool block_is(const uint8_t *p, uint64_t blk, uint64_t ver, uint8_t kind, uint64_t seed)
{
	if (kind == K_ANY)
		return true;
	if (kind == K_ZERO) {
		for (unsigned i = 0; i < BS; i++)
			if (p[i])
				return false;
		return true;
	}
	uint64_t v;
	memcpy(&v, p, 8);
	if (v != ver)
		return false;
	for (unsigned i = 1; i < BS / 8; i++) {
		memcpy(&v, p + 8 * i, 8);
		if (v != word(blk, ver, i, seed))
			return false;
	}
	return true;
}

static void push_hist(struct blk *b, uint64_t ver, uint8_t kind)
{
	b->hver[b->hn % HIST] = ver;
	b->hkind[b->hn % HIST] = kind;
	b->hn++;
}

static void next_op(struct agent *g);

/* Under run->mu: block bi of a read submitted when its last done version was minv. */
static void check_block(struct run *run, struct agent *g, uint64_t bi, const uint8_t *p,
			uint64_t minv)
{
	struct blk *b = &run->b[bi];
	unsigned first = b->hn > HIST ? b->hn - HIST : 0;
	bool ok = false, min_seen = false;

	for (unsigned h = first; h < b->hn && !ok; h++) {
		uint64_t v = b->hver[h % HIST];
		if (v == minv)
			min_seen = true;
		if (v >= minv && v <= b->started)
			ok = block_is(p, bi, v, b->hkind[h % HIST], run->seed);
	}
	if (!ok && first > 0 && !min_seen)
		return;         /* the history no longer reaches back to minv: no verdict */
	/* A read that overlapped a write may see the block torn between the
	   versions of that time: the members themselves (tmpfs, copied by
	   memcpy) give no 4 KiB atomicity, with read-ahead off as well (seen
	   with ra_read disabled). Stale is what matters: every 8-byte word must
	   come from a version the read may see. */
	for (unsigned i = 0; !ok && i < BS / 8; i++) {
		uint64_t got;
		bool word_ok = false;
		memcpy(&got, p + 8 * i, 8);
		for (unsigned h = first; h < b->hn && !word_ok; h++) {
			uint64_t v = b->hver[h % HIST];
			uint8_t kind = b->hkind[h % HIST];
			if (v < minv || v > b->started)
				continue;
			word_ok = kind == K_ANY || (kind == K_ZERO && got == 0) ||
				  (kind != K_ZERO && got == (i ? word(bi, v, i, run->seed) : v));
		}
		if (!word_ok)
			break;
		if (i == BS / 8 - 1)
			ok = true;
	}
	if (!ok) {
		uint64_t got;
		memcpy(&got, p, 8);
		CHECK(0, "%s seed %" PRIu64 ": agent %u read block %" PRIu64 " (offset %" PRIu64
		      "): holds version %" PRIu64 " (first word), expected one of %" PRIu64
		      "..%" PRIu64 " (stale or torn)", run->name, run->seed, g->id, bi, bi * BS, got,
		      minv, b->started);
	}
	atomic_fetch_add(&run->blocks_checked, 1);
}

static void op_done(struct uraid_io *io, int res)
{
	struct agent *g = io->ctx;
	struct run *run = g->run;
	uint64_t first = io->offset / BS, n = io->length / BS;

	CHECK(res == 0, "%s seed %" PRIu64 ": agent %u op %d at %" PRIu64 "+%" PRIu64 ": %d",
	      run->name, run->seed, g->id, io->op, io->offset, io->length, res);
	pthread_mutex_lock(&run->mu);
	if (io->op == URAID_IO_READ) {
		/* lent (URAID_IO_LEND, read-ahead's buffer): checked there, then given back */
		const uint8_t *data = io->lend.data ? io->lend.data : g->buf;
		for (uint64_t i = 0; i < n && res == 0; i++)
			check_block(run, g, first + i, data + i * BS, g->minv[i]);
		if (io->lend.data) {
			io->lend.give_back(&io->lend);
			atomic_fetch_add(&run->reads_lent, 1);
		}
		atomic_fetch_add(&run->reads_checked, 1);
	} else {
		for (uint64_t i = 0; i < n; i++) {
			run->b[first + i].done = g->wver;
			run->b[first + i].busy = false;
		}
	}
	pthread_mutex_unlock(&run->mu);
	next_op(g);
}

static void submit(struct agent *g)
{
	struct run *run = g->run;
	unsigned reactor = (g->id + g->k++) % NREACT;
	g->io.done = op_done;
	g->io.ctx = g;
	int rc = uraid_array_submit(run->a, reactor, &g->io);
	CHECK(rc == 0, "%s: submit: %d", run->name, rc);
	if (rc)
		atomic_fetch_sub(&run->active, 1);
}

static void next_op(struct agent *g)
{
	struct run *run = g->run;
	uint64_t left = atomic_fetch_sub(&run->ops_left, 1);

	if (left == 0 || left > (1ull << 62)) {
		atomic_store(&run->ops_left, 0);
		atomic_fetch_sub(&run->active, 1);
		return;
	}
	unsigned lose = atomic_load(&run->lose_slot_at);
	if (lose && left == lose) {
		struct uraid_fault f = { .kind = URAID_FAULT_VANISH, .last_sector = UINT64_MAX };
		uraid_array_inject(run->a, (unsigned)run->lose_slot, &f);
	}
	memset(&g->io, 0, sizeof(g->io));
	if (g->kind == 0 || g->kind == 1) {
		uint64_t off;
		if (g->kind == 0) {
			if (g->cursor + g->len > REGION)
				g->cursor = 0;
			off = g->cursor;
			g->cursor += g->len;
		} else {
			off = rnd(&g->rng) % (REGION / g->len) * g->len;
		}
		pthread_mutex_lock(&run->mu);
		for (uint64_t i = 0; i < g->len / BS; i++)
			g->minv[i] = run->b[off / BS + i].done;
		pthread_mutex_unlock(&run->mu);
		g->io.op = URAID_IO_READ;
		/* half the agents take lent bytes, as the NBD server does */
		g->io.flags = g->id % 2 ? URAID_IO_LEND : 0;
		g->io.offset = off;
		g->io.length = g->len;
		g->io.buf = g->buf;
	} else {
		uint64_t n = 1 + rnd(&g->rng) % 16, bi = 0;
		unsigned pick = rnd(&g->rng) % 10;
		bool found = false;
		pthread_mutex_lock(&run->mu);
		for (int tries = 0; tries < 16 && !found; tries++) {
			bi = rnd(&g->rng) % (NBLK - n + 1);
			found = true;
			for (uint64_t i = 0; i < n && found; i++)
				found = !run->b[bi + i].busy;
		}
		if (!found) {
			n = 1;
			do
				bi = rnd(&g->rng) % NBLK;
			while (run->b[bi].busy);
		}
		uint8_t kind = pick < 7 ? K_DATA : pick < 9 ? K_ZERO : K_ANY;
		g->wver = ++run->ver;
		for (uint64_t i = 0; i < n; i++) {
			struct blk *b = &run->b[bi + i];
			b->busy = true;
			b->started = g->wver;
			push_hist(b, g->wver, kind);
		}
		pthread_mutex_unlock(&run->mu);
		g->io.op = kind == K_DATA ? URAID_IO_WRITE : kind == K_ZERO ? URAID_IO_WRITE_ZEROES
									 : URAID_IO_DISCARD;
		g->io.offset = bi * BS;
		g->io.length = n * BS;
		if (kind == K_DATA) {
			for (uint64_t i = 0; i < n; i++)
				fill_block(g->buf + i * BS, bi + i, g->wver, run->seed);
			g->io.buf = g->buf;
		}
	}
	submit(g);
}

static void ra_stat(struct uraid_array *a, struct uraid_read_ahead_status *ra)
{
	struct uraid_array_status *st = malloc(sizeof(*st));
	uraid_array_status(a, st);
	*ra = st->read_ahead;
	free(st);
}

/* Random reads alone: nothing read ahead. Then one sequential reader on one
 * reactor, a write into what it read ahead, and the next reads see it. */
static void deterministic(struct run *run)
{
	struct uraid_read_ahead_status ra;
	uint8_t *buf = aligned_alloc(4096, 64u << 10), *want = aligned_alloc(4096, BS);
	uint64_t rng = run->seed | 1;

	uint64_t blocks = uraid_array_size(run->a) / BS;
	for (int i = 0; i < 2000; i++) {
		uint64_t off = rnd(&rng) % blocks * BS;
		CHECK(uraid_array_pread(run->a, buf, BS, off) == 0, "%s: random read", run->name);
	}
	ra_stat(run->a, &ra);
	CHECK(ra.prefetched_bytes == 0 && ra.streams == 0,
	      "%s seed %" PRIu64 ": random reads read ahead %" PRIu64 " bytes (%u streams)",
	      run->name, run->seed, ra.prefetched_bytes, ra.streams);
	for (uint64_t off = 0; off < (1u << 20); off += 64u << 10)
		CHECK(uraid_array_pread(run->a, buf, 64u << 10, off) == 0, "%s: read", run->name);
	ra_stat(run->a, &ra);
	CHECK(ra.prefetched_bytes > 0 && ra.streams == 1,
	      "%s: a sequential reader started no read-ahead (%" PRIu64 " bytes, %u streams)",
	      run->name, ra.prefetched_bytes, ra.streams);
	/* the block just ahead of the reader is read ahead now: overwrite it */
	pthread_mutex_lock(&run->mu);
	uint64_t v = ++run->ver, bi = (1u << 20) / BS + 3;
	run->b[bi].done = run->b[bi].started = v;
	push_hist(&run->b[bi], v, K_DATA);
	pthread_mutex_unlock(&run->mu);
	fill_block(want, bi, v, run->seed);
	CHECK(uraid_array_pwrite(run->a, want, BS, bi * BS, 0) == 0, "%s: write", run->name);
	CHECK(uraid_array_pread(run->a, buf, 64u << 10, 1u << 20) == 0, "%s: read", run->name);
	CHECK(memcmp(buf + 3 * BS, want, BS) == 0,
	      "%s seed %" PRIu64 ": a read after a write into data read ahead returned old data",
	      run->name, run->seed);
	ra_stat(run->a, &ra);
	CHECK(ra.invalidated_bytes > 0, "%s: the write dropped nothing read ahead", run->name);

	/* a second sequential reader, each of its reads from the second on
	   followed by more random reads (past the region) than there are
	   candidates: it still becomes a stream (a candidate once continued is
	   not pushed out by new ones) */
	uint64_t far = 8u << 20, span = uraid_array_size(run->a) - far;
	for (uint64_t off = 4u << 20; off < (4u << 20) + (6 * (64u << 10)); off += 64u << 10) {
		CHECK(uraid_array_pread(run->a, buf, 64u << 10, off) == 0, "%s: read", run->name);
		for (int i = 0; off > (4u << 20) && i < 40; i++) {
			/* 4 KiB at 8 KiB boundaries: no random read continues another */
			uint64_t r = far + rnd(&rng) % (span / (2 * BS)) * 2 * BS;
			CHECK(uraid_array_pread(run->a, buf, BS, r) == 0, "%s: random read", run->name);
		}
	}
	ra_stat(run->a, &ra);
	CHECK(ra.streams == 2,
	      "%s seed %" PRIu64 ": a sequential reader among random reads made no stream "
	      "(%u streams)", run->name, run->seed, ra.streams);
	free(buf);
	free(want);
}

/*
 * base: where the member files go. /dev/shm: members copied inline, where
 * read-ahead does not prefetch by itself (readahead.c): it is made to here,
 * so that prefetches completed inline are attacked too. /tmp: member I/O
 * through io_uring (skipped when /tmp is in memory as well).
 */
static void run_level(struct uraid_engine *e, const char *base, const char *level, unsigned n,
		      unsigned chunk_kib, int lose_slot, uint64_t seed)
{
	char dir[64], paths[8][96], name[64], err[256];
	const char *devs[8];
	struct run *run = calloc(1, sizeof(*run));
	static const uint64_t lens[NREADERS] = { 4096, 16384, 65536, 131072 };

	snprintf(name, sizeof(name), "raid%s n=%u%s on %s", level, n,
		 lose_slot >= 0 ? " degraded" : "", base);
	snprintf(dir, sizeof(dir), "%s/uraid-ra.%d", base, getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < n; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u", dir, i);
		CHECK(fixture_make_file(paths[i], MEMBER_BYTES) == 0, "%s: %s", name, paths[i]);
		devs[i] = paths[i];
	}
	CHECK(fixture_create_array(name, level, NULL, n, chunk_kib, 2, devs) == 0, "%s: create", name);
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = n, .idle_clean_ms = 20,
					  .read_ahead_bytes = URAID_READ_AHEAD_DEFAULT };
	if (uraid_array_assemble(e, &ao, &run->a, err, sizeof(err))) {
		CHECK(0, "%s: assemble: %s", name, err);
		free(run);
		return;
	}
	struct uraid_read_ahead_status ra;
	ra_stat(run->a, &ra);
	bool shm = strcmp(base, "/dev/shm") == 0;
	if (!shm && ra.members_in_memory) {
		printf("skip %s: its members are in memory too\n", name);
		uraid_array_close(run->a);
		for (unsigned i = 0; i < n; i++)
			unlink(paths[i]);
		rmdir(dir);
		free(run);
		return;
	}
	CHECK(ra.members_in_memory == shm, "%s: members_in_memory %d", name, ra.members_in_memory);
	if (shm)
		ra_prefetch_memory((struct array *)run->a, true);
	run->name = name;
	run->seed = seed;
	pthread_mutex_init(&run->mu, NULL);
	/* every block starts at version 1 */
	uint8_t *init = aligned_alloc(4096, REGION);
	for (uint64_t bi = 0; bi < NBLK; bi++) {
		fill_block(init + bi * BS, bi, 1, seed);
		run->b[bi].done = run->b[bi].started = 1;
		push_hist(&run->b[bi], 1, K_DATA);
	}
	run->ver = 1;
	CHECK(uraid_array_pwrite(run->a, init, REGION, 0, 0) == 0, "%s: fill", name);
	free(init);

	deterministic(run);

	unsigned nag = NREADERS + NRANDOM + NWRITERS;
	run->agents = calloc(nag, sizeof(struct agent));
	run->lose_slot = lose_slot;
	uint64_t total = 30000;
	atomic_store(&run->ops_left, total);
	atomic_store(&run->lose_slot_at, lose_slot >= 0 ? (unsigned)(total / 2) : 0);
	atomic_store(&run->active, nag);
	for (unsigned i = 0; i < nag; i++) {
		struct agent *g = &run->agents[i];
		g->run = run;
		g->id = i;
		g->rng = seed * 1000003 + i + 1;
		g->kind = i < NREADERS ? 0 : i < NREADERS + NRANDOM ? 1 : 2;
		g->len = g->kind == 0 ? lens[i] : BS;
		g->cursor = rnd(&g->rng) % (REGION / g->len) * g->len;
		g->buf = aligned_alloc(4096, MAXREAD);
	}
	for (unsigned i = 0; i < nag; i++)
		next_op(&run->agents[i]);
	/* switch read-ahead off and on again while it works */
	bool toggled = false;
	for (int i = 0; atomic_load(&run->active) && i < 1200000; i++) {
		uint64_t left = atomic_load(&run->ops_left);
		if (!toggled && left < total * 2 / 3) {
			CHECK(uraid_array_set_read_ahead(run->a, URAID_READ_AHEAD_OFF) == 0, "%s: off", name);
			usleep(2000);
			CHECK(uraid_array_set_read_ahead(run->a, URAID_READ_AHEAD_DEFAULT) == 0, "%s: on", name);
			toggled = true;
		}
		usleep(100);
	}
	CHECK(atomic_load(&run->active) == 0, "%s: %u agents never finished", name,
	      atomic_load(&run->active));
	ra_stat(run->a, &ra);
	printf("%s seed %" PRIu64 ": %" PRIu64 " reads, %" PRIu64 " blocks checked; read-ahead "
	       "window %" PRIu64 " unit %" PRIu64 ", %" PRIu64 " prefetched, %" PRIu64
	       " served in %" PRIu64 " reads, %" PRIu64 " wasted\n", name, seed,
	       atomic_load(&run->reads_checked), atomic_load(&run->blocks_checked), ra.window_bytes,
	       ra.unit_bytes, ra.prefetched_bytes, ra.served_bytes, ra.served_reads,
	       ra.wasted_bytes);
	CHECK(ra.served_reads > 0, "%s: read-ahead served no read", name);
	printf("%s: %" PRIu64 " reads answered with lent bytes\n", name,
	       atomic_load(&run->reads_lent));
	/* where read-ahead served a fair number of reads, some of the lending
	   agents' were among them (RAID 1's two-unit window serves few) */
	CHECK(atomic_load(&run->reads_lent) > 0 || ra.served_reads < 100,
	      "%s: %" PRIu64 " reads served, none took lent bytes", name, ra.served_reads);
	CHECK(ra.invalidated_bytes > 0,
	      "%s: no write ever dropped read-ahead data (the attack missed)", name);
	uraid_array_close(run->a);
	for (unsigned i = 0; i < nag; i++)
		free(run->agents[i].buf);
	free(run->agents);
	for (unsigned i = 0; i < n; i++)
		unlink(paths[i]);
	rmdir(dir);
	pthread_mutex_destroy(&run->mu);
	free(run);
	printf("%s %s\n", failures ? "FAIL" : "ok  ", name);
}

static void flag_done(struct uraid_io *io, int res)
{
	(void)io;
	CHECK(0, "a request with bad flags ran (%d)", res);
}

/* Members in memory, read-ahead left to itself: a sequential reader makes no
 * stream (not tracked then), nothing is read ahead, and the reads are right. */
static void memory_members(struct uraid_engine *e, uint64_t seed)
{
	char dir[64], paths[4][96], err[256];
	const char *devs[4];
	struct uraid_array *a;
	struct uraid_read_ahead_status ra;
	uint8_t *buf = aligned_alloc(4096, 64u << 10), *want = aligned_alloc(4096, 64u << 10);

	snprintf(dir, sizeof(dir), "/dev/shm/uraid-ra.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < 4; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u", dir, i);
		CHECK(fixture_make_file(paths[i], MEMBER_BYTES) == 0, "%s", paths[i]);
		devs[i] = paths[i];
	}
	CHECK(fixture_create_array("memory members", "5", NULL, 4, 64, 2, devs) == 0, "create");
	/* the library's default is off: nothing set aside, nothing read ahead */
	struct uraid_assemble_opts ao0 = { .paths = devs, .npaths = 4 };
	if (uraid_array_assemble(e, &ao0, &a, err, sizeof(err)) == 0) {
		for (uint64_t off = 0; off < (1u << 20); off += 64u << 10)
			CHECK(uraid_array_pread(a, buf, 64u << 10, off) == 0, "default: read");
		ra_stat(a, &ra);
		CHECK(ra.window_bytes == 0 && ra.memory_bytes == 0 && ra.prefetched_bytes == 0,
		      "library default: window %" PRIu64 ", memory %" PRIu64 ", read ahead %" PRIu64
		      " (expected off)", ra.window_bytes, ra.memory_bytes, ra.prefetched_bytes);
		/* an embedder cannot set the engine's own flag, nor an unknown one */
		static const uint32_t bad[] = { ARRAY_IO_INTERNAL, 0x2u, URAID_IO_FUA | 0x100u };
		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct uraid_io io = { .op = URAID_IO_READ, .flags = bad[i], .length = 4096,
					       .buf = buf, .done = flag_done };
			CHECK(uraid_array_submit(a, 0, &io) == -EINVAL,
			      "submit with flags 0x%x was not refused", bad[i]);
		}
		uraid_array_close(a);
	} else {
		CHECK(0, "memory members: assemble: %s", err);
	}
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = 4,
					  .read_ahead_bytes = URAID_READ_AHEAD_DEFAULT };
	if (uraid_array_assemble(e, &ao, &a, err, sizeof(err)) == 0) {
		for (uint64_t off = 0; off < (2u << 20); off += 64u << 10) {
			for (unsigned i = 0; i < (64u << 10) / 8; i++)
				((uint64_t *)want)[i] = (off + 8 * i) ^ seed;
			CHECK(uraid_array_pwrite(a, want, 64u << 10, off, 0) == 0, "write");
		}
		for (uint64_t off = 0; off < (2u << 20); off += 64u << 10) {
			for (unsigned i = 0; i < (64u << 10) / 8; i++)
				((uint64_t *)want)[i] = (off + 8 * i) ^ seed;
			CHECK(uraid_array_pread(a, buf, 64u << 10, off) == 0 &&
			      memcmp(buf, want, 64u << 10) == 0, "memory members: read at %" PRIu64, off);
		}
		ra_stat(a, &ra);
		CHECK(ra.members_in_memory && ra.streams == 0 && ra.prefetched_bytes == 0,
		      "memory members: in memory %d, %u streams, %" PRIu64 " bytes read ahead",
		      ra.members_in_memory, ra.streams, ra.prefetched_bytes);
		uraid_array_close(a);
	} else {
		CHECK(0, "memory members: assemble: %s", err);
	}
	for (unsigned i = 0; i < 4; i++)
		unlink(paths[i]);
	rmdir(dir);
	free(buf);
	free(want);
	printf("%s memory members\n", failures ? "FAIL" : "ok  ");
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;
	struct uraid_engine_opts eo = { .reactors = NREACT, .flags = URAID_ENGINE_THREADS };
	struct uraid_engine *e;

	printf("test_readahead: seed %" PRIu64 " (rerun: %s %" PRIu64 "), %u reactors\n", seed,
	       argv[0], seed, NREACT);
	if (uraid_engine_create(&eo, &e)) {
		printf("engine: cannot create\n");
		return 1;
	}
	memory_members(e, seed);
	run_level(e, "/dev/shm", "5", 4, 64, -1, seed);
	run_level(e, "/dev/shm", "5", 4, 32, 2, seed + 100);
	run_level(e, "/dev/shm", "1", 2, 0, -1, seed + 200);
	run_level(e, "/dev/shm", "0", 3, 16, -1, seed + 300);
	run_level(e, "/dev/shm", "10", 4, 32, -1, seed + 400);
	run_level(e, "/tmp", "5", 4, 64, -1, seed + 500);
	uraid_engine_destroy(e);
	printf("%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
