// SPDX-License-Identifier: MIT
/*
 * The last step of a reshape (jobs/reshape.c) holds only its own rows while
 * they move, as every other step does; the array is frozen only for the
 * switch to the new geometry once all is moved. In-process with the
 * engine's threads, members in /dev/shm, on a RAID 10 near=2 4 -> 5 (the
 * last 4 MiB unit lies past the old size), a RAID 10 chunk change forwards
 * (the last unit inside the exported range), the same backwards (room after
 * the data: the last unit is at sector 0) and a RAID 5 3 -> 4 (rows of
 * parity):
 *
 * 1. The array is filled with a seeded pattern (shadow copy).
 * 2. When the job has moved the first piece of its last step (a test hook
 *    called with the step's rows still held), a 64 KiB write outside that
 *    step is submitted and must complete while the hook still runs (with a
 *    freeze of the whole array it stays parked until the step ends: the
 *    wait then fails after a generous deadline); a write inside the step
 *    (when the step lies inside the exported range) must not have completed
 *    by then, and completes after the step. Meanwhile the status says the
 *    reshape is running and the superblock on disk still has the reshape
 *    bit (0x4).
 * 3. At the end: the new geometry, no reshape bits on disk, every byte equal
 *    to the shadow (both writes included), a check finds 0 mismatches, and
 *    the array assembled again reads the same.
 *
 * No timing is asserted (waits are for states, with a generous deadline).
 * The seed is printed.
 *
 *   test_reshape_last [seed]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/create.h>
#include <uraid/engine.h>

#include "engine/core/array.h"
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 5
#define MEMBER_MIB 12u
#define DEADLINE_S 60
#define BLOCK (64u * 1024)

struct config {
	const char *name, *level, *layout;
	unsigned n, new_n, chunk_kib, new_chunk_kib;
	unsigned size_kib;      /* per member (0: all): room after the data -> backwards */
};

static const struct config configs[] = {
	{ "raid10 n2 4->5", "raid10", "n2", 4, 5, 64, 64, 0 },
	{ "raid10 n2 chunk 64K->32K", "raid10", "n2", 4, 4, 64, 32, 0 },
	{ "raid10 n2 chunk 64K->32K backwards", "raid10", "n2", 4, 4, 64, 32, 8192 },
	{ "raid5 3->4", "raid5", NULL, 3, 4, 64, 64, 0 },
};

struct t {
	const struct config *c;
	uint64_t seed;
	char dir[64];
	char paths[MAXM][96];
	const char *p[MAXM];
	unsigned np, nfiles;
	struct uraid_engine *e;
	struct uraid_array *ua;
	uint8_t *shadow;
	uint64_t size;
	/* what the hook did */
	unsigned last_calls;
	bool tried;
	bool out_done_in_hook, in_done_in_hook, in_tried;
	bool running_in_hook, sb_reshaping_in_hook;
	struct op out, in;
	uint64_t lo, hi;
};

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int disk_sb(const char *path, struct uraid_sb *out)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	int fd = open(path, O_RDONLY);
	int rc = -1;

	if (p && fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0) {
		*out = p->loc[p->chosen].sb;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

static int assemble(struct t *t)
{
	char err[256];
	struct uraid_assemble_opts ao = { .paths = t->p, .npaths = t->np, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t->e, &ao, &t->ua, err, sizeof(err))) {
		fprintf(stderr, "%s: assemble: %s\n", t->c->name, err);
		t->ua = NULL;
		return -1;
	}
	return 0;
}

static int setup(struct t *t)
{
	const struct config *c = t->c;
	char err[256];

	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-reshape-last.%d", getpid());
	mkdir(t->dir, 0700);
	t->nfiles = c->new_n > c->n ? c->new_n : c->n;
	t->np = c->n;
	for (unsigned i = 0; i < t->nfiles; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		t->p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], MEMBER_MIB * MIB))
			return -1;
	}
	struct uraid_create_opts o = {
		.raid_disks = c->n, .chunk_kib = c->chunk_kib, .minor = 2,
		.bitmap = URAID_BITMAP_NONE, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = t->p, .npaths = c->n, .homehost = "<none>", .size_kib = c->size_kib,
	};
	if (uraid_level_parse(c->level, &o.level))
		return -1;
	if (c->layout) {
		if (uraid_layout_parse(o.level, c->layout, &o.layout))
			return -1;
		o.layout_given = true;
	}
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", c->name, err);
		return -1;
	}
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (uraid_engine_create(&eo, &t->e) || assemble(t))
		return -1;
	t->size = uraid_array_size(t->ua);
	t->shadow = aligned_alloc(4096, t->size);
	if (!t->shadow)
		return -1;
	rng_fill(&t->seed, t->shadow, t->size);
	if (uraid_array_pwrite(t->ua, t->shadow, t->size, 0, 0))
		return -1;
	for (unsigned i = t->np; i < t->nfiles; i++)
		if (uraid_array_add_member(t->ua, t->paths[i], 0, err, sizeof(err))) {
			fprintf(stderr, "%s: add: %s\n", c->name, err);
			return -1;
		}
	t->np = t->nfiles;
	return 0;
}

