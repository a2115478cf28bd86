// SPDX-License-Identifier: MIT
/*
 * RAID 4/5/6 reshapes (jobs/reshape.c), in-process with the engine's
 * threads, members in /dev/shm:
 *
 * 1. Each restripe (RAID 5 3 -> 4 and 4 -> 5 members, RAID 6 4 -> 5, chunk
 *    64 -> 32 KiB and 32 -> 128 KiB, 4 -> 5 with 128 -> 64 KiB at once, layout left-symmetric ->
 *    right-asymmetric, RAID 4 3 -> 4 without its parity member, the new
 *    parity slot staying missing as mdadm's RAID 0 grow needs, RAID 5
 *    parity-last -> left-symmetric without its parity member as md's
 *    RAID 0 -> 5 does; and with room after the data, backwards as mdadm
 *    picks it for the same count: RAID 5 chunk 512 -> 64 KiB and 64 -> 128
 *    KiB, RAID 6 layout change; fewer members, RAID 5 5 -> 4 and RAID 6
 *    6 -> 5 with 64 -> 32 KiB, refused until the exported size is reduced,
 *    the members that go away spares at the end, with the new data
 *    offset as md's) on an array filled with a seeded pattern, while a
 *    writer writes and reads random ranges against a shadow copy: at the
 *    end every byte equals the shadow, the size is the new one, a check
 *    finds no mismatch, the superblocks carry the new geometry and no
 *    reshape bits, and the array assembles again with the same bytes.
 * 2. A kill -9 in the middle: a child process runs a reshape and is
 *    killed at a random moment (up to 20 ms) after the superblocks show it
 *    part-way, often inside a step (forwards and backwards); the
 *    checkpoints are then moved back by one new row (up, backwards),
 *    inside an old row, as md may leave them; before the job takes a
 *    step (an engine without threads), 128 KiB are written across that
 *    position and read back (md's position cuts an old row backwards: a
 *    piece below it must end at it); assembly goes on from there by
 *    itself, and the data is whole at the end.
 * 3. Holes asked during a reshape are answered in the geometry of each
 *    side of the position (data written near the end is data).
 * 4. A member vanishing mid-reshape is failed, and the reshape finishes
 *    degraded with the data whole: RAID 5 4 -> 5 (rebuilt by P), and two
 *    of a RAID 6 4 -> 5 (rows missing a data chunk and P read through Q).
 * 5. A reshape found at its end at assembly is finished (forwards at the
 *    end, and backwards at 0).
 * 6. Refusals: no spare for a new slot, nothing to change, a level change
 *    by restripe (RAID 5 -> 6: md takes the level over first), fewer
 *    members (the array would shrink).
 * 7. RAID 10 (near and offset layouts, forwards as mdadm's grows go):
 *    near=2 4 -> 6 and 4 -> 5 members, offset=2 4 -> 5, chunk 64 -> 32 KiB,
 *    layout n2 -> o2, under the same writer, checked the same way (1.), the
 *    new data offset down by mdadm's least move (one chunk; two for o2);
 *    a kill -9 in the middle of near=2 4 -> 6, of offset=2 4 -> 5 and of the
 *    chunk change (2., without moving the checkpoint back: RAID 10's pieces
 *    may write over the old data just below it, as md's do); refusals: a
 *    far layout (mdadm's words), to a far layout, a change of the number
 *    of copies, fewer members while the data does not fit.
 * 8. RAID 10 backwards (md's, the data offset up by mdadm's least move):
 *    near=2 6 -> 4 with room after the data, 5 -> 4 without (the used size
 *    one least move smaller first, as mdadm), offset=2 5 -> 4, near=3
 *    5 -> 3 with 32 -> 64 KiB, and chunk 64 -> 32 KiB at the same count
 *    with the larger room after the data (mdadm's choice, feature 0x20),
 *    each run (1.) and killed mid-way (2.).
 *
 * The seed is printed; no timing is asserted (waits are for states, with a
 * generous deadline).
 *
 *   test_reshape [seed [name-part]]   (the second: only those configurations)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/create.h>
#include <uraid/engine.h>

#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 6
#define MEMBER_MIB 12u
#define DEADLINE_S 180
#define IO_MAX (96u * 1024)

struct config {
	const char *name;
	const char *level;
	const char *layout, *new_layout;        /* NULL: the default, or unchanged */
	unsigned n, new_n;
	unsigned chunk_kib, new_chunk_kib;
	bool parity_missing;            /* created without its parity member (mdadm's RAID 0 grow) */
	unsigned size_kib;              /* per member (0: all): room after the data, so that a
					   same-count restripe goes backwards as mdadm's would */
	bool backwards;                 /* the direction expected */
};

