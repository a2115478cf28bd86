// SPDX-License-Identifier: MIT
/*
 * Nested RAID 50 (2 groups of 3) and 60 (2 groups of 4) in one engine
 * (uraid/nested.h, engine/md/stack.c), on /tmp files: created, assembled,
 * written with a seeded pattern and read back; a member failed in one
 * group; (60) then one in the other group too; a restart, degraded; a
 * spare added to a group rebuilds it, and the data reads back after
 * each step; last, group 1 fails outright (members failed with force):
 * its chunks of the RAID 0 answer errors, group 0's still read, and the
 * arrays close. Then faults on a fresh RAID 50 (a watchdog ends a hang):
 * an inner member's write fails while the RAID 0's superblock write
 * (clean -> active after an idle spell) waits on it; an inner member's
 * reads fail and the RAID 0 still reads right data from the degraded
 * inner array. Seed printed; `test_nested [SEED]`.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/nested.h>

#define MIB (1ull << 20)
#define MEMBER_BYTES (12 * MIB)
#define BLOCK (64u * 1024)

static int failures;
#define CHECK(c, ...)                                                                     \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
			fprintf(stderr, __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                            \
			failures++;                                                       \
		}                                                                         \
	} while (0)

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct t {
	const char *label;
	int level;
	unsigned n, groups;
	char dir[64];
	char paths[10][96];
	const char *p[10];
	struct uraid_engine *e;
	struct uraid_nested nest;
	uint8_t *ref;
	uint64_t size;
	uint64_t seed;
	unsigned idle_clean_ms;
	bool faults;                    /* the fault case instead of the steps */
};

static void mkfile(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)MEMBER_BYTES)) {
		perror(path);
		exit(2);
	}
	close(fd);
}

static int assemble(struct t *t)
{
	char err[512] = "";
	struct uraid_assemble_opts o = { .paths = t->p, .npaths = t->n,
					 .idle_clean_ms = t->idle_clean_ms };
	int rc = uraid_nested_assemble(t->e, &o, &t->nest, err, sizeof(err));
	CHECK(rc == 0, "%s: assemble: %s", t->label, err);
	if (rc == 0)
		t->size = uraid_array_size(t->nest.outer);
	return rc;
}

/* Random 64 KiB blocks written from the seed, into ref too. */
static void write_pattern(struct t *t, unsigned blocks)
{
	uint8_t *buf = aligned_alloc(4096, BLOCK);
	for (unsigned i = 0; i < blocks; i++) {
		uint64_t off = rng(&t->seed) % (t->size / BLOCK) * BLOCK;
		for (unsigned k = 0; k < BLOCK; k += 8) {
			uint64_t v = rng(&t->seed);
			memcpy(buf + k, &v, 8);
		}
		memcpy(t->ref + off, buf, BLOCK);
		int rc = uraid_array_pwrite(t->nest.outer, buf, BLOCK, off, 0);
		CHECK(rc == 0, "%s: write at %" PRIu64 ": %d", t->label, off, rc);
	}
	CHECK(uraid_array_flush(t->nest.outer) == 0, "%s: flush", t->label);
	free(buf);
}

static void verify(struct t *t, const char *when)
{
	uint8_t *buf = aligned_alloc(4096, MIB);
	for (uint64_t off = 0; off < t->size; off += MIB) {
		uint64_t len = t->size - off < MIB ? t->size - off : MIB;
		int rc = uraid_array_pread(t->nest.outer, buf, len, off);
		CHECK(rc == 0, "%s %s: read at %" PRIu64 ": %d", t->label, when, off, rc);
		if (rc == 0 && memcmp(buf, t->ref + off, len)) {
			CHECK(0, "%s %s: data differs in the MiB at %" PRIu64, t->label, when, off);
			break;
		}
	}
	free(buf);
}

static void fail_member(struct t *t, unsigned g, const char *path)
{
	char err[256] = "";
	int idx = uraid_array_find_member(t->nest.inner[g], path);
	CHECK(idx >= 0, "%s: %s not found in group %u", t->label, path, g);
	if (idx < 0)
		return;
	int rc = uraid_array_fail_member(t->nest.inner[g], (unsigned)idx, 0, err, sizeof(err));
	CHECK(rc == 0, "%s: fail %s: %s", t->label, path, err);
}

