// SPDX-License-Identifier: MIT
/*
 * A bitmap resize undone (the superblocks refused the new size) writes the
 * old bitmap back with the header of now: its events are the array's, not
 * those of the area's copy in memory (re-encoded only when its page is
 * flushed), else the next assembly would find the bitmap older than the
 * superblocks and resync everything. And a resize that went through sets
 * the bit of every chunk of the grown range, on each member and in memory.
 *
 *   test_grow_bitmap_undo [SEED]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/bitmap.h>
#include <uraid/engine.h>

#include "engine/core/array.h"
#include "engine/md/grow_bitmap.h"
#include "engine/md/wib.h"
#include "../support/check.h"
#include "../support/array_fixture.h"

#define N 2
#define MEMBER_MIB 16u

/* The bitmap of member path (metadata 1.2: superblock + 8 sectors), header
 * decoded, its first 8 KiB in area if not NULL. */
static int header_of(const char *path, struct uraid_bitmap_sb *bm, uint8_t *area)
{
	uint8_t buf[8192];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, buf, sizeof(buf), 8192);
	close(fd);
	if (n != (ssize_t)sizeof(buf) || uraid_bitmap_decode(buf, bm))
		return -1;
	if (area)
		memcpy(area, buf, sizeof(buf));
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;
	char dir[64], paths[N][96], err[256];
	const char *devs[N];
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;

	printf("test_grow_bitmap_undo: seed %" PRIu64 " (not used: no random input)\n", seed);
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-gbu.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		devs[i] = paths[i];
		if (fixture_make_file(paths[i], (uint64_t)MEMBER_MIB << 20))
			return 1;
	}
	/* RAID 1 of 4 MiB per member, 64 KiB bitmap chunks: 64 bits */
	struct uraid_create_opts co = {
		.level = URAID_LEVEL_1, .raid_disks = N, .minor = 2, .size_kib = 4096,
		.bitmap = URAID_BITMAP_INTERNAL, .bitmap_chunk_kib = 64,
		.flags = URAID_CREATE_ASSUME_CLEAN, .paths = devs, .npaths = N,
		.homehost = "<none>",
	};
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = N };
	if (uraid_create(&co, NULL, err, sizeof(err)) || uraid_engine_create(&eo, &e) ||
	    uraid_array_assemble(e, &ao, &ua, err, sizeof(err))) {
		CHECK(0, "setup: %s", err);
		goto out;
	}
	struct array *a = (struct array *)ua;
	CHECK(a->wib != NULL, "the array runs without its bitmap");
	if (!a->wib)
		goto out;

	/* superblock updates after assembly: the header on the members follows
	   them, the area's copy in memory does not */
	pthread_mutex_lock(&a->meta_lock);
	for (int k = 0; k < 3; k++)
		CHECK(meta_record_change(a) == 0, "superblock update %d", k);
	uint64_t events = a->sb.events;
	uint64_t old_sync = a->bitmap.sync_size;

	/* resized to 8 MiB, then undone as apply_size does on a refusal */
	struct grow_bitmap_undo undo;
	int rc = grow_bitmap_resize(a, old_sync * 2, &undo, err, sizeof(err));
	CHECK(rc == 0, "resize: %s", err);
	if (rc == 0) {
		grow_bitmap_undo(a, &undo);
		grow_bitmap_undo_done(&undo);
	}
	pthread_mutex_unlock(&a->meta_lock);
	for (unsigned i = 0; i < N; i++) {
		struct uraid_bitmap_sb bm;
		CHECK(header_of(paths[i], &bm, NULL) == 0, "member %u: bitmap header", i);
		CHECK(bm.events == events, "member %u: bitmap events %" PRIu64 " after the undo, the "
		      "array's %" PRIu64, i, bm.events, events);
		CHECK(bm.sync_size == old_sync, "member %u: sync size %" PRIu64 " after the undo (%"
		      PRIu64 " before)", i, bm.sync_size, old_sync);
	}

	/* resized for good: 64 more chunks of 64 KiB, each set (bits 64..127)
	   on the members and needing a resync in memory */
	pthread_mutex_lock(&a->meta_lock);
	rc = grow_bitmap_resize(a, old_sync * 2, &undo, err, sizeof(err));
	grow_bitmap_undo_done(&undo);
	pthread_mutex_unlock(&a->meta_lock);
	CHECK(rc == 0, "resize: %s", err);
	for (unsigned i = 0; i < N && rc == 0; i++) {
		struct uraid_bitmap_sb bm;
		static uint8_t area[8192];
		CHECK(header_of(paths[i], &bm, area) == 0, "member %u: header", i);
		uint64_t set = 0, first_clear = UINT64_MAX;
		for (uint64_t b = 0; b < 128; b++) {
			set += uraid_bitmap_test(area, b);
			if (b >= 64 && !uraid_bitmap_test(area, b) && first_clear == UINT64_MAX)
				first_clear = b;
		}
		CHECK(set == 64, "member %u: %" PRIu64 " bits set, the grown range's 64 expected", i,
		      set);
		CHECK(first_clear == UINT64_MAX, "member %u: bit %" PRIu64 " of the grown range "
		      "(64..127) clear", i, first_clear);
	}
	if (rc == 0) {
		CHECK(!wib_needs_resync(a, 0, old_sync), "the old range needs no resync");
		CHECK(wib_needs_resync(a, old_sync, old_sync + 128), "the grown range's first chunk "
		      "not marked for the resync");
		CHECK(wib_needs_resync(a, old_sync * 2 - 128, old_sync * 2), "the grown range's last "
		      "chunk not marked for the resync");
	}
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