static const struct config configs[] = {
	{ "raid5 3->4", "raid5", NULL, NULL, 3, 4, 64, 64, false, 0, false },
	{ "raid5 4->5", "raid5", NULL, NULL, 4, 5, 64, 64, false, 0, false },
	{ "raid6 4->5", "raid6", NULL, NULL, 4, 5, 64, 64, false, 0, false },
	{ "raid5 chunk 64K->32K", "raid5", NULL, NULL, 4, 4, 64, 32, false, 0, false },
	/* a count and a chunk at once: the step must be a position md takes */
	{ "raid5 4->5 chunk 128K->64K", "raid5", NULL, NULL, 4, 5, 128, 64, false, 0, false },
	{ "raid5 chunk 32K->128K", "raid5", NULL, NULL, 4, 4, 32, 128, false, 0, false },
	{ "raid5 left-symmetric->right-asymmetric", "raid5", "left-symmetric",
	  "right-asymmetric", 4, 4, 64, 64, false, 0, false },
	{ "raid4 3->4, parity member missing", "raid4", NULL, NULL, 3, 4, 64, 64, true, 0, false },
	{ "raid5 parity-last->left-symmetric, parity member missing", "raid5", "parity-last",
	  "left-symmetric", 3, 3, 64, 64, true, 0, false },
	/* room after the data: md's chunk 512K -> 64K goes backwards */
	{ "raid5 chunk 512K->64K backwards", "raid5", NULL, NULL, 4, 4, 512, 64, false, 8192, true },
	{ "raid5 chunk 64K->128K backwards", "raid5", NULL, NULL, 3, 3, 64, 128, false, 8192, true },
	{ "raid6 left-symmetric->right-asymmetric backwards", "raid6", "left-symmetric",
	  "right-asymmetric", 5, 5, 64, 64, false, 8192, true },
	/* fewer members: always backwards, the exported size reduced first */
	{ "raid5 5->4 backwards", "raid5", NULL, NULL, 5, 4, 64, 64, false, 8192, true },
	{ "raid6 6->5 chunk 64K->32K backwards", "raid6", NULL, NULL, 6, 5, 64, 32, false, 8192,
	  true },
	/* RAID 10: forwards, the data offset down (mdadm's least move) */
	{ "raid10 n2 4->6", "raid10", "n2", NULL, 4, 6, 64, 64, false, 0, false },
	{ "raid10 n2 4->5", "raid10", "n2", NULL, 4, 5, 64, 64, false, 0, false },
	{ "raid10 o2 4->5", "raid10", "o2", NULL, 4, 5, 64, 64, false, 0, false },
	{ "raid10 n2 chunk 64K->32K", "raid10", "n2", NULL, 4, 4, 64, 32, false, 0, false },
	{ "raid10 n2->o2", "raid10", "n2", "o2", 4, 4, 64, 64, false, 0, false },
	/* RAID 10 backwards, the data offset up: fewer members (room after
	   the data, or none: the used size one least move smaller first, as
	   mdadm), and the same count with the larger room after the data */
	{ "raid10 n2 6->4 backwards", "raid10", "n2", NULL, 6, 4, 64, 64, false, 8192, true },
	{ "raid10 n2 5->4 no room backwards", "raid10", "n2", NULL, 5, 4, 64, 64, false, 0, true },
	{ "raid10 o2 5->4 backwards", "raid10", "o2", NULL, 5, 4, 64, 64, false, 8192, true },
	{ "raid10 n2 chunk 64K->32K backwards", "raid10", "n2", NULL, 4, 4, 64, 32, false, 8192,
	  true },
	{ "raid10 n3 5->3 chunk 32K->64K backwards", "raid10", "n3", NULL, 5, 3, 32, 64, false, 8192,
	  true },
};

#define FIRST_RAID10 14         /* configs[] from here on are RAID 10 */

static bool is_raid10(const struct config *c)
{
	return !strcmp(c->level, "raid10");
}

/* The unit every size of the new geometry is a multiple of: a row of data
 * (RAID 4/5/6), a chunk (RAID 10). */
static uint64_t size_unit(const struct config *c)
{
	if (is_raid10(c))
		return (uint64_t)c->new_chunk_kib * 1024;
	uint64_t data_disks = c->new_n - (strcmp(c->level, "raid6") ? 1 : 2);
	return data_disks * c->new_chunk_kib * 1024;
}

struct t {
	uint64_t seed;
	const char *name;
	char dir[64];
	char paths[MAXM][96];
	const char *p[MAXM];
	unsigned np;            /* the members assembled (the spares once added) */
	unsigned nfiles;
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;          /* the bytes the shadow holds (the old size) */
	_Atomic bool stop;
	pthread_mutex_t shadow_lock;
};

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int engine_up(struct t *t)
{
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	return uraid_engine_create(&eo, &t->e);
}

static int assemble(struct t *t)
{
	char err[256];
	struct uraid_assemble_opts ao = { .paths = t->p, .npaths = t->np, .idle_clean_ms = 20 };
	if (uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err))) {
		fprintf(stderr, "%s: assemble: %s\n", t->name, err);
		t->a = NULL;
		return -1;
	}
	return 0;
}

/* As fixture_create_array, using size_kib of each member. */
static int create_sized(const char *who, const struct config *c, const char *const *paths)
{
	struct uraid_create_opts o = {
		.raid_disks = c->n, .chunk_kib = c->chunk_kib, .minor = 2,
		.bitmap = URAID_BITMAP_NONE, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = paths, .npaths = c->n, .homehost = "<none>", .size_kib = c->size_kib,
	};
	char err[256];

	if (uraid_level_parse(c->level, &o.level))
		return -1;
	if (c->layout) {
		if (uraid_layout_parse(o.level, c->layout, &o.layout))
			return -1;
		o.layout_given = true;
	}
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", who, err);
		return -1;
	}
	return 0;
}

/* n members created as the level, then the spares' files (not yet added). */
static int setup(struct t *t, const struct config *c)
{
	t->name = c->name;
	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-reshape.%d", getpid());
	mkdir(t->dir, 0700);
	t->nfiles = (c->new_n > c->n ? c->new_n : c->n) - c->parity_missing;
	t->np = c->n - c->parity_missing;
	for (unsigned i = 0; i < t->nfiles; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		t->p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], MEMBER_MIB * MIB))
			return -1;
	}
	const char *create[MAXM];
	memcpy(create, t->p, sizeof(create));
	if (c->parity_missing)
		create[c->n - 1] = "missing";
	if (c->size_kib)
		return create_sized(t->name, c, create);
	if (fixture_create_array(t->name, c->level, c->layout, c->n, c->chunk_kib, 2, create))
		return -1;
	return 0;
}