static unsigned degraded(struct t *t, unsigned g)
{
	struct uraid_array_status st;
	uraid_array_status(t->nest.inner[g], &st);
	return st.degraded;
}

static void watchdog(int sig)
{
	static const char msg[] = "FAIL test_nested: hung (watchdog, 60 s)\n";
	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* The slot in group g of the member at path. */
static unsigned slot_of(struct t *t, unsigned g, const char *path)
{
	int idx = uraid_array_find_member(t->nest.inner[g], path);
	CHECK(idx >= 0, "%s: %s not in group %u", t->label, path, g);
	return idx < 0 ? 0 : (unsigned)idx;
}

/*
 * Inner members' I/O errors under the RAID 0. First a write error on group
 * 0's first member while the RAID 0 is clean (idle spell): the RAID 0's
 * write marks it active first, whose superblock write to group 0 fails on
 * that member; group 0 fails the member (its metadata worker records it)
 * and the write goes on, degraded. It hung once: the worker, waiting in
 * the RAID 0's superblock write, never ran group 0's failure record.
 * Then read errors on a member of group 1: reads come from the others.
 */
/* Every array (the RAID 0 and its groups) marked clean, as each reports it,
   within 10 s: the idle marking the fault case writes through. A fixed pause
   of a few idle spells can end before it on a loaded machine. */
static void wait_clean(struct t *t, const char *when)
{
	bool all = false;
	for (unsigned k = 0; k < 1000 && !all; k++) {
		struct uraid_array_status st;
		all = uraid_array_status(t->nest.outer, &st) == 0 && st.clean;
		for (unsigned g = 0; g < t->nest.groups && all; g++)
			all = uraid_array_status(t->nest.inner[g], &st) == 0 && st.clean;
		if (!all)
			usleep(10000);
	}
	CHECK(all, "%s: %s: not every array marked clean within 10 s", t->label, when);
}

static void faults(struct t *t)
{
	unsigned per = t->n / t->groups;
	struct uraid_fault f = { .kind = URAID_FAULT_WRITE, .first_sector = 0,
				 .last_sector = UINT64_MAX };
	uint8_t *buf = aligned_alloc(4096, BLOCK);

	signal(SIGALRM, watchdog);
	alarm(60);
	wait_clean(t, "before the faults");
	CHECK(uraid_array_inject(t->nest.inner[0], slot_of(t, 0, t->paths[0]), &f) == 0,
	      "%s: inject", t->label);
	for (unsigned k = 0; k < BLOCK; k++)
		buf[k] = (uint8_t)rng(&t->seed);
	int rc = uraid_array_pwrite(t->nest.outer, buf, BLOCK, BLOCK, 0);
	CHECK(rc == 0, "%s: write while group 0's member fails: %d", t->label, rc);
	memcpy(t->ref + BLOCK, buf, BLOCK);
	CHECK(degraded(t, 0) == 1, "%s: group 0's failing member not failed", t->label);
	write_pattern(t, 50);
	verify(t, "after a write error in group 0");

	/* read errors on group 1's second member: md reads around it */
	f.kind = URAID_FAULT_READ;
	CHECK(uraid_array_inject(t->nest.inner[1], slot_of(t, 1, t->paths[per + 1]), &f) == 0,
	      "%s: inject read", t->label);
	verify(t, "with read errors in group 1");
	f.kind = URAID_FAULT_NONE;
	uraid_array_inject(t->nest.inner[1], slot_of(t, 1, t->paths[per + 1]), &f);
	/* a second idle spell: the RAID 0's marking works with group 0 degraded */
	wait_clean(t, "a second idle spell");
	write_pattern(t, 20);
	verify(t, "after a second idle spell");
	/* write errors where the RAID 0's superblock lies in group 1 (the 4 KiB
	   at 4 KiB of its data: slot 0's, left-symmetric, 64 KiB chunks) and a
	   write to group 0's chunk: the RAID 0's next superblock write, marking
	   it active or, after the write, clean (the tick, on the worker), goes
	   through group 1 and fails that member there; the data writes do not */
	f = (struct uraid_fault){ .kind = URAID_FAULT_WRITE, .first_sector = 8,
				  .last_sector = 15 };
	CHECK(uraid_array_inject(t->nest.inner[1], slot_of(t, 1, t->paths[per]), &f) == 0,
	      "%s: inject write in group 1", t->label);
	for (unsigned k = 0; k < BLOCK; k++)
		buf[k] = (uint8_t)rng(&t->seed);
	CHECK(uraid_array_pwrite(t->nest.outer, buf, BLOCK, 0, 0) == 0, "%s: write to group 0",
	      t->label);
	memcpy(t->ref, buf, BLOCK);
	for (int i = 0; i < 500 && degraded(t, 1) == 0; i++)
		usleep(10000);
	CHECK(degraded(t, 1) == 1, "%s: group 1's failing member not failed by the RAID 0's "
	      "superblock write", t->label);
	verify(t, "after a write error in group 1 while idle");
	alarm(0);
	free(buf);
}

/*
 * The RAID 0's members are arrays: a grow or restripe of it (which reads
 * and writes members directly) is refused, plans included, and nothing
 * changes.
 */
static void no_grow(struct t *t)
{
	struct uraid_grow g[] = {
		{ .chunk_bytes = 128 * 1024 },
		{ .level_set = true, .level = 4 },
		{ .level_set = true, .level = 5 },
		{ .raid_disks = t->groups + 1 },
		{ .size_bytes = URAID_GROW_MAX },
		{ .chunk_bytes = 128 * 1024, .plan_only = true },
	};
	char done[512], err[512];

	for (unsigned i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		done[0] = err[0] = 0;
		int rc = uraid_array_grow(t->nest.outer, &g[i], done, sizeof(done), err,
					  sizeof(err));
		CHECK(rc == -EINVAL && strstr(err, "nested"), "%s: grow %u of the RAID 0: %d "
		      "(%s) done '%s'", t->label, i, rc, err, done);
	}
	struct uraid_reshape rs = { .new_level = 5, .new_chunk_sectors = 256,
				    .new_raid_disks = t->groups };
	int rc = uraid_array_reshape_start(t->nest.outer, &rs, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "nested"), "%s: restripe of the RAID 0: %d (%s)",
	      t->label, rc, err);
	CHECK(uraid_array_size(t->nest.outer) == t->size, "%s: size changed", t->label);
	verify(t, "after the refused grows");
}

