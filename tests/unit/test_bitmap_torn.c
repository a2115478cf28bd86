// SPDX-License-Identifier: MIT
/*
 * A crash inside one member's multi-page bitmap write. RAID 5 of 4 with an
 * internal bitmap of 4 KiB chunks over 504 MiB per member: 129024 bits, 4
 * pages (the header's page and three more). In a child process:
 *
 *  - region A: four 4 KiB writes whose bits lie in pages 0, 1, 2 and 3
 *    (their bits reach every member's bitmap before the data is written),
 *    then a thread rewrites A with the same bytes over and over (writes in
 *    flight at the crash);
 *  - the member in slot T gets URAID_FAULT_TORN_KILL, and one write W
 *    whose bits straddle pages 1 and 2 is issued: its bitmap write of 2
 *    pages reaches members 0.. T-1 whole and member T torn (page 1 new,
 *    page 2 old), then the process is killed.
 *
 * Then (T = 0, the member whose bitmap assembly reads, and T = 2): on disk,
 * every member's bitmap holds A's bits; the members before T hold W's, T
 * only the first page's half, the ones after none. The parity of A's rows
 * and of a row never written (the control) is overwritten with junk, as a
 * write torn between data and parity would leave it. Assembled: the
 * resync the bitmap asks for runs, A reads back as written, W's range is
 * untouched (zeros: its data waited for its bits), and a check finds
 * mismatches in the control row only: every region written in flight was
 * resynced.
 *
 *   test_bitmap_torn [seed]   (the seed picks the junk)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/bitmap.h>
#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define N 4
#define MEMBER_MIB 520u
#define USED_MIB 504u
#define CHUNK 128u              /* sectors (64 KiB) */
#define ROW (CHUNK * (N - 1))   /* array sectors per row */
#define BITMAP_BYTES 16384u
#define DEADLINE_S 120

/* Bits of region A (rows multiple of 4: parity on slot 3, left-symmetric)
 * in pages 0..3 (page 0: bits 0-30719, then 32768 a page); the control. */
static const uint64_t a_bits[] = { 128, 31040, 70016, 100032 };
#define CONTROL_BIT 128000u
/* W: from row 3967 chunk 0 sector 120 to row 3968 chunk 0 sector 8: member
 * rows 3967-3968, bits 63472-63503, across the page 1 / page 2 boundary
 * (bit 63488). */
#define W_SECTOR (3967ull * ROW + 120)
#define W_SECTORS 272u
#define W_FIRST_BIT 63472u
#define W_END_BIT 63504u
#define PAGE2_BIT 63488u

struct t {
	uint64_t seed;
	char dir[64];
	char paths[N][96];
	const char *p[N];
	char name[80];
};

static uint64_t sector_of_bit(uint64_t b)
{
	/* bit b: member sectors [8b, 8b + 8): row 8b / CHUNK, chunk 0 */
	return b * 8 / CHUNK * ROW + b * 8 % CHUNK;
}

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int sb_of(struct t *t, unsigned i, struct uraid_sb *sb)
{
	struct uraid_probe *pr = malloc(sizeof(*pr));
	int fd = open(t->paths[i], O_RDONLY), rc = -1;
	if (pr && fd >= 0 && uraid_probe_fd(fd, pr) == 0 && pr->chosen >= 0) {
		*sb = pr->loc[pr->chosen].sb;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(pr);
	return rc;
}

static int setup(struct t *t)
{
	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-bitmap-torn.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		t->p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], (uint64_t)MEMBER_MIB * MIB))
			return -1;
	}
	struct uraid_create_opts o = {
		.level = URAID_LEVEL_5, .raid_disks = N, .chunk_kib = CHUNK / 2, .minor = 2,
		.bitmap = URAID_BITMAP_INTERNAL,
		.flags = URAID_CREATE_ASSUME_CLEAN, .paths = t->p, .npaths = N,
		.homehost = "<none>", .size_kib = (uint64_t)USED_MIB * 1024,
	};
	char err[256];
	o.bitmap_chunk_kib = 32;        /* what fits the 4 KiB uraid (as mdadm) reserves */
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", t->name, err);
		return -1;
	}
	/* then 4 KiB chunks, as a bitmap given more room would have (1 MiB lies
	   between it and the data): 4 pages of bits, the area zeroed */
	for (unsigned i = 0; i < N; i++) {
		struct uraid_sb sb;
		struct uraid_bitmap_sb bm;
		uint8_t *area = calloc(1, BITMAP_BYTES);
		int fd = open(t->paths[i], O_RDWR);
		off_t at = 0;
		int rc = -1;
		if (area && fd >= 0 && sb_of(t, i, &sb) == 0 &&
		    sb.data_offset * 512 >= (uint64_t)((int64_t)sb.super_offset + sb.bitmap_offset) * 512 +
		    BITMAP_BYTES) {
			at = (off_t)(((int64_t)sb.super_offset + sb.bitmap_offset) * 512);
			if (pread(fd, area, 256, at) == 256 && uraid_bitmap_decode(area, &bm) == 0) {
				bm.chunksize = 4096;
				memset(area, 0, BITMAP_BYTES);
				uraid_bitmap_encode(&bm, area);
				rc = pwrite(fd, area, BITMAP_BYTES, at) == (ssize_t)BITMAP_BYTES ? 0 : -1;
				/* the bad-block log mdadm puts after the 4 KiB goes (none) */
				alignas(4096) uint8_t sbuf[URAID_SB_BYTES];
				sb.bblog_offset = 0;
				sb.bblog_size = 0;
				sb.bblog_shift = 0;
				uraid_sb_encode(&sb, sbuf);
				if (!rc && pwrite(fd, sbuf, sizeof(sbuf), (off_t)(sb.super_offset * 512)) !=
				    (ssize_t)sizeof(sbuf))
					rc = -1;
			}
		}
		if (fd >= 0)
			close(fd);
		free(area);
		if (rc) {
			fprintf(stderr, "%s: member %u: bitmap of 4 KiB chunks not written\n",
				t->name, i);
			return -1;
		}
	}
	return 0;
}