static void teardown(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
	if (t->e)
		uraid_engine_destroy(t->e);
	t->e = NULL;
	for (unsigned i = 0; i < t->nfiles; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
	free(t->shadow);
	t->shadow = NULL;
}

static int fill(struct t *t)
{
	t->size = uraid_array_size(t->a);
	t->shadow = aligned_alloc(4096, t->size);
	if (!t->shadow)
		return -1;
	rng_fill(&t->seed, t->shadow, t->size);
	return uraid_array_pwrite(t->a, t->shadow, t->size, 0, 0);
}

static void verify(struct t *t, const char *when)
{
	uint8_t *back = aligned_alloc(4096, t->size);
	CHECK(back && uraid_array_pread(t->a, back, t->size, 0) == 0, "%s: %s: read", t->name, when);
	if (back && memcmp(back, t->shadow, t->size)) {
		uint64_t at = 0;
		while (at < t->size && back[at] == t->shadow[at])
			at++;
		CHECK(0, "%s: %s: data differs from byte %" PRIu64, t->name, when, at);
	}
	free(back);
}

/* Random writes and reads over the old size, each read checked against the
 * shadow (one thread: what it wrote last is what it reads). */
static void *writer(void *arg)
{
	struct t *t = arg;
	uint64_t s = t->seed ^ 0x5eed;
	uint8_t *buf = aligned_alloc(4096, IO_MAX), *back = aligned_alloc(4096, IO_MAX);
	unsigned bad = 0;

	while (!atomic_load(&t->stop) && !bad) {
		uint64_t len = (rng_next(&s) % (IO_MAX / 4096) + 1) * 4096;
		uint64_t off = rng_next(&s) % ((t->size - len) / 4096) * 4096;
		if (rng_next(&s) % 3) {
			rng_fill(&s, buf, len);
			if (uraid_array_pwrite(t->a, buf, len, off, 0)) {
				bad++;
				break;
			}
			memcpy(t->shadow + off, buf, len);
		} else if (uraid_array_pread(t->a, back, len, off) ||
			   memcmp(back, t->shadow + off, len)) {
			CHECK(0, "%s: read of %" PRIu64 " bytes at %" PRIu64 " during the reshape "
			      "differs", t->name, len, off);
			bad++;
		}
	}
	CHECK(bad == 0, "%s: the writer met an error", t->name);
	free(buf);
	free(back);
	return NULL;
}

static void wait_job(struct t *t, struct uraid_sync_status *st)
{
	time_t until = time(NULL) + DEADLINE_S;
	do {
		pause_ms(10);
		uraid_array_sync_status(t->a, st);
	} while ((st->running || st->kind == URAID_SYNC_NONE) && time(NULL) < until);
}

/* md's rule for the direction: fewer members, or 0x20 at the same count
 * (md writes the bit only then). */
static bool sb_backwards(const struct uraid_sb *sb)
{
	return sb->delta_disks < 0 || (sb->delta_disks == 0 && (sb->feature_map & 0x20));
}

static int disk_sb_of(struct t *t, unsigned i, struct uraid_sb *out);

/* Member 0's superblock on disk. */
static int disk_sb(struct t *t, struct uraid_sb *out)
{
	return disk_sb_of(t, 0, out);
}

/* Member i's superblock on disk. */
static int disk_sb_of(struct t *t, unsigned i, struct uraid_sb *out)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	int fd = open(t->paths[i], O_RDONLY);
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

static struct uraid_reshape request_of(const struct config *c)
{
	struct uraid_reshape r = { .new_raid_disks = c->new_n, .new_chunk_sectors = c->new_chunk_kib * 2 };
	uraid_level_parse(c->level, &r.new_level);
	if (c->new_layout)
		uraid_layout_parse(r.new_level, c->new_layout, &r.new_layout);
	return r;
}

/* RAID 10: mdadm's least move of the data offset (min_offset_change): the
 * larger chunk, times 2 for o2. Sectors. */
static uint64_t least_move(const struct config *c)
{
	unsigned big = c->chunk_kib > c->new_chunk_kib ? c->chunk_kib : c->new_chunk_kib;
	return (uint64_t)big * 2 * (c->layout && !strcmp(c->layout, "o2") ? 2 : 1);
}

/* RAID 10: the array sectors of the layout of c (old or new) with dev
 * sectors used per member (md's calc_sectors, through the geometry). */
static uint64_t raid10_array(const struct config *c, bool new, uint64_t dev, uint64_t *used)
{
	struct uraid_geom *g = malloc(sizeof(*g));
	struct uraid_geom_params p = { .level = URAID_LEVEL_10,
				       .raid_disks = new ? c->new_n : c->n,
				       .chunk_sectors = (new ? c->new_chunk_kib : c->chunk_kib) * 2,
				       .dev_sectors = dev };
	const char *l = new && c->new_layout ? c->new_layout : c->layout;
	uint64_t n = 0;
	if (g && uraid_layout_parse(URAID_LEVEL_10, l, &p.layout) == 0 &&
	    uraid_geom_init(g, &p, NULL, 0) == 0) {
		n = g->array_sectors;
		if (used)
			*used = g->dev_sectors;
	}
	free(g);
	return n;
}

/* RAID 10 with fewer members: the size used per member once the reshape
 * starts, from member 0's superblock before it: one least move smaller
 * when there is no room after the data (size_kib 0), as mdadm makes it. */
static uint64_t raid10_used(struct t *t, const struct config *c)
{
	struct uraid_sb sb;
	uint64_t used = 0;
	if (disk_sb(t, &sb))
		return 0;
	if (c->size_kib || c->new_n >= c->n)
		return sb.size;
	raid10_array(c, false, (sb.size - least_move(c)) / 2 * 2, &used);
	return used;
}

/* Fewer members: the new size (per member used times the new data
 * members), which the exported size must not pass. 0 otherwise. */
static uint64_t shrunk_bytes(struct t *t, const struct config *c)
{
	if (c->new_n >= c->n)
		return 0;
	if (is_raid10(c))
		return raid10_array(c, true, raid10_used(t, c), NULL) * 512;
	unsigned npar = strcmp(c->level, "raid6") ? 1 : 2;
	return (uint64_t)c->size_kib * 1024 * (c->new_n - npar);
}

/* md asks for --array-size first when a reshape shrinks the array. */
static int shrink_first(struct t *t, const struct config *c)
{
	char done[512], err[256];
	struct uraid_grow g = { .array_bytes = shrunk_bytes(t, c) };
	if (!g.array_bytes)
		return 0;
	if (uraid_array_grow(t->a, &g, done, sizeof(done), err, sizeof(err))) {
		fprintf(stderr, "%s: --array-size: %s\n", t->name, err);
		return -1;
	}
	t->size = g.array_bytes;
	return 0;
}

static void add_spares(struct t *t, const struct config *c)
{
	char err[256];
	for (unsigned i = t->np; i < t->nfiles; i++)
		CHECK(uraid_array_add_member(t->a, t->paths[i], 0, err, sizeof(err)) == 0,
		      "%s: add %s: %s", t->name, t->paths[i], err);
	t->np = t->nfiles;
}

static void run_config(uint64_t seed, const struct config *c)
{
	struct t t = { .seed = seed };
	char err[256];
	struct uraid_sync_status st;
	struct uraid_array_status as;
	pthread_t w;

	pthread_mutex_init(&t.shadow_lock, NULL);
	if (setup(&t, c) || engine_up(&t) || assemble(&t) || fill(&t)) {
		CHECK(0, "%s: setup", c->name);
		teardown(&t);
		return;
	}
	add_spares(&t, c);
	struct uraid_sb before;
	CHECK(disk_sb(&t, &before) == 0, "%s: superblock before", c->name);
	uint64_t want_used = is_raid10(c) ? raid10_used(&t, c) : 0;
	if (shrunk_bytes(&t, c)) {
		/* refused before the size is reduced, as md's */
		struct uraid_reshape r0 = request_of(c);
		uraid_array_status(t.a, &as);
		r0.new_layout = as.layout;
		CHECK(uraid_array_reshape_start(t.a, &r0, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "--array-size"), "%s: fewer members before --array-size: %s",
		      c->name, err);
		CHECK(shrink_first(&t, c) == 0, "%s: --array-size", c->name);
	}
	struct uraid_reshape r = request_of(c);
	uraid_array_status(t.a, &as);
	if (!c->new_layout)
		r.new_layout = as.layout;
	uraid_array_sync_speed(t.a, 1000, 40000);
	pthread_create(&w, NULL, writer, &t);
	pause_ms(20);
	int rc = uraid_array_reshape_start(t.a, &r, err, sizeof(err));
	CHECK(rc == 0, "%s: reshape start: %s", c->name, err);
	struct uraid_sb sb0;
	if (rc == 0 && disk_sb(&t, &sb0) == 0)
		CHECK(sb_backwards(&sb0) == c->backwards &&
		      !!(sb0.feature_map & 0x20) == (c->backwards && c->n == c->new_n) &&
		      (sb0.new_offset > 0) == c->backwards,
		      "%s: started %s (feature_map 0x%x, new_offset %d)", c->name,
		      c->backwards ? "forwards, want backwards" : "backwards, want forwards",
		      sb0.feature_map, sb0.new_offset);
	if (rc == 0 && is_raid10(c) && c->new_n < c->n) {
		/* md's backwards RAID 10: up by mdadm's least move, no 0x20
		   (delta_disks says it), the used size as mdadm leaves it */
		CHECK(sb0.new_offset == (int32_t)least_move(c) && sb0.feature_map == 0x44 &&
		      sb0.delta_disks == -(int32_t)(c->n - c->new_n) && sb0.size == want_used &&
		      sb0.reshape_position <= raid10_array(c, true, want_used, NULL) &&
		      sb0.reshape_position % 8 == 0,
		      "%s: started with new_offset %d (want %" PRIu64 "), feature_map 0x%x, "
		      "delta_disks %d, size %" PRIu64 " (want %" PRIu64 ", before %" PRIu64 "), "
		      "reshape_position %" PRIu64 " (at most the new size %" PRIu64 ")", c->name,
		      sb0.new_offset, least_move(c),
		      sb0.feature_map, sb0.delta_disks, sb0.size, want_used, before.size,
		      sb0.reshape_position, raid10_array(c, true, want_used, NULL));
		CHECK(c->size_kib || sb0.size < before.size, "%s: no room after the data, but the "
		      "size used stayed %" PRIu64, c->name, sb0.size);
	}
	if (rc == 0 && is_raid10(c) && c->new_n > c->n) {
		/* mdadm's min_offset_change: the larger chunk, times 2 for o2 */
		int32_t want = -(int32_t)(c->chunk_kib > c->new_chunk_kib ? c->chunk_kib
									: c->new_chunk_kib) * 2;
		if (!strcmp(c->layout, "o2"))
			want *= 2;
		CHECK(sb0.new_offset == want && sb0.feature_map == 0x44 &&
		      sb0.delta_disks == (int32_t)(c->new_n - c->n),
		      "%s: started with new_offset %d (want %d), feature_map 0x%x, delta_disks %d",
		      c->name, sb0.new_offset, want, sb0.feature_map, sb0.delta_disks);
	}
	if (rc == 0)
		wait_job(&t, &st);
	atomic_store(&t.stop, true);
	pthread_join(w, NULL);
	CHECK(rc || (st.kind == URAID_SYNC_RESHAPE && !st.running && st.result == 0),
	      "%s: the reshape ended with kind %d running %d result %d", c->name, st.kind,
	      st.running, st.result);
	uraid_array_status(t.a, &as);
	CHECK(as.raid_disks == c->new_n && as.chunk_bytes == c->new_chunk_kib * 1024u &&
	      as.layout == r.new_layout, "%s: geometry after: %u members chunk %u layout %u",
	      c->name, as.raid_disks, as.chunk_bytes, as.layout);
	CHECK(as.size_bytes >= t.size && as.size_bytes % size_unit(c) == 0 &&
	      (c->new_n <= c->n || as.size_bytes > t.size),
	      "%s: size after %" PRIu64 " (before %" PRIu64 ")", c->name, as.size_bytes, t.size);
	if (c->new_n < c->n) {
		/* the slots that went away: their members are spares now */
		unsigned spares = 0;
		for (unsigned i = 0; i < as.nmembers; i++)
			spares += as.members[i].slot < 0;
		CHECK(spares == c->n - c->new_n && as.degraded == 0,
		      "%s: after: %u spares (want %u), degraded %u", c->name, spares,
		      c->n - c->new_n, as.degraded);
	}
	verify(&t, "after the reshape");
	if (c->parity_missing) {
		/* degraded, on the new parity slot only: data whole, nothing to check */
		bool last_held = false;
		for (unsigned i = 0; i < as.nmembers; i++)
			last_held |= as.members[i].slot == (int)c->new_n - 1;
		CHECK(as.degraded == 1 && !last_held, "%s: after: degraded %u, the parity slot %s",
		      c->name, as.degraded, last_held ? "held" : "missing");
	} else {
		CHECK(uraid_array_sync_start(t.a, URAID_SYNC_CHECK, err, sizeof(err)) == 0,
		      "%s: check: %s", c->name, err);
		wait_job(&t, &st);
		CHECK(st.kind == URAID_SYNC_CHECK && st.result == 0 && st.mismatch_sectors == 0,
		      "%s: check after the reshape: result %d, %" PRIu64 " mismatched sectors",
		      c->name, st.result, st.mismatch_sectors);
	}
	CHECK(uraid_array_close(t.a) == 0, "%s: close", c->name);
	t.a = NULL;
	struct uraid_sb sb;
	CHECK(disk_sb(&t, &sb) == 0, "%s: superblock", c->name);
	CHECK(sb.raid_disks == c->new_n && sb.chunksize == c->new_chunk_kib * 2 &&
	      sb.layout == r.new_layout && !(sb.feature_map & 0x64),
	      "%s: superblock after: raid_disks %u chunk %u layout %u feature_map 0x%x", c->name,
	      sb.raid_disks, sb.chunksize, sb.layout, sb.feature_map);
	/* fewer members: the spares left took the new data offset too, as
	   md's md_finish_reshape moves every member's */
	for (unsigned i = c->new_n; i < c->n; i++) {
		struct uraid_sb sp;
		CHECK(disk_sb_of(&t, i, &sp) == 0 && sp.data_offset == sb.data_offset &&
		      !(sp.feature_map & 0x4) && sp.new_offset == 0 &&
		      sp.data_offset + sp.data_size <= MEMBER_MIB * 2048u,
		      "%s: the spare %u after: data_offset %" PRIu64 " (the members' %" PRIu64
		      "), data_size %" PRIu64 ", new_offset %d", c->name, i, sp.data_offset,
		      sb.data_offset, sp.data_size, sp.new_offset);
	}
	if (assemble(&t) == 0)
		verify(&t, "assembled again");
	teardown(&t);
	pthread_mutex_destroy(&t.shadow_lock);
}

/* The child: start a slow reshape and run until killed. */
static void crash_child(struct t *t, const struct config *c)
{
	char err[256];
	if (engine_up(t) || assemble(t))
		_exit(2);
	struct uraid_reshape r = request_of(c);
	struct uraid_array_status as;
	uraid_array_status(t->a, &as);
	if (!c->new_layout)
		r.new_layout = as.layout;
	if (shrink_first(t, c))
		_exit(4);
	/* fast enough that the steps follow closely (a kill at a random moment
	   often lands inside one), slow enough to last about a second */
	uraid_array_sync_speed(t->a, 20000, 20000);
	if (uraid_array_reshape_start(t->a, &r, err, sizeof(err))) {
		fprintf(stderr, "crash child: %s\n", err);
		_exit(3);
	}
	for (;;)
		pause();
}

/* Where a backwards reshape of c starts (md's raid5_size while it runs;
 * RAID 10: raid10_size, the new array). */
static uint64_t top_of(const struct config *c, const struct uraid_sb *sb)
{
	if (is_raid10(c))
		return raid10_array(c, true, sb->size, NULL);
	unsigned npar = strcmp(c->level, "raid6") ? 1 : 2;
	uint64_t big = (c->chunk_kib > c->new_chunk_kib ? c->chunk_kib : c->new_chunk_kib) * 2;
	unsigned dd = (c->n < c->new_n ? c->n : c->new_n) - npar;
	return sb->size / big * big * dd;
}

/* Array sectors the reshape has moved (from 0 forwards, from the top backwards). */
static uint64_t moved(const struct config *c, const struct uraid_sb *sb)
{
	if (!sb_backwards(sb))
		return sb->reshape_position;
	uint64_t top = top_of(c, sb);
	return sb->reshape_position <= top ? top - sb->reshape_position : 0;
}

/*
 * Requests at md's position, before the job takes a step: assembled on an
 * engine without threads (the job cannot run), a write of 128 KiB across
 * the position on disk (md's rule puts it on a boundary of new rows only,
 * so backwards it often cuts an old row: 5 -> 4 with 64 KiB chunks, old
 * rows of 512 sectors, md's steps of 384), read back at once, and the
 * shadow updated; the resumed reshape must carry those bytes.
 */
static void cross_position(struct t *t)
{
	struct uraid_sb sb;
	struct uraid_engine_opts eo = { .reactors = 1, .flags = 0 };
	const uint64_t half = 64 * 1024;

	if (disk_sb(t, &sb) || !(sb.feature_map & 0x4)) {
		CHECK(0, "crash: no reshape on disk before the write across the position");
		return;
	}
	uint64_t pos = sb.reshape_position * 512;
	uint64_t off = pos > half ? pos - half : 0;
	uint64_t len = off + 2 * half <= t->size ? 2 * half : t->size - off;
	printf("crash: write %" PRIu64 " bytes at %" PRIu64 " across the position %" PRIu64
	       " (sector %" PRIu64 ")\n", len, off, pos, sb.reshape_position);
	if (uraid_engine_create(&eo, &t->e) || assemble(t)) {
		CHECK(0, "crash: no assembly without threads");
		if (t->e)
			uraid_engine_destroy(t->e);
		t->e = NULL;
		return;
	}
	uint8_t *w = aligned_alloc(4096, 2 * half), *r = aligned_alloc(4096, 2 * half);
	uint64_t s = t->seed ^ 0xc055;
	rng_fill(&s, w, len);
	int wrc = uraid_array_pwrite(t->a, w, len, off, 0);
	CHECK(wrc == 0, "crash: write across the position: %d", wrc);
	if (wrc == 0)
		memcpy(t->shadow + off, w, len);
	CHECK(uraid_array_pread(t->a, r, len, off) == 0, "crash: read across the position");
	if (memcmp(r, w, len)) {
		uint64_t at = 0;
		while (at < len && r[at] == w[at])
			at++;
		CHECK(0, "crash: read across the position differs from byte %" PRIu64
		      " (array sector %" PRIu64 ")", at, (off + at) / 512);
	}
	free(w);
	free(r);
	CHECK(uraid_array_close(t->a) == 0, "crash: close without threads");
	t->a = NULL;
	uraid_engine_destroy(t->e);
	t->e = NULL;
}

static void run_crash(uint64_t seed, const struct config *c)
{
	struct t t = { .seed = seed };
	struct uraid_sync_status st;
	uint64_t s = seed ^ 0xc7a5;

	if (setup(&t, c) || engine_up(&t) || assemble(&t) || fill(&t)) {
		CHECK(0, "crash: setup");
		teardown(&t);
		return;
	}
	add_spares(&t, c);
	if (shrunk_bytes(&t, c))
		t.size = shrunk_bytes(&t, c);   /* the child shrinks it, as md asks */
	CHECK(uraid_array_close(t.a) == 0, "crash: close");
	t.a = NULL;
	uraid_engine_destroy(t.e);
	t.e = NULL;
	/* kill once the checkpoint on disk passes a random point of the first half */
	uint64_t old_sectors = t.size / 512;
	uint64_t target = rng_next(&s) % (old_sectors / 2) + 1;
	printf("crash: kill -9 once the reshape has moved %" PRIu64 " of %" PRIu64 " sectors\n",
	       target, old_sectors);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		crash_child(&t, c);
	struct uraid_sb sb = { 0 };
	time_t until = time(NULL) + DEADLINE_S;
	while (time(NULL) < until) {
		if (disk_sb(&t, &sb) == 0 && (sb.feature_map & 0x4) && moved(c, &sb) >= target)
			break;
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			CHECK(0, "crash: the child ended by itself (status 0x%x)", status);
			pid = -1;
			break;
		}
		pause_ms(2);
	}
	if (pid > 0) {
		/* then at a random moment: between steps or inside one (its copy,
		   its flush, between its superblock writes) */
		unsigned delay_us = (unsigned)(rng_next(&s) % 20000);
		printf("crash: kill %u us after the checkpoint passed it\n", delay_us);
		fflush(stdout);
		struct timespec ts = { 0, (long)delay_us * 1000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		CHECK(disk_sb(&t, &sb) == 0, "crash: superblock after the kill");
	}
	CHECK(sb.feature_map & 0x4, "crash: the superblock shows no reshape (feature_map 0x%x)",
	      sb.feature_map);
	printf("crash: killed at reshape_position %" PRIu64 "\n", sb.reshape_position);
	/*
	 * md stops on a boundary of new rows only (not of old ones): move every
	 * checkpoint back by one new row of the larger chunk (md's rule),
	 * which may leave it inside an old row. Nothing wrote to the array
	 * since, so the old place still holds that row's data (even after a
	 * kill inside a step: its new rows lie below the live old data).
	 */
	unsigned big_kib = c->chunk_kib > c->new_chunk_kib ? c->chunk_kib : c->new_chunk_kib;
	uint64_t new_row = (uint64_t)big_kib * 2 * (c->new_n - (strcmp(c->level, "raid6") ? 1 : 2));
	/* RAID 10 (md's rule too): a piece may write over the old data just
	   below its checkpoint, dead once the checkpoint passed it; moving the
	   checkpoint back would make it live again */
	for (unsigned i = 0; i < t.np && !is_raid10(c); i++) {
		struct uraid_probe *p = malloc(sizeof(*p));
		int fd = open(t.paths[i], O_RDWR);
		alignas(4096) uint8_t buf[URAID_SB_BYTES];
		if (fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0) {
			struct uraid_sb *m = &p->loc[p->chosen].sb;
			/* back: down forwards, up (towards the top) backwards */
			if (sb_backwards(m)) {
				if (m->reshape_position + new_row <= top_of(c, m))
					m->reshape_position += new_row;
			} else if (m->reshape_position >= new_row) {
				m->reshape_position -= new_row;
			}
			uraid_sb_encode(m, buf);
			CHECK(pwrite(fd, buf, sizeof(buf), (off_t)(m->super_offset * 512)) ==
			      (ssize_t)sizeof(buf), "crash: rewind %s", t.paths[i]);
		}
		if (fd >= 0)
			close(fd);
		free(p);
	}
	cross_position(&t);
	if (engine_up(&t) == 0 && assemble(&t) == 0) {
		verify(&t, "assembled in mid-reshape");
		uraid_array_sync_speed(t.a, 0, 0);
		wait_job(&t, &st);
		CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0, "crash: the resumed reshape: "
		      "kind %d result %d", st.kind, st.result);
		verify(&t, "after the resumed reshape");
		struct uraid_array_status as;
		uraid_array_status(t.a, &as);
		CHECK(as.raid_disks == c->new_n, "crash: %u members after", as.raid_disks);
	} else {
		CHECK(0, "crash: no assembly after the kill");
	}
	teardown(&t);
}

