// SPDX-License-Identifier: MIT
/*
 * A bitmap resize that changes the chunk, cut short between two members'
 * writes: member 0 holds the new bitmap (8 KiB chunks, the grown range's
 * bits set), member 1 still the old one (4 KiB chunks, no bit set), with
 * the same events. Assembled with member 1 first (the header taken is its
 * own), the bits must come from a member whose header agrees (member 1),
 * never member 0's read under 4 KiB chunks. And the resize writes no spare
 * (it keeps the copy it got when added, as the bitmap's other updates do).
 *
 * RAID 1 of 4 MiB per member, 4 KiB chunks, sectors_reserved 0 (as mdadm
 * writes it): md's space is the one sector the 1024 bits fill, so 16 MiB
 * (4096 bits of 4 KiB) takes 8 KiB chunks (2048 bits), bits 512..2047 new.
 *
 *   test_grow_bitmap_crash [SEED]
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

#define N 3                     /* 2 in slots, 1 spare */
#define MEMBER_MIB 24u
#define AT 8192                 /* metadata 1.2: the bitmap at superblock + 8 sectors */

static int page_io(const char *path, uint8_t *page, bool write)
{
	int fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write ? pwrite(fd, page, 4096, AT) : pread(fd, page, 4096, AT);
	close(fd);
	return n == 4096 ? 0 : -1;
}

static int header_of(const char *path, struct uraid_bitmap_sb *bm)
{
	uint8_t page[4096];
	return page_io(path, page, false) || uraid_bitmap_decode(page, bm) ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;
	char dir[64], paths[N][96], err[256];
	const char *devs[N], *order[N];
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;
	static uint8_t old1[4096], page[4096];

	printf("test_grow_bitmap_crash: seed %" PRIu64 " (not used: no random input)\n", seed);
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-gbc.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		devs[i] = paths[i];
		if (fixture_make_file(paths[i], (uint64_t)MEMBER_MIB << 20))
			return 1;
	}
	struct uraid_create_opts co = {
		.level = URAID_LEVEL_1, .raid_disks = 2, .spare_devices = 1, .minor = 2,
		.size_kib = 4096, .bitmap = URAID_BITMAP_INTERNAL, .bitmap_chunk_kib = 4,
		.flags = URAID_CREATE_ASSUME_CLEAN, .paths = devs, .npaths = N,
		.homehost = "<none>",
	};
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = N };
	if (uraid_create(&co, NULL, err, sizeof(err)) || uraid_engine_create(&eo, &e)) {
		CHECK(0, "setup: %s", err);
		goto out;
	}
	/* sectors_reserved 0 on every member, as mdadm writes it */
	for (unsigned i = 0; i < N; i++) {
		struct uraid_bitmap_sb bm;
		CHECK(page_io(paths[i], page, false) == 0 && uraid_bitmap_decode(page, &bm) == 0,
		      "member %u: bitmap", i);
		bm.sectors_reserved = 0;
		uraid_bitmap_encode(&bm, page);
		CHECK(page_io(paths[i], page, true) == 0, "member %u: write", i);
	}
	CHECK(page_io(paths[1], old1, false) == 0, "member 1: the old bitmap");
	if (uraid_array_assemble(e, &ao, &ua, err, sizeof(err))) {
		CHECK(0, "assemble: %s", err);
		goto out;
	}
	struct array *a = (struct array *)ua;
	struct grow_bitmap_undo undo;
	pthread_mutex_lock(&a->meta_lock);
	int rc = grow_bitmap_resize(a, 16u << 11, &undo, err, sizeof(err));
	grow_bitmap_undo_done(&undo);
	pthread_mutex_unlock(&a->meta_lock);
	CHECK(rc == 0, "resize: %s", err);
	CHECK(a->bitmap.chunksize == 8192, "resized to %u-byte chunks, 8192 expected",
	      a->bitmap.chunksize);
	struct uraid_bitmap_sb sp;
	CHECK(header_of(paths[2], &sp) == 0 && sp.sync_size == 4u << 11 && sp.chunksize == 4096,
	      "the spare's bitmap was rewritten (sync %" PRIu64 ", chunk %u)", sp.sync_size,
	      sp.chunksize);
	uraid_array_close(ua);
	ua = NULL;

	/* the crash: member 1 never got the new bitmap; its header as fresh as
	   member 0's */
	struct uraid_bitmap_sb now, b1;
	CHECK(header_of(paths[0], &now) == 0 && now.chunksize == 8192, "member 0: new bitmap");
	CHECK(uraid_bitmap_decode(old1, &b1) == 0, "member 1: old header");
	b1.events = now.events;
	b1.events_cleared = now.events_cleared;
	uraid_bitmap_encode(&b1, old1);
	CHECK(page_io(paths[1], old1, true) == 0, "member 1: the old bitmap back");

	order[0] = paths[1];
	order[1] = paths[0];
	order[2] = paths[2];
	struct uraid_assemble_opts ao2 = { .paths = order, .npaths = N };
	if (uraid_array_assemble(e, &ao2, &ua, err, sizeof(err))) {
		CHECK(0, "assemble again: %s", err);
		goto out;
	}
	a = (struct array *)ua;
	CHECK(a->bitmap.chunksize == 4096, "the header taken is member 1's (chunk %u)",
	      a->bitmap.chunksize);
	if (a->wib) {
		uint64_t set = atomic_load(&a->wib->bits_set);
		CHECK(set == 0, "%" PRIu64 " bits set: member 0's 8 KiB-chunk bits read as 4 KiB "
		      "ones (member 1's: none)", set);
	} else {
		CHECK(a->bitmap_stale, "no bits loaded, yet the bitmap is not counted as stale");
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