/*
 * uraid_nested_detect: the member list is nested; with a stray disk of
 * another array (a RAID 1 here) it is not (plain assembly says why); nor
 * one group with that other array.
 */
static void detect(struct t *t)
{
	char path[2][96], err[256];
	const char *list[12];
	unsigned per = t->n / t->groups;

	CHECK(uraid_nested_detect(t->p, t->n) == 1, "%s: not detected as nested", t->label);
	for (unsigned i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/stray%u", t->dir, i);
		mkfile(path[i]);
	}
	const char *sp[2] = { path[0], path[1] };
	struct uraid_create_opts co = { .level = 1, .raid_disks = 2, .minor = 2,
					.bitmap = URAID_BITMAP_NONE, .name = "stray",
					.homehost = "", .paths = sp, .npaths = 2,
					.flags = URAID_CREATE_ASSUME_CLEAN };
	struct uraid_create_result cr;
	int rc = uraid_create(&co, &cr, err, sizeof(err));
	CHECK(rc == 0, "stray RAID 1: %s", err);
	memcpy(list, t->p, t->n * sizeof(*list));
	list[t->n] = path[0];
	CHECK(uraid_nested_detect(list, t->n + 1) == 0, "%s: a stray disk of another array "
	      "taken for a nested array", t->label);
	memcpy(list, t->p, per * sizeof(*list));
	list[per] = path[0];
	list[per + 1] = path[1];
	CHECK(uraid_nested_detect(list, per + 2) == 0, "%s: one group and another array taken "
	      "for a nested array", t->label);
	unlink(path[0]);
	unlink(path[1]);
}