/*
 * Superblocks saying a RAID 5 3 -> 4 reshape is at its end (all moved, not
 * yet finished, as a stop between the last step and its superblocks could
 * leave one): assembly takes it and the job only finishes it (superblocks
 * without the reshape bits, 4 members), instead of a job with no unit left
 * that leaves the reshape standing. The data is not looked at (nothing was
 * moved: only the finish is tested).
 */
static void run_at_end(uint64_t seed, bool back)
{
	/* backwards: RAID 5 of 4, chunk 512K -> 64K, all moved (position 0) */
	const struct config *c = &configs[back ? 9 : 0];
	struct t t = { .seed = seed };
	struct uraid_sync_status st;

	if (setup(&t, c) || engine_up(&t) || assemble(&t)) {
		CHECK(0, "at end: setup");
		teardown(&t);
		return;
	}
	add_spares(&t, c);
	CHECK(uraid_array_close(t.a) == 0, "at end: close");
	t.a = NULL;
	uint32_t spare_dev = UINT32_MAX;
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < t.np; i++) {
			struct uraid_probe *p = malloc(sizeof(*p));
			int fd = open(t.paths[i], O_RDWR);
			alignas(4096) uint8_t buf[URAID_SB_BYTES];
			if (fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0) {
				struct uraid_sb *m = &p->loc[p->chosen].sb;
				if (pass == 0) {
					if (i == t.np - 1)
						spare_dev = m->dev_number;
				} else if (back) {
					m->feature_map |= URAID_FEATURE_RESHAPE_ACTIVE |
							  URAID_FEATURE_NEW_OFFSET |
							  URAID_FEATURE_RESHAPE_BACKWARDS;
					m->new_level = 5;
					m->new_layout = m->layout;
					m->new_chunk = 128;
					m->new_offset = 1024;   /* a step (3072) per old data member */
					m->reshape_position = 0;
					uraid_sb_encode(m, buf);
					CHECK(pwrite(fd, buf, sizeof(buf), (off_t)(m->super_offset * 512)) ==
					      (ssize_t)sizeof(buf), "at end: write %s", t.paths[i]);
				} else if (spare_dev < m->max_dev) {
					uint64_t end = m->size / m->chunksize * m->chunksize * 3;
					m->feature_map |= URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_NEW_OFFSET;
					m->raid_disks = 4;
					m->delta_disks = 1;
					m->new_level = 5;
					m->new_layout = m->layout;
					m->new_chunk = m->chunksize;
					m->new_offset = -384;
					m->reshape_position = end;
					m->dev_roles[spare_dev] = 3;
					uraid_sb_encode(m, buf);
					CHECK(pwrite(fd, buf, sizeof(buf), (off_t)(m->super_offset * 512)) ==
					      (ssize_t)sizeof(buf), "at end: write %s", t.paths[i]);
				}
			}
			if (fd >= 0)
				close(fd);
			free(p);
		}
	}
	CHECK(back || spare_dev != UINT32_MAX, "at end: no spare found");
	unsigned want_n = 4;
	uint32_t want_chunk = back ? 128 : 0;
	if (engine_up(&t) == 0 && assemble(&t) == 0) {
		wait_job(&t, &st);
		CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0, "at end: the reshape: kind %d "
		      "result %d", st.kind, st.result);
		struct uraid_array_status as;
		uraid_array_status(t.a, &as);
		CHECK(as.raid_disks == want_n, "at end: %u members after", as.raid_disks);
		CHECK(uraid_array_close(t.a) == 0, "at end: close");
		t.a = NULL;
		struct uraid_sb sb;
		CHECK(disk_sb(&t, &sb) == 0 && !(sb.feature_map & 0x64) && sb.raid_disks == want_n &&
		      (!want_chunk || sb.chunksize == want_chunk),
		      "at end: superblock after: feature_map 0x%x raid_disks %u chunk %u",
		      sb.feature_map, sb.raid_disks, sb.chunksize);
		printf("at end: superblock after: feature_map 0x%x raid_disks %u\n", sb.feature_map,
		       sb.raid_disks);
	} else {
		CHECK(0, "at end: no assembly");
	}
	teardown(&t);
}