static void teardown(struct t *t)
{
	for (unsigned i = 0; i < N; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
}

/* Member i's bitmap area (header and bits) as on disk. */
static int bitmap_of(struct t *t, unsigned i, uint8_t *area)
{
	struct uraid_sb sb;
	int fd = open(t->paths[i], O_RDONLY);
	int rc = fd >= 0 && sb_of(t, i, &sb) == 0 &&
		 pread(fd, area, BITMAP_BYTES,
		       (off_t)(((int64_t)sb.super_offset + sb.bitmap_offset) * 512)) ==
		 (ssize_t)BITMAP_BYTES ? 0 : -1;
	if (fd >= 0)
		close(fd);
	return rc;
}

struct child {
	struct uraid_array *a;
	_Atomic bool stop;
	uint8_t *pat;
};

static void *rewrite_a(void *arg)
{
	struct child *c = arg;
	while (!atomic_load(&c->stop))
		for (size_t k = 0; k < sizeof(a_bits) / sizeof(a_bits[0]); k++)
			uraid_array_pwrite(c->a, c->pat, 4096, sector_of_bit(a_bits[k]) * 512, 0);
	return NULL;
}

/* The child: A, the writes in flight, the torn bitmap write of W. */
static void child(struct t *t, unsigned torn)
{
	struct uraid_engine *e;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = t->p, .npaths = N };
	struct child c = { 0 };
	char err[256];

	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &c.a, err, sizeof(err)))
		_exit(2);
	c.pat = aligned_alloc(4096, W_SECTORS * 512);
	memset(c.pat, 'A', 4096);
	for (size_t k = 0; k < sizeof(a_bits) / sizeof(a_bits[0]); k++)
		if (uraid_array_pwrite(c.a, c.pat, 4096, sector_of_bit(a_bits[k]) * 512, 0))
			_exit(3);
	pthread_t w;
	pthread_create(&w, NULL, rewrite_a, &c);
	pause_ms(20);
	struct uraid_fault f = { .kind = URAID_FAULT_TORN_KILL };
	if (uraid_array_inject(c.a, torn, &f))
		_exit(4);
	uint8_t *wbuf = aligned_alloc(4096, W_SECTORS * 512);
	memset(wbuf, 'W', W_SECTORS * 512);
	uraid_array_pwrite(c.a, wbuf, W_SECTORS * 512, W_SECTOR * 512, 0);
	_exit(5);               /* not reached: the torn write kills */
}