static void teardown(struct t *t)
{
	if (t->ua)
		CHECK(uraid_array_close(t->ua) == 0, "%s: close", t->c->name);
	t->ua = NULL;
	if (t->e)
		uraid_engine_destroy(t->e);
	t->e = NULL;
	for (unsigned i = 0; i < t->nfiles; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
	free(t->shadow);
	free(t->out.buf);
	free(t->in.buf);
	t->shadow = t->out.buf = t->in.buf = NULL;
}

static void submit_write(struct t *t, struct op *o, uint64_t off, unsigned reactor)
{
	o->buf = aligned_alloc(4096, BLOCK);
	rng_fill(&t->seed, o->buf, BLOCK);
	o->io = (struct uraid_io){ .op = URAID_IO_WRITE, .offset = off, .length = BLOCK,
				   .buf = o->buf, .done = op_done, .ctx = o };
	CHECK(uraid_array_submit(t->ua, reactor, &o->io) == 0, "%s: submit at %" PRIu64,
	      t->c->name, off);
}

static bool wait_done(struct op *o)
{
	time_t until = time(NULL) + DEADLINE_S;
	while (!__atomic_load_n(&o->done, __ATOMIC_ACQUIRE) && time(NULL) < until)
		pause_ms(1);
	return __atomic_load_n(&o->done, __ATOMIC_ACQUIRE);
}

/* On the job's thread, the step [lo, hi) held, its piece up to pos moved. */
static void hook(void *arg, uint64_t lo, uint64_t hi, uint64_t pos, bool last)
{
	struct t *t = arg;
	(void)pos;

	if (!last)
		return;
	t->last_calls++;
	if (t->tried)
		return;
	t->tried = true;
	t->lo = lo;
	t->hi = hi;
	struct uraid_sync_status st;
	uraid_array_sync_status(t->ua, &st);
	t->running_in_hook = st.running && st.kind == URAID_SYNC_RESHAPE;
	struct uraid_sb sb;
	t->sb_reshaping_in_hook = disk_sb(t->paths[0], &sb) == 0 && (sb.feature_map & 0x4);
	/* outside the step: at 0, or at the exported end when the step is low */
	uint64_t lob = lo * 512, hib = hi * 512;
	uint64_t out = lob >= BLOCK ? 0 : (t->size - BLOCK) / BLOCK * BLOCK;
	CHECK(out + BLOCK <= lob || out >= hib, "%s: the outside write %" PRIu64 " lies in the "
	      "step [%" PRIu64 ", %" PRIu64 ")", t->c->name, out, lob, hib);
	submit_write(t, &t->out, out, 0);
	/* inside: the step's first block, when clients can reach it */
	if (lob + BLOCK <= t->size && lob + BLOCK <= hib) {
		t->in_tried = true;
		submit_write(t, &t->in, lob, 1);
	}
	t->out_done_in_hook = wait_done(&t->out);
	if (t->in_tried) {
		pause_ms(50);   /* it has had time to pass, if anything lets it */
		t->in_done_in_hook = __atomic_load_n(&t->in.done, __ATOMIC_ACQUIRE);
	}
}

static void wait_job(struct t *t, struct uraid_sync_status *st)
{
	time_t until = time(NULL) + 180;
	do {
		pause_ms(10);
		uraid_array_sync_status(t->ua, st);
	} while ((st->running || st->kind == URAID_SYNC_NONE) && time(NULL) < until);
}

static void verify(struct t *t, const char *when)
{
	uint8_t *back = aligned_alloc(4096, t->size);
	CHECK(back && uraid_array_pread(t->ua, back, t->size, 0) == 0, "%s: %s: read",
	      t->c->name, when);
	if (back && memcmp(back, t->shadow, t->size)) {
		uint64_t at = 0;
		while (at < t->size && back[at] == t->shadow[at])
			at++;
		CHECK(0, "%s: %s: data differs from byte %" PRIu64, t->c->name, when, at);
	}
	free(back);
}

static void run(uint64_t seed, const struct config *c)
{
	struct t t = { .c = c, .seed = seed };
	char err[256];
	struct uraid_sync_status st;
	struct uraid_array_status as;

	printf("%s (seed %" PRIu64 ")\n", c->name, seed);
	fflush(stdout);
	if (setup(&t)) {
		CHECK(0, "%s: setup", c->name);
		teardown(&t);
		return;
	}
	struct array *a = (struct array *)t.ua;
	a->reshape_piece_hook = hook;
	a->reshape_piece_hook_arg = &t;
	uraid_array_status(t.ua, &as);
	struct uraid_reshape r = { .new_raid_disks = c->new_n, .new_chunk_sectors = c->new_chunk_kib * 2,
				   .new_layout = as.layout };
	uraid_level_parse(c->level, &r.new_level);
	int rc = uraid_array_reshape_start(t.ua, &r, err, sizeof(err));
	CHECK(rc == 0, "%s: reshape start: %s", c->name, err);
	if (rc == 0)
		wait_job(&t, &st);
	a = (struct array *)t.ua;
	a->reshape_piece_hook = NULL;
	CHECK(rc || (st.kind == URAID_SYNC_RESHAPE && !st.running && st.result == 0),
	      "%s: the reshape ended with kind %d running %d result %d", c->name, st.kind,
	      st.running, st.result);
	printf("  last step [%" PRIu64 ", %" PRIu64 ") sectors, %u piece(s); outside write done "
	       "while it was held: %s; inside write %s\n", t.lo, t.hi, t.last_calls,
	       t.out_done_in_hook ? "yes" : "NO",
	       !t.in_tried ? "not tried (past the exported size)"
			   : t.in_done_in_hook ? "done while held (WRONG)" : "waited");
	CHECK(t.tried, "%s: the hook never saw the last step", c->name);
	CHECK(t.running_in_hook && t.sb_reshaping_in_hook, "%s: during the last step: running %d, "
	      "reshape bit on disk %d", c->name, t.running_in_hook, t.sb_reshaping_in_hook);
	CHECK(t.out_done_in_hook && t.out.result == 0, "%s: a write outside the last step did not "
	      "complete while the step moved (result %d): the array was frozen", c->name,
	      t.out.result);
	CHECK(!t.in_tried || !t.in_done_in_hook, "%s: a write inside the last step completed while "
	      "its rows moved", c->name);
	if (t.tried) {
		memcpy(t.shadow + t.out.io.offset, t.out.buf, BLOCK);
		if (t.in_tried) {
			CHECK(wait_done(&t.in) && t.in.result == 0, "%s: the write inside the step: "
			      "done %d result %d", c->name, t.in.done, t.in.result);
			memcpy(t.shadow + t.in.io.offset, t.in.buf, BLOCK);
		}
	}
	uraid_array_status(t.ua, &as);
	CHECK(as.raid_disks == c->new_n && as.chunk_bytes == c->new_chunk_kib * 1024u,
	      "%s: after: %u members, chunk %u", c->name, as.raid_disks, as.chunk_bytes);
	verify(&t, "after the reshape");
	CHECK(uraid_array_sync_start(t.ua, URAID_SYNC_CHECK, err, sizeof(err)) == 0, "%s: check: %s",
	      c->name, err);
	wait_job(&t, &st);
	CHECK(st.kind == URAID_SYNC_CHECK && st.result == 0 && st.mismatch_sectors == 0,
	      "%s: check: result %d, %" PRIu64 " mismatched sectors", c->name, st.result,
	      st.mismatch_sectors);
	printf("  check: %" PRIu64 " mismatched sectors\n", st.mismatch_sectors);
	CHECK(uraid_array_close(t.ua) == 0, "%s: close", c->name);
	t.ua = NULL;
	struct uraid_sb sb;
	CHECK(disk_sb(t.paths[0], &sb) == 0 && !(sb.feature_map & 0x64) &&
	      sb.raid_disks == c->new_n && sb.chunksize == c->new_chunk_kib * 2,
	      "%s: superblock after: feature_map 0x%x raid_disks %u chunk %u", c->name,
	      sb.feature_map, sb.raid_disks, sb.chunksize);
	if (assemble(&t) == 0)
		verify(&t, "assembled again");
	teardown(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_reshape_last seed %" PRIu64 "\n", seed);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		run(seed + i, &configs[i]);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