/*
 * Holes during a reshape (NBD block status): data written only near the end
 * of an array of sparse members lies in the old geometry, above the
 * position; the answer must route by the position and say data there (a
 * hole would make nbdcopy or qemu-img skip it).
 */
static void run_allocation(uint64_t seed)
{
	const struct config *c = &configs[0];
	struct t t = { .seed = seed };
	char err[256];
	struct uraid_sync_status st;

	if (setup(&t, c) || engine_up(&t) || assemble(&t)) {
		CHECK(0, "allocation: setup");
		teardown(&t);
		return;
	}
	uint64_t size = uraid_array_size(t.a), len = MIB;
	uint8_t *buf = aligned_alloc(4096, len);
	rng_fill(&t.seed, buf, len);
	CHECK(uraid_array_pwrite(t.a, buf, len, size - len, 0) == 0, "allocation: write");
	free(buf);
	add_spares(&t, c);
	struct uraid_reshape r = request_of(c);
	struct uraid_array_status as;
	uraid_array_status(t.a, &as);
	r.new_layout = as.layout;
	uraid_array_sync_speed(t.a, 100, 500);
	int rc = uraid_array_reshape_start(t.a, &r, err, sizeof(err));
	CHECK(rc == 0, "allocation: reshape start: %s", err);
	struct uraid_extent ext[64];
	int n = uraid_array_allocation(t.a, size - len, len, ext, 64);
	uint64_t at = size - len;
	CHECK(n > 0, "allocation: %d", n);
	for (int i = 0; i < n; i++) {
		CHECK(!(ext[i].flags & URAID_EXTENT_HOLE), "allocation: written bytes %" PRIu64
		      "..%" PRIu64 " reported as a hole during the reshape", at, at + ext[i].length);
		at += ext[i].length;
	}
	printf("allocation during the reshape: %d extent(s), first flags 0x%x\n", n,
	       n > 0 ? ext[0].flags : 0);
	if (rc == 0) {
		uraid_array_sync_speed(t.a, 1000, 400000);
		wait_job(&t, &st);
	}
	teardown(&t);
}

