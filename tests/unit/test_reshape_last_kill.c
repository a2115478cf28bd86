// SPDX-License-Identifier: MIT
/*
 * review3: a kill between the last step's checkpoint (the position at the
 * end on disk, reshape bit still set) and the switch to the new geometry
 * (jobs/reshape.c run_step since growb). In a child: the array filled with
 * a seeded pattern, the reshape started, and the child _exit()s from the
 * test hook once the last piece is checkpointed at the end (rows held, no
 * switch yet), as kill -9 there would. Then: the superblocks must say the
 * reshape at its end; assembled again the job only finishes, the new
 * geometry is in place, the data equals the pattern and a check finds 0.
 * RAID 5 3 -> 4 and RAID 6 4 -> 5 (forwards), RAID 10 n2 chunk 64K -> 32K,
 * RAID 5 4 -> 3 and RAID 6 5 -> 4 (backwards).
 *
 *   test_reshape_last_kill [seed]
 */
#include <fcntl.h>
#include <inttypes.h>
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

#include "engine/core/array.h"
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAXM 5
#define MEMBER_MIB 12u

struct config {
	const char *name, *level, *layout;
	unsigned n, new_n, chunk_kib, new_chunk_kib, size_kib;
	bool backwards;
};

static const struct config configs[] = {
	{ "raid5 3->4", "raid5", NULL, 3, 4, 64, 64, 0, false },
	{ "raid6 4->5", "raid6", NULL, 4, 5, 64, 64, 0, false },
	{ "raid10 n2 chunk 64K->32K backwards", "raid10", "n2", 4, 4, 64, 32, 8192, true },
	{ "raid5 4->3 backwards", "raid5", NULL, 4, 3, 64, 64, 8192, true },
	{ "raid6 5->4 backwards", "raid6", NULL, 5, 4, 64, 64, 8192, true },
};

static bool g_backwards;

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

static void hook(void *arg, uint64_t lo, uint64_t hi, uint64_t pos, bool last)
{
	(void)arg;
	if (last && pos == (g_backwards ? lo : hi))
		_exit(0);       /* the position at the end is on disk; no switch */
}

static void wait_job(struct uraid_array *ua, struct uraid_sync_status *st)
{
	time_t until = time(NULL) + 180;
	do {
		pause_ms(10);
		uraid_array_sync_status(ua, st);
	} while ((st->running || st->kind == URAID_SYNC_NONE) && time(NULL) < until);
}