static void run(struct t *t)
{
	char err[512] = "";
	unsigned per = t->n / t->groups;

	snprintf(t->dir, sizeof(t->dir), "/tmp/nested-unit.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i <= t->n; i++) {          /* the last one: the spare */
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u", t->dir, i);
		t->p[i] = t->paths[i];
		mkfile(t->paths[i]);
	}
	struct uraid_create_opts co = { .level = t->level, .raid_disks = t->n, .chunk_kib = 64,
					.minor = 2, .bitmap = URAID_BITMAP_NONE, .name = "nest",
					.homehost = "", .paths = t->p, .npaths = t->n,
					.flags = URAID_CREATE_ASSUME_CLEAN };
	struct uraid_nested_result r;
	int rc = uraid_nested_create(&co, t->groups, &r, err, sizeof(err));
	CHECK(rc == 0, "%s: create: %s", t->label, err);
	if (rc)
		return;
	CHECK(r.outer.level == 0 && r.outer.raid_disks == t->groups,
	      "%s: outer level %d x%u", t->label, r.outer.level, r.outer.raid_disks);
	CHECK(r.outer.array_sectors <= t->groups * r.inner[0].array_sectors &&
	      r.outer.array_sectors > 0, "%s: outer size %" PRIu64, t->label,
	      r.outer.array_sectors);
	/* a count that does not split is refused, nothing written */
	co.npaths = t->n - 1;
	CHECK(uraid_nested_create(&co, t->groups, &r, err, sizeof(err)) == -EINVAL,
	      "%s: %u members in %u groups accepted", t->label, t->n - 1, t->groups);
	co.npaths = t->n;

	if (t->faults)
		detect(t);

	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	if (uraid_engine_create(&eo, &t->e)) {
		CHECK(0, "engine");
		return;
	}
	if (assemble(t))
		goto out;
	CHECK(t->nest.groups == t->groups, "%s: %u groups found", t->label, t->nest.groups);
	CHECK(t->size == r.outer.array_sectors * 512, "%s: size %" PRIu64, t->label, t->size);
	/* md's stacking: the RAID 0's 1.2 superblock 4 KiB into each inner array */
	for (unsigned g = 0; g < t->nest.groups; g++) {
		uint8_t *sb = aligned_alloc(4096, 4096);
		CHECK(uraid_array_pread(t->nest.inner[g], sb, 4096, 4096) == 0 &&
		      sb[0] == 0xfc && sb[1] == 0x4e && sb[2] == 0x2b && sb[3] == 0xa9 &&
		      sb[72] == 0, "%s: no RAID 0 superblock at 4 KiB in group %u", t->label, g);
		free(sb);
	}
	t->ref = calloc(1, t->size);
	/* the arrays are new: what was never written reads as the files' zeroes */
	write_pattern(t, 200);
	verify(t, "healthy");
	/* review2: healthy direct reads count no read error on the inner members */
	for (unsigned g = 0; g < t->nest.groups; g++) {
		struct uraid_array_status *st = calloc(1, sizeof(*st));
		CHECK(st && uraid_array_status(t->nest.inner[g], st) == 0, "status");
		for (unsigned i = 0; st && i < st->nmembers; i++)
			CHECK(st->members[i].read_errors == 0, "%s: group %u member %s: %" PRIu64
			      " read errors on a healthy array", t->label, g, st->members[i].path,
			      st->members[i].read_errors);
		free(st);
	}
	no_grow(t);
	if (t->faults) {
		faults(t);
		goto out;
	}

	fail_member(t, 0, t->paths[1]);
	CHECK(degraded(t, 0) == 1, "%s: group 0 not degraded", t->label);
	verify(t, "one failed in group 0");
	write_pattern(t, 100);
	verify(t, "written with group 0 degraded");
	if (t->level == 6) {
		fail_member(t, 1, t->paths[per + 2]);
		CHECK(degraded(t, 1) == 1, "%s: group 1 not degraded", t->label);
		verify(t, "one failed in each group");
		fail_member(t, 0, t->paths[0]);
		verify(t, "two failed in group 0, one in group 1");
		write_pattern(t, 50);
		verify(t, "written, 3 failed");
	}

	/* restart: the inner arrays degraded, the RAID 0 found again */
	CHECK(uraid_nested_close(&t->nest) == 0, "%s: close", t->label);
	if (assemble(t))
		goto out;
	verify(t, "after restart");

	/* a spare added to group 0 rebuilds it */
	rc = uraid_array_add_member(t->nest.inner[0], t->paths[t->n], 0, err, sizeof(err));
	CHECK(rc == 0, "%s: add: %s", t->label, err);
	unsigned want = t->level == 6 ? 1 : 0;
	for (int i = 0; i < 3000 && degraded(t, 0) != want; i++)
		usleep(10000);
	CHECK(degraded(t, 0) == want, "%s: group 0 still degraded %u", t->label,
	      degraded(t, 0));
	verify(t, "after the rebuild of group 0");
	write_pattern(t, 50);
	verify(t, "written after the rebuild");

	/* group 1 fails (too many members lost, forced): its slot of the RAID 0
	   answers I/O errors, group 0's chunks still read */
	for (unsigned k = 0; k <= (unsigned)(t->level - 4); k++) {
		int idx = uraid_array_find_member(t->nest.inner[1], t->paths[per + k]);
		if (idx >= 0)
			uraid_array_fail_member(t->nest.inner[1], (unsigned)idx, URAID_FAIL_FORCE,
						err, sizeof(err));
	}
	uint8_t *chunk = aligned_alloc(4096, BLOCK);
	CHECK(uraid_array_pread(t->nest.outer, chunk, BLOCK, 0) == 0 &&
	      !memcmp(chunk, t->ref, BLOCK), "%s: group 0's first chunk unreadable with group 1 "
	      "failed", t->label);
	rc = uraid_array_pread(t->nest.outer, chunk, BLOCK, BLOCK);
	CHECK(rc < 0, "%s: group 1 failed, yet its chunk read %d", t->label, rc);
	free(chunk);
	uraid_nested_close(&t->nest);
out:
	uraid_nested_close(&t->nest);
	uraid_engine_destroy(t->e);
	free(t->ref);
	for (unsigned i = 0; i <= t->n; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
}

/* Where volume delete finds the RAID 0's superblock: 4 KiB into the inner
 * array's data, on the slot of its first data chunk (md's left-symmetric:
 * RAID 5 slot 0; RAID 6 slot 1, Q being on slot 0 in row 0). */
static void outer_sb_loc(void)
{
	struct uraid_sb sb = { .level = 5, .layout = URAID_LEFT_SYMMETRIC, .raid_disks = 3,
			       .chunksize = 128, .size = 4096 };
	struct uraid_loc loc;

	CHECK(uraid_nested_outer_sb_loc(&sb, &loc) == 0 && loc.slot == 0 && loc.sector == 8,
	      "RAID 5 x3: the RAID 0's superblock at slot %u sector %" PRIu64, loc.slot,
	      loc.sector);
	sb.level = 6;
	sb.raid_disks = 4;
	CHECK(uraid_nested_outer_sb_loc(&sb, &loc) == 0 && loc.slot == 1 && loc.sector == 8,
	      "RAID 6 x4: the RAID 0's superblock at slot %u sector %" PRIu64, loc.slot,
	      loc.sector);
	sb.level = 1;
	CHECK(uraid_nested_outer_sb_loc(&sb, &loc) == -EINVAL, "RAID 1 is no inner array here");
	CHECK(!strcmp(uraid_nested_level_name(5), "raid50") &&
	      !strcmp(uraid_nested_level_name(6), "raid60"), "level names");
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x5eed2212;
	struct t cases[] = {
		{ .label = "RAID 50 (2x3)", .level = 5, .n = 6, .groups = 2 },
		{ .label = "RAID 60 (2x4)", .level = 6, .n = 8, .groups = 2 },
		{ .label = "RAID 50 (2x3) faults", .level = 5, .n = 6, .groups = 2,
		  .idle_clean_ms = 50, .faults = true },
	};

	printf("test_nested: seed 0x%" PRIx64 "\n", seed);
	outer_sb_loc();
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cases[i].seed = seed + i;
		run(&cases[i]);
	}
	if (failures) {
		printf("test_nested: %d failures (seed 0x%" PRIx64 ")\n", failures, seed);
		return 1;
	}
	printf("test_nested: ok\n");
	return 0;
}