/*
 * A member vanishes mid-reshape (RAID 5 4 -> 5): the job's reads of it fail
 * the member through the member states, and the reshape goes on degraded
 * (its old chunks rebuilt from parity) to the end, with the data whole.
 */
/* Members of slots slot[0..nvanish-1] vanish during the reshape of c. */
static void run_member_fails(uint64_t seed, const struct config *c, const unsigned *slot,
			     unsigned nvanish)
{
	struct t t = { .seed = seed };
	char err[256];
	struct uraid_sync_status st;
	struct uraid_array_status as;

	if (setup(&t, c) || engine_up(&t) || assemble(&t) || fill(&t)) {
		CHECK(0, "member fails: setup");
		teardown(&t);
		return;
	}
	add_spares(&t, c);
	struct uraid_reshape r = request_of(c);
	uraid_array_status(t.a, &as);
	r.new_layout = as.layout;
	uraid_array_sync_speed(t.a, 100, 500);
	int rc = uraid_array_reshape_start(t.a, &r, err, sizeof(err));
	CHECK(rc == 0, "member fails: reshape start: %s", err);
	struct uraid_fault f = { .kind = URAID_FAULT_VANISH, .last_sector = UINT64_MAX };
	for (unsigned k = 0; k < nvanish; k++)
		CHECK(uraid_array_inject(t.a, slot[k], &f) == 0, "member fails: inject");
	uraid_array_sync_speed(t.a, 1000, 400000);
	if (rc == 0)
		wait_job(&t, &st);
	CHECK(rc || (st.kind == URAID_SYNC_RESHAPE && !st.running && st.result == 0),
	      "member fails: the reshape ended with kind %d running %d result %d", st.kind,
	      st.running, st.result);
	uraid_array_status(t.a, &as);
	CHECK(as.raid_disks == c->new_n && as.degraded == nvanish, "member fails: after: %u "
	      "members, degraded %u", as.raid_disks, as.degraded);
	printf("member fails: reshape result %d, degraded %u\n", st.result, as.degraded);
	verify(&t, "member failed during the reshape");
	CHECK(uraid_array_close(t.a) == 0, "member fails: close");
	t.a = NULL;
	if (assemble(&t) == 0)
		verify(&t, "member failed, assembled again");
	teardown(&t);
}