static void run(uint64_t seed, const struct config *c)
{
	char dir[64], paths[MAXM][96], err[256];
	const char *p[MAXM];
	unsigned nfiles = c->new_n > c->n ? c->new_n : c->n;

	printf("%s (seed %" PRIu64 ")\n", c->name, seed);
	fflush(stdout);
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-review3-rlk.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < nfiles; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		p[i] = paths[i];
		if (fixture_make_file(paths[i], MEMBER_MIB * MIB)) {
			CHECK(0, "file");
			return;
		}
	}
	struct uraid_create_opts o = {
		.raid_disks = c->n, .chunk_kib = c->chunk_kib, .minor = 2,
		.bitmap = URAID_BITMAP_NONE, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = p, .npaths = c->n, .homehost = "<none>", .size_kib = c->size_kib,
	};
	uraid_level_parse(c->level, &o.level);
	if (c->layout) {
		uraid_layout_parse(o.level, c->layout, &o.layout);
		o.layout_given = true;
	}
	if (uraid_create(&o, NULL, err, sizeof(err))) {
		CHECK(0, "%s: create: %s", c->name, err);
		return;
	}
	uint64_t size = 0;
	g_backwards = c->backwards;
	int pfd[2];
	if (pipe(pfd)) {
		CHECK(0, "pipe");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		struct uraid_engine *e;
		struct uraid_array *ua;
		struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
		struct uraid_assemble_opts ao = { .paths = p, .npaths = c->n };
		if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &ua, err, sizeof(err)))
			_exit(2);
		uint64_t s = seed, sz = uraid_array_size(ua);
		uint8_t *buf = aligned_alloc(4096, sz);

		rng_fill(&s, buf, sz);
		if (uraid_array_pwrite(ua, buf, sz, 0, 0))
			_exit(3);
		for (unsigned i = c->n; i < nfiles; i++)
			if (uraid_array_add_member(ua, paths[i], 0, err, sizeof(err)))
				_exit(4);
		struct uraid_array_status as;
		uraid_array_status(ua, &as);
		if (c->new_n < c->n) {
			/* fewer members: the exported size down first (md's rule) */
			unsigned par = !strcmp(c->level, "raid6") ? 2 : 1;
			struct uraid_grow g = { .array_bytes = sz / (c->n - par) * (c->new_n - par) };
			char done[256];
			if (uraid_array_grow(ua, &g, done, sizeof(done), err, sizeof(err))) {
				fprintf(stderr, "child: array-size: %s\n", err);
				_exit(8);
			}
			sz = g.array_bytes;     /* the parent compares the size kept */
		}
		struct array *a = (struct array *)ua;
		a->reshape_piece_hook = hook;
		if (write(pfd[1], &sz, sizeof(sz)) != sizeof(sz))
			_exit(7);
		struct uraid_reshape r = { .new_raid_disks = c->new_n,
					   .new_chunk_sectors = c->new_chunk_kib * 2,
					   .new_layout = as.layout };
		uraid_level_parse(c->level, &r.new_level);
		if (uraid_array_reshape_start(ua, &r, err, sizeof(err))) {
			fprintf(stderr, "child: %s\n", err);
			_exit(5);
		}
		pause_ms(120000);
		_exit(6);       /* the hook never fired */
	}
	int st = 0;
	close(pfd[1]);
	uint64_t old_size = 0;
	if (read(pfd[0], &old_size, sizeof(old_size)) != sizeof(old_size))
		old_size = 0;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: child status 0x%x", c->name, st);
	struct uraid_sb sb = { 0 };
	CHECK(disk_sb(paths[0], &sb) == 0, "%s: superblock", c->name);
	printf("  on disk after the kill: feature_map 0x%x reshape_position %" PRIu64 " raid_disks %u\n",
	       sb.feature_map, sb.reshape_position, sb.raid_disks);
	CHECK(sb.feature_map & 0x4, "%s: no reshape bit after the kill", c->name);
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = p, .npaths = nfiles };
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &ua, err, sizeof(err))) {
		CHECK(0, "%s: assemble after the kill: %s", c->name, err);
		goto out;
	}
	struct uraid_sync_status ss;
	wait_job(ua, &ss);
	struct uraid_array_status as;
	uraid_array_status(ua, &as);
	CHECK(as.raid_disks == c->new_n && as.chunk_bytes == c->new_chunk_kib * 1024u,
	      "%s: after: %u members, chunk %u (job kind %d result %d)", c->name, as.raid_disks,
	      as.chunk_bytes, ss.kind, ss.result);
	size = uraid_array_size(ua);
	if (old_size && old_size < size)
		size = old_size;
	uint64_t s = seed;
	uint8_t *want = aligned_alloc(4096, size), *back = aligned_alloc(4096, size);
	rng_fill(&s, want, size);
	CHECK(uraid_array_pread(ua, back, size, 0) == 0, "%s: read", c->name);
	/* the pattern covers the old size; a grown array's new part is not compared */
	CHECK(memcmp(back, want, size) == 0, "%s: data differs after the finish", c->name);
	free(want);
	free(back);
	/* a killed array may be dirty: the resync md would run after the
	   reshape starts by itself and may be first; the check follows it */
	int src;
	for (unsigned tries = 0;
	     (src = uraid_array_sync_start(ua, URAID_SYNC_CHECK, err, sizeof(err))) == -EBUSY &&
	     tries < 5; tries++)
		wait_job(ua, &ss);
	CHECK(src == 0, "%s: check: %s", c->name, err);
	wait_job(ua, &ss);
	printf("  after assembly: %u members, chunk %u KiB; check: result %d, %" PRIu64 " mismatched\n",
	       as.raid_disks, as.chunk_bytes / 1024, ss.result, ss.mismatch_sectors);
	CHECK(ss.kind == URAID_SYNC_CHECK && ss.result == 0 && ss.mismatch_sectors == 0,
	      "%s: check: %d %" PRIu64, c->name, ss.result, ss.mismatch_sectors);
out:
	if (ua)
		uraid_array_close(ua);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < nfiles; i++)
		unlink(paths[i]);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261203;
	printf("test_reshape_last_kill seed %" PRIu64 "\n", seed);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
		run(seed + i, &configs[i]);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