static void run(uint64_t seed, unsigned torn)
{
	struct t t = { .seed = seed };
	snprintf(t.name, sizeof(t.name), "torn bitmap write on slot %u", torn);
	if (setup(&t)) {
		CHECK(0, "%s: setup", t.name);
		teardown(&t);
		return;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		child(&t, torn);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: the child ended by %s %d (want "
	      "killed inside the bitmap write)", t.name, WIFSIGNALED(st) ? "signal" : "exit",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));

	/* the bitmaps on disk: the tear as described */
	uint8_t *area = malloc(BITMAP_BYTES);
	for (unsigned i = 0; i < N; i++) {
		CHECK(bitmap_of(&t, i, area) == 0, "%s: bitmap of member %u", t.name, i);
		for (size_t k = 0; k < sizeof(a_bits) / sizeof(a_bits[0]); k++)
			CHECK(uraid_bitmap_test(area, a_bits[k]), "%s: member %u: bit %" PRIu64
			      " of region A (written before the crash) is clear", t.name, i,
			      a_bits[k]);
		unsigned w1 = 0, w2 = 0;
		for (uint64_t b = W_FIRST_BIT; b < W_END_BIT; b++)
			*(b < PAGE2_BIT ? &w1 : &w2) += uraid_bitmap_test(area, b);
		unsigned want1 = i <= torn ? PAGE2_BIT - W_FIRST_BIT : 0;
		unsigned want2 = i < torn ? W_END_BIT - PAGE2_BIT : 0;
		printf("%s: member %u: W's bits set: %u in page 1, %u in page 2\n", t.name, i, w1,
		       w2);
		CHECK(w1 == want1 && w2 == want2, "%s: member %u: W's bits %u + %u (want %u + %u)",
		      t.name, i, w1, w2, want1, want2);
		CHECK(!uraid_bitmap_test(area, CONTROL_BIT), "%s: member %u: the control bit is set",
		      t.name, i);
	}
	free(area);

	/* junk in the parity (slot 3) of A's rows and of the control row */
	struct uraid_sb sb3;
	int fd = open(t.paths[3], O_WRONLY);
	CHECK(fd >= 0 && sb_of(&t, 3, &sb3) == 0, "%s: member 3", t.name);
	uint8_t junk[4096];
	uint64_t s = seed;
	rng_fill(&s, junk, sizeof(junk));
	uint64_t spoil[sizeof(a_bits) / sizeof(a_bits[0]) + 1];
	memcpy(spoil, a_bits, sizeof(a_bits));
	spoil[sizeof(a_bits) / sizeof(a_bits[0])] = CONTROL_BIT;
	for (size_t k = 0; fd >= 0 && k < sizeof(spoil) / sizeof(spoil[0]); k++)
		CHECK(pwrite(fd, junk, sizeof(junk), (off_t)((sb3.data_offset + spoil[k] * 8) * 512)) ==
		      (ssize_t)sizeof(junk), "%s: junk", t.name);
	if (fd >= 0)
		close(fd);

	/* assembled: the bitmap's resync, then the data and a check */
	struct uraid_engine *e = NULL;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = t.p, .npaths = N };
	struct uraid_array *a = NULL;
	char err[300];
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &a, err, sizeof(err))) {
		CHECK(0, "%s: assemble: %s", t.name, err);
		if (e)
			uraid_engine_destroy(e);
		teardown(&t);
		return;
	}
	struct uraid_array_status as;
	uraid_array_status(a, &as);
	/* A's four bits, W's of the member read (slot 0), and the rewrites' */
	printf("%s: assembled: %" PRIu64 " of %" PRIu64 " bits set\n", t.name,
	       as.bitmap_dirty_bits, as.bitmap_bits);
	CHECK(as.bitmap_dirty_bits >= 4 && as.bitmap_dirty_bits <= 4 + 32,
	      "%s: %" PRIu64 " bits set at assembly (want A's 4 and at most W's 32)", t.name,
	      as.bitmap_dirty_bits);
	struct uraid_sync_status ss;
	time_t until = time(NULL) + DEADLINE_S;
	do {
		pause_ms(10);
		uraid_array_sync_status(a, &ss);
	} while ((ss.running || ss.kind == URAID_SYNC_NONE) && time(NULL) < until);
	CHECK(ss.kind == URAID_SYNC_RESYNC && ss.result == 0, "%s: the resync after the crash: "
	      "kind %d result %d", t.name, ss.kind, ss.result);
	uint8_t *back = aligned_alloc(4096, W_SECTORS * 512);
	for (size_t k = 0; k < sizeof(a_bits) / sizeof(a_bits[0]); k++) {
		bool ok = uraid_array_pread(a, back, 4096, sector_of_bit(a_bits[k]) * 512) == 0;
		for (unsigned j = 0; ok && j < 4096; j++)
			ok = back[j] == 'A';
		CHECK(ok, "%s: region A at bit %" PRIu64 " does not read back as written", t.name,
		      a_bits[k]);
	}
	bool zero = uraid_array_pread(a, back, W_SECTORS * 512, W_SECTOR * 512) == 0;
	for (unsigned j = 0; zero && j < W_SECTORS * 512; j++)
		zero = back[j] == 0;
	CHECK(zero, "%s: W's range was written though its bits never reached every member",
	      t.name);
	free(back);
	CHECK(uraid_array_sync_start(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0, "%s: check: %s",
	      t.name, err);
	do {
		pause_ms(10);
		uraid_array_sync_status(a, &ss);
	} while ((ss.running || ss.kind != URAID_SYNC_CHECK) && time(NULL) < until);
	printf("%s: check: %" PRIu64 " mismatched sectors (the control row's junk: 8)\n", t.name,
	       ss.mismatch_sectors);
	CHECK(ss.kind == URAID_SYNC_CHECK && ss.result == 0 && ss.mismatch_sectors == 8,
	      "%s: check: result %d, %" PRIu64 " mismatched sectors (want the control's 8 only: "
	      "more means a region written in flight was not resynced)", t.name, ss.result,
	      ss.mismatch_sectors);
	CHECK(uraid_array_close(a) == 0, "%s: close", t.name);
	uraid_engine_destroy(e);
	teardown(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_bitmap_torn seed %" PRIu64 "\n", seed);
	run(seed, 0);
	run(seed + 1, 2);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