static void run_refusals(uint64_t seed)
{
	const struct config *c = &configs[0];
	struct t t = { .seed = seed };
	char err[256];

	if (setup(&t, c) || engine_up(&t) || assemble(&t)) {
		CHECK(0, "refusals: setup");
		teardown(&t);
		return;
	}
	struct uraid_array_status as;
	uraid_array_status(t.a, &as);
	struct uraid_reshape r = { 5, as.layout, as.chunk_bytes / 512, 4 };
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL && strstr(err, "spare"),
	      "refusals: no spare: %s", err);
	r.new_raid_disks = 3;
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "nothing to change"), "refusals: no change: %s", err);
	r.new_level = 6;
	r.new_raid_disks = 4;
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "takeover"), "refusals: 5 -> 6 by restripe: %s", err);
	r.new_level = 5;
	r.new_raid_disks = 2;
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL,
	      "refusals: fewer members: %s", err);
	printf("refusals: fewer members: %s\n", err);
	teardown(&t);
}

/* RAID 10: what md refuses (with mdadm's words), and fewer members. */
static void run_refusals_raid10(uint64_t seed)
{
	static const struct config far = { "raid10 f2 refusals", "raid10", "f2", NULL, 4, 5,
					   64, 64, false, 0, false };
	const struct config *near = &configs[FIRST_RAID10];
	struct t t = { .seed = seed };
	char err[256];

	if (setup(&t, &far) || engine_up(&t) || assemble(&t)) {
		CHECK(0, "raid10 refusals: setup");
		teardown(&t);
		return;
	}
	add_spares(&t, &far);
	struct uraid_reshape r = request_of(&far);
	uraid_layout_parse(URAID_LEVEL_10, "f2", &r.new_layout);
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "Cannot reshape RAID10 in far-mode"), "raid10 refusals: far: %s", err);
	teardown(&t);

	memset(&t, 0, sizeof(t));
	t.seed = seed;
	if (setup(&t, near) || engine_up(&t) || assemble(&t)) {
		CHECK(0, "raid10 refusals: setup near");
		teardown(&t);
		return;
	}
	add_spares(&t, near);
	r = request_of(near);
	uraid_layout_parse(URAID_LEVEL_10, "f2", &r.new_layout);
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "to far-mode"), "raid10 refusals: to far: %s", err);
	uraid_layout_parse(URAID_LEVEL_10, "n3", &r.new_layout);
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "number of copies"), "raid10 refusals: copies: %s", err);
	uraid_layout_parse(URAID_LEVEL_10, "n2", &r.new_layout);
	r.new_raid_disks = 3;
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "--array-size"), "raid10 refusals: fewer members, the data does not "
	      "fit: %s", err);
	r.new_level = 0;
	r.new_raid_disks = 6;
	CHECK(uraid_array_reshape_start(t.a, &r, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "takeover"), "raid10 refusals: to RAID 0: %s", err);
	struct uraid_sb sb;
	CHECK(disk_sb(&t, &sb) == 0 && !(sb.feature_map & 0x44) && sb.raid_disks == 4,
	      "raid10 refusals: the superblock changed (feature_map 0x%x, raid_disks %u)",
	      sb.feature_map, sb.raid_disks);
	teardown(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_reshape seed %" PRIu64 "\n", seed);
	fflush(stdout);
	/* a second argument: only the configurations whose name holds it */
	const char *only = argc > 2 ? argv[2] : NULL;
	if (!only) {
		run_refusals(seed);
		run_allocation(seed);
	}
	CHECK(is_raid10(&configs[FIRST_RAID10]) && !is_raid10(&configs[FIRST_RAID10 - 1]),
	      "FIRST_RAID10 does not point at the first RAID 10 configuration");
	if (!only || strstr("raid10 refusals", only))
		run_refusals_raid10(seed);
	if (!only || strstr("at end", only)) {
		run_at_end(seed, false);
		run_at_end(seed, true);
	}
	if (!only || strstr("member fails", only)) {
		/* one member of a RAID 5 (rebuilt by P); two of a RAID 6, so
		   that rows missing a data chunk and P read through Q */
		static const unsigned one[] = { 1 }, two[] = { 1, 2 };
		run_member_fails(seed, &configs[1], one, 1);
		run_member_fails(seed, &configs[2], two, 2);
	}
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		if (only && !strstr(configs[i].name, only))
			continue;
		printf("%s\n", configs[i].name);
		fflush(stdout);
		run_config(seed + i, &configs[i]);
	}
	/* crashes of a member-count grow, of one with more data disks, of a
	   chunk change at the same count, and of two backwards restripes */
	static const unsigned crash_configs[] = { 0, 1, 3, 9, 11, 12, 13, FIRST_RAID10,
						  FIRST_RAID10 + 2, FIRST_RAID10 + 3,
						  FIRST_RAID10 + 5, FIRST_RAID10 + 6,
						  FIRST_RAID10 + 7, FIRST_RAID10 + 8 };
	for (size_t i = 0; i < sizeof(crash_configs) / sizeof(crash_configs[0]); i++) {
		if (only && !strstr(configs[crash_configs[i]].name, only))
			continue;
		printf("crash: %s\n", configs[crash_configs[i]].name);
		fflush(stdout);
		run_crash(seed + i, &configs[crash_configs[i]]);
	}
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
