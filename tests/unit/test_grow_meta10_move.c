// SPDX-License-Identifier: MIT
/*
 * review3: grow --size=max on a metadata 1.0 RAID 1 whose members grew by
 * one 4 KiB page. The superblock moves from O to O + 8 sectors (md's
 * super_1_rdev_size_change), and md/grow.c move_sb_1_0 first copies the
 * 8-sector bad-block log to (O + 8) - 8 = O: over the old superblock,
 * before the new one is written (apply_geometry, after every member's
 * move). Here the move of member 1 fails (its device vanished), so the grow
 * is refused and "undone" in memory; member 0 must still hold a superblock
 * at its old place or its new one. A kill -9 at the same point (after
 * member 0's copy, before the superblock update) leaves the same disks.
 *
 *   test_grow_meta10_move [SEED]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "../support/check.h"
#include "../support/array_fixture.h"

#define N 2
#define MEMBER_MIB 24u

/* A 1.0 superblock at sector `at` of path: its events, or -1. */
static int64_t sb_at(const char *path, uint64_t at)
{
	uint8_t buf[4096];
	struct uraid_sb sb;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, sizeof(buf), (off_t)(at * 512));
	close(fd);
	if (n != (ssize_t)sizeof(buf) || uraid_sb_decode(buf, &sb))
		return -1;
	return (int64_t)sb.events;
}

static uint64_t sb_place(uint64_t bytes)
{
	return ((bytes / 512) - 16) & ~(uint64_t)7;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261203;
	char dir[64], paths[N][96], err[256], done[512];
	const char *devs[N];
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;

	printf("test_grow_meta10_move: seed %" PRIu64 " (not used: no random input)\n", seed);
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-review3-m10.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		devs[i] = paths[i];
		if (fixture_make_file(paths[i], (uint64_t)MEMBER_MIB << 20))
			return 1;
	}
	struct uraid_create_opts co = {
		.level = URAID_LEVEL_1, .raid_disks = 2, .minor = 0,
		.flags = URAID_CREATE_ASSUME_CLEAN, .paths = devs, .npaths = N,
		.homehost = "<none>",
	};
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = N };
	if (uraid_create(&co, NULL, err, sizeof(err)) || uraid_engine_create(&eo, &e)) {
		CHECK(0, "setup: %s", err);
		goto out;
	}
	uint64_t old_at = sb_place((uint64_t)MEMBER_MIB << 20);
	uint64_t new_at = sb_place(((uint64_t)MEMBER_MIB << 20) + 4096);
	CHECK(sb_at(paths[0], old_at) >= 0, "member 0: no superblock at %" PRIu64 " after create",
	      old_at);
	if (uraid_array_assemble(e, &ao, &ua, err, sizeof(err))) {
		CHECK(0, "assemble: %s", err);
		goto out;
	}
	for (unsigned i = 0; i < N; i++)
		CHECK(truncate(paths[i], ((off_t)MEMBER_MIB << 20) + 4096) == 0, "grow m%u", i);
	struct uraid_fault f = { .kind = URAID_FAULT_VANISH, .last_sector = UINT64_MAX };
	CHECK(uraid_array_inject(ua, 1, &f) == 0, "inject");
	struct uraid_grow g = { .size_bytes = URAID_GROW_MAX };
	int rc = uraid_array_grow(ua, &g, done, sizeof(done), err, sizeof(err));
	printf("grow --size=max with slot 1 vanished: rc %d (%s)\n", rc, rc ? err : done);
	/* the disks now, as a crash here would leave them */
	int64_t at_old = sb_at(paths[0], old_at), at_new = sb_at(paths[0], new_at);
	printf("member 0: superblock at old place %" PRIu64 ": %s, at new place %" PRIu64 ": %s\n",
	       old_at, at_old >= 0 ? "yes" : "NO", new_at, at_new >= 0 ? "yes" : "NO");
	CHECK(at_old >= 0 || at_new >= 0, "member 0 holds no superblock at its old place (%"
	      PRIu64 ") nor its new one (%" PRIu64 "): the bad-block log copied over it",
	      old_at, new_at);
	f.kind = URAID_FAULT_NONE;
	uraid_array_inject(ua, 1, &f);
	uraid_array_close(ua);
	ua = NULL;
	/* and after a clean stop */
	at_old = sb_at(paths[0], old_at);
	at_new = sb_at(paths[0], new_at);
	printf("after close: member 0 old place %s, new place %s\n", at_old >= 0 ? "yes" : "NO",
	       at_new >= 0 ? "yes" : "NO");
	CHECK(at_old >= 0 || at_new >= 0, "after a clean stop member 0 still holds no superblock");
out:
	if (ua)
		uraid_array_close(ua);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < N; i++)
		unlink(paths[i]);
	rmdir(dir);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
